//! The redb backend: one file in the data dir, one table of byte keys (`faktura_providers::kv`),
//! with batched commit and group commit.
//!
//! It owns the database, the writer's gate, the open batch, each writer's undo log and the
//! commit numbering, and answers only with `DbError`: it names no WIT type, and the request
//! path reaches it only through `Backend` (`Redb`).
//!
//! redb allows one writer at a time; `begin-write` waits for its turn on an async gate so
//! that a waiting request never blocks a runtime thread. Reads use MVCC snapshots and never
//! wait.
//!
//! Batched commit: writers take turns writing into one shared redb transaction (a batch)
//! and each records what its writes replaced, so that a writer that ends without `commit`
//! (guest trap, error) puts those values back and leaves the batch as it found it. The
//! writer that ends its turn with nobody waiting (or a full or old batch) commits the
//! batch for every writer in it; the others wait for that. Concurrent requests thus share
//! one redb commit and write each hot page once, not once per request.
//!
//! What a writer's writes replaced is held in host memory until its turn ends, so it is
//! bounded (`UNDO_BYTES_MAX`): a write that would take a writer past the bound is refused
//! with `DbError::TooLarge` and leaves the batch as it was.
//!
//! Group commit: a batch commits without fsync (`Durability::None`, in place on the
//! runtime thread: CPU work and buffered writes); `commit` then returns only after a
//! durable commit (`Durability::Immediate`, which makes every earlier commit durable) has
//! covered it. Whoever waits first does that flush for everyone committed so far, so
//! concurrent writers share one fsync. Commits made visible before they are durable are
//! never shown to a client either: a request remembers the last commit its reads could
//! see, and the server holds its response until that commit is durable
//! (`Backend::visible`, `Backend::durable`).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use faktura_providers::kv::{self, TABLE};
use redb::{ReadableDatabase, ReadableTable};
use tokio::sync::{Mutex, OwnedMutexGuard, watch};

use super::backend::{self, Backend, BoxFuture, DbError, Entry};
use crate::metrics::StoreMetrics;

/// redb's own page cache (its default is 1 GiB); the kernel's page cache holds the rest of
/// the file without counting against the process. 64 MiB served the benchmark's reads as
/// fast as 128 MiB and lowered the host's peak RSS while seeding from 287 to 184 MiB.
const CACHE_BYTES: usize = 64 << 20;

/// Most writers one batch takes before it is committed.
const BATCH_WRITERS_MAX: usize = 32;
/// Longest a batch stays open once its first writer is done.
const BATCH_TIME_MAX: Duration = Duration::from_millis(10);
/// How long a writer waits for its batch's outcome before making sure someone commits it.
const BATCH_CHECK: Duration = Duration::from_secs(1);

/// Most bytes of one writer's undo log (each entry: its key and the value it replaced).
/// The log lives in host memory until the writer's turn ends, so without a bound one
/// request overwriting large values could hold any amount. 64 MiB is one value of the
/// largest size the store takes (`kv::VALUE_BYTES_MAX`), hundreds of times what a request
/// of the component writes.
const UNDO_BYTES_MAX: usize = 64 << 20;

/// Longest a closed store waits before the next attempt to open it again: requests in the
/// meantime are refused at once rather than each repairing the file.
const REOPEN_PAUSE: Duration = Duration::from_millis(500);

/// Bits of a commit number (`Backend::visible`) that count commits within one opening of
/// the database; the bits above them count the openings, so that a number taken before a
/// failure is never mistaken for one of the database opened after it.
const GENERATION_SHIFT: u32 = 40;

/// The store on redb, as the request path sees it: the open database (which each write
/// transaction holds too), and what it takes to open it again after its file failed.
///
/// redb refuses every call once a write or sync of its file failed (`PreviousIo`): the
/// database must be closed and opened again. The first request that finds it failed closes
/// it; a request then opens it again (redb's repair runs from the last durable commit), at
/// most once per `REOPEN_PAUSE`, and until that succeeds every request is refused with
/// `Unavailable` (`Full` while the disk is full), and `/readyz` says not ready. Commits made
/// visible but not yet durable when the file failed were never acknowledged: the opened
/// database holds them or not, whole.
pub(crate) struct Redb {
    path: PathBuf,
    metrics: StoreMetrics,
    /// The database, none while a failed one waits to be opened again.
    open: std::sync::RwLock<Option<Arc<Db>>>,
    /// The durable commit of each database closed after a failure, by generation: an
    /// answer whose reads saw a commit of one may be sent only when that commit was durable.
    closed: std::sync::Mutex<Vec<watch::Receiver<u64>>>,
    /// Held by the one request opening the database again.
    reopening: Mutex<Reopening>,
}

/// How opening the database again went so far.
struct Reopening {
    /// When it was last tried.
    tried: Option<Instant>,
    /// What requests are told until the next attempt: a full disk, or a failed one.
    refusal: DbError,
}

/// The guarded value, also after a panic in another request while it held the lock: every
/// value these locks guard is whole between two statements.
fn unpoisoned<G>(locked: std::sync::LockResult<G>) -> G {
    locked.unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Redb {
    /// Opens (or creates) the database file at `path`, reporting its commits to `metrics`.
    pub(crate) fn open(path: &Path, metrics: StoreMetrics) -> anyhow::Result<Redb> {
        let db =
            Db::open(path).with_context(|| format!("opening the database {}", path.display()))?;
        Ok(Redb {
            path: path.to_owned(),
            open: std::sync::RwLock::new(Some(Arc::new(Db {
                metrics: metrics.clone(),
                ..db
            }))),
            metrics,
            closed: std::sync::Mutex::new(Vec::new()),
            reopening: Mutex::new(Reopening {
                tried: None,
                refusal: refusal(false, None),
            }),
        })
    }

    fn current(&self) -> Option<Arc<Db>> {
        unpoisoned(self.open.read()).clone()
    }

    /// The open database, opened again when its file failed.
    async fn db(&self) -> Result<Arc<Db>, DbError> {
        match self.current() {
            Some(db) if !db.failed.failed() => Ok(db),
            _ => self.reopen().await,
        }
    }

    /// Closes the database whose file failed, and opens it again unless the last attempt
    /// was under `REOPEN_PAUSE` ago.
    async fn reopen(&self) -> Result<Arc<Db>, DbError> {
        let mut reopening = self.reopening.lock().await;
        {
            let mut open = unpoisoned(self.open.write());
            if let Some(db) = open.as_ref() {
                if !db.failed.failed() {
                    return Ok(db.clone());
                }
                reopening.refusal = db.failed.refusal();
                tracing::error!(
                    "the store's file failed; it is closed, and opened again once it can be \
                     written"
                );
                unpoisoned(self.closed.lock()).push(db.durable.subscribe());
                // The last handle but those of requests still under way, which fail at
                // their next call: redb closes the file when the last one goes.
                *open = None;
            }
        }
        if reopening
            .tried
            .is_some_and(|at| at.elapsed() < REOPEN_PAUSE)
        {
            return Err(reopening.refusal.clone());
        }
        reopening.tried = Some(Instant::now());
        let generation = unpoisoned(self.closed.lock()).len() as u64;
        let path = self.path.clone();
        let opened = tokio::task::spawn_blocking(move || Db::open(&path))
            .await
            .map_err(to_backend)
            .and_then(|r| r);
        let db = match opened {
            Ok(db) => Arc::new(Db {
                generation,
                metrics: self.metrics.clone(),
                ..db
            }),
            Err(e) => {
                tracing::warn!("opening the store again: {e}");
                // What requests are told keeps naming the failure that closed the file
                // (the file may still be held by requests under way on it), unless the
                // disk is full now.
                if let DbError::Full(_) = &e {
                    reopening.refusal = e;
                }
                return Err(reopening.refusal.clone());
            }
        };
        tracing::warn!(generation, "the store is open again");
        *unpoisoned(self.open.write()) = Some(db.clone());
        Ok(db)
    }
}

impl Backend for Redb {
    fn begin_read(&self) -> BoxFuture<'_, Result<Box<dyn backend::ReadTxn>, DbError>> {
        Box::pin(async move {
            let db = self.db().await?;
            let table = db
                .db
                .begin_read()
                .map_err(|e| db.error("reading", e))
                .and_then(|txn| txn.open_table(TABLE).map_err(|e| db.error("reading", e)))?;
            Ok(Box::new(Snapshot {
                table,
                failed: db.failed.clone(),
            }) as Box<dyn backend::ReadTxn>)
        })
    }

    fn begin_write(&self) -> BoxFuture<'_, Result<Box<dyn backend::WriteTxn>, DbError>> {
        Box::pin(async move {
            let db = self.db().await?;
            let turn = db.turn().await;
            Ok(Box::new(Writer {
                db,
                undo: Undo::default(),
                turn: Some(turn),
            }) as Box<dyn backend::WriteTxn>)
        })
    }

    fn visible(&self) -> u64 {
        self.current()
            .map_or(0, |db| db.generation << GENERATION_SHIFT | db.visible())
    }

    fn durable(&self, seq: u64) -> BoxFuture<'_, Result<(), DbError>> {
        Box::pin(async move {
            let generation = seq >> GENERATION_SHIFT;
            let seq = seq & ((1 << GENERATION_SHIFT) - 1);
            if seq == 0 {
                return Ok(());
            }
            if let Some(db) = self.current()
                && db.generation == generation
            {
                return db.durable(seq).await;
            }
            // A commit of a database closed after a failure: durable then, or never.
            let closed = unpoisoned(self.closed.lock());
            match closed.get(generation as usize) {
                Some(durable) if *durable.borrow() >= seq => Ok(()),
                _ => Err(DbError::Unknown(
                    "the store's file failed before what the request read was durable".into(),
                )),
            }
        })
    }
}

/// The database, the gate writers queue on, the open batch and the group commit.
struct Db {
    db: Arc<redb::Database>,
    writer: Arc<Mutex<()>>,
    /// Writers waiting for their turn.
    waiting: AtomicUsize,
    /// The batch writers add to; touched only by whoever holds the writer's turn.
    batch: std::sync::Mutex<Option<Batch>>,
    /// Batches opened, to tell one from the next.
    batches: AtomicU64,
    /// Number of the last commit begun, durable or not.
    committed: AtomicU64,
    /// Highest commit number known durable.
    durable: watch::Sender<u64>,
    /// Held by the one request flushing for everyone.
    flusher: Mutex<()>,
    /// Flushes done.
    flushes: AtomicU64,
    metrics: StoreMetrics,
    /// Which opening of the database this is (`Redb::reopen`).
    generation: u64,
    /// Set once a read, write or sync of the file failed: redb refuses every later call,
    /// and `Redb` opens the database again.
    failed: Arc<Failure>,
}

/// Whether a database's file failed, and whether for a full disk.
#[derive(Default)]
struct Failure {
    failed: AtomicBool,
    full: AtomicBool,
    /// What failed first, as the system said it (`No space left on device (os error 28)`).
    cause: std::sync::Mutex<Option<String>>,
}

impl Failure {
    fn failed(&self) -> bool {
        self.failed.load(Ordering::SeqCst)
    }

    /// What a request is told while the database is closed after this failure.
    fn refusal(&self) -> DbError {
        let cause = unpoisoned(self.cause.lock()).clone();
        refusal(self.full.load(Ordering::SeqCst), cause.as_deref())
    }

    /// Notes a failure of the file, the first one's `cause` kept.
    fn fail(&self, full: bool, cause: &dyn std::fmt::Display) {
        unpoisoned(self.cause.lock()).get_or_insert_with(|| cause.to_string());
        self.full.store(full, Ordering::SeqCst);
        self.failed.store(true, Ordering::SeqCst);
    }
}

/// What a request is told while the database is closed after a failure of its file, for a
/// full disk or another failure, and what failed when known.
fn refusal(full: bool, cause: Option<&str>) -> DbError {
    match (full, cause) {
        (true, Some(cause)) => DbError::Full(format!(
            "the disk is full ({cause}); the store is opened again once it has room"
        )),
        (true, None) => {
            DbError::Full("the disk is full; the store is opened again once it has room".into())
        }
        (false, Some(cause)) => DbError::Unavailable(format!(
            "{cause}; the store is opened again once its file can be written"
        )),
        (false, None) => {
            DbError::Unavailable("the store's file failed and is not open again yet".into())
        }
    }
}

/// What one writer's writes replaced, oldest first, to put back if it does not commit.
#[derive(Default)]
struct Undo {
    replaced: Vec<(Vec<u8>, Option<Vec<u8>>)>,
    /// Bytes of the keys and values in `replaced`; at most `UNDO_BYTES_MAX`.
    bytes: usize,
}

impl Db {
    /// Opens the file, and commits durably once: a database that opens can write.
    fn open(path: &Path) -> Result<Db, DbError> {
        let failed = Arc::new(Failure::default());
        let error = |e: redb::Error| classify(&failed, "opening", e);
        let db = redb::Builder::new()
            .set_cache_size(CACHE_BYTES)
            .create(path)
            .map_err(|e| error(e.into()))?;
        // Make sure the table exists so that read transactions can always open it.
        let txn = db.begin_write().map_err(|e| error(e.into()))?;
        kv::ensure_table(&txn).map_err(|e| error(e.into()))?;
        txn.commit().map_err(|e| error(e.into()))?;
        Ok(Db {
            db: Arc::new(db),
            writer: Arc::new(Mutex::new(())),
            waiting: AtomicUsize::new(0),
            batch: std::sync::Mutex::new(None),
            batches: AtomicU64::new(0),
            committed: AtomicU64::new(0),
            durable: watch::Sender::new(0),
            flusher: Mutex::new(()),
            flushes: AtomicU64::new(0),
            metrics: StoreMetrics::default(),
            generation: 0,
            failed,
        })
    }

    /// What a redb error means to a request; an error of the file marks this database
    /// failed.
    fn error(&self, doing: &str, e: impl Into<redb::Error>) -> DbError {
        classify(&self.failed, doing, e)
    }

    /// Waits for the writer's turn.
    async fn turn(&self) -> OwnedMutexGuard<()> {
        struct Waiting<'a>(&'a AtomicUsize);
        impl Drop for Waiting<'_> {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::SeqCst);
            }
        }
        self.waiting.fetch_add(1, Ordering::SeqCst);
        let _waiting = Waiting(&self.waiting);
        self.writer.clone().lock_owned().await
    }

    /// The slot of the open batch; a panic while it was held leaves it usable (every
    /// change to it is one assignment).
    fn slot(&self) -> std::sync::MutexGuard<'_, Option<Batch>> {
        unpoisoned(self.batch.lock())
    }

    /// The open batch, opened when there is none; for the holder of the turn.
    fn batch(&self) -> Result<std::sync::MutexGuard<'_, Option<Batch>>, DbError> {
        let mut slot = self.slot();
        if slot.is_none() {
            let txn = self
                .db
                .begin_write()
                .map_err(|e| self.error("writing", e))?;
            *slot = Some(Batch {
                txn,
                id: self.batches.fetch_add(1, Ordering::SeqCst) + 1,
                writers: 0,
                opened: Instant::now(),
                outcome: watch::Sender::new(None),
            });
        }
        Ok(slot)
    }

    /// Runs `f` on the batch's table; for the holder of the turn.
    fn in_batch<T>(
        &self,
        f: impl FnOnce(&mut redb::Table<&'static [u8], &'static [u8]>) -> Result<T, DbError>,
    ) -> Result<T, DbError> {
        let mut slot = self.batch()?;
        let batch = slot.as_mut().expect("batch() opens one");
        let mut table = batch
            .txn
            .open_table(TABLE)
            .map_err(|e| self.error("writing", e))?;
        f(&mut table)
    }

    /// Writes `value` under `key` (or removes it), noting in `undo` what was there. A write
    /// whose note would take `undo` past `UNDO_BYTES_MAX` is put back at once and refused
    /// with `TooLarge`. It is checked after the write, which returns what it replaced, so
    /// that every other write takes one lookup, not two; nobody else can see the batch
    /// while this writer holds the turn, so the write is never seen.
    fn write(&self, undo: &mut Undo, key: Vec<u8>, value: Option<&[u8]>) -> Result<(), DbError> {
        self.write_all(undo, [(key, value)])
    }

    /// The writes of `writes` in order, on the batch's table opened once for all of them
    /// (opening and closing it costs more than a small write); each noted in `undo` as
    /// `write` notes it. The first refused ends them: those before it are made.
    fn write_all<V: AsRef<[u8]>>(
        &self,
        undo: &mut Undo,
        writes: impl IntoIterator<Item = (Vec<u8>, Option<V>)>,
    ) -> Result<(), DbError> {
        let mut refused = None;
        self.in_batch(|table| {
            for (key, value) in writes {
                let value = value.as_ref().map(AsRef::as_ref);
                if value.is_some_and(|v| !kv::fits(&key, v)) {
                    return Err(DbError::TooLarge);
                }
                let old = match value {
                    Some(v) => table.insert(key.as_slice(), v),
                    None => table.remove(key.as_slice()),
                }
                .map_err(|e| self.error("writing", e))?
                .map(|v| v.value().to_vec());
                if value.is_none() && old.is_none() {
                    // Removing what is not there changed nothing and needs no note.
                    continue;
                }
                let bytes = key.len() + old.as_ref().map_or(0, Vec::len);
                if undo.bytes + bytes > UNDO_BYTES_MAX {
                    // Put back once the table is closed.
                    refused = Some((key, old));
                    return Err(DbError::TooLarge);
                }
                undo.bytes += bytes;
                undo.replaced.push((key, old));
            }
            Ok(())
        })
        .or_else(|e| match refused.take() {
            Some(write) => self.restore(&[write]).and(Err(e)),
            None => Err(e),
        })
    }

    /// Puts back what a turn's writes replaced, newest first. When that fails the batch
    /// cannot be trusted any more: none of its writers is acknowledged yet, so it is
    /// dropped for all of them.
    fn restore(&self, replaced: &[(Vec<u8>, Option<Vec<u8>>)]) -> Result<(), DbError> {
        let restored = self.in_batch(|table| {
            for (key, old) in replaced.iter().rev() {
                match old {
                    Some(v) => table.insert(key.as_slice(), v.as_slice()).map(drop),
                    None => table.remove(key.as_slice()).map(drop),
                }
                .map_err(|e| self.error("writing", e))?;
            }
            Ok(())
        });
        if let Err(e) = &restored
            && let Some(batch) = self.slot().take()
        {
            batch.outcome.send_replace(Some(Err(e.clone())));
        }
        restored
    }

    /// Ends a turn (`joined`: the writer committed into the batch): commits the batch when
    /// nobody waits to add to it (or it is full or old), else leaves it to the next writer.
    /// `None` when the batch holds nothing of anyone's.
    fn close_turn(
        &self,
        turn: OwnedMutexGuard<()>,
        joined: bool,
    ) -> Result<Option<Outcome>, DbError> {
        let mut slot = self.batch()?;
        let batch = slot.as_mut().expect("batch() opens one");
        if joined {
            batch.writers += 1;
        }
        let nobody_waits = self.waiting.load(Ordering::SeqCst) == 0;
        if batch.writers == 0 {
            // Only writers that rolled back: nothing to commit, their reads saw committed
            // data only.
            if nobody_waits {
                slot.take();
            }
            return Ok(None);
        }
        if nobody_waits
            || batch.writers >= BATCH_WRITERS_MAX
            || batch.opened.elapsed() >= BATCH_TIME_MAX
        {
            let batch = slot.take().expect("checked");
            drop(slot);
            return Ok(Some(Outcome::Committed(self.commit_batch(batch, turn))));
        }
        Ok(Some(Outcome::Open {
            outcome: batch.outcome.subscribe(),
            id: batch.id,
        }))
    }

    /// Ends a turn and returns the number of the commit that holds the batch, once there is
    /// one (`None`: the batch held nothing of anyone's).
    async fn end_turn(
        &self,
        turn: OwnedMutexGuard<()>,
        joined: bool,
    ) -> Result<Option<u64>, DbError> {
        let (mut outcome, id) = match self.close_turn(turn, joined)? {
            None => return Ok(None),
            Some(Outcome::Committed(result)) => return result.map(Some),
            Some(Outcome::Open { outcome, id }) => (outcome, id),
        };
        loop {
            let waited = tokio::time::timeout(BATCH_CHECK, outcome.wait_for(Option::is_some))
                .await
                .map(|r| r.map(|told| told.clone()));
            match waited {
                Ok(Ok(told)) => {
                    return told.expect("waited for an outcome").map(Some);
                }
                Ok(Err(_)) => {
                    return Err(DbError::Unavailable("the batch was dropped".into()));
                }
                Err(_) => {
                    // Nobody committed the batch yet (a writer that was waiting went away):
                    // take the turn and commit it.
                    tracing::warn!(batch = id, "batch still open after {BATCH_CHECK:?}");
                    let turn = self.turn().await;
                    let mut slot = self.slot();
                    if slot.as_ref().is_some_and(|b| b.id == id) {
                        let batch = slot.take().expect("checked");
                        drop(slot);
                        return self.commit_batch(batch, turn).map(Some);
                    }
                }
            }
        }
    }

    /// Ends a turn without commit: puts back what its writes replaced and waits, when its
    /// reads may have seen writes of others in the batch, until those are committed and
    /// durable, as a committed writer's answer would.
    async fn roll_back(&self, undo: Undo, turn: OwnedMutexGuard<()>) -> Result<(), DbError> {
        self.restore(&undo.replaced)?;
        drop(undo);
        match self.end_turn(turn, false).await? {
            Some(seq) => self.durable(seq).await,
            None => Ok(()),
        }
    }

    /// Ends a turn that cannot wait (its guest is gone): puts back what its writes
    /// replaced and leaves the batch to the others, committing it when it is the last.
    fn abandon(&self, undo: &Undo, turn: OwnedMutexGuard<()>) {
        let closed = self
            .restore(&undo.replaced)
            .and_then(|()| self.close_turn(turn, false));
        if let Err(e) = closed {
            tracing::error!("rolling back an abandoned write: {e:?}");
        }
    }

    /// Commits a batch without fsync for every writer in it, tells them its number, and
    /// ends the turn.
    fn commit_batch(&self, batch: Batch, turn: OwnedMutexGuard<()>) -> Result<u64, DbError> {
        let Batch {
            mut txn, outcome, ..
        } = batch;
        let result = txn
            .set_durability(redb::Durability::None)
            .map_err(|e| self.error("writing", e))
            .and_then(|()| {
                // Numbered before it becomes visible, so a reader never sees an unnumbered
                // commit. Without fsync a commit is CPU work and buffered writes (tens of
                // microseconds): done in place, which costs less than another thread.
                let seq = self.committed.fetch_add(1, Ordering::SeqCst) + 1;
                txn.commit()
                    .map_err(|e| self.error("writing", e))
                    .map(|()| seq)
            })
            .map_err(outcome_unknown);
        drop(turn);
        if result.is_ok() {
            self.metrics.batch_committed();
        }
        tell(&outcome, &result);
        result
    }

    /// The number of the last commit a transaction begun now may see.
    fn visible(&self) -> u64 {
        self.committed.load(Ordering::SeqCst)
    }

    /// Returns once commit number `seq` and all before it are durable, flushing them when
    /// nobody has. Waiters queue on the flusher's lock: the first flushes for all, the
    /// others find their commit durable when their turn comes. (Watching for a change
    /// instead lost a wake-up: a flush could end between a waiter's look and its wait.)
    async fn durable(&self, seq: u64) -> Result<(), DbError> {
        if *self.durable.borrow() >= seq {
            return Ok(());
        }
        let _flushing = self.flusher.lock().await;
        if *self.durable.borrow() >= seq {
            return Ok(());
        }
        // No commit may begin while the flush takes the writer's turn, so every commit
        // numbered up to `upto` is finished and the flush covers it. An open batch is
        // committed by the flush itself.
        let turn = self.writer.clone().lock_owned().await;
        let open = self.slot().take();
        let (txn, outcome, batch_seq) = match open {
            Some(Batch { txn, outcome, .. }) => (
                Some(txn),
                Some(outcome),
                Some(self.committed.fetch_add(1, Ordering::SeqCst) + 1),
            ),
            None => (None, None, None),
        };
        let upto = self.committed.load(Ordering::SeqCst);
        let db = self.db.clone();
        let failed = self.failed.clone();
        let flushed = tokio::task::spawn_blocking(move || {
            let error = |e: redb::Error| classify(&failed, "syncing", e);
            let mut txn = match txn {
                Some(t) => t,
                None => db.begin_write().map_err(|e| error(e.into()))?,
            };
            txn.set_durability(redb::Durability::Immediate)
                .map_err(|e| error(e.into()))?;
            let started = Instant::now();
            let result = txn.commit().map_err(|e| error(e.into()));
            drop(turn);
            result.map(|()| started.elapsed())
        })
        .await
        .map_err(to_backend)
        .and_then(|r| r)
        .map_err(outcome_unknown);
        if let (Some(outcome), Some(batch_seq)) = (outcome, batch_seq) {
            tell(
                &outcome,
                &flushed.as_ref().map(|_| batch_seq).map_err(Clone::clone),
            );
            if flushed.is_ok() {
                self.metrics.batch_committed();
            }
        }
        self.metrics.durable_commit(flushed?);
        self.flushes.fetch_add(1, Ordering::Relaxed);
        self.durable.send_modify(|d| *d = (*d).max(upto));
        Ok(())
    }
}

/// Tells a batch's writers the number of the commit that holds it, or why there is none.
fn tell(outcome: &watch::Sender<Option<Result<u64, DbError>>>, result: &Result<u64, DbError>) {
    outcome.send_replace(Some(result.clone()));
}

/// What a writer ending its turn waits for.
enum Outcome {
    /// It committed the batch itself.
    Committed(Result<u64, DbError>),
    /// The batch is left open for the next writer, who tells the outcome.
    Open {
        outcome: watch::Receiver<Option<Result<u64, DbError>>>,
        id: u64,
    },
}

/// The transaction writers share until it is committed.
struct Batch {
    txn: redb::WriteTransaction,
    id: u64,
    /// Writers that committed into it.
    writers: usize,
    opened: Instant,
    /// The commit's number once committed, or why it failed.
    outcome: watch::Sender<Option<Result<u64, DbError>>>,
}

/// A snapshot, with its table opened once for all of its reads.
struct Snapshot {
    table: redb::ReadOnlyTable<&'static [u8], &'static [u8]>,
    /// Its database's `Db::failed`.
    failed: Arc<Failure>,
}

impl backend::ReadTxn for Snapshot {
    fn get(&self, key: Vec<u8>) -> BoxFuture<'_, Result<Option<Vec<u8>>, DbError>> {
        ready(get(&self.table, &key, &self.failed))
    }

    fn get_many(&self, keys: Vec<Vec<u8>>) -> BoxFuture<'_, Result<Vec<Option<Vec<u8>>>, DbError>> {
        ready(
            keys.iter()
                .map(|k| get(&self.table, k, &self.failed))
                .collect(),
        )
    }

    fn scan(
        &self,
        prefix: Vec<u8>,
        after: Option<Vec<u8>>,
        limit: u32,
        reverse: bool,
    ) -> BoxFuture<'_, Result<Vec<Entry>, DbError>> {
        ready(scan(
            &self.table,
            &prefix,
            after.as_deref(),
            limit,
            reverse,
            &self.failed,
        ))
    }
}

/// One writer's turn in the batch: what its writes replaced, to put back if it does not
/// commit.
struct Writer {
    db: Arc<Db>,
    undo: Undo,
    /// Taken by `commit`, `rollback` and `drop`; still here when the guest is torn down (a
    /// trap) or a future of this writer was dropped before it took the turn.
    turn: Option<OwnedMutexGuard<()>>,
}

impl Drop for Writer {
    fn drop(&mut self) {
        if let Some(turn) = self.turn.take() {
            self.db.abandon(&self.undo, turn);
        }
    }
}

impl backend::WriteTxn for Writer {
    fn get(&mut self, key: Vec<u8>) -> BoxFuture<'_, Result<Option<Vec<u8>>, DbError>> {
        let failed = &self.db.failed;
        ready(self.db.in_batch(|table| get(&*table, &key, failed)))
    }

    fn get_many(
        &mut self,
        keys: Vec<Vec<u8>>,
    ) -> BoxFuture<'_, Result<Vec<Option<Vec<u8>>>, DbError>> {
        let failed = &self.db.failed;
        ready(
            self.db
                .in_batch(|table| keys.iter().map(|k| get(&*table, k, failed)).collect()),
        )
    }

    fn scan(
        &mut self,
        prefix: Vec<u8>,
        after: Option<Vec<u8>>,
        limit: u32,
        reverse: bool,
    ) -> BoxFuture<'_, Result<Vec<Entry>, DbError>> {
        let failed = &self.db.failed;
        ready(
            self.db
                .in_batch(|table| scan(&*table, &prefix, after.as_deref(), limit, reverse, failed)),
        )
    }

    fn put(&mut self, key: Vec<u8>, value: Vec<u8>) -> BoxFuture<'_, Result<(), DbError>> {
        // The limits of every backend (`write_all` checks them), so that what redb takes
        // (an import too) moves to PostgreSQL.
        ready(self.db.write(&mut self.undo, key, Some(&value)))
    }

    fn write_many(
        &mut self,
        writes: Vec<(Vec<u8>, Option<Vec<u8>>)>,
    ) -> BoxFuture<'_, Result<(), DbError>> {
        ready(self.db.write_all(&mut self.undo, writes))
    }

    fn delete(&mut self, key: Vec<u8>) -> BoxFuture<'_, Result<(), DbError>> {
        ready(self.db.write(&mut self.undo, key, None))
    }

    fn commit(mut self: Box<Self>) -> BoxFuture<'static, Result<(), DbError>> {
        // The writer moves into the future and takes its turn out only when polled: a
        // future dropped before that drops the writer, which rolls back.
        Box::pin(async move {
            let turn = self.turn.take().expect("a live transaction holds its turn");
            let db = Arc::clone(&self.db);
            // The writes are about to join the batch: what they replaced is not needed
            // any more, and is freed before the wait for the commit.
            drop(self);
            match db.end_turn(turn, true).await {
                Ok(Some(seq)) => db.durable(seq).await,
                Ok(None) => Err(DbError::Backend(
                    "a committed batch without its writer".into(),
                )),
                Err(e) => Err(e),
            }
        })
    }

    fn rollback(mut self: Box<Self>) -> BoxFuture<'static, Result<(), DbError>> {
        Box::pin(async move {
            let turn = self.turn.take().expect("a live transaction holds its turn");
            let undo = std::mem::take(&mut self.undo);
            let db = Arc::clone(&self.db);
            drop(self);
            db.roll_back(undo, turn).await
        })
    }
}

/// A future of what redb has already answered: its calls do not wait (a writer waits only
/// for its turn, in `begin_write`), so the work is done before the future is returned and
/// no lock is held across an await.
fn ready<'a, T: Send + 'a>(value: T) -> BoxFuture<'a, T> {
    Box::pin(std::future::ready(value))
}

fn to_backend(e: impl std::fmt::Display) -> DbError {
    DbError::Backend(e.to_string())
}

/// What a redb error means to a request. An error of the file (a read, write or sync that
/// failed) sets `failed`: redb refuses every later call (`PreviousIo`) until the database
/// is opened again. A full disk is `Full`; any other failure of the file `Unavailable`.
fn classify(failed: &Failure, doing: &str, e: impl Into<redb::Error>) -> DbError {
    let e: redb::Error = e.into();
    let message = e.to_string();
    match e {
        redb::Error::Io(io) => {
            tracing::error!("the store's file failed: {doing} it: {io}");
            let full = io.kind() == std::io::ErrorKind::StorageFull;
            let message = format!("{doing} the store's file: {io}");
            failed.fail(full, &message);
            if full {
                DbError::Full(message)
            } else {
                DbError::Unavailable(message)
            }
        }
        redb::Error::PreviousIo | redb::Error::DatabaseClosed => {
            failed.failed.store(true, Ordering::SeqCst);
            DbError::Unavailable(message)
        }
        // Another handle on the file not yet closed (a failed one, requests still under
        // way on it): opened again at a later attempt.
        redb::Error::DatabaseAlreadyOpen => DbError::Unavailable(message),
        _ => DbError::Backend(message),
    }
}

/// A commit that failed may have been kept: its batch was visible, and its file's last
/// write or sync failed part way.
fn outcome_unknown(e: DbError) -> DbError {
    match e {
        DbError::Unavailable(m) => DbError::Unknown(m),
        e => e,
    }
}

fn get(
    table: &impl ReadableTable<&'static [u8], &'static [u8]>,
    key: &[u8],
    failed: &Failure,
) -> Result<Option<Vec<u8>>, DbError> {
    let value = table.get(key).map_err(|e| classify(failed, "reading", e))?;
    Ok(value.map(|v| v.value().to_vec()))
}

fn scan(
    table: &impl ReadableTable<&'static [u8], &'static [u8]>,
    prefix: &[u8],
    after: Option<&[u8]>,
    limit: u32,
    reverse: bool,
    failed: &Failure,
) -> Result<Vec<Entry>, DbError> {
    kv::scan(table, prefix, after, limit, reverse).map_err(|e| classify(failed, "reading", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn put(db: &Db, key: &[u8]) -> u64 {
        let turn = db.turn().await;
        db.write(&mut Undo::default(), key.to_vec(), Some(b"v"))
            .unwrap();
        db.end_turn(turn, true).await.unwrap().unwrap()
    }

    fn committed(db: &Db) -> Vec<(Vec<u8>, Vec<u8>)> {
        let read = db.db.begin_read().unwrap();
        let table = read.open_table(TABLE).unwrap();
        table
            .iter()
            .unwrap()
            .map(|e| {
                let (k, v) = e.unwrap();
                (k.value().to_vec(), v.value().to_vec())
            })
            .collect()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn one_flush_makes_every_earlier_commit_durable() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("t.redb")).unwrap();
        let mut seqs = Vec::new();
        for i in 0..5u8 {
            seqs.push(put(&db, &[i]).await);
        }
        assert_eq!(seqs, [1, 2, 3, 4, 5]);
        // Committed and visible, not yet durable.
        assert_eq!(*db.durable.borrow(), 0);
        assert_eq!(db.visible(), 5);
        db.durable(3).await.unwrap();
        assert_eq!(
            *db.durable.borrow(),
            5,
            "the flush covers every commit before it"
        );
        assert_eq!(db.flushes.load(Ordering::Relaxed), 1);
        db.durable(5).await.unwrap();
        assert_eq!(
            db.flushes.load(Ordering::Relaxed),
            1,
            "nothing left to flush"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_writers_share_flushes_and_each_returns_durable() {
        let dir = tempfile::tempdir().unwrap();
        let db = Arc::new(Db::open(&dir.path().join("t.redb")).unwrap());
        let mut tasks = Vec::new();
        for i in 0..64u8 {
            let db = db.clone();
            tasks.push(tokio::spawn(async move {
                let seq = put(&db, &[i]).await;
                db.durable(seq).await.unwrap();
                assert!(*db.durable.borrow() >= seq);
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        let commits = db.committed.load(Ordering::SeqCst);
        assert_eq!(*db.durable.borrow(), commits);
        assert!((1..=64).contains(&commits), "{commits} commits");
        let flushes = db.flushes.load(Ordering::Relaxed);
        assert!((1..=64).contains(&flushes), "{flushes} flushes");
        assert_eq!(committed(&db).len(), 64);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn writers_share_a_batch_and_one_that_rolls_back_leaves_it_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let db = Arc::new(Db::open(&dir.path().join("t.redb")).unwrap());
        {
            let turn = db.turn().await;
            let mut undo = Undo::default();
            db.write(&mut undo, b"kept".to_vec(), Some(b"0")).unwrap();
            db.write(&mut undo, b"gone".to_vec(), Some(b"0")).unwrap();
            db.end_turn(turn, true).await.unwrap();
        }
        // The first writer ends its turn while another waits: the batch stays open.
        let first = {
            let turn = db.turn().await;
            db.write(&mut Undo::default(), b"a".to_vec(), Some(b"1"))
                .unwrap();
            db.waiting.fetch_add(1, Ordering::SeqCst);
            let db = db.clone();
            tokio::spawn(async move { db.end_turn(turn, true).await.unwrap().unwrap() })
        };
        let turn = db.turn().await;
        db.waiting.fetch_sub(1, Ordering::SeqCst);
        // The second sees the first's write, writes over it, adds, removes, and rolls back.
        let seen = db
            .in_batch(|t| Ok(t.get(&b"a"[..]).unwrap().map(|v| v.value().to_vec())))
            .unwrap();
        assert_eq!(seen.as_deref(), Some(&b"1"[..]));
        let mut undo = Undo::default();
        db.write(&mut undo, b"a".to_vec(), Some(b"2")).unwrap();
        db.write(&mut undo, b"a".to_vec(), Some(b"3")).unwrap();
        db.write(&mut undo, b"b".to_vec(), Some(b"2")).unwrap();
        db.write(&mut undo, b"kept".to_vec(), Some(b"2")).unwrap();
        db.write(&mut undo, b"gone".to_vec(), None).unwrap();
        db.roll_back(undo, turn).await.unwrap();
        // The rollback ended the last turn: the batch with the first writer is committed.
        let seq = first.await.unwrap();
        assert_eq!(seq, 2, "one commit for the first writer's batch");
        assert_eq!(
            committed(&db),
            vec![
                (b"a".to_vec(), b"1".to_vec()),
                (b"gone".to_vec(), b"0".to_vec()),
                (b"kept".to_vec(), b"0".to_vec()),
            ]
        );
        assert!(
            *db.durable.borrow() >= seq,
            "the rollback waited for the batch"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_batch_left_to_a_writer_that_never_comes_is_committed_by_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("t.redb")).unwrap();
        let turn = db.turn().await;
        db.write(&mut Undo::default(), b"a".to_vec(), Some(b"1"))
            .unwrap();
        // A writer seemed to wait, so the batch is left open; it never takes its turn.
        db.waiting.fetch_add(1, Ordering::SeqCst);
        let waiting = {
            let db = &db;
            async move {
                tokio::time::sleep(Duration::from_millis(100)).await;
                db.waiting.fetch_sub(1, Ordering::SeqCst);
            }
        };
        let started = Instant::now();
        let ended = tokio::time::timeout(BATCH_CHECK * 3, db.end_turn(turn, true));
        let (seq, ()) = tokio::join!(ended, waiting);
        assert_eq!(
            seq.expect("the batch was never committed").unwrap(),
            Some(1)
        );
        assert!(started.elapsed() >= BATCH_CHECK, "{:?}", started.elapsed());
        assert_eq!(committed(&db), vec![(b"a".to_vec(), b"1".to_vec())]);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn every_waiter_returns_durable_however_flushes_and_waits_interleave() {
        let dir = tempfile::tempdir().unwrap();
        let db = Arc::new(Db::open(&dir.path().join("t.redb")).unwrap());
        let rounds = async {
            for round in 0..200u16 {
                let tasks: Vec<_> = (0..8u16)
                    .map(|i| {
                        let db = db.clone();
                        tokio::spawn(async move {
                            let seq =
                                put(&db, &[round.to_be_bytes(), i.to_be_bytes()].concat()).await;
                            db.durable(seq).await.unwrap();
                        })
                    })
                    .collect();
                for t in tasks {
                    t.await.unwrap();
                }
            }
        };
        tokio::time::timeout(Duration::from_secs(60), rounds)
            .await
            .expect("a waiter was left waiting");
        assert_eq!(committed(&db).len(), 1600);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_write_past_the_undo_bound_is_refused_and_a_rollback_restores_all_before_it() {
        // Values a quarter of the bound each: three overwrites fit, the fourth would take
        // the undo log past the bound by the bytes of the keys.
        const VALUE: usize = UNDO_BYTES_MAX / 4;
        let old = |i: u8| vec![i; VALUE];
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("t.redb")).unwrap();
        {
            let turn = db.turn().await;
            for i in 0..5u8 {
                db.write(&mut Undo::default(), vec![i], Some(&old(i)))
                    .unwrap();
            }
            db.end_turn(turn, true).await.unwrap();
        }
        let before = committed(&db);
        let turn = db.turn().await;
        let mut undo = Undo::default();
        let new = vec![0xee; VALUE];
        for i in 0..3u8 {
            db.write(&mut undo, vec![i], Some(&new)).unwrap();
        }
        let noted = 3 * (1 + VALUE);
        assert_eq!(undo.bytes, noted);
        assert_eq!(
            db.write(&mut undo, vec![3], Some(&new)),
            Err(DbError::TooLarge)
        );
        assert_eq!(
            db.write(&mut undo, vec![4], None),
            Err(DbError::TooLarge),
            "a removal notes the value it removes"
        );
        // The refused writes did not happen and noted nothing.
        assert_eq!((undo.bytes, undo.replaced.len()), (noted, 3));
        for i in 3..5u8 {
            let kept = db.in_batch(|t| get(&*t, &[i], &db.failed)).unwrap();
            assert!(kept == Some(old(i)), "a refused write changed key {i}");
        }
        // What still fits is still written.
        db.write(&mut undo, b"small".to_vec(), Some(b"v")).unwrap();
        db.roll_back(undo, turn).await.unwrap();
        assert!(
            committed(&db) == before,
            "the rollback did not restore what the writer replaced"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_write_transaction_dropped_or_whose_commit_is_never_polled_keeps_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let store = Redb::open(&dir.path().join("t.redb"), StoreMetrics::default()).unwrap();
        let mut txn = store.begin_write().await.unwrap();
        txn.put(b"dropped".to_vec(), b"1".to_vec()).await.unwrap();
        drop(txn);
        let mut txn = store.begin_write().await.unwrap();
        txn.put(b"unpolled".to_vec(), b"1".to_vec()).await.unwrap();
        drop(txn.commit());
        let mut txn = store.begin_write().await.unwrap();
        assert_eq!(txn.get(b"dropped".to_vec()).await.unwrap(), None);
        assert_eq!(txn.get(b"unpolled".to_vec()).await.unwrap(), None);
        txn.put(b"kept".to_vec(), b"2".to_vec()).await.unwrap();
        txn.commit().await.unwrap();
        assert!(
            *store.current().unwrap().durable.borrow() >= store.visible(),
            "commit returned before its commit was durable"
        );
        let read = store.begin_read().await.unwrap();
        assert_eq!(
            read.scan(Vec::new(), None, 10, false).await.unwrap(),
            vec![(b"kept".to_vec(), b"2".to_vec())]
        );
    }
}
