//! `make bench`: seeds a Faktura data directory through the API, drives every workload with
//! wrk (32 connections for a fixed time) and measures the machine's anchors in the same
//! run, so each figure is also a ratio:
//!
//! - A: `wasmtime serve -Scli` with the minimal hello component (benches/hello);
//! - B: a native hyper server answering a constant body;
//! - C: a loop of durable single-put redb commits on the same disk.
//!
//! A is measured in two halves, right before and right after W1, and C likewise around W2:
//! the speed of a shared machine drifts over the minutes a run takes, and a ratio of two
//! figures taken side by side does not move with it.
//!
//! The seed sets the seller's e-invoice terms and gives clients and items theirs, so that
//! every completed invoice has its e-invoices: W7 reads them, and W3 runs twice on drafts
//! of its own, plain and with `einvoice_pdf` set (each PDF a Factur-X hybrid). W8 imports
//! incoming e-invoices, twice as well: an XRechnung CII XML and a Factur-X PDF, each
//! request with an invoice number of its own (the `imports` module).
//!
//! Environment: `BENCH_INVOICES` (default 100,000), `BENCH_SECONDS` per measurement
//! (default 10), `BENCH_SMOKE=1` (a few seconds on a small data set, for CI), and
//! `FAKTURA_WASMTIME` (the wasmtime CLI; `make bench` sets it). Writes
//! `target/bench/report.md`; exits non-zero when any request failed.
//!
//! `BENCH_STORE=postgres` adds W1, W2 and W3 on a PostgreSQL server of the harness's own,
//! with one host and with two, beside redb and with the CPU time of database and hosts
//! per request (the `stores` module), as a second table of the report.
//!
//! A section measures the standalone component (`make standalone`: the plug compiled in)
//! and the same service composed with the plug component (`make standalone-composed`)
//! under `wasmtime serve`: W1, W4 and W2 beside A, on a copy of the seeded data directory
//! (the `standalone` module). `BENCH_ONLY=standalone` (or `webhooks`: W11) seeds and runs that section alone;
//! `BENCH_ONLY=reports` measures W1, W4, W5 and the count after the seed, with memory and
//! the store file's size (for `BENCH_INVOICES=1000000`, where the other sections' copies of
//! the data directory would not fit beside it);
//! `BENCH_STANDALONE=/path/to/faktura-standalone.wasm` measures another build of it.
//!
//! `BENCH_COMPARE=/path/to/previous/faktura` measures this build against a previous one
//! instead, side by side in one run (the `compare` module; `BENCH_COMPARE_ROUNDS`, default
//! 3), and writes `target/bench/compare.md`.

mod anchors;
mod business;
mod busy;
mod client;
mod compare;
mod host;
mod imports;
mod postgres;
mod standalone;
mod stores;
mod workloads;
mod wrk;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};

use host::{Binary, KEY};
use workloads::Workload;
use wrk::{Figures, Load};

/// The previous build a comparison measures this one against.
struct Compare {
    previous: PathBuf,
    rounds: usize,
}

/// The stores the run measures: redb always, PostgreSQL too with `BENCH_STORE=postgres`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stores {
    Redb,
    RedbAndPostgres,
}

struct Config {
    smoke: bool,
    stores: Stores,
    invoices: usize,
    clients: usize,
    seconds: u64,
    connections: usize,
    out: PathBuf,
    /// The workspace root, where the e-invoice samples W8 imports are.
    root: PathBuf,
    faktura: PathBuf,
    hello: PathBuf,
    /// The standalone component (`make standalone`).
    standalone: PathBuf,
    /// The service composed with the plug component (`make standalone-composed`).
    composed: PathBuf,
    /// `BENCH_ONLY=standalone`, `webhooks` or `reports`: seed, then only that section.
    only: Only,
    wasmtime: PathBuf,
    compare: Option<Compare>,
}

/// What a run measures: everything, or after the seed one section alone.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Only {
    All,
    Standalone,
    Webhooks,
    /// W1, W4, W5 and the count beside A, with memory, the store file and the seeding's
    /// time: what a run at a million invoices is for, without the sections that copy the
    /// data directory.
    Reports,
}

impl Config {
    fn from_env() -> anyhow::Result<Config> {
        let smoke = std::env::var("BENCH_SMOKE").is_ok_and(|v| v == "1");
        // An empty variable counts as unset: the Makefile passes its variables on, empty
        // when not given.
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let number = |name: &str, default: u64| -> anyhow::Result<u64> {
            match var(name) {
                Some(v) => v
                    .parse()
                    .with_context(|| format!("{name}={v} is not a number")),
                None => Ok(default),
            }
        };
        let compare = match var("BENCH_COMPARE") {
            Some(previous) => Some(Compare {
                previous: std::fs::canonicalize(&previous)
                    .with_context(|| format!("BENCH_COMPARE={previous}"))?,
                rounds: number("BENCH_COMPARE_ROUNDS", 3)?.max(1) as usize,
            }),
            None => None,
        };
        let stores = match var("BENCH_STORE").as_deref() {
            None | Some("redb") => Stores::Redb,
            Some("postgres") => Stores::RedbAndPostgres,
            Some(other) => bail!("BENCH_STORE={other}: postgres or redb (the default)"),
        };
        if stores == Stores::RedbAndPostgres && compare.is_some() {
            bail!("BENCH_STORE=postgres and BENCH_COMPARE are separate runs");
        }
        let invoices = number("BENCH_INVOICES", if smoke { 400 } else { 100_000 })? as usize;
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .and_then(Path::parent)
            .context("the workspace root")?
            .to_path_buf();
        Ok(Config {
            smoke,
            stores,
            invoices: invoices.max(20),
            clients: if smoke { 10 } else { 100 },
            seconds: number("BENCH_SECONDS", if smoke { 1 } else { 10 })?.max(1),
            connections: 32,
            out: root.join("target/bench"),
            root: root.clone(),
            faktura: host_beside_harness()?,
            hello: root.join("target/wasm32-wasip2/release/faktura_bench_hello.wasm"),
            standalone: var("BENCH_STANDALONE").map_or_else(
                || root.join("target/faktura-standalone.wasm"),
                PathBuf::from,
            ),
            composed: root.join("target/faktura-standalone-composed.wasm"),
            only: match var("BENCH_ONLY").as_deref() {
                None => Only::All,
                Some("standalone") => Only::Standalone,
                Some("webhooks") => Only::Webhooks,
                Some("reports") => Only::Reports,
                Some(other) => bail!("BENCH_ONLY={other}: standalone, webhooks or reports"),
            },
            wasmtime: std::env::var_os("FAKTURA_WASMTIME")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("wasmtime")),
            compare,
        })
    }
}

/// One line of the report.
struct Row {
    name: String,
    rate: String,
    p50: String,
    p99: String,
    ratio: String,
    goal: String,
    verdict: String,
}

/// A latency in milliseconds, with two decimals below 100 ms.
/// The host binary built in the same cargo profile as this harness, beside it: `release`
/// for `make bench`; `test-release` for CI's smoke run (`BENCH_PROFILE`), which reuses the
/// host that `make test` built instead of building wasmtime once more.
fn host_beside_harness() -> anyhow::Result<PathBuf> {
    let harness = std::env::current_exe().context("the harness's own path")?;
    Ok(harness.with_file_name("faktura"))
}

fn ms(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0} ms")
    } else {
        format!("{v:.2} ms")
    }
}

fn load_row(name: &str, f: &Figures, unit: &str, ratio: String) -> Row {
    Row {
        name: name.to_string(),
        rate: format!("{:.0} {unit}", f.per_sec),
        p50: ms(f.p50_ms),
        p99: ms(f.p99_ms),
        ratio,
        goal: String::new(),
        verdict: String::new(),
    }
}

/// A measurement's row with its goal and whether it met it.
fn judged(cfg: &Config, name: &str, f: &Figures, ratio: String, goal: String, met: bool) -> Row {
    Row {
        goal,
        verdict: verdict(cfg, met),
        ..load_row(name, f, "req/s", ratio)
    }
}

/// A row of one value, without a goal.
fn value_row(name: &str, value: String) -> Row {
    Row {
        name: name.into(),
        rate: value,
        p50: String::new(),
        p99: String::new(),
        ratio: String::new(),
        goal: String::new(),
        verdict: String::new(),
    }
}

/// The rows of the reports over all invoices, W4, W5 and the count, with `ratio` of each;
/// their goals are for a million invoices.
fn report_rows(
    cfg: &Config,
    ratio: impl Fn(&Figures) -> String,
    w4: &Figures,
    w5: &Figures,
    count: &Figures,
) -> [Row; 3] {
    let at = if cfg.invoices >= 1_000_000 {
        String::new()
    } else {
        format!(" (goal at 1M; run at {})", cfg.invoices)
    };
    [
        judged(
            cfg,
            "W4 GET ?status=OPEN&per_page=100",
            w4,
            ratio(w4),
            format!("p50 ≤ 10 ms{at}"),
            w4.p50_ms <= 10.0,
        ),
        judged(
            cfg,
            "W5 GET ?group_by=client,month",
            w5,
            ratio(w5),
            format!("p50 ≤ 100 ms{at}"),
            w5.p50_ms <= 100.0,
        ),
        judged(
            cfg,
            "HEAD /api/invoices (count)",
            count,
            ratio(count),
            format!("p50 ≤ 20 ms{at}"),
            count.p50_ms <= 20.0,
        ),
    ]
}

/// The seeding's rows: its rates (with its time when `timed`), and the store file's size
/// after it (`file`, in bytes; none on PostgreSQL).
fn seeding_rows(seeded: &workloads::Seeded, n: usize, file: Option<u64>, timed: bool) -> Vec<Row> {
    let rate = |count: usize, secs: f64| {
        if timed {
            format!("{:.0} req/s, {secs:.0} s", count as f64 / secs)
        } else {
            format!("{:.0} req/s", count as f64 / secs)
        }
    };
    vec![
        value_row(
            "Seeding: POST /api/invoices, 2 items",
            rate(n, seeded.seed_secs),
        ),
        value_row(
            "Seeding: PUT …/complete, every tenth",
            rate(seeded.completed.len(), seeded.complete_secs),
        ),
        value_row(
            "Store file after seeding, per invoice",
            match file {
                Some(bytes) => format!(
                    "{:.1} KiB ({:.0} MiB for {n})",
                    bytes as f64 / 1024.0 / n as f64,
                    bytes as f64 / (1024.0 * 1024.0)
                ),
                None => "not measured (no redb file)".to_owned(),
            },
        ),
    ]
}

fn verdict(cfg: &Config, met: bool) -> String {
    match (cfg.smoke, met) {
        (true, _) => "smoke".into(),
        (false, true) => "met".into(),
        (false, false) => "MISSED".into(),
    }
}

fn main() -> anyhow::Result<()> {
    let cfg = Config::from_env()?;
    std::fs::create_dir_all(&cfg.out)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    if let Some(compare) = &cfg.compare {
        return compare::run(&cfg, compare, &rt);
    }
    let faktura = Binary::beside(&cfg.faktura).context("run `make bench`")?;
    for (what, path) in [
        ("hello", &cfg.hello),
        ("standalone", &cfg.standalone),
        ("composed standalone", &cfg.composed),
    ] {
        if !path.exists() {
            bail!(
                "{what} component missing at {}: run `make bench`",
                path.display()
            );
        }
    }
    let secs = cfg.seconds;
    let conns = cfg.connections;
    let mut rows = Vec::new();
    let mut failures = Vec::new();
    let check = |failures: &mut Vec<String>, name: &str, f: &Figures| {
        if f.errors > 0 || f.count == 0 {
            failures.push(format!(
                "{name}: {} failed of {} requests",
                f.errors, f.count
            ));
        }
    };
    eprintln!(
        "faktura bench: {} invoices, {secs} s per measurement, {conns} connections{}",
        cfg.invoices,
        if cfg.smoke { " (smoke)" } else { "" }
    );

    // B: the HTTP limit of the machine.
    let b_addr = anchors::constant_server()?;
    let b = Load {
        url: format!("http://{b_addr}/"),
        seconds: secs,
        connections: conns,
        key: None,
        script: None,
    }
    .run()?;
    check(&mut failures, "B", &b);
    eprintln!("B  hyper constant body: {:.0} req/s", b.per_sec);

    let ratio_b = |f: &Figures| format!("{:.2} B", f.per_sec / b.per_sec);

    // The host on a fresh data directory; the first start compiles the component cache.
    let data = cfg.out.join("data");
    if data.exists() {
        std::fs::remove_dir_all(&data)?;
    }
    let log = cfg.out.join("faktura.log");
    let (host, addr, cold) = faktura.start_timed(&data, &log, &rt, Duration::from_secs(600))?;
    eprintln!(
        "host up after {:.2} s (cold compiled-component cache)",
        cold.as_secs_f64()
    );

    let seeded = workloads::seed(&cfg, &rt, addr)?;
    if cfg.only == Only::Webhooks {
        host.stop()?;
        let section = business::webhooks(&cfg, &faktura, &rt, &data, &seeded)?;
        let report = render(&cfg, &section.rows, "", &section.failures);
        return only_section(&cfg, "webhooks.md", &report, &section.failures);
    }
    if cfg.only == Only::Standalone {
        host.stop()?;
        let section = standalone::run(&cfg, &data, &seeded, &rt)?;
        let report = format!(
            "# Faktura benchmark: the standalone component\n\n{} invoices, {} s per \
             measurement, {} connections.\n{}",
            cfg.invoices, cfg.seconds, cfg.connections, section.markdown
        );
        return only_section(&cfg, "standalone.md", &report, &section.failures);
    }
    let n = cfg.invoices;
    // The store's file right after seeding: what the seeded invoices take on disk (redb;
    // PostgreSQL keeps its files elsewhere).
    let seeded_file = std::fs::metadata(data.join("faktura.redb"))
        .map(|m| m.len())
        .ok();
    // W7 reads the e-invoices of completed invoices: the seed must have made them.
    let einvoices = seeded.completed_sample();
    if let Err((_, answer)) = workloads::einvoice(&rt, addr, einvoices[0])? {
        bail!(
            "W7 pre-check: the e-invoice of a completed invoice must answer 200 with XML: {answer}"
        );
    }

    // The host's peak RSS during each phase, so that its memory can be attributed.
    let peaks = std::cell::RefCell::new(vec![(
        "seeding".to_owned(),
        host.peak_rss_mib().context("reading the host's peak RSS")?,
    )]);
    let run = |workload: &Workload| -> anyhow::Result<Figures> {
        let name = workload.file;
        let script = workload.script(&cfg)?;
        host.reset_peak_rss();
        let f = workloads::measure(&cfg, addr, &script)?;
        let peak = host.peak_rss_mib().context("reading the host's peak RSS")?;
        peaks.borrow_mut().push((name.to_owned(), peak));
        eprintln!(
            "{name}: {:.0} req/s, p50 {}, p99 {}, peak RSS {peak:.0} MiB",
            f.per_sec,
            ms(f.p50_ms),
            ms(f.p99_ms)
        );
        Ok(f)
    };
    // A: wasmtime serve with the hello component, a fresh instance per request, measured
    // in two halves around W1.
    let a_addr = host::free_addr()?;
    let a_serve = host::spawn(
        Command::new(&cfg.wasmtime)
            .arg("serve")
            .arg("-Scli")
            .arg("--addr")
            .arg(a_addr.to_string())
            .arg(&cfg.hello),
        &cfg.out.join("wasmtime-serve.log"),
    )?;
    rt.block_on(client::first_ok(
        a_addr,
        KEY,
        "/",
        Instant::now(),
        Duration::from_secs(60),
    ))?;
    let half = (secs / 2).max(1);
    let a_half = || -> anyhow::Result<Figures> {
        let f = Load {
            url: format!("http://{a_addr}/"),
            seconds: half,
            connections: conns,
            key: None,
            script: None,
        }
        .run()?;
        eprintln!("A  wasmtime serve hello: {:.0} req/s", f.per_sec);
        Ok(f)
    };
    let a_before = a_half()?;
    let w1 = run(&workloads::w1(&seeded.sample()))?;
    let a = a_before.with(a_half()?);
    a_serve.stop()?;
    check(&mut failures, "A", &a);
    let w7_load = workloads::w7(&einvoices);
    let w7 = run(&w7_load)?;
    let w4 = run(&workloads::w4())?;
    let w5 = run(&workloads::w5())?;
    let count = run(&workloads::head_count())?;
    if cfg.only == Only::Reports {
        host.stop()?;
        let rss = peaks.borrow().iter().map(|(_, p)| *p).fold(0.0, f64::max);
        let mut rows = vec![
            load_row(
                "A  wasmtime serve -Scli, hello component",
                &a,
                "req/s",
                String::new(),
            ),
            judged(
                &cfg,
                "W1 GET /api/invoices/{id}",
                &w1,
                format!("{:.2} A", w1.per_sec / a.per_sec),
                "≥ 2.0 A, p99 ≤ 5 ms".into(),
                w1.per_sec >= 2.0 * a.per_sec && w1.p99_ms <= 5.0,
            ),
        ];
        rows.extend(report_rows(&cfg, |_| String::new(), &w4, &w5, &count));
        rows.push(Row {
            goal: "≤ 300 MiB".into(),
            verdict: verdict(&cfg, rss <= 300.0),
            ..value_row(
                "Peak host RSS (seeding, W1, W7, W4, W5, count)",
                format!("{rss:.0} MiB"),
            )
        });
        rows.extend(seeding_rows(&seeded, n, seeded_file, true));
        for (phase, peak) in peaks.borrow().iter() {
            rows.push(value_row(
                &format!("   peak RSS during {phase}"),
                format!("{peak:.0} MiB"),
            ));
        }
        for (name, f) in [
            ("A", &a),
            ("W1", &w1),
            ("W7", &w7),
            ("W4", &w4),
            ("W5", &w5),
            ("HEAD", &count),
        ] {
            check(&mut failures, name, f);
        }
        let report = render(&cfg, &rows, "", &failures);
        return only_section(&cfg, "reports.md", &report, &failures);
    }

    // W2 creates drafts with five items; W3 completes exactly those.
    let probe = |rt: &tokio::runtime::Runtime| workloads::create_draft(rt, addr, seeded.clients[0]);
    let before = probe(&rt)?;
    // C: durable single-put commits on the data directory's disk, in two halves around W2.
    let c_half = || -> anyhow::Result<Figures> {
        let f = anchors::redb_commits(&cfg.out, half)?;
        eprintln!("C  redb durable single-put commits: {:.0}/s", f.per_sec);
        Ok(f)
    };
    let c_before = c_half()?;
    let w2 = run(&workloads::w2(&seeded.clients))?;
    let c = c_before.with(c_half()?);
    let after = probe(&rt)?;
    // W2's drafts in two pools, so that W3 and W3 Factur-X each complete fresh drafts.
    let (lo, hi) = (before + 1, after - 1);
    if hi <= lo {
        bail!("W2 created {} drafts, too few for W3", hi + 1 - lo);
    }
    let mid = lo + (hi - lo) / 2;
    let ran_out = |failures: &mut Vec<String>, name: &str, f: &Figures, lo: u64, hi: u64| {
        // The count includes the GET each thread sends past the pool's end as it stops:
        // as many requests as drafts means the pool ran dry, or nearly.
        if f.count > hi - lo {
            failures.push(format!(
                "{name} ran out of drafts: {} requests, {} drafts",
                f.count,
                hi + 1 - lo
            ));
        }
    };
    let w3 = run(&workloads::w3(lo, mid))?;
    ran_out(&mut failures, "W3", &w3, lo, mid);
    // W3 again with each PDF a Factur-X hybrid; the pre-check completes the last probe
    // draft, outside both pools. einvoice_pdf is reset whatever happened.
    let w3x_load = workloads::w3_facturx(mid + 1, hi);
    workloads::einvoice_pdf(&rt, addr, true)?;
    let w3x = workloads::complete(&rt, addr, after).and_then(|pre| match pre {
        Ok(()) => run(&w3x_load),
        Err(answer) => bail!("W3 Factur-X pre-check with einvoice_pdf=1: {answer}"),
    });
    workloads::einvoice_pdf(&rt, addr, false)?;
    let w3x = w3x?;
    ran_out(&mut failures, "W3 Factur-X", &w3x, mid + 1, hi);
    // W12 beside W3: offers created and completed, half the requests each.
    let w12_load = workloads::w12(&seeded.clients);
    let w12 = run(&w12_load)?;
    // W2 with its items from articles, right after W2 again: the cost of the lookups.
    let articles = workloads::articles(&rt, addr)?;
    let w2_again = run(&workloads::w2(&seeded.clients))?;
    let w2a_load = workloads::w2_articles(&seeded.clients, &articles);
    let w2a = run(&w2a_load)?;
    // W13 beside W1: pages of the customer portal. A link takes 60 requests a minute (a
    // measurement is shorter), so links for 50 requests each at W1's rate are more than
    // enough: renewed for the invoices completed by the seeding and by W3 (W3's drafts left
    // are skipped). A small data set has fewer; a link asked too often answers 429, which
    // counts as a failed request.
    workloads::settings(
        &rt,
        addr,
        &format!("<settings><public_url>http://{addr}</public_url></settings>"),
        &["<public_url>http://"],
    )?;
    let wanted = ((w1.per_sec * secs as f64) / 50.0).ceil().max(50.0) as usize;
    let candidates: Vec<u64> = seeded.completed.iter().copied().chain(lo..=hi).collect();
    let portal_paths = workloads::portal_links(&rt, addr, &candidates, wanted)?;
    if portal_paths.is_empty() {
        bail!("W13: no invoice got a portal link");
    }
    // W1 once more right before W13, so that the two are compared on the same data: the
    // early W1 ran before W2, W3 and W12 wrote their documents.
    let w13_load = workloads::w13(&portal_paths);
    let w1_beside = run(&workloads::w1(&seeded.sample()))?;
    let w13 = run(&w13_load)?;

    // W8: imports of incoming e-invoices, each file once into the admin's account before
    // its measurement, which imports into accounts of its own.
    let uploads = imports::Uploads::read(&cfg.root)?;
    let accounts = imports::account_count(secs);
    let w8_run = |upload: &imports::Upload| -> anyhow::Result<Figures> {
        if let Err((_, answer)) = imports::import(&rt, addr, upload)? {
            bail!(
                "{} pre-check: an import must answer 201: {answer}",
                upload.short
            );
        }
        let keys = imports::accounts(&faktura, &data, upload, accounts)?;
        run(&imports::w8(upload, &keys))
    };
    let (w8c, w8x) = (w8_run(&uploads.cii)?, w8_run(&uploads.facturx)?);

    let peaks = peaks.into_inner();
    let rss = peaks.iter().map(|(_, p)| *p).fold(0.0, f64::max);
    host.stop()?;

    // W6: start to first 200, the compiled component cached and the data seeded.
    let (host, _, w6) = faktura.start_timed(&data, &log, &rt, Duration::from_secs(120))?;
    host.stop()?;

    // Recurring runs, a dunning run and webhooks, each on a copy of the same data.
    let business = business::run(
        &cfg,
        &faktura,
        &rt,
        &data,
        &seeded,
        &business::Beside { w3: &w3 },
    )?;
    failures.extend(business.failures);

    // The standalone component on a copy of the same data; a section that could not
    // finish fails the run, but after the main table.
    let standalone = match standalone::run(&cfg, &data, &seeded, &rt) {
        Ok(section) => {
            failures.extend(section.failures);
            section.markdown
        }
        Err(e) => {
            let why = format!("the standalone section stopped: {e:#}");
            eprintln!("{why}");
            failures.push(why.clone());
            format!("\n{why}\n")
        }
    };

    let postgres = match cfg.stores {
        // A section that could not finish fails the run, but after the main table.
        Stores::RedbAndPostgres => match stores::run(&cfg, &faktura, &rt) {
            Ok(section) => {
                failures.extend(section.failures);
                section.markdown
            }
            Err(e) => {
                let why = format!("the PostgreSQL section stopped: {e:#}");
                eprintln!("{why}");
                failures.push(why.clone());
                format!("{why}\n")
            }
        },
        Stores::Redb => {
            let skipped = "PostgreSQL not measured: `BENCH_STORE=postgres make bench` adds \
                           W1, W2 and W3 on PostgreSQL (one host and two) beside redb.";
            eprintln!("{skipped}");
            format!("{skipped}\n")
        }
    };

    rows.push(load_row(
        "A  wasmtime serve -Scli, hello component",
        &a,
        "req/s",
        ratio_b(&a),
    ));
    rows.push(load_row(
        "B  native hyper, constant body",
        &b,
        "req/s",
        "1.00 B".into(),
    ));
    rows.push(load_row(
        "C  redb durable single-put commit loop",
        &c,
        "commits/s",
        String::new(),
    ));
    for (name, f) in [
        ("W1", &w1),
        ("W2", &w2),
        ("W3", &w3),
        ("W3 Factur-X", &w3x),
        ("W12", &w12),
        ("W2 again", &w2_again),
        ("W2 articles", &w2a),
        ("W1 beside W13", &w1_beside),
        ("W13", &w13),
        ("W4", &w4),
        ("W5", &w5),
        ("HEAD", &count),
        ("W7", &w7),
        (uploads.cii.short, &w8c),
        (uploads.facturx.short, &w8x),
    ] {
        check(&mut failures, name, f);
    }
    let goal_row = |name: &str, f: &Figures, ratio: String, goal: String, met: bool| {
        judged(&cfg, name, f, ratio, goal, met)
    };
    rows.push(goal_row(
        "W1 GET /api/invoices/{id}",
        &w1,
        format!(
            "{:.2} A, {:.2} B",
            w1.per_sec / a.per_sec,
            w1.per_sec / b.per_sec
        ),
        "≥ 2.0 A, p99 ≤ 5 ms".into(),
        w1.per_sec >= 2.0 * a.per_sec && w1.p99_ms <= 5.0,
    ));
    rows.push(goal_row(
        w13_load.label,
        &w13,
        format!(
            "{:.2} W1 ({:.0} req/s, measured just before), {:.2} B",
            w13.per_sec / w1_beside.per_sec,
            w1_beside.per_sec,
            w13.per_sec / b.per_sec
        ),
        "≥ 0.5 W1".into(),
        w13.per_sec >= 0.5 * w1_beside.per_sec,
    ));
    rows.push(goal_row(
        "W2 POST /api/invoices, 5 items",
        &w2,
        format!(
            "{:.2} C, {:.2} B",
            w2.per_sec / c.per_sec,
            w2.per_sec / b.per_sec
        ),
        "≥ 1.5 C".into(),
        w2.per_sec >= 1.5 * c.per_sec,
    ));
    rows.push(goal_row(
        w2a_load.label,
        &w2a,
        format!(
            "{:.2} W2 (W2 right before it: {:.0} req/s)",
            w2a.per_sec / w2_again.per_sec,
            w2_again.per_sec
        ),
        "≥ 0.8 W2".into(),
        w2a.per_sec >= 0.8 * w2_again.per_sec,
    ));
    rows.push(goal_row(
        "W3 PUT /api/invoices/{id}/complete (PDF)",
        &w3,
        format!("{:.2} C", w3.per_sec / c.per_sec),
        "≥ 300/s".into(),
        w3.per_sec >= 300.0,
    ));
    rows.push(goal_row(
        w3x_load.label,
        &w3x,
        format!(
            "{:.2} C, {:.2} W3",
            w3x.per_sec / c.per_sec,
            w3x.per_sec / w3.per_sec
        ),
        "≥ 600/s".into(),
        w3x.per_sec >= 600.0,
    ));
    rows.push(load_row(
        w12_load.label,
        &w12,
        "req/s",
        format!(
            "{:.0} offers/s, {:.2} W3",
            w12.per_sec / 2.0,
            w12.per_sec / 2.0 / w3.per_sec
        ),
    ));
    rows.extend(report_rows(&cfg, ratio_b, &w4, &w5, &count));
    rows.push(goal_row(
        w7_load.label,
        &w7,
        format!(
            "{:.2} W1, {:.2} B",
            w7.per_sec / w1.per_sec,
            w7.per_sec / b.per_sec
        ),
        "≥ 0.8 W1".into(),
        w7.per_sec >= 0.8 * w1.per_sec,
    ));
    rows.push(goal_row(
        uploads.cii.label,
        &w8c,
        format!("{:.2} C", w8c.per_sec / c.per_sec),
        format!("≥ {:.0}/s", imports::GOAL_CII),
        w8c.per_sec >= imports::GOAL_CII,
    ));
    rows.push(goal_row(
        uploads.facturx.label,
        &w8x,
        format!(
            "{:.2} C, {:.2} W8 CII",
            w8x.per_sec / c.per_sec,
            w8x.per_sec / w8c.per_sec
        ),
        format!("≥ {:.0}/s", imports::GOAL_FACTURX),
        w8x.per_sec >= imports::GOAL_FACTURX,
    ));
    rows.extend(business.rows);
    let single = |name: &str, value: String, goal: &str, met: Option<bool>| Row {
        goal: goal.into(),
        verdict: met.map(|m| verdict(&cfg, m)).unwrap_or_default(),
        ..value_row(name, value)
    };
    for (upload, f) in [(&uploads.cii, &w8c), (&uploads.facturx, &w8x)] {
        rows.push(single(
            &format!("   {}: incomings per supplier at the end", upload.short),
            format!(
                "{:.0} (in each of {accounts} accounts)",
                f.count as f64 / accounts as f64
            ),
            "",
            None,
        ));
    }
    rows.push(single(
        "W6 start to first 200, warm cache",
        ms(w6.as_secs_f64() * 1000.0),
        "≤ 1 s",
        Some(w6 <= Duration::from_secs(1)),
    ));
    rows.push(single(
        "   start to first 200, cold cache",
        ms(cold.as_secs_f64() * 1000.0),
        "",
        None,
    ));
    rows.push(single(
        "Peak host RSS",
        format!("{rss:.0} MiB"),
        "≤ 300 MiB",
        Some(rss <= 300.0),
    ));
    for (phase, peak) in &peaks {
        rows.push(single(
            &format!("   during {phase}"),
            format!("{peak:.0} MiB"),
            "",
            None,
        ));
    }
    rows.extend(seeding_rows(&seeded, n, seeded_file, false));

    let report = render(&cfg, &rows, &format!("{standalone}\n{postgres}"), &failures);
    println!("{report}");
    std::fs::write(cfg.out.join("report.md"), &report)?;
    eprintln!("written to {}", cfg.out.join("report.md").display());
    if !failures.is_empty() {
        bail!("{} measurements had failed requests", failures.len());
    }
    Ok(())
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into())
}

/// The end of a run of one section (`BENCH_ONLY`): its report printed and written to
/// `file`, the run failed by its failures.
fn only_section(cfg: &Config, file: &str, report: &str, failures: &[String]) -> anyhow::Result<()> {
    println!("{report}");
    std::fs::write(cfg.out.join(file), report)?;
    eprintln!("written to {}", cfg.out.join(file).display());
    if !failures.is_empty() {
        bail!("{}", failures.join("; "));
    }
    Ok(())
}

/// The report: the main table, then `sections` (the standalone component's, then the
/// PostgreSQL section or the line saying how to add it), then the failed measurements.
fn render(cfg: &Config, rows: &[Row], sections: &str, failures: &[String]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# Faktura benchmark\n\n{} × {}, {} invoices, {} s per measurement, {} connections (wrk -t2){}.\n",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        cpu_model(),
        cfg.invoices,
        cfg.seconds,
        cfg.connections,
        if cfg.smoke {
            ", smoke run: figures not meaningful"
        } else {
            ""
        }
    );
    let _ = writeln!(
        s,
        "| workload | rate | p50 | p99 | ratio | goal | |\n|---|---:|---:|---:|---|---|---|"
    );
    for r in rows {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} |",
            r.name, r.rate, r.p50, r.p99, r.ratio, r.goal, r.verdict
        );
    }
    let _ = write!(s, "\n{sections}");
    if !failures.is_empty() {
        let _ = writeln!(s, "\nFailed requests:");
        for f in failures {
            let _ = writeln!(s, "- {f}");
        }
    }
    s
}
