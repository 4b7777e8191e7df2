//! Grouped totals (`group_by`). Groups are summed from loaded documents, or, for the common
//! case of grouping all of an account's documents by client, status, month or year, from
//! the tallied sums (`documents::tallies`): a few thousand entries instead of every document.
//! Open documents due this month are still loaded one by one, because whether one shows
//! as OPEN or OVERDUE depends on today. Only reads.

use std::collections::HashMap;

use rust_decimal::Decimal;

use super::Error;
use super::date::Date;
use super::documents::tallies::{self, Sums, Tallies, month_number};
use super::documents::{Document, Filter, Shown, query, storage};
use super::schema::Scalar;
use crate::caps::Read;
use crate::limits;
use crate::store::keys::{i32_of_sortable, sortable_i32};

/// The other party of a family's records, as `group_by` names it: the client of
/// documents, the supplier of incoming invoices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Party {
    /// The key's name in `group_by`.
    pub name: &'static str,
    /// The field naming the party, and the element of its value in a group.
    pub field: &'static str,
}

/// Documents are grouped by their client.
pub const CLIENT: Party = Party {
    name: "client",
    field: "client_id",
};

/// Incoming invoices are grouped by their supplier.
pub const SUPPLIER: Party = Party {
    name: "supplier",
    field: "supplier_id",
};

/// A `group_by` key, of documents and of incoming invoices alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupKey {
    /// The family's other party (`Party`).
    Party,
    Status,
    Day,
    Week,
    Month,
    Year,
}

impl GroupKey {
    /// The key `s` names (in any case) for a family whose other party is `party`.
    pub fn parse(s: &str, party: Party) -> Option<GroupKey> {
        let s = s.trim().to_ascii_lowercase();
        Some(match s.as_str() {
            "status" => GroupKey::Status,
            "day" => GroupKey::Day,
            "week" => GroupKey::Week,
            "month" => GroupKey::Month,
            "year" => GroupKey::Year,
            name if name == party.name => GroupKey::Party,
            _ => return None,
        })
    }

    /// The keys a `group_by` value lists (comma-separated, each once, in the order
    /// given), or the message that says what it may list.
    pub fn parse_list(raw: &str, party: Party) -> Result<Vec<GroupKey>, String> {
        let mut keys = Vec::new();
        for k in raw.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let key = GroupKey::parse(k, party).ok_or_else(|| {
                format!(
                    "group_by must list values of {}, status, day, week, month, year, got \"{k}\"",
                    party.name
                )
            })?;
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
        Ok(keys)
    }

    /// The element name and value of this key for a record of the party `party` (its
    /// field and id), shown with `status`, dated `date`: one function for every family.
    pub fn value(self, party: (Party, u64), status: &str, date: Date) -> (&'static str, Scalar) {
        self.part(party.1, status, date).value(party.0)
    }

    /// This key's part of a group for a record of the party with id `party`, shown with
    /// `status`, dated `date`.
    pub fn part(self, party: u64, status: &str, date: Date) -> Part<'_> {
        match self {
            GroupKey::Party => Part::Party(party),
            GroupKey::Status => Part::Status(status),
            GroupKey::Day => Part::Day(date),
            GroupKey::Week => {
                let (y, w) = date.iso_week();
                Part::Week(y, w)
            }
            GroupKey::Month => Part::Month(date.year(), date.month()),
            GroupKey::Year => Part::Year(date.year()),
        }
    }
}

/// Most keys a `group_by` lists: each of the six once (`GroupKey::parse_list`), so a
/// group's parts fit an array of this length.
pub const KEYS_MAX: usize = 6;

/// One key's value of a group, before it is written out: what a group is found by while
/// summing (`Grouper::sums`), thousands of times per answer, without allocating.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Part<'a> {
    Party(u64),
    Status(&'a str),
    Day(Date),
    /// ISO year and week.
    Week(i32, u8),
    /// Year and month (1 to 12).
    Month(i32, u8),
    Year(i32),
}

impl<'a> Part<'a> {
    /// The element name and value, for a family whose other party is `party`.
    pub fn value(self, party: Party) -> (&'static str, Scalar) {
        match self {
            Part::Party(id) => (party.field, Scalar::Int(id as i64)),
            Part::Status(s) => ("status", Scalar::Text(s.into())),
            Part::Day(d) => ("day", Scalar::Date(d)),
            Part::Week(y, w) => ("week", Scalar::Text(year_and(y, "-W", w, false))),
            Part::Month(y, m) => ("month", Scalar::Text(year_and(y, "-", m, true))),
            Part::Year(y) => ("year", Scalar::Int(y as i64)),
        }
    }

    /// Appends the part to a group's lookup key: a tag, then fixed-width numbers that sort
    /// as they count, or a text. Equal parts give equal bytes and unequal ones unequal
    /// bytes, and the bytes of one key sort as its values do (`Scalar::compare`: a status by
    /// its lower case first, then as it is; a week of a year before 1000 by its number,
    /// where its unpadded text would sort after later years), so that groups are ordered by
    /// their bytes.
    /// A status is a word of its family's lifecycle, never holding a NUL.
    fn push_to(self, key: &mut Vec<u8>) {
        match self {
            Part::Party(id) => {
                key.push(0);
                key.extend_from_slice(&id.to_be_bytes());
            }
            Part::Status(s) => {
                key.push(1);
                if s.is_ascii() {
                    key.extend(s.bytes().map(|c| c.to_ascii_lowercase()));
                } else {
                    key.extend_from_slice(s.to_lowercase().as_bytes());
                }
                key.push(0);
                key.extend_from_slice(s.as_bytes());
                key.push(0);
            }
            Part::Day(d) => {
                key.push(2);
                key.extend_from_slice(&sortable_i32(d.julian()));
            }
            Part::Week(y, w) => {
                key.push(3);
                key.extend_from_slice(&sortable_i32(y));
                key.push(w);
            }
            Part::Month(y, m) => {
                key.push(4);
                key.extend_from_slice(&sortable_i32(y));
                key.push(m);
            }
            Part::Year(y) => {
                key.push(5);
                key.extend_from_slice(&sortable_i32(y));
            }
        }
    }

    /// Reads back the part `push_to` wrote at the start of `key`, and moves past it.
    fn read(key: &mut &'a [u8]) -> Option<Part<'a>> {
        fn take<'b>(key: &mut &'b [u8], n: usize) -> Option<&'b [u8]> {
            let (head, rest) = key.split_at_checked(n)?;
            *key = rest;
            Some(head)
        }
        fn year(key: &mut &[u8]) -> Option<i32> {
            i32_of_sortable(take(key, 4)?)
        }
        let tag = take(key, 1)?[0];
        Some(match tag {
            0 => Part::Party(u64::from_be_bytes(take(key, 8)?.try_into().ok()?)),
            1 => {
                let lower = key.iter().position(|&c| c == 0)?;
                take(key, lower + 1)?;
                let end = key.iter().position(|&c| c == 0)?;
                let s = std::str::from_utf8(take(key, end)?).ok()?;
                take(key, 1)?;
                Part::Status(s)
            }
            2 => Part::Day(Date::from_julian(year(key)?)),
            3 => {
                let y = year(key)?;
                Part::Week(y, take(key, 1)?[0])
            }
            4 => {
                let y = year(key)?;
                Part::Month(y, take(key, 1)?[0])
            }
            5 => Part::Year(year(key)?),
            _ => return None,
        })
    }
}

/// The first 16 bytes of `bytes` (zeros after a shorter one) as a number that sorts as
/// they do.
fn leading_u128(bytes: &[u8]) -> u128 {
    let mut first = [0; 16];
    let n = bytes.len().min(16);
    first[..n].copy_from_slice(&bytes[..n]);
    u128::from_be_bytes(first)
}

/// A year, `sep` and a two-digit number: a week ("2026-W05", the year as it is) or a
/// month ("2026-03", the year in four digits at least, `pad`). Written digit by digit for
/// the years of four digits, as every group of an answer writes one.
fn year_and(y: i32, sep: &str, n: u8, pad: bool) -> String {
    if !(1000..=9999).contains(&y) || n > 99 {
        return if pad {
            format!("{y:04}{sep}{n:02}")
        } else {
            format!("{y}{sep}{n:02}")
        };
    }
    let mut s = String::with_capacity(4 + sep.len() + 2);
    let digit = |d: i32| char::from(b'0' + d as u8);
    for d in [y / 1000, y / 100 % 10, y / 10 % 10, y % 10] {
        s.push(digit(d));
    }
    s.push_str(sep);
    s.push(digit(i32::from(n / 10)));
    s.push(digit(i32::from(n % 10)));
    s
}

/// One group: its key values and sums.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    pub keys: Vec<(&'static str, Scalar)>,
    pub total_net: Decimal,
    pub total_gross: Decimal,
    pub count: u64,
}

/// Key values of a group, in the order of aggregation.
pub type Keys = Vec<(&'static str, Scalar)>;

/// Groups being summed per currency: for each key values seen, sums `S` (documents' or
/// incomings'), found again by the bytes of their parts (`Part::push_to`), built in a buffer
/// kept for every lookup. A group's values are read back from those bytes only when the
/// groups are finished, ordered by them.
pub struct Grouper<S> {
    party: Party,
    /// Per currency (an account has a few; found by a walk): its groups.
    lists: Vec<(String, CurrencyGroups<S>)>,
    lookup: Vec<u8>,
}

/// The groups of one currency: their parts' bytes with their place in `sums`.
struct CurrencyGroups<S> {
    slots: HashMap<Vec<u8>, usize, GroupHasher>,
    sums: Vec<S>,
}

/// The hasher of group lookups: foldhash, a fraction of SipHash's cost on these short keys.
/// Its seed needs no protection: the keys are ids, dates and status words of the account's
/// own records.
type GroupHasher = foldhash::fast::FixedState;

impl<S: Default> Grouper<S> {
    /// Groups of a family whose other party is `party`.
    pub fn new(party: Party) -> Grouper<S> {
        Grouper {
            party,
            lists: Vec::new(),
            lookup: Vec::new(),
        }
    }

    /// The sums of the group of `parts` in `currency`, new (default) the first time.
    pub fn sums(&mut self, currency: &str, parts: &[Part<'_>]) -> &mut S {
        self.lookup.clear();
        for part in parts {
            part.push_to(&mut self.lookup);
        }
        let list = match self.lists.iter().position(|(c, _)| c == currency) {
            Some(list) => list,
            None => {
                self.lists.push((
                    currency.to_owned(),
                    CurrencyGroups {
                        slots: HashMap::default(),
                        sums: Vec::new(),
                    },
                ));
                self.lists.len() - 1
            }
        };
        let CurrencyGroups { slots, sums } = &mut self.lists[list].1;
        let at = match slots.get(self.lookup.as_slice()) {
            Some(&at) => at,
            None => {
                sums.push(S::default());
                slots.insert(self.lookup.clone(), sums.len() - 1);
                sums.len() - 1
            }
        };
        &mut sums[at]
    }

    /// Groups per currency (in currency order), each list ordered by its key values.
    pub fn finish(self) -> Vec<(String, Vec<(Keys, S)>)> {
        let party = self.party;
        let mut out: Vec<(String, Vec<(Keys, S)>)> = self
            .lists
            .into_iter()
            .map(|(currency, CurrencyGroups { slots, mut sums })| {
                // Sorted by their first 16 bytes as one number (a group by client and
                // month has 15), then by all of them: thousands of groups sort in a
                // fraction of the time byte-wise comparisons take in wasm.
                let mut found: Vec<(u128, Vec<u8>, usize)> = slots
                    .into_iter()
                    .map(|(bytes, at)| (leading_u128(&bytes), bytes, at))
                    .collect();
                found.sort_unstable_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
                let list = found
                    .into_iter()
                    .map(|(_, bytes, at)| {
                        let mut rest = bytes.as_slice();
                        let keys = std::iter::from_fn(|| Part::read(&mut rest))
                            .map(|p| p.value(party))
                            .collect();
                        (keys, std::mem::take(&mut sums[at]))
                    })
                    .collect();
                (currency, list)
            })
            .collect();
        out.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        out
    }
}

/// Groups of documents being summed.
struct Groups(Grouper<Sums>);

impl Groups {
    fn new() -> Groups {
        Groups(Grouper::new(CLIENT))
    }

    fn add(&mut self, currency: &str, parts: &[Part<'_>], sums: &Sums) {
        let g = self.0.sums(currency, parts);
        g.net += sums.net;
        g.gross += sums.gross;
        g.count += sums.count;
    }

    fn add_document(&mut self, doc: &Document, keys: &[GroupKey], today: Date) {
        let status = doc.shown(today).as_str();
        let mut parts = [Part::Year(0); KEYS_MAX];
        for (part, k) in parts.iter_mut().zip(keys) {
            *part = k.part(doc.client_id, status, doc.date);
        }
        self.add(&doc.currency_code, &parts[..keys.len()], &Sums::of(doc));
    }

    /// Groups per currency (in currency order), each list ordered by its key values.
    fn finish(self) -> Vec<(String, Vec<Group>)> {
        self.0
            .finish()
            .into_iter()
            .map(|(currency, list)| {
                let list = list
                    .into_iter()
                    .map(|(keys, s)| Group {
                        keys,
                        total_net: s.net,
                        total_gross: s.gross,
                        count: s.count,
                    })
                    .collect();
                (currency, list)
            })
            .collect()
    }
}

/// The groups of the documents matching `f`: from the tallied sums when there are some and
/// the filter and keys allow it, else from every matching document.
pub fn groups(
    txn: &dyn Read,
    tallies: Option<&Tallies>,
    account: u64,
    f: &Filter,
    keys: &[GroupKey],
    today: Date,
) -> Result<Vec<(String, Vec<Group>)>, Error> {
    let from_sums = keys.iter().all(|k| {
        matches!(
            k,
            GroupKey::Party | GroupKey::Status | GroupKey::Month | GroupKey::Year
        )
    }) && f.only_indexed_fields()
        && f.from.is_none()
        && f.to.is_none();
    let Some(tallies) = tallies.filter(|_| from_sums) else {
        // Summed as they are loaded: an account's every document is never held at once.
        let mut groups = Groups::new();
        query::for_each_match(txn, account, f, today, |doc| {
            groups.add_document(&doc, keys, today);
            Ok(())
        })?;
        return Ok(groups.finish());
    };
    let mut groups = Groups::new();
    let this_month = month_number(today);
    let wanted = |shown: Shown| f.statuses.is_empty() || f.statuses.contains(&shown);
    tallies::for_each_sum(txn, tallies, |key, sums| {
        let shown = match (key.status.shown_as_stored(), key.due_month) {
            (Some(shown), _) => shown,
            // An open document of a kind that never falls due.
            (None, None) if !f.kind.spec().falls_due => Shown::Open,
            (None, Some(due)) if due < this_month => Shown::Overdue,
            (None, Some(due)) if due > this_month => Shown::Open,
            // Due this month: OPEN or OVERDUE by the day, loaded below.
            (None, _) => return Ok(()),
        };
        if !wanted(shown) || f.client_id.is_some_and(|c| c != key.client) {
            return Ok(());
        }
        let mut parts = [Part::Year(0); KEYS_MAX];
        for (part, k) in parts.iter_mut().zip(keys) {
            *part = match k {
                GroupKey::Party => Part::Party(key.client),
                GroupKey::Status => Part::Status(shown.as_str()),
                GroupKey::Year => Part::Year(key.year()),
                // Tallied sums are by month: day and week keys group from the documents.
                GroupKey::Day | GroupKey::Week | GroupKey::Month => {
                    Part::Month(key.year(), key.month_of_year())
                }
            };
        }
        groups.add(&key.currency, &parts[..keys.len()], &sums);
        Ok(())
    })?;
    if f.kind.spec().falls_due && (wanted(Shown::Open) || wanted(Shown::Overdue)) {
        let first = today.add_days(-(today.day() as i64 - 1));
        let last = first.add_days(31);
        let last = last.add_days(-(last.day() as i64));
        // Summed from what their open-due entries keep; an entry from before they kept it
        // has its document loaded, a batch per call into the store.
        let mut unkept = Vec::new();
        tallies::for_each_due_between(txn, account, f.kind, first, last, |due, id, kept| {
            let Some(kept) = kept else {
                unkept.push(id);
                return Ok(());
            };
            let shown = if due < today {
                Shown::Overdue
            } else {
                Shown::Open
            };
            if !wanted(shown) || f.client_id.is_some_and(|c| c != kept.client) {
                return Ok(());
            }
            let mut parts = [Part::Year(0); KEYS_MAX];
            for (part, k) in parts.iter_mut().zip(keys) {
                *part = k.part(kept.client, shown.as_str(), kept.date);
            }
            let sums = Sums {
                count: 1,
                net: kept.net,
                gross: kept.gross,
            };
            groups.add(kept.currency, &parts[..keys.len()], &sums);
            Ok(())
        })?;
        unkept.sort_unstable();
        for batch in unkept.chunks(limits::LOAD_BATCH) {
            for doc in storage::load_many(txn, account, f.kind, batch)? {
                if f.matches(&doc, today) {
                    groups.add_document(&doc, keys, today);
                }
            }
        }
    }
    Ok(groups.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Groups are found by their parts and currency: equal parts sum into one group, parts
    /// that differ in any key (or only in where a text ends) into groups of their own.
    #[test]
    fn parts_find_their_group_again() {
        let mut g: Grouper<u64> = Grouper::new(CLIENT);
        let jan = Date::parse("2026-01-05").unwrap();
        let adds: [(&str, &[Part<'_>]); 9] = [
            ("EUR", &[Part::Party(1), Part::Month(2026, 1)]),
            ("EUR", &[Part::Party(1), Part::Month(2026, 1)]),
            ("EUR", &[Part::Party(1), Part::Month(2026, 2)]),
            ("EUR", &[Part::Party(2), Part::Month(2026, 1)]),
            ("USD", &[Part::Party(1), Part::Month(2026, 1)]),
            ("EUR", &[Part::Status("OPEN"), Part::Status("X")]),
            ("EUR", &[Part::Status("OPENX"), Part::Status("")]),
            ("EUR", &[Part::Day(jan), Part::Year(2026)]),
            ("EUR", &[Part::Day(jan), Part::Year(2026)]),
        ];
        for (currency, parts) in adds {
            *g.sums(currency, parts) += 1;
        }
        let found = g.finish();
        let eur: Vec<u64> = found[0].1.iter().map(|(_, n)| *n).collect();
        assert_eq!(found[0].0, "EUR");
        assert_eq!(found[1].0, "USD");
        assert_eq!(found[1].1.len(), 1);
        assert_eq!(eur.iter().sum::<u64>(), 8);
        assert_eq!(eur.len(), 6, "{:?}", found[0].1);
        let (keys, n) = &found[0].1[0];
        assert_eq!(*n, 2);
        assert_eq!(
            keys,
            &vec![
                ("client_id", Scalar::Int(1)),
                ("month", Scalar::Text("2026-01".into()))
            ]
        );
    }

    fn any_part() -> impl proptest::strategy::Strategy<Value = (u8, u64, i32, u8, usize)> {
        use proptest::prelude::*;
        (0u8..6, any::<u64>(), 0i32..5_373_484, 0u8..=99, 0usize..6)
    }

    const STATUSES: [&str; 6] = ["OPEN", "OVERDUE", "PAID", "PARTIALLY_PAID", "Paid", "DRAFT"];

    /// A part of `kind` (a `Part` variant's place) from random numbers: days from the julian
    /// day 0 (in 4713 BC, what an incoming without a date is dated) to 9999-12-31, years of
    /// the dates a document or incoming can have (four digits; weeks from 1000 on, the
    /// years whose text, unpadded, sorts as their number).
    fn part_of((kind, id, day, n, status): (u8, u64, i32, u8, usize)) -> Part<'static> {
        let date = Date::from_julian(day);
        let year = if kind == 3 {
            1000 + date.year().rem_euclid(9000)
        } else {
            date.year().rem_euclid(10_000)
        };
        match kind {
            0 => Part::Party(id >> 1),
            1 => Part::Status(STATUSES[status]),
            2 => Part::Day(date),
            3 => Part::Week(year, n),
            4 => Part::Month(year, n),
            _ => Part::Year(year),
        }
    }

    proptest::proptest! {
        /// Groups are ordered by their parts' bytes: those bytes read back as the parts,
        /// and sort as the parts' values do (`Scalar::compare`), for every kind of key.
        #[test]
        fn parts_read_back_and_sort_by_their_bytes_as_their_values_do(
            kind in 0u8..6,
            parts in proptest::collection::vec(any_part(), 2..40),
        ) {
            let parts: Vec<Part<'static>> =
                parts.into_iter().map(|p| part_of((kind, p.1, p.2, p.3, p.4))).collect();
            let bytes = |p: Part<'_>| {
                let mut b = Vec::new();
                p.push_to(&mut b);
                b
            };
            for p in &parts {
                let b = bytes(*p);
                let mut rest = b.as_slice();
                proptest::prop_assert_eq!(Part::read(&mut rest), Some(*p));
                proptest::prop_assert!(rest.is_empty());
            }
            for a in &parts {
                for b in &parts {
                    let by_value = a.value(CLIENT).1.compare(&b.value(CLIENT).1);
                    let by_bytes = bytes(*a).cmp(&bytes(*b));
                    if by_value.is_ne() {
                        proptest::prop_assert_eq!(by_bytes, by_value, "{:?} {:?}", a, b);
                    } else {
                        proptest::prop_assert_eq!(by_bytes.is_eq(), a == b, "{:?} {:?}", a, b);
                    }
                }
            }
        }
    }

    /// A part's value is the one `GroupKey::value` gave before parts: the element and its
    /// text as the wire shows them.
    #[test]
    fn parts_are_written_as_their_keys_values() {
        let d = Date::parse("2026-03-09").unwrap();
        let shown = |k: GroupKey| {
            let (name, v) = k.value((SUPPLIER, 7), "PAID", d);
            (name, v.to_wire())
        };
        assert_eq!(shown(GroupKey::Party), ("supplier_id", "7".into()));
        assert_eq!(shown(GroupKey::Status), ("status", "PAID".into()));
        assert_eq!(shown(GroupKey::Day), ("day", "2026-03-09".into()));
        assert_eq!(shown(GroupKey::Week), ("week", "2026-W11".into()));
        assert_eq!(shown(GroupKey::Month), ("month", "2026-03".into()));
        assert_eq!(shown(GroupKey::Year), ("year", "2026".into()));
    }
}
