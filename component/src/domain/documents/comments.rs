//! Comments of documents: user comments (actionkey COMMENT) and the system comments every
//! change writes (CREATE, STATUS, PAYMENT, DELETE_PAYMENT, CANCEL, MAIL, ...). The child
//! type and its wire fields, whose list incoming invoices' comments share
//! (`comment_fields`); a leaf.

use super::super::schema::{Field, Kind, Record, Scalar};
use super::kind::{DocKind, part_fields_per_kind};

/// The storage collection (and id counter) of a kind's comments.
pub fn collection(kind: DocKind) -> &'static str {
    kind.spec().comments
}

#[derive(Debug, Clone, PartialEq)]
pub struct Comment {
    pub id: u64,
    pub document_id: u64,
    pub created: i64,
    pub user_id: u64,
    pub comment: String,
    pub actionkey: String,
}

/// The wire fields of comments, of documents and of incoming invoices alike:
/// `parent_field` names the parent's id (`invoice_id`, `incoming_id`), `parent_doc`
/// describes it, `actions_doc` says which actionkeys the family's comments carry.
pub const fn comment_fields(
    parent_field: &'static str,
    parent_doc: &'static str,
    actions_doc: &'static str,
) -> [Field; 6] {
    [
        Field::new("id", Kind::Integer)
            .read_only()
            .doc("Id of the comment (read only; assigned on create)."),
        Field::new("created", Kind::DateTime)
            .read_only()
            .doc("When the comment was written (read only)."),
        Field::new(parent_field, Kind::Integer)
            .mandatory()
            .doc(parent_doc),
        Field::new("user_id", Kind::Integer)
            .read_only()
            .doc("Id of the user who wrote the comment or whose request wrote it (read only)."),
        Field::new("comment", Kind::Text)
            .mandatory()
            .doc("Text of the comment."),
        Field::new("actionkey", Kind::Text)
            .read_only()
            .doc(actions_doc),
    ]
}

const ACTIONS: &str = "COMMENT for a user's comment, else the action the service wrote it for: \
                       CREATE, STATUS, PAYMENT, DELETE_PAYMENT, CANCEL, UNCANCEL, SIGN, MAIL, \
                       LETTER, WIN, LOSE, CLEAR, UNCLEAR, CREATE_FROM_OFFER or \
                       CREATE_FROM_CONFIRMATION (read only).";

part_fields_per_kind!(6, comment_fields, "the comment belongs to.", ACTIONS);

pub fn to_record(kind: DocKind, c: &Comment) -> Record {
    let mut r = Record::default();
    r.set("id", Some(Scalar::Int(c.id as i64)));
    r.set("created", Some(Scalar::DateTime(c.created)));
    r.set(kind.parent_field(), Some(Scalar::Int(c.document_id as i64)));
    r.set("user_id", Some(Scalar::Int(c.user_id as i64)));
    r.set("comment", Some(Scalar::Text(c.comment.clone())));
    r.set("actionkey", Some(Scalar::Text(c.actionkey.clone())));
    r
}
