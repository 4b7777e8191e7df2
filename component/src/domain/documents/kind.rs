//! The kinds of documents and the names each one goes by: collections, number range,
//! settings prefix, labels, wire fields of its number and of its children's parent.

use super::super::Error;

/// The kinds of documents. Everything else about documents is shared; what differs is
/// here, as data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DocKind {
    #[default]
    Invoice,
    CreditNote,
}

impl DocKind {
    pub const ALL: [DocKind; 2] = [DocKind::Invoice, DocKind::CreditNote];

    /// The storage collection of the documents, and the parent name of their children.
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

    /// A setting of this kind, e.g. `setting("intro")` is `invoice_intro`.
    pub fn setting(self, name: &str) -> String {
        format!("{}_{name}", self.range())
    }

    pub fn not_found(self, id: u64) -> Error {
        Error::NotFound(format!("{} {id} does not exist", self.label()))
    }
}
