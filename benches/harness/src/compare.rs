//! `BENCH_COMPARE`: this build measured against a previous one, side by side in one run,
//! so that a refactor can show it kept the speed. A workload whose mean throughput falls
//! more than 10 % below the previous build's fails the run (`REGRESSION_MAX`).
//!
//! The previous binary seeds one data directory: records carry a data-version byte that
//! older code refuses, while this build migrates older data in place when it starts, so
//! only data written by the previous binary can serve both. Two copies of it, `prev/` and
//! `this/`, then serve the two hosts, both running at once; once both are up, each starts
//! again, so that neither is measured in the process that migrated its copy or compiled
//! its component cold. Each workload runs against
//! one host and right after against the other, and the whole sequence repeats for
//! `BENCH_COMPARE_ROUNDS` rounds with the order swapped every other round: whatever the
//! machine's speed does over those minutes, it does to both columns alike. What W2
//! creates is deleted right after it, so every round reads the seeded data.
//!
//! W7 (an e-invoice of a completed invoice) is measured only when the previous build
//! answers it with 200 and XML: an older one has no such endpoint, or seeded the data
//! without the e-invoice terms it does not know; the report then marks W7 "n/a in
//! previous". Likewise each variant of W8 (imports of incoming e-invoices) only when the
//! previous build imports its file with 201: an older one has no `/api/incomings`. W8
//! imports into accounts created on each host for each measurement, with numbers never
//! sent before, so every round imports alike.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};

use crate::busy::Ticks;
use crate::host::{self, Binary, Proc};
use crate::imports;
use crate::workloads::{self, Workload};
use crate::wrk::Figures;
use crate::{Compare, Config, cpu_model, ms};

/// This build's throughput may fall this far below the previous one's and still count as
/// the same speed.
const TOLERANCE: f64 = 0.05;

/// A workload whose throughput falls further than this below the previous build's fails
/// the comparison: a regression, not noise.
const REGRESSION_MAX: f64 = 0.10;

/// A measurement during which other work took more than this share of the CPUs is marked
/// in the report: its figure says more about the machine than about the build.
const BUSY: f64 = 0.10;

/// One measurement and the share of the CPUs other work took meanwhile (None when /proc
/// could not tell).
#[derive(Clone, Copy)]
struct Measured {
    f: Figures,
    others: Option<f64>,
}

/// The two sides of the comparison, in the order of a round that does not swap.
#[derive(Clone, Copy)]
enum Side {
    Previous,
    This,
}

impl Side {
    fn name(self) -> &'static str {
        match self {
            Side::Previous => "previous",
            Side::This => "this",
        }
    }

    fn index(self) -> usize {
        match self {
            Side::Previous => 0,
            Side::This => 1,
        }
    }
}

/// A host serving its own copy of the seeded data.
struct Running {
    binary: Binary,
    proc: Proc,
    addr: std::net::SocketAddr,
    /// The copy of the seeded data it serves.
    data: PathBuf,
    /// Start to first 200 on the copied data: this build's includes migrating the data
    /// and compiling its component (the copied cache holds the previous one's).
    up: Duration,
}

/// Copies `from` to `to` as `cp -r` does, the compiled-component cache included.
fn copy_dir(from: &Path, to: &Path) -> anyhow::Result<()> {
    let status = Command::new("cp")
        .arg("-r")
        .arg(from)
        .arg(to)
        .status()
        .context("running cp")?;
    if !status.success() {
        bail!("cp -r {} {} failed", from.display(), to.display());
    }
    Ok(())
}

pub(crate) fn run(
    cfg: &Config,
    compare: &Compare,
    rt: &tokio::runtime::Runtime,
) -> anyhow::Result<()> {
    let previous = Binary::beside(&compare.previous)
        .context("BENCH_COMPARE names the previous host binary, with its faktura.wasm beside it")?;
    let this = Binary::beside(&cfg.faktura).context("run `make bench`")?;
    let rounds = compare.rounds;
    eprintln!(
        "faktura bench, compare: {} against {}, {} invoices, {} rounds of {} s per measurement, {} connections{}",
        this.faktura.display(),
        previous.faktura.display(),
        cfg.invoices,
        rounds,
        cfg.seconds,
        cfg.connections,
        if cfg.smoke { " (smoke)" } else { "" }
    );

    // Seed with the previous binary, which cannot read what this one writes.
    let dir = cfg.out.join("compare");
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    std::fs::create_dir_all(&dir)?;
    let seed_dir = dir.join("seed");
    let (seeder, addr, _) = previous.start_timed(
        &seed_dir,
        &cfg.out.join("faktura-seed.log"),
        rt,
        Duration::from_secs(600),
    )?;
    let seeded = workloads::seed(cfg, rt, addr)?;
    seeder.stop()?;
    for copy in ["prev", "this"] {
        copy_dir(&seed_dir, &dir.join(copy))?;
    }
    // Two copies are all the run needs, and at a million invoices each is gigabytes.
    std::fs::remove_dir_all(&seed_dir)?;

    // Both hosts at once, each on its copy; this one migrates its copy as it starts.
    let mut hosts = Vec::new();
    let started = Instant::now();
    for (binary, copy) in [(previous, "prev"), (this, "this")] {
        let addr = host::free_addr()?;
        let proc = binary.start(
            &dir.join(copy),
            addr,
            &cfg.out.join(format!("faktura-{copy}.log")),
        )?;
        hosts.push((binary, proc, addr, dir.join(copy)));
    }
    // Waited for together, so that each start-up time is its own and not the later of
    // the two.
    let limit = Duration::from_secs(600);
    let (prev_up, this_up) = rt.block_on(async {
        tokio::join!(
            host::up(hosts[0].2, started, limit),
            host::up(hosts[1].2, started, limit)
        )
    });
    let running: Vec<Running> = hosts
        .into_iter()
        .zip([prev_up?, this_up?])
        .map(|((binary, proc, addr, data), up)| Running {
            binary,
            proc,
            addr,
            data,
            up,
        })
        .collect();
    for (side, host) in [Side::Previous, Side::This].into_iter().zip(&running) {
        eprintln!(
            "{} host up after {:.2} s: {}",
            side.name(),
            host.up.as_secs_f64(),
            host.binary.faktura.display()
        );
    }
    // Measured in processes that did neither: this host's first start migrated its copy
    // and compiled its component cold (the copied cache holds the previous one's), in the
    // process it would then serve from, the previous host's did not. Both start once more,
    // on their data as the first start left it and with their components in their caches.
    let restarted = Instant::now();
    let running: Vec<Running> = running
        .into_iter()
        .map(|r| -> anyhow::Result<Running> {
            let Running {
                binary,
                proc,
                addr,
                data,
                up,
            } = r;
            proc.stop()?;
            let copy = data.file_name().context("a copy's name")?.to_string_lossy();
            let proc = binary.start(
                &data,
                addr,
                &cfg.out.join(format!("faktura-{copy}-measured.log")),
            )?;
            Ok(Running {
                binary,
                proc,
                addr,
                data,
                up,
            })
        })
        .collect::<anyhow::Result<_>>()?;
    let (prev_again, this_again) = rt.block_on(async {
        tokio::join!(
            host::up(running[0].addr, restarted, limit),
            host::up(running[1].addr, restarted, limit)
        )
    });
    let (prev_again, this_again) = (prev_again?, this_again?);
    eprintln!(
        "both hosts started again, warm, to be measured: up after {:.2} s and {:.2} s",
        prev_again.as_secs_f64(),
        this_again.as_secs_f64()
    );

    // The same scripts, hence the same ids and clients, for both: they come from one seed.
    let mut list = vec![workloads::w1(&seeded.sample())];
    let einvoices = seeded.completed_sample();
    let w7 = workloads::w7(&einvoices);
    let mut left_out = Vec::new();
    match workloads::einvoice(rt, running[Side::Previous.index()].addr, einvoices[0])? {
        Ok(()) => list.push(w7),
        Err((status, answer)) => {
            eprintln!("W7 left out, n/a in previous: {answer}");
            left_out.push((w7.label, format!("previous answered {status}")));
        }
    }
    list.extend([
        workloads::w4(),
        workloads::w5(),
        workloads::head_count(),
        workloads::w2(&seeded.clients),
    ]);
    // The file each W8 variant imports, by the index of its workload in `list`; its
    // script is written for each measurement, with the accounts made for it.
    let uploads = imports::Uploads::read(&cfg.root)?;
    let mut upload_of: Vec<Option<&imports::Upload>> = vec![None; list.len()];
    for upload in [&uploads.cii, &uploads.facturx] {
        match imports::import(rt, running[Side::Previous.index()].addr, upload)? {
            Ok(()) => {
                if let Err((_, answer)) =
                    imports::import(rt, running[Side::This.index()].addr, upload)?
                {
                    bail!(
                        "{} pre-check against this build: an import must answer 201: {answer}",
                        upload.short
                    );
                }
                list.push(imports::w8(upload, &[]));
                upload_of.push(Some(upload));
            }
            Err((status, answer)) => {
                eprintln!("{} left out, n/a in previous: {answer}", upload.short);
                left_out.push((upload.label, format!("previous answered {status}")));
            }
        }
    }
    // W8's scripts are written for each measurement instead.
    let scripts = list
        .iter()
        .zip(&upload_of)
        .map(|(w, upload)| match upload {
            Some(_) => Ok(None),
            None => w.script(cfg).map(Some),
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let pids: Vec<u32> = running.iter().map(|h| h.proc.id()).collect();
    // figures[workload][side][round]
    let mut figures: Vec<[Vec<Measured>; 2]> = vec![[Vec::new(), Vec::new()]; list.len()];
    for round in 0..rounds {
        let order = if round % 2 == 0 {
            [Side::Previous, Side::This]
        } else {
            [Side::This, Side::Previous]
        };
        for (((workload, script), upload), by_side) in
            list.iter().zip(&scripts).zip(&upload_of).zip(&mut figures)
        {
            for side in order {
                let host = &running[side.index()];
                let addr = host.addr;
                let script = match (upload, script) {
                    (Some(upload), _) => {
                        let keys = imports::accounts(
                            &host.binary,
                            &host.data,
                            upload,
                            imports::account_count(cfg.seconds),
                        )?;
                        imports::w8(upload, &keys).script(cfg)?
                    }
                    (None, Some(script)) => script.clone(),
                    (None, None) => unreachable!("a script for every workload but W8"),
                };
                // W2's drafts are deleted again right after it, bracketed by two drafts of
                // the harness's own: otherwise every round would add to the data set of
                // each host, by as many invoices as it created, and the reads of later
                // rounds would run on more data, and on more for the faster host.
                let first = if workload.creates {
                    Some(workloads::create_draft(rt, addr, seeded.clients[0])?)
                } else {
                    None
                };
                let before = Ticks::now(&pids);
                let f = workloads::measure(cfg, addr, &script)?;
                let others = before
                    .zip(Ticks::now(&pids))
                    .map(|(before, after)| after.others_since(before));
                if let Some(first) = first {
                    let last = workloads::create_draft(rt, addr, seeded.clients[0])?;
                    workloads::delete_invoices(cfg, rt, addr, first, last)?;
                }
                eprintln!(
                    "round {}/{rounds} {} {}: {:.0} req/s, p50 {}, p99 {}, other work {}{}",
                    round + 1,
                    workload.file,
                    side.name(),
                    f.per_sec,
                    ms(f.p50_ms),
                    ms(f.p99_ms),
                    percent(others),
                    if f.errors > 0 {
                        format!(", {} failed", f.errors)
                    } else {
                        String::new()
                    }
                );
                by_side[side.index()].push(Measured { f, others });
            }
        }
    }
    let rss: Vec<Option<f64>> = running.iter().map(|h| h.proc.peak_rss_mib()).collect();
    let ups: Vec<Duration> = running.iter().map(|h| h.up).collect();
    let binaries: Vec<String> = running
        .iter()
        .map(|h| {
            format!(
                "`{}` with `{}`",
                h.binary.faktura.display(),
                h.binary.component.display()
            )
        })
        .collect();
    for host in running {
        host.proc.stop()?;
    }

    let mut failures = Vec::new();
    for (workload, by_side) in list.iter().zip(&figures) {
        for side in [Side::Previous, Side::This] {
            for (round, Measured { f, .. }) in by_side[side.index()].iter().enumerate() {
                if f.errors > 0 || f.count == 0 {
                    failures.push(format!(
                        "{} against {}, round {}: {} failed of {} requests",
                        workload.short,
                        side.name(),
                        round + 1,
                        f.errors,
                        f.count
                    ));
                }
            }
        }
    }
    let report = render(
        cfg,
        &Info {
            rounds,
            binaries: &binaries,
            seeded: seeded.invoices.len(),
            ups: &ups,
            rss: &rss,
        },
        &list,
        &figures,
        &left_out,
        &failures,
    );
    println!("{report}");
    let path = cfg.out.join("compare.md");
    std::fs::write(&path, &report)?;
    eprintln!("written to {}", path.display());
    if !failures.is_empty() {
        bail!("{} measurements had failed requests", failures.len());
    }
    let regressions = regressions(&list, &figures);
    if !regressions.is_empty() && !cfg.smoke {
        bail!(
            "slower than the previous build by more than {:.0} %: {}",
            REGRESSION_MAX * 100.0,
            regressions.join("; ")
        );
    }
    Ok(())
}

/// A workload's figures on the previous build and on this one, each the mean of its rounds.
fn means(by_side: &[Vec<Measured>; 2]) -> [Figures; 2] {
    [&by_side[0], &by_side[1]]
        .map(|rounds| Figures::mean(&rounds.iter().map(|m| m.f).collect::<Vec<_>>()))
}

/// The workloads whose mean throughput over the rounds fell more than `REGRESSION_MAX`
/// below the previous build's, each with how far.
fn regressions(list: &[Workload], figures: &[[Vec<Measured>; 2]]) -> Vec<String> {
    list.iter()
        .zip(figures)
        .filter_map(|(workload, by_side)| {
            let [prev, this] = means(by_side);
            let ratio = this.per_sec / prev.per_sec;
            (ratio < 1.0 - REGRESSION_MAX)
                .then(|| format!("{} by {:.1} %", workload.short, (1.0 - ratio) * 100.0))
        })
        .collect()
}

/// What the report says besides the table.
struct Info<'a> {
    rounds: usize,
    /// Previous, this: binary and component.
    binaries: &'a [String],
    seeded: usize,
    ups: &'a [Duration],
    rss: &'a [Option<f64>],
}

fn rate(v: f64) -> String {
    format!("{v:.0}")
}

fn percent(share: Option<f64>) -> String {
    share.map_or_else(|| "unknown".to_owned(), |s| format!("{:.0} %", s * 100.0))
}

fn render(
    cfg: &Config,
    info: &Info<'_>,
    list: &[Workload],
    figures: &[[Vec<Measured>; 2]],
    left_out: &[(&str, String)],
    failures: &[String],
) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# Faktura benchmark: this build against the previous one\n\n\
         {} × {}, {} invoices seeded by the previous build and copied for each, {} s per \
         measurement, {} connections (wrk -t2), {} rounds (previous first in odd rounds, this \
         first in even ones){}.\n\n- previous: {}\n- this: {}\n",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        cpu_model(),
        info.seeded,
        cfg.seconds,
        cfg.connections,
        info.rounds,
        if cfg.smoke {
            ", smoke run: figures not meaningful"
        } else {
            ""
        },
        info.binaries[0],
        info.binaries[1],
    );
    let _ = writeln!(
        s,
        "| workload | previous req/s | per round | this req/s | per round | this/previous | \
         p50 previous | p50 this | p99 previous | p99 this | |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
    );
    for (workload, by_side) in list.iter().zip(figures) {
        let [prev, this] = means(by_side);
        let per_round = |rounds: &[Measured]| {
            rounds
                .iter()
                .map(|m| match m.others {
                    Some(others) if others > BUSY => format!("{}†", rate(m.f.per_sec)),
                    _ => rate(m.f.per_sec),
                })
                .collect::<Vec<_>>()
                .join(" · ")
        };
        let ratio = this.per_sec / prev.per_sec;
        let verdict = if ratio >= 1.0 - TOLERANCE {
            format!("within {:.0} %", TOLERANCE * 100.0)
        } else if ratio >= 1.0 - REGRESSION_MAX {
            format!("SLOWER by {:.1} %", (1.0 - ratio) * 100.0)
        } else {
            format!(
                "REGRESSION: slower by {:.1} % (fails past {:.0} %)",
                (1.0 - ratio) * 100.0,
                REGRESSION_MAX * 100.0
            )
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {ratio:.3} | {} | {} | {} | {} | {verdict} |",
            workload.label,
            rate(prev.per_sec),
            per_round(&by_side[0]),
            rate(this.per_sec),
            per_round(&by_side[1]),
            ms(prev.p50_ms),
            ms(this.p50_ms),
            ms(prev.p99_ms),
            ms(this.p99_ms),
        );
    }
    for (label, why) in left_out {
        let _ = writeln!(s, "| {label} | n/a in previous | | | | | | | | | {why} |");
    }
    let mib = |v: Option<f64>| v.map_or_else(|| "unknown".to_owned(), |v| format!("{v:.0} MiB"));
    let _ = writeln!(
        s,
        "\nStart to first 200 on the copied data: previous {}, this {} (this migrates the data \
         and compiles its component, the copied cache holding the previous one's). Peak host \
         RSS over all rounds: previous {}, this {}.",
        ms(info.ups[0].as_secs_f64() * 1000.0),
        ms(info.ups[1].as_secs_f64() * 1000.0),
        mib(info.rss[0]),
        mib(info.rss[1]),
    );
    if let Some(w2) = list.iter().position(|w| w.creates) {
        let created = |side: usize| figures[w2][side].iter().map(|m| m.f.count).sum::<u64>();
        let _ = writeln!(
            s,
            "W2 writes into each host's own copy (previous {}, this {} drafts over all rounds) \
             and its drafts are deleted right after each measurement, so that every round's \
             reads run on the seeded data.",
            created(0),
            created(1),
        );
    }
    let others: Vec<f64> = figures
        .iter()
        .flatten()
        .flatten()
        .filter_map(|m| m.others)
        .collect();
    if !others.is_empty() {
        let _ = writeln!(
            s,
            "Other work on the machine took {} of the CPUs on average during the measurements, \
             at most {}; † marks the {} of {} measurements above {:.0} %.",
            percent(Some(others.iter().sum::<f64>() / others.len() as f64)),
            percent(others.iter().copied().reduce(f64::max)),
            others.iter().filter(|&&o| o > BUSY).count(),
            others.len(),
            BUSY * 100.0,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn measured(per_sec: f64) -> Measured {
        Measured {
            f: Figures {
                per_sec,
                count: 1,
                ..Figures::default()
            },
            others: None,
        }
    }

    /// A workload more than 10 % slower on the mean of its rounds is a regression; one
    /// within that is not, however one round went.
    #[test]
    fn a_workload_more_than_a_tenth_slower_is_a_regression() {
        let list = [workloads::w4(), workloads::w5(), workloads::head_count()];
        let figures = vec![
            [
                vec![measured(100.0), measured(100.0)],
                vec![measured(95.0), measured(85.0)],
            ],
            [
                vec![measured(100.0), measured(100.0)],
                vec![measured(89.0), measured(89.0)],
            ],
            [
                vec![measured(100.0), measured(100.0)],
                vec![measured(120.0), measured(130.0)],
            ],
        ];
        let found = regressions(&list, &figures);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].starts_with("W5 by 11.0 %"), "{found:?}");
    }
}
