//! Country taxes: the tax-free countries of an account. A client with tax rule COUNTRY
//! whose country is listed is billed without tax. Each country is listed at most once.

use super::Error;
use super::records::{self, Draft, Filter, Resource, Rules};
use super::schema::{Field, Kind, Record};

static FIELDS: &[Field] = &[
    Field::new("id", Kind::Integer)
        .read_only()
        .doc("Id of the country tax entry (read only; assigned on create)."),
    Field::new("created", Kind::DateTime)
        .read_only()
        .doc("When the entry was created (read only)."),
    Field::new("country_code", Kind::Country).mandatory().doc(
        "A tax-free country: documents of clients in it with tax_rule COUNTRY carry no tax. Each \
         country is listed once.",
    ),
];

// The parameter table names the filter `country`, the usage example `country_code`.
pub static COUNTRY_TAXES: Resource =
    Resource::new("country-taxes", "country tax", FIELDS, &CountryTaxRules).filtered(&[
        Filter::exact("country", "country_code"),
        Filter::exact("country_code", "country_code"),
    ]);

struct CountryTaxRules;

impl Rules for CountryTaxRules {
    fn prepare(&self, d: Draft<'_>) -> Result<(), Error> {
        let code = d.record.text("country_code").to_owned();
        let own_id = d.old.map(Record::id);
        let taken = records::load_all(d.txn.as_read(), &COUNTRY_TAXES, d.ctx.account_id)?
            .iter()
            .any(|r| Some(r.id()) != own_id && r.text("country_code") == code);
        if taken && !code.is_empty() {
            return Err(Error::Duplicate(format!(
                "country_code {code} is already listed"
            )));
        }
        Ok(())
    }
}

/// Whether documents for a client in this country are tax-free.
pub fn is_tax_free_country(
    txn: &dyn crate::caps::Read,
    account: u64,
    country: &str,
) -> Result<bool, Error> {
    Ok(records::load_all(txn, &COUNTRY_TAXES, account)?
        .iter()
        .any(|r| r.text("country_code") == country))
}
