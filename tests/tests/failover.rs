//! Faktura on a pg_auto_failover formation (`formation::Formation`: a monitor, a primary
//! and two standbys in a synchronous quorum), reached through one multi-host URI with
//! `target_session_attrs=read-write`: the primary is killed under load, no acknowledged
//! write is lost, writes resume without anyone touching the host, and the old primary
//! rejoins as a standby.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use faktura_tests::formation::{Formation, MONITOR_TIMEOUTS, NodeState};
use faktura_tests::{ADMIN_KEY, App, Reply, send_raw, slow_tests, test_component};

/// Clients writing at once.
const WRITERS: usize = 4;

/// A client's pause after each write, and before it sends a refused one again.
const PAUSE: Duration = Duration::from_millis(20);

/// An invoice whose create the service acknowledged, with what it was sent.
struct Acked {
    label: String,
    price: u32,
    /// Its completion was acknowledged too.
    completed: bool,
}

/// What the clients were told.
#[derive(Default)]
struct Tally {
    invoices: BTreeMap<u64, Acked>,
    /// When each acknowledged write (create or completion) was sent, and answered.
    answered: Vec<(Instant, Instant)>,
    /// 503 answers that said nothing was changed.
    refused: usize,
    /// 503 answers that said the commit may or may not have been made.
    unknown: usize,
    /// Answers sent again for an Idempotency-Key (`Idempotent-Replayed`).
    replayed: usize,
    /// Requests whose connection to the host failed.
    unconnected: usize,
    /// Any other answer: none is expected.
    unexpected: Vec<String>,
}

impl Tally {
    /// When the first write sent after `at` was acknowledged.
    fn answered_after(&self, at: Instant) -> Option<Instant> {
        self.answered
            .iter()
            .filter(|(sent, _)| *sent > at)
            .map(|(_, answered)| *answered)
            .min()
    }
}

type Shared = Arc<Mutex<Tally>>;

/// One request with an `Idempotency-Key` on a fresh connection; `None` when the connection
/// to the host fails.
async fn send(base: &str, method: &str, path: &str, body: &str, key: &str) -> Option<Reply> {
    let (base, method, path, body, key) = (
        base.to_owned(),
        method.to_owned(),
        path.to_owned(),
        body.as_bytes().to_vec(),
        key.to_owned(),
    );
    // `send_raw` panics when it cannot connect: that panic ends this task only.
    tokio::spawn(async move {
        let headers = [
            ("X-ServiceApiKey", ADMIN_KEY),
            ("Content-Type", "application/xml"),
            ("Idempotency-Key", key.as_str()),
        ];
        send_raw(&base, &method, &path, Some(body), &headers).await
    })
    .await
    .ok()
}

/// Sends a write until it is acknowledged, as a client of the API does: after a 503 it is
/// sent again, after a pause, with the same `key`, so that a write whose commit's outcome
/// was unknown is made once. The reply; `None` when the answer was another or `stop` is
/// set.
async fn write(
    base: &str,
    (method, path, body): (&str, &str, &str),
    key: &str,
    stop: &AtomicBool,
    tally: &Shared,
) -> Option<Reply> {
    while !stop.load(Ordering::Relaxed) {
        let sent = Instant::now();
        let reply = send(base, method, path, body, key).await;
        {
            let mut t = tally.lock().unwrap();
            match reply {
                Some(r) if (200..300).contains(&r.status) => {
                    t.answered.push((sent, Instant::now()));
                    t.replayed += usize::from(r.header("idempotent-replayed") == Some("true"));
                    return Some(r);
                }
                Some(r) if r.status == 503 && r.body.contains("may or may not") => t.unknown += 1,
                Some(r) if r.status == 503 => t.refused += 1,
                Some(r) => {
                    t.unexpected
                        .push(format!("{method} {path}: {} {}", r.status, r.body));
                    return None;
                }
                None => t.unconnected += 1,
            }
        }
        tokio::time::sleep(PAUSE).await;
    }
    None
}

/// One client: creates invoices with a label and price of their own, and completes every
/// third one, until `stop`.
async fn writer(base: String, client: u64, me: usize, stop: Arc<AtomicBool>, tally: Shared) {
    let mut n = 0u32;
    while !stop.load(Ordering::Relaxed) {
        n += 1;
        let label = format!("failover {me}-{n}");
        let price = n % 97 + 1;
        let body = format!(
            "<invoice><client_id>{client}</client_id><label>{label}</label><invoice-items>\
             <invoice-item><name>Support</name><unit_price>{price}</unit_price></invoice-item>\
             </invoice-items></invoice>"
        );
        let create = ("POST", "/api/invoices", body.as_str());
        let key = format!("failover-{me}-{n}");
        if let Some(r) = write(&base, create, &key, &stop, &tally).await {
            let id = r.id();
            tally.lock().unwrap().invoices.insert(
                id,
                Acked {
                    label,
                    price,
                    completed: false,
                },
            );
            let path = format!("/api/invoices/{id}/complete");
            let complete = ("PUT", path.as_str(), "");
            if n.is_multiple_of(3)
                && write(&base, complete, &format!("{key}-complete"), &stop, &tally)
                    .await
                    .is_some()
            {
                tally
                    .lock()
                    .unwrap()
                    .invoices
                    .get_mut(&id)
                    .unwrap()
                    .completed = true;
            }
        }
        tokio::time::sleep(PAUSE).await;
    }
}

/// Waits until `done` holds for the tally, checking every 50 ms, at most `limit`.
async fn until(tally: &Shared, what: &str, limit: Duration, done: impl Fn(&Tally) -> bool) {
    let start = Instant::now();
    while !done(&tally.lock().unwrap()) {
        assert!(start.elapsed() < limit, "no {what} within {limit:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Every invoice of the store as the JSON list has it: id → the record.
async fn invoices(base: &str) -> BTreeMap<u64, serde_json::Value> {
    let mut all = BTreeMap::new();
    for page in 1.. {
        let r = send_raw(
            base,
            "GET",
            &format!("/api/invoices?per_page=1000&page={page}"),
            None,
            &[
                ("X-ServiceApiKey", ADMIN_KEY),
                ("Accept", "application/json"),
            ],
        )
        .await;
        assert_eq!(r.status, 200, "{}", r.body);
        let list: serde_json::Value = serde_json::from_str(&r.body).unwrap();
        // One record is an object, several an array (the JSON of the XML list).
        let records = match &list["invoices"]["invoice"] {
            serde_json::Value::Array(records) => records.clone(),
            serde_json::Value::Null => Vec::new(),
            one => vec![one.clone()],
        };
        let n = records.len();
        for record in records {
            let id = record["id"].as_str().unwrap().parse().unwrap();
            all.insert(id, record);
        }
        if n < 1000 {
            break;
        }
    }
    all
}

/// The state of the node `name`.
fn in_state<'a>(state: &'a [NodeState], name: &str) -> &'a NodeState {
    state
        .iter()
        .find(|n| n.node.name == name)
        .unwrap_or_else(|| panic!("no node {name} in {state:?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_primary_loses_no_acknowledged_write_and_rejoins_as_a_standby() {
    let started = Instant::now();
    // A stale test component is refused before the formation is made, not after.
    test_component();
    let mut formation = tokio::task::block_in_place(Formation::start);
    let formed = started.elapsed();
    let app = App::spawn_on_store(formation.url(), |_| {}).await;
    let client = app
        .create("/api/clients", "<client><name>Failover AG</name></client>")
        .await
        .id();

    let stop = Arc::new(AtomicBool::new(false));
    let tally: Shared = Arc::default();
    let writers: Vec<_> = (0..WRITERS)
        .map(|me| {
            let (base, stop, tally) = (app.base.clone(), stop.clone(), tally.clone());
            tokio::spawn(writer(base, client, me, stop, tally))
        })
        .collect();
    until(&tally, "40 writes", Duration::from_secs(30), |t| {
        t.answered.len() >= 40
    })
    .await;

    // The primary dies whole, as with its machine; the host is not told.
    let old = tokio::task::block_in_place(|| formation.kill_primary());
    let killed_at = Instant::now();
    until(
        &tally,
        "write after the kill",
        Duration::from_secs(60),
        |t| t.answered_after(killed_at).is_some(),
    )
    .await;
    let outage = tally.lock().unwrap().answered_after(killed_at).unwrap() - killed_at;
    let state = tokio::task::block_in_place(|| {
        formation.wait_until("a new primary", Duration::from_secs(30), |s| {
            s.iter().any(|n| n.is("primary") && n.node != old)
        })
    });
    let new = state.iter().find(|n| n.is("primary")).unwrap().node.clone();
    tokio::time::sleep(Duration::from_secs(1)).await;

    // The old primary's keeper starts again and makes its server follow the new primary.
    let rejoin_at = Instant::now();
    tokio::task::block_in_place(|| {
        formation.rejoin(&old);
        formation.wait_until(
            "the old primary as a secondary",
            Duration::from_secs(60),
            |s| in_state(s, &old.name).is("secondary"),
        )
    });
    let rejoined = rejoin_at.elapsed();
    let back = Instant::now();
    until(
        &tally,
        "write after the rejoin",
        Duration::from_secs(30),
        |t| t.answered_after(back).is_some(),
    )
    .await;
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.await.unwrap();
    }
    let state = tokio::task::block_in_place(|| formation.state());
    assert!(in_state(&state, &new.name).is("primary"), "{state:?}");
    assert_eq!(
        state.iter().filter(|n| n.is("secondary")).count(),
        2,
        "{state:?}"
    );

    // Every acknowledged write is there with what was sent.
    let t = std::mem::take(&mut *tally.lock().unwrap());
    assert!(
        t.unexpected.is_empty(),
        "unexpected answers: {:#?}",
        t.unexpected
    );
    let stored = invoices(&app.base).await;
    for (id, acked) in &t.invoices {
        let record = stored
            .get(id)
            .unwrap_or_else(|| panic!("acknowledged invoice {id} ({}) is lost", acked.label));
        assert_eq!(record["label"], acked.label.as_str(), "invoice {id}");
        assert_eq!(record["total_net"], acked.price.to_string(), "invoice {id}");
        if acked.completed {
            assert_ne!(record["status"], "DRAFT", "the completion of {id} is lost");
        }
    }
    // A create sent again with its key after an unknown outcome was made once.
    let mut labels: Vec<&str> = stored
        .values()
        .filter_map(|r| r["label"].as_str())
        .collect();
    labels.sort_unstable();
    let twice = labels.windows(2).find(|w| w[0] == w[1]);
    assert_eq!(twice, None, "an invoice made twice");
    // Numbers are claimed in the create's transaction: a create lost with the primary was
    // never acknowledged and its number went to a later one, so they run 1..=n.
    let mut numbers: Vec<u64> = stored
        .values()
        .map(|r| r["number"].as_str().unwrap().parse().unwrap())
        .collect();
    numbers.sort_unstable();
    let misplaced = (1..).zip(&numbers).find(|(want, got)| want != *got);
    assert_eq!(
        misplaced, None,
        "numbers with a gap or a repeat (wanted, found)"
    );

    let timeouts: Vec<String> = MONITOR_TIMEOUTS
        .iter()
        .map(|(name, ms)| format!("{}={ms}", name.trim_start_matches("pgautofailover.")))
        .collect();
    let how = if formation.log(&old.name).contains("trying pg_basebackup") {
        "a new base backup"
    } else {
        "pg_rewind"
    };
    eprintln!(
        "failover: {} killed, {} promoted; writes resumed after {:.1} s (monitor, ms: {}); \
         {} back as a standby in {:.1} s by {how}; {} invoices acknowledged, {} completed, \
         all there; 503s: {} nothing changed, {} outcome unknown, {} answers replayed; \
         formation up in {:.1} s, test {:.1} s",
        old.name,
        new.name,
        outage.as_secs_f64(),
        timeouts.join(", "),
        old.name,
        rejoined.as_secs_f64(),
        t.invoices.len(),
        t.invoices.values().filter(|a| a.completed).count(),
        t.refused,
        t.unknown,
        t.replayed,
        formed.as_secs_f64(),
        started.elapsed().as_secs_f64(),
    );
    assert_eq!(t.unconnected, 0, "the host stayed up");
    if slow_tests() {
        assert!(outage < Duration::from_secs(10), "outage {outage:?}");
    }
}
