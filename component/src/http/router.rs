//! Which handler serves a method and path under `/api`.

use super::error::ApiError;
use super::query::Query;
use super::records::{self, Wire};
use super::{Method, Request, Response, documents, settings};
use crate::caps::Caps;
use crate::domain::Ctx;
use crate::domain::documents::DocKind;
use crate::domain::{clients, country_taxes, properties, taxes, templates};

pub static TEMPLATES: Wire = Wire {
    plural: "templates",
    singular: "template",
    res: &templates::TEMPLATES,
};
static USER_PROPERTIES: Wire = Wire {
    plural: "user-properties",
    singular: "user-property",
    res: &properties::USER_PROPERTIES,
};
static INCOMING_PROPERTIES: Wire = Wire {
    plural: "incoming-properties",
    singular: "incoming-property",
    res: &properties::INCOMING_PROPERTIES,
};
static CLIENT_PROPERTIES: Wire = Wire {
    plural: "client-properties",
    singular: "client-property",
    res: &properties::CLIENT_PROPERTIES,
};
static COUNTRY_TAXES: Wire = Wire {
    plural: "country-taxes",
    singular: "country-tax",
    res: &country_taxes::COUNTRY_TAXES,
};
static CLIENTS: Wire = Wire {
    plural: "clients",
    singular: "client",
    res: &clients::CLIENTS,
};
static EMAIL_TEMPLATES: Wire = Wire {
    plural: "email-templates",
    singular: "email-template",
    res: &crate::domain::email_templates::EMAIL_TEMPLATES,
};
static TAXES: Wire = Wire {
    plural: "taxes",
    singular: "tax",
    res: &taxes::TAXES,
};

const COLLECTION: &[&str] = &["GET", "HEAD", "POST"];
const MEMBER: &[&str] = &["GET", "HEAD", "PUT", "DELETE"];
const READ_ONLY: &[&str] = &["GET", "HEAD"];
const SINGLETON: &[&str] = &["GET", "HEAD", "PUT"];
const ACTION: &[&str] = &["PUT"];
const POST_ONLY: &[&str] = &["POST"];
const NO_EDIT: &[&str] = &["GET", "HEAD", "DELETE"];

pub fn route(
    caps: &Caps,
    ctx: &Ctx,
    req: &Request,
    query: &Query,
    segments: &[&str],
) -> Result<Response, ApiError> {
    let wire = |name: &str| -> Option<&'static Wire> {
        Some(match name {
            "templates" => &TEMPLATES,
            "user-properties" => &USER_PROPERTIES,
            "incoming-properties" => &INCOMING_PROPERTIES,
            "client-properties" => &CLIENT_PROPERTIES,
            // The spec shows the underscore spelling for one operation; both work for all.
            "country-taxes" | "country_taxes" => &COUNTRY_TAXES,
            "clients" => &CLIENTS,
            "taxes" => &TAXES,
            "email-templates" => &EMAIL_TEMPLATES,
            _ => return None,
        })
    };
    if let Some((first, rest)) = segments.split_first() {
        if let Some(kind) = document_kind(first) {
            return document_route(caps, ctx, req, query, kind, rest);
        }
        if let Some((kind, part)) = child_kind(first) {
            return child_route(caps, ctx, req, query, kind, part, rest);
        }
    }
    match segments {
        // The singular path only filters: /api/template?type=INVOICE.
        ["template"] => match req.method {
            Method::Get | Method::Head => records::list(caps, ctx, &TEMPLATES, query),
            _ => Err(ApiError::MethodNotAllowed(READ_ONLY)),
        },
        ["settings"] => match req.method {
            Method::Get | Method::Head => settings::get(caps, ctx),
            Method::Put => settings::update(caps, ctx, req),
            _ => Err(ApiError::MethodNotAllowed(SINGLETON)),
        },
        ["templates", id, "thumb"] => match req.method {
            Method::Get | Method::Head => records::thumbnail(caps, ctx, id, query),
            _ => Err(ApiError::MethodNotAllowed(READ_ONLY)),
        },
        #[cfg(feature = "test-routes")]
        ["_test", "panic"] => panic!("test route: deliberate panic"),
        #[cfg(feature = "test-routes")]
        ["_test", "loop"] => loop {
            // Runs until the host's deadline stops it.
            std::hint::black_box(0u64);
        },
        #[cfg(feature = "test-routes")]
        ["_test", "alloc"] => {
            // Allocates until the instance's memory limit stops it.
            let mut hoard: Vec<Vec<u8>> = Vec::new();
            loop {
                hoard.push(vec![1u8; 16 << 20]);
                std::hint::black_box(&hoard);
            }
        }
        [name, rest @ ..] if rest.len() <= 1 => {
            let Some(w) = wire(name) else {
                return Err(not_found(req));
            };
            match (rest, &req.method) {
                ([], Method::Get | Method::Head) => records::list(caps, ctx, w, query),
                ([], Method::Post) => records::create(caps, ctx, w, req),
                ([], _) => Err(ApiError::MethodNotAllowed(COLLECTION)),
                ([id], Method::Get | Method::Head) => records::get(caps, ctx, w, id),
                ([id], Method::Put) => records::update(caps, ctx, w, id, req),
                ([id], Method::Delete) => records::delete(caps, ctx, w, id),
                (_, _) => Err(ApiError::MethodNotAllowed(MEMBER)),
            }
        }
        _ => Err(not_found(req)),
    }
}

fn not_found(req: &Request) -> ApiError {
    ApiError::NotFound(format!("no resource at {}", req.path))
}

fn document_kind(segment: &str) -> Option<DocKind> {
    match segment {
        "invoices" => Some(DocKind::Invoice),
        "credit-notes" => Some(DocKind::CreditNote),
        _ => None,
    }
}

/// The parts of a document that have their own collection.
#[derive(Clone, Copy)]
enum Part {
    Items,
    Payments,
    Comments,
    Tags,
}

fn child_kind(segment: &str) -> Option<(DocKind, Part)> {
    let (prefix, part) = segment.rsplit_once('-')?;
    let kind = match prefix {
        "invoice" => DocKind::Invoice,
        "credit-note" => DocKind::CreditNote,
        _ => return None,
    };
    let part = match part {
        "items" => Part::Items,
        "payments" => Part::Payments,
        "comments" => Part::Comments,
        "tags" => Part::Tags,
        _ => return None,
    };
    Some((kind, part))
}

/// `/api/invoices/...` and `/api/credit-notes/...`.
fn document_route(
    caps: &Caps,
    ctx: &Ctx,
    req: &Request,
    query: &Query,
    kind: DocKind,
    rest: &[&str],
) -> Result<Response, ApiError> {
    let m = &req.method;
    match (rest, m) {
        ([], Method::Get) => documents::list(caps, ctx, kind, query, false),
        ([], Method::Head) => documents::list(caps, ctx, kind, query, true),
        ([], Method::Post) => documents::create(caps, ctx, kind, req),
        ([], _) => Err(ApiError::MethodNotAllowed(COLLECTION)),
        ([id], Method::Get | Method::Head) => documents::get(caps, ctx, kind, id),
        ([id], Method::Put) => documents::update(caps, ctx, kind, id, req),
        ([id], Method::Delete) => documents::delete(caps, ctx, kind, id),
        ([_], _) => Err(ApiError::MethodNotAllowed(MEMBER)),
        ([id, action @ ("complete" | "cancel" | "uncancel")], Method::Put) => {
            documents::action(caps, ctx, kind, id, action, req)
        }
        ([id, "upload-signature"], Method::Put) => {
            documents::upload_signature(caps, ctx, kind, id, req)
        }
        ([_, "complete" | "cancel" | "uncancel" | "upload-signature"], _) => {
            Err(ApiError::MethodNotAllowed(ACTION))
        }
        ([id, "pdf"], Method::Get | Method::Head) => {
            documents::pdf(caps, ctx, kind, id, req, query)
        }
        ([_, "pdf"], _) => Err(ApiError::MethodNotAllowed(READ_ONLY)),
        ([id, "email"], Method::Post) => documents::email(caps, ctx, kind, id, req),
        ([id, "mail"], Method::Post) if kind == DocKind::CreditNote => {
            documents::post(caps, ctx, kind, id, req)
        }
        ([_, "email"], _) => Err(ApiError::MethodNotAllowed(POST_ONLY)),
        ([_, "mail"], _) if kind == DocKind::CreditNote => {
            Err(ApiError::MethodNotAllowed(POST_ONLY))
        }
        _ => Err(not_found(req)),
    }
}

/// `/api/{invoice,credit-note}-{items,payments,comments,tags}[/{id}]`.
fn child_route(
    caps: &Caps,
    ctx: &Ctx,
    req: &Request,
    query: &Query,
    kind: DocKind,
    part: Part,
    rest: &[&str],
) -> Result<Response, ApiError> {
    let m = &req.method;
    let get = matches!(m, Method::Get | Method::Head);
    match (part, rest) {
        (Part::Items, []) if get => documents::items_list(caps, ctx, kind, query),
        (Part::Items, []) if *m == Method::Post => documents::item_create(caps, ctx, kind, req),
        (Part::Items, [id]) if get => documents::item_get(caps, ctx, kind, id),
        (Part::Items, [id]) if *m == Method::Put => {
            documents::item_update(caps, ctx, kind, id, req)
        }
        (Part::Items, [id]) if *m == Method::Delete => documents::item_delete(caps, ctx, kind, id),
        (Part::Payments, []) if get => documents::payments_list(caps, ctx, kind, query),
        (Part::Payments, []) if *m == Method::Post => {
            documents::payment_create(caps, ctx, kind, req)
        }
        (Part::Payments, [id]) if get => documents::payment_get(caps, ctx, kind, id),
        (Part::Payments, [id]) if *m == Method::Delete => {
            documents::payment_delete(caps, ctx, kind, id)
        }
        (Part::Comments, []) if get => documents::comments_list(caps, ctx, kind, query),
        (Part::Comments, []) if *m == Method::Post => {
            documents::comment_create(caps, ctx, kind, req)
        }
        (Part::Comments, [id]) if get => documents::comment_get(caps, ctx, kind, id),
        (Part::Comments, [id]) if *m == Method::Delete => {
            documents::comment_delete(caps, ctx, kind, id)
        }
        (Part::Tags, []) if get => documents::tags_list(caps, ctx, kind, query),
        (Part::Tags, []) if *m == Method::Post => documents::tag_create(caps, ctx, kind, req),
        (Part::Tags, [id]) if get => documents::tag_get(caps, ctx, kind, id),
        (Part::Tags, [id]) if *m == Method::Delete => documents::tag_delete(caps, ctx, kind, id),
        (_, []) => Err(ApiError::MethodNotAllowed(COLLECTION)),
        (Part::Items, [_]) => Err(ApiError::MethodNotAllowed(MEMBER)),
        (Part::Payments | Part::Comments | Part::Tags, [_]) => {
            Err(ApiError::MethodNotAllowed(NO_EDIT))
        }
        _ => Err(not_found(req)),
    }
}
