//! Disk faults: the host binary runs under libfiu's `fiu-run -x`, which fails its calls of
//! `pwrite`, `fdatasync` and `fsync` on command (`fiu-ctrl`) with ENOSPC or EIO, while
//! clients create, complete and pay invoices and e-mail some of them. Every answer is a
//! success or a 503/507 with `<errors>`; once a fault ends the host serves again by itself;
//! every acknowledged write is there, after the faults and after a restart, numbers have no
//! gaps, `faktura check` finds no problem, and every acknowledged e-mail is queued.
//!
//! redb writes its file with `pwrite` and syncs it with `fdatasync`; the mail outbox syncs
//! its files with `fsync`. `write` is not failed: the host's runtime wakes its threads and
//! logs through `write` too, where a failure is no disk fault, so the outbox's writes fail
//! at their `fsync` instead.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use faktura_tests::{
    HostProcess, Reply, free_port, host_binary, run_ok, start_host, start_host_under,
    test_component, try_send,
};

use crate::crash::{
    Acknowledged, KEY, completed, created, invoice_body, paid, payment_body, verify,
};

const WORKERS: usize = 6;
/// How long each fault lasts.
const FAULT_TIME: Duration = Duration::from_secs(3);
/// Load without a fault after each, so that writes acknowledged between faults are there to
/// lose.
const CALM_TIME: Duration = Duration::from_secs(1);
/// How long a client waits after a refusal.
const REFUSED_PAUSE: Duration = Duration::from_millis(20);

/// The faults, one after the other: what they are, libfiu's point and its parameters
/// (`failinfo` is the errno: 28 ENOSPC, 5 EIO).
const FAULTS: &[(&str, &str, &str)] = &[
    (
        "ENOSPC on every pwrite",
        "posix/io/rw/pwrite",
        "enable name=posix/io/rw/pwrite,failinfo=28",
    ),
    (
        "EIO on half the fdatasyncs",
        "posix/io/sync/fdatasync",
        "enable_random name=posix/io/sync/fdatasync,failinfo=5,probability=0.5",
    ),
    (
        "ENOSPC on every fsync (the mail outbox)",
        "posix/io/sync/fsync",
        "enable name=posix/io/sync/fsync,failinfo=28",
    ),
    (
        "EIO on a third of the pwrites",
        "posix/io/rw/pwrite",
        "enable_random name=posix/io/rw/pwrite,failinfo=5,probability=0.3",
    ),
    (
        "ENOSPC on every fdatasync",
        "posix/io/sync/fdatasync",
        "enable name=posix/io/sync/fdatasync,failinfo=28",
    ),
];

/// What the clients were answered besides their acknowledged writes.
#[derive(Default)]
struct Tally {
    /// Answers by status.
    statuses: BTreeMap<u16, u64>,
    /// Answers no disk fault may give: another status, a refusal without `<errors>`, none.
    unexpected: Vec<String>,
    /// Invoices whose e-mail was acknowledged (sent to `inv{id}@example.org`).
    emailed: BTreeSet<u64>,
    /// Refusals with a JSON body, of the client that asks for JSON.
    json_refusals: u64,
}

type Shared = Arc<Mutex<Tally>>;

/// The answer when it is a success; a refusal must be 503 or 507 with `<errors>`. After a
/// refusal a client waits a little, as clients do.
async fn success(tally: &Shared, what: &str, reply: Option<Reply>) -> Option<Reply> {
    answered(tally, what, reply, "<errors>").await
}

/// [`success`] for a client that asked for JSON: a refusal's body is `{"errors": …}`,
/// whether the component or the host refused.
async fn answered(tally: &Shared, what: &str, reply: Option<Reply>, errors: &str) -> Option<Reply> {
    {
        let mut t = tally.lock().unwrap();
        let Some(r) = reply else {
            t.unexpected.push(format!("{what}: no answer"));
            return None;
        };
        *t.statuses.entry(r.status).or_default() += 1;
        match r.status {
            200..=299 => return Some(r),
            503 | 507 if r.body.contains(errors) => {
                if errors.starts_with('{') {
                    t.json_refusals += 1;
                }
            }
            _ => t
                .unexpected
                .push(format!("{what}: {} {}", r.status, r.body.trim())),
        }
    }
    tokio::time::sleep(REFUSED_PAUSE).await;
    None
}

async fn work(
    base: String,
    client: u64,
    acked: Acknowledged,
    tally: Shared,
    stop: Arc<AtomicBool>,
) {
    let mut n = 0u64;
    while !stop.load(Ordering::SeqCst) {
        n += 1;
        let body = invoice_body(client);
        let sent = try_send(&base, "POST", "/api/invoices", Some(&body), KEY).await;
        let Some(r) = success(&tally, "create", sent).await else {
            continue;
        };
        let id = created(&acked, &r);
        let path = format!("/api/invoices/{id}/complete");
        let sent = try_send(&base, "PUT", &path, Some(""), KEY).await;
        if success(&tally, "complete", sent).await.is_none() {
            continue;
        }
        completed(&acked, id);
        if n.is_multiple_of(3) {
            let mail =
                format!("<email><recipients><to>inv{id}@example.org</to></recipients></email>");
            let path = format!("/api/invoices/{id}/email");
            let sent = try_send(&base, "POST", &path, Some(&mail), KEY).await;
            if success(&tally, "email", sent).await.is_some() {
                tally.lock().unwrap().emailed.insert(id);
            }
        }
        let pay = payment_body(id);
        let sent = try_send(&base, "POST", "/api/invoice-payments", Some(&pay), KEY).await;
        if success(&tally, "pay", sent).await.is_some() {
            paid(&acked, id);
        }
    }
}

/// A client that asks for JSON (`?format=json`): creates clients until `stop`.
async fn json_work(base: String, tally: Shared, stop: Arc<AtomicBool>) {
    while !stop.load(Ordering::SeqCst) {
        let body = "<client><name>JSON GmbH</name></client>";
        let sent = try_send(&base, "POST", "/api/clients?format=json", Some(body), KEY).await;
        answered(&tally, "create a client (JSON)", sent, "{\"errors\"").await;
    }
}

/// `fiu-run` and `fiu-ctrl`, which `make test-deps` installs; the test fails without them.
fn fiu_tools() {
    for tool in ["fiu-run", "fiu-ctrl"] {
        let found = std::process::Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .is_ok_and(|o| o.status.success());
        assert!(
            found,
            "{tool} is missing: the disk fault test needs Debian's fiu-utils \
             (`apt-get install fiu-utils`, or `make test-deps`)"
        );
    }
}

/// Sends `command` to the libfiu of process `pid`, whose control pipes start with `prefix`.
fn fiu_ctrl(prefix: &Path, pid: u32, command: &str) {
    let out = run_ok(
        std::process::Command::new("fiu-ctrl")
            .arg("-f")
            .arg(prefix)
            .args(["-c", command, &pid.to_string()]),
        "fiu-ctrl runs (apt-get install fiu-utils)",
    );
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(!said.contains("error"), "fiu-ctrl {command}: {said}");
}

/// Waits (at most 30 s) until the host answers a read and a write again.
async fn serving(base: &str) -> Duration {
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(30) {
        let read = try_send(base, "GET", "/api/invoices?per_page=1", None, KEY).await;
        if read.is_some_and(|r| r.status == 200) {
            let write = try_send(
                base,
                "POST",
                "/api/clients",
                Some("<client><name>Probe</name></client>"),
                KEY,
            )
            .await;
            if write.is_some_and(|r| r.status == 201) {
                return started.elapsed();
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the host did not serve again within 30 s of the fault's end");
}

/// `/readyz`'s status and reason.
async fn readyz(metrics: &str) -> Option<(u16, String)> {
    try_send(metrics, "GET", "/readyz", None, KEY)
        .await
        .map(|r| (r.status, r.body.trim().to_owned()))
}

/// How many acknowledged writes the host does not hold: an invoice missing or holding
/// another number, a completion or a payment gone.
async fn lost(base: &str, acked: &Acknowledged) -> usize {
    let expected = acked.lock().unwrap().clone();
    let mut lost = 0;
    for (id, (number, completed, paid)) in &expected {
        let r = try_send(base, "GET", &format!("/api/invoices/{id}"), None, KEY)
            .await
            .expect("the host answers");
        if r.status != 200 {
            lost += 1 + usize::from(*completed) + usize::from(*paid);
            continue;
        }
        let status = r.field("status").unwrap();
        lost += usize::from(r.field("number").unwrap() != number.to_string());
        lost += usize::from(*completed && status == "DRAFT");
        lost += usize::from(*paid && status != "PAID");
    }
    lost
}

/// The recipients of the messages in the outbox queue of `data`.
fn queued_recipients(data: &Path) -> BTreeSet<String> {
    let Ok(dir) = std::fs::read_dir(data.join("outbox/queue")) else {
        return BTreeSet::new();
    };
    dir.flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "envelope"))
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .filter(|e| {
            // A message is queued once its `.eml` is there.
            e.path().with_extension("eml").exists()
        })
        .flat_map(|e| {
            std::fs::read_to_string(e.path())
                .unwrap_or_default()
                .lines()
                .filter_map(|l| l.strip_prefix("to ").map(str::to_owned))
                .collect::<Vec<_>>()
        })
        .collect()
}

fn queued_files(data: &Path) -> BTreeSet<String> {
    std::fs::read_dir(data.join("outbox/queue"))
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| !n.starts_with('.'))
                .collect()
        })
        .unwrap_or_default()
}

/// Writes acknowledged: creations, completions and payments.
fn writes(acked: &Acknowledged) -> usize {
    acked
        .lock()
        .unwrap()
        .values()
        .map(|(_, completed, paid)| 1 + usize::from(*completed) + usize::from(*paid))
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disk_faults_refuse_writes_and_lose_none_acknowledged() {
    fiu_tools();
    let data = tempfile::tempdir().unwrap();
    let files = tempfile::tempdir().unwrap();
    let log = files.path().join("host.log");
    let control = files.path().join("fiu");
    let (port, metrics_port) = (free_port(), free_port());
    let base = format!("http://127.0.0.1:{port}");
    let metrics = format!("http://127.0.0.1:{metrics_port}");
    let fiu_run: Vec<&OsStr> = vec![
        OsStr::new("fiu-run"),
        OsStr::new("-x"),
        OsStr::new("-f"),
        control.as_os_str(),
    ];
    let metrics_addr = format!("127.0.0.1:{metrics_port}");
    let log_file = std::fs::File::create(&log).unwrap();
    let mut server: HostProcess = start_host_under(
        &fiu_run,
        data.path(),
        port,
        KEY,
        &["--store", "", "--metrics", &metrics_addr],
        |c| {
            c.stderr(log_file);
        },
    );
    server.wait_ready(&base, KEY).await;
    let pid = server.id();
    let client = try_send(
        &base,
        "POST",
        "/api/clients",
        Some("<client><name>Disk AG</name></client>"),
        KEY,
    )
    .await
    .unwrap()
    .id();

    // Mail queued before any fault, which must stay queued.
    let earlier = try_send(
        &base,
        "POST",
        "/api/invoices",
        Some(&invoice_body(client)),
        KEY,
    )
    .await
    .unwrap();
    assert_eq!(earlier.status, 201, "{}", earlier.body);
    let acked: Acknowledged = Arc::default();
    let id = created(&acked, &earlier);
    let r = try_send(
        &base,
        "PUT",
        &format!("/api/invoices/{id}/complete"),
        Some(""),
        KEY,
    )
    .await
    .unwrap();
    assert_eq!(r.status, 200, "{}", r.body);
    completed(&acked, id);
    let mail = "<email><recipients><to>before@example.org</to></recipients></email>";
    let r = try_send(
        &base,
        "POST",
        &format!("/api/invoices/{id}/email"),
        Some(mail),
        KEY,
    )
    .await
    .unwrap();
    assert_eq!(r.status, 200, "{}", r.body);
    let queued_before = queued_files(data.path());
    assert!(
        queued_recipients(data.path()).contains("before@example.org"),
        "the first message is queued: {queued_before:?}"
    );

    let tally: Shared = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let workers: Vec<_> = (0..WORKERS)
        .map(|_| {
            tokio::spawn(work(
                base.clone(),
                client,
                acked.clone(),
                tally.clone(),
                stop.clone(),
            ))
        })
        .collect();
    let json = tokio::spawn(json_work(base.clone(), tally.clone(), stop.clone()));
    tokio::time::sleep(CALM_TIME).await;
    let mut not_ready: BTreeSet<String> = BTreeSet::new();
    let mut recoveries = Vec::new();
    for (what, point, enable) in FAULTS {
        fiu_ctrl(&control, pid, enable);
        let started = Instant::now();
        while started.elapsed() < FAULT_TIME {
            if let Some((503, why)) = readyz(&metrics).await {
                not_ready.insert(why);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        fiu_ctrl(&control, pid, &format!("disable name={point}"));
        recoveries.push((*what, serving(&base).await));
        tokio::time::sleep(CALM_TIME).await;
    }
    stop.store(true, Ordering::SeqCst);
    for w in workers {
        w.await.unwrap();
    }
    json.await.unwrap();
    assert_eq!(
        readyz(&metrics).await.map(|r| r.0),
        Some(200),
        "ready after the faults"
    );

    let log_text = std::fs::read_to_string(&log).unwrap();
    let failed = |errno: &str| {
        log_text
            .lines()
            .filter(|l| {
                (l.contains("the store's file failed:")
                    || l.contains("the mail queue could not take a message"))
                    && l.contains(&format!("(os error {errno})"))
            })
            .count()
    };
    let (enospc, eio) = (failed("28"), failed("5"));
    let lost_after_faults = lost(&base, &acked).await;
    verify(&base, &acked, 0).await;

    // After a restart (SIGKILL, no faults), all of it is still there.
    server.kill();
    let _restarted = start_host(data.path(), port, KEY, &["--store", ""]);
    faktura_tests::wait_ready(&base, KEY).await;
    let lost_after_restart = lost(&base, &acked).await;
    verify(&base, &acked, 1).await;
    let checked = run_ok(
        std::process::Command::new(host_binary())
            .arg("check")
            .arg("--data")
            .arg(data.path())
            .arg("--component")
            .arg(test_component()),
        "the host binary runs",
    );
    let checked = String::from_utf8_lossy(&checked.stdout).into_owned();
    assert!(checked.contains("No problems found."), "{checked}");

    // Every acknowledged e-mail is queued, handed over again by the upkeep when the outbox
    // could not take it (at most a minute's hold and a few retries), and what was queued
    // before the faults still is.
    let emailed = tally.lock().unwrap().emailed.clone();
    let expected: BTreeSet<String> = emailed
        .iter()
        .map(|id| format!("inv{id}@example.org"))
        .collect();
    let started = Instant::now();
    let mut missing: Vec<String>;
    loop {
        let queued = queued_recipients(data.path());
        missing = expected.difference(&queued).cloned().collect();
        if missing.is_empty() || started.elapsed() > Duration::from_secs(180) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let queued_after = queued_files(data.path());
    let tally = tally.lock().unwrap();
    let refused: u64 = tally
        .statuses
        .iter()
        .filter(|(s, _)| !(200..300).contains(*s))
        .map(|(_, n)| n)
        .sum();
    eprintln!(
        "disk faults: {} faults ({}), injected failures the host met: {} ENOSPC, {} EIO; \
         answers by status {:?}: {refused} refused; writes acknowledged: {} ({} invoices), \
         e-mails acknowledged: {}; writes lost: {} after the faults, {} after a restart; \
         back to serving after each fault within {:?}",
        FAULTS.len(),
        FAULTS.iter().map(|f| f.0).collect::<Vec<_>>().join(", "),
        enospc,
        eio,
        tally.statuses,
        writes(&acked),
        acked.lock().unwrap().len(),
        emailed.len(),
        lost_after_faults,
        lost_after_restart,
        recoveries.iter().map(|r| r.1).max().unwrap_or_default(),
    );
    assert!(
        tally.unexpected.is_empty(),
        "answers no disk fault may give ({}):\n{}",
        tally.unexpected.len(),
        tally.unexpected.join("\n")
    );
    assert_eq!(lost_after_faults, 0, "acknowledged writes lost");
    assert_eq!(
        lost_after_restart, 0,
        "acknowledged writes lost by the restart"
    );
    assert!(
        enospc > 0 && eio > 0,
        "the faults reached the host's disk calls"
    );
    assert!(
        tally.statuses.get(&507).is_some_and(|n| *n > 0)
            && tally.statuses.get(&503).is_some_and(|n| *n > 0),
        "a full disk answered 507 and a failing one 503: {:?}",
        tally.statuses
    );
    // Not ready, naming what failed: the store's file, at which call, and the system's
    // error.
    assert!(
        !not_ready.is_empty(),
        "/readyz said not ready while the store could not write"
    );
    for why in &not_ready {
        assert!(
            why.starts_with("the store cannot serve requests: ")
                && why.contains("the store's file"),
            "{why}"
        );
    }
    assert!(
        not_ready
            .iter()
            .any(|why| why.contains("the store's file: ") && why.contains("(os error")),
        "a reason names the call that failed and the system's error: {not_ready:?}"
    );
    assert!(
        tally.json_refusals > 0,
        "the client asking for JSON was refused in JSON: {:?}",
        tally.statuses
    );
    assert!(
        missing.is_empty(),
        "acknowledged e-mails not queued: {missing:?}"
    );
    assert!(
        queued_before.is_subset(&queued_after),
        "mail queued before the faults is gone: {:?}",
        queued_before.difference(&queued_after).collect::<Vec<_>>()
    );
    assert!(
        writes(&acked) > 100,
        "the clients got writes acknowledged: {}",
        writes(&acked)
    );
}
