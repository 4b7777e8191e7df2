//! `faktura export` and `faktura import`: the whole store as one stream in key order, so
//! that an installation moves between backends (redb and PostgreSQL hold the same keys and
//! values) and back.
//!
//! The format is written by hand because it is three lines of framing around what the
//! store already is: a header line, then each entry as a 4-byte big-endian key length, the
//! key, a 4-byte value length and the value, then a trailer (a length of `u32::MAX`, the
//! number of entries as 8 bytes and the SHA-256 of everything before the trailer). An
//! export reads one snapshot; an import checks the whole file before it writes anything,
//! and writes only into an empty store.

use std::collections::BTreeMap;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::Path;

use anyhow::{Context as _, bail};
use sha2::{Digest, Sha256};

use super::backend::Backend;

const HEADER: &[u8] = b"faktura store export 1\n";
/// The length that marks the trailer instead of a key.
const TRAILER: u32 = u32::MAX;
/// Entries read per scan of the export's snapshot.
const SCAN_BATCH: u32 = 1000;
/// Bytes written per transaction of an import (at least one entry each).
const IMPORT_BATCH_BYTES: usize = 8 << 20;

/// What an export or import moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Moved {
    pub entries: u64,
    pub bytes: u64,
}

/// Writes every entry of `db` to `path`, from one read snapshot.
pub(crate) async fn export(db: &dyn Backend, path: &Path) -> anyhow::Result<Moved> {
    let file = std::fs::File::create(path)
        .with_context(|| format!("creating the export file {}", path.display()))?;
    let mut out = Hashed::new(BufWriter::new(file));
    out.write_all(HEADER)?;
    let txn = db.begin_read().await?;
    // Read after the snapshot began, so each counter is past every id the snapshot holds.
    let mut counters: BTreeMap<Vec<u8>, Vec<u8>> = db.counters().await?.into_iter().collect();
    let mut after: Option<Vec<u8>> = None;
    let mut moved = Moved {
        entries: 0,
        bytes: 0,
    };
    let mut write = |key: &[u8], value: &[u8]| -> anyhow::Result<()> {
        out.write_all(&len(key)?.to_be_bytes())?;
        out.write_all(key)?;
        out.write_all(&len(value)?.to_be_bytes())?;
        out.write_all(value)?;
        moved.entries += 1;
        moved.bytes += (key.len() + value.len()) as u64;
        Ok(())
    };
    loop {
        let batch = txn
            .scan(Vec::new(), after.take(), SCAN_BATCH, false)
            .await?;
        let done = batch.len() < SCAN_BATCH as usize;
        for (key, value) in &batch {
            // Counters kept outside the entries go in key order, in place of their entry.
            while let Some(first) = counters.first_entry().filter(|c| c.key() < key) {
                let (k, v) = first.remove_entry();
                write(&k, &v)?;
            }
            match counters.remove(key) {
                Some(counter) => write(key, &counter)?,
                None => write(key, value)?,
            }
        }
        after = batch.into_iter().last().map(|(k, _)| k);
        if done || after.is_none() {
            break;
        }
    }
    for (k, v) in std::mem::take(&mut counters) {
        write(&k, &v)?;
    }
    out.write_all(&TRAILER.to_be_bytes())?;
    out.write_all(&moved.entries.to_be_bytes())?;
    let (mut inner, digest) = out.finish();
    inner.write_all(&digest)?;
    inner
        .into_inner()
        .map_err(|e| e.into_error())?
        .sync_all()
        .context("writing the export file to disk")?;
    Ok(moved)
}

fn len(bytes: &[u8]) -> anyhow::Result<u32> {
    u32::try_from(bytes.len())
        .ok()
        .filter(|n| *n != TRAILER)
        .context("an entry over 4 GiB")
}

/// Reads `path` into the empty store `db`: the whole file is checked first (framing,
/// count, checksum), then read again and written in transactions of a few MiB, so that an
/// export larger than memory imports.
pub(crate) async fn import(db: &dyn Backend, path: &Path) -> anyhow::Result<Moved> {
    let mut check = Entries::open(path)?;
    while check.next_entry()?.is_some() {}
    {
        let txn = db.begin_read().await?;
        if !txn.scan(Vec::new(), None, 1, false).await?.is_empty() {
            bail!("the store is not empty: import writes only into an empty store");
        }
    }
    // Ids start after the counters of the import, not after those of an earlier store.
    db.reset_counters().await?;
    let mut entries = Entries::open(path)?;
    let mut txn = db.begin_write().await?;
    let mut batch_bytes = 0;
    while let Some((key, value)) = entries.next_entry()? {
        batch_bytes += key.len() + value.len();
        txn.put(key, value).await?;
        if batch_bytes >= IMPORT_BATCH_BYTES {
            txn.commit().await?;
            txn = db.begin_write().await?;
            batch_bytes = 0;
        }
    }
    txn.commit().await?;
    Ok(entries.moved)
}

/// The entries of an export file, in order; the trailer's count and checksum are checked
/// when it is reached.
struct Entries {
    input: Option<Hashed<BufReader<std::fs::File>>>,
    moved: Moved,
}

const TRUNCATED: &str = "the export is truncated: it ends before its trailer";

impl Entries {
    fn open(path: &Path) -> anyhow::Result<Entries> {
        let file = std::fs::File::open(path)
            .with_context(|| format!("opening the export file {}", path.display()))?;
        let mut input = Hashed::new(BufReader::new(file));
        let mut header = vec![0; HEADER.len()];
        input
            .read_exact(&mut header)
            .context("not a Faktura store export (too short)")?;
        if header != HEADER {
            bail!("not a Faktura store export (its first line is not \"faktura store export 1\")");
        }
        Ok(Entries {
            input: Some(input),
            moved: Moved {
                entries: 0,
                bytes: 0,
            },
        })
    }

    /// The next entry, or `None` after the trailer, which must be right.
    fn next_entry(&mut self) -> anyhow::Result<Option<(Vec<u8>, Vec<u8>)>> {
        let Some(input) = self.input.as_mut() else {
            return Ok(None);
        };
        let key_len = read_u32(input).context(TRUNCATED)?;
        if key_len != TRAILER {
            let key = read_bytes(input, key_len).context(TRUNCATED)?;
            let value_len = read_u32(input).context(TRUNCATED)?;
            let value = read_bytes(input, value_len).context(TRUNCATED)?;
            self.moved.entries += 1;
            self.moved.bytes += u64::from(key_len) + u64::from(value_len);
            return Ok(Some((key, value)));
        }
        let mut count = [0; 8];
        input.read_exact(&mut count).context(TRUNCATED)?;
        let (mut rest, digest) = self.input.take().expect("open").finish();
        if u64::from_be_bytes(count) != self.moved.entries {
            bail!("the export is damaged: its trailer counts another number of entries");
        }
        let mut stated = [0; 32];
        rest.read_exact(&mut stated).context(TRUNCATED)?;
        if stated != digest {
            bail!("the export is damaged: its checksum does not match its contents");
        }
        if rest.read(&mut [0])? != 0 {
            bail!("the export is damaged: bytes follow its trailer");
        }
        Ok(None)
    }
}

fn read_u32(input: &mut impl Read) -> std::io::Result<u32> {
    let mut b = [0; 4];
    input.read_exact(&mut b)?;
    Ok(u32::from_be_bytes(b))
}

fn read_bytes(input: &mut impl Read, n: u32) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    input.take(u64::from(n)).read_to_end(&mut bytes)?;
    if bytes.len() != n as usize {
        return Err(std::io::ErrorKind::UnexpectedEof.into());
    }
    Ok(bytes)
}

/// A reader or writer that hashes what passes through it.
struct Hashed<T> {
    inner: T,
    hash: Sha256,
}

impl<T> Hashed<T> {
    fn new(inner: T) -> Hashed<T> {
        Hashed {
            inner,
            hash: Sha256::new(),
        }
    }

    fn finish(self) -> (T, [u8; 32]) {
        (self.inner, self.hash.finalize().into())
    }
}

impl<T: Write> Write for Hashed<T> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hash.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

impl<T: Read> Read for Hashed<T> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hash.update(&buf[..n]);
        Ok(n)
    }
}
