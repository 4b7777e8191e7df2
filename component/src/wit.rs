//! The WIT-backed side: `caps` implemented on the imports, and the transport between
//! `wasi:http` values and `http::Request`/`Response`, incoming and (webhook deliveries,
//! `WitOutbound`) outgoing.
//!
//! The store, PDF, mail and rate limit are Faktura's imported interfaces (`imported`), or,
//! in the build with the plug compiled in (feature `fused`), the plug's own code called
//! directly (`fused`): the rest of this file is the same for both.

#[cfg(feature = "fused")]
mod fused;
#[cfg(not(feature = "fused"))]
mod imported;

#[cfg(feature = "fused")]
use fused::{Mail as WitMail, Pdf as WitPdf, Rate as WitRate, Store as WitStore};
#[cfg(not(feature = "fused"))]
use imported::{WitMail, WitPdf, WitRate, WitStore};

use crate::bindings::admin::{AccountKey, CheckReport, Migration, UpkeepReport};
use crate::bindings::wasi::http::types::{
    Fields, IncomingRequest, Method as WasiMethod, OutgoingBody, OutgoingResponse, ResponseOutparam,
};
use crate::bindings::wasi::io::streams::{OutputStream, StreamError};
use crate::caps::{self, Caps, StoreError};
use crate::domain::{self, accounts, opening};
use crate::http::{self, Body, Method, Request};
use crate::limits;

struct WitClock;
struct WitEnvironment;

impl caps::Environment for WitEnvironment {
    #[expect(
        clippy::disallowed_methods,
        reason = "this is the capability: `wasi:cli/environment` reached through std"
    )]
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }
}

struct WitRandom;

impl caps::Clock for WitClock {
    fn now_unix(&self) -> i64 {
        crate::bindings::wasi::clocks::wall_clock::now().seconds as i64
    }
}

impl caps::Random for WitRandom {
    fn fill(&self, buf: &mut [u8]) {
        let bytes = crate::bindings::wasi::random::random::get_random_bytes(buf.len() as u64);
        buf.copy_from_slice(&bytes[..buf.len()]);
    }
}

fn caps(store: &dyn caps::Store) -> Caps<'_> {
    Caps {
        store,
        clock: &WitClock,
        random: &WitRandom,
        pdf: &WitPdf,
        mail: &WitMail,
        rate: &WitRate,
        env: &WitEnvironment,
        outbound: &WitOutbound,
    }
}

pub(crate) fn handle(request: IncomingRequest, out: ResponseOutparam) {
    let req = read_request(&request);
    drop(request);
    // One per request: its reads share a snapshot until it writes.
    let store = caps::SharedSnapshot::new(WitStore);
    let caps = caps(&store);
    let mut response = http::handle(&caps, &req);
    // Only a write that succeeded may have recorded events (a read asks nothing more).
    let Some(account) = http::webhooks::written(&req, &response) else {
        write_response(response, out);
        return;
    };
    if http::webhooks::host_delivers(&caps) {
        http::webhooks::tell_host(account, &mut response);
        write_response(response, out);
        return;
    }
    write_response(response, out);
    // The answer has left; the events its write recorded go out now.
    http::webhooks::after(&caps, account);
}

fn read_request(request: &IncomingRequest) -> Request {
    let method = match request.method() {
        WasiMethod::Get => Method::Get,
        WasiMethod::Head => Method::Head,
        WasiMethod::Post => Method::Post,
        WasiMethod::Put => Method::Put,
        WasiMethod::Delete => Method::Delete,
        WasiMethod::Other(m) => Method::Other(m),
        other => Method::Other(format!("{other:?}").to_uppercase()),
    };
    let path_with_query = request.path_with_query().unwrap_or_else(|| "/".into());
    let (path, query) = match path_with_query.split_once('?') {
        Some((p, q)) => (p.to_owned(), q.to_owned()),
        None => (path_with_query, String::new()),
    };
    let headers: Vec<(String, String)> = request
        .headers()
        .entries()
        .into_iter()
        .map(|(k, v)| {
            (
                k.to_ascii_lowercase(),
                String::from_utf8_lossy(&v).into_owned(),
            )
        })
        .collect();
    let declared = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.trim().parse::<u64>().ok());
    let body = if matches!(method, Method::Get | Method::Head) {
        // No route reads the body of a GET or HEAD: it is left to the host to discard,
        // which spares the reads of one (empty, nearly always) per request.
        Body::Bytes(Vec::new())
    } else if declared.is_some_and(|n| n > limits::BODY_BYTES_MAX as u64) {
        Body::TooLarge
    } else {
        read_body(request)
    };
    Request {
        method,
        path,
        query,
        headers,
        body,
    }
}

/// Reads at most `BODY_BYTES_MAX` bytes; one more means the body is too large.
fn read_body(request: &IncomingRequest) -> Body {
    let Ok(body) = request.consume() else {
        return Body::Bytes(Vec::new());
    };
    let mut bytes = Vec::new();
    {
        let Ok(stream) = body.stream() else {
            return Body::Bytes(Vec::new());
        };
        loop {
            match stream.blocking_read(64 * 1024) {
                Ok(chunk) => {
                    bytes.extend_from_slice(&chunk);
                    if bytes.len() > limits::BODY_BYTES_MAX {
                        return Body::TooLarge;
                    }
                }
                Err(StreamError::Closed) => break,
                Err(StreamError::LastOperationFailed(_)) => break,
            }
        }
    }
    Body::Bytes(bytes)
}

fn write_response(response: http::Encoded, out: ResponseOutparam) {
    let mut headers: Vec<(String, Vec<u8>)> = response
        .headers
        .into_iter()
        .map(|(k, v)| (k, v.into_bytes()))
        .collect();
    headers.push((
        "content-length".into(),
        response.body.len().to_string().into_bytes(),
    ));
    let fields = Fields::from_list(&headers).unwrap_or_else(|_| Fields::new());
    let outgoing = OutgoingResponse::new(fields);
    // A new response is a 200 already.
    if response.status != 200 {
        let _ = outgoing.set_status_code(response.status);
    }
    let Ok(body) = outgoing.body() else {
        return;
    };
    ResponseOutparam::set(out, Ok(outgoing));
    {
        let Ok(stream) = body.write() else {
            return;
        };
        if !write_body(&stream, &response.body) {
            return;
        }
    }
    let _ = OutgoingBody::finish(body, None);
}

/// The most `blocking-write-and-flush` takes in one call.
const BLOCKING_WRITE_MAX: usize = 4096;

/// Writes and flushes a whole body; false when the stream failed (the client is gone).
fn write_body(stream: &OutputStream, bytes: &[u8]) -> bool {
    // A body within `blocking-write-and-flush`'s 4 KiB goes in that one call.
    if bytes.len() <= BLOCKING_WRITE_MAX {
        return bytes.is_empty() || stream.blocking_write_and_flush(bytes).is_ok();
    }
    // A larger one goes in as much per write as the stream accepts (the whole of it,
    // usually), rather than in 4 KiB pieces, each of which waits for the host to take it.
    let mut rest = bytes;
    while !rest.is_empty() {
        let accepted = match stream.check_write() {
            Ok(n) => usize::try_from(n).unwrap_or(usize::MAX),
            Err(_) => return false,
        };
        if accepted == 0 {
            stream.subscribe().block();
            continue;
        }
        let (now, later) = rest.split_at(accepted.min(rest.len()));
        if stream.write(now).is_err() {
            return false;
        }
        rest = later;
    }
    stream.blocking_flush().is_ok()
}

fn now() -> i64 {
    caps::Clock::now_unix(&WitClock)
}

fn issued(key: accounts::IssuedKey) -> AccountKey {
    AccountKey {
        account_id: key.account_id,
        user_id: key.user_id,
        api_key: key.api_key,
    }
}

fn message(e: domain::Error) -> String {
    match e {
        domain::Error::Invalid(m) => m.join("; "),
        domain::Error::NotFound(m)
        | domain::Error::Duplicate(m)
        | domain::Error::Forbidden(m)
        | domain::Error::Unavailable(m) => m,
        domain::Error::Store(e) => e.to_string(),
    }
}

/// Brings the store to the current data version (`domain::migrate`).
pub(crate) fn migrate() -> Result<Migration, String> {
    let report = domain::migrate::run(&WitStore).map_err(message)?;
    Ok(Migration {
        from_version: report.from,
        to_version: report.to,
        key_entries: report.key_entries,
        tallies_rebuilt: report.tallies_rebuilt,
        einvoices_made: report.einvoices_made,
        index_entries: report.index_entries,
    })
}

/// Work due whatever the requests: recorded messages to mail (`http::dispatch`), expired
/// answers of idempotency keys removed (`http::idempotency`).
pub(crate) fn upkeep() -> Result<UpkeepReport, String> {
    let store = WitStore;
    let caps = caps(&store);
    let mut runs = 0;
    let accounts = http::runs::accounts(&caps).map_err(|e| format!("{e:?}"))?;
    for &account in &accounts {
        // One account's failure (a run its data refuses) holds up no other account.
        match http::runs::make_due(&caps, account) {
            Ok(n) => runs += n,
            Err(e) => eprintln!("faktura: upkeep of account {account}: {e:?}"),
        }
    }
    // Every account's due deliveries in one go: a slow receiver costs the pass one
    // timeout, not one per account; goes after goes while some are due (a backlog left by
    // an outage), for at most `limits::DELIVERY_PASS_SECONDS`. A host that sends them
    // itself calls `deliver` after the pass instead.
    let deliveries = if http::webhooks::host_delivers(&caps) {
        0
    } else {
        http::webhooks::deliver_backlog(&caps, &accounts).unwrap_or_else(|e| {
            eprintln!("faktura: upkeep's webhook deliveries: {e:?}");
            0
        })
    };
    let handed = http::dispatch::hand_over_due(&caps).map_err(|e| format!("{e:?}"))?;
    let answers_expired = http::expire_answers(&caps).map_err(|e| format!("{e:?}"))?;
    Ok(UpkeepReport {
        handed,
        answers_expired,
        runs,
        deliveries,
    })
}

/// One go of webhook deliveries for `accounts`, every account when it is empty
/// (`http::webhooks::deliver`): the attempts made.
pub(crate) fn deliver(accounts: Vec<u64>) -> Result<u32, String> {
    let store = WitStore;
    let caps = caps(&store);
    let accounts = if accounts.is_empty() {
        http::runs::accounts(&caps).map_err(|e| format!("{e:?}"))?
    } else {
        accounts
    };
    http::webhooks::deliver(&caps, &accounts).map_err(|e| format!("{e:?}"))
}

/// Checks the whole store from one snapshot (`domain::consistency`).
pub(crate) fn check() -> Result<CheckReport, String> {
    let txn = caps::Store::begin_read(&WitStore).map_err(|e| e.to_string())?;
    let report = domain::consistency::check(txn.as_ref()).map_err(message)?;
    Ok(CheckReport {
        accounts: report.accounts,
        records: report.records,
        index_entries: report.index_entries,
        tally_values: report.tally_values,
        number_claims: report.number_claims,
        problems: report.problems,
        problems_found: report.problems_found,
    })
}

/// Runs an admin operation on a store at the current data version.
fn migrated<T>(run: impl FnOnce() -> Result<T, domain::Error>) -> Result<T, String> {
    domain::migrate::run(&WitStore).map_err(message)?;
    run().map_err(message)
}

/// Runs `f` in one write transaction of a store at the current data version, committed
/// only if it succeeds; a transaction another writer got in the way of (a serialization
/// failure of a networked store: the upkeep of another host, a request) runs again, as
/// `http::in_write` does for requests, up to `limits::WRITE_TRIES` times.
fn admin_write<T>(
    mut f: impl FnMut(&mut dyn caps::Write) -> Result<T, domain::Error>,
) -> Result<T, String> {
    migrated(|| {
        let store = WitStore;
        let caps = caps(&store);
        let mut tries = 1;
        loop {
            let once = caps::Store::begin_write(&store)
                .map_err(domain::Error::from)
                .and_then(|mut txn| {
                    let out = f(txn.as_mut())?;
                    txn.commit()?;
                    Ok(out)
                });
            match once {
                Err(domain::Error::Store(StoreError::Conflict))
                    if tries < crate::limits::WRITE_TRIES =>
                {
                    http::pause_before_retry(&caps, tries);
                    tries += 1;
                }
                done => return done,
            }
        }
    })
}

pub(crate) fn bootstrap(api_key: Option<String>) -> Result<Option<AccountKey>, String> {
    admin_write(|txn| {
        let key = opening::bootstrap(txn, now(), &WitRandom, api_key.as_deref())?;
        Ok(key.map(issued))
    })
}

pub(crate) fn create_account(name: &str, admin_email: &str) -> Result<AccountKey, String> {
    admin_write(|txn| {
        let key = opening::open_account(txn, name, admin_email, now(), &WitRandom, None)?;
        Ok(issued(key))
    })
}

pub(crate) fn create_user(account_id: u64, email: &str) -> Result<AccountKey, String> {
    admin_write(|txn| {
        let key = accounts::create_user(txn, account_id, email, false, now(), &WitRandom, None)?;
        Ok(issued(key))
    })
}

pub(crate) fn revoke_user(user_id: u64) -> Result<(), String> {
    admin_write(|txn| accounts::revoke_user(txn, user_id))
}

/// Outgoing HTTP through `wasi:http/outgoing-handler`: every request started at once,
/// then one loop waits on all of them (and on the deadline) until each has its answer,
/// read to its limit, or its time ran out.
struct WitOutbound;

use crate::bindings::wasi::http::outgoing_handler;
use crate::bindings::wasi::http::types::{
    ErrorCode, FutureIncomingResponse, IncomingBody, OutgoingRequest, RequestOptions,
    Scheme as WasiScheme,
};
use crate::bindings::wasi::io::streams::InputStream;

/// Where one request is.
enum Exchanging {
    /// Sent; its answer's head is awaited.
    Waiting(FutureIncomingResponse),
    /// Its head came; its body is being read. The stream is dropped before its body.
    Reading {
        status: u16,
        stream: InputStream,
        body: IncomingBody,
        read: Vec<u8>,
    },
    Done(Result<caps::Answer, String>),
}

impl caps::Outbound for WitOutbound {
    fn post_all(
        &self,
        requests: &[caps::Outgoing],
        timeout_ms: u64,
        body_bytes_max: usize,
    ) -> Vec<caps::Exchange> {
        use crate::bindings::wasi::clocks::monotonic_clock;
        let started = monotonic_clock::now();
        let deadline = started + timeout_ms * 1_000_000;
        let mut states: Vec<Exchanging> = requests.iter().map(|r| start(r, timeout_ms)).collect();
        let mut ended = vec![0u64; requests.len()];
        loop {
            let now = monotonic_clock::now();
            for (state, end) in states.iter_mut().zip(ended.iter_mut()) {
                if !matches!(state, Exchanging::Done(_)) {
                    let next = advance(
                        std::mem::replace(state, Exchanging::Done(Err(String::new()))),
                        body_bytes_max,
                    );
                    *state = next;
                }
                if matches!(state, Exchanging::Done(_)) && *end == 0 {
                    *end = now.max(started + 1);
                }
            }
            if states.iter().all(|s| matches!(s, Exchanging::Done(_))) {
                break;
            }
            if now >= deadline {
                for (state, end) in states.iter_mut().zip(ended.iter_mut()) {
                    if !matches!(state, Exchanging::Done(_)) {
                        *state = Exchanging::Done(Err(format!(
                            "no complete answer within {} seconds",
                            timeout_ms / 1000
                        )));
                        *end = now;
                    }
                }
                break;
            }
            let mut pollables = vec![monotonic_clock::subscribe_instant(deadline)];
            for state in &states {
                match state {
                    Exchanging::Waiting(future) => pollables.push(future.subscribe()),
                    Exchanging::Reading { stream, .. } => pollables.push(stream.subscribe()),
                    Exchanging::Done(_) => {}
                }
            }
            let refs: Vec<&crate::bindings::wasi::io::poll::Pollable> = pollables.iter().collect();
            crate::bindings::wasi::io::poll::poll(&refs);
        }
        states
            .into_iter()
            .zip(ended)
            .map(|(state, end)| caps::Exchange {
                answer: match state {
                    Exchanging::Done(answer) => answer,
                    Exchanging::Waiting(_) | Exchanging::Reading { .. } => Err("no answer".into()),
                },
                millis: u32::try_from(end.saturating_sub(started) / 1_000_000).unwrap_or(u32::MAX),
            })
            .collect()
    }
}

/// Starts one request: its head and its whole body handed to the host, which sends it.
fn start(r: &caps::Outgoing, timeout_ms: u64) -> Exchanging {
    let failed = |why: String| Exchanging::Done(Err(why));
    let Some((https, authority, path)) = split_url(&r.url) else {
        return failed(format!("the URL {} cannot be sent to", r.url));
    };
    let mut headers: Vec<(String, Vec<u8>)> = r
        .headers
        .iter()
        .map(|(k, v)| (k.clone(), v.clone().into_bytes()))
        .collect();
    headers.push((
        "content-length".into(),
        r.body.len().to_string().into_bytes(),
    ));
    let Ok(fields) = Fields::from_list(&headers) else {
        return failed("a header of the request was refused".into());
    };
    let request = OutgoingRequest::new(fields);
    let scheme = if https {
        WasiScheme::Https
    } else {
        WasiScheme::Http
    };
    if request.set_method(&WasiMethod::Post).is_err()
        || request.set_scheme(Some(&scheme)).is_err()
        || request.set_authority(Some(authority)).is_err()
        || request.set_path_with_query(Some(&path)).is_err()
    {
        return failed(format!("the URL {} cannot be sent to", r.url));
    }
    let Ok(body) = request.body() else {
        return failed("the request's body could not be written".into());
    };
    let options = RequestOptions::new();
    let nanos = timeout_ms * 1_000_000;
    let _ = options.set_connect_timeout(Some(nanos));
    let _ = options.set_first_byte_timeout(Some(nanos));
    let _ = options.set_between_bytes_timeout(Some(nanos));
    // Sent first, so that the host takes the body as it is written.
    let future = match outgoing_handler::handle(request, Some(options)) {
        Ok(f) => f,
        Err(e) => return failed(error_text(&e)),
    };
    {
        let Ok(stream) = body.write() else {
            return failed("the request's body could not be written".into());
        };
        if !write_body(&stream, &r.body) {
            return failed("the receiver took not the whole body".into());
        }
    }
    if OutgoingBody::finish(body, None).is_err() {
        return failed("the request's body could not be ended".into());
    }
    Exchanging::Waiting(future)
}

/// One step of a request without waiting: its answer's head taken when it is there, what
/// its body holds now read.
fn advance(state: Exchanging, body_bytes_max: usize) -> Exchanging {
    match state {
        Exchanging::Waiting(future) => match future.get() {
            None => Exchanging::Waiting(future),
            Some(Ok(Ok(response))) => {
                let status = response.status();
                let Ok(body) = response.consume() else {
                    return Exchanging::Done(Ok(caps::Answer {
                        status,
                        body: Vec::new(),
                    }));
                };
                drop(response);
                match body.stream() {
                    Ok(stream) => advance(
                        Exchanging::Reading {
                            status,
                            stream,
                            body,
                            read: Vec::new(),
                        },
                        body_bytes_max,
                    ),
                    Err(()) => Exchanging::Done(Ok(caps::Answer {
                        status,
                        body: Vec::new(),
                    })),
                }
            }
            Some(Ok(Err(e))) => Exchanging::Done(Err(error_text(&e))),
            Some(Err(())) => Exchanging::Done(Err("the answer was taken twice".into())),
        },
        Exchanging::Reading {
            status,
            stream,
            body,
            mut read,
        } => loop {
            let room = body_bytes_max.saturating_sub(read.len());
            if room == 0 {
                drop(stream);
                drop(body);
                return Exchanging::Done(Ok(caps::Answer { status, body: read }));
            }
            match stream.read(room.min(16 * 1024) as u64) {
                Ok(chunk) if chunk.is_empty() => {
                    return Exchanging::Reading {
                        status,
                        stream,
                        body,
                        read,
                    };
                }
                Ok(chunk) => read.extend_from_slice(&chunk),
                Err(_) => {
                    drop(stream);
                    drop(body);
                    return Exchanging::Done(Ok(caps::Answer { status, body: read }));
                }
            }
        },
        done @ Exchanging::Done(_) => done,
    }
}

/// `https`, the authority and the path with its query of an http(s) URL.
fn split_url(url: &str) -> Option<(bool, &str, String)> {
    let (https, rest) = domain::webhooks::split_scheme(url)?;
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let tail = tail.split('#').next().unwrap_or_default();
    let path = if tail.starts_with('/') {
        tail.to_owned()
    } else {
        format!("/{tail}")
    };
    Some((https, authority, path))
}

/// What an error of `wasi:http` means, for the delivery log.
fn error_text(e: &ErrorCode) -> String {
    match e {
        ErrorCode::DestinationIpProhibited => "refused: the URL's host is, or resolves to, an \
            address of the private network (loopback, private, link-local, unique-local, \
            multicast or unspecified)"
            .into(),
        ErrorCode::DnsError(_) | ErrorCode::DestinationNotFound => {
            "the URL's host name could not be resolved".into()
        }
        ErrorCode::ConnectionRefused => "the receiver refused the connection".into(),
        ErrorCode::ConnectionTimeout => "connecting to the receiver timed out".into(),
        ErrorCode::ConnectionReadTimeout | ErrorCode::HttpResponseTimeout => {
            "the receiver did not answer in time".into()
        }
        ErrorCode::TlsCertificateError => "the receiver's TLS certificate was refused".into(),
        ErrorCode::HttpRequestDenied => "the service sends no requests here".into(),
        other => format!("the request failed: {other:?}"),
    }
}
