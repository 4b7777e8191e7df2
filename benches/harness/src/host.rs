//! The Faktura hosts under test: a `faktura` binary with its component, started on a data
//! directory and a free port, and the child processes the harness owns.

use std::fs::File;
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};

use crate::client;

/// The API key of the admin user each host creates on an empty data directory. Every
/// host gets the same one, so that a copy of a seeded directory accepts it too.
pub(crate) const KEY: &str = "bench-key-0123456789abcdef";

/// A child process killed when dropped.
pub(crate) struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Proc {
    pub(crate) fn id(&self) -> u32 {
        self.0.id()
    }

    /// Peak resident set size in MiB (VmHWM).
    pub(crate) fn peak_rss_mib(&self) -> Option<f64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.0.id())).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
        let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kib / 1024.0)
    }

    /// Starts a new peak: the next `peak_rss_mib` reports the peak from now on.
    pub(crate) fn reset_peak_rss(&self) {
        let _ = std::fs::write(format!("/proc/{}/clear_refs", self.0.id()), "5");
    }

    /// SIGTERM, then wait for the exit.
    pub(crate) fn stop(mut self) -> anyhow::Result<()> {
        Command::new("kill")
            .arg("-TERM")
            .arg(self.0.id().to_string())
            .status()?;
        self.0.wait()?;
        Ok(())
    }
}

pub(crate) fn free_addr() -> anyhow::Result<SocketAddr> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?)
}

/// Starts `cmd` with its output in `log`.
pub(crate) fn spawn(cmd: &mut Command, log: &Path) -> anyhow::Result<Proc> {
    let log = File::create(log)?;
    let child = cmd
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        .spawn()
        .with_context(|| format!("starting {cmd:?}"))?;
    Ok(Proc(child))
}

/// A host binary and the component it runs.
pub(crate) struct Binary {
    pub(crate) faktura: PathBuf,
    pub(crate) component: PathBuf,
}

impl Binary {
    /// The binary with the `faktura.wasm` beside it, which is where the host looks by
    /// default. The harness passes it with `--component` all the same, so that which
    /// component a host ran never depends on that default.
    pub(crate) fn beside(faktura: &Path) -> anyhow::Result<Binary> {
        let binary = Binary {
            faktura: faktura.to_path_buf(),
            component: faktura.with_file_name("faktura.wasm"),
        };
        for path in [&binary.faktura, &binary.component] {
            if !path.is_file() {
                bail!("{} missing", path.display());
            }
        }
        Ok(binary)
    }

    /// Starts the host on `data` at `addr`, its output in `log`; it answers once
    /// [`up`] returns.
    pub(crate) fn start(&self, data: &Path, addr: SocketAddr, log: &Path) -> anyhow::Result<Proc> {
        self.start_on(data, None, addr, log)
    }

    /// [`Binary::start`] on the PostgreSQL store `store` (a URL) when given: `data` then
    /// holds only the host's compiled-component cache and admin socket.
    pub(crate) fn start_on(
        &self,
        data: &Path,
        store: Option<&str>,
        addr: SocketAddr,
        log: &Path,
    ) -> anyhow::Result<Proc> {
        let mut cmd = self.serve(data, addr);
        if let Some(store) = store {
            cmd.arg("--store").arg(store);
        }
        spawn(&mut cmd, log)
    }

    /// [`Binary::start`] with the further options `args` of `faktura serve`.
    pub(crate) fn start_with(
        &self,
        data: &Path,
        addr: SocketAddr,
        log: &Path,
        args: &[&str],
    ) -> anyhow::Result<Proc> {
        spawn(self.serve(data, addr).args(args), log)
    }

    /// `faktura serve` on `data` at `addr` with the bench's key and component.
    fn serve(&self, data: &Path, addr: SocketAddr) -> Command {
        let mut cmd = Command::new(&self.faktura);
        cmd.arg("serve")
            .arg("--listen")
            .arg(addr.to_string())
            .arg("--data")
            .arg(data)
            .arg("--component")
            .arg(&self.component)
            .arg("--bootstrap-key")
            .arg(KEY)
            .env("FAKTURA_LOG", "warn");
        cmd
    }

    /// Writes the whole store of `data` (its redb file; no host may serve it meanwhile) to
    /// `to`.
    pub(crate) fn export(&self, data: &Path, to: &Path) -> anyhow::Result<()> {
        self.run_ok(
            Command::new(&self.faktura)
                .arg("--data")
                .arg(data)
                .arg("export")
                .arg("--to")
                .arg(to),
        )
    }

    /// Reads the export `from` into the empty PostgreSQL store `store` (a URL).
    pub(crate) fn import(&self, data: &Path, store: &str, from: &Path) -> anyhow::Result<()> {
        self.run_ok(
            Command::new(&self.faktura)
                .arg("--data")
                .arg(data)
                .arg("--store")
                .arg(store)
                .arg("import")
                .arg("--from")
                .arg(from),
        )
    }

    fn run_ok(&self, cmd: &mut Command) -> anyhow::Result<()> {
        let out = cmd
            .output()
            .with_context(|| format!("running {}", self.faktura.display()))?;
        if !out.status.success() {
            bail!(
                "{cmd:?} failed: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        Ok(())
    }

    /// Creates an account with an admin user on `data` (through the admin socket of the
    /// host serving it) and returns the user's API key.
    pub(crate) fn create_account(&self, data: &Path, name: &str) -> anyhow::Result<String> {
        let out = Command::new(&self.faktura)
            .arg("--data")
            .arg(data)
            .arg("account")
            .arg("create")
            .arg(name)
            .output()
            .with_context(|| format!("running {} account create", self.faktura.display()))?;
        let text = String::from_utf8_lossy(&out.stdout);
        match text
            .lines()
            .find_map(|l| l.strip_prefix("API key (shown once): "))
        {
            Some(key) if out.status.success() => Ok(key.trim().to_owned()),
            _ => bail!(
                "{} account create {name} gave no API key: {text}{}",
                self.faktura.display(),
                String::from_utf8_lossy(&out.stderr)
            ),
        }
    }

    /// Starts the host on a free port and waits for its first 200: the process, its
    /// address and the time from start to that answer.
    pub(crate) fn start_timed(
        &self,
        data: &Path,
        log: &Path,
        rt: &tokio::runtime::Runtime,
        limit: Duration,
    ) -> anyhow::Result<(Proc, SocketAddr, Duration)> {
        let addr = free_addr()?;
        let started = Instant::now();
        let host = self.start(data, addr, log)?;
        let up = rt.block_on(up(addr, started, limit))?;
        Ok((host, addr, up))
    }
}

/// Waits until the host at `addr` answers an authenticated request with 200: the time
/// from `since` to that answer.
pub(crate) async fn up(
    addr: SocketAddr,
    since: Instant,
    limit: Duration,
) -> anyhow::Result<Duration> {
    client::first_ok(addr, KEY, "/api/invoices?per_page=1", since, limit).await
}
