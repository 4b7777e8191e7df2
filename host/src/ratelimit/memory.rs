//! The rate limit windows of one host, in memory: a restart starts fresh windows. It must
//! not outgrow `BUCKETS_MAX`, whatever the buckets the guest names.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::bindings::faktura::service::ratelimit::Window;

/// Buckets kept before stale ones are dropped.
const BUCKETS_MAX: usize = 100_000;

/// Counts per bucket: the end of its window and the requests in it.
pub(super) struct Windows {
    buckets: Mutex<HashMap<String, (u64, u32)>>,
}

impl Windows {
    pub(super) fn new() -> Windows {
        Windows {
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Counts a request of `bucket` at `now` (Unix seconds) against `limit` per window of
    /// `window` seconds, when its window is under the limit (always without one).
    pub(super) fn hit_with(
        &self,
        bucket: &str,
        now: u64,
        limit: Option<u32>,
        window: u64,
    ) -> Window {
        let window = window.max(1);
        let end = now - now % window + window;
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        if buckets.len() > BUCKETS_MAX {
            buckets.retain(|_, (e, _)| *e > now);
        }
        let entry = buckets.entry(bucket.to_owned()).or_insert((end, 0));
        if entry.0 != end {
            *entry = (end, 0);
        }
        let allowed = limit.is_none_or(|l| entry.1 < l);
        if allowed {
            entry.1 += 1;
        }
        Window {
            limit,
            remaining: limit.map_or(u32::MAX, |l| l.saturating_sub(entry.1)),
            reset: end,
            allowed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ratelimit::WINDOW_SECS;

    #[test]
    fn windows_count_and_reset() {
        let c = Windows::new();
        let hit = |bucket: &str, now: u64| c.hit_with(bucket, now, Some(2), WINDOW_SECS);
        let t = 1_800_000_000 - 1_800_000_000 % WINDOW_SECS;
        assert!(hit("a", t).allowed);
        let second = hit("a", t + 10);
        assert!(second.allowed && second.remaining == 0);
        let third = hit("a", t + 20);
        assert!(!third.allowed);
        assert_eq!(third.reset, t + WINDOW_SECS);
        assert!(hit("b", t + 20).allowed, "buckets are separate");
        assert!(
            hit("a", t + WINDOW_SECS).allowed,
            "a new window starts fresh"
        );
        let unlimited = Windows::new().hit_with("a", t, None, WINDOW_SECS);
        assert!(unlimited.allowed && unlimited.limit.is_none());
    }

    #[test]
    fn a_limit_the_guest_names_counts_in_windows_of_its_length() {
        let c = Windows::new();
        let t: u64 = 1_800_000_000 - 1_800_000_000 % WINDOW_SECS;
        for _ in 0..3 {
            assert!(c.hit_with("portal/a", t + 5, Some(3), 60).allowed);
        }
        let fourth = c.hit_with("portal/a", t + 59, Some(3), 60);
        assert!(!fourth.allowed && fourth.reset == t + 60);
        assert!(
            c.hit_with("b", t + 59, Some(1), WINDOW_SECS).allowed,
            "another bucket counts apart"
        );
        assert!(
            c.hit_with("portal/a", t + 60, Some(3), 60).allowed,
            "the next minute"
        );
    }
}
