//! `BENCH_STORE=postgres`: W1, W2 and W3 on PostgreSQL beside redb, side by side in one
//! run, each on three setups in turn: redb with one host, PostgreSQL with one host, and
//! PostgreSQL with two hosts on the same store, wrk's two threads (16 connections each)
//! on one host each.
//!
//! The data set is seeded once, on redb through the API as the main run seeds it, and
//! moved to a PostgreSQL server of the harness's own (the `postgres` module) with
//! `faktura export` and `faktura import`: both stores start with the same keys and
//! values, so the same W1 sample reads the same invoices on both. W2 creates drafts on
//! each setup and W3 completes those of its own setup. Ids that a PostgreSQL transaction
//! took and did not commit are gaps, so W3's drafts are the ids between two probe drafts
//! that answer.
//!
//! Beside each figure goes the CPU time that the database (every process of the
//! PostgreSQL server), the hosts and wrk used during it, from /proc/<pid>/stat, per
//! request and as requests per core: the capacity model. On a machine of few cores all of
//! them share the cores, so the rates are what they reached together, and the CPU time
//! per request is what says how the work would spread over machines of their own.
//!
//! A 503 (a write that kept colliding, or a commit whose outcome is unknown) is counted
//! and reported, not a failure; any other answer but 2xx fails the run.

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};

use crate::busy;
use crate::client::{self, Call, Conn};
use crate::host::{self, Binary, KEY, Proc};
use crate::postgres::{self, Server};
use crate::workloads::{self, Workload};
use crate::wrk::{Figures, Load};
use crate::{Config, ms};

/// What the section adds to the report: its markdown and the measurements that failed.
pub(crate) struct Section {
    pub(crate) markdown: String,
    pub(crate) failures: Vec<String>,
}

/// One way of serving the store: its hosts and whether they share a PostgreSQL server.
struct Setup<'a> {
    store: &'static str,
    hosts: Vec<(&'a Proc, SocketAddr)>,
    postgres: bool,
}

impl Setup<'_> {
    fn addrs(&self) -> Vec<SocketAddr> {
        self.hosts.iter().map(|(_, a)| *a).collect()
    }

    fn name(&self) -> String {
        let n = self.hosts.len();
        format!("{}, {n} host{}", self.store, if n == 1 { "" } else { "s" })
    }
}

/// CPU time so far, in clock ticks.
struct Cpu {
    /// The PostgreSQL server's processes; None on redb, whose store runs in the host.
    db: Option<u64>,
    /// Each of the setup's hosts.
    hosts: Vec<u64>,
    /// wrk: the harness's children that exited.
    wrk: u64,
    /// Every process of the machine.
    machine: u64,
}

impl Cpu {
    fn now(setup: &Setup, server: &Server) -> anyhow::Result<Cpu> {
        let mut hosts = Vec::new();
        for (proc, _) in &setup.hosts {
            hosts.push(busy::process(proc.id()).context("a host is gone")?.own);
        }
        Ok(Cpu {
            db: if setup.postgres {
                Some(server.cpu_ticks()?)
            } else {
                None
            },
            hosts,
            wrk: busy::process(std::process::id())
                .context("the harness's /proc/self/stat")?
                .waited,
            machine: busy::machine().context("/proc/stat")?.0,
        })
    }
}

/// One measurement and the CPU seconds each side used during it.
struct Measured {
    f: Figures,
    wall: f64,
    db: Option<f64>,
    /// All hosts together.
    hosts: f64,
    /// Each host's share of `hosts`, 0 to 1.
    shares: Vec<f64>,
    wrk: f64,
    /// What the rest of the machine used: the harness itself, and work that is not the
    /// benchmark's.
    other: f64,
}

impl Measured {
    /// Milliseconds of CPU per request.
    fn per_request(&self, secs: f64) -> String {
        if self.f.count == 0 {
            return "–".into();
        }
        format!("{:.2} ms", secs * 1000.0 / self.f.count as f64)
    }

    /// Requests per CPU second: what one core kept busy with this side alone carries.
    fn per_core(&self, secs: f64) -> String {
        if secs <= 0.0 {
            return "–".into();
        }
        format!("{:.0}", self.f.count as f64 / secs)
    }

    /// The 503 answers, and their share of all answers when there are any.
    fn unavailable(&self) -> String {
        match self.f.unavailable {
            0 => "0".into(),
            n => format!(
                "{n} ({:.0} %)",
                n as f64 * 100.0 / self.f.count.max(1) as f64
            ),
        }
    }

    /// The cores each side kept busy on average: database + hosts + wrk + other.
    fn cores(&self) -> String {
        let share = |secs: f64| format!("{:.2}", secs / self.wall);
        let db = self.db.unwrap_or(0.0);
        format!(
            "{} + {} + {} + {} = {}",
            self.db.map_or("–".into(), share),
            share(self.hosts),
            share(self.wrk),
            share(self.other),
            share(db + self.hosts + self.wrk + self.other)
        )
    }
}

/// Runs `workload` on `setup` and reads the CPU time around it.
fn measure(
    cfg: &Config,
    dir: &Path,
    setup: &Setup,
    workload: &Workload,
    server: &Server,
    tick: f64,
) -> anyhow::Result<Measured> {
    let addrs = setup.addrs();
    let script = workload.on_hosts(&addrs).script_in(dir)?;
    let before = Cpu::now(setup, server)?;
    let started = Instant::now();
    let f = workloads::measure(cfg, addrs[0], &script)?;
    let wall = started.elapsed().as_secs_f64();
    let after = Cpu::now(setup, server)?;
    let secs = |a: u64, b: u64| a.saturating_sub(b) as f64 / tick;
    let each: Vec<f64> = after
        .hosts
        .iter()
        .zip(&before.hosts)
        .map(|(a, b)| secs(*a, *b))
        .collect();
    let hosts: f64 = each.iter().sum();
    let db = after.db.zip(before.db).map(|(a, b)| secs(a, b));
    let wrk = secs(after.wrk, before.wrk);
    let m = Measured {
        f,
        wall,
        db,
        hosts,
        shares: each
            .iter()
            .map(|h| h / hosts.max(f64::MIN_POSITIVE))
            .collect(),
        wrk,
        other: (secs(after.machine, before.machine) - db.unwrap_or(0.0) - hosts - wrk).max(0.0),
    };
    eprintln!(
        "{} on {}: {:.0} req/s, p50 {}, p99 {}, {} 503s, CPU per request: database {}, hosts {} ({})",
        workload.short,
        setup.name(),
        f.per_sec,
        ms(f.p50_ms),
        ms(f.p99_ms),
        f.unavailable,
        m.db.map_or("–".into(), |db| m.per_request(db)),
        m.per_request(m.hosts),
        m.shares
            .iter()
            .map(|s| format!("{:.0} %", s * 100.0))
            .collect::<Vec<_>>()
            .join(" + ")
    );
    Ok(m)
}

/// The invoices among `lo..=hi` that the host at `addr` has.
fn existing(
    rt: &tokio::runtime::Runtime,
    addr: SocketAddr,
    lo: u64,
    hi: u64,
) -> anyhow::Result<Vec<u64>> {
    let next = Arc::new(AtomicU64::new(lo));
    let found = Arc::new(Mutex::new(Vec::new()));
    rt.block_on(async {
        let mut tasks = Vec::new();
        for _ in 0..8 {
            let (next, found) = (next.clone(), found.clone());
            tasks.push(tokio::spawn(async move {
                let mut conn = Conn::open(addr, KEY).await?;
                loop {
                    let id = next.fetch_add(1, Ordering::Relaxed);
                    if id > hi {
                        return anyhow::Ok(());
                    }
                    let path = format!("/api/invoices/{id}");
                    match conn.call(&Call::get(path.as_str())).await? {
                        (200, _) => found.lock().expect("found").push(id),
                        (404, _) => {}
                        (status, body) => bail!("GET {path} answered {status}: {body}"),
                    }
                }
            }));
        }
        for task in tasks {
            task.await??;
        }
        anyhow::Ok(())
    })?;
    let mut ids = std::mem::take(&mut *found.lock().expect("found"));
    ids.sort_unstable();
    Ok(ids)
}

/// Creates one draft for `client` on the host at `addr` and returns its id, as
/// [`workloads::create_draft`] does, sending it again while it answers 503: right after
/// W2, requests that kept colliding may still be running their retries.
fn probe(rt: &tokio::runtime::Runtime, addr: SocketAddr, client: u64) -> anyhow::Result<u64> {
    let call = Call::with(
        "POST",
        "/api/invoices",
        format!(
            "<invoice><client_id>{client}</client_id><invoice-items>{}</invoice-items></invoice>",
            workloads::ITEM
        ),
    );
    for _ in 0..50 {
        let reply = rt.block_on(client::once(addr, KEY, &call))?;
        match reply.status {
            503 => std::thread::sleep(Duration::from_millis(100)),
            200..300 => return client::id_of(&reply.body),
            status => bail!("POST /api/invoices answered {status}: {}", reply.body),
        }
    }
    bail!("POST /api/invoices answered 503 for 5 s")
}

/// One line of the section's table.
struct Row {
    workload: &'static str,
    setup: String,
    m: Measured,
}

/// Seeds, moves the data set to PostgreSQL, measures W1, W2 and W3 on each setup and
/// renders the section; the servers it started are stopped when it returns.
pub(crate) fn run(
    cfg: &Config,
    faktura: &Binary,
    rt: &tokio::runtime::Runtime,
) -> anyhow::Result<Section> {
    let dir = cfg.out.join("stores");
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    std::fs::create_dir_all(&dir)?;
    let limit = Duration::from_secs(600);
    let tick = busy::ticks_per_sec();
    eprintln!("PostgreSQL beside redb: seeding on redb");

    // The data set on redb, then moved to PostgreSQL unchanged.
    let redb = dir.join("redb");
    let log = |name: &str| cfg.out.join(format!("faktura-{name}.log"));
    let (seeder, addr, _) = faktura.start_timed(&redb, &log("stores-seed"), rt, limit)?;
    let seeded = workloads::seed(cfg, rt, addr)?;
    seeder.stop()?;
    let export = dir.join("store.export");
    faktura.export(&redb, &export)?;
    let server = Server::start(&dir.join("postgres"))?;
    let url = server.url();
    let t = Instant::now();
    faktura.import(&dir.join("host-1"), &url, &export)?;
    eprintln!(
        "moved to PostgreSQL with faktura export and import ({:.1} s for the import)",
        t.elapsed().as_secs_f64()
    );
    std::fs::remove_file(&export)?;

    // The three hosts at once: redb's, and two on the PostgreSQL store.
    let started = Instant::now();
    let mut procs = Vec::new();
    for (data, store, name) in [
        (redb.clone(), None, "stores-redb"),
        (dir.join("host-1"), Some(url.as_str()), "postgres-1"),
        (dir.join("host-2"), Some(url.as_str()), "postgres-2"),
    ] {
        let addr = host::free_addr()?;
        procs.push((faktura.start_on(&data, store, addr, &log(name))?, addr));
    }
    for (_, addr) in &procs {
        rt.block_on(host::up(*addr, started, limit))?;
    }
    let setups = [
        Setup {
            store: "redb",
            hosts: vec![(&procs[0].0, procs[0].1)],
            postgres: false,
        },
        Setup {
            store: "PostgreSQL",
            hosts: vec![(&procs[1].0, procs[1].1)],
            postgres: true,
        },
        Setup {
            store: "PostgreSQL",
            hosts: vec![(&procs[1].0, procs[1].1), (&procs[2].0, procs[2].1)],
            postgres: true,
        },
    ];

    // A second of W1 on every host first, unreported, so that no measurement pays for a
    // host's first requests (its pool's connections, the server's first reads).
    let w1 = workloads::w1(&seeded.sample());
    for setup in [&setups[0], &setups[2]] {
        let script = w1.on_hosts(&setup.addrs()).script_in(&dir)?;
        Load {
            url: format!("http://{}", setup.hosts[0].1),
            seconds: 1,
            connections: cfg.connections,
            key: None,
            script: Some(&script),
        }
        .run()?;
    }
    let mut rows = Vec::new();
    for setup in &setups {
        let m = measure(cfg, &dir, setup, &w1, &server, tick)?;
        rows.push(Row {
            workload: w1.label,
            setup: setup.name(),
            m,
        });
    }
    // W2's drafts on each setup, for its W3: the ids between two probe drafts.
    let w2 = workloads::w2(&seeded.clients);
    let mut pools = Vec::new();
    for setup in &setups {
        let addr = setup.hosts[0].1;
        let before = probe(rt, addr, seeded.clients[0])?;
        let m = measure(cfg, &dir, setup, &w2, &server, tick)?;
        let after = probe(rt, addr, seeded.clients[0])?;
        pools.push(existing(rt, addr, before + 1, after.saturating_sub(1))?);
        rows.push(Row {
            workload: w2.label,
            setup: setup.name(),
            m,
        });
    }
    let mut failures = Vec::new();
    for (setup, pool) in setups.iter().zip(&pools) {
        if pool.len() < 2 {
            bail!(
                "W2 on {} created {} drafts, too few for W3",
                setup.name(),
                pool.len()
            );
        }
        let w3 = workloads::completions_of(pool);
        let m = measure(cfg, &dir, setup, &w3, &server, tick)?;
        // The count includes the GET each thread sends past the pool's end as it stops.
        if m.f.count >= pool.len() as u64 {
            failures.push(format!(
                "W3 on {} ran out of drafts: {} requests, {} drafts",
                setup.name(),
                m.f.count,
                pool.len()
            ));
        }
        rows.push(Row {
            workload: w3.label,
            setup: setup.name(),
            m,
        });
    }
    let settings = postgres::SETTINGS
        .iter()
        .map(|(name, _)| Ok(format!("{name}={}", server.show(name)?)))
        .collect::<anyhow::Result<Vec<_>>>()?
        .join(", ");
    let version = server.show("server_version")?;
    for (proc, _) in procs {
        proc.stop()?;
    }
    drop(server);

    for row in &rows {
        let f = &row.m.f;
        if f.count == 0 || f.errors > f.unavailable {
            failures.push(format!(
                "{} on {}: {} failed of {} requests ({} of them 503)",
                row.workload, row.setup, f.errors, f.count, f.unavailable
            ));
        }
    }
    Ok(Section {
        markdown: render(cfg, &rows, &version, &settings),
        failures,
    })
}

fn render(cfg: &Config, rows: &[Row], version: &str, settings: &str) -> String {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let mut s = String::new();
    let _ = writeln!(
        s,
        "## PostgreSQL beside redb\n\n\
         PostgreSQL {version} on 127.0.0.1 ({settings}); the same {} invoices seeded on \
         redb and moved with `faktura export` and `faktura import`. Two hosts: two `faktura \
         serve` on the one store, wrk's two threads on one host each. CPU time from \
         /proc/<pid>/stat: database = every PostgreSQL server process, hosts = the `faktura \
         serve` processes measured (redb's store runs inside its host), wrk = the load \
         generator, other = the rest of the machine (/proc/stat).\n",
        cfg.invoices
    );
    let _ = writeln!(
        s,
        "| workload | store, hosts | rate | p50 | p99 | 503 | database CPU / request | host CPU / request | req/s per database core | req/s per host core | cores busy: database + hosts + wrk + other |\n\
         |---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"
    );
    for r in rows {
        let m = &r.m;
        let _ = writeln!(
            s,
            "| {} | {} | {:.0} req/s | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.workload,
            r.setup,
            m.f.per_sec,
            ms(m.f.p50_ms),
            ms(m.f.p99_ms),
            m.unavailable(),
            m.db.map_or("–".into(), |db| m.per_request(db)),
            m.per_request(m.hosts),
            m.db.map_or("–".into(), |db| m.per_core(db)),
            m.per_core(m.hosts),
            m.cores()
        );
    }
    let _ = writeln!(
        s,
        "\nCapacity model. This machine has {cores} cores, and during each measurement the \
         hosts, the PostgreSQL server and wrk share them: a rate above is what they reached \
         together, not what the database or a host would reach on cores of its own. The \
         capacity columns divide the requests by the CPU time each side used: one core \
         given only to the database carries \"req/s per database core\", one given only to \
         hosts \"req/s per host core\", at the cost per request measured here. Waits that \
         cost no CPU (the WAL flush of each commit, locks, the network) are not in them; \
         with the database on its own machine, what limits a setup is its scarcer side:\n"
    );
    let _ = writeln!(
        s,
        "| workload, PostgreSQL, 2 hosts | req/s per database core | req/s per host core | host cores per database core |\n|---|---:|---:|---:|"
    );
    for r in rows.iter().filter(|r| r.setup.ends_with("2 hosts")) {
        let m = &r.m;
        let Some(db) = m.db.filter(|db| *db > 0.0 && m.hosts > 0.0) else {
            continue;
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {:.1} |",
            r.workload,
            m.per_core(db),
            m.per_core(m.hosts),
            m.hosts / db
        );
    }
    s
}
