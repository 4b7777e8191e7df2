//! Payments of incoming invoices (`INCOMING_PAYMENTS`) and how they settle their incoming:
//! its paid amount by the rule documents' payments settle by
//! (`documents::payments::Settlement`), booked and deleted with a comment each, and a
//! STATUS comment when that moves the incoming's status.

use rust_decimal::Decimal;

use super::super::documents::payments::Settlement;
use super::super::records::{self, Draft, Filter, Resource, Rules};
use super::super::schema::{Changes, Field, Kind, Record, Scalar};
use super::super::settings::PAYMENT_TYPES;
use super::super::{Ctx, Error};
use super::comments;
use super::record::{STORED, check_parent, children, due, shown};
use crate::caps::{Read, Write};

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
    Field::new("payment_type", Kind::Enum(PAYMENT_TYPES)).doc(
        "How the payment was made, in the words of documents' payments' type (BANK_TRANSFER, \
         CASH, ...), in any case; kept in upper case.",
    ),
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
.indexed(&["incoming_id"]);

struct PaymentRules;

impl Rules for PaymentRules {
    fn prepare(&self, mut d: Draft<'_>) -> Result<(), Error> {
        check_parent(&mut d)?;
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

/// What the payments of an incoming (but `leaving`, which is being deleted) count as paid
/// of `due`, by the rule documents' payments settle by: their sum, or at least `due` while
/// one is marked as paying it all.
pub fn paid(
    txn: &dyn Read,
    account: u64,
    incoming: u64,
    leaving: Option<u64>,
    due: Decimal,
) -> Result<Decimal, Error> {
    let payments = children(txn, &INCOMING_PAYMENTS, account, incoming)?;
    Ok(Settlement::of(
        payments
            .iter()
            .filter(|p| Some(p.id()) != leaving)
            .map(|p| {
                let amount = p.get("amount").and_then(Scalar::as_dec).unwrap_or_default();
                (amount, p.bool("mark_incoming_as_paid"))
            }),
    )
    .paid(due))
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
    let stored = records::load(txn.as_read(), &STORED, account, incoming)?;
    let mut record = stored.clone();
    let today = ctx.today();
    let before = shown(stored.clone(), today).text("status").to_owned();
    let paid = paid(txn.as_read(), account, incoming, leaving, due(&record))?;
    record.set("paid_amount", Some(Scalar::Dec(paid)));
    record.set("updated", Some(Scalar::DateTime(ctx.now)));
    records::save(
        ctx,
        txn,
        &STORED,
        &record,
        Some(&stored),
        &Changes::default(),
    )?;
    let currency = record.text("currency_code").to_owned();
    comments::write(
        ctx,
        txn,
        incoming,
        actionkey,
        &format!("Payment of {} {currency} {verb}", amount.normalize()),
    )?;
    let after = shown(record, today).text("status").to_owned();
    if after != before {
        comments::write(
            ctx,
            txn,
            incoming,
            "STATUS",
            &format!("Status {before} → {after}"),
        )?;
    }
    Ok(())
}
