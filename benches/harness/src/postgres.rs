//! The PostgreSQL server `BENCH_STORE=postgres` measures on: one of its own, its data in a
//! directory of target/bench, listening on 127.0.0.1 at a free port, stopped when dropped.
//!
//! Its settings keep every acknowledged write durable, as a production server's must:
//! `fsync` and `synchronous_commit` stay on (PostgreSQL's defaults), so each committing
//! write waits for its WAL flush. Only memory and checkpoint spacing are raised, which
//! changes no guarantee: [`SETTINGS`].
//!
//! PostgreSQL refuses to run as root: as root, its programs run as the `postgres` user
//! (`runuser`), which owns the data directory.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, bail};

use crate::busy;

/// The server's settings beyond initdb's defaults, as `-c` options and in the report.
pub(crate) const SETTINGS: &[(&str, &str)] = &[
    ("fsync", "on"),
    ("synchronous_commit", "on"),
    ("shared_buffers", "256MB"),
    ("max_wal_size", "4GB"),
    ("checkpoint_timeout", "30min"),
    // Two hosts hold up to 32 pooled connections each.
    ("max_connections", "100"),
];

/// The PostgreSQL installations looked for, newest last.
const INSTALLED: &[&str] = &[
    "/usr/lib/postgresql/15/bin",
    "/usr/lib/postgresql/16/bin",
    "/usr/lib/postgresql/17/bin",
];

/// The database the store lives in.
const DATABASE: &str = "faktura";

/// A running server; stopped (fast shutdown) when dropped.
pub(crate) struct Server {
    bin: PathBuf,
    /// Holds the data directory, the socket and the log.
    dir: PathBuf,
    port: u16,
    /// The postmaster, parent of every server process.
    postmaster: u32,
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.trim_ascii() == b"0")
}

fn run_ok(cmd: &mut Command) -> anyhow::Result<String> {
    let out = cmd.output().with_context(|| format!("running {cmd:?}"))?;
    if !out.status.success() {
        bail!(
            "{cmd:?} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

impl Server {
    /// Makes a new server in `dir` (whatever was there is removed, a server left running
    /// there by an interrupted run stopped first) and starts it.
    pub(crate) fn start(dir: &Path) -> anyhow::Result<Server> {
        let bin = INSTALLED
            .iter()
            .map(PathBuf::from)
            .find(|b| b.join("initdb").exists())
            .context(
                "BENCH_STORE=postgres needs PostgreSQL (apt-get install postgresql-15; \
                 `make bench BENCH_STORE=postgres` installs it)",
            )?;
        let port = crate::host::free_addr()?.port();
        let mut server = Server {
            bin,
            dir: dir.to_path_buf(),
            port,
            postmaster: 0,
        };
        if server.data().join("postmaster.pid").exists() {
            let _ = server
                .command("pg_ctl")
                .arg("-D")
                .arg(server.data())
                .args(["-m", "immediate", "stop"])
                .output();
        }
        if dir.exists() {
            std::fs::remove_dir_all(dir)?;
        }
        std::fs::create_dir_all(dir)?;
        if is_root() {
            run_ok(Command::new("chown").arg("postgres").arg(dir))
                .context("the postgres user owns the server's directory")?;
        }
        run_ok(server.command("initdb").arg("-D").arg(server.data()).args([
            "-U",
            "faktura",
            "--auth=trust",
            "-E",
            "UTF8",
        ]))?;
        let mut options = format!(
            "-p {port} -k {} -c listen_addresses=127.0.0.1",
            dir.display()
        );
        for (name, value) in SETTINGS {
            options.push_str(&format!(" -c {name}={value}"));
        }
        run_ok(
            server
                .command("pg_ctl")
                .arg("-D")
                .arg(server.data())
                .arg("-l")
                .arg(dir.join("postgres.log"))
                .arg("-o")
                .arg(options)
                .args(["-w", "start"]),
        )?;
        let pid = std::fs::read_to_string(server.data().join("postmaster.pid"))?;
        server.postmaster = pid
            .lines()
            .next()
            .and_then(|l| l.trim().parse().ok())
            .context("postmaster.pid names no pid")?;
        run_ok(
            server
                .command("createdb")
                .args(["-h", "127.0.0.1", "-p", &port.to_string(), "-U", "faktura"])
                .arg(DATABASE),
        )?;
        Ok(server)
    }

    /// One of PostgreSQL's programs, as the `postgres` user when this is root.
    fn command(&self, program: &str) -> Command {
        let program = self.bin.join(program);
        if is_root() {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(program);
            c
        } else {
            Command::new(program)
        }
    }

    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    /// The store's URL, for `faktura --store`.
    pub(crate) fn url(&self) -> String {
        format!("postgres://faktura@127.0.0.1:{}/{DATABASE}", self.port)
    }

    /// `SHOW name` on the server.
    pub(crate) fn show(&self, name: &str) -> anyhow::Result<String> {
        run_ok(
            self.command("psql")
                .args(["-h", "127.0.0.1", "-p", &self.port.to_string()])
                .args(["-U", "faktura", "-d", DATABASE, "-X", "-A", "-t", "-c"])
                .arg(format!("SHOW {name}")),
        )
    }

    /// The CPU time of the whole server so far, in clock ticks: the postmaster, every
    /// process it started that runs (backends, WAL writer, checkpointer, …), and those
    /// that exited, which the postmaster waited for.
    pub(crate) fn cpu_ticks(&self) -> anyhow::Result<u64> {
        let postmaster = busy::process(self.postmaster).context("the postmaster is gone")?;
        let mut ticks = postmaster.own + postmaster.waited;
        for entry in std::fs::read_dir("/proc")? {
            let Some(pid) = entry?
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            // A process that exits between the listing and the read counts in the
            // postmaster's waited-for time by the next reading.
            if let Some(p) = busy::process(pid)
                && p.parent == self.postmaster
            {
                ticks += p.own;
            }
        }
        Ok(ticks)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self
            .command("pg_ctl")
            .arg("-D")
            .arg(self.data())
            .args(["-m", "fast", "stop"])
            .output();
    }
}
