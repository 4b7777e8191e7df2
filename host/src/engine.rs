//! The wasmtime side: engine configuration (pooling allocator, epochs), the compiled
//! component cache, the linker with every import, a request's store (limits, deadline),
//! and calls into the component.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, bail};
use sha2::{Digest, Sha256};
use tokio::sync::Semaphore;
use wasmtime::component::{Component, Linker};
use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig, Store};

use crate::Options;
use crate::bindings::exports::faktura::service::admin::{
    AccountKey, CheckReport, Guest, Migration, UpkeepReport,
};
use crate::bindings::{Service, ServicePre};
use crate::state::{Shared, State};

/// Default time between epoch ticks.
const EPOCH_TICK: Duration = Duration::from_millis(10);

/// Bounds of every request's instance.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Linear memory of one instance.
    pub memory_bytes_max: usize,
    /// Wall-clock time one request may run in the guest.
    pub request_time_max: Duration,
    /// Instances alive at once; further requests wait for a slot.
    pub instances_max: u32,
    /// How often the host runs the component's upkeep (`Runtime::start_upkeep`): recorded
    /// messages handed to mail, expired answers of idempotency keys removed.
    pub upkeep_every: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            memory_bytes_max: 256 << 20,
            request_time_max: Duration::from_secs(30),
            instances_max: 64,
            upkeep_every: Duration::from_secs(15),
        }
    }
}

/// The compiled component, ready to instantiate, and the host's shared resources.
#[derive(Clone)]
pub struct Runtime {
    pub(crate) engine: Engine,
    pub(crate) pre: ServicePre<State>,
    /// Where the HTTP handler sits among the component's exports: a request looks up
    /// only that, not the admin functions too.
    pub(crate) http: crate::bindings::exports::wasi::http::incoming_handler::GuestIndices,
    pub(crate) shared: Arc<Shared>,
    pub(crate) limits: Limits,
    /// One permit per pooled instance slot.
    pub(crate) slots: Arc<Semaphore>,
    /// Where the admin socket goes while serving.
    pub(crate) data_dir: PathBuf,
    /// Whether the engine counts fuel (`FAKTURA_PROFILE=fuel`): every store then needs
    /// some, and each request's count is logged.
    pub(crate) fuel: bool,
    /// Where the metrics listener goes while serving (`Options::metrics`).
    pub(crate) metrics_addr: Option<std::net::SocketAddr>,
}

/// What `FAKTURA_PROFILE` asks for, read once at start-up.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Profile {
    Off,
    /// Names the guest's compiled functions for `perf` (/tmp/perf-PID.map).
    PerfMap,
    /// Counts the wasm operators each request runs: a measure of the guest's work that
    /// does not vary from run to run.
    Fuel,
}

impl Profile {
    fn from_env() -> Profile {
        match std::env::var("FAKTURA_PROFILE").as_deref() {
            Ok("perfmap") => Profile::PerfMap,
            Ok("fuel") => Profile::Fuel,
            _ => Profile::Off,
        }
    }
}

/// Bytes of each pooled memory and table kept mapped between instances and cleared with
/// memset instead of being returned to the kernel: a GET stays within them, and a fresh
/// instance then takes no page faults. Measured with `make bench` at 100,000 invoices:
/// 1 MiB serves W1 as fast as 4 MiB did and holds 40 MiB less at 32 concurrent requests.
const KEEP_RESIDENT: usize = 1 << 20;

fn engine(limits: &Limits, profile: Profile) -> anyhow::Result<Engine> {
    let mut pool = PoolingAllocationConfig::default();
    let instances = limits.instances_max;
    pool.total_component_instances(instances)
        .total_core_instances(instances * 8)
        .total_memories(instances * 4)
        .total_tables(instances * 8)
        .max_memory_size(limits.memory_bytes_max)
        .max_component_instance_size(1 << 20)
        .max_core_instance_size(1 << 20)
        .max_memories_per_component(8)
        .max_tables_per_component(16)
        .linear_memory_keep_resident(KEEP_RESIDENT)
        .table_keep_resident(KEEP_RESIDENT)
        // Where the kernel can tell (Linux 6.7+), only the pages an instance touched are
        // reset, instead of all of `KEEP_RESIDENT`.
        .pagemap_scan(wasmtime::Enabled::Auto);
    let mut config = Config::new();
    config
        .epoch_interruption(true)
        .allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    match profile {
        Profile::Off => {}
        Profile::PerfMap => {
            config.profiler(wasmtime::ProfilingStrategy::PerfMap);
        }
        Profile::Fuel => {
            config.consume_fuel(true);
        }
    }
    Ok(Engine::new(&config)?)
}

/// The first bytes of a cache file: they name its format, so that a file of another
/// format (an older host's bare `.cwasm`) is compiled again, not misread.
const CACHE_MAGIC: &[u8; 8] = b"FKCWASM1";
/// Bytes of a cache file before the compiled component: `CACHE_MAGIC`, then the SHA-256
/// of the compiled bytes.
const CACHE_HEADER_BYTES: usize = CACHE_MAGIC.len() + 32;

/// Compiles the component, or loads the machine code compiled for these exact bytes by
/// this exact engine from the cache.
///
/// A cache file is `CACHE_MAGIC`, the SHA-256 of the compiled bytes, and the compiled
/// bytes (as `Engine::precompile_component` gave them); its name is the SHA-256 of the
/// wasm and a hash of the engine's settings. It is written whole, synced, and renamed
/// into place, so a crash leaves either no file or a complete one, and its bytes are
/// checked against the digest before wasmtime is asked to trust them.
fn load_component(engine: &Engine, wasm: &[u8], cache_dir: &Path) -> anyhow::Result<Component> {
    let mut engine_hash = std::collections::hash_map::DefaultHasher::new();
    engine
        .precompile_compatibility_hash()
        .hash(&mut engine_hash);
    let digest = hex::encode(Sha256::digest(wasm));
    let path = cache_dir.join(format!("{digest}-{:016x}.cwasm", engine_hash.finish()));
    match std::fs::read(&path) {
        Ok(file) => match verify_cached(&file) {
            Ok(compiled) => {
                #[expect(
                    unsafe_code,
                    reason = "wasmtime runs these bytes as machine code, unchecked. They \
                              match the SHA-256 in the file's header, which this host wrote \
                              with them after compiling them itself: that rules out a torn, \
                              truncated or damaged file. It cannot rule out a forged one: \
                              whoever can write the cache directory (the owner's alone, like \
                              the database beside it) can run code as the host, so that \
                              directory is trusted as the host's executable is. wasmtime \
                              checks that the bytes were compiled for this engine."
                )]
                let loaded = unsafe { Component::deserialize(engine, compiled) };
                match loaded {
                    Ok(c) => return Ok(c),
                    Err(e) => {
                        tracing::warn!(
                            "compiling again: cached component {}: {e:#}",
                            path.display()
                        )
                    }
                }
            }
            Err(why) => {
                tracing::warn!("compiling again: cached component {} {why}", path.display())
            }
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => tracing::warn!("compiling again: reading {}: {e}", path.display()),
    }
    let compiled = engine.precompile_component(wasm)?;
    write_cached(cache_dir, &path, &digest, &compiled)
        .with_context(|| format!("writing the compiled component to {}", path.display()))?;
    #[expect(
        unsafe_code,
        reason = "the bytes were just produced by precompile_component of this engine, in \
                  this process, and never left its memory"
    )]
    let component = unsafe { Component::deserialize(engine, &compiled) }?;
    Ok(component)
}

/// The header of the cache file for `compiled`: the magic, then the bytes' SHA-256.
fn cache_header(compiled: &[u8]) -> [u8; CACHE_HEADER_BYTES] {
    let mut header = [0; CACHE_HEADER_BYTES];
    let (magic, digest) = header.split_at_mut(CACHE_MAGIC.len());
    magic.copy_from_slice(CACHE_MAGIC);
    digest.copy_from_slice(&Sha256::digest(compiled));
    header
}

/// The compiled bytes of a cache file, once its header names this format and its digest
/// matches them; else why not, for the log.
fn verify_cached(file: &[u8]) -> Result<&[u8], &'static str> {
    let Some(rest) = file.strip_prefix(CACHE_MAGIC.as_slice()) else {
        return Err("has no header of this host's format");
    };
    let Some((digest, compiled)) = rest.split_first_chunk::<32>() else {
        return Err("is cut short");
    };
    if Sha256::digest(compiled).as_slice() != digest {
        return Err("does not match its digest");
    }
    Ok(compiled)
}

/// Writes a cache file so that it is either absent or whole, even across a crash: a
/// temporary file, synced, renamed over `path`, and the directory synced so the rename
/// lasts.
fn write_cached(
    cache_dir: &Path,
    path: &Path,
    digest: &str,
    compiled: &[u8],
) -> anyhow::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::DirBuilderExt as _;
    // Like the data directory: what runs as the host's code is the owner's alone. An
    // existing directory keeps its mode.
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(cache_dir)?;
    // Unique per writer: several runtimes of one process may compile at once.
    static WRITERS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let writer = WRITERS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = cache_dir.join(format!(".tmp-{digest}-{}-{writer}", std::process::id()));
    let written = (|| {
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(&cache_header(compiled))?;
        file.write_all(compiled)?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&tmp, path)?;
        std::fs::File::open(cache_dir)?.sync_all()
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    Ok(written?)
}

fn linker(engine: &Engine) -> anyhow::Result<Linker<State>> {
    let mut linker = Linker::new(engine);
    wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
    wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker)?;
    crate::store::add_to_linker(&mut linker, State::store)?;
    crate::pdf::add_to_linker(&mut linker, State::pdf)?;
    crate::mail::add_to_linker(&mut linker, State::mail)?;
    crate::ratelimit::add_to_linker(&mut linker, State::rate)?;
    Ok(linker)
}

/// A new store with the limiter and the request deadline installed, and all the fuel
/// there is when the engine counts it (`fuel`).
pub(crate) fn new_store(
    engine: &Engine,
    shared: Arc<Shared>,
    limits: &Limits,
    fuel: bool,
) -> Store<State> {
    let mut store = Store::new(engine, State::new(shared, limits.memory_bytes_max));
    store.limiter(|s| &mut s.limits);
    if fuel {
        store
            .set_fuel(u64::MAX)
            .expect("the engine counts fuel when `fuel` is set");
    }
    let deadline = std::time::Instant::now() + limits.request_time_max;
    // Every epoch tick the guest yields to other tasks; past the deadline it traps.
    store.epoch_deadline_callback(move |_| {
        if std::time::Instant::now() >= deadline {
            Err(wasmtime::Error::new(DeadlineExceeded))
        } else {
            Ok(wasmtime::UpdateDeadline::Yield(1))
        }
    });
    store
}

/// Why the guest was stopped when it ran past the request deadline: a type of its own, so
/// that the metrics tell a stop from a trap of the guest.
#[derive(Debug)]
pub(crate) struct DeadlineExceeded;

impl std::fmt::Display for DeadlineExceeded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("request deadline exceeded")
    }
}

impl std::error::Error for DeadlineExceeded {}

impl Runtime {
    /// Opens the data directory and prepares the component. Starts the epoch ticker.
    pub fn new(options: &Options) -> anyhow::Result<Runtime> {
        crate::prepare_data_dir(&options.data_dir)?;
        let wasm = std::fs::read(&options.component).with_context(|| {
            format!(
                "reading the component {} (build it with `make build`)",
                options.component.display()
            )
        })?;
        let profile = Profile::from_env();
        let engine = engine(&options.limits, profile)?;
        let cache_dir: PathBuf = options
            .cache_dir
            .clone()
            .unwrap_or_else(|| options.data_dir.join("cache"));
        let started = std::time::Instant::now();
        let component = load_component(&engine, &wasm, &cache_dir)?;
        tracing::debug!("component ready in {:?}", started.elapsed());
        let pre = ServicePre::new(linker(&engine)?.instantiate_pre(&component)?)?;
        let http = crate::bindings::exports::wasi::http::incoming_handler::GuestIndices::new(
            pre.instance_pre(),
        )?;
        let shared = Arc::new(Shared::open(options)?);
        let weak = engine.weak();
        std::thread::Builder::new()
            .name("faktura-epoch".into())
            .spawn(move || {
                while let Some(engine) = weak.upgrade() {
                    engine.increment_epoch();
                    drop(engine);
                    std::thread::sleep(EPOCH_TICK);
                }
            })?;
        Ok(Runtime {
            engine,
            pre,
            http,
            shared,
            slots: Arc::new(Semaphore::new(options.limits.instances_max as usize)),
            limits: options.limits.clone(),
            data_dir: options.data_dir.clone(),
            fuel: profile == Profile::Fuel,
            metrics_addr: options.metrics,
        })
    }

    /// Delivers queued mail over SMTP while the returned task runs (nothing without SMTP).
    pub fn start_mail_delivery(&self) -> tokio::task::JoinHandle<()> {
        let shared = self.shared.clone();
        tokio::spawn(async move { shared.mail.deliver().await })
    }

    /// Runs `f` against a fresh instance of the component.
    async fn with_instance<T>(
        &self,
        f: impl AsyncFnOnce(&mut wasmtime::Store<State>, &Service) -> wasmtime::Result<T>,
    ) -> anyhow::Result<T> {
        let _slot = self.slots.acquire().await?;
        let mut store = new_store(&self.engine, self.shared.clone(), &self.limits, self.fuel);
        store.set_epoch_deadline(1);
        let service = self.pre.instantiate_async(&mut store).await?;
        Ok(f(&mut store, &service).await?)
    }

    /// Calls an operation of the component's `admin` export on a fresh instance.
    async fn admin<T>(
        &self,
        call: impl AsyncFnOnce(
            &mut wasmtime::Store<State>,
            &Guest,
        ) -> wasmtime::Result<Result<T, String>>,
    ) -> anyhow::Result<T> {
        let result = self
            .with_instance(async |store, service| {
                call(store, service.faktura_service_admin()).await
            })
            .await?;
        result.map_err(anyhow::Error::msg)
    }

    /// Waits for this host's turn to start on its store (hosts started at once on one
    /// PostgreSQL store migrate and bootstrap it one after the other); the turn lasts
    /// until the guard is dropped.
    pub async fn start_up_turn(&self) -> anyhow::Result<crate::StartUpTurn> {
        Ok(self.shared.store.db.start_up_turn().await?)
    }

    /// Brings the store to the component's data version before anything is served; the
    /// component knows the layouts, the host only asks.
    pub async fn migrate(&self) -> anyhow::Result<Migration> {
        self.admin(async |store, admin| admin.call_migrate(store).await)
            .await
    }

    /// Creates the default account and admin user when there is no account yet.
    pub async fn bootstrap(&self, key: Option<String>) -> anyhow::Result<Option<AccountKey>> {
        self.admin(async |store, admin| admin.call_bootstrap(store, key.as_deref()).await)
            .await
    }

    pub async fn create_account(&self, name: &str, email: &str) -> anyhow::Result<AccountKey> {
        self.admin(async |store, admin| admin.call_create_account(store, name, email).await)
            .await
    }

    pub async fn create_user(&self, account: u64, email: &str) -> anyhow::Result<AccountKey> {
        self.admin(async |store, admin| admin.call_create_user(store, account, email).await)
            .await
    }

    /// Revokes a user's API key.
    pub async fn revoke_user(&self, user: u64) -> anyhow::Result<()> {
        self.admin(async |store, admin| admin.call_revoke_user(store, user).await)
            .await
    }

    /// The consistency check of the whole store, from one snapshot (the component's
    /// `check`).
    pub async fn check(&self) -> anyhow::Result<CheckReport> {
        self.admin(async |store, admin| admin.call_check(store).await)
            .await
    }

    /// Work due whatever the requests (the component's `upkeep`): recorded messages
    /// handed to mail, expired answers of idempotency keys removed.
    pub async fn upkeep(&self) -> anyhow::Result<UpkeepReport> {
        self.admin(async |store, admin| admin.call_upkeep(store).await)
            .await
    }

    /// One go of webhook deliveries for `accounts`, every account when it is empty (the
    /// component's `deliver`): the attempts made.
    pub(crate) async fn deliver(&self, accounts: &[u64]) -> anyhow::Result<u32> {
        self.admin(async |store, admin| admin.call_deliver(store, accounts).await)
            .await
    }

    /// Sends webhook deliveries when asked (`deliveries::Deliveries`) while the returned
    /// task runs.
    pub fn start_deliveries(&self) -> tokio::task::JoinHandle<()> {
        let runtime = self.clone();
        tokio::spawn(async move {
            let asked = &runtime.shared.deliveries;
            loop {
                let Some(accounts) = asked.take() else {
                    asked.wake.notified().await;
                    continue;
                };
                let started = std::time::Instant::now();
                match runtime.deliver(&accounts).await {
                    Ok(0) => {}
                    Ok(_) => {
                        asked.again(accounts);
                        let pause = asked.pause_after(started.elapsed());
                        if !pause.is_zero() {
                            tokio::time::sleep(pause).await;
                        }
                    }
                    Err(e) => tracing::warn!("webhook deliveries: {e:#}"),
                }
            }
        })
    }

    /// Runs `upkeep` every `every` while the returned task runs, so that a message
    /// recorded by a host that stopped before its hand-over is sent by any host of the
    /// store.
    pub fn start_upkeep(&self, every: Duration) -> tokio::task::JoinHandle<()> {
        let runtime = self.clone();
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(every);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticks.tick().await;
                let report = runtime.upkeep().await;
                // Retries come due with time, and a pass may have made events.
                runtime.shared.deliveries.ask_all();
                match report {
                    Ok(r)
                        if r.handed > 0
                            || r.answers_expired > 0
                            || r.runs > 0
                            || r.deliveries > 0 =>
                    {
                        tracing::info!(
                            handed = r.handed,
                            answers_expired = r.answers_expired,
                            runs = r.runs,
                            deliveries = r.deliveries,
                            "upkeep"
                        )
                    }
                    Ok(_) => {}
                    Err(e) => tracing::warn!("upkeep: {e:#}"),
                }
            }
        })
    }
}

/// Checks a component path early, with a message that says what to do.
pub fn check_component(path: &Path) -> anyhow::Result<()> {
    if !path.is_file() {
        bail!(
            "no component at {}; build it with `make build` or pass --component",
            path.display()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The smallest component there is: the preamble alone.
    const EMPTY_COMPONENT: &[u8] = b"\0asm\x0d\x00\x01\x00";

    fn sealed(compiled: &[u8]) -> Vec<u8> {
        [&cache_header(compiled)[..], compiled].concat()
    }

    fn check(file: &[u8], expected: Option<&[u8]>) {
        assert_eq!(verify_cached(file).ok(), expected, "{file:?}");
    }

    #[test]
    fn a_cache_file_is_trusted_only_whole_and_unchanged() {
        let compiled = b"machine code".as_slice();
        let good = sealed(compiled);
        let changed = |at: usize| {
            let mut file = good.clone();
            file[at] ^= 1;
            file
        };
        check(&good, Some(compiled));
        check(&sealed(b""), Some(b""));
        check(&changed(good.len() - 1), None);
        check(&changed(CACHE_HEADER_BYTES), None);
        check(&changed(CACHE_MAGIC.len()), None);
        check(&changed(0), None);
        check(&good[..good.len() - 1], None);
        check(&good[..CACHE_HEADER_BYTES - 1], None);
        check(&good[..3], None);
        check(b"", None);
        // An older host's cache file: the compiled bytes alone.
        check(compiled, None);
    }

    #[test]
    fn a_changed_cache_file_is_compiled_again_and_rewritten() {
        let engine = Engine::default();
        let cache = tempfile::tempdir().unwrap();
        load_component(&engine, EMPTY_COMPONENT, cache.path()).unwrap();
        let files: Vec<_> = std::fs::read_dir(cache.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        let [path] = files.as_slice() else {
            panic!("one cache file and nothing else: {files:?}");
        };
        let written = std::fs::read(path).unwrap();
        assert!(verify_cached(&written).is_ok());
        // Loaded from the cache: the file stays as it is.
        load_component(&engine, EMPTY_COMPONENT, cache.path()).unwrap();
        assert_eq!(std::fs::read(path).unwrap(), written);

        let mut damaged = written.clone();
        let last = damaged.len() - 1;
        damaged[last] ^= 1;
        std::fs::write(path, &damaged).unwrap();
        load_component(&engine, EMPTY_COMPONENT, cache.path()).unwrap();
        let rewritten = std::fs::read(path).unwrap();
        assert_ne!(rewritten, damaged, "the damaged file was kept");
        assert!(verify_cached(&rewritten).is_ok());
    }
}
