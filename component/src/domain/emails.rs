//! Sending documents by e-mail: recipients checked, defaults from settings and user,
//! placeholders resolved in subject and body, the stored PDF attached. The message is
//! recorded with the request's write and handed to mail after its commit (`dispatch`).

use faktura_einvoice::Profile;

use super::accounts;
use super::codes::is_email;
use super::dispatch::{Dispatch, Parcel};
use super::documents::{DocKind, Document, Status, refusal, storage};
use super::einvoice::{self, Issued};
use super::placeholders::Values;
use super::schema::Record;
use super::{Ctx, Error, contacts, filenames, pdfs, printing, settings};
use crate::caps::{Attachment, Message, Read};
use crate::limits;

/// What a client asks for; absent fields take their defaults.
#[derive(Debug, Clone, Default)]
pub struct EmailRequest {
    pub from: Option<String>,
    pub to: Vec<String>,
    pub cc: Vec<String>,
    pub bcc: Vec<String>,
    pub subject: Option<String>,
    pub body: Option<String>,
    pub filename: Option<String>,
    pub attachments: Vec<Attachment>,
    /// Credit notes: the e-mail template giving subject and body.
    pub email_template_id: Option<u64>,
    /// The e-invoice profile whose XML is attached beside the PDF: absent, the client's
    /// `einvoice_profile` (none when it has none); empty, none.
    pub einvoice: Option<String>,
}

fn check_addresses(field: &str, list: &[String], errors: &mut Vec<String>) {
    for a in list {
        if !is_email(a.trim()) {
            errors.push(format!("{field} \"{a}\" is not an e-mail address"));
        }
    }
}

/// Checks what the client sent, before anything is loaded.
pub fn check(req: &EmailRequest) -> Result<(), Error> {
    let mut errors = Vec::new();
    check_addresses("to", &req.to, &mut errors);
    check_addresses("cc", &req.cc, &mut errors);
    check_addresses("bcc", &req.bcc, &mut errors);
    if let Some(from) = &req.from
        && !is_email(from.trim())
    {
        errors.push(format!("from \"{from}\" is not an e-mail address"));
    }
    if req
        .subject
        .as_deref()
        .is_some_and(|s| s.contains(['\r', '\n']))
    {
        errors.push("subject must be a single line".into());
    }
    if req.to.len() + req.cc.len() + req.bcc.len() > limits::RECIPIENTS_MAX {
        errors.push(format!("at most {} recipients", limits::RECIPIENTS_MAX));
    }
    if let Some(problem) = req
        .filename
        .as_deref()
        .and_then(|f| filenames::problem("filename", f))
    {
        errors.push(problem);
    }
    if let Some(p) = req.einvoice.as_deref().map(str::trim)
        && !p.is_empty()
        && Profile::parse(p).is_none()
    {
        errors.push(format!(
            "einvoice must be xrechnung-cii, xrechnung-ubl or factur-x, got \"{p}\""
        ));
    }
    for a in &req.attachments {
        if a.filename.trim().is_empty() {
            errors.push("every attachment needs a filename".into());
        }
        errors.extend(filenames::problem("attachment filename", &a.filename));
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(Error::Invalid(errors))
    }
}

/// A document that can be sent, and its PDF: only a completed one has one.
fn sendable(
    ctx: &Ctx,
    txn: &dyn Read,
    kind: DocKind,
    id: u64,
) -> Result<(Document, pdfs::StoredPdf), Error> {
    let doc = storage::load(txn, ctx.account_id, kind, id)?;
    if doc.status == Status::Draft {
        return Err(refusal(
            kind,
            "only completed {doc}s can be sent; this {doc} is DRAFT".into(),
        ));
    }
    let pdf = pdfs::load(
        txn,
        ctx.account_id,
        kind.collection(),
        id,
        pdfs::Variant::Original,
    )?
    .ok_or_else(|| Error::invalid(format!("{} {id} has no PDF", kind.label())))?;
    Ok((doc, pdf))
}

/// The e-mail of a completed document with its PDF, and its MAIL note, for `dispatch`.
pub fn send(
    ctx: &Ctx,
    txn: &dyn Read,
    kind: DocKind,
    id: u64,
    req: EmailRequest,
) -> Result<Dispatch, Error> {
    check(&req)?;
    let (doc, pdf) = sendable(ctx, txn, kind, id)?;
    let mut req = req;
    if req.to.is_empty() && req.cc.is_empty() && req.bcc.is_empty() {
        req.to.push(contact_address(ctx, txn, &doc)?);
    }
    let template = super::email_templates::pick(txn, ctx.account_id, req.email_template_id)?;
    let defaults = settings::load_stored(txn, ctx.account_id)?;
    let client =
        super::records::load(txn, &super::clients::CLIENTS, ctx.account_id, doc.client_id)?;
    let values = printing::values_of(&doc, &client, &defaults);
    let from = sender(ctx, txn, req.from.as_deref(), &defaults)?;
    let (subject, body) = subject_and_body(kind, &req, template.as_ref(), &defaults, &values);
    let stem = attachment_stem(kind, id, req.filename.as_deref());
    let mut attachments = vec![Attachment {
        filename: format!("{}.pdf", filenames::sanitize(&stem)),
        mimetype: "application/pdf".into(),
        content: pdf.content,
    }];
    if let Some(profile) = einvoice_profile(kind, req.einvoice.as_deref(), &client)? {
        attachments.push(Attachment {
            filename: format!("{}.xml", filenames::sanitize(&stem)),
            mimetype: "application/xml".into(),
            content: einvoice_xml(ctx, txn, kind, id, profile)?,
        });
    }
    attachments.extend(req.attachments.into_iter().map(|a| Attachment {
        filename: filenames::sanitize(&a.filename),
        ..a
    }));
    let bcc = with_settings_bcc(req.bcc, &defaults);
    let note = mail_note(&req.to, &req.cc);
    let message = Message {
        from,
        to: req.to,
        cc: req.cc,
        bcc,
        subject,
        body,
        attachments,
    };
    Ok(dispatch_of(ctx, &doc, Parcel::Mail(message), "MAIL", note))
}

/// No recipient named: the document's contact gets the e-mail, if it has an e-mail
/// address.
fn contact_address(ctx: &Ctx, txn: &dyn Read, doc: &Document) -> Result<String, Error> {
    let to = match doc.contact_id {
        Some(contact) => contacts::of(txn, ctx.account_id, doc.client_id, contact)?
            .ok()
            .map(|c| c.text("email").trim().to_owned())
            .filter(|e| !e.is_empty()),
        None => None,
    };
    to.ok_or_else(|| {
        Error::invalid(
            "recipients must name at least one to, cc or bcc address (the document has no \
             contact with an e-mail address to send to)",
        )
    })
}

/// The sender: the request's, else the settings' `default_email_sender`, else the user's
/// own address. The service's own runs (recurring, dunning) send in the company's name.
fn sender(
    ctx: &Ctx,
    txn: &dyn Read,
    asked: Option<&str>,
    defaults: &Record,
) -> Result<String, Error> {
    Ok(match asked {
        Some(f) => f.trim().to_owned(),
        None => match defaults.text("default_email_sender").trim() {
            "" if ctx.user_id == 0 => match defaults.text("company_email").trim() {
                "" => {
                    return Err(Error::invalid(
                        "an e-mail the service sends on its own (a recurring or dunning run) \
                         needs a sender: set default_email_sender or company_email in the \
                         settings",
                    ));
                }
                company => company.to_owned(),
            },
            "" => accounts::load_user(txn, ctx.user_id)?.email,
            sender => sender.to_owned(),
        },
    })
}

/// Subject and body: the request's, else the e-mail template's, else the settings',
/// with their placeholders resolved. The subject stays on one line.
fn subject_and_body(
    kind: DocKind,
    req: &EmailRequest,
    template: Option<&Record>,
    defaults: &Record,
    values: &Values,
) -> (String, String) {
    let resolve = |t: &str| values.resolve(t);
    let subject_setting = defaults.text(&kind.setting("email_subject"));
    let body_setting = defaults.text(&kind.setting("email_body"));
    let subject = resolve(
        req.subject
            .as_deref()
            .or(template.map(|t| t.text("subject")))
            .unwrap_or(subject_setting),
    )
    .replace(['\r', '\n'], " ");
    let body = resolve(
        req.body
            .as_deref()
            .or(template.map(|t| t.text("body")))
            .unwrap_or(body_setting),
    );
    (subject, body)
}

/// The name of the attached files without their extension: the request's, else the
/// kind's file name and the document's id.
fn attachment_stem(kind: DocKind, id: u64, asked: Option<&str>) -> String {
    match asked.map(str::trim) {
        Some(f) if !f.is_empty() => f.trim_end_matches(".pdf").to_owned(),
        // The contract names a credit note's attachment invoice_<id> by default.
        _ if kind == DocKind::CreditNote => format!("invoice_{id}"),
        _ => format!("{}_{id}", kind.spec().file_stem),
    }
}

/// The e-invoice profile whose XML goes with the PDF: the request's, else the client's.
/// Asking one of a kind without e-invoices is refused.
fn einvoice_profile(
    kind: DocKind,
    asked: Option<&str>,
    client: &Record,
) -> Result<Option<Profile>, Error> {
    Ok(match asked.map(str::trim) {
        // Only kinds with e-invoices have one to attach by the client's profile.
        None if !kind.spec().einvoices => None,
        None => Profile::parse(client.text("einvoice_profile")),
        Some(p) if !kind.spec().einvoices && !p.is_empty() => {
            return Err(Error::invalid(format!(
                "einvoice: {} {} has no e-invoice (only invoices and credit notes do)",
                if kind.label().starts_with(['a', 'e', 'i', 'o', 'u']) {
                    "an"
                } else {
                    "a"
                },
                kind.label()
            )));
        }
        Some(p) => Profile::parse(p),
    })
}

/// The document's e-invoice XML in `profile`; refused when its data fails the profile's
/// rules or it has none.
fn einvoice_xml(
    ctx: &Ctx,
    txn: &dyn Read,
    kind: DocKind,
    id: u64,
    profile: Profile,
) -> Result<Vec<u8>, Error> {
    match einvoice::load(txn, ctx.account_id, kind, id, profile)? {
        Some(Issued::Xml { xml, .. }) => Ok(xml),
        Some(Issued::Refused(violations)) => Err(Error::Invalid(
            violations
                .iter()
                .map(|v| format!("einvoice {}: {}", profile.name(), v.describe()))
                .collect(),
        )),
        None => Err(Error::invalid(format!(
            "einvoice: {} {id} has no e-invoice",
            kind.label()
        ))),
    }
}

/// The request's bcc addresses, then the settings' `bcc_addresses`.
fn with_settings_bcc(mut bcc: Vec<String>, defaults: &Record) -> Vec<String> {
    bcc.extend(
        defaults
            .text("bcc_addresses")
            .split(',')
            .map(str::trim)
            .filter(|a| !a.is_empty())
            .map(str::to_owned),
    );
    bcc
}

/// The MAIL note: whom the e-mail went to, or only "Bcc recipients".
fn mail_note(to: &[String], cc: &[String]) -> String {
    let recipients: Vec<String> = to.iter().chain(cc).cloned().collect();
    let shown = if recipients.is_empty() {
        "Bcc recipients".to_owned()
    } else {
        recipients.join(", ")
    };
    format!("Sent by e-mail to {shown}")
}

fn dispatch_of(
    ctx: &Ctx,
    doc: &Document,
    parcel: Parcel,
    actionkey: &str,
    note: String,
) -> Dispatch {
    Dispatch {
        account: ctx.account_id,
        user: ctx.user_id,
        collection: doc.kind.collection().to_owned(),
        document: doc.id,
        parcel,
        actionkey: actionkey.to_owned(),
        note,
        tries: 0,
        not_before: 0,
        last_error: String::new(),
    }
}

/// Print options and extra PDFs of a postal letter.
#[derive(Debug, Clone)]
pub struct LetterRequest {
    pub color: bool,
    pub duplex: bool,
    pub paper_weight: u32,
    pub attachments: Vec<Attachment>,
}

impl Default for LetterRequest {
    fn default() -> Self {
        LetterRequest {
            color: false,
            duplex: true,
            paper_weight: 90,
            attachments: Vec::new(),
        }
    }
}

/// The postal letter of a completed document: its PDF and the extra PDFs to the
/// document's address, and its LETTER note, for `dispatch`.
pub fn post(
    ctx: &Ctx,
    txn: &dyn Read,
    kind: DocKind,
    id: u64,
    req: LetterRequest,
) -> Result<Dispatch, Error> {
    let (doc, pdf) = sendable(ctx, txn, kind, id)?;
    let mut documents = vec![Attachment {
        filename: pdf.filename,
        mimetype: "application/pdf".into(),
        content: pdf.content,
    }];
    documents.extend(req.attachments);
    let letter = crate::caps::Letter {
        address: doc.address.lines().map(str::to_owned).collect(),
        documents,
        color: req.color,
        duplex: req.duplex,
        paper_weight: req.paper_weight,
    };
    let text = format!(
        "Sent by post ({} g, {}, {})",
        req.paper_weight,
        if req.color {
            "colour"
        } else {
            "black and white"
        },
        if req.duplex { "duplex" } else { "simplex" }
    );
    Ok(dispatch_of(
        ctx,
        &doc,
        Parcel::Letter(letter),
        "LETTER",
        text,
    ))
}
