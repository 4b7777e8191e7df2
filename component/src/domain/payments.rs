//! Payments of documents: booked only on OPEN or OVERDUE documents, never edited. Booking
//! or deleting one recomputes the document's paid amount and moves its status through the
//! lifecycle (PAID when the payments settle it), in the same transaction.

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use super::date::Date;
use super::documents::{self, DocKind, Document, Event};
use super::schema::{Changes, Field, Kind, Record, Scalar};
use super::settings::PAYMENT_TYPES;
use super::{Ctx, Error, comments};
use crate::caps::{Read, Write};
use crate::limits;
use crate::store::{self, decimal_bytes};

fn collection(kind: DocKind) -> &'static str {
    match kind {
        DocKind::Invoice => "invoice-payments",
        DocKind::CreditNote => "credit-note-payments",
    }
}

/// The create-only field that marks the document as paid.
pub fn mark_field(kind: DocKind) -> &'static str {
    match kind {
        DocKind::Invoice => "mark_invoice_as_paid",
        DocKind::CreditNote => "mark_credit_note_as_paid",
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Payment {
    pub id: u64,
    pub document_id: u64,
    pub created: i64,
    pub user_id: u64,
    pub date: Date,
    #[serde(with = "decimal_bytes")]
    pub amount: Decimal,
    pub comment: String,
    pub kind: String,
    pub mark_paid: bool,
}

macro_rules! payment_fields {
    ($parent:literal, $mark:literal) => {
        &[
            Field::new("id", Kind::Integer).read_only(),
            Field::new("created", Kind::DateTime).read_only(),
            Field::new($parent, Kind::Integer).mandatory(),
            Field::new("user_id", Kind::Integer).read_only(),
            Field::new("date", Kind::Date),
            Field::new("amount", Kind::Decimal).mandatory(),
            Field::new("comment", Kind::Text),
            Field::new("type", Kind::Enum(PAYMENT_TYPES)),
            Field::new($mark, Kind::Bool),
        ]
    };
}

pub static INVOICE_PAYMENT_FIELDS: &[Field] = payment_fields!("invoice_id", "mark_invoice_as_paid");
pub static CREDIT_NOTE_PAYMENT_FIELDS: &[Field] =
    payment_fields!("credit_note_id", "mark_credit_note_as_paid");

pub fn fields(kind: DocKind) -> &'static [Field] {
    match kind {
        DocKind::Invoice => INVOICE_PAYMENT_FIELDS,
        DocKind::CreditNote => CREDIT_NOTE_PAYMENT_FIELDS,
    }
}

pub fn to_record(kind: DocKind, p: &Payment) -> Record {
    let mut r = Record::default();
    r.set("id", Some(Scalar::Int(p.id as i64)));
    r.set("created", Some(Scalar::DateTime(p.created)));
    r.set(kind.parent_field(), Some(Scalar::Int(p.document_id as i64)));
    r.set("user_id", Some(Scalar::Int(p.user_id as i64)));
    r.set("date", Some(Scalar::Date(p.date)));
    r.set("amount", Some(Scalar::Dec(p.amount)));
    r.set("comment", Some(Scalar::Text(p.comment.clone())));
    r.set("type", Some(Scalar::Text(p.kind.clone())));
    r.set(mark_field(kind), Some(Scalar::Bool(p.mark_paid)));
    r.values
        .retain(|_, v| !matches!(v, Scalar::Text(t) if t.is_empty()));
    r
}

pub fn list(txn: &dyn Read, account: u64, kind: DocKind, doc: u64) -> Result<Vec<Payment>, Error> {
    store::scan_all(txn, &store::child_prefix(account, collection(kind), doc))?
        .iter()
        .map(|(_, v)| store::decode(v).map_err(Error::from))
        .collect()
}

/// The paid sum of a document and whether a payment marked it paid.
pub fn sum(
    txn: &dyn Read,
    account: u64,
    kind: DocKind,
    doc: u64,
) -> Result<(Decimal, bool), Error> {
    let payments = list(txn, account, kind, doc)?;
    Ok((
        payments.iter().map(|p| p.amount).sum(),
        payments.iter().any(|p| p.mark_paid),
    ))
}

pub fn load(txn: &dyn Read, account: u64, kind: DocKind, id: u64) -> Result<Payment, Error> {
    let bytes = store::get_child(txn, account, collection(kind), id)?
        .ok_or_else(|| Error::NotFound(format!("payment {id} does not exist")))?;
    Ok(store::decode(&bytes)?)
}

/// Recomputes paid amount, paid types and status after the payments changed, and writes
/// the comments of the change.
fn settle(
    ctx: &Ctx,
    txn: &mut dyn Write,
    old: &Document,
    event: impl Fn(bool) -> Event,
    actionkey: &str,
    text: &str,
) -> Result<Document, Error> {
    let payments = list(txn.as_read(), ctx.account_id, old.kind, old.id)?;
    let paid: Decimal = payments.iter().map(|p| p.amount).sum();
    let marked = payments.iter().any(|p| p.mark_paid);
    let next = documents::transition(old.status, event(old.settled_by(paid, marked)))
        .map_err(|m| documents::refusal(old.kind, m))?;
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
    documents::save(txn, ctx.account_id, Some(old), &inv)?;
    let parent = old.kind.collection();
    comments::system(ctx, txn, parent, inv.id, actionkey, text)?;
    if inv.status != old.status {
        let shown = inv.shown(documents::today(ctx)).as_str();
        let text = format!("Status changed to {shown}");
        comments::system(ctx, txn, parent, inv.id, "STATUS", &text)?;
    }
    Ok(inv)
}

pub fn create(
    ctx: &Ctx,
    txn: &mut dyn Write,
    kind: DocKind,
    c: &Changes,
) -> Result<Payment, Error> {
    let mut errors = c.errors();
    super::schema::check_mandatory(fields(kind), c, &mut errors);
    let amount = c.get("amount").cloned().flatten().and_then(|v| v.as_dec());
    if let Some(a) = amount
        && (a <= Decimal::ZERO || a > Decimal::from(limits::AMOUNT_MAX))
    {
        errors.push(format!(
            "amount must be greater than 0 and at most {}, got {a}",
            limits::AMOUNT_MAX
        ));
    }
    let parent_field = kind.parent_field();
    let doc_id = c
        .get(parent_field)
        .cloned()
        .flatten()
        .and_then(|v| v.as_int());
    let doc = match doc_id {
        Some(id) if id > 0 => match documents::load(txn.as_read(), ctx.account_id, kind, id as u64)
        {
            Ok(inv) => Some(inv),
            Err(Error::NotFound(_)) => {
                errors.push(format!("{parent_field} {id} does not exist"));
                None
            }
            Err(e) => return Err(e),
        },
        Some(id) => {
            errors.push(format!("{parent_field} {id} does not exist"));
            None
        }
        None => None,
    };
    let (Some(inv), Some(amount), true) = (doc, amount, errors.is_empty()) else {
        return Err(Error::Invalid(errors));
    };
    let text_of = |name: &str| {
        c.get(name)
            .cloned()
            .flatten()
            .map(|v| v.to_wire())
            .unwrap_or_default()
    };
    let payment = Payment {
        id: store::next_id(txn, collection(kind))?,
        document_id: inv.id,
        created: ctx.now,
        user_id: ctx.user_id,
        date: match c.get("date") {
            Some(Some(Scalar::Date(d))) => *d,
            _ => documents::today(ctx),
        },
        amount,
        comment: text_of("comment"),
        kind: text_of("type"),
        mark_paid: matches!(c.get(mark_field(kind)), Some(Some(Scalar::Bool(true)))),
    };
    let coll = collection(kind);
    store::put_child(
        txn,
        ctx.account_id,
        coll,
        inv.id,
        payment.id,
        &store::encode(&payment),
    )?;
    let text = format!(
        "Payment of {} {} booked",
        amount.normalize(),
        inv.currency_code
    );
    settle(
        ctx,
        txn,
        &inv,
        |settled| Event::Pay { settled },
        "PAYMENT",
        &text,
    )?;
    Ok(payment)
}

pub fn delete(ctx: &Ctx, txn: &mut dyn Write, kind: DocKind, id: u64) -> Result<(), Error> {
    let payment = load(txn.as_read(), ctx.account_id, kind, id)?;
    let inv = documents::load(txn.as_read(), ctx.account_id, kind, payment.document_id)?;
    let coll = collection(kind);
    store::delete_child(txn, ctx.account_id, coll, inv.id, id)?;
    let text = format!(
        "Payment of {} {} deleted",
        payment.amount.normalize(),
        inv.currency_code
    );
    settle(
        ctx,
        txn,
        &inv,
        |settled| Event::Unpay { settled },
        "DELETE_PAYMENT",
        &text,
    )?;
    Ok(())
}

pub fn delete_all(txn: &mut dyn Write, account: u64, kind: DocKind, doc: u64) -> Result<(), Error> {
    let coll = collection(kind);
    for p in list(txn.as_read(), account, kind, doc)? {
        store::delete_child(txn, account, coll, doc, p.id)?;
    }
    Ok(())
}
