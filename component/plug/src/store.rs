//! The `store` interface on redb over WASI files: `DATA/faktura.redb`, the same file and
//! table (`faktura_backend::kv`) the faktura host keeps, so a data directory moves between
//! the two (never served by both at once).
//!
//! Every request runs in its own instance, and instances share nothing but files, so an
//! instance opens the database only while it holds the store's lease (`lease`): its first
//! transaction takes the lease and opens the file, its last one closes the file (writing
//! redb's clean-shutdown header) and frees the lease. A session that only reads opens the
//! file read-only and writes nothing; a file left unclean by a dead writer is repaired by
//! the next writable open. Commits are durable before they return (redb's immediate
//! durability: fsync through `wasi:filesystem`). Every write to the file first confirms
//! the lease (`LeasedFile`), so a holder that lost its turn never writes beside the next.

use std::cell::RefCell;
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use faktura_backend::kv::{self, TABLE};
use redb::backends::FileBackend;
use redb::{
    Database, DatabaseError, ReadOnlyDatabase, ReadOnlyTable, ReadTransaction, ReadableDatabase,
    ReadableTable, StorageBackend, Table, WriteTransaction,
};

use crate::lease::Lease;

/// redb's page cache per instance; instances live for one request.
const CACHE_BYTES: usize = 4 << 20;

/// Why a store call failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreError {
    /// A key or value over `kv`'s limits.
    TooLarge,
    /// The file, the lease or redb failed; the message is for logs.
    Backend(String),
}

fn backend(e: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(e.to_string())
}

type SharedLease = Arc<Mutex<Lease>>;

fn check(lease: &SharedLease) -> Result<(), StoreError> {
    lease
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .check()
        .map_err(backend)
}

/// The database file, written only while the lease is confirmed.
#[derive(Debug)]
struct LeasedFile {
    file: FileBackend,
    lease: SharedLease,
}

impl LeasedFile {
    fn confirm(&self) -> std::io::Result<()> {
        check(&self.lease).map_err(|e| std::io::Error::other(format!("{e:?}")))
    }
}

impl StorageBackend for LeasedFile {
    fn len(&self) -> std::io::Result<u64> {
        self.file.len()
    }

    fn read(&self, offset: u64, out: &mut [u8]) -> std::io::Result<()> {
        self.file.read(offset, out)
    }

    fn set_len(&self, len: u64) -> std::io::Result<()> {
        self.confirm()?;
        self.file.set_len(len)
    }

    fn sync_data(&self) -> std::io::Result<()> {
        self.confirm()?;
        self.file.sync_data()
    }

    fn write(&self, offset: u64, data: &[u8]) -> std::io::Result<()> {
        self.confirm()?;
        self.file.write(offset, data)
    }

    fn close(&self) -> std::io::Result<()> {
        self.file.close()
    }
}

enum Handle {
    Read(ReadOnlyDatabase),
    Write(Database),
}

/// The open database of this instance and the lease it is open under.
struct Session {
    handle: Handle,
    lease: SharedLease,
    /// Transactions alive; the session ends with the last.
    live: usize,
    writing: bool,
}

thread_local! {
    static SESSION: RefCell<Option<Session>> = const { RefCell::new(None) };
}

/// Where the store keeps its files.
#[derive(Debug, Clone)]
pub struct Place {
    pub db: PathBuf,
    pub lease_dir: PathBuf,
}

impl Place {
    pub fn in_dir(data: &Path) -> Place {
        Place {
            db: data.join("faktura.redb"),
            lease_dir: data.join("faktura.lease"),
        }
    }
}

fn leased(file: File, lease: &SharedLease) -> Result<LeasedFile, StoreError> {
    Ok(LeasedFile {
        file: FileBackend::new(file).map_err(backend)?,
        lease: lease.clone(),
    })
}

fn open_writable(place: &Place, lease: &SharedLease) -> Result<Database, StoreError> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&place.db)
        .map_err(backend)?;
    let db = Database::builder()
        .set_cache_size(CACHE_BYTES)
        .create_with_backend(leased(file, lease)?)
        .map_err(backend)?;
    let txn = db.begin_write().map_err(backend)?;
    kv::ensure_table(&txn).map_err(backend)?;
    txn.commit().map_err(backend)?;
    Ok(db)
}

fn open(place: &Place, write: bool) -> Result<Session, StoreError> {
    let lease = Lease::acquire(&place.lease_dir).map_err(backend)?;
    let lease = Arc::new(Mutex::new(lease));
    let handle = if write {
        Handle::Write(open_writable(place, &lease)?)
    } else {
        match File::open(&place.db) {
            Ok(file) => {
                let opened = Database::builder()
                    .set_cache_size(CACHE_BYTES)
                    .open_read_only_with_backend(leased(file, &lease)?);
                match opened {
                    Ok(db) => Handle::Read(db),
                    // Left unclean by a writer that died: a writable open repairs it.
                    Err(DatabaseError::RepairAborted) => {
                        Handle::Write(open_writable(place, &lease)?)
                    }
                    Err(e) => return Err(backend(e)),
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Handle::Write(open_writable(place, &lease)?)
            }
            Err(e) => return Err(backend(e)),
        }
    };
    Ok(Session {
        handle,
        lease,
        live: 0,
        writing: false,
    })
}

/// Begins a read transaction, opening the session when it is the instance's first.
pub fn begin_read(place: &Place) -> Result<ReadTransaction, StoreError> {
    SESSION.with_borrow_mut(|slot| {
        if slot.is_none() {
            *slot = Some(open(place, false)?);
        }
        let session = slot.as_mut().expect("opened above");
        let txn = match &session.handle {
            Handle::Read(db) => db.begin_read(),
            Handle::Write(db) => db.begin_read(),
        };
        let txn = txn.map_err(backend);
        if txn.is_ok() {
            session.live += 1;
        }
        end_if_idle(slot);
        txn
    })
}

/// Begins the write transaction, opening the session when it is the instance's first.
pub fn begin_write(place: &Place) -> Result<WriteTransaction, StoreError> {
    SESSION.with_borrow_mut(|slot| {
        if slot.is_none() {
            *slot = Some(open(place, true)?);
        }
        let session = slot.as_mut().expect("opened above");
        let txn = match &session.handle {
            Handle::Write(_) if session.writing => Err(backend(
                "one write transaction at a time: commit or drop the open one first",
            )),
            Handle::Write(db) => db.begin_write().map_err(backend),
            Handle::Read(_) => Err(backend(
                "a write transaction cannot begin while this instance's read transactions \
                 are open",
            )),
        };
        if txn.is_ok() {
            session.live += 1;
            session.writing = true;
        }
        end_if_idle(slot);
        txn
    })
}

/// Ends one transaction (after its redb transaction was committed or dropped); the last
/// one closes the database and frees the lease.
pub fn end(was_writing: bool) {
    SESSION.with_borrow_mut(|slot| {
        if let Some(session) = slot.as_mut() {
            session.live = session.live.saturating_sub(1);
            if was_writing {
                session.writing = false;
            }
        }
        end_if_idle(slot);
    });
}

fn end_if_idle(slot: &mut Option<Session>) {
    if slot.as_ref().is_some_and(|s| s.live == 0) {
        let session = slot.take().expect("checked above");
        // Close first (redb writes its clean-shutdown header), then free the turn.
        drop(session.handle);
        let released = session
            .lease
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .release();
        if let Err(e) = released {
            eprintln!("faktura-plug: freeing the store's lease: {e}");
        }
    }
}

/// Confirms the lease before an operation of a transaction.
pub fn confirm() -> Result<(), StoreError> {
    SESSION.with_borrow(|slot| match slot {
        Some(session) => check(&session.lease),
        None => Err(backend("no transaction is open")),
    })
}

/// The key-value table as a read transaction sees it.
pub fn read_table(
    txn: &ReadTransaction,
) -> Result<ReadOnlyTable<&'static [u8], &'static [u8]>, StoreError> {
    txn.open_table(TABLE).map_err(backend)
}

/// The key-value table as the write transaction sees it.
pub fn write_table(
    txn: &WriteTransaction,
) -> Result<Table<'_, &'static [u8], &'static [u8]>, StoreError> {
    txn.open_table(TABLE).map_err(backend)
}

pub fn get(
    table: &impl ReadableTable<&'static [u8], &'static [u8]>,
    key: &[u8],
) -> Result<Option<Vec<u8>>, StoreError> {
    Ok(table.get(key).map_err(backend)?.map(|v| v.value().to_vec()))
}

pub fn scan(
    table: &impl ReadableTable<&'static [u8], &'static [u8]>,
    prefix: &[u8],
    after: Option<&[u8]>,
    limit: u32,
    reverse: bool,
) -> Result<Vec<kv::Entry>, StoreError> {
    kv::scan(table, prefix, after, limit, reverse).map_err(backend)
}

pub fn put(txn: &WriteTransaction, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
    if !kv::fits(key, value) {
        return Err(StoreError::TooLarge);
    }
    write_table(txn)?.insert(key, value).map_err(backend)?;
    Ok(())
}

pub fn delete(txn: &WriteTransaction, key: &[u8]) -> Result<(), StoreError> {
    write_table(txn)?.remove(key).map_err(backend)?;
    Ok(())
}

/// Ids from the counter entry under `counter`, kept in the transaction: writers take
/// turns here, so no other can take the same ones.
pub fn next_ids(txn: &WriteTransaction, counter: &[u8], n: u32) -> Result<Vec<u64>, StoreError> {
    let mut table = write_table(txn)?;
    let current = get(&table, counter)?;
    let (ids, stored) = kv::counter_step(current.as_deref(), n)
        .ok_or_else(|| backend("an id counter is corrupt or exhausted"))?;
    table.insert(counter, &stored[..]).map_err(backend)?;
    Ok(ids)
}

#[cfg(test)]
mod tests {
    //! Each thread has its own session, as each instance has: threads stand in for the
    //! instances of a runtime serving requests at once.
    use super::*;

    fn read(place: &Place, key: &[u8]) -> Option<Vec<u8>> {
        let txn = begin_read(place).unwrap();
        let value = get(&read_table(&txn).unwrap(), key).unwrap();
        drop(txn);
        end(false);
        value
    }

    fn write(place: &Place, key: &[u8], value: &[u8]) {
        let txn = begin_write(place).unwrap();
        put(&txn, key, value).unwrap();
        txn.commit().unwrap();
        end(true);
    }

    fn generation(place: &Place) -> u64 {
        let mut lease = Lease::acquire(&place.lease_dir).unwrap();
        let g = lease.generation();
        lease.release().unwrap();
        g
    }

    #[test]
    fn a_committed_write_is_read_back_and_every_session_frees_the_lease() {
        let dir = tempfile::tempdir().unwrap();
        let place = Place::in_dir(dir.path());
        assert_eq!(read(&place, b"k"), None);
        write(&place, b"k", b"v");
        assert_eq!(read(&place, b"k"), Some(b"v".to_vec()));
        // Three sessions came and went; the next turn is the fourth.
        assert_eq!(generation(&place), 4);
        assert!(SESSION.with_borrow(Option::is_none));
    }

    #[test]
    fn oversized_values_are_refused_and_nothing_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let place = Place::in_dir(dir.path());
        let txn = begin_write(&place).unwrap();
        let huge = vec![0u8; kv::KEY_BYTES_MAX + 1];
        assert_eq!(put(&txn, &huge, b"v"), Err(StoreError::TooLarge));
        drop(txn);
        end(true);
        assert_eq!(read(&place, &huge), None);
    }

    #[test]
    fn concurrent_instances_lose_no_update() {
        let dir = std::sync::Arc::new(tempfile::tempdir().unwrap());
        let threads: Vec<_> = (0..6)
            .map(|_| {
                let dir = dir.clone();
                std::thread::spawn(move || {
                    let place = Place::in_dir(dir.path());
                    for _ in 0..10 {
                        let txn = begin_write(&place).unwrap();
                        let n = get(&write_table(&txn).unwrap(), b"n")
                            .unwrap()
                            .map_or(0, |v| u64::from_be_bytes(v.try_into().unwrap()));
                        put(&txn, b"n", &(n + 1).to_be_bytes()).unwrap();
                        txn.commit().unwrap();
                        end(true);
                        // Readers in between see whole commits only.
                        assert!(read(&place, b"n").is_some());
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let place = Place::in_dir(dir.path());
        assert_eq!(read(&place, b"n"), Some(60u64.to_be_bytes().to_vec()));
    }

    #[test]
    fn a_writer_that_died_leaves_its_commits_and_a_repairable_file() {
        let dir = tempfile::tempdir().unwrap();
        let place = Place::in_dir(dir.path());
        write(&place, b"before", b"1");
        let txn = begin_write(&place).unwrap();
        put(&txn, b"acknowledged", b"2").unwrap();
        txn.commit().unwrap();
        // A read keeps the session open, so the file is never closed cleanly.
        let reader = begin_read(&place).unwrap();
        end(true);
        let txn = begin_write(&place).unwrap();
        put(&txn, b"never-committed", b"3").unwrap();
        // The instance dies: nothing closes the file or frees the lease.
        std::mem::forget(txn);
        std::mem::forget(reader);
        let session = SESSION.with_borrow_mut(Option::take).unwrap();
        session.lease.lock().unwrap().expire();
        std::mem::forget(session);

        let other = std::thread::spawn(move || {
            let place = Place::in_dir(dir.path());
            (
                read(&place, b"before"),
                read(&place, b"acknowledged"),
                read(&place, b"never-committed"),
            )
        });
        let (before, acknowledged, never) = other.join().unwrap();
        assert_eq!(before, Some(b"1".to_vec()));
        assert_eq!(acknowledged, Some(b"2".to_vec()));
        assert_eq!(never, None);
    }

    #[test]
    fn a_holder_whose_lease_was_taken_over_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let place = Place::in_dir(dir.path());
        write(&place, b"k", b"1");
        let txn = begin_write(&place).unwrap();
        put(&txn, b"k", b"2").unwrap();
        // The instance stalls past the lease's TTL and another takes the store over.
        SESSION.with_borrow(|s| s.as_ref().unwrap().lease.lock().unwrap().expire());
        let mut next = Lease::acquire(&place.lease_dir).unwrap();
        assert!(txn.commit().is_err(), "the displaced holder committed");
        end(true);
        next.release().unwrap();
        assert_eq!(read(&place, b"k"), Some(b"1".to_vec()));
    }

    #[test]
    fn a_second_write_transaction_in_one_instance_is_refused_not_deadlocked() {
        let dir = tempfile::tempdir().unwrap();
        let place = Place::in_dir(dir.path());
        let first = begin_write(&place).unwrap();
        assert!(matches!(begin_write(&place), Err(StoreError::Backend(_))));
        drop(first);
        end(true);
        let reader = begin_read(&place).unwrap();
        assert!(matches!(begin_write(&place), Err(StoreError::Backend(_))));
        drop(reader);
        end(false);
        assert!(SESSION.with_borrow(Option::is_none));
    }
}
