//! Grouped totals (`group_by`). Groups are summed from loaded documents, or, for the common
//! case of grouping all of an account's documents by client, status, month or year, from
//! the kept sums (`documents::kept`): a few thousand entries instead of every document.
//! Open documents due this month are still loaded one by one, because whether one shows
//! as OPEN or OVERDUE depends on today. Only reads.

use std::collections::{BTreeMap, HashMap};

use rust_decimal::Decimal;

use super::Error;
use super::date::Date;
use super::documents::kept::{self, Kept, Sums, month_number};
use super::documents::{Document, Filter, Shown, query, storage};
use super::schema::Scalar;
use crate::caps::Read;

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
    pub fn value(self, doc: &Document, today: Date) -> (&'static str, Scalar) {
        let d = doc.date;
        match self {
            GroupKey::Client => ("client_id", Scalar::Int(doc.client_id as i64)),
            GroupKey::Status => ("status", Scalar::Text(doc.shown(today).as_str().into())),
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

/// Key values of a group, in the order of aggregation.
pub type Keys = Vec<(&'static str, Scalar)>;

/// Groups being summed per currency: for each key values seen, sums `S` (documents' or
/// incomings'), found again by the key values' wire form.
pub struct Grouper<S> {
    lists: BTreeMap<String, Vec<(Keys, S)>>,
    /// (currency, key values on the wire) → position in its list.
    slots: HashMap<(String, String), usize>,
}

impl<S> Default for Grouper<S> {
    fn default() -> Grouper<S> {
        Grouper {
            lists: BTreeMap::new(),
            slots: HashMap::new(),
        }
    }
}

impl<S: Default> Grouper<S> {
    /// The sums of the group of `keys` in `currency`, new (default) the first time.
    pub fn sums(&mut self, currency: &str, keys: Keys) -> &mut S {
        let wire = keys
            .iter()
            .map(|(_, v)| v.to_wire())
            .collect::<Vec<_>>()
            .join("\u{0}");
        let list = self.lists.entry(currency.to_string()).or_default();
        let at = *self
            .slots
            .entry((currency.to_string(), wire))
            .or_insert_with(|| {
                list.push((keys, S::default()));
                list.len() - 1
            });
        &mut list[at].1
    }

    /// Groups per currency (in currency order), each list ordered by its key values.
    pub fn finish(self) -> Vec<(String, Vec<(Keys, S)>)> {
        let mut out: Vec<(String, Vec<(Keys, S)>)> = self.lists.into_iter().collect();
        for (_, list) in &mut out {
            list.sort_by(|(a, _), (b, _)| {
                a.iter()
                    .zip(b)
                    .map(|(x, y)| x.1.compare(&y.1))
                    .find(|o| o.is_ne())
                    .unwrap_or(std::cmp::Ordering::Equal)
            });
        }
        out
    }
}

/// Groups of documents being summed.
#[derive(Default)]
struct Groups(Grouper<Sums>);

impl Groups {
    fn add(&mut self, currency: &str, keys: Keys, sums: &Sums) {
        let g = self.0.sums(currency, keys);
        g.net += sums.net;
        g.gross += sums.gross;
        g.count += sums.count;
    }

    fn add_document(&mut self, doc: &Document, keys: &[GroupKey], today: Date) {
        let values = keys.iter().map(|k| k.value(doc, today)).collect();
        self.add(&doc.currency_code, values, &Sums::of(doc));
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

/// Groups per currency, each list ordered by its key values.
pub fn group(docs: &[Document], keys: &[GroupKey], today: Date) -> Vec<(String, Vec<Group>)> {
    let mut groups = Groups::default();
    for doc in docs {
        groups.add_document(doc, keys, today);
    }
    groups.finish()
}

/// The groups of the documents matching `f`: from the kept sums when there are some and
/// the filter and keys allow it, else from every matching document.
pub fn groups(
    txn: &dyn Read,
    kept: Option<&Kept>,
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
    let Some(kept) = kept.filter(|_| from_sums) else {
        let found = query::find(txn, account, f, today)?;
        return Ok(group(&found, keys, today));
    };
    let mut groups = Groups::default();
    let this_month = month_number(today);
    let wanted = |shown: Shown| f.statuses.is_empty() || f.statuses.contains(&shown);
    kept::for_each_sum(txn, kept, |key, sums| {
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
        let values = keys
            .iter()
            .map(|k| match k {
                GroupKey::Client => ("client_id", Scalar::Int(key.client as i64)),
                GroupKey::Status => ("status", Scalar::Text(shown.as_str().into())),
                GroupKey::Year => ("year", Scalar::Int(key.year() as i64)),
                GroupKey::Day | GroupKey::Week | GroupKey::Month => {
                    month_value(key.year(), key.month_of_year())
                }
            })
            .collect();
        groups.add(&key.currency, values, &sums);
        Ok(())
    })?;
    if f.kind.spec().falls_due && (wanted(Shown::Open) || wanted(Shown::Overdue)) {
        let first = today.add_days(-(today.day() as i64 - 1));
        let last = first.add_days(31);
        let last = last.add_days(-(last.day() as i64));
        for id in query::open_due_between(txn, account, f.kind, first, last)? {
            let doc = storage::load(txn, account, f.kind, id)?;
            if f.matches(&doc, today) {
                groups.add_document(&doc, keys, today);
            }
        }
    }
    Ok(groups.finish())
}
