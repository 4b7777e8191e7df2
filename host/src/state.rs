//! The host's state: what every request shares (`Shared`: a context per imported
//! interface, and the metrics), what each request's wasmtime store holds (`State`), and
//! the opening of the engines the options name.
//!
//! Each interface's `Host` impl is given its own context and nothing else, as
//! wasmtime-wasi gives `WasiCtxView` and wasmtime-wasi-http `WasiHttpCtxView`: `State`
//! hands them out (`store`, `mail`, `rate`, `pdf`) to the linker. A request costs one
//! `Arc` of `Shared` and the counter of what its reads saw; the views are borrows. It
//! holds no interface's logic.

use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use wasmtime::StoreLimits;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

use crate::Options;
use crate::deliveries::Deliveries;
use crate::mail::{MailConfig, MailCtx};
use crate::metrics::{Metrics, StoreMetrics};
use crate::outbound::{Hooks, OutboundCtx};
use crate::pdf::PdfCtx;
use crate::postgres::Pool;
use crate::ratelimit::RateCtx;
use crate::store::{self, Backend, StoreCtx, StoreView};

/// Resources every request shares: one context per imported interface.
pub(crate) struct Shared {
    pub(crate) store: StoreCtx,
    pub(crate) mail: MailCtx,
    pub(crate) rate: RateCtx,
    pub(crate) pdf: PdfCtx,
    /// Where outgoing HTTP (webhook deliveries) may go.
    pub(crate) outbound: OutboundCtx,
    pub(crate) metrics: Metrics,
    /// The webhook deliveries asked for (`deliveries`).
    pub(crate) deliveries: Deliveries,
    /// What the component is told of the service through its environment (`wasi:cli`):
    /// the switches of the business rules it has no other way to read (test clocks).
    pub(crate) env: Vec<(String, String)>,
}

impl Shared {
    /// The engines `options` name: on a PostgreSQL store the store, the mail queue and
    /// the rate limits share its database (one pool); else the redb file and the files of
    /// the data directory, and the rate limits in memory.
    pub(crate) fn open(options: &Options) -> anyhow::Result<Shared> {
        let metrics = Metrics::new();
        let pool = Pool::of(options)?;
        let db = open_store_in(options, pool.clone(), metrics.store.clone())?;
        let mail = MailConfig {
            outbox: options.outbox_dir(),
            postal: options.postal.clone(),
            smtp: options.smtp.clone(),
        };
        Ok(Shared {
            store: StoreCtx { db },
            mail: MailCtx::new(mail, pool.clone()),
            rate: RateCtx::new(options.rate_limit, pool),
            pdf: PdfCtx::new(metrics.pdf.clone()),
            outbound: OutboundCtx {
                allow_private: options.webhook_allow_private,
                idle: Arc::default(),
            },
            metrics,
            deliveries: Deliveries::default(),
            env: options.component_env(),
        })
    }
}

/// The store `options` name, alone (the commands that export, import or check it).
pub(crate) fn open_store(options: &Options) -> anyhow::Result<Box<dyn Backend>> {
    open_store_in(options, Pool::of(options)?, StoreMetrics::default())
}

/// The store on `pool`'s database, or the redb file of the data directory without one,
/// reporting its commits to `metrics`.
fn open_store_in(
    options: &Options,
    pool: Option<Pool>,
    metrics: StoreMetrics,
) -> anyhow::Result<Box<dyn Backend>> {
    Ok(match pool {
        Some(pool) => Box::new(store::postgres::Postgres::new(pool, metrics)),
        None => Box::new(store::redb::Redb::open(&options.db_path(), metrics)?),
    })
}

/// Per-request store data: WASI contexts, the resource table, the memory limiter, and the
/// shared contexts of the imports.
pub(crate) struct State {
    wasi: WasiCtx,
    http: WasiHttpCtx,
    table: ResourceTable,
    pub(crate) limits: StoreLimits,
    hooks: Hooks,
    shared: Arc<Shared>,
    /// The last commit this request's reads could see: its answer waits until that commit
    /// is durable.
    pub(crate) seen: Arc<AtomicU64>,
}

impl State {
    /// A request's data; its instance's memory may grow to `memory_bytes_max`.
    pub(crate) fn new(shared: Arc<Shared>, memory_bytes_max: usize) -> State {
        // The guest gets stderr for its error log and the service's switches, nothing
        // else: no files, no network, no stdin. Its lines join the host's log in the span
        // of the request being served.
        let wasi = WasiCtx::builder()
            .stderr(crate::guest_log::GuestStderr::new(tracing::Span::current()))
            .envs(&shared.env)
            .build();
        State {
            wasi,
            http: WasiHttpCtx::new(),
            table: ResourceTable::new(),
            limits: wasmtime::StoreLimitsBuilder::new()
                .memory_size(memory_bytes_max)
                .instances(16)
                .trap_on_grow_failure(true)
                .build(),
            hooks: Hooks(shared.outbound.clone()),
            shared,
            seen: Arc::default(),
        }
    }

    /// The `store` import's view of this request.
    pub(crate) fn store(&mut self) -> StoreView<'_> {
        StoreView {
            ctx: &self.shared.store,
            table: &mut self.table,
            seen: &self.seen,
        }
    }

    /// The `mail` import's context.
    pub(crate) fn mail(&mut self) -> &MailCtx {
        &self.shared.mail
    }

    /// The `ratelimit` import's context.
    pub(crate) fn rate(&mut self) -> &RateCtx {
        &self.shared.rate
    }

    /// The `pdf` import's context.
    pub(crate) fn pdf(&mut self) -> &PdfCtx {
        &self.shared.pdf
    }
}

impl WasiView for State {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl WasiHttpView for State {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http,
            table: &mut self.table,
            hooks: &mut self.hooks,
        }
    }
}
