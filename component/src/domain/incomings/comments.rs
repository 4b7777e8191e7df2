//! Comments on incoming invoices (`INCOMING_COMMENTS`): the users', and the service's own
//! on imports, payments and status changes (`write`). Their fields are documents'
//! comments' (`documents::comments::comment_fields`).

use super::super::documents::comments::comment_fields;
use super::super::records::{self, Draft, Filter, Resource, Rules};
use super::super::schema::{Changes, Field, Record, Scalar};
use super::super::{Ctx, Error};
use super::record::check_parent;
use crate::caps::{Read, Write};

static COMMENT_FIELDS: [Field; 6] = comment_fields(
    "incoming_id",
    "Id of the incoming the comment belongs to.",
    "COMMENT for a user's comment, else the action the service wrote it for: IMPORT, PAYMENT, \
     DELETE_PAYMENT or STATUS (read only).",
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
        // A user's comment, as on documents; the service's own name their action (`write`).
        if d.record.get("actionkey").is_none() {
            d.record.set("actionkey", Some(Scalar::Text(USER.into())));
        }
        Ok(())
    }

    /// Users' comments kept before they were marked show as what they are.
    fn shown(&self, _txn: &dyn Read, _account: u64, mut record: Record) -> Result<Record, Error> {
        if record.text("actionkey").is_empty() {
            record.set("actionkey", Some(Scalar::Text(USER.into())));
        }
        Ok(record)
    }
}

/// The actionkey of a user's comment.
const USER: &str = "COMMENT";

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
