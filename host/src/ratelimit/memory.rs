//! The rate limit windows of one host, in memory: a restart starts fresh windows. It must
//! not outgrow `BUCKETS_MAX`, whatever the buckets the guest names.

use std::collections::HashMap;
use std::sync::Mutex;

use super::WINDOW_SECS;
use crate::bindings::faktura::service::ratelimit::Window;

/// Buckets kept before stale ones are dropped.
const BUCKETS_MAX: usize = 100_000;

/// Counts per bucket: the window's start and the requests in it.
pub(super) struct Windows {
    limit: Option<u32>,
    buckets: Mutex<HashMap<String, (u64, u32)>>,
}

impl Windows {
    pub(super) fn new(limit: Option<u32>) -> Windows {
        Windows {
            limit,
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Counts a request of `bucket` at `now` (Unix seconds) when its window is under the
    /// limit (always without one).
    pub(super) fn hit(&self, bucket: &str, now: u64) -> Window {
        let start = now - now % WINDOW_SECS;
        let limit = self.limit;
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        if buckets.len() > BUCKETS_MAX {
            buckets.retain(|_, (s, _)| *s == start);
        }
        let entry = buckets.entry(bucket.to_owned()).or_insert((start, 0));
        if entry.0 != start {
            *entry = (start, 0);
        }
        let allowed = limit.is_none_or(|l| entry.1 < l);
        if allowed {
            entry.1 += 1;
        }
        Window {
            limit,
            remaining: limit.map_or(u32::MAX, |l| l.saturating_sub(entry.1)),
            reset: start + WINDOW_SECS,
            allowed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_count_and_reset() {
        let c = Windows::new(Some(2));
        let t = 1_800_000_000 - 1_800_000_000 % WINDOW_SECS;
        assert!(c.hit("a", t).allowed);
        let second = c.hit("a", t + 10);
        assert!(second.allowed && second.remaining == 0);
        let third = c.hit("a", t + 20);
        assert!(!third.allowed);
        assert_eq!(third.reset, t + WINDOW_SECS);
        assert!(c.hit("b", t + 20).allowed, "buckets are separate");
        assert!(
            c.hit("a", t + WINDOW_SECS).allowed,
            "a new window starts fresh"
        );
        let unlimited = Windows::new(None).hit("a", t);
        assert!(unlimited.allowed && unlimited.limit.is_none());
    }
}
