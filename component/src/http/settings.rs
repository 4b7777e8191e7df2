//! `/api/settings`: one `settings` element per account.

use super::error::ApiError;
use super::records::{decode_changes, encode_record};
use super::{Request, Response, in_write};
use crate::caps::Caps;
use crate::domain::{Ctx, settings};

pub fn get(caps: &Caps, ctx: &Ctx) -> Result<Response, ApiError> {
    let txn = caps.store.begin_read()?;
    let record = settings::load(txn.as_ref(), ctx.account_id)?;
    Ok(Response::doc(
        200,
        encode_record(settings::FIELDS, "settings", &record, None),
    ))
}

pub fn update(caps: &Caps, ctx: &Ctx, req: &Request) -> Result<Response, ApiError> {
    let changes = decode_changes(settings::FIELDS, &req.document()?, "settings")?;
    let record = in_write(caps, |txn| Ok(settings::update(ctx, txn, &changes)?))?;
    Ok(Response::doc(
        200,
        encode_record(settings::FIELDS, "settings", &record, None),
    ))
}
