//! Delivery over SMTP, for both queues: the transport of an SMTP URL, one attempt at a
//! message and what came of it, and how long a message waits after a failed attempt. It
//! must not know where messages are queued.

use std::time::Duration;

use lettre::address::Envelope;
use lettre::{AsyncSmtpTransport, AsyncTransport, Tokio1Executor};

/// First retry delay; it doubles per attempt up to `RETRY_DELAY_MAX`.
pub(super) const RETRY_DELAY: Duration = Duration::from_secs(1);
const RETRY_DELAY_MAX: Duration = Duration::from_secs(15 * 60);

/// How long a message waits after its `attempts`th failed attempt.
pub(super) fn retry_delay(attempts: u32) -> Duration {
    RETRY_DELAY
        .saturating_mul(1u32 << attempts.min(16).saturating_sub(1))
        .min(RETRY_DELAY_MAX)
}

/// What became of one attempt to deliver a message (or to hand a letter to the postal
/// queue), with the note kept as its last error.
pub(super) enum Attempt {
    /// Taken: "accepted: 250".
    Delivered(String),
    /// Refused for good: "refused: …".
    Refused(String),
    /// Not taken for now: "will retry: …"; tried again after `retry_delay`.
    Later(String),
}

/// Sends one message over SMTP.
pub(super) async fn attempt(
    transport: &AsyncSmtpTransport<Tokio1Executor>,
    envelope: &Envelope,
    eml: &[u8],
) -> Attempt {
    match transport.send_raw(envelope, eml).await {
        Ok(response) => Attempt::Delivered(format!("accepted: {}", response.code())),
        Err(e) if e.is_permanent() => Attempt::Refused(format!("refused: {e}")),
        Err(e) => Attempt::Later(format!("will retry: {e}")),
    }
}

/// The transport of an SMTP URL (`smtp://host:port`, `smtps://…`, with optional
/// `user:pass@`).
pub(super) fn transport(
    url: &str,
) -> Result<AsyncSmtpTransport<Tokio1Executor>, lettre::transport::smtp::Error> {
    Ok(AsyncSmtpTransport::<Tokio1Executor>::from_url(url)?
        .timeout(Some(Duration::from_secs(30)))
        .build())
}
