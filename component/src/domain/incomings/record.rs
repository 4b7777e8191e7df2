//! What an incoming invoice is: its wire fields, its stored shape (`STORED`), the keys of
//! what it keeps beside its record (the uploaded file, its taxes and findings: `Extra`)
//! and what the API shows of it on a given day (`shown`: status and open amount). A leaf:
//! its rules on create, update and delete are `resource`'s.

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use super::super::Error;
use super::super::date::Date;
use super::super::records::{self, Draft, Resource, Rules};
use super::super::schema::{Field, Kind, Record, Scalar};
use crate::caps::Read;
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
        "Invoice currency (BT-5); an import refuses a file that names none, or one the service \
         does not know (400). Changes only on incomings entered by hand.",
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
        "Amount due for payment (BT-115); open_amount and status are measured against it, or \
         against total_gross while it is empty (an incoming entered by hand without it); changes \
         only on incomings entered by hand.",
    ),
    Field::new("paid_amount", Kind::Decimal).read_only().doc(
        "Sum of the incoming's payments, or at least the amount due (payable_amount, else \
         total_gross) while a payment marks it as paid (read only; computed).",
    ),
    Field::new("open_amount", Kind::Decimal).read_only().doc(
        "The amount due (payable_amount, else total_gross) minus paid_amount, never below 0 \
         (read only; computed).",
    ),
    Field::new("status", Kind::Text).read_only().doc(
        "PAID once open_amount is 0 with an amount due (payable_amount, else total_gross) above \
         0, else OVERDUE past due_date, else OPEN; evaluated when read (read only; computed).",
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

/// The incoming resource with `rules`: the one description of its collection, fields and
/// indexes, for `resource::INCOMINGS` and `STORED` alike.
pub const fn resource(rules: &'static dyn Rules) -> Resource {
    Resource::new("incomings", "incoming", FIELDS, rules).indexed(&["number"])
}

/// The incoming as stored, without the rules of its create, update and delete
/// (`resource::INCOMINGS`, made by the same `resource`): what its parts load and save it
/// through, so that they do not depend on the module that deletes them with it.
pub static STORED: Resource = resource(&records::Plain);

/// What an incoming holds besides its fields: its VAT breakdown and what the service's
/// rules found in it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Extra {
    /// Category, rate, taxable amount, tax amount (as written on the wire).
    pub taxes: Vec<(String, String, String, String)>,
    /// Rule, severity, message.
    pub findings: Vec<(String, String, String)>,
}

/// The entry of an incoming in its supplier's index.
pub fn supplier_entry(account: u64, record: &Record) -> Vec<u8> {
    let supplier = record.int("supplier_id").unwrap_or(0) as u64;
    keys::supplier_incoming(account, supplier, record.id())
}

/// The key of an incoming's uploaded file.
pub fn file_key(account: u64, id: u64) -> Vec<u8> {
    keys::file(account, STORED.collection, "file", id)
}

/// The key of an incoming's `Extra`.
pub fn extra_key(account: u64, id: u64) -> Vec<u8> {
    keys::file(account, STORED.collection, "extra", id)
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

/// An incoming's part names an incoming of the account.
pub fn check_parent(d: &mut Draft<'_>) -> Result<(), Error> {
    let incoming = d.record.int("incoming_id").unwrap_or(0);
    if incoming < 1
        || !records::exists(d.txn.as_read(), &STORED, d.ctx.account_id, incoming as u64)?
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
    let record = records::load(txn, &STORED, account, id)?;
    Ok(txn
        .get(&file_key(account, id))?
        .map(|bytes| (bytes, record)))
}

/// The amount an incoming's payments are measured against: its payable amount, or its
/// total with VAT while it has none (entered by hand without it), so that it can be paid.
pub fn due(r: &Record) -> Decimal {
    r.get("payable_amount")
        .or_else(|| r.get("total_gross"))
        .and_then(Scalar::as_dec)
        .unwrap_or_default()
}

/// The fields the API shows that depend on the day: status and open amount.
pub fn shown(mut r: Record, today: Date) -> Record {
    let payable = due(&r);
    let paid = r
        .get("paid_amount")
        .and_then(Scalar::as_dec)
        .unwrap_or_default();
    let open = (payable - paid).max(Decimal::ZERO);
    let due_date = r.get("due_date").and_then(|v| match v {
        Scalar::Date(d) => Some(*d),
        _ => None,
    });
    let status = if open.is_zero() && payable > Decimal::ZERO {
        "PAID"
    } else if due_date.is_some_and(|d| d < today) {
        "OVERDUE"
    } else {
        "OPEN"
    };
    r.set("paid_amount", Some(Scalar::Dec(paid)));
    r.set("open_amount", Some(Scalar::Dec(open)));
    r.set("status", Some(Scalar::Text(status.into())));
    r
}
