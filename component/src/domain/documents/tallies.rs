//! What is kept of all of an account's documents of a kind, so that counting and grouping
//! them reads a few keys instead of every document: the sums per (month, client, stored
//! status with the due month of open documents, currency), the number of all documents,
//! and the number per stored status (open ones per due day).
//!
//! Every save moves a document's contribution in the same transaction (`update`), so the
//! tallies always equal what summing the documents gives. An account's tallies exist
//! once a marker says so: the first document of an account writes it; data from before
//! sums were kept gets it from the migration (`Rebuild`). Reads need a `Tallies`, which only
//! `check` makes, after seeing the marker: a list cannot count or group from tallies
//! that is not there, and never writes to make it so.

use std::collections::BTreeMap;

use rust_decimal::Decimal;

use super::super::Error;
use super::super::date::Date;
use super::keys::{self as doc_keys, Due, status_byte, status_of_byte};
use super::kind::DocKind;
use super::lifecycle::{Shown, Status};
use super::model::Document;
use crate::caps::{Read, Write};
use crate::store::forms::{Dec16, DecTuple, DecimalForm, StoredSums};
use crate::store::keys::{self, i32_of_sortable, sortable_i32};
use crate::store::{self, DATA_VERSION};

/// Index names of the sums, the marker, the count of all documents, and the counts per
/// stored status.
const SUMS: &str = "sums";
const MARKER: &str = "sums-kept";
const COUNT: &str = "count";
const STATUS_COUNT: &str = "status-count";

/// The data version at which the layout of tallies last changed (2: status counts, and
/// due days in open documents' status entries). The marker holds the version its data was
/// built at; data built before this version is rebuilt by the migration.
const LAYOUT_SINCE: u8 = 2;

/// Proof that an account's documents of a kind have complete tallies.
pub struct Tallies {
    account: u64,
    kind: DocKind,
}

/// Whether the tallies of an account's documents of a kind are complete: a `Tallies` when
/// it is, `None` when the documents predate it (until the migration runs).
pub fn check(txn: &dyn Read, account: u64, kind: DocKind) -> Result<Option<Tallies>, Error> {
    Ok(has_tallies(txn, account, kind)?.then_some(Tallies { account, kind }))
}

fn has_tallies(txn: &dyn Read, account: u64, kind: DocKind) -> Result<bool, Error> {
    Ok(txn
        .get(&marker_key(account, kind))?
        .and_then(|v| v.first().copied())
        .is_some_and(|built| built >= LAYOUT_SINCE))
}

fn marker_key(account: u64, kind: DocKind) -> Vec<u8> {
    keys::index(account, kind.collection(), MARKER)
}

fn count_key(account: u64, kind: DocKind) -> Vec<u8> {
    keys::index(account, kind.collection(), COUNT)
}

fn status_count_prefix(account: u64, kind: DocKind, status: Status) -> Vec<u8> {
    let mut k = keys::index(account, kind.collection(), STATUS_COUNT);
    k.push(status_byte(status));
    k
}

/// Where a document is counted: its stored status, and for open ones the day it is due.
fn status_count_key(account: u64, doc: &Document) -> Vec<u8> {
    let mut k = status_count_prefix(account, doc.kind, doc.status);
    if doc.falls_due() {
        k.extend_from_slice(&doc_keys::day(doc.due_date));
    }
    k
}

/// Count and totals of the documents under one sum key.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sums {
    pub count: u64,
    pub net: Decimal,
    pub gross: Decimal,
}

impl Sums {
    pub fn of(doc: &Document) -> Sums {
        Sums {
            count: 1,
            net: doc.total_net,
            gross: doc.total_gross,
        }
    }

    /// Adds a document's contribution, or takes it away.
    fn add(&mut self, doc: &Document, take_away: bool) {
        let one = Sums::of(doc);
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

    fn encode(&self) -> Vec<u8> {
        store::encode(&StoredSums {
            count: self.count,
            net: Dec16(self.net),
            gross: Dec16(self.gross),
        })
    }

    fn decode(bytes: &[u8]) -> Result<Sums, Error> {
        fn from<D: DecimalForm>(s: StoredSums<D>) -> Sums {
            Sums {
                count: s.count,
                net: s.net.get(),
                gross: s.gross.get(),
            }
        }
        Ok(store::decode(bytes, from::<DecTuple>, from::<Dec16>)?)
    }
}

/// Calls `f` with the due day, the id and what the entry keeps (`Due::read`) of every open
/// document of `kind` due from `first` to `last`, in due order, a batch per call.
pub fn for_each_due_between(
    txn: &dyn Read,
    account: u64,
    kind: DocKind,
    first: Date,
    last: Date,
    mut f: impl FnMut(Date, u64, Option<Due<'_>>) -> Result<(), Error>,
) -> Result<(), Error> {
    let prefix = doc_keys::open_due_index(account, kind);
    let last = doc_keys::day(last);
    let day = |k: &[u8]| -> Result<[u8; 4], Error> {
        k.get(prefix.len()..prefix.len() + 4)
            .and_then(|d| d.try_into().ok())
            .ok_or_else(|| corrupt("open-due key"))
    };
    // The prefix and first day sort just before the first entry of that day.
    let first = [&prefix[..], &doc_keys::day(first)].concat();
    store::for_each_until(
        txn,
        &prefix,
        Some(first),
        |k| Ok(day(k)? > last),
        |(k, v)| {
            let due = i32_of_sortable(&day(k)?).ok_or_else(|| corrupt("open-due key"))?;
            f(Date::from_julian(due), store::id_of_key(k)?, Due::read(v)?)
        },
    )
}

/// year × 12 + month − 1 of a date.
pub fn month_number(d: Date) -> i32 {
    d.year() * 12 + d.month() as i32 - 1
}

/// What a document is summed under: month of its date, client, stored status (for open
/// documents with the month they are due), currency.
#[derive(Debug, Clone, PartialEq)]
pub struct SumKey {
    pub month: i32,
    pub client: u64,
    pub status: Status,
    /// Open documents only: the month of the due date. Those due before this month show
    /// as OVERDUE, those due after it as OPEN; those due in it are loaded one by one.
    pub due_month: Option<i32>,
    pub currency: String,
}

impl SumKey {
    fn of(doc: &Document) -> SumKey {
        SumKey {
            month: month_number(doc.date),
            client: doc.client_id,
            status: doc.status,
            due_month: doc.falls_due().then(|| month_number(doc.due_date)),
            currency: doc.currency_code.clone(),
        }
    }

    pub fn year(&self) -> i32 {
        self.month.div_euclid(12)
    }

    pub fn month_of_year(&self) -> u8 {
        self.month.rem_euclid(12) as u8 + 1
    }

    fn key(&self, account: u64, kind: DocKind) -> Vec<u8> {
        let mut k = keys::index(account, kind.collection(), SUMS);
        k.extend_from_slice(&sortable_i32(self.month));
        k.extend_from_slice(&self.client.to_be_bytes());
        k.push(status_byte(self.status));
        if let Some(due) = self.due_month {
            k.extend_from_slice(&sortable_i32(due));
        }
        k.extend_from_slice(self.currency.as_bytes());
        k
    }

    /// Reads the part of a key of `kind`'s sums after the sums prefix.
    fn read(kind: DocKind, tail: &[u8]) -> Result<SumKey, Error> {
        let corrupt = || corrupt("sums key");
        if tail.len() < 13 {
            return Err(corrupt());
        }
        let i32_at = |at: usize| -> Result<i32, Error> {
            tail.get(at..at + 4)
                .and_then(i32_of_sortable)
                .ok_or_else(corrupt)
        };
        let month = i32_at(0)?;
        let client = u64::from_be_bytes(tail[4..12].try_into().map_err(|_| corrupt())?);
        let status = status_of_byte(tail[12]).ok_or_else(corrupt)?;
        let (due_month, rest) = if status == Status::Open && kind.spec().falls_due {
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

fn corrupt(what: &str) -> Error {
    Error::Store(crate::caps::StoreError::Backend(format!("corrupt {what}")))
}

/// A tallied count; an absent key counts none.
fn read_counter(txn: &dyn Read, key: &[u8]) -> Result<u64, Error> {
    txn.get(key)?
        .map_or(Ok(0), |v| Ok(store::u64_of(&v, "count")?))
}

/// Adds one to a tallied count, or takes one away; a count of none is no key.
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

/// The number of all documents of the kind.
pub fn count_all(txn: &dyn Read, tallies: &Tallies) -> Result<u64, Error> {
    read_counter(txn, &count_key(tallies.account, tallies.kind))
}

/// The number of documents showing one of `statuses` today.
pub fn count_statuses(
    txn: &dyn Read,
    tallies: &Tallies,
    statuses: &[Shown],
    today: Date,
) -> Result<u64, Error> {
    let (account, kind) = (tallies.account, tallies.kind);
    let mut total = 0;
    for stored in Status::of(kind.lifecycle()) {
        if stored
            .shown_as_stored()
            .is_some_and(|s| statuses.contains(&s))
        {
            total += read_counter(txn, &status_count_prefix(account, kind, *stored))?;
        }
    }
    let (open, overdue) = (
        statuses.contains(&Shown::Open),
        statuses.contains(&Shown::Overdue),
    );
    if !kind.spec().falls_due {
        // Open documents of a kind that never falls due are counted as one.
        if open && Status::of(kind.lifecycle()).contains(&Status::Open) {
            total += read_counter(txn, &status_count_prefix(account, kind, Status::Open))?;
        }
    } else if open || overdue {
        let prefix = status_count_prefix(account, kind, Status::Open);
        // Open documents are counted per due day: OPEN from today on, OVERDUE before.
        let today_key = doc_keys::day(today);
        let after =
            (open && !overdue).then(|| [&prefix[..], &sortable_i32(today.julian() - 1)].concat());
        store::for_each_after(txn, &prefix, after, |(k, v)| {
            if !open && k[prefix.len()..] >= today_key[..] {
                return Ok(());
            }
            total += store::u64_of(v, "count")?;
            Ok::<_, Error>(())
        })?;
    }
    Ok(total)
}

/// Calls `f` with every kept sum of the kind.
pub fn for_each_sum(
    txn: &dyn Read,
    tallies: &Tallies,
    mut f: impl FnMut(SumKey, Sums) -> Result<(), Error>,
) -> Result<(), Error> {
    let prefix = keys::index(tallies.account, tallies.kind.collection(), SUMS);
    store::for_each(txn, &prefix, |(k, v)| {
        f(
            SumKey::read(tallies.kind, &k[prefix.len()..])?,
            Sums::decode(v)?,
        )
    })
}

/// Moves a document's contribution: `old` out, `new` in. The first document of an
/// account starts keeping them; documents from before they were kept wait for the
/// migration.
pub fn update(
    txn: &mut dyn Write,
    account: u64,
    kind: DocKind,
    old: Option<&Document>,
    new: Option<&Document>,
) -> Result<(), Error> {
    if !has_tallies(txn.as_read(), account, kind)? {
        let any = txn.scan(&doc_keys::all(account, kind), None, 1, false)?;
        if !any.is_empty() {
            return Ok(());
        }
        txn.put(&marker_key(account, kind), &[DATA_VERSION])?;
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
    for (doc, take_away) in old
        .map(|o| (o, true))
        .into_iter()
        .chain(new.map(|n| (n, false)))
    {
        let key = SumKey::of(doc).key(account, kind);
        let mut sums = match txn.get(&key)? {
            Some(v) => Sums::decode(&v)?,
            None => Sums::default(),
        };
        sums.add(doc, take_away);
        if sums.count == 0 {
            txn.delete(&key)?;
        } else {
            txn.put(&key, &sums.encode())?;
        }
    }
    Ok(())
}

/// The tallies of every document of an account's kind, summed afresh: `add` each
/// document, then `write` replaces whatever was kept before.
#[derive(Default)]
pub struct Rebuild {
    sums: BTreeMap<Vec<u8>, Sums>,
    counts: BTreeMap<Vec<u8>, u64>,
    count: u64,
}

impl Rebuild {
    pub fn add(&mut self, account: u64, doc: &Document) {
        self.count += 1;
        self.sums
            .entry(SumKey::of(doc).key(account, doc.kind))
            .or_default()
            .add(doc, false);
        *self
            .counts
            .entry(status_count_key(account, doc))
            .or_default() += 1;
    }

    pub fn write(self, txn: &mut dyn Write, account: u64, kind: DocKind) -> Result<(), Error> {
        for index in [SUMS, STATUS_COUNT] {
            let prefix = keys::index(account, kind.collection(), index);
            for (k, _) in store::scan_all(txn.as_read(), &prefix)? {
                txn.delete(&k)?;
            }
        }
        for (k, sums) in self.sums {
            txn.put(&k, &sums.encode())?;
        }
        for (k, n) in self.counts {
            txn.put(&k, &n.to_be_bytes())?;
        }
        txn.put(&count_key(account, kind), &self.count.to_be_bytes())?;
        txn.put(&marker_key(account, kind), &[DATA_VERSION])?;
        Ok(())
    }

    /// Compares what is kept of an account's documents of a kind with this recount of
    /// them, for the consistency check: `problem` gets one sentence per difference. The
    /// number of tallied values read.
    pub fn compare(
        self,
        txn: &dyn Read,
        account: u64,
        kind: DocKind,
        problem: &mut dyn FnMut(String),
    ) -> Result<u64, Error> {
        let label = kind.label();
        if !has_tallies(txn, account, kind)? {
            // Without the marker nothing is kept yet, which is right only while there is
            // nothing to keep.
            if self.count > 0 {
                problem(format!(
                    "account {account}: its {} {label}s have no tallied sums and counts (the \
                     marker of the tallies is missing or older than data version {LAYOUT_SINCE})",
                    self.count
                ));
            }
            return Ok(0);
        }
        let Rebuild {
            sums,
            counts,
            count,
        } = self;
        let mut read = 1;
        read += compare_sums(txn, account, kind, sums, problem)?;
        read += compare_counts(txn, account, kind, counts, problem)?;
        read += 1;
        let kept = read_counter(txn, &count_key(account, kind))?;
        if kept != count {
            problem(format!(
                "account {account}: the tallied count of all {label}s is {kept}, but there are \
                 {count}"
            ));
        }
        Ok(read)
    }
}

/// Compares the tallied sums of an account's documents of a kind with their recount `sums`,
/// for `Rebuild::compare`. The number of sums read.
fn compare_sums(
    txn: &dyn Read,
    account: u64,
    kind: DocKind,
    mut sums: BTreeMap<Vec<u8>, Sums>,
    problem: &mut dyn FnMut(String),
) -> Result<u64, Error> {
    let label = kind.label();
    let mut read = 0;
    let prefix = keys::index(account, kind.collection(), SUMS);
    store::for_each(txn, &prefix, |(k, v)| {
        read += 1;
        let at = describe_sums(kind, &k[prefix.len()..]);
        let recount = sums.remove(k);
        match (Sums::decode(v), recount) {
            (Err(e), _) => problem(format!(
                "account {account}: the tallied sums of {label}s {at} cannot be read: {e:?}"
            )),
            (Ok(kept), Some(recount)) if kept == recount => {}
            (Ok(kept), Some(recount)) => problem(format!(
                "account {account}: the tallied sums of {label}s {at} are {kept}, but the \
                 documents add up to {recount}"
            )),
            (Ok(kept), None) => problem(format!(
                "account {account}: the tallied sums of {label}s {at} are {kept}, but no \
                 document is summed there"
            )),
        }
        Ok::<_, Error>(())
    })?;
    for (k, recount) in sums {
        problem(format!(
            "account {account}: the tallied sums of {label}s {} are missing; the documents \
             add up to {recount}",
            describe_sums(kind, &k[prefix.len()..])
        ));
    }
    Ok(read)
}

/// Compares the tallied counts by status of an account's documents of a kind with their
/// recount `counts`, for `Rebuild::compare`. The number of counts read.
fn compare_counts(
    txn: &dyn Read,
    account: u64,
    kind: DocKind,
    mut counts: BTreeMap<Vec<u8>, u64>,
    problem: &mut dyn FnMut(String),
) -> Result<u64, Error> {
    let label = kind.label();
    let mut read = 0;
    let prefix = keys::index(account, kind.collection(), STATUS_COUNT);
    store::for_each(txn, &prefix, |(k, v)| {
        read += 1;
        let at = describe_counted(&k[prefix.len()..]);
        let kept = store::u64_of(v, "count")?;
        let recount = counts.remove(k).unwrap_or(0);
        if kept != recount {
            problem(format!(
                "account {account}: the tallied count of {label}s {at} is {kept}, but there \
                 are {recount}"
            ));
        }
        Ok::<_, Error>(())
    })?;
    for (k, recount) in counts {
        problem(format!(
            "account {account}: the tallied count of {label}s {} is missing; there are \
             {recount}",
            describe_counted(&k[prefix.len()..])
        ));
    }
    Ok(read)
}

impl std::fmt::Display for Sums {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} documents, net {}, gross {}",
            self.count, self.net, self.gross
        )
    }
}

/// A month number (`month_number`) as `YYYY-MM`.
fn show_month(month: i32) -> String {
    format!(
        "{:04}-{:02}",
        month.div_euclid(12),
        month.rem_euclid(12) + 1
    )
}

/// What a sums key (after its prefix) sums, in words.
fn describe_sums(kind: DocKind, tail: &[u8]) -> String {
    match SumKey::read(kind, tail) {
        Ok(k) => format!(
            "of {}, client {}, status {:?}{}, currency {}",
            show_month(k.month),
            k.client,
            k.status,
            k.due_month
                .map(|due| format!(" due in {}", show_month(due)))
                .unwrap_or_default(),
            k.currency
        ),
        Err(_) => format!("under the unreadable key {tail:02x?}"),
    }
}

/// What a status count key (after its prefix) counts, in words.
fn describe_counted(tail: &[u8]) -> String {
    match (
        tail.first().and_then(|b| status_of_byte(*b)),
        &tail[1.min(tail.len())..],
    ) {
        (Some(status), []) => format!("of status {status:?}"),
        (Some(status), day) => match i32_of_sortable(day) {
            Some(day) => format!("of status {status:?} due on {}", Date::from_julian(day)),
            None => format!("under the unreadable key {tail:02x?}"),
        },
        (None, _) => format!("under the unreadable key {tail:02x?}"),
    }
}

/// Whether an account's kind needs its tallies rebuilt (for the migration).
pub fn needs_rebuild(txn: &dyn Read, account: u64, kind: DocKind) -> Result<bool, Error> {
    Ok(!has_tallies(txn, account, kind)?)
}
