//! `/api/settings`: one `settings` element per account.

use super::error::ApiError;
use super::records::{decode_changes, encode_record};
use super::{Response, in_write};
use crate::domain::settings;
use crate::http::Call;

pub(super) fn get(c: &Call<'_>) -> Result<Response, ApiError> {
    let (caps, ctx) = (c.caps, c.ctx);
    let txn = caps.store.begin_read()?;
    let record = settings::load(txn.as_ref(), ctx.account_id, ctx.today())?;
    Ok(Response::doc(
        200,
        encode_record(settings::FIELDS, "settings", &record, None),
    ))
}

pub(super) fn update(c: &Call<'_>) -> Result<Response, ApiError> {
    let (caps, ctx, req) = (c.caps, c.ctx, c.req);
    let changes = decode_changes(settings::FIELDS, &req.document()?, "settings")?;
    let record = in_write(caps, |txn| Ok(settings::update(ctx, txn, &changes)?))?;
    Ok(Response::doc(
        200,
        encode_record(settings::FIELDS, "settings", &record, None),
    ))
}

/// The settings record for the API description.
pub(super) fn schema() -> super::described::Schema {
    super::described::Schema {
        singular: "settings",
        plural: "settings",
        fields: settings::FIELDS,
        filters: Vec::new(),
        owner: None,
    }
}
