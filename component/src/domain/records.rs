//! The operations every record-shaped resource shares: create, load, update, delete and
//! list with filters, order and paging. A resource contributes its field list and `Rules`
//! (defaults, derived fields, cross-record checks); the mechanics stay here, once. A
//! resource that names its events (`emits`) tells the account's webhooks of every save
//! and removal here, in the same transaction.

use std::collections::BTreeSet;
use std::convert::Infallible;

use super::date::Date;
use super::events::{self, Verb};
use super::schema::{Changes, Field, Kind, Record, Scalar, check_mandatory, check_not_cleared};
use super::{Ctx, Error};
use crate::caps::{Read, StoreError, Write};
use crate::limits;
use crate::store::forms::{
    Dec16, DecTuple, DecimalForm, StoredRecord, StoredRecordPairs, StoredRecordPairsRef,
    StoredScalar,
};
use crate::store::{self, keys};

/// A list filter: query parameter name to the field it matches (exactly or by a part, in
/// any case; comma-separated values OR-ed).
#[derive(Debug, Clone, Copy)]
pub struct Filter {
    pub param: &'static str,
    pub field: &'static str,
    /// Whether a value matches any part of the field rather than all of it.
    pub part: bool,
}

impl Filter {
    /// Query parameter `param` matches field `field` exactly.
    pub const fn exact(param: &'static str, field: &'static str) -> Filter {
        Filter {
            param,
            field,
            part: false,
        }
    }

    /// Query parameter `param` matches records whose field `field` contains it.
    pub const fn part(param: &'static str, field: &'static str) -> Filter {
        Filter {
            param,
            field,
            part: true,
        }
    }
}

/// What a rule sees of a create or an update.
pub struct Draft<'a> {
    pub ctx: &'a Ctx,
    pub txn: &'a mut dyn Write,
    /// The record as it will be saved: the changes applied, the id given.
    pub record: &'a mut Record,
    /// The record before an update; `None` on create.
    pub old: Option<&'a Record>,
    pub changes: &'a Changes,
    /// Where problems go; nothing is saved if there are any.
    pub errors: &'a mut Vec<String>,
}

/// What a rule sees of a record just saved.
pub struct Saved<'a> {
    pub ctx: &'a Ctx,
    pub txn: &'a mut dyn Write,
    pub record: &'a Record,
    pub old: Option<&'a Record>,
}

/// What a resource adds to the shared mechanics.
pub trait Rules: Sync {
    /// Fills defaults and derived fields and checks rules that span fields or records.
    fn prepare(&self, _draft: Draft<'_>) -> Result<(), Error> {
        Ok(())
    }

    /// Runs after the record is saved, in the same transaction (indexes, unique defaults).
    fn after_save(&self, _saved: Saved<'_>) -> Result<(), Error> {
        Ok(())
    }

    /// The record as the API shows it: what it derives from others when read (a contact,
    /// the fields its client fills).
    fn shown(&self, _txn: &dyn Read, _account: u64, record: Record) -> Result<Record, Error> {
        Ok(record)
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
    /// Fields with an index of their whole value: integers (one naming another record, an
    /// incoming, a client, a property; a client's number) and texts (normalized, see
    /// `indexed_text`). A list filtered by one, `children` and `find` read only the
    /// records it names.
    pub indexed: &'static [&'static str],
    /// Text fields with an index of the text's parts (`search`): a list filtered by a
    /// part of one reads only the records whose text may contain it.
    pub searched: &'static [&'static str],
    pub rules: &'static dyn Rules,
    /// The resource's name in webhook events (`client` makes `client.create`); none for a
    /// resource without events.
    pub event: Option<&'static str>,
}

impl Resource {
    /// A resource without list filters.
    pub const fn new(
        collection: &'static str,
        label: &'static str,
        fields: &'static [Field],
        rules: &'static dyn Rules,
    ) -> Resource {
        Resource {
            collection,
            label,
            fields,
            filters: &[],
            indexed: &[],
            searched: &[],
            rules,
            event: None,
        }
    }

    /// The resource with webhook events named `event` (`{event}.create`, `.update`,
    /// `.delete`).
    pub const fn emits(mut self, event: &'static str) -> Resource {
        self.event = Some(event);
        self
    }

    /// The resource with an index on each of these integer fields.
    pub const fn indexed(mut self, fields: &'static [&'static str]) -> Resource {
        self.indexed = fields;
        self
    }

    /// The resource with an index of the parts of each of these text fields.
    pub const fn searched(mut self, fields: &'static [&'static str]) -> Resource {
        self.searched = fields;
        self
    }

    /// The resource with these list filters.
    pub const fn filtered(mut self, filters: &'static [Filter]) -> Resource {
        self.filters = filters;
        self
    }

    pub fn field(&self, name: &str) -> Option<&'static Field> {
        self.fields.iter().find(|f| f.name == name)
    }

    fn not_found(&self, id: u64) -> Error {
        Error::NotFound(format!("{} {id} does not exist", self.label))
    }

    fn has(&self, name: &str) -> bool {
        self.field(name).is_some()
    }

    /// The names of the indexes the resource keeps, each under `ix/{collection}/{name}/`.
    pub fn index_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.indexed.iter().map(|f| (*f).to_owned()).collect();
        for field in self.searched {
            names.push(parts_index(field));
            names.push(long_index(field));
        }
        names
    }

    fn has_indexes(&self) -> bool {
        !self.indexed.is_empty() || !self.searched.is_empty()
    }
}

/// Which records of a list, in what order, which page.
#[derive(Debug, Clone, Default)]
pub struct ListQuery {
    /// Field and the values it may equal (any of them).
    pub filters: Vec<(&'static str, Vec<String>)>,
    /// Field and the parts it may contain (any of them, in any case).
    pub parts: Vec<(&'static str, Vec<String>)>,
    /// Only these records, when set (found through another index, e.g. their tags).
    pub only: Option<BTreeSet<u64>>,
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
    res.rules.prepare(Draft {
        ctx,
        txn,
        record: &mut record,
        old: None,
        changes,
        errors: &mut errors,
    })?;
    if !errors.is_empty() {
        return Err(Error::Invalid(errors));
    }
    save(ctx, txn, res, &record, None, changes)?;
    res.rules.after_save(Saved {
        ctx,
        txn,
        record: &record,
        old: None,
    })?;
    Ok(record)
}

pub fn load(txn: &dyn Read, res: &Resource, account: u64, id: u64) -> Result<Record, Error> {
    let bytes = txn
        .get(&keys::record(account, res.collection, id))?
        .ok_or_else(|| res.not_found(id))?;
    let record = decode_record(&bytes)?;
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
            .get(&keys::file(account, res.collection, f.name, id))?
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
    res.rules.prepare(Draft {
        ctx,
        txn,
        record: &mut record,
        old: Some(&old),
        changes,
        errors: &mut errors,
    })?;
    if !errors.is_empty() {
        return Err(Error::Invalid(errors));
    }
    if res.has("updated") {
        record.set("updated", Some(Scalar::DateTime(ctx.now)));
    }
    save(ctx, txn, res, &record, Some(&old), changes)?;
    res.rules.after_save(Saved {
        ctx,
        txn,
        record: &record,
        old: Some(&old),
    })?;
    Ok(record)
}

/// Writes the record and any file fields the changes carry, and moves its index entries
/// from what `old` (the record as stored, `None` for a new one) held.
pub fn save(
    ctx: &Ctx,
    txn: &mut dyn Write,
    res: &Resource,
    record: &Record,
    old: Option<&Record>,
    changes: &Changes,
) -> Result<(), Error> {
    let id = record.id();
    assert!(id > 0, "a saved record has an id");
    let key = keys::record(ctx.account_id, res.collection, id);
    if res.has_indexes() {
        let before: BTreeSet<Vec<u8>> = old
            .map(|o| index_keys(res, ctx.account_id, o).into_iter().collect())
            .unwrap_or_default();
        let after: BTreeSet<Vec<u8>> = index_keys(res, ctx.account_id, record)
            .into_iter()
            .collect();
        for gone in before.difference(&after) {
            txn.delete(gone)?;
        }
        for new in after.difference(&before) {
            txn.put(new, &[])?;
        }
    }
    txn.put(&key, &encode_record(record))?;
    for (field, bytes) in &changes.files {
        txn.put(
            &keys::file(ctx.account_id, res.collection, field, id),
            bytes,
        )?;
    }
    let verb = if old.is_some() {
        Verb::Update
    } else {
        Verb::Create
    };
    emit(ctx, txn, res, verb, record)
}

/// The event of a change of `record`: it shows the record as the API does then.
fn emit(
    ctx: &Ctx,
    txn: &mut dyn Write,
    res: &Resource,
    verb: Verb,
    record: &Record,
) -> Result<(), Error> {
    let Some(name) = res.event else {
        return Ok(());
    };
    events::emit(ctx, txn, name, verb, record.id(), |txn| {
        let shown = res.rules.shown(txn, ctx.account_id, record.clone())?;
        Ok(events::snapshot_of(ctx, encode_record(&shown), None))
    })
}

pub fn delete(ctx: &Ctx, txn: &mut dyn Write, res: &Resource, id: u64) -> Result<(), Error> {
    let record = load(txn.as_read(), res, ctx.account_id, id)?;
    res.rules.before_delete(ctx, txn, &record)?;
    remove(ctx, txn, res, &record)
}

/// Deletes a record with its files and index entries, without its rules: for a parent
/// that takes its children with it. Its event shows it as it was.
pub fn remove(
    ctx: &Ctx,
    txn: &mut dyn Write,
    res: &Resource,
    record: &Record,
) -> Result<(), Error> {
    emit(ctx, txn, res, Verb::Delete, record)?;
    let account = ctx.account_id;
    let id = record.id();
    txn.delete(&keys::record(account, res.collection, id))?;
    for entry in index_keys(res, account, record) {
        txn.delete(&entry)?;
    }
    for f in res.fields.iter().filter(|f| f.kind == Kind::File) {
        txn.delete(&keys::file(account, res.collection, f.name, id))?;
    }
    Ok(())
}

/// Ok when the record exists in the account, else `NotFound` naming it.
pub fn check_exists(txn: &dyn Read, res: &Resource, account: u64, id: u64) -> Result<(), Error> {
    if exists(txn, res, account, id)? {
        Ok(())
    } else {
        Err(res.not_found(id))
    }
}

/// Whether the record exists in the account.
pub fn exists(txn: &dyn Read, res: &Resource, account: u64, id: u64) -> Result<bool, Error> {
    Ok(txn
        .get(&keys::record(account, res.collection, id))?
        .is_some())
}

/// Calls `f` with every record of `res` in an account, in id order, a batch per call into
/// the store, holding none after its call.
pub fn for_each(
    txn: &dyn Read,
    res: &Resource,
    account: u64,
    mut f: impl FnMut(Record) -> Result<(), Error>,
) -> Result<(), Error> {
    store::for_each(txn, &keys::collection(account, res.collection), |(_, v)| {
        f(decode_record(v)?)
    })
}

/// Every record of the collection in id order.
pub fn load_all(txn: &dyn Read, res: &Resource, account: u64) -> Result<Vec<Record>, Error> {
    let mut found = Vec::new();
    for_each(txn, res, account, |r| {
        found.push(r);
        Ok(())
    })?;
    Ok(found)
}

/// The key of `res`'s index entry for record `id` whose `field` is `value`.
fn index_key(account: u64, res: &Resource, field: &str, value: &[u8], id: u64) -> Vec<u8> {
    keys::index_entry(account, res.collection, field, value, id)
}

/// The longest text an index entry holds (in bytes of its normalized form): keys stay
/// short, and a text longer than that finds the records sharing its beginning.
const INDEXED_TEXT_BYTES_MAX: usize = 200;

/// A text as its index holds it: without white space, in lower case, cut at
/// `INDEXED_TEXT_BYTES_MAX`, then a 0 byte (no text of the prefix matches a longer one).
fn indexed_text(text: &str) -> Option<Vec<u8>> {
    let n = normalized(text);
    if n.is_empty() {
        return None;
    }
    let mut bytes = cut(&n, INDEXED_TEXT_BYTES_MAX).as_bytes().to_vec();
    bytes.push(0);
    Some(bytes)
}

/// What a record's index on `field` holds: an integer as 8 bytes, a text as
/// `indexed_text`; nothing for an empty field.
fn index_value(record: &Record, field: &str) -> Option<Vec<u8>> {
    match record.get(field)? {
        Scalar::Int(i) => Some(i.to_be_bytes().to_vec()),
        Scalar::Text(t) => indexed_text(t),
        _ => None,
    }
}

/// The records of `res` whose indexed text `field` may equal `text` (equal when white
/// space and case are ignored, on the first `INDEXED_TEXT_BYTES_MAX` bytes), in id order;
/// the caller compares what it needs exactly.
pub fn find(
    txn: &dyn Read,
    res: &Resource,
    account: u64,
    field: &str,
    text: &str,
) -> Result<Vec<Record>, Error> {
    debug_assert!(res.indexed.contains(&field), "{field} is indexed");
    let Some(value) = indexed_text(text) else {
        return Ok(Vec::new());
    };
    let prefix = keys::index(account, res.collection, field);
    let mut prefix = prefix;
    prefix.extend_from_slice(&value);
    store::scan_all(txn, &prefix)?
        .iter()
        .map(|(k, _)| load(txn, res, account, store::id_of_key(k)?))
        .collect()
}

/// The records of `res` whose indexed `field` is `value`, in id order.
pub fn children(
    txn: &dyn Read,
    res: &Resource,
    account: u64,
    field: &str,
    value: u64,
) -> Result<Vec<Record>, Error> {
    debug_assert!(res.indexed.contains(&field), "{field} is indexed");
    let mut prefix = keys::index(account, res.collection, field);
    prefix.extend_from_slice(&(value as i64).to_be_bytes());
    store::scan_all(txn, &prefix)?
        .iter()
        .map(|(k, _)| load(txn, res, account, store::id_of_key(k)?))
        .collect()
}

/// The record `id` of `collection`, if there is one: for a resource that may not name the
/// resource it reads (a contact, whose client takes it along when deleted).
pub fn load_named(
    txn: &dyn Read,
    collection: &str,
    account: u64,
    id: u64,
) -> Result<Option<Record>, Error> {
    txn.get(&keys::record(account, collection, id))?
        .map(|bytes| decode_record(&bytes))
        .transpose()
}

/// The ids of the records of `collection` whose indexed integer `field` is `value`, in id
/// order: for a resource that may not name the one whose records name it (a unit, whose
/// articles depend on it).
pub fn ids_of(
    txn: &dyn Read,
    collection: &str,
    account: u64,
    field: &str,
    value: u64,
) -> Result<Vec<u64>, Error> {
    let mut prefix = keys::index(account, collection, field);
    prefix.extend_from_slice(&(value as i64).to_be_bytes());
    ids_under(txn, &prefix)
}

/// Writes the index entries of a record (idempotent): for the migration that introduced
/// an index.
pub fn index(
    txn: &mut dyn Write,
    res: &Resource,
    account: u64,
    record: &Record,
) -> Result<u64, Error> {
    let entries = index_keys(res, account, record);
    for key in &entries {
        txn.put(key, &[])?;
    }
    Ok(entries.len() as u64)
}

/// The keys of a record's index entries (their values are empty), each once.
pub fn index_keys(res: &Resource, account: u64, record: &Record) -> Vec<Vec<u8>> {
    let id = record.id();
    let mut keys: Vec<Vec<u8>> = res
        .indexed
        .iter()
        .filter_map(|field| {
            let v = index_value(record, field)?;
            Some(index_key(account, res, field, &v, id))
        })
        .collect();
    for field in res.searched {
        let text = normalized(record.text(field));
        let parts = parts_index(field);
        let mut seen = BTreeSet::new();
        for (at, _) in text.char_indices() {
            if at >= SEARCHED_TEXT_BYTES_MAX {
                keys.push(index_key(account, res, &long_index(field), &[], id));
                break;
            }
            let part = cut(&text[at..], SEARCHED_PART_BYTES_MAX);
            if seen.insert(part) {
                keys.push(index_key(account, res, &parts, part.as_bytes(), id));
            }
        }
    }
    keys
}

/// How far into a searched text its parts begin (in bytes of its normalized form): a
/// record whose text is longer is kept in a second index, which every search reads, so
/// that a part found further on is not missed.
const SEARCHED_TEXT_BYTES_MAX: usize = 200;

/// The longest part of a searched text an entry holds: a longer one is found by its
/// beginning.
const SEARCHED_PART_BYTES_MAX: usize = 32;

/// The index of the parts of a searched field: every end of its normalized text, each
/// cut at `SEARCHED_PART_BYTES_MAX`.
fn parts_index(field: &str) -> String {
    format!("{field}~")
}

/// The index of the records whose searched field is longer than
/// `SEARCHED_TEXT_BYTES_MAX`.
fn long_index(field: &str) -> String {
    format!("{field}~long")
}

/// A text without white space, in lower case.
fn normalized(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect()
}

/// The longest beginning of `text` of at most `bytes` bytes that ends on a character.
fn cut(text: &str, bytes: usize) -> &str {
    let mut end = text.len().min(bytes);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The ids of the records of `res` whose searched text `field` may contain `part` (it
/// does when white space and case are ignored), in id order; the caller compares what
/// it needs exactly. `None` when the part is only white space, which the index cannot
/// narrow.
pub fn search(
    txn: &dyn Read,
    res: &Resource,
    account: u64,
    field: &str,
    part: &str,
) -> Result<Option<Vec<u64>>, Error> {
    debug_assert!(res.searched.contains(&field), "{field} is searched");
    let part = normalized(part);
    if part.is_empty() {
        return Ok(None);
    }
    let mut prefix = keys::index(account, res.collection, &parts_index(field));
    prefix.extend_from_slice(cut(&part, SEARCHED_PART_BYTES_MAX).as_bytes());
    let mut ids = ids_under(txn, &prefix)?;
    ids.extend(ids_under(
        txn,
        &keys::index(account, res.collection, &long_index(field)),
    )?);
    ids.sort_unstable();
    ids.dedup();
    Ok(Some(ids))
}

/// The ids of the index entries under `prefix`, in key order.
fn ids_under(txn: &dyn Read, prefix: &[u8]) -> Result<Vec<u64>, Error> {
    let mut ids = Vec::new();
    store::for_each(txn, prefix, |(k, _)| {
        ids.push(store::id_of_key(k)?);
        Ok::<_, Error>(())
    })?;
    Ok(ids)
}

/// The ids of the records of `res` whose indexed integer `field` is `value`, in id order,
/// without loading them.
pub fn ids_where(
    txn: &dyn Read,
    res: &Resource,
    account: u64,
    field: &str,
    value: i64,
) -> Result<Vec<u64>, Error> {
    debug_assert!(res.indexed.contains(&field), "{field} is indexed");
    let mut prefix = keys::index(account, res.collection, field);
    prefix.extend_from_slice(&value.to_be_bytes());
    ids_under(txn, &prefix)
}

/// The ids of the records of `res` whose indexed text `field` may equal `text` (as
/// `find`), in id order, without loading them.
pub fn ids_named(
    txn: &dyn Read,
    res: &Resource,
    account: u64,
    field: &str,
    text: &str,
) -> Result<Vec<u64>, Error> {
    debug_assert!(res.indexed.contains(&field), "{field} is indexed");
    let Some(value) = indexed_text(text) else {
        return Ok(Vec::new());
    };
    let mut prefix = keys::index(account, res.collection, field);
    prefix.extend_from_slice(&value);
    ids_under(txn, &prefix)
}

/// The records with these ids that exist, in the order of `ids`, read in one call.
pub fn load_many(
    txn: &dyn Read,
    res: &Resource,
    account: u64,
    ids: &[u64],
) -> Result<Vec<Record>, Error> {
    let keys: Vec<Vec<u8>> = ids
        .iter()
        .map(|id| keys::record(account, res.collection, *id))
        .collect();
    txn.get_many(&keys)?
        .into_iter()
        .flatten()
        .map(|bytes| decode_record(&bytes))
        .collect()
}

/// Calls `each` with the records a list may answer, in id order: those an indexed integer
/// field's filter names (each of its values a number), else all of them, a batch at a time.
fn for_each_candidate(
    txn: &dyn Read,
    res: &Resource,
    account: u64,
    q: &ListQuery,
    mut each: impl FnMut(Record),
) -> Result<(), Error> {
    if let Some(ids) = &q.only {
        let ids: Vec<u64> = ids.iter().copied().collect();
        for batch in ids.chunks(limits::LOAD_BATCH) {
            load_many(txn, res, account, batch)?
                .into_iter()
                .for_each(&mut each);
        }
        return Ok(());
    }
    let by_index = q.filters.iter().find_map(|(field, wanted)| {
        let integer = res.field(field).is_some_and(|f| f.kind == Kind::Integer);
        if !res.indexed.contains(field) || !integer {
            return None;
        }
        let ids: Option<Vec<u64>> = wanted.iter().map(|w| w.trim().parse().ok()).collect();
        ids.map(|ids| (*field, ids))
    });
    let Some((field, mut values)) = by_index else {
        return for_each(txn, res, account, |r| {
            each(r);
            Ok(())
        });
    };
    values.sort_unstable();
    values.dedup();
    let mut records = Vec::new();
    for v in values {
        records.extend(children(txn, res, account, field, v)?);
    }
    records.sort_by_key(Record::id);
    records.into_iter().for_each(each);
    Ok(())
}

pub fn list(txn: &dyn Read, res: &Resource, account: u64, q: &ListQuery) -> Result<Page, Error> {
    let matches = |r: &Record| {
        q.filters.iter().all(|(field, wanted)| {
            let have = r.get(field).map(Scalar::to_wire).unwrap_or_default();
            wanted.iter().any(|w| w.eq_ignore_ascii_case(&have))
        }) && q.parts.iter().all(|(field, wanted)| {
            let have = r
                .get(field)
                .map(Scalar::to_wire)
                .unwrap_or_default()
                .to_lowercase();
            wanted.iter().any(|w| have.contains(&w.to_lowercase()))
        })
    };
    let mut pager = Pager::new(&q.order, q.page, q.per_page);
    for_each_candidate(txn, res, account, q, |r| {
        if matches(&r) {
            pager.push(r);
        }
    })?;
    let (records, total) = pager.finish(|ids| load_many(txn, res, account, ids))?;
    Ok(Page { records, total })
}

/// One page of the matches pushed to it in id order (records, or documents), in `order`
/// (id order when empty), and the number pushed: in id order it keeps the page's matches
/// only, in another order what `Ranked` keeps, the page's matches loaded at the end. A
/// list thus holds a bounded part of an account's records, whatever their number.
pub struct Pager<'a, T = Record> {
    start: usize,
    end: usize,
    total: usize,
    in_id_order: Vec<T>,
    /// `None` in id order.
    ranked: Option<Ranked<'a>>,
}

impl<'a, T> Pager<'a, T> {
    pub fn new(order: &'a [(&'static str, bool)], page: u32, per_page: u32) -> Pager<'a, T> {
        let start = (page.saturating_sub(1) as usize).saturating_mul(per_page as usize);
        Pager {
            start,
            end: start.saturating_add(per_page as usize),
            total: 0,
            in_id_order: Vec::new(),
            ranked: (!order.is_empty()).then(|| Ranked::new(order, start, per_page as usize)),
        }
    }

    /// Pushes a match; in another order than by id, `ranked_by` gives its values of the
    /// fields the order names (`is_ordered`) and its id.
    pub fn push_by(
        &mut self,
        item: T,
        ranked_by: impl FnOnce(T, &dyn Fn(&str) -> bool) -> (Record, u64),
    ) {
        match &mut self.ranked {
            None if (self.start..self.end).contains(&self.total) => self.in_id_order.push(item),
            None => {}
            Some(ranked) => {
                let order = ranked.order;
                let (values, id) = ranked_by(item, &|name| is_ordered(order, name));
                ranked.push(values, id);
            }
        }
        self.total += 1;
    }

    /// The page's matches (`load` reads them by id, in the order given) and the number
    /// of all pushed.
    pub fn finish(
        self,
        load: impl FnOnce(&[u64]) -> Result<Vec<T>, Error>,
    ) -> Result<(Vec<T>, usize), Error> {
        match self.ranked {
            None => Ok((self.in_id_order, self.total)),
            Some(ranked) => Ok((load(&ranked.page())?, self.total)),
        }
    }
}

impl Pager<'_, Record> {
    pub fn push(&mut self, record: Record) {
        self.push_by(record, |mut values, ordered| {
            let id = values.id();
            values.values.retain(|name, _| ordered(name));
            (values, id)
        });
    }
}

/// Whether `order` names the field `name`.
fn is_ordered(order: &[(&'static str, bool)], name: &str) -> bool {
    order.iter().any(|(field, _)| *field == name)
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

/// The ids of one page of matches in an order other than by id, ties in id order (the
/// order matches are pushed in): of each match it keeps the ordered values and id, and
/// never more than twice the matches up to the page's end, the first in order, so that a
/// page of an account's every record holds a few values of each at most.
pub struct Ranked<'a> {
    order: &'a [(&'static str, bool)],
    start: usize,
    end: usize,
    kept: Vec<(Record, u64)>,
    /// The most matches kept at once.
    #[cfg(test)]
    pub most: usize,
}

impl<'a> Ranked<'a> {
    pub fn new(order: &'a [(&'static str, bool)], start: usize, per_page: usize) -> Ranked<'a> {
        Ranked {
            order,
            start,
            end: start.saturating_add(per_page),
            kept: Vec::new(),
            #[cfg(test)]
            most: 0,
        }
    }

    pub fn push(&mut self, values: Record, id: u64) {
        self.kept.push((values, id));
        #[cfg(test)]
        {
            self.most = self.most.max(self.kept.len());
        }
        if self.kept.len() >= self.end.max(1).saturating_mul(2) {
            self.sort();
            self.kept.truncate(self.end);
        }
    }

    fn sort(&mut self) {
        let order = self.order;
        self.kept
            .sort_by(|a, b| compare_by(order, &a.0, &b.0).then(a.1.cmp(&b.1)));
    }

    /// The page's ids, in order.
    pub fn page(mut self) -> Vec<u64> {
        self.sort();
        let per_page = self.end - self.start;
        self.kept
            .into_iter()
            .skip(self.start)
            .take(per_page)
            .map(|(_, id)| id)
            .collect()
    }
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
                &keys::record(ctx.account_id, res.collection, other.id()),
                &encode_record(&other),
            )?;
        }
    }
    Ok(())
}

/// A record's stored bytes.
pub fn encode_record(record: &Record) -> Vec<u8> {
    let values = record
        .values
        .iter()
        .map(|(name, v)| {
            let stored = match v {
                Scalar::Text(t) => StoredScalar::Text(t.clone()),
                Scalar::Int(i) => StoredScalar::Int(*i),
                Scalar::Dec(d) => StoredScalar::Dec(Dec16(*d)),
                Scalar::Date(d) => StoredScalar::Date(d.julian()),
                Scalar::DateTime(t) => StoredScalar::DateTime(*t),
                Scalar::Bool(b) => StoredScalar::Bool(*b),
            };
            (name.clone(), stored)
        })
        .collect();
    store::encode(&StoredRecord { values })
}

/// A record from its stored bytes.
pub fn decode_record(bytes: &[u8]) -> Result<Record, Error> {
    Ok(Record {
        values: decode_pairs(bytes)?.into_iter().collect(),
    })
}

/// A record's stored values in their stored order, by name.
pub fn decode_pairs(bytes: &[u8]) -> Result<Vec<(String, Scalar)>, Error> {
    fn from<D: DecimalForm>(s: StoredRecordPairs<D>) -> Vec<(String, Scalar)> {
        s.values
            .into_iter()
            .map(|(name, v)| match scalar(v, Ok::<_, Infallible>) {
                Ok(v) => (name, v),
            })
            .collect()
    }
    Ok(store::decode(bytes, from::<DecTuple>, from::<Dec16>)?)
}

/// The stored values of a record that `keep` takes by name, in their stored order: the
/// others are passed over in the stored bytes, never copied.
pub fn decode_pairs_kept(
    bytes: &[u8],
    keep: impl Fn(&str) -> bool,
) -> Result<Vec<(String, Scalar)>, Error> {
    fn from<D: DecimalForm>(
        s: StoredRecordPairsRef<'_, D>,
        keep: impl Fn(&str) -> bool,
    ) -> Result<Vec<(String, Scalar)>, Error> {
        s.values
            .into_iter()
            .filter(|(name, _)| keep(name))
            .map(|(name, v)| {
                let v = scalar(v, |t| match std::str::from_utf8(t) {
                    Ok(t) => Ok(t.to_owned()),
                    Err(_) => Err(StoreError::Backend(format!(
                        "corrupt record: {name} is not UTF-8"
                    ))),
                })?;
                Ok((name.to_owned(), v))
            })
            .collect()
    }
    store::decode(
        bytes,
        |s| from::<DecTuple>(s, &keep),
        |s| from::<Dec16>(s, &keep),
    )?
}

/// A stored value as a record holds it, its text made a `String` by `text`.
fn scalar<D: DecimalForm, T, E>(
    v: StoredScalar<D, T>,
    text: impl FnOnce(T) -> Result<String, E>,
) -> Result<Scalar, E> {
    Ok(match v {
        StoredScalar::Text(t) => Scalar::Text(text(t)?),
        StoredScalar::Int(i) => Scalar::Int(i),
        StoredScalar::Dec(d) => Scalar::Dec(d.get()),
        StoredScalar::Date(d) => Scalar::Date(Date::from_julian(d)),
        StoredScalar::DateTime(t) => Scalar::DateTime(t),
        StoredScalar::Bool(b) => Scalar::Bool(b),
    })
}

#[cfg(test)]
mod tests {
    use rust_decimal::Decimal;

    use super::*;

    proptest::proptest! {
        /// A pager answers the page and count of paging every record pushed (sorted
        /// stably in another order), keeping in id order the page's records only and
        /// in another order only the ordered values of what `Ranked` keeps.
        #[test]
        fn a_pager_answers_as_paging_every_record_would(
            names in proptest::collection::vec("[a-cA-C]{0,2}", 0..200),
            ordered in proptest::bool::ANY,
            page in 1u32..8,
            per_page in 1u32..25,
        ) {
            let records: Vec<Record> = names
                .iter()
                .enumerate()
                .map(|(i, name)| {
                    let mut r = Record::default();
                    r.set("id", Some(Scalar::Int(i as i64 + 1)));
                    r.set("name", Some(Scalar::Text(name.clone())));
                    r.set("note", Some(Scalar::Text("kept only in a page".into())));
                    r
                })
                .collect();
            let order: &[(&'static str, bool)] = if ordered { &[("name", true)] } else { &[] };
            let mut pager = Pager::new(order, page, per_page);
            for r in records.clone() {
                pager.push(r);
            }
            if let Some(ranked) = &pager.ranked {
                proptest::prop_assert!(ranked.kept.iter().all(|(v, _)| v.get("note").is_none()));
            } else {
                proptest::prop_assert!(pager.in_id_order.len() <= per_page as usize);
            }
            let (got, total) = pager
                .finish(|ids| Ok(ids.iter().map(|id| records[*id as usize - 1].clone()).collect()))
                .unwrap();
            let mut all = records.clone();
            all.sort_by(|a, b| compare_by(order, a, b));
            let start = (page as usize - 1) * per_page as usize;
            let expected: Vec<Record> = all.into_iter().skip(start).take(per_page as usize).collect();
            proptest::prop_assert_eq!(total, records.len());
            proptest::prop_assert_eq!(got, expected);
        }
    }

    static INDEXED_FIELDS: &[Field] = &[
        Field::new("id", Kind::Integer)
            .read_only()
            .doc("Id of the test record."),
        Field::new("name", Kind::Text).doc("Name of the test record."),
        Field::new("parent_id", Kind::Integer).doc("Id of the test record's parent."),
    ];
    static INDEXED_RES: Resource = Resource::new("things", "thing", INDEXED_FIELDS, &Plain)
        .filtered(&[Filter::exact("parent_id", "parent_id")])
        .indexed(&["parent_id", "name"]);

    /// A record's texts are checked to be UTF-8 when they are read: a kept one that is not
    /// makes the record corrupt, one passed over is not looked at.
    #[test]
    fn only_kept_texts_are_read() {
        let mut record = Record::default();
        record.set("a", Some(Scalar::Text("ok".into())));
        record.set("b", Some(Scalar::Text("zz".into())));
        let mut bytes = encode_record(&record);
        let at = bytes.windows(2).position(|w| w == b"zz").unwrap();
        bytes[at..at + 2].copy_from_slice(&[0xff, 0xfe]);
        let kept = decode_pairs_kept(&bytes, |name| name == "a").unwrap();
        assert_eq!(kept, vec![("a".to_owned(), Scalar::Text("ok".into()))]);
        let err = decode_pairs_kept(&bytes, |name| name == "b").unwrap_err();
        assert!(format!("{err:?}").contains("b is not UTF-8"), "{err:?}");
        let err = decode_pairs(&bytes).unwrap_err();
        assert!(format!("{err:?}").contains("corrupt record"), "{err:?}");
    }

    /// Index entries follow creates, updates and deletes; a list filtered by an indexed
    /// field reads them.
    #[test]
    fn indexes_follow_every_change() {
        use crate::caps::Store;
        use crate::caps::mem::MemStore;
        let store = MemStore::default();
        let ctx = Ctx {
            account_id: 1,
            user_id: 1,
            is_admin: true,
            now: 0,
            utc_offset: 0,
        };
        let mut w = store.begin_write().unwrap();
        let changes = |name: &str, parent: i64| Changes {
            values: vec![
                ("name", Some(Scalar::Text(name.into()))),
                ("parent_id", Some(Scalar::Int(parent))),
            ],
            ..Changes::default()
        };
        let a = create(&ctx, w.as_mut(), &INDEXED_RES, &changes("Müller GmbH", 7)).unwrap();
        let b = create(&ctx, w.as_mut(), &INDEXED_RES, &changes("Other", 7)).unwrap();
        let txn = w.as_read();
        let ids = |v: Vec<Record>| v.iter().map(Record::id).collect::<Vec<_>>();
        assert_eq!(
            ids(children(txn, &INDEXED_RES, 1, "parent_id", 7).unwrap()),
            [a.id(), b.id()]
        );
        assert_eq!(
            ids(find(txn, &INDEXED_RES, 1, "name", " müller  gmbh").unwrap()),
            [a.id()]
        );
        assert!(
            find(txn, &INDEXED_RES, 1, "name", "Müller")
                .unwrap()
                .is_empty(),
            "whole texts only"
        );
        update(&ctx, w.as_mut(), &INDEXED_RES, a.id(), &changes("Meier", 8)).unwrap();
        let txn = w.as_read();
        assert_eq!(
            ids(children(txn, &INDEXED_RES, 1, "parent_id", 7).unwrap()),
            [b.id()]
        );
        assert_eq!(
            ids(children(txn, &INDEXED_RES, 1, "parent_id", 8).unwrap()),
            [a.id()]
        );
        assert!(
            find(txn, &INDEXED_RES, 1, "name", "Müller GmbH")
                .unwrap()
                .is_empty()
        );
        let q = ListQuery {
            filters: vec![("parent_id", vec!["8".into(), "7".into()])],
            page: 1,
            per_page: 10,
            ..ListQuery::default()
        };
        assert_eq!(
            ids(list(txn, &INDEXED_RES, 1, &q).unwrap().records),
            [a.id(), b.id()]
        );
        delete(&ctx, w.as_mut(), &INDEXED_RES, b.id()).unwrap();
        let txn = w.as_read();
        assert!(
            children(txn, &INDEXED_RES, 1, "parent_id", 7)
                .unwrap()
                .is_empty()
        );
        assert!(
            find(txn, &INDEXED_RES, 1, "name", "other")
                .unwrap()
                .is_empty()
        );
        // A long text is indexed by its beginning; records sharing it are all found.
        let long = "x".repeat(300);
        let c = create(&ctx, w.as_mut(), &INDEXED_RES, &changes(&long, 1)).unwrap();
        let txn = w.as_read();
        assert_eq!(
            ids(find(txn, &INDEXED_RES, 1, "name", &"x".repeat(250)).unwrap()),
            [c.id()]
        );
    }

    static SEARCHED_RES: Resource =
        Resource::new("things", "thing", INDEXED_FIELDS, &Plain).searched(&["name"]);

    /// The parts index finds a record by any part of its text, whatever the case and white
    /// space, follows updates and deletes, and finds a part far into a long text.
    #[test]
    fn searched_texts_are_found_by_any_part() {
        use crate::caps::Store;
        use crate::caps::mem::MemStore;
        let store = MemStore::default();
        let ctx = Ctx {
            account_id: 1,
            user_id: 1,
            is_admin: true,
            now: 0,
            utc_offset: 0,
        };
        let mut w = store.begin_write().unwrap();
        let named = |name: &str| Changes {
            values: vec![("name", Some(Scalar::Text(name.into())))],
            ..Changes::default()
        };
        let a = create(&ctx, w.as_mut(), &SEARCHED_RES, &named("Müller & Söhne AG")).unwrap();
        let b = create(&ctx, w.as_mut(), &SEARCHED_RES, &named("Schmidt")).unwrap();
        let found = |w: &dyn Read, part: &str| search(w, &SEARCHED_RES, 1, "name", part).unwrap();
        assert_eq!(found(w.as_read(), "MÜLLER"), Some(vec![a.id()]));
        assert_eq!(found(w.as_read(), "r & s"), Some(vec![a.id()]));
        assert_eq!(found(w.as_read(), "hm"), Some(vec![b.id()]));
        assert_eq!(found(w.as_read(), "s"), Some(vec![a.id(), b.id()]));
        assert_eq!(found(w.as_read(), "meier"), Some(vec![]));
        assert_eq!(found(w.as_read(), "  "), None, "white space cannot narrow");
        update(&ctx, w.as_mut(), &SEARCHED_RES, a.id(), &named("Meier")).unwrap();
        assert_eq!(found(w.as_read(), "müller"), Some(vec![]));
        assert_eq!(found(w.as_read(), "eie"), Some(vec![a.id()]));
        delete(&ctx, w.as_mut(), &SEARCHED_RES, b.id()).unwrap();
        assert_eq!(found(w.as_read(), "schmidt"), Some(vec![]));
        // A part found past where the index stops is not missed: long texts are read.
        let long = format!("{}needle", "x".repeat(300));
        let c = create(&ctx, w.as_mut(), &SEARCHED_RES, &named(&long)).unwrap();
        assert_eq!(found(w.as_read(), "needle"), Some(vec![c.id()]));
        // A part longer than an entry holds is found by its beginning.
        let d = create(&ctx, w.as_mut(), &SEARCHED_RES, &named(&"ab".repeat(40))).unwrap();
        assert_eq!(
            found(w.as_read(), &"ba".repeat(30)),
            Some(vec![c.id(), d.id()])
        );
        delete(&ctx, w.as_mut(), &SEARCHED_RES, c.id()).unwrap();
        delete(&ctx, w.as_mut(), &SEARCHED_RES, d.id()).unwrap();
        update(&ctx, w.as_mut(), &SEARCHED_RES, a.id(), &named("")).unwrap();
        assert!(
            store::scan_all(w.as_read(), &keys::index(1, "things", "name~"))
                .unwrap()
                .is_empty()
                && store::scan_all(w.as_read(), &keys::index(1, "things", "name~long"))
                    .unwrap()
                    .is_empty(),
            "no entry outlives its text"
        );
    }

    #[test]
    fn records_with_every_kind_survive_storage() {
        let mut r = Record::default();
        r.set("t", Some(Scalar::Text("ä".into())));
        r.set("i", Some(Scalar::Int(-3)));
        r.set("d", Some(Scalar::Dec(Decimal::new(46155, 1))));
        r.set("a", Some(Scalar::Date(Date::parse("2026-02-28").unwrap())));
        r.set("s", Some(Scalar::DateTime(1_795_000_000)));
        r.set("b", Some(Scalar::Bool(true)));
        assert_eq!(decode_record(&encode_record(&r)).unwrap(), r);
    }
}
