//! The plug's mail and rate limit as Rust calls: mail to the outbox in the data directory,
//! letters to `FAKTURA_POSTAL` when set, and no rate limit. The plug's WIT exports
//! (`bindings`) and the service compiled with the plug (its feature `fused`) both call these.

use faktura_providers::outbox;

use crate::Config;

/// Length of a rate-limit window, as the host counts them.
const WINDOW_SECS: u64 = 15 * 60;

/// A rate-limit window as the `ratelimit` interface tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub limit: Option<u32>,
    pub remaining: u32,
    pub reset: u64,
    pub allowed: bool,
}

/// No limit applies: every request is allowed and the window only feeds the headers.
pub fn hit() -> Window {
    let now = outbox::now_unix();
    Window {
        limit: None,
        remaining: u32::MAX,
        reset: now - now % WINDOW_SECS + WINDOW_SECS,
        allowed: true,
    }
}

/// Counted nowhere either: an instance of the plug serves one request or a few, and keeps
/// no count between them (a limit the guest names holds under the faktura host).
pub fn hit_limited(limit: u32, window_secs: u32) -> Window {
    let now = outbox::now_unix();
    let window = u64::from(window_secs.max(1));
    Window {
        limit: Some(limit),
        remaining: limit,
        reset: now - now % window + window,
        allowed: true,
    }
}

/// Queues `msg` in the outbox; `origin` tells this instance's entries from those of
/// instances writing at the same time.
pub fn send(msg: &outbox::Message, origin: u64) -> Result<String, outbox::MailError> {
    outbox::write_outbox(&Config::get().data.join("outbox"), msg, origin)
}

/// Why a letter was not posted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PostError {
    /// No postal queue is set.
    NotConfigured(String),
    Mail(outbox::MailError),
}

/// Queues `letter` for postal dispatch, when a queue is set.
pub fn post(letter: &outbox::Letter, origin: u64) -> Result<String, PostError> {
    let Some(queue) = &Config::get().postal else {
        return Err(PostError::NotConfigured(
            "postal dispatch is not configured (set FAKTURA_POSTAL)".into(),
        ));
    };
    outbox::write_letter(queue, letter, origin).map_err(PostError::Mail)
}
