//! Comments on incoming invoices (`INCOMING_COMMENTS`): the users', and the service's own
//! on imports, payments and status changes (`write`). Their fields are documents'
//! comments' (`documents::comments::comment_fields`).

use super::super::documents::comments::comment_fields;
use super::super::records::{self, Draft, Filter, Resource, Rules};
use super::super::schema::{Changes, Field, Scalar};
use super::super::{Ctx, Error};
use super::record::check_parent;
use crate::caps::Write;

static COMMENT_FIELDS: [Field; 6] = comment_fields(
    "incoming_id",
    "Id of the incoming the comment belongs to.",
    "IMPORT, PAYMENT, DELETE_PAYMENT or STATUS on the comments the service writes; empty on a \
     user's comment (read only).",
);

/// Comments on incoming invoices: the users', and the service's own on imports, payments
/// and status changes (actionkeys IMPORT, PAYMENT, DELETE_PAYMENT, STATUS, as invoices).
pub static INCOMING_COMMENTS: Resource = Resource::new(
    "incoming-comments",
    "incoming comment",
    &COMMENT_FIELDS,
    &CommentRules,
)
.filtered(&[Filter::exact("incoming_id", "incoming_id")])
.indexed(&["incoming_id"]);

struct CommentRules;

impl Rules for CommentRules {
    fn prepare(&self, mut d: Draft<'_>) -> Result<(), Error> {
        check_parent(&mut d)?;
        if d.record.text("comment").trim().is_empty() {
            d.errors.push("comment must not be empty".into());
        }
        d.record
            .set("user_id", Some(Scalar::Int(d.ctx.user_id as i64)));
        Ok(())
    }
}

/// Writes a comment of the service on an incoming.
pub fn write(
    ctx: &Ctx,
    txn: &mut dyn Write,
    incoming: u64,
    actionkey: &str,
    text: &str,
) -> Result<(), Error> {
    let mut c = Changes::default();
    c.values
        .push(("incoming_id", Some(Scalar::Int(incoming as i64))));
    c.values
        .push(("comment", Some(Scalar::Text(text.to_owned()))));
    // Read-only on the wire, set by the service.
    c.values
        .push(("actionkey", Some(Scalar::Text(actionkey.to_owned()))));
    records::create(ctx, txn, &INCOMING_COMMENTS, &c).map(drop)
}
