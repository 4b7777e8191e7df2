//! The port between the `store` interface and a storage engine: the `Backend` trait, its
//! transactions and `DbError`.
//!
//! It owns the contract every engine must keep (what a scan returns, what a dropped write
//! transaction does, when a commit is durable) and names no engine and no WIT type: redb
//! lives in `redb.rs`, the mapping onto the generated bindings in `mod.rs`.
//!
//! Every operation is async, even where redb answers at once, because a networked engine
//! (PostgreSQL through a connection pool) waits on every call. The futures are boxed
//! (`BoxFuture`) so that the request path can hold `dyn Backend` and never name the engine:
//! async functions in traits cannot be called through `dyn`. One allocation per call costs
//! nothing next to the host call that makes it.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use faktura_providers::kv;

/// A future that can move between threads, borrowing for `'a`.
pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// One key and its value.
pub(crate) type Entry = (Vec<u8>, Vec<u8>);

/// Why a store operation failed. Each engine maps its own errors onto these; the WIT
/// mapping in `mod.rs` is the only place that turns them into the guest's `error`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DbError {
    /// Another writer got in the way (PostgreSQL: a serialization failure); nothing of the
    /// transaction was kept, and the caller may retry the whole of it.
    Conflict,
    /// A key or value over the store's size limit, or a write whose undo record would take
    /// the writer past its engine's bound; the write did not happen.
    TooLarge,
    /// The engine failed; the message is for logs, not for clients.
    Backend(String),
    /// The connection was lost while a commit was under way: it may or may not have been
    /// kept (a networked engine; redb knows).
    Unknown(String),
    /// The engine cannot be reached now (a networked engine's server is down, or redb's
    /// file failed and is not open again yet); nothing of the transaction was kept.
    Unavailable(String),
    /// The disk is full: the write could not be made durable. From `commit` the outcome
    /// is unknown, as after `Unknown`; elsewhere nothing was kept.
    Full(String),
}

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DbError::Conflict => f.write_str("conflict with another writer"),
            DbError::TooLarge => f.write_str("over the store's size limit"),
            DbError::Backend(message) => write!(f, "storage backend: {message}"),
            DbError::Unknown(message) => write!(f, "commit outcome unknown: {message}"),
            DbError::Unavailable(message) => write!(f, "storage unavailable: {message}"),
            DbError::Full(message) => write!(f, "storage full: {message}"),
        }
    }
}

impl std::error::Error for DbError {}

/// A storage engine: an ordered map of byte keys to byte values, read through snapshots
/// and written through transactions.
///
/// Keys sort bytewise. A commit is all or nothing, and durable once `durable` says so
/// (at once for an engine without group commit).
pub(crate) trait Backend: Send + Sync + 'static {
    /// A consistent snapshot of every commit visible when it begins; it never waits for
    /// writers.
    fn begin_read(&self) -> BoxFuture<'_, Result<Box<dyn ReadTxn>, DbError>>;

    /// A write transaction that sees its own writes. An engine with one writer at a time
    /// (redb) returns when it is this one's turn.
    fn begin_write(&self) -> BoxFuture<'_, Result<Box<dyn WriteTxn>, DbError>>;

    /// A write transaction for `scope` (the WIT's `begin-write`): an engine whose writers
    /// run side by side lets writers of one scope take turns, so that they wait for each
    /// other instead of colliding. An engine with one writer at a time ignores it.
    fn begin_write_in(&self, _scope: Vec<u8>) -> BoxFuture<'_, Result<Box<dyn WriteTxn>, DbError>> {
        self.begin_write()
    }

    /// Group commit: the number of the last commit a read begun now may see. A backend
    /// whose commits are durable when they become visible answers 0.
    ///
    /// Taken before `begin_read`, it bounds what the snapshot holds, so that an answer
    /// built from the snapshot can wait (`durable`) until nothing it showed can be lost.
    fn visible(&self) -> u64 {
        0
    }

    /// Returns once commit number `seq` and every commit before it are durable.
    fn durable(&self, _seq: u64) -> BoxFuture<'_, Result<(), DbError>> {
        Box::pin(async { Ok(()) })
    }

    /// The id counters kept outside the store's entries (`WriteTxn::next_ids` of an engine
    /// with writers side by side), each as the entry it stands for: the counter's key and
    /// the last id taken as a big-endian u64. An export writes these in place of the
    /// entries, which are older. An engine that keeps its counters in the entries has none.
    fn counters(&self) -> BoxFuture<'_, Result<Vec<Entry>, DbError>> {
        Box::pin(async { Ok(Vec::new()) })
    }

    /// Forgets the counters of `counters`, so that the counter entries of an import are
    /// where the next ids start.
    fn reset_counters(&self) -> BoxFuture<'_, Result<(), DbError>> {
        Box::pin(async { Ok(()) })
    }

    /// Waits until no other host starts on this store, and holds its turn until the
    /// returned guard is dropped: hosts started at once on a new store make its schema,
    /// migrate it and create its first account one after the other, not over each other.
    /// An engine only one process opens (redb's file lock) has nothing to wait for.
    fn start_up_turn(&self) -> BoxFuture<'_, Result<StartUpTurn, DbError>> {
        Box::pin(async { Ok(StartUpTurn { _held: None }) })
    }
}

/// A host's turn to start on a shared store (`Backend::start_up_turn`): it ends when
/// this is dropped.
pub struct StartUpTurn {
    /// What holds the turn (a connection holding a lock), if anything does.
    pub(crate) _held: Option<Box<dyn Send>>,
}

/// A snapshot. Dropping it ends it; it never wrote, so nothing is lost.
///
/// `scan` returns the entries whose key starts with `prefix` and, when `after` is given,
/// sorts strictly after it (strictly before it when `reverse`), in bytewise key order
/// (descending when `reverse`), the first `limit` of them. An `after` outside the prefix
/// range never widens it: a scan returns no key outside its prefix.
pub(crate) trait ReadTxn: Send + Sync {
    fn get(&self, key: Vec<u8>) -> BoxFuture<'_, Result<Option<Vec<u8>>, DbError>>;

    /// The values of `keys` in their order, `None` where a key is absent.
    fn get_many(&self, keys: Vec<Vec<u8>>) -> BoxFuture<'_, Result<Vec<Option<Vec<u8>>>, DbError>>;

    /// See the trait's documentation for the range.
    fn scan(
        &self,
        prefix: Vec<u8>,
        after: Option<Vec<u8>>,
        limit: u32,
        reverse: bool,
    ) -> BoxFuture<'_, Result<Vec<Entry>, DbError>>;
}

/// A write transaction; its reads see its own writes, and `scan` keeps the range and order
/// of `ReadTxn::scan`.
///
/// It ends in one of three ways, and every engine must keep all three:
/// - `commit`: every write is kept, all or nothing, and the future returns once the
///   commit is durable (a crash after it returns cannot take it back).
/// - `rollback`: nothing is kept; the future returns once the rollback is done.
/// - Dropped without either (the guest trapped or ran out of time, its instance was torn
///   down, or a future of this transaction was dropped part way): nothing is kept, and
///   the drop rolls back without waiting, since `Drop` cannot await. redb puts back what
///   the writes replaced at once; a PostgreSQL backend must make sure the rollback
///   happens before the connection serves anyone else (roll back on a task before the
///   connection returns to its pool, or discard the connection), so that no later
///   transaction runs inside this one.
pub(crate) trait WriteTxn: Send {
    fn get(&mut self, key: Vec<u8>) -> BoxFuture<'_, Result<Option<Vec<u8>>, DbError>>;

    /// The values of `keys` in their order, `None` where a key is absent.
    fn get_many(
        &mut self,
        keys: Vec<Vec<u8>>,
    ) -> BoxFuture<'_, Result<Vec<Option<Vec<u8>>>, DbError>>;

    /// The range of `ReadTxn::scan`, over this transaction's view.
    fn scan(
        &mut self,
        prefix: Vec<u8>,
        after: Option<Vec<u8>>,
        limit: u32,
        reverse: bool,
    ) -> BoxFuture<'_, Result<Vec<Entry>, DbError>>;

    /// Writes `value` under `key`. A key or value over the store's limits (`kv::fits`,
    /// the same for every engine) is refused with `TooLarge`: the write did not happen and
    /// the transaction goes on as it was; after a `Backend` error it can only be rolled
    /// back.
    fn put(&mut self, key: Vec<u8>, value: Vec<u8>) -> BoxFuture<'_, Result<(), DbError>>;

    /// Removes `key`, if present; errors as for `put`.
    fn delete(&mut self, key: Vec<u8>) -> BoxFuture<'_, Result<(), DbError>>;

    /// The writes of `writes` in their order (`None`: a delete), as `put` and `delete`
    /// make them (the WIT `write-many`); the first refused ends the call with its error,
    /// the ones before it made. This default makes them one by one.
    fn write_many(
        &mut self,
        writes: Vec<(Vec<u8>, Option<Vec<u8>>)>,
    ) -> BoxFuture<'_, Result<(), DbError>> {
        Box::pin(async move {
            for (key, value) in writes {
                match value {
                    Some(value) => self.put(key, value).await?,
                    None => self.delete(key).await?,
                }
            }
            Ok(())
        })
    }

    /// `n` new ids of the counter stored under `counter` (the WIT `next-ids`). This
    /// default keeps the counter in the transaction, for an engine with one writer at a
    /// time: a rollback gives the ids back, and no writer beside it could have taken them.
    fn next_ids(&mut self, counter: Vec<u8>, n: u32) -> BoxFuture<'_, Result<Vec<u64>, DbError>> {
        Box::pin(async move {
            let current = self.get(counter.clone()).await?;
            let (ids, stored) = kv::counter_step(current.as_deref(), n)
                .ok_or_else(|| DbError::Backend("an id counter is corrupt or exhausted".into()))?;
            self.put(counter, stored.to_vec()).await?;
            Ok(ids)
        })
    }

    /// Keeps every write, all or nothing; returns once the commit is durable. After
    /// `Conflict` nothing was kept and the caller may retry the whole transaction; after
    /// a `Backend` error the outcome is unknown (redb: the commit may be visible and its
    /// flush have failed), as it is for any database whose connection fails mid-commit.
    fn commit(self: Box<Self>) -> BoxFuture<'static, Result<(), DbError>>;

    /// Keeps nothing. The error is for logs: the writes are gone either way.
    fn rollback(self: Box<Self>) -> BoxFuture<'static, Result<(), DbError>>;
}
