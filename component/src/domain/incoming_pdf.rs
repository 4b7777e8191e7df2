//! A readable PDF of an incoming e-invoice. A PDF upload (Factur-X, ZUGFeRD) is its own
//! readable form and is answered as uploaded; an XML e-invoice is read again from the kept
//! file and laid out through the `pdf` capability: seller and buyer, the invoice's dates
//! and references, its lines, VAT breakdown and totals, payment data and notes, and what
//! the service's rules found in it.

use faktura_einvoice::model::{Address, Invoice, Party};
use rust_decimal::Decimal;

use super::date::Date;
use super::incomings;
use super::printing::{format_date, format_money, format_number};
use super::schema::Record;
use super::{Error, settings};
use crate::caps::{Pdf, PdfDocument, Read, Table};

/// The readable PDF of incoming `id`.
pub fn pdf(txn: &dyn Read, renderer: &dyn Pdf, account: u64, id: u64) -> Result<Vec<u8>, Error> {
    let Some((file, record)) = incomings::file(txn, account, id)? else {
        return Err(Error::NotFound(format!(
            "incoming {id} was entered by hand and has no e-invoice to show"
        )));
    };
    if record.text("format") == "pdf-cii" {
        return Ok(file);
    }
    let (read, _) = incomings::read_file(&file)?;
    let locale = settings::load_stored(txn, account)?
        .text("locale")
        .to_owned();
    let findings = incomings::extra(txn, account, id)?.findings;
    let doc = document(&read.invoice, &record, &findings, &locale);
    renderer
        .render(&doc)
        .map_err(|e| Error::Unavailable(format!("the PDF of incoming {id} could not be made: {e}")))
}

fn address_lines(a: &Address) -> Vec<String> {
    let place = [a.post_code.trim(), a.city.trim()]
        .iter()
        .filter(|s| !s.is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join(" ");
    [
        a.line1.trim(),
        a.line2.trim(),
        place.as_str(),
        a.subdivision.trim(),
        a.country.trim(),
    ]
    .iter()
    .filter(|s| !s.is_empty())
    .map(|s| s.to_string())
    .collect()
}

/// A party's name, address and identifiers, a line each.
fn party_lines(p: &Party) -> Vec<String> {
    let mut lines = vec![p.name.trim().to_owned()];
    lines.extend(address_lines(&p.address));
    for (label, value) in [
        ("VAT ID", &p.vat_id),
        ("Tax number", &p.tax_number),
        ("Registration", &p.legal_registration),
        ("Electronic address", &p.electronic_address),
    ] {
        if !value.trim().is_empty() {
            lines.push(format!("{label}: {}", value.trim()));
        }
    }
    lines.retain(|l| !l.is_empty());
    lines
}

/// The document the renderer lays out.
fn document(
    inv: &Invoice,
    record: &Record,
    findings: &[(String, String, String)],
    locale: &str,
) -> PdfDocument {
    let kind = if record.text("type") == "CREDIT_NOTE" {
        "Credit note"
    } else {
        "Invoice"
    };
    let meta = meta(inv, record, kind, locale);
    let preamble = preamble(&inv.seller);
    let rows = rows(inv, locale);
    let totals = totals(inv, locale);
    let closing = closing(inv, findings);
    let source = match record.text("filename") {
        "" => String::new(),
        name => format!(" {name}"),
    };
    PdfDocument {
        title: format!("{kind} {} from {}", inv.number, inv.seller.name.trim()),
        sender: vec![
            std::iter::once(inv.seller.name.trim().to_owned())
                .chain(address_lines(&inv.seller.address))
                .collect::<Vec<_>>()
                .join(" · "),
        ],
        recipient: party_lines(&inv.buyer),
        meta,
        preamble,
        items: Table {
            header: ["Item", "Quantity", "Unit", "Net price", "VAT", "Net amount"]
                .map(String::from)
                .to_vec(),
            rows,
            right_aligned: vec![1, 3, 4, 5],
        },
        totals,
        closing,
        footer: format!(
            "Received e-invoice{source} ({}), shown by Faktura",
            record.text("format")
        ),
        ..PdfDocument::default()
    }
}

/// The invoice's number and date, then its other dates and references that are given.
fn meta(inv: &Invoice, record: &Record, kind: &str, locale: &str) -> Vec<(String, String)> {
    let date = |d: time::Date| format_date(Date::from_time(d), locale);
    let mut meta = vec![
        (format!("{kind} number"), inv.number.clone()),
        ("Date".to_owned(), date(inv.issue_date)),
    ];
    let mut push = |label: &str, value: String| {
        if !value.trim().is_empty() {
            meta.push((label.to_owned(), value));
        }
    };
    push("Due date", inv.due_date.map(date).unwrap_or_default());
    push(
        "Delivery date",
        inv.delivery_date.map(date).unwrap_or_default(),
    );
    push("Currency", inv.currency.clone());
    push("Buyer reference", inv.buyer_reference.clone());
    push("Order reference", inv.order_reference.clone());
    if let Some((number, issued)) = &inv.preceding {
        let issued = issued.map(|d| format!(" ({})", date(d)));
        push(
            "Preceding invoice",
            format!("{number}{}", issued.unwrap_or_default()),
        );
    }
    push("Type code", inv.type_code.clone());
    push("Specification", record.text("profile").to_owned());
    meta
}

/// The seller's identifiers and contact, above the lines; its name and address are the
/// sender line.
fn preamble(seller: &Party) -> Vec<String> {
    let mut preamble = Vec::new();
    let ids = party_lines(seller)
        .split_off(1 + address_lines(&seller.address).len())
        .join(" · ");
    if !ids.is_empty() {
        preamble.push(format!("Seller: {ids}"));
    }
    let contact = &seller.contact;
    let contact = [&contact.name, &contact.phone, &contact.email]
        .iter()
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" · ");
    if !contact.is_empty() {
        preamble.push(format!("Seller's contact: {contact}"));
    }
    preamble
}

/// The invoice's lines, a row each.
fn rows(inv: &Invoice, locale: &str) -> Vec<Vec<String>> {
    let money = |d: Decimal| format_money(d, &inv.currency, locale);
    inv.lines
        .iter()
        .map(|l| {
            // The first column is the one that wraps: the line's id, name and description.
            let mut item = match l.id.trim() {
                "" => String::new(),
                id => format!("{id}: "),
            };
            item.push_str(l.name.trim());
            if !l.description.trim().is_empty() {
                item.push_str(" – ");
                item.push_str(l.description.trim());
            }
            vec![
                item,
                format_number(l.quantity, locale),
                l.unit_code.trim().to_owned(),
                money(l.net_price),
                format!("{} {}%", l.category.code(), format_number(l.rate, locale)),
                money(l.net_amount),
            ]
        })
        .collect()
}

/// The totals, from the sum of lines to the amount due, with a line for each VAT group.
fn totals(inv: &Invoice, locale: &str) -> Vec<(String, String)> {
    let money = |d: Decimal| format_money(d, &inv.currency, locale);
    let t = &inv.totals;
    let mut totals = vec![("Sum of lines".to_owned(), money(t.line_net))];
    if !t.allowances.is_zero() {
        totals.push(("Allowances".into(), money(-t.allowances)));
    }
    if !t.charges.is_zero() {
        totals.push(("Charges".into(), money(t.charges)));
    }
    totals.push(("Total without VAT".into(), money(t.without_vat)));
    for v in &inv.vat {
        totals.push((
            format!(
                "VAT {} {}% on {}",
                v.category.code(),
                format_number(v.rate, locale),
                money(v.taxable)
            ),
            money(v.tax),
        ));
    }
    totals.push(("Total VAT".into(), money(t.vat)));
    totals.push(("Total with VAT".into(), money(t.with_vat)));
    if !t.paid.is_zero() {
        totals.push(("Paid in advance".into(), money(-t.paid)));
    }
    if !t.rounding.is_zero() {
        totals.push(("Rounding".into(), money(t.rounding)));
    }
    totals.push(("Amount due".into(), money(t.payable)));
    totals
}

/// The payment data, the invoice's notes, and what the service's checks found.
fn closing(inv: &Invoice, findings: &[(String, String, String)]) -> Vec<String> {
    let mut closing = Vec::new();
    let payment = payment(inv);
    if !payment.is_empty() {
        closing.push(format!("Payment: {}", payment.join(" · ")));
    }
    closing.extend(
        inv.notes
            .iter()
            .map(|n| n.trim())
            .filter(|n| !n.is_empty())
            .map(str::to_owned),
    );
    if findings.is_empty() {
        closing.push("The service's checks found no problem in this e-invoice.".to_owned());
    } else {
        closing.push(format!(
            "The service's checks found {} problem(s):",
            findings.len()
        ));
        closing.extend(
            findings
                .iter()
                .map(|(rule, severity, message)| format!("{rule} ({severity}): {message}")),
        );
    }
    closing
}

/// The payment means, the account to pay to or debit, the reference and the terms,
/// those that are given.
fn payment(inv: &Invoice) -> Vec<String> {
    let p = &inv.payment;
    let mut payment = Vec::new();
    if !p.means_code.trim().is_empty() || !p.means_text.trim().is_empty() {
        payment.push(
            format!(
                "Payment means {} {}",
                p.means_code.trim(),
                p.means_text.trim()
            )
            .trim()
            .to_owned(),
        );
    }
    if let Some(ct) = &p.credit_transfer {
        let mut to = format!("IBAN {}", ct.iban.trim());
        if !ct.bic.trim().is_empty() {
            to.push_str(&format!(", BIC {}", ct.bic.trim()));
        }
        if !ct.account_name.trim().is_empty() {
            to.push_str(&format!(", account holder {}", ct.account_name.trim()));
        }
        payment.push(format!("Transfer to {to}"));
    }
    if let Some(dd) = &p.direct_debit {
        payment.push(format!(
            "Direct debit of IBAN {}, mandate {}, creditor {}",
            dd.debited_iban.trim(),
            dd.mandate.trim(),
            dd.creditor_id.trim()
        ));
    }
    if !p.remittance.trim().is_empty() {
        payment.push(format!("Reference {}", p.remittance.trim()));
    }
    if !inv.payment_terms.trim().is_empty() {
        payment.push(inv.payment_terms.trim().to_owned());
    }
    payment
}
