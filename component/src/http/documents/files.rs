//! The files of documents on the wire: the stored PDFs (`GET …/{id}/pdf`) and the upload
//! of a signed copy (`PUT …/{id}/upload-signature`), and the e-invoices fixed at
//! completion (`GET …/{id}/e-invoice`).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use faktura_einvoice::Profile;

use super::super::error::ApiError;
use super::super::query::Query;
use super::super::records::decode_changes;
use super::super::{Outcome, Payload, Request, Response, in_write};
use super::{existing, parse_id};
use crate::codec::{Element, ScalarType};
use crate::domain::clients::CLIENTS;
use crate::domain::date::format_datetime;
use crate::domain::documents::{DocKind, Status, commands, storage};
use crate::domain::einvoice::{self, Issued};
use crate::domain::schema::{Field, Kind, check_mandatory};
use crate::domain::{filenames, records};
use crate::domain::{pdfs, settings};
use crate::http::Call;

static SIGNATURE_FIELDS: &[Field] = &[Field::new("base64file", Kind::File).mandatory().doc(
    "The signed PDF, base64-encoded; kept beside the original and served by GET …/pdf?type=signed.",
)];

/// `GET .../{id}/pdf`: the `pdf` record, or the bytes with `format=pdf` or
/// `Accept: application/pdf`; `type=print` and `type=signed` pick the other files.
pub(crate) fn pdf(c: &Call<'_>, kind: DocKind) -> Result<Response, ApiError> {
    let (caps, ctx, raw, req, query) = (c.caps, c.ctx, c.id, c.req, c.query);
    let id = parse_id(raw, kind.label())?;
    let variant = pdf_variant(query)?;
    let txn = caps.store.begin_read()?;
    storage::load(txn.as_ref(), ctx.account_id, kind, id)?;
    if variant == pdfs::Variant::Print
        && !settings::load_stored(txn.as_ref(), ctx.account_id)?.bool("print_version")
    {
        return Err(ApiError::bad(
            "type=print needs the print version switched on (settings print_version=1)",
        ));
    }
    let label = kind.label();
    let file = pdfs::load(txn.as_ref(), ctx.account_id, kind.collection(), id, variant)?
        .ok_or_else(|| {
            ApiError::NotFound(match variant {
                pdfs::Variant::Signed => format!("{label} {id} has no signed PDF"),
                pdfs::Variant::Original | pdfs::Variant::Print => {
                    format!("{label} {id} has no PDF: it is a DRAFT")
                }
            })
        })?;
    if wants_pdf_bytes(req, query)? {
        return Ok(pdf_bytes(file));
    }
    Ok(Response::doc(200, pdf_record(kind, id, &file)))
}

/// The file `type` picks: the original (the default), the print version or the signed
/// copy.
fn pdf_variant(query: &Query) -> Result<pdfs::Variant, ApiError> {
    match query.get("type").map(str::to_ascii_lowercase).as_deref() {
        None | Some("original") => Ok(pdfs::Variant::Original),
        Some("print") => Ok(pdfs::Variant::Print),
        Some("signed") => Ok(pdfs::Variant::Signed),
        Some(other) => Err(ApiError::bad(format!(
            "type must be print or signed, got \"{other}\""
        ))),
    }
}

/// Whether the PDF is asked for as its bytes (`format=pdf`, or `Accept:
/// application/pdf`) rather than as a record; `format` may also be xml or json.
fn wants_pdf_bytes(req: &Request, query: &Query) -> Result<bool, ApiError> {
    let format = query.get("format").map(str::to_ascii_lowercase);
    if let Some(other) = format
        .as_deref()
        .filter(|f| !["xml", "json", "pdf"].contains(f))
    {
        return Err(ApiError::bad(format!(
            "format must be xml, json or pdf, got \"{other}\""
        )));
    }
    Ok(format.as_deref() == Some("pdf")
        || req
            .header("accept")
            .is_some_and(|a| a.to_ascii_lowercase().contains("application/pdf")))
}

/// A PDF's bytes, shown inline under its file name.
fn pdf_bytes(file: pdfs::StoredPdf) -> Response {
    let disposition = format!("inline; filename=\"{}\"", file.filename.replace('"', ""));
    Response {
        status: 200,
        headers: vec![
            ("content-type".into(), "application/pdf".into()),
            ("content-disposition".into(), disposition),
        ],
        payload: Payload::Bytes(file.content),
    }
}

/// The `pdf` record of a document's file (`PDF_FIELDS`), the bytes in base64.
fn pdf_record(kind: DocKind, id: u64, file: &pdfs::StoredPdf) -> Element {
    Element::node(
        "pdf",
        vec![
            Element::typed("id", ScalarType::Integer, file.id.to_string()),
            Element::typed(
                "created",
                ScalarType::DateTime,
                format_datetime(file.created),
            ),
            Element::typed(kind.parent_field(), ScalarType::Integer, id.to_string()),
            Element::text("filename", file.filename.clone()),
            Element::text("mimetype", "application/pdf"),
            Element::typed(
                "filesize",
                ScalarType::Integer,
                file.content.len().to_string(),
            ),
            Element::text("base64file", BASE64.encode(&file.content)),
        ],
    )
}

/// The pdf record `pdf` answers, for the API description.
pub(crate) fn pdf_schema() -> crate::http::described::Schema {
    crate::http::described::Schema {
        singular: "pdf",
        plural: "pdfs",
        fields: PDF_FIELDS,
        filters: Vec::new(),
        owner: None,
    }
}

static PDF_FIELDS: &[Field] = &[
    Field::new("id", Kind::Integer)
        .read_only()
        .doc("Id of the PDF (read only)."),
    Field::new("created", Kind::DateTime)
        .read_only()
        .doc("When the PDF was rendered (read only)."),
    Field::new("invoice_id", Kind::Integer)
        .read_only()
        .doc("The invoice's id (PDFs of invoices)."),
    Field::new("credit_note_id", Kind::Integer)
        .read_only()
        .doc("The credit note's id (PDFs of credit notes)."),
    Field::new("filename", Kind::Text)
        .read_only()
        .doc("File name, from the settings' filename pattern."),
    Field::new("mimetype", Kind::Text)
        .read_only()
        .doc("Always application/pdf."),
    Field::new("filesize", Kind::Integer)
        .read_only()
        .doc("Size of the file in bytes."),
    Field::new("base64file", Kind::File)
        .read_only()
        .doc("The PDF in base64."),
];

/// `PUT .../{id}/upload-signature`: a signed PDF kept beside the original.
pub(crate) fn upload_signature(c: &Call<'_>, kind: DocKind) -> Result<Response, ApiError> {
    let (caps, ctx, raw, req) = (c.caps, c.ctx, c.id, c.req);
    let id = existing(caps, ctx, kind, raw)?;
    let changes = decode_changes(SIGNATURE_FIELDS, &req.document()?, "signature")?;
    let mut errors = changes.errors();
    check_mandatory(SIGNATURE_FIELDS, &changes, &mut errors);
    if !errors.is_empty() {
        return Err(ApiError::BadRequest(errors));
    }
    let file = changes
        .files
        .into_iter()
        .next()
        .map(|(_, b)| b)
        .unwrap_or_default();
    in_write(caps, |txn| {
        Ok(commands::sign(ctx, txn, kind, id, file.clone())?)
    })?;
    Ok(Response::empty())
}

/// `GET …/{id}/e-invoice?profile=P`: the EN 16931 XML fixed at completion, as a download.
/// `P` defaults to the client's `einvoice_profile`, else `xrechnung-cii`. A draft has
/// none; a document whose data failed the profile's rules answers those rules. Both
/// refusals say so to the host's metrics (`refused`).
pub(crate) fn einvoice(c: &Call<'_>, kind: DocKind) -> Result<Response, ApiError> {
    let (caps, ctx, raw, query) = (c.caps, c.ctx, c.id, c.query);
    let id = parse_id(raw, kind.label())?;
    let asked = asked_profile(query)?;
    let txn = caps.store.begin_read()?;
    let account = ctx.account_id;
    // The kept e-invoice of the profile asked for is all it takes: only completed
    // documents have one.
    let stored = match asked {
        Some(p) => einvoice::load(txn.as_ref(), account, kind, id, p)?.map(|i| (p, i)),
        None => None,
    };
    let (profile, issued) = match stored {
        Some(found) => found,
        None => {
            let doc = storage::load(txn.as_ref(), account, kind, id)?;
            if doc.status == Status::Draft {
                return Ok(refused(&ApiError::bad(format!(
                    "{} {id} is a DRAFT: an e-invoice is issued when it is completed",
                    kind.label()
                ))));
            }
            let profile = match asked {
                Some(p) => p,
                None => einvoice::profile_of(&records::load(
                    txn.as_ref(),
                    &CLIENTS,
                    account,
                    doc.client_id,
                )?),
            };
            let issued = match einvoice::load(txn.as_ref(), account, kind, id, profile)? {
                Some(issued) => issued,
                // Completed before e-invoices were kept and not migrated yet: made as it
                // would have been, and not kept (a GET never writes).
                None => einvoice::make(
                    &einvoice::model(txn.as_ref(), account, &doc)?,
                    &doc,
                    profile,
                ),
            };
            (profile, issued)
        }
    };
    Ok(einvoice_answer(profile, issued))
}

/// The profile the `profile` parameter asks for, if any.
fn asked_profile(query: &Query) -> Result<Option<Profile>, ApiError> {
    match query.get("profile") {
        None | Some("") => Ok(None),
        Some(name) => Profile::parse(name).map(Some).ok_or_else(|| {
            ApiError::bad(format!(
                "profile must be xrechnung-cii, xrechnung-ubl or factur-x, got \"{name}\""
            ))
        }),
    }
}

/// The answer of an e-invoice: its XML as a download named by the document's number, or
/// the profile's rules the document's data failed.
fn einvoice_answer(profile: Profile, issued: Issued) -> Response {
    match issued {
        Issued::Xml { number, xml } => {
            let name = filenames::sanitize(&format!("{number}.xml"));
            Response {
                status: 200,
                headers: vec![
                    ("content-type".into(), "application/xml".into()),
                    (
                        "content-disposition".into(),
                        format!("attachment; filename=\"{name}\""),
                    ),
                ],
                payload: Payload::Bytes(xml),
            }
        }
        Issued::Refused(violations) => refused(&ApiError::BadRequest(
            violations
                .iter()
                .map(|v| format!("{}: {}", profile.name(), v.describe()))
                .collect(),
        )),
    }
}

/// The answer of an e-invoice refused for `why`: the error's, marked as a refusal for the
/// host's metrics.
fn refused(why: &ApiError) -> Response {
    Response::error(why).with_outcome(Outcome::EInvoiceRefused)
}

/// The body of `upload_signature`, for the API description.
pub(crate) fn signature_schema() -> crate::http::described::Schema {
    crate::http::described::Schema {
        singular: "signature",
        plural: "signatures",
        fields: SIGNATURE_FIELDS,
        filters: Vec::new(),
        owner: None,
    }
}
