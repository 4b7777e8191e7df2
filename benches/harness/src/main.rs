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
//! Environment: `BENCH_INVOICES` (default 100,000), `BENCH_SECONDS` per measurement
//! (default 10), `BENCH_SMOKE=1` (a few seconds on a small data set, for CI), and
//! `FAKTURA_WASMTIME` (the wasmtime CLI; `make bench` sets it). Writes
//! `target/bench/report.md`; exits non-zero when any request failed.

mod anchors;
mod client;
mod wrk;

use std::fmt::Write as _;
use std::fs::File;
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};

use client::Call;
use wrk::{Figures, Load};

const KEY: &str = "bench-key-0123456789abcdef";

struct Config {
    smoke: bool,
    invoices: usize,
    clients: usize,
    seconds: u64,
    connections: usize,
    out: PathBuf,
    faktura: PathBuf,
    hello: PathBuf,
    wasmtime: PathBuf,
}

impl Config {
    fn from_env() -> anyhow::Result<Config> {
        let smoke = std::env::var("BENCH_SMOKE").is_ok_and(|v| v == "1");
        let number = |name: &str, default: u64| -> anyhow::Result<u64> {
            match std::env::var(name) {
                Ok(v) => v
                    .parse()
                    .with_context(|| format!("{name}={v} is not a number")),
                Err(_) => Ok(default),
            }
        };
        let invoices = number("BENCH_INVOICES", if smoke { 400 } else { 100_000 })? as usize;
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .and_then(Path::parent)
            .context("the workspace root")?
            .to_path_buf();
        Ok(Config {
            smoke,
            invoices: invoices.max(20),
            clients: if smoke { 10 } else { 100 },
            seconds: number("BENCH_SECONDS", if smoke { 1 } else { 10 })?.max(1),
            connections: 32,
            out: root.join("target/bench"),
            faktura: root.join("target/release/faktura"),
            hello: root.join("target/wasm32-wasip2/release/faktura_bench_hello.wasm"),
            wasmtime: std::env::var_os("FAKTURA_WASMTIME")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("wasmtime")),
        })
    }
}

/// A child process killed when dropped.
struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Proc {
    /// Peak resident set size in MiB (VmHWM).
    fn peak_rss_mib(&self) -> Option<f64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.0.id())).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
        let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kib / 1024.0)
    }

    /// Starts a new peak: the next `peak_rss_mib` reports the peak from now on.
    fn reset_peak_rss(&self) {
        let _ = std::fs::write(format!("/proc/{}/clear_refs", self.0.id()), "5");
    }

    /// SIGTERM, then wait for the exit.
    fn stop(mut self) -> anyhow::Result<()> {
        Command::new("kill")
            .arg("-TERM")
            .arg(self.0.id().to_string())
            .status()?;
        self.0.wait()?;
        Ok(())
    }
}

fn free_addr() -> anyhow::Result<SocketAddr> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?)
}

fn spawn(cmd: &mut Command, log: &Path) -> anyhow::Result<Proc> {
    let log = File::create(log)?;
    let child = cmd
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        .spawn()
        .with_context(|| format!("starting {cmd:?}"))?;
    Ok(Proc(child))
}

fn start_host(cfg: &Config, data: &Path, addr: SocketAddr) -> anyhow::Result<Proc> {
    spawn(
        Command::new(&cfg.faktura)
            .arg("serve")
            .arg("--listen")
            .arg(addr.to_string())
            .arg("--data")
            .arg(data)
            .arg("--bootstrap-key")
            .arg(KEY)
            .env("FAKTURA_LOG", "warn"),
        &cfg.out.join("faktura.log"),
    )
}

/// Starts the host on a free port and waits for its first 200: the process, its address
/// and the time from start to that answer.
fn start_host_timed(
    cfg: &Config,
    data: &Path,
    rt: &tokio::runtime::Runtime,
    limit: Duration,
) -> anyhow::Result<(Proc, SocketAddr, Duration)> {
    let addr = free_addr()?;
    let started = Instant::now();
    let host = start_host(cfg, data, addr)?;
    let up = rt.block_on(client::first_ok(
        addr,
        KEY,
        "/api/invoices?per_page=1",
        started,
        limit,
    ))?;
    Ok((host, addr, up))
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

fn verdict(cfg: &Config, met: bool) -> String {
    match (cfg.smoke, met) {
        (true, _) => "smoke".into(),
        (false, true) => "met".into(),
        (false, false) => "MISSED".into(),
    }
}

fn lua(path: &Path, text: &str) -> anyhow::Result<PathBuf> {
    std::fs::write(path, text)?;
    Ok(path.to_path_buf())
}

fn lua_list(ids: &[u64]) -> String {
    ids.iter().map(u64::to_string).collect::<Vec<_>>().join(",")
}

const HEADERS: &str =
    "local headers = { [\"X-ServiceApiKey\"] = KEY, [\"Content-Type\"] = \"application/xml\" }\n";

fn script(cfg: &Config, name: &str, body: &str) -> anyhow::Result<PathBuf> {
    lua(
        &cfg.out.join(format!("{name}.lua")),
        &format!("local KEY = \"{KEY}\"\n{HEADERS}{body}"),
    )
}

fn date_text(d: time::Date) -> String {
    format!("{:04}-{:02}-{:02}", d.year(), d.month() as u8, d.day())
}

const ITEM: &str = "<invoice-item><name>Beratung</name><quantity>3</quantity><unit_price>100</unit_price></invoice-item>";

fn main() -> anyhow::Result<()> {
    let cfg = Config::from_env()?;
    std::fs::create_dir_all(&cfg.out)?;
    for (what, path) in [("faktura", &cfg.faktura), ("hello component", &cfg.hello)] {
        if !path.exists() {
            bail!("{what} missing at {}: run `make bench`", path.display());
        }
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
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
    let (host, addr, cold) = start_host_timed(&cfg, &data, &rt, Duration::from_secs(600))?;
    eprintln!(
        "host up after {:.2} s (cold compiled-component cache)",
        cold.as_secs_f64()
    );

    // Seed: clients, invoices with two items spread over two years, every tenth completed
    // (half of those due in the future, so OPEN; the others mostly OVERDUE).
    let today = time::OffsetDateTime::now_utc().date();
    let clients = rt.block_on(client::each(
        addr,
        KEY,
        conns,
        cfg.clients,
        "clients",
        |i| {
            Call::with(
                "POST",
                "/api/clients",
                format!("<client><name>Bench Kunde {i}</name><city>Berlin</city></client>"),
            )
        },
    ))?;
    let client_list = clients.clone();
    let n = cfg.invoices;
    let t = Instant::now();
    let invoice_ids = rt.block_on(client::each(addr, KEY, conns, n, "invoices", move |i| {
        let date = today - time::Duration::days((i as i64 * 7919) % 730);
        let due = if i % 20 == 0 {
            today + time::Duration::days(60)
        } else {
            date + time::Duration::days(14)
        };
        Call::with(
            "POST",
            "/api/invoices",
            format!(
                "<invoice><client_id>{}</client_id><date>{}</date><due_date>{}</due_date>\
                 <invoice-items>{ITEM}<invoice-item><name>Reise</name><quantity>1</quantity>\
                 <unit_price>50.5</unit_price></invoice-item></invoice-items></invoice>",
                client_list[i % client_list.len()],
                date_text(date),
                date_text(due)
            ),
        )
    }))?;
    let seed_secs = t.elapsed().as_secs_f64();
    eprintln!(
        "seeded {n} invoices in {seed_secs:.1} s ({:.0}/s)",
        n as f64 / seed_secs
    );
    let to_complete: Vec<u64> = invoice_ids.iter().copied().step_by(10).collect();
    let t = Instant::now();
    let completing = to_complete.clone();
    rt.block_on(client::each(
        addr,
        KEY,
        conns,
        completing.len(),
        "completions",
        move |i| {
            Call::with(
                "PUT",
                format!("/api/invoices/{}/complete", completing[i]),
                "<complete/>",
            )
        },
    ))?;
    let complete_secs = t.elapsed().as_secs_f64();
    eprintln!(
        "completed {} in {complete_secs:.1} s ({:.0}/s)",
        to_complete.len(),
        to_complete.len() as f64 / complete_secs
    );

    // The host's peak RSS during each phase, so that its memory can be attributed.
    let peaks = std::cell::RefCell::new(vec![(
        "seeding".to_owned(),
        host.peak_rss_mib().context("reading the host's peak RSS")?,
    )]);
    let base = format!("http://{addr}");
    let run = |name: &str, body: &str| -> anyhow::Result<Figures> {
        let script = script(&cfg, name, body)?;
        host.reset_peak_rss();
        let f = Load {
            url: base.clone(),
            seconds: secs,
            connections: conns,
            key: None,
            script: Some(&script),
        }
        .run()?;
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
    let sample: Vec<u64> = invoice_ids
        .iter()
        .copied()
        .step_by((n / 1000).max(1))
        .collect();
    // A: wasmtime serve with the hello component, a fresh instance per request, measured
    // in two halves around W1.
    let a_addr = free_addr()?;
    let a_serve = spawn(
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
    let w1 = run(
        "w1-get",
        &format!(
            "local ids = {{{}}}\nrequest = function()\n  return wrk.format(\"GET\", \"/api/invoices/\" .. ids[math.random(#ids)], headers)\nend\n",
            lua_list(&sample)
        ),
    )?;
    let a = a_before.with(a_half()?);
    a_serve.stop()?;
    check(&mut failures, "A", &a);
    let get_path = |name: &str, method: &str, path: &str| {
        run(
            name,
            &format!(
                "request = function()\n  return wrk.format(\"{method}\", \"{path}\", headers)\nend\n"
            ),
        )
    };
    let w4 = get_path(
        "w4-list-open",
        "GET",
        "/api/invoices?status=OPEN&per_page=100",
    )?;
    let w5 = get_path("w5-group", "GET", "/api/invoices?group_by=client,month")?;
    let count = get_path("head-count", "HEAD", "/api/invoices")?;

    // W2 creates drafts with five items; W3 completes exactly those.
    let probe = |rt: &tokio::runtime::Runtime| -> anyhow::Result<u64> {
        let body = format!(
            "<invoice><client_id>{}</client_id><invoice-items>{ITEM}</invoice-items></invoice>",
            clients[0]
        );
        Ok(
            rt.block_on(client::each(addr, KEY, 1, 1, "probe", move |_| {
                Call::with("POST", "/api/invoices", body.clone())
            }))?[0],
        )
    };
    let before = probe(&rt)?;
    // C: durable single-put commits on the data directory's disk, in two halves around W2.
    let c_half = || -> anyhow::Result<Figures> {
        let f = anchors::redb_commits(&cfg.out, half)?;
        eprintln!("C  redb durable single-put commits: {:.0}/s", f.per_sec);
        Ok(f)
    };
    let c_before = c_half()?;
    let w2 = run(
        "w2-create",
        &format!(
            "local clients = {{{}}}\nlocal items = \"<invoice-items>{}</invoice-items></invoice>\"\n\
             request = function()\n  return wrk.format(\"POST\", \"/api/invoices\", headers, \
             \"<invoice><client_id>\" .. clients[math.random(#clients)] .. \"</client_id>\" .. items)\nend\n",
            lua_list(&clients),
            ITEM.repeat(5)
        ),
    )?;
    let c = c_before.with(c_half()?);
    let after = probe(&rt)?;
    let w3 = run(
        "w3-complete",
        &format!(
            "local lo, hi = {}, {}\nlocal threads = 0\nfunction setup(thread)\n  thread:set(\"offset\", threads)\n  threads = threads + 1\nend\n\
             local n = 0\nrequest = function()\n  local id = lo + offset + n * 2\n  n = n + 1\n  \
             if id > hi then\n    wrk.thread:stop()\n    return wrk.format(\"GET\", \"/api/invoices/\" .. hi, headers)\n  end\n  \
             return wrk.format(\"PUT\", \"/api/invoices/\" .. id .. \"/complete\", headers, \"<complete/>\")\nend\n",
            before + 1,
            after - 1
        ),
    )?;
    let completed_w3 = w3.count;
    if before + completed_w3 >= after {
        failures.push(format!(
            "W3 ran out of drafts: {completed_w3} completions, {} drafts",
            after - before - 1
        ));
    }

    let peaks = peaks.into_inner();
    let rss = peaks.iter().map(|(_, p)| *p).fold(0.0, f64::max);
    host.stop()?;

    // W6: start to first 200, the compiled component cached and the data seeded.
    let (host, _, w6) = start_host_timed(&cfg, &data, &rt, Duration::from_secs(120))?;
    host.stop()?;

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
        ("W4", &w4),
        ("W5", &w5),
        ("HEAD", &count),
    ] {
        check(&mut failures, name, f);
    }
    let at = if n >= 1_000_000 {
        String::new()
    } else {
        format!(" (goal at 1M; run at {n})")
    };
    let goal_row = |name: &str, f: &Figures, ratio: String, goal: String, met: bool| Row {
        goal,
        verdict: verdict(&cfg, met),
        ..load_row(name, f, "req/s", ratio)
    };
    rows.push(goal_row(
        "W1 GET /api/invoices/{id}",
        &w1,
        format!(
            "{:.2} A, {:.2} B",
            w1.per_sec / a.per_sec,
            w1.per_sec / b.per_sec
        ),
        "≥ 1.5 A, p99 ≤ 10 ms".into(),
        w1.per_sec >= 1.5 * a.per_sec && w1.p99_ms <= 10.0,
    ));
    rows.push(goal_row(
        "W2 POST /api/invoices, 5 items",
        &w2,
        format!(
            "{:.2} C, {:.2} B",
            w2.per_sec / c.per_sec,
            w2.per_sec / b.per_sec
        ),
        "≥ 0.5 C".into(),
        w2.per_sec >= 0.5 * c.per_sec,
    ));
    rows.push(goal_row(
        "W3 PUT /api/invoices/{id}/complete (PDF)",
        &w3,
        format!("{:.2} C", w3.per_sec / c.per_sec),
        "≥ 300/s".into(),
        w3.per_sec >= 300.0,
    ));
    rows.push(goal_row(
        "W4 GET ?status=OPEN&per_page=100",
        &w4,
        ratio_b(&w4),
        format!("p50 ≤ 20 ms{at}"),
        w4.p50_ms <= 20.0,
    ));
    rows.push(goal_row(
        "W5 GET ?group_by=client,month",
        &w5,
        ratio_b(&w5),
        format!("p50 ≤ 1 s{at}"),
        w5.p50_ms <= 1000.0,
    ));
    rows.push(goal_row(
        "HEAD /api/invoices (count)",
        &count,
        ratio_b(&count),
        format!("p50 ≤ 20 ms{at}"),
        count.p50_ms <= 20.0,
    ));
    let single = |name: &str, value: String, goal: &str, met: Option<bool>| Row {
        name: name.into(),
        rate: value,
        p50: String::new(),
        p99: String::new(),
        ratio: String::new(),
        goal: goal.into(),
        verdict: met.map(|m| verdict(&cfg, m)).unwrap_or_default(),
    };
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
        "≤ 300 MB",
        Some(rss * 1.048_576 <= 300.0),
    ));
    for (phase, peak) in &peaks {
        rows.push(single(
            &format!("   during {phase}"),
            format!("{peak:.0} MiB"),
            "",
            None,
        ));
    }
    rows.push(single(
        "Seeding: POST /api/invoices, 2 items",
        format!("{:.0} req/s", n as f64 / seed_secs),
        "",
        None,
    ));
    rows.push(single(
        "Seeding: PUT …/complete",
        format!("{:.0} req/s", to_complete.len() as f64 / complete_secs),
        "",
        None,
    ));

    let report = render(&cfg, &rows, &failures);
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

fn render(cfg: &Config, rows: &[Row], failures: &[String]) -> String {
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
    if !failures.is_empty() {
        let _ = writeln!(s, "\nFailed requests:");
        for f in failures {
            let _ = writeln!(s, "- {f}");
        }
    }
    s
}
