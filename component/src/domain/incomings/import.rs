//! The import of an uploaded e-invoice (CII or UBL XML, or a Factur-X / ZUGFeRD PDF
//! carrying the XML), in two steps: `parse` reads the upload inside the component's
//! sandbox (`faktura_einvoice::read` and `::pdf`) and judges it, before the write
//! transaction, once; `import`, inside it (again on a conflict), matches or creates the
//! supplier and saves the incoming, its items, its taxes and findings, and the file byte
//! for byte.

use faktura_einvoice::limits::PdfLimits;
use faktura_einvoice::model::Profile;
use faktura_einvoice::{pdf, read, rules};

use super::super::codes;
use super::super::date::Date;
use super::super::records;
use super::super::schema::{Changes, Record, Scalar};
use super::super::suppliers;
use super::super::{Ctx, Error};
use super::comments;
use super::items::{self, INCOMING_ITEMS, dec, text};
use super::record::{Extra, extra_key, file_key};
use super::resource::INCOMINGS;
use crate::caps::Write;
use crate::store;

/// An upload read as an e-invoice, with what the service's rules found in it: what
/// `import` saves.
#[derive(Debug)]
pub struct Parsed {
    /// The uploaded file.
    pub file: Vec<u8>,
    pub read: read::Read,
    /// cii, ubl or pdf-cii.
    pub format: &'static str,
    /// Rule, severity, message.
    pub findings: Vec<(String, String, String)>,
}

/// Why an uploaded file is refused.
fn refused(message: String) -> Error {
    Error::Invalid(vec![format!("base64file: {message}")])
}

/// The upload `file` read as an e-invoice and judged; refused when it is none, or when it
/// names no invoice currency the service knows (its amounts would mean nothing).
pub fn parse(file: Vec<u8>) -> Result<Parsed, Error> {
    let (read, format) = read_file(&file)?;
    let currency = read.invoice.currency.trim();
    if currency.is_empty() {
        return Err(refused(
            "the e-invoice names no invoice currency (BT-5, InvoiceCurrencyCode or \
             DocumentCurrencyCode)"
                .into(),
        ));
    }
    if !codes::is_currency(currency) {
        return Err(refused(format!(
            "the invoice currency (BT-5) '{}' is not an ISO 4217 currency code the service knows",
            currency.chars().take(20).collect::<String>()
        )));
    }
    let findings = findings(&read);
    Ok(Parsed {
        file,
        read,
        format,
        findings,
    })
}

/// The e-invoice in a file (uploaded, or kept by an import), and the file's format.
pub fn read_file(file: &[u8]) -> Result<(read::Read, &'static str), Error> {
    let (xml, pdf_found) = match pdf::embedded_xml(file, &PdfLimits::default()) {
        Ok(found) => (found.xml, true),
        Err(pdf::PdfError::NotPdf) => {
            let text = file.trim_ascii_start();
            if !text.starts_with(b"<") && !text.starts_with(&[0xEF, 0xBB, 0xBF]) {
                return Err(refused(
                    "the file is neither XML nor PDF: upload an e-invoice as CII or UBL XML, \
                     or a Factur-X / ZUGFeRD PDF"
                        .into(),
                ));
            }
            (file.to_vec(), false)
        }
        Err(e) => {
            return Err(refused(format!(
                "the PDF carries no readable e-invoice: {e}"
            )));
        }
    };
    let read = read::read(&xml).map_err(|e| refused(format!("not a readable e-invoice: {e}")))?;
    let format = match (pdf_found, read.syntax) {
        (true, _) => "pdf-cii",
        (false, read::Syntax::Cii) => "cii",
        (false, read::Syntax::Ubl) => "ubl",
    };
    Ok((read, format))
}

/// What the service's own rules find in an e-invoice (no XRechnung rules: it may follow
/// any EN 16931 profile), and its codes outside the code lists of EN 16931 (BR-CL).
fn findings(read: &read::Read) -> Vec<(String, String, String)> {
    rules::check(&read.invoice, Profile::FacturX, false)
        .into_iter()
        .filter(|v| !v.field.starts_with("settings.") || v.rule.starts_with("BR-"))
        .chain(rules::code_lists(&read.unlisted))
        .map(|v| (v.rule, "error".to_owned(), v.message))
        .collect()
}

/// INVOICE or CREDIT_NOTE from the document type code (BT-3, UNTDID 1001): the codes of
/// credit notes, every other an invoice (commercial, corrected, prepayment, self-billed).
fn kind_of(type_code: &str) -> &'static str {
    match type_code.trim() {
        "81" | "83" | "261" | "262" | "296" | "308" | "381" | "396" | "420" | "458" | "532" => {
            "CREDIT_NOTE"
        }
        _ => "INVOICE",
    }
}

/// Imports a parsed upload: its supplier matched or created, the incoming, its items,
/// taxes, findings and the file itself saved. Refused (nothing saved) when the supplier
/// already has an incoming of that number (409).
pub fn import(
    ctx: &Ctx,
    txn: &mut dyn Write,
    parsed: &Parsed,
    filename: &str,
    label: Option<&str>,
    note: Option<&str>,
) -> Result<Record, Error> {
    let (format, file) = (parsed.format, &parsed.file);
    let inv = &parsed.read.invoice;
    let supplier = suppliers::match_or_create(ctx, txn, &inv.seller)?;
    let changes = incoming_of(parsed, supplier, filename, label, note);
    let record = records::create(ctx, txn, &INCOMINGS, &changes)?;
    let id = record.id();
    for line in &inv.lines {
        records::create(ctx, txn, &INCOMING_ITEMS, &items::changes(id, line))?;
    }
    let extra = Extra {
        taxes: inv
            .vat
            .iter()
            .map(|v| {
                (
                    v.category.code().to_owned(),
                    v.rate.normalize().to_string(),
                    v.taxable.normalize().to_string(),
                    v.tax.normalize().to_string(),
                )
            })
            .collect(),
        findings: parsed.findings.clone(),
    };
    txn.put(&extra_key(ctx.account_id, id), &store::encode(&extra))?;
    txn.put(&file_key(ctx.account_id, id), file)?;
    let name = match filename.trim() {
        "" => "an e-invoice",
        name => name,
    };
    comments::write(
        ctx,
        txn,
        id,
        "IMPORT",
        &format!("Imported from {name} ({format})"),
    )?;
    Ok(record)
}

/// The fields of the incoming a parsed upload makes, of `supplier`: what the e-invoice
/// says, the upload's `label` and `note` (else the e-invoice's notes), and the file's
/// name, size and format.
fn incoming_of(
    parsed: &Parsed,
    supplier: u64,
    filename: &str,
    label: Option<&str>,
    note: Option<&str>,
) -> Changes {
    let (read, format, file) = (&parsed.read, parsed.format, &parsed.file);
    let inv = &read.invoice;
    let mut changes = Changes::default();
    let kind = kind_of(&inv.type_code);
    let t = &inv.totals;
    let mut set = |name: &'static str, v: Option<Option<Scalar>>| {
        if let Some(v) = v {
            changes.values.push((name, v));
        }
    };
    set("supplier_id", Some(Some(Scalar::Int(supplier as i64))));
    set("number", text(&inv.number));
    set("type", text(kind));
    let date = |d| Scalar::Date(Date::from_time(d));
    set("date", Some(Some(date(inv.issue_date))));
    set("due_date", inv.due_date.map(|d| Some(date(d))));
    set("supply_date", inv.delivery_date.map(|d| Some(date(d))));
    set("currency_code", text(&inv.currency));
    set("total_net", dec(t.without_vat));
    set("total_tax", dec(t.vat));
    set("total_gross", dec(t.with_vat));
    set("prepaid_amount", dec(t.paid));
    set("payable_amount", dec(t.payable));
    set("label", label.and_then(text));
    let notes = inv.notes.join("\n");
    set("note", note.and_then(text).or_else(|| text(&notes)));
    set("buyer_reference", text(&inv.buyer_reference));
    set("order_reference", text(&inv.order_reference));
    let iban = inv
        .payment
        .credit_transfer
        .as_ref()
        .map(|c| c.iban.clone())
        .unwrap_or_default();
    set("payment_iban", text(&iban));
    set("format", text(format));
    set("profile", text(&read.specification));
    set("filename", text(filename));
    set("filesize", Some(Some(Scalar::Int(file.len() as i64))));
    changes
}

#[cfg(test)]
mod tests {
    use super::kind_of;

    #[test]
    fn credit_note_type_codes_make_credit_notes() {
        for code in ["81", "83", "381", "396", " 381 "] {
            assert_eq!(kind_of(code), "CREDIT_NOTE", "{code}");
        }
        for code in ["380", "384", "386", "389", "751", ""] {
            assert_eq!(kind_of(code), "INVOICE", "{code}");
        }
    }
}
