//! HTTP: the request and response values, authentication, content negotiation, routing
//! and the mapping of every failure to a status with an `<errors>` body.
//!
//! Owns the wire; never touches storage keys or WIT types directly.

#![forbid(unsafe_code)]

mod clients;
#[cfg(test)]
mod consistency_tests;
mod described;
pub mod dispatch;
mod documents;
mod error;
#[cfg(test)]
mod golden;
#[cfg(test)]
mod grouping_tests;
pub(crate) mod idempotency;
mod incomings;
mod openapi;
mod portal;
#[cfg(test)]
mod portal_tests;
mod query;
#[cfg(test)]
mod read_only_tests;
mod records;
mod router;
pub mod runs;
mod settings;
mod templates;
#[cfg(test)]
mod webhook_tests;
pub mod webhooks;

pub use error::ApiError;
pub use idempotency::expire as expire_answers;
pub use router::{ID, Route, routes};

use crate::caps::{Caps, Write};
use crate::codec::{
    Element, Emit, TreeBuilder, XmlWriter, decode_json, decode_xml, encode_json, encode_xml,
};
use crate::domain::{Ctx, accounts, clock, migrate, opening};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Method {
    Get,
    Head,
    Post,
    Put,
    Delete,
    Other(String),
}

/// What a handler gets: the request, its caller, and the id from the path ("" if none).
pub(crate) struct Call<'a> {
    pub(crate) caps: &'a Caps<'a>,
    pub(crate) ctx: &'a Ctx,
    pub(crate) req: &'a Request,
    pub(crate) query: &'a query::Query,
    pub(crate) id: &'a str,
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

    /// The format of the body: by Content-Type, or by its first character when none is
    /// given; `None` for an empty body. Other content types answer 415.
    pub fn body_format(&self) -> Result<Option<Format>, ApiError> {
        let bytes = match &self.body {
            Body::TooLarge => return Err(ApiError::PayloadTooLarge),
            Body::Bytes(b) => b,
        };
        let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
        match self.header("content-type") {
            Some(ct) => {
                let mime = ct
                    .split(';')
                    .next()
                    .unwrap_or("")
                    .trim()
                    .to_ascii_lowercase();
                match mime.as_str() {
                    "application/xml" | "text/xml" => Ok(Some(Format::Xml)),
                    "application/json" | "text/json" => Ok(Some(Format::Json)),
                    _ => Err(ApiError::UnsupportedMediaType(format!(
                        "unsupported Content-Type {mime}; send application/xml or application/json"
                    ))),
                }
            }
            None => Ok(match first {
                None => None,
                Some(b'{' | b'[') => Some(Format::Json),
                Some(_) => Some(Format::Xml),
            }),
        }
    }

    /// The body as a document, XML or JSON.
    pub fn document(&self) -> Result<Element, ApiError> {
        let bytes = match &self.body {
            Body::TooLarge => return Err(ApiError::PayloadTooLarge),
            Body::Bytes(b) => b,
        };
        Ok(match self.body_format()? {
            Some(Format::Json) => decode_json(bytes)?,
            Some(Format::Xml) | None => decode_xml(bytes)?,
        })
    }

    /// The body of an action, which may be absent, empty, `null` or `{}`.
    pub fn optional_document(&self) -> Result<Option<Element>, ApiError> {
        if let Body::Bytes(b) = &self.body {
            let trimmed = String::from_utf8_lossy(b);
            let trimmed = trimmed.trim();
            if trimmed.is_empty()
                || trimmed == "null"
                || trimmed.replace(char::is_whitespace, "") == "{}"
            {
                return Ok(None);
            }
        }
        self.document().map(Some)
    }
}

/// Writes a document when the response is encoded.
pub type Emitter = Box<dyn FnOnce(&mut dyn Emit)>;

/// What a response carries: a document (written as XML or JSON, as negotiated), raw bytes
/// (PDFs, images), or nothing.
pub enum Payload {
    Doc(Element),
    /// A document written by emitting it, straight into the negotiated format.
    Emitted(Emitter),
    /// Invoices or credit notes, one or a page: written by their own writer, chosen here
    /// for the negotiated format.
    Documents(documents::Documents),
    /// Groups of documents (`group_by`), likewise.
    Groups(documents::Groups),
    Bytes(Vec<u8>),
    Empty,
}

impl std::fmt::Debug for Payload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Payload::Doc(e) => f.debug_tuple("Doc").field(e).finish(),
            Payload::Emitted(_) => f.write_str("Emitted"),
            Payload::Documents(d) => write!(f, "Documents({})", d.docs.len()),
            Payload::Groups(g) => write!(f, "Groups({})", g.by_currency.len()),
            Payload::Bytes(b) => write!(f, "Bytes({} bytes)", b.len()),
            Payload::Empty => f.write_str("Empty"),
        }
    }
}

#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub payload: Payload,
}

impl Response {
    pub fn doc(status: u16, root: Element) -> Response {
        Response {
            status,
            headers: Vec::new(),
            payload: Payload::Doc(root),
        }
    }

    /// A document that `emit` writes when the response is encoded.
    pub fn emitted(status: u16, emit: impl FnOnce(&mut dyn Emit) + 'static) -> Response {
        Response {
            status,
            headers: Vec::new(),
            payload: Payload::Emitted(Box::new(emit)),
        }
    }

    /// 200 without a document (DELETE and actions): an empty body, `{}` in JSON.
    pub fn empty() -> Response {
        Response {
            status: 200,
            headers: Vec::new(),
            payload: Payload::Empty,
        }
    }

    pub fn error(e: &ApiError) -> Response {
        let mut r = Response::doc(e.status(), e.to_element());
        if let ApiError::MethodNotAllowed(allowed) = e {
            r.headers.push(("allow".into(), allowed.join(", ")));
        }
        r
    }

    /// The answer, saying what it is to the host's metrics (`OUTCOME`).
    pub(crate) fn with_outcome(mut self, outcome: Outcome) -> Response {
        self.headers.push((OUTCOME.into(), outcome.as_str().into()));
        self
    }
}

/// The header in which an answer tells the host what it is, where its status does not:
/// the host's metrics count by it (`faktura_einvoice_refusals`), so that the host never
/// reads a route or a body for a business meaning. The faktura host takes it off before
/// the answer leaves (`host/src/metrics.rs`, `OUTCOME`); under `wasmtime serve` or Spin,
/// which know nothing of it, it reaches the client, where it says no more than the status
/// and body do.
pub(crate) const OUTCOME: &str = "x-faktura-outcome";

/// What an answer is, in `OUTCOME`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// An e-invoice refused: a draft's, which has none yet, or one whose data fails the
    /// rules of its profile.
    EInvoiceRefused,
}

impl Outcome {
    fn as_str(self) -> &'static str {
        match self {
            Outcome::EInvoiceRefused => "einvoice-refused",
        }
    }
}

/// The wire format of a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Xml,
    Json,
}

const XML_TYPE: &str = "application/xml; charset=utf-8";
const JSON_TYPE: &str = "application/json; charset=utf-8";

/// `format=json|xml` wins; then an Accept naming JSON or XML; then the format of the
/// request body; XML otherwise (also for Accept values the API does not speak).
fn response_format(req: &Request) -> Format {
    let query_format = form_urlencoded::parse(req.query.as_bytes())
        .find(|(k, _)| k == "format")
        .map(|(_, v)| v.to_ascii_lowercase());
    match query_format.as_deref() {
        Some("json") => return Format::Json,
        Some("xml") => return Format::Xml,
        _ => {}
    }
    if let Some(accept) = req.header("accept").map(str::to_ascii_lowercase) {
        if accept.contains("application/json") {
            return Format::Json;
        }
        if accept.contains("xml") {
            return Format::Xml;
        }
    }
    match req.body_format() {
        Ok(Some(Format::Json)) => Format::Json,
        _ => Format::Xml,
    }
}

/// The final bytes and content type of a response.
pub struct Encoded {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// The account the request was authenticated as, if it was (`webhooks::after`).
    pub account: Option<u64>,
}

pub(crate) fn encode(response: Response, format: Format) -> Encoded {
    let mut headers = response.headers;
    let body = match response.payload {
        Payload::Bytes(bytes) => bytes,
        Payload::Doc(root) => {
            headers.push(content_type(format));
            match format {
                Format::Xml => encode_xml(&root),
                Format::Json => encode_json(&root),
            }
        }
        Payload::Emitted(emit) => {
            headers.push(content_type(format));
            match format {
                Format::Xml => {
                    let mut w = XmlWriter::new();
                    emit(&mut w);
                    w.finish()
                }
                Format::Json => {
                    let mut tree = TreeBuilder::new();
                    emit(&mut tree);
                    encode_json(&tree.finish())
                }
            }
        }
        Payload::Documents(docs) => {
            headers.push(content_type(format));
            written(format, |x| docs.write_xml(x), |e| docs.emit(e))
        }
        Payload::Groups(groups) => {
            headers.push(content_type(format));
            written(format, |x| groups.write_xml(x), |e| groups.emit(e))
        }
        Payload::Empty => {
            headers.push(content_type(format));
            match format {
                Format::Xml => Vec::new(),
                Format::Json => b"{}".to_vec(),
            }
        }
    };
    Encoded {
        status: response.status,
        headers,
        body,
        account: None,
    }
}

/// A document written in `format`: XML straight by `xml`, JSON through a tree by `emit`.
fn written(
    format: Format,
    xml: impl FnOnce(&mut XmlWriter),
    emit: impl FnOnce(&mut dyn Emit),
) -> Vec<u8> {
    match format {
        Format::Xml => {
            let mut w = XmlWriter::new();
            xml(&mut w);
            w.finish()
        }
        Format::Json => {
            let mut tree = TreeBuilder::new();
            emit(&mut tree);
            encode_json(&tree.finish())
        }
    }
}

fn content_type(format: Format) -> (String, String) {
    let t = match format {
        Format::Xml => XML_TYPE,
        Format::Json => JSON_TYPE,
    };
    ("content-type".into(), t.into())
}

/// Serves one request. Never panics on bad input; a panic is a bug and costs this request.
pub fn handle(caps: &Caps, req: &Request) -> Encoded {
    if portal::owns(&req.path) {
        // The customer portal: outside `/api`, without an API key, answering pages.
        let mut encoded = encode(portal::serve(caps, req), Format::Xml);
        if req.method == Method::Head {
            encoded.body.clear();
        }
        return encoded;
    }
    let format = response_format(req);
    let mut rate_headers = Vec::new();
    let mut account = None;
    let mut response = match serve(caps, req, &mut rate_headers, &mut account) {
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
    response.headers.extend(rate_headers);
    let mut encoded = encode(response, format);
    encoded.account = account;
    if req.method == Method::Head {
        encoded.body.clear();
    }
    encoded
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

/// Serves an `/api` request; `account` is set once the request's key named one.
fn serve(
    caps: &Caps,
    req: &Request,
    rate_headers: &mut Vec<(String, String)>,
    account: &mut Option<u64>,
) -> Result<Response, ApiError> {
    let rest = req
        .path
        .strip_prefix("/api")
        .filter(|r| r.is_empty() || r.starts_with('/'))
        .ok_or_else(|| ApiError::NotFound(format!("no resource at {}", req.path)))?;
    let query = query::Query::parse(&req.query)?;
    if rest == "/openapi.json" {
        // The API description is public: a client generator reads it before it has a key.
        if !matches!(req.method, Method::Get | Method::Head) {
            return Err(ApiError::MethodNotAllowed(vec!["GET", "HEAD"]));
        }
        return Ok(Response {
            status: 200,
            headers: vec![("content-type".into(), "application/json".into())],
            payload: Payload::Bytes(openapi::document().into_bytes()),
        });
    }
    let principal = authenticate(caps, req, &query)?;
    *account = Some(principal.account_id);
    let window = caps.rate.hit(&principal.account_id.to_string());
    rate_headers.push((
        "x-rate-limit-remaining".into(),
        window.remaining.to_string(),
    ));
    rate_headers.push(("x-rate-limit-reset".into(), window.reset.to_string()));
    if !window.allowed {
        return Err(ApiError::TooManyRequests(
            window.limit.unwrap_or(0),
            window.reset,
        ));
    }
    let scoped = crate::caps::Scoped::account(caps.store, principal.account_id);
    let caps = &Caps {
        store: &scoped,
        ..*caps
    };
    let clock = clock::load(caps.store.begin_read()?.as_ref(), principal.account_id)?;
    let ctx = clock.ctx(
        principal.account_id,
        principal.user_id,
        principal.is_admin,
        caps.clock.now_unix(),
    );
    let segments: Vec<&str> = rest.split('/').filter(|s| !s.is_empty()).collect();
    match idempotency::key(req)? {
        Some(key) => idempotency::run(caps, &ctx, req, key, |caps| {
            router::route(caps, &ctx, req, &query, &segments)
        }),
        None => router::route(caps, &ctx, req, &query, &segments),
    }
}

/// The common `format` (`response_format`): a value the API does not answer in is refused
/// rather than ignored (a client asking for `format=csv` would otherwise read XML).
pub(super) fn check_format(query: &query::Query) -> Result<(), ApiError> {
    match query.get("format") {
        Some(asked)
            if !["xml", "json"]
                .iter()
                .any(|f| asked.eq_ignore_ascii_case(f)) =>
        {
            Err(ApiError::bad(format!(
                "format must be xml or json, got \"{asked}\""
            )))
        }
        _ => Ok(()),
    }
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
    let found = {
        let txn = caps.store.begin_read()?;
        accounts::authenticate(txn.as_ref(), key)?
    };
    let found = match found {
        accounts::Found::Unmigrated => {
            // Data of an older version, and no host ran the migration before serving
            // (`wasmtime serve`, Spin): this request runs it.
            let report = migrate::run(caps.store)?;
            eprintln!(
                "faktura: migrated the store from data version {} to {}",
                report.from, report.to
            );
            let txn = caps.store.begin_read()?;
            accounts::authenticate(txn.as_ref(), key)?
        }
        found => found,
    };
    match found {
        accounts::Found::Principal(principal) => Ok(principal),
        accounts::Found::Unknown => {
            bootstrap_from_environment(caps, key)?.ok_or(ApiError::Unauthorized)
        }
        accounts::Found::Unmigrated => Err(ApiError::Internal(
            "a key entry of an older data version after the migration".into(),
        )),
    }
}

/// The variable naming the first admin's key where the runtime cannot call the `admin`
/// export (`wasmtime serve`, Spin).
const BOOTSTRAP_KEY_VAR: &str = "FAKTURA_BOOTSTRAP_KEY";

/// Creates the default account and its admin user on the first request carrying the key
/// that `FAKTURA_BOOTSTRAP_KEY` names, when the store has no account yet; once one exists
/// the variable changes nothing. Runs only for keys that matched no user.
fn bootstrap_from_environment(
    caps: &Caps,
    key: &str,
) -> Result<Option<accounts::Principal>, ApiError> {
    let Some(configured) = caps.env.var(BOOTSTRAP_KEY_VAR) else {
        return Ok(None);
    };
    if !accounts::same_key(key, &configured) {
        return Ok(None);
    }
    let issued = in_write(caps, |txn| {
        Ok(opening::bootstrap(
            txn,
            caps.clock.now_unix(),
            caps.random,
            Some(key),
        )?)
    })?;
    let Some(issued) = issued else {
        return Ok(None);
    };
    eprintln!(
        "faktura: created the default account {} with an admin user from {BOOTSTRAP_KEY_VAR}",
        issued.account_id
    );
    let txn = caps.store.begin_read()?;
    match accounts::authenticate(txn.as_ref(), key)? {
        accounts::Found::Principal(p) => Ok(Some(p)),
        accounts::Found::Unknown | accounts::Found::Unmigrated => Ok(None),
    }
}

/// Exercises the query-string parser the way a list request does (for the fuzz target):
/// parameters, paging, `order_by`, ids and dates.
pub fn fuzz_query(raw: &str) {
    if let Ok(q) = query::Query::parse(raw) {
        let _ = q.paging();
        let _ = q.order(crate::domain::documents::fields(
            crate::domain::documents::DocKind::Invoice,
        ));
        let _ = q.id("client_id");
        let _ = q.date("from");
        let _ = q.list("status");
    }
}

/// Runs `f` in a write transaction and commits only if it succeeds. When another writer
/// got in the way (`ApiError::Busy`: a serialization failure of a networked store, where
/// nothing of the transaction was kept) the whole transaction runs again, up to
/// `limits::WRITE_TRIES` times with a jittered, growing pause; `f` must therefore do
/// nothing outside the transaction (an e-mail is recorded in it and handed to mail after
/// the commit: `http::dispatch`). A request in one transaction (`whole_request`, see
/// `idempotency`) is run again whole by its caller instead.
pub fn in_write<T>(
    caps: &Caps,
    mut f: impl FnMut(&mut dyn Write) -> Result<T, ApiError>,
) -> Result<T, ApiError> {
    let mut tries = 1;
    loop {
        match in_write_once(caps, &mut f) {
            Err(ApiError::Busy)
                if tries < crate::limits::WRITE_TRIES && !caps.store.whole_request() =>
            {
                pause_before_retry(caps, tries);
                tries += 1;
            }
            done => return done,
        }
    }
}

/// One try of `in_write`: `f` in one write transaction, committed only if it succeeds.
fn in_write_once<T>(
    caps: &Caps,
    f: impl FnOnce(&mut dyn Write) -> Result<T, ApiError>,
) -> Result<T, ApiError> {
    let mut txn = caps.store.begin_write()?;
    let out = f(txn.as_mut())?;
    txn.commit()?;
    Ok(out)
}

/// Waits before try `tries + 1`: a random part of 2^tries milliseconds, so that writers
/// that collided do not collide again in step.
pub(crate) fn pause_before_retry(caps: &Caps, tries: u32) {
    let mut byte = [0u8; 2];
    caps.random.fill(&mut byte);
    let window_us = 1000u64 << tries.min(7);
    let us = u64::from(u16::from_le_bytes(byte)) * window_us / u64::from(u16::MAX);
    std::thread::sleep(std::time::Duration::from_micros(us.max(100)));
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;
    use crate::caps::mem::{
        CountingRandom, FixedClock, MemStore, NoMail, Receiver, TextPdf, Unlimited, Vars,
    };

    use crate::caps::{Read, Store as _, StoreError};

    const KEY: &str = "bootstrap-key-0123456789";

    /// A store whose first `conflicts` commits fail as a serialization failure would:
    /// nothing of the transaction kept.
    struct Conflicting {
        inner: MemStore,
        conflicts: Cell<u32>,
    }

    struct FailingCommit(Box<dyn Write>);

    impl Read for FailingCommit {
        fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
            self.0.get(key)
        }
        fn scan_lent(
            &self,
            prefix: &[u8],
            after: Option<&[u8]>,
            limit: u32,
            reverse: bool,
            f: &mut dyn FnMut(&[u8], &[u8]),
        ) -> Result<usize, StoreError> {
            self.0.scan_lent(prefix, after, limit, reverse, f)
        }
    }

    impl Write for FailingCommit {
        fn put(&mut self, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
            self.0.put(key, value)
        }
        fn delete(&mut self, key: &[u8]) -> Result<(), StoreError> {
            self.0.delete(key)
        }
        fn commit(self: Box<Self>) -> Result<(), StoreError> {
            Err(StoreError::Conflict)
        }
        fn as_read(&self) -> &dyn Read {
            self
        }
    }

    impl crate::caps::Store for Conflicting {
        fn begin_read(&self) -> Result<Box<dyn Read>, StoreError> {
            self.inner.begin_read()
        }
        fn begin_write(&self) -> Result<Box<dyn Write>, StoreError> {
            let txn = self.inner.begin_write()?;
            match self.conflicts.get() {
                0 => Ok(txn),
                n => {
                    self.conflicts.set(n - 1);
                    Ok(Box::new(FailingCommit(txn)))
                }
            }
        }
    }

    fn caps_on<'a>(store: &'a dyn crate::caps::Store, random: &'a CountingRandom) -> Caps<'a> {
        Caps {
            store,
            clock: Box::leak(Box::new(FixedClock(Cell::new(1_795_000_000)))),
            random,
            pdf: &TextPdf,
            mail: &NoMail,
            rate: Box::leak(Box::new(Unlimited::default())),
            env: Box::leak(Box::new(Vars(Default::default()))),
            outbound: Box::leak(Box::new(Receiver::default())),
        }
    }

    /// A transaction another writer got in the way of runs again, whole; one that keeps
    /// meeting them gives up with 503, having kept nothing.
    #[test]
    fn a_conflicting_write_runs_again_and_gives_up_with_503() {
        let random = CountingRandom::default();
        let store = Conflicting {
            inner: MemStore::default(),
            conflicts: Cell::new(3),
        };
        let caps = caps_on(&store, &random);
        let runs = Cell::new(0);
        let out = in_write(&caps, |txn| {
            runs.set(runs.get() + 1);
            txn.put(b"k", &[runs.get() as u8])?;
            Ok(runs.get())
        })
        .unwrap();
        assert_eq!(out, 4, "three conflicts, then the fourth run commits");
        let read = store.inner.begin_read().unwrap();
        assert_eq!(read.get(b"k").unwrap(), Some(vec![4]));

        store.conflicts.set(u32::MAX);
        runs.set(0);
        let err = in_write(&caps, |txn| {
            runs.set(runs.get() + 1);
            txn.put(b"gone", b"x")?;
            Ok(())
        })
        .unwrap_err();
        assert!(matches!(err, ApiError::Busy), "{err:?}");
        assert_eq!(err.status(), 503);
        assert_eq!(runs.get(), crate::limits::WRITE_TRIES);
        assert_eq!(
            store.inner.begin_read().unwrap().get(b"gone").unwrap(),
            None
        );

        // A write that must not run twice is tried once.
        store.conflicts.set(1);
        runs.set(0);
        let once = in_write_once(&caps, |_| {
            runs.set(runs.get() + 1);
            Ok(())
        });
        assert!(matches!(once, Err(ApiError::Busy)));
        assert_eq!(runs.get(), 1);
    }

    /// Asks for the settings with `key` in a store whose environment holds `vars`.
    fn settings(store: &MemStore, vars: &[(&str, &str)], key: &str) -> Encoded {
        let vars = Vars(
            vars.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        );
        let caps = Caps {
            store,
            clock: &FixedClock(Cell::new(1_795_000_000)),
            random: &CountingRandom::default(),
            pdf: &TextPdf,
            mail: &NoMail,
            rate: &Unlimited::default(),
            env: &vars,
            outbound: &Receiver::default(),
        };
        let req = Request {
            method: Method::Get,
            path: "/api/settings".into(),
            query: String::new(),
            headers: vec![("x-serviceapikey".into(), key.into())],
            body: Body::Bytes(Vec::new()),
        };
        handle(&caps, &req)
    }

    fn settings_status(store: &MemStore, vars: &[(&str, &str)], key: &str) -> u16 {
        settings(store, vars, key).status
    }

    #[test]
    fn the_environment_key_bootstraps_an_empty_store_once() {
        let store = MemStore::default();
        // Without the variable, an empty store knows no key.
        assert_eq!(settings_status(&store, &[], KEY), 401);
        let env = [(BOOTSTRAP_KEY_VAR, KEY)];
        // Another key does not bootstrap.
        assert_eq!(
            settings_status(&store, &env, "some-other-key-0123456789"),
            401
        );
        assert_eq!(settings_status(&store, &env, KEY), 200);
        assert_eq!(settings_status(&store, &[], KEY), 200);
        // Once an account exists, a changed variable creates nothing.
        let later = [(BOOTSTRAP_KEY_VAR, "a-later-key-0123456789")];
        assert_eq!(
            settings_status(&store, &later, "a-later-key-0123456789"),
            401
        );
    }

    /// A store that records the scope of every write transaction begun.
    #[derive(Default)]
    struct ScopeRecording {
        inner: MemStore,
        scopes: std::cell::RefCell<Vec<Vec<u8>>>,
    }

    impl crate::caps::Store for ScopeRecording {
        fn begin_read(&self) -> Result<Box<dyn crate::caps::Read>, StoreError> {
            self.inner.begin_read()
        }
        fn begin_write(&self) -> Result<Box<dyn Write>, StoreError> {
            self.begin_write_in(&[])
        }
        fn begin_write_in(&self, scope: &[u8]) -> Result<Box<dyn Write>, StoreError> {
            self.scopes.borrow_mut().push(scope.to_vec());
            self.inner.begin_write()
        }
    }

    #[test]
    fn a_request_writes_in_the_scope_of_its_account_with_or_without_a_key() {
        let store = ScopeRecording::default();
        let env = [(BOOTSTRAP_KEY_VAR, KEY)];
        assert_eq!(settings_status(&store.inner, &env, KEY), 200);
        let caps = Caps {
            store: &store,
            clock: &FixedClock(Cell::new(1_795_000_000)),
            random: &CountingRandom::default(),
            pdf: &TextPdf,
            mail: &NoMail,
            rate: &Unlimited::default(),
            env: &Vars(Default::default()),
            outbound: &Receiver::default(),
        };
        let account = {
            let txn = store.inner.begin_read().unwrap();
            match crate::domain::accounts::authenticate(txn.as_ref(), KEY).unwrap() {
                crate::domain::accounts::Found::Principal(p) => p.account_id,
                _ => panic!("the bootstrapped key is known"),
            }
        };
        for idempotency_key in [None, Some("create-once-1")] {
            store.scopes.borrow_mut().clear();
            let mut headers = vec![
                ("x-serviceapikey".to_string(), KEY.to_string()),
                ("content-type".into(), "application/xml".into()),
            ];
            if let Some(k) = idempotency_key {
                headers.push(("idempotency-key".into(), k.into()));
            }
            let req = Request {
                method: Method::Post,
                path: "/api/clients".into(),
                query: String::new(),
                headers,
                body: Body::Bytes(b"<client><name>Scoped</name></client>".to_vec()),
            };
            let answer = handle(&caps, &req);
            assert_eq!(answer.status, 201, "{idempotency_key:?}");
            let scopes = store.scopes.borrow();
            assert!(!scopes.is_empty(), "{idempotency_key:?}: a write began");
            assert!(
                scopes.iter().all(|s| *s == account.to_be_bytes()),
                "{idempotency_key:?}: {scopes:?}"
            );
        }
    }

    #[test]
    fn a_weak_environment_key_is_refused_with_the_reason() {
        let store = MemStore::default();
        let refused = settings(&store, &[(BOOTSTRAP_KEY_VAR, "short")], "short");
        assert_eq!(refused.status, 400);
        let body = String::from_utf8(refused.body).unwrap();
        assert!(
            body.contains("<errors>") && body.contains("16 to 256"),
            "{body}"
        );
        assert_eq!(settings_status(&store, &[], "short"), 401);
    }
}
