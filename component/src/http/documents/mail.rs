//! Sending documents on the wire: `POST …/{id}/email` (an `<email>` document) and, for
//! credit notes, `POST …/{id}/mail` (a postal letter). Each records its message with its
//! write and hands it to mail after the commit (`http::dispatch`), so the write may run
//! again after a conflict.

use super::super::error::ApiError;
use super::super::records::{decode_base64, decode_changes};
use super::super::{Response, in_write};
use super::existing;
use crate::caps::Attachment;
use crate::codec::Element;
use crate::domain::dispatch::{self, Dispatch};
use crate::domain::documents::DocKind;
use crate::domain::emails::{self, EmailRequest, LetterRequest};
use crate::domain::filenames;
use crate::domain::schema::{Field, Kind, Scalar};
use crate::http::Call;

/// Reads an `<email>` document: recipients (several `to`, `cc`, `bcc`, each possibly a
/// comma-separated list), texts and attachments.
pub(super) fn decode_email(root: &Element) -> Result<EmailRequest, ApiError> {
    if root.name != "email" {
        return Err(ApiError::bad(format!(
            "expected an <email> root element, found <{}>",
            root.name
        )));
    }
    let mut errors = Vec::new();
    let text = |name: &str| {
        root.child(name)
            .and_then(Element::as_text)
            .map(str::to_owned)
    };
    let mut req = EmailRequest {
        from: text("from").filter(|s| !s.trim().is_empty()),
        subject: text("subject"),
        body: text("body"),
        filename: text("filename"),
        einvoice: text("einvoice").or_else(|| root.child("einvoice").map(|_| String::new())),
        email_template_id: template_id(text("email_template_id"))?,
        ..EmailRequest::default()
    };
    if let Some(recipients) = root.child("recipients") {
        decode_recipients(recipients, &mut req, &mut errors);
    }
    if let Some(attachments) = root.child("attachments") {
        req.attachments = decode_attachments(attachments, &mut errors);
    }
    ApiError::checked(req, errors)
}

/// The `email_template_id` given, when it is not blank.
fn template_id(given: Option<String>) -> Result<Option<u64>, ApiError> {
    given
        .filter(|t| !t.trim().is_empty())
        .map(|t| {
            t.trim().parse::<u64>().map_err(|_| {
                ApiError::bad(format!("email_template_id must be an integer, got \"{t}\""))
            })
        })
        .transpose()
}

/// Adds the addresses of `<recipients>` to the request's `to`, `cc` and `bcc`.
fn decode_recipients(recipients: &Element, req: &mut EmailRequest, errors: &mut Vec<String>) {
    for r in recipients.children() {
        let list = match r.name.as_str() {
            "to" => &mut req.to,
            "cc" => &mut req.cc,
            "bcc" => &mut req.bcc,
            other => {
                errors.push(format!("recipients take to, cc and bcc, not <{other}>"));
                continue;
            }
        };
        list.extend(
            r.as_text()
                .unwrap_or_default()
                .split(',')
                .map(str::trim)
                .filter(|a| !a.is_empty())
                .map(str::to_owned),
        );
    }
}

/// The files of `<attachments>`, each with its bytes in base64; the type defaults to
/// application/octet-stream.
fn decode_attachments(attachments: &Element, errors: &mut Vec<String>) -> Vec<Attachment> {
    let mut decoded = Vec::new();
    for a in attachments.children() {
        let field = |name: &str| a.child(name).and_then(Element::as_text).unwrap_or_default();
        match decode_base64(field("base64file")) {
            Some(content) if !content.is_empty() => decoded.push(Attachment {
                filename: field("filename").to_owned(),
                mimetype: match field("mimetype").trim() {
                    "" => "application/octet-stream".to_owned(),
                    m => m.to_owned(),
                },
                content,
            }),
            _ => errors.push(format!(
                "attachment \"{}\": base64file is missing or not valid base64",
                field("filename")
            )),
        }
    }
    decoded
}

/// `POST .../{id}/email`.
pub(crate) fn email(c: &Call<'_>, kind: DocKind) -> Result<Response, ApiError> {
    let (caps, ctx, raw, req) = (c.caps, c.ctx, c.id, c.req);
    let id = existing(caps, ctx, kind, raw)?;
    let email = decode_email(&req.document()?)?;
    let (recorded, d) = in_write(caps, |txn| {
        let d = emails::send(ctx, txn.as_read(), kind, id, email.clone())?;
        Ok(dispatch::record(txn, d, ctx.now)?)
    })?;
    sent(c, recorded, &d)
}

/// Hands the message the request recorded to mail, and what else is due (a component
/// whose host does not ask for it), and answers.
fn sent(c: &Call<'_>, id: u64, d: &Dispatch) -> Result<Response, ApiError> {
    if c.caps.store.hand_over_after_commit(id) {
        // The request's commit is still to come (`Idempotency-Key`): mail takes the
        // message after it.
        return Ok(Response::empty());
    }
    let outcome = super::super::dispatch::hand_over(c.caps, id, d, false)?;
    if let Err(e) = super::super::dispatch::hand_over_due(c.caps) {
        eprintln!("faktura: handing over recorded messages: {e:?}");
    }
    super::super::dispatch::answer(outcome)?;
    Ok(Response::empty())
}

static MAIL_FIELDS: &[Field] = &[
    Field::new("color", Kind::Bool).doc("1 prints the letter in colour. Default: 0."),
    Field::new("duplex", Kind::Bool).doc("1 prints on both sides of the paper. Default: 1."),
    Field::new("paper_weight", Kind::Integer).doc("Paper weight in g/m², 80 or 90. Default: 90."),
];

/// `POST /api/credit-notes/{id}/mail`: the PDF and PDF attachments as a letter.
pub(crate) fn post(c: &Call<'_>, kind: DocKind) -> Result<Response, ApiError> {
    let (caps, ctx, raw, req) = (c.caps, c.ctx, c.id, c.req);
    let id = existing(caps, ctx, kind, raw)?;
    let root = req.optional_document()?;
    let mut letter = LetterRequest::default();
    if let Some(root) = &root {
        if root.name != "mail" {
            return Err(ApiError::bad(format!(
                "expected a <mail> root element, found <{}>",
                root.name
            )));
        }
        let changes = decode_changes(MAIL_FIELDS, root, "mail")?;
        let mut errors = changes.errors();
        if let Some(Some(Scalar::Bool(b))) = changes.get("color") {
            letter.color = *b;
        }
        if let Some(Some(Scalar::Bool(b))) = changes.get("duplex") {
            letter.duplex = *b;
        }
        if let Some(Some(Scalar::Int(w))) = changes.get("paper_weight") {
            match u32::try_from(*w) {
                Ok(w @ (80 | 90)) => letter.paper_weight = w,
                _ => errors.push(format!("paper_weight must be 80 or 90, got {w}")),
            }
        }
        if let Some(list) = root.child("attachments") {
            for a in list.children() {
                let field =
                    |name: &str| a.child(name).and_then(Element::as_text).unwrap_or_default();
                if let Some(problem) = filenames::problem("attachment filename", field("filename"))
                {
                    errors.push(problem);
                    continue;
                }
                match decode_base64(field("base64file")) {
                    Some(content) if content.starts_with(b"%PDF-") => {
                        letter.attachments.push(Attachment {
                            filename: field("filename").to_owned(),
                            mimetype: "application/pdf".into(),
                            content,
                        })
                    }
                    Some(_) => errors.push(format!(
                        "attachment \"{}\" is not a PDF file",
                        field("filename")
                    )),
                    None => errors.push(format!(
                        "attachment \"{}\": base64file is not valid base64",
                        field("filename")
                    )),
                }
            }
        }
        if !errors.is_empty() {
            return Err(ApiError::BadRequest(errors));
        }
    }
    let (recorded, d) = in_write(caps, |txn| {
        let d = emails::post(ctx, txn.as_read(), kind, id, letter.clone())?;
        Ok(dispatch::record(txn, d, ctx.now)?)
    })?;
    sent(c, recorded, &d)
}

/// The elements `decode_email` reads, for the API description (`recipients` holds `to`,
/// `cc` and `bcc` elements, each one address).
static EMAIL_FIELDS: &[Field] = &[
    Field::new("from", Kind::Text)
        .doc("Sender address. Default: the settings' default_email_sender."),
    Field::new("recipients", Kind::Recipients).mandatory().doc(
        "The addresses, as `to`, `cc` and `bcc` child elements, each repeated at will and \
         holding one address or several separated by commas (JSON: a string or an array of \
         strings each); at least one address in all.",
    ),
    Field::new("subject", Kind::Text)
        .doc("Subject, placeholders resolved. Default: the settings' e-mail subject of the kind."),
    Field::new("body", Kind::Text).doc(
        "Message text, placeholders resolved. Default: the settings' e-mail body of the kind.",
    ),
    Field::new("filename", Kind::Text)
        .doc("File name of the attached PDF without `.pdf`. Default: the settings' filename."),
    Field::new("email_template_id", Kind::Integer)
        .doc("An e-mail template whose subject and body apply where none are sent."),
    Field::new("einvoice", Kind::Text).doc(
        "Attach the e-invoice of this profile (xrechnung-cii, xrechnung-ubl, factur-x); empty: \
         the client's profile.",
    ),
];

/// The body of `email`, for the API description.
pub(crate) fn email_schema() -> crate::http::described::Schema {
    crate::http::described::Schema {
        singular: "email",
        plural: "emails",
        fields: EMAIL_FIELDS,
        filters: Vec::new(),
        owner: None,
    }
}

/// The body of `post`, for the API description.
pub(crate) fn letter_schema() -> crate::http::described::Schema {
    crate::http::described::Schema {
        singular: "mail",
        plural: "mails",
        fields: MAIL_FIELDS,
        filters: Vec::new(),
        owner: None,
    }
}
