//! Tags of documents: the child type, its wire fields and the rule for a tag's name. The
//! document keeps its tag names for the `tags` filter; `commands` keeps them current. A
//! leaf.

use super::super::schema::{Field, Kind, Record, Scalar};
use super::kind::DocKind;

/// The storage collection (and id counter) of a kind's tags.
pub fn collection(kind: DocKind) -> &'static str {
    match kind {
        DocKind::Invoice => "invoice-tags",
        DocKind::CreditNote => "credit-note-tags",
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Tag {
    pub id: u64,
    pub document_id: u64,
    pub name: String,
}

static INVOICE_TAG_FIELDS: &[Field] = &[
    Field::new("id", Kind::Integer)
        .read_only()
        .doc("Id of the tag (read only; assigned on create)."),
    Field::new("invoice_id", Kind::Integer)
        .mandatory()
        .doc("Id of the invoice the tag is on."),
    Field::new("name", Kind::Tag).mandatory().doc(
        "Name of the tag: one line without commas, at most 100 characters. A name the invoice \
         already carries (in any case) answers that tag.",
    ),
];

static CREDIT_NOTE_TAG_FIELDS: &[Field] = &[
    Field::new("id", Kind::Integer)
        .read_only()
        .doc("Id of the tag (read only; assigned on create)."),
    Field::new("credit_note_id", Kind::Integer)
        .mandatory()
        .doc("Id of the credit note the tag is on."),
    Field::new("name", Kind::Tag).mandatory().doc(
        "Name of the tag: one line without commas, at most 100 characters. A name the credit note \
         already carries (in any case) answers that tag.",
    ),
];

pub fn fields(kind: DocKind) -> &'static [Field] {
    match kind {
        DocKind::Invoice => INVOICE_TAG_FIELDS,
        DocKind::CreditNote => CREDIT_NOTE_TAG_FIELDS,
    }
}

pub fn to_record(kind: DocKind, t: &Tag) -> Record {
    let mut r = Record::default();
    r.set("id", Some(Scalar::Int(t.id as i64)));
    r.set(kind.parent_field(), Some(Scalar::Int(t.document_id as i64)));
    r.set("name", Some(Scalar::Text(t.name.clone())));
    r
}
