//! The `store` interface on redb: one file in the data dir, one table of byte keys.
//!
//! redb allows one writer at a time; `begin-write` waits for its turn on an async gate so
//! that a waiting request never blocks a runtime thread, and commits (fsync) run on the
//! blocking pool. Reads use MVCC snapshots and never wait. A write transaction dropped
//! without commit (guest trap, error) is rolled back by redb.

use std::path::Path;
use std::sync::Arc;

use anyhow::Context as _;
use redb::{ReadableDatabase, ReadableTable, TableDefinition};
use tokio::sync::{Mutex, OwnedMutexGuard};
use wasmtime::component::Resource;

use crate::State;
use crate::bindings::faktura::service::store::{self as wit, Entry, Error};

const TABLE: TableDefinition<&[u8], &[u8]> = TableDefinition::new("kv");

/// Largest key and value the store accepts.
const KEY_BYTES_MAX: usize = 4 * 1024;
const VALUE_BYTES_MAX: usize = 64 * 1024 * 1024;

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
        txn.open_table(TABLE)?;
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

/// The smallest key greater than every key that starts with `prefix`, if any.
fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

fn scan_table(
    table: &impl ReadableTable<&'static [u8], &'static [u8]>,
    prefix: &[u8],
    after: Option<&[u8]>,
    limit: u32,
    reverse: bool,
) -> Result<Vec<Entry>, Error> {
    use std::ops::Bound::{Excluded, Included, Unbounded};
    let end = prefix_end(prefix);
    // Clamp a resume key to the prefix range: the range must never run backwards.
    let lo = match after {
        Some(a) if !reverse && a >= prefix => Excluded(a),
        _ => Included(prefix),
    };
    let hi = match (after, end.as_deref()) {
        (Some(a), Some(e)) if reverse && a < e => Excluded(a),
        (Some(a), None) if reverse => Excluded(a),
        (_, Some(e)) => Excluded(e),
        (_, None) => Unbounded,
    };
    let empty = match (&lo, &hi) {
        (Included(l), Excluded(h)) => l >= h,
        (Excluded(l), Excluded(h)) => l >= h,
        _ => false,
    };
    if empty {
        return Ok(Vec::new());
    }
    let range = table.range::<&[u8]>((lo, hi)).map_err(backend)?;
    let items: Box<dyn Iterator<Item = _>> = if reverse {
        Box::new(range.rev())
    } else {
        Box::new(range)
    };
    let mut out = Vec::new();
    for item in items.take(limit as usize) {
        let (k, v) = item.map_err(backend)?;
        out.push(Entry {
            key: k.value().to_vec(),
            value: v.value().to_vec(),
        });
    }
    Ok(out)
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
            scan_table(&table, &prefix, after.as_deref(), limit, reverse)
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
            scan_table(&table, &prefix, after.as_deref(), limit, reverse)
        })();
        Ok(result)
    }

    async fn put(
        &mut self,
        txn: Resource<WriteTxn>,
        key: Vec<u8>,
        value: Vec<u8>,
    ) -> wasmtime::Result<Result<(), Error>> {
        if key.len() > KEY_BYTES_MAX || value.len() > VALUE_BYTES_MAX {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_end_is_the_next_key_after_the_prefix_range() {
        assert_eq!(prefix_end(b"ab"), Some(b"ac".to_vec()));
        assert_eq!(prefix_end(&[1, 0xff]), Some(vec![2]));
        assert_eq!(prefix_end(&[0xff, 0xff]), None);
        assert_eq!(prefix_end(b""), None);
    }

    #[test]
    fn scans_respect_prefix_resume_key_limit_and_direction() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("t.redb")).unwrap();
        let w = db.db.begin_write().unwrap();
        {
            let mut t = w.open_table(TABLE).unwrap();
            for k in [&b"a1"[..], b"b1", b"b2", b"b3", b"c1"] {
                t.insert(k, &b"v"[..]).unwrap();
            }
        }
        w.commit().unwrap();
        let r = db.db.begin_read().unwrap();
        let t = r.open_table(TABLE).unwrap();
        let keys = |v: Vec<Entry>| v.into_iter().map(|e| e.key).collect::<Vec<_>>();
        assert_eq!(
            keys(scan_table(&t, b"b", None, 10, false).unwrap()),
            vec![b"b1".to_vec(), b"b2".to_vec(), b"b3".to_vec()]
        );
        assert_eq!(
            keys(scan_table(&t, b"b", Some(b"b1"), 1, false).unwrap()),
            vec![b"b2".to_vec()]
        );
        assert_eq!(
            keys(scan_table(&t, b"b", None, 2, true).unwrap()),
            vec![b"b3".to_vec(), b"b2".to_vec()]
        );
        assert_eq!(
            keys(scan_table(&t, b"b", Some(b"b2"), 5, true).unwrap()),
            vec![b"b1".to_vec()]
        );
        assert!(scan_table(&t, b"d", None, 5, false).unwrap().is_empty());
    }
}
