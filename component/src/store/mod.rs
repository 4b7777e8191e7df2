//! Storage layout over the imported key-value store: keys, record encoding, counters and
//! scans. Every account-scoped key starts with the account id, so one account's prefix
//! scan can never see another account's data.
//!
//! Layout (bytes; ids are big-endian u64 so keys sort by id):
//! - `G account/{id}`: account; `G user/{id}`: user; `G key/{sha256}`: key → user
//! - `G seq/{name}`: id counters, shared by all accounts
//! - `A {account}{collection}/{id}`: a record
//! - `A {account}file/{collection}/{field}/{id}`: a file field's bytes, outside the record
//! - `A {account}one/{name}`: a per-account singleton (settings)
//! - `A {account}{collection}/{parent}{id}` and `A {account}parent/{collection}/{id}`: a child
//!   record (item, payment, comment, tag) under its document, and the way back to it
//! - `A {account}ix/{collection}/{index}/{value}{id}`: secondary indexes of documents;
//!   `A {account}ix/{collection}/sums/{month}{client}{status}[{due month}]{currency}`,
//!   `.../count/` and `.../sums-kept/`: the kept sums of `domain::grouping`
//! - `A {account}idx/number/{range}/{prefix}\0{number}`: number claims;
//!   `A {account}idx/client-docs/{client}{kind}{id}`: a client's documents
//! - `A {account}pdf/{collection}/{id}{variant}`: stored PDFs of a document

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::caps::{Entry, Read, StoreError, Write};
use crate::limits;

/// Decimals stored as their exact 16-byte form (postcard cannot read serde's string form).
/// Use as `#[serde(with = "crate::store::decimal_bytes")]`.
///
/// Records of format 1 hold the 16 bytes as a tuple, which serde reads one element (and
/// one call) at a time; from format 2 on they are one byte string of length 16, read in
/// one call. `decode` tells the reader which format the record it reads is in.
pub mod decimal_bytes {
    use std::cell::Cell;
    use std::fmt;

    use rust_decimal::Decimal;
    use serde::de::{Error, Visitor};
    use serde::{Deserialize, Deserializer, Serializer};

    thread_local! {
        /// Whether the record being decoded is of format 1.
        static TUPLES: Cell<bool> = const { Cell::new(false) };
    }

    /// Runs `read` with decimals read as format 1 wrote them when `tuples` is true.
    pub(super) fn reading<T>(tuples: bool, read: impl FnOnce() -> T) -> T {
        let before = TUPLES.replace(tuples);
        let out = read();
        TUPLES.set(before);
        out
    }

    pub fn serialize<S: Serializer>(d: &Decimal, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(&d.serialize())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Decimal, D::Error> {
        let bytes = if TUPLES.get() {
            <[u8; 16]>::deserialize(d)?
        } else {
            d.deserialize_bytes(Bytes16)?
        };
        Ok(Decimal::deserialize(bytes))
    }

    struct Bytes16;

    impl Visitor<'_> for Bytes16 {
        type Value = [u8; 16];

        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("the 16 bytes of a decimal")
        }

        fn visit_bytes<E: Error>(self, v: &[u8]) -> Result<[u8; 16], E> {
            v.try_into().map_err(|_| E::invalid_length(v.len(), &self))
        }
    }
}

/// Version byte in front of every stored value, so the encoding can evolve. Format 1
/// differs from 2 only in how decimals are written (see `decimal_bytes`); both are read.
const FORMAT_V1: u8 = 1;
const FORMAT_V2: u8 = 2;

pub fn encode<T: Serialize>(value: &T) -> Vec<u8> {
    // Serializing plain data structures into a Vec cannot fail.
    postcard::to_extend(value, vec![FORMAT_V2]).expect("records always serialize")
}

pub fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, StoreError> {
    let (tuples, body) = match bytes.split_first() {
        Some((&FORMAT_V2, body)) => (false, body),
        Some((&FORMAT_V1, body)) => (true, body),
        Some((v, _)) => return Err(StoreError::Backend(format!("unknown record format {v}"))),
        None => return Err(StoreError::Backend("empty record".into())),
    };
    decimal_bytes::reading(tuples, || postcard::from_bytes(body))
        .map_err(|e| StoreError::Backend(format!("corrupt record: {e}")))
}

pub fn global_key(kind: &str, tail: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(2 + kind.len() + tail.len());
    k.push(b'G');
    k.extend_from_slice(kind.as_bytes());
    k.push(b'/');
    k.extend_from_slice(tail);
    k
}

pub fn account_prefix(account: u64) -> Vec<u8> {
    let mut k = Vec::with_capacity(48);
    k.push(b'A');
    k.extend_from_slice(&account.to_be_bytes());
    k
}

/// Prefix of all records of one collection of one account.
pub fn collection_prefix(account: u64, collection: &str) -> Vec<u8> {
    let mut k = account_prefix(account);
    k.extend_from_slice(collection.as_bytes());
    k.push(b'/');
    k
}

pub fn record_key(account: u64, collection: &str, id: u64) -> Vec<u8> {
    let mut k = collection_prefix(account, collection);
    k.extend_from_slice(&id.to_be_bytes());
    k
}

pub fn file_key(account: u64, collection: &str, field: &str, id: u64) -> Vec<u8> {
    let mut k = account_prefix(account);
    k.extend_from_slice(b"file/");
    k.extend_from_slice(collection.as_bytes());
    k.push(b'/');
    k.extend_from_slice(field.as_bytes());
    k.push(b'/');
    k.extend_from_slice(&id.to_be_bytes());
    k
}

pub fn singleton_key(account: u64, name: &str) -> Vec<u8> {
    let mut k = account_prefix(account);
    k.extend_from_slice(b"one/");
    k.extend_from_slice(name.as_bytes());
    k
}

/// Key of a child record (an item, payment or comment) under its parent document, so that
/// all children of one parent are one prefix scan.
pub fn child_key(account: u64, collection: &str, parent: u64, id: u64) -> Vec<u8> {
    let mut k = child_prefix(account, collection, parent);
    k.extend_from_slice(&id.to_be_bytes());
    k
}

pub fn child_prefix(account: u64, collection: &str, parent: u64) -> Vec<u8> {
    let mut k = collection_prefix(account, collection);
    k.extend_from_slice(&parent.to_be_bytes());
    k
}

/// Key from a child's id to its parent's id (children are addressed by id alone).
pub fn parent_key(account: u64, collection: &str, id: u64) -> Vec<u8> {
    let mut k = account_prefix(account);
    k.extend_from_slice(b"parent/");
    k.extend_from_slice(collection.as_bytes());
    k.push(b'/');
    k.extend_from_slice(&id.to_be_bytes());
    k
}

/// A child record found by its own id (the parent key leads to the child's key).
pub fn get_child(
    txn: &dyn Read,
    account: u64,
    collection: &str,
    id: u64,
) -> Result<Option<Vec<u8>>, StoreError> {
    let Some(parent) = txn.get(&parent_key(account, collection, id))? else {
        return Ok(None);
    };
    let parent: [u8; 8] = parent
        .as_slice()
        .try_into()
        .map_err(|_| StoreError::Backend(format!("corrupt parent key of {collection} {id}")))?;
    txn.get(&child_key(
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
    txn.put(&child_key(account, collection, parent, id), value)?;
    txn.put(&parent_key(account, collection, id), &parent.to_be_bytes())
}

/// Deletes a child record and its parent key.
pub fn delete_child(
    txn: &mut dyn Write,
    account: u64,
    collection: &str,
    parent: u64,
    id: u64,
) -> Result<(), StoreError> {
    txn.delete(&child_key(account, collection, parent, id))?;
    txn.delete(&parent_key(account, collection, id))
}

/// Prefix of a secondary index of a collection.
pub fn index_prefix(account: u64, collection: &str, index: &str) -> Vec<u8> {
    let mut k = account_prefix(account);
    k.extend_from_slice(b"ix/");
    k.extend_from_slice(collection.as_bytes());
    k.push(b'/');
    k.extend_from_slice(index.as_bytes());
    k.push(b'/');
    k
}

/// An index entry: prefix, the indexed value (fixed width, sorting as the value), the id.
pub fn index_key(account: u64, collection: &str, index: &str, value: &[u8], id: u64) -> Vec<u8> {
    let mut k = index_prefix(account, collection, index);
    k.extend_from_slice(value);
    k.extend_from_slice(&id.to_be_bytes());
    k
}

/// An i32 as bytes that sort like the number (sign bit flipped).
pub fn sortable_i32(v: i32) -> [u8; 4] {
    ((v as u32) ^ 0x8000_0000).to_be_bytes()
}

/// The number `sortable_i32` wrote; `None` for bytes of another width.
pub fn i32_of_sortable(bytes: &[u8]) -> Option<i32> {
    let b: [u8; 4] = bytes.try_into().ok()?;
    Some((u32::from_be_bytes(b) ^ 0x8000_0000) as i32)
}

/// Takes the next id of a counter inside the caller's write transaction, so two creates
/// can never share one.
pub fn next_id(txn: &mut dyn Write, counter: &str) -> Result<u64, StoreError> {
    next_ids(txn, counter, 1)
}

/// Takes `n` consecutive ids of a counter at once; returns the first.
pub fn next_ids(txn: &mut dyn Write, counter: &str, n: u64) -> Result<u64, StoreError> {
    let key = global_key("seq", counter.as_bytes());
    let current = match txn.get(&key)? {
        Some(bytes) => u64::from_be_bytes(
            bytes
                .as_slice()
                .try_into()
                .map_err(|_| StoreError::Backend(format!("corrupt counter {counter}")))?,
        ),
        None => 0,
    };
    txn.put(&key, &(current + n).to_be_bytes())?;
    Ok(current + 1)
}

/// Every entry under a prefix, fetched in batches.
pub fn scan_all(txn: &dyn Read, prefix: &[u8]) -> Result<Vec<Entry>, StoreError> {
    let mut out = Vec::new();
    for_each(txn, prefix, |entry| {
        out.push(entry);
        Ok::<_, StoreError>(())
    })?;
    Ok(out)
}

/// Calls `f` with every entry under `prefix` in key order, holding one batch at a time.
pub fn for_each<E: From<StoreError>>(
    txn: &dyn Read,
    prefix: &[u8],
    f: impl FnMut(Entry) -> Result<(), E>,
) -> Result<(), E> {
    for_each_after(txn, prefix, None, f)
}

/// `for_each` over the entries whose keys sort after `after`.
pub fn for_each_after<E: From<StoreError>>(
    txn: &dyn Read,
    prefix: &[u8],
    mut after: Option<Vec<u8>>,
    mut f: impl FnMut(Entry) -> Result<(), E>,
) -> Result<(), E> {
    loop {
        let batch = txn.scan(prefix, after.as_deref(), limits::SCAN_BATCH, false)?;
        let done = batch.len() < limits::SCAN_BATCH as usize;
        after = batch.last().map(|(k, _)| k.clone());
        for entry in batch {
            f(entry)?;
        }
        if done {
            return Ok(());
        }
    }
}

/// The id at the end of a record key.
pub fn id_of_key(key: &[u8]) -> u64 {
    key.len()
        .checked_sub(8)
        .and_then(|start| key[start..].try_into().ok())
        .map(u64::from_be_bytes)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::caps::Store;
    use crate::caps::mem::MemStore;

    #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
    struct Priced {
        name: String,
        #[serde(with = "decimal_bytes")]
        price: rust_decimal::Decimal,
        #[serde(with = "decimal_bytes")]
        rate: rust_decimal::Decimal,
    }

    /// Format 2 writes a decimal as one byte string; records of format 1, whose decimals
    /// are 16-element tuples, are still read, and a wrong length is a corrupt record.
    #[test]
    fn decimals_of_both_formats_are_read() {
        let record = Priced {
            name: "Beratung".into(),
            price: "-1234.5600".parse().unwrap(),
            rate: "19".parse().unwrap(),
        };
        let v2 = encode(&record);
        assert_eq!(v2[0], FORMAT_V2);
        assert_eq!(decode::<Priced>(&v2).unwrap(), record);

        #[derive(serde::Serialize)]
        struct Tuples<'a> {
            name: &'a str,
            price: [u8; 16],
            rate: [u8; 16],
        }
        let mut v1 = vec![FORMAT_V1];
        v1.extend(
            postcard::to_allocvec(&Tuples {
                name: &record.name,
                price: record.price.serialize(),
                rate: record.rate.serialize(),
            })
            .unwrap(),
        );
        assert_eq!(v1.len() + 2, v2.len(), "a length byte per decimal");
        let read: Priced = decode(&v1).unwrap();
        assert_eq!(read, record);
        assert_eq!(read.price.to_string(), "-1234.5600");

        // The same bytes with the version byte of format 2 lack the length bytes.
        let mut wrong = v1.clone();
        wrong[0] = FORMAT_V2;
        assert!(decode::<Priced>(&wrong).is_err());
        // A format 2 record read after a format 1 record is read as format 2.
        assert_eq!(decode::<Priced>(&v2).unwrap(), record);
    }

    #[test]
    fn accounts_never_share_a_prefix() {
        // Account 1's prefix must not be a prefix of account 256's keys, and so on.
        let a = collection_prefix(1, "clients");
        let b = record_key(256, "clients", 1);
        assert!(!b.starts_with(&a));
        assert!(record_key(1, "clients", 2).starts_with(&a));
        assert!(!record_key(1, "clients-x", 2).starts_with(&a));
    }

    #[test]
    fn counters_count_and_scans_page_through_batches() {
        let store = MemStore::default();
        let mut w = store.begin_write().unwrap();
        assert_eq!(next_id(w.as_mut(), "c").unwrap(), 1);
        assert_eq!(next_id(w.as_mut(), "c").unwrap(), 2);
        assert_eq!(next_ids(w.as_mut(), "c", 5).unwrap(), 3);
        assert_eq!(next_id(w.as_mut(), "c").unwrap(), 8);
        for id in 0..1200u64 {
            w.put(&record_key(1, "x", id), b"v").unwrap();
        }
        w.commit().unwrap();
        let r = store.begin_read().unwrap();
        let all = scan_all(r.as_ref(), &collection_prefix(1, "x")).unwrap();
        assert_eq!(all.len(), 1200);
        assert_eq!(id_of_key(&all[1199].0), 1199);
    }

    #[test]
    fn records_round_trip_and_refuse_unknown_formats() {
        let bytes = encode(&("a".to_string(), 7u64));
        assert_eq!(decode::<(String, u64)>(&bytes).unwrap(), ("a".into(), 7));
        assert!(decode::<(String, u64)>(&[9, 1]).is_err());
    }
}
