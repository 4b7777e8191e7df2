//! The operations every record-shaped resource shares: create, load, update, delete and
//! list with filters, order and paging. A resource contributes its field list and `Rules`
//! (defaults, derived fields, cross-record checks); the mechanics stay here, once.

use super::schema::{Changes, Field, Kind, Record, Scalar, check_mandatory, check_not_cleared};
use super::{Ctx, Error};
use crate::caps::{Read, Write};
use crate::store;

/// A list filter: query parameter name to the field it matches (exact, case-insensitive,
/// comma-separated values OR-ed).
#[derive(Debug, Clone, Copy)]
pub struct Filter {
    pub param: &'static str,
    pub field: &'static str,
}

/// What a resource adds to the shared mechanics.
pub trait Rules: Sync {
    /// Fills defaults and derived fields and checks rules that span fields or records.
    /// `old` is `None` on create. Problems go to `errors`; nothing is saved if any.
    fn prepare(
        &self,
        _ctx: &Ctx,
        _txn: &mut dyn Write,
        _record: &mut Record,
        _old: Option<&Record>,
        _changes: &Changes,
        _errors: &mut Vec<String>,
    ) -> Result<(), Error> {
        Ok(())
    }

    /// Runs after the record is saved, in the same transaction (indexes, unique defaults).
    fn after_save(
        &self,
        _ctx: &Ctx,
        _txn: &mut dyn Write,
        _record: &Record,
        _old: Option<&Record>,
    ) -> Result<(), Error> {
        Ok(())
    }

    /// Refuses or cleans up a delete, in the same transaction.
    fn before_delete(
        &self,
        _ctx: &Ctx,
        _txn: &mut dyn Write,
        _record: &Record,
    ) -> Result<(), Error> {
        Ok(())
    }
}

/// No rules beyond the field list.
pub struct Plain;
impl Rules for Plain {}

pub struct Resource {
    /// Storage collection and id counter name.
    pub collection: &'static str,
    /// The record's name in messages ("template 7 does not exist").
    pub label: &'static str,
    pub fields: &'static [Field],
    pub filters: &'static [Filter],
    pub rules: &'static dyn Rules,
}

impl Resource {
    pub fn field(&self, name: &str) -> Option<&'static Field> {
        self.fields.iter().find(|f| f.name == name)
    }

    fn not_found(&self, id: u64) -> Error {
        Error::NotFound(format!("{} {id} does not exist", self.label))
    }

    fn has(&self, name: &str) -> bool {
        self.field(name).is_some()
    }
}

/// Which records of a list, in what order, which page.
#[derive(Debug, Clone, Default)]
pub struct ListQuery {
    /// Field and the values it may equal (any of them).
    pub filters: Vec<(&'static str, Vec<String>)>,
    /// Field and descending?
    pub order: Vec<(&'static str, bool)>,
    /// 1-based.
    pub page: u32,
    pub per_page: u32,
}

pub struct Page {
    pub records: Vec<Record>,
    pub total: usize,
}

pub fn create(
    ctx: &Ctx,
    txn: &mut dyn Write,
    res: &Resource,
    changes: &Changes,
) -> Result<Record, Error> {
    let mut errors = changes.errors();
    check_mandatory(res.fields, changes, &mut errors);
    let mut record = Record::default();
    changes.apply(&mut record);
    // The id is taken before the rules run so that claims (numbers) can name it; on any
    // error the caller drops the transaction and the counter step with it.
    let id = store::next_id(txn, res.collection)?;
    record.set("id", Some(Scalar::Int(id as i64)));
    if res.has("account_id") {
        record.set("account_id", Some(Scalar::Int(ctx.account_id as i64)));
    }
    if res.has("created") {
        record.set("created", Some(Scalar::DateTime(ctx.now)));
    }
    if res.has("updated") {
        record.set("updated", Some(Scalar::DateTime(ctx.now)));
    }
    res.rules
        .prepare(ctx, txn, &mut record, None, changes, &mut errors)?;
    if !errors.is_empty() {
        return Err(Error::Invalid(errors));
    }
    save(ctx, txn, res, &record, changes)?;
    res.rules.after_save(ctx, txn, &record, None)?;
    Ok(record)
}

pub fn load(txn: &dyn Read, res: &Resource, account: u64, id: u64) -> Result<Record, Error> {
    let bytes = txn
        .get(&store::record_key(account, res.collection, id))?
        .ok_or_else(|| res.not_found(id))?;
    let record: Record = store::decode(&bytes)?;
    debug_assert_eq!(record.id(), id, "a record is stored under its own id");
    Ok(record)
}

/// The bytes of each file field of a record.
pub fn load_files(
    txn: &dyn Read,
    res: &Resource,
    account: u64,
    id: u64,
) -> Result<Vec<(&'static str, Vec<u8>)>, Error> {
    let mut files = Vec::new();
    for f in res.fields.iter().filter(|f| f.kind == Kind::File) {
        let bytes = txn
            .get(&store::file_key(account, res.collection, f.name, id))?
            .unwrap_or_default();
        files.push((f.name, bytes));
    }
    Ok(files)
}

pub fn update(
    ctx: &Ctx,
    txn: &mut dyn Write,
    res: &Resource,
    id: u64,
    changes: &Changes,
) -> Result<Record, Error> {
    let old = load(txn.as_read(), res, ctx.account_id, id)?;
    let mut errors = changes.errors();
    check_not_cleared(res.fields, changes, &mut errors);
    let mut record = old.clone();
    changes.apply(&mut record);
    res.rules
        .prepare(ctx, txn, &mut record, Some(&old), changes, &mut errors)?;
    if !errors.is_empty() {
        return Err(Error::Invalid(errors));
    }
    if res.has("updated") {
        record.set("updated", Some(Scalar::DateTime(ctx.now)));
    }
    save(ctx, txn, res, &record, changes)?;
    res.rules.after_save(ctx, txn, &record, Some(&old))?;
    Ok(record)
}

/// Writes the record and any file fields the changes carry.
pub fn save(
    ctx: &Ctx,
    txn: &mut dyn Write,
    res: &Resource,
    record: &Record,
    changes: &Changes,
) -> Result<(), Error> {
    let id = record.id();
    assert!(id > 0, "a saved record has an id");
    txn.put(
        &store::record_key(ctx.account_id, res.collection, id),
        &store::encode(record),
    )?;
    for (field, bytes) in &changes.files {
        txn.put(
            &store::file_key(ctx.account_id, res.collection, field, id),
            bytes,
        )?;
    }
    Ok(())
}

pub fn delete(ctx: &Ctx, txn: &mut dyn Write, res: &Resource, id: u64) -> Result<(), Error> {
    let record = load(txn.as_read(), res, ctx.account_id, id)?;
    res.rules.before_delete(ctx, txn, &record)?;
    txn.delete(&store::record_key(ctx.account_id, res.collection, id))?;
    for f in res.fields.iter().filter(|f| f.kind == Kind::File) {
        txn.delete(&store::file_key(ctx.account_id, res.collection, f.name, id))?;
    }
    Ok(())
}

/// Every record of the collection in id order.
pub fn load_all(txn: &dyn Read, res: &Resource, account: u64) -> Result<Vec<Record>, Error> {
    store::scan_all(txn, &store::collection_prefix(account, res.collection))?
        .iter()
        .map(|(_, v)| store::decode(v).map_err(Error::from))
        .collect()
}

pub fn list(txn: &dyn Read, res: &Resource, account: u64, q: &ListQuery) -> Result<Page, Error> {
    let mut records = load_all(txn, res, account)?;
    records.retain(|r| {
        q.filters.iter().all(|(field, wanted)| {
            let have = r.get(field).map(Scalar::to_wire).unwrap_or_default();
            wanted.iter().any(|w| w.eq_ignore_ascii_case(&have))
        })
    });
    if !q.order.is_empty() {
        // Stable sort keeps id order among equal keys.
        records.sort_by(|a, b| compare_by(&q.order, a, b));
    }
    let total = records.len();
    let start = (q.page.saturating_sub(1) as usize).saturating_mul(q.per_page as usize);
    let records = records
        .into_iter()
        .skip(start)
        .take(q.per_page as usize)
        .collect();
    Ok(Page { records, total })
}

/// The `order_by` order of two records: field by field, empty values first.
pub fn compare_by(order: &[(&'static str, bool)], a: &Record, b: &Record) -> std::cmp::Ordering {
    for (field, desc) in order {
        let ord = match (a.get(field), b.get(field)) {
            (Some(x), Some(y)) => x.compare(y),
            (None, Some(_)) => std::cmp::Ordering::Less,
            (Some(_), None) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        };
        let ord = if *desc { ord.reverse() } else { ord };
        if ord.is_ne() {
            return ord;
        }
    }
    std::cmp::Ordering::Equal
}

/// Makes `record` the only one with `flag` set among those where `same_group` holds.
pub fn clear_flag_on_others(
    ctx: &Ctx,
    txn: &mut dyn Write,
    res: &Resource,
    record: &Record,
    flag: &str,
    same_group: impl Fn(&Record) -> bool,
) -> Result<(), Error> {
    if !record.bool(flag) {
        return Ok(());
    }
    for mut other in load_all(txn.as_read(), res, ctx.account_id)? {
        if other.id() != record.id() && other.bool(flag) && same_group(&other) {
            other.set(flag, Some(Scalar::Bool(false)));
            txn.put(
                &store::record_key(ctx.account_id, res.collection, other.id()),
                &store::encode(&other),
            )?;
        }
    }
    Ok(())
}
