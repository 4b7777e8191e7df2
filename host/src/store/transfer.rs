//! `faktura export` and `faktura import`: the whole store as one stream in key order, so
//! that an installation moves between backends (redb and PostgreSQL hold the same keys and
//! values) and back. A backup (`faktura backup`, `faktura restore`) is such an export,
//! streamed by the serving host through its admin socket.
//!
//! The format is written by hand because it is three lines of framing around what the
//! store already is: a header line, then each entry as a 4-byte big-endian key length, the
//! key, a 4-byte value length and the value, then a trailer (a length of `u32::MAX`, the
//! number of entries as 8 bytes and the SHA-256 of everything before the trailer). An
//! export reads one snapshot; an import checks the whole file before it writes anything,
//! and writes only into an empty store.

use std::collections::BTreeMap;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use sha2::{Digest, Sha256};
use tokio::io::{AsyncWrite, AsyncWriteExt};

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
    let mut file = tokio::fs::File::create(path)
        .await
        .with_context(|| format!("creating the export file {}", path.display()))?;
    let moved = write_export(db, &mut file).await?;
    file.sync_all()
        .await
        .context("writing the export file to disk")?;
    Ok(moved)
}

/// Writes every entry of `db` to `out` in the export format, from one read snapshot, so
/// that writes going on beside it are in it whole or not at all (a backup of a serving
/// store). The trailer is written once every commit the snapshot holds is durable: a
/// stream that has it holds nothing a crash of the store could still take back.
pub(crate) async fn write_export(
    db: &dyn Backend,
    out: &mut (impl AsyncWrite + Unpin),
) -> anyhow::Result<Moved> {
    let seen = db.visible();
    let txn = db.begin_read().await?;
    // Read after the snapshot began, so each counter is past every id the snapshot holds.
    let mut counters: BTreeMap<Vec<u8>, Vec<u8>> = db.counters().await?.into_iter().collect();
    let mut sink = Sink::new();
    sink.put(HEADER);
    let mut after: Option<Vec<u8>> = None;
    loop {
        let batch = txn
            .scan(Vec::new(), after.take(), SCAN_BATCH, false)
            .await?;
        let done = batch.len() < SCAN_BATCH as usize;
        for (key, value) in &batch {
            // Counters kept outside the entries go in key order, in place of their entry.
            while let Some(first) = counters.first_entry().filter(|c| c.key() < key) {
                let (k, v) = first.remove_entry();
                sink.entry(&k, &v)?;
            }
            match counters.remove(key) {
                Some(counter) => sink.entry(key, &counter)?,
                None => sink.entry(key, value)?,
            }
        }
        sink.send(out).await?;
        after = batch.into_iter().last().map(|(k, _)| k);
        if done || after.is_none() {
            break;
        }
    }
    for (k, v) in std::mem::take(&mut counters) {
        sink.entry(&k, &v)?;
    }
    db.durable(seen).await?;
    sink.finish(out).await
}

/// The export being written: bytes not yet sent, the hash of all of them, what they hold.
struct Sink {
    pending: Vec<u8>,
    hash: Sha256,
    moved: Moved,
}

impl Sink {
    fn new() -> Sink {
        Sink {
            pending: Vec::new(),
            hash: Sha256::new(),
            moved: Moved {
                entries: 0,
                bytes: 0,
            },
        }
    }

    fn put(&mut self, bytes: &[u8]) {
        self.hash.update(bytes);
        self.pending.extend_from_slice(bytes);
    }

    fn entry(&mut self, key: &[u8], value: &[u8]) -> anyhow::Result<()> {
        self.put(&len(key)?.to_be_bytes());
        self.put(key);
        self.put(&len(value)?.to_be_bytes());
        self.put(value);
        self.moved.entries += 1;
        self.moved.bytes += (key.len() + value.len()) as u64;
        Ok(())
    }

    async fn send(&mut self, out: &mut (impl AsyncWrite + Unpin)) -> anyhow::Result<()> {
        out.write_all(&self.pending).await?;
        self.pending.clear();
        Ok(())
    }

    /// Writes the trailer: the count, then the digest of everything before it.
    async fn finish(mut self, out: &mut (impl AsyncWrite + Unpin)) -> anyhow::Result<Moved> {
        self.put(&TRAILER.to_be_bytes());
        self.put(&self.moved.entries.to_be_bytes());
        let digest = self.hash.finalize_reset();
        self.pending.extend_from_slice(&digest);
        self.send(out).await?;
        out.flush().await?;
        Ok(self.moved)
    }
}

fn len(bytes: &[u8]) -> anyhow::Result<u32> {
    u32::try_from(bytes.len())
        .ok()
        .filter(|n| *n != TRAILER)
        .context("an entry over 4 GiB")
}

/// An export file whose framing, count and checksum were found right (`verify`).
pub(crate) struct Verified {
    path: PathBuf,
    pub(crate) moved: Moved,
}

/// Reads the whole export file at `path` and checks its framing, count and checksum,
/// holding one entry at a time.
pub(crate) fn verify(path: &Path) -> anyhow::Result<Verified> {
    let mut entries = Entries::open(path)?;
    while entries.next_entry()?.is_some() {}
    Ok(Verified {
        path: path.to_owned(),
        moved: entries.moved,
    })
}

/// Reads a verified export into the empty store `db`, in transactions of a few MiB, so
/// that an export larger than memory imports.
pub(crate) async fn import(db: &dyn Backend, export: &Verified) -> anyhow::Result<Moved> {
    {
        let txn = db.begin_read().await?;
        if !txn.scan(Vec::new(), None, 1, false).await?.is_empty() {
            bail!(
                "the store is not empty, and nothing was written: import and restore write \
                 only into an empty store"
            );
        }
    }
    // Ids start after the counters of the import, not after those of an earlier store.
    db.reset_counters().await?;
    // Read again: the file is checked whole before its first entry is written, and is
    // checked again as it is written, in case it changed in between.
    let mut entries = Entries::open(&export.path)?;
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
            .with_context(|| format!("opening the export (or backup) file {}", path.display()))?;
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

/// A reader that hashes what passes through it.
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

impl<T: Read> Read for Hashed<T> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hash.update(&buf[..n]);
        Ok(n)
    }
}
