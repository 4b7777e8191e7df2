//! Payments of documents: the child type, its wire fields, how a request builds one, and
//! what the payments of a document add up to. Payments are never edited. A leaf: the
//! document's paid amount and status are moved by `commands`.

use rust_decimal::Decimal;

use super::super::Ctx;
use super::super::date::Date;
use super::super::schema::{Changes, Field, Kind, Record, Scalar};
use super::super::settings::PAYMENT_TYPES;
use super::kind::DocKind;
use crate::limits;

/// The storage collection (and id counter) of a kind's payments. Only kinds that take
/// payments have one; asking for another's is a bug.
pub fn collection(kind: DocKind) -> &'static str {
    kind.spec()
        .payments
        .expect("only kinds that take payments have payments")
}

/// The create-only field that marks the document as paid.
pub fn mark_field(kind: DocKind) -> String {
    format!("mark_{}_as_paid", kind.range())
}

#[derive(Debug, Clone, PartialEq)]
pub struct Payment {
    pub id: u64,
    pub document_id: u64,
    pub created: i64,
    pub user_id: u64,
    pub date: Date,
    pub amount: Decimal,
    pub comment: String,
    /// One of `PAYMENT_TYPES`, or empty (wire field `type`).
    pub payment_type: String,
    pub mark_paid: bool,
}

macro_rules! payment_fields {
    ($parent:literal, $parent_doc:literal, $mark:literal, $mark_doc:literal) => {
        &[
            Field::new("id", Kind::Integer)
                .read_only()
                .doc("Id of the payment (read only; assigned on create)."),
            Field::new("created", Kind::DateTime)
                .read_only()
                .doc("When the payment was booked (read only)."),
            Field::new($parent, Kind::Integer)
                .mandatory()
                .doc($parent_doc),
            Field::new("user_id", Kind::Integer)
                .read_only()
                .doc("Id of the user who booked the payment (read only)."),
            Field::new("date", Kind::Date).doc("Date of the payment. Default: today."),
            Field::new("amount", Kind::Decimal).mandatory().positive().doc(
                "Amount paid, in the document's currency; greater than 0. Once the payments reach \
                 total_gross, the document is PAID.",
            ),
            Field::new("comment", Kind::Text).doc("Note on the payment."),
            Field::new("type", Kind::Enum(PAYMENT_TYPES)).doc(
                "How the payment was made (CREDIT_NOTE: settled by a credit note; MISC: any other \
                 way); the documents' payment_type filter matches it.",
            ),
            Field::new($mark, Kind::Bool).doc($mark_doc),
        ]
    };
}

static INVOICE_PAYMENT_FIELDS: &[Field] = payment_fields!(
    "invoice_id",
    "Id of the invoice paid; payments are booked only for OPEN or OVERDUE invoices.",
    "mark_invoice_as_paid",
    "1 settles the invoice (PAID) even when the payments do not reach its total_gross; deleting \
     the payment undoes that. Default: 0."
);
static CREDIT_NOTE_PAYMENT_FIELDS: &[Field] = payment_fields!(
    "credit_note_id",
    "Id of the credit note paid; payments are booked only for OPEN or OVERDUE credit notes.",
    "mark_credit_note_as_paid",
    "1 settles the credit note (PAID) even when the payments do not reach its total_gross; \
     deleting the payment undoes that. Default: 0."
);

/// The wire fields of a kind's payments; none for kinds that take no payments.
pub fn fields(kind: DocKind) -> &'static [Field] {
    match kind {
        DocKind::Invoice => INVOICE_PAYMENT_FIELDS,
        DocKind::CreditNote => CREDIT_NOTE_PAYMENT_FIELDS,
        DocKind::Offer
        | DocKind::Confirmation
        | DocKind::DeliveryNote
        | DocKind::Recurring
        | DocKind::Reminder => &[],
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
    r.set("type", Some(Scalar::Text(p.payment_type.clone())));
    r.set(&mark_field(kind), Some(Scalar::Bool(p.mark_paid)));
    r.values
        .retain(|_, v| !matches!(v, Scalar::Text(t) if t.is_empty()));
    r
}

/// The checked fields of a new payment, before its document is known: the document id
/// named, and the payment without its id. Problems go to `errors`.
pub fn build(
    ctx: &Ctx,
    kind: DocKind,
    c: &Changes,
    today: Date,
    errors: &mut Vec<String>,
) -> (Option<i64>, Option<Payment>) {
    super::super::schema::check_mandatory(fields(kind), c, errors);
    let amount = c.get("amount").cloned().flatten().and_then(|v| v.as_dec());
    // Above 0 by its field (`Field::positive`).
    if let Some(a) = amount
        && a > Decimal::from(limits::AMOUNT_MAX)
    {
        errors.push(format!(
            "amount must be at most {}, got {a}",
            limits::AMOUNT_MAX
        ));
    }
    let document = c
        .get(kind.parent_field())
        .cloned()
        .flatten()
        .and_then(|v| v.as_int());
    let text_of = |name: &str| {
        c.get(name)
            .cloned()
            .flatten()
            .map(|v| v.to_wire())
            .unwrap_or_default()
    };
    let payment = amount.map(|amount| Payment {
        id: 0,
        document_id: 0,
        created: ctx.now,
        user_id: ctx.user_id,
        date: match c.get("date") {
            Some(Some(Scalar::Date(d))) => *d,
            _ => today,
        },
        amount,
        comment: text_of("comment"),
        payment_type: text_of("type"),
        mark_paid: matches!(c.get(&mark_field(kind)), Some(Some(Scalar::Bool(true)))),
    });
    (document, payment)
}

/// What payments add up to against the amount they pay (`due`): the one rule by which
/// documents' payments and incoming invoices' payments settle their parent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Settlement {
    /// The sum of the payments.
    pub sum: Decimal,
    /// Whether one of them marks its parent as paid.
    pub marked: bool,
}

impl Settlement {
    /// The settlement of payments given as (amount, marks its parent as paid).
    pub fn of(payments: impl IntoIterator<Item = (Decimal, bool)>) -> Settlement {
        payments
            .into_iter()
            .fold(Settlement::default(), |s, (amount, marked)| Settlement {
                sum: s.sum + amount,
                marked: s.marked || marked,
            })
    }

    /// The amount counted as paid of `due`: the sum of the payments, or at least `due`
    /// while one payment is marked as paid.
    pub fn paid(self, due: Decimal) -> Decimal {
        if self.marked {
            self.sum.max(due)
        } else {
            self.sum
        }
    }

    /// Whether the payments settle `due`: one is marked as paid, or they reach it (and
    /// are more than nothing).
    pub fn settles(self, due: Decimal) -> bool {
        self.marked || (self.sum >= due && self.sum > Decimal::ZERO)
    }
}

/// What the payments of a document add up to, and their payment types (sorted, once
/// each).
pub fn settlement(payments: &[Payment]) -> (Settlement, Vec<String>) {
    let settlement = Settlement::of(payments.iter().map(|p| (p.amount, p.mark_paid)));
    let mut types: Vec<String> = payments
        .iter()
        .map(|p| p.payment_type.clone())
        .filter(|t| !t.is_empty())
        .collect();
    types.sort();
    types.dedup();
    (settlement, types)
}

#[cfg(test)]
mod tests {
    use super::Settlement;
    use rust_decimal::Decimal;

    fn check(payments: &[(i64, bool)], due: i64, (paid, settles): (i64, bool)) {
        let s = Settlement::of(payments.iter().map(|(a, m)| (Decimal::from(*a), *m)));
        assert_eq!(
            s.paid(Decimal::from(due)),
            Decimal::from(paid),
            "{payments:?}"
        );
        assert_eq!(s.settles(Decimal::from(due)), settles, "{payments:?}");
    }

    #[test]
    fn payments_settle_by_their_sum_or_by_one_marked_as_paid() {
        check(&[], 100, (0, false));
        check(&[(40, false)], 100, (40, false));
        check(&[(40, false), (60, false)], 100, (100, true));
        check(&[(120, false)], 100, (120, true));
        check(&[(40, true)], 100, (100, true));
        check(&[(140, true)], 100, (140, true));
        check(&[(40, false), (10, true)], 100, (100, true));
    }
}
