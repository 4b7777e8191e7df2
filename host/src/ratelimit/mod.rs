//! The `ratelimit` interface: requests counted per bucket in fixed 15-minute windows (or in
//! the windows and against the limit the guest names, `hit-limited`), in
//! memory (`memory.rs`: a restart starts fresh windows), or, when the store is PostgreSQL,
//! in its `faktura_rate` table (`postgres.rs`), so that several hosts on one store allow
//! the limit once between them and not once each. With no limit configured every request
//! is allowed and the counts only feed the headers.
//!
//! It owns the mapping between the generated bindings and the windows; it knows nothing of
//! what a bucket stands for (the component names them).

mod memory;
mod postgres;

use std::time::{SystemTime, UNIX_EPOCH};

use wasmtime::component::{HasData, Linker};

use crate::bindings::faktura::service::ratelimit::{self as wit, Window};

/// Length of a window.
const WINDOW_SECS: u64 = 15 * 60;

/// The rate limit of every request: the interface's context.
pub(crate) struct RateCtx {
    limit: Option<u32>,
    here: memory::Windows,
    /// The windows of the PostgreSQL store, where they are kept when there is one.
    shared: Option<postgres::Windows>,
}

impl RateCtx {
    /// `limit` requests per bucket and window, counted here, or in the database of `pool`
    /// with the other hosts of the store when there is one.
    pub(crate) fn new(limit: Option<u32>, pool: Option<crate::postgres::Pool>) -> RateCtx {
        RateCtx {
            limit,
            here: memory::Windows::new(),
            shared: pool.map(postgres::Windows::new),
        }
    }

    async fn hit(&self, bucket: &str, now: u64) -> Window {
        self.hit_with(bucket, now, self.limit, WINDOW_SECS).await
    }

    /// A request of `bucket` at `now` against `limit` per window of `window` seconds.
    async fn hit_with(&self, bucket: &str, now: u64, limit: Option<u32>, window: u64) -> Window {
        let window = window.max(1);
        let start = now - now % window;
        if let (Some(shared), Some(limit)) = (&self.shared, limit) {
            match shared.count(bucket, start, limit).await {
                Ok(count) => {
                    return Window {
                        limit: Some(limit),
                        remaining: limit.saturating_sub(count.unwrap_or(limit)),
                        reset: start + window,
                        allowed: count.is_some(),
                    };
                }
                // The store is unreachable: this host counts alone until it is back (the
                // request itself will find out about the store).
                Err(e) => tracing::warn!("rate limit window not shared: {e}"),
            }
        }
        self.here.hit_with(bucket, now, limit, window)
    }
}

/// Adds the `ratelimit` import to `linker`; `ctx` finds the context in a request's data.
pub(crate) fn add_to_linker<T: Send + 'static>(
    linker: &mut Linker<T>,
    ctx: fn(&mut T) -> &RateCtx,
) -> wasmtime::Result<()> {
    wit::add_to_linker::<T, HasRate>(linker, ctx)
}

/// What the generated `add_to_linker` hands the `Host` impl: the context alone.
struct HasRate;

impl HasData for HasRate {
    type Data<'a> = &'a RateCtx;
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

impl wit::Host for &RateCtx {
    async fn hit(&mut self, bucket: String) -> wasmtime::Result<Window> {
        Ok(RateCtx::hit(self, &bucket, now()).await)
    }

    async fn hit_limited(
        &mut self,
        bucket: String,
        limit: u32,
        window_secs: u32,
    ) -> wasmtime::Result<Window> {
        Ok(RateCtx::hit_with(self, &bucket, now(), Some(limit), u64::from(window_secs)).await)
    }
}
