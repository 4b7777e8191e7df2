//! HTTP: the request and response values, authentication, content negotiation, routing
//! and the mapping of every failure to a status with an `<errors>` body.
//!
//! Owns the wire; never touches storage keys or WIT types directly.

mod error;
mod invoices;
mod query;
mod records;
mod router;
mod settings;

pub use error::ApiError;

use crate::caps::{Caps, Write};
use crate::codec::{Element, decode_xml, encode_xml};
use crate::domain::{Ctx, accounts};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Method {
    Get,
    Head,
    Post,
    Put,
    Delete,
    Other(String),
}

/// The body as read by the transport: the bytes, or the fact that there were too many.
#[derive(Debug)]
pub enum Body {
    Bytes(Vec<u8>),
    TooLarge,
}

#[derive(Debug)]
pub struct Request {
    pub method: Method,
    pub path: String,
    pub query: String,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: Body,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, v)| k.eq_ignore_ascii_case(name) && !v.trim().is_empty())
            .map(|(_, v)| v.trim())
    }

    /// The body as an XML document, refusing other content types.
    pub fn document(&self) -> Result<Element, ApiError> {
        let bytes = match &self.body {
            Body::TooLarge => return Err(ApiError::PayloadTooLarge),
            Body::Bytes(b) => b,
        };
        if let Some(ct) = self.header("content-type") {
            let mime = ct
                .split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase();
            if !matches!(mime.as_str(), "application/xml" | "text/xml") {
                return Err(ApiError::UnsupportedMediaType(format!(
                    "unsupported Content-Type {mime}; send application/xml"
                )));
            }
        }
        Ok(decode_xml(bytes)?)
    }
}

#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

const XML_TYPE: &str = "application/xml; charset=utf-8";

impl Response {
    pub fn xml(status: u16, root: &Element) -> Response {
        Response {
            status,
            headers: vec![("content-type".into(), XML_TYPE.into())],
            body: encode_xml(root),
        }
    }

    /// 200 with an empty body (DELETE and actions).
    pub fn empty() -> Response {
        Response {
            status: 200,
            headers: vec![("content-type".into(), XML_TYPE.into())],
            body: Vec::new(),
        }
    }

    pub fn error(e: &ApiError) -> Response {
        let mut r = Response::xml(e.status(), &e.to_element());
        if let ApiError::MethodNotAllowed(allowed) = e {
            r.headers.push(("allow".into(), allowed.join(", ")));
        }
        r
    }
}

/// Serves one request. Never panics on bad input; a panic is a bug and costs this request.
pub fn handle(caps: &Caps, req: &Request) -> Response {
    let mut response = match serve(caps, req) {
        Ok(r) => r,
        Err(e) => {
            if let ApiError::Internal(detail) = &e {
                eprintln!(
                    "faktura: internal error on {} {}: {detail}",
                    method_name(&req.method),
                    req.path
                );
            }
            Response::error(&e)
        }
    };
    if req.method == Method::Head {
        response.body.clear();
    }
    response
}

fn method_name(m: &Method) -> &str {
    match m {
        Method::Get => "GET",
        Method::Head => "HEAD",
        Method::Post => "POST",
        Method::Put => "PUT",
        Method::Delete => "DELETE",
        Method::Other(s) => s,
    }
}

fn serve(caps: &Caps, req: &Request) -> Result<Response, ApiError> {
    let rest = req
        .path
        .strip_prefix("/api")
        .filter(|r| r.is_empty() || r.starts_with('/'))
        .ok_or_else(|| ApiError::NotFound(format!("no resource at {}", req.path)))?;
    let query = query::Query::parse(&req.query)?;
    let principal = authenticate(caps, req, &query)?;
    let ctx = Ctx {
        account_id: principal.account_id,
        user_id: principal.user_id,
        is_admin: principal.is_admin,
        now: caps.clock.now_unix(),
    };
    let segments: Vec<&str> = rest.split('/').filter(|s| !s.is_empty()).collect();
    router::route(caps, &ctx, req, &query, &segments)
}

fn authenticate(
    caps: &Caps,
    req: &Request,
    query: &query::Query,
) -> Result<accounts::Principal, ApiError> {
    let key = req
        .header("x-serviceapikey")
        .or_else(|| query.get("api_key"))
        .ok_or(ApiError::Unauthorized)?;
    let txn = caps.store.begin_read()?;
    accounts::authenticate(txn.as_ref(), key)?.ok_or(ApiError::Unauthorized)
}

/// Runs `f` in a write transaction and commits only if it succeeds.
pub fn in_write<T>(
    caps: &Caps,
    f: impl FnOnce(&mut dyn Write) -> Result<T, ApiError>,
) -> Result<T, ApiError> {
    let mut txn = caps.store.begin_write()?;
    let out = f(txn.as_mut())?;
    txn.commit()?;
    Ok(out)
}
