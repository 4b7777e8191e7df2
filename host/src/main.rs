//! `faktura`: serve the invoicing API, or manage accounts, users and the store of a data
//! directory.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use faktura_host::{Options, Runtime, admin};

#[derive(Parser)]
#[command(name = "faktura", version, about = "Self-hosted invoicing service")]
struct Cli {
    /// The data directory (database, outbox, compiled-component cache).
    #[arg(long, global = true, env = "FAKTURA_DATA", default_value = "./data")]
    data: PathBuf,
    /// The component file; default: faktura.wasm next to this executable.
    #[arg(long, global = true, env = "FAKTURA_COMPONENT")]
    component: Option<PathBuf>,
    /// Store in PostgreSQL instead of the data directory's redb file:
    /// postgres://user:password@host:5432/db (several hosts with
    /// target_session_attrs=read-write follow a failover).
    #[arg(long, global = true, env = "FAKTURA_STORE", hide_env_values = true)]
    store: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the API.
    Serve {
        #[arg(long, env = "FAKTURA_LISTEN", default_value = "127.0.0.1:8080")]
        listen: SocketAddr,
        /// Use this API key for the admin user created on an empty data directory.
        #[arg(long, env = "FAKTURA_BOOTSTRAP_KEY", hide_env_values = true)]
        bootstrap_key: Option<String>,
        /// Directory of the postal print queue; enables postal dispatch.
        #[arg(long, env = "FAKTURA_POSTAL")]
        postal: Option<PathBuf>,
        /// SMTP server for outgoing mail, e.g. smtp://127.0.0.1:2525 or
        /// smtps://user:pass@mail.example.com; without it mail stays in the outbox.
        #[arg(long, env = "FAKTURA_SMTP", hide_env_values = true)]
        smtp: Option<String>,
        /// Requests allowed per account in each 15-minute window (default: unlimited).
        #[arg(long, env = "FAKTURA_RATE_LIMIT")]
        rate_limit: Option<u32>,
        /// Serve Prometheus metrics (/metrics), /healthz and /readyz on this address, a
        /// listener apart from the API's, e.g. 127.0.0.1:9090.
        #[arg(long, env = "FAKTURA_METRICS")]
        metrics: Option<SocketAddr>,
        /// Give every account a test clock (`GET`/`PUT /api/test-clock`) that moves its
        /// time forward and makes what falls due on the way: for tests and trials, never
        /// for real books.
        #[arg(long, env = "FAKTURA_TEST_CLOCK")]
        test_clock: bool,
        /// Let webhooks reach addresses of the private network (loopback, private,
        /// link-local, ...): for tests and closed networks.
        #[arg(long, env = "FAKTURA_WEBHOOK_ALLOW_PRIVATE")]
        webhook_allow_private: bool,
        /// Seconds between two upkeep runs (recurring invoices, dunning runs, mail handed
        /// over, webhook deliveries); fractions allowed.
        #[arg(long, env = "FAKTURA_UPKEEP_EVERY", default_value_t = 15.0, value_parser = upkeep_seconds)]
        upkeep_every: f64,
    },
    /// Write the whole store (the data directory's redb file, or PostgreSQL with --store)
    /// to a file in key order, from one snapshot; stop a server on a redb file first.
    Export {
        #[arg(long)]
        to: PathBuf,
    },
    /// Read an export into an empty store (the data directory's, or PostgreSQL with
    /// --store); the file is checked whole before anything is written.
    Import {
        #[arg(long)]
        from: PathBuf,
    },
    /// Write a backup of the store to a file: streamed by the server running on the data
    /// directory (through its admin socket) while it serves, else read from the store
    /// itself; either way from one snapshot, with a checksum. The file appears whole or
    /// not at all.
    Backup {
        #[arg(long)]
        to: PathBuf,
    },
    /// Restore a backup into an empty store (the data directory's, or PostgreSQL with
    /// --store); the backup's checksum is checked before anything is written.
    Restore {
        #[arg(long)]
        from: PathBuf,
    },
    /// Check the consistency of the store (through the running server's admin socket,
    /// else on the data directory): index entries, tallied sums and counts, number claims.
    /// Exits with 1 when it finds a problem.
    Check,
    /// Inspect the mail outbox (the data directory's, or the PostgreSQL store's with
    /// --store).
    Outbox {
        #[command(subcommand)]
        command: OutboxCommand,
    },
    /// Manage accounts (through the running server's admin socket, else on the data dir).
    Account {
        #[command(subcommand)]
        command: AccountCommand,
    },
    /// Manage users (through the running server's admin socket, else on the data dir).
    User {
        #[command(subcommand)]
        command: UserCommand,
    },
}

#[derive(Subcommand)]
enum AccountCommand {
    /// Create an account with an admin user and print its API key.
    Create {
        name: String,
        /// E-mail address of the account's admin user.
        #[arg(long, default_value = "admin@localhost.localdomain")]
        email: String,
    },
}

#[derive(Subcommand)]
enum OutboxCommand {
    /// List queued, sent and failed messages with their delivery state.
    List,
    /// Try every due queued message once over SMTP, then list the outbox. For outboxes no
    /// running `faktura serve --smtp` delivers, e.g. one written by the standalone component.
    Deliver {
        /// SMTP server, e.g. smtp://127.0.0.1:2525 or smtps://user:pass@mail.example.com.
        #[arg(long, env = "FAKTURA_SMTP", hide_env_values = true)]
        smtp: String,
    },
}

#[derive(Subcommand)]
enum UserCommand {
    /// Create a user of an account and print its API key.
    Create {
        #[arg(long)]
        account: u64,
        #[arg(long)]
        email: String,
    },
    /// Revoke a user's API key; a running server refuses it from the next request on.
    Revoke {
        #[arg(long)]
        user: u64,
    },
}

fn default_component() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join("faktura.wasm")))
        .unwrap_or_else(|| PathBuf::from("faktura.wasm"))
}

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .expect("installing the SIGTERM handler");
    tokio::select! {
        _ = ctrl_c => {}
        _ = term.recv() => {}
    }
}

fn main() -> std::process::ExitCode {
    // Before any thread of the runtime allocates.
    limit_malloc_arenas();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: starting the runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// The arenas glibc's malloc may make (`M_ARENA_MAX`). By default it gives a thread that
/// finds the arenas locked a new one, up to eight per core, and each keeps what was freed
/// in it. The host's runtime and blocking threads thus held about 60 MiB more after
/// seeding than with two arenas: `make bench` at 100,000 invoices peaked at 301 MiB, and
/// at 238 MiB with `MALLOC_ARENA_MAX=2`, the workloads as fast.
const MALLOC_ARENAS: i32 = 2;

/// The arena limit the host sets: `MALLOC_ARENAS`, unless glibc was given one of its own,
/// which it has read already: `MALLOC_ARENA_MAX`, or the tunable `glibc.malloc.arena_max`
/// in `GLIBC_TUNABLES`.
fn malloc_arenas(
    arena_max: Option<std::ffi::OsString>,
    tunables: Option<std::ffi::OsString>,
) -> Option<i32> {
    let tuned = tunables.is_some_and(|t| {
        t.to_string_lossy()
            .split(':')
            .any(|setting| setting.starts_with("glibc.malloc.arena_max="))
    });
    (arena_max.is_none() && !tuned).then_some(MALLOC_ARENAS)
}

fn limit_malloc_arenas() {
    let Some(arenas) = malloc_arenas(
        std::env::var_os("MALLOC_ARENA_MAX"),
        std::env::var_os("GLIBC_TUNABLES"),
    ) else {
        return;
    };
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    let _ = arenas;
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        #[expect(
            unsafe_code,
            reason = "mallopt sets one of glibc's malloc parameters; it is called here \
                      before any other thread exists, as glibc asks"
        )]
        // SAFETY: see the reason above; M_ARENA_MAX takes any positive count.
        let set = unsafe { libc::mallopt(libc::M_ARENA_MAX, arenas) };
        if set != 1 {
            eprintln!("faktura: glibc refused M_ARENA_MAX={arenas}; malloc keeps its default");
        }
    }
}

/// The log on stderr: `FAKTURA_LOG` filters it (default `info`), `FAKTURA_LOG_FORMAT`
/// chooses text (the default) or JSON, one object per line.
fn init_log() -> anyhow::Result<()> {
    let filter = tracing_subscriber::EnvFilter::try_from_env("FAKTURA_LOG")
        .unwrap_or_else(|_| "info".into());
    let log = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match std::env::var("FAKTURA_LOG_FORMAT").as_deref() {
        Err(_) | Ok("" | "text") => log
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .init(),
        // An event's fields at the top of its object, beside its spans (the request's
        // holds `request_id`).
        Ok("json") => log.json().flatten_event(true).init(),
        Ok(other) => anyhow::bail!("FAKTURA_LOG_FORMAT is text or json, not {other:?}"),
    }
    Ok(())
}

impl Command {
    /// Whether the command runs the component, which is then checked first. The outbox
    /// commands need no component, and no database but a PostgreSQL store's; moving a
    /// store's entries needs none either, and a check through a running server runs the
    /// server's.
    fn runs_the_component(&self) -> bool {
        !matches!(
            self,
            Command::Outbox { .. }
                | Command::Export { .. }
                | Command::Import { .. }
                | Command::Backup { .. }
                | Command::Restore { .. }
                | Command::Check
        )
    }
}

async fn run() -> anyhow::Result<()> {
    init_log()?;
    let cli = Cli::parse();
    let component = cli.component.unwrap_or_else(default_component);
    let mut options = Options::new(&cli.data, component.clone());
    options.store = cli.store.clone();
    if cli.command.runs_the_component() {
        faktura_host::engine_check_component(&component)?;
    }
    match cli.command {
        Command::Serve {
            listen,
            bootstrap_key,
            postal,
            smtp,
            rate_limit,
            metrics,
            test_clock,
            webhook_allow_private,
            upkeep_every,
        } => {
            options.test_clock = test_clock;
            options.webhook_allow_private = webhook_allow_private;
            options.limits.upkeep_every = std::time::Duration::from_secs_f64(upkeep_every);
            options.postal = postal;
            options.smtp = smtp;
            options.rate_limit = rate_limit;
            options.metrics = metrics;
            serve(&options, listen, bootstrap_key).await
        }
        Command::Export { to } => {
            let moved = faktura_host::export_store(&options, &to).await?;
            print_moved("Exported", "to", &moved, &to);
            Ok(())
        }
        Command::Import { from } => {
            let moved = faktura_host::import_store(&options, &from).await?;
            print_moved("Imported", "from", &moved, &from);
            Ok(())
        }
        Command::Backup { to } => {
            let moved = faktura_host::backup_store(&options, &to).await?;
            print_moved("Backed up", "to", &moved, &to);
            Ok(())
        }
        Command::Restore { from } => {
            let moved = faktura_host::import_store(&options, &from).await?;
            print_moved("Restored", "from", &moved, &from);
            Ok(())
        }
        Command::Check => check(&options).await,
        Command::Outbox { command } => {
            if let OutboxCommand::Deliver { smtp } = command {
                faktura_host::deliver_outbox(&options, &smtp).await?;
            }
            print_outbox(&options).await
        }
        Command::Account {
            command: AccountCommand::Create { name, email },
        } => admin(&options, admin::Command::CreateAccount { name, email }).await,
        Command::User {
            command: UserCommand::Create { account, email },
        } => admin(&options, admin::Command::CreateUser { account, email }).await,
        Command::User {
            command: UserCommand::Revoke { user },
        } => admin(&options, admin::Command::RevokeUser { user }).await,
    }
}

/// `faktura serve`: starts the runtime on the store (migrating it and creating the default
/// account of an empty one first), then answers on `listen` until a shutdown signal.
async fn serve(
    options: &Options,
    listen: SocketAddr,
    bootstrap_key: Option<String>,
) -> anyhow::Result<()> {
    let runtime = Runtime::new(options)?;
    let turn = runtime.start_up_turn().await?;
    let migration = runtime.migrate().await?;
    if migration.from_version != migration.to_version {
        println!(
            "Migrated the data directory from data version {} to {} ({} API keys, kept \
             sums of {} kinds of documents rebuilt, e-invoices of {} completed \
             documents made, {} index entries written).",
            migration.from_version,
            migration.to_version,
            migration.key_entries,
            migration.tallies_rebuilt,
            migration.einvoices_made,
            migration.index_entries
        );
    }
    if let Some(key) = runtime.bootstrap(bootstrap_key.clone()).await? {
        println!(
            "Created the default account {} with an admin user.",
            key.account_id
        );
        if bootstrap_key.is_some() {
            println!("Its API key is the bootstrap key you gave.");
        } else {
            println!("API key (shown once, keep it safe): {}", key.api_key);
        }
    }
    drop(turn);
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .with_context(|| format!("listening on {listen}"))?;
    println!(
        "Faktura is listening on http://{}/api",
        listener.local_addr()?
    );
    println!(
        "Try: curl -H 'X-ServiceApiKey: KEY' http://{}/api/clients",
        listener.local_addr()?
    );
    if let Some(metrics) = options.metrics {
        println!("Metrics on http://{metrics}/metrics, health on /healthz and /readyz");
    }
    faktura_host::serve(runtime, listener, shutdown_signal()).await
}

/// `faktura check`: the store's records, index entries, sums and number claims against
/// each other; fails when it finds a problem.
async fn check(options: &Options) -> anyhow::Result<()> {
    let report = faktura_host::check_store(options).await?;
    println!(
        "Checked {} accounts: {} records, {} index entries, {} tallied sums and counts, \
         {} number claims.",
        report.accounts,
        report.records,
        report.index_entries,
        report.tally_values,
        report.number_claims
    );
    for problem in &report.problems {
        println!("problem: {problem}");
    }
    let unlisted = report.problems_found - report.problems.len() as u64;
    if unlisted > 0 {
        println!("… and {unlisted} problems more.");
    }
    match report.problems_found {
        0 => {}
        1 => anyhow::bail!("the store has a problem"),
        n => anyhow::bail!("the store has {n} problems"),
    }
    println!("No problems found.");
    Ok(())
}

/// The line a command that moved a store's entries ends with.
fn print_moved(verb: &str, preposition: &str, moved: &faktura_host::Moved, path: &std::path::Path) {
    println!(
        "{verb} {} entries ({} bytes of keys and values) {preposition} {}.",
        moved.entries,
        moved.bytes,
        path.display()
    );
}

/// Runs an admin command through the running server's socket, or on the data directory
/// when no server has it open.
async fn admin(options: &Options, command: admin::Command) -> anyhow::Result<()> {
    let issued = match admin::request(&options.data_dir, &command).await {
        Some(answer) => answer?,
        None => command.run(&Runtime::new(options)?).await?,
    };
    match (issued, &command) {
        (Some(key), _) => {
            println!("account {} user {}", key.account_id, key.user_id);
            println!("API key (shown once): {}", key.api_key);
        }
        (None, admin::Command::RevokeUser { user }) => {
            println!("user {user}: API key revoked; it is refused from the next request on")
        }
        (None, _) => {}
    }
    Ok(())
}

async fn print_outbox(options: &Options) -> anyhow::Result<()> {
    let entries = faktura_host::outbox_entries(options).await?;
    if entries.is_empty() {
        println!("The outbox is empty.");
    }
    for e in entries {
        println!(
            "{:<7} {}  to {}  subject {:?}  attempts {}{}",
            e.status,
            e.id,
            e.recipients.join(", "),
            e.subject,
            e.state.attempts,
            if e.state.last_error.is_empty() {
                String::new()
            } else {
                format!("  ({})", e.state.last_error)
            }
        );
    }
    Ok(())
}

/// Seconds between upkeep runs: from 0.05 to a day.
fn upkeep_seconds(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(secs) if (0.05..=86_400.0).contains(&secs) => Ok(secs),
        _ => Err(format!("must be seconds from 0.05 to 86400, got \"{s}\"")),
    }
}

#[cfg(test)]
mod tests {
    /// The host limits malloc's arenas, unless glibc's own settings name a limit.
    #[test]
    fn malloc_arenas_are_limited_unless_glibc_is_told_otherwise() {
        use super::{MALLOC_ARENAS, malloc_arenas};
        assert_eq!(malloc_arenas(None, None), Some(MALLOC_ARENAS));
        assert_eq!(malloc_arenas(Some("8".into()), None), None);
        assert_eq!(
            malloc_arenas(None, Some("glibc.malloc.tcache_count=0".into())),
            Some(MALLOC_ARENAS)
        );
        assert_eq!(
            malloc_arenas(
                None,
                Some("glibc.malloc.tcache_count=0:glibc.malloc.arena_max=8".into())
            ),
            None
        );
    }
}
