//! Clients: addresses, tax rule and payment terms of the parties documents are made out to.
//! Client numbers come from the account's client range; the address is derived.

use super::accounts::is_email;
use super::einvoice::derive;
use super::numbering;
use super::records::{Draft, Resource, Rules};
use super::schema::{Field, Kind, Record, Scalar, parse_decimal};
use super::settings;
use super::{Ctx, Error};
use crate::caps::Write;
use crate::limits;
use crate::store;

const TERM_TYPES: &[&str] = &["SETTINGS", "ABSOLUTE", "RELATIVE"];

static FIELDS: &[Field] = &[
    Field::new("id", Kind::Integer).read_only(),
    Field::new("created", Kind::DateTime).read_only(),
    Field::new("updated", Kind::DateTime).read_only(),
    Field::new("archived", Kind::Bool),
    Field::new("client_number", Kind::Text).read_only(),
    Field::new("number", Kind::Integer),
    Field::new("number_pre", Kind::Text),
    Field::new("number_length", Kind::Integer),
    Field::new("name", Kind::Text),
    Field::new("salutation", Kind::Text),
    Field::new("first_name", Kind::Text),
    Field::new("last_name", Kind::Text),
    Field::new("street", Kind::Text),
    Field::new("zip", Kind::Text),
    Field::new("city", Kind::Text),
    Field::new("state", Kind::Text),
    Field::new("country_code", Kind::Country),
    Field::new("address", Kind::Text).read_only(),
    Field::new("phone", Kind::Text),
    Field::new("fax", Kind::Text),
    Field::new("mobile", Kind::Text),
    Field::new("email", Kind::Text),
    Field::new("www", Kind::Text),
    Field::new("tax_number", Kind::Text),
    Field::new("vat_number", Kind::Text),
    Field::new("bank_account_owner", Kind::Text),
    Field::new("bank_number", Kind::Text),
    Field::new("bank_name", Kind::Text),
    Field::new("bank_account_number", Kind::Text),
    Field::new("bank_swift", Kind::Text),
    Field::new("bank_iban", Kind::Text),
    Field::new("currency_code", Kind::Currency),
    Field::new("locale", Kind::Text),
    Field::new("tax_rule", Kind::Enum(&["TAX", "NO_TAX", "COUNTRY"])),
    Field::new("net_gross", Kind::Enum(&["NET", "GROSS", "SETTINGS"])),
    Field::new("reduction", Kind::Text),
    Field::new("discount_rate", Kind::Decimal),
    Field::new("discount_rate_type", Kind::Enum(TERM_TYPES)),
    Field::new("discount_days", Kind::Integer),
    Field::new("discount_days_type", Kind::Enum(TERM_TYPES)),
    Field::new("due_days", Kind::Integer),
    Field::new("due_days_type", Kind::Enum(TERM_TYPES)),
    Field::new("note", Kind::Text),
    Field::new("buyer_reference", Kind::Text),
    Field::new("electronic_address", Kind::Text),
    Field::new("einvoice_profile", Kind::Enum(EINVOICE_PROFILES)),
    Field::new("debit_mandate_reference", Kind::Text),
];

/// The e-invoice formats a client may receive (`einvoice::model::Profile` names).
const EINVOICE_PROFILES: &[&str] = &["xrechnung-cii", "xrechnung-ubl", "factur-x"];

pub static CLIENTS: Resource = Resource::new("clients", "client", FIELDS, &ClientRules);

/// The number range of clients.
pub const RANGE: &str = "client";

/// The key of the number claim a client holds (its value is the client's id); none for a
/// client without a number.
pub fn claim_key(account: u64, record: &Record) -> Option<Vec<u8>> {
    let number = record.int("number")?;
    Some(store::keys::number_claim(
        account,
        RANGE,
        record.text("number_pre"),
        number,
    ))
}

struct ClientRules;

impl Rules for ClientRules {
    fn prepare(&self, d: Draft<'_>) -> Result<(), Error> {
        if ["name", "first_name", "last_name"]
            .iter()
            .all(|f| d.record.text(f).trim().is_empty())
        {
            d.errors
                .push("name is mandatory (or first_name and last_name)".into());
        }
        let email = d.record.text("email").trim().to_owned();
        if !email.is_empty() && !is_email(&email) {
            d.errors
                .push(format!("email must be an e-mail address, got \"{email}\""));
        }
        let address = d.record.text("electronic_address").trim().to_owned();
        if !address.is_empty() && !is_email(&address) {
            d.errors.push(format!(
                "electronic_address must be an e-mail address, got \"{address}\""
            ));
        }
        let iban = d.record.text("bank_iban").to_owned();
        if !d.record.text("debit_mandate_reference").trim().is_empty() && !derive::is_iban(&iban) {
            d.errors.push(format!(
                "bank_iban must be a valid IBAN when debit_mandate_reference is set, got \"{iban}\""
            ));
        }
        let reduction = d.record.text("reduction").trim().to_owned();
        if !reduction.is_empty() && parse_decimal(reduction.trim_end_matches('%')).is_none() {
            d.errors.push(format!(
                "reduction must be an amount or a percentage like 10 or 10%, got \"{reduction}\""
            ));
        }
        if let Some(len) = d.record.int("number_length")
            && !(0..=limits::NUMBER_LENGTH_MAX).contains(&len)
        {
            d.errors.push(format!(
                "number_length must be between 0 and {}, got {len}",
                limits::NUMBER_LENGTH_MAX
            ));
        }
        if let Some(n) = d.record.int("number")
            && n < 1
        {
            d.errors.push(format!("number must be at least 1, got {n}"));
        }
        for (field, value) in [
            ("discount_days", d.record.int("discount_days")),
            ("due_days", d.record.int("due_days")),
        ] {
            if let Some(v) = value
                && !(0..=3650).contains(&v)
            {
                d.errors
                    .push(format!("{field} must be between 0 and 3650, got {v}"));
            }
        }
        if d.old.is_none() {
            let defaults = settings::load_stored(d.txn.as_read(), d.ctx.account_id)?;
            if !d.changes.has("number_pre") {
                d.record
                    .set("number_pre", defaults.get("client_number_pre").cloned());
            }
            if !d.changes.has("number_length") {
                d.record.set(
                    "number_length",
                    defaults.get("client_number_length").cloned(),
                );
            }
            for (field, default) in [
                ("archived", Scalar::Bool(false)),
                ("tax_rule", Scalar::Text("COUNTRY".into())),
                ("net_gross", Scalar::Text("SETTINGS".into())),
                ("discount_rate_type", Scalar::Text("SETTINGS".into())),
                ("discount_days_type", Scalar::Text("SETTINGS".into())),
                ("due_days_type", Scalar::Text("SETTINGS".into())),
            ] {
                if !d.changes.has(field) {
                    d.record.set(field, Some(default));
                }
            }
        }
        if !d.errors.is_empty() {
            return Ok(());
        }
        self.number(d.ctx, d.txn, d.record, d.old, d.errors)?;
        d.record
            .set("address", Some(Scalar::Text(address_of(d.record))));
        Ok(())
    }

    fn before_delete(&self, ctx: &Ctx, txn: &mut dyn Write, record: &Record) -> Result<(), Error> {
        let docs = txn.scan(
            &store::keys::client_documents(ctx.account_id, record.id()),
            None,
            1,
            false,
        )?;
        if !docs.is_empty() {
            return Err(Error::invalid(format!(
                "client {} has documents and cannot be deleted; archive it instead",
                record.id()
            )));
        }
        if let Some(n) = record.int("number") {
            numbering::release(txn, ctx.account_id, RANGE, record.text("number_pre"), n)?;
        }
        super::property_values::remove_of_owner(
            txn,
            &super::property_values::CLIENT_PROPERTY_VALUES,
            ctx.account_id,
            record.id(),
        )
    }
}

impl ClientRules {
    /// Keeps (prefix, number) unique in the account's client range.
    fn number(
        &self,
        ctx: &Ctx,
        txn: &mut dyn Write,
        record: &mut Record,
        old: Option<&Record>,
        errors: &mut Vec<String>,
    ) -> Result<(), Error> {
        let pre = record.text("number_pre").to_owned();
        let id = record.id();
        let old_claim = old.and_then(|o| Some((o.text("number_pre").to_owned(), o.int("number")?)));
        match record.int("number") {
            Some(n) if old_claim.as_ref() != Some(&(pre.clone(), n)) => {
                if !numbering::claim(txn, ctx.account_id, RANGE, &pre, n, id)? {
                    errors.push(format!("number {n} is already used by another client"));
                    return Ok(());
                }
                if let Some((old_pre, old_n)) = &old_claim {
                    numbering::release(txn, ctx.account_id, RANGE, old_pre, *old_n)?;
                }
            }
            Some(_) => {}
            None => {
                let n = numbering::take_next(txn, ctx.account_id, RANGE, &pre, id)?;
                if let Some((old_pre, old_n)) = &old_claim {
                    numbering::release(txn, ctx.account_id, RANGE, old_pre, *old_n)?;
                }
                record.set("number", Some(Scalar::Int(n)));
            }
        }
        let number = record.int("number").unwrap_or(0);
        let length = record.int("number_length").unwrap_or(0);
        record.set(
            "client_number",
            Some(Scalar::Text(numbering::format_number(&pre, number, length))),
        );
        Ok(())
    }
}

/// The postal address block: company, person, street, zip and city, country.
pub fn address_of(r: &Record) -> String {
    let person = [
        r.text("salutation"),
        r.text("first_name"),
        r.text("last_name"),
    ]
    .iter()
    .map(|s| s.trim())
    .filter(|s| !s.is_empty())
    .collect::<Vec<_>>()
    .join(" ");
    let city = [r.text("zip").trim(), r.text("city").trim()]
        .iter()
        .filter(|s| !s.is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join(" ");
    [
        r.text("name").trim().to_owned(),
        person,
        r.text("street").trim().to_owned(),
        city,
        r.text("country_code").to_owned(),
    ]
    .into_iter()
    .filter(|l| !l.is_empty())
    .collect::<Vec<_>>()
    .join("\n")
}
