//! Which handler serves a method and path under `/api`.

use super::error::ApiError;
use super::query::Query;
use super::records::{self, Wire};
use super::{Method, Request, Response, invoices, settings};
use crate::caps::Caps;
use crate::domain::Ctx;
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
            _ => return None,
        })
    };
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
        ["invoices"] => match req.method {
            Method::Get | Method::Head => invoices::list(caps, ctx, query),
            Method::Post => invoices::create(caps, ctx, req),
            _ => Err(ApiError::MethodNotAllowed(COLLECTION)),
        },
        ["invoices", id] => match req.method {
            Method::Get | Method::Head => invoices::get(caps, ctx, id),
            Method::Put => invoices::update(caps, ctx, id, req),
            Method::Delete => invoices::delete(caps, ctx, id),
            _ => Err(ApiError::MethodNotAllowed(MEMBER)),
        },
        [
            "invoices",
            id,
            action @ ("complete" | "cancel" | "uncancel"),
        ] => match req.method {
            Method::Put => invoices::action(caps, ctx, id, action, req),
            _ => Err(ApiError::MethodNotAllowed(ACTION)),
        },
        ["invoices", id, "pdf"] => match req.method {
            Method::Get | Method::Head => invoices::pdf(caps, ctx, id, req, query),
            _ => Err(ApiError::MethodNotAllowed(READ_ONLY)),
        },
        ["invoices", id, "email"] => match req.method {
            Method::Post => invoices::email(caps, ctx, id, req),
            _ => Err(ApiError::MethodNotAllowed(POST_ONLY)),
        },
        ["invoices", id, "upload-signature"] => match req.method {
            Method::Put => invoices::upload_signature(caps, ctx, id, req),
            _ => Err(ApiError::MethodNotAllowed(ACTION)),
        },
        ["invoice-items"] => match req.method {
            Method::Get | Method::Head => invoices::items_list(caps, ctx, query),
            Method::Post => invoices::item_create(caps, ctx, req),
            _ => Err(ApiError::MethodNotAllowed(COLLECTION)),
        },
        ["invoice-items", id] => match req.method {
            Method::Get | Method::Head => invoices::item_get(caps, ctx, id),
            Method::Put => invoices::item_update(caps, ctx, id, req),
            Method::Delete => invoices::item_delete(caps, ctx, id),
            _ => Err(ApiError::MethodNotAllowed(MEMBER)),
        },
        ["invoice-payments"] => match req.method {
            Method::Get | Method::Head => invoices::payments_list(caps, ctx, query),
            Method::Post => invoices::payment_create(caps, ctx, req),
            _ => Err(ApiError::MethodNotAllowed(COLLECTION)),
        },
        ["invoice-payments", id] => match req.method {
            Method::Get | Method::Head => invoices::payment_get(caps, ctx, id),
            Method::Delete => invoices::payment_delete(caps, ctx, id),
            _ => Err(ApiError::MethodNotAllowed(NO_EDIT)),
        },
        ["invoice-comments"] => match req.method {
            Method::Get | Method::Head => invoices::comments_list(caps, ctx, query),
            Method::Post => invoices::comment_create(caps, ctx, req),
            _ => Err(ApiError::MethodNotAllowed(COLLECTION)),
        },
        ["invoice-comments", id] => match req.method {
            Method::Get | Method::Head => invoices::comment_get(caps, ctx, id),
            Method::Delete => invoices::comment_delete(caps, ctx, id),
            _ => Err(ApiError::MethodNotAllowed(NO_EDIT)),
        },
        #[cfg(feature = "test-routes")]
        ["_test", "panic"] => panic!("test route: deliberate panic"),
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
