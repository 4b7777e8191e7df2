//! Templates' own route beyond the record operations: `GET /api/templates/{id}/thumb`.

use super::error::ApiError;
use super::records::{TEMPLATES, parse_id};
use super::{Payload, Response};
use crate::caps::ImageFormat;
use crate::domain::records;
use crate::http::Call;

/// `GET /api/templates/{id}/thumb?format=png|gif|jpg`: an image of the template's first
/// page.
pub(super) fn thumbnail(c: &Call<'_>) -> Result<Response, ApiError> {
    let (caps, ctx, raw_id, query) = (c.caps, c.ctx, c.id, c.query);
    let wire = &TEMPLATES;
    let id = parse_id(wire, raw_id)?;
    let (format, mime) = match query.get("format").map(str::to_ascii_lowercase).as_deref() {
        None | Some("png") => (ImageFormat::Png, "image/png"),
        Some("gif") => (ImageFormat::Gif, "image/gif"),
        Some("jpg" | "jpeg") => (ImageFormat::Jpg, "image/jpeg"),
        Some(other) => {
            return Err(ApiError::bad(format!(
                "format must be png, gif or jpg, got \"{other}\""
            )));
        }
    };
    let txn = caps.store.begin_read()?;
    let template = records::load(txn.as_ref(), wire.res, ctx.account_id, id)?;
    let paragraphs = crate::domain::templates::text_of(txn.as_ref(), ctx.account_id, &template)?;
    let image = caps.pdf.thumbnail(&paragraphs, format).map_err(|e| {
        ApiError::Unavailable(format!(
            "the thumbnail of template {id} could not be drawn: {e}"
        ))
    })?;
    Ok(Response {
        status: 200,
        headers: vec![("content-type".into(), mime.into())],
        payload: Payload::Bytes(image),
    })
}

/// The query of `thumbnail`, for the API description.
pub(super) const THUMB_PARAMS: &[super::described::Param] = &[super::described::Param::new(
    "format",
    super::described::Shape::OneOf(&["png", "gif", "jpg", "jpeg"]),
    "The image format. Default: png.",
)];
