//! Documents (invoices and credit notes, one implementation): defaults from settings and
//! client, numbering, totals, the lifecycle and the indexes lists are served from. A
//! `DocKind` supplies each kind's names and rules. Items, payments, comments and tags live
//! in their own modules and keep the document's cached totals, payment state and tags
//! current in the same transaction.

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use super::clients::{self, CLIENTS};
use super::date::Date;
use super::money::{self, Line, PriceBasis, Reduction};
use super::records;
use super::schema::{Changes, Field, Kind, Record, Scalar, Value};
use super::settings::{self, parse_payment_types};
use super::{Ctx, Error, comments, country_taxes, grouping, items, numbering, taxes};
use crate::caps::{Read, Write};
use crate::limits;
use crate::store::{self, decimal_bytes};

/// The kinds of documents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum DocKind {
    #[default]
    Invoice,
    CreditNote,
}

impl DocKind {
    /// Storage collection and the parent name of items, payments and comments.
    pub fn collection(self) -> &'static str {
        match self {
            DocKind::Invoice => "invoices",
            DocKind::CreditNote => "credit-notes",
        }
    }

    /// The number range and the prefix of the kind's settings (`invoice_intro`, ...).
    pub fn range(self) -> &'static str {
        match self {
            DocKind::Invoice => "invoice",
            DocKind::CreditNote => "credit_note",
        }
    }

    /// The name in messages.
    pub fn label(self) -> &'static str {
        match self {
            DocKind::Invoice => "invoice",
            DocKind::CreditNote => "credit note",
        }
    }

    /// The name on the printed document.
    pub fn title(self) -> &'static str {
        match self {
            DocKind::Invoice => "Invoice",
            DocKind::CreditNote => "Credit note",
        }
    }

    /// The wire field of the document number.
    pub fn number_field(self) -> &'static str {
        match self {
            DocKind::Invoice => "invoice_number",
            DocKind::CreditNote => "credit_note_number",
        }
    }

    /// The wire field naming the document on items, payments, comments and tags.
    pub fn parent_field(self) -> &'static str {
        match self {
            DocKind::Invoice => "invoice_id",
            DocKind::CreditNote => "credit_note_id",
        }
    }

    /// The template type the kind is completed with.
    pub fn template_type(self) -> &'static str {
        match self {
            DocKind::Invoice => "INVOICE",
            DocKind::CreditNote => "CREDIT_NOTE",
        }
    }

    /// The object name of placeholders (`[Invoice.date]`, `[CreditNote.date]`).
    pub fn placeholder_object(self) -> &'static str {
        match self {
            DocKind::Invoice => "Invoice",
            DocKind::CreditNote => "CreditNote",
        }
    }

    fn client_index_byte(self) -> u8 {
        match self {
            DocKind::Invoice => b'i',
            DocKind::CreditNote => b'c',
        }
    }

    /// A setting of this kind, e.g. `setting("intro")` is `invoice_intro`.
    pub fn setting(self, name: &str) -> String {
        format!("{}_{name}", self.range())
    }

    pub fn not_found(self, id: u64) -> Error {
        Error::NotFound(format!("{} {id} does not exist", self.label()))
    }
}

/// The stored state. OVERDUE is not stored: an OPEN invoice past its due date reads as
/// OVERDUE (see `Shown`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Status {
    Draft,
    Open,
    Paid,
    Canceled,
}

impl Status {
    /// How the status shows when that does not depend on the day: every status but OPEN
    /// (OPEN or OVERDUE by the due date).
    pub fn shown_as_stored(self) -> Option<Shown> {
        match self {
            Status::Draft => Some(Shown::Draft),
            Status::Paid => Some(Shown::Paid),
            Status::Canceled => Some(Shown::Canceled),
            Status::Open => None,
        }
    }
}

/// The stored statuses that show as themselves.
pub const SHOWN_AS_STORED: [Status; 3] = [Status::Draft, Status::Paid, Status::Canceled];

/// The status as the API shows and filters it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Shown {
    Draft,
    Open,
    Overdue,
    Paid,
    Canceled,
}

impl Shown {
    pub const ALL: [Shown; 5] = [
        Shown::Draft,
        Shown::Open,
        Shown::Overdue,
        Shown::Paid,
        Shown::Canceled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Shown::Draft => "DRAFT",
            Shown::Open => "OPEN",
            Shown::Overdue => "OVERDUE",
            Shown::Paid => "PAID",
            Shown::Canceled => "CANCELED",
        }
    }

    pub fn parse(s: &str) -> Option<Shown> {
        Shown::ALL
            .into_iter()
            .find(|st| st.as_str().eq_ignore_ascii_case(s.trim()))
    }
}

/// What happens to an invoice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    Edit,
    Complete,
    /// A payment was booked; `settled` when it pays the invoice in full or is marked so.
    Pay {
        settled: bool,
    },
    /// A payment was deleted; `settled` when the remaining payments still settle it.
    Unpay {
        settled: bool,
    },
    Cancel,
    Uncancel {
        settled: bool,
    },
}

fn state_error(state: Status, what: &str) -> String {
    let shown = match state {
        Status::Draft => "DRAFT",
        Status::Open => "OPEN",
        Status::Paid => "PAID",
        Status::Canceled => "CANCELED",
    };
    format!("{what}; this {{doc}} is {shown}")
}

/// The lifecycle: the one place that decides which event is allowed in which state.
/// Refusals name the document as `{doc}`; `refusal` puts the kind's name in.
pub fn transition(state: Status, event: Event) -> Result<Status, String> {
    use Event::*;
    use Status::*;
    let settle = |settled: bool| if settled { Paid } else { Open };
    match (state, event) {
        (Draft, Edit) => Ok(Draft),
        (Open | Paid | Canceled, Edit) => {
            Err(state_error(state, "only a DRAFT {doc} can be changed"))
        }
        (Draft, Complete) => Ok(Open),
        (Open | Paid | Canceled, Complete) => {
            Err(state_error(state, "only a DRAFT {doc} can be completed"))
        }
        (Open, Pay { settled }) => Ok(settle(settled)),
        (Draft | Paid | Canceled, Pay { .. }) => Err(state_error(
            state,
            "payments can be booked only for OPEN or OVERDUE {doc}s",
        )),
        (Open | Paid, Unpay { settled }) => Ok(settle(settled)),
        (Canceled, Unpay { .. }) => Ok(Canceled),
        (Draft, Unpay { .. }) => Err(state_error(state, "a draft has no payments")),
        (Open | Paid, Cancel) => Ok(Canceled),
        (Draft, Cancel) => Err(state_error(
            state,
            "a DRAFT {doc} cannot be canceled (delete it instead)",
        )),
        (Canceled, Cancel) => Err(state_error(state, "the {doc} is already canceled")),
        (Canceled, Uncancel { settled }) => Ok(settle(settled)),
        (Draft | Open | Paid, Uncancel { .. }) => Err(state_error(
            state,
            "only a CANCELED {doc} can be uncanceled",
        )),
    }
}

/// A lifecycle refusal as the client reads it.
pub fn refusal(kind: DocKind, message: String) -> Error {
    Error::invalid(message.replace("{doc}", kind.label()))
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredTax {
    pub name: String,
    #[serde(with = "decimal_bytes")]
    pub rate: Decimal,
    #[serde(with = "decimal_bytes")]
    pub net: Decimal,
    #[serde(with = "decimal_bytes")]
    pub amount: Decimal,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    /// Resolved prefix plus padded number.
    pub invoice_number: String,
    pub status: Status,
    pub date: Date,
    pub supply_date: String,
    pub supply_date_type: String,
    pub due_date: Date,
    pub address: String,
    #[serde(with = "decimal_bytes")]
    pub discount_rate: Decimal,
    pub discount_date: Date,
    pub label: String,
    pub intro: String,
    pub note: String,
    pub currency_code: String,
    #[serde(with = "decimal_bytes")]
    pub quote: Decimal,
    pub payment_types: String,
    pub net_gross: String,
    pub reduction: String,
    pub template_id: Option<i64>,
    pub tax_free: bool,
    #[serde(with = "decimal_bytes")]
    pub total_net: Decimal,
    #[serde(with = "decimal_bytes")]
    pub total_gross: Decimal,
    #[serde(with = "decimal_bytes")]
    pub total_net_unreduced: Decimal,
    #[serde(with = "decimal_bytes")]
    pub total_gross_unreduced: Decimal,
    #[serde(with = "decimal_bytes")]
    pub total_reduction: Decimal,
    pub taxes: Vec<StoredTax>,
    #[serde(with = "decimal_bytes")]
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
}

impl Document {
    pub fn shown(&self, today: Date) -> Shown {
        match self.status {
            Status::Draft => Shown::Draft,
            Status::Open if self.due_date < today => Shown::Overdue,
            Status::Open => Shown::Open,
            Status::Paid => Shown::Paid,
            Status::Canceled => Shown::Canceled,
        }
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
            Status::Draft | Status::Open => {
                (self.total_gross - self.paid_amount).max(Decimal::ZERO)
            }
        }
    }

    /// Whether the payments settle the invoice.
    pub fn settled_by(&self, paid: Decimal, marked: bool) -> bool {
        marked || (paid >= self.total_gross && paid > Decimal::ZERO)
    }
}

/// Invoice fields in response order; read-only ones are computed.
pub static INVOICE_FIELDS: &[Field] = &[
    Field::new("id", Kind::Integer).read_only(),
    Field::new("client_id", Kind::Integer).mandatory(),
    Field::new("contact_id", Kind::Integer),
    Field::new("created", Kind::DateTime).read_only(),
    Field::new("updated", Kind::DateTime).read_only(),
    Field::new("invoice_number", Kind::Text).read_only(),
    Field::new("number", Kind::Integer),
    Field::new("number_pre", Kind::Text),
    Field::new("number_length", Kind::Integer),
    Field::new("status", Kind::Text).read_only(),
    Field::new("date", Kind::Date),
    Field::new("supply_date", Kind::Text),
    Field::new(
        "supply_date_type",
        Kind::Enum(&[
            "SUPPLY_DATE",
            "DELIVERY_DATE",
            "SUPPLY_TEXT",
            "DELIVERY_TEXT",
        ]),
    ),
    Field::new("due_date", Kind::Date),
    Field::new("due_days", Kind::Integer).read_only(),
    Field::new("address", Kind::Text),
    Field::new("discount_rate", Kind::Decimal),
    Field::new("discount_date", Kind::Date),
    Field::new("discount_days", Kind::Integer).read_only(),
    Field::new("discount_amount", Kind::Decimal).read_only(),
    Field::new("label", Kind::Text),
    Field::new("intro", Kind::Text),
    Field::new("note", Kind::Text),
    Field::new("total_gross", Kind::Decimal).read_only(),
    Field::new("total_net", Kind::Decimal).read_only(),
    Field::new("net_gross", Kind::Enum(&["NET", "GROSS"])),
    Field::new("reduction", Kind::Text),
    Field::new("total_gross_unreduced", Kind::Decimal).read_only(),
    Field::new("total_net_unreduced", Kind::Decimal).read_only(),
    Field::new("total_reduction", Kind::Decimal).read_only(),
    Field::new("currency_code", Kind::Currency),
    Field::new("quote", Kind::Decimal),
    Field::new("payment_types", Kind::Text),
    Field::new("paid_amount", Kind::Decimal).read_only(),
    Field::new("open_amount", Kind::Decimal).read_only(),
    Field::new("template_id", Kind::Integer),
];

/// Credit note fields in response order.
pub static CREDIT_NOTE_FIELDS: &[Field] = &[
    Field::new("id", Kind::Integer).read_only(),
    Field::new("client_id", Kind::Integer).mandatory(),
    Field::new("contact_id", Kind::Integer),
    Field::new("created", Kind::DateTime).read_only(),
    Field::new("updated", Kind::DateTime).read_only(),
    Field::new("credit_note_number", Kind::Text).read_only(),
    Field::new("number", Kind::Integer),
    Field::new("number_pre", Kind::Text),
    Field::new("number_length", Kind::Integer),
    Field::new("status", Kind::Text).read_only(),
    Field::new("date", Kind::Date),
    Field::new("due_date", Kind::Date),
    Field::new("due_days", Kind::Integer).read_only(),
    Field::new("address", Kind::Text),
    Field::new("title", Kind::Text),
    Field::new("label", Kind::Text),
    Field::new("intro", Kind::Text),
    Field::new("note", Kind::Text),
    Field::new("reduction", Kind::Text),
    Field::new("currency_code", Kind::Currency),
    Field::new("net_gross", Kind::Enum(&["NET", "GROSS"])),
    Field::new("quote", Kind::Decimal),
    Field::new("total_gross", Kind::Decimal).read_only(),
    Field::new("total_net", Kind::Decimal).read_only(),
    Field::new("total_gross_unreduced", Kind::Decimal).read_only(),
    Field::new("total_net_unreduced", Kind::Decimal).read_only(),
    Field::new("total_reduction", Kind::Decimal).read_only(),
    Field::new("paid_amount", Kind::Decimal).read_only(),
    Field::new("open_amount", Kind::Decimal).read_only(),
    Field::new("customerportal_url", Kind::Text).read_only(),
    Field::new("invoice_id", Kind::Integer),
    Field::new("free_text_id", Kind::Integer),
    Field::new("template_id", Kind::Integer),
];

pub fn fields(kind: DocKind) -> &'static [Field] {
    match kind {
        DocKind::Invoice => INVOICE_FIELDS,
        DocKind::CreditNote => CREDIT_NOTE_FIELDS,
    }
}

pub fn today(ctx: &Ctx) -> Date {
    Date::from_unix(ctx.now)
}

/// Which response field of a document to read. A `match` rather than a function pointer
/// per field: each instance sets up an indirect call's target afresh, once per field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Getter {
    Id,
    ClientId,
    ContactId,
    Created,
    Updated,
    InvoiceNumber,
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
    /// Not kept (customerportal_url): always empty.
    Empty,
}

impl Getter {
    /// The field's value; `None` leaves it empty.
    pub fn get(self, d: &Document, today: Date) -> Option<Value<'_>> {
        match self {
            Getter::Id => Some(Value::Int(d.id as i64)),
            Getter::ClientId => Some(Value::Int(d.client_id as i64)),
            Getter::ContactId => d.contact_id.map(Value::Int),
            Getter::Created => Some(Value::DateTime(d.created)),
            Getter::Updated => Some(Value::DateTime(d.updated)),
            Getter::InvoiceNumber => text(&d.invoice_number),
            Getter::Title => text(&d.title),
            Getter::InvoiceId => d.invoice_id.map(Value::Int),
            Getter::FreeTextId => d.free_text_id.map(Value::Int),
            Getter::Number => Some(Value::Int(d.number)),
            Getter::NumberPre => text(&d.number_pre),
            Getter::NumberLength => Some(Value::Int(d.number_length)),
            Getter::Status => Some(Value::Text(d.shown(today).as_str())),
            Getter::Date => Some(Value::Date(d.date)),
            Getter::SupplyDate => text(&d.supply_date),
            Getter::SupplyDateType => text(&d.supply_date_type),
            Getter::DueDate => Some(Value::Date(d.due_date)),
            Getter::DueDays => Some(Value::Int(d.due_date.days_since(d.date))),
            Getter::Address => text(&d.address),
            Getter::DiscountRate => Some(Value::Dec(d.discount_rate)),
            Getter::DiscountDate => Some(Value::Date(d.discount_date)),
            Getter::DiscountDays => Some(Value::Int(d.discount_date.days_since(d.date))),
            Getter::DiscountAmount => Some(Value::Dec(money::discount_amount(
                d.total_gross,
                d.discount_rate,
            ))),
            Getter::Label => text(&d.label),
            Getter::Intro => text(&d.intro),
            Getter::Note => text(&d.note),
            Getter::TotalGross => Some(Value::Dec(d.total_gross)),
            Getter::TotalNet => Some(Value::Dec(d.total_net)),
            Getter::NetGross => text(&d.net_gross),
            Getter::Reduction => text(&d.reduction),
            Getter::TotalGrossUnreduced => Some(Value::Dec(d.total_gross_unreduced)),
            Getter::TotalNetUnreduced => Some(Value::Dec(d.total_net_unreduced)),
            Getter::TotalReduction => Some(Value::Dec(d.total_reduction)),
            Getter::CurrencyCode => text(&d.currency_code),
            Getter::Quote => Some(Value::Dec(d.quote)),
            Getter::PaymentTypes => text(&d.payment_types),
            Getter::PaidAmount => Some(Value::Dec(d.paid_amount)),
            Getter::OpenAmount => Some(Value::Dec(d.open_amount())),
            Getter::TemplateId => d.template_id.map(Value::Int),
            Getter::Empty => None,
        }
    }
}

fn text(s: &str) -> Option<Value<'_>> {
    (!s.is_empty()).then_some(Value::Text(s))
}

/// Response field names and their getters.
const GETTERS: &[(&str, Getter)] = &[
    ("id", Getter::Id),
    ("client_id", Getter::ClientId),
    ("contact_id", Getter::ContactId),
    ("created", Getter::Created),
    ("updated", Getter::Updated),
    ("invoice_number", Getter::InvoiceNumber),
    ("credit_note_number", Getter::InvoiceNumber),
    ("title", Getter::Title),
    ("invoice_id", Getter::InvoiceId),
    ("free_text_id", Getter::FreeTextId),
    ("number", Getter::Number),
    ("number_pre", Getter::NumberPre),
    ("number_length", Getter::NumberLength),
    ("status", Getter::Status),
    ("date", Getter::Date),
    ("supply_date", Getter::SupplyDate),
    ("supply_date_type", Getter::SupplyDateType),
    ("due_date", Getter::DueDate),
    ("due_days", Getter::DueDays),
    ("address", Getter::Address),
    ("discount_rate", Getter::DiscountRate),
    ("discount_date", Getter::DiscountDate),
    ("discount_days", Getter::DiscountDays),
    ("discount_amount", Getter::DiscountAmount),
    ("label", Getter::Label),
    ("intro", Getter::Intro),
    ("note", Getter::Note),
    ("total_gross", Getter::TotalGross),
    ("total_net", Getter::TotalNet),
    ("net_gross", Getter::NetGross),
    ("reduction", Getter::Reduction),
    ("total_gross_unreduced", Getter::TotalGrossUnreduced),
    ("total_net_unreduced", Getter::TotalNetUnreduced),
    ("total_reduction", Getter::TotalReduction),
    ("currency_code", Getter::CurrencyCode),
    ("quote", Getter::Quote),
    ("payment_types", Getter::PaymentTypes),
    ("paid_amount", Getter::PaidAmount),
    ("open_amount", Getter::OpenAmount),
    ("template_id", Getter::TemplateId),
];

/// The getter of a response field; a `const fn`, so that tables of fields and getters are
/// worked out when the component is compiled rather than in each instance.
pub const fn getter(name: &str) -> Getter {
    let mut i = 0;
    while i < GETTERS.len() {
        if same(GETTERS[i].0, name) {
            return GETTERS[i].1;
        }
        i += 1;
    }
    Getter::Empty
}

/// `a == b`, in a `const fn`.
const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The response fields of a kind with their getters, in response order.
pub fn response_fields(kind: DocKind) -> &'static [(&'static Field, Getter)] {
    const fn table<const N: usize>(fields: &'static [Field]) -> [(&'static Field, Getter); N] {
        let mut out = [(&fields[0], Getter::Empty); N];
        let mut i = 0;
        while i < N {
            out[i] = (&fields[i], getter(fields[i].name));
            i += 1;
        }
        out
    }
    static INVOICE: [(&Field, Getter); INVOICE_FIELDS.len()] = table(INVOICE_FIELDS);
    static CREDIT_NOTE: [(&Field, Getter); CREDIT_NOTE_FIELDS.len()] = table(CREDIT_NOTE_FIELDS);
    match kind {
        DocKind::Invoice => &INVOICE,
        DocKind::CreditNote => &CREDIT_NOTE,
    }
}

/// The document as a record of its wire fields (for ordering and placeholders).
pub fn to_record(inv: &Document, today: Date) -> Record {
    let mut r = Record::default();
    for (f, get) in response_fields(inv.kind) {
        if let Some(v) = get.get(inv, today) {
            r.values.insert(f.name.to_owned(), v.to_scalar());
        }
    }
    r
}

// ---- storage -------------------------------------------------------------------------

fn key(account: u64, kind: DocKind, id: u64) -> Vec<u8> {
    store::record_key(account, kind.collection(), id)
}

/// Index entries of a document; lists read candidates from them instead of scanning.
/// A stored status as one key byte.
pub fn status_byte(status: Status) -> u8 {
    match status {
        Status::Draft => b'D',
        Status::Open => b'O',
        Status::Paid => b'P',
        Status::Canceled => b'C',
    }
}

pub fn status_of_byte(byte: u8) -> Option<Status> {
    Some(match byte {
        b'D' => Status::Draft,
        b'O' => Status::Open,
        b'P' => Status::Paid,
        b'C' => Status::Canceled,
        _ => return None,
    })
}

/// Prefix of every document of a kind of one account.
pub fn collection_prefix(account: u64, kind: DocKind) -> Vec<u8> {
    store::collection_prefix(account, kind.collection())
}

/// The status index entry of a document; for open ones the value is the day it is due,
/// so that OPEN and OVERDUE pages are told apart without loading documents.
pub fn status_entry(account: u64, inv: &Document) -> (Vec<u8>, Vec<u8>) {
    let key = store::index_key(
        account,
        inv.kind.collection(),
        "status",
        &[status_byte(inv.status)],
        inv.id,
    );
    let value = if inv.status == Status::Open {
        store::sortable_i32(inv.due_date.julian()).to_vec()
    } else {
        Vec::new()
    };
    (key, value)
}

/// Index entries of a document (key, value); lists read candidates from them instead of
/// scanning.
fn index_entries(account: u64, inv: &Document) -> Vec<(Vec<u8>, Vec<u8>)> {
    let coll = inv.kind.collection();
    let mut entries = vec![
        status_entry(account, inv),
        (
            store::index_key(
                account,
                coll,
                "date",
                &store::sortable_i32(inv.date.julian()),
                inv.id,
            ),
            Vec::new(),
        ),
        (
            client_document_key(account, inv.client_id, inv.kind, inv.id),
            Vec::new(),
        ),
    ];
    if inv.status == Status::Open {
        entries.push((
            store::index_key(
                account,
                coll,
                "open-due",
                &store::sortable_i32(inv.due_date.julian()),
                inv.id,
            ),
            Vec::new(),
        ));
    }
    entries
}

fn client_document_key(account: u64, client: u64, kind: DocKind, id: u64) -> Vec<u8> {
    let mut k = clients::documents_prefix(account, client);
    k.push(kind.client_index_byte());
    k.extend_from_slice(&id.to_be_bytes());
    k
}

/// The documents with these ids, in their order.
fn load_all(
    txn: &dyn Read,
    account: u64,
    kind: DocKind,
    ids: &[u64],
) -> Result<Vec<Document>, Error> {
    let keys: Vec<Vec<u8>> = ids.iter().map(|id| key(account, kind, *id)).collect();
    let values = txn.get_many(&keys)?;
    ids.iter()
        .zip(values)
        .map(|(id, bytes)| decode(kind, *id, bytes))
        .collect()
}

pub fn load(txn: &dyn Read, account: u64, kind: DocKind, id: u64) -> Result<Document, Error> {
    decode(kind, id, txn.get(&key(account, kind, id))?)
}

fn decode(kind: DocKind, id: u64, bytes: Option<Vec<u8>>) -> Result<Document, Error> {
    let bytes = bytes.ok_or_else(|| kind.not_found(id))?;
    let inv: Document = store::decode(&bytes)?;
    assert_eq!(
        (inv.kind, inv.id),
        (kind, id),
        "a document is stored under its own id"
    );
    Ok(inv)
}

/// Writes the invoice and moves its index entries and number claim.
pub fn save(
    txn: &mut dyn Write,
    account: u64,
    old: Option<&Document>,
    new: &Document,
) -> Result<(), Error> {
    assert!(
        new.total_gross == new.total_net + new.taxes.iter().map(|t| t.amount).sum::<Decimal>(),
        "document totals add up before they are saved"
    );
    let new_claim = (
        numbering::resolve_prefix(&new.number_pre, new.date),
        new.number,
    );
    let old_claim = old.map(|o| (numbering::resolve_prefix(&o.number_pre, o.date), o.number));
    if old_claim.as_ref() != Some(&new_claim) {
        let range = new.kind.range();
        if !numbering::claim(txn, account, range, &new_claim.0, new_claim.1, new.id)? {
            return Err(Error::invalid(format!(
                "number {} is already used by another {} with prefix \"{}\"",
                new_claim.1,
                new.kind.label(),
                new_claim.0
            )));
        }
        if let Some((pre, n)) = old_claim {
            numbering::release(txn, account, range, &pre, n)?;
        }
    }
    // Entries the save leaves as they are are not written again.
    let kept = old.map(|o| index_entries(account, o)).unwrap_or_default();
    let entries = index_entries(account, new);
    for (k, _) in kept.iter().filter(|e| !entries.contains(e)) {
        txn.delete(k)?;
    }
    for (k, v) in entries.iter().filter(|e| !kept.contains(e)) {
        txn.put(k, v)?;
    }
    grouping::update(txn, account, new.kind, old, Some(new))?;
    txn.put(&key(account, new.kind, new.id), &store::encode(new))?;
    Ok(())
}

// ---- create and update -----------------------------------------------------------------

fn text_of(changes: &Changes, name: &str) -> Option<String> {
    changes
        .get(name)
        .map(|v| v.as_ref().map(Scalar::to_wire).unwrap_or_default())
}

fn int_of(changes: &Changes, name: &str) -> Option<Option<i64>> {
    changes
        .get(name)
        .map(|v| v.as_ref().and_then(Scalar::as_int))
}

fn dec_of(changes: &Changes, name: &str) -> Option<Option<Decimal>> {
    changes
        .get(name)
        .map(|v| v.as_ref().and_then(Scalar::as_dec))
}

fn date_of(changes: &Changes, name: &str) -> Option<Option<Date>> {
    changes.get(name).map(|v| match v {
        Some(Scalar::Date(d)) => Some(*d),
        _ => None,
    })
}

/// A term of the client (due days, discount) unless it defers to the settings.
fn client_term(client: &Record, field: &str) -> Option<Scalar> {
    let ty = client.text(&format!("{field}_type"));
    if ty == "ABSOLUTE" || ty == "RELATIVE" {
        client.get(field).cloned()
    } else {
        None
    }
}

fn load_client(txn: &dyn Read, account: u64, id: i64) -> Result<Record, Error> {
    if id < 1 {
        return Err(Error::invalid(format!("client_id {id} does not exist")));
    }
    records::load(txn, &CLIENTS, account, id as u64).map_err(|e| match e {
        Error::NotFound(_) => Error::invalid(format!("client_id {id} does not exist")),
        other => other,
    })
}

/// Whether documents for this client carry no tax: tax rule NO_TAX, or COUNTRY with the
/// client's country listed among the account's country taxes.
fn is_tax_free(txn: &dyn Read, account: u64, client: &Record) -> Result<bool, Error> {
    Ok(match client.text("tax_rule") {
        "NO_TAX" => true,
        "TAX" => false,
        _ => {
            let country = client.text("country_code");
            !country.is_empty() && country_taxes::is_tax_free_country(txn, account, country)?
        }
    })
}

/// Checks the fields a create or update sets that the field kinds cannot check alone.
fn check_values(inv: &Document, errors: &mut Vec<String>) {
    if let Err(e) = Reduction::parse(&inv.reduction) {
        errors.push(e);
    }
    if let Err(e) = parse_payment_types(&inv.payment_types) {
        errors.push(e);
    }
    if !(Decimal::ZERO..=Decimal::ONE_HUNDRED).contains(&inv.discount_rate) {
        errors.push(format!(
            "discount_rate must be between 0 and 100, got {}",
            inv.discount_rate
        ));
    }
    if inv.quote <= Decimal::ZERO {
        errors.push(format!("quote must be positive, got {}", inv.quote));
    }
    if inv.number < 1 {
        errors.push(format!("number must be at least 1, got {}", inv.number));
    }
    if !(0..=20).contains(&inv.number_length) {
        errors.push(format!(
            "number_length must be between 0 and 20, got {}",
            inv.number_length
        ));
    }
    if inv.due_date < inv.date {
        errors.push(format!(
            "due_date {} is before the invoice date {}",
            inv.due_date, inv.date
        ));
    }
    if inv.discount_date < inv.date {
        errors.push(format!(
            "discount_date {} is before the invoice date {}",
            inv.discount_date, inv.date
        ));
    }
    if inv.number_pre.chars().any(char::is_control) || inv.number_pre.chars().count() > 40 {
        errors.push("number_pre must be one line of at most 40 characters".into());
    }
}

/// Creates a draft with its items. Every absent field takes its default from the settings,
/// the client or the default tax.
pub fn create(
    ctx: &Ctx,
    txn: &mut dyn Write,
    kind: DocKind,
    changes: &Changes,
    items: &[Changes],
) -> Result<Document, Error> {
    let mut errors = changes.errors();
    // A credit note made from an invoice takes the invoice's client and items by default.
    let source = match (kind, int_of(changes, "invoice_id").flatten()) {
        (DocKind::CreditNote, Some(invoice)) => {
            match load(
                txn.as_read(),
                ctx.account_id,
                DocKind::Invoice,
                invoice.max(0) as u64,
            ) {
                Ok(inv) => Some(inv),
                Err(Error::NotFound(_)) => {
                    errors.push(format!("invoice_id {invoice} does not exist"));
                    None
                }
                Err(e) => return Err(e),
            }
        }
        _ => None,
    };
    if source.is_none() {
        super::schema::check_mandatory(fields(kind), changes, &mut errors);
    }
    if items.len() > limits::ITEMS_MAX {
        errors.push(format!(
            "a {} holds at most {} items",
            kind.label(),
            limits::ITEMS_MAX
        ));
    }
    let Some(client_id) = int_of(changes, "client_id")
        .flatten()
        .or(source.as_ref().map(|s| s.client_id as i64))
    else {
        return Err(Error::Invalid(errors));
    };
    let client = match load_client(txn.as_read(), ctx.account_id, client_id) {
        Ok(c) => c,
        Err(Error::Invalid(mut e)) => {
            errors.append(&mut e);
            return Err(Error::Invalid(errors));
        }
        Err(e) => return Err(e),
    };
    let defaults = settings::load_stored(txn.as_read(), ctx.account_id)?;
    let id = store::next_id(txn, kind.collection())?;
    let date = date_of(changes, "date").flatten().unwrap_or(today(ctx));
    let setting_int = |name: &str| defaults.int(name).unwrap_or(0);
    let due_days = client_term(&client, "due_days")
        .and_then(|s| s.as_int())
        .unwrap_or(setting_int("due_days"));
    let discount_days = client_term(&client, "discount_days")
        .and_then(|s| s.as_int())
        .unwrap_or(setting_int("discount_days"));
    let discount_rate = client_term(&client, "discount_rate")
        .and_then(|s| s.as_dec())
        .or_else(|| defaults.get("discount_rate").and_then(Scalar::as_dec))
        .unwrap_or_default();
    let client_basis = client.text("net_gross");
    let net_gross = if client_basis == "NET" || client_basis == "GROSS" {
        client_basis.to_owned()
    } else {
        defaults.text("net_gross").to_owned()
    };
    let currency = match client.text("currency_code") {
        "" => defaults.text("currency_code").to_owned(),
        c => c.to_owned(),
    };
    let setting_text = |name: &str| defaults.text(&kind.setting(name)).to_owned();
    let mut inv = Document {
        kind,
        id,
        client_id: client_id as u64,
        contact_id: None,
        created: ctx.now,
        updated: ctx.now,
        number: 0,
        number_pre: setting_text("number_pre"),
        number_length: setting_int(&kind.setting("number_length")),
        invoice_number: String::new(),
        status: Status::Draft,
        date,
        supply_date: String::new(),
        supply_date_type: String::new(),
        due_date: date.add_days(due_days),
        address: client.text("address").to_owned(),
        discount_rate,
        discount_date: date.add_days(discount_days),
        label: setting_text("label"),
        intro: setting_text("intro"),
        note: setting_text("note"),
        currency_code: currency,
        quote: Decimal::ONE,
        payment_types: defaults.text("payment_types").to_owned(),
        net_gross,
        reduction: client.text("reduction").to_owned(),
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
        invoice_id: source.as_ref().map(|s| s.id as i64),
        free_text_id: None,
        tags: Vec::new(),
        article_ids: Vec::new(),
    };
    if let Some(src) = &source {
        // What the invoice said holds for its credit note unless the request says otherwise.
        inv.net_gross = src.net_gross.clone();
        inv.currency_code = src.currency_code.clone();
        inv.quote = src.quote;
        inv.address = src.address.clone();
        inv.reduction = src.reduction.clone();
    }
    // Explicit due and discount dates win over days; days follow an explicit date.
    apply(&mut inv, changes, due_days, discount_days);
    let pre = numbering::resolve_prefix(&inv.number_pre, inv.date);
    if int_of(changes, "number").flatten().is_none() {
        inv.number = numbering::next_free(txn.as_read(), ctx.account_id, kind.range(), &pre)?;
    }
    check_values(&inv, &mut errors);
    let default_tax = taxes::default_tax(txn.as_read(), ctx.account_id)?;
    let mut new_items = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        match items::build(ctx, id, i as i64 + 1, item, &default_tax) {
            Ok(it) => new_items.push(it),
            Err(Error::Invalid(item_errors)) => errors.extend(
                item_errors
                    .into_iter()
                    .map(|e| format!("item {}: {e}", i + 1)),
            ),
            Err(e) => return Err(e),
        }
    }
    if let (Some(src), true) = (&source, items.is_empty()) {
        for item in items::load_all(txn.as_read(), ctx.account_id, DocKind::Invoice, src.id)? {
            new_items.push(items::copy_to(&item, id, ctx.now));
        }
    }
    if !errors.is_empty() {
        return Err(Error::Invalid(errors));
    }
    inv.payment_types = normalize_payment_types(&inv.payment_types);
    inv.invoice_number = numbering::format_number(&pre, inv.number, inv.number_length);
    inv.tax_free = is_tax_free(txn.as_read(), ctx.account_id, &client)?;
    items::number(txn, kind, &mut new_items)?;
    for item in &new_items {
        items::save(txn, ctx.account_id, kind, item)?;
    }
    apply_totals(&mut inv, &new_items);
    save(txn, ctx.account_id, None, &inv)?;
    let text = format!("{} created", kind.title());
    comments::system(ctx, txn, kind.collection(), id, "CREATE", &text)?;
    Ok(inv)
}

fn normalize_payment_types(list: &str) -> String {
    parse_payment_types(list)
        .map(|t| t.join(","))
        .unwrap_or_else(|_| list.to_owned())
}

/// Copies the request's fields onto the invoice. `due_days` and `discount_days` are the
/// terms to keep when only the date moves.
fn apply(inv: &mut Document, c: &Changes, due_days: i64, discount_days: i64) {
    if let Some(v) = int_of(c, "contact_id") {
        inv.contact_id = v;
    }
    if let Some(Some(n)) = int_of(c, "number") {
        inv.number = n;
    }
    if let Some(v) = text_of(c, "number_pre") {
        inv.number_pre = v;
    }
    if let Some(Some(n)) = int_of(c, "number_length") {
        inv.number_length = n;
    }
    if let Some(Some(d)) = date_of(c, "date") {
        inv.date = d;
        inv.due_date = d.add_days(due_days);
        inv.discount_date = d.add_days(discount_days);
    }
    if let Some(v) = text_of(c, "supply_date") {
        inv.supply_date = v;
    }
    if let Some(v) = text_of(c, "supply_date_type") {
        inv.supply_date_type = v;
    }
    if let Some(Some(d)) = date_of(c, "due_date") {
        inv.due_date = d;
    }
    if let Some(v) = text_of(c, "address") {
        inv.address = v;
    }
    if let Some(v) = dec_of(c, "discount_rate") {
        inv.discount_rate = v.unwrap_or_default();
    }
    if let Some(Some(d)) = date_of(c, "discount_date") {
        inv.discount_date = d;
    }
    for (name, field) in [
        ("label", &mut inv.label),
        ("intro", &mut inv.intro),
        ("note", &mut inv.note),
        ("payment_types", &mut inv.payment_types),
        ("reduction", &mut inv.reduction),
    ] {
        if let Some(v) = text_of(c, name) {
            *field = v;
        }
    }
    if let Some(Some(v)) = c.get("net_gross").cloned() {
        inv.net_gross = v.to_wire();
    }
    if let Some(Some(v)) = c.get("currency_code").cloned() {
        inv.currency_code = v.to_wire();
    }
    if let Some(v) = dec_of(c, "quote") {
        inv.quote = v.unwrap_or(Decimal::ONE);
    }
    if let Some(v) = int_of(c, "template_id") {
        inv.template_id = v;
    }
    if inv.kind == DocKind::CreditNote {
        if let Some(v) = text_of(c, "title") {
            inv.title = v;
        }
        if let Some(v) = int_of(c, "free_text_id") {
            inv.free_text_id = v;
        }
    }
}

/// Recomputes what the document caches of its items: totals, taxes, article ids.
pub fn apply_totals(inv: &mut Document, items: &[items::Item]) {
    inv.article_ids = items.iter().filter_map(|i| i.article_id).collect();
    let lines: Vec<Line> = items.iter().map(items::Item::line).collect();
    let reduction = Reduction::parse(&inv.reduction).ok().flatten();
    let t = money::document_totals(&lines, inv.basis(), reduction, inv.tax_free);
    inv.total_net = t.total_net;
    inv.total_gross = t.total_gross;
    inv.total_net_unreduced = t.total_net_unreduced;
    inv.total_gross_unreduced = t.total_gross_unreduced;
    inv.total_reduction = t.total_reduction;
    inv.taxes = t
        .taxes
        .into_iter()
        .map(|g| StoredTax {
            name: g.name,
            rate: g.rate,
            net: g.net,
            amount: g.amount,
        })
        .collect();
}

/// Recomputes the cached totals from the items and the client's tax situation as they are
/// now; returns both for callers that need them too.
pub fn refresh_totals(
    ctx: &Ctx,
    txn: &mut dyn Write,
    inv: &mut Document,
) -> Result<(Vec<items::Item>, Record), Error> {
    let items = items::load_all(txn.as_read(), ctx.account_id, inv.kind, inv.id)?;
    let client = load_client(txn.as_read(), ctx.account_id, inv.client_id as i64)?;
    inv.tax_free = is_tax_free(txn.as_read(), ctx.account_id, &client)?;
    apply_totals(inv, &items);
    Ok((items, client))
}

/// Loads a document for a change and checks the lifecycle allows `event`.
pub fn load_for(
    txn: &dyn Read,
    account: u64,
    kind: DocKind,
    id: u64,
    event: Event,
) -> Result<(Document, Status), Error> {
    let inv = load(txn, account, kind, id)?;
    let next = transition(inv.status, event).map_err(|m| refusal(kind, m))?;
    Ok((inv, next))
}

pub fn update(
    ctx: &Ctx,
    txn: &mut dyn Write,
    kind: DocKind,
    id: u64,
    changes: &Changes,
) -> Result<Document, Error> {
    let (old, _) = load_for(txn.as_read(), ctx.account_id, kind, id, Event::Edit)?;
    let mut errors = changes.errors();
    super::schema::check_not_cleared(fields(kind), changes, &mut errors);
    let mut inv = old.clone();
    if let Some(Some(client_id)) = int_of(changes, "client_id")
        && client_id as u64 != old.client_id
    {
        match load_client(txn.as_read(), ctx.account_id, client_id) {
            Ok(_) => inv.client_id = client_id as u64,
            Err(Error::Invalid(mut e)) => errors.append(&mut e),
            Err(e) => return Err(e),
        }
    }
    let due_days = old.due_date.days_since(old.date);
    let discount_days = old.discount_date.days_since(old.date);
    apply(&mut inv, changes, due_days, discount_days);
    check_values(&inv, &mut errors);
    if !errors.is_empty() {
        return Err(Error::Invalid(errors));
    }
    inv.payment_types = normalize_payment_types(&inv.payment_types);
    let pre = numbering::resolve_prefix(&inv.number_pre, inv.date);
    inv.invoice_number = numbering::format_number(&pre, inv.number, inv.number_length);
    inv.updated = ctx.now;
    refresh_totals(ctx, txn, &mut inv)?;
    save(txn, ctx.account_id, Some(&old), &inv)?;
    Ok(inv)
}

/// Deletes the document with its items, payments, comments, tags and PDFs, and frees its
/// number.
pub fn delete(ctx: &Ctx, txn: &mut dyn Write, kind: DocKind, id: u64) -> Result<(), Error> {
    let inv = load(txn.as_read(), ctx.account_id, kind, id)?;
    for (k, _) in index_entries(ctx.account_id, &inv) {
        txn.delete(&k)?;
    }
    grouping::update(txn, ctx.account_id, kind, Some(&inv), None)?;
    let pre = numbering::resolve_prefix(&inv.number_pre, inv.date);
    numbering::release(txn, ctx.account_id, kind.range(), &pre, inv.number)?;
    items::delete_all(txn, ctx.account_id, kind, id)?;
    super::payments::delete_all(txn, ctx.account_id, kind, id)?;
    comments::delete_all(txn, ctx.account_id, kind.collection(), id)?;
    super::tags::delete_all(txn, ctx.account_id, kind, id)?;
    super::pdfs::delete_all(txn, ctx.account_id, kind.collection(), id)?;
    txn.delete(&key(ctx.account_id, kind, id))?;
    Ok(())
}

/// Moves the invoice through `event` and writes the STATUS comment.
fn change_status(
    ctx: &Ctx,
    txn: &mut dyn Write,
    kind: DocKind,
    id: u64,
    event: Event,
    actionkey: &str,
) -> Result<Document, Error> {
    let (old, next) = load_for(txn.as_read(), ctx.account_id, kind, id, event)?;
    save_transition(ctx, txn, &old, old.clone(), next, actionkey)
}

/// Saves `inv` (a changed copy of `old`) in state `next` and writes the comment of the
/// change.
fn save_transition(
    ctx: &Ctx,
    txn: &mut dyn Write,
    old: &Document,
    mut inv: Document,
    next: Status,
    actionkey: &str,
) -> Result<Document, Error> {
    inv.status = next;
    inv.updated = ctx.now;
    save(txn, ctx.account_id, Some(old), &inv)?;
    let shown = inv.shown(today(ctx)).as_str();
    comments::system(
        ctx,
        txn,
        inv.kind.collection(),
        inv.id,
        actionkey,
        &format!("Status changed to {shown}"),
    )?;
    Ok(inv)
}

/// DRAFT → OPEN (or OVERDUE when the due date has passed). The number is fixed from now on
/// and the PDF (and its print version) is rendered and stored in the same transaction.
/// The template of an invoice is `template_id`, else the invoice's own, else the default
/// INVOICE template; a credit note's own template comes before the one asked for.
pub fn complete(
    ctx: &Ctx,
    txn: &mut dyn Write,
    pdf: &dyn crate::caps::Pdf,
    kind: DocKind,
    id: u64,
    template_id: Option<u64>,
) -> Result<Document, Error> {
    let (old, next) = load_for(txn.as_read(), ctx.account_id, kind, id, Event::Complete)?;
    let own = old.template_id.map(|t| t as u64);
    let asked = match kind {
        DocKind::Invoice => template_id.or(own),
        DocKind::CreditNote => own.or(template_id),
    };
    let template =
        super::templates::for_document(txn.as_read(), ctx.account_id, kind.template_type(), asked)?;
    // Totals are final: compute them once more from the items as they are now.
    let mut inv = old.clone();
    let (items, client) = refresh_totals(ctx, txn, &mut inv)?;
    let inv = save_transition(ctx, txn, &old, inv, next, "STATUS")?;
    let defaults = settings::load_stored(txn.as_read(), ctx.account_id)?;
    let template_text = match &template {
        Some(t) => super::templates::text_of(txn.as_read(), ctx.account_id, t)?,
        None => Vec::new(),
    };
    let values = super::printing::values(&inv, &client, &defaults);
    let filename = match defaults.text(&kind.setting("filename")).trim() {
        "" => format!("{}_{id}", kind.range()),
        pattern => super::placeholders::resolve(pattern, &values),
    };
    let filename = format!("{}.pdf", sanitize_filename(&filename));
    for (variant, print) in [
        (super::pdfs::Variant::Original, false),
        (super::pdfs::Variant::Print, true),
    ] {
        let doc =
            super::printing::document(&inv, &items, &client, &defaults, &template_text, print);
        let bytes = pdf.render(&doc).map_err(|e| {
            Error::Store(crate::caps::StoreError::Backend(format!(
                "PDF rendering failed: {e}"
            )))
        })?;
        super::pdfs::save(
            txn,
            ctx.account_id,
            (kind.collection(), id),
            variant,
            ctx.now,
            &filename,
            bytes,
        )?;
    }
    Ok(inv)
}

/// Why `name`, given for `what`, is not a plain file name: a path, a `..`, or a control
/// character (a line break would reach a mail header). `None` when it is one.
pub fn filename_problem(what: &str, name: &str) -> Option<String> {
    let trimmed = name.trim();
    let path = trimmed.contains(['/', '\\']) || trimmed == "." || trimmed == "..";
    (path || name.chars().any(char::is_control)).then(|| {
        format!(
            "{what} \"{}\" must be a plain file name, without a path or control characters",
            name.escape_debug()
        )
    })
}

/// A file name without path separators, control characters or leading dots.
pub fn sanitize_filename(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| {
            if c.is_control() || "/\\:*?\"<>|".contains(c) {
                '_'
            } else {
                c
            }
        })
        .collect();
    let cleaned = cleaned.trim().trim_start_matches('.').to_owned();
    let cleaned: String = cleaned.chars().take(120).collect();
    if cleaned.is_empty() {
        "document".to_owned()
    } else {
        cleaned
    }
}

/// Keeps an uploaded signed PDF beside the original; only for completed documents.
pub fn sign(
    ctx: &Ctx,
    txn: &mut dyn Write,
    kind: DocKind,
    id: u64,
    file: Vec<u8>,
) -> Result<(), Error> {
    let inv = load(txn.as_read(), ctx.account_id, kind, id)?;
    if inv.status == Status::Draft {
        return Err(refusal(
            kind,
            "a signature can be uploaded only for completed {doc}s; this {doc} is DRAFT".into(),
        ));
    }
    if !file.starts_with(b"%PDF-") {
        return Err(Error::invalid("base64file is not a PDF file"));
    }
    let original = super::pdfs::load(
        txn.as_read(),
        ctx.account_id,
        kind.collection(),
        id,
        super::pdfs::Variant::Original,
    )?;
    let stem = original
        .map(|p| p.filename.trim_end_matches(".pdf").to_owned())
        .unwrap_or_else(|| format!("{}_{id}", kind.range()));
    super::pdfs::save(
        txn,
        ctx.account_id,
        (kind.collection(), id),
        super::pdfs::Variant::Signed,
        ctx.now,
        &format!("{stem}_signed.pdf"),
        file,
    )?;
    comments::system(
        ctx,
        txn,
        kind.collection(),
        id,
        "SIGN",
        "Signed PDF uploaded",
    )
}

pub fn cancel(ctx: &Ctx, txn: &mut dyn Write, kind: DocKind, id: u64) -> Result<Document, Error> {
    change_status(ctx, txn, kind, id, Event::Cancel, "CANCEL")
}

pub fn uncancel(ctx: &Ctx, txn: &mut dyn Write, kind: DocKind, id: u64) -> Result<Document, Error> {
    let inv = load(txn.as_read(), ctx.account_id, kind, id)?;
    let (paid, marked) = super::payments::sum(txn.as_read(), ctx.account_id, kind, id)?;
    let settled = inv.settled_by(paid, marked);
    change_status(ctx, txn, kind, id, Event::Uncancel { settled }, "UNCANCEL")
}

// ---- lists and groups --------------------------------------------------------------------

/// The list filters of the API, parsed.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub kind: DocKind,
    pub client_id: Option<u64>,
    pub contact_id: Option<u64>,
    /// Lower-cased; matches anywhere in the document number.
    pub number: Option<String>,
    /// Any of these tags.
    pub tags: Vec<String>,
    pub article_id: Option<i64>,
    pub statuses: Vec<Shown>,
    pub payment_types: Vec<String>,
    pub from: Option<Date>,
    pub to: Option<Date>,
    pub label: Option<String>,
    pub intro: Option<String>,
    pub note: Option<String>,
}

fn contains_ci(haystack: &str, needle_lower: &str) -> bool {
    haystack.to_lowercase().contains(needle_lower)
}

impl Filter {
    /// Whether the candidates of one index are exactly the matches, so that a page needs to
    /// load only its own records.
    fn index_exact(&self) -> bool {
        let indexed = [
            self.client_id.is_some(),
            !self.statuses.is_empty(),
            self.from.is_some() || self.to.is_some(),
        ];
        self.only_indexed_fields() && indexed.iter().filter(|used| **used).count() <= 1
    }

    /// Whether the filter uses only client, status and dates, the fields with an index.
    pub fn only_indexed_fields(&self) -> bool {
        self.number.is_none()
            && self.contact_id.is_none()
            && self.tags.is_empty()
            && self.article_id.is_none()
            && self.label.is_none()
            && self.intro.is_none()
            && self.note.is_none()
            && self.payment_types.is_empty()
    }

    /// Whether the filter is statuses alone: its pages are read from the status index in
    /// id order and its count from the kept counts.
    fn only_statuses(&self) -> bool {
        !self.statuses.is_empty()
            && self.only_indexed_fields()
            && self.client_id.is_none()
            && self.from.is_none()
            && self.to.is_none()
    }

    /// Whether the filter matches every document of its kind.
    pub fn is_empty(&self) -> bool {
        self.only_indexed_fields()
            && self.client_id.is_none()
            && self.statuses.is_empty()
            && self.from.is_none()
            && self.to.is_none()
    }

    pub fn matches(&self, inv: &Document, today: Date) -> bool {
        self.client_id.is_none_or(|c| inv.client_id == c)
            && self
                .contact_id
                .is_none_or(|c| inv.contact_id == Some(c as i64))
            && self.article_id.is_none_or(|a| inv.article_ids.contains(&a))
            && (self.tags.is_empty()
                || inv
                    .tags
                    .iter()
                    .any(|t| self.tags.iter().any(|w| w.eq_ignore_ascii_case(t))))
            && (self.statuses.is_empty() || self.statuses.contains(&inv.shown(today)))
            && self.from.is_none_or(|d| inv.date >= d)
            && self.to.is_none_or(|d| inv.date <= d)
            && self
                .number
                .as_deref()
                .is_none_or(|n| contains_ci(&inv.invoice_number, n))
            && self
                .label
                .as_deref()
                .is_none_or(|n| contains_ci(&inv.label, n))
            && self
                .intro
                .as_deref()
                .is_none_or(|n| contains_ci(&inv.intro, n))
            && self
                .note
                .as_deref()
                .is_none_or(|n| contains_ci(&inv.note, n))
            && (self.payment_types.is_empty()
                || inv
                    .paid_types
                    .iter()
                    .any(|t| self.payment_types.iter().any(|w| w == t)))
    }
}

fn ids_from_index(
    txn: &dyn Read,
    prefix: &[u8],
    lo: Option<&[u8]>,
    hi: Option<&[u8]>,
) -> Result<Vec<u64>, Error> {
    // Entries are prefix + fixed-width value + id; `lo`/`hi` bound the value (inclusive).
    let mut ids = Vec::new();
    // prefix + lo sorts just before the first entry holding the value lo.
    let mut after: Option<Vec<u8>> = lo.map(|l| [prefix, l].concat());
    loop {
        let batch = txn.scan(prefix, after.as_deref(), limits::INDEX_SCAN_BATCH, false)?;
        let done = batch.len() < limits::INDEX_SCAN_BATCH as usize;
        for (k, _) in &batch {
            if let Some(h) = hi {
                let value = &k[prefix.len()..k.len() - 8];
                if value > h {
                    return Ok(ids);
                }
            }
            ids.push(store::id_of_key(k));
        }
        after = batch.last().map(|(k, _)| k.clone());
        if done {
            return Ok(ids);
        }
    }
}

/// Ids of the open documents due from `first` to `last`, in id order.
pub fn open_due_between(
    txn: &dyn Read,
    account: u64,
    kind: DocKind,
    first: Date,
    last: Date,
) -> Result<Vec<u64>, Error> {
    let prefix = store::index_prefix(account, kind.collection(), "open-due");
    let mut ids = ids_from_index(
        txn,
        &prefix,
        Some(&store::sortable_i32(first.julian())),
        Some(&store::sortable_i32(last.julian())),
    )?;
    ids.sort_unstable();
    Ok(ids)
}

/// Candidate ids for a filter, from the most selective index the filter allows; the
/// candidates are then checked against the whole filter.
fn candidates(
    txn: &dyn Read,
    account: u64,
    f: &Filter,
    today: Date,
) -> Result<Option<Vec<u64>>, Error> {
    if let Some(client) = f.client_id {
        let prefix = clients::documents_prefix(account, client);
        let mut ids = Vec::new();
        for (k, _) in store::scan_all(txn, &prefix)? {
            if k.get(prefix.len()) == Some(&f.kind.client_index_byte()) {
                ids.push(store::id_of_key(&k));
            }
        }
        return Ok(Some(ids));
    }
    if !f.statuses.is_empty() {
        let mut ids = Vec::new();
        for st in &f.statuses {
            match st {
                Shown::Draft | Shown::Paid | Shown::Canceled => {
                    let stored = match st {
                        Shown::Draft => Status::Draft,
                        Shown::Paid => Status::Paid,
                        _ => Status::Canceled,
                    };
                    let mut prefix = store::index_prefix(account, f.kind.collection(), "status");
                    prefix.push(status_byte(stored));
                    ids.extend(ids_from_index(txn, &prefix, None, None)?);
                }
                Shown::Open | Shown::Overdue => {
                    let prefix = store::index_prefix(account, f.kind.collection(), "open-due");
                    let today_key = store::sortable_i32(today.julian());
                    let yesterday_key = store::sortable_i32(today.julian() - 1);
                    ids.extend(if *st == Shown::Open {
                        ids_from_index(txn, &prefix, Some(&today_key), None)?
                    } else {
                        ids_from_index(txn, &prefix, None, Some(&yesterday_key))?
                    });
                }
            }
        }
        return Ok(Some(ids));
    }
    if f.from.is_some() || f.to.is_some() {
        let prefix = store::index_prefix(account, f.kind.collection(), "date");
        let lo = f.from.map(|d| store::sortable_i32(d.julian()));
        let hi = f.to.map(|d| store::sortable_i32(d.julian()));
        return Ok(Some(ids_from_index(
            txn,
            &prefix,
            lo.as_ref().map(|v| &v[..]),
            hi.as_ref().map(|v| &v[..]),
        )?));
    }
    Ok(None)
}

/// One page of the invoices matching the filter, in `order` (id order when empty), and
/// the number of all matches. Index-only filters in id order load just the page. Needs the
/// kept sums and counts: the caller has run `grouping::rebuild`.
pub fn page(
    txn: &dyn Read,
    account: u64,
    f: &Filter,
    order: &[(&'static str, bool)],
    page: u32,
    per_page: u32,
    today: Date,
) -> Result<(Vec<Document>, usize), Error> {
    let start = (page.saturating_sub(1) as usize).saturating_mul(per_page as usize);
    if order.is_empty() && f.is_empty() && start <= limits::DIRECT_PAGE_START_MAX {
        let total = grouping::count_all(txn, account, f.kind)?;
        // Records are keyed by id: the first pages are the first records.
        let prefix = collection_prefix(account, f.kind);
        let mut invoices = Vec::with_capacity(per_page as usize);
        let mut skip = start;
        let mut after: Option<Vec<u8>> = None;
        while invoices.len() < per_page as usize {
            let want = (skip + per_page as usize - invoices.len()).min(limits::SCAN_BATCH as usize);
            let batch = txn.scan(&prefix, after.as_deref(), want as u32, false)?;
            let done = batch.len() < want;
            for (_, v) in &batch {
                if skip > 0 {
                    skip -= 1;
                } else if invoices.len() < per_page as usize {
                    invoices.push(store::decode(v)?);
                }
            }
            after = batch.last().map(|(k, _)| k.clone());
            if done {
                break;
            }
        }
        return Ok((invoices, total as usize));
    }
    if order.is_empty() && f.only_statuses() {
        let total = grouping::count_statuses(txn, account, f.kind, &f.statuses, today)? as usize;
        let ids = if start < total {
            status_page_ids(txn, account, f, start, per_page as usize, today)?
        } else {
            Vec::new()
        };
        return Ok((load_all(txn, account, f.kind, &ids)?, total));
    }
    if order.is_empty() && f.index_exact() {
        let mut ids = match candidates(txn, account, f, today)? {
            Some(ids) => ids,
            // Every invoice has exactly one date entry: the keys alone give all ids.
            None => ids_from_index(
                txn,
                &store::index_prefix(account, f.kind.collection(), "date"),
                None,
                None,
            )?,
        };
        ids.sort_unstable();
        ids.dedup();
        let total = ids.len();
        let end = start.saturating_add(per_page as usize).min(total);
        return Ok((
            load_all(txn, account, f.kind, &ids[start.min(total)..end])?,
            total,
        ));
    }
    let mut found = find(txn, account, f, today)?;
    sort(&mut found, order, today);
    let total = found.len();
    Ok((
        found
            .into_iter()
            .skip(start)
            .take(per_page as usize)
            .collect(),
        total,
    ))
}

/// The number of documents matching the filter, loading as few as the filter allows.
/// Needs the kept sums (`grouping::rebuild`), as `page` does.
pub fn count(txn: &dyn Read, account: u64, f: &Filter, today: Date) -> Result<usize, Error> {
    if f.is_empty() {
        return Ok(grouping::count_all(txn, account, f.kind)? as usize);
    }
    if f.only_statuses() {
        return Ok(grouping::count_statuses(txn, account, f.kind, &f.statuses, today)? as usize);
    }
    if f.index_exact()
        && let Some(mut ids) = candidates(txn, account, f, today)?
    {
        ids.sort_unstable();
        ids.dedup();
        return Ok(ids.len());
    }
    Ok(find(txn, account, f, today)?.len())
}

/// Which open documents a status stream passes, by the day they are due.
#[derive(Clone, Copy)]
enum Due {
    Any,
    /// Due on this julian day or later (OPEN).
    From(i32),
    /// Due before this julian day (OVERDUE).
    Before(i32),
}

/// The status index entries of one stored status in id order, a batch at a time.
struct StatusStream {
    prefix: Vec<u8>,
    due: Due,
    after: Option<Vec<u8>>,
    /// (id, entry value) fetched and not yet taken.
    fetched: std::collections::VecDeque<(u64, Vec<u8>)>,
    batch: u32,
    done: bool,
}

impl StatusStream {
    fn new(account: u64, kind: DocKind, status: Status, due: Due, batch: u32) -> StatusStream {
        let mut prefix = store::index_prefix(account, kind.collection(), "status");
        prefix.push(status_byte(status));
        StatusStream {
            prefix,
            due,
            after: None,
            fetched: Default::default(),
            batch,
            done: false,
        }
    }

    /// The next id, fetching the next batch when needed.
    fn head(&mut self, txn: &dyn Read) -> Result<Option<u64>, Error> {
        if self.fetched.is_empty() && !self.done {
            let batch = txn.scan(&self.prefix, self.after.as_deref(), self.batch, false)?;
            self.done = batch.len() < self.batch as usize;
            self.batch = self.batch.saturating_mul(2).min(limits::INDEX_SCAN_BATCH);
            self.after = batch.last().map(|(k, _)| k.clone());
            self.fetched
                .extend(batch.into_iter().map(|(k, v)| (store::id_of_key(&k), v)));
        }
        Ok(self.fetched.front().map(|(id, _)| *id))
    }
}

/// The ids of one page of a statuses-only filter: the status index streams of the stored
/// statuses merged in id order, open documents told apart by the due day their entries
/// hold. Skipped entries cost an index read each, no document load.
fn status_page_ids(
    txn: &dyn Read,
    account: u64,
    f: &Filter,
    start: usize,
    per_page: usize,
    today: Date,
) -> Result<Vec<u64>, Error> {
    let wants = |s: Shown| f.statuses.contains(&s);
    let batch = (2 * start.saturating_add(per_page)).clamp(64, limits::INDEX_SCAN_BATCH as usize);
    let stream = |status, due| StatusStream::new(account, f.kind, status, due, batch as u32);
    let mut streams = Vec::new();
    for status in SHOWN_AS_STORED {
        if status.shown_as_stored().is_some_and(wants) {
            streams.push(stream(status, Due::Any));
        }
    }
    let today = today.julian();
    match (wants(Shown::Open), wants(Shown::Overdue)) {
        (true, true) => streams.push(stream(Status::Open, Due::Any)),
        (true, false) => streams.push(stream(Status::Open, Due::From(today))),
        (false, true) => streams.push(stream(Status::Open, Due::Before(today))),
        (false, false) => {}
    }
    let mut skip = start;
    let mut ids = Vec::with_capacity(per_page);
    while ids.len() < per_page {
        let mut next: Option<(usize, u64)> = None;
        for (i, s) in streams.iter_mut().enumerate() {
            if let Some(id) = s.head(txn)?
                && next.is_none_or(|(_, lowest)| id < lowest)
            {
                next = Some((i, id));
            }
        }
        let Some((i, id)) = next else { break };
        let (_, value) = streams[i]
            .fetched
            .pop_front()
            .expect("the head was fetched");
        let passes = match streams[i].due {
            Due::Any => true,
            due => {
                let due_day = match store::i32_of_sortable(&value) {
                    Some(day) => day,
                    // An entry from before due days were kept: the document knows.
                    None => load(txn, account, f.kind, id)?.due_date.julian(),
                };
                match due {
                    Due::From(day) => due_day >= day,
                    _ => matches!(due, Due::Before(day) if due_day < day),
                }
            }
        };
        if !passes {
            continue;
        }
        if skip > 0 {
            skip -= 1;
        } else {
            ids.push(id);
        }
    }
    Ok(ids)
}

/// Every invoice matching the filter, in id order.
pub fn find(txn: &dyn Read, account: u64, f: &Filter, today: Date) -> Result<Vec<Document>, Error> {
    let mut out = Vec::new();
    match candidates(txn, account, f, today)? {
        Some(mut ids) => {
            ids.sort_unstable();
            ids.dedup();
            for id in ids {
                let inv = load(txn, account, f.kind, id)?;
                if f.matches(&inv, today) {
                    out.push(inv);
                }
            }
        }
        None => {
            let prefix = store::collection_prefix(account, f.kind.collection());
            for (_, v) in store::scan_all(txn, &prefix)? {
                let inv: Document = store::decode(&v)?;
                if f.matches(&inv, today) {
                    out.push(inv);
                }
            }
        }
    }
    Ok(out)
}

/// Sorts by `order_by` fields (wire values), stable over id order.
pub fn sort(invoices: &mut [Document], order: &[(&'static str, bool)], today: Date) {
    if order.is_empty() {
        return;
    }
    let mut keyed: Vec<(Record, Document)> = invoices
        .iter()
        .map(|i| (to_record(i, today), i.clone()))
        .collect();
    keyed.sort_by(|(a, _), (b, _)| records::compare_by(order, a, b));
    for (slot, (_, inv)) in invoices.iter_mut().zip(keyed) {
        *slot = inv;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lifecycle_allows_only_its_transitions() {
        use Event::*;
        use Status::*;
        let ok = |s, e, want| assert_eq!(transition(s, e), Ok(want), "{s:?} {e:?}");
        let no = |s, e| assert!(transition(s, e).is_err(), "{s:?} {e:?}");
        ok(Draft, Edit, Draft);
        no(Open, Edit);
        ok(Draft, Complete, Open);
        no(Open, Complete);
        no(Draft, Pay { settled: false });
        ok(Open, Pay { settled: false }, Open);
        ok(Open, Pay { settled: true }, Paid);
        no(Paid, Pay { settled: true });
        ok(Paid, Unpay { settled: false }, Open);
        ok(Open, Cancel, Canceled);
        ok(Paid, Cancel, Canceled);
        no(Draft, Cancel);
        no(Canceled, Cancel);
        ok(Canceled, Uncancel { settled: true }, Paid);
        no(Open, Uncancel { settled: false });
    }
}
