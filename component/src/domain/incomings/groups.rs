//! Incoming invoices grouped (`group_by`): by the keys documents are grouped by
//! (`grouping::GroupKey`, with the supplier as the party), summed per currency. Only
//! reads shown incomings; a leaf.

use rust_decimal::Decimal;

use super::super::date::Date;
use super::super::grouping::{GroupKey, Grouper, KEYS_MAX, Part, SUPPLIER};
use super::super::schema::{Record, Scalar};

/// One group of incomings: its key values and sums.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Group {
    pub keys: Vec<(&'static str, Scalar)>,
    pub total_net: Decimal,
    pub total_tax: Decimal,
    pub total_gross: Decimal,
    pub open_amount: Decimal,
    pub count: u64,
}

/// Groups of shown incomings being summed, one incoming at a time.
pub struct Grouping<'a> {
    keys: &'a [GroupKey],
    groups: Grouper<Group>,
}

impl<'a> Grouping<'a> {
    /// Groups by `keys`, in the order of aggregation.
    pub fn new(keys: &'a [GroupKey]) -> Grouping<'a> {
        Grouping {
            keys,
            groups: Grouper::new(SUPPLIER),
        }
    }

    /// Adds a shown incoming to its group.
    pub fn add(&mut self, r: &Record) {
        let amount = |name: &str| r.get(name).and_then(Scalar::as_dec).unwrap_or_default();
        let supplier = r.int("supplier_id").unwrap_or(0) as u64;
        let date = match r.get("date") {
            Some(Scalar::Date(d)) => *d,
            _ => Date::from_julian(0),
        };
        let mut parts = [Part::Year(0); KEYS_MAX];
        for (part, k) in parts.iter_mut().zip(self.keys) {
            *part = k.part(supplier, r.text("status"), date);
        }
        let g = self
            .groups
            .sums(r.text("currency_code"), &parts[..self.keys.len()]);
        g.total_net += amount("total_net");
        g.total_tax += amount("total_tax");
        g.total_gross += amount("total_gross");
        g.open_amount += amount("open_amount");
        g.count += 1;
    }

    /// Groups per currency (in currency order), each list ordered by its key values.
    pub fn finish(self) -> Vec<(String, Vec<Group>)> {
        self.groups
            .finish()
            .into_iter()
            .map(|(currency, list)| {
                let list = list
                    .into_iter()
                    .map(|(keys, g)| Group { keys, ..g })
                    .collect();
                (currency, list)
            })
            .collect()
    }
}
