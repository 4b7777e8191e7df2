//! Invoice payments: booked only on OPEN or OVERDUE invoices, never edited. Booking or
//! deleting one recomputes the invoice's paid amount and moves its status through the
//! lifecycle (PAID when the payments settle it), in the same transaction.

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use super::date::Date;
use super::invoices::{self, Event, Invoice};
use super::schema::{Changes, Field, Kind, Record, Scalar};
use super::settings::PAYMENT_TYPES;
use super::{Ctx, Error, comments};
use crate::caps::{Read, Write};
use crate::limits;
use crate::store::{self, decimal_bytes};

const COLLECTION: &str = "invoice-payments";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Payment {
    pub id: u64,
    pub invoice_id: u64,
    pub created: i64,
    pub user_id: u64,
    pub date: Date,
    #[serde(with = "decimal_bytes")]
    pub amount: Decimal,
    pub comment: String,
    pub kind: String,
    pub mark_paid: bool,
}

pub static FIELDS: &[Field] = &[
    Field::new("id", Kind::Integer).read_only(),
    Field::new("created", Kind::DateTime).read_only(),
    Field::new("invoice_id", Kind::Integer).mandatory(),
    Field::new("user_id", Kind::Integer).read_only(),
    Field::new("date", Kind::Date),
    Field::new("amount", Kind::Decimal).mandatory(),
    Field::new("comment", Kind::Text),
    Field::new("type", Kind::Enum(PAYMENT_TYPES)),
    Field::new("mark_invoice_as_paid", Kind::Bool),
];

pub fn to_record(p: &Payment) -> Record {
    let mut r = Record::default();
    r.set("id", Some(Scalar::Int(p.id as i64)));
    r.set("created", Some(Scalar::DateTime(p.created)));
    r.set("invoice_id", Some(Scalar::Int(p.invoice_id as i64)));
    r.set("user_id", Some(Scalar::Int(p.user_id as i64)));
    r.set("date", Some(Scalar::Date(p.date)));
    r.set("amount", Some(Scalar::Dec(p.amount)));
    r.set("comment", Some(Scalar::Text(p.comment.clone())));
    r.set("type", Some(Scalar::Text(p.kind.clone())));
    r.set("mark_invoice_as_paid", Some(Scalar::Bool(p.mark_paid)));
    r.values
        .retain(|_, v| !matches!(v, Scalar::Text(t) if t.is_empty()));
    r
}

pub fn list(txn: &dyn Read, account: u64, invoice_id: u64) -> Result<Vec<Payment>, Error> {
    store::scan_all(txn, &store::child_prefix(account, COLLECTION, invoice_id))?
        .iter()
        .map(|(_, v)| store::decode(v).map_err(Error::from))
        .collect()
}

/// The paid sum of an invoice and whether a payment marked it paid.
pub fn sum(txn: &dyn Read, account: u64, invoice_id: u64) -> Result<(Decimal, bool), Error> {
    let payments = list(txn, account, invoice_id)?;
    Ok((
        payments.iter().map(|p| p.amount).sum(),
        payments.iter().any(|p| p.mark_paid),
    ))
}

pub fn load(txn: &dyn Read, account: u64, id: u64) -> Result<Payment, Error> {
    let not_found = || Error::NotFound(format!("payment {id} does not exist"));
    let parent = txn
        .get(&store::parent_key(account, COLLECTION, id))?
        .and_then(|b| b.try_into().ok().map(u64::from_be_bytes))
        .ok_or_else(not_found)?;
    let bytes = txn
        .get(&store::child_key(account, COLLECTION, parent, id))?
        .ok_or_else(not_found)?;
    Ok(store::decode(&bytes)?)
}

/// Recomputes paid amount, paid types and status after the payments changed.
fn settle(
    ctx: &Ctx,
    txn: &mut dyn Write,
    old: &Invoice,
    event: impl Fn(bool) -> Event,
) -> Result<Invoice, Error> {
    let payments = list(txn.as_read(), ctx.account_id, old.id)?;
    let paid: Decimal = payments.iter().map(|p| p.amount).sum();
    let marked = payments.iter().any(|p| p.mark_paid);
    let next = invoices::transition(old.status, event(old.settled_by(paid, marked)))
        .map_err(Error::invalid)?;
    let mut inv = old.clone();
    inv.paid_amount = paid;
    inv.paid_types = payments
        .iter()
        .map(|p| p.kind.clone())
        .filter(|k| !k.is_empty())
        .collect();
    inv.paid_types.sort();
    inv.paid_types.dedup();
    inv.status = next;
    inv.updated = ctx.now;
    invoices::save(txn, ctx.account_id, Some(old), &inv)?;
    Ok(inv)
}

pub fn create(ctx: &Ctx, txn: &mut dyn Write, c: &Changes) -> Result<Payment, Error> {
    let mut errors = c.errors();
    super::schema::check_mandatory(FIELDS, c, &mut errors);
    let amount = c.get("amount").cloned().flatten().and_then(|v| v.as_dec());
    if let Some(a) = amount
        && (a <= Decimal::ZERO || a > Decimal::from(limits::AMOUNT_MAX))
    {
        errors.push(format!(
            "amount must be greater than 0 and at most {}, got {a}",
            limits::AMOUNT_MAX
        ));
    }
    let invoice_id = c
        .get("invoice_id")
        .cloned()
        .flatten()
        .and_then(|v| v.as_int());
    let invoice = match invoice_id {
        Some(id) if id > 0 => match invoices::load(txn.as_read(), ctx.account_id, id as u64) {
            Ok(inv) => Some(inv),
            Err(Error::NotFound(_)) => {
                errors.push(format!("invoice_id {id} does not exist"));
                None
            }
            Err(e) => return Err(e),
        },
        Some(id) => {
            errors.push(format!("invoice_id {id} does not exist"));
            None
        }
        None => None,
    };
    let (Some(inv), Some(amount), true) = (invoice, amount, errors.is_empty()) else {
        return Err(Error::Invalid(errors));
    };
    let payment = Payment {
        id: store::next_id(txn, COLLECTION)?,
        invoice_id: inv.id,
        created: ctx.now,
        user_id: ctx.user_id,
        date: match c.get("date") {
            Some(Some(Scalar::Date(d))) => *d,
            _ => invoices::today(ctx),
        },
        amount,
        comment: c
            .get("comment")
            .cloned()
            .flatten()
            .map(|v| v.to_wire())
            .unwrap_or_default(),
        kind: c
            .get("type")
            .cloned()
            .flatten()
            .map(|v| v.to_wire())
            .unwrap_or_default(),
        mark_paid: matches!(
            c.get("mark_invoice_as_paid"),
            Some(Some(Scalar::Bool(true)))
        ),
    };
    txn.put(
        &store::child_key(ctx.account_id, COLLECTION, inv.id, payment.id),
        &store::encode(&payment),
    )?;
    txn.put(
        &store::parent_key(ctx.account_id, COLLECTION, payment.id),
        &inv.id.to_be_bytes(),
    )?;
    let after = settle(ctx, txn, &inv, |settled| Event::Pay { settled })?;
    let text = format!(
        "Payment of {} {} booked",
        amount.normalize(),
        inv.currency_code
    );
    comments::system(ctx, txn, invoices::COLLECTION, inv.id, "PAYMENT", &text)?;
    if after.status != inv.status {
        let shown = after.shown(invoices::today(ctx)).as_str();
        comments::system(
            ctx,
            txn,
            invoices::COLLECTION,
            inv.id,
            "STATUS",
            &format!("Status changed to {shown}"),
        )?;
    }
    Ok(payment)
}

pub fn delete(ctx: &Ctx, txn: &mut dyn Write, id: u64) -> Result<(), Error> {
    let payment = load(txn.as_read(), ctx.account_id, id)?;
    let inv = invoices::load(txn.as_read(), ctx.account_id, payment.invoice_id)?;
    txn.delete(&store::child_key(ctx.account_id, COLLECTION, inv.id, id))?;
    txn.delete(&store::parent_key(ctx.account_id, COLLECTION, id))?;
    let after = settle(ctx, txn, &inv, |settled| Event::Unpay { settled })?;
    let text = format!(
        "Payment of {} {} deleted",
        payment.amount.normalize(),
        inv.currency_code
    );
    comments::system(
        ctx,
        txn,
        invoices::COLLECTION,
        inv.id,
        "DELETE_PAYMENT",
        &text,
    )?;
    if after.status != inv.status {
        let shown = after.shown(invoices::today(ctx)).as_str();
        comments::system(
            ctx,
            txn,
            invoices::COLLECTION,
            inv.id,
            "STATUS",
            &format!("Status changed to {shown}"),
        )?;
    }
    Ok(())
}

pub fn delete_all(txn: &mut dyn Write, account: u64, invoice_id: u64) -> Result<(), Error> {
    for p in list(txn.as_read(), account, invoice_id)? {
        txn.delete(&store::child_key(account, COLLECTION, invoice_id, p.id))?;
        txn.delete(&store::parent_key(account, COLLECTION, p.id))?;
    }
    Ok(())
}
