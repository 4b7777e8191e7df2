//! The Faktura host: runs the invoicing component on wasmtime and supplies its imports.
//!
//! It knows HTTP, redb, PDF drawing and mail, and nothing of invoices: every business rule
//! lives in the component. One fresh component instance serves each request.

pub mod admin;
pub use store::backend::StartUpTurn;
mod bindings;
mod deliveries;
mod engine;
mod guest_log;
#[cfg(test)]
mod layers;
mod mail;
mod metrics;
mod operations;
mod outbound;
mod pdf;
mod postgres;
mod ratelimit;
mod server;
mod state;
mod store;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

pub use bindings::exports::faktura::service::admin::CheckReport;
pub use engine::{Limits, Runtime, check_component as engine_check_component};
pub use faktura_providers::outbox::{DeliveryState, OutboxEntry, list as list_outbox};
pub use mail::{MailConfig, deliver_once as deliver_outbox, entries as outbox_entries};
pub use server::{Server, serve};
pub use store::transfer::Moved;

/// Writes the whole store `options` name (its redb file, or PostgreSQL with `store`) to
/// `path` in key order, from one snapshot. A redb file in use by a running server cannot
/// be opened: stop it first.
pub async fn export_store(options: &Options, path: &std::path::Path) -> anyhow::Result<Moved> {
    let db = open_existing_store(options, "export")?;
    store::transfer::export(db.as_ref(), path).await
}

/// Reads an export (or a backup) into the empty store `options` names. The file is
/// checked whole (framing, count, checksum) before the store is opened or anything is
/// written.
pub async fn import_store(options: &Options, path: &std::path::Path) -> anyhow::Result<Moved> {
    let export = store::transfer::verify(path)?;
    if options.store.is_none() && admin::serving(&options.data_dir).await {
        anyhow::bail!(
            "a server is running on {}: stop it, or choose a data directory no server uses",
            options.data_dir.display()
        );
    }
    prepare_data_dir(&options.data_dir)?;
    let db = state::open_store(options)?;
    store::transfer::import(db.as_ref(), &export).await
}

/// Writes a backup of the store `options` name to `path`: through the admin socket of
/// the server running on the data directory, else from the store itself. Either way it
/// is an export read from one snapshot. The file appears whole or not at all: it is
/// written beside `path`, synced, checked (framing, count, checksum) and renamed over it.
pub async fn backup_store(options: &Options, path: &Path) -> anyhow::Result<Moved> {
    write_backup_file(path, async |file| {
        match admin::request_backup(&options.data_dir, file).await {
            Some(streamed) => streamed,
            None => {
                let db = open_existing_store(options, "back up")?;
                store::transfer::write_export(db.as_ref(), file).await?;
                Ok(())
            }
        }
    })
    .await
}

/// The consistency check of the store `options` name (the component's `check`): through
/// the admin socket of the server running on the data directory, else on the store
/// itself.
pub async fn check_store(options: &Options) -> anyhow::Result<CheckReport> {
    if let Some(report) = admin::request_check(&options.data_dir).await {
        return report;
    }
    store_exists(options, "check")?;
    engine::check_component(&options.component)?;
    Runtime::new(options)?.check().await
}

/// The store `options` name, which must exist: `what` says what it is opened for.
fn open_existing_store(options: &Options, what: &str) -> anyhow::Result<Box<dyn store::Backend>> {
    store_exists(options, what)?;
    state::open_store(options)
}

/// Ok when `options` name a PostgreSQL store or a data directory that has its redb file:
/// opening a directory without one would make an empty store only to `what` it.
fn store_exists(options: &Options, what: &str) -> anyhow::Result<()> {
    if options.store.is_none() && !options.db_path().exists() {
        anyhow::bail!(
            "there is no store at {} to {what}",
            options.db_path().display()
        );
    }
    Ok(())
}

/// Makes `path` the backup `write` writes, or leaves it as it was: the file is written
/// under a temporary name beside it, synced, checked whole (framing, count, checksum),
/// renamed over `path`, and the directory synced so that the rename lasts.
async fn write_backup_file(
    path: &Path,
    write: impl AsyncFnOnce(&mut tokio::fs::File) -> anyhow::Result<()>,
) -> anyhow::Result<Moved> {
    use anyhow::Context as _;
    let name = path
        .file_name()
        .with_context(|| format!("{} names no file", path.display()))?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
        _ => PathBuf::from("."),
    };
    let tmp = dir.join(format!(
        ".{}.tmp-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let written = async {
        // The owner's only, like the data directory: it holds every account's documents
        // and key hashes.
        let mut file = tokio::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)
            .await
            .with_context(|| format!("creating {}", tmp.display()))?;
        write(&mut file).await?;
        file.sync_all()
            .await
            .context("writing the backup to disk")?;
        drop(file);
        let moved = store::transfer::verify(&tmp)
            .context("the backup written is cut short or damaged")?
            .moved;
        std::fs::rename(&tmp, path)
            .with_context(|| format!("renaming {} to {}", tmp.display(), path.display()))?;
        std::fs::File::open(&dir)?.sync_all()?;
        anyhow::Ok(moved)
    }
    .await;
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// Runs the store conformance suite (`store/conformance.rs`) on the store `options` name,
/// opened as `faktura serve` opens it; the error names every check that failed. It writes
/// and removes keys of its own: for a test's store, never one that serves.
#[doc(hidden)]
pub async fn store_conformance(options: &Options) -> anyhow::Result<()> {
    use store::conformance::Writers;
    prepare_data_dir(&options.data_dir)?;
    let db = state::open_store(options)?;
    let writers = match options.store.as_deref().map(str::trim) {
        None | Some("") => Writers::TakeTurns,
        Some(_) => Writers::SideBySide,
    };
    store::conformance::run(db.as_ref(), writers).await
}

/// What `faktura serve` and the admin commands are given.
#[derive(Debug, Clone)]
pub struct Options {
    /// The data directory: `faktura.redb`, `outbox/`, `cache/`.
    pub data_dir: PathBuf,
    /// The component file to run.
    pub component: PathBuf,
    /// Where compiled components are cached; default `data_dir/cache`.
    pub cache_dir: Option<PathBuf>,
    /// Postal print queue; postal dispatch is off without it.
    pub postal: Option<PathBuf>,
    /// SMTP server URL; without it mail stays in the outbox.
    pub smtp: Option<String>,
    /// Requests per account and 15-minute window; unlimited without.
    pub rate_limit: Option<u32>,
    /// A PostgreSQL URL (`postgres://…`) to store in instead of `data_dir/faktura.redb`.
    pub store: Option<String>,
    /// Where `/metrics`, `/healthz` and `/readyz` are served (port 0 picks a free one);
    /// nowhere without it.
    pub metrics: Option<SocketAddr>,
    /// Accounts get test clocks (`/api/test-clock`) that move their time forward.
    pub test_clock: bool,
    /// Webhooks may reach addresses of the private network (tests, closed networks).
    pub webhook_allow_private: bool,
    pub limits: Limits,
}

impl Options {
    pub fn new(data_dir: impl Into<PathBuf>, component: impl Into<PathBuf>) -> Options {
        Options {
            data_dir: data_dir.into(),
            component: component.into(),
            cache_dir: None,
            postal: None,
            smtp: None,
            rate_limit: None,
            store: None,
            metrics: None,
            test_clock: false,
            webhook_allow_private: false,
            limits: Limits::default(),
        }
    }

    /// The environment of the component: the switches of its business rules.
    pub(crate) fn component_env(&self) -> Vec<(String, String)> {
        // The host sends webhook deliveries itself (`deliveries`).
        let mut env = vec![("FAKTURA_HOST_DELIVERS".to_owned(), "1".to_owned())];
        if self.test_clock {
            env.push(("FAKTURA_TEST_CLOCK".to_owned(), "1".to_owned()));
        }
        // The component refuses a URL naming a private address literally; the host, one
        // resolving to it. The switch lifts both.
        if self.webhook_allow_private {
            env.push(("FAKTURA_WEBHOOK_ALLOW_PRIVATE".to_owned(), "1".to_owned()));
        }
        env
    }

    fn db_path(&self) -> PathBuf {
        self.data_dir.join("faktura.redb")
    }

    /// The durable mail outbox.
    pub fn outbox_dir(&self) -> PathBuf {
        self.data_dir.join("outbox")
    }
}

/// Creates the data directory, readable by its owner alone: it holds every account's
/// documents, key hashes and queued mail. An existing directory keeps its mode.
fn prepare_data_dir(dir: &Path) -> anyhow::Result<()> {
    use anyhow::Context as _;
    use std::os::unix::fs::DirBuilderExt as _;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .with_context(|| format!("creating the data directory {}", dir.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    #[test]
    fn a_new_data_directory_is_its_owners_alone() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("a/data");
        super::prepare_data_dir(&dir).unwrap();
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        // Again on the existing directory: nothing changes, nothing fails.
        super::prepare_data_dir(&dir).unwrap();
    }
}
