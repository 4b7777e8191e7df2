//! Country taxes: the tax-free countries of an account. A client with tax rule COUNTRY
//! whose country is listed is billed without tax. Each country is listed at most once.

use super::records::{self, Filter, Resource, Rules};
use super::schema::{Changes, Field, Kind, Record};
use super::{Ctx, Error};
use crate::caps::Write;

static FIELDS: &[Field] = &[
    Field::new("id", Kind::Integer).read_only(),
    Field::new("created", Kind::DateTime).read_only(),
    Field::new("country_code", Kind::Country).mandatory(),
];

pub static COUNTRY_TAXES: Resource = Resource {
    collection: "country-taxes",
    label: "country tax",
    fields: FIELDS,
    // The parameter table names the filter `country`, the usage example `country_code`.
    filters: &[
        Filter {
            param: "country",
            field: "country_code",
        },
        Filter {
            param: "country_code",
            field: "country_code",
        },
    ],
    rules: &CountryTaxRules,
};

struct CountryTaxRules;

impl Rules for CountryTaxRules {
    fn prepare(
        &self,
        ctx: &Ctx,
        txn: &mut dyn Write,
        record: &mut Record,
        old: Option<&Record>,
        _changes: &Changes,
        errors: &mut Vec<String>,
    ) -> Result<(), Error> {
        let code = record.text("country_code").to_owned();
        let own_id = old.map(Record::id);
        let taken = records::load_all(txn.as_read(), &COUNTRY_TAXES, ctx.account_id)?
            .iter()
            .any(|r| Some(r.id()) != own_id && r.text("country_code") == code);
        if taken && !code.is_empty() {
            errors.push(format!("country_code {code} is already listed"));
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
