//! The `store` interface on redb: one file in the data dir, one table of byte keys.
//!
//! redb allows one writer at a time; `begin-write` waits for its turn on an async gate so
//! that a waiting request never blocks a runtime thread, and commits (fsync) run on the
//! blocking pool. Reads use MVCC snapshots and never wait. A write transaction dropped
//! without commit (guest trap, error) is rolled back by redb.

use std::path::Path;
use std::sync::Arc;

use anyhow::Context as _;
use faktura_backend::kv::{self, TABLE};
use redb::{ReadableDatabase, ReadableTable};
use tokio::sync::{Mutex, OwnedMutexGuard};
use wasmtime::component::Resource;

use crate::State;
use crate::bindings::faktura::service::store::{self as wit, Entry, Error};

/// The database and the gate writers queue on.
pub struct Db {
    db: redb::Database,
    writer: Arc<Mutex<()>>,
}

impl Db {
    pub fn open(path: &Path) -> anyhow::Result<Db> {
        let db = redb::Database::create(path)
            .with_context(|| format!("opening the database {}", path.display()))?;
        // Make sure the table exists so that read transactions can always open it.
        let txn = db.begin_write()?;
        kv::ensure_table(&txn)?;
        txn.commit()?;
        Ok(Db {
            db,
            writer: Arc::new(Mutex::new(())),
        })
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
        // The fsync runs off the async threads; the writer's turn ends after it.
        let result = tokio::task::spawn_blocking(move || {
            let result = txn.commit().map_err(backend);
            drop(_turn);
            result
        })
        .await?;
        Ok(result)
    }

    async fn drop(&mut self, txn: Resource<WriteTxn>) -> wasmtime::Result<()> {
        // Dropping an uncommitted redb transaction aborts it.
        self.table.delete(txn)?;
        Ok(())
    }
}
