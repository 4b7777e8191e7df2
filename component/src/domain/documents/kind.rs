//! The kinds of documents and what each one is, as data: its names (collections, number
//! range, settings prefix, labels, wire fields of its number and of its children's
//! parent), its lifecycle, and the parts and duties it has (payments, e-invoices, a due
//! date that makes it OVERDUE). One `Spec` per kind; everything else about documents is
//! shared, so a new kind is a new entry here, its field table (`fields`) and its rules.

use super::super::Error;

/// `fields(kind)`: the wire fields of a document part (comments, tags) for each kind, made
/// by `$make(parent_field, parent_doc $(, arg)*)` once per kind, where `parent_doc` is
/// "Id of the <kind> " followed by `$of` (e.g. "the tag is on.").
macro_rules! part_fields_per_kind {
    ($n:literal, $make:ident, $of:literal $(, $arg:expr)*) => {
        /// The wire fields of this part of a document of `kind`.
        pub fn fields(kind: DocKind) -> &'static [Field] {
            static INVOICE: [Field; $n] =
                $make("invoice_id", concat!("Id of the invoice ", $of) $(, $arg)*);
            static CREDIT_NOTE: [Field; $n] =
                $make("credit_note_id", concat!("Id of the credit note ", $of) $(, $arg)*);
            static OFFER: [Field; $n] = $make("offer_id", concat!("Id of the offer ", $of) $(, $arg)*);
            static CONFIRMATION: [Field; $n] =
                $make("confirmation_id", concat!("Id of the confirmation ", $of) $(, $arg)*);
            static RECURRING: [Field; $n] =
                $make("recurring_id", concat!("Id of the recurring invoice ", $of) $(, $arg)*);
            static REMINDER: [Field; $n] =
                $make("reminder_id", concat!("Id of the reminder ", $of) $(, $arg)*);
            static DELIVERY_NOTE: [Field; $n] =
                $make("delivery_note_id", concat!("Id of the delivery note ", $of) $(, $arg)*);
            match kind {
                DocKind::Invoice => &INVOICE,
                DocKind::CreditNote => &CREDIT_NOTE,
                DocKind::Offer => &OFFER,
                DocKind::Confirmation => &CONFIRMATION,
                DocKind::DeliveryNote => &DELIVERY_NOTE,
                DocKind::Recurring => &RECURRING,
                DocKind::Reminder => &REMINDER,
            }
        }
    };
}
pub(crate) use part_fields_per_kind;

/// The kinds of documents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DocKind {
    #[default]
    Invoice,
    CreditNote,
    Offer,
    Confirmation,
    DeliveryNote,
    /// A recurring invoice: the template a schedule makes invoices from.
    Recurring,
    /// A payment reminder or dunning letter of an invoice.
    Reminder,
}

/// The lifecycles documents follow (`lifecycle::transition` decides by it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lifecycle {
    /// Invoices and credit notes: DRAFT → OPEN (OVERDUE by the due date) → PAID by
    /// payments; CANCELED and back.
    Billing,
    /// Offers: DRAFT → OPEN → WON or LOST; WON → CLEARED (invoiced) and back; CANCELED
    /// and back to OPEN.
    Offer,
    /// Order confirmations: DRAFT → COMPLETED → CLEARED (invoiced) and back; CANCELED and
    /// back to COMPLETED.
    Confirmation,
    /// Delivery notes: DRAFT → CREATED, and no more.
    Delivery,
    /// Recurring invoices: always editable, never completed (they make invoices).
    Template,
}

/// What a kind of document is.
#[derive(Debug)]
pub struct Spec {
    /// The storage collection of the documents, the parent name of their children, and
    /// the wire path (`/api/{collection}`).
    pub collection: &'static str,
    /// The number range and the prefix of the kind's settings (`invoice_intro`, ...).
    pub range: &'static str,
    /// The name in messages.
    pub label: &'static str,
    /// The name on the printed document.
    pub title: &'static str,
    /// The wire field of the document number.
    pub number_field: &'static str,
    /// The wire field naming the document on items, payments, comments and tags, and on
    /// documents made from it.
    pub parent_field: &'static str,
    /// The template type the kind is completed with.
    pub template_type: &'static str,
    /// The object name of placeholders (`[Invoice.date]`, `[Offer.date]`).
    pub placeholder_object: &'static str,
    /// The default name of its PDF, before `_{id}` (`invoice_7.pdf`, `delivery-note_7.pdf`).
    pub file_stem: &'static str,
    /// The byte of the kind in a client's document index.
    pub client_byte: u8,
    pub lifecycle: Lifecycle,
    /// The collections of its parts: items, comments, tags, and payments where it takes
    /// them.
    pub items: &'static str,
    pub comments: &'static str,
    pub tags: &'static str,
    pub payments: Option<&'static str>,
    /// Whether completing it issues e-invoices (EN 16931 knows invoices and credit notes).
    pub einvoices: bool,
    /// Whether an OPEN one shows OVERDUE once its due date has passed.
    pub falls_due: bool,
    /// Whether it has a number from the kind's number range.
    pub numbered: bool,
    /// Whether a completed one gets a link to the customer portal (`customerportal_url`),
    /// where its client sees it.
    pub portal: bool,
    /// The name in German, where the customer portal speaks it to a client.
    pub title_de: &'static str,
    /// Whether its client pays it to the seller's bank account: an open one shows the amount
    /// due with a GiroCode in the portal, and its PDF carries the code.
    pub payable: bool,
}

static INVOICE: Spec = Spec {
    collection: "invoices",
    range: "invoice",
    label: "invoice",
    title: "Invoice",
    number_field: "invoice_number",
    parent_field: "invoice_id",
    template_type: "INVOICE",
    placeholder_object: "Invoice",
    file_stem: "invoice",
    client_byte: b'i',
    lifecycle: Lifecycle::Billing,
    items: "invoice-items",
    comments: "invoice-comments",
    tags: "invoice-tags",
    payments: Some("invoice-payments"),
    einvoices: true,
    falls_due: true,
    numbered: true,
    portal: true,
    title_de: "Rechnung",
    payable: true,
};

static CREDIT_NOTE: Spec = Spec {
    collection: "credit-notes",
    range: "credit_note",
    label: "credit note",
    title: "Credit note",
    number_field: "credit_note_number",
    parent_field: "credit_note_id",
    template_type: "CREDIT_NOTE",
    placeholder_object: "CreditNote",
    file_stem: "credit_note",
    client_byte: b'c',
    lifecycle: Lifecycle::Billing,
    items: "credit-note-items",
    comments: "credit-note-comments",
    tags: "credit-note-tags",
    payments: Some("credit-note-payments"),
    einvoices: true,
    falls_due: true,
    numbered: true,
    portal: true,
    title_de: "Gutschrift",
    payable: false,
};

static OFFER: Spec = Spec {
    collection: "offers",
    range: "offer",
    label: "offer",
    title: "Offer",
    number_field: "offer_number",
    parent_field: "offer_id",
    template_type: "OFFER",
    placeholder_object: "Offer",
    file_stem: "offer",
    client_byte: b'o',
    lifecycle: Lifecycle::Offer,
    items: "offer-items",
    comments: "offer-comments",
    tags: "offer-tags",
    payments: None,
    einvoices: false,
    falls_due: false,
    numbered: true,
    portal: true,
    title_de: "Angebot",
    payable: false,
};

static CONFIRMATION: Spec = Spec {
    collection: "confirmations",
    range: "confirmation",
    label: "confirmation",
    title: "Order confirmation",
    number_field: "confirmation_number",
    parent_field: "confirmation_id",
    template_type: "CONFIRMATION",
    placeholder_object: "Confirmation",
    file_stem: "confirmation",
    client_byte: b'f',
    lifecycle: Lifecycle::Confirmation,
    items: "confirmation-items",
    comments: "confirmation-comments",
    tags: "confirmation-tags",
    payments: None,
    einvoices: false,
    falls_due: false,
    numbered: true,
    portal: true,
    title_de: "Auftragsbestätigung",
    payable: false,
};

static DELIVERY_NOTE: Spec = Spec {
    collection: "delivery-notes",
    range: "delivery_note",
    label: "delivery note",
    title: "Delivery note",
    number_field: "delivery_note_number",
    parent_field: "delivery_note_id",
    template_type: "DELIVERY_NOTE",
    placeholder_object: "DeliveryNote",
    file_stem: "delivery-note",
    client_byte: b'd',
    lifecycle: Lifecycle::Delivery,
    items: "delivery-note-items",
    comments: "delivery-note-comments",
    tags: "delivery-note-tags",
    payments: None,
    einvoices: false,
    falls_due: false,
    numbered: true,
    portal: true,
    title_de: "Lieferschein",
    payable: false,
};

static RECURRING: Spec = Spec {
    collection: "recurrings",
    range: "recurring",
    label: "recurring",
    title: "Recurring invoice",
    number_field: "",
    parent_field: "recurring_id",
    template_type: "INVOICE",
    placeholder_object: "Recurring",
    file_stem: "recurring",
    client_byte: b'r',
    lifecycle: Lifecycle::Template,
    items: "recurring-items",
    comments: "recurring-comments",
    tags: "recurring-tags",
    payments: None,
    einvoices: false,
    falls_due: false,
    numbered: false,
    portal: false,
    title_de: "Wiederkehrende Rechnung",
    payable: false,
};

static REMINDER: Spec = Spec {
    collection: "reminders",
    range: "reminder",
    label: "reminder",
    title: "Payment reminder",
    number_field: "",
    parent_field: "reminder_id",
    template_type: "REMINDER",
    placeholder_object: "Reminder",
    file_stem: "reminder",
    client_byte: b'm',
    lifecycle: Lifecycle::Billing,
    items: "reminder-items",
    comments: "reminder-comments",
    tags: "reminder-tags",
    payments: None,
    einvoices: false,
    falls_due: true,
    numbered: false,
    portal: true,
    title_de: "Zahlungserinnerung",
    payable: false,
};

impl DocKind {
    pub const ALL: [DocKind; 7] = [
        DocKind::Invoice,
        DocKind::CreditNote,
        DocKind::Offer,
        DocKind::Confirmation,
        DocKind::DeliveryNote,
        DocKind::Recurring,
        DocKind::Reminder,
    ];

    /// What the kind is.
    pub fn spec(self) -> &'static Spec {
        match self {
            DocKind::Invoice => &INVOICE,
            DocKind::CreditNote => &CREDIT_NOTE,
            DocKind::Offer => &OFFER,
            DocKind::Confirmation => &CONFIRMATION,
            DocKind::DeliveryNote => &DELIVERY_NOTE,
            DocKind::Recurring => &RECURRING,
            DocKind::Reminder => &REMINDER,
        }
    }

    /// The storage collection of the documents, and the parent name of their children.
    pub fn collection(self) -> &'static str {
        self.spec().collection
    }

    /// The number range and the prefix of the kind's settings (`invoice_intro`, ...).
    pub fn range(self) -> &'static str {
        self.spec().range
    }

    /// The name in messages.
    pub fn label(self) -> &'static str {
        self.spec().label
    }

    /// The name on the printed document.
    pub fn title(self) -> &'static str {
        self.spec().title
    }

    /// The wire field of the document number.
    pub fn number_field(self) -> &'static str {
        self.spec().number_field
    }

    /// The wire field naming the document on items, payments, comments and tags.
    pub fn parent_field(self) -> &'static str {
        self.spec().parent_field
    }

    /// The template type the kind is completed with.
    pub fn template_type(self) -> &'static str {
        self.spec().template_type
    }

    /// The object name of placeholders (`[Invoice.date]`, `[CreditNote.date]`).
    pub fn placeholder_object(self) -> &'static str {
        self.spec().placeholder_object
    }

    pub fn lifecycle(self) -> Lifecycle {
        self.spec().lifecycle
    }

    /// A setting of this kind, e.g. `setting("intro")` is `invoice_intro`.
    pub fn setting(self, name: &str) -> String {
        format!("{}_{name}", self.range())
    }

    pub fn not_found(self, id: u64) -> Error {
        Error::NotFound(format!("{} {id} does not exist", self.label()))
    }

    /// The kind whose documents other documents name by `field` (`offer_id`).
    pub fn of_parent_field(field: &str) -> Option<DocKind> {
        DocKind::ALL.into_iter().find(|k| k.parent_field() == field)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names that identify a kind are its own: two kinds sharing one would share keys.
    #[test]
    fn every_kind_has_names_of_its_own() {
        let specs: Vec<&Spec> = DocKind::ALL.iter().map(|k| k.spec()).collect();
        for (i, a) in specs.iter().enumerate() {
            for b in &specs[i + 1..] {
                for (x, y) in [
                    (a.collection, b.collection),
                    (a.range, b.range),
                    (a.items, b.items),
                    (a.comments, b.comments),
                    (a.tags, b.tags),
                    (a.parent_field, b.parent_field),
                ] {
                    assert_ne!(x, y);
                }
                assert_ne!(a.client_byte, b.client_byte);
            }
        }
    }
}
