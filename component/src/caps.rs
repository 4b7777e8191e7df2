//! The capabilities the component needs from its host, as small traits.
//!
//! The WIT-backed implementations live in `wit.rs`; `mem` holds in-memory fakes for native
//! unit tests. Nothing here knows what an invoice is.

use std::cell::RefCell;
use std::fmt;
use std::rc::Rc;

/// A failure of the storage backend. Only `Conflict` is worth retrying.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreError {
    Conflict,
    TooLarge,
    Backend(String),
    /// The commit may or may not have been kept.
    UnknownOutcome(String),
    /// The store cannot be reached now; nothing was kept.
    Unavailable(String),
    /// The store's disk is full; from a commit, the commit may or may not have been kept.
    Full(String),
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::Conflict => f.write_str("write conflict"),
            StoreError::TooLarge => f.write_str("key or value too large"),
            StoreError::Backend(m) => write!(f, "storage backend: {m}"),
            StoreError::UnknownOutcome(m) => write!(f, "commit outcome unknown: {m}"),
            StoreError::Unavailable(m) => write!(f, "store unavailable: {m}"),
            StoreError::Full(m) => write!(f, "store full: {m}"),
        }
    }
}

pub type Entry = (Vec<u8>, Vec<u8>);

/// Lends `f` each entry of a scan's answer as the `store` interface packs it (`entries`:
/// every key and value one after the other in `bytes`, `ends` where each ends), in order,
/// once the ends were found to fit the buffer (else `Backend`, and `f` sees none); returns
/// how many there were.
pub fn lend_entries(
    bytes: &[u8],
    ends: &[u32],
    f: &mut dyn FnMut(&[u8], &[u8]),
) -> Result<usize, StoreError> {
    let fits = ends.len().is_multiple_of(2)
        && ends.windows(2).all(|w| w[0] <= w[1])
        && ends.last().map_or(0, |&e| e as usize) == bytes.len();
    if !fits {
        return Err(StoreError::Backend(
            "a scan answered entries that do not fit".into(),
        ));
    }
    let mut from = 0;
    for pair in ends.chunks_exact(2) {
        let (key_end, end) = (pair[0] as usize, pair[1] as usize);
        f(&bytes[from..key_end], &bytes[key_end..end]);
        from = end;
    }
    Ok(ends.len() / 2)
}

/// Lends `f` each of `entries` in order (`Read::scan_lent` of a reader whose answer comes
/// as a list); returns how many there were.
pub fn lend_all(entries: &[Entry], f: &mut dyn FnMut(&[u8], &[u8])) -> usize {
    for (k, v) in entries {
        f(k, v);
    }
    entries.len()
}

/// Reads of a transaction (a snapshot, or the writer's own view).
pub trait Read {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError>;
    /// The values of `keys` in their order (`None` where absent), in one call.
    fn get_many(&self, keys: &[Vec<u8>]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        keys.iter().map(|k| self.get(k)).collect()
    }
    /// Entries under `prefix` in key order (or reverse), strictly after `after`, at most
    /// `limit`, each lent to `f` in order: a reader whose answer comes packed
    /// (`lend_entries`) lends slices of it, allocating nothing per entry. Returns how many
    /// entries there were.
    fn scan_lent(
        &self,
        prefix: &[u8],
        after: Option<&[u8]>,
        limit: u32,
        reverse: bool,
        f: &mut dyn FnMut(&[u8], &[u8]),
    ) -> Result<usize, StoreError>;
    /// `scan_lent`'s entries, copied.
    fn scan(
        &self,
        prefix: &[u8],
        after: Option<&[u8]>,
        limit: u32,
        reverse: bool,
    ) -> Result<Vec<Entry>, StoreError> {
        let mut entries = Vec::new();
        self.scan_lent(prefix, after, limit, reverse, &mut |k, v| {
            entries.push((k.to_vec(), v.to_vec()))
        })?;
        Ok(entries)
    }
}

/// The writer. Dropping it without `commit` rolls back.
pub trait Write: Read {
    fn put(&mut self, key: &[u8], value: &[u8]) -> Result<(), StoreError>;
    fn delete(&mut self, key: &[u8]) -> Result<(), StoreError>;
    /// `n` new ids of the counter stored under `counter` (the store's `next-ids`): rising,
    /// not always consecutive. This default keeps the counter in the transaction, as a
    /// store with one writer at a time does.
    fn next_ids(&mut self, counter: &[u8], n: u32) -> Result<Vec<u64>, StoreError> {
        let last = match self.get(counter)? {
            Some(bytes) => u64::from_be_bytes(
                bytes
                    .as_slice()
                    .try_into()
                    .map_err(|_| StoreError::Backend("corrupt id counter".into()))?,
            ),
            None => 0,
        };
        let next = last + u64::from(n);
        self.put(counter, &next.to_be_bytes())?;
        Ok((last + 1..=next).collect())
    }
    /// One id of `counter` for a record a transaction may make any number of (the
    /// deliveries of the events it records), rising within the transaction. This default
    /// takes it as `next_ids` does; a writer whose calls into the store cost more than an
    /// id takes them in blocks (`SpareIds`).
    fn next_id_of_many(&mut self, counter: &[u8]) -> Result<u64, StoreError> {
        self.next_ids(counter, 1)?.pop().ok_or_else(no_id)
    }
    fn commit(self: Box<Self>) -> Result<(), StoreError>;
    /// The reading half, for code that only reads.
    fn as_read(&self) -> &dyn Read;
    /// `get` of a key that the transaction's code reads again and again (a switch on the
    /// path of every write, such as whether an account has webhooks): a writer that can
    /// keeps the value after the first read, in step with its own writes of the key. This
    /// default reads it each time.
    fn get_cached(&mut self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        self.get(key)
    }
}

/// What a writer keeps of `Write::get_cached`: the values it read, each updated by the
/// writer's own writes of its key.
#[derive(Default)]
pub struct ReadCache(Vec<(Vec<u8>, Option<Vec<u8>>)>);

impl ReadCache {
    /// The value kept for `key`, if it was read.
    pub fn get(&self, key: &[u8]) -> Option<Option<Vec<u8>>> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    }

    /// Keeps `value` as what `key` holds.
    pub fn keep(&mut self, key: &[u8], value: Option<Vec<u8>>) {
        match self.0.iter_mut().find(|(k, _)| k == key) {
            Some((_, v)) => *v = value,
            None => self.0.push((key.to_vec(), value)),
        }
    }

    /// A write of `key` (`None`: its delete): a cached value follows it.
    pub fn written(&mut self, key: &[u8], value: Option<&[u8]>) {
        if let Some((_, v)) = self.0.iter_mut().find(|(k, _)| k == key) {
            *v = value.map(<[u8]>::to_vec);
        }
    }
}

/// What a store that answered an ask for ids with none did wrong.
pub fn no_id() -> StoreError {
    StoreError::Backend("the store gave no id".into())
}

/// The ids a writer took ahead for `Write::next_id_of_many`, per counter: each call into
/// the store takes twice as many as the one before in the same transaction (1, 2, 4, ...,
/// at most `SPARE_IDS_MAX`), and hands them out in their order before it asks again. A
/// transaction that makes one record asks for one id, as before; one that makes seven
/// (an invoice and its items, each event delivered) asks three times instead of seven.
/// Ids of a block it does not use are gaps, which ids may have (`store.next-ids`).
#[derive(Default)]
pub struct SpareIds(Vec<(Vec<u8>, Vec<u64>, u32)>);

/// The largest block `SpareIds` asks for.
const SPARE_IDS_MAX: u32 = 64;

impl SpareIds {
    /// The next id of `counter`; `take(n)` asks the store for `n` more when none is left.
    pub fn next(
        &mut self,
        counter: &[u8],
        take: impl FnOnce(u32) -> Result<Vec<u64>, StoreError>,
    ) -> Result<u64, StoreError> {
        let at = match self.0.iter().position(|(c, _, _)| c == counter) {
            Some(at) => at,
            None => {
                self.0.push((counter.to_vec(), Vec::new(), 0));
                self.0.len() - 1
            }
        };
        let (_, spare, last) = &mut self.0[at];
        if spare.is_empty() {
            let n = (*last * 2).clamp(1, SPARE_IDS_MAX);
            let mut ids = take(n)?;
            ids.reverse();
            *spare = ids;
            *last = n;
        }
        spare.pop().ok_or_else(no_id)
    }
}

/// A snapshot that answers some reads from one call to the store made beforehand
/// (`Read::get_many`): every call into the store costs more than the read it makes (the
/// crossing, the lookup, the copies both ways), and a request that knows which records it
/// will read (a portal page: the link's document, the account's clock, settings and
/// portal key) asks for them at once. Reads of other keys, and scans, go to the snapshot;
/// a fetched key reads the same whenever it is read.
pub struct Prefetched<R> {
    inner: R,
    fetched: ReadCache,
}

impl<R: Read> Prefetched<R> {
    /// `inner` with the values of `keys` fetched in one call.
    pub fn new(inner: R, keys: Vec<Vec<u8>>) -> Result<Prefetched<R>, StoreError> {
        let values = inner.get_many(&keys)?;
        Ok(Prefetched {
            fetched: ReadCache(keys.into_iter().zip(values).collect()),
            inner,
        })
    }
}

impl<R: Read> Read for Prefetched<R> {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        match self.fetched.get(key) {
            Some(value) => Ok(value),
            None => self.inner.get(key),
        }
    }

    fn get_many(&self, keys: &[Vec<u8>]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        let known: Vec<_> = keys.iter().map(|k| self.fetched.get(k)).collect();
        let missing: Vec<Vec<u8>> = keys
            .iter()
            .zip(&known)
            .filter(|(_, v)| v.is_none())
            .map(|(k, _)| k.clone())
            .collect();
        let mut read = if missing.is_empty() {
            Vec::new()
        } else {
            self.inner.get_many(&missing)?
        }
        .into_iter();
        known
            .into_iter()
            .map(|v| match v {
                Some(value) => Ok(value),
                None => read
                    .next()
                    .ok_or_else(|| StoreError::Backend("get_many answered too few".into())),
            })
            .collect()
    }

    fn scan_lent(
        &self,
        prefix: &[u8],
        after: Option<&[u8]>,
        limit: u32,
        reverse: bool,
        f: &mut dyn FnMut(&[u8], &[u8]),
    ) -> Result<usize, StoreError> {
        self.inner.scan_lent(prefix, after, limit, reverse, f)
    }
}

/// Writes a writer holds back to send in one call (the store's `write-many`): a writer's
/// puts and deletes come in runs between its reads (a document, its items, their index
/// entries and events), and each call into the store costs more than a small write. They
/// go out in their order before the writer's next read, before its commit, and when
/// they pass `limits::HELD_WRITE_BYTES_MAX`; a transaction dropped without commit drops
/// them. Error for error, a write refused when they go out fails the transaction as it
/// would have on its own call; and since some held writes after it were then never
/// made, the transaction is spent: every later call and its commit fail with that error
/// (`failed`), so that it can never commit without them.
#[derive(Default)]
pub struct Held {
    writes: Vec<(Vec<u8>, Option<Vec<u8>>)>,
    bytes: usize,
    failed: Option<StoreError>,
}

impl Held {
    /// Sends the held writes through `send`, once; after a failure, only that failure.
    pub fn send(
        &mut self,
        send: impl FnOnce(Vec<(Vec<u8>, Option<Vec<u8>>)>) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        if self.writes.is_empty() {
            return Ok(());
        }
        self.bytes = 0;
        let result = send(std::mem::take(&mut self.writes));
        if let Err(e) = &result {
            self.failed = Some(e.clone());
        }
        result
    }

    /// Holds the write of `value` under `key` (`None`: its delete); true when the held
    /// writes should go out now.
    pub fn hold(&mut self, key: &[u8], value: Option<&[u8]>) -> bool {
        self.bytes += key.len() + value.map_or(0, <[u8]>::len);
        self.writes.push((key.to_vec(), value.map(<[u8]>::to_vec)));
        self.bytes > crate::limits::HELD_WRITE_BYTES_MAX
    }

    /// Whether sending them failed: the transaction is spent.
    pub fn failed(&self) -> bool {
        self.failed.is_some()
    }

    /// The value the last held write of `key` leaves (`Some(None)`: deleted); `None`
    /// when no held write is of it. A writer's read of a key it just wrote (a document
    /// its items' events show) is answered here, without sending anything.
    pub fn last(&self, key: &[u8]) -> Option<Option<&[u8]>> {
        self.writes
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_deref())
    }

    /// Whether a held write is of `key`.
    pub fn holds(&self, key: &[u8]) -> bool {
        self.writes.iter().any(|(k, _)| k == key)
    }
}

pub trait Store {
    fn begin_read(&self) -> Result<Box<dyn Read>, StoreError>;
    fn begin_write(&self) -> Result<Box<dyn Write>, StoreError>;
    /// A write transaction for `scope` (the account a request writes): writers of one
    /// scope take turns where the store lets writers run side by side, so that they wait
    /// instead of colliding (`store.begin-write` in the WIT). A layer that knows no better
    /// begins an unscoped one.
    fn begin_write_in(&self, _scope: &[u8]) -> Result<Box<dyn Write>, StoreError> {
        self.begin_write()
    }
    /// Whether the request runs in one transaction committed at its end (a request with
    /// an `Idempotency-Key`, whose answer commits with its writes): a write transaction
    /// then does not run again by itself after a conflict (the whole request does).
    fn whole_request(&self) -> bool {
        false
    }
    /// Keeps recorded message `id` (`domain::dispatch`) to be handed to mail after the
    /// request's commit; false when no such commit is pending and the caller hands it
    /// over itself.
    fn hand_over_after_commit(&self, _id: u64) -> bool {
        false
    }
}

/// A store whose reads share one snapshot until a write begins or commits: a request
/// authenticates and handles a GET on one read transaction instead of opening one each,
/// and its reads after a write see that write.
pub struct SharedSnapshot<S> {
    inner: S,
    snapshot: Rc<RefCell<Option<Rc<dyn Read>>>>,
}

impl<S: Store> SharedSnapshot<S> {
    pub fn new(inner: S) -> SharedSnapshot<S> {
        SharedSnapshot {
            inner,
            snapshot: Rc::default(),
        }
    }
}

impl<S: Store> Store for SharedSnapshot<S> {
    fn begin_read(&self) -> Result<Box<dyn Read>, StoreError> {
        let mut snapshot = self.snapshot.borrow_mut();
        let shared = match &*snapshot {
            Some(read) => read.clone(),
            None => snapshot.insert(Rc::from(self.inner.begin_read()?)).clone(),
        };
        Ok(Box::new(shared))
    }

    fn begin_write(&self) -> Result<Box<dyn Write>, StoreError> {
        self.begin_write_in(&[])
    }

    fn begin_write_in(&self, scope: &[u8]) -> Result<Box<dyn Write>, StoreError> {
        self.snapshot.borrow_mut().take();
        Ok(Box::new(ForgetOnCommit {
            inner: self.inner.begin_write_in(scope)?,
            snapshot: self.snapshot.clone(),
        }))
    }
}

/// The store of one account's request: its write transactions are scoped to the account
/// (`Store::begin_write_in`), so that writers of one account take turns instead of
/// colliding.
pub struct Scoped<'a> {
    pub inner: &'a dyn Store,
    pub scope: Vec<u8>,
}

impl<'a> Scoped<'a> {
    /// `inner` scoped to the account `account`: its writers take turns.
    pub fn account(inner: &'a dyn Store, account: u64) -> Scoped<'a> {
        Scoped {
            inner,
            scope: account.to_be_bytes().to_vec(),
        }
    }
}

impl Store for Scoped<'_> {
    fn begin_read(&self) -> Result<Box<dyn Read>, StoreError> {
        self.inner.begin_read()
    }

    fn begin_write(&self) -> Result<Box<dyn Write>, StoreError> {
        self.inner.begin_write_in(&self.scope)
    }

    fn begin_write_in(&self, scope: &[u8]) -> Result<Box<dyn Write>, StoreError> {
        self.inner.begin_write_in(scope)
    }

    fn whole_request(&self) -> bool {
        self.inner.whole_request()
    }

    fn hand_over_after_commit(&self, id: u64) -> bool {
        self.inner.hand_over_after_commit(id)
    }
}

/// Implements `Read` for a type by handing every call to the reader `$inner` names
/// (`self` is `$this` there).
macro_rules! forward_read {
    ($ty:ty, |$this:ident| $inner:expr) => {
        forward_read!(@generic [] $ty, |$this| $inner);
    };
    (@generic [$($generics:tt)*] $ty:ty, |$this:ident| $inner:expr) => {
        impl<$($generics)*> Read for $ty {
            fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
                let $this = self;
                $inner.get(key)
            }
            fn get_many(&self, keys: &[Vec<u8>]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
                let $this = self;
                $inner.get_many(keys)
            }
            fn scan_lent(
                &self,
                prefix: &[u8],
                after: Option<&[u8]>,
                limit: u32,
                reverse: bool,
                f: &mut dyn FnMut(&[u8], &[u8]),
            ) -> Result<usize, StoreError> {
                let $this = self;
                $inner.scan_lent(prefix, after, limit, reverse, f)
            }
        }
    };
}

pub(crate) use forward_read;

// A shared snapshot reads as the snapshot.
forward_read!(@generic [R: Read + ?Sized] Rc<R>, |rc| (**rc));
forward_read!(@generic [R: Read + ?Sized] Box<R>, |b| (**b));

/// A writer whose commit ends the shared snapshot (one taken while it was open does not
/// hold its writes).
struct ForgetOnCommit {
    inner: Box<dyn Write>,
    snapshot: Rc<RefCell<Option<Rc<dyn Read>>>>,
}

forward_read!(ForgetOnCommit, |w| w.inner);

impl Write for ForgetOnCommit {
    fn put(&mut self, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
        self.inner.put(key, value)
    }
    fn delete(&mut self, key: &[u8]) -> Result<(), StoreError> {
        self.inner.delete(key)
    }
    fn next_ids(&mut self, counter: &[u8], n: u32) -> Result<Vec<u64>, StoreError> {
        self.inner.next_ids(counter, n)
    }
    fn next_id_of_many(&mut self, counter: &[u8]) -> Result<u64, StoreError> {
        self.inner.next_id_of_many(counter)
    }
    fn commit(self: Box<Self>) -> Result<(), StoreError> {
        self.snapshot.borrow_mut().take();
        self.inner.commit()
    }
    fn as_read(&self) -> &dyn Read {
        self
    }
    fn get_cached(&mut self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        self.inner.get_cached(key)
    }
}

/// Wall-clock time as Unix seconds.
pub trait Clock {
    fn now_unix(&self) -> i64;
}

/// Cryptographically secure random bytes (API keys).
pub trait Random {
    fn fill(&self, buf: &mut [u8]);
}

/// A table of a document: header, rows with as many cells, right-aligned column indexes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    pub right_aligned: Vec<u32>,
}

/// The Factur-X metadata every hybrid PDF carries beside its level: the document type and
/// the version of the Factur-X standard.
pub const FACTUR_X_DOCUMENT_TYPE: &str = "INVOICE";
pub const FACTUR_X_VERSION: &str = "1.0";

/// A layout-neutral document: what the PDF renderer draws, every text final.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PdfDocument {
    pub title: String,
    pub sender: Vec<String>,
    pub recipient: Vec<String>,
    pub meta: Vec<(String, String)>,
    pub preamble: Vec<String>,
    pub items: Table,
    pub totals: Vec<(String, String)>,
    pub closing: Vec<String>,
    pub footer: String,
    /// The print version, without background decoration.
    pub print: bool,
    /// PDF/A-3b when the PDF carries the e-invoice (a Factur-X hybrid).
    pub archival: bool,
    /// Files embedded in the PDF.
    pub attachments: Vec<EmbeddedFile>,
    /// The Factur-X metadata of a hybrid: its conformance level (`EN 16931`) and the
    /// name of the attachment with the XML.
    pub factur_x: Option<(String, String)>,
    /// A matrix drawn below the closing paragraphs (a QR code).
    pub matrix: Option<Matrix>,
}

/// A square matrix of modules drawn as filled squares where true (a QR code, without its
/// quiet zone), with lines of text beside it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Matrix {
    pub caption: Vec<String>,
    pub modules: Vec<Vec<bool>>,
}

/// A file embedded in a PDF (an associated file of PDF/A-3).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EmbeddedFile {
    pub filename: String,
    pub mimetype: String,
    pub description: String,
    /// `Alternative`, `Data`, `Source`, `Supplement` or `Unspecified`.
    pub relationship: String,
    /// ISO 8601 date-time of its last change.
    pub modified: String,
    pub content: Vec<u8>,
}

/// Image formats of thumbnails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageFormat {
    Png,
    Gif,
    Jpg,
}

/// Renders documents to PDF bytes; equal documents give equal bytes.
pub trait Pdf {
    fn render(&self, doc: &PdfDocument) -> Result<Vec<u8>, String>;
    /// A page-sized image of paragraphs laid out as on a PDF page.
    fn thumbnail(&self, paragraphs: &[String], format: ImageFormat) -> Result<Vec<u8>, String>;
}

/// A file attached to a message or letter.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Attachment {
    pub filename: String,
    pub mimetype: String,
    #[serde(with = "serde_bytes")]
    pub content: Vec<u8>,
}

/// An e-mail, every text final.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct Message {
    pub from: String,
    pub to: Vec<String>,
    pub cc: Vec<String>,
    pub bcc: Vec<String>,
    pub subject: String,
    pub body: String,
    pub attachments: Vec<Attachment>,
}

/// Why mail was not accepted.
#[derive(Debug, Clone, PartialEq)]
pub enum MailError {
    NotConfigured(String),
    Rejected(String),
    Unavailable(String),
}

/// A postal letter: the address and the PDF documents to print, in order.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct Letter {
    pub address: Vec<String>,
    pub documents: Vec<Attachment>,
    pub color: bool,
    pub duplex: bool,
    pub paper_weight: u32,
}

/// Sends mail durably: `Ok` means the message is queued or delivered, never lost.
pub trait Mail {
    fn send(&self, msg: &Message) -> Result<String, MailError>;
    /// Hands a letter to the postal print queue.
    fn post(&self, letter: &Letter) -> Result<String, MailError>;
}

/// The request count of a bucket in its current window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateWindow {
    pub limit: Option<u32>,
    pub remaining: u32,
    /// Unix seconds when the window ends.
    pub reset: u64,
    pub allowed: bool,
}

/// Counts requests per bucket.
pub trait RateLimit {
    /// One request of `bucket` (an account) against the host's limit and windows.
    fn hit(&self, bucket: &str) -> RateWindow;
    /// One request of `bucket` against `limit` requests per window of `window_secs`.
    fn hit_limited(&self, bucket: &str, limit: u32, window_secs: u32) -> RateWindow;
}

/// Settings the runtime hands over in the component's environment (`wasi:cli/environment`).
pub trait Environment {
    fn var(&self, name: &str) -> Option<String>;
}

/// An HTTP POST that leaves the service (a webhook's delivery): where to, its headers and
/// its body, all final.
#[derive(Debug, Clone, PartialEq)]
pub struct Outgoing {
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

/// The answer to an `Outgoing`: its status and the start of its body.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub status: u16,
    pub body: Vec<u8>,
}

/// What became of an `Outgoing`: the answer, or why there is none (a sentence for the
/// delivery log); and the milliseconds it took.
#[derive(Debug, Clone, PartialEq)]
pub struct Exchange {
    pub answer: Result<Answer, String>,
    pub millis: u32,
}

/// Sends HTTP requests out of the service. The host decides where they may go (it
/// refuses private addresses at connect time); the component decides what is sent.
pub trait Outbound {
    /// Sends every request at once and answers for each in their order, so that a slow
    /// receiver holds up no other: each gets at most `timeout_ms` for its whole exchange,
    /// redirects are answers (never followed), and at most `body_bytes_max` of an answer's
    /// body is read.
    fn post_all(
        &self,
        requests: &[Outgoing],
        timeout_ms: u64,
        body_bytes_max: usize,
    ) -> Vec<Exchange>;
}

/// Everything a request may use.
pub struct Caps<'a> {
    pub store: &'a dyn Store,
    pub clock: &'a dyn Clock,
    pub random: &'a dyn Random,
    pub pdf: &'a dyn Pdf,
    pub mail: &'a dyn Mail,
    pub rate: &'a dyn RateLimit,
    pub env: &'a dyn Environment,
    pub outbound: &'a dyn Outbound,
}

#[cfg(test)]
pub mod mem {
    //! In-memory fakes: a BTreeMap store whose write transaction buffers until commit.

    use super::*;
    use std::cell::{Cell, RefCell};
    use std::collections::BTreeMap;
    use std::rc::Rc;

    type Map = BTreeMap<Vec<u8>, Vec<u8>>;

    #[derive(Default, Clone)]
    pub struct MemStore {
        data: Rc<RefCell<Map>>,
    }

    struct Snapshot(Map);

    fn scan_map(
        map: &Map,
        prefix: &[u8],
        after: Option<&[u8]>,
        limit: u32,
        reverse: bool,
        f: &mut dyn FnMut(&[u8], &[u8]),
    ) -> usize {
        let iter = map
            .iter()
            .filter(|(k, _)| k.starts_with(prefix))
            .filter(|(k, _)| match after {
                None => true,
                Some(a) if reverse => k.as_slice() < a,
                Some(a) => k.as_slice() > a,
            });
        let found: Box<dyn Iterator<Item = _>> = if reverse {
            Box::new(iter.rev())
        } else {
            Box::new(iter)
        };
        let mut n = 0;
        for (k, v) in found.take(limit as usize) {
            f(k, v);
            n += 1;
        }
        n
    }

    impl Read for Snapshot {
        fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
            Ok(self.0.get(key).cloned())
        }
        fn scan_lent(
            &self,
            prefix: &[u8],
            after: Option<&[u8]>,
            limit: u32,
            reverse: bool,
            f: &mut dyn FnMut(&[u8], &[u8]),
        ) -> Result<usize, StoreError> {
            Ok(scan_map(&self.0, prefix, after, limit, reverse, f))
        }
    }

    struct Writer {
        target: Rc<RefCell<Map>>,
        view: Snapshot,
    }

    forward_read!(Writer, |w| w.view);

    impl Write for Writer {
        fn put(&mut self, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
            self.view.0.insert(key.to_vec(), value.to_vec());
            Ok(())
        }
        fn delete(&mut self, key: &[u8]) -> Result<(), StoreError> {
            self.view.0.remove(key);
            Ok(())
        }
        fn commit(self: Box<Self>) -> Result<(), StoreError> {
            *self.target.borrow_mut() = self.view.0;
            Ok(())
        }
        fn as_read(&self) -> &dyn Read {
            self
        }
    }

    impl Store for MemStore {
        fn begin_read(&self) -> Result<Box<dyn Read>, StoreError> {
            Ok(Box::new(Snapshot(self.data.borrow().clone())))
        }
        fn begin_write(&self) -> Result<Box<dyn Write>, StoreError> {
            Ok(Box::new(Writer {
                target: self.data.clone(),
                view: Snapshot(self.data.borrow().clone()),
            }))
        }
    }

    /// A clock that stands still unless moved.
    pub struct FixedClock(pub Cell<i64>);

    impl Clock for FixedClock {
        fn now_unix(&self) -> i64 {
            self.0.get()
        }
    }

    /// A stand-in renderer: a PDF header and the document's texts, one per line.
    pub struct TextPdf;

    impl Pdf for TextPdf {
        fn render(&self, doc: &PdfDocument) -> Result<Vec<u8>, String> {
            let mut out = String::from("%PDF-1.7 fake\n");
            out.push_str(&format!("{doc:?}"));
            Ok(out.into_bytes())
        }

        fn thumbnail(&self, paragraphs: &[String], format: ImageFormat) -> Result<Vec<u8>, String> {
            Ok(format!("{format:?} {paragraphs:?}").into_bytes())
        }
    }

    /// Deterministic bytes (a counter), good enough for tests.
    #[derive(Default)]
    pub struct CountingRandom(Cell<u8>);

    impl Random for CountingRandom {
        fn fill(&self, buf: &mut [u8]) {
            for b in buf {
                self.0.set(self.0.get().wrapping_add(1));
                *b = self.0.get();
            }
        }
    }

    /// Takes every message and letter, keeping none.
    pub struct NoMail;

    impl Mail for NoMail {
        fn send(&self, _msg: &Message) -> Result<String, MailError> {
            Ok("queued".into())
        }

        fn post(&self, _letter: &Letter) -> Result<String, MailError> {
            Ok("queued".into())
        }
    }

    /// No limit of the host's, a fixed window end; a limit the component names is
    /// counted, in one window that never ends.
    #[derive(Default)]
    pub struct Unlimited(RefCell<std::collections::HashMap<String, u32>>);

    impl RateLimit for Unlimited {
        fn hit(&self, _bucket: &str) -> RateWindow {
            RateWindow {
                limit: None,
                remaining: u32::MAX,
                reset: 1_795_000_500,
                allowed: true,
            }
        }

        fn hit_limited(&self, bucket: &str, limit: u32, _window_secs: u32) -> RateWindow {
            let mut counts = self.0.borrow_mut();
            let count = counts.entry(bucket.to_owned()).or_default();
            let allowed = *count < limit;
            if allowed {
                *count += 1;
            }
            RateWindow {
                limit: Some(limit),
                remaining: limit - *count,
                reset: 1_795_000_500,
                allowed,
            }
        }
    }

    /// An environment of fixed variables.
    #[derive(Default)]
    pub struct Vars(pub Vec<(String, String)>);

    /// A receiver of every outgoing request: keeps what was sent, and answers each with
    /// the next status of `statuses` (200 when none is left).
    #[derive(Default)]
    pub struct Receiver {
        pub sent: RefCell<Vec<Outgoing>>,
        pub statuses: RefCell<std::collections::VecDeque<u16>>,
    }

    impl Outbound for Receiver {
        fn post_all(
            &self,
            requests: &[Outgoing],
            _timeout_ms: u64,
            _body_bytes_max: usize,
        ) -> Vec<Exchange> {
            requests
                .iter()
                .map(|r| {
                    self.sent.borrow_mut().push(r.clone());
                    let status = self.statuses.borrow_mut().pop_front().unwrap_or(200);
                    Exchange {
                        answer: Ok(Answer {
                            status,
                            body: format!("answered {status}").into_bytes(),
                        }),
                        millis: 1,
                    }
                })
                .collect()
        }
    }

    impl Environment for Vars {
        fn var(&self, name: &str) -> Option<String> {
            self.0
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    /// The entries `lend_entries` lends from a packed answer, copied.
    fn lent(bytes: &[u8], ends: &[u32]) -> Result<Vec<super::Entry>, super::StoreError> {
        let mut entries = Vec::new();
        super::lend_entries(bytes, ends, &mut |k, v| {
            entries.push((k.to_vec(), v.to_vec()))
        })?;
        Ok(entries)
    }

    proptest! {
        /// A scan's entries come back whole from their packed form, keys and values empty
        /// or not; ends that do not fit the buffer are refused, never read past it.
        #[test]
        fn packed_entries_are_lent_whole_and_ends_that_do_not_fit_are_refused(
            entries in proptest::collection::vec(
                (proptest::collection::vec(any::<u8>(), 0..8), proptest::collection::vec(any::<u8>(), 0..8)),
                0..12,
            ),
            cut in any::<proptest::sample::Index>(),
        ) {
            let mut bytes = Vec::new();
            let mut ends = Vec::new();
            for (k, v) in &entries {
                bytes.extend_from_slice(k);
                ends.push(bytes.len() as u32);
                bytes.extend_from_slice(v);
                ends.push(bytes.len() as u32);
            }
            prop_assert_eq!(lent(&bytes, &ends), Ok(entries.clone()));
            if !ends.is_empty() {
                // An odd number of ends, an end past the buffer, ends running backwards,
                // and bytes left over are each refused.
                let odd = &ends[..ends.len() - 1];
                prop_assert!(lent(&bytes, odd).is_err());
                let mut past = ends.clone();
                *past.last_mut().expect("not empty") += 1;
                prop_assert!(lent(&bytes, &past).is_err());
                let mut seen = 0;
                prop_assert!(super::lend_entries(&bytes, &past, &mut |_, _| seen += 1).is_err());
                prop_assert_eq!(seen, 0, "nothing is lent from an answer that does not fit");
                let i = cut.index(ends.len());
                if i > 0 && ends[i - 1] > 0 {
                    let mut back = ends.clone();
                    back[i] = ends[i - 1] - 1;
                    prop_assert!(lent(&bytes, &back).is_err());
                }
            }
            let mut more = bytes.clone();
            more.push(0);
            prop_assert!(lent(&more, &ends).is_err());
        }
    }

    use super::mem::MemStore;
    use super::*;

    type Writes = Vec<(Vec<u8>, Option<Vec<u8>>)>;

    #[test]
    fn held_writes_go_out_once_in_their_order() {
        let mut held = Held::default();
        assert!(!held.hold(b"a", Some(b"1")));
        assert!(!held.hold(b"b", None));
        assert!(!held.hold(b"a", Some(b"2")));
        assert!(held.holds(b"b") && !held.holds(b"c"));
        assert_eq!(
            held.last(b"a"),
            Some(Some(b"2".as_slice())),
            "the last write counts"
        );
        assert_eq!(held.last(b"b"), Some(None));
        assert_eq!(held.last(b"c"), None);
        let mut sent: Vec<Writes> = Vec::new();
        for _ in 0..2 {
            held.send(|w| {
                sent.push(w);
                Ok(())
            })
            .unwrap();
        }
        let want: Writes = vec![
            (b"a".to_vec(), Some(b"1".to_vec())),
            (b"b".to_vec(), None),
            (b"a".to_vec(), Some(b"2".to_vec())),
        ];
        assert_eq!(
            sent,
            vec![want],
            "one call with all three, and none for nothing held"
        );
        assert!(!held.holds(b"b"));
    }

    #[test]
    fn held_writes_past_their_bound_ask_to_go_out() {
        let mut held = Held::default();
        let half = vec![0u8; crate::limits::HELD_WRITE_BYTES_MAX / 2];
        assert!(!held.hold(b"a", Some(&half)));
        assert!(held.hold(b"b", Some(&half)));
        held.send(|_| Ok(())).unwrap();
        assert!(
            !held.hold(b"c", Some(&half)),
            "sending counts from nothing again"
        );
    }

    #[test]
    fn a_transaction_whose_held_writes_failed_is_spent() {
        let mut held = Held::default();
        held.hold(b"a", Some(b"1"));
        let refused = held.send(|_| Err(StoreError::TooLarge));
        assert_eq!(refused, Err(StoreError::TooLarge));
        assert!(held.failed());
        // Later writes never go out, whatever comes: the commit fails as well.
        held.hold(b"b", Some(b"2"));
        let again = held.send(|_| panic!("a spent transaction sends nothing"));
        assert_eq!(again, Err(StoreError::TooLarge));
    }

    fn put(store: &dyn Store, key: &[u8]) {
        let mut w = store.begin_write().unwrap();
        w.put(key, b"v").unwrap();
        w.commit().unwrap();
    }

    fn has(store: &dyn Store, key: &[u8]) -> bool {
        store.begin_read().unwrap().get(key).unwrap().is_some()
    }

    #[test]
    fn reads_share_a_snapshot_until_a_write_begins_or_commits() {
        let inner = MemStore::default();
        let shared = SharedSnapshot::new(inner.clone());
        assert!(!has(&shared, b"a"));
        // Written past the shared store: its reads still share the snapshot of before.
        put(&inner, b"a");
        assert!(!has(&shared, b"a"), "one snapshot for the reads");
        // A write of its own ends the snapshot.
        put(&shared, b"b");
        assert!(has(&shared, b"a") && has(&shared, b"b"));
        // A snapshot taken while a write is open does not hold the write once committed.
        let mut w = shared.begin_write().unwrap();
        w.put(b"c", b"v").unwrap();
        assert!(!has(&shared, b"c"));
        w.commit().unwrap();
        assert!(has(&shared, b"c"), "the commit ended the snapshot");
    }

    #[test]
    fn spare_ids_come_in_doubling_blocks_handed_out_in_order() {
        let mut spare = SpareIds::default();
        let mut next = 0u64;
        let mut asked = Vec::new();
        let mut take = |n: u32| -> Result<Vec<u64>, StoreError> {
            asked.push(n);
            let ids = (next + 1..=next + u64::from(n)).collect();
            next += u64::from(n);
            Ok(ids)
        };
        let ids: Vec<u64> = (0..7)
            .map(|_| spare.next(b"c", &mut take).unwrap())
            .collect();
        assert_eq!(
            ids,
            [1, 2, 3, 4, 5, 6, 7],
            "rising, no gap when a block is used up"
        );
        let other = spare.next(b"d", &mut take).unwrap();
        assert_eq!(other, 8, "another counter has its own blocks");
        assert_eq!(spare.next(b"c", &mut take).unwrap(), 9);
        assert_eq!(
            asked,
            [1, 2, 4, 1, 8],
            "one call per block, each twice the last"
        );
        let mut refusing = SpareIds::default();
        let err = refusing.next(b"c", |_| Err(StoreError::TooLarge));
        assert_eq!(
            err,
            Err(StoreError::TooLarge),
            "the store's error, not an id"
        );
        assert!(
            refusing.next(b"c", |_| Ok(Vec::new())).is_err(),
            "an empty answer is no id"
        );
    }

    #[test]
    fn prefetched_keys_are_read_once_and_others_pass_through() {
        use std::cell::Cell;
        use std::rc::Rc;
        struct Counting(Box<dyn Read>, Cell<u32>);
        impl Read for Counting {
            fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
                self.1.set(self.1.get() + 1);
                self.0.get(key)
            }
            fn get_many(&self, keys: &[Vec<u8>]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
                self.1.set(self.1.get() + 1);
                keys.iter().map(|k| self.0.get(k)).collect()
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
        let store = MemStore::default();
        let mut w = store.begin_write().unwrap();
        for (k, v) in [(b"a", b"1"), (b"b", b"2"), (b"c", b"3")] {
            w.put(k, v).unwrap();
        }
        w.commit().unwrap();
        let inner = Rc::new(Counting(store.begin_read().unwrap(), Cell::new(0)));
        let keys = vec![b"a".to_vec(), b"x".to_vec()];
        let p = Prefetched::new(inner.clone(), keys).unwrap();
        assert_eq!(inner.1.get(), 1, "fetched in one call");
        assert_eq!(p.get(b"a").unwrap(), Some(b"1".to_vec()));
        assert_eq!(
            p.get(b"a").unwrap(),
            Some(b"1".to_vec()),
            "as often as asked"
        );
        assert_eq!(p.get(b"x").unwrap(), None, "an absent key is known absent");
        assert_eq!(inner.1.get(), 1);
        assert_eq!(p.get(b"b").unwrap(), Some(b"2".to_vec()));
        assert_eq!(inner.1.get(), 2, "another key is read from the snapshot");
        let many = p
            .get_many(&[b"c".to_vec(), b"a".to_vec(), b"x".to_vec(), b"b".to_vec()])
            .unwrap();
        assert_eq!(
            many,
            [
                Some(b"3".to_vec()),
                Some(b"1".to_vec()),
                None,
                Some(b"2".to_vec())
            ]
        );
        assert_eq!(inner.1.get(), 3, "only the keys not fetched, in one call");
        assert_eq!(p.scan(b"", None, 10, false).unwrap().len(), 3);
    }
}
