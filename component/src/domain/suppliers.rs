//! Suppliers: who sends the account incoming invoices. A record resource like clients,
//! matched or created when an e-invoice is imported (`match_or_create`), deleted only while
//! no incoming invoice names it.

use super::accounts::is_email;
use super::clients::address_of;
use super::einvoice::derive;
use super::einvoice::model::Party;
use super::records::{self, Draft, Filter, Resource, Rules};
use super::schema::{Changes, Field, Kind, Record, Scalar};
use super::{Ctx, Error};
use crate::caps::Write;

static FIELDS: &[Field] = &[
    Field::new("id", Kind::Integer).read_only(),
    Field::new("created", Kind::DateTime).read_only(),
    Field::new("updated", Kind::DateTime).read_only(),
    Field::new("supplier_number", Kind::Text),
    Field::new("name", Kind::Text).mandatory(),
    Field::new("street", Kind::Text),
    Field::new("zip", Kind::Text),
    Field::new("city", Kind::Text),
    Field::new("country_code", Kind::Country),
    Field::new("address", Kind::Text).read_only(),
    Field::new("vat_number", Kind::Text),
    Field::new("tax_number", Kind::Text),
    Field::new("email", Kind::Text),
    Field::new("phone", Kind::Text),
    Field::new("electronic_address", Kind::Text),
    Field::new("bank_account_owner", Kind::Text),
    Field::new("bank_iban", Kind::Text),
    Field::new("bank_bic", Kind::Text),
    Field::new("bank_name", Kind::Text),
    Field::new("note", Kind::Text),
];

pub static SUPPLIERS: Resource = Resource::new("suppliers", "supplier", FIELDS, &SupplierRules)
    .filtered(&[
        Filter::exact("name", "name"),
        Filter::exact("vat_number", "vat_number"),
        Filter::exact("supplier_number", "supplier_number"),
    ])
    .indexed(&["vat_number", "name"]);

struct SupplierRules;

impl Rules for SupplierRules {
    fn prepare(&self, d: Draft<'_>) -> Result<(), Error> {
        if d.record.text("name").trim().is_empty() {
            d.errors.push("name must not be empty".into());
        }
        for field in ["email", "electronic_address"] {
            let value = d.record.text(field).trim().to_owned();
            if !value.is_empty() && !is_email(&value) {
                d.errors.push(format!(
                    "{field} must be an e-mail address, got \"{value}\""
                ));
            }
        }
        let iban = d.record.text("bank_iban").to_owned();
        if !iban.trim().is_empty() && !derive::is_iban(&iban) {
            d.errors.push(format!(
                "bank_iban must be an IBAN with valid check digits, got \"{iban}\""
            ));
        }
        d.record
            .set("address", Some(Scalar::Text(address_of(d.record))));
        Ok(())
    }

    fn before_delete(&self, ctx: &Ctx, txn: &mut dyn Write, record: &Record) -> Result<(), Error> {
        let used = txn.scan(
            &crate::store::keys::supplier_incomings(ctx.account_id, record.id()),
            None,
            1,
            false,
        )?;
        if !used.is_empty() {
            return Err(Error::invalid(format!(
                "supplier {} has incoming invoices and cannot be deleted",
                record.id()
            )));
        }
        Ok(())
    }
}

fn normalized(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect()
}

/// The supplier of an e-invoice's seller: the one with its VAT id, else the one with its
/// name and zip, else a new one made from the seller's data. Its id.
pub fn match_or_create(ctx: &Ctx, txn: &mut dyn Write, seller: &Party) -> Result<u64, Error> {
    // Through the indexes of VAT ids and names: an account's thousandth supplier is
    // matched as fast as its first.
    let (account, txn_read) = (ctx.account_id, txn.as_read());
    let vat = normalized(&seller.vat_id);
    if !vat.is_empty()
        && let Some(s) = records::find(txn_read, &SUPPLIERS, account, "vat_number", &vat)?
            .into_iter()
            .find(|s| normalized(s.text("vat_number")) == vat)
    {
        return Ok(s.id());
    }
    let (name, zip) = (
        normalized(&seller.name),
        normalized(&seller.address.post_code),
    );
    if let Some(s) = records::find(txn_read, &SUPPLIERS, account, "name", &name)?
        .into_iter()
        .find(|s| normalized(s.text("name")) == name && normalized(s.text("zip")) == zip)
    {
        return Ok(s.id());
    }
    let text = |v: &str| Some(Some(Scalar::Text(v.trim().to_owned())));
    let mut changes = Changes::default();
    let name = if seller.name.trim().is_empty() {
        "Unknown seller"
    } else {
        seller.name.as_str()
    };
    for (field, value) in [
        ("name", text(name)),
        ("street", text(&seller.address.line1)),
        ("zip", text(&seller.address.post_code)),
        ("city", text(&seller.address.city)),
        ("vat_number", text(&seller.vat_id)),
        ("tax_number", text(&seller.tax_number)),
        (
            "email",
            text(&seller.contact.email).filter(|_| is_email(seller.contact.email.trim())),
        ),
        ("phone", text(&seller.contact.phone)),
        (
            "electronic_address",
            text(&seller.electronic_address).filter(|_| is_email(seller.electronic_address.trim())),
        ),
    ] {
        if let Some(v) = value {
            changes.values.push((field, v));
        }
    }
    let country = seller.address.country.trim().to_ascii_uppercase();
    if super::codes::COUNTRIES
        .binary_search(&country.as_str())
        .is_ok()
    {
        changes
            .values
            .push(("country_code", Some(Scalar::Text(country))));
    }
    let record = records::create(ctx, txn, &SUPPLIERS, &changes)?;
    Ok(record.id())
}
