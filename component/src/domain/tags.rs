//! Tags of documents (`/api/invoice-tags`, `/api/credit-note-tags`): records under their
//! document; the document keeps its tag names for the `tags` filter, in the same
//! transaction.

use serde::{Deserialize, Serialize};

use super::documents::{self, DocKind};
use super::schema::{Changes, Field, Kind, Record, Scalar};
use super::{Ctx, Error};
use crate::caps::{Read, Write};
use crate::store;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tag {
    pub id: u64,
    pub document_id: u64,
    pub name: String,
}

fn collection(kind: DocKind) -> &'static str {
    match kind {
        DocKind::Invoice => "invoice-tags",
        DocKind::CreditNote => "credit-note-tags",
    }
}

pub static INVOICE_TAG_FIELDS: &[Field] = &[
    Field::new("id", Kind::Integer).read_only(),
    Field::new("invoice_id", Kind::Integer).mandatory(),
    Field::new("name", Kind::Text).mandatory(),
];

pub static CREDIT_NOTE_TAG_FIELDS: &[Field] = &[
    Field::new("id", Kind::Integer).read_only(),
    Field::new("credit_note_id", Kind::Integer).mandatory(),
    Field::new("name", Kind::Text).mandatory(),
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

pub fn list(txn: &dyn Read, account: u64, kind: DocKind, doc: u64) -> Result<Vec<Tag>, Error> {
    store::scan_all(txn, &store::child_prefix(account, collection(kind), doc))?
        .iter()
        .map(|(_, v)| store::decode(v).map_err(Error::from))
        .collect()
}

pub fn load(txn: &dyn Read, account: u64, kind: DocKind, id: u64) -> Result<Tag, Error> {
    let bytes = store::get_child(txn, account, collection(kind), id)?
        .ok_or_else(|| Error::NotFound(format!("tag {id} does not exist")))?;
    Ok(store::decode(&bytes)?)
}

/// Rewrites the document's tag names from its tag records.
fn sync(ctx: &Ctx, txn: &mut dyn Write, kind: DocKind, doc: u64) -> Result<(), Error> {
    let old = documents::load(txn.as_read(), ctx.account_id, kind, doc)?;
    let mut new = old.clone();
    new.tags = list(txn.as_read(), ctx.account_id, kind, doc)?
        .into_iter()
        .map(|t| t.name)
        .collect();
    documents::save(txn, ctx.account_id, Some(&old), &new)
}

pub fn create(ctx: &Ctx, txn: &mut dyn Write, kind: DocKind, c: &Changes) -> Result<Tag, Error> {
    let mut errors = c.errors();
    super::schema::check_mandatory(fields(kind), c, &mut errors);
    let parent_field = kind.parent_field();
    let doc = match c.get(parent_field) {
        Some(Some(Scalar::Int(id))) if *id > 0 => *id as u64,
        _ => return Err(Error::Invalid(errors)),
    };
    match documents::load(txn.as_read(), ctx.account_id, kind, doc) {
        Err(Error::NotFound(_)) => errors.push(format!("{parent_field} {doc} does not exist")),
        Err(e) => return Err(e),
        Ok(_) => {}
    }
    let name = match c.get("name") {
        Some(Some(v)) => v.to_wire().trim().to_owned(),
        _ => String::new(),
    };
    if name.contains([',', '\n', '\r']) || name.chars().count() > 100 {
        errors.push("name must be one line of at most 100 characters without commas".into());
    }
    if !errors.is_empty() {
        return Err(Error::Invalid(errors));
    }
    if let Some(existing) = list(txn.as_read(), ctx.account_id, kind, doc)?
        .into_iter()
        .find(|t| t.name.eq_ignore_ascii_case(&name))
    {
        return Ok(existing);
    }
    let coll = collection(kind);
    let tag = Tag {
        id: store::next_id(txn, coll)?,
        document_id: doc,
        name,
    };
    store::put_child(txn, ctx.account_id, coll, doc, tag.id, &store::encode(&tag))?;
    sync(ctx, txn, kind, doc)?;
    Ok(tag)
}

pub fn delete(ctx: &Ctx, txn: &mut dyn Write, kind: DocKind, id: u64) -> Result<(), Error> {
    let tag = load(txn.as_read(), ctx.account_id, kind, id)?;
    let coll = collection(kind);
    store::delete_child(txn, ctx.account_id, coll, tag.document_id, id)?;
    sync(ctx, txn, kind, tag.document_id)
}

pub fn delete_all(txn: &mut dyn Write, account: u64, kind: DocKind, doc: u64) -> Result<(), Error> {
    let coll = collection(kind);
    for t in list(txn.as_read(), account, kind, doc)? {
        store::delete_child(txn, account, coll, doc, t.id)?;
    }
    Ok(())
}
