//! Grouped totals (`group_by`). Groups are summed from loaded documents, or, for the common
//! case of grouping all of an account's documents by client, status, month or year, from
//! the tallied sums (`documents::tallies`): a few thousand entries instead of every document.
//! Open documents due this month are still loaded one by one, because whether one shows
//! as OPEN or OVERDUE depends on today. Only reads.

use std::collections::{BTreeMap, HashMap};

use rust_decimal::Decimal;

use super::Error;
use super::date::Date;
use super::documents::tallies::{self, Sums, Tallies, month_number};
use super::documents::{Document, Filter, Shown, query, storage};
use super::schema::Scalar;
use crate::caps::Read;
use crate::limits;

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
        match self {
            GroupKey::Party => (party.0.field, Scalar::Int(party.1 as i64)),
            GroupKey::Status => ("status", Scalar::Text(status.into())),
            GroupKey::Day => ("day", Scalar::Date(date)),
            GroupKey::Week => {
                let (y, w) = date.iso_week();
                ("week", Scalar::Text(format!("{y}-W{w:02}")))
            }
            GroupKey::Month => month_value(date.year(), date.month()),
            GroupKey::Year => year_value(date.year()),
        }
    }
}

fn month_value(year: i32, month: u8) -> (&'static str, Scalar) {
    ("month", Scalar::Text(format!("{year:04}-{month:02}")))
}

fn year_value(year: i32) -> (&'static str, Scalar) {
    ("year", Scalar::Int(year as i64))
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
        let status = doc.shown(today).as_str();
        let values = keys
            .iter()
            .map(|k| k.value((CLIENT, doc.client_id), status, doc.date))
            .collect();
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
        let found = query::find(txn, account, f, today)?;
        return Ok(group(&found, keys, today));
    };
    let mut groups = Groups::default();
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
        let values = keys
            .iter()
            .map(|k| match k {
                GroupKey::Party => (CLIENT.field, Scalar::Int(key.client as i64)),
                GroupKey::Status => ("status", Scalar::Text(shown.as_str().into())),
                GroupKey::Year => year_value(key.year()),
                // Tallied sums are by month: day and week keys group from the documents.
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
        // Read a batch per call into the store, not one document per call.
        for batch in
            query::open_due_between(txn, account, f.kind, first, last)?.chunks(limits::LOAD_BATCH)
        {
            for doc in storage::load_many(txn, account, f.kind, batch)? {
                if f.matches(&doc, today) {
                    groups.add_document(&doc, keys, today);
                }
            }
        }
    }
    Ok(groups.finish())
}
