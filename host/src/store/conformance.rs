//! The store conformance suite: one set of checks of the `Backend` contract (`backend.rs`),
//! run against every engine the host opens, so that redb and PostgreSQL answer the
//! component alike.
//!
//! It checks what the contract promises and the component relies on: the range, order,
//! resume key and limit of scans (an `after` outside the prefix never widens it),
//! `get_many`, a write transaction's view of its own writes, the three ways a write
//! transaction ends (commit, rollback, drop; on a pooled engine also that the next
//! transaction never runs inside one that was dropped), writers that overlap (side by
//! side: one gets `Conflict` and keeps nothing; one at a time: the second waits its turn),
//! writers of one scope (they take turns on every engine), the snapshots of readers, and the key size limit.
//!
//! Each check writes under a space of its own (`\xfeconformance/{check}/`; the scans also
//! under `\xff\xff`, the top of the key space, where a prefix has no end) and removes what
//! it wrote. Every check runs; the error names each one that failed. Only the tests run it
//! (`faktura_host::store_conformance`), on a store of their own.

use std::time::Duration;

use anyhow::{anyhow, bail, ensure};
use faktura_providers::kv;

use super::backend::{Backend, BoxFuture, DbError, Entry, ReadTxn, WriteTxn};

/// How the engine's writers meet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Writers {
    /// Side by side (PostgreSQL): of two that collide, one gets `Conflict`.
    SideBySide,
    /// One at a time (redb): `begin_write` returns once the writer before has ended.
    TakeTurns,
}

/// Longest one check may take: a check stuck on a writer that never ends fails instead
/// of hanging the suite.
const CHECK_TIME_MAX: Duration = Duration::from_secs(60);

/// How long a second writer is watched while the first is open: beside it, it must have
/// begun by then; taking turns, it must still wait.
const BESIDE_WAIT: Duration = Duration::from_secs(5);
const TURN_WAIT: Duration = Duration::from_millis(300);

/// Transactions ended without commit in a row, each followed by one that commits: more
/// than a pool holds connections (PostgreSQL's is 32), so that every connection a dropped
/// transaction used serves a later one.
const ROUNDS: usize = 40;

/// Runs every check against `db`, whose writers meet as `writers` says.
pub(crate) async fn run(db: &dyn Backend, writers: Writers) -> anyhow::Result<()> {
    let checks: Vec<(&str, BoxFuture<'_, anyhow::Result<()>>)> = vec![
        ("ordered prefix scans", Box::pin(scans(db))),
        ("get_many", Box::pin(get_many(db))),
        ("read your writes", Box::pin(read_your_writes(db))),
        (
            "rollback on drop",
            Box::pin(ends_keep_nothing(db, End::Drop)),
        ),
        (
            "a commit dropped before it ran",
            Box::pin(ends_keep_nothing(db, End::DropCommit)),
        ),
        (
            "explicit rollback",
            Box::pin(ends_keep_nothing(db, End::Rollback)),
        ),
        (
            "overlapping writers",
            Box::pin(overlapping_writers(db, writers)),
        ),
        (
            "writers of one scope",
            Box::pin(scoped_writers(db, writers)),
        ),
        ("snapshots of readers", Box::pin(snapshots(db))),
        ("too-large keys", Box::pin(too_large_keys(db))),
        ("writes sent together", Box::pin(write_many(db))),
        ("ids of a counter", Box::pin(next_ids(db, writers))),
    ];
    let total = checks.len();
    let mut failed = Vec::new();
    for (name, check) in checks {
        let outcome = tokio::time::timeout(CHECK_TIME_MAX, check)
            .await
            .unwrap_or_else(|_| Err(anyhow!("did not finish within {CHECK_TIME_MAX:?}")));
        if let Err(e) = outcome {
            failed.push(format!("- {name}: {e:#}"));
        }
    }
    if !failed.is_empty() {
        bail!(
            "{} of {total} store checks failed:\n{}",
            failed.len(),
            failed.join("\n")
        );
    }
    Ok(())
}

/// The keys of one check, below `\xfeconformance/{check}/`.
fn space(check: &str) -> Vec<u8> {
    [b"\xfeconformance/", check.as_bytes(), b"/"].concat()
}

fn key(space: &[u8], rest: &[u8]) -> Vec<u8> {
    [space, rest].concat()
}

/// A key as text for messages.
fn show(key: &[u8]) -> String {
    key.escape_ascii().to_string()
}

fn show_entries(entries: &[Entry]) -> String {
    let shown: Vec<String> = entries
        .iter()
        .map(|(k, v)| format!("{}={}", show(k), show(v)))
        .collect();
    format!("[{}]", shown.join(", "))
}

fn show_values(values: &[Option<Vec<u8>>]) -> String {
    let shown: Vec<String> = values
        .iter()
        .map(|v| v.as_deref().map_or("absent".into(), show))
        .collect();
    format!("[{}]", shown.join(", "))
}

/// Commits `entries` in one write transaction.
async fn store(db: &dyn Backend, entries: &[(Vec<u8>, &[u8])]) -> anyhow::Result<()> {
    let mut txn = db.begin_write().await?;
    for (k, v) in entries {
        txn.put(k.clone(), v.to_vec()).await?;
    }
    txn.commit().await?;
    Ok(())
}

/// Removes every key under `prefix`.
async fn clear(db: &dyn Backend, prefix: &[u8]) -> anyhow::Result<()> {
    let mut txn = db.begin_write().await?;
    loop {
        let found = txn.scan(prefix.to_vec(), None, 1000, false).await?;
        if found.is_empty() {
            break;
        }
        for (k, _) in found {
            txn.delete(k).await?;
        }
    }
    txn.commit().await?;
    Ok(())
}

/// What a new read transaction finds under `key`.
async fn committed(db: &dyn Backend, key: &[u8]) -> anyhow::Result<Option<Vec<u8>>> {
    Ok(db.begin_read().await?.get(key.to_vec()).await?)
}

/// The reads of a read or a write transaction, so that a check of reads runs on both.
enum View<'a> {
    Read(&'a dyn ReadTxn),
    Write(&'a mut dyn WriteTxn),
}

impl View<'_> {
    fn name(&self) -> &'static str {
        match self {
            View::Read(_) => "read transaction",
            View::Write(_) => "write transaction",
        }
    }

    async fn get(&mut self, key: &[u8]) -> Result<Option<Vec<u8>>, DbError> {
        match self {
            View::Read(t) => t.get(key.to_vec()).await,
            View::Write(t) => t.get(key.to_vec()).await,
        }
    }

    async fn get_many(&mut self, keys: &[Vec<u8>]) -> Result<Vec<Option<Vec<u8>>>, DbError> {
        match self {
            View::Read(t) => t.get_many(keys.to_vec()).await,
            View::Write(t) => t.get_many(keys.to_vec()).await,
        }
    }

    async fn scan(
        &mut self,
        prefix: &[u8],
        after: Option<&[u8]>,
        limit: u32,
        reverse: bool,
    ) -> Result<Vec<Entry>, DbError> {
        let (prefix, after) = (prefix.to_vec(), after.map(<[u8]>::to_vec));
        match self {
            View::Read(t) => t.scan(prefix, after, limit, reverse).await,
            View::Write(t) => t.scan(prefix, after, limit, reverse).await,
        }
    }
}

/// The keys the scan checks store below their space: the prefix `b` with neighbours on
/// both sides, keys that sort by their bytes (0x00, 0x7f, 0x80, 0xff: bytewise, not
/// signed and not by any collation), and keys that go on from the prefix with 0xff.
const SCANNED: &[&[u8]] = &[
    b"a",
    b"a1",
    b"b",
    b"b\x00",
    b"b1",
    b"b2",
    b"b3",
    b"b\x7f",
    b"b\x80",
    b"b\xff",
    b"b\xff\xff",
    b"c",
    b"c1",
];

/// The keys under `b`, in key order.
const UNDER_B: &[&[u8]] = &[
    b"b",
    b"b\x00",
    b"b1",
    b"b2",
    b"b3",
    b"b\x7f",
    b"b\x80",
    b"b\xff",
    b"b\xff\xff",
];

/// The top of the key space: a prefix here has no end (`kv::prefix_end` is `None`), so a
/// forward scan's range is open above.
const TOP: &[u8] = b"\xff\xff";
const UNDER_TOP: &[&[u8]] = &[b"", b"\x00", b"\x01", b"\xff", b"\xff\xff"];

/// One scan (below a space): the prefix, the resume key, the direction and the keys in
/// its range, in key order.
type ScanCase = (
    &'static [u8],
    Option<&'static [u8]>,
    bool,
    &'static [&'static [u8]],
);

const FORWARD: bool = false;
const REVERSE: bool = true;

const SCANS_OF_B: &[ScanCase] = &[
    (b"b", None, FORWARD, UNDER_B),
    (b"b", None, REVERSE, UNDER_B),
    // A stored resume key, and one that is not stored.
    (
        b"b",
        Some(b"b2"),
        FORWARD,
        &[b"b3", b"b\x7f", b"b\x80", b"b\xff", b"b\xff\xff"],
    ),
    (b"b", Some(b"b2"), REVERSE, &[b"b", b"b\x00", b"b1"]),
    (
        b"b",
        Some(b"b25"),
        FORWARD,
        &[b"b3", b"b\x7f", b"b\x80", b"b\xff", b"b\xff\xff"],
    ),
    (b"b", Some(b"b25"), REVERSE, &[b"b", b"b\x00", b"b1", b"b2"]),
    // The resume key is the prefix itself.
    (
        b"b",
        Some(b"b"),
        FORWARD,
        &[
            b"b\x00",
            b"b1",
            b"b2",
            b"b3",
            b"b\x7f",
            b"b\x80",
            b"b\xff",
            b"b\xff\xff",
        ],
    ),
    (b"b", Some(b"b"), REVERSE, &[]),
    // Resume keys outside the prefix never widen the range.
    (b"b", Some(b"a1"), FORWARD, UNDER_B),
    (b"b", Some(b"a1"), REVERSE, &[]),
    (b"b", Some(b"c"), FORWARD, &[]),
    (b"b", Some(b"c"), REVERSE, UNDER_B),
    (b"b", Some(b"b\xff\xff\xff"), FORWARD, &[]),
    (b"b", Some(b"b\xff\xff\xff"), REVERSE, UNDER_B),
    // A prefix ending in 0xff.
    (b"b\xff", None, FORWARD, &[b"b\xff", b"b\xff\xff"]),
    (b"b\xff", None, REVERSE, &[b"b\xff", b"b\xff\xff"]),
    (b"b\xff", Some(b"b\xff"), FORWARD, &[b"b\xff\xff"]),
    // Nothing stored under the prefix.
    (b"d", None, FORWARD, &[]),
    (b"d", None, REVERSE, &[]),
];

const SCANS_OF_TOP: &[ScanCase] = &[
    (b"", None, FORWARD, UNDER_TOP),
    (b"", None, REVERSE, UNDER_TOP),
    (
        b"",
        Some(b"\x00"),
        FORWARD,
        &[b"\x01", b"\xff", b"\xff\xff"],
    ),
    (b"", Some(b"\x00"), REVERSE, &[b""]),
    (b"", Some(b"\xff\xff\xff"), FORWARD, &[]),
    (b"", Some(b"\xff\xff\xff"), REVERSE, UNDER_TOP),
    (b"\xff", None, FORWARD, &[b"\xff", b"\xff\xff"]),
    (b"\xff", Some(b"\x01"), FORWARD, &[b"\xff", b"\xff\xff"]),
    (b"\xff", Some(b"\x01"), REVERSE, &[]),
];

/// The value stored under a scanned key: its own bytes after `v`, so that a scan that
/// pairs a key with another's value shows.
fn value_of(rest: &[u8]) -> Vec<u8> {
    [b"v", rest].concat()
}

async fn scans(db: &dyn Backend) -> anyhow::Result<()> {
    let b = space("scan");
    clear(db, &b).await?;
    clear(db, TOP).await?;
    let mut entries = Vec::new();
    for (sp, keys) in [(&b[..], SCANNED), (TOP, UNDER_TOP)] {
        for rest in keys {
            entries.push((key(sp, rest), value_of(rest)));
        }
    }
    let borrowed: Vec<(Vec<u8>, &[u8])> =
        entries.iter().map(|(k, v)| (k.clone(), &v[..])).collect();
    store(db, &borrowed).await?;
    let read = db.begin_read().await?;
    scan_cases(&mut View::Read(read.as_ref()), &b, TOP).await?;
    let mut write = db.begin_write().await?;
    scan_cases(&mut View::Write(write.as_mut()), &b, TOP).await?;
    write.rollback().await?;
    clear(db, &b).await?;
    clear(db, TOP).await
}

/// Runs every scan case in `view`: whole, with limits 0 and 1, and page by page (two at a
/// time, each page resuming after the last key of the one before).
async fn scan_cases(view: &mut View<'_>, b: &[u8], top: &[u8]) -> anyhow::Result<()> {
    let cases = SCANS_OF_B
        .iter()
        .map(|c| (b, c))
        .chain(SCANS_OF_TOP.iter().map(|c| (top, c)));
    for (sp, &(prefix, after, reverse, in_range)) in cases {
        let prefix = key(sp, prefix);
        let after = after.map(|a| key(sp, a));
        let mut want: Vec<Entry> = in_range
            .iter()
            .map(|rest| (key(sp, rest), value_of(rest)))
            .collect();
        if reverse {
            want.reverse();
        }
        let name = view.name();
        let what = |limit: u32| {
            format!(
                "{name} scan(prefix {}, after {}, limit {limit}, {})",
                show(&prefix),
                after.as_deref().map_or("none".into(), show),
                if reverse { "reverse" } else { "forward" }
            )
        };
        for limit in [1000, 1, 0] {
            let got = view.scan(&prefix, after.as_deref(), limit, reverse).await?;
            let expected = &want[..want.len().min(limit as usize)];
            ensure!(
                got == expected,
                "{}: got {}, want {}",
                what(limit),
                show_entries(&got),
                show_entries(expected)
            );
        }
        let mut paged = Vec::new();
        let mut resume = after.clone();
        for _ in 0..=want.len() {
            let page = view.scan(&prefix, resume.as_deref(), 2, reverse).await?;
            ensure!(page.len() <= 2, "{}: {} entries", what(2), page.len());
            let Some((last, _)) = page.last() else { break };
            resume = Some(last.clone());
            paged.extend(page);
        }
        ensure!(
            paged == want,
            "{} page by page: got {}, want {}",
            what(2),
            show_entries(&paged),
            show_entries(&want)
        );
    }
    Ok(())
}

async fn get_many(db: &dyn Backend) -> anyhow::Result<()> {
    let sp = space("get_many");
    clear(db, &sp).await?;
    let (one, two, absent) = (key(&sp, b"1"), key(&sp, b"2"), key(&sp, b"absent"));
    store(db, &[(one.clone(), b"one"), (two.clone(), b"two")]).await?;
    let read = db.begin_read().await?;
    let mut write = db.begin_write().await?;
    for mut view in [View::Read(read.as_ref()), View::Write(write.as_mut())] {
        // Out of key order, with an absent key and one asked for twice.
        let keys = [two.clone(), absent.clone(), one.clone(), two.clone()];
        let got = view.get_many(&keys).await?;
        let want = [
            Some(b"two".to_vec()),
            None,
            Some(b"one".to_vec()),
            Some(b"two".to_vec()),
        ];
        ensure!(
            got == want,
            "{} get_many(2, absent, 1, 2): got {}, want {}",
            view.name(),
            show_values(&got),
            show_values(&want)
        );
        let none = view.get_many(&[]).await?;
        ensure!(
            none.is_empty(),
            "{} get_many of no keys: {none:?}",
            view.name()
        );
        let got = view.get(&absent).await?;
        ensure!(got.is_none(), "{} get(absent): {got:?}", view.name());
    }
    write.rollback().await?;
    clear(db, &sp).await
}

async fn read_your_writes(db: &dyn Backend) -> anyhow::Result<()> {
    let sp = space("read_your_writes");
    clear(db, &sp).await?;
    let k = |rest: &[u8]| key(&sp, rest);
    store(db, &[(k(b"1"), b"1"), (k(b"2"), b"2"), (k(b"3"), b"3")]).await?;
    let before = db.begin_read().await?;
    let mut txn = db.begin_write().await?;
    txn.put(k(b"2"), b"two".to_vec()).await?;
    txn.delete(k(b"3")).await?;
    txn.put(k(b"4"), b"4".to_vec()).await?;
    txn.put(k(b"5"), b"5".to_vec()).await?;
    txn.delete(k(b"5")).await?;
    txn.delete(k(b"absent")).await?;
    let own: Vec<Entry> = vec![
        (k(b"1"), b"1".to_vec()),
        (k(b"2"), b"two".to_vec()),
        (k(b"4"), b"4".to_vec()),
    ];
    let old: Vec<Entry> = vec![
        (k(b"1"), b"1".to_vec()),
        (k(b"2"), b"2".to_vec()),
        (k(b"3"), b"3".to_vec()),
    ];
    let mut view = View::Write(txn.as_mut());
    expect_contents(&mut view, &sp, &own, "its own writes").await?;
    // Nobody else sees them before the commit.
    expect_read(before.as_ref(), &sp, &old, "no uncommitted write").await?;
    let during = db.begin_read().await?;
    expect_read(during.as_ref(), &sp, &old, "no uncommitted write").await?;
    txn.commit().await?;
    let after = db.begin_read().await?;
    expect_read(after.as_ref(), &sp, &own, "the commit").await?;
    drop((before, during, after));
    clear(db, &sp).await
}

/// Checks that `view` holds exactly `entries` under `sp`: by scans both ways, and by get
/// and get_many of their keys and of the keys `1` to `5` below `sp` (those the checks
/// write) that `entries` lacks. `showing` says what the view should show, for the message.
/// `expect_contents` of a read transaction.
async fn expect_read(
    txn: &dyn ReadTxn,
    sp: &[u8],
    entries: &[Entry],
    showing: &str,
) -> anyhow::Result<()> {
    expect_contents(&mut View::Read(txn), sp, entries, showing).await
}

async fn expect_contents(
    view: &mut View<'_>,
    sp: &[u8],
    entries: &[Entry],
    showing: &str,
) -> anyhow::Result<()> {
    let name = view.name();
    let scanned = view.scan(sp, None, 1000, false).await?;
    ensure!(
        scanned == entries,
        "a {name} should show {showing}: its scan got {}, want {}",
        show_entries(&scanned),
        show_entries(entries)
    );
    let mut reversed = view.scan(sp, None, 1000, true).await?;
    reversed.reverse();
    ensure!(
        reversed == entries,
        "a {name} should show {showing}: its reverse scan got {}",
        show_entries(&reversed)
    );
    // Every key the scan should have found, and those it must not have found.
    let mut keys: Vec<Vec<u8>> = entries.iter().map(|(k, _)| k.clone()).collect();
    for rest in [&b"1"[..], b"2", b"3", b"4", b"5"] {
        let k = key(sp, rest);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let want: Vec<Option<Vec<u8>>> = keys
        .iter()
        .map(|k| entries.iter().find(|(e, _)| e == k).map(|(_, v)| v.clone()))
        .collect();
    let got = view.get_many(&keys).await?;
    ensure!(
        got == want,
        "a {name} should show {showing}: get_many got {}, want {}",
        show_values(&got),
        show_values(&want)
    );
    for (k, want) in keys.iter().zip(&want) {
        let got = view.get(k).await?;
        ensure!(
            got == *want,
            "a {name} should show {showing}: get({}) got {:?}, want {:?}",
            show(k),
            got.as_deref().map(show),
            want.as_deref().map(show)
        );
    }
    Ok(())
}

/// How a write transaction ends without a commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    /// Dropped (its guest trapped).
    Drop,
    /// Its commit's future dropped before it was polled.
    DropCommit,
    /// `rollback`.
    Rollback,
}

/// Write transactions that end as `end` says keep nothing, each followed by a transaction
/// that commits: were a transaction left open on its connection, the next would run inside
/// it and its commit would keep the ended one's writes too (or fail, after a read-only
/// transaction dropped on the same connection).
async fn ends_keep_nothing(db: &dyn Backend, end: End) -> anyhow::Result<()> {
    let sp = space(&format!("{end:?}"));
    clear(db, &sp).await?;
    let (kept, removed) = (key(&sp, b"kept"), key(&sp, b"removed"));
    store(
        db,
        &[(kept.clone(), b"before"), (removed.clone(), b"before")],
    )
    .await?;
    for round in 0..ROUNDS {
        let ended = key(&sp, format!("ended/{round:02}").as_bytes());
        let next = key(&sp, format!("next/{round:02}").as_bytes());
        let mut txn = db.begin_write().await?;
        txn.put(kept.clone(), b"after".to_vec()).await?;
        txn.delete(removed.clone()).await?;
        txn.put(ended.clone(), b"x".to_vec()).await?;
        match end {
            End::Drop => drop(txn),
            End::DropCommit => drop(txn.commit()),
            End::Rollback => txn.rollback().await?,
        }
        // A read transaction dropped as well, on every other round.
        if round % 2 == 1 {
            let read = db.begin_read().await?;
            read.get(kept.clone()).await?;
            drop(read);
        }
        let mut txn = db.begin_write().await?;
        let seen = txn.get(ended.clone()).await?;
        ensure!(
            seen.is_none(),
            "round {round}: the next write transaction sees the ended one's write"
        );
        txn.put(next, b"1".to_vec()).await.map_err(|e| {
            anyhow!("round {round}: the write after an ended transaction failed: {e}")
        })?;
        txn.commit().await.map_err(|e| {
            anyhow!("round {round}: the commit after an ended transaction failed: {e}")
        })?;
    }
    let read = db.begin_read().await?;
    let ended = read.scan(key(&sp, b"ended/"), None, 1000, false).await?;
    ensure!(
        ended.is_empty(),
        "{} of {ROUNDS} ended transactions' writes were kept (committed by the transaction \
         after them?): {}",
        ended.len(),
        show_entries(&ended)
    );
    let next = read.scan(key(&sp, b"next/"), None, 1000, false).await?;
    ensure!(
        next.len() == ROUNDS,
        "{} of {ROUNDS} commits kept",
        next.len()
    );
    let got = (
        read.get(kept.clone()).await?,
        read.get(removed.clone()).await?,
    );
    ensure!(
        got == (Some(b"before".to_vec()), Some(b"before".to_vec())),
        "an ended transaction's overwrite or delete was kept: {got:?}"
    );
    drop(read);
    clear(db, &sp).await
}

async fn overlapping_writers(db: &dyn Backend, writers: Writers) -> anyhow::Result<()> {
    let sp = space("overlapping_writers");
    clear(db, &sp).await?;
    match writers {
        Writers::SideBySide => {
            let (x, y) = (key(&sp, b"x"), key(&sp, b"y"));
            store(db, &[(x.clone(), b"0"), (y.clone(), b"0")]).await?;
            // The same key, stored: both read the counter and write it.
            collide(db, &sp, "one stored key", [&x, &x], [&x, &x]).await?;
            // The same key, not stored yet: both find it absent and create it.
            let new = key(&sp, b"new");
            collide(db, &sp, "one new key", [&new, &new], [&new, &new]).await?;
            // Write skew: each reads what the other writes; no write overlaps, only a
            // serializable engine sees the collision.
            collide(db, &sp, "write skew", [&x, &y], [&y, &x]).await?;
        }
        Writers::TakeTurns => take_turns(db, &sp, Vec::new()).await?,
    }
    clear(db, &sp).await
}

/// Writers of one scope take turns on every engine, whether it lets writers run side by
/// side or not, and a turn ends with every way its transaction ends (here a drop). On an
/// engine whose writers run side by side, a writer of another scope begins beside them.
async fn scoped_writers(db: &dyn Backend, writers: Writers) -> anyhow::Result<()> {
    let sp = space("scoped_writers");
    clear(db, &sp).await?;
    let scope = b"account 7".to_vec();
    take_turns(db, &sp, scope.clone()).await?;
    let mut dropped = db.begin_write_in(scope.clone()).await?;
    dropped.put(key(&sp, b"dropped"), b"x".to_vec()).await?;
    drop(dropped);
    let Ok(next) = tokio::time::timeout(BESIDE_WAIT, db.begin_write_in(scope.clone())).await else {
        bail!("a writer of the scope still waits after the one before was dropped");
    };
    let next = next?;
    if writers == Writers::SideBySide {
        let other = tokio::time::timeout(BESIDE_WAIT, db.begin_write_in(b"account 8".to_vec()));
        let Ok(other) = other.await else {
            bail!("a writer of another scope waited for an open one of scope {scope:?}");
        };
        other?.rollback().await?;
        let unscoped = tokio::time::timeout(BESIDE_WAIT, db.begin_write());
        let Ok(unscoped) = unscoped.await else {
            bail!("an unscoped writer waited for an open scoped one");
        };
        unscoped?.rollback().await?;
    }
    next.rollback().await?;
    clear(db, &sp).await
}

/// Two writers, A and B, side by side: each reads its key of `reads` and writes its key of
/// `writes` and a key of its own; A commits while B writes. At most one may commit; the
/// other must get `Conflict` (at its write or its commit) and keep nothing, and its whole
/// transaction run again then commits.
async fn collide(
    db: &dyn Backend,
    sp: &[u8],
    case: &str,
    reads: [&Vec<u8>; 2],
    writes: [&Vec<u8>; 2],
) -> anyhow::Result<()> {
    let own = |who: &str| key(sp, format!("{case}/{who}").as_bytes());
    let mut a = db.begin_write().await?;
    let Ok(b) = tokio::time::timeout(BESIDE_WAIT, db.begin_write()).await else {
        bail!("{case}: a second writer did not begin beside an open one within {BESIDE_WAIT:?}");
    };
    let mut b = b?;
    a.get(reads[0].clone()).await?;
    b.get(reads[1].clone()).await?;
    a.put(writes[0].clone(), b"A".to_vec()).await?;
    a.put(own("A"), b"A".to_vec()).await?;
    b.put(own("B"), b"B".to_vec()).await?;
    let (b_write, a_commit) = tokio::join!(b.put(writes[1].clone(), b"B".to_vec()), a.commit());
    let b_commit = match b_write {
        Ok(()) => b.commit().await,
        Err(e) => {
            let commit = b.commit().await;
            ensure!(
                commit.is_err(),
                "{case}: B's write failed ({e}), yet its commit succeeded"
            );
            Err(e)
        }
    };
    let (winner, loser) = match (&a_commit, &b_commit) {
        (Ok(()), Ok(())) => bail!("{case}: both writers committed"),
        (Ok(()), Err(DbError::Conflict)) => ("A", "B"),
        (Err(DbError::Conflict), Ok(())) => ("B", "A"),
        _ => bail!("{case}: A's commit {a_commit:?}, B's {b_commit:?}; want one Conflict"),
    };
    let winner_write = if winner == "A" { writes[0] } else { writes[1] };
    let got = committed(db, winner_write).await?;
    ensure!(
        got.as_deref() == Some(winner.as_bytes()),
        "{case}: {} holds {:?} after {winner} won",
        show(winner_write),
        got.as_deref().map(show)
    );
    ensure!(
        committed(db, &own(winner)).await?.is_some(),
        "{case}: the winner's own write is missing"
    );
    ensure!(
        committed(db, &own(loser)).await?.is_none(),
        "{case}: {loser} got Conflict, yet its own write was kept"
    );
    // The loser runs its whole transaction again, alone now.
    let i = usize::from(loser == "B");
    let mut again = db.begin_write().await?;
    again.get(reads[i].clone()).await?;
    again
        .put(writes[i].clone(), loser.as_bytes().to_vec())
        .await?;
    again.put(own(loser), loser.as_bytes().to_vec()).await?;
    again
        .commit()
        .await
        .map_err(|e| anyhow!("{case}: the loser's transaction run again failed: {e}"))?;
    ensure!(
        committed(db, writes[i]).await?.as_deref() == Some(loser.as_bytes()),
        "{case}: the loser's transaction run again was not kept"
    );
    Ok(())
}

/// Writers one at a time (all of them, or those of one `scope` when it is not empty): a
/// second `begin_write` waits while the first is open, and once the first commits it
/// begins and sees the first's writes.
async fn take_turns(db: &dyn Backend, sp: &[u8], scope: Vec<u8>) -> anyhow::Result<()> {
    let counter = key(sp, b"counter");
    store(db, &[(counter.clone(), b"0")]).await?;
    let mut a = db.begin_write_in(scope.clone()).await?;
    a.get(counter.clone()).await?;
    let mut b_begin = db.begin_write_in(scope);
    ensure!(
        tokio::time::timeout(TURN_WAIT, &mut b_begin).await.is_err(),
        "a second writer began while the first was open"
    );
    a.put(counter.clone(), b"A".to_vec()).await?;
    // The first's commit may wait for the second to end its turn (one batch for both),
    // so the two run together.
    let second = async {
        let mut b = b_begin.await?;
        let seen = b.get(counter.clone()).await?;
        b.put(counter.clone(), b"B".to_vec()).await?;
        b.commit().await?;
        Ok::<_, DbError>(seen)
    };
    let (a_commit, seen) = tokio::join!(a.commit(), second);
    a_commit.map_err(|e| anyhow!("the first writer's commit failed: {e}"))?;
    let seen = seen.map_err(|e| anyhow!("the second writer failed: {e}"))?;
    ensure!(
        seen.as_deref() == Some(&b"A"[..]),
        "the second writer read {:?}, not the first's write",
        seen.as_deref().map(show)
    );
    let got = committed(db, &counter).await?;
    ensure!(
        got.as_deref() == Some(&b"B"[..]),
        "after both: {:?}",
        got.as_deref().map(show)
    );
    Ok(())
}

/// A read transaction sees the commits made before it began, and none after: also one
/// that begins before a commit and reads for the first time after it.
async fn snapshots(db: &dyn Backend) -> anyhow::Result<()> {
    let sp = space("snapshots");
    clear(db, &sp).await?;
    let (changed, added, removed) = (key(&sp, b"1"), key(&sp, b"2"), key(&sp, b"3"));
    store(db, &[(changed.clone(), b"old"), (removed.clone(), b"old")]).await?;
    let old = vec![
        (changed.clone(), b"old".to_vec()),
        (removed.clone(), b"old".to_vec()),
    ];
    let new = vec![
        (changed.clone(), b"new".to_vec()),
        (added.clone(), b"new".to_vec()),
    ];
    let read_before = db.begin_read().await?;
    read_before.get(changed.clone()).await?;
    let begun_before = db.begin_read().await?;
    let mut txn = db.begin_write().await?;
    txn.put(changed.clone(), b"new".to_vec()).await?;
    txn.put(added.clone(), b"new".to_vec()).await?;
    txn.delete(removed.clone()).await?;
    txn.commit().await?;
    expect_read(
        read_before.as_ref(),
        &sp,
        &old,
        "the store as it was when it began and read (not a commit after)",
    )
    .await?;
    expect_read(
        begun_before.as_ref(),
        &sp,
        &old,
        "the store as it was when it began, before a commit it first read after",
    )
    .await?;
    let after = db.begin_read().await?;
    expect_read(after.as_ref(), &sp, &new, "the commit before it began").await?;
    drop((read_before, begun_before, after));
    clear(db, &sp).await
}

/// A key over `kv::KEY_BYTES_MAX` is refused with `TooLarge`, and the transaction goes on
/// as it was: its writes before and after are kept by its commit.
async fn too_large_keys(db: &dyn Backend) -> anyhow::Result<()> {
    let sp = space("too_large");
    clear(db, &sp).await?;
    let pad = |len: usize| {
        let mut k = sp.clone();
        k.resize(len, b'k');
        k
    };
    let (largest, too_large) = (pad(kv::KEY_BYTES_MAX), pad(kv::KEY_BYTES_MAX + 1));
    let (before, after) = (key(&sp, b"before"), key(&sp, b"after"));
    let mut txn = db.begin_write().await?;
    txn.put(before.clone(), b"1".to_vec()).await?;
    match txn.put(too_large.clone(), b"v".to_vec()).await {
        Err(DbError::TooLarge) => {}
        other => {
            drop(txn);
            bail!(
                "a key of {} bytes: {other:?}, want TooLarge",
                kv::KEY_BYTES_MAX + 1
            );
        }
    }
    txn.put(largest.clone(), b"v".to_vec())
        .await
        .map_err(|e| anyhow!("a key of {} bytes: {e}", kv::KEY_BYTES_MAX))?;
    txn.put(after.clone(), b"1".to_vec())
        .await
        .map_err(|e| anyhow!("a write after the refused one: {e}"))?;
    let seen = txn.get(before.clone()).await?;
    ensure!(
        seen.is_some(),
        "the write before the refused one is gone from the transaction"
    );
    txn.commit()
        .await
        .map_err(|e| anyhow!("the commit after a refused write: {e}"))?;
    for (k, want) in [
        (&before, true),
        (&largest, true),
        (&after, true),
        (&too_large, false),
    ] {
        let got = committed(db, k).await?.is_some();
        ensure!(
            got == want,
            "after the commit, a key of {} bytes is {}",
            k.len(),
            if got { "stored" } else { "missing" }
        );
    }
    clear(db, &sp).await
}

/// `write_many`: the writes in their order, as single puts and deletes would make them,
/// seen by the transaction's reads and kept by its commit; the first refused ends them
/// (those before it made, it and those after not) and the transaction goes on; a rollback
/// takes back every one.
async fn write_many(db: &dyn Backend) -> anyhow::Result<()> {
    let sp = space("write_many");
    clear(db, &sp).await?;
    let (a, b, c, d) = (
        key(&sp, b"a"),
        key(&sp, b"b"),
        key(&sp, b"c"),
        key(&sp, b"d"),
    );
    store(db, &[(a.clone(), b"old".as_slice())]).await?;
    let mut too_large = sp.clone();
    too_large.resize(kv::KEY_BYTES_MAX + 1, b'k');

    // Rolled back: none of them stays.
    let mut txn = db.begin_write().await?;
    txn.write_many(vec![(a.clone(), None), (b.clone(), Some(b"1".to_vec()))])
        .await?;
    txn.rollback().await?;
    ensure!(
        committed(db, &a).await? == Some(b"old".to_vec()) && committed(db, &b).await?.is_none(),
        "a rollback kept writes sent together"
    );

    let mut txn = db.begin_write().await?;
    txn.write_many(vec![
        (a.clone(), None),
        (b.clone(), Some(b"1".to_vec())),
        (b.clone(), Some(b"2".to_vec())),
        (c.clone(), Some(b"3".to_vec())),
        (c.clone(), None),
    ])
    .await?;
    let seen = txn.get_many(vec![a.clone(), b.clone(), c.clone()]).await?;
    ensure!(
        seen == [None, Some(b"2".to_vec()), None],
        "the transaction reads {} after its writes, want [-, 2, -]",
        show_values(&seen)
    );
    match txn
        .write_many(vec![
            (d.clone(), Some(b"4".to_vec())),
            (too_large.clone(), Some(b"v".to_vec())),
            (a.clone(), Some(b"5".to_vec())),
        ])
        .await
    {
        Err(DbError::TooLarge) => {}
        other => {
            drop(txn);
            bail!("writes with a too-large key: {other:?}, want TooLarge");
        }
    }
    txn.commit()
        .await
        .map_err(|e| anyhow!("the commit after refused writes: {e}"))?;
    let kept = [
        committed(db, &a).await?,
        committed(db, &b).await?,
        committed(db, &c).await?,
        committed(db, &d).await?,
    ];
    ensure!(
        kept == [None, Some(b"2".to_vec()), None, Some(b"4".to_vec())],
        "after the commit: {}, want [-, 2, -, 4] (a write after the refused one was made, \
         or one before it was not)",
        show_values(&kept)
    );
    clear(db, &sp).await
}

/// `next_ids`: ids rise and are never given twice to committed transactions; ids of a
/// transaction that did not commit are given again by an engine that keeps the counter in
/// the transaction (redb) and never by one that takes them outside it (PostgreSQL, where
/// two open writers also get different ids).
async fn next_ids(db: &dyn Backend, writers: Writers) -> anyhow::Result<()> {
    let counter = key(&space("next_ids"), b"counter");
    let mut txn = db.begin_write().await?;
    let first = txn.next_ids(counter.clone(), 3).await?;
    ensure!(first.len() == 3, "3 ids asked, got {first:?}");
    ensure!(first.windows(2).all(|w| w[0] < w[1]), "ids rise: {first:?}");
    txn.commit().await?;
    let last = *first.last().expect("three ids");

    let mut dropped = db.begin_write().await?;
    let lost = dropped.next_ids(counter.clone(), 1).await?[0];
    ensure!(
        lost > last,
        "an id after the committed ones, got {lost} after {last}"
    );
    drop(dropped);
    let mut txn = db.begin_write().await?;
    let next = txn.next_ids(counter.clone(), 1).await?[0];
    match writers {
        Writers::TakeTurns => ensure!(
            next == lost,
            "the counter in the transaction gives back the id of a rollback: got {next}, want {lost}"
        ),
        Writers::SideBySide => ensure!(
            next > lost,
            "an id taken outside the transaction is never given again: got {next} after {lost}"
        ),
    }
    if writers == Writers::SideBySide {
        let mut beside = db.begin_write().await?;
        let other = beside.next_ids(counter.clone(), 1).await?[0];
        ensure!(other != next, "two open writers got the same id {other}");
        beside.commit().await?;
    }
    txn.commit().await?;

    // After `reset_counters` (an import), ids go on from the counter's entry.
    store(db, &[(counter.clone(), &1000u64.to_be_bytes()[..])]).await?;
    db.reset_counters().await?;
    let mut txn = db.begin_write().await?;
    let after_reset = txn.next_ids(counter.clone(), 1).await?[0];
    ensure!(
        after_reset == 1001,
        "ids after a reset go on from the counter's entry 1000: got {after_reset}"
    );
    txn.commit().await?;
    Ok(())
}
