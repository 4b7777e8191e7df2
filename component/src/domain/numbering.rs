//! Number ranges (clients, invoices, credit notes): the next free number per account, range
//! and prefix, and claims that keep every (prefix, number) unique. Claims change inside the
//! caller's write transaction, so concurrent creates never share a number.

use super::Error;
use crate::caps::{Read, Write};
use crate::store::keys;

/// Resolves the date placeholders of a prefix: `[YYYY]`, `[YY]`, `[MM]`, `[DD]`.
pub fn resolve_prefix(pre: &str, date: super::date::Date) -> String {
    if !pre.contains('[') {
        return pre.to_owned();
    }
    let text = date.to_string();
    pre.replace("[YYYY]", &text[0..4])
        .replace("[YY]", &text[2..4])
        .replace("[MM]", &text[5..7])
        .replace("[DD]", &text[8..10])
}

/// The visible number: prefix plus the serial zero-padded to `length` digits.
pub fn format_number(pre: &str, number: i64, length: i64) -> String {
    debug_assert!(number >= 0, "numbers are positive");
    let width = length.clamp(0, 20) as usize;
    format!("{pre}{number:0width$}")
}

fn claim_key(account: u64, range: &str, pre: &str, number: i64) -> Vec<u8> {
    keys::number_claim(account, range, pre, number)
}

/// The number the next create without an explicit number would get: one past the highest
/// number held, so that freeing the highest number (a deleted draft) leaves no gap.
pub fn next_free(txn: &dyn Read, account: u64, range: &str, pre: &str) -> Result<i64, Error> {
    let prefix = keys::number_claims(account, range, pre);
    let last = txn.scan(&prefix, None, 1, true)?;
    Ok(match last.first() {
        Some((key, _)) => {
            let tail: [u8; 8] = key[key.len() - 8..].try_into().unwrap_or([0; 8]);
            i64::from_be_bytes(tail) + 1
        }
        None => 1,
    })
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

/// Keeps a record's (prefix, number) unique in `range` (clients, articles): an explicit
/// number is claimed, none takes the next free one, a change releases the old claim; the
/// formatted number is set as `{label}_number`.
pub fn number_record(
    ctx: &super::Ctx,
    txn: &mut dyn Write,
    range: &str,
    label: &str,
    record: &mut super::schema::Record,
    old: Option<&super::schema::Record>,
) -> Result<(), Error> {
    use super::schema::Scalar;
    let pre = record.text("number_pre").to_owned();
    if pre.chars().any(char::is_control)
        || pre.chars().count() > crate::limits::NUMBER_PRE_CHARS_MAX
    {
        return Err(Error::Invalid(vec![format!(
            "number_pre must be one line of at most {} characters",
            crate::limits::NUMBER_PRE_CHARS_MAX
        )]));
    }
    let id = record.id();
    let old_claim = old.and_then(|o| Some((o.text("number_pre").to_owned(), o.int("number")?)));
    match record.int("number") {
        Some(n) if old_claim.as_ref() != Some(&(pre.clone(), n)) => {
            if !claim(txn, ctx.account_id, range, &pre, n, id)? {
                return Err(Error::Duplicate(format!(
                    "number {n} is already used by another {label}"
                )));
            }
            if let Some((old_pre, old_n)) = &old_claim {
                release(txn, ctx.account_id, range, old_pre, *old_n)?;
            }
        }
        Some(_) => {}
        None => {
            let n = take_next(txn, ctx.account_id, range, &pre, id)?;
            if let Some((old_pre, old_n)) = &old_claim {
                release(txn, ctx.account_id, range, old_pre, *old_n)?;
            }
            record.set("number", Some(Scalar::Int(n)));
        }
    }
    let number = record.int("number").unwrap_or(0);
    let length = record.int("number_length").unwrap_or(0);
    record.set(
        &format!("{label}_number"),
        Some(Scalar::Text(format_number(&pre, number, length))),
    );
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
        assert_eq!(take_next(w.as_mut(), 1, "client", "K", 12).unwrap(), 3);
        assert_eq!(take_next(w.as_mut(), 1, "client", "K", 13).unwrap(), 4);
        // Freeing the highest number makes it the next one again: no gap.
        release(w.as_mut(), 1, "client", "K", 4).unwrap();
        assert_eq!(next_free(w.as_read(), 1, "client", "K").unwrap(), 4);
        // Another prefix and another account count on their own.
        assert_eq!(take_next(w.as_mut(), 1, "client", "X", 14).unwrap(), 1);
        assert_eq!(take_next(w.as_mut(), 2, "client", "K", 15).unwrap(), 1);
        release(w.as_mut(), 1, "client", "K", 2).unwrap();
        assert!(claim(w.as_mut(), 1, "client", "K", 2, 11).unwrap());
        // A prefix that extends another is its own range.
        assert_eq!(next_free(w.as_read(), 1, "client", "K-").unwrap(), 1);
    }
}
