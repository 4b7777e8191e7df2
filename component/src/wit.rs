//! The WIT-backed side: `caps` implemented on the imported interfaces, and the transport
//! between `wasi:http` values and `http::Request`/`Response`, incoming and (webhook
//! deliveries, `WitOutbound`) outgoing.

use crate::bindings::admin::{AccountKey, CheckReport, Migration, UpkeepReport};
use crate::bindings::faktura::service::store as kv;
use crate::bindings::wasi::http::types::{
    Fields, IncomingRequest, Method as WasiMethod, OutgoingBody, OutgoingResponse, ResponseOutparam,
};
use crate::bindings::wasi::io::streams::{OutputStream, StreamError};
use crate::caps::{self, Caps, Entry, StoreError};
use crate::domain::{self, accounts, opening};
use crate::http::{self, Body, Method, Request};
use crate::limits;

struct WitStore;
struct WitRead(kv::ReadTxn);
/// A write transaction, with what it keeps of `get_cached`, the writes it holds back
/// (`caps::Held`; behind a cell, since they go out before reads, which borrow) and the
/// ids it took ahead (`caps::SpareIds`).
struct WitWrite(
    kv::WriteTxn,
    caps::ReadCache,
    std::cell::RefCell<caps::Held>,
    caps::SpareIds,
);

impl WitWrite {
    /// Sends the held writes, if any.
    fn send_held(&self) -> Result<(), StoreError> {
        self.2.borrow_mut().send(|writes| {
            let writes: Vec<kv::Write> = writes
                .into_iter()
                .map(|(key, value)| kv::Write { key, value })
                .collect();
            self.0.write_many(&writes).map_err(store_error)
        })
    }

    fn hold(&mut self, key: &[u8], value: Option<&[u8]>) -> Result<(), StoreError> {
        self.1.written(key, value);
        if let Some(v) = value
            && v.len() > limits::HELD_WRITE_BYTES_MAX
        {
            // A value this large (a file) goes out on its own call, after the ones held
            // before it, without a copy held in the instance's memory.
            self.send_held()?;
            return self.0.put(key, v).map_err(store_error);
        }
        if self.2.get_mut().hold(key, value) {
            self.send_held()?;
        }
        Ok(())
    }
}
struct WitClock;
struct WitPdf;
struct WitMail;
struct WitRate;
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

fn rate_window(w: crate::bindings::faktura::service::ratelimit::Window) -> caps::RateWindow {
    caps::RateWindow {
        limit: w.limit,
        remaining: w.remaining,
        reset: w.reset,
        allowed: w.allowed,
    }
}

impl caps::RateLimit for WitRate {
    fn hit(&self, bucket: &str) -> caps::RateWindow {
        rate_window(crate::bindings::faktura::service::ratelimit::hit(bucket))
    }

    fn hit_limited(&self, bucket: &str, limit: u32, window_secs: u32) -> caps::RateWindow {
        rate_window(crate::bindings::faktura::service::ratelimit::hit_limited(
            bucket,
            limit,
            window_secs,
        ))
    }
}
struct WitRandom;

fn store_error(e: kv::Error) -> StoreError {
    match e {
        kv::Error::Conflict => StoreError::Conflict,
        kv::Error::TooLarge => StoreError::TooLarge,
        kv::Error::Backend(m) => StoreError::Backend(m),
        kv::Error::UnknownOutcome(m) => StoreError::UnknownOutcome(m),
        kv::Error::Unavailable(m) => StoreError::Unavailable(m),
        kv::Error::Full(m) => StoreError::Full(m),
    }
}

fn entries(list: Vec<kv::Entry>) -> Vec<Entry> {
    list.into_iter().map(|e| (e.key, e.value)).collect()
}

/// Implements `caps::Read` on a WIT transaction resource (both kinds have the same reads):
/// each read asks `$ty::held` first (what a writer holds a write of) and reads from
/// `$ty::ready` (the resource, once a writer's held writes went out).
macro_rules! wit_read {
    ($ty:ty) => {
        impl caps::Read for $ty {
            fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
                if let Some(value) = self.held(key) {
                    return Ok(value);
                }
                self.ready()?.get(key).map_err(store_error)
            }
            fn get_many(&self, keys: &[Vec<u8>]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
                self.ready()?.get_many(keys).map_err(store_error)
            }
            fn scan(
                &self,
                prefix: &[u8],
                after: Option<&[u8]>,
                limit: u32,
                reverse: bool,
            ) -> Result<Vec<Entry>, StoreError> {
                self.ready()?
                    .scan(prefix, after, limit, reverse)
                    .map(entries)
                    .map_err(store_error)
            }
        }
    };
}

impl WitRead {
    fn held(&self, _key: &[u8]) -> Option<Option<Vec<u8>>> {
        None
    }
    fn ready(&self) -> Result<&kv::ReadTxn, StoreError> {
        Ok(&self.0)
    }
}

/// A writer's reads see its writes: a key it holds a write of is read from there, and for
/// any other read the held writes go out first.
impl WitWrite {
    fn held(&self, key: &[u8]) -> Option<Option<Vec<u8>>> {
        let held = self.2.borrow();
        if held.failed() {
            // A spent transaction answers its failure, through `ready`.
            return None;
        }
        held.last(key).map(|value| value.map(<[u8]>::to_vec))
    }
    fn ready(&self) -> Result<&kv::WriteTxn, StoreError> {
        self.send_held()?;
        Ok(&self.0)
    }
}

wit_read!(WitRead);
wit_read!(WitWrite);

impl caps::Write for WitWrite {
    fn put(&mut self, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
        self.hold(key, Some(value))
    }
    fn delete(&mut self, key: &[u8]) -> Result<(), StoreError> {
        self.hold(key, None)
    }
    fn get_cached(&mut self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        if let Some(value) = self.1.get(key) {
            return Ok(value);
        }
        let value = caps::Read::get(self, key)?;
        self.1.keep(key, value.clone());
        Ok(value)
    }
    fn next_ids(&mut self, counter: &[u8], n: u32) -> Result<Vec<u64>, StoreError> {
        // A counter is the store's to keep: held writes need to go out first only when
        // one of them is of the counter itself (or they failed: then nothing goes on).
        let held = self.2.get_mut();
        if held.holds(counter) || held.failed() {
            self.send_held()?;
        }
        self.0.next_ids(counter, n).map_err(store_error)
    }
    fn next_id_of_many(&mut self, counter: &[u8]) -> Result<u64, StoreError> {
        let mut spare = std::mem::take(&mut self.3);
        let id = spare.next(counter, |n| caps::Write::next_ids(self, counter, n));
        self.3 = spare;
        id
    }
    fn commit(self: Box<Self>) -> Result<(), StoreError> {
        self.send_held()?;
        kv::WriteTxn::commit(self.0).map_err(store_error)
    }
    fn as_read(&self) -> &dyn caps::Read {
        self
    }
}

impl caps::Store for WitStore {
    fn begin_read(&self) -> Result<Box<dyn caps::Read>, StoreError> {
        Ok(Box::new(WitRead(kv::begin_read().map_err(store_error)?)))
    }
    fn begin_write(&self) -> Result<Box<dyn caps::Write>, StoreError> {
        self.begin_write_in(&[])
    }
    fn begin_write_in(&self, scope: &[u8]) -> Result<Box<dyn caps::Write>, StoreError> {
        Ok(Box::new(WitWrite(
            kv::begin_write(scope).map_err(store_error)?,
            caps::ReadCache::default(),
            Default::default(),
            caps::SpareIds::default(),
        )))
    }
}

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

impl caps::Pdf for WitPdf {
    fn render(&self, doc: &caps::PdfDocument) -> Result<Vec<u8>, String> {
        use crate::bindings::faktura::service::pdf as wpdf;
        let rows = |rows: &[(String, String)]| -> Vec<wpdf::MetaRow> {
            rows.iter()
                .map(|(label, value)| wpdf::MetaRow {
                    label: label.clone(),
                    value: value.clone(),
                })
                .collect()
        };
        wpdf::render(&wpdf::Document {
            title: doc.title.clone(),
            sender: doc.sender.clone(),
            recipient: doc.recipient.clone(),
            meta: rows(&doc.meta),
            preamble: doc.preamble.clone(),
            items: wpdf::Table {
                header: doc.items.header.clone(),
                rows: doc.items.rows.clone(),
                right_aligned: doc.items.right_aligned.clone(),
            },
            totals: rows(&doc.totals),
            closing: doc.closing.clone(),
            footer: doc.footer.clone(),
            print: doc.print,
            conformance: if doc.archival {
                wpdf::Conformance::Pdfa3b
            } else {
                wpdf::Conformance::Plain
            },
            attachments: doc
                .attachments
                .iter()
                .map(|a| wpdf::EmbeddedFile {
                    filename: a.filename.clone(),
                    mimetype: a.mimetype.clone(),
                    description: a.description.clone(),
                    relationship: a.relationship.clone(),
                    modified: a.modified.clone(),
                    content: a.content.clone(),
                })
                .collect(),
            factur_x: doc
                .factur_x
                .as_ref()
                .map(|(level, filename)| wpdf::FacturXInfo {
                    document_type: "INVOICE".into(),
                    filename: filename.clone(),
                    version: "1.0".into(),
                    conformance_level: level.clone(),
                }),
            matrix: doc.matrix.as_ref().map(|m| wpdf::ModuleMatrix {
                caption: m.caption.clone(),
                modules: m.modules.clone(),
            }),
        })
    }

    fn thumbnail(
        &self,
        paragraphs: &[String],
        format: caps::ImageFormat,
    ) -> Result<Vec<u8>, String> {
        use crate::bindings::faktura::service::pdf as wpdf;
        let format = match format {
            caps::ImageFormat::Png => wpdf::ImageFormat::Png,
            caps::ImageFormat::Gif => wpdf::ImageFormat::Gif,
            caps::ImageFormat::Jpg => wpdf::ImageFormat::Jpg,
        };
        wpdf::thumbnail(
            &wpdf::PageText {
                paragraphs: paragraphs.to_vec(),
            },
            format,
        )
    }
}

impl caps::Mail for WitMail {
    fn send(&self, msg: &caps::Message) -> Result<String, caps::MailError> {
        use crate::bindings::faktura::service::mail as wmail;
        let message = wmail::Message {
            from: msg.from.clone(),
            to: msg.to.clone(),
            cc: msg.cc.clone(),
            bcc: msg.bcc.clone(),
            subject: msg.subject.clone(),
            body: msg.body.clone(),
            attachments: attachments(&msg.attachments),
        };
        wmail::send(&message).map_err(mail_error)
    }

    fn post(&self, letter: &caps::Letter) -> Result<String, caps::MailError> {
        use crate::bindings::faktura::service::mail as wmail;
        wmail::post(&wmail::Letter {
            address: letter.address.clone(),
            documents: attachments(&letter.documents),
            color: letter.color,
            duplex: letter.duplex,
            paper_weight: letter.paper_weight,
        })
        .map_err(mail_error)
    }
}

fn mail_error(e: crate::bindings::faktura::service::mail::MailError) -> caps::MailError {
    use crate::bindings::faktura::service::mail::MailError as W;
    match e {
        W::NotConfigured(m) => caps::MailError::NotConfigured(m),
        W::Rejected(m) => caps::MailError::Rejected(m),
        W::Unavailable(m) => caps::MailError::Unavailable(m),
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

/// Attachments as the `mail` interface takes them.
fn attachments(
    list: &[caps::Attachment],
) -> Vec<crate::bindings::faktura::service::mail::Attachment> {
    list.iter()
        .map(|a| crate::bindings::faktura::service::mail::Attachment {
            filename: a.filename.clone(),
            mimetype: a.mimetype.clone(),
            content: a.content.clone(),
        })
        .collect()
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
