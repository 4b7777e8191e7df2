//! Tags of documents: the child type, its wire fields and the rule for a tag's name. The
//! document keeps its tag names for the `tags` filter; `commands` keeps them current. A
//! leaf.

use super::super::schema::{Field, Kind, Record, Scalar};
use super::kind::{DocKind, part_fields_per_kind};

/// The storage collection (and id counter) of a kind's tags.
pub fn collection(kind: DocKind) -> &'static str {
    kind.spec().tags
}

#[derive(Debug, Clone, PartialEq)]
pub struct Tag {
    pub id: u64,
    pub document_id: u64,
    pub name: String,
}

/// Wire fields; `parent_field` names the document id (`invoice_id`), `parent_doc`
/// describes it.
const fn tag_fields(parent_field: &'static str, parent_doc: &'static str) -> [Field; 3] {
    [
        Field::new("id", Kind::Integer)
            .read_only()
            .doc("Id of the tag (read only; assigned on create)."),
        Field::new(parent_field, Kind::Integer)
            .mandatory()
            .doc(parent_doc),
        Field::new("name", Kind::Tag).mandatory().doc(
            "Name of the tag: one line without commas, at most 100 characters. A name the \
             document already carries (in any case) answers that tag.",
        ),
    ]
}

part_fields_per_kind!(3, tag_fields, "the tag is on.");

pub fn to_record(kind: DocKind, t: &Tag) -> Record {
    let mut r = Record::default();
    r.set("id", Some(Scalar::Int(t.id as i64)));
    r.set(kind.parent_field(), Some(Scalar::Int(t.document_id as i64)));
    r.set("name", Some(Scalar::Text(t.name.clone())));
    r
}
