//! The work time makes and the events changes send, each measured on a host of its own
//! over a copy of the data directory the main run seeded (its host stopped):
//!
//! - W9: recurring invoices all due at once, made by the upkeep (every 50 ms): runs per
//!   second with action CREATE and then with COMPLETE (a PDF and e-invoice rules each), and
//!   the p99 of a light W1 (4 connections) while they are made, beside the same W1 on the
//!   same data without them. The recurrings are created on a
//!   host whose upkeep waits an hour, which is then stopped: the host measured starts with
//!   all of them due, and the clock runs from its start.
//! - W10: the automatic dunning run of an account with action COMPLETE over its overdue
//!   invoices (topped up to the count asked), reminders per second beside W3; set up the
//!   same way.
//! - W11: W2 with a webhook for every event, delivered to a receiver of the harness, beside
//!   W2 without one on the same host (halves before and after): events delivered per
//!   second while W2 runs, and whether every event recorded arrived.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use http_body_util::{BodyExt as _, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response};

use crate::client::{self, Call};
use crate::host::{self, Binary, KEY, Proc};
use crate::workloads::{self, ITEM, Seeded};
use crate::wrk::{Figures, Load};
use crate::{Config, Row, load_row, ms, verdict};

/// What the section adds to the main table, and its failed checks.
pub(crate) struct Section {
    pub rows: Vec<Row>,
    pub failures: Vec<String>,
}

/// The main run's figures the section's are set beside.
pub(crate) struct Beside<'a> {
    pub w3: &'a Figures,
}

/// Upkeep of the host measured: often enough that the passes, not the wait between them,
/// set the pace.
const UPKEEP_FAST: &str = "0.05";
/// Upkeep of the host that sets the data up: never within a setup.
const UPKEEP_NEVER: &str = "3600";

pub(crate) fn run(
    cfg: &Config,
    faktura: &Binary,
    rt: &tokio::runtime::Runtime,
    seeded_data: &Path,
    seeded: &Seeded,
    beside: &Beside<'_>,
) -> anyhow::Result<Section> {
    let mut section = Section {
        rows: Vec::new(),
        failures: Vec::new(),
    };
    let n = if cfg.smoke { 200 } else { 10_000 };
    let setup = Setup {
        cfg,
        faktura,
        rt,
        seeded_data,
    };
    for action in ["CREATE", "COMPLETE"] {
        w9(&setup, seeded, beside, action, n, &mut section)?;
    }
    w10(
        &setup,
        beside,
        if cfg.smoke { 100 } else { 10_000 },
        &mut section,
    )?;
    w11(&setup, seeded, &mut section)?;
    Ok(section)
}

struct Setup<'a> {
    cfg: &'a Config,
    faktura: &'a Binary,
    rt: &'a tokio::runtime::Runtime,
    seeded_data: &'a Path,
}

impl Setup<'_> {
    /// A fresh copy of the seeded data directory named `name`.
    fn copy(&self, name: &str) -> anyhow::Result<PathBuf> {
        let dir = self.cfg.out.join(name);
        if dir.exists() {
            std::fs::remove_dir_all(&dir)?;
        }
        copy_dir(self.seeded_data, &dir)?;
        Ok(dir)
    }

    /// Removes a copy of the seeded data once its workload is measured: each is as large as
    /// the seeded store (gigabytes at 100,000 invoices), and its log stays beside it.
    fn discard(&self, dir: &Path) -> anyhow::Result<()> {
        std::fs::remove_dir_all(dir).with_context(|| format!("removing {}", dir.display()))
    }

    /// A host on `data` with the options `args`, once it answers: the process, its address
    /// and when it was started.
    fn start(&self, data: &Path, args: &[&str]) -> anyhow::Result<(Proc, SocketAddr, Instant)> {
        let addr = host::free_addr()?;
        let log = data.with_extension("log");
        let started = Instant::now();
        let proc = self.faktura.start_with(data, addr, &log, args)?;
        self.rt
            .block_on(host::up(addr, started, Duration::from_secs(120)))
            .with_context(|| format!("the host on {} (log {})", data.display(), log.display()))?;
        Ok((proc, addr, started))
    }

    /// `X-Total-Count` of the list `path` on the host at `addr`.
    fn count(&self, addr: SocketAddr, path: &str) -> anyhow::Result<u64> {
        let reply = self.rt.block_on(client::once(
            addr,
            KEY,
            &Call {
                method: "HEAD",
                path: path.to_owned(),
                body: None,
            },
        ))?;
        match reply.total {
            Some(total) if reply.status == 200 => Ok(total),
            _ => bail!("HEAD {path} answered {} without a count", reply.status),
        }
    }

    /// One call that must answer `status`: its body.
    fn call(&self, addr: SocketAddr, call: Call, status: u16) -> anyhow::Result<String> {
        let reply = self.rt.block_on(client::once(addr, KEY, &call))?;
        if reply.status != status {
            bail!(
                "{} {} answered {} (not {status}): {}",
                call.method,
                call.path,
                reply.status,
                reply.body
            );
        }
        Ok(reply.body)
    }
}

/// Copies the regular files and folders under `from` to `to` (the admin socket stays).
fn copy_dir(from: &Path, to: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

fn today() -> time::Date {
    time::OffsetDateTime::now_utc().date()
}

/// Connections of the W1 beside W9: a few clients reading while the runs are made, not a
/// load that takes the machine from them.
const W1_BESIDE_CONNECTIONS: usize = 4;

/// W1 with [`W1_BESIDE_CONNECTIONS`] on the host at `addr` for the section's measurement
/// time, in a thread of its own.
fn w1_beside(
    cfg: &Config,
    addr: SocketAddr,
    seeded: &Seeded,
) -> anyhow::Result<std::thread::JoinHandle<anyhow::Result<Figures>>> {
    let script = workloads::w1(&seeded.sample()).script(cfg)?;
    let (seconds, connections) = (cfg.seconds, W1_BESIDE_CONNECTIONS);
    Ok(std::thread::spawn(move || {
        Load {
            url: format!("http://{addr}"),
            seconds,
            connections,
            key: None,
            script: Some(&script),
        }
        .run()
    }))
}

/// W9 with `action`: `n` recurrings due at once.
fn w9(
    setup: &Setup<'_>,
    seeded: &Seeded,
    beside: &Beside<'_>,
    action: &str,
    n: usize,
    section: &mut Section,
) -> anyhow::Result<()> {
    let cfg = setup.cfg;
    let data = setup.copy(&format!("w9-{}", action.to_lowercase()))?;
    let (proc, addr, _) = setup.start(&data, &["--upkeep-every", UPKEEP_NEVER])?;
    // From today at 0 h: each series's first run is due at once, its second a month away.
    // Today is the account's, in its time zone: the date a new invoice gets.
    let draft = setup.call(
        addr,
        Call::with(
            "POST",
            "/api/invoices",
            format!(
                "<invoice><client_id>{}</client_id></invoice>",
                seeded.clients[0]
            ),
        ),
        201,
    )?;
    let start = draft
        .split("<date type=\"date\">")
        .nth(1)
        .and_then(|rest| rest.get(..10))
        .context("a new invoice names its date")?
        .to_owned();
    let items = ITEM.replace("invoice-item", "recurring-item").repeat(2);
    let clients = seeded.clients.clone();
    let action_owned = action.to_owned();
    let t = Instant::now();
    setup.rt.block_on(client::each(
        addr,
        KEY,
        cfg.connections,
        n,
        "recurrings",
        move |i| {
            Call::with(
                "POST",
                "/api/recurrings",
                format!(
                    "<recurring><client_id>{}</client_id><name>Wartung {i}</name>\
                     <cycle>MONTHLY</cycle><action>{action_owned}</action>\
                     <start_date>{start}</start_date><hour>0</hour>\
                     <recurring-items>{items}</recurring-items></recurring>",
                    clients[i % clients.len()]
                ),
            )
        },
    ))?;
    eprintln!(
        "W9 {action}: {n} recurrings created in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let invoices = setup.count(addr, "/api/invoices")?;
    let drafts = setup.count(addr, "/api/invoices?status=DRAFT")?;
    // W1 as light as beside the runs, on the same data without them.
    let w1_alone = w1_beside(cfg, addr, seeded)?
        .join()
        .expect("the W1 thread")?;
    proc.stop()?;

    let (proc, addr, started) = setup.start(&data, &["--upkeep-every", UPKEEP_FAST])?;
    let w1 = w1_beside(cfg, addr, seeded)?;
    let w1_started = Instant::now();
    let want = invoices + n as u64;
    let limit = Duration::from_secs(30 + n as u64 / 20);
    let made_in = loop {
        let now = setup.count(addr, "/api/invoices")?;
        if now >= want {
            break started.elapsed();
        }
        if started.elapsed() > limit {
            bail!(
                "W9 {action}: {} of {n} runs made after {limit:?}",
                now - invoices
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let w1_during = w1.join().expect("the W1 thread")?;
    let overlap = made_in.saturating_sub(w1_started - started);
    // A pass more: no run made twice, none left a draft it should have completed.
    std::thread::sleep(Duration::from_millis(300));
    let made = setup.count(addr, "/api/invoices")? - invoices;
    if made != n as u64 {
        section
            .failures
            .push(format!("W9 {action}: {made} invoices made by {n} runs due"));
    }
    let drafts_made = setup.count(addr, "/api/invoices?status=DRAFT")? - drafts;
    let expected_drafts = if action == "CREATE" { n as u64 } else { 0 };
    if drafts_made != expected_drafts {
        section.failures.push(format!(
            "W9 {action}: {drafts_made} drafts made, {expected_drafts} expected"
        ));
    }
    proc.stop()?;
    setup.discard(&data)?;

    let rate = n as f64 / made_in.as_secs_f64();
    let goal = if action == "CREATE" { 500.0 } else { 200.0 };
    section.rows.push(Row {
        name: format!("W9 recurring runs due at once, action {action}"),
        rate: format!("{rate:.0} runs/s"),
        p50: String::new(),
        p99: String::new(),
        ratio: format!(
            "{n} in {:.1} s{}",
            made_in.as_secs_f64(),
            if action == "COMPLETE" {
                format!(", {:.2} W3", rate / beside.w3.per_sec)
            } else {
                String::new()
            }
        ),
        goal: format!("≥ {goal:.0}/s"),
        verdict: verdict(cfg, rate >= goal),
    });
    section.rows.push(load_row(
        &format!("   W1 while they run ({action})"),
        &w1_during,
        "req/s",
        format!(
            "{W1_BESIDE_CONNECTIONS} connections: p99 {:.2} × its {} without runs; \
             runs went on for {:.1} s of its {} s",
            w1_during.p99_ms / w1_alone.p99_ms,
            ms(w1_alone.p99_ms),
            overlap.as_secs_f64(),
            cfg.seconds
        ),
    ));
    if w1_during.errors + w1_alone.errors > 0 {
        section.failures.push(format!(
            "W1 beside W9 {action}: {} failed of {} requests",
            w1_during.errors + w1_alone.errors,
            w1_during.count + w1_alone.count
        ));
    }
    Ok(())
}

/// W10: the dunning run over at least `n` overdue invoices.
fn w10(
    setup: &Setup<'_>,
    beside: &Beside<'_>,
    n: u64,
    section: &mut Section,
) -> anyhow::Result<()> {
    let cfg = setup.cfg;
    let data = setup.copy("w10")?;
    let (proc, addr, _) = setup.start(&data, &["--upkeep-every", UPKEEP_NEVER])?;
    let overdue = setup.count(addr, "/api/invoices?status=OVERDUE")?;
    if overdue < n {
        // Dated two months ago, due a month ago: past every level's days.
        let more = (n - overdue) as usize;
        let date = workloads::date_text(today() - time::Duration::days(60));
        let due = workloads::date_text(today() - time::Duration::days(30));
        let client = setup
            .call(addr, Call::get("/api/clients?per_page=1"), 200)
            .and_then(|body| client::id_of(&body))?;
        let ids = setup.rt.block_on(client::each(
            addr,
            KEY,
            cfg.connections,
            more,
            "overdue invoices",
            move |_| {
                Call::with(
                    "POST",
                    "/api/invoices",
                    format!(
                        "<invoice><client_id>{client}</client_id><date>{date}</date>\
                         <due_date>{due}</due_date><invoice-items>{ITEM}</invoice-items></invoice>"
                    ),
                )
            },
        ))?;
        setup.rt.block_on(client::each(
            addr,
            KEY,
            cfg.connections,
            more,
            "their completions",
            move |i| {
                Call::with(
                    "PUT",
                    format!("/api/invoices/{}/complete", ids[i]),
                    "<complete/>",
                )
            },
        ))?;
    }
    let overdue = setup.count(addr, "/api/invoices?status=OVERDUE")?;
    workloads::settings(
        setup.rt,
        addr,
        "<settings><dunning_run>1</dunning_run><dunning_action>COMPLETE</dunning_action>\
         </settings>",
        &["<dunning_action>COMPLETE</dunning_action>"],
    )?;
    let before = setup.count(addr, "/api/reminders")?;
    proc.stop()?;

    let (proc, addr, started) = setup.start(&data, &["--upkeep-every", UPKEEP_FAST])?;
    // One pass makes them all, a batch per commit: done when the count stands still.
    let (mut count, mut changed) = (before, started.elapsed());
    loop {
        let now = setup.count(addr, "/api/reminders")?;
        if now != count {
            (count, changed) = (now, started.elapsed());
        } else if count > before && started.elapsed() - changed > Duration::from_secs(2) {
            break;
        }
        if started.elapsed() > Duration::from_secs(600) {
            bail!("W10: {} reminders made in 600 s", count - before);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let made = count - before;
    let drafts = setup.count(addr, "/api/reminders?status=DRAFT")?;
    if drafts > 0 {
        section.failures.push(format!(
            "W10: {drafts} of {made} reminders left drafts by a run with action COMPLETE"
        ));
    }
    if made < n.min(overdue) / 2 {
        section.failures.push(format!(
            "W10: {made} reminders for {overdue} overdue invoices"
        ));
    }
    proc.stop()?;
    setup.discard(&data)?;
    let rate = made as f64 / changed.as_secs_f64();
    section.rows.push(Row {
        name: "W10 dunning run, action COMPLETE".into(),
        rate: format!("{rate:.0} reminders/s"),
        p50: String::new(),
        p99: String::new(),
        ratio: format!(
            "{made} for {overdue} overdue in {:.1} s, {:.2} W3",
            changed.as_secs_f64(),
            rate / beside.w3.per_sec
        ),
        goal: "≥ 200/s".into(),
        verdict: verdict(cfg, rate >= 200.0),
    });
    Ok(())
}

/// W11 alone (`BENCH_ONLY=webhooks`).
pub(crate) fn webhooks(
    cfg: &Config,
    faktura: &Binary,
    rt: &tokio::runtime::Runtime,
    seeded_data: &Path,
    seeded: &Seeded,
) -> anyhow::Result<Section> {
    let mut section = Section {
        rows: Vec::new(),
        failures: Vec::new(),
    };
    let setup = Setup {
        cfg,
        faktura,
        rt,
        seeded_data,
    };
    w11(&setup, seeded, &mut section)?;
    Ok(section)
}

/// W11: W2 with and without a webhook for every event.
fn w11(setup: &Setup<'_>, seeded: &Seeded, section: &mut Section) -> anyhow::Result<()> {
    let cfg = setup.cfg;
    let data = setup.copy("w11")?;
    let (proc, addr, _) =
        setup.start(&data, &["--webhook-allow-private", "--upkeep-every", "1"])?;
    let (receiver, received) = receiver()?;
    let script = workloads::w2(&seeded.clients).script(cfg)?;
    let w2 = |seconds: u64| {
        Load {
            url: format!("http://{addr}"),
            seconds,
            connections: cfg.connections,
            key: None,
            script: Some(&script),
        }
        .run()
    };
    let half = (cfg.seconds / 2).max(1);
    let plain_before = w2(half)?;
    let body = setup.call(
        addr,
        Call::with(
            "POST",
            "/api/webhooks",
            format!("<webhook><url>http://{receiver}/hooks</url><events>*</events></webhook>"),
        ),
        201,
    )?;
    let webhook = client::id_of(&body)?;
    let at_start = received.load(Ordering::Relaxed);
    let hooked = w2(cfg.seconds)?;
    let during = received.load(Ordering::Relaxed) - at_start;
    // The rest arrive after W2 ends: done when the receiver's count stands still.
    let ended = Instant::now();
    let (mut count, mut changed) = (during, Duration::ZERO);
    loop {
        std::thread::sleep(Duration::from_millis(50));
        let now = received.load(Ordering::Relaxed) - at_start;
        if now != count {
            (count, changed) = (now, ended.elapsed());
        } else if ended.elapsed() - changed > Duration::from_secs(3) {
            break;
        }
        if ended.elapsed() > Duration::from_secs(300) {
            break;
        }
    }
    let recorded = setup.count(addr, "/api/webhook-deliveries")?;
    if count < recorded {
        section.failures.push(format!(
            "W11: {count} of {recorded} recorded events arrived within {:.0} s of W2's end",
            ended.elapsed().as_secs_f64()
        ));
    }
    setup.call(
        addr,
        Call {
            method: "DELETE",
            path: format!("/api/webhooks/{webhook}"),
            body: None,
        },
        200,
    )?;
    let plain = plain_before.with(w2(half)?);
    proc.stop()?;
    setup.discard(&data)?;
    for (name, f) in [("W2 beside W11", &plain), ("W2 with webhooks", &hooked)] {
        if f.errors > 0 || f.count == 0 {
            section.failures.push(format!(
                "{name}: {} failed of {} requests",
                f.errors, f.count
            ));
        }
    }
    let kept = hooked.per_sec / plain.per_sec;
    section.rows.push(Row {
        name: "W11 webhook events delivered while W2 runs (events *)".into(),
        rate: format!("{:.0} events/s", during as f64 / cfg.seconds as f64),
        p50: String::new(),
        p99: String::new(),
        ratio: format!(
            "{:.1} per request; {count} of {recorded} recorded arrived, the last {:.1} s \
             after W2",
            count as f64 / hooked.count.max(1) as f64,
            changed.as_secs_f64()
        ),
        goal: String::new(),
        verdict: String::new(),
    });
    section.rows.push(Row {
        goal: "≥ 0.85 W2".into(),
        verdict: verdict(cfg, kept >= 0.85),
        ..load_row(
            "   W2 with that webhook",
            &hooked,
            "req/s",
            format!(
                "{kept:.2} W2 without ({:.0} req/s, same host)",
                plain.per_sec
            ),
        )
    });
    Ok(())
}

/// A webhook receiver answering 204 to whatever it is sent: its address and the count of
/// requests it read whole.
fn receiver() -> anyhow::Result<(SocketAddr, Arc<AtomicU64>)> {
    let count = Arc::new(AtomicU64::new(0));
    let counted = count.clone();
    let addr = crate::anchors::server(1, move |req: Request<Incoming>| {
        let counted = counted.clone();
        async move {
            if req.into_body().collect().await.is_ok() {
                counted.fetch_add(1, Ordering::Relaxed);
            }
            let mut answer = Response::new(Full::new(Bytes::new()));
            *answer.status_mut() = hyper::StatusCode::NO_CONTENT;
            answer
        }
    })?;
    Ok((addr, count))
}
