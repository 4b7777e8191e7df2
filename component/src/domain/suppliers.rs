//! Suppliers: who sends the account incoming invoices. A record resource like clients,
//! matched or created when an e-invoice is imported (`match_or_create`), deleted only while
//! no incoming invoice names it.

use faktura_einvoice::model::Party;

use super::address;
use super::codes::is_email;
use super::records::{self, Draft, Filter, Resource, Rules};
use super::schema::{Changes, Field, Kind, Record, Scalar};
use super::{Ctx, Error};
use crate::caps::Write;

static FIELDS: &[Field] = &[
    Field::new("id", Kind::Integer)
        .read_only()
        .doc("Id of the supplier (read only; assigned on create)."),
    Field::new("created", Kind::DateTime)
        .read_only()
        .doc("When the supplier was created (read only)."),
    Field::new("updated", Kind::DateTime)
        .read_only()
        .doc("When the supplier was last changed (read only)."),
    Field::new("supplier_number", Kind::Text).doc("The account's own number for the supplier."),
    Field::new("name", Kind::Text).mandatory().doc(
        "Name of the supplier (the seller, BT-27); an import matches a supplier by name and zip \
         when no VAT identifier matches.",
    ),
    Field::new("street", Kind::Text).doc("Street and house number."),
    Field::new("zip", Kind::Text).doc("Postal code."),
    Field::new("city", Kind::Text).doc("City."),
    Field::new("country_code", Kind::Country).doc("Country of the address."),
    Field::new("address", Kind::Text).read_only().doc(
        "The postal address block, one line each: name, street, zip and city, country code (read \
         only; computed).",
    ),
    Field::new("vat_number", Kind::Text).doc(
        "VAT identifier (BT-31); an import matches the seller to the supplier with it first \
         (spaces and case ignored).",
    ),
    Field::new("tax_number", Kind::Text).doc("Tax registration number (BT-32)."),
    Field::new("email", Kind::Email).doc("Contact e-mail address (BT-43)."),
    Field::new("phone", Kind::Text).doc("Contact telephone number (BT-42)."),
    Field::new("electronic_address", Kind::Email)
        .doc("Electronic address (BT-34), an e-mail address."),
    Field::new("bank_account_owner", Kind::Text).doc("Holder of the supplier's bank account."),
    Field::new("bank_iban", Kind::Iban)
        .doc("IBAN of the supplier's bank account; its check digits must be valid."),
    Field::new("bank_bic", Kind::Text).doc("BIC of the supplier's bank."),
    Field::new("bank_name", Kind::Text).doc("Name of the supplier's bank."),
    Field::new("note", Kind::Text).doc("Internal note on the supplier."),
];

pub static SUPPLIERS: Resource = Resource::new("suppliers", "supplier", FIELDS, &SupplierRules)
    .filtered(&[
        Filter::exact("name", "name"),
        Filter::exact("vat_number", "vat_number"),
        Filter::exact("supplier_number", "supplier_number"),
    ])
    .indexed(&["vat_number", "name"])
    .emits("supplier");

struct SupplierRules;

impl Rules for SupplierRules {
    fn prepare(&self, d: Draft<'_>) -> Result<(), Error> {
        if d.record.text("name").trim().is_empty() {
            d.errors.push("name must not be empty".into());
        }
        d.record
            .set("address", Some(Scalar::Text(address::block(d.record))));
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
