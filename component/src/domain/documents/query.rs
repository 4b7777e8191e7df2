//! Lists of documents: the API's filters (`Filter`), one page of the matches in order
//! (`page`), their number (`count`), all of them (`find`) and `order_by` (`sort`).
//!
//! A page reads as little as its filter allows: the first pages of all documents straight
//! from the records; a filter of statuses alone by merging the status index streams in id
//! order; a filter of one indexed field from that index; anything else by loading the
//! candidates and checking each. Counts come from the tallies where it answers them.
//! Without tallies (documents from before tallies were kept, until the migration runs) every
//! page and count is read from the documents: slower, never wrong, and never a write.

use std::collections::VecDeque;

use super::super::Error;
use super::super::date::Date;
use super::super::records;
use super::fields;
use super::keys;
use super::kind::DocKind;
use super::lifecycle::{Shown, Status};
use super::model::Document;
use super::storage;
use super::tallies::{self, Tallies};
use crate::caps::Read;
use crate::limits;
use crate::store::{self, id_of_key, keys::i32_of_sortable};

/// The list filters of the API, parsed.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub kind: DocKind,
    pub client_id: Option<u64>,
    pub contact_id: Option<u64>,
    /// Lower-cased; matches anywhere in the document number.
    pub number: Option<String>,
    /// All of these tags (`tags`).
    pub tags: Vec<String>,
    /// Any of these tags (`tags_any`).
    pub tags_any: Vec<String>,
    pub article_id: Option<i64>,
    pub statuses: Vec<Shown>,
    pub payment_types: Vec<String>,
    pub from: Option<Date>,
    pub to: Option<Date>,
    pub label: Option<String>,
    pub intro: Option<String>,
    pub note: Option<String>,
    /// The documents made from these (`offer_id`, `confirmation_id`) or belonging to it
    /// (`invoice_id` of delivery notes).
    pub offer_id: Option<i64>,
    pub confirmation_id: Option<i64>,
    pub invoice_id: Option<i64>,
    /// Recurring invoices: a part of the name (lower-cased), and the cycles (any of them).
    pub name: Option<String>,
    pub cycles: Vec<String>,
    /// Reminders: a part of the subject (lower-cased).
    pub subject: Option<String>,
}

/// Whether the document carries the tag `name` (in any case).
fn carries(doc: &Document, name: &str) -> bool {
    doc.tags.iter().any(|t| t.eq_ignore_ascii_case(name))
}

fn contains_ci(haystack: &str, needle_lower: &str) -> bool {
    haystack.to_lowercase().contains(needle_lower)
}

impl Filter {
    /// Whether the candidates of one index are exactly the matches, so that a page needs to
    /// load only its own records.
    fn index_exact(&self) -> bool {
        let indexed = [
            self.client_id.is_some(),
            !self.statuses.is_empty(),
            self.from.is_some() || self.to.is_some(),
        ];
        self.only_indexed_fields() && indexed.iter().filter(|used| **used).count() <= 1
    }

    /// Whether the filter uses only client, status and dates, the fields with an index.
    pub fn only_indexed_fields(&self) -> bool {
        self.number.is_none()
            && self.contact_id.is_none()
            && self.tags.is_empty()
            && self.tags_any.is_empty()
            && self.article_id.is_none()
            && self.offer_id.is_none()
            && self.confirmation_id.is_none()
            && self.invoice_id.is_none()
            && self.name.is_none()
            && self.subject.is_none()
            && self.cycles.is_empty()
            && self.label.is_none()
            && self.intro.is_none()
            && self.note.is_none()
            && self.payment_types.is_empty()
    }

    /// Whether the filter is statuses alone: its pages are read from the status index in
    /// id order and its count from the tallied counts.
    fn only_statuses(&self) -> bool {
        !self.statuses.is_empty()
            && self.only_indexed_fields()
            && self.client_id.is_none()
            && self.from.is_none()
            && self.to.is_none()
    }

    /// Whether the filter matches every document of its kind.
    pub fn is_empty(&self) -> bool {
        self.only_indexed_fields()
            && self.client_id.is_none()
            && self.statuses.is_empty()
            && self.from.is_none()
            && self.to.is_none()
    }

    pub fn matches(&self, doc: &Document, today: Date) -> bool {
        self.client_id.is_none_or(|c| doc.client_id == c)
            && self
                .contact_id
                .is_none_or(|c| doc.contact_id == Some(c as i64))
            && self.article_id.is_none_or(|a| doc.article_ids.contains(&a))
            && self.offer_id.is_none_or(|o| doc.offer_id == Some(o))
            && self
                .confirmation_id
                .is_none_or(|c| doc.confirmation_id == Some(c))
            && self.invoice_id.is_none_or(|i| doc.invoice_id == Some(i))
            && self.name.as_deref().is_none_or(|n| {
                doc.schedule
                    .as_deref()
                    .is_some_and(|s| contains_ci(&s.name, n))
            })
            && self.subject.as_deref().is_none_or(|n| {
                doc.dunning
                    .as_deref()
                    .is_some_and(|d| contains_ci(&d.subject, n))
            })
            && (self.cycles.is_empty()
                || doc
                    .schedule
                    .as_deref()
                    .is_some_and(|s| self.cycles.iter().any(|c| c.eq_ignore_ascii_case(&s.cycle))))
            && self.tags.iter().all(|w| carries(doc, w))
            && (self.tags_any.is_empty() || self.tags_any.iter().any(|w| carries(doc, w)))
            && (self.statuses.is_empty() || self.statuses.contains(&doc.shown(today)))
            && self.from.is_none_or(|d| doc.date >= d)
            && self.to.is_none_or(|d| doc.date <= d)
            && self
                .number
                .as_deref()
                .is_none_or(|n| contains_ci(&doc.formatted_number, n))
            && self
                .label
                .as_deref()
                .is_none_or(|n| contains_ci(&doc.label, n))
            && self
                .intro
                .as_deref()
                .is_none_or(|n| contains_ci(&doc.intro, n))
            && self
                .note
                .as_deref()
                .is_none_or(|n| contains_ci(&doc.note, n))
            && (self.payment_types.is_empty()
                || doc
                    .paid_types
                    .iter()
                    .any(|t| self.payment_types.iter().any(|w| w == t)))
    }
}

/// Ids of an index's entries under `prefix` whose value (between prefix and id) lies from
/// `lo` to `hi`, both inclusive.
fn ids_from_index(
    txn: &dyn Read,
    prefix: &[u8],
    lo: Option<&[u8]>,
    hi: Option<&[u8]>,
) -> Result<Vec<u64>, Error> {
    let mut ids = Vec::new();
    // prefix + lo sorts just before the first entry holding the value lo.
    let past = |k: &[u8]| -> Result<bool, Error> {
        let Some(h) = hi else { return Ok(false) };
        let value = k
            .get(prefix.len()..k.len().saturating_sub(8))
            .ok_or_else(|| Error::from(store_corrupt("index entry")))?;
        Ok(value > h)
    };
    store::for_each_until(
        txn,
        prefix,
        lo.map(|l| [prefix, l].concat()),
        past,
        |(k, _)| {
            ids.push(id_of_key(k)?);
            Ok(())
        },
    )?;
    Ok(ids)
}

fn store_corrupt(what: &str) -> crate::caps::StoreError {
    crate::caps::StoreError::Backend(format!("corrupt {what}"))
}

/// Ids of the open documents due from `first` to `last`, in id order.
pub fn open_due_between(
    txn: &dyn Read,
    account: u64,
    kind: DocKind,
    first: Date,
    last: Date,
) -> Result<Vec<u64>, Error> {
    let prefix = keys::open_due_index(account, kind);
    let mut ids = ids_from_index(
        txn,
        &prefix,
        Some(&keys::day(first)),
        Some(&keys::day(last)),
    )?;
    ids.sort_unstable();
    Ok(ids)
}

/// The stored status that shows as `shown` whatever the day: none for OPEN and OVERDUE of
/// a kind that falls due (the due day decides), OPEN for OPEN of any other kind.
fn stored_as(kind: DocKind, shown: Shown) -> Option<Status> {
    if shown == Shown::Open && !kind.spec().falls_due {
        return Some(Status::Open);
    }
    Status::ALL
        .into_iter()
        .find(|s| s.shown_as_stored() == Some(shown))
}

/// Candidate ids for a filter, from the most selective index the filter allows; the
/// candidates are then checked against the whole filter.
fn candidates(
    txn: &dyn Read,
    account: u64,
    f: &Filter,
    today: Date,
) -> Result<Option<Vec<u64>>, Error> {
    if let Some(client) = f.client_id {
        let prefix = keys::client_documents(account, client, f.kind);
        let mut ids = Vec::new();
        for (k, _) in store::scan_all(txn, &prefix)? {
            ids.push(id_of_key(&k)?);
        }
        return Ok(Some(ids));
    }
    if !f.statuses.is_empty() {
        let mut ids = Vec::new();
        for st in &f.statuses {
            match stored_as(f.kind, *st) {
                Some(stored) => {
                    let prefix = keys::status_prefix(account, f.kind, stored);
                    ids.extend(ids_from_index(txn, &prefix, None, None)?);
                }
                None => {
                    let prefix = keys::open_due_index(account, f.kind);
                    let today_key = keys::day(today);
                    let yesterday_key = keys::day(today.add_days(-1));
                    ids.extend(if *st == Shown::Open {
                        ids_from_index(txn, &prefix, Some(&today_key), None)?
                    } else {
                        ids_from_index(txn, &prefix, None, Some(&yesterday_key))?
                    });
                }
            }
        }
        return Ok(Some(ids));
    }
    if f.from.is_some() || f.to.is_some() {
        let prefix = keys::date_index(account, f.kind);
        let lo = f.from.map(keys::day);
        let hi = f.to.map(keys::day);
        return Ok(Some(ids_from_index(
            txn,
            &prefix,
            lo.as_ref().map(|v| &v[..]),
            hi.as_ref().map(|v| &v[..]),
        )?));
    }
    Ok(None)
}

/// One page of the documents matching the filter, in `order` (id order when empty), and
/// the number of all matches. Index-only filters in id order load just the page.
#[expect(
    clippy::too_many_arguments,
    reason = "a page is asked for by all of these; a struct would only rename them"
)]
pub fn page(
    txn: &dyn Read,
    tallies: Option<&Tallies>,
    account: u64,
    f: &Filter,
    order: &[(&'static str, bool)],
    page: u32,
    per_page: u32,
    today: Date,
) -> Result<(Vec<Document>, usize), Error> {
    let start = (page.saturating_sub(1) as usize).saturating_mul(per_page as usize);
    if let (Some(tallies), true) = (tallies, order.is_empty()) {
        if f.is_empty() && start <= limits::DIRECT_PAGE_START_MAX {
            let total = tallies::count_all(txn, tallies)? as usize;
            return Ok((first_records(txn, account, f.kind, start, per_page)?, total));
        }
        if f.only_statuses() {
            let total = tallies::count_statuses(txn, tallies, &f.statuses, today)? as usize;
            let ids = if start < total {
                status_page_ids(txn, account, f, start, per_page as usize, today)?
            } else {
                Vec::new()
            };
            return Ok((storage::load_many(txn, account, f.kind, &ids)?, total));
        }
    }
    if order.is_empty() && f.index_exact() {
        let mut ids = match candidates(txn, account, f, today)? {
            Some(ids) => ids,
            // Every document has exactly one date entry: the keys alone give all ids.
            None => ids_from_index(txn, &keys::date_index(account, f.kind), None, None)?,
        };
        ids.sort_unstable();
        ids.dedup();
        let total = ids.len();
        let end = start.saturating_add(per_page as usize).min(total);
        return Ok((
            storage::load_many(txn, account, f.kind, &ids[start.min(total)..end])?,
            total,
        ));
    }
    // Of each match only what the page needs (`records::Pager`).
    let mut pager = records::Pager::new(order, page, per_page);
    for_each_match(txn, account, f, today, |doc| {
        pager.push_by(doc, |doc, ordered| {
            (fields::to_record_of(&doc, today, ordered), doc.id)
        });
        Ok(())
    })?;
    pager.finish(|ids| storage::load_many(txn, account, f.kind, ids))
}

/// Records are keyed by id: the first pages of all documents are the first records.
fn first_records(
    txn: &dyn Read,
    account: u64,
    kind: DocKind,
    start: usize,
    per_page: u32,
) -> Result<Vec<Document>, Error> {
    let prefix = keys::all(account, kind);
    let mut docs = Vec::with_capacity(per_page as usize);
    let mut skip = start;
    let mut after: Option<Vec<u8>> = None;
    while docs.len() < per_page as usize {
        let want = (skip + per_page as usize - docs.len()).min(limits::SCAN_BATCH as usize);
        let batch = txn.scan(&prefix, after.as_deref(), want as u32, false)?;
        let done = batch.len() < want;
        for (_, v) in &batch {
            if skip > 0 {
                skip -= 1;
            } else if docs.len() < per_page as usize {
                docs.push(storage::decode(v)?);
            }
        }
        after = batch.last().map(|(k, _)| k.clone());
        if done {
            break;
        }
    }
    Ok(docs)
}

/// The number of documents matching the filter, loading as few as the filter allows.
pub fn count(
    txn: &dyn Read,
    tallies: Option<&Tallies>,
    account: u64,
    f: &Filter,
    today: Date,
) -> Result<usize, Error> {
    if let Some(tallies) = tallies {
        if f.is_empty() {
            return Ok(tallies::count_all(txn, tallies)? as usize);
        }
        if f.only_statuses() {
            return Ok(tallies::count_statuses(txn, tallies, &f.statuses, today)? as usize);
        }
    }
    if f.index_exact()
        && let Some(mut ids) = candidates(txn, account, f, today)?
    {
        ids.sort_unstable();
        ids.dedup();
        return Ok(ids.len());
    }
    let mut n = 0;
    for_each_match(txn, account, f, today, |_| {
        n += 1;
        Ok(())
    })?;
    Ok(n)
}

/// Which open documents a status stream passes, by the day they are due.
#[derive(Clone, Copy)]
enum Due {
    Any,
    /// Due on this julian day or later (OPEN).
    From(i32),
    /// Due before this julian day (OVERDUE).
    Before(i32),
}

/// The status index entries of one stored status in id order, a batch at a time.
struct StatusStream {
    prefix: Vec<u8>,
    due: Due,
    after: Option<Vec<u8>>,
    /// (id, entry value) fetched and not yet taken.
    fetched: VecDeque<(u64, Vec<u8>)>,
    batch: u32,
    done: bool,
}

impl StatusStream {
    fn new(account: u64, kind: DocKind, status: Status, due: Due, batch: u32) -> StatusStream {
        StatusStream {
            prefix: keys::status_prefix(account, kind, status),
            due,
            after: None,
            fetched: VecDeque::new(),
            batch,
            done: false,
        }
    }

    /// The next id, fetching the next batch when needed.
    fn head(&mut self, txn: &dyn Read) -> Result<Option<u64>, Error> {
        if self.fetched.is_empty() && !self.done {
            let batch = txn.scan(&self.prefix, self.after.as_deref(), self.batch, false)?;
            self.done = batch.len() < self.batch as usize;
            self.batch = self.batch.saturating_mul(2).min(limits::INDEX_SCAN_BATCH);
            self.after = batch.last().map(|(k, _)| k.clone());
            for (k, v) in batch {
                self.fetched.push_back((id_of_key(&k)?, v));
            }
        }
        Ok(self.fetched.front().map(|(id, _)| *id))
    }
}

/// The ids of one page of a statuses-only filter: the status index streams of the stored
/// statuses merged in id order, open documents told apart by the due day their entries
/// hold. Skipped entries cost an index read each, no document load.
fn status_page_ids(
    txn: &dyn Read,
    account: u64,
    f: &Filter,
    start: usize,
    per_page: usize,
    today: Date,
) -> Result<Vec<u64>, Error> {
    let batch = (2 * start.saturating_add(per_page))
        .max(64)
        .min(limits::INDEX_SCAN_BATCH as usize);
    let mut streams = status_streams(account, f, batch as u32, today);
    let mut skip = start;
    let mut ids = Vec::with_capacity(per_page);
    while ids.len() < per_page {
        let mut next: Option<(usize, u64)> = None;
        for (i, s) in streams.iter_mut().enumerate() {
            if let Some(id) = s.head(txn)?
                && next.is_none_or(|(_, lowest)| id < lowest)
            {
                next = Some((i, id));
            }
        }
        let Some((i, id)) = next else { break };
        let (_, value) = streams[i]
            .fetched
            .pop_front()
            .expect("the head was fetched");
        if !streams[i].due.passes(txn, account, f.kind, id, &value)? {
            continue;
        }
        if skip > 0 {
            skip -= 1;
        } else {
            ids.push(id);
        }
    }
    Ok(ids)
}

/// The status streams a statuses-only filter reads: one per stored status it shows, and
/// for a kind that falls due, the open documents' stream passing those due from `today`
/// (OPEN), before it (OVERDUE) or both.
fn status_streams(account: u64, f: &Filter, batch: u32, today: Date) -> Vec<StatusStream> {
    let wants = |s: Shown| f.statuses.contains(&s);
    let stream = |status, due| StatusStream::new(account, f.kind, status, due, batch);
    let mut streams = Vec::new();
    for status in Status::of(f.kind.lifecycle()) {
        if stored_as(f.kind, Shown::Open) == Some(*status) && wants(Shown::Open)
            || status.shown_as_stored().is_some_and(wants)
        {
            streams.push(stream(*status, Due::Any));
        }
    }
    let today = today.julian();
    let falls_due = (wants(Shown::Open) || wants(Shown::Overdue)) && f.kind.spec().falls_due;
    match (
        falls_due && wants(Shown::Open),
        falls_due && wants(Shown::Overdue),
    ) {
        (true, true) => streams.push(stream(Status::Open, Due::Any)),
        (true, false) => streams.push(stream(Status::Open, Due::From(today))),
        (false, true) => streams.push(stream(Status::Open, Due::Before(today))),
        (false, false) => {}
    }
    streams
}

impl Due {
    /// Whether the document `id`, whose status entry holds `value`, passes by the day it
    /// is due.
    fn passes(
        self,
        txn: &dyn Read,
        account: u64,
        kind: DocKind,
        id: u64,
        value: &[u8],
    ) -> Result<bool, Error> {
        match self {
            Due::Any => Ok(true),
            Due::From(day) | Due::Before(day) => {
                let due_day = match i32_of_sortable(value) {
                    Some(due) => due,
                    // An entry from before due days were kept: the document knows.
                    None => storage::load(txn, account, kind, id)?.due_date.julian(),
                };
                Ok(match self {
                    Due::From(_) => due_day >= day,
                    Due::Before(_) => due_day < day,
                    Due::Any => true,
                })
            }
        }
    }
}

/// Calls `each` with every document matching the filter, in id order, loading a batch of
/// candidates per call into the store and holding none of them after its call.
pub fn for_each_match(
    txn: &dyn Read,
    account: u64,
    f: &Filter,
    today: Date,
    mut each: impl FnMut(Document) -> Result<(), Error>,
) -> Result<(), Error> {
    match candidates(txn, account, f, today)? {
        Some(mut ids) => {
            ids.sort_unstable();
            ids.dedup();
            for batch in ids.chunks(limits::LOAD_BATCH) {
                for doc in storage::load_many(txn, account, f.kind, batch)? {
                    if f.matches(&doc, today) {
                        each(doc)?;
                    }
                }
            }
            Ok(())
        }
        None => storage::for_each(txn, account, f.kind, |doc| {
            if f.matches(&doc, today) {
                each(doc)?;
            }
            Ok(())
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::schema::{Record, Scalar};

    proptest::proptest! {
        /// A page in order is the page of all matches sorted stably over id order, while
        /// never more than twice the matches up to the page's end are kept at once.
        #[test]
        fn a_page_in_order_is_that_of_sorting_every_match_and_keeps_few(
            values in proptest::collection::vec((0i64..20, "[a-cA-C]{0,2}", proptest::bool::ANY), 0..400),
            desc in proptest::bool::ANY,
            start in 0usize..60,
            per_page in 1usize..40,
        ) {
            let order: &[(&'static str, bool)] = &[("total", desc), ("label", false)];
            let records: Vec<(Record, u64)> = values
                .iter()
                .enumerate()
                .map(|(i, (total, label, has))| {
                    let mut r = Record::default();
                    r.set("total", Some(Scalar::Int(*total)));
                    r.set("label", has.then(|| Scalar::Text(label.clone())));
                    (r, i as u64 + 1)
                })
                .collect();
            let mut ranked = records::Ranked::new(order, start, per_page);
            for (r, id) in records.clone() {
                ranked.push(r, id);
            }
            let most = ranked.most;
            let page = ranked.page();
            let mut all = records;
            all.sort_by(|a, b| records::compare_by(order, &a.0, &b.0));
            let expected: Vec<u64> = all.iter().skip(start).take(per_page).map(|(_, id)| *id).collect();
            proptest::prop_assert_eq!(page, expected);
            proptest::prop_assert!(most <= 2 * (start + per_page), "kept {} at once", most);
        }
    }
}
