//! Comments of documents: user comments (actionkey COMMENT) and the system comments every
//! transition writes (CREATE, STATUS, PAYMENT, DELETE_PAYMENT, CANCEL, ...). Stored under
//! their document, so that a document's comments are one prefix scan.

use serde::{Deserialize, Serialize};

use super::schema::{Changes, Field, Kind, Record, Scalar};
use super::{Ctx, Error};
use crate::caps::{Read, Write};
use crate::store;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comment {
    pub id: u64,
    pub parent_id: u64,
    pub created: i64,
    pub user_id: u64,
    pub comment: String,
    pub actionkey: String,
}

/// The comment collection of a document collection.
fn collection(parent: &str) -> &'static str {
    match parent {
        "invoices" => "invoice-comments",
        _ => "credit-note-comments",
    }
}

/// Wire fields of invoice comments.
pub static INVOICE_FIELDS: [Field; 6] = fields("invoice_id");
/// Wire fields of credit note comments.
pub static CREDIT_NOTE_FIELDS: [Field; 6] = fields("credit_note_id");

/// Wire fields; `parent_field` names the document id (`invoice_id`).
pub const fn fields(parent_field: &'static str) -> [Field; 6] {
    [
        Field::new("id", Kind::Integer).read_only(),
        Field::new("created", Kind::DateTime).read_only(),
        Field::new(parent_field, Kind::Integer).mandatory(),
        Field::new("user_id", Kind::Integer).read_only(),
        Field::new("comment", Kind::Text).mandatory(),
        Field::new("actionkey", Kind::Text).read_only(),
    ]
}

pub fn to_record(c: &Comment, parent_field: &str) -> Record {
    let mut r = Record::default();
    r.set("id", Some(Scalar::Int(c.id as i64)));
    r.set("created", Some(Scalar::DateTime(c.created)));
    r.set(parent_field, Some(Scalar::Int(c.parent_id as i64)));
    r.set("user_id", Some(Scalar::Int(c.user_id as i64)));
    r.set("comment", Some(Scalar::Text(c.comment.clone())));
    r.set("actionkey", Some(Scalar::Text(c.actionkey.clone())));
    r
}

fn save(txn: &mut dyn Write, account: u64, parent: &str, c: &Comment) -> Result<(), Error> {
    store::put_child(
        txn,
        account,
        collection(parent),
        c.parent_id,
        c.id,
        &store::encode(c),
    )?;
    Ok(())
}

fn add(
    ctx: &Ctx,
    txn: &mut dyn Write,
    parent: &str,
    parent_id: u64,
    actionkey: &str,
    text: &str,
) -> Result<Comment, Error> {
    let c = Comment {
        id: store::next_id(txn, collection(parent))?,
        parent_id,
        created: ctx.now,
        user_id: ctx.user_id,
        comment: text.to_owned(),
        actionkey: actionkey.to_owned(),
    };
    save(txn, ctx.account_id, parent, &c)?;
    Ok(c)
}

/// A comment the service writes for a transition.
pub fn system(
    ctx: &Ctx,
    txn: &mut dyn Write,
    parent: &str,
    parent_id: u64,
    actionkey: &str,
    text: &str,
) -> Result<(), Error> {
    add(ctx, txn, parent, parent_id, actionkey, text).map(|_| ())
}

/// A user's comment; the document must exist (checked by the caller's load).
pub fn create(
    ctx: &Ctx,
    txn: &mut dyn Write,
    parent: &str,
    parent_id: u64,
    changes: &Changes,
) -> Result<Comment, Error> {
    let text = match changes.get("comment") {
        Some(Some(v)) => v.to_wire(),
        _ => return Err(Error::invalid("comment is mandatory")),
    };
    add(ctx, txn, parent, parent_id, "COMMENT", &text)
}

pub fn load(txn: &dyn Read, account: u64, parent: &str, id: u64) -> Result<Comment, Error> {
    let bytes = store::get_child(txn, account, collection(parent), id)?
        .ok_or_else(|| Error::NotFound(format!("comment {id} does not exist")))?;
    Ok(store::decode(&bytes)?)
}

pub fn list(
    txn: &dyn Read,
    account: u64,
    parent: &str,
    parent_id: u64,
) -> Result<Vec<Comment>, Error> {
    store::scan_all(
        txn,
        &store::child_prefix(account, collection(parent), parent_id),
    )?
    .iter()
    .map(|(_, v)| store::decode(v).map_err(Error::from))
    .collect()
}

pub fn delete(txn: &mut dyn Write, account: u64, parent: &str, id: u64) -> Result<(), Error> {
    let c = load(txn.as_read(), account, parent, id)?;
    store::delete_child(txn, account, collection(parent), c.parent_id, id)?;
    Ok(())
}

pub fn delete_all(
    txn: &mut dyn Write,
    account: u64,
    parent: &str,
    parent_id: u64,
) -> Result<(), Error> {
    for c in list(txn.as_read(), account, parent, parent_id)? {
        delete(txn, account, parent, c.id)?;
    }
    Ok(())
}
