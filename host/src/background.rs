//! The `background` interface: the component asks for work of an account to be done soon,
//! outside any request (`soon`), and one task of the host does it (`Runtime::
//! start_background` calls the component's `admin.deliver`): at once when idle, else right
//! after the call under way, with every account asked for meanwhile in one call. A write
//! request thus leaves its webhook deliveries to a batch instead of sending them itself.
//!
//! The host keeps which accounts asked, in memory: an ask lost with the process costs only
//! time, as what it asked for stays recorded in the store and the next upkeep does it.

use std::collections::BTreeSet;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::Notify;
use wasmtime::component::{HasData, Linker};

use crate::bindings::faktura::service::background as wit;

/// The accounts that asked, and the task's wake-up.
#[derive(Default)]
pub(crate) struct BackgroundCtx {
    asked: Mutex<BTreeSet<u64>>,
    wake: Notify,
    /// Whether a task takes the asks (`serve` starts one; the commands run none).
    running: AtomicBool,
}

impl BackgroundCtx {
    /// Notes that a task takes the asks from now on.
    pub(crate) fn run(&self) {
        self.running.store(true, Ordering::Release);
    }

    /// Waits until some account asked, and takes them all.
    pub(crate) async fn next(&self) -> Vec<u64> {
        loop {
            let asked = std::mem::take(&mut *self.lock());
            if !asked.is_empty() {
                return asked.into_iter().collect();
            }
            self.wake.notified().await;
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeSet<u64>> {
        // A set of account ids cannot be left half-changed by a panic.
        self.asked.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Adds the `background` import to `linker`; `ctx` finds the context in a request's data.
pub(crate) fn add_to_linker<T: Send + 'static>(
    linker: &mut Linker<T>,
    ctx: fn(&mut T) -> &BackgroundCtx,
) -> wasmtime::Result<()> {
    wit::add_to_linker::<T, HasBackground>(linker, ctx)
}

/// What the generated `add_to_linker` hands the `Host` impl: the context alone.
struct HasBackground;

impl HasData for HasBackground {
    type Data<'a> = &'a BackgroundCtx;
}

impl wit::Host for &BackgroundCtx {
    async fn soon(&mut self, account: u64) -> wasmtime::Result<bool> {
        if !self.running.load(Ordering::Acquire) {
            return Ok(false);
        }
        self.lock().insert(account);
        self.wake.notify_one();
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bindings::faktura::service::background::Host as _;

    #[tokio::test]
    async fn asks_wait_for_a_running_task_and_come_out_once_each() {
        let ctx = BackgroundCtx::default();
        let mut host = &ctx;
        assert!(!host.soon(7).await.unwrap(), "no task runs yet");
        assert!(ctx.lock().is_empty());
        ctx.run();
        for account in [7, 3, 7] {
            assert!(host.soon(account).await.unwrap());
        }
        assert_eq!(ctx.next().await, [3, 7]);
        let waiting = tokio::time::timeout(std::time::Duration::from_millis(50), ctx.next());
        assert!(waiting.await.is_err(), "nothing asked since");
    }
}
