//! The `store` interface on redb: one file in the data dir, one table of byte keys.
//!
//! redb allows one writer at a time; `begin-write` waits for its turn on an async gate so
//! that a waiting request never blocks a runtime thread. Reads use MVCC snapshots and never
//! wait. A write transaction dropped without commit (guest trap, error) is rolled back.
//!
//! Group commit: a transaction commits without fsync (`Durability::None`, in place on the
//! runtime thread: CPU work and buffered writes) and ends its turn at once; `commit` then returns only after a durable commit (an empty
//! `Durability::Immediate` commit, which makes every earlier commit durable) has covered it.
//! Whoever waits first does that flush for everyone committed so far, so concurrent writers
//! share one fsync. Commits made visible before they are durable are never shown to a
//! client either: a request remembers the last commit its reads could see, and the server
//! holds its response until that commit is durable (`Durable::wait`).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::Context as _;
use faktura_backend::kv::{self, TABLE};
use redb::{ReadableDatabase, ReadableTable};
use tokio::sync::{Mutex, OwnedMutexGuard, watch};
use wasmtime::component::Resource;

use crate::State;
use crate::bindings::faktura::service::store::{self as wit, Entry, Error};

/// redb's own page cache (its default is 1 GiB); the kernel's page cache holds the rest of
/// the file without counting against the process. 64 MiB served the benchmark's reads as
/// fast as 128 MiB and lowered the host's peak RSS while seeding from 287 to 184 MiB.
const CACHE_BYTES: usize = 64 << 20;

/// The database, the gate writers queue on, and the group commit.
pub struct Db {
    db: Arc<redb::Database>,
    writer: Arc<Mutex<()>>,
    /// Number of the last commit begun, durable or not.
    committed: AtomicU64,
    /// Highest commit number known durable.
    durable: watch::Sender<u64>,
    /// Held by the one request flushing for everyone.
    flusher: Mutex<()>,
    /// Flushes done.
    flushes: AtomicU64,
}

impl Db {
    pub fn open(path: &Path) -> anyhow::Result<Db> {
        let db = redb::Builder::new()
            .set_cache_size(CACHE_BYTES)
            .create(path)
            .with_context(|| format!("opening the database {}", path.display()))?;
        // Make sure the table exists so that read transactions can always open it.
        let txn = db.begin_write()?;
        kv::ensure_table(&txn)?;
        txn.commit()?;
        Ok(Db {
            db: Arc::new(db),
            writer: Arc::new(Mutex::new(())),
            committed: AtomicU64::new(0),
            durable: watch::Sender::new(0),
            flusher: Mutex::new(()),
            flushes: AtomicU64::new(0),
        })
    }

    /// Commits without fsync and ends the writer's turn; returns the commit's number, for
    /// `durable`.
    async fn commit(
        &self,
        mut txn: redb::WriteTransaction,
        turn: OwnedMutexGuard<()>,
    ) -> Result<u64, Error> {
        txn.set_durability(redb::Durability::None)
            .map_err(backend)?;
        // Numbered before it becomes visible, so a reader never sees an unnumbered commit.
        let seq = self.committed.fetch_add(1, Ordering::SeqCst) + 1;
        // Without fsync a commit is CPU work and buffered writes (tens of microseconds):
        // done in place, which costs less than handing it to another thread and back.
        let result = txn.commit().map_err(backend);
        drop(turn);
        result?;
        Ok(seq)
    }

    /// The number of the last commit a transaction begun now may see.
    pub fn visible(&self) -> u64 {
        self.committed.load(Ordering::SeqCst)
    }

    /// Returns once commit number `seq` and all before it are durable, flushing them when
    /// no one else is.
    pub async fn durable(&self, seq: u64) -> Result<(), Error> {
        let mut seen = self.durable.subscribe();
        loop {
            if *seen.borrow_and_update() >= seq {
                return Ok(());
            }
            if let Ok(_flushing) = self.flusher.try_lock() {
                if *self.durable.borrow() >= seq {
                    return Ok(());
                }
                // No commit may begin while the flush takes the writer's turn, so every
                // commit numbered up to `upto` is finished and the flush covers it.
                let turn = self.writer.clone().lock_owned().await;
                let upto = self.committed.load(Ordering::SeqCst);
                let db = self.db.clone();
                let flushed = tokio::task::spawn_blocking(move || {
                    let mut txn = db.begin_write().map_err(backend)?;
                    txn.set_durability(redb::Durability::Immediate)
                        .map_err(backend)?;
                    let result = txn.commit().map_err(backend);
                    drop(turn);
                    result
                })
                .await
                .map_err(backend)?;
                match flushed {
                    Ok(()) => {
                        self.flushes.fetch_add(1, Ordering::Relaxed);
                        self.durable.send_modify(|d| *d = (*d).max(upto));
                    }
                    Err(e) => {
                        // Wake the others so that one of them tries again.
                        self.durable.send_modify(|_| {});
                        return Err(e);
                    }
                }
                continue;
            }
            if seen.changed().await.is_err() {
                return Err(Error::Backend("the database closed".into()));
            }
        }
    }
}

pub struct ReadTxn(redb::ReadTransaction);

pub struct WriteTxn {
    txn: redb::WriteTransaction,
    _turn: OwnedMutexGuard<()>,
}

fn backend(e: impl std::fmt::Display) -> Error {
    Error::Backend(e.to_string())
}

fn entries(list: Vec<kv::Entry>) -> Vec<Entry> {
    list.into_iter()
        .map(|(key, value)| Entry { key, value })
        .collect()
}

fn scan(
    table: &impl ReadableTable<&'static [u8], &'static [u8]>,
    prefix: &[u8],
    after: Option<&[u8]>,
    limit: u32,
    reverse: bool,
) -> Result<Vec<Entry>, Error> {
    kv::scan(table, prefix, after, limit, reverse)
        .map(entries)
        .map_err(backend)
}

impl wit::Host for State {
    async fn begin_read(&mut self) -> wasmtime::Result<Result<Resource<ReadTxn>, Error>> {
        // Taken before the snapshot: every commit the snapshot holds is numbered up to it.
        let visible = self.shared.db.visible();
        self.seen.fetch_max(visible, Ordering::SeqCst);
        let txn = match self.shared.db.db.begin_read() {
            Ok(t) => t,
            Err(e) => return Ok(Err(backend(e))),
        };
        Ok(Ok(self.table.push(ReadTxn(txn))?))
    }

    async fn begin_write(&mut self) -> wasmtime::Result<Result<Resource<WriteTxn>, Error>> {
        let turn = self.shared.db.writer.clone().lock_owned().await;
        let txn = match self.shared.db.db.begin_write() {
            Ok(t) => t,
            Err(e) => return Ok(Err(backend(e))),
        };
        Ok(Ok(self.table.push(WriteTxn { txn, _turn: turn })?))
    }
}

impl wit::HostReadTxn for State {
    async fn get(
        &mut self,
        txn: Resource<ReadTxn>,
        key: Vec<u8>,
    ) -> wasmtime::Result<Result<Option<Vec<u8>>, Error>> {
        let txn = &self.table.get(&txn)?.0;
        let result = (|| {
            let table = txn.open_table(TABLE).map_err(backend)?;
            let value = table.get(key.as_slice()).map_err(backend)?;
            Ok(value.map(|v| v.value().to_vec()))
        })();
        Ok(result)
    }

    async fn scan(
        &mut self,
        txn: Resource<ReadTxn>,
        prefix: Vec<u8>,
        after: Option<Vec<u8>>,
        limit: u32,
        reverse: bool,
    ) -> wasmtime::Result<Result<Vec<Entry>, Error>> {
        let txn = &self.table.get(&txn)?.0;
        let result = (|| {
            let table = txn.open_table(TABLE).map_err(backend)?;
            scan(&table, &prefix, after.as_deref(), limit, reverse)
        })();
        Ok(result)
    }

    async fn drop(&mut self, txn: Resource<ReadTxn>) -> wasmtime::Result<()> {
        self.table.delete(txn)?;
        Ok(())
    }
}

impl wit::HostWriteTxn for State {
    async fn get(
        &mut self,
        txn: Resource<WriteTxn>,
        key: Vec<u8>,
    ) -> wasmtime::Result<Result<Option<Vec<u8>>, Error>> {
        let txn = &self.table.get(&txn)?.txn;
        let result = (|| {
            let table = txn.open_table(TABLE).map_err(backend)?;
            let value = table.get(key.as_slice()).map_err(backend)?;
            Ok(value.map(|v| v.value().to_vec()))
        })();
        Ok(result)
    }

    async fn scan(
        &mut self,
        txn: Resource<WriteTxn>,
        prefix: Vec<u8>,
        after: Option<Vec<u8>>,
        limit: u32,
        reverse: bool,
    ) -> wasmtime::Result<Result<Vec<Entry>, Error>> {
        let txn = &self.table.get(&txn)?.txn;
        let result = (|| {
            let table = txn.open_table(TABLE).map_err(backend)?;
            scan(&table, &prefix, after.as_deref(), limit, reverse)
        })();
        Ok(result)
    }

    async fn put(
        &mut self,
        txn: Resource<WriteTxn>,
        key: Vec<u8>,
        value: Vec<u8>,
    ) -> wasmtime::Result<Result<(), Error>> {
        if !kv::fits(&key, &value) {
            return Ok(Err(Error::TooLarge));
        }
        let txn = &self.table.get(&txn)?.txn;
        let result = (|| {
            let mut table = txn.open_table(TABLE).map_err(backend)?;
            table
                .insert(key.as_slice(), value.as_slice())
                .map_err(backend)?;
            Ok(())
        })();
        Ok(result)
    }

    async fn delete(
        &mut self,
        txn: Resource<WriteTxn>,
        key: Vec<u8>,
    ) -> wasmtime::Result<Result<(), Error>> {
        let txn = &self.table.get(&txn)?.txn;
        let result = (|| {
            let mut table = txn.open_table(TABLE).map_err(backend)?;
            table.remove(key.as_slice()).map_err(backend)?;
            Ok(())
        })();
        Ok(result)
    }

    async fn commit(&mut self, txn: Resource<WriteTxn>) -> wasmtime::Result<Result<(), Error>> {
        let WriteTxn { txn, _turn } = self.table.delete(txn)?;
        let db = &self.shared.db;
        Ok(match db.commit(txn, _turn).await {
            Ok(seq) => db.durable(seq).await,
            Err(e) => Err(e),
        })
    }

    async fn drop(&mut self, txn: Resource<WriteTxn>) -> wasmtime::Result<()> {
        // Dropping an uncommitted redb transaction aborts it.
        self.table.delete(txn)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn put(db: &Db, key: &[u8]) -> u64 {
        let turn = db.writer.clone().lock_owned().await;
        let txn = db.db.begin_write().unwrap();
        txn.open_table(TABLE)
            .unwrap()
            .insert(key, b"v".as_slice())
            .unwrap();
        db.commit(txn, turn).await.unwrap()
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
        assert_eq!(*db.durable.borrow(), 64);
        let flushes = db.flushes.load(Ordering::Relaxed);
        assert!((1..=64).contains(&flushes), "{flushes} flushes");
        let read = db.db.begin_read().unwrap();
        let table = read.open_table(TABLE).unwrap();
        assert_eq!(table.iter().unwrap().count(), 64);
    }
}
