//! Taxes for items: a name and a rate; the one marked default applies when an item names
//! none. The first tax of an account becomes its default.

use rust_decimal::Decimal;

use super::records::{self, Resource, Rules};
use super::schema::{Changes, Field, Kind, Record, Scalar};
use super::{Ctx, Error};
use crate::caps::Write;

static FIELDS: &[Field] = &[
    Field::new("id", Kind::Integer).read_only(),
    Field::new("created", Kind::DateTime).read_only(),
    Field::new("updated", Kind::DateTime).read_only(),
    Field::new("name", Kind::Text).mandatory(),
    Field::new("rate", Kind::Decimal).mandatory(),
    Field::new("is_default", Kind::Bool),
];

pub static TAXES: Resource = Resource {
    collection: "taxes",
    label: "tax",
    fields: FIELDS,
    filters: &[],
    rules: &TaxRules,
};

struct TaxRules;

impl Rules for TaxRules {
    fn prepare(
        &self,
        ctx: &Ctx,
        txn: &mut dyn Write,
        record: &mut Record,
        old: Option<&Record>,
        _changes: &Changes,
        errors: &mut Vec<String>,
    ) -> Result<(), Error> {
        if let Some(rate) = record.get("rate").and_then(Scalar::as_dec)
            && !(Decimal::ZERO..=Decimal::ONE_HUNDRED).contains(&rate)
        {
            errors.push(format!("rate must be between 0 and 100, got {rate}"));
        }
        if old.is_none() && record.get("is_default").is_none() {
            let first = records::load_all(txn.as_read(), &TAXES, ctx.account_id)?.is_empty();
            record.set("is_default", Some(Scalar::Bool(first)));
        }
        Ok(())
    }

    fn after_save(
        &self,
        ctx: &Ctx,
        txn: &mut dyn Write,
        record: &Record,
        _old: Option<&Record>,
    ) -> Result<(), Error> {
        records::clear_flag_on_others(ctx, txn, &TAXES, record, "is_default", |_| true)
    }
}

/// The name and rate of the account's default tax, if it has one.
pub fn default_tax(
    txn: &dyn crate::caps::Read,
    account: u64,
) -> Result<Option<(String, Decimal)>, Error> {
    Ok(records::load_all(txn, &TAXES, account)?
        .into_iter()
        .find(|t| t.bool("is_default"))
        .map(|t| {
            (
                t.text("name").to_owned(),
                t.get("rate").and_then(Scalar::as_dec).unwrap_or_default(),
            )
        }))
}
