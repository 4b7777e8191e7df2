//! The PostgreSQL backend: one table of `bytea` keys and values (`faktura_kv`), the keys
//! exactly the component's, so that a store moves between redb and PostgreSQL unchanged
//! (`bytea` compares bytewise, as redb's keys sort).
//!
//! Connections come from the pool of the store's database (`crate::postgres`, which makes
//! the tables; this module holds no schema). A write transaction runs at
//! SERIALIZABLE, a read transaction at REPEATABLE READ READ ONLY (a snapshot that never
//! waits). A serialization failure or a deadlock is `DbError::Conflict`: nothing was kept
//! and the whole transaction may run again. A statement that failed leaves the transaction
//! unable to commit, and `commit` says so instead of letting PostgreSQL turn the COMMIT
//! into a silent rollback. A write transaction of a scope (the account of a request) waits
//! for a session advisory lock on it before it begins, so that writers of one account,
//! whose writes meet on the same keys (number claims, counts), take turns instead of
//! colliding and running again. A transaction dropped without commit or rollback (the guest
//! trapped) is rolled back on a task before its connection goes back to the pool; a
//! connection whose rollback fails is discarded, so no later transaction runs inside it.
//!
//! A COMMIT is durable when it returns (`synchronous_commit` as the server has it; with
//! synchronous replicas, once they have it too). A connection lost during COMMIT leaves
//! the outcome unknown: `commit` answers `DbError::Unknown`.

use std::ops::Bound::{self, Excluded, Included, Unbounded};

use deadpool_postgres::Object;
use faktura_providers::kv;
use tokio_postgres::error::SqlState;
use tokio_postgres::types::ToSql;

use super::backend::{self, Backend, BoxFuture, DbError, Entry};
use crate::metrics::StoreMetrics;
use crate::postgres::{self as pg, Pool};

/// The store on PostgreSQL.
pub(crate) struct Postgres {
    pool: Pool,
    /// The id counters whose sequence a committed transaction made: asked for no more.
    sequences: Sequences,
    metrics: StoreMetrics,
}

type Sequences = std::sync::Arc<std::sync::Mutex<std::collections::HashSet<Vec<u8>>>>;

impl Postgres {
    /// The store in the database of `pool`; its commits are reported to `metrics`. Nothing
    /// connects yet: the first transaction does.
    pub(crate) fn new(pool: Pool, metrics: StoreMetrics) -> Postgres {
        Postgres {
            pool,
            sequences: Sequences::default(),
            metrics,
        }
    }

    /// A pooled connection, with the tables made.
    async fn connection(&self) -> Result<Object, DbError> {
        self.pool.get().await.map_err(from_pool)
    }

    async fn begin(&self, statement: &'static str) -> Result<Txn, DbError> {
        let conn = self.connection().await?;
        self.begin_on(conn, statement, false).await
    }

    /// A transaction begun with `statement` on `conn`, which holds its scope's lock when
    /// `scoped`: from here on every end of the transaction (commit, rollback, drop, also
    /// a failed BEGIN) rolls back what is open and releases the lock with it.
    async fn begin_on(
        &self,
        conn: Object,
        statement: &'static str,
        scoped: bool,
    ) -> Result<Txn, DbError> {
        let txn = Txn {
            conn: Some(conn),
            failed: None,
            sequences: self.sequences.clone(),
            metrics: self.metrics.clone(),
            scoped,
        };
        txn.conn()?.batch_execute(statement).await.map_err(to_db)?;
        Ok(txn)
    }

    /// A write transaction that begins once no other transaction of `scope` runs on any
    /// host: a session advisory lock on the scope, taken before BEGIN. Taken inside the
    /// transaction it would come too late, because a SERIALIZABLE transaction's snapshot
    /// is the one of its first statement, and the writer would then read from before the
    /// commit it waited for and collide with it anyway.
    async fn begin_scoped(&self, scope: &[u8]) -> Result<Txn, DbError> {
        let conn = self.connection().await?;
        let lock = scope_lock(scope);
        let locked = tokio::time::timeout(
            SCOPE_WAIT,
            conn.execute("SELECT pg_advisory_lock($1)", &[&lock]),
        )
        .await;
        match locked {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => return Err(to_db(e)),
            Err(_) => {
                // The lock may still be granted to this session: the connection goes.
                drop(Object::take(conn));
                return Err(DbError::Unavailable(format!(
                    "writers of one account waited over {} s for their turn",
                    SCOPE_WAIT.as_secs()
                )));
            }
        }
        self.begin_on(conn, WRITE_BEGIN, true).await
    }
}

/// The advisory lock of a host's start-up (`Backend::start_up_turn`); scope locks are
/// hashes of account scopes and meet it only by chance, which costs a wait, no more.
const START_UP_LOCK: i64 = 0x6661_6b74_7572_6101;

const WRITE_BEGIN: &str = "BEGIN ISOLATION LEVEL SERIALIZABLE";

/// How long a writer waits for the writers of its account before the request is answered
/// 503: the guest's deadline does not run while the host waits on its behalf.
const SCOPE_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// The advisory lock key of a scope: the first eight bytes of its SHA-256. Two scopes
/// sharing a key only take turns needlessly.
fn scope_lock(scope: &[u8]) -> i64 {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(scope);
    i64::from_be_bytes(digest[..8].try_into().expect("eight bytes"))
}

/// The last id a sequence gave (0 before the first), from its `last_value` and
/// `is_called`.
fn last_id(last_value: i64, is_called: bool) -> u64 {
    let last = if is_called {
        last_value
    } else {
        last_value - 1
    };
    u64::try_from(last).unwrap_or(0)
}

/// A PostgreSQL error as the store's: conflicts to retry, sizes over a limit, the rest for
/// the log.
fn to_db(e: tokio_postgres::Error) -> DbError {
    match e.code() {
        Some(c)
            if *c == SqlState::T_R_SERIALIZATION_FAILURE
                || *c == SqlState::T_R_DEADLOCK_DETECTED =>
        {
            DbError::Conflict
        }
        Some(c) if *c == SqlState::PROGRAM_LIMIT_EXCEEDED => DbError::TooLarge,
        Some(c) if *c == SqlState::DISK_FULL => DbError::Full(format!("PostgreSQL: {e}")),
        // The server went away (or is shutting down) before the statement was answered;
        // outside a COMMIT nothing of the transaction is kept.
        Some(c) if c.code().starts_with("57P") || c.code().starts_with("08") => {
            DbError::Unavailable(format!("PostgreSQL: {e}"))
        }
        None if e.is_closed() || e.to_string().contains("connection") => {
            DbError::Unavailable(format!("PostgreSQL: {e}"))
        }
        _ => DbError::Backend(match e.as_db_error() {
            Some(db) => format!("PostgreSQL {}: {}", db.code().code(), db.message()),
            None => format!("PostgreSQL: {e}"),
        }),
    }
}

/// A connection the pool could not give, with its tables, as the store's error.
fn from_pool(e: pg::Error) -> DbError {
    match e {
        pg::Error::NoConnection(_) => DbError::Unavailable(e.to_string()),
        pg::Error::Statement(e) => to_db(e),
    }
}

impl Backend for Postgres {
    fn begin_read(&self) -> BoxFuture<'_, Result<Box<dyn backend::ReadTxn>, DbError>> {
        Box::pin(async move {
            // PostgreSQL takes a transaction's snapshot at its first statement, not at
            // BEGIN: the `SELECT` takes it now, so that the snapshot holds what was
            // committed when the read began, as the store's contract says.
            let txn = self
                .begin("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SELECT 1")
                .await?;
            Ok(Box::new(ReadTxn(tokio::sync::Mutex::new(txn))) as Box<dyn backend::ReadTxn>)
        })
    }

    fn begin_write(&self) -> BoxFuture<'_, Result<Box<dyn backend::WriteTxn>, DbError>> {
        Box::pin(async move {
            let txn = self.begin(WRITE_BEGIN).await?;
            Ok(Box::new(txn) as Box<dyn backend::WriteTxn>)
        })
    }

    fn begin_write_in(
        &self,
        scope: Vec<u8>,
    ) -> BoxFuture<'_, Result<Box<dyn backend::WriteTxn>, DbError>> {
        Box::pin(async move {
            if scope.is_empty() {
                return self.begin_write().await;
            }
            let txn = self.begin_scoped(&scope).await?;
            Ok(Box::new(txn) as Box<dyn backend::WriteTxn>)
        })
    }

    fn start_up_turn(&self) -> BoxFuture<'_, Result<backend::StartUpTurn, DbError>> {
        Box::pin(async move {
            // Taken on a connection of its own, before the schema is made: making it is
            // part of the turn.
            let conn = self.pool.get_as_is().await.map_err(from_pool)?;
            conn.execute("SELECT pg_advisory_lock($1)", &[&START_UP_LOCK])
                .await
                .map_err(to_db)?;
            // The turn ends with the connection's session: it never goes back to the pool.
            Ok(backend::StartUpTurn {
                _held: Some(Box::new(Object::take(conn))),
            })
        })
    }

    fn counters(&self) -> BoxFuture<'_, Result<Vec<Entry>, DbError>> {
        Box::pin(async move {
            let conn = self.connection().await?;
            let rows = conn
                .query("SELECT key, seq FROM faktura_counters ORDER BY key", &[])
                .await
                .map_err(to_db)?;
            let mut out = Vec::with_capacity(rows.len());
            for row in rows {
                let seq: String = row.get(1);
                let state = conn
                    .query_one(&format!("SELECT last_value, is_called FROM {seq}"), &[])
                    .await
                    .map_err(to_db)?;
                let last = last_id(state.get(0), state.get(1));
                out.push((row.get(0), last.to_be_bytes().to_vec()));
            }
            Ok(out)
        })
    }

    fn reset_counters(&self) -> BoxFuture<'_, Result<(), DbError>> {
        Box::pin(async move {
            let mut conn = self.connection().await?;
            let txn = conn.transaction().await.map_err(to_db)?;
            for row in txn
                .query("SELECT seq FROM faktura_counters", &[])
                .await
                .map_err(to_db)?
            {
                let seq: String = row.get(0);
                txn.batch_execute(&pg::drop_counter_sequence(&seq))
                    .await
                    .map_err(to_db)?;
            }
            txn.execute("DELETE FROM faktura_counters", &[])
                .await
                .map_err(to_db)?;
            txn.commit().await.map_err(to_db)?;
            self.sequences.lock().expect("sequences").clear();
            Ok(())
        })
    }
}

/// An open transaction on its connection.
struct Txn {
    /// `None` once it has ended.
    conn: Option<Object>,
    /// The first failure of a statement: the transaction can only be rolled back.
    failed: Option<DbError>,
    sequences: Sequences,
    metrics: StoreMetrics,
    /// Whether the session holds the advisory lock of the transaction's scope
    /// (`begin_scoped`), released when the transaction ends.
    scoped: bool,
}

impl Txn {
    fn conn(&self) -> Result<&Object, DbError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        self.conn
            .as_ref()
            .ok_or_else(|| DbError::Backend("the transaction has ended".into()))
    }

    /// Remembers a failed statement's error and returns it.
    fn check<T>(&mut self, r: Result<T, tokio_postgres::Error>) -> Result<T, DbError> {
        r.map_err(|e| {
            let e = to_db(e);
            self.failed.get_or_insert(e.clone());
            e
        })
    }

    async fn get(&mut self, key: Vec<u8>) -> Result<Option<Vec<u8>>, DbError> {
        let conn = self.conn()?;
        let r = async {
            let stmt = conn
                .prepare_cached("SELECT value FROM faktura_kv WHERE key = $1")
                .await?;
            conn.query_opt(&stmt, &[&key]).await
        }
        .await;
        Ok(self.check(r)?.map(|row| row.get(0)))
    }

    async fn get_many(&mut self, keys: Vec<Vec<u8>>) -> Result<Vec<Option<Vec<u8>>>, DbError> {
        let conn = self.conn()?;
        let r = async {
            let stmt = conn
                .prepare_cached("SELECT key, value FROM faktura_kv WHERE key = ANY($1)")
                .await?;
            conn.query(&stmt, &[&keys]).await
        }
        .await;
        let rows = self.check(r)?;
        // A key asked for twice is answered twice.
        let found: std::collections::HashMap<Vec<u8>, Vec<u8>> = rows
            .into_iter()
            .map(|row| (row.get(0), row.get(1)))
            .collect();
        Ok(keys.iter().map(|k| found.get(k).cloned()).collect())
    }

    async fn scan(
        &mut self,
        prefix: Vec<u8>,
        after: Option<Vec<u8>>,
        limit: u32,
        reverse: bool,
    ) -> Result<Vec<Entry>, DbError> {
        let Some((lo, hi)) = range(&prefix, after.as_deref(), reverse) else {
            return Ok(Vec::new());
        };
        let mut sql = String::from("SELECT key, value FROM faktura_kv WHERE true");
        let mut params: Vec<&(dyn ToSql + Sync)> = Vec::new();
        let bound_params: Vec<Vec<u8>> = [&lo, &hi]
            .iter()
            .filter_map(|b| match b {
                Included(k) | Excluded(k) => Some(k.clone()),
                Unbounded => None,
            })
            .collect();
        let mut at = 0;
        for (bound, (incl, excl)) in [(&lo, (">=", ">")), (&hi, ("<=", "<"))] {
            let op = match bound {
                Included(_) => incl,
                Excluded(_) => excl,
                Unbounded => continue,
            };
            at += 1;
            sql.push_str(&format!(" AND key {op} ${at}"));
            params.push(&bound_params[at - 1]);
        }
        let limit = i64::from(limit);
        at += 1;
        sql.push_str(&format!(
            " ORDER BY key {} LIMIT ${at}",
            if reverse { "DESC" } else { "ASC" }
        ));
        params.push(&limit);
        let conn = self.conn()?;
        let r = async {
            let stmt = conn.prepare_cached(&sql).await?;
            conn.query(&stmt, &params).await
        }
        .await;
        Ok(self
            .check(r)?
            .into_iter()
            .map(|row| (row.get(0), row.get(1)))
            .collect())
    }

    async fn put(&mut self, key: Vec<u8>, value: Vec<u8>) -> Result<(), DbError> {
        // `kv::KEY_BYTES_MAX` keeps keys within what PostgreSQL's b-tree index holds
        // (about a third of an 8 KiB page).
        if !kv::fits(&key, &value) {
            return Err(DbError::TooLarge);
        }
        let conn = self.conn()?;
        let r = async {
            let stmt = conn
                .prepare_cached(
                    "INSERT INTO faktura_kv (key, value) VALUES ($1, $2) \
                     ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                )
                .await?;
            conn.execute(&stmt, &[&key, &value]).await
        }
        .await;
        self.check(r).map(drop)
    }

    async fn delete(&mut self, key: Vec<u8>) -> Result<(), DbError> {
        let conn = self.conn()?;
        let r = async {
            let stmt = conn
                .prepare_cached("DELETE FROM faktura_kv WHERE key = $1")
                .await?;
            conn.execute(&stmt, &[&key]).await
        }
        .await;
        self.check(r).map(drop)
    }

    /// Ids from the counter's sequence. `nextval` takes no part in the transaction: it
    /// neither waits for nor collides with other writers, and an id it gave is never given
    /// again, whatever becomes of the transaction.
    ///
    /// The first use of a counter makes its sequence, starting after the counter's entry
    /// (the ids a store imported from redb, or written before, already gave): inside this
    /// transaction, so that a rolled-back transaction takes its sequence with it.
    async fn next_ids(&mut self, counter: Vec<u8>, n: u32) -> Result<Vec<u64>, DbError> {
        let seq = pg::counter_sequence(&counter);
        let known = self.sequences.lock().expect("sequences").contains(&counter);
        let conn = self.conn()?;
        let r = async {
            if !known && !pg::exists(conn, &seq).await? {
                // Of two first uses at once, the second waits for the first and then
                // fails (the name is taken): a collision, see below.
                conn.batch_execute(&pg::create_counter_sequence(&seq))
                    .await?;
                conn.execute(
                    "INSERT INTO faktura_counters (key, seq) VALUES ($1, $2) \
                         ON CONFLICT (key) DO UPDATE SET seq = EXCLUDED.seq",
                    &[&counter, &seq],
                )
                .await?;
                let entry = conn
                    .query_opt("SELECT value FROM faktura_kv WHERE key = $1", &[&counter])
                    .await?;
                let last = entry
                    .and_then(|row| <[u8; 8]>::try_from(row.get::<_, Vec<u8>>(0)).ok())
                    .map_or(0, u64::from_be_bytes);
                if last > 0 {
                    conn.execute(
                        "SELECT setval($1::text::regclass, $2)",
                        &[&seq, &(last as i64)],
                    )
                    .await?;
                }
                return next_values(conn, &seq, n).await.map(|ids| (ids, false));
            }
            next_values(conn, &seq, n).await.map(|ids| (ids, true))
        }
        .await;
        if let Err(e) = &r
            && e.code().is_some_and(|c| {
                [
                    SqlState::DUPLICATE_TABLE,
                    SqlState::UNIQUE_VIOLATION,
                    SqlState::UNDEFINED_TABLE,
                ]
                .contains(c)
            })
        {
            // The sequence's name was taken by a first use that committed first, or the
            // sequence is gone (the transaction that made it did not commit after all, or
            // an import reset the counters): a collision, and the run of the write that
            // follows asks for the sequence anew.
            self.sequences.lock().expect("sequences").remove(&counter);
            self.failed.get_or_insert(DbError::Conflict);
            return Err(DbError::Conflict);
        }
        let (ids, committed) = self.check(r)?;
        if committed && !known {
            self.sequences.lock().expect("sequences").insert(counter);
        }
        Ok(ids)
    }

    /// Ends the transaction with `statement` (COMMIT or ROLLBACK).
    async fn end(mut self, statement: &str) -> Result<(), DbError> {
        let conn = self
            .conn
            .take()
            .ok_or_else(|| DbError::Backend("the transaction has ended".into()))?;
        if let Some(e) = self.failed.take() {
            // PostgreSQL would answer this COMMIT with a silent rollback.
            rollback_in_background(conn, self.scoped);
            return Err(e);
        }
        let statement: std::borrow::Cow<'_, str> = if self.scoped {
            format!("{statement}; {UNLOCK}").into()
        } else {
            statement.into()
        };
        match conn.batch_execute(&statement).await {
            Ok(()) => Ok(()),
            Err(e) if e.code().is_some() => {
                let e = to_db(e);
                rollback_in_background(conn, self.scoped);
                Err(e)
            }
            // No answer from the server: the connection is gone, and with it the
            // knowledge of whether the COMMIT was applied.
            Err(e) => {
                drop(Object::take(conn));
                Err(DbError::Unknown(format!("PostgreSQL: {e}")))
            }
        }
    }
}

impl Drop for Txn {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            rollback_in_background(conn, self.scoped);
        }
    }
}

async fn next_values(conn: &Object, seq: &str, n: u32) -> Result<Vec<u64>, tokio_postgres::Error> {
    let stmt = conn
        .prepare_cached("SELECT nextval($1::text::regclass) FROM generate_series(1, $2)")
        .await?;
    let rows = conn.query(&stmt, &[&seq, &(n as i32)]).await?;
    Ok(rows.iter().map(|r| r.get::<_, i64>(0) as u64).collect())
}

/// Releases the advisory lock a scoped transaction's session holds.
const UNLOCK: &str = "SELECT pg_advisory_unlock_all()";

/// Rolls back whatever the connection has open (and releases its scope's lock when
/// `scoped`) before it serves anyone else; a connection that cannot is discarded rather
/// than returned to the pool.
fn rollback_in_background(conn: Object, scoped: bool) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        drop(Object::take(conn));
        return;
    };
    let statement: std::borrow::Cow<'static, str> = if scoped {
        format!("ROLLBACK; {UNLOCK}").into()
    } else {
        "ROLLBACK".into()
    };
    runtime.spawn(async move {
        if conn.batch_execute(&statement).await.is_err() {
            drop(Object::take(conn));
        }
    });
}

/// The lower and upper bound of a scan's keys.
type KeyRange = (Bound<Vec<u8>>, Bound<Vec<u8>>);

/// The key range of a scan, as `kv::scan` takes it: `None` when it is empty.
fn range(prefix: &[u8], after: Option<&[u8]>, reverse: bool) -> Option<KeyRange> {
    let end = kv::prefix_end(prefix);
    let lo = match after {
        Some(a) if !reverse && a >= prefix => Excluded(a.to_vec()),
        _ => Included(prefix.to_vec()),
    };
    let hi = match (after, end) {
        (Some(a), Some(e)) if reverse && a < e.as_slice() => Excluded(a.to_vec()),
        (Some(a), None) if reverse => Excluded(a.to_vec()),
        (_, Some(e)) => Excluded(e),
        (_, None) => Unbounded,
    };
    let empty = match (&lo, &hi) {
        (Included(l) | Excluded(l), Excluded(h)) => l >= h,
        _ => false,
    };
    (!empty).then_some((lo, hi))
}

/// A read transaction: the same statements, behind a lock because reads take `&self`.
struct ReadTxn(tokio::sync::Mutex<Txn>);

impl backend::ReadTxn for ReadTxn {
    fn get(&self, key: Vec<u8>) -> BoxFuture<'_, Result<Option<Vec<u8>>, DbError>> {
        Box::pin(async move { self.0.lock().await.get(key).await })
    }

    fn get_many(&self, keys: Vec<Vec<u8>>) -> BoxFuture<'_, Result<Vec<Option<Vec<u8>>>, DbError>> {
        Box::pin(async move { self.0.lock().await.get_many(keys).await })
    }

    fn scan(
        &self,
        prefix: Vec<u8>,
        after: Option<Vec<u8>>,
        limit: u32,
        reverse: bool,
    ) -> BoxFuture<'_, Result<Vec<Entry>, DbError>> {
        Box::pin(async move {
            self.0
                .lock()
                .await
                .scan(prefix, after, limit, reverse)
                .await
        })
    }
}

impl backend::WriteTxn for Txn {
    fn get(&mut self, key: Vec<u8>) -> BoxFuture<'_, Result<Option<Vec<u8>>, DbError>> {
        Box::pin(Txn::get(self, key))
    }

    fn get_many(
        &mut self,
        keys: Vec<Vec<u8>>,
    ) -> BoxFuture<'_, Result<Vec<Option<Vec<u8>>>, DbError>> {
        Box::pin(Txn::get_many(self, keys))
    }

    fn scan(
        &mut self,
        prefix: Vec<u8>,
        after: Option<Vec<u8>>,
        limit: u32,
        reverse: bool,
    ) -> BoxFuture<'_, Result<Vec<Entry>, DbError>> {
        Box::pin(Txn::scan(self, prefix, after, limit, reverse))
    }

    fn put(&mut self, key: Vec<u8>, value: Vec<u8>) -> BoxFuture<'_, Result<(), DbError>> {
        Box::pin(Txn::put(self, key, value))
    }

    fn delete(&mut self, key: Vec<u8>) -> BoxFuture<'_, Result<(), DbError>> {
        Box::pin(Txn::delete(self, key))
    }

    fn next_ids(&mut self, counter: Vec<u8>, n: u32) -> BoxFuture<'_, Result<Vec<u64>, DbError>> {
        Box::pin(Txn::next_ids(self, counter, n))
    }

    fn commit(self: Box<Self>) -> BoxFuture<'static, Result<(), DbError>> {
        let metrics = self.metrics.clone();
        Box::pin(async move {
            let started = std::time::Instant::now();
            self.end("COMMIT").await?;
            metrics.batch_committed();
            metrics.durable_commit(started.elapsed());
            Ok(())
        })
    }

    fn rollback(self: Box<Self>) -> BoxFuture<'static, Result<(), DbError>> {
        Box::pin(self.end("ROLLBACK"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_ranges_keep_the_prefix_and_the_resume_key() {
        assert_eq!(
            range(b"b", None, false),
            Some((Included(b"b".to_vec()), Excluded(b"c".to_vec())))
        );
        assert_eq!(
            range(b"b", Some(b"b1"), false),
            Some((Excluded(b"b1".to_vec()), Excluded(b"c".to_vec())))
        );
        assert_eq!(
            range(b"b", Some(b"b2"), true),
            Some((Included(b"b".to_vec()), Excluded(b"b2".to_vec())))
        );
        // A resume key outside the prefix never widens the range.
        assert_eq!(
            range(b"b", Some(b"a"), false),
            Some((Included(b"b".to_vec()), Excluded(b"c".to_vec())))
        );
        assert_eq!(range(b"b", Some(b"b"), true), None);
        assert_eq!(
            range(&[0xff], None, false),
            Some((Included(vec![0xff]), Unbounded))
        );
    }
}
