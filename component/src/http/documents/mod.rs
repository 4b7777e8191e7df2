//! The wire of documents, one implementation for every kind: `/api/invoices` and
//! `/api/credit-notes` (lists, groups, one document, create, update, delete, lifecycle
//! actions). Their parts are in `parts`, PDFs and signatures in `files`, e-mail and post
//! in `mail`; `write` writes documents in the negotiated format.

mod files;
mod mail;
pub(super) mod parts;
mod write;

pub(super) use files::{einvoice, pdf, upload_signature};
pub(super) use mail::{email, post};
pub(super) use parts::{Comments, Items, Payments, Tags};
pub(super) use write::{Documents, Groups};

use super::error::ApiError;
use super::query::Query;
use super::records::decode_changes;
use super::{Payload, Response, in_write};
use crate::caps::Caps;

use crate::domain::date::Date;
use crate::domain::documents::{
    Action, DocKind, Document, Filter, Shown, commands, fields, query, storage, tallies,
};
use crate::domain::schema::{Field, Kind, Scalar};
use crate::domain::settings::PAYMENT_TYPES;
use crate::domain::{Ctx, grouping};
use crate::http::Call;
use write::ListHead;

/// Wire names of one kind.
pub(super) struct Names {
    pub singular: &'static str,
    pub plural: &'static str,
    pub item: &'static str,
    pub items: &'static str,
    pub payment: &'static str,
    pub payments: &'static str,
    pub comment: &'static str,
    pub comments: &'static str,
    pub tag: &'static str,
    pub tags: &'static str,
    pub group: &'static str,
    pub groups: &'static str,
    pub group_lists: &'static str,
    pub params: &'static str,
}

pub(super) fn names(kind: DocKind) -> &'static Names {
    macro_rules! names {
        ($singular:literal, $plural:literal) => {
            &Names {
                singular: $singular,
                plural: $plural,
                item: concat!($singular, "-item"),
                items: concat!($singular, "-items"),
                payment: concat!($singular, "-payment"),
                payments: concat!($singular, "-payments"),
                comment: concat!($singular, "-comment"),
                comments: concat!($singular, "-comments"),
                tag: concat!($singular, "-tag"),
                tags: concat!($singular, "-tags"),
                group: concat!($singular, "-group"),
                groups: concat!($singular, "-groups"),
                group_lists: concat!($singular, "-group-lists"),
                params: concat!($singular, "-params"),
            }
        };
    }
    match kind {
        DocKind::Invoice => names!("invoice", "invoices"),
        DocKind::CreditNote => names!("credit-note", "credit-notes"),
        DocKind::Offer => names!("offer", "offers"),
        DocKind::Confirmation => names!("confirmation", "confirmations"),
        DocKind::DeliveryNote => names!("delivery-note", "delivery-notes"),
        DocKind::Recurring => names!("recurring", "recurrings"),
        DocKind::Reminder => names!("reminder", "reminders"),
    }
}

/// A response of one document.
fn document_response(status: u16, doc: Document, ctx: &Ctx) -> Response {
    Response {
        status,
        headers: Vec::new(),
        payload: Payload::Documents(Documents {
            docs: vec![doc],
            list: None,
            today: commands::today(ctx),
        }),
    }
}

fn parse_id(raw: &str, label: &str) -> Result<u64, ApiError> {
    raw.parse::<u64>()
        .ok()
        .filter(|id| *id > 0)
        .ok_or_else(|| ApiError::NotFound(format!("{label} {raw} does not exist")))
}

/// The id in a path, of a document that must exist in the caller's account (an unknown id
/// is a 404 even when the body is also wrong).
fn existing(caps: &Caps, ctx: &Ctx, kind: DocKind, raw: &str) -> Result<u64, ApiError> {
    let id = parse_id(raw, kind.label())?;
    let txn = caps.store.begin_read()?;
    storage::load(txn.as_ref(), ctx.account_id, kind, id)?;
    Ok(id)
}

/// Whether a kind's lists take the parameter `name` (others are ignored, as unknown ones).
fn takes(kind: DocKind, name: &str) -> bool {
    list_params(kind).iter().any(|p| p.name == name)
}

/// The filters of a kind's list, every wrong parameter reported at once; parameters the
/// kind does not take are ignored, as unknown ones.
fn filter(kind: DocKind, query: &Query) -> Result<Filter, ApiError> {
    let mut errors = Vec::new();
    let mut id = |name: &str| {
        query.id(name).unwrap_or_else(|e| {
            errors.extend(e.messages());
            None
        })
    };
    let client_id = id("client_id");
    let contact_id = id("contact_id");
    let article_id = id("article_id").map(|a| a as i64);
    let mut link = |name: &str| {
        takes(kind, name)
            .then(|| id(name).map(|v| v as i64))
            .flatten()
    };
    let (offer_id, confirmation_id, invoice_id) = (
        link("offer_id"),
        link("confirmation_id"),
        link("invoice_id"),
    );
    let cycles = cycles(kind, query, &mut errors);
    let statuses = statuses(kind, query, &mut errors);
    let payment_types = payment_types(kind, query, &mut errors);
    let (from, to) = dates(query, &mut errors);
    let text = |name: &str| query.get(name).map(|s| s.trim().to_lowercase());
    let (tags, tags_any) = query.tags();
    let f = Filter {
        kind,
        client_id,
        contact_id,
        article_id,
        number: number(kind, query),
        tags,
        tags_any,
        statuses,
        payment_types,
        from,
        to,
        label: text("label"),
        intro: text("intro"),
        note: text("note"),
        offer_id,
        confirmation_id,
        invoice_id,
        name: takes(kind, "name").then(|| text("name")).flatten(),
        cycles,
        subject: takes(kind, "subject").then(|| text("subject")).flatten(),
    };
    ApiError::checked(f, errors)
}

/// The number filter: the part of the number asked for, lowercase, when the kind has
/// numbers.
fn number(kind: DocKind, query: &Query) -> Option<String> {
    let text = |name: &str| query.get(name).map(|s| s.trim().to_lowercase());
    match kind {
        // An example of the contract spells it credit-note_number.
        DocKind::CreditNote => text("credit_note_number").or_else(|| text("credit-note_number")),
        DocKind::Invoice | DocKind::Offer | DocKind::Confirmation | DocKind::DeliveryNote => {
            text(kind.number_field())
        }
        DocKind::Recurring | DocKind::Reminder => None,
    }
}

/// The `cycle` filter of recurring invoices: cycles by their names, uppercase.
fn cycles(kind: DocKind, query: &Query, errors: &mut Vec<String>) -> Vec<String> {
    if !takes(kind, "cycle") {
        return Vec::new();
    }
    let what = format!(
        "values of {}",
        crate::domain::schedule::Cycle::NAMES.join(", ")
    );
    query.picked("cycle", &what, errors, |c| {
        crate::domain::schedule::Cycle::parse(c).map(|_| c.to_ascii_uppercase())
    })
}

/// The `status` filter: statuses the kind shows.
fn statuses(kind: DocKind, query: &Query, errors: &mut Vec<String>) -> Vec<Shown> {
    let statuses = Shown::of(kind);
    let what = format!(
        "values of {}",
        statuses
            .iter()
            .map(|st| st.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    query.picked("status", &what, errors, |s| {
        Shown::parse(s).filter(|st| statuses.contains(st))
    })
}

/// The `payment_type` filter, of the kinds that take it: the payment types by their
/// names, in any case.
fn payment_types(kind: DocKind, query: &Query, errors: &mut Vec<String>) -> Vec<String> {
    if !takes(kind, "payment_type") {
        return Vec::new();
    }
    let what = format!("values of {}", PAYMENT_TYPES.join(", "));
    query.picked("payment_type", &what, errors, |t| {
        PAYMENT_TYPES
            .iter()
            .find(|p| p.eq_ignore_ascii_case(t))
            .map(|p| (*p).to_owned())
    })
}

/// The dates `from` and `to`; `from` must not be after `to`.
fn dates(query: &Query, errors: &mut Vec<String>) -> (Option<Date>, Option<Date>) {
    let mut date = |name: &str| {
        query.date(name).unwrap_or_else(|e| {
            errors.extend(e.messages());
            None
        })
    };
    let (from, to) = (date("from"), date("to"));
    if let (Some(from), Some(to)) = (from, to)
        && from > to
    {
        errors.push(format!("from {from} is after to {to}"));
    }
    (from, to)
}

/// A list, a page of it, or its groups; `count_only` (HEAD) answers just the count header
/// without loading a page. Only reads.
pub(super) fn list(c: &Call<'_>, kind: DocKind, count_only: bool) -> Result<Response, ApiError> {
    let (caps, ctx, query) = (c.caps, c.ctx, c.query);
    let f = filter(kind, query)?;
    let today = commands::today(ctx);
    let txn = caps.store.begin_read()?;
    let tallies = tallies::check(txn.as_ref(), ctx.account_id, kind)?;
    if let Some(raw) = query.get("group_by").filter(|_| takes(kind, "group_by")) {
        let keys = grouping::GroupKey::parse_list(raw, grouping::CLIENT).map_err(ApiError::bad)?;
        let groups = grouping::groups(
            txn.as_ref(),
            tallies.as_ref(),
            ctx.account_id,
            &f,
            &keys,
            today,
        )?;
        return Ok(Response {
            status: 200,
            headers: Vec::new(),
            payload: Payload::Groups(Groups {
                kind,
                by_currency: groups,
            }),
        });
    }
    let (page, per_page) = query.paging()?;
    let order = query.order(fields(kind))?;
    if count_only {
        let total = query::count(txn.as_ref(), tallies.as_ref(), ctx.account_id, &f, today)?;
        let mut r = Response::doc(
            200,
            crate::codec::Element::list(names(kind).plural, Vec::new()),
        );
        r.headers.push(("x-total-count".into(), total.to_string()));
        return Ok(r);
    }
    let (docs, total) = query::page(
        txn.as_ref(),
        tallies.as_ref(),
        ctx.account_id,
        &f,
        &order,
        page,
        per_page,
        today,
    )?;
    Ok(Response {
        status: 200,
        headers: vec![("x-total-count".into(), total.to_string())],
        payload: Payload::Documents(Documents {
            docs,
            list: Some(ListHead {
                plural: names(kind).plural,
                page,
                per_page,
                total,
            }),
            today,
        }),
    })
}

pub(super) fn get(c: &Call<'_>, kind: DocKind) -> Result<Response, ApiError> {
    let (caps, ctx, raw) = (c.caps, c.ctx, c.id);
    let id = parse_id(raw, kind.label())?;
    let txn = caps.store.begin_read()?;
    let doc = storage::load(txn.as_ref(), ctx.account_id, kind, id)?;
    Ok(document_response(200, doc, ctx))
}

pub(super) fn create(c: &Call<'_>, kind: DocKind) -> Result<Response, ApiError> {
    let (caps, ctx, req) = (c.caps, c.ctx, c.req);
    let n = names(kind);
    let root = req.document()?;
    let changes = decode_changes(fields(kind), &root, n.singular)?;
    let mut nested = Vec::new();
    if let Some(list) = root.child(n.items) {
        for el in list.children() {
            nested.push(decode_changes(
                crate::domain::documents::items::fields(kind),
                el,
                n.item,
            )?);
        }
    }
    let doc = in_write(caps, |txn| {
        Ok(match kind {
            // A reminder is made from its invoice and level.
            DocKind::Reminder => crate::domain::dunning::create(ctx, txn, &changes, &nested)?,
            _ => commands::create(ctx, txn, kind, &changes, &nested)?,
        })
    })?;
    Ok(document_response(201, doc, ctx))
}

pub(super) fn update(c: &Call<'_>, kind: DocKind) -> Result<Response, ApiError> {
    let (caps, ctx, raw, req) = (c.caps, c.ctx, c.id, c.req);
    let id = existing(caps, ctx, kind, raw)?;
    let mut changes = decode_changes(fields(kind), &req.document()?, names(kind).singular)?;
    // The invoice a credit note was made from is fixed at creation.
    changes.values.retain(|(n, _)| *n != "invoice_id");
    let doc = in_write(caps, |txn| {
        Ok(commands::update(ctx, txn, kind, id, &changes)?)
    })?;
    Ok(document_response(200, doc, ctx))
}

pub(super) fn delete(c: &Call<'_>, kind: DocKind) -> Result<Response, ApiError> {
    let (caps, ctx, raw) = (c.caps, c.ctx, c.id);
    let id = parse_id(raw, kind.label())?;
    in_write(caps, |txn| Ok(commands::delete(ctx, txn, kind, id)?))?;
    Ok(Response::empty())
}

static COMPLETE_FIELDS: &[Field] = &[Field::new("template_id", Kind::Integer).doc(
    "Template to complete with; it wins over the document's own template_id, for every kind. \
     Default: the document's template_id, else the default template of the type.",
)];

/// `PUT .../{id}/complete|cancel|uncancel`; `complete` takes an optional
/// `<complete><template_id>`.
pub(super) fn action(c: &Call<'_>, kind: DocKind, action: Action) -> Result<Response, ApiError> {
    let (caps, ctx, raw, req) = (c.caps, c.ctx, c.id, c.req);
    // An unknown id is a 404 even when the body is also wrong.
    let id = existing(caps, ctx, kind, raw)?;
    let mut template_id = None;
    let body = req.optional_document()?;
    if let (Some(root), Action::Complete) = (&body, action) {
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
        commands::act(
            ctx,
            txn,
            caps.pdf,
            caps.random,
            kind,
            id,
            action,
            template_id,
        )?;
        Ok(())
    })?;
    Ok(Response::empty())
}

/// `PUT .../{id}/renew-link`: the document with a new link to the customer portal; the
/// old one opens nothing from now on.
pub(super) fn renew_link(c: &Call<'_>, kind: DocKind) -> Result<Response, ApiError> {
    let (caps, ctx, raw) = (c.caps, c.ctx, c.id);
    let id = existing(caps, ctx, kind, raw)?;
    let doc = in_write(caps, |txn| {
        Ok(commands::renew_link(ctx, txn, caps.random, kind, id)?)
    })?;
    Ok(document_response(200, doc, ctx))
}

/// `GET /{kind}/preset?offer_id=N` (or `confirmation_id=N`): a new document's body made
/// from an offer or confirmation, with its items, ready to POST; nothing is stored.
pub(super) fn preset(c: &Call<'_>, kind: DocKind) -> Result<Response, ApiError> {
    let (caps, ctx, query) = (c.caps, c.ctx, c.query);
    let mut sources = Vec::new();
    for p in preset_params(kind) {
        if let Some(id) = query
            .id(p.name)
            .map_err(|e| ApiError::BadRequest(e.messages()))?
        {
            let from = DocKind::of_parent_field(p.name).expect("preset params name document kinds");
            sources.push((from, id));
        }
    }
    let [(from, id)] = sources[..] else {
        let names: Vec<&str> = preset_params(kind).iter().map(|p| p.name).collect();
        return Err(ApiError::bad(format!(
            "a {} preset needs exactly one of {}",
            kind.label(),
            names.join(", ")
        )));
    };
    let txn = caps.store.begin_read()?;
    let (record, items) = commands::preset(ctx, txn.as_ref(), kind, from, id)?;
    let n = names(kind);
    // Only the fields the preset sets: an empty element would clear a default.
    let held = |fields: &'static [Field], name: &str, r: &crate::domain::schema::Record| {
        let all = super::records::encode_record(fields, name, r, None);
        let tallies: Vec<crate::codec::Element> = all
            .children()
            .iter()
            .filter(|e| r.get(&e.name).is_some())
            .cloned()
            .collect();
        crate::codec::Element::node(name, tallies)
    };
    let root = held(fields(kind), n.singular, &record);
    let item_fields = crate::domain::documents::items::fields(kind);
    let items = items
        .iter()
        .map(|item| held(item_fields, n.item, item))
        .collect();
    let mut children = root.children().to_vec();
    children.push(crate::codec::Element::list(n.items, items));
    Ok(Response::doc(
        200,
        crate::codec::Element::node(n.singular, children),
    ))
}

/// The query of `preset`: what a kind can be made from.
pub(crate) const fn preset_params(kind: DocKind) -> &'static [Param] {
    const INVOICE_FROM: &[Param] = &[
        Param::new("offer_id", Shape::Id, "The offer to make the invoice from."),
        Param::new(
            "confirmation_id",
            Shape::Id,
            "The order confirmation to make the invoice from.",
        ),
    ];
    const CONFIRMATION_FROM: &[Param] = &[Param::new(
        "offer_id",
        Shape::Id,
        "The offer to make the confirmation from.",
    )];
    match kind {
        DocKind::Invoice => INVOICE_FROM,
        DocKind::Confirmation => CONFIRMATION_FROM,
        DocKind::CreditNote
        | DocKind::Offer
        | DocKind::DeliveryNote
        | DocKind::Recurring
        | DocKind::Reminder => &[],
    }
}

/// `PUT /recurrings/{id}/stop`: the series makes no further invoice until a next creation
/// date is set again.
pub(super) fn stop(c: &Call<'_>, kind: DocKind) -> Result<Response, ApiError> {
    let (caps, ctx, raw) = (c.caps, c.ctx, c.id);
    let id = existing(caps, ctx, kind, raw)?;
    let stop = crate::domain::schema::Changes {
        values: vec![("next_creation_date", None)],
        ..Default::default()
    };
    let doc = in_write(caps, |txn| Ok(commands::update(ctx, txn, kind, id, &stop)?))?;
    Ok(document_response(200, doc, ctx))
}

use crate::http::described::{Param, Schema, Shape};

/// The record shape of a kind for the API description.
pub(crate) fn schema(kind: DocKind) -> Schema {
    let n = names(kind);
    Schema {
        singular: n.singular,
        plural: n.plural,
        fields: fields(kind),
        filters: Vec::new(),
        owner: None,
    }
}

/// The body of `complete`, for the API description.
pub(crate) fn complete_schema() -> Schema {
    Schema {
        singular: "complete",
        plural: "completes",
        fields: COMPLETE_FIELDS,
        filters: Vec::new(),
        owner: None,
    }
}

pub(crate) use files::{pdf_schema, signature_schema};
pub(crate) use mail::{email_schema, letter_schema};

/// The list parameters `filter` and `list` read, for the API description.
pub(crate) const fn list_params(kind: DocKind) -> &'static [Param] {
    match kind {
        DocKind::Invoice => INVOICE_PARAMS,
        DocKind::CreditNote => CREDIT_NOTE_PARAMS,
        DocKind::Offer => OFFER_PARAMS,
        DocKind::Confirmation => CONFIRMATION_PARAMS,
        DocKind::DeliveryNote => DELIVERY_NOTE_PARAMS,
        DocKind::Recurring => RECURRING_PARAMS,
        DocKind::Reminder => REMINDER_PARAMS,
    }
}

const PAYMENT_TYPE: Param = Param::new(
    "payment_type",
    Shape::AnyOf(PAYMENT_TYPES),
    "Only documents with a payment of these types.",
);
const OFFER_ID: Param = Param::new(
    "offer_id",
    Shape::Id,
    "Only documents made from this offer.",
);
const CONFIRMATION_ID: Param = Param::new(
    "confirmation_id",
    Shape::Id,
    "Only documents made from this order confirmation.",
);
const INVOICE_ID: Param = Param::new("invoice_id", Shape::Id, "Only documents of this invoice.");
const GROUP_BY: Param = Param::new(
    "group_by",
    Shape::AnyOf(&["client", "status", "day", "week", "month", "year"]),
    "Instead of the list, its sums grouped by these keys, per currency.",
);

/// The list parameters of a kind: those of every kind, with the kind's number field and
/// statuses, and its own (`extra`) before the tags.
macro_rules! params {
    ($number:literal, $statuses:expr $(, $extra:expr)* $(,)?) => {
        &[
            Param::new("client_id", Shape::Id, "Only documents of this client."),
            Param::new("contact_id", Shape::Id, "Only documents of this contact."),
            Param::new(
                "article_id",
                Shape::Id,
                "Only documents with an item of this article.",
            ),
            Param::new(
                $number,
                Shape::Text,
                "Only documents whose formatted number contains this (case-insensitive).",
            ),
            Param::new(
                "status",
                Shape::AnyOf($statuses),
                "Only documents of these statuses, as shown today.",
            ),
            Param::new(
                "from",
                Shape::Date,
                "Only documents dated on or after this day.",
            ),
            Param::new(
                "to",
                Shape::Date,
                "Only documents dated on or before this day.",
            ),
            Param::new(
                "label",
                Shape::Text,
                "Only documents whose label contains this.",
            ),
            Param::new(
                "intro",
                Shape::Text,
                "Only documents whose intro contains this.",
            ),
            Param::new(
                "note",
                Shape::Text,
                "Only documents whose note contains this.",
            ),
            $($extra,)*
            Param::new(
                "tags",
                Shape::Text,
                "Only documents carrying all of these tags (comma-separated, in any case).",
            ),
            Param::new(
                "tags_any",
                Shape::Text,
                "Only documents carrying any of these tags (comma-separated, in any case).",
            ),
        ]
    };
}
const BILLING_STATUSES: &[&str] = &["DRAFT", "OPEN", "OVERDUE", "PAID", "CANCELED"];
const INVOICE_PARAMS: &[Param] = params!(
    "invoice_number",
    BILLING_STATUSES,
    PAYMENT_TYPE,
    OFFER_ID,
    CONFIRMATION_ID,
    GROUP_BY
);
const CREDIT_NOTE_PARAMS: &[Param] = params!(
    "credit_note_number",
    BILLING_STATUSES,
    PAYMENT_TYPE,
    GROUP_BY
);
const OFFER_PARAMS: &[Param] = params!(
    "offer_number",
    &["DRAFT", "OPEN", "WON", "LOST", "CANCELED", "CLEARED"],
    GROUP_BY
);
const CONFIRMATION_PARAMS: &[Param] = params!(
    "confirmation_number",
    &["DRAFT", "COMPLETED", "CANCELED", "CLEARED"],
    OFFER_ID,
    GROUP_BY
);
const DELIVERY_NOTE_PARAMS: &[Param] = params!(
    "delivery_note_number",
    &["DRAFT", "CREATED"],
    OFFER_ID,
    CONFIRMATION_ID,
    INVOICE_ID
);

/// A recurring's list: its own filters (`name`, `cycle`) beside those it shares.
const RECURRING_PARAMS: &[Param] = &[
    Param::new(
        "client_id",
        Shape::Id,
        "Only recurring invoices of this client.",
    ),
    Param::new(
        "name",
        Shape::Text,
        "Only recurring invoices whose name contains this.",
    ),
    Param::new(
        "cycle",
        Shape::AnyOf(crate::domain::schedule::Cycle::NAMES),
        "Only recurring invoices of these cycles.",
    ),
    Param::new(
        "label",
        Shape::Text,
        "Only recurring invoices whose label contains this.",
    ),
    Param::new(
        "intro",
        Shape::Text,
        "Only recurring invoices whose intro contains this.",
    ),
    Param::new(
        "note",
        Shape::Text,
        "Only recurring invoices whose note contains this.",
    ),
    Param::new(
        "tags",
        Shape::Text,
        "Only recurring invoices carrying all of these tags (comma-separated, in any case).",
    ),
    Param::new(
        "tags_any",
        Shape::Text,
        "Only recurring invoices carrying any of these tags (comma-separated, in any case).",
    ),
];

/// A reminder's list: by client, invoice, status, dates and texts.
const REMINDER_PARAMS: &[Param] = &[
    Param::new("client_id", Shape::Id, "Only reminders of this client."),
    Param::new("invoice_id", Shape::Id, "Only reminders of this invoice."),
    Param::new(
        "status",
        Shape::AnyOf(BILLING_STATUSES),
        "Only reminders of these statuses, as shown today.",
    ),
    Param::new(
        "from",
        Shape::Date,
        "Only reminders dated on or after this day.",
    ),
    Param::new(
        "to",
        Shape::Date,
        "Only reminders dated on or before this day.",
    ),
    Param::new(
        "label",
        Shape::Text,
        "Only reminders whose label contains this.",
    ),
    Param::new(
        "subject",
        Shape::Text,
        "Only reminders whose subject contains this.",
    ),
    Param::new(
        "intro",
        Shape::Text,
        "Only reminders whose intro contains this.",
    ),
    Param::new(
        "note",
        Shape::Text,
        "Only reminders whose note contains this.",
    ),
    Param::new(
        "tags",
        Shape::Text,
        "Only reminders carrying all of these tags (comma-separated, in any case).",
    ),
    Param::new(
        "tags_any",
        Shape::Text,
        "Only reminders carrying any of these tags (comma-separated, in any case).",
    ),
];

/// The query of `pdf`, for the API description.
pub(crate) const PDF_PARAMS: &[Param] = &[
    Param::new(
        "type",
        Shape::OneOf(&["original", "print", "signed"]),
        "Which PDF: the one made at completion (default), the print version without \
         background (settings.print_version), or the signed one uploaded.",
    ),
    Param::new(
        "format",
        Shape::OneOf(&["xml", "json", "pdf"]),
        "`pdf` answers the file's bytes; `xml` (default) and `json` a pdf record with the \
         file in base64.",
    ),
];

/// The query of `einvoice`, for the API description.
pub(crate) const EINVOICE_PARAMS: &[Param] = &[Param::new(
    "profile",
    Shape::OneOf(&["xrechnung-cii", "xrechnung-ubl", "factur-x"]),
    "The profile. Default: the client's einvoice_profile, else xrechnung-cii.",
)];
