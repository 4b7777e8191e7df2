//! Incoming invoices: e-invoices received from suppliers, imported from the uploaded file
//! (CII or UBL XML, or a Factur-X / ZUGFeRD PDF carrying the XML) or entered by hand. The
//! file is parsed here, inside the component's sandbox (`faktura_einvoice::read` and
//! `::pdf`), kept byte for byte, and its lines become `incoming-items`. What the service's
//! own rules find in it is kept as the incoming's `validation`.

use faktura_einvoice::limits::PdfLimits;
use faktura_einvoice::model::{Category, Invoice, Profile};
use faktura_einvoice::{pdf, read, rules};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use super::date::Date;
use super::grouping::Grouper;
use super::records::{self, Draft, Filter, Resource, Rules};
use super::schema::{Changes, Field, Kind, Record, Scalar};
use super::suppliers::{self, SUPPLIERS};
use super::{Ctx, Error};
use crate::caps::{Read, Write};
use crate::store::{self, keys};

static FIELDS: &[Field] = &[
    Field::new("id", Kind::Integer)
        .read_only()
        .doc("Id of the incoming invoice (read only; assigned on create)."),
    Field::new("created", Kind::DateTime)
        .read_only()
        .doc("When the incoming was imported or entered (read only)."),
    Field::new("updated", Kind::DateTime)
        .read_only()
        .doc("When the incoming last changed, also by a payment (read only)."),
    Field::new("supplier_id", Kind::Integer).mandatory().doc(
        "Id of the supplier that issued the invoice; an import matches or creates it. Changeable \
         also on imported incomings.",
    ),
    Field::new("number", Kind::Text).mandatory().doc(
        "The supplier's invoice number (BT-1), unique per supplier: a second incoming with it is \
         refused (409); changes only on incomings entered by hand.",
    ),
    Field::new("type", Kind::Enum(&["INVOICE", "CREDIT_NOTE"])).doc(
        "INVOICE or CREDIT_NOTE; an import takes it from the document type code (BT-3), and it \
         changes only on incomings entered by hand. Default: INVOICE.",
    ),
    Field::new("date", Kind::Date)
        .mandatory()
        .doc("Issue date (BT-2); changes only on incomings entered by hand."),
    Field::new("due_date", Kind::Date).doc(
        "Payment due date (BT-9); an unpaid incoming past it is OVERDUE. Changeable also on \
         imported incomings.",
    ),
    Field::new("supply_date", Kind::Date)
        .doc("Actual delivery date (BT-72); changes only on incomings entered by hand."),
    Field::new("currency_code", Kind::Currency).doc(
        "Invoice currency (BT-5); an import leaves it empty when the file names a currency the \
         service does not know. Changes only on incomings entered by hand.",
    ),
    Field::new("total_net", Kind::Decimal)
        .doc("Sum of the invoice without VAT (BT-109); changes only on incomings entered by hand."),
    Field::new("total_tax", Kind::Decimal)
        .doc("Total VAT amount (BT-110); changes only on incomings entered by hand."),
    Field::new("total_gross", Kind::Decimal)
        .doc("Total with VAT (BT-112); changes only on incomings entered by hand."),
    Field::new("prepaid_amount", Kind::Decimal)
        .doc("Amount paid in advance (BT-113); changes only on incomings entered by hand."),
    Field::new("payable_amount", Kind::Decimal).doc(
        "Amount due for payment (BT-115); open_amount and status are measured against it; changes \
         only on incomings entered by hand.",
    ),
    Field::new("paid_amount", Kind::Decimal).read_only().doc(
        "Sum of the incoming's payments, or at least payable_amount while a payment marks it as \
         paid (read only; computed).",
    ),
    Field::new("open_amount", Kind::Decimal)
        .read_only()
        .doc("payable_amount minus paid_amount, never below 0 (read only; computed)."),
    Field::new("status", Kind::Text).read_only().doc(
        "PAID once open_amount is 0 with a payable_amount above 0, else OVERDUE past due_date, \
         else OPEN; evaluated when read (read only; computed).",
    ),
    Field::new("label", Kind::Text)
        .doc("The account's own label for the incoming. Changeable also on imported incomings."),
    Field::new("note", Kind::Text).doc(
        "Notes; an import takes the request's note, else the invoice's notes (BT-22). Changeable \
         also on imported incomings.",
    ),
    Field::new("buyer_reference", Kind::Text).doc(
        "Buyer reference (BT-10) the supplier wrote, e.g. the account's Leitweg-ID; changes only \
         on incomings entered by hand.",
    ),
    Field::new("order_reference", Kind::Text)
        .doc("Purchase order reference (BT-13); changes only on incomings entered by hand."),
    Field::new("payment_iban", Kind::Text).doc(
        "IBAN the supplier asks to be paid to (BT-84); changes only on incomings entered by hand.",
    ),
    Field::new("format", Kind::Text).read_only().doc(
        "How the incoming came: cii or ubl (an XML file), pdf-cii (a Factur-X / ZUGFeRD PDF) or \
         manual (entered by hand) (read only).",
    ),
    Field::new("profile", Kind::Text)
        .read_only()
        .doc("Specification identifier (BT-24) as the file gives it (read only)."),
    Field::new("filename", Kind::Text)
        .read_only()
        .doc("Name of the uploaded file, as the import request gave it (read only)."),
    Field::new("filesize", Kind::Integer)
        .read_only()
        .doc("Size of the uploaded file in bytes (read only)."),
];

/// Its list filters are `http::incomings::filtered`'s: the status depends on the day.
pub static INCOMINGS: Resource = Resource::new("incomings", "incoming", FIELDS, &IncomingRules)
    .indexed(&["number"])
    .emits("incoming");

static ITEM_FIELDS: &[Field] = &[
    Field::new("id", Kind::Integer)
        .read_only()
        .doc("Id of the line (read only)."),
    Field::new("incoming_id", Kind::Integer)
        .read_only()
        .doc("Id of the incoming the line belongs to (read only)."),
    Field::new("line_id", Kind::Text)
        .read_only()
        .doc("Invoice line identifier (BT-126) (read only; from the file)."),
    Field::new("name", Kind::Text)
        .read_only()
        .doc("Item name (BT-153) (read only; from the file)."),
    Field::new("description", Kind::Text)
        .read_only()
        .doc("Item description (BT-154) (read only; from the file)."),
    Field::new("quantity", Kind::Decimal)
        .read_only()
        .doc("Invoiced quantity (BT-129) (read only; from the file)."),
    Field::new("unit_code", Kind::Text)
        .read_only()
        .doc("Unit of measure code (BT-130) (read only; from the file)."),
    Field::new("net_price", Kind::Decimal)
        .read_only()
        .doc("Item net price (BT-146) (read only; from the file)."),
    Field::new("net_amount", Kind::Decimal)
        .read_only()
        .doc("Line net amount (BT-131) (read only; from the file)."),
    Field::new("tax_category", Kind::Text)
        .read_only()
        .doc("VAT category code of the line (BT-151) (read only; from the file)."),
    Field::new("tax_rate", Kind::Decimal).read_only().doc(
        "VAT rate of the line in percent (BT-152); absent for category O (read only; from the \
         file).",
    ),
];

/// The lines of imported e-invoices; made by the import only.
pub static INCOMING_ITEMS: Resource = Resource::new(
    "incoming-items",
    "incoming item",
    ITEM_FIELDS,
    &records::Plain,
)
.filtered(&[Filter::exact("incoming_id", "incoming_id")])
.indexed(&["incoming_id"])
.emits("incoming_item");

/// What an incoming holds besides its fields: its VAT breakdown and what the service's
/// rules found in it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Extra {
    /// Category, rate, taxable amount, tax amount (as written on the wire).
    pub taxes: Vec<(String, String, String, String)>,
    /// Rule, severity, message.
    pub findings: Vec<(String, String, String)>,
}

/// The fields of an imported incoming that an update may change.
const IMPORTED_CHANGEABLE: [&str; 4] = ["label", "note", "due_date", "supplier_id"];

struct IncomingRules;

impl Rules for IncomingRules {
    fn prepare(&self, d: Draft<'_>) -> Result<(), Error> {
        let supplier = d.record.int("supplier_id").unwrap_or(0);
        if supplier < 1
            || !records::exists(
                d.txn.as_read(),
                &SUPPLIERS,
                d.ctx.account_id,
                supplier as u64,
            )?
        {
            d.errors
                .push(format!("supplier_id {supplier} does not exist"));
            return Ok(());
        }
        if d.old.is_none() {
            if d.record.get("format").is_none() {
                d.record.set("format", Some(Scalar::Text("manual".into())));
            }
            if d.record.get("type").is_none() {
                d.record.set("type", Some(Scalar::Text("INVOICE".into())));
            }
            let number = d.record.text("number").to_owned();
            if let Some(existing) =
                find_duplicate(d.txn.as_read(), d.ctx.account_id, supplier as u64, &number)?
            {
                return Err(Error::Conflict(format!(
                    "incoming {existing} already holds number {number} of supplier {supplier}"
                )));
            }
            d.txn.put(
                &keys::supplier_incoming(d.ctx.account_id, supplier as u64, d.record.id()),
                &[],
            )?;
        } else if let Some(old) = d.old {
            // An imported incoming says what its file says: only what the file does not
            // hold (label, note, the due date it is paid by, a better supplier match)
            // changes.
            if old.text("format") != "manual" {
                for (name, _) in &d.changes.values {
                    if !IMPORTED_CHANGEABLE.contains(name) && old.get(name) != d.record.get(name) {
                        d.errors.push(format!(
                            "{name} comes from the imported e-invoice and cannot be changed"
                        ));
                    }
                }
            }
            let number = d.record.text("number").trim().to_owned();
            let old_supplier = old.int("supplier_id").unwrap_or(0);
            if (old_supplier != supplier || old.text("number").trim() != number)
                && let Some(existing) =
                    find_duplicate(d.txn.as_read(), d.ctx.account_id, supplier as u64, &number)?
                && existing != d.record.id()
            {
                return Err(Error::Conflict(format!(
                    "incoming {existing} already holds number {number} of supplier {supplier}"
                )));
            }
            if old_supplier != supplier && d.errors.is_empty() {
                // The supplier's index follows a changed supplier.
                let (account, id) = (d.ctx.account_id, d.record.id());
                d.txn
                    .delete(&keys::supplier_incoming(account, old_supplier as u64, id))?;
                d.txn
                    .put(&keys::supplier_incoming(account, supplier as u64, id), &[])?;
            }
        }
        Ok(())
    }

    fn before_delete(&self, ctx: &Ctx, txn: &mut dyn Write, record: &Record) -> Result<(), Error> {
        let (account, id) = (ctx.account_id, record.id());
        txn.delete(&supplier_entry(account, record))?;
        txn.delete(&file_key(account, id))?;
        txn.delete(&extra_key(account, id))?;
        super::property_values::remove_of_owner(
            ctx,
            txn,
            &super::property_values::INCOMING_PROPERTY_VALUES,
            id,
        )?;
        for res in [&INCOMING_ITEMS, &INCOMING_PAYMENTS, &INCOMING_COMMENTS] {
            for child in children(txn.as_read(), res, account, id)? {
                records::remove(ctx, txn, res, &child)?;
            }
        }
        Ok(())
    }
}

/// The entry of an incoming in its supplier's index.
pub fn supplier_entry(account: u64, record: &Record) -> Vec<u8> {
    let supplier = record.int("supplier_id").unwrap_or(0) as u64;
    keys::supplier_incoming(account, supplier, record.id())
}

fn file_key(account: u64, id: u64) -> Vec<u8> {
    keys::file(account, INCOMINGS.collection, "file", id)
}

fn extra_key(account: u64, id: u64) -> Vec<u8> {
    keys::file(account, INCOMINGS.collection, "extra", id)
}

/// The incoming of `supplier` with `number`, if one exists (found through the number's
/// index, so that a supplier's thousandth import reads no more than its first).
fn find_duplicate(
    txn: &dyn Read,
    account: u64,
    supplier: u64,
    number: &str,
) -> Result<Option<u64>, Error> {
    Ok(records::find(txn, &INCOMINGS, account, "number", number)?
        .into_iter()
        .find(|r| {
            r.int("supplier_id") == Some(supplier as i64)
                && r.text("number").trim() == number.trim()
        })
        .map(|r| r.id()))
}

/// The records of `res` (items, payments, comments, property values) that belong to an
/// incoming, read through their `incoming_id` index.
pub fn children(
    txn: &dyn Read,
    res: &Resource,
    account: u64,
    incoming: u64,
) -> Result<Vec<Record>, Error> {
    records::children(txn, res, account, "incoming_id", incoming)
}

/// An incoming's child names an incoming of the account.
fn check_incoming(d: &mut Draft<'_>) -> Result<(), Error> {
    let incoming = d.record.int("incoming_id").unwrap_or(0);
    if incoming < 1
        || !records::exists(
            d.txn.as_read(),
            &INCOMINGS,
            d.ctx.account_id,
            incoming as u64,
        )?
    {
        d.errors
            .push(format!("incoming_id {incoming} does not exist"));
    }
    Ok(())
}

/// The taxes and findings of an incoming.
pub fn extra(txn: &dyn Read, account: u64, id: u64) -> Result<Extra, Error> {
    match txn.get(&extra_key(account, id))? {
        Some(bytes) => Ok(store::decode_plain(&bytes)?),
        None => Ok(Extra::default()),
    }
}

/// The uploaded file: its bytes, name and MIME type.
pub fn file(txn: &dyn Read, account: u64, id: u64) -> Result<Option<(Vec<u8>, Record)>, Error> {
    let record = records::load(txn, &INCOMINGS, account, id)?;
    Ok(txn
        .get(&file_key(account, id))?
        .map(|bytes| (bytes, record)))
}

/// The fields the API shows that depend on the day: status and open amount.
pub fn shown(mut r: Record, today: Date) -> Record {
    let payable = r
        .get("payable_amount")
        .and_then(Scalar::as_dec)
        .unwrap_or_default();
    let paid = r
        .get("paid_amount")
        .and_then(Scalar::as_dec)
        .unwrap_or_default();
    let open = (payable - paid).max(Decimal::ZERO);
    let due = r.get("due_date").and_then(|v| match v {
        Scalar::Date(d) => Some(*d),
        _ => None,
    });
    let status = if open.is_zero() && payable > Decimal::ZERO {
        "PAID"
    } else if due.is_some_and(|d| d < today) {
        "OVERDUE"
    } else {
        "OPEN"
    };
    r.set("paid_amount", Some(Scalar::Dec(paid)));
    r.set("open_amount", Some(Scalar::Dec(open)));
    r.set("status", Some(Scalar::Text(status.into())));
    r
}

/// Why an uploaded file is refused.
fn refused(message: String) -> Error {
    Error::Invalid(vec![format!("base64file: {message}")])
}

/// The e-invoice in an uploaded file, and the file's format.
pub fn parse(file: &[u8]) -> Result<(read::Read, &'static str), Error> {
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

fn dec(d: Decimal) -> Option<Option<Scalar>> {
    Some(Some(Scalar::Dec(d)))
}

fn text(s: &str) -> Option<Option<Scalar>> {
    let s = s.trim();
    (!s.is_empty()).then(|| Some(Scalar::Text(s.to_owned())))
}

/// What the service's own rules find in an e-invoice (no XRechnung rules: it may follow
/// any EN 16931 profile).
fn findings(inv: &Invoice) -> Vec<(String, String, String)> {
    rules::check(inv, Profile::FacturX, false)
        .into_iter()
        .filter(|v| !v.field.starts_with("settings.") || v.rule.starts_with("BR-"))
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

/// Imports an uploaded e-invoice: parsed, its supplier matched or created, the incoming,
/// its items, taxes, findings and the file itself saved. Refused (nothing saved) when the
/// file is no e-invoice, or the supplier already has an incoming of that number (409).
pub fn import(
    ctx: &Ctx,
    txn: &mut dyn Write,
    file: &[u8],
    filename: &str,
    label: Option<&str>,
    note: Option<&str>,
) -> Result<Record, Error> {
    let (read, format) = parse(file)?;
    let inv = &read.invoice;
    let supplier = suppliers::match_or_create(ctx, txn, &inv.seller)?;
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
    // A currency the API does not know is kept out rather than refusing the invoice.
    changes.values.retain(|(name, v)| {
        *name != "currency_code"
            || v.as_ref().is_some_and(|c| {
                super::codes::CURRENCIES
                    .binary_search(&c.to_wire().as_str())
                    .is_ok()
            })
    });
    let record = records::create(ctx, txn, &INCOMINGS, &changes)?;
    let id = record.id();
    for line in &inv.lines {
        let mut c = Changes::default();
        for (name, v) in [
            ("incoming_id", Some(Some(Scalar::Int(id as i64)))),
            ("line_id", text(&line.id)),
            ("name", text(&line.name)),
            ("description", text(&line.description)),
            ("quantity", dec(line.quantity)),
            ("unit_code", text(&line.unit_code)),
            ("net_price", dec(line.net_price)),
            ("net_amount", dec(line.net_amount)),
            ("tax_category", text(line.category.code())),
            // Not subject to VAT: the line has no rate (BR-O-05).
            (
                "tax_rate",
                (line.category != Category::O).then_some(Some(Scalar::Dec(line.rate))),
            ),
        ] {
            if let Some(v) = v {
                c.values.push((name, v));
            }
        }
        records::create(ctx, txn, &INCOMING_ITEMS, &c)?;
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
        findings: findings(inv),
    };
    txn.put(&extra_key(ctx.account_id, id), &store::encode(&extra))?;
    txn.put(&file_key(ctx.account_id, id), file)?;
    let name = match filename.trim() {
        "" => "an e-invoice",
        name => name,
    };
    system_comment(
        ctx,
        txn,
        id,
        "IMPORT",
        &format!("Imported from {name} ({format})"),
    )?;
    Ok(record)
}

static PAYMENT_FIELDS: &[Field] = &[
    Field::new("id", Kind::Integer)
        .read_only()
        .doc("Id of the payment (read only; assigned on create)."),
    Field::new("created", Kind::DateTime)
        .read_only()
        .doc("When the payment was booked (read only)."),
    Field::new("incoming_id", Kind::Integer)
        .mandatory()
        .doc("Id of the incoming paid."),
    Field::new("date", Kind::Date).doc("Date of the payment. Default: today."),
    Field::new("amount", Kind::Decimal)
        .mandatory()
        .positive()
        .doc("Amount paid; greater than 0. It adds to the incoming's paid_amount."),
    Field::new("comment", Kind::Text).doc("Note on the payment."),
    Field::new("payment_type", Kind::Text)
        .doc("How the payment was made, as free text (e.g. BANK_TRANSFER)."),
    Field::new("mark_incoming_as_paid", Kind::Bool).doc(
        "1 counts the incoming as paid in full (paid_amount at least payable_amount) while this \
         payment exists. Default: 0.",
    ),
];

/// Payments of incoming invoices; each one sets the incoming's paid amount (and so its
/// status) in the same transaction.
pub static INCOMING_PAYMENTS: Resource = Resource::new(
    "incoming-payments",
    "incoming payment",
    PAYMENT_FIELDS,
    &PaymentRules,
)
.filtered(&[Filter::exact("incoming_id", "incoming_id")])
.indexed(&["incoming_id"])
.emits("incoming_payment");

struct PaymentRules;

impl Rules for PaymentRules {
    fn prepare(&self, mut d: Draft<'_>) -> Result<(), Error> {
        check_incoming(&mut d)?;
        if !d.errors.is_empty() {
            return Ok(());
        }
        if d.record.get("date").is_none() {
            d.record.set("date", Some(Scalar::Date(d.ctx.today())));
        }
        Ok(())
    }

    fn after_save(&self, s: records::Saved<'_>) -> Result<(), Error> {
        let incoming = s.record.int("incoming_id").unwrap_or(0) as u64;
        let amount = s
            .record
            .get("amount")
            .and_then(Scalar::as_dec)
            .unwrap_or_default();
        settle(s.ctx, s.txn, incoming, None, ("PAYMENT", "booked", amount))
    }

    fn before_delete(&self, ctx: &Ctx, txn: &mut dyn Write, record: &Record) -> Result<(), Error> {
        let incoming = record.int("incoming_id").unwrap_or(0) as u64;
        let amount = record
            .get("amount")
            .and_then(Scalar::as_dec)
            .unwrap_or_default();
        settle(
            ctx,
            txn,
            incoming,
            Some(record.id()),
            ("DELETE_PAYMENT", "deleted", amount),
        )
    }
}

/// Sets an incoming's paid amount from its payments (without `leaving`, which is being
/// deleted): their sum, or all of it when one is marked as settling it; writes the
/// payment's comment, and a STATUS comment when the status moved.
fn settle(
    ctx: &Ctx,
    txn: &mut dyn Write,
    incoming: u64,
    leaving: Option<u64>,
    (actionkey, verb, amount): (&str, &str, Decimal),
) -> Result<(), Error> {
    let account = ctx.account_id;
    let stored = records::load(txn.as_read(), &INCOMINGS, account, incoming)?;
    let mut record = stored.clone();
    let today = ctx.today();
    let before = shown(stored.clone(), today).text("status").to_owned();
    let list: Vec<Record> = children(txn.as_read(), &INCOMING_PAYMENTS, account, incoming)?
        .into_iter()
        .filter(|p| Some(p.id()) != leaving)
        .collect();
    let payable = record
        .get("payable_amount")
        .and_then(Scalar::as_dec)
        .unwrap_or_default();
    let sum: Decimal = list
        .iter()
        .filter_map(|p| p.get("amount").and_then(Scalar::as_dec))
        .sum();
    let marked = list.iter().any(|p| p.bool("mark_incoming_as_paid"));
    let paid = if marked { sum.max(payable) } else { sum };
    record.set("paid_amount", Some(Scalar::Dec(paid)));
    record.set("updated", Some(Scalar::DateTime(ctx.now)));
    records::save(
        ctx,
        txn,
        &INCOMINGS,
        &record,
        Some(&stored),
        &Changes::default(),
    )?;
    let currency = record.text("currency_code").to_owned();
    system_comment(
        ctx,
        txn,
        incoming,
        actionkey,
        &format!("Payment of {} {currency} {verb}", amount.normalize()),
    )?;
    let after = shown(record, today).text("status").to_owned();
    if after != before {
        system_comment(
            ctx,
            txn,
            incoming,
            "STATUS",
            &format!("Status {before} → {after}"),
        )?;
    }
    Ok(())
}

static COMMENT_FIELDS: &[Field] = &[
    Field::new("id", Kind::Integer)
        .read_only()
        .doc("Id of the comment (read only; assigned on create)."),
    Field::new("created", Kind::DateTime)
        .read_only()
        .doc("When the comment was written (read only)."),
    Field::new("incoming_id", Kind::Integer)
        .mandatory()
        .doc("Id of the incoming the comment belongs to."),
    Field::new("user_id", Kind::Integer)
        .read_only()
        .doc("Id of the user who wrote the comment or whose request wrote it (read only)."),
    Field::new("comment", Kind::Text)
        .mandatory()
        .doc("Text of the comment; not empty."),
    Field::new("actionkey", Kind::Text).read_only().doc(
        "IMPORT, PAYMENT, DELETE_PAYMENT or STATUS on the comments the service writes; empty on a \
         user's comment (read only).",
    ),
];

/// Comments on incoming invoices: the users', and the service's own on imports, payments
/// and status changes (actionkeys IMPORT, PAYMENT, DELETE_PAYMENT, STATUS, as invoices).
pub static INCOMING_COMMENTS: Resource = Resource::new(
    "incoming-comments",
    "incoming comment",
    COMMENT_FIELDS,
    &CommentRules,
)
.filtered(&[Filter::exact("incoming_id", "incoming_id")])
.indexed(&["incoming_id"])
.emits("incoming_comment");

struct CommentRules;

impl Rules for CommentRules {
    fn prepare(&self, mut d: Draft<'_>) -> Result<(), Error> {
        check_incoming(&mut d)?;
        if d.record.text("comment").trim().is_empty() {
            d.errors.push("comment must not be empty".into());
        }
        d.record
            .set("user_id", Some(Scalar::Int(d.ctx.user_id as i64)));
        Ok(())
    }
}

/// Writes a comment of the service on an incoming.
fn system_comment(
    ctx: &Ctx,
    txn: &mut dyn Write,
    incoming: u64,
    actionkey: &str,
    text: &str,
) -> Result<(), Error> {
    let mut c = Changes::default();
    c.values
        .push(("incoming_id", Some(Scalar::Int(incoming as i64))));
    c.values
        .push(("comment", Some(Scalar::Text(text.to_owned()))));
    // Read-only on the wire, set by the service.
    c.values
        .push(("actionkey", Some(Scalar::Text(actionkey.to_owned()))));
    records::create(ctx, txn, &INCOMING_COMMENTS, &c).map(drop)
}

/// A `group_by` key of incomings: as for invoices, with the supplier in the client's place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupKey {
    Supplier,
    Status,
    Day,
    Week,
    Month,
    Year,
}

impl GroupKey {
    pub fn parse(s: &str) -> Option<GroupKey> {
        Some(match s.trim().to_ascii_lowercase().as_str() {
            "supplier" => GroupKey::Supplier,
            "status" => GroupKey::Status,
            "day" => GroupKey::Day,
            "week" => GroupKey::Week,
            "month" => GroupKey::Month,
            "year" => GroupKey::Year,
            _ => return None,
        })
    }

    /// The element name and value of this key for a shown incoming.
    fn value(self, r: &Record) -> (&'static str, Scalar) {
        let d = match r.get("date") {
            Some(Scalar::Date(d)) => *d,
            _ => Date::from_julian(0),
        };
        match self {
            GroupKey::Supplier => (
                "supplier_id",
                Scalar::Int(r.int("supplier_id").unwrap_or(0)),
            ),
            GroupKey::Status => ("status", Scalar::Text(r.text("status").to_owned())),
            GroupKey::Day => ("day", Scalar::Date(d)),
            GroupKey::Week => {
                let (y, w) = d.iso_week();
                ("week", Scalar::Text(format!("{y}-W{w:02}")))
            }
            GroupKey::Month => (
                "month",
                Scalar::Text(format!("{:04}-{:02}", d.year(), d.month())),
            ),
            GroupKey::Year => ("year", Scalar::Int(d.year() as i64)),
        }
    }
}

/// One group of incomings: its key values and sums.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Group {
    pub keys: Vec<(&'static str, Scalar)>,
    pub total_net: Decimal,
    pub total_tax: Decimal,
    pub total_gross: Decimal,
    pub open_amount: Decimal,
    pub count: u64,
}

/// The groups of shown incomings per currency (in currency order), each list ordered by
/// its key values; `keys` in the order of aggregation.
pub fn group(incomings: &[Record], keys: &[GroupKey]) -> Vec<(String, Vec<Group>)> {
    let mut groups: Grouper<Group> = Grouper::default();
    let amount = |r: &Record, name: &str| r.get(name).and_then(Scalar::as_dec).unwrap_or_default();
    for r in incomings {
        let values = keys.iter().map(|k| k.value(r)).collect();
        let g = groups.sums(r.text("currency_code"), values);
        g.total_net += amount(r, "total_net");
        g.total_tax += amount(r, "total_tax");
        g.total_gross += amount(r, "total_gross");
        g.open_amount += amount(r, "open_amount");
        g.count += 1;
    }
    groups
        .finish()
        .into_iter()
        .map(|(currency, list)| {
            let list = list
                .into_iter()
                .map(|(keys, g)| Group { keys, ..g })
                .collect();
            (currency, list)
        })
        .collect()
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
