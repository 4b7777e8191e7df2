//! The outbox of the data directory, on a redb store (`faktura_providers::outbox` keeps the
//! format, which the plug writes too): `send` returns only once the message is on disk in
//! `outbox/queue/`, `post` once the letter is in the postal queue directory.
//!
//! With SMTP configured, `deliver` sends queued messages and moves them to `sent/`; a
//! temporary refusal or an unreachable server leaves them queued with a `{id}.state`
//! (attempts, next try, last error) and retries with backoff, also after a restart; a
//! permanent refusal moves them to `failed/` with the reason. Nothing is dropped. A crash
//! between the server's acceptance and the move to `sent/` sends that message once more.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use faktura_providers::outbox::{
    self, DeliveryState, FAILED, MailError, OutboxEntry, QUEUE, SENT, list, now_unix, retire,
};
use lettre::address::Envelope;
use lettre::{AsyncSmtpTransport, Tokio1Executor};
use tokio::sync::Notify;

use super::Backlog;
use super::smtp::{Attempt, RETRY_DELAY, attempt, retry_delay};

/// Who queued a file: this process.
fn origin() -> u64 {
    u64::from(std::process::id())
}

/// Queues a message in `outbox`, durable when this returns; its receipt.
pub(super) async fn queue_mail(
    outbox: PathBuf,
    msg: outbox::Message,
) -> wasmtime::Result<Result<String, MailError>> {
    Ok(tokio::task::spawn_blocking(move || outbox::write_outbox(&outbox, &msg, origin())).await?)
}

/// Writes a letter into the postal queue directory `postal`; its receipt.
pub(super) async fn queue_letter(
    postal: PathBuf,
    letter: outbox::Letter,
) -> wasmtime::Result<Result<String, MailError>> {
    Ok(
        tokio::task::spawn_blocking(move || outbox::write_letter(&postal, &letter, origin()))
            .await?,
    )
}

/// Counts the queued and failed messages without reading one.
pub(super) async fn backlog(outbox: &Path) -> Result<Backlog, String> {
    let outbox = outbox.to_owned();
    tokio::task::spawn_blocking(move || Backlog {
        queued: outbox::count(&outbox, QUEUE) as u64,
        failed: outbox::count(&outbox, FAILED) as u64,
    })
    .await
    .map_err(|e| e.to_string())
}

/// Sends every due message of the queue once; returns when the next one is due.
pub(super) async fn deliver_due(
    outbox: &Path,
    transport: &AsyncSmtpTransport<Tokio1Executor>,
) -> Option<u64> {
    let now = now_unix();
    let mut next_due: Option<u64> = None;
    let entries = match list(outbox) {
        Ok(e) => e,
        Err(e) => {
            tracing::warn!("reading the outbox: {e}");
            return Some(now + RETRY_DELAY.as_secs());
        }
    };
    let queue = outbox.join(QUEUE);
    for entry in entries.into_iter().filter(|e| e.status == "queued") {
        if entry.state.next_try > now {
            next_due = Some(next_due.map_or(entry.state.next_try, |n| n.min(entry.state.next_try)));
            continue;
        }
        let envelope = match envelope_of(&queue, &entry) {
            Ok(e) => e,
            Err(e) => {
                let state = DeliveryState {
                    last_error: format!("bad envelope: {e}"),
                    ..entry.state
                };
                let _ = state.write(&queue, &entry.id);
                let _ = retire(outbox, &entry.id, FAILED);
                continue;
            }
        };
        let eml = match fs::read(queue.join(format!("{}.eml", entry.id))) {
            Ok(b) => b,
            Err(_) => continue,
        };
        let mut state = entry.state.clone();
        state.attempts += 1;
        let outcome = attempt(transport, &envelope, &eml).await;
        if let Some(next_try) = settle(outbox, &queue, &entry.id, state, outcome) {
            next_due = Some(next_due.map_or(next_try, |n| n.min(next_try)));
        }
    }
    next_due
}

/// The envelope of a queued message: the sender its `.envelope` file names, and its
/// recipients.
fn envelope_of(queue: &Path, entry: &OutboxEntry) -> Result<Envelope, lettre::error::Error> {
    let envelope_text =
        fs::read_to_string(queue.join(format!("{}.envelope", entry.id))).unwrap_or_default();
    let from = envelope_text.lines().find_map(|l| l.strip_prefix("from "));
    let to: Vec<lettre::Address> = entry
        .recipients
        .iter()
        .filter_map(|r| r.parse().ok())
        .collect();
    Envelope::new(from.and_then(|f| f.parse().ok()), to)
}

/// Records what became of one attempt at message `id`: sent, failed for good, or to try
/// again, whose time it answers.
fn settle(
    outbox: &Path,
    queue: &Path,
    id: &str,
    mut state: DeliveryState,
    outcome: Attempt,
) -> Option<u64> {
    match outcome {
        Attempt::Delivered(note) => {
            state.last_error = note;
            let _ = state.write(queue, id);
            if let Err(e) = retire(outbox, id, SENT) {
                tracing::error!("moving sent message {id}: {e}");
            }
            tracing::info!(message = id, "mail delivered");
            None
        }
        Attempt::Refused(reason) => {
            tracing::warn!(message = id, "mail {reason}");
            state.last_error = reason;
            let _ = state.write(queue, id);
            let _ = retire(outbox, id, FAILED);
            None
        }
        Attempt::Later(reason) => {
            state.next_try = now_unix() + retry_delay(state.attempts).as_secs();
            tracing::warn!(
                message = id,
                attempts = state.attempts,
                "mail not delivered yet, {reason}"
            );
            state.last_error = reason;
            let _ = state.write(queue, id);
            Some(state.next_try)
        }
    }
}

/// Delivers the outbox over `transport` until the task is dropped: when the next message
/// is due, and at once when this host queued one (`queued`).
pub(super) async fn deliver(
    outbox: &Path,
    transport: &AsyncSmtpTransport<Tokio1Executor>,
    queued: &Notify,
) {
    loop {
        let next = deliver_due(outbox, transport).await;
        let wait = next
            .map(|due| {
                Duration::from_secs(due.saturating_sub(now_unix())).max(Duration::from_millis(200))
            })
            .unwrap_or(Duration::from_secs(60));
        tokio::select! {
            () = queued.notified() => {}
            () = tokio::time::sleep(wait) => {}
        }
    }
}
