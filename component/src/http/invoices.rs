//! `/api/invoices`, `/api/invoice-items`, `/api/invoice-payments`, `/api/invoice-comments`.

use super::error::ApiError;
use super::query::Query;
use super::records::{decode_changes, encode_record};
use super::{Payload, Request, Response, in_write};
use crate::caps::Caps;
use crate::codec::{Element, ScalarType};
use crate::domain::invoices::{self, Filter, GroupKey, Invoice, Shown};
use crate::domain::schema::{Changes, Scalar};
use crate::domain::settings::PAYMENT_TYPES;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;

use crate::caps::Attachment;
use crate::domain::date::format_datetime;
use crate::domain::emails::{self, EmailRequest};
use crate::domain::schema::{Field, Kind, check_mandatory};
use crate::domain::{Ctx, Error, comments, invoice_items, payments, pdfs, settings};

fn invoice_element(inv: &Invoice, ctx: &Ctx) -> Element {
    let record = invoices::to_record(inv, invoices::today(ctx));
    let mut e = encode_record(invoices::FIELDS, "invoice", &record, None);
    let taxes = Element::list(
        "taxes",
        inv.taxes
            .iter()
            .map(|t| {
                Element::node(
                    "tax",
                    vec![
                        Element::text("name", t.name.clone()),
                        Element::typed("rate", ScalarType::Float, t.rate.normalize().to_string()),
                        Element::typed(
                            "amount",
                            ScalarType::Float,
                            t.amount.normalize().to_string(),
                        ),
                    ],
                )
            })
            .collect(),
    );
    if let crate::codec::Content::Children(children) = &mut e.content {
        let at = children
            .iter()
            .position(|c| c.name == "quote")
            .map_or(children.len(), |i| i + 1);
        children.insert(at, taxes);
    }
    e
}

fn parse_id(raw: &str, label: &str) -> Result<u64, ApiError> {
    raw.parse::<u64>()
        .ok()
        .filter(|id| *id > 0)
        .ok_or_else(|| ApiError::NotFound(format!("{label} {raw} does not exist")))
}

fn filter(query: &Query) -> Result<Filter, ApiError> {
    let mut errors = Vec::new();
    let mut f = Filter {
        client_id: query.id("client_id").unwrap_or_else(|e| {
            errors.extend(e.messages());
            None
        }),
        invoice_number: query.get("invoice_number").map(|s| s.trim().to_lowercase()),
        label: query.get("label").map(|s| s.trim().to_lowercase()),
        intro: query.get("intro").map(|s| s.trim().to_lowercase()),
        note: query.get("note").map(|s| s.trim().to_lowercase()),
        ..Filter::default()
    };
    for s in query.list("status") {
        match Shown::parse(s) {
            Some(st) => f.statuses.push(st),
            None => errors.push(format!(
                "status must list values of DRAFT, OPEN, OVERDUE, PAID, CANCELED, got \"{s}\""
            )),
        }
    }
    for t in query.list("payment_type") {
        match PAYMENT_TYPES.iter().find(|p| p.eq_ignore_ascii_case(t)) {
            Some(p) => f.payment_types.push((*p).to_owned()),
            None => errors.push(format!(
                "payment_type must list values of {}, got \"{t}\"",
                PAYMENT_TYPES.join(", ")
            )),
        }
    }
    for (name, slot) in [("from", &mut f.from), ("to", &mut f.to)] {
        match query.date(name) {
            Ok(d) => *slot = d,
            Err(e) => errors.extend(e.messages()),
        }
    }
    if let (Some(from), Some(to)) = (f.from, f.to)
        && from > to
    {
        errors.push(format!("from {from} is after to {to}"));
    }
    if errors.is_empty() {
        Ok(f)
    } else {
        Err(ApiError::BadRequest(errors))
    }
}

pub fn list(caps: &Caps, ctx: &Ctx, query: &Query) -> Result<Response, ApiError> {
    let f = filter(query)?;
    let today = invoices::today(ctx);
    if let Some(raw) = query.get("group_by") {
        let mut keys = Vec::new();
        for k in raw.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let key = GroupKey::parse(k).ok_or_else(|| {
                ApiError::bad(format!(
                    "group_by must list values of client, status, day, week, month, year, got \"{k}\""
                ))
            })?;
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
        let txn = caps.store.begin_read()?;
        let found = invoices::find(txn.as_ref(), ctx.account_id, &f, today)?;
        return Ok(Response::doc(
            200,
            groups_element(&invoices::group(&found, &keys, today)),
        ));
    }
    let (page, per_page) = query.paging()?;
    let order = query.order(invoices::FIELDS)?;
    let txn = caps.store.begin_read()?;
    let (found, total) = invoices::page(
        txn.as_ref(),
        ctx.account_id,
        &f,
        &order,
        page,
        per_page,
        today,
    )?;
    let children = found.iter().map(|inv| invoice_element(inv, ctx)).collect();
    let root = Element::list("invoices", children)
        .with_attr("page", page.to_string())
        .with_attr("per_page", per_page.to_string())
        .with_attr("total", total.to_string());
    let mut r = Response::doc(200, root);
    r.headers.push(("x-total-count".into(), total.to_string()));
    Ok(r)
}

fn groups_element(by_currency: &[(String, Vec<invoices::Group>)]) -> Element {
    let lists: Vec<Element> = by_currency
        .iter()
        .map(|(currency, groups)| {
            let children = groups
                .iter()
                .map(|g| {
                    let key_elements = |keys: &[(&'static str, Scalar)]| -> Vec<Element> {
                        keys.iter()
                            .map(|(name, v)| match v {
                                Scalar::Int(_) => {
                                    Element::typed(*name, ScalarType::Integer, v.to_wire())
                                }
                                Scalar::Date(_) => {
                                    Element::typed(*name, ScalarType::Date, v.to_wire())
                                }
                                _ => Element::text(*name, v.to_wire()),
                            })
                            .collect()
                    };
                    let mut children = vec![
                        Element::typed(
                            "total_gross",
                            ScalarType::Float,
                            g.total_gross.normalize().to_string(),
                        ),
                        Element::typed(
                            "total_net",
                            ScalarType::Float,
                            g.total_net.normalize().to_string(),
                        ),
                        Element::typed("count", ScalarType::Integer, g.count.to_string()),
                    ];
                    children.extend(key_elements(&g.keys));
                    children.push(Element::node("invoice-params", key_elements(&g.keys)));
                    Element::node("invoice-group", children)
                })
                .collect();
            Element::list("invoice-groups", children).with_attr("currency_code", currency.clone())
        })
        .collect();
    match <[Element; 1]>::try_from(lists) {
        Ok([one]) => one,
        // Several currencies: one group list each.
        Err(lists) if lists.is_empty() => Element::list("invoice-groups", Vec::new()),
        Err(lists) => Element::list("invoice-group-lists", lists),
    }
}

pub fn get(caps: &Caps, ctx: &Ctx, raw: &str) -> Result<Response, ApiError> {
    let id = parse_id(raw, "invoice")?;
    let txn = caps.store.begin_read()?;
    let inv = invoices::load(txn.as_ref(), ctx.account_id, id)?;
    Ok(Response::doc(200, invoice_element(&inv, ctx)))
}

pub fn create(caps: &Caps, ctx: &Ctx, req: &Request) -> Result<Response, ApiError> {
    let root = req.document()?;
    let changes = decode_changes(invoices::FIELDS, &root, "invoice")?;
    let mut items = Vec::new();
    if let Some(list) = root.child("invoice-items") {
        for el in list.children() {
            items.push(decode_changes(invoice_items::FIELDS, el, "invoice-item")?);
        }
    }
    let inv = in_write(caps, |txn| {
        Ok(invoices::create(ctx, txn, &changes, &items)?)
    })?;
    Ok(Response::doc(201, invoice_element(&inv, ctx)))
}

pub fn update(caps: &Caps, ctx: &Ctx, raw: &str, req: &Request) -> Result<Response, ApiError> {
    let id = parse_id(raw, "invoice")?;
    {
        let txn = caps.store.begin_read()?;
        invoices::load(txn.as_ref(), ctx.account_id, id)?;
    }
    let changes = decode_changes(invoices::FIELDS, &req.document()?, "invoice")?;
    let inv = in_write(caps, |txn| Ok(invoices::update(ctx, txn, id, &changes)?))?;
    Ok(Response::doc(200, invoice_element(&inv, ctx)))
}

pub fn delete(caps: &Caps, ctx: &Ctx, raw: &str) -> Result<Response, ApiError> {
    let id = parse_id(raw, "invoice")?;
    in_write(caps, |txn| Ok(invoices::delete(ctx, txn, id)?))?;
    Ok(Response::empty())
}

pub fn action(
    caps: &Caps,
    ctx: &Ctx,
    raw: &str,
    action: &str,
    req: &Request,
) -> Result<Response, ApiError> {
    let id = parse_id(raw, "invoice")?;
    let mut template_id = None;
    let body = req.optional_document()?;
    if let (Some(root), "complete") = (&body, action) {
        let changes = decode_changes(COMPLETE_FIELDS, root, "complete")?;
        if let Some((_, e)) = changes.invalid.first() {
            return Err(ApiError::bad(e.clone()));
        }
        template_id = match changes.get("template_id") {
            Some(Some(Scalar::Int(t))) if *t > 0 => Some(*t as u64),
            Some(Some(Scalar::Int(t))) => {
                return Err(ApiError::bad(format!("template_id {t} does not exist")));
            }
            _ => None,
        };
    }
    in_write(caps, |txn| {
        match action {
            "complete" => invoices::complete(ctx, txn, caps.pdf, id, template_id)?,
            "cancel" => invoices::cancel(ctx, txn, id)?,
            _ => invoices::uncancel(ctx, txn, id)?,
        };
        Ok(())
    })?;
    Ok(Response::empty())
}

static COMPLETE_FIELDS: &[Field] = &[Field::new("template_id", Kind::Integer)];

static SIGNATURE_FIELDS: &[Field] = &[Field::new("base64file", Kind::File).mandatory()];

/// `GET /api/invoices/{id}/pdf`: the `pdf` record, or the bytes with `format=pdf` or
/// `Accept: application/pdf`; `type=print` and `type=signed` pick the other files.
pub fn pdf(
    caps: &Caps,
    ctx: &Ctx,
    raw: &str,
    req: &Request,
    query: &Query,
) -> Result<Response, ApiError> {
    let id = parse_id(raw, "invoice")?;
    let variant = match query.get("type").map(str::to_ascii_lowercase).as_deref() {
        None | Some("original") => pdfs::Variant::Original,
        Some("print") => pdfs::Variant::Print,
        Some("signed") => pdfs::Variant::Signed,
        Some(other) => {
            return Err(ApiError::bad(format!(
                "type must be print or signed, got \"{other}\""
            )));
        }
    };
    let txn = caps.store.begin_read()?;
    invoices::load(txn.as_ref(), ctx.account_id, id)?;
    if variant == pdfs::Variant::Print
        && !settings::load_stored(txn.as_ref(), ctx.account_id)?.bool("print_version")
    {
        return Err(ApiError::bad(
            "type=print needs the print version switched on (settings print_version=1)",
        ));
    }
    let file = pdfs::load(
        txn.as_ref(),
        ctx.account_id,
        invoices::COLLECTION,
        id,
        variant,
    )?
    .ok_or_else(|| {
        ApiError::NotFound(match variant {
            pdfs::Variant::Signed => format!("invoice {id} has no signed PDF"),
            pdfs::Variant::Original | pdfs::Variant::Print => {
                format!("invoice {id} has no PDF: it is a DRAFT")
            }
        })
    })?;
    let wants_bytes = query
        .get("format")
        .is_some_and(|f| f.eq_ignore_ascii_case("pdf"))
        || req
            .header("accept")
            .is_some_and(|a| a.to_ascii_lowercase().contains("application/pdf"));
    if wants_bytes {
        let disposition = format!("inline; filename=\"{}\"", file.filename.replace('"', ""));
        return Ok(Response {
            status: 200,
            headers: vec![
                ("content-type".into(), "application/pdf".into()),
                ("content-disposition".into(), disposition),
            ],
            payload: Payload::Bytes(file.content),
        });
    }
    let record = Element::node(
        "pdf",
        vec![
            Element::typed("id", ScalarType::Integer, file.id.to_string()),
            Element::typed(
                "created",
                ScalarType::DateTime,
                format_datetime(file.created),
            ),
            Element::typed("invoice_id", ScalarType::Integer, id.to_string()),
            Element::text("filename", file.filename.clone()),
            Element::text("mimetype", "application/pdf"),
            Element::typed(
                "filesize",
                ScalarType::Integer,
                file.content.len().to_string(),
            ),
            Element::text("base64file", BASE64.encode(&file.content)),
        ],
    );
    Ok(Response::doc(200, record))
}

/// `PUT /api/invoices/{id}/upload-signature`: a signed PDF kept beside the original.
pub fn upload_signature(
    caps: &Caps,
    ctx: &Ctx,
    raw: &str,
    req: &Request,
) -> Result<Response, ApiError> {
    let id = parse_id(raw, "invoice")?;
    {
        let txn = caps.store.begin_read()?;
        invoices::load(txn.as_ref(), ctx.account_id, id)?;
    }
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
    in_write(caps, |txn| Ok(invoices::sign(ctx, txn, id, file)?))?;
    Ok(Response::empty())
}

/// The mandatory `invoice_id` of a child list; the invoice must exist in the account.
fn parent(caps: &Caps, ctx: &Ctx, query: &Query) -> Result<Invoice, ApiError> {
    let id = query
        .id("invoice_id")?
        .ok_or_else(|| ApiError::bad("invoice_id is mandatory"))?;
    let txn = caps.store.begin_read()?;
    Ok(invoices::load(txn.as_ref(), ctx.account_id, id)?)
}

fn page_of(query: &Query, plural: &str, children: Vec<Element>) -> Result<Response, ApiError> {
    let (page, per_page) = query.paging()?;
    let total = children.len();
    let start = (page as usize - 1).saturating_mul(per_page as usize);
    let children = children
        .into_iter()
        .skip(start)
        .take(per_page as usize)
        .collect();
    let root = Element::list(plural, children)
        .with_attr("page", page.to_string())
        .with_attr("per_page", per_page.to_string())
        .with_attr("total", total.to_string());
    let mut r = Response::doc(200, root);
    r.headers.push(("x-total-count".into(), total.to_string()));
    Ok(r)
}

// ---- items --------------------------------------------------------------------------

fn item_element(item: &invoice_items::Item, inv: &Invoice) -> Element {
    encode_record(
        invoice_items::FIELDS,
        "invoice-item",
        &invoice_items::to_record(item, inv),
        None,
    )
}

pub fn items_list(caps: &Caps, ctx: &Ctx, query: &Query) -> Result<Response, ApiError> {
    let inv = parent(caps, ctx, query)?;
    let txn = caps.store.begin_read()?;
    let items = invoice_items::load_all(txn.as_ref(), ctx.account_id, inv.id)?;
    page_of(
        query,
        "invoice-items",
        items.iter().map(|i| item_element(i, &inv)).collect(),
    )
}

pub fn item_get(caps: &Caps, ctx: &Ctx, raw: &str) -> Result<Response, ApiError> {
    let id = parse_id(raw, "invoice item")?;
    let txn = caps.store.begin_read()?;
    let item = invoice_items::load(txn.as_ref(), ctx.account_id, id)?;
    let inv = invoices::load(txn.as_ref(), ctx.account_id, item.invoice_id)?;
    Ok(Response::doc(200, item_element(&item, &inv)))
}

pub fn item_create(caps: &Caps, ctx: &Ctx, req: &Request) -> Result<Response, ApiError> {
    let changes = decode_changes(invoice_items::FIELDS, &req.document()?, "invoice-item")?;
    let (item, inv) = in_write(caps, |txn| Ok(invoice_items::create(ctx, txn, &changes)?))?;
    Ok(Response::doc(201, item_element(&item, &inv)))
}

pub fn item_update(caps: &Caps, ctx: &Ctx, raw: &str, req: &Request) -> Result<Response, ApiError> {
    let id = parse_id(raw, "invoice item")?;
    {
        let txn = caps.store.begin_read()?;
        invoice_items::load(txn.as_ref(), ctx.account_id, id)?;
    }
    let mut changes = decode_changes(invoice_items::FIELDS, &req.document()?, "invoice-item")?;
    // An item stays with its invoice.
    changes.values.retain(|(n, _)| *n != "invoice_id");
    let (item, inv) = in_write(caps, |txn| {
        Ok(invoice_items::update(ctx, txn, id, &changes)?)
    })?;
    Ok(Response::doc(200, item_element(&item, &inv)))
}

pub fn item_delete(caps: &Caps, ctx: &Ctx, raw: &str) -> Result<Response, ApiError> {
    let id = parse_id(raw, "invoice item")?;
    in_write(caps, |txn| Ok(invoice_items::delete(ctx, txn, id)?))?;
    Ok(Response::empty())
}

// ---- payments -----------------------------------------------------------------------

fn payment_element(p: &payments::Payment) -> Element {
    encode_record(
        payments::FIELDS,
        "invoice-payment",
        &payments::to_record(p),
        None,
    )
}

pub fn payments_list(caps: &Caps, ctx: &Ctx, query: &Query) -> Result<Response, ApiError> {
    let inv = parent(caps, ctx, query)?;
    let txn = caps.store.begin_read()?;
    let list = payments::list(txn.as_ref(), ctx.account_id, inv.id)?;
    page_of(
        query,
        "invoice-payments",
        list.iter().map(payment_element).collect(),
    )
}

pub fn payment_get(caps: &Caps, ctx: &Ctx, raw: &str) -> Result<Response, ApiError> {
    let id = parse_id(raw, "payment")?;
    let txn = caps.store.begin_read()?;
    Ok(Response::doc(
        200,
        payment_element(&payments::load(txn.as_ref(), ctx.account_id, id)?),
    ))
}

pub fn payment_create(caps: &Caps, ctx: &Ctx, req: &Request) -> Result<Response, ApiError> {
    let changes = decode_changes(payments::FIELDS, &req.document()?, "invoice-payment")?;
    let p = in_write(caps, |txn| Ok(payments::create(ctx, txn, &changes)?))?;
    Ok(Response::doc(201, payment_element(&p)))
}

pub fn payment_delete(caps: &Caps, ctx: &Ctx, raw: &str) -> Result<Response, ApiError> {
    let id = parse_id(raw, "payment")?;
    in_write(caps, |txn| Ok(payments::delete(ctx, txn, id)?))?;
    Ok(Response::empty())
}

// ---- comments -----------------------------------------------------------------------

fn comment_element(c: &comments::Comment) -> Element {
    let record = comments::to_record(c, "invoice_id");
    encode_record(&comments::INVOICE_FIELDS, "invoice-comment", &record, None)
}

pub fn comments_list(caps: &Caps, ctx: &Ctx, query: &Query) -> Result<Response, ApiError> {
    let inv = parent(caps, ctx, query)?;
    let txn = caps.store.begin_read()?;
    let list = comments::list(txn.as_ref(), ctx.account_id, invoices::COLLECTION, inv.id)?;
    page_of(
        query,
        "invoice-comments",
        list.iter().map(comment_element).collect(),
    )
}

pub fn comment_get(caps: &Caps, ctx: &Ctx, raw: &str) -> Result<Response, ApiError> {
    let id = parse_id(raw, "comment")?;
    let txn = caps.store.begin_read()?;
    let c = comments::load(txn.as_ref(), ctx.account_id, invoices::COLLECTION, id)?;
    Ok(Response::doc(200, comment_element(&c)))
}

pub fn comment_create(caps: &Caps, ctx: &Ctx, req: &Request) -> Result<Response, ApiError> {
    let changes: Changes = decode_changes(
        &comments::INVOICE_FIELDS,
        &req.document()?,
        "invoice-comment",
    )?;
    let mut errors = changes.errors();
    crate::domain::schema::check_mandatory(&comments::INVOICE_FIELDS, &changes, &mut errors);
    let invoice_id = match changes.get("invoice_id") {
        Some(Some(Scalar::Int(id))) => Some(*id),
        _ => None,
    };
    if !errors.is_empty() {
        return Err(ApiError::BadRequest(errors));
    }
    let invoice_id = invoice_id.unwrap_or_default();
    let c = in_write(caps, |txn| {
        match invoices::load(txn.as_read(), ctx.account_id, invoice_id.max(0) as u64) {
            Err(Error::NotFound(_)) => {
                return Err(ApiError::bad(format!(
                    "invoice_id {invoice_id} does not exist"
                )));
            }
            other => other?,
        };
        Ok(comments::create(
            ctx,
            txn,
            invoices::COLLECTION,
            invoice_id as u64,
            &changes,
        )?)
    })?;
    Ok(Response::doc(201, comment_element(&c)))
}

pub fn comment_delete(caps: &Caps, ctx: &Ctx, raw: &str) -> Result<Response, ApiError> {
    let id = parse_id(raw, "comment")?;
    in_write(caps, |txn| {
        Ok(comments::delete(
            txn,
            ctx.account_id,
            invoices::COLLECTION,
            id,
        )?)
    })?;
    Ok(Response::empty())
}

// ---- e-mail ----------------------------------------------------------------------------

/// Reads an `<email>` document: recipients (several `to`, `cc`, `bcc`, each possibly a
/// comma-separated list), texts and attachments.
pub fn decode_email(root: &Element) -> Result<EmailRequest, ApiError> {
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
        ..EmailRequest::default()
    };
    if let Some(recipients) = root.child("recipients") {
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
    if let Some(attachments) = root.child("attachments") {
        for a in attachments.children() {
            let field = |name: &str| a.child(name).and_then(Element::as_text).unwrap_or_default();
            match super::records::decode_base64(field("base64file")) {
                Some(content) if !content.is_empty() => req.attachments.push(Attachment {
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
    }
    if errors.is_empty() {
        Ok(req)
    } else {
        Err(ApiError::BadRequest(errors))
    }
}

/// `POST /api/invoices/{id}/email`.
pub fn email(caps: &Caps, ctx: &Ctx, raw: &str, req: &Request) -> Result<Response, ApiError> {
    let id = parse_id(raw, "invoice")?;
    {
        let txn = caps.store.begin_read()?;
        invoices::load(txn.as_ref(), ctx.account_id, id)?;
    }
    let email = decode_email(&req.document()?)?;
    in_write(caps, |txn| {
        Ok(emails::send_invoice(ctx, txn, caps.mail, id, email)?)
    })?;
    Ok(Response::empty())
}
