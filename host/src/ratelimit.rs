//! The `ratelimit` interface: requests counted per bucket in fixed 15-minute windows, in
//! memory (a restart starts fresh windows), or, when the store is PostgreSQL, in its
//! `faktura_rate` table, so that several hosts on one store allow the limit once between
//! them and not once each. With no limit configured every request is allowed and the
//! counts only feed the headers.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::State;
use crate::bindings::faktura::service::ratelimit::{self as wit, Window};

/// Length of a window.
const WINDOW_SECS: u64 = 15 * 60;
/// Buckets kept before stale ones are dropped.
const BUCKETS_MAX: usize = 100_000;

/// Counts per bucket: the window's start and the requests in it.
pub(crate) struct Counter {
    limit: Option<u32>,
    buckets: Mutex<HashMap<String, (u64, u32)>>,
    /// The PostgreSQL store's pool, where the windows are kept when there is one.
    shared: Option<deadpool_postgres::Pool>,
}

impl Counter {
    pub(crate) fn new(limit: Option<u32>) -> Counter {
        Counter {
            limit,
            buckets: Mutex::new(HashMap::new()),
            shared: None,
        }
    }

    /// Windows kept in the PostgreSQL store of `pool`, shared by every host on it.
    pub(crate) fn shared(limit: Option<u32>, pool: deadpool_postgres::Pool) -> Counter {
        Counter {
            shared: Some(pool),
            ..Counter::new(limit)
        }
    }

    pub(crate) async fn hit(&self, bucket: &str, now: u64) -> Window {
        if let (Some(pool), Some(limit)) = (&self.shared, self.limit) {
            match crate::store::postgres::count_hit(pool, bucket, now - now % WINDOW_SECS, limit)
                .await
            {
                Ok(count) => {
                    let start = now - now % WINDOW_SECS;
                    return Window {
                        limit: self.limit,
                        remaining: limit.saturating_sub(count.unwrap_or(limit)),
                        reset: start + WINDOW_SECS,
                        allowed: count.is_some(),
                    };
                }
                // The store is unreachable: this host counts alone until it is back (the
                // request itself will find out about the store).
                Err(e) => tracing::warn!("rate limit window not shared: {e}"),
            }
        }
        self.hit_here(bucket, now)
    }

    fn hit_here(&self, bucket: &str, now: u64) -> Window {
        let start = now - now % WINDOW_SECS;
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        if buckets.len() > BUCKETS_MAX {
            buckets.retain(|_, (s, _)| *s == start);
        }
        let entry = buckets.entry(bucket.to_owned()).or_insert((start, 0));
        if entry.0 != start {
            *entry = (start, 0);
        }
        let allowed = self.limit.is_none_or(|l| entry.1 < l);
        if allowed {
            entry.1 += 1;
        }
        Window {
            limit: self.limit,
            remaining: self.limit.map_or(u32::MAX, |l| l.saturating_sub(entry.1)),
            reset: start + WINDOW_SECS,
            allowed,
        }
    }
}

impl wit::Host for State {
    async fn hit(&mut self, bucket: String) -> wasmtime::Result<Window> {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        Ok(self.shared.rate.hit(&bucket, now).await)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_count_and_reset() {
        let c = Counter::new(Some(2));
        let t = 1_800_000_000 - 1_800_000_000 % WINDOW_SECS;
        assert!(c.hit_here("a", t).allowed);
        let second = c.hit_here("a", t + 10);
        assert!(second.allowed && second.remaining == 0);
        let third = c.hit_here("a", t + 20);
        assert!(!third.allowed);
        assert_eq!(third.reset, t + WINDOW_SECS);
        assert!(c.hit_here("b", t + 20).allowed, "buckets are separate");
        assert!(
            c.hit_here("a", t + WINDOW_SECS).allowed,
            "a new window starts fresh"
        );
        let unlimited = Counter::new(None).hit_here("a", t);
        assert!(unlimited.allowed && unlimited.limit.is_none());
    }
}
