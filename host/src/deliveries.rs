//! Webhook deliveries on the host's time. The component decides what is sent, when and how
//! it is signed; the host only decides when to ask. Told so in its environment
//! (`FAKTURA_HOST_DELIVERS`), the component answers a write that may have recorded events
//! with `x-faktura-deliver: <account>` instead of sending them from the request's
//! instance, and one task of the host calls its `deliver` export for the accounts named
//! since the last go, and for every account after each upkeep (retries come due with
//! time). Writes that come while a go runs are taken by the next go, so a busy account's
//! events go out in batches instead of one go per request.
//!
//! While requests are being answered, deliveries take turns with them: after a go that
//! sent something the task waits `PAUSE_PER_GO` times as long as the go took before the
//! next, so that a stream of writes with webhooks keeps most of the machine for the
//! writes, and the events it leaves behind go out as soon as the stream thins. A go is
//! never skipped: events keep flowing under any load, only slower. The task itself is
//! `Runtime::start_deliveries` (`engine`), which calls the component.

use std::collections::BTreeSet;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use hyper::header::HeaderName;
use tokio::sync::Notify;

/// The header of an answer naming the account whose deliveries are to be sent; taken off
/// before the answer leaves.
pub(crate) const DELIVER: HeaderName = HeaderName::from_static("x-faktura-deliver");

/// How many times a go's own time the task waits before the next go while requests are
/// being answered: deliveries then take about a seventh of the time.
const PAUSE_PER_GO: u32 = 6;

/// The longest such wait: a go that took long because a receiver was slow (it waits up to
/// the webhook timeout) spent its time waiting, not working, and must not hold up the
/// deliveries of other webhooks for minutes.
const PAUSE_MAX: Duration = Duration::from_secs(1);

/// The accounts whose deliveries are asked for, and the requests in flight.
#[derive(Default)]
pub(crate) struct Deliveries {
    asked: Mutex<Asked>,
    pub(crate) wake: Notify,
    in_flight: AtomicUsize,
}

#[derive(Default)]
struct Asked {
    every_account: bool,
    accounts: BTreeSet<u64>,
}

/// A request being answered, counted while it lives.
pub(crate) struct InFlight<'a>(&'a Deliveries);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Deliveries {
    /// Counts a request as being answered until the guard is dropped.
    pub(crate) fn answering(&self) -> InFlight<'_> {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        InFlight(self)
    }

    /// Asks for a go for `account` (from the header of an answer).
    pub(crate) fn ask(&self, account: u64) {
        self.asked_mut().accounts.insert(account);
        self.wake.notify_one();
    }

    /// Asks for a go for every account.
    pub(crate) fn ask_all(&self) {
        self.asked_mut().every_account = true;
        self.wake.notify_one();
    }

    fn asked_mut(&self) -> std::sync::MutexGuard<'_, Asked> {
        // What is asked stays consistent whatever panicked while holding it.
        self.asked.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// What is asked, taken: `Some(empty)` for every account.
    pub(crate) fn take(&self) -> Option<Vec<u64>> {
        let mut asked = self.asked_mut();
        if std::mem::take(&mut asked.every_account) {
            asked.accounts.clear();
            return Some(Vec::new());
        }
        let accounts = std::mem::take(&mut asked.accounts);
        (!accounts.is_empty()).then(|| accounts.into_iter().collect())
    }

    /// Puts `accounts` back (every account when empty): their go sent something, so more
    /// may be due.
    pub(crate) fn again(&self, accounts: Vec<u64>) {
        let mut asked = self.asked_mut();
        if accounts.is_empty() {
            asked.every_account = true;
        } else {
            asked.accounts.extend(accounts);
        }
    }

    /// How long to wait after a go that took `took`.
    pub(crate) fn pause_after(&self, took: Duration) -> Duration {
        if self.in_flight.load(Ordering::Relaxed) > 0 {
            (took * PAUSE_PER_GO).min(PAUSE_MAX)
        } else {
            Duration::ZERO
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asks_gather_until_taken_and_every_account_wins() {
        let d = Deliveries::default();
        assert_eq!(d.take(), None);
        d.ask(7);
        d.ask(3);
        d.ask(7);
        assert_eq!(d.take(), Some(vec![3, 7]));
        assert_eq!(d.take(), None);
        d.ask(3);
        d.ask_all();
        assert_eq!(d.take(), Some(vec![]));
        assert_eq!(d.take(), None, "every account covers the one asked before");
        d.again(vec![5]);
        assert_eq!(d.take(), Some(vec![5]));
        d.again(vec![]);
        assert_eq!(d.take(), Some(vec![]));
    }

    #[test]
    fn goes_wait_only_while_requests_are_answered() {
        let d = Deliveries::default();
        let go = Duration::from_millis(10);
        assert_eq!(d.pause_after(go), Duration::ZERO);
        let answering = d.answering();
        assert_eq!(d.pause_after(go), go * PAUSE_PER_GO);
        // A go that waited on a slow receiver does not stop the others for long.
        assert_eq!(d.pause_after(Duration::from_secs(10)), PAUSE_MAX);
        drop(answering);
        assert_eq!(d.pause_after(go), Duration::ZERO);
    }
}
