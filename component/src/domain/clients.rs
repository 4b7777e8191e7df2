//! Clients: addresses, tax rule and payment terms of the parties documents are made out to.
//! Client numbers come from the account's client range; the address is derived. A client
//! takes its tags and property values with it when it is deleted.

use rust_decimal::Decimal;

use super::money::Reduction;
use super::numbering;
use super::records::{Draft, Resource, Rules};
use super::schema::{Changes, Field, Kind, Record, Scalar};
use super::settings;
use super::{Ctx, Error, address, codes};
use crate::caps::Write;
use crate::limits;
use crate::store;

const TERM_TYPES: &[&str] = &["SETTINGS", "ABSOLUTE", "RELATIVE"];

static FIELDS: &[Field] = &[
    Field::new("id", Kind::Integer)
        .read_only()
        .doc("Id of the client (read only; assigned on create)."),
    Field::new("created", Kind::DateTime)
        .read_only()
        .doc("When the client was created (read only)."),
    Field::new("updated", Kind::DateTime)
        .read_only()
        .doc("When the client was last changed (read only)."),
    Field::new("archived", Kind::Bool).doc(
        "1 marks the client as archived: the way to retire a client that has documents, which \
         cannot be deleted. Default: 0.",
    ),
    Field::new("client_number", Kind::Text).read_only().doc(
        "The client number: number_pre followed by number, zero-padded to number_length digits \
         (read only; computed).",
    ),
    Field::new("number", Kind::Integer).doc(
        "Serial number of the client, at least 1 and unique per prefix. Default: one past the \
         highest number held with the same prefix.",
    ),
    Field::new("number_pre", Kind::Text)
        .doc("Prefix of the client number, one line of at most 40 characters. Default: the settings' client_number_pre."),
    Field::new("number_length", Kind::Integer).doc(
        "Minimum number of digits of the serial number, padded with leading zeros (0 to 20). \
         Default: the settings' client_number_length.",
    ),
    Field::new("name", Kind::Text).doc(
        "Company name, the first line of the address. At least one of name, first_name and \
         last_name must be set.",
    ),
    Field::new("salutation", Kind::Text).doc(
        "Salutation of the contact person (e.g. Mr or Ms), written before first_name in the \
         address.",
    ),
    Field::new("first_name", Kind::Text).doc("First name of the contact person."),
    Field::new("last_name", Kind::Text).doc("Last name of the contact person."),
    Field::new("street", Kind::Text).doc("Street and house number."),
    Field::new("zip", Kind::Text).doc("Postal code."),
    Field::new("city", Kind::Text).doc("City."),
    Field::new("state", Kind::Text)
        .doc("State or region; the buyer's country subdivision (BT-54) in e-invoices."),
    Field::new("country_code", Kind::Country).doc(
        "Country of the address. With tax_rule COUNTRY, a country listed in country-taxes makes \
         the client's documents tax-free. Empty in e-invoices: the seller's country.",
    ),
    Field::new("address", Kind::Text).read_only().doc(
        "The postal address block, one line each: name, contact person, street, zip and city, \
         country code (read only; computed). New documents copy it.",
    ),
    Field::new("phone", Kind::Text)
        .doc("Phone number; the buyer's contact telephone (BT-57) in e-invoices."),
    Field::new("fax", Kind::Text).doc("Fax number."),
    Field::new("mobile", Kind::Text).doc("Mobile phone number."),
    Field::new("email", Kind::Email).doc(
        "E-mail address; the buyer's contact e-mail (BT-58) in e-invoices and the default of \
         electronic_address.",
    ),
    Field::new("www", Kind::Text).doc("Website address."),
    Field::new("tax_number", Kind::Text).doc("Tax number of the client."),
    Field::new("vat_number", Kind::Text)
        .doc("VAT identification number; the buyer's VAT identifier (BT-48) in e-invoices."),
    Field::new("bank_account_owner", Kind::Text).doc("Holder of the client's bank account."),
    Field::new("bank_number", Kind::Text)
        .doc("National bank code (e.g. the German BLZ) of the client's bank account."),
    Field::new("bank_name", Kind::Text).doc("Name of the client's bank."),
    Field::new("bank_account_number", Kind::Text)
        .doc("National account number of the client's bank account."),
    Field::new("bank_swift", Kind::Text).doc("BIC (SWIFT code) of the client's bank."),
    Field::new("bank_iban", Kind::Text).doc(
        "IBAN of the client's bank account; the debited account (BT-91) of direct debits. Must be \
         a valid IBAN when debit_mandate_reference is set.",
    ),
    Field::new("currency_code", Kind::Currency)
        .doc("Currency of the client's new documents. Empty: the settings' currency_code."),
    Field::new("locale", Kind::Text).doc(
        "Locale of the client, e.g. de_DE. Kept only: documents and e-mails follow the settings' \
         locale.",
    ),
    Field::new("tax_rule", Kind::Enum(&["TAX", "NO_TAX", "COUNTRY"])).doc(
        "How the client's documents are taxed: TAX with the items' rates, NO_TAX never (exempt), \
         COUNTRY tax-free when country_code is listed in country-taxes. Default: COUNTRY.",
    ),
    Field::new("net_gross", Kind::Enum(&["NET", "GROSS", "SETTINGS"])).doc(
        "Price basis of the client's new documents; SETTINGS takes the settings' net_gross. \
         Default: SETTINGS.",
    ),
    Field::new("reduction", Kind::Text).doc(
        "Reduction the client's new documents start with: an amount (10) or a percentage up to \
         100% (10%) off the total; not negative.",
    ),
    Field::new("discount_rate", Kind::Decimal).doc(
        "Cash discount in percent for the client's new documents, used as discount_rate_type says; \
         the rate it gives must lie between 0 and 100.",
    ),
    Field::new("discount_rate_type", Kind::Enum(TERM_TYPES)).doc(
        "Where new documents take the cash discount rate from: SETTINGS the settings' \
         discount_rate, ABSOLUTE the client's discount_rate, RELATIVE the settings' plus the \
         client's (which may be negative). Default: SETTINGS.",
    ),
    Field::new("discount_days", Kind::Integer).doc(
        "Days from the document date to the cash discount date, used as discount_days_type says; \
         the days it gives must lie between 0 and 3650.",
    ),
    Field::new("discount_days_type", Kind::Enum(TERM_TYPES)).doc(
        "Where new documents take the cash discount days from: SETTINGS the settings' \
         discount_days, ABSOLUTE the client's discount_days, RELATIVE the settings' plus the \
         client's (which may be negative). Default: SETTINGS.",
    ),
    Field::new("due_days", Kind::Integer).doc(
        "Days from the document date to the due date, used as due_days_type says; the days it \
         gives must lie between 0 and 3650.",
    ),
    Field::new("due_days_type", Kind::Enum(TERM_TYPES)).doc(
        "Where new documents take the due days from: SETTINGS the settings' due_days, ABSOLUTE \
         the client's due_days, RELATIVE the settings' plus the client's (which may be \
         negative). Default: SETTINGS.",
    ),
    Field::new("note", Kind::Text).doc("Internal note on the client."),
    Field::new("price_group", Kind::Integer).doc(
        "Which of an article's five sales prices items made from articles take for the client's \
         documents (1 to 5). Default: 1.",
    ),
    Field::new("buyer_reference", Kind::Text).doc(
        "Buyer reference (BT-10), e.g. a Leitweg-ID: new documents start with it, and e-invoices \
         of documents without one use it.",
    ),
    Field::new("consumer", Kind::Bool).doc(
        "1: the client is a consumer: default interest of its reminders is the base rate plus 5 \
         points (§ 288 (1) BGB) instead of 9, and no flat charge is added. Default: 0.",
    ),
    Field::new("dunning_run", Kind::Bool).doc(
        "0 keeps the client's invoices out of automatic dunning runs (settings dunning_run). \
         Default: 1.",
    ),
    Field::new("electronic_address", Kind::Email)
        .doc("Buyer electronic address (BT-49), an e-mail address. Empty: email."),
    Field::new("einvoice_profile", Kind::Enum(EINVOICE_PROFILES)).doc(
        "E-invoice profile the client receives: completion checks its rules, GET …/e-invoice \
         defaults to it and e-mails attach its XML. Empty: none.",
    ),
    Field::new("debit_mandate_reference", Kind::Text).doc(
        "SEPA direct debit mandate reference (BT-89) for documents paid by DEBIT; needs a valid \
         bank_iban.",
    ),
];

/// The e-invoice formats a client may receive (`faktura_einvoice::Profile` names).
const EINVOICE_PROFILES: &[&str] = &["xrechnung-cii", "xrechnung-ubl", "factur-x"];

/// Clients are found by number and by a part of the name through an index: neither a
/// lookup by number nor one by name grows with the account.
pub static CLIENTS: Resource = Resource::new("clients", "client", FIELDS, &ClientRules)
    .indexed(&["number"])
    .searched(&["name"])
    .emits("client");

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

/// The payment terms a client may set for its documents, with the largest value each
/// takes: the cash discount rate in percent, the days to the cash discount and due dates.
pub const TERMS: [(&str, i64); 3] = [
    ("discount_rate", 100),
    ("discount_days", limits::TERM_DAYS_MAX),
    ("due_days", limits::TERM_DAYS_MAX),
];

/// A payment term of the client's documents: the client's own value when its type
/// (`{field}_type`) is ABSOLUTE, the settings' value plus the client's when RELATIVE, else
/// the settings'. A value outside the term's range is refused, naming the client's field:
/// a RELATIVE value is checked against the settings as they are now.
/// Whether the client is a consumer (§ 288 (1) BGB), not a business.
pub fn is_consumer(client: &Record) -> bool {
    client.bool("consumer")
}

/// Whether automatic dunning runs remind the client's invoices (clients from before the
/// field existed do).
pub fn in_dunning_runs(client: &Record) -> bool {
    client
        .get("dunning_run")
        .and_then(Scalar::as_bool)
        .unwrap_or(true)
}

pub fn term(client: &Record, settings: &Record, field: &str) -> Result<Decimal, String> {
    let max = TERMS
        .iter()
        .find(|(f, _)| *f == field)
        .map_or(Decimal::ZERO, |(_, m)| Decimal::from(*m));
    let setting = settings
        .get(field)
        .and_then(Scalar::as_dec)
        .unwrap_or_default();
    let own = client.get(field).and_then(Scalar::as_dec);
    let (value, how) = match (client.text(&format!("{field}_type")), own) {
        ("RELATIVE", Some(own)) => (setting + own, Some(setting)),
        ("ABSOLUTE", Some(own)) => (own, None),
        // Unused while the type is SETTINGS, but it may become RELATIVE.
        (_, Some(own)) if !(-max..=max).contains(&own) => (own, None),
        _ => return Ok(setting),
    };
    if (Decimal::ZERO..=max).contains(&value) {
        return Ok(value);
    }
    let own = own.unwrap_or_default().normalize();
    Err(match how {
        Some(setting) => format!(
            "{field} {own} (RELATIVE: added to the settings' {}) gives {}, outside 0 to {max}",
            setting.normalize(),
            value.normalize()
        ),
        None => format!("{field} must be between 0 and {max}, got {own}"),
    })
}

struct ClientRules;

impl Rules for ClientRules {
    fn prepare(&self, d: Draft<'_>) -> Result<(), Error> {
        check_client(d.record, d.errors);
        let defaults = settings::load_stored(d.txn.as_read(), d.ctx.account_id)?;
        for (field, _) in TERMS {
            if let Err(e) = term(d.record, &defaults, field) {
                d.errors.push(e);
            }
        }
        if d.old.is_none() {
            set_new_defaults(d.record, d.changes, &defaults);
        }
        if !d.errors.is_empty() {
            return Ok(());
        }
        numbering::number_record(d.ctx, d.txn, RANGE, "client", d.record, d.old)?;
        d.record
            .set("address", Some(Scalar::Text(address::block(d.record))));
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
        super::record_tags::CLIENTS.remove_of(ctx, txn, record.id())?;
        super::contacts::remove_of_client(ctx, txn, record.id())?;
        super::property_values::remove_of_owner(
            ctx,
            txn,
            &super::property_values::CLIENT_PROPERTY_VALUES,
            record.id(),
        )
    }
}

/// The problems of a client's own fields: a name, an IBAN for a debit mandate, its
/// reduction, number and price group.
fn check_client(record: &Record, errors: &mut Vec<String>) {
    if ["name", "first_name", "last_name"]
        .iter()
        .all(|f| record.text(f).trim().is_empty())
    {
        errors.push("name is mandatory (or first_name and last_name)".into());
    }
    let iban = record.text("bank_iban").to_owned();
    if !record.text("debit_mandate_reference").trim().is_empty() && !codes::is_iban(&iban) {
        errors.push(format!(
            "bank_iban must be a valid IBAN when debit_mandate_reference is set, got \"{iban}\""
        ));
    }
    if let Err(e) = Reduction::parse(record.text("reduction")) {
        errors.push(e);
    }
    if let Some(len) = record.int("number_length")
        && !(0..=limits::NUMBER_LENGTH_MAX).contains(&len)
    {
        errors.push(format!(
            "number_length must be between 0 and {}, got {len}",
            limits::NUMBER_LENGTH_MAX
        ));
    }
    if let Some(n) = record.int("number")
        && n < 1
    {
        errors.push(format!("number must be at least 1, got {n}"));
    }
    if let Some(group) = record.int("price_group")
        && !(1..=5).contains(&group)
    {
        errors.push(format!("price_group must be between 1 and 5, got {group}"));
    }
}

/// A new client's defaults for the fields the request leaves out: its number's form from
/// the settings, the others fixed.
fn set_new_defaults(record: &mut Record, changes: &Changes, defaults: &Record) {
    if !changes.has("number_pre") {
        record.set("number_pre", defaults.get("client_number_pre").cloned());
    }
    if !changes.has("number_length") {
        record.set(
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
        ("price_group", Scalar::Int(1)),
        ("consumer", Scalar::Bool(false)),
        ("dunning_run", Scalar::Bool(true)),
    ] {
        if !changes.has(field) {
            record.set(field, Some(default));
        }
    }
}
