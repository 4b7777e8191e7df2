//! Number ranges (clients now, documents later): the next free number per account, range and
//! prefix, and claims that keep every (prefix, number) unique. Claims and counters change
//! inside the caller's write transaction, so concurrent creates never share a number.

use super::Error;
use crate::caps::{Read, Write};
use crate::store;

/// The visible number: prefix plus the serial zero-padded to `length` digits.
pub fn format_number(pre: &str, number: i64, length: i64) -> String {
    let width = length.clamp(0, 20) as usize;
    format!("{pre}{number:0width$}")
}

fn counter_key(account: u64, range: &str, pre: &str) -> Vec<u8> {
    store::singleton_key(account, &format!("seq/{range}/{pre}"))
}

fn claim_key(account: u64, range: &str, pre: &str, number: i64) -> Vec<u8> {
    let mut k = store::account_prefix(account);
    k.extend_from_slice(b"idx/number/");
    k.extend_from_slice(range.as_bytes());
    k.push(b'/');
    k.extend_from_slice(pre.as_bytes());
    k.push(0);
    k.extend_from_slice(&number.to_be_bytes());
    k
}

fn counter(txn: &dyn Read, account: u64, range: &str, pre: &str) -> Result<i64, Error> {
    Ok(match txn.get(&counter_key(account, range, pre))? {
        Some(bytes) => store::decode(&bytes)?,
        None => 0,
    })
}

/// The number the next create without an explicit number would get.
pub fn next_free(txn: &dyn Read, account: u64, range: &str, pre: &str) -> Result<i64, Error> {
    let mut n = counter(txn, account, range, pre)? + 1;
    while txn.get(&claim_key(account, range, pre, n))?.is_some() {
        n += 1;
    }
    Ok(n)
}

/// Takes the next free number and claims it for `id`.
pub fn take_next(
    txn: &mut dyn Write,
    account: u64,
    range: &str,
    pre: &str,
    id: u64,
) -> Result<i64, Error> {
    let n = next_free(txn.as_read(), account, range, pre)?;
    txn.put(&counter_key(account, range, pre), &store::encode(&n))?;
    txn.put(&claim_key(account, range, pre, n), &id.to_be_bytes())?;
    Ok(n)
}

/// Claims an explicit number for `id`; false when another record holds it.
pub fn claim(
    txn: &mut dyn Write,
    account: u64,
    range: &str,
    pre: &str,
    number: i64,
    id: u64,
) -> Result<bool, Error> {
    let key = claim_key(account, range, pre, number);
    match txn.get(&key)? {
        Some(holder) if holder != id.to_be_bytes() => Ok(false),
        _ => {
            txn.put(&key, &id.to_be_bytes())?;
            Ok(true)
        }
    }
}

pub fn release(
    txn: &mut dyn Write,
    account: u64,
    range: &str,
    pre: &str,
    number: i64,
) -> Result<(), Error> {
    txn.delete(&claim_key(account, range, pre, number))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::caps::Store;
    use crate::caps::mem::MemStore;

    #[test]
    fn numbers_are_padded() {
        assert_eq!(format_number("RE-", 7, 4), "RE-0007");
        assert_eq!(format_number("", 12345, 3), "12345");
    }

    #[test]
    fn next_skips_claimed_numbers_and_claims_are_unique() {
        let store = MemStore::default();
        let mut w = store.begin_write().unwrap();
        assert!(claim(w.as_mut(), 1, "client", "K", 2, 10).unwrap());
        assert!(!claim(w.as_mut(), 1, "client", "K", 2, 11).unwrap());
        assert!(claim(w.as_mut(), 1, "client", "K", 2, 10).unwrap());
        assert_eq!(take_next(w.as_mut(), 1, "client", "K", 12).unwrap(), 1);
        assert_eq!(take_next(w.as_mut(), 1, "client", "K", 13).unwrap(), 3);
        // Another prefix and another account count on their own.
        assert_eq!(take_next(w.as_mut(), 1, "client", "X", 14).unwrap(), 1);
        assert_eq!(take_next(w.as_mut(), 2, "client", "K", 15).unwrap(), 1);
        release(w.as_mut(), 1, "client", "K", 2).unwrap();
        assert!(claim(w.as_mut(), 1, "client", "K", 2, 11).unwrap());
    }
}
