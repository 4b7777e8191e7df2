//! The customer portal on the wire: `/portal/{token}` (a document's page, or a client's
//! session), its downloads (`/pdf`, `/e-invoice`), the forms posted back to the page, and
//! `/portal/style.css`. Served outside `/api` and without an API key: the token is the
//! only credential, so a link sees one document (or one client's documents) and nothing
//! else of its account.
//!
//! Owns what the portal answers over HTTP: HTML pages (`page`), their language (`texts`),
//! the headers every answer carries (`SECURITY_HEADERS`), the limit of requests per link,
//! form tokens checked before anything is changed, and post-redirect-get. What a link
//! opens and may do is `domain::portal`'s.

mod page;
mod texts;

use super::{ApiError, Body, Method, Payload, Request, Response, in_write};
use crate::caps::{Caps, Prefetched, Read, Scoped};
use crate::domain::links::{self, Link, Target};
use crate::domain::portal::{self, Act, Closed, Opened};
use crate::domain::{Ctx, Error, clock, pdfs, records};
use crate::domain::{clients::CLIENTS, einvoice, filenames};
use crate::limits;
use page::Done;
use texts::Lang;

/// The stylesheet of every page.
const STYLE: &str = include_str!("style.css");

/// Headers of every portal answer: no script, style only from the service itself, forms
/// posting only to it, never framed, no sniffing, no referrer leaving with the token.
const SECURITY_HEADERS: [(&str, &str); 4] = [
    (
        "content-security-policy",
        "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; \
         frame-ancestors 'none'; base-uri 'none'",
    ),
    ("x-content-type-options", "nosniff"),
    ("referrer-policy", "no-referrer"),
    ("x-frame-options", "DENY"),
];

const HTML: &str = "text/html; charset=utf-8";

/// The file name of a document's GiroCode beside its page.
const GIROCODE: &str = "girocode.svg";

/// Whether `path` is the portal's: `/portal` and below.
pub(super) fn owns(path: &str) -> bool {
    path.strip_prefix("/portal")
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// Answers a request under `/portal`. Every answer is a page (or a file) with the
/// security headers; nothing here answers with the API's `<errors>`.
pub(super) fn serve(caps: &Caps, req: &Request) -> Response {
    let rest = req.path.strip_prefix("/portal").unwrap_or("");
    let segments: Vec<&str> = rest.split('/').filter(|s| !s.is_empty()).collect();
    let mut answer = match segments.as_slice() {
        ["style.css"] => match req.method {
            Method::Get | Method::Head => Response {
                status: 200,
                headers: vec![
                    ("content-type".into(), "text/css; charset=utf-8".into()),
                    ("cache-control".into(), "public, max-age=3600".into()),
                ],
                payload: Payload::Bytes(STYLE.as_bytes().to_vec()),
            },
            _ => not_allowed(&["GET", "HEAD"]),
        },
        [token] => linked(caps, req, token, None),
        [token, file @ ("pdf" | "e-invoice" | GIROCODE)] => linked(caps, req, token, Some(file)),
        _ => not_found(),
    };
    for (name, value) in SECURITY_HEADERS {
        answer.headers.push((name.into(), value.into()));
    }
    if !answer.headers.iter().any(|(n, _)| n == "cache-control") {
        // Pages hold the link's documents and form tokens: kept by no cache.
        answer
            .headers
            .push(("cache-control".into(), "no-store".into()));
    }
    answer
}

fn html(status: u16, body: String) -> Response {
    Response {
        status,
        headers: vec![("content-type".into(), HTML.into())],
        payload: Payload::Bytes(body.into_bytes()),
    }
}

/// The one answer for a token that opens nothing, whatever the reason: unknown, replaced,
/// malformed, or of a deleted document.
fn not_found() -> Response {
    let body = page::problem(
        Lang::En,
        "This link is not valid",
        "The page you asked for does not exist (anymore). Please check the link, or ask the \
         sender for a new one.",
        None,
        None,
    );
    html(404, body)
}

fn not_allowed(allowed: &[&str]) -> Response {
    let mut r = html(
        405,
        page::problem(
            Lang::En,
            "Not possible here",
            "This address does not take that kind of request.",
            None,
            None,
        ),
    );
    r.headers.push(("allow".into(), allowed.join(", ")));
    r
}

/// The page of a failure that is not the client's: the status the API would answer (500,
/// or 503 and 507 when the store cannot serve now), the details in the log only.
fn failed(e: ApiError) -> Response {
    let status = e.status();
    eprintln!("faktura: the portal answered {status}: {e:?}");
    html(
        status,
        page::problem(
            Lang::En,
            "Something went wrong",
            "The page cannot be shown right now. Please try again later.",
            None,
            None,
        ),
    )
}

impl From<Error> for Response {
    fn from(e: Error) -> Response {
        failed(ApiError::from(e))
    }
}

impl From<crate::caps::StoreError> for Response {
    fn from(e: crate::caps::StoreError) -> Response {
        failed(ApiError::from(e))
    }
}

/// The bucket of a link's requests in the rate limit: part of its hash, never its token.
fn bucket(link: &Link) -> String {
    format!("portal/{}", hex::encode(&link.hash[..16]))
}

/// A request of the link `token` (`file`: one of its downloads).
fn linked(caps: &Caps, req: &Request, token: &str, file: Option<&&str>) -> Response {
    match linked_or_error(caps, req, token, file) {
        Ok(answer) | Err(answer) => answer,
    }
}

fn linked_or_error(
    caps: &Caps,
    req: &Request,
    token: &str,
    file: Option<&&str>,
) -> Result<Response, Response> {
    let allowed: &[&str] = if file.is_some() {
        &["GET", "HEAD"]
    } else {
        &["GET", "HEAD", "POST"]
    };
    let verb_allowed = match req.method {
        Method::Get | Method::Head => true,
        Method::Post => file.is_none(),
        Method::Put | Method::Delete | Method::Other(_) => false,
    };
    // One snapshot for everything the request reads: the link, then, for a request that
    // is allowed and within the link's limit, what the link opens (its first reads in one
    // call, `portal::first_reads`): a refused request reads nothing more than the link.
    let txn = caps.store.begin_read()?;
    let Some(link) = links::find(txn.as_ref(), token)? else {
        return Ok(not_found());
    };
    if !verb_allowed {
        return Ok(not_allowed(allowed));
    }
    let window = caps
        .rate
        .hit_limited(&bucket(&link), limits::PORTAL_REQUESTS_PER_MINUTE, 60);
    if !window.allowed {
        let mut r = html(
            429,
            page::problem(
                Lang::En,
                "Too many requests",
                "This link was opened too often in the last minute. Please wait a minute and \
                 try again.",
                None,
                None,
            ),
        );
        let wait = window
            .reset
            .saturating_sub(caps.clock.now_unix().max(0) as u64);
        r.headers
            .push(("retry-after".into(), wait.max(1).to_string()));
        return Ok(r);
    }
    let txn: Box<dyn Read> = Box::new(Prefetched::new(txn, portal::first_reads(&link))?);
    let clock = clock::load(txn.as_ref(), link.account)?;
    let scoped = Scoped::account(caps.store, link.account);
    let caps = &Caps {
        store: &scoped,
        ..*caps
    };
    let ctx = clock.ctx(link.account, 0, false, caps.clock.now_unix());
    Ok(match (file.copied(), &req.method) {
        (Some("pdf"), _) => pdf(txn.as_ref(), &ctx, &link)?,
        (Some(GIROCODE), _) => girocode(txn.as_ref(), &ctx, req, &link)?,
        (Some(_), _) => einvoice(txn.as_ref(), &ctx, &link)?,
        (None, Method::Post) => post(caps, txn, &ctx, req, &link, token)?,
        (None, _) => view(caps, txn, &ctx, req, &link, token)?,
    })
}

/// The page of a link; a document's view is noted on it at most once an hour. The
/// snapshot `txn` ends before that write (a networked store's reader holds a connection).
fn view(
    caps: &Caps,
    txn: Box<dyn Read>,
    ctx: &Ctx,
    req: &Request,
    link: &Link,
    token: &str,
) -> Result<Response, Response> {
    let opened = portal::open(txn.as_ref(), ctx, link)?;
    let form_token = links::form_token(txn.as_ref(), link)?;
    drop(txn);
    let opened = match opened {
        Ok(opened) => opened,
        Err(closed) => return Ok(closed_page(closed)),
    };
    if matches!(link.target, Target::Document(..)) && links::view_due(link, ctx.now) {
        // A view is worth a note, not a failed page: a store that cannot take the note now
        // still shows the document.
        if let Err(e) = in_write(caps, |txn| Ok(portal::note_view(ctx, txn, link)?)) {
            eprintln!("faktura: a portal view was not noted: {e:?}");
        }
    }
    let body = match &opened {
        Opened::Document(p) => {
            let done = form_urlencoded::parse(req.query.as_bytes())
                .find(|(k, _)| k == "done")
                .and_then(|(_, v)| Done::parse(&v));
            page::document(p, token, &form_token, done)
        }
        Opened::Client(p) => page::client(p),
    };
    Ok(html(200, body))
}

/// The GiroCode of a document's page as an SVG image. The page asks for it with the code's
/// version (`?v=`): an answer to that version never changes, so a browser keeps it and
/// draws the page again without asking; any other request gets the current code, kept by
/// no cache. 404 when the page shows no code (paid, not in EUR, no IBAN).
fn girocode(txn: &dyn Read, ctx: &Ctx, req: &Request, link: &Link) -> Result<Response, Response> {
    let transfer = portal::girocode(txn, ctx, link)?;
    let transfer = match transfer {
        Ok(Some(transfer)) => transfer,
        Ok(None) => return Ok(not_found()),
        Err(closed) => return Ok(closed_page(closed)),
    };
    let asked = form_urlencoded::parse(req.query.as_bytes())
        .find(|(k, _)| k == "v")
        .map(|(_, v)| v.into_owned());
    let cache = if asked.as_deref() == Some(transfer.version().as_str()) {
        "private, max-age=31536000, immutable"
    } else {
        "no-store"
    };
    Ok(Response {
        status: 200,
        headers: vec![
            ("content-type".into(), "image/svg+xml".into()),
            ("cache-control".into(), cache.into()),
        ],
        payload: Payload::Bytes(page::girocode_svg(&transfer.matrix()).into_bytes()),
    })
}

/// The page of a link that opens nothing (404), or no longer does (410).
fn closed_page(closed: Closed) -> Response {
    match closed {
        Closed::NotFound => not_found(),
        Closed::Expired { seller, locale } => {
            let lang = Lang::of(&locale);
            html(
                410,
                page::problem(
                    lang,
                    lang.pick("This link has expired", "Dieser Link ist abgelaufen"),
                    lang.pick(
                        "For your security, links to documents work for a limited time only.",
                        "Zu Ihrer Sicherheit funktionieren Links zu Dokumenten nur eine \
                         begrenzte Zeit.",
                    ),
                    Some(&seller),
                    None,
                ),
            )
        }
    }
}

/// The document a download asks for, when the link still opens it.
fn document(
    txn: &dyn Read,
    ctx: &Ctx,
    link: &Link,
) -> Result<Result<crate::domain::documents::Document, Response>, Response> {
    Ok(portal::document_of(txn, ctx, link)?.map_err(closed_page))
}

/// `/portal/{token}/pdf`: the document's PDF as completion stored it, the bytes the API
/// gives.
fn pdf(txn: &dyn Read, ctx: &Ctx, link: &Link) -> Result<Response, Response> {
    let doc = match document(txn, ctx, link)? {
        Ok(doc) => doc,
        Err(closed) => return Ok(closed),
    };
    let Some(file) = pdfs::load(
        txn,
        link.account,
        doc.kind.collection(),
        doc.id,
        pdfs::Variant::Original,
    )?
    else {
        return Ok(not_found());
    };
    Ok(download(file.content, "application/pdf", &file.filename))
}

/// `/portal/{token}/e-invoice`: the e-invoice of the profile the client receives.
fn einvoice(txn: &dyn Read, ctx: &Ctx, link: &Link) -> Result<Response, Response> {
    let doc = match document(txn, ctx, link)? {
        Ok(doc) => doc,
        Err(closed) => return Ok(closed),
    };
    if !doc.kind.spec().einvoices {
        return Ok(not_found());
    }
    let client = records::load(txn, &CLIENTS, link.account, doc.client_id)?;
    let profile = einvoice::profile_of(&client);
    match einvoice::load(txn, link.account, doc.kind, doc.id, profile)? {
        Some(einvoice::Issued::Xml { number, xml }) => {
            Ok(download(xml, "application/xml", &format!("{number}.xml")))
        }
        Some(einvoice::Issued::Refused(_)) | None => Ok(not_found()),
    }
}

fn download(bytes: Vec<u8>, content_type: &str, filename: &str) -> Response {
    let name = filenames::sanitize(filename).replace('"', "");
    Response {
        status: 200,
        headers: vec![
            ("content-type".into(), content_type.into()),
            (
                "content-disposition".into(),
                format!("attachment; filename=\"{name}\""),
            ),
        ],
        payload: Payload::Bytes(bytes),
    }
}

/// A form of a document's page: its token checked first, then what it asks done; the
/// answer redirects to the page, which says what happened (post-redirect-get).
fn post(
    caps: &Caps,
    txn: Box<dyn Read>,
    ctx: &Ctx,
    req: &Request,
    link: &Link,
    token: &str,
) -> Result<Response, Response> {
    let lang = match portal::open(txn.as_ref(), ctx, link)? {
        Ok(Opened::Document(p)) => Lang::of(&p.locale),
        Ok(Opened::Client(_)) => return Ok(not_allowed(&["GET", "HEAD"])),
        Err(closed) => return Ok(closed_page(closed)),
    };
    let body = match &req.body {
        Body::Bytes(b) if b.len() <= limits::PORTAL_FORM_BYTES_MAX => b,
        Body::Bytes(_) | Body::TooLarge => {
            return Ok(refused(lang, token, "The form is too large."));
        }
    };
    let field = |name: &str| form_field(body, name);
    let given = field("form_token").unwrap_or_default();
    let matches = links::form_token_matches(txn.as_ref(), link, &given)?;
    // The snapshot ends before the write (a networked store's reader holds a connection).
    drop(txn);
    if !matches {
        let why = lang.pick(
            "The form was not sent from this page (its form_token is missing or wrong). Please \
             open the page again and send the form from there.",
            "Das Formular kam nicht von dieser Seite (sein form_token fehlt oder ist falsch). \
             Bitte öffnen Sie die Seite neu und senden Sie das Formular von dort.",
        );
        return Ok(refused(lang, token, why));
    }
    let action = field("action").unwrap_or_default();
    let act = match asked(&action, field) {
        Ok(act) => act,
        Err(why) => return Ok(refused(lang, token, &why)),
    };
    match in_write(caps, |txn| Ok(portal::act(ctx, txn, link, &act)?)) {
        Ok(()) => {}
        Err(ApiError::BadRequest(reasons)) => return Ok(refused(lang, token, &reasons.join("; "))),
        Err(ApiError::NotFound(_)) => return Ok(not_found()),
        Err(e) => return Err(failed(e)),
    }
    Ok(done(lang, token, &action))
}

/// The first value of a form's field.
fn form_field(body: &[u8], name: &str) -> Option<String> {
    form_urlencoded::parse(body)
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

/// What a form's `action` asks done, with the fields it takes; else why it is refused.
fn asked(action: &str, field: impl Fn(&str) -> Option<String>) -> Result<Act, String> {
    match action {
        "accept" => Ok(Act::Accept(field("name").unwrap_or_default())),
        "decline" => Ok(Act::Decline(field("name").unwrap_or_default())),
        "comment" => Ok(Act::Comment(field("comment").unwrap_or_default())),
        other => Err(format!(
            "action must be accept, decline or comment, got \"{}\"",
            other.chars().take(40).collect::<String>()
        )),
    }
}

/// The page of a form refused for `why`, with a link back to the document's page.
fn refused(lang: Lang, token: &str, why: &str) -> Response {
    html(
        400,
        page::problem(
            lang,
            lang.pick("This could not be done", "Das hat nicht geklappt"),
            why,
            None,
            Some(token),
        ),
    )
}

/// The redirect to the document's page after a form did `action`, which the page then
/// says.
fn done(lang: Lang, token: &str, action: &str) -> Response {
    let mut r = html(
        303,
        page::problem(
            lang,
            lang.pick("Done", "Erledigt"),
            lang.pick("Back to the page.", "Zurück zur Seite."),
            None,
            Some(token),
        ),
    );
    // Relative to the page's own address, whatever `public_url` it was reached under.
    r.headers
        .push(("location".into(), format!("{token}?done={action}")));
    r
}
