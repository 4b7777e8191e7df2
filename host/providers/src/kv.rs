//! The key-value table every Faktura store keeps in redb: one table of byte keys and byte
//! values, sorted bytewise, and the prefix scan the `store` interface defines.
//!
//! Both the faktura host (redb on a native file) and the plug component (redb on WASI
//! files) store through this module, so a data directory written by one opens in the
//! other. It knows nothing of what the keys mean.

use redb::{ReadableTable, TableDefinition};

/// The one table.
pub const TABLE: TableDefinition<&[u8], &[u8]> = TableDefinition::new("kv");

/// Largest key the store accepts, on every backend (PostgreSQL's b-tree index bounds its
/// keys near 2.7 KiB), so that a store moves between backends unchanged.
pub const KEY_BYTES_MAX: usize = 2 * 1024;
/// Largest value the store accepts.
pub const VALUE_BYTES_MAX: usize = 64 * 1024 * 1024;

/// One key and its value.
pub type Entry = (Vec<u8>, Vec<u8>);

/// `list` as the `store` interface's `entries` answer a scan: every key and value in one
/// buffer, and where each ends. `None` when the entries hold 4 GiB or more, which no
/// component's 32-bit memory could take.
pub fn pack(list: &[Entry]) -> Option<(Vec<u8>, Vec<u32>)> {
    let total: usize = list.iter().map(|(k, v)| k.len() + v.len()).sum();
    u32::try_from(total).ok()?;
    let mut bytes = Vec::with_capacity(total);
    let mut ends = Vec::with_capacity(list.len() * 2);
    for (key, value) in list {
        bytes.extend_from_slice(key);
        ends.push(bytes.len() as u32);
        bytes.extend_from_slice(value);
        ends.push(bytes.len() as u32);
    }
    Some((bytes, ends))
}

/// Whether a key and value fit the store's limits.
pub fn fits(key: &[u8], value: &[u8]) -> bool {
    key.len() <= KEY_BYTES_MAX && value.len() <= VALUE_BYTES_MAX
}

/// A counter kept in the table (the `next-ids` of a backend with one writer at a time):
/// the `n` ids after the counter's stored value `current` (a big-endian u64, none before
/// the first id), and the value to store in its place. `None` when `current` is not a
/// counter or the ids would overflow.
pub fn counter_step(current: Option<&[u8]>, n: u32) -> Option<(Vec<u64>, [u8; 8])> {
    let last = match current {
        Some(bytes) => u64::from_be_bytes(bytes.try_into().ok()?),
        None => 0,
    };
    let next = last.checked_add(u64::from(n))?;
    Some(((last + 1..=next).collect(), next.to_be_bytes()))
}

/// Creates the table when the database has none yet, so that read transactions can always
/// open it.
pub fn ensure_table(txn: &redb::WriteTransaction) -> Result<(), redb::TableError> {
    txn.open_table(TABLE).map(drop)
}

/// The smallest key greater than every key that starts with `prefix`, if any.
pub fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

/// Entries whose key starts with `prefix`, in key order (or reverse order), starting
/// strictly after `after` (strictly before it when `reverse`), at most `limit` of them.
pub fn scan(
    table: &impl ReadableTable<&'static [u8], &'static [u8]>,
    prefix: &[u8],
    after: Option<&[u8]>,
    limit: u32,
    reverse: bool,
) -> Result<Vec<Entry>, redb::StorageError> {
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
    let range = table.range::<&[u8]>((lo, hi))?;
    let items: Box<dyn Iterator<Item = _>> = if reverse {
        Box::new(range.rev())
    } else {
        Box::new(range)
    };
    let mut out = Vec::new();
    for item in items.take(limit as usize) {
        let (k, v) = item?;
        out.push((k.value().to_vec(), v.value().to_vec()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use redb::ReadableDatabase;

    /// A scan's answer packs each key, then its value, and where each ends.
    #[test]
    fn entries_pack_keys_and_values_with_their_ends() {
        let list: Vec<Entry> = vec![
            (b"ab".to_vec(), b"xyz".to_vec()),
            (b"c".to_vec(), Vec::new()),
            (Vec::new(), b"q".to_vec()),
        ];
        let (bytes, ends) = pack(&list).unwrap();
        assert_eq!(bytes, b"abxyzcq");
        assert_eq!(ends, [2, 5, 6, 6, 6, 7]);
        assert_eq!(pack(&[]).unwrap(), (Vec::new(), Vec::new()));
    }

    #[test]
    fn keys_fit_every_backend() {
        assert!(fits(&[7; KEY_BYTES_MAX], b"v"));
        assert!(
            !fits(&[7; KEY_BYTES_MAX + 1], b"v"),
            "PostgreSQL's index bound"
        );
        assert!(fits(b"k", &vec![0; VALUE_BYTES_MAX]));
        assert!(!fits(b"k", &vec![0; VALUE_BYTES_MAX + 1]));
    }

    #[test]
    fn prefix_end_is_the_next_key_after_the_prefix_range() {
        assert_eq!(prefix_end(b"ab"), Some(b"ac".to_vec()));
        assert_eq!(prefix_end(&[1, 0xff]), Some(vec![2]));
        assert_eq!(prefix_end(&[0xff, 0xff]), None);
        assert_eq!(prefix_end(b""), None);
    }

    #[test]
    fn scans_respect_prefix_resume_key_limit_and_direction() {
        let db = redb::Database::builder()
            .create_with_backend(redb::backends::InMemoryBackend::new())
            .unwrap();
        let w = db.begin_write().unwrap();
        {
            let mut t = w.open_table(TABLE).unwrap();
            for k in [&b"a1"[..], b"b1", b"b2", b"b3", b"c1"] {
                t.insert(k, &b"v"[..]).unwrap();
            }
        }
        w.commit().unwrap();
        let r = db.begin_read().unwrap();
        let t = r.open_table(TABLE).unwrap();
        let keys = |v: Vec<Entry>| v.into_iter().map(|e| e.0).collect::<Vec<_>>();
        assert_eq!(
            keys(scan(&t, b"b", None, 10, false).unwrap()),
            vec![b"b1".to_vec(), b"b2".to_vec(), b"b3".to_vec()]
        );
        assert_eq!(
            keys(scan(&t, b"b", Some(b"b1"), 1, false).unwrap()),
            vec![b"b2".to_vec()]
        );
        assert_eq!(
            keys(scan(&t, b"b", None, 2, true).unwrap()),
            vec![b"b3".to_vec(), b"b2".to_vec()]
        );
        assert_eq!(
            keys(scan(&t, b"b", Some(b"b2"), 5, true).unwrap()),
            vec![b"b1".to_vec()]
        );
        assert!(scan(&t, b"d", None, 5, false).unwrap().is_empty());
    }

    #[test]
    fn counters_step_from_their_stored_value() {
        assert_eq!(counter_step(None, 1), Some((vec![1], 1u64.to_be_bytes())));
        let (ids, stored) = counter_step(Some(&7u64.to_be_bytes()), 3).unwrap();
        assert_eq!(ids, vec![8, 9, 10]);
        assert_eq!(stored, 10u64.to_be_bytes());
        assert_eq!(counter_step(Some(b"short"), 1), None);
        assert_eq!(counter_step(Some(&u64::MAX.to_be_bytes()), 1), None);
    }
}
