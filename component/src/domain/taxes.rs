//! Taxes for items: a name and a rate; the one marked default applies when an item names
//! none. The first tax of an account becomes its default.

use rust_decimal::Decimal;

use super::Error;
use super::records::{self, Draft, Resource, Rules, Saved};
use super::schema::{Field, Kind, Scalar};

static FIELDS: &[Field] = &[
    Field::new("id", Kind::Integer)
        .read_only()
        .doc("Id of the tax (read only; assigned on create)."),
    Field::new("created", Kind::DateTime)
        .read_only()
        .doc("When the tax was created (read only)."),
    Field::new("updated", Kind::DateTime)
        .read_only()
        .doc("When the tax was last changed (read only)."),
    Field::new("name", Kind::Text)
        .mandatory()
        .doc("Name of the tax, e.g. VAT; items that take this tax carry it as tax_name."),
    Field::new("rate", Kind::Decimal)
        .mandatory()
        .doc("Tax rate in percent (0 to 100)."),
    Field::new("is_default", Kind::Bool).doc(
        "1 makes this the tax of new items that give neither tax_name nor tax_rate; setting it \
         clears it on the others. Default: 1 for the account's first tax, else 0.",
    ),
];

pub static TAXES: Resource = Resource::new("taxes", "tax", FIELDS, &TaxRules);

struct TaxRules;

impl Rules for TaxRules {
    fn prepare(&self, d: Draft<'_>) -> Result<(), Error> {
        if let Some(rate) = d.record.get("rate").and_then(Scalar::as_dec)
            && !(Decimal::ZERO..=Decimal::ONE_HUNDRED).contains(&rate)
        {
            d.errors
                .push(format!("rate must be between 0 and 100, got {rate}"));
        }
        if d.old.is_none() && d.record.get("is_default").is_none() {
            let first = records::load_all(d.txn.as_read(), &TAXES, d.ctx.account_id)?.is_empty();
            d.record.set("is_default", Some(Scalar::Bool(first)));
        }
        Ok(())
    }

    fn after_save(&self, d: Saved<'_>) -> Result<(), Error> {
        records::clear_flag_on_others(d.ctx, d.txn, &TAXES, d.record, "is_default", |_| true)
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
