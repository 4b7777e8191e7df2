//! Storage over the imported key-value store: the key layout (`keys`), the stored forms of
//! records (`forms`), their encoding and the data version, id counters and scans.
//!
//! Versioning, one rule for every stored value: the store has a data version
//! (`DATA_VERSION`, kept at `G meta/version`). A record is written as one byte, the data
//! version it was written at, followed by the postcard encoding of its stored form, and is
//! read by the reader of that version (`decode`). Every other value (counters, parent
//! pointers, number claims, index entries, tallied counts, file bytes) has had one layout
//! since version 1. A change that old bytes cannot be read through (a new index, kept
//! data, a key entry's new shape) raises the version and comes with a migration
//! (`domain::migrate`), run before the store is served.
//!
//! Knows bytes, keys and stored forms; never names a domain type.

#![forbid(unsafe_code)]

pub mod forms;
pub mod keys;
#[cfg(test)]
mod layout_tests;

use std::ops::ControlFlow;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::caps::{Entry, Read, StoreError, Write};
use crate::limits;
use forms::Tail;

/// The data version of what this code writes. 1: decimals as 16-element tuples; 2:
/// decimals as one byte string, tallied sums with status counts; 3: key entries hold the
/// principal, tallies exists for every account; 4: documents and items grew the
/// e-invoice terms (stored after their earlier form, see `decode_with_tail`), completed
/// documents have their e-invoices; 5: records naming another (an incoming's items,
/// property values) are indexed by it, key entries carry the version; 6: clients are
/// indexed by number and by the parts of their name, client tags exist; 7: documents are
/// indexed by the contact they name; 8: open-due index entries keep what grouped totals sum
/// their documents by.
pub const DATA_VERSION: u8 = 8;

/// The data version of a store that does not say (written before versions were kept).
pub const UNMARKED_VERSION: u8 = 2;

/// A record's bytes: the version byte, then the postcard encoding of `form`.
pub fn encode<T: Serialize>(form: &T) -> Vec<u8> {
    // Serializing plain stored forms into a Vec cannot fail.
    postcard::to_extend(form, vec![DATA_VERSION]).expect("stored forms always serialize")
}

/// The version a record was written at and its body.
pub fn version_of(bytes: &[u8]) -> Result<(u8, &[u8]), StoreError> {
    match bytes.split_first() {
        Some((&v, body)) if (1..=DATA_VERSION).contains(&v) => Ok((v, body)),
        Some((v, _)) => Err(StoreError::Backend(format!("unknown record version {v}"))),
        None => Err(StoreError::Backend("empty record".into())),
    }
}

/// A value kept beside the records (a recorded message, a kept answer), which has its own
/// `format` byte instead of the data version: the byte, then the postcard encoding.
pub fn encode_with_format<T: Serialize>(format: u8, value: &T) -> Vec<u8> {
    postcard::to_extend(value, vec![format]).expect("values with a format byte always serialize")
}

/// A value of `encode_with_format`, which must be of `format`; `what` names it when corrupt.
pub fn decode_with_format<T: DeserializeOwned>(
    format: u8,
    bytes: &[u8],
    what: &str,
) -> Result<T, StoreError> {
    match bytes.split_first() {
        Some((&f, body)) if f == format => postcard::from_bytes(body)
            .map_err(|e| StoreError::Backend(format!("corrupt {what}: {e}"))),
        _ => Err(StoreError::Backend(format!("{what} of an unknown format"))),
    }
}

/// The postcard body of a record as the stored form `T` (which may borrow from it).
pub fn read<'a, T: Deserialize<'a>>(body: &'a [u8]) -> Result<T, StoreError> {
    postcard::from_bytes(body).map_err(|e| StoreError::Backend(format!("corrupt record: {e}")))
}

/// Reads a record that holds decimals: written at version 1 it is read as `A` (decimals
/// as tuples) and converted by `v1`, later as `B` and converted by `current`. Either may
/// borrow from `bytes`.
pub fn decode<'a, A: Deserialize<'a>, B: Deserialize<'a>, R>(
    bytes: &'a [u8],
    v1: impl FnOnce(A) -> R,
    current: impl FnOnce(B) -> R,
) -> Result<R, StoreError> {
    match version_of(bytes)? {
        (1, body) => read(body).map(v1),
        (_, body) => read(body).map(current),
    }
}

/// Reads a record with a tail, written by `encode(&(form, tail))`: its form (`A` at version 1, decimals as tuples, else `B`),
/// then as much of the tail as the record holds; a record written before a field of the
/// tail existed reads that field's default.
pub fn decode_with_tail<A, B, E, R>(
    bytes: &[u8],
    v1: impl FnOnce(A, E) -> R,
    current: impl FnOnce(B, E) -> R,
) -> Result<R, StoreError>
where
    A: DeserializeOwned,
    B: DeserializeOwned,
    E: Tail,
{
    let corrupt = |e: postcard::Error| StoreError::Backend(format!("corrupt record: {e}"));
    match version_of(bytes)? {
        (1, body) => {
            let (form, rest) = postcard::take_from_bytes::<A>(body).map_err(corrupt)?;
            Ok(v1(form, E::read_from(rest).map_err(corrupt)?))
        }
        (_, body) => {
            let (form, rest) = postcard::take_from_bytes::<B>(body).map_err(corrupt)?;
            Ok(current(form, E::read_from(rest).map_err(corrupt)?))
        }
    }
}

/// Whether `body` is exactly the postcard encoding of `form` (a short body can read as the
/// start of a longer form).
pub fn encodes_as<T: Serialize>(form: &T, body: &[u8]) -> bool {
    postcard::to_allocvec(form).is_ok_and(|bytes| bytes == body)
}

/// Reads a record without decimals, which every version wrote alike.
pub fn decode_plain<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, StoreError> {
    read(version_of(bytes)?.1)
}

/// The store's data version.
pub fn data_version(txn: &dyn Read) -> Result<u8, StoreError> {
    match txn.get(&keys::data_version())? {
        Some(bytes) => decode_plain(&bytes),
        None => Ok(UNMARKED_VERSION),
    }
}

/// Marks the store as being at `version`.
pub fn set_data_version(txn: &mut dyn Write, version: u8) -> Result<(), StoreError> {
    txn.put(&keys::data_version(), &encode(&version))
}

/// A child record found by its own id (the parent key leads to the child's key).
pub fn get_child(
    txn: &dyn Read,
    account: u64,
    collection: &str,
    id: u64,
) -> Result<Option<Vec<u8>>, StoreError> {
    let Some(parent) = txn.get(&keys::parent(account, collection, id))? else {
        return Ok(None);
    };
    let parent: [u8; 8] = parent
        .as_slice()
        .try_into()
        .map_err(|_| StoreError::Backend(format!("corrupt parent key of {collection} {id}")))?;
    txn.get(&keys::child(
        account,
        collection,
        u64::from_be_bytes(parent),
        id,
    ))
}

/// Writes a child record and its parent key.
pub fn put_child(
    txn: &mut dyn Write,
    account: u64,
    collection: &str,
    parent: u64,
    id: u64,
    value: &[u8],
) -> Result<(), StoreError> {
    txn.put(&keys::child(account, collection, parent, id), value)?;
    txn.put(
        &keys::parent(account, collection, id),
        &parent.to_be_bytes(),
    )
}

/// Deletes a child record and its parent key.
pub fn delete_child(
    txn: &mut dyn Write,
    account: u64,
    collection: &str,
    parent: u64,
    id: u64,
) -> Result<(), StoreError> {
    txn.delete(&keys::child(account, collection, parent, id))?;
    txn.delete(&keys::parent(account, collection, id))
}

/// Takes the next id of a counter. The store takes it (`next-ids`): outside the
/// transaction where writers run side by side, so that creates in different accounts never
/// collide on a counter they all share.
pub fn next_id(txn: &mut dyn Write, counter: &str) -> Result<u64, StoreError> {
    next_ids(txn, counter, 1)?
        .pop()
        .ok_or_else(crate::caps::no_id)
}

/// One id of a counter a transaction may take many of (`Write::next_id_of_many`).
pub fn next_id_of_many(txn: &mut dyn Write, counter: &str) -> Result<u64, StoreError> {
    txn.next_id_of_many(&keys::counter(counter))
}

/// Takes `n` ids of a counter at once: rising, not always consecutive.
pub fn next_ids(txn: &mut dyn Write, counter: &str, n: u32) -> Result<Vec<u64>, StoreError> {
    let ids = txn.next_ids(&keys::counter(counter), n)?;
    if ids.len() != n as usize {
        return Err(StoreError::Backend(format!(
            "the store gave {} ids of {n}",
            ids.len()
        )));
    }
    Ok(ids)
}

/// A big-endian u64 value (counters, tallied counts); `what` names it when corrupt.
pub fn u64_of(bytes: &[u8], what: &str) -> Result<u64, StoreError> {
    let b: [u8; 8] = bytes
        .try_into()
        .map_err(|_| StoreError::Backend(format!("corrupt {what}")))?;
    Ok(u64::from_be_bytes(b))
}

/// Every entry under a prefix, fetched in batches.
pub fn scan_all(txn: &dyn Read, prefix: &[u8]) -> Result<Vec<Entry>, StoreError> {
    let mut out = Vec::new();
    for_each(txn, prefix, |(k, v)| {
        out.push((k.to_vec(), v.to_vec()));
        Ok::<_, StoreError>(())
    })?;
    Ok(out)
}

/// An entry lent by a walk over a prefix: its key and value.
pub type Lent<'a> = (&'a [u8], &'a [u8]);

/// Calls `f` with every entry under `prefix` in key order, holding one batch at a time.
pub fn for_each<E: From<StoreError>>(
    txn: &dyn Read,
    prefix: &[u8],
    f: impl FnMut(Lent<'_>) -> Result<(), E>,
) -> Result<(), E> {
    for_each_after(txn, prefix, None, f)
}

/// `for_each` over the entries whose keys sort after `after`.
pub fn for_each_after<E: From<StoreError>>(
    txn: &dyn Read,
    prefix: &[u8],
    after: Option<Vec<u8>>,
    mut f: impl FnMut(Lent<'_>) -> Result<(), E>,
) -> Result<(), E> {
    walk(txn, prefix, after, limits::SCAN_BATCH, |entry| {
        f(entry).map(|()| ControlFlow::Continue(()))
    })
}

/// `for_each_after` over an index's range: the entries after `after` up to the first whose
/// key `past` says lies beyond it (that one and those after it are not given), read
/// `limits::INDEX_SCAN_BATCH` a call.
pub fn for_each_until<E: From<StoreError>>(
    txn: &dyn Read,
    prefix: &[u8],
    after: Option<Vec<u8>>,
    past: impl Fn(&[u8]) -> Result<bool, E>,
    mut f: impl FnMut(Lent<'_>) -> Result<(), E>,
) -> Result<(), E> {
    walk(txn, prefix, after, limits::INDEX_SCAN_BATCH, |entry| {
        if past(entry.0)? {
            return Ok(ControlFlow::Break(()));
        }
        f(entry).map(|()| ControlFlow::Continue(()))
    })
}

/// The entries under `prefix` after `after`, in key order, `batch` a call, each lent to
/// `f` (`Read::scan_lent`, nothing allocated per entry) until it breaks or fails, or the
/// entries end.
fn walk<E: From<StoreError>>(
    txn: &dyn Read,
    prefix: &[u8],
    mut after: Option<Vec<u8>>,
    batch: u32,
    mut f: impl FnMut(Lent<'_>) -> Result<ControlFlow<()>, E>,
) -> Result<(), E> {
    let mut last = Vec::new();
    loop {
        let mut outcome = Ok(ControlFlow::Continue(()));
        let found = txn.scan_lent(prefix, after.as_deref(), batch, false, &mut |k, v| {
            if matches!(outcome, Ok(ControlFlow::Continue(()))) {
                outcome = f((k, v));
            }
            last.clear();
            last.extend_from_slice(k);
        })?;
        if outcome?.is_break() || found < batch as usize {
            return Ok(());
        }
        after = Some(last.clone());
    }
}

/// The id at the end of a record, child or index key; a key too short to hold one is
/// corrupt.
pub fn id_of_key(key: &[u8]) -> Result<u64, StoreError> {
    key.len()
        .checked_sub(8)
        .map(|start| &key[start..])
        .ok_or_else(|| StoreError::Backend("corrupt key: shorter than an id".into()))
        .and_then(|tail| u64_of(tail, "key"))
}

#[cfg(test)]
mod tests {
    use super::forms::{Dec16, DecTuple, DecimalForm, StoredSums};
    use super::*;
    use crate::caps::Store;
    use crate::caps::mem::MemStore;

    /// Records of version 1 hold decimals as tuples and are still read; later versions
    /// write one byte string; a wrong length is a corrupt record.
    #[test]
    fn decimals_of_every_version_are_read() {
        let d = |s: &str| s.parse::<rust_decimal::Decimal>().unwrap();
        let sums = StoredSums {
            count: 3,
            net: Dec16(d("-1234.5600")),
            gross: Dec16(d("19")),
        };
        let current = encode(&sums);
        assert_eq!(current[0], DATA_VERSION);
        let read = |bytes: &[u8]| {
            decode(
                bytes,
                |s: StoredSums<DecTuple>| (s.count, s.net.get(), s.gross.get()),
                |s: StoredSums<Dec16>| (s.count, s.net.get(), s.gross.get()),
            )
        };
        let want = (3, d("-1234.5600"), d("19"));
        assert_eq!(read(&current).unwrap(), want);
        let mut v1 = vec![1];
        v1.extend(
            postcard::to_allocvec(&StoredSums {
                count: 3,
                net: DecTuple::of(want.1),
                gross: DecTuple::of(want.2),
            })
            .unwrap(),
        );
        assert_eq!(v1.len() + 2, current.len(), "a length byte per decimal");
        assert_eq!(read(&v1).unwrap(), want);
        assert_eq!(read(&v1).unwrap().1.to_string(), "-1234.5600");
        // The same bytes with a later version byte lack the length bytes.
        let mut wrong = v1.clone();
        wrong[0] = 2;
        assert!(read(&wrong).is_err());
        assert!(read(&[DATA_VERSION + 1, 0]).is_err());
        assert!(read(&[]).is_err());
    }

    #[test]
    fn counters_count_and_scans_page_through_batches() {
        let store = MemStore::default();
        let mut w = store.begin_write().unwrap();
        assert_eq!(next_id(w.as_mut(), "c").unwrap(), 1);
        assert_eq!(next_id(w.as_mut(), "c").unwrap(), 2);
        assert_eq!(next_ids(w.as_mut(), "c", 5).unwrap(), vec![3, 4, 5, 6, 7]);
        assert_eq!(next_id(w.as_mut(), "c").unwrap(), 8);
        for id in 0..1200u64 {
            w.put(&keys::record(1, "x", id), b"v").unwrap();
        }
        w.commit().unwrap();
        let r = store.begin_read().unwrap();
        let all = scan_all(r.as_ref(), &keys::collection(1, "x")).unwrap();
        assert_eq!(all.len(), 1200);
        assert_eq!(id_of_key(&all[1199].0).unwrap(), 1199);
        assert!(id_of_key(b"short").is_err());
    }

    #[test]
    fn the_data_version_of_an_unmarked_store_is_the_last_unmarked_one() {
        let store = MemStore::default();
        let mut w = store.begin_write().unwrap();
        assert_eq!(data_version(w.as_read()).unwrap(), UNMARKED_VERSION);
        set_data_version(w.as_mut(), DATA_VERSION).unwrap();
        assert_eq!(data_version(w.as_read()).unwrap(), DATA_VERSION);
    }
}
