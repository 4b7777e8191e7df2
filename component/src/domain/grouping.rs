//! Grouped totals (`group_by`). Groups are summed from loaded documents, or, for the common
//! case of grouping all of an account's documents by client, status, month or year, from
//! the sums every save keeps per (month, client, stored status, currency): a few thousand
//! entries instead of every document. Open documents are still loaded one by one, because
//! whether one shows as OPEN or OVERDUE depends on today.

use std::collections::{BTreeMap, HashMap};

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use super::Error;
use super::date::Date;
use super::documents::{self, DocKind, Document, Filter, Shown, Status};
use super::schema::Scalar;
use crate::caps::{Read, Write};
use crate::store::{self, decimal_bytes};

/// A `group_by` key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupKey {
    Client,
    Status,
    Day,
    Week,
    Month,
    Year,
}

impl GroupKey {
    pub fn parse(s: &str) -> Option<GroupKey> {
        Some(match s.trim().to_ascii_lowercase().as_str() {
            "client" => GroupKey::Client,
            "status" => GroupKey::Status,
            "day" => GroupKey::Day,
            "week" => GroupKey::Week,
            "month" => GroupKey::Month,
            "year" => GroupKey::Year,
            _ => return None,
        })
    }

    /// The element name and value of this key for an invoice.
    pub fn value(self, inv: &Document, today: Date) -> (&'static str, Scalar) {
        let d = inv.date;
        match self {
            GroupKey::Client => ("client_id", Scalar::Int(inv.client_id as i64)),
            GroupKey::Status => ("status", Scalar::Text(inv.shown(today).as_str().into())),
            GroupKey::Day => ("day", Scalar::Date(d)),
            GroupKey::Week => {
                let (y, w) = d.iso_week();
                ("week", Scalar::Text(format!("{y}-W{w:02}")))
            }
            GroupKey::Month => month_value(d.year(), d.month()),
            GroupKey::Year => ("year", Scalar::Int(d.year() as i64)),
        }
    }
}

fn month_value(year: i32, month: u8) -> (&'static str, Scalar) {
    ("month", Scalar::Text(format!("{year:04}-{month:02}")))
}

/// One group: its key values and sums.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    pub keys: Vec<(&'static str, Scalar)>,
    pub total_net: Decimal,
    pub total_gross: Decimal,
    pub count: u64,
}

/// Groups per currency being summed.
#[derive(Default)]
struct Groups {
    lists: BTreeMap<String, Vec<Group>>,
    /// (currency, key values on the wire) → position in its list.
    slots: HashMap<(String, String), usize>,
}

impl Groups {
    fn add(&mut self, currency: &str, keys: Vec<(&'static str, Scalar)>, sums: &Sums) {
        let wire = keys
            .iter()
            .map(|(_, v)| v.to_wire())
            .collect::<Vec<_>>()
            .join("\u{0}");
        let list = self.lists.entry(currency.to_string()).or_default();
        match self.slots.get(&(currency.to_string(), wire.clone())) {
            Some(&i) => {
                let g = &mut list[i];
                g.total_net += sums.net;
                g.total_gross += sums.gross;
                g.count += sums.count;
            }
            None => {
                self.slots.insert((currency.to_string(), wire), list.len());
                list.push(Group {
                    keys,
                    total_net: sums.net,
                    total_gross: sums.gross,
                    count: sums.count,
                });
            }
        }
    }

    fn add_document(&mut self, inv: &Document, keys: &[GroupKey], today: Date) {
        let values = keys.iter().map(|k| k.value(inv, today)).collect();
        self.add(&inv.currency_code, values, &Sums::of(inv));
    }

    /// Groups per currency (in currency order), each list ordered by its key values.
    fn finish(self) -> Vec<(String, Vec<Group>)> {
        let mut out: Vec<(String, Vec<Group>)> = self.lists.into_iter().collect();
        for (_, list) in &mut out {
            list.sort_by(|a, b| {
                a.keys
                    .iter()
                    .zip(&b.keys)
                    .map(|(x, y)| x.1.compare(&y.1))
                    .find(|o| o.is_ne())
                    .unwrap_or(std::cmp::Ordering::Equal)
            });
        }
        out
    }
}

/// Groups per currency, each list ordered by its key values.
pub fn group(invoices: &[Document], keys: &[GroupKey], today: Date) -> Vec<(String, Vec<Group>)> {
    let mut groups = Groups::default();
    for inv in invoices {
        groups.add_document(inv, keys, today);
    }
    groups.finish()
}

/// The groups of the documents matching `f`: from the kept sums when the filter and keys
/// allow it, else from every matching document.
pub fn groups(
    txn: &dyn Read,
    account: u64,
    f: &Filter,
    keys: &[GroupKey],
    today: Date,
) -> Result<Vec<(String, Vec<Group>)>, Error> {
    let from_sums = keys.iter().all(|k| {
        matches!(
            k,
            GroupKey::Client | GroupKey::Status | GroupKey::Month | GroupKey::Year
        )
    }) && f.only_indexed_fields()
        && f.from.is_none()
        && f.to.is_none();
    if !from_sums {
        let found = documents::find(txn, account, f, today)?;
        return Ok(group(&found, keys, today));
    }
    let mut groups = Groups::default();
    let this_month = month_number(today);
    let wanted = |shown: Shown| f.statuses.is_empty() || f.statuses.contains(&shown);
    let prefix = store::index_prefix(account, f.kind.collection(), SUMS);
    store::for_each(txn, &prefix, |(k, v)| {
        let key = SumKey::read(&k[prefix.len()..])?;
        let shown = match (key.status.shown_as_stored(), key.due_month) {
            (Some(shown), _) => shown,
            (None, Some(due)) if due < this_month => Shown::Overdue,
            (None, Some(due)) if due > this_month => Shown::Open,
            // Due this month: OPEN or OVERDUE by the day, loaded below.
            (None, _) => return Ok(()),
        };
        if !wanted(shown) || f.client_id.is_some_and(|c| c != key.client) {
            return Ok(());
        }
        let values = keys
            .iter()
            .map(|k| match k {
                GroupKey::Client => ("client_id", Scalar::Int(key.client as i64)),
                GroupKey::Status => ("status", Scalar::Text(shown.as_str().into())),
                GroupKey::Year => ("year", Scalar::Int(key.year() as i64)),
                _ => month_value(key.year(), key.month()),
            })
            .collect();
        groups.add(&key.currency, values, &store::decode(&v)?);
        Ok::<_, Error>(())
    })?;
    if wanted(Shown::Open) || wanted(Shown::Overdue) {
        let first = today.add_days(-(today.day() as i64 - 1));
        let last = first.add_days(31);
        let last = last.add_days(-(last.day() as i64));
        for id in documents::open_due_between(txn, account, f.kind, first, last)? {
            let inv = documents::load(txn, account, f.kind, id)?;
            if f.matches(&inv, today) {
                groups.add_document(&inv, keys, today);
            }
        }
    }
    Ok(groups.finish())
}

// ---- kept sums ---------------------------------------------------------------------------

/// Index name of the sums; the marker saying an account's sums are kept.
const SUMS: &str = "sums";
const SUMS_KEPT: &str = "sums-kept";
/// Index name of the number of all documents of a kind, kept with the sums.
const COUNT: &str = "count";
/// Index name of the number of documents per stored status, open ones per due day: what
/// a list filtered by status counts without reading its documents.
const STATUS_COUNT: &str = "status-count";
/// What the marker holds: the version of what is kept with the sums. Data kept by an
/// older version (no status counts, status index entries without due days) is kept again
/// from the documents by `rebuild`.
const KEPT_VERSION: u8 = 2;

/// Count and totals of the documents under one sum key.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct Sums {
    count: u64,
    #[serde(with = "decimal_bytes")]
    net: Decimal,
    #[serde(with = "decimal_bytes")]
    gross: Decimal,
}

impl Sums {
    fn of(inv: &Document) -> Sums {
        Sums {
            count: 1,
            net: inv.total_net,
            gross: inv.total_gross,
        }
    }

    /// Adds a document's contribution, or takes it away.
    fn add(&mut self, inv: &Document, take_away: bool) {
        let one = Sums::of(inv);
        if take_away {
            self.count = self.count.saturating_sub(one.count);
            self.net -= one.net;
            self.gross -= one.gross;
        } else {
            self.count += one.count;
            self.net += one.net;
            self.gross += one.gross;
        }
    }
}

/// year × 12 + month − 1 of a date.
fn month_number(d: Date) -> i32 {
    d.year() * 12 + d.month() as i32 - 1
}

/// What a document is summed under: month of its date, client, stored status (for open
/// documents with the month they are due), currency.
#[derive(Debug, Clone, PartialEq)]
struct SumKey {
    month: i32,
    client: u64,
    status: Status,
    /// Open documents only: the month of the due date. Those due before this month show
    /// as OVERDUE, those due after it as OPEN; those due in it are loaded one by one.
    due_month: Option<i32>,
    currency: String,
}

impl SumKey {
    fn of(inv: &Document) -> SumKey {
        SumKey {
            month: month_number(inv.date),
            client: inv.client_id,
            status: inv.status,
            due_month: (inv.status == Status::Open).then(|| month_number(inv.due_date)),
            currency: inv.currency_code.clone(),
        }
    }

    fn year(&self) -> i32 {
        self.month.div_euclid(12)
    }

    fn month(&self) -> u8 {
        self.month.rem_euclid(12) as u8 + 1
    }

    fn key(&self, account: u64, kind: DocKind) -> Vec<u8> {
        let mut k = store::index_prefix(account, kind.collection(), SUMS);
        k.extend_from_slice(&store::sortable_i32(self.month));
        k.extend_from_slice(&self.client.to_be_bytes());
        k.push(documents::status_byte(self.status));
        if let Some(due) = self.due_month {
            k.extend_from_slice(&store::sortable_i32(due));
        }
        k.extend_from_slice(self.currency.as_bytes());
        k
    }

    /// Reads the part of a key after the sums prefix.
    fn read(tail: &[u8]) -> Result<SumKey, Error> {
        let corrupt = || corrupt("sums key");
        if tail.len() < 13 {
            return Err(corrupt());
        }
        let i32_at = |at: usize| -> Result<i32, Error> {
            tail.get(at..at + 4)
                .and_then(store::i32_of_sortable)
                .ok_or_else(corrupt)
        };
        let month = i32_at(0)?;
        let client = u64::from_be_bytes(tail[4..12].try_into().map_err(|_| corrupt())?);
        let status = documents::status_of_byte(tail[12]).ok_or_else(corrupt)?;
        let (due_month, rest) = if status == Status::Open {
            (Some(i32_at(13)?), 17)
        } else {
            (None, 13)
        };
        let currency = String::from_utf8(tail[rest..].to_vec()).map_err(|_| corrupt())?;
        Ok(SumKey {
            month,
            client,
            status,
            due_month,
            currency,
        })
    }
}

/// The number of all documents of a kind, kept with the sums (the caller has run
/// `rebuild`).
pub fn count_all(txn: &dyn Read, account: u64, kind: DocKind) -> Result<u64, Error> {
    read_counter(txn, &count_key(account, kind))
}

fn corrupt(what: &str) -> Error {
    Error::Store(crate::caps::StoreError::Backend(format!("corrupt {what}")))
}

/// The document count is also the sum of the sums' counts; kept on its own so that a
/// count reads one key.
fn count_key(account: u64, kind: DocKind) -> Vec<u8> {
    store::index_prefix(account, kind.collection(), COUNT)
}

/// A kept count; an absent key counts none.
fn read_counter(txn: &dyn Read, key: &[u8]) -> Result<u64, Error> {
    txn.get(key)?.map_or(Ok(0), |v| counter_value(&v))
}

fn counter_value(bytes: &[u8]) -> Result<u64, Error> {
    Ok(u64::from_be_bytes(
        bytes.try_into().map_err(|_| corrupt("count"))?,
    ))
}

/// Adds one to a kept count, or takes one away; a count of none is no key.
fn add_to_counter(txn: &mut dyn Write, key: &[u8], add: bool) -> Result<(), Error> {
    let n = read_counter(txn.as_read(), key)?;
    let n = if add { n + 1 } else { n.saturating_sub(1) };
    if n == 0 {
        txn.delete(key)?;
    } else {
        txn.put(key, &n.to_be_bytes())?;
    }
    Ok(())
}

fn kept_key(account: u64, kind: DocKind) -> Vec<u8> {
    store::index_prefix(account, kind.collection(), SUMS_KEPT)
}

/// Whether the account's sums of this kind are kept (always, for data written since sums
/// exist; older data gets them from `rebuild`).
pub fn sums_kept(txn: &dyn Read, account: u64, kind: DocKind) -> Result<bool, Error> {
    Ok(txn.get(&kept_key(account, kind))?.as_deref() == Some(&[KEPT_VERSION][..]))
}

fn status_count_prefix(account: u64, kind: DocKind, status: Status) -> Vec<u8> {
    let mut k = store::index_prefix(account, kind.collection(), STATUS_COUNT);
    k.push(documents::status_byte(status));
    k
}

/// Where a document is counted: its stored status, and for open ones the day it is due.
fn status_count_key(account: u64, inv: &Document) -> Vec<u8> {
    let mut k = status_count_prefix(account, inv.kind, inv.status);
    if inv.status == Status::Open {
        k.extend_from_slice(&store::sortable_i32(inv.due_date.julian()));
    }
    k
}

/// The number of documents showing one of `statuses` today, from the kept counts (the
/// caller has run `rebuild`).
pub fn count_statuses(
    txn: &dyn Read,
    account: u64,
    kind: DocKind,
    statuses: &[Shown],
    today: Date,
) -> Result<u64, Error> {
    let mut total = 0;
    for stored in documents::SHOWN_AS_STORED {
        if stored
            .shown_as_stored()
            .is_some_and(|s| statuses.contains(&s))
        {
            total += read_counter(txn, &status_count_prefix(account, kind, stored))?;
        }
    }
    let (open, overdue) = (
        statuses.contains(&Shown::Open),
        statuses.contains(&Shown::Overdue),
    );
    if open || overdue {
        let prefix = status_count_prefix(account, kind, Status::Open);
        // Open documents are counted per due day: OPEN from today on, OVERDUE before.
        let today_key = store::sortable_i32(today.julian());
        let after = (open && !overdue)
            .then(|| [&prefix[..], &store::sortable_i32(today.julian() - 1)].concat());
        store::for_each_after(txn, &prefix, after, |(k, v)| {
            if !open && k[prefix.len()..] >= today_key[..] {
                return Ok(());
            }
            total += counter_value(&v)?;
            Ok::<_, Error>(())
        })?;
    }
    Ok(total)
}

/// Moves a document's contribution to the sums: `old` out, `new` in. The first document
/// of an account starts keeping them.
pub fn update(
    txn: &mut dyn Write,
    account: u64,
    kind: DocKind,
    old: Option<&Document>,
    new: Option<&Document>,
) -> Result<(), Error> {
    if !sums_kept(txn.as_read(), account, kind)? {
        let any = txn.scan(&documents::collection_prefix(account, kind), None, 1, false)?;
        if !any.is_empty() {
            // Documents from before sums were kept: `rebuild` takes them all at once.
            return Ok(());
        }
        txn.put(&kept_key(account, kind), &[KEPT_VERSION])?;
    }
    let (old_counted, new_counted) = (
        old.map(|o| status_count_key(account, o)),
        new.map(|n| status_count_key(account, n)),
    );
    if old_counted != new_counted {
        if let Some(k) = old_counted {
            add_to_counter(txn, &k, false)?;
        }
        if let Some(k) = new_counted {
            add_to_counter(txn, &k, true)?;
        }
    }
    if old.is_none() != new.is_none() {
        add_to_counter(txn, &count_key(account, kind), new.is_some())?;
    }
    if let (Some(o), Some(n)) = (old, new)
        && SumKey::of(o) == SumKey::of(n)
        && Sums::of(o) == Sums::of(n)
    {
        return Ok(());
    }
    for (inv, take_away) in old
        .map(|o| (o, true))
        .into_iter()
        .chain(new.map(|n| (n, false)))
    {
        let key = SumKey::of(inv).key(account, kind);
        let mut sums: Sums = match txn.get(&key)? {
            Some(v) => store::decode(&v)?,
            None => Sums::default(),
        };
        sums.add(inv, take_away);
        if sums.count == 0 {
            txn.delete(&key)?;
        } else {
            txn.put(&key, &store::encode(&sums))?;
        }
    }
    Ok(())
}

/// Sums and counts every document of the account once and keeps them from then on; for
/// data written before they were kept (or kept by an older version). Does nothing when
/// they are kept already.
pub fn rebuild(txn: &mut dyn Write, account: u64, kind: DocKind) -> Result<(), Error> {
    if sums_kept(txn.as_read(), account, kind)? {
        return Ok(());
    }
    for index in [SUMS, STATUS_COUNT] {
        let prefix = store::index_prefix(account, kind.collection(), index);
        for (k, _) in store::scan_all(txn.as_read(), &prefix)? {
            txn.delete(&k)?;
        }
    }
    let mut all: BTreeMap<Vec<u8>, Sums> = BTreeMap::new();
    let mut counts: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
    let mut count = 0u64;
    // Older versions kept the status entries of open documents without their due day.
    let mut open_entries = Vec::new();
    let documents = documents::collection_prefix(account, kind);
    store::for_each(txn.as_read(), &documents, |(_, v)| {
        count += 1;
        let inv: Document = store::decode(&v)?;
        all.entry(SumKey::of(&inv).key(account, kind))
            .or_default()
            .add(&inv, false);
        *counts.entry(status_count_key(account, &inv)).or_default() += 1;
        if inv.status == Status::Open {
            open_entries.push(documents::status_entry(account, &inv));
        }
        Ok::<_, Error>(())
    })?;
    for (k, v) in open_entries {
        txn.put(&k, &v)?;
    }
    for (k, sums) in all {
        txn.put(&k, &store::encode(&sums))?;
    }
    for (k, n) in counts {
        txn.put(&k, &n.to_be_bytes())?;
    }
    txn.put(&count_key(account, kind), &count.to_be_bytes())?;
    txn.put(&kept_key(account, kind), &[KEPT_VERSION])?;
    Ok(())
}
