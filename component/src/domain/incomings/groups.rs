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

/// The groups of shown incomings per currency (in currency order), each list ordered by
/// its key values; `keys` in the order of aggregation.
pub fn group(incomings: &[Record], keys: &[GroupKey]) -> Vec<(String, Vec<Group>)> {
    let mut groups: Grouper<Group> = Grouper::new(SUPPLIER);
    let amount = |r: &Record, name: &str| r.get(name).and_then(Scalar::as_dec).unwrap_or_default();
    for r in incomings {
        let supplier = r.int("supplier_id").unwrap_or(0) as u64;
        let date = match r.get("date") {
            Some(Scalar::Date(d)) => *d,
            _ => Date::from_julian(0),
        };
        let mut parts = [Part::Year(0); KEYS_MAX];
        for (part, k) in parts.iter_mut().zip(keys) {
            *part = k.part(supplier, r.text("status"), date);
        }
        let g = groups.sums(r.text("currency_code"), &parts[..keys.len()]);
        g.total_net += amount(r, "total_net");
        g.total_tax += amount(r, "total_tax");
        g.total_gross += amount(r, "total_gross");
        g.open_amount += amount(r, "open_amount");
        g.count += 1;
    }
    groups
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
