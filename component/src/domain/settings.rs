//! Account settings: one record per account holding the defaults of documents and clients
//! (currency, number ranges, texts, payment terms, company address). Unset fields read as
//! their defaults; the `*_next` fields are computed from the number ranges.

use rust_decimal::Decimal;

use super::accounts::is_email;
use super::einvoice::derive;
use super::schema::{Changes, Field, Kind, Record, Scalar, check_not_cleared};
use super::{Ctx, Error};
use super::{numbering, records};
use crate::caps::{Read, Write};
use crate::limits;
use crate::store;

/// Payment types a document may accept.
pub const PAYMENT_TYPES: &[&str] = &[
    "CREDIT_NOTE",
    "BANK_CARD",
    "BANK_TRANSFER",
    "DEBIT",
    "CASH",
    "PAYPAL",
    "CREDIT_CARD",
    "COUPON",
    "MISC",
];

pub static FIELDS: &[Field] = &[
    Field::new("currency_code", Kind::Currency).mandatory(),
    Field::new("locale", Kind::Text).mandatory(),
    Field::new("net_gross", Kind::Enum(&["NET", "GROSS"])).mandatory(),
    Field::new("invoice_number_pre", Kind::Text),
    Field::new("invoice_number_length", Kind::Integer),
    Field::new("invoice_number_next", Kind::Integer).read_only(),
    Field::new("credit_note_number_pre", Kind::Text),
    Field::new("credit_note_number_length", Kind::Integer),
    Field::new("credit_note_number_next", Kind::Integer).read_only(),
    Field::new("client_number_pre", Kind::Text),
    Field::new("client_number_length", Kind::Integer),
    Field::new("client_number_next", Kind::Integer).read_only(),
    Field::new("invoice_intro", Kind::Text),
    Field::new("invoice_note", Kind::Text),
    Field::new("invoice_label", Kind::Text),
    Field::new("invoice_filename", Kind::Text),
    Field::new("invoice_email_subject", Kind::Text),
    Field::new("invoice_email_body", Kind::Text),
    Field::new("credit_note_intro", Kind::Text),
    Field::new("credit_note_note", Kind::Text),
    Field::new("credit_note_label", Kind::Text),
    Field::new("credit_note_filename", Kind::Text),
    Field::new("credit_note_email_subject", Kind::Text),
    Field::new("credit_note_email_body", Kind::Text),
    Field::new("due_days", Kind::Integer),
    Field::new("discount_rate", Kind::Decimal),
    Field::new("discount_days", Kind::Integer),
    Field::new("payment_types", Kind::Text),
    Field::new("print_version", Kind::Bool),
    Field::new("default_email_sender", Kind::Text),
    Field::new("bcc_addresses", Kind::Text),
    Field::new("company_name", Kind::Text),
    Field::new("company_street", Kind::Text),
    Field::new("company_zip", Kind::Text),
    Field::new("company_city", Kind::Text),
    Field::new("company_country_code", Kind::Country),
    Field::new("company_vat_number", Kind::Text),
    // E-invoicing (EN 16931 business terms in README, "E-invoices").
    Field::new("company_tax_number", Kind::Text),
    Field::new("company_registration_id", Kind::Text),
    Field::new("company_contact_name", Kind::Text),
    Field::new("company_phone", Kind::Text),
    Field::new("company_email", Kind::Text),
    Field::new("company_electronic_address", Kind::Text),
    Field::new("company_bank_account_owner", Kind::Text),
    Field::new("company_bank_iban", Kind::Text),
    Field::new("company_bank_bic", Kind::Text),
    Field::new("company_bank_name", Kind::Text),
    Field::new("company_creditor_id", Kind::Text),
    Field::new("tax_exemption_reason", Kind::Text),
    Field::new("einvoice_pdf", Kind::Bool),
];

/// The value of each setting nobody has changed.
fn default_of(name: &str) -> Option<Scalar> {
    let text = |s: &str| Some(Scalar::Text(s.to_owned()));
    match name {
        "currency_code" => text("EUR"),
        "locale" => text("de_DE"),
        "net_gross" => text("NET"),
        "invoice_number_pre" => text("INV-"),
        "credit_note_number_pre" => text("CN-"),
        "invoice_number_length" | "credit_note_number_length" => Some(Scalar::Int(5)),
        "client_number_length" => Some(Scalar::Int(0)),
        "invoice_email_subject" => text("Invoice [Invoice.invoice_number]"),
        "invoice_email_body" => text(
            "Dear [Client.name],\n\nplease find attached invoice [Invoice.invoice_number] \
             of [Invoice.date].\n\nKind regards\n[Company.name]",
        ),
        "credit_note_email_subject" => text("Credit note [CreditNote.credit_note_number]"),
        "credit_note_email_body" => text(
            "Dear [Client.name],\n\nplease find attached credit note \
             [CreditNote.credit_note_number] of [CreditNote.date].\n\nKind regards\n[Company.name]",
        ),
        "due_days" => Some(Scalar::Int(14)),
        "discount_rate" => Some(Scalar::Dec(Decimal::ZERO)),
        "discount_days" => Some(Scalar::Int(0)),
        "print_version" | "einvoice_pdf" => Some(Scalar::Bool(false)),
        _ => None,
    }
}

fn key(account: u64) -> Vec<u8> {
    store::keys::singleton(account, "settings")
}

/// The stored settings over their defaults, without the computed fields.
pub fn load_stored(txn: &dyn Read, account: u64) -> Result<Record, Error> {
    let mut record = Record::default();
    for f in FIELDS {
        record.set(f.name, default_of(f.name));
    }
    if let Some(bytes) = txn.get(&key(account))? {
        let stored = records::decode_record(&bytes)?;
        record.values.extend(stored.values);
    }
    Ok(record)
}

/// The settings as the API shows them, with the next numbers of each range.
pub fn load(txn: &dyn Read, account: u64) -> Result<Record, Error> {
    let mut record = load_stored(txn, account)?;
    for range in ["invoice", "credit_note", "client"] {
        let pre = record.text(&format!("{range}_number_pre")).to_owned();
        let next = numbering::next_free(txn, account, range, &pre)?;
        record.set(&format!("{range}_number_next"), Some(Scalar::Int(next)));
    }
    Ok(record)
}

pub fn update(ctx: &Ctx, txn: &mut dyn Write, changes: &Changes) -> Result<Record, Error> {
    if !ctx.is_admin {
        return Err(Error::Forbidden(
            "only an admin user may change the settings".into(),
        ));
    }
    let mut errors = changes.errors();
    check_not_cleared(FIELDS, changes, &mut errors);
    let mut record = load_stored(txn.as_read(), ctx.account_id)?;
    changes.apply(&mut record);
    validate(&record, &mut errors);
    if !errors.is_empty() {
        return Err(Error::Invalid(errors));
    }
    txn.put(&key(ctx.account_id), &records::encode_record(&record))?;
    load(txn.as_read(), ctx.account_id)
}

fn validate(r: &Record, errors: &mut Vec<String>) {
    let in_range = |name: &str, max: i64, errors: &mut Vec<String>| {
        if let Some(v) = r.int(name)
            && !(0..=max).contains(&v)
        {
            errors.push(format!("{name} must be between 0 and {max}, got {v}"));
        }
    };
    for range in ["invoice", "credit_note", "client"] {
        in_range(
            &format!("{range}_number_length"),
            limits::NUMBER_LENGTH_MAX,
            errors,
        );
        if r.text(&format!("{range}_number_pre")).chars().count() > limits::NUMBER_PRE_CHARS_MAX {
            errors.push(format!(
                "{range}_number_pre is longer than {} characters",
                limits::NUMBER_PRE_CHARS_MAX
            ));
        }
    }
    in_range("due_days", 3650, errors);
    in_range("discount_days", 3650, errors);
    if let Some(rate) = r.get("discount_rate").and_then(Scalar::as_dec)
        && !(Decimal::ZERO..=Decimal::ONE_HUNDRED).contains(&rate)
    {
        errors.push(format!(
            "discount_rate must be between 0 and 100, got {rate}"
        ));
    }
    if let Err(e) = parse_payment_types(r.text("payment_types")) {
        errors.push(e);
    }
    let sender = r.text("default_email_sender").trim();
    if !sender.is_empty() && !is_email(sender) {
        errors.push(format!(
            "default_email_sender must be an e-mail address, got \"{sender}\""
        ));
    }
    for name in ["company_email", "company_electronic_address"] {
        let value = r.text(name).trim();
        if !value.is_empty() && !is_email(value) {
            errors.push(format!("{name} must be an e-mail address, got \"{value}\""));
        }
    }
    let iban = r.text("company_bank_iban");
    if !iban.trim().is_empty() && !derive::is_iban(iban) {
        errors.push(format!(
            "company_bank_iban must be an IBAN with valid check digits, got \"{iban}\""
        ));
    }
    let bic = r.text("company_bank_bic").trim();
    if !bic.is_empty() && !derive::is_bic(bic) {
        errors.push(format!(
            "company_bank_bic must be a BIC of 8 or 11 characters, got \"{bic}\""
        ));
    }
    for addr in r.text("bcc_addresses").split(',').map(str::trim) {
        if !addr.is_empty() && !is_email(addr) {
            errors.push(format!(
                "bcc_addresses must be e-mail addresses separated by commas, got \"{addr}\""
            ));
        }
    }
}

/// A comma-separated list of payment types, normalized to upper case.
pub fn parse_payment_types(list: &str) -> Result<Vec<&'static str>, String> {
    let mut out = Vec::new();
    for word in list.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        let found = PAYMENT_TYPES
            .iter()
            .find(|t| t.eq_ignore_ascii_case(word))
            .ok_or_else(|| {
                format!(
                    "payment_types must list values of {}, got \"{word}\"",
                    PAYMENT_TYPES.join(", ")
                )
            })?;
        out.push(*found);
    }
    Ok(out)
}
