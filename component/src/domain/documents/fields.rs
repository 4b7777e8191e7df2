//! The field table of each kind of document: every wire field in response order, with its
//! schema (`Field`: kind, who may write it, whether it is mandatory) and how a response
//! reads it (`Get`). The wire schema (`fields`), request parsing, the response getters
//! and the XML page writer all derive from these tables; a row cannot be written without
//! its getter, and `Get::get` matches every getter (no `_` arm).
//!
//! Adding a field that shows an existing value of the model is one row here (and a `Get`
//! variant with its arm when no getter reads that value yet). A value the model does not
//! hold yet also needs its `Document` field, which the compiler then asks for in the
//! stored form's conversion (`storage.rs`); a writable field must be applied by
//! `commands::apply`, which a test checks for every writable field of every kind.

use super::super::date::Date;
use super::super::schedule::Cycle;
use super::super::schema::{Field, Kind, Record, Value};
use super::super::settings;
use super::kind::DocKind;
use super::model::Document;
use super::recurring::{ACTIONS, Schedule};
use super::reminder::Dunning;

/// How a response reads a field of a document. An enum read by one `match` rather than a
/// function pointer per field: each wasm instance sets up an indirect call's target
/// afresh, once per field, and a page of 100 documents reads 4,000 fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Get {
    Id,
    ClientId,
    ContactId,
    Created,
    Updated,
    /// `invoice_number` or `credit_note_number`.
    FormattedNumber,
    Title,
    InvoiceId,
    FreeTextId,
    Number,
    NumberPre,
    NumberLength,
    Status,
    Date,
    SupplyDate,
    SupplyDateType,
    DueDate,
    DueDays,
    Address,
    DiscountRate,
    DiscountDate,
    DiscountDays,
    DiscountAmount,
    Label,
    Intro,
    Note,
    TotalGross,
    TotalNet,
    NetGross,
    Reduction,
    TotalGrossUnreduced,
    TotalNetUnreduced,
    TotalReduction,
    CurrencyCode,
    Quote,
    PaymentTypes,
    PaidAmount,
    OpenAmount,
    TemplateId,
    BuyerReference,
    OrderReference,
    ContractReference,
    OfferId,
    ConfirmationId,
    ValidityDays,
    ValidityDate,
    RecurringId,
    /// A field of a recurring invoice's schedule.
    Schedule(ScheduleField),
    /// A field of a reminder's dunning data.
    Dunning(DunningField),
    /// `customerportal_url`: the document's link to the customer portal.
    PortalUrl,
}

/// The fields of a recurring invoice's schedule (`recurring::Schedule`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScheduleField {
    Name,
    Cycle,
    CycleNumber,
    Action,
    Hour,
    StartDate,
    EndDate,
    Iterations,
    Counter,
    LastCreationDate,
    NextCreationDate,
    Ultimo,
    DueDays,
    DiscountDays,
    EmailSender,
    EmailSubject,
    EmailMessage,
    EmailFilename,
    EmailBcc,
    LetterColor,
    LetterDuplex,
    LetterPaperWeight,
    LastError,
}

/// The fields of a reminder's dunning data (`reminder::Dunning`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DunningField {
    ReminderTextId,
    Level,
    LevelName,
    Subject,
    IsOld,
}

impl DunningField {
    fn get(self, d: &Dunning) -> Option<Value<'_>> {
        match self {
            DunningField::ReminderTextId => Some(Value::Int(d.reminder_text_id)),
            DunningField::Level => Some(Value::Int(d.level)),
            DunningField::LevelName => text(&d.level_name),
            DunningField::Subject => text(&d.subject),
            DunningField::IsOld => Some(Value::Bool(d.is_old)),
        }
    }
}

impl ScheduleField {
    fn get(self, s: &Schedule) -> Option<Value<'_>> {
        let date = |d: Option<Date>| d.map(Value::Date);
        match self {
            ScheduleField::Name => text(&s.name),
            ScheduleField::Cycle => text(&s.cycle),
            ScheduleField::CycleNumber => Some(Value::Int(s.cycle_number)),
            ScheduleField::Action => text(&s.action),
            ScheduleField::Hour => Some(Value::Int(s.hour)),
            ScheduleField::StartDate => date(s.start_date),
            ScheduleField::EndDate => date(s.end_date),
            ScheduleField::Iterations => Some(Value::Int(s.iterations)),
            ScheduleField::Counter => Some(Value::Int(s.counter)),
            ScheduleField::LastCreationDate => date(s.last_creation_date),
            ScheduleField::NextCreationDate => date(s.next_creation_date),
            ScheduleField::Ultimo => Some(Value::Bool(s.ultimo)),
            ScheduleField::DueDays => Some(Value::Int(s.due_days)),
            ScheduleField::DiscountDays => Some(Value::Int(s.discount_days)),
            ScheduleField::EmailSender => text(&s.email_sender),
            ScheduleField::EmailSubject => text(&s.email_subject),
            ScheduleField::EmailMessage => text(&s.email_message),
            ScheduleField::EmailFilename => text(&s.email_filename),
            ScheduleField::EmailBcc => text(&s.email_bcc),
            ScheduleField::LetterColor => Some(Value::Bool(s.letter_color)),
            ScheduleField::LetterDuplex => Some(Value::Bool(s.letter_duplex)),
            ScheduleField::LetterPaperWeight => Some(Value::Int(s.letter_paper_weight)),
            ScheduleField::LastError => text(&s.last_error),
        }
    }
}

impl Get {
    /// The field's value; `None` leaves it empty.
    #[inline]
    pub fn get(self, d: &Document, today: Date) -> Option<Value<'_>> {
        match self {
            Get::Id => Some(Value::Int(d.id as i64)),
            Get::ClientId => Some(Value::Int(d.client_id as i64)),
            Get::ContactId => d.contact_id.map(Value::Int),
            Get::Created => Some(Value::DateTime(d.created)),
            Get::Updated => Some(Value::DateTime(d.updated)),
            Get::FormattedNumber => text(&d.formatted_number),
            Get::Title => text(&d.title),
            Get::InvoiceId => d.invoice_id.map(Value::Int),
            Get::FreeTextId => d.free_text_id.map(Value::Int),
            Get::Number => Some(Value::Int(d.number)),
            Get::NumberPre => text(&d.number_pre),
            Get::NumberLength => Some(Value::Int(d.number_length)),
            Get::Status => Some(Value::Text(d.shown(today).as_str())),
            Get::Date => Some(Value::Date(d.date)),
            Get::SupplyDate => text(&d.supply_date),
            Get::SupplyDateType => text(&d.supply_date_type),
            Get::DueDate => Some(Value::Date(d.due_date)),
            Get::DueDays => Some(Value::Int(d.due_date.days_since(d.date))),
            Get::Address => text(&d.address),
            Get::DiscountRate => Some(Value::Dec(d.discount_rate)),
            Get::DiscountDate => Some(Value::Date(d.discount_date)),
            Get::DiscountDays => Some(Value::Int(d.discount_date.days_since(d.date))),
            Get::DiscountAmount => Some(Value::Dec(d.discount_amount())),
            Get::Label => text(&d.label),
            Get::Intro => text(&d.intro),
            Get::Note => text(&d.note),
            Get::TotalGross => Some(Value::Dec(d.total_gross)),
            Get::TotalNet => Some(Value::Dec(d.total_net)),
            Get::NetGross => text(&d.net_gross),
            Get::Reduction => text(&d.reduction),
            Get::TotalGrossUnreduced => Some(Value::Dec(d.total_gross_unreduced)),
            Get::TotalNetUnreduced => Some(Value::Dec(d.total_net_unreduced)),
            Get::TotalReduction => Some(Value::Dec(d.total_reduction)),
            Get::CurrencyCode => text(&d.currency_code),
            Get::Quote => Some(Value::Dec(d.quote)),
            Get::PaymentTypes => text(&d.payment_types),
            Get::PaidAmount => Some(Value::Dec(d.paid_amount)),
            Get::OpenAmount => Some(Value::Dec(d.open_amount())),
            Get::TemplateId => d.template_id.map(Value::Int),
            Get::BuyerReference => text(&d.buyer_reference),
            Get::OrderReference => text(&d.order_reference),
            Get::ContractReference => text(&d.contract_reference),
            Get::OfferId => d.offer_id.map(Value::Int),
            Get::ConfirmationId => d.confirmation_id.map(Value::Int),
            Get::ValidityDays => Some(Value::Int(d.validity_date.days_since(d.date))),
            Get::ValidityDate => Some(Value::Date(d.validity_date)),
            Get::RecurringId => d.recurring_id.map(Value::Int),
            Get::Schedule(field) => d.schedule.as_deref().and_then(|s| field.get(s)),
            Get::Dunning(field) => d.dunning.as_deref().and_then(|s| field.get(s)),
            Get::PortalUrl => text(&d.portal_url),
        }
    }
}

fn text(s: &str) -> Option<Value<'_>> {
    (!s.is_empty()).then_some(Value::Text(s))
}

/// One wire field of a kind of document.
#[derive(Debug, Clone, Copy)]
pub struct DocField {
    pub field: Field,
    pub get: Get,
}

impl DocField {
    const fn new(name: &'static str, kind: Kind, get: Get) -> DocField {
        DocField {
            field: Field::new(name, kind),
            get,
        }
    }

    const fn positive(mut self) -> DocField {
        self.field = self.field.positive();
        self
    }

    const fn read_only(mut self) -> DocField {
        self.field = self.field.read_only();
        self
    }

    const fn mandatory(mut self) -> DocField {
        self.field = self.field.mandatory();
        self
    }

    const fn doc(mut self, doc: &'static str) -> DocField {
        self.field = self.field.doc(doc);
        self
    }
}

const SUPPLY_DATE_TYPES: &[&str] = &[
    "SUPPLY_DATE",
    "DELIVERY_DATE",
    "SUPPLY_TEXT",
    "DELIVERY_TEXT",
];
const PRICE_BASES: &[&str] = &["NET", "GROSS"];

/// Every wire field of documents, once; each kind's table lists those it has, in its
/// response order.
const ID: DocField = DocField::new("id", Kind::Integer, Get::Id)
    .read_only()
    .doc("Id of the document (read only; assigned on create).");
const CLIENT_ID: DocField = DocField::new("client_id", Kind::Integer, Get::ClientId)
    .mandatory()
    .doc(
        "Id of the client the document is made out to. Mandatory on create, except for a credit \
         note made from an invoice, which takes the invoice's client.",
    );
const CONTACT_ID: DocField = DocField::new("contact_id", Kind::Integer, Get::ContactId).doc(
    "Id of a contact of the document's client (of /api/contacts; else 400): the document takes \
     the contact's address unless the request gives one, is e-mailed to the contact's e-mail \
     when a request names no recipient, and its e-invoices name the contact (BT-56 to BT-58). \
     Matched by the contact_id filter.",
);
const CREATED: DocField = DocField::new("created", Kind::DateTime, Get::Created)
    .read_only()
    .doc("When the document was created (read only).");
const UPDATED: DocField = DocField::new("updated", Kind::DateTime, Get::Updated)
    .read_only()
    .doc("When the document, its items, payments or status last changed (read only).");
const INVOICE_NUMBER: DocField = DocField::new("invoice_number", Kind::Text, Get::FormattedNumber)
    .read_only()
    .doc(
        "The invoice number: number_pre with its date placeholders resolved, then number \
         zero-padded to number_length digits (read only; computed).",
    );
const NUMBER: DocField = DocField::new("number", Kind::Integer, Get::Number).doc(
    "Serial number, at least 1 and unique per resolved prefix. Default: one past the highest \
     number held with the same prefix.",
);
const NUMBER_PRE: DocField = DocField::new("number_pre", Kind::Text, Get::NumberPre).doc(
    "Number prefix, one line of at most 40 characters; [YYYY], [YY], [MM] and [DD] are resolved \
     from date. Default: the settings' prefix of the document kind.",
);
const NUMBER_LENGTH: DocField = DocField::new("number_length", Kind::Integer, Get::NumberLength)
    .doc(
        "Minimum digits of the serial number, padded with leading zeros (0 to 20). Default: the \
         settings' number length of the document kind.",
    );
const STATUS: DocField = DocField::new("status", Kind::Text, Get::Status)
    .read_only()
    .doc(
        "DRAFT, OPEN, OVERDUE (an OPEN document past its due date, evaluated when read), PAID or \
         CANCELED; moved by complete, payments, cancel and uncancel (read only).",
    );
const DATE: DocField = DocField::new("date", Kind::Date, Get::Date).doc(
    "Document date. Default: today. Changing it moves due_date and discount_date by the same days.",
);
const SUPPLY_DATE: DocField = DocField::new("supply_date", Kind::Text, Get::SupplyDate).doc(
    "Supply or delivery date: a date (YYYY-MM-DD, else 400) for the types SUPPLY_DATE and \
     DELIVERY_DATE (the delivery date BT-72 of e-invoices), free text for the text types.",
);
const SUPPLY_DATE_TYPE: DocField = DocField::new(
    "supply_date_type",
    Kind::Enum(SUPPLY_DATE_TYPES),
    Get::SupplyDateType,
)
.doc(
    "How supply_date is given: as a date (SUPPLY_DATE, DELIVERY_DATE) or as free text such as a \
     period (SUPPLY_TEXT, DELIVERY_TEXT); it labels the date on the PDF.",
);
const DUE_DATE: DocField = DocField::new("due_date", Kind::Date, Get::DueDate).doc(
    "Date by which the document is to be paid, not before date. Default: date plus the client's \
     due_days, or the settings' when the client defers to them.",
);
const DUE_DAYS: DocField = DocField::new("due_days", Kind::Integer, Get::DueDays)
    .read_only()
    .doc("Days from date to due_date (read only; computed).");
const ADDRESS: DocField = DocField::new("address", Kind::Text, Get::Address).doc(
    "Recipient address block printed on the document. Default: the client's address (for a credit \
     note made from an invoice, the invoice's).",
);
const DISCOUNT_RATE: DocField = DocField::new("discount_rate", Kind::Decimal, Get::DiscountRate)
    .doc(
        "Cash discount in percent (0 to 100) for payment by discount_date. Default: the client's \
         discount_rate, or the settings' when the client defers to them.",
    );
const DISCOUNT_DATE: DocField = DocField::new("discount_date", Kind::Date, Get::DiscountDate).doc(
    "Last day the cash discount applies, not before date. Default: date plus the client's \
     discount_days, or the settings' when the client defers to them.",
);
const DISCOUNT_DAYS: DocField = DocField::new("discount_days", Kind::Integer, Get::DiscountDays)
    .read_only()
    .doc("Days from date to discount_date (read only; computed).");
const DISCOUNT_AMOUNT: DocField =
    DocField::new("discount_amount", Kind::Decimal, Get::DiscountAmount)
        .read_only()
        .doc(
            "Cash discount: total_gross × discount_rate / 100, rounded to cents (read only; \
             computed).",
        );
const LABEL: DocField = DocField::new("label", Kind::Text, Get::Label).doc(
    "Short text naming the project, matched by the label filter. Default: the settings' label of \
     the document kind.",
);
const INTRO: DocField = DocField::new("intro", Kind::Text, Get::Intro).doc(
    "Introductory text printed above the items; placeholders are resolved. Default: the settings' \
     intro of the document kind.",
);
const NOTE: DocField = DocField::new("note", Kind::Text, Get::Note).doc(
    "Closing text printed below the totals; placeholders are resolved. Default: the settings' note \
     of the document kind.",
);
const TOTAL_GROSS: DocField = DocField::new("total_gross", Kind::Decimal, Get::TotalGross)
    .read_only()
    .doc(
        "Total with tax after the document reduction: total_net plus the taxes (read only; \
         computed from the items).",
    );
const TOTAL_NET: DocField = DocField::new("total_net", Kind::Decimal, Get::TotalNet)
    .read_only()
    .doc("Total without tax after the document reduction (read only; computed from the items).");
const NET_GROSS: DocField = DocField::new("net_gross", Kind::Enum(PRICE_BASES), Get::NetGross).doc(
    "Whether unit prices are NET (tax is added) or GROSS (tax is included). Default: the client's \
     net_gross, else the settings'.",
);
const REDUCTION: DocField = DocField::new("reduction", Kind::Text, Get::Reduction).doc(
    "Reduction of the whole document: an amount (10) or a percentage (10%), spread over the tax \
     groups. Default: the client's reduction.",
);
const TOTAL_GROSS_UNREDUCED: DocField = DocField::new(
    "total_gross_unreduced",
    Kind::Decimal,
    Get::TotalGrossUnreduced,
)
.read_only()
.doc("Total with tax before the document reduction (read only; computed).");
const TOTAL_NET_UNREDUCED: DocField =
    DocField::new("total_net_unreduced", Kind::Decimal, Get::TotalNetUnreduced)
        .read_only()
        .doc("Total without tax before the document reduction (read only; computed).");
const TOTAL_REDUCTION: DocField =
    DocField::new("total_reduction", Kind::Decimal, Get::TotalReduction)
        .read_only()
        .doc(
            "Amount the document reduction takes off, on the document's price basis (read only; \
             computed).",
        );
const CURRENCY_CODE: DocField = DocField::new("currency_code", Kind::Currency, Get::CurrencyCode)
    .doc("Currency of the document. Default: the client's currency_code, else the settings'.");
const QUOTE: DocField = DocField::new("quote", Kind::Decimal, Get::Quote).positive().doc(
    "Exchange rate from currency_code into the account's currency, kept for reports (amounts are \
     not converted); greater than 0. Default: 1.",
);
const PAYMENT_TYPES: DocField = DocField::new(
    "payment_types",
    Kind::Words(settings::PAYMENT_TYPES),
    Get::PaymentTypes,
)
.doc(
    "Accepted payment types, comma-separated (values of a payment's type); the first one sets the \
     e-invoice's payment means (BT-81). Default: the settings' payment_types.",
);
const PAID_AMOUNT: DocField = DocField::new("paid_amount", Kind::Decimal, Get::PaidAmount)
    .read_only()
    .doc("Sum of the booked payments (read only; computed).");
const OPEN_AMOUNT: DocField = DocField::new("open_amount", Kind::Decimal, Get::OpenAmount)
    .read_only()
    .doc(
        "total_gross minus paid_amount, never below 0; 0 once PAID or CANCELED (read only; \
         computed).",
    );
const TEMPLATE_ID: DocField = DocField::new("template_id", Kind::Integer, Get::TemplateId).doc(
    "Template the document is completed with, unless the complete request names one (which \
     wins, for every kind). Empty: the default template of its type.",
);
const CREDIT_NOTE_NUMBER: DocField =
    DocField::new("credit_note_number", Kind::Text, Get::FormattedNumber)
        .read_only()
        .doc(
            "The credit note number: number_pre with its date placeholders resolved, then number \
             zero-padded to number_length digits (read only; computed).",
        );
const TITLE: DocField = DocField::new("title", Kind::Text, Get::Title).doc(
    "Title printed as the document's heading, before its number. Empty: the kind's name (Credit \
     note, Offer, Order confirmation, Delivery note).",
);
const CUSTOMERPORTAL_URL: DocField =
    DocField::new("customerportal_url", Kind::Text, Get::PortalUrl)
        .read_only()
        .doc(
            "Link to the document in the customer portal, where its client sees it, downloads its \
         PDF (and e-invoice), and answers an offer: made at completion when the settings' \
         public_url is set, replaced by PUT …/renew-link. Empty without one (read only).",
        );
const INVOICE_ID: DocField = DocField::new("invoice_id", Kind::Integer, Get::InvoiceId).doc(
    "Invoice the credit note is made from (create only); it takes the invoice's client, address, \
     price basis, currency, quote, reduction and, without items of its own, its items.",
);
const FREE_TEXT_ID: DocField = DocField::new("free_text_id", Kind::Integer, Get::FreeTextId).doc(
    "Id of a free text; kept as given (the service has no free texts, so it sets no other field).",
);
const BUYER_REFERENCE: DocField = DocField::new("buyer_reference", Kind::Text, Get::BuyerReference)
    .doc(
        "Buyer reference (BT-10), e.g. a Leitweg-ID; XRechnung needs one. Default: the client's \
         buyer_reference.",
    );
const ORDER_REFERENCE: DocField = DocField::new("order_reference", Kind::Text, Get::OrderReference)
    .doc("Purchase order reference (BT-13) of e-invoices.");
const CONTRACT_REFERENCE: DocField =
    DocField::new("contract_reference", Kind::Text, Get::ContractReference)
        .doc("Contract reference (BT-12) of e-invoices, e.g. a framework contract's number.");
const OFFER_NUMBER: DocField = DocField::new("offer_number", Kind::Text, Get::FormattedNumber)
    .read_only()
    .doc(
        "The offer number: number_pre with its date placeholders resolved, then number \
         zero-padded to number_length digits (read only; computed).",
    );
const CONFIRMATION_NUMBER: DocField =
    DocField::new("confirmation_number", Kind::Text, Get::FormattedNumber)
        .read_only()
        .doc(
            "The confirmation number: number_pre with its date placeholders resolved, then \
             number zero-padded to number_length digits (read only; computed).",
        );
const DELIVERY_NOTE_NUMBER: DocField =
    DocField::new("delivery_note_number", Kind::Text, Get::FormattedNumber)
        .read_only()
        .doc(
            "The delivery note number: number_pre with its date placeholders resolved, then \
             number zero-padded to number_length digits (read only; computed).",
        );
const VALIDITY_DAYS: DocField = DocField::new("validity_days", Kind::Integer, Get::ValidityDays)
    .doc(
        "Days the offer holds after its date (0 or more); sets validity_date. Default: the \
         settings' offer_validity_days (30).",
    );
const VALIDITY_DATE: DocField = DocField::new("validity_date", Kind::Date, Get::ValidityDate)
    .read_only()
    .doc("Last day the offer holds: date plus validity_days (read only; computed).");
const OFFER_ID: DocField = DocField::new("offer_id", Kind::Integer, Get::OfferId).doc(
    "The offer the document was made from: an offer of the same client (else 400). Set on \
     create; an invoice made from an offer adds a CREATE_FROM_OFFER comment to both.",
);
const CONFIRMATION_ID: DocField =
    DocField::new("confirmation_id", Kind::Integer, Get::ConfirmationId).doc(
        "The order confirmation the document was made from: a confirmation of the same client \
         (else 400). Set on create; an invoice made from one adds a CREATE_FROM_CONFIRMATION \
         comment to both.",
    );
const DELIVERED_INVOICE_ID: DocField = DocField::new("invoice_id", Kind::Integer, Get::InvoiceId)
    .doc("The invoice the delivery note belongs to: an invoice of the same client (else 400).");

const RECURRING_ID: DocField = DocField::new("recurring_id", Kind::Integer, Get::RecurringId)
    .read_only()
    .doc("The recurring invoice whose run made the invoice (read only).");

/// A field of a recurring invoice's schedule.
const fn schedule(name: &'static str, kind: Kind, field: ScheduleField) -> DocField {
    DocField::new(name, kind, Get::Schedule(field))
}

const R_NAME: DocField = schedule("name", Kind::Text, ScheduleField::Name)
    .doc("The account's name for the recurring invoice, matched by the name filter.");
const R_CYCLE: DocField = schedule("cycle", Kind::Enum(Cycle::NAMES), ScheduleField::Cycle).doc(
    "How often it runs: DAILY, WEEKLY, MONTHLY, QUARTERLY, SEMIYEARLY or YEARLY. Default: \
     MONTHLY.",
);
const R_CYCLE_NUMBER: DocField =
    schedule("cycle_number", Kind::Integer, ScheduleField::CycleNumber).doc(
        "Every how many cycles it runs (1 or more; 2 with MONTHLY: every other month). Default: 1.",
    );
const R_ACTION: DocField = schedule("action", Kind::Enum(ACTIONS), ScheduleField::Action).doc(
    "What a run does with the invoice it makes: CREATE leaves a draft, COMPLETE completes it, \
     EMAIL completes and e-mails it, MAIL completes and posts it. A completion the e-invoice \
     rules refuse leaves the draft and sets last_error. Default: CREATE.",
);
const R_HOUR: DocField = schedule("hour", Kind::Integer, ScheduleField::Hour).doc(
    "The hour of the run day (0 to 23) in the account's time_zone; in an hour a DST change \
     skips, the first moment after it. Default: 2.",
);
const R_START_DATE: DocField = schedule("start_date", Kind::Date, ScheduleField::StartDate).doc(
    "The date of the first run, not before today: the k-th run is start_date plus k × \
     cycle_number cycles; a day the month lacks falls back to its last day. Default: tomorrow.",
);
const R_END_DATE: DocField = schedule("end_date", Kind::Date, ScheduleField::EndDate)
    .doc("No run after this date; not before start_date. Empty: no end.");
const R_ITERATIONS: DocField = schedule("iterations", Kind::Integer, ScheduleField::Iterations)
    .doc("Runs after which the series ends (0 or more; 0: no limit). Default: 0.");
const R_COUNTER: DocField = schedule("counter", Kind::Integer, ScheduleField::Counter)
    .read_only()
    .doc("Runs made so far (read only).");
const R_LAST_CREATION_DATE: DocField = schedule(
    "last_creation_date",
    Kind::Date,
    ScheduleField::LastCreationDate,
)
.read_only()
.doc("The date of the last invoice made (read only).");
const R_NEXT_CREATION_DATE: DocField = schedule(
    "next_creation_date",
    Kind::Date,
    ScheduleField::NextCreationDate,
)
.doc(
    "The date of the next run. Set to a date from today on, the series runs on it and every \
     cycle after it (start_date becomes that date); set empty, it stops. Computed otherwise; \
     empty once the series has ended.",
);
const R_ULTIMO: DocField = schedule("ultimo", Kind::Bool, ScheduleField::Ultimo)
    .doc("1: every run on the last day of its month. Default: 0.");
const R_DUE_DAYS: DocField = schedule("due_days", Kind::Integer, ScheduleField::DueDays).doc(
    "Days from a made invoice's date to its due date. Default: the client's terms, else the \
     settings'.",
);
const R_DISCOUNT_DAYS: DocField =
    schedule("discount_days", Kind::Integer, ScheduleField::DiscountDays).doc(
        "Days from a made invoice's date to its cash discount date. Default: the client's \
         terms, else the settings'.",
    );
const R_EMAIL_SENDER: DocField = schedule("email_sender", Kind::Email, ScheduleField::EmailSender)
    .doc("EMAIL: the sender. Empty: the settings' default_email_sender.");
const R_EMAIL_SUBJECT: DocField =
    schedule("email_subject", Kind::Text, ScheduleField::EmailSubject).doc(
        "EMAIL: the subject, placeholders resolved. Empty: the settings' invoice e-mail subject.",
    );
const R_EMAIL_MESSAGE: DocField =
    schedule("email_message", Kind::Text, ScheduleField::EmailMessage).doc(
        "EMAIL: the message, placeholders resolved. Empty: the settings' invoice e-mail body.",
    );
const R_EMAIL_FILENAME: DocField =
    schedule("email_filename", Kind::Text, ScheduleField::EmailFilename)
        .doc("EMAIL: the attached PDF's name without .pdf. Empty: invoice_{id}.");
const R_EMAIL_BCC: DocField = schedule("email_bcc", Kind::Text, ScheduleField::EmailBcc)
    .doc("EMAIL: addresses that get a blind copy, comma-separated.");
const R_LETTER_COLOR: DocField = schedule("letter_color", Kind::Bool, ScheduleField::LetterColor)
    .doc("MAIL: 1 prints in color. Default: 0.");
const R_LETTER_DUPLEX: DocField =
    schedule("letter_duplex", Kind::Bool, ScheduleField::LetterDuplex)
        .doc("MAIL: 1 prints on both sides. Default: 1.");
const R_LETTER_PAPER_WEIGHT: DocField = schedule(
    "letter_paper_weight",
    Kind::Integer,
    ScheduleField::LetterPaperWeight,
)
.doc("MAIL: paper weight in g/m², 80 or 90. Default: 80.");
const R_LAST_ERROR: DocField = schedule("last_error", Kind::Text, ScheduleField::LastError)
    .read_only()
    .doc("Why the last run's action did not happen, e.g. the e-invoice rules a completion failed (read only).");

/// Recurring invoice fields in response order.
pub static RECURRING: &[DocField] = &[
    ID,
    CLIENT_ID,
    CONTACT_ID,
    CREATED,
    UPDATED,
    TEMPLATE_ID,
    CURRENCY_CODE,
    R_NAME,
    TITLE,
    R_CYCLE,
    R_CYCLE_NUMBER,
    R_ACTION,
    R_HOUR,
    R_START_DATE,
    R_END_DATE,
    R_ITERATIONS,
    R_COUNTER,
    R_LAST_CREATION_DATE,
    R_NEXT_CREATION_DATE,
    R_ULTIMO,
    ADDRESS,
    SUPPLY_DATE_TYPE,
    R_DUE_DAYS,
    DISCOUNT_RATE,
    R_DISCOUNT_DAYS,
    LABEL,
    INTRO,
    NOTE,
    REDUCTION,
    NET_GROSS,
    QUOTE,
    PAYMENT_TYPES,
    BUYER_REFERENCE,
    ORDER_REFERENCE,
    CONTRACT_REFERENCE,
    R_EMAIL_SENDER,
    R_EMAIL_SUBJECT,
    R_EMAIL_MESSAGE,
    R_EMAIL_FILENAME,
    R_EMAIL_BCC,
    R_LETTER_COLOR,
    R_LETTER_DUPLEX,
    R_LETTER_PAPER_WEIGHT,
    OFFER_ID,
    CONFIRMATION_ID,
    TOTAL_GROSS,
    TOTAL_NET,
    TOTAL_GROSS_UNREDUCED,
    TOTAL_NET_UNREDUCED,
    TOTAL_REDUCTION,
    R_LAST_ERROR,
];

/// A field of a reminder's dunning data.
const fn dunning(name: &'static str, kind: Kind, field: DunningField) -> DocField {
    DocField::new(name, kind, Get::Dunning(field))
}

const M_INVOICE_ID: DocField = DocField::new("invoice_id", Kind::Integer, Get::InvoiceId)
    .mandatory()
    .doc(
        "The invoice the reminder is for: an OPEN or OVERDUE invoice of the account (else 400). \
         Mandatory on create and fixed then; the reminder takes the invoice's client, contact, \
         address and currency, and claims its open amount.",
    );
const M_CLIENT_ID: DocField = DocField::new("client_id", Kind::Integer, Get::ClientId)
    .read_only()
    .doc("The client of the reminder's invoice (read only).");
const M_CURRENCY_CODE: DocField = DocField::new("currency_code", Kind::Currency, Get::CurrencyCode)
    .read_only()
    .doc("The currency of the reminder's invoice (read only).");
const M_REMINDER_TEXT_ID: DocField = dunning(
    "reminder_text_id",
    Kind::Integer,
    DunningField::ReminderTextId,
)
.doc(
    "The dunning level (of /api/reminder-texts) whose subject, texts and fee the reminder \
     takes; set on create. Default: the next level of the invoice (its completed reminders + \
     1; the last level repeats).",
);
const M_LEVEL: DocField = dunning("reminder_level", Kind::Integer, DunningField::Level)
    .read_only()
    .doc(
        "Which reminder of its invoice this is: 1 for the first, counting the invoice's \
         completed reminders that are not canceled (read only).",
    );
const M_LEVEL_NAME: DocField = dunning("reminder_level_name", Kind::Text, DunningField::LevelName)
    .read_only()
    .doc("The name of the reminder's level (read only).");
const M_SUBJECT: DocField = dunning("subject", Kind::Text, DunningField::Subject).doc(
    "The reminder's heading on the PDF and the default subject of its e-mail; placeholders \
     are resolved. Default: the level's subject.",
);
const M_INTRO: DocField = DocField::new("intro", Kind::Text, Get::Intro).doc(
    "Text printed above the claim; placeholders such as [Invoice.invoice_number] are resolved. \
     Default: the level's header.",
);
const M_NOTE: DocField = DocField::new("note", Kind::Text, Get::Note).doc(
    "Text printed below the amount due; placeholders are resolved. Default: the level's footer.",
);
const M_DUE_DATE: DocField = DocField::new("due_date", Kind::Date, Get::DueDate).doc(
    "The new date by which the amount due is to be paid, not before date; the reminder is \
     OVERDUE after it. Default: date plus due_days.",
);
const M_DUE_DAYS: DocField = DocField::new("due_days", Kind::Integer, Get::DueDays)
    .doc("Days from date to due_date (0 to 3650). Default: the settings' reminder_due_days (10).");
const M_TOTAL_GROSS: DocField = DocField::new("total_gross", Kind::Decimal, Get::TotalGross)
    .read_only()
    .doc(
        "The amount due: the invoice's open amount plus the reminder's items (fees, interest); \
         no VAT (read only; computed).",
    );
const M_STATUS: DocField = DocField::new("status", Kind::Text, Get::Status)
    .read_only()
    .doc(
        "DRAFT, OPEN, OVERDUE (past its own due date), PAID (its invoice is PAID) or CANCELED \
         (read only).",
    );
const M_PAID_AMOUNT: DocField = DocField::new("paid_amount", Kind::Decimal, Get::PaidAmount)
    .read_only()
    .doc(
        "What was paid on the invoice since the reminder took its claim, up to total_gross \
         (read only; computed).",
    );
const M_IS_OLD: DocField = dunning("is_old", Kind::Bool, DunningField::IsOld)
    .read_only()
    .doc("1 once a later reminder of the same invoice was completed (read only).");
const M_DATE: DocField = DocField::new("date", Kind::Date, Get::Date).doc(
    "The reminder's date; default interest runs up to it. Default: today. Changing it moves \
     due_date by the same days.",
);

const M_LABEL: DocField = DocField::new("label", Kind::Text, Get::Label)
    .doc("Short text, matched by the label filter. Default: the invoice's label.");

/// Reminder fields in response order.
pub static REMINDER: &[DocField] = &[
    ID,
    CREATED,
    UPDATED,
    M_STATUS,
    M_INVOICE_ID,
    M_CLIENT_ID,
    CONTACT_ID,
    M_REMINDER_TEXT_ID,
    M_LEVEL,
    M_LEVEL_NAME,
    M_DATE,
    M_LABEL,
    M_SUBJECT,
    M_INTRO,
    M_NOTE,
    M_DUE_DATE,
    M_DUE_DAYS,
    M_TOTAL_GROSS,
    M_PAID_AMOUNT,
    OPEN_AMOUNT,
    M_IS_OLD,
    TEMPLATE_ID,
    ADDRESS,
    M_CURRENCY_CODE,
    CUSTOMERPORTAL_URL,
];

/// Invoice fields in response order.
pub static INVOICE: &[DocField] = &[
    ID,
    CLIENT_ID,
    CONTACT_ID,
    CREATED,
    UPDATED,
    INVOICE_NUMBER,
    NUMBER,
    NUMBER_PRE,
    NUMBER_LENGTH,
    STATUS,
    DATE,
    SUPPLY_DATE,
    SUPPLY_DATE_TYPE,
    DUE_DATE,
    DUE_DAYS,
    ADDRESS,
    DISCOUNT_RATE,
    DISCOUNT_DATE,
    DISCOUNT_DAYS,
    DISCOUNT_AMOUNT,
    LABEL,
    INTRO,
    NOTE,
    TOTAL_GROSS,
    TOTAL_NET,
    NET_GROSS,
    REDUCTION,
    TOTAL_GROSS_UNREDUCED,
    TOTAL_NET_UNREDUCED,
    TOTAL_REDUCTION,
    CURRENCY_CODE,
    QUOTE,
    PAYMENT_TYPES,
    PAID_AMOUNT,
    OPEN_AMOUNT,
    CUSTOMERPORTAL_URL,
    TEMPLATE_ID,
    BUYER_REFERENCE,
    ORDER_REFERENCE,
    CONTRACT_REFERENCE,
    OFFER_ID,
    CONFIRMATION_ID,
    RECURRING_ID,
];

/// Credit note fields in response order.
pub static CREDIT_NOTE: &[DocField] = &[
    ID,
    CLIENT_ID,
    CONTACT_ID,
    CREATED,
    UPDATED,
    CREDIT_NOTE_NUMBER,
    NUMBER,
    NUMBER_PRE,
    NUMBER_LENGTH,
    STATUS,
    DATE,
    DUE_DATE,
    DUE_DAYS,
    ADDRESS,
    TITLE,
    LABEL,
    INTRO,
    NOTE,
    REDUCTION,
    CURRENCY_CODE,
    NET_GROSS,
    QUOTE,
    TOTAL_GROSS,
    TOTAL_NET,
    TOTAL_GROSS_UNREDUCED,
    TOTAL_NET_UNREDUCED,
    TOTAL_REDUCTION,
    PAID_AMOUNT,
    OPEN_AMOUNT,
    CUSTOMERPORTAL_URL,
    INVOICE_ID,
    FREE_TEXT_ID,
    TEMPLATE_ID,
    BUYER_REFERENCE,
    ORDER_REFERENCE,
    CONTRACT_REFERENCE,
];

/// Offer fields in response order.
pub static OFFER: &[DocField] = &[
    ID,
    CLIENT_ID,
    CONTACT_ID,
    CREATED,
    UPDATED,
    OFFER_NUMBER,
    NUMBER,
    NUMBER_PRE,
    NUMBER_LENGTH,
    STATUS,
    DATE,
    VALIDITY_DAYS,
    VALIDITY_DATE,
    ADDRESS,
    TITLE,
    LABEL,
    INTRO,
    NOTE,
    TOTAL_GROSS,
    TOTAL_NET,
    NET_GROSS,
    REDUCTION,
    TOTAL_GROSS_UNREDUCED,
    TOTAL_NET_UNREDUCED,
    TOTAL_REDUCTION,
    CURRENCY_CODE,
    QUOTE,
    TEMPLATE_ID,
    CUSTOMERPORTAL_URL,
];

/// Order confirmation fields in response order.
pub static CONFIRMATION: &[DocField] = &[
    ID,
    CLIENT_ID,
    CONTACT_ID,
    CREATED,
    UPDATED,
    CONFIRMATION_NUMBER,
    NUMBER,
    NUMBER_PRE,
    NUMBER_LENGTH,
    STATUS,
    DATE,
    ADDRESS,
    TITLE,
    LABEL,
    INTRO,
    NOTE,
    TOTAL_GROSS,
    TOTAL_NET,
    NET_GROSS,
    REDUCTION,
    TOTAL_GROSS_UNREDUCED,
    TOTAL_NET_UNREDUCED,
    TOTAL_REDUCTION,
    CURRENCY_CODE,
    QUOTE,
    TEMPLATE_ID,
    OFFER_ID,
    CUSTOMERPORTAL_URL,
];

/// Delivery note fields in response order: no reduction, currency or quote (its items keep
/// their prices, and its totals are computed).
pub static DELIVERY_NOTE: &[DocField] = &[
    ID,
    CLIENT_ID,
    CONTACT_ID,
    CREATED,
    UPDATED,
    DELIVERY_NOTE_NUMBER,
    NUMBER,
    NUMBER_PRE,
    NUMBER_LENGTH,
    STATUS,
    DATE,
    ADDRESS,
    TITLE,
    LABEL,
    INTRO,
    NOTE,
    TOTAL_GROSS,
    TOTAL_NET,
    NET_GROSS,
    TEMPLATE_ID,
    OFFER_ID,
    CONFIRMATION_ID,
    DELIVERED_INVOICE_ID,
    CUSTOMERPORTAL_URL,
];

/// The field table of a kind, in response order.
pub fn table(kind: DocKind) -> &'static [DocField] {
    match kind {
        DocKind::Invoice => INVOICE,
        DocKind::CreditNote => CREDIT_NOTE,
        DocKind::Offer => OFFER,
        DocKind::Confirmation => CONFIRMATION,
        DocKind::DeliveryNote => DELIVERY_NOTE,
        DocKind::Recurring => RECURRING,
        DocKind::Reminder => REMINDER,
    }
}

/// The wire schema of a kind (the `Field`s of its table), for parsing and ordering.
pub fn fields(kind: DocKind) -> &'static [Field] {
    const fn schema<const N: usize>(table: &[DocField]) -> [Field; N] {
        let mut out = [Field::new("", Kind::Text); N];
        let mut i = 0;
        while i < N {
            out[i] = table[i].field;
            i += 1;
        }
        out
    }
    static INVOICE_SCHEMA: [Field; INVOICE.len()] = schema(INVOICE);
    static CREDIT_NOTE_SCHEMA: [Field; CREDIT_NOTE.len()] = schema(CREDIT_NOTE);
    static OFFER_SCHEMA: [Field; OFFER.len()] = schema(OFFER);
    static CONFIRMATION_SCHEMA: [Field; CONFIRMATION.len()] = schema(CONFIRMATION);
    static DELIVERY_NOTE_SCHEMA: [Field; DELIVERY_NOTE.len()] = schema(DELIVERY_NOTE);
    static RECURRING_SCHEMA: [Field; RECURRING.len()] = schema(RECURRING);
    static REMINDER_SCHEMA: [Field; REMINDER.len()] = schema(REMINDER);
    match kind {
        DocKind::Invoice => &INVOICE_SCHEMA,
        DocKind::CreditNote => &CREDIT_NOTE_SCHEMA,
        DocKind::Offer => &OFFER_SCHEMA,
        DocKind::Confirmation => &CONFIRMATION_SCHEMA,
        DocKind::DeliveryNote => &DELIVERY_NOTE_SCHEMA,
        DocKind::Recurring => &RECURRING_SCHEMA,
        DocKind::Reminder => &REMINDER_SCHEMA,
    }
}

/// The document as a record of its wire fields (for ordering and placeholders).
pub fn to_record(doc: &Document, today: Date) -> Record {
    to_record_of(doc, today, |_| true)
}

/// The document as a record of the wire fields `wanted` names, valued as `to_record`
/// values them: what a page in another order than by id keeps of each match.
pub fn to_record_of(doc: &Document, today: Date, wanted: impl Fn(&str) -> bool) -> Record {
    let mut r = Record::default();
    for f in table(doc.kind).iter().filter(|f| wanted(f.field.name)) {
        if let Some(v) = f.get.get(doc, today) {
            r.values.insert(f.field.name.to_owned(), v.to_scalar());
        }
    }
    r
}
