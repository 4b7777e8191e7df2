//! The wasmtime side: engine configuration (pooling allocator, epochs), the compiled
//! component cache, the linker with every import, and calls into the component.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, bail};
use sha2::{Digest, Sha256};
use tokio::sync::Semaphore;
use wasmtime::component::{Component, HasSelf, Linker};
use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

use crate::bindings::exports::faktura::service::admin::AccountKey;
use crate::bindings::{Service, ServicePre};
use crate::{EPOCH_TICK, MailConfig, Options, Shared, State, new_store, store};

/// Bounds of every request's instance.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Linear memory of one instance.
    pub memory_bytes_max: usize,
    /// Wall-clock time one request may run in the guest.
    pub request_time_max: Duration,
    /// Instances alive at once; further requests wait for a slot.
    pub instances_max: u32,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            memory_bytes_max: 256 << 20,
            request_time_max: Duration::from_secs(30),
            instances_max: 64,
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

/// Compiles the component, or loads the machine code compiled for these exact bytes by
/// this exact engine from the cache.
fn load_component(engine: &Engine, wasm: &[u8], cache_dir: &Path) -> anyhow::Result<Component> {
    let mut engine_hash = std::collections::hash_map::DefaultHasher::new();
    engine
        .precompile_compatibility_hash()
        .hash(&mut engine_hash);
    let digest = hex::encode(Sha256::digest(wasm));
    let path = cache_dir.join(format!("{digest}-{:016x}.cwasm", engine_hash.finish()));
    if path.exists() {
        #[expect(
            unsafe_code,
            reason = "the cache file was written by this host from these exact wasm bytes \
                      (its name is their SHA-256) and wasmtime checks engine compatibility"
        )]
        let loaded = unsafe { Component::deserialize_file(engine, &path) };
        match loaded {
            Ok(c) => return Ok(c),
            Err(e) => tracing::warn!("ignoring cached component {}: {e:#}", path.display()),
        }
    }
    let compiled = engine.precompile_component(wasm)?;
    std::fs::create_dir_all(cache_dir)?;
    // Unique per writer: several runtimes of one process may compile at once.
    static WRITERS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let writer = WRITERS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = cache_dir.join(format!(".tmp-{digest}-{}-{writer}", std::process::id()));
    std::fs::write(&tmp, &compiled)?;
    std::fs::rename(&tmp, &path)?;
    #[expect(
        unsafe_code,
        reason = "the bytes were just produced by precompile_component of this engine"
    )]
    let component = unsafe { Component::deserialize(engine, &compiled) }?;
    Ok(component)
}

fn linker(engine: &Engine) -> anyhow::Result<Linker<State>> {
    let mut linker = Linker::new(engine);
    wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
    wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker)?;
    use crate::bindings::faktura::service::{mail, pdf, ratelimit, store};
    store::add_to_linker::<State, HasSelf<State>>(&mut linker, |s| s)?;
    pdf::add_to_linker::<State, HasSelf<State>>(&mut linker, |s| s)?;
    mail::add_to_linker::<State, HasSelf<State>>(&mut linker, |s| s)?;
    ratelimit::add_to_linker::<State, HasSelf<State>>(&mut linker, |s| s)?;
    Ok(linker)
}

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
        let db = store::Db::open(&options.db_path())?;
        let shared = Arc::new(Shared {
            db,
            mail: MailConfig {
                outbox: options.outbox_dir(),
                postal: options.postal.clone(),
                smtp: options.smtp.clone(),
            },
            outbox: Arc::new(crate::mail::Outbox::default()),
            rate: crate::ratelimit::Counter::new(options.rate_limit),
        });
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
        })
    }

    /// Delivers queued mail over SMTP while the returned task runs (nothing without SMTP).
    pub fn start_mail_delivery(&self) -> tokio::task::JoinHandle<()> {
        tokio::spawn(crate::mail::deliver(
            self.shared.mail.clone(),
            self.shared.outbox.clone(),
        ))
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

    /// Creates the default account and admin user when there is no account yet.
    pub async fn bootstrap(&self, key: Option<String>) -> anyhow::Result<Option<AccountKey>> {
        let result = self
            .with_instance(async |store, service| {
                service
                    .faktura_service_admin()
                    .call_bootstrap(store, key.as_deref())
                    .await
            })
            .await?;
        result.map_err(anyhow::Error::msg)
    }

    pub async fn create_account(&self, name: &str, email: &str) -> anyhow::Result<AccountKey> {
        let result = self
            .with_instance(async |store, service| {
                service
                    .faktura_service_admin()
                    .call_create_account(store, name, email)
                    .await
            })
            .await?;
        result.map_err(anyhow::Error::msg)
    }

    pub async fn create_user(&self, account: u64, email: &str) -> anyhow::Result<AccountKey> {
        let result = self
            .with_instance(async |store, service| {
                service
                    .faktura_service_admin()
                    .call_create_user(store, account, email)
                    .await
            })
            .await?;
        result.map_err(anyhow::Error::msg)
    }
}

impl Runtime {
    /// Revokes a user's API key.
    pub async fn revoke_user(&self, user: u64) -> anyhow::Result<()> {
        let result = self
            .with_instance(async |store, service| {
                service
                    .faktura_service_admin()
                    .call_revoke_user(store, user)
                    .await
            })
            .await?;
        result.map_err(anyhow::Error::msg)
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
