//! The `store` interface on redb over WASI files: `DATA/faktura.redb`, the same file and
//! table (`faktura_providers::kv`) the faktura host keeps, so a data directory moves between
//! the two (never served by both at once).
//!
//! Requests run in instances (one per request, or one for many requests in turn) that share
//! nothing but files. redb's multi-writer mode lets processes write a file in turn while
//! others read it, each reader on the last commit it finds, through byte-range locks on the file that announce who writes
//! and which commit each reader reads, so that writers keep those commits' pages; each commit
//! records the allocator state, so that the next writer (also after one that died) opens the
//! file without a repair. WASI has no locks, so `SharedFile` gives redb what the locks would
//! have told it:
//!
//! - Writers take turns through the store's lease (`lease`): a writer holds it from its
//!   transaction's begin to its end, and only the holder of the lease ever writes the file
//!   (every write confirms it first). For redb, the holder holds every writer lock.
//! - Readers take no lease and write nothing: a reader opens the file read-only, reads the
//!   header's last durable commit and serves its snapshot. It never waits.
//! - A reader cannot announce which commit it reads, so the writer keeps every commit's pages
//!   for `RETENTION` after a newer commit replaced it (the pages a reader could still read), and a
//!   read transaction refuses to read once it is older than `READ_MAX`, well inside `RETENTION`.
//!   Each writer notes in `faktura.pins` the oldest commit the file holds, with the time; the
//!   commits older than one noted more than `RETENTION` ago can have no reader left.
//!
//! An instance opens the file once: its reader follows the file to the latest commit at each
//! read transaction, and its writer, kept open between turns, to the latest commit at each
//! write transaction (redb reloads what another writer committed in between).
//!
//! A writer that dies (a trap, a killed process) leaves its lease and a file marked as open
//! by a writer; the lease expires within a second (`lease::TTL`), and the next writer opens
//! the file from its last commit and the allocator state recorded with it. Readers meanwhile
//! read the last durable commit, which no writer overwrites.
//! Commits are durable before they return (redb's immediate durability: fsync through
//! `wasi:filesystem`), and a reader never sees a commit before it is durable (redb marks a
//! commit's header unflushed until its fsync, and a reader takes the commit before it).

use std::cell::RefCell;
use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use faktura_providers::kv::{self, TABLE};
use redb::backends::FileBackend;
use redb::{
    BackendError, ConcurrencyMode, Database, ReadOnlyDatabase, ReadOnlyTable, ReadTransaction,
    ReadableDatabase, ReadableTable, StorageBackend, Table, WriteTransaction,
};

use crate::lease::{Lease, LeaseError};

/// redb's page cache per open database (an instance has a reader and a writer).
const CACHE_BYTES: usize = 4 << 20;
/// How long a replaced commit's pages stay unused by writers: a reader may still read them.
pub const RETENTION: Duration = Duration::from_secs(20);
/// The oldest a read transaction may be and still read: its commit's pages are kept for `RETENTION`
/// after a newer commit replaced it, and this leaves a wide margin.
pub const READ_MAX: Duration = Duration::from_secs(10);
/// Writers note the commits the file holds at most this often (`pins`).
const NOTE_EVERY: Duration = Duration::from_millis(250);
/// How often a reader tries again when the header it read was being written at that moment.
const OPEN_TRIES: u32 = 5;

/// Why a store call failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreError {
    /// A key or value over `kv`'s limits.
    TooLarge,
    /// This writer's turn expired (it stalled past `lease::TTL`) and another writer took the
    /// store: nothing of its transaction was kept, and it may run again.
    Conflict,
    /// The file, the lease or redb failed; the message is for logs.
    Backend(String),
}

fn backend(e: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(e.to_string())
}

fn lease_error(e: LeaseError) -> StoreError {
    match e {
        LeaseError::Lost => StoreError::Conflict,
        e => backend(e),
    }
}

/// A writer's turns as its database file sees them: the lease while a turn is held, and the
/// oldest commit a reader may still read, noted when the turn began. One database stays open
/// across the turns of an instance (a runtime may send an instance many requests).
#[derive(Debug, Default)]
struct Turn {
    lease: Mutex<Option<Lease>>,
    read_from: AtomicU64,
}

impl Turn {
    fn lease(&self) -> std::sync::MutexGuard<'_, Option<Lease>> {
        self.lease.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Confirms that this writer holds the store's turn.
    fn check(&self) -> Result<(), StoreError> {
        match self.lease().as_mut() {
            Some(lease) => lease.check().map_err(lease_error),
            None => Err(backend("no write turn is held")),
        }
    }

    /// Ends the turn, if one is held.
    fn free(&self) {
        if let Some(mut lease) = self.lease().take()
            && let Err(e) = lease.release()
        {
            eprintln!("faktura-plug: freeing the store's lease: {e}");
        }
    }
}

/// The byte offsets redb's multi-process modes lock (redb 4's `db.rs`; its protocol
/// generation byte would change with their meaning): offsets past the end of any file, one
/// per thing announced.
mod locks {
    const BASE: u64 = 1 << 62;
    /// Held by a live writer that found the file consistent: an unclean file is its.
    pub(super) const CONSISTENT: u64 = BASE + 4;
    /// `READING + t` is held by each reader of commit `t`.
    pub(super) const READING: u64 = BASE + 1024;
}

/// The lowest and highest offset of a range redb asks about.
fn ends(start: Bound<u64>, end: Bound<u64>) -> (u64, u64) {
    let low = match start {
        Bound::Included(s) => s,
        Bound::Excluded(s) => s.saturating_add(1),
        Bound::Unbounded => 0,
    };
    let high = match end {
        Bound::Included(e) => e,
        Bound::Excluded(e) => e.saturating_sub(1),
        Bound::Unbounded => u64::MAX,
    };
    (low, high)
}

/// The database file as the instances share it: see the module's documentation.
#[derive(Debug)]
struct SharedFile {
    file: FileBackend,
    /// The writer's turns; `None` for a reader, which never writes.
    turn: Option<Arc<Turn>>,
}

impl SharedFile {
    fn confirm(&self) -> std::io::Result<()> {
        match &self.turn {
            Some(turn) => turn
                .check()
                .map_err(|e| std::io::Error::other(format!("{e:?}"))),
            None => Err(std::io::Error::other("a reader never writes the store")),
        }
    }

    /// The commits from this one on may have readers (asked by writers only).
    fn read_from(&self) -> u64 {
        self.turn
            .as_ref()
            .map_or(0, |t| t.read_from.load(Ordering::Acquire))
    }
}

impl StorageBackend for SharedFile {
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
        #[cfg(test)]
        tests::SYNCS.with(|n| n.set(n.get() + 1));
        self.file.sync_data()
    }

    fn write(&self, offset: u64, data: &[u8]) -> std::io::Result<()> {
        self.confirm()?;
        self.file.write(offset, data)
    }

    fn close(&self) -> std::io::Result<()> {
        Ok(())
    }

    // Every lock redb takes is granted: a writer holds the lease, which is what the writer
    // locks stand for, and a reader's locks only announce it, which `RETENTION` stands in for.
    // The header's lock kept a reader from reading the header while a writer writes it: a
    // reader that does finds a commit slot whose checksum fails, and reads the other slot (an
    // older commit, whose pages are kept too) or opens again (`OPEN_TRIES`).
    fn try_lock_range(&self, _: Bound<u64>, _: Bound<u64>) -> Result<bool, BackendError> {
        Ok(true)
    }

    fn try_lock_shared_range(&self, _: Bound<u64>, _: Bound<u64>) -> Result<bool, BackendError> {
        Ok(true)
    }

    fn lock_range(&self, _: Bound<u64>, _: Bound<u64>) -> Result<(), BackendError> {
        Ok(())
    }

    fn lock_shared_range(&self, _: Bound<u64>, _: Bound<u64>) -> Result<(), BackendError> {
        Ok(())
    }

    fn unlock_range(&self, _: Bound<u64>, _: Bound<u64>) -> Result<(), BackendError> {
        Ok(())
    }

    /// What another process would hold: the commits a reader may still read, and, for a
    /// reader, a live writer vouching for a file it left unclean. A writer that died left its
    /// last durable commit intact (redb writes a commit's pages where no commit it could
    /// replace lives), so that is what a reader reads then, too. Nothing else is held: no
    /// writer of another mode or protocol generation shares the file.
    fn query_lock_range(&self, start: Bound<u64>, end: Bound<u64>) -> Result<bool, BackendError> {
        let (low, high) = ends(start, end);
        if high >= locks::READING {
            return Ok(high >= locks::READING.saturating_add(self.read_from()));
        }
        Ok(low <= locks::CONSISTENT && locks::CONSISTENT <= high)
    }
}

/// Where the store keeps its files.
#[derive(Debug, Clone)]
pub struct Place {
    pub db: PathBuf,
    pub lease_dir: PathBuf,
    /// The writers' notes of the commits the file held, and when (`pins`).
    pub pins: PathBuf,
}

impl Place {
    pub fn in_dir(data: &Path) -> Place {
        Place {
            db: data.join("faktura.redb"),
            lease_dir: data.join("faktura.lease"),
            pins: data.join("faktura.pins"),
        }
    }
}

/// The writers' notes of which commits readers may still read, in `Place::pins`: one line
/// per write turn, "{commit} {unix milliseconds}": at that time the file held no commit older
/// than `commit`. Only the lease's holder writes it; nothing in it needs to survive a crash
/// of the machine, since no reader does either.
mod pins {
    use super::*;

    fn now_ms() -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64)
    }

    fn parse(text: &str) -> Vec<(u64, u64)> {
        text.lines()
            .filter_map(|l| {
                let (c, t) = l.split_once(' ')?;
                Some((c.parse().ok()?, t.parse().ok()?))
            })
            .collect()
    }

    /// The oldest commit a reader may still read, given the notes and the time: every
    /// commit older than one noted more than `RETENTION` ago was replaced before then.
    pub(super) fn read_from(notes: &[(u64, u64)], now_ms: u64) -> u64 {
        let kept = RETENTION.as_millis() as u64;
        notes
            .iter()
            .filter(|(_, at)| at.saturating_add(kept) < now_ms)
            .map(|(commit, _)| *commit)
            .max()
            .unwrap_or(0)
    }

    /// Notes that the file holds no commit older than `oldest` now, and returns the oldest
    /// commit a reader may still read. Notes no longer needed are dropped now and then.
    pub(super) fn note(path: &Path, oldest: u64) -> Result<u64, StoreError> {
        let now = now_ms();
        let mut notes = match std::fs::read_to_string(path) {
            Ok(text) => parse(&text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(backend(e)),
        };
        let from = read_from(&notes, now);
        // One note in `NOTE_EVERY` is enough: a note taken earlier names an older commit,
        // which keeps more pages, never fewer.
        if notes
            .last()
            .is_some_and(|(_, at)| at.saturating_add(NOTE_EVERY.as_millis() as u64) > now)
        {
            return Ok(from);
        }
        notes.push((oldest, now));
        if notes.len() > 256 {
            // Keep the notes of the last `RETENTION` and the newest before them.
            notes.retain(|(commit, at)| {
                *commit >= from || at.saturating_add(RETENTION.as_millis() as u64) >= now
            });
            let text: String = notes.iter().map(|(c, t)| format!("{c} {t}\n")).collect();
            let next = path.with_extension("pins.next");
            std::fs::write(&next, text).map_err(backend)?;
            std::fs::rename(&next, path).map_err(backend)?;
        } else {
            let mut file = OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(backend)?;
            file.write_all(format!("{oldest} {now}\n").as_bytes())
                .map_err(backend)?;
        }
        Ok(from)
    }

    /// The older of the two commits redb's header holds (its 320 bytes: magic and god byte,
    /// then two commit slots of 128 bytes with the commit's id 104 bytes in): no reader that
    /// begins from now on reads an older one.
    pub(super) fn oldest_in_header(db: &Path) -> Result<u64, StoreError> {
        use std::io::Read as _;
        let mut header = [0u8; 320];
        File::open(db)
            .and_then(|mut f| f.read_exact(&mut header))
            .map_err(backend)?;
        let id = |slot: usize| {
            let at = slot + 104;
            u64::from_le_bytes(header[at..at + 8].try_into().expect("8 bytes"))
        };
        Ok(id(64).min(id(192)))
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn commits_replaced_longer_ago_than_kept_have_no_reader() {
            let kept = RETENTION.as_millis() as u64;
            let now = 100 * kept;
            let notes = [
                (3, now - 3 * kept),
                (7, now - 2 * kept),
                (9, now - kept / 2),
            ];
            assert_eq!(read_from(&notes, now), 7);
            assert_eq!(
                read_from(&notes[2..], now),
                0,
                "nothing replaced long enough ago"
            );
            assert_eq!(read_from(&[], now), 0);
        }
    }
}

fn shared_file(file: File, turn: Option<Arc<Turn>>) -> Result<SharedFile, StoreError> {
    Ok(SharedFile {
        file: FileBackend::new(file).map_err(backend)?,
        turn,
    })
}

/// This instance's writer: the database, open from its first turn on, and the turn.
struct Session {
    db: Database,
    turn: Arc<Turn>,
    writing: bool,
}

thread_local! {
    static SESSION: RefCell<Option<Session>> = const { RefCell::new(None) };
    static READER: RefCell<Option<ReadOnlyDatabase>> = const { RefCell::new(None) };
}

/// Notes, at the start of a turn, which commits readers may still read (`pins`).
fn note_readers(place: &Place, turn: &Turn, fresh: bool) -> Result<(), StoreError> {
    // A fresh file has no commit a reader could read yet.
    let from = if fresh {
        0
    } else {
        pins::note(&place.pins, pins::oldest_in_header(&place.db)?)?
    };
    turn.read_from.store(from, Ordering::Release);
    Ok(())
}

fn open_writable(place: &Place, turn: &Arc<Turn>) -> Result<Database, StoreError> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&place.db)
        .map_err(backend)?;
    let fresh = file.metadata().map_err(backend)?.len() == 0;
    note_readers(place, turn, fresh)?;
    let db = Database::builder()
        .set_cache_size(CACHE_BYTES)
        .set_concurrency_mode(ConcurrencyMode::MultiWriter)
        .create_with_backend(shared_file(file, Some(turn.clone()))?)
        .map_err(backend)?;
    // Every store has the table, so that reads can open it: a store's first writer makes it.
    let has_table = db.begin_read().map_err(backend)?.open_table(TABLE).is_ok();
    if !has_table {
        let txn = db.begin_write().map_err(backend)?;
        kv::ensure_table(&txn).map_err(backend)?;
        txn.commit().map_err(backend)?;
    }
    Ok(db)
}

/// Waits for the store's turn and readies this instance's writer for it: the database
/// opened in an earlier turn when there is one (redb brings it up to the file's last commit
/// when the write transaction begins), else opened now.
fn begin_turn(place: &Place, slot: &mut Option<Session>) -> Result<(), StoreError> {
    let lease = Lease::acquire(&place.lease_dir).map_err(lease_error)?;
    let begun = match slot {
        Some(session) => {
            *session.turn.lease() = Some(lease);
            note_readers(place, &session.turn, false)
        }
        None => {
            let turn = Arc::new(Turn::default());
            *turn.lease() = Some(lease);
            match open_writable(place, &turn) {
                Ok(db) => {
                    *slot = Some(Session {
                        db,
                        turn,
                        writing: false,
                    });
                    Ok(())
                }
                Err(e) => {
                    turn.free();
                    Err(e)
                }
            }
        }
    };
    if begun.is_err() {
        end_turn(slot, false);
    }
    begun
}

/// Ends the turn. `keep`: the database stays open for the instance's next turn (after a
/// commit, the state it recorded is the file's); otherwise it is left as a writer that died
/// leaves it, and the next turn opens it again.
fn end_turn(slot: &mut Option<Session>, keep: bool) {
    let Some(session) = slot.as_mut() else { return };
    session.writing = false;
    session.turn.free();
    if !keep {
        let session = slot.take().expect("checked above");
        // Not closed: every commit recorded what the next writer needs, and closing would
        // write and sync the file four more times, outside any turn.
        std::mem::forget(session.db);
    }
}

fn open_reader(place: &Place) -> Result<ReadOnlyDatabase, StoreError> {
    let file = File::open(&place.db).map_err(backend)?;
    Database::builder()
        .set_cache_size(CACHE_BYTES)
        .set_concurrency_mode(ConcurrencyMode::MultiWriter)
        .open_read_only_with_backend(shared_file(file, None)?)
        .map_err(backend)
}

/// A read transaction and when it began: it reads only within `READ_MAX` of that.
pub struct Snapshot {
    txn: ReadTransaction,
    began: Instant,
}

impl Snapshot {
    /// The transaction, while its commit's pages are surely kept.
    pub fn txn(&self) -> Result<&ReadTransaction, StoreError> {
        if self.began.elapsed() > READ_MAX {
            return Err(backend(format!(
                "a read transaction is older than {READ_MAX:?}: what it read may have been \
                 written over since"
            )));
        }
        Ok(&self.txn)
    }
}

/// Begins a read transaction on the last durable commit, without waiting for anyone.
pub fn begin_read(place: &Place) -> Result<Snapshot, StoreError> {
    READER.with_borrow_mut(|reader| {
        let mut tries = 0;
        loop {
            if reader.is_none() {
                match open_reader(place) {
                    Ok(db) => *reader = Some(db),
                    Err(e) => {
                        tries += 1;
                        if tries >= OPEN_TRIES {
                            return Err(e);
                        }
                        let writing = SESSION.with_borrow(Option::is_some);
                        if !writing && (!place.db.exists() || tries == OPEN_TRIES - 1) {
                            // No store yet, or a file only a writer's open can repair (the
                            // first writer died before its first commit): one writer turn
                            // makes it readable.
                            SESSION.with_borrow_mut(|slot| {
                                if begin_turn(place, slot).is_ok() {
                                    end_turn(slot, true);
                                }
                            });
                        } else {
                            // The header was being written just then.
                            std::thread::sleep(Duration::from_millis(1));
                        }
                        continue;
                    }
                }
            }
            let db = reader.as_ref().expect("opened above");
            match db.begin_read() {
                Ok(txn) => {
                    return Ok(Snapshot {
                        txn,
                        began: Instant::now(),
                    });
                }
                Err(e) => {
                    *reader = None;
                    tries += 1;
                    if tries >= OPEN_TRIES {
                        return Err(backend(e));
                    }
                }
            }
        }
    })
}

/// Begins the write transaction: waits for the store's turn, which it holds until `end_write`.
pub fn begin_write(place: &Place) -> Result<WriteTransaction, StoreError> {
    SESSION.with_borrow_mut(|slot| {
        if slot.as_ref().is_some_and(|s| s.writing) {
            return Err(backend(
                "one write transaction at a time: commit or drop the open one first",
            ));
        }
        begin_turn(place, slot)?;
        let session = slot.as_mut().expect("readied by begin_turn");
        match session.db.begin_write() {
            Ok(txn) => {
                session.writing = true;
                Ok(txn)
            }
            Err(e) => {
                end_turn(slot, false);
                Err(backend(e))
            }
        }
    })
}

/// Ends the write transaction (after its redb transaction was committed or dropped) and the
/// turn. `committed`: it was committed, and the database stays open for the next turn; after
/// a rollback or a failure it is opened again then.
pub fn end_write(committed: bool) {
    SESSION.with_borrow_mut(|slot| end_turn(slot, committed));
}

/// Confirms this instance still holds the store's turn, before an operation of its write
/// transaction.
pub fn confirm_turn() -> Result<(), StoreError> {
    SESSION.with_borrow(|slot| match slot {
        Some(session) if session.writing => session.turn.check(),
        _ => Err(backend("no write transaction is open")),
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

/// The values of `keys` in their order, `None` where a key is absent.
pub fn get_many(
    table: &impl ReadableTable<&'static [u8], &'static [u8]>,
    keys: &[Vec<u8>],
) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
    keys.iter().map(|k| get(table, k)).collect()
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

/// The writes of `writes` in order (`None`: a delete) on the table opened once; the
/// first refused ends them, those before it made.
pub fn write_many(
    txn: &WriteTransaction,
    writes: impl IntoIterator<Item = (Vec<u8>, Option<Vec<u8>>)>,
) -> Result<(), StoreError> {
    let mut table = write_table(txn)?;
    for (key, value) in writes {
        match value {
            Some(value) if !kv::fits(&key, &value) => return Err(StoreError::TooLarge),
            Some(value) => drop(table.insert(&key[..], &value[..]).map_err(backend)?),
            None => drop(table.remove(&key[..]).map_err(backend)?),
        }
    }
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
    //! Each thread has its own reader and session, as each instance has: threads stand in
    //! for the instances of a runtime serving requests at once.
    use super::*;
    use std::cell::Cell;
    use std::sync::Barrier;
    use std::sync::atomic::AtomicBool;

    thread_local! {
        /// The file syncs of this thread's writers.
        pub(super) static SYNCS: Cell<u32> = const { Cell::new(0) };
    }

    fn read(place: &Place, key: &[u8]) -> Option<Vec<u8>> {
        let snapshot = begin_read(place).unwrap();
        get(&read_table(snapshot.txn().unwrap()).unwrap(), key).unwrap()
    }

    fn write(place: &Place, key: &[u8], value: &[u8]) {
        let txn = begin_write(place).unwrap();
        put(&txn, key, value).unwrap();
        txn.commit().unwrap();
        end_write(true);
    }

    /// This instance's writer stays open between its turns, and holds no turn meanwhile.
    fn holds_no_turn() -> bool {
        SESSION.with_borrow(|s| {
            s.as_ref()
                .is_some_and(|s| !s.writing && s.turn.lease().is_none())
        })
    }

    fn generation(place: &Place) -> u64 {
        let mut lease = Lease::acquire(&place.lease_dir).unwrap();
        let g = lease.generation();
        lease.release().unwrap();
        g
    }

    #[test]
    fn a_committed_write_is_read_back_and_only_writers_take_turns() {
        let dir = tempfile::tempdir().unwrap();
        let place = Place::in_dir(dir.path());
        // The first read finds no store: one writer turn makes it.
        assert_eq!(read(&place, b"k"), None);
        write(&place, b"k", b"v");
        assert_eq!(read(&place, b"k"), Some(b"v".to_vec()));
        assert_eq!(read(&place, b"k"), Some(b"v".to_vec()));
        // Two writer turns came and went; the readers took none.
        assert_eq!(generation(&place), 3);
        assert!(holds_no_turn());
    }

    #[test]
    fn oversized_values_are_refused_and_nothing_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let place = Place::in_dir(dir.path());
        let txn = begin_write(&place).unwrap();
        let huge = vec![0u8; kv::KEY_BYTES_MAX + 1];
        assert_eq!(put(&txn, &huge, b"v"), Err(StoreError::TooLarge));
        drop(txn);
        end_write(false);
        // A rolled-back turn leaves no writer open; the next turn opens one.
        assert!(SESSION.with_borrow(Option::is_none));
        assert_eq!(read(&place, &huge), None);
    }

    #[test]
    fn a_reader_does_not_wait_for_a_writer_and_reads_the_last_commit() {
        let dir = Arc::new(tempfile::tempdir().unwrap());
        let place = Place::in_dir(dir.path());
        write(&place, b"k", b"1");
        let txn = begin_write(&place).unwrap();
        put(&txn, b"k", b"2").unwrap();
        // The writer holds its turn; another instance reads meanwhile.
        let reader = {
            let dir = dir.clone();
            std::thread::spawn(move || {
                let started = Instant::now();
                let value = read(&Place::in_dir(dir.path()), b"k");
                (value, started.elapsed())
            })
        };
        let (value, took) = reader.join().unwrap();
        assert_eq!(value, Some(b"1".to_vec()));
        assert!(
            took < Duration::from_millis(500),
            "the reader waited {took:?}"
        );
        txn.commit().unwrap();
        end_write(true);
        assert_eq!(read(&place, b"k"), Some(b"2".to_vec()));
    }

    /// Every commit rewrites all keys with its number: a snapshot holds one number in all.
    fn rewrite_all(place: &Place, n: u64) {
        let txn = begin_write(place).unwrap();
        for k in 0..64u64 {
            let mut value = n.to_be_bytes().to_vec();
            value.resize(300, k as u8);
            put(&txn, &k.to_be_bytes(), &value).unwrap();
        }
        txn.commit().unwrap();
        end_write(true);
    }

    fn numbers(snapshot: &Snapshot) -> Vec<u64> {
        let table = read_table(snapshot.txn().unwrap()).unwrap();
        scan(&table, b"", None, 1000, false)
            .unwrap()
            .into_iter()
            .map(|(_, v)| u64::from_be_bytes(v[..8].try_into().unwrap()))
            .collect()
    }

    #[test]
    fn a_snapshot_stays_whole_while_writers_commit_over_it() {
        // Regression: a writer reused the pages of a commit another instance still read.
        let dir = tempfile::tempdir().unwrap();
        let place = Place::in_dir(dir.path());
        rewrite_all(&place, 0);
        let snapshot = begin_read(&place).unwrap();
        for n in 1..=200 {
            rewrite_all(&place, n);
        }
        assert_eq!(numbers(&snapshot), vec![0; 64]);
        let now = begin_read(&place).unwrap();
        assert_eq!(numbers(&now), vec![200; 64]);
    }

    #[test]
    fn concurrent_readers_see_whole_commits_and_writers_lose_no_update() {
        let dir = Arc::new(tempfile::tempdir().unwrap());
        rewrite_all(&Place::in_dir(dir.path()), 0);
        let done = Arc::new(AtomicBool::new(false));
        let start = Arc::new(Barrier::new(7));
        let writers: Vec<_> = (0..4)
            .map(|_| {
                let (dir, start) = (dir.clone(), start.clone());
                std::thread::spawn(move || {
                    let place = Place::in_dir(dir.path());
                    let counter = |txn: &WriteTransaction| {
                        get(&write_table(txn).unwrap(), &0u64.to_be_bytes())
                            .unwrap()
                            .map_or(0, |v| u64::from_be_bytes(v[..8].try_into().unwrap()))
                    };
                    start.wait();
                    for _ in 0..15 {
                        let txn = begin_write(&place).unwrap();
                        let n = counter(&txn);
                        drop(txn);
                        end_write(false);
                        // Read and write in one transaction: the increment is lost if
                        // another writer came between.
                        let txn = begin_write(&place).unwrap();
                        let m = counter(&txn);
                        assert!(m >= n);
                        drop(txn);
                        end_write(false);
                        let txn = begin_write(&place).unwrap();
                        let m = counter(&txn);
                        for k in 0..64u64 {
                            let mut value = (m + 1).to_be_bytes().to_vec();
                            value.resize(300, k as u8);
                            put(&txn, &k.to_be_bytes(), &value).unwrap();
                        }
                        txn.commit().unwrap();
                        end_write(true);
                    }
                })
            })
            .collect();
        let readers: Vec<_> = (0..3)
            .map(|_| {
                let (dir, start, done) = (dir.clone(), start.clone(), done.clone());
                std::thread::spawn(move || {
                    let place = Place::in_dir(dir.path());
                    start.wait();
                    let mut reads = 0;
                    while !done.load(Ordering::SeqCst) {
                        let numbers = numbers(&begin_read(&place).unwrap());
                        assert!(numbers.iter().all(|n| *n == numbers[0]), "{numbers:?}");
                        reads += 1;
                    }
                    reads
                })
            })
            .collect();
        for w in writers {
            w.join().unwrap();
        }
        done.store(true, Ordering::SeqCst);
        for r in readers {
            assert!(r.join().unwrap() > 0);
        }
        let place = Place::in_dir(dir.path());
        assert_eq!(numbers(&begin_read(&place).unwrap()), vec![60; 64]);
    }

    #[test]
    fn a_writer_that_died_delays_the_next_by_under_a_second_and_keeps_its_commits() {
        let dir = tempfile::tempdir().unwrap();
        let place = Place::in_dir(dir.path());
        write(&place, b"before", b"1");
        let txn = begin_write(&place).unwrap();
        put(&txn, b"never-committed", b"2").unwrap();
        // The instance dies: nothing closes the file or frees the lease.
        std::mem::forget(txn);
        std::mem::forget(SESSION.with_borrow_mut(Option::take).unwrap());

        let dir2 = dir.path().to_owned();
        let other = std::thread::spawn(move || {
            let place = Place::in_dir(&dir2);
            // Readers do not wait at all.
            let started = Instant::now();
            let before = read(&place, b"before");
            let read_took = started.elapsed();
            // The next writer's turn comes within the lease's TTL (what it then writes and
            // syncs is its own work, not the delay).
            let started = Instant::now();
            let txn = begin_write(&place).unwrap();
            let write_took = started.elapsed();
            put(&txn, b"after", b"3").unwrap();
            txn.commit().unwrap();
            end_write(true);
            (
                before,
                read(&place, b"never-committed"),
                read(&place, b"after"),
                read_took,
                write_took,
            )
        });
        let (before, never, after, read_took, write_took) = other.join().unwrap();
        assert_eq!(before, Some(b"1".to_vec()));
        assert_eq!(never, None);
        assert_eq!(after, Some(b"3".to_vec()));
        assert!(read_took < Duration::from_millis(200), "{read_took:?}");
        assert!(write_took < Duration::from_secs(1), "{write_took:?}");
    }

    #[test]
    fn a_holder_whose_turn_was_taken_over_writes_nothing_and_may_run_again() {
        let dir = tempfile::tempdir().unwrap();
        let place = Place::in_dir(dir.path());
        write(&place, b"k", b"1");
        let txn = begin_write(&place).unwrap();
        put(&txn, b"k", b"2").unwrap();
        // The instance stalls past the lease's TTL and another takes the store over.
        SESSION.with_borrow(|s| s.as_ref().unwrap().turn.lease().as_mut().unwrap().expire());
        let mut next = Lease::acquire(&place.lease_dir).unwrap();
        assert_eq!(confirm_turn(), Err(StoreError::Conflict));
        assert!(txn.commit().is_err(), "the displaced holder committed");
        end_write(false);
        next.release().unwrap();
        assert_eq!(read(&place, b"k"), Some(b"1".to_vec()));
    }

    #[test]
    fn a_writer_that_cannot_open_the_file_frees_its_turn_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let place = Place::in_dir(dir.path());
        std::fs::create_dir(&place.db).unwrap();
        assert!(matches!(begin_write(&place), Err(StoreError::Backend(_))));
        let started = Instant::now();
        let mut next = Lease::acquire(&place.lease_dir).unwrap();
        let took = started.elapsed();
        assert!(
            took < crate::lease::TTL / 2,
            "the next writer waited {took:?}"
        );
        next.release().unwrap();
    }

    #[test]
    fn a_second_write_transaction_in_one_instance_is_refused_not_deadlocked() {
        let dir = tempfile::tempdir().unwrap();
        let place = Place::in_dir(dir.path());
        let first = begin_write(&place).unwrap();
        assert!(matches!(begin_write(&place), Err(StoreError::Backend(_))));
        drop(first);
        end_write(false);
        // Reads beside one's own write transaction read the last commit.
        let txn = begin_write(&place).unwrap();
        put(&txn, b"k", b"1").unwrap();
        assert_eq!(read(&place, b"k"), None);
        txn.commit().unwrap();
        end_write(true);
        assert_eq!(read(&place, b"k"), Some(b"1".to_vec()));
        assert!(holds_no_turn());
    }

    #[test]
    fn a_write_turn_syncs_the_file_twice_and_an_instance_keeps_its_writer_between_turns() {
        // Regression: closing the database at the end of each turn synced it four times
        // more, in the turn that every other writer waits for.
        let dir = Arc::new(tempfile::tempdir().unwrap());
        let place = Place::in_dir(dir.path());
        // A new instance's first turn opens the file, taking it over from the last writer
        // (its pages, then the header), then commits: its pages and header, then the
        // header's mark that it is durable.
        write(&place, b"k", b"1");
        let other = |value: &'static [u8]| {
            let dir = dir.clone();
            std::thread::spawn(move || {
                SYNCS.with(|n| n.set(0));
                write(&Place::in_dir(dir.path()), b"k", value);
                SYNCS.with(Cell::get)
            })
            .join()
            .unwrap()
        };
        assert_eq!(other(b"2"), 4);
        // The instance's next turn begins on the database it kept open, which follows the
        // other's commit without a sync: the commit's two alone.
        SYNCS.with(|n| n.set(0));
        let txn = begin_write(&place).unwrap();
        assert_eq!(
            get(&write_table(&txn).unwrap(), b"k").unwrap(),
            Some(b"2".to_vec())
        );
        put(&txn, b"k", b"3").unwrap();
        txn.commit().unwrap();
        end_write(true);
        assert_eq!(SYNCS.with(Cell::get), 2);
        assert_eq!(read(&place, b"k"), Some(b"3".to_vec()));
        assert!(holds_no_turn());
    }

    #[test]
    fn the_header_names_the_commits_the_file_holds() {
        let dir = tempfile::tempdir().unwrap();
        let place = Place::in_dir(dir.path());
        write(&place, b"k", b"1");
        let first = pins::oldest_in_header(&place.db).unwrap();
        write(&place, b"k", b"2");
        let second = pins::oldest_in_header(&place.db).unwrap();
        write(&place, b"k", b"3");
        let third = pins::oldest_in_header(&place.db).unwrap();
        assert!(
            0 < first && first < second && second < third,
            "{first} {second} {third}"
        );
    }
}
