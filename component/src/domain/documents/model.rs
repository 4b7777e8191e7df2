//! The document model: what an invoice or a credit note holds, with what it caches of its
//! parts (totals and taxes of its items, the paid amount and payment types of its
//! payments, the names of its tags, the article ids of its items). Plain data and pure
//! derivations; no storage, no wire.

use rust_decimal::Decimal;

use super::super::date::Date;
use super::super::money::{self, PriceBasis};
use super::kind::DocKind;
use super::lifecycle::{Shown, Status};
use super::recurring::Schedule;
use super::reminder::Dunning;

/// One line of a document's tax breakdown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tax {
    pub name: String,
    pub rate: Decimal,
    pub net: Decimal,
    pub amount: Decimal,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    pub kind: DocKind,
    pub id: u64,
    pub client_id: u64,
    pub contact_id: Option<i64>,
    pub created: i64,
    pub updated: i64,
    pub number: i64,
    /// The prefix as given, placeholders unresolved.
    pub number_pre: String,
    pub number_length: i64,
    /// Resolved prefix plus padded number: the invoice or credit note number.
    pub formatted_number: String,
    pub status: Status,
    pub date: Date,
    pub supply_date: String,
    pub supply_date_type: String,
    pub due_date: Date,
    pub address: String,
    pub discount_rate: Decimal,
    pub discount_date: Date,
    pub label: String,
    pub intro: String,
    pub note: String,
    pub currency_code: String,
    pub quote: Decimal,
    pub payment_types: String,
    pub net_gross: String,
    pub reduction: String,
    pub template_id: Option<i64>,
    pub tax_free: bool,
    pub total_net: Decimal,
    pub total_gross: Decimal,
    pub total_net_unreduced: Decimal,
    pub total_gross_unreduced: Decimal,
    pub total_reduction: Decimal,
    pub taxes: Vec<Tax>,
    pub paid_amount: Decimal,
    /// Payment types of the booked payments (for the `payment_type` filter).
    pub paid_types: Vec<String>,
    /// Credit notes: the title, the invoice it was made from, the free text it used.
    pub title: String,
    pub invoice_id: Option<i64>,
    pub free_text_id: Option<i64>,
    /// Tags, kept here for the `tags` filter (the tag records hold their ids).
    pub tags: Vec<String>,
    /// Article ids of the items (for the `article_id` filter).
    pub article_ids: Vec<i64>,
    /// E-invoice references: BT-10 (e.g. a Leitweg-ID), BT-13 and BT-12.
    pub buyer_reference: String,
    pub order_reference: String,
    pub contract_reference: String,
    /// The offer and the order confirmation the document was made from.
    pub offer_id: Option<i64>,
    pub confirmation_id: Option<i64>,
    /// Offers: the last day the offer holds (date + validity days).
    pub validity_date: Date,
    /// Invoices: the recurring invoice whose run made it.
    pub recurring_id: Option<i64>,
    /// Recurring invoices: their schedule.
    pub schedule: Option<Box<Schedule>>,
    /// Reminders: their level, texts and claim.
    pub dunning: Option<Box<Dunning>>,
    /// The link to the document in the customer portal, made when it was completed (or
    /// renewed); empty when it has none. The token in it is kept nowhere else in clear:
    /// the portal finds the link by its hash (`links`).
    pub portal_url: String,
}

impl Document {
    /// A draft of `kind` dated `day` with every other field empty: what a new document
    /// starts from before the account's and the client's defaults fill it.
    pub fn blank(kind: DocKind, day: Date) -> Document {
        Document {
            kind,
            id: 0,
            client_id: 0,
            contact_id: None,
            created: 0,
            updated: 0,
            number: 0,
            number_pre: String::new(),
            number_length: 0,
            formatted_number: String::new(),
            status: Status::Draft,
            date: day,
            supply_date: String::new(),
            supply_date_type: String::new(),
            due_date: day,
            address: String::new(),
            discount_rate: Decimal::ZERO,
            discount_date: day,
            label: String::new(),
            intro: String::new(),
            note: String::new(),
            currency_code: String::new(),
            quote: Decimal::ONE,
            payment_types: String::new(),
            net_gross: String::new(),
            reduction: String::new(),
            template_id: None,
            tax_free: false,
            total_net: Decimal::ZERO,
            total_gross: Decimal::ZERO,
            total_net_unreduced: Decimal::ZERO,
            total_gross_unreduced: Decimal::ZERO,
            total_reduction: Decimal::ZERO,
            taxes: Vec::new(),
            paid_amount: Decimal::ZERO,
            paid_types: Vec::new(),
            title: String::new(),
            invoice_id: None,
            free_text_id: None,
            tags: Vec::new(),
            article_ids: Vec::new(),
            buyer_reference: String::new(),
            order_reference: String::new(),
            contract_reference: String::new(),
            offer_id: None,
            confirmation_id: None,
            validity_date: day,
            recurring_id: None,
            schedule: None,
            dunning: None,
            portal_url: String::new(),
        }
    }

    pub fn shown(&self, today: Date) -> Shown {
        match self.status.shown_as_stored() {
            Some(shown) => shown,
            None if self.falls_due() && self.due_date < today => Shown::Overdue,
            None => Shown::Open,
        }
    }

    /// Whether the document is OPEN and of a kind whose OPEN documents fall due: what the
    /// day decides (OPEN or OVERDUE), and what indexes and tallied counts hold by due day.
    pub fn falls_due(&self) -> bool {
        self.status == Status::Open && self.kind.spec().falls_due
    }

    pub fn basis(&self) -> PriceBasis {
        if self.net_gross == "GROSS" {
            PriceBasis::Gross
        } else {
            PriceBasis::Net
        }
    }

    pub fn open_amount(&self) -> Decimal {
        match self.status {
            Status::Paid | Status::Canceled => Decimal::ZERO,
            Status::Draft
            | Status::Open
            | Status::Won
            | Status::Lost
            | Status::Cleared
            | Status::Completed
            | Status::Created => (self.total_gross - self.paid_amount).max(Decimal::ZERO),
        }
    }

    pub fn discount_amount(&self) -> Decimal {
        money::discount_amount(self.total_gross, self.discount_rate)
    }

    /// The paired assertion of every save and load: the cached totals add up.
    pub fn totals_add_up(&self) -> bool {
        self.total_gross == self.total_net + self.taxes.iter().map(|t| t.amount).sum::<Decimal>()
    }
}

/// A document of `kind` with every field set, for tests: OPEN when `id` is even, else a
/// DRAFT.
#[cfg(test)]
pub fn sample(kind: DocKind, id: u64) -> Document {
    let date = Date::parse("2026-11-02").unwrap();
    Document {
        kind,
        id,
        client_id: 3,
        contact_id: id.is_multiple_of(2).then_some(9),
        created: 1_795_000_000,
        updated: 1_795_000_100,
        number: id as i64,
        number_pre: "RE-".into(),
        number_length: 4,
        formatted_number: format!("RE-{id:04}"),
        status: if id.is_multiple_of(2) {
            Status::Open
        } else {
            Status::Draft
        },
        date,
        supply_date: String::new(),
        supply_date_type: String::new(),
        due_date: date.add_days(14),
        address: "Müller & Söhne\n<Hauptstr. 5>".into(),
        discount_rate: Decimal::new(2, 0),
        discount_date: date.add_days(7),
        label: format!("Job {id}"),
        intro: String::new(),
        note: "a \"note\"".into(),
        currency_code: "EUR".into(),
        quote: Decimal::ONE,
        payment_types: "BANK_TRANSFER".into(),
        net_gross: "NET".into(),
        reduction: String::new(),
        template_id: None,
        tax_free: false,
        buyer_reference: String::new(),
        order_reference: "PO 4711".into(),
        contract_reference: String::new(),
        total_net: Decimal::new(10000, 2),
        total_gross: Decimal::new(11900, 2),
        total_net_unreduced: Decimal::new(10000, 2),
        total_gross_unreduced: Decimal::new(11900, 2),
        total_reduction: Decimal::ZERO,
        taxes: vec![Tax {
            name: "MwSt".into(),
            rate: Decimal::new(19, 0),
            net: Decimal::new(10000, 2),
            amount: Decimal::new(1900, 2),
        }],
        paid_amount: Decimal::ZERO,
        paid_types: Vec::new(),
        title: "Gutschrift".into(),
        invoice_id: Some(1),
        free_text_id: None,
        tags: Vec::new(),
        article_ids: Vec::new(),
        offer_id: None,
        confirmation_id: None,
        validity_date: date.add_days(30),
        recurring_id: None,
        schedule: None,
        dunning: None,
        portal_url: String::new(),
    }
}
