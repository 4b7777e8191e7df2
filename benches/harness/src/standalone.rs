//! The standalone component (`target/faktura-standalone.wasm`: the service with the plug
//! compiled in), and the same service composed with the plug component
//! (`target/faktura-standalone-composed.wasm`), under `wasmtime serve`: W1, W4 and W2
//! beside anchor A, the hello component under the same `wasmtime serve`, measured in halves
//! around each workload as the main run does, so that each figure is a ratio of two taken
//! side by side.
//!
//! The standalone serves a copy of the data directory the main run seeded (the same redb
//! file; the plug reads and writes it as the host does), so it reads the same invoices.

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::host::{self, KEY, Proc};
use crate::stores::Section;
use crate::workloads::{self, Seeded, Workload};
use crate::wrk::{Figures, Load};
use crate::{Config, busy, client, ms};

/// How `wasmtime serve` gives requests instances: a fresh one per request (its default for
/// WASI 0.2 components), or one instance for many requests in turn, as README recommends.
/// The hello component of anchor A runs with the same flags.
const MODES: [(&str, &[&str]); 2] = [
    ("one instance per request", &[]),
    (
        "instances reused (`--max-instance-reuse-count 1000`)",
        &["--max-instance-reuse-count", "1000"],
    ),
];

/// A measurement and the CPU time the serving process spent on it, per request.
#[derive(Clone, Copy)]
struct Costed {
    figures: Figures,
    /// Microseconds of the `wasmtime serve` process's CPU time (all its threads, user and
    /// system) per answered request; None when /proc could not tell.
    cpu_us: Option<f64>,
}

impl Costed {
    /// Two halves as one (`Figures::with`); the CPU time per request is their mean.
    fn with(self, other: Costed) -> Costed {
        Costed {
            figures: self.figures.with(other.figures),
            cpu_us: self.cpu_us.zip(other.cpu_us).map(|(a, b)| (a + b) / 2.0),
        }
    }
}

/// Runs `load` and reads the CPU time process `pid` spent meanwhile: what one request
/// costs the runtime, whatever the load generator beside it takes of the machine.
fn costed(
    pid: u32,
    tick_us: f64,
    load: impl FnOnce() -> anyhow::Result<Figures>,
) -> anyhow::Result<Costed> {
    let before = busy::process(pid).map(|p| p.own);
    let figures = load()?;
    let after = busy::process(pid).map(|p| p.own);
    let cpu_us = before
        .zip(after)
        .filter(|_| figures.count > 0)
        .map(|(b, a)| a.saturating_sub(b) as f64 * tick_us / figures.count as f64);
    Ok(Costed { figures, cpu_us })
}

fn micros(us: Option<f64>) -> String {
    us.map_or_else(|| "?".into(), |us| format!("{us:.0} µs"))
}

/// Starts `wasmtime serve` with the standalone component `wasm` on a copy of `seeded_data`.
fn serve(
    cfg: &Config,
    wasm: &Path,
    seeded_data: &Path,
    flags: &[&str],
) -> anyhow::Result<(Proc, SocketAddr)> {
    let data = cfg.out.join("standalone-data");
    if data.exists() {
        std::fs::remove_dir_all(&data)?;
    }
    std::fs::create_dir_all(&data)?;
    std::fs::copy(seeded_data.join("faktura.redb"), data.join("faktura.redb"))?;
    let addr = host::free_addr()?;
    let proc = host::spawn(
        Command::new(&cfg.wasmtime)
            .arg("serve")
            .arg("-Scli")
            .args(flags)
            .arg("--addr")
            .arg(addr.to_string())
            .arg("--dir")
            .arg(format!("{}::/data", data.display()))
            .arg(wasm),
        &cfg.out.join("standalone.log"),
    )?;
    Ok((proc, addr))
}

/// One measurement of `workload` against the standalone at `addr`.
fn measure(cfg: &Config, addr: SocketAddr, workload: &Workload) -> anyhow::Result<Figures> {
    let script = workload.script_in(&cfg.out)?;
    let f = workloads::measure(cfg, addr, &script)?;
    eprintln!(
        "standalone {}: {:.0} req/s, p50 {}, p99 {}",
        workload.short,
        f.per_sec,
        ms(f.p50_ms),
        ms(f.p99_ms)
    );
    Ok(f)
}

/// Runs the section on the data directory `seeded_data` that `seeded` describes; no host
/// may serve it meanwhile.
pub(crate) fn run(
    cfg: &Config,
    seeded_data: &Path,
    seeded: &Seeded,
    rt: &tokio::runtime::Runtime,
) -> anyhow::Result<Section> {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "\n## The standalone component under wasmtime serve\n\n\
         `target/faktura-standalone.wasm` (the plug compiled in) and \
         `target/faktura-standalone-composed.wasm` (the plug a component of its own, \
         composed with wac) under `wasmtime serve -Scli` on a copy of the seeded data \
         directory, each workload between two halves of A (the hello component under the \
         same `wasmtime serve`, with the same flags), its ratio to them, and the CPU time the \
         `wasmtime serve` process spent per request (all its threads; A's in parentheses): \
         the cost that sets the ratio, apart from what the load generator beside it takes of \
         the machine."
    );
    let mut failures = Vec::new();
    let builds: [(&str, &PathBuf); 2] =
        [("standalone", &cfg.standalone), ("composed", &cfg.composed)];
    for (mode, flags) in MODES {
        for (build, wasm) in builds {
            let section = run_mode(
                cfg,
                wasm,
                seeded_data,
                seeded,
                rt,
                &format!("{build}, {mode}"),
                flags,
            )?;
            s.push_str(&section.markdown);
            failures.extend(section.failures);
        }
    }
    Ok(Section {
        markdown: s,
        failures,
    })
}

fn run_mode(
    cfg: &Config,
    wasm: &Path,
    seeded_data: &Path,
    seeded: &Seeded,
    rt: &tokio::runtime::Runtime,
    mode: &str,
    flags: &[&str],
) -> anyhow::Result<Section> {
    let mut failures = Vec::new();
    let a_addr = host::free_addr()?;
    let hello = host::spawn(
        Command::new(&cfg.wasmtime)
            .arg("serve")
            .arg("-Scli")
            .args(flags)
            .arg("--addr")
            .arg(a_addr.to_string())
            .arg(&cfg.hello),
        &cfg.out.join("wasmtime-serve-standalone-anchor.log"),
    )?;
    let (standalone, addr) = serve(cfg, wasm, seeded_data, flags)?;
    let since = Instant::now();
    rt.block_on(client::first_ok(
        a_addr,
        KEY,
        "/",
        since,
        Duration::from_secs(60),
    ))?;
    // The first start compiles the component.
    let up = rt.block_on(host::up(addr, since, Duration::from_secs(600)))?;
    eprintln!("standalone ({mode}) up after {:.1} s", up.as_secs_f64());

    let half = (cfg.seconds / 2).max(1);
    let tick_us = 1e6 / busy::ticks_per_sec();
    let a_half = || -> anyhow::Result<Costed> {
        costed(hello.id(), tick_us, || {
            let f = Load {
                url: format!("http://{a_addr}/"),
                seconds: half,
                connections: cfg.connections,
                key: None,
                script: None,
            }
            .run()?;
            eprintln!("A  wasmtime serve hello: {:.0} req/s", f.per_sec);
            Ok(f)
        })
    };
    let around = |workload: &Workload| -> anyhow::Result<(Costed, Costed)> {
        let before = a_half()?;
        let f = costed(standalone.id(), tick_us, || measure(cfg, addr, workload))?;
        let after = a_half()?;
        Ok((f, before.with(after)))
    };
    let (w1, a1) = around(&workloads::w1(&seeded.sample()))?;
    let (w4, a4) = around(&workloads::w4())?;
    let (w2, a2) = around(&workloads::w2(&seeded.clients))?;
    standalone.stop()?;

    let mut s = String::new();
    let _ = writeln!(
        s,
        "\n### {mode}\n\n\
         | workload | rate | p50 | p99 | ratio | CPU per request (A's) | goal | |\n\
         |---|---:|---:|---:|---|---:|---|---|"
    );
    let rows: [(&str, &Costed, &Costed, String, Option<bool>); 3] = [
        (
            "W1 GET /api/invoices/{id}",
            &w1,
            &a1,
            "≥ 0.5 A, p99 ≤ 20 ms".into(),
            Some(w1.figures.per_sec >= 0.5 * a1.figures.per_sec && w1.figures.p99_ms <= 20.0),
        ),
        (
            "W4 GET ?status=OPEN&per_page=100",
            &w4,
            &a4,
            String::new(),
            None,
        ),
        (
            "W2 POST /api/invoices, 5 items",
            &w2,
            &a2,
            String::new(),
            None,
        ),
    ];
    for (name, costed_f, costed_a, goal, met) in rows {
        let (f, a) = (&costed_f.figures, &costed_a.figures);
        if f.errors > 0 || f.count == 0 {
            failures.push(format!(
                "standalone ({mode}) {name}: {} failed of {} requests",
                f.errors, f.count
            ));
        }
        let _ = writeln!(
            s,
            "| {name} | {:.0} req/s | {} | {} | {:.2} A ({:.0} req/s) | {} ({}) | {goal} | {} |",
            f.per_sec,
            ms(f.p50_ms),
            ms(f.p99_ms),
            f.per_sec / a.per_sec,
            a.per_sec,
            micros(costed_f.cpu_us),
            micros(costed_a.cpu_us),
            met.map(|m| crate::verdict(cfg, m)).unwrap_or_default()
        );
    }
    Ok(Section {
        markdown: s,
        failures,
    })
}
