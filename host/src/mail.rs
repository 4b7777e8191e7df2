//! The `mail` interface: e-mail through the durable outbox (`faktura_backend::outbox`),
//! delivered over SMTP by `deliver`; letters into the postal print queue.
//!
//! `send` returns only once the message is on disk in `outbox/queue/`. With SMTP
//! configured, `deliver` sends queued messages and moves them to `sent/`; a temporary
//! refusal or an unreachable server leaves them queued with a `{id}.state` (attempts,
//! next try, last error) and retries with backoff, also after a restart; a permanent
//! refusal moves them to `failed/` with the reason. Nothing is dropped. A crash between
//! the server's acceptance and the move to `sent/` sends that message once more.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use faktura_backend::outbox::{self, DeliveryState, FAILED, QUEUE, SENT, list, now_unix, retire};
use lettre::address::Envelope;
use lettre::{AsyncSmtpTransport, AsyncTransport, Tokio1Executor};
use tokio::sync::Notify;

use crate::State;
use crate::bindings::faktura::service::mail::{
    self as wit, Attachment, Letter, MailError, Message,
};

/// Where mail goes.
#[derive(Debug, Clone)]
pub struct MailConfig {
    pub outbox: PathBuf,
    /// The postal print queue; postal dispatch is off without it.
    pub postal: Option<PathBuf>,
    /// An SMTP URL (`smtp://host:port`, `smtps://…`, with optional `user:pass@`); without
    /// it messages stay in the outbox.
    pub smtp: Option<String>,
}

/// Wakes the delivery task when a message was queued.
#[derive(Default)]
pub(crate) struct Outbox {
    pub(crate) queued: Notify,
}

/// First retry delay; it doubles per attempt up to `RETRY_DELAY_MAX`.
const RETRY_DELAY: Duration = Duration::from_secs(1);
const RETRY_DELAY_MAX: Duration = Duration::from_secs(15 * 60);

/// Sends every due message of the queue once; returns when the next one is due.
async fn deliver_due(outbox: &Path, transport: &AsyncSmtpTransport<Tokio1Executor>) -> Option<u64> {
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
        let envelope_text =
            fs::read_to_string(queue.join(format!("{}.envelope", entry.id))).unwrap_or_default();
        let from = envelope_text.lines().find_map(|l| l.strip_prefix("from "));
        let to: Vec<lettre::Address> = entry
            .recipients
            .iter()
            .filter_map(|r| r.parse().ok())
            .collect();
        let envelope = match Envelope::new(from.and_then(|f| f.parse().ok()), to) {
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
        match transport.send_raw(&envelope, &eml).await {
            Ok(response) => {
                state.last_error = format!("accepted: {}", response.code());
                let _ = state.write(&queue, &entry.id);
                if let Err(e) = retire(outbox, &entry.id, SENT) {
                    tracing::error!("moving sent message {}: {e}", entry.id);
                }
                tracing::info!(message = entry.id, "mail delivered");
            }
            Err(e) if e.is_permanent() => {
                state.last_error = format!("refused: {e}");
                let _ = state.write(&queue, &entry.id);
                let _ = retire(outbox, &entry.id, FAILED);
                tracing::warn!(message = entry.id, "mail refused permanently: {e}");
            }
            Err(e) => {
                let delay = RETRY_DELAY
                    .saturating_mul(1u32 << state.attempts.min(16).saturating_sub(1))
                    .min(RETRY_DELAY_MAX);
                state.next_try = now_unix() + delay.as_secs();
                state.last_error = format!("will retry: {e}");
                let _ = state.write(&queue, &entry.id);
                next_due = Some(next_due.map_or(state.next_try, |n| n.min(state.next_try)));
                tracing::warn!(
                    message = entry.id,
                    attempts = state.attempts,
                    "mail not delivered yet: {e}"
                );
            }
        }
    }
    next_due
}

fn transport(
    url: &str,
) -> Result<AsyncSmtpTransport<Tokio1Executor>, lettre::transport::smtp::Error> {
    Ok(AsyncSmtpTransport::<Tokio1Executor>::from_url(url)?
        .timeout(Some(Duration::from_secs(30)))
        .build())
}

/// Tries every due message of `outbox` once (`faktura outbox deliver`, for outboxes that
/// no running host delivers, such as the standalone component's).
pub async fn deliver_once(outbox: &Path, url: &str) -> anyhow::Result<()> {
    let transport = transport(url).map_err(|e| anyhow::anyhow!("bad SMTP URL {url}: {e}"))?;
    deliver_due(outbox, &transport).await;
    Ok(())
}

/// Delivers the outbox over SMTP until the task is dropped.
pub(crate) async fn deliver(config: MailConfig, outbox: Arc<Outbox>) {
    let Some(url) = config.smtp.clone() else {
        return;
    };
    let transport = match transport(&url) {
        Ok(t) => t,
        Err(e) => {
            tracing::error!("bad SMTP URL {url}: {e}; mail stays in the outbox");
            return;
        }
    };
    loop {
        let next = deliver_due(&config.outbox, &transport).await;
        let wait = next
            .map(|due| {
                Duration::from_secs(due.saturating_sub(now_unix())).max(Duration::from_millis(200))
            })
            .unwrap_or(Duration::from_secs(60));
        tokio::select! {
            () = outbox.queued.notified() => {}
            () = tokio::time::sleep(wait) => {}
        }
    }
}

fn attachments(list: Vec<Attachment>) -> Vec<outbox::Attachment> {
    list.into_iter()
        .map(|a| outbox::Attachment {
            filename: a.filename,
            mimetype: a.mimetype,
            content: a.content,
        })
        .collect()
}

fn mail_error(e: outbox::MailError) -> MailError {
    match e {
        outbox::MailError::Rejected(m) => MailError::Rejected(m),
        outbox::MailError::Unavailable(m) => MailError::Unavailable(m),
    }
}

impl wit::Host for State {
    async fn send(&mut self, msg: Message) -> wasmtime::Result<Result<String, MailError>> {
        let outbox = self.shared.mail.outbox.clone();
        let msg = outbox::Message {
            from: msg.from,
            to: msg.to,
            cc: msg.cc,
            bcc: msg.bcc,
            subject: msg.subject,
            body: msg.body,
            attachments: attachments(msg.attachments),
        };
        let origin = u64::from(std::process::id());
        let result =
            tokio::task::spawn_blocking(move || outbox::write_outbox(&outbox, &msg, origin))
                .await?
                .map_err(mail_error);
        if result.is_ok() {
            self.shared.outbox.queued.notify_one();
        }
        Ok(result)
    }

    async fn post(&mut self, letter: Letter) -> wasmtime::Result<Result<String, MailError>> {
        let Some(queue) = self.shared.mail.postal.clone() else {
            return Ok(Err(MailError::NotConfigured(
                "postal dispatch is not configured".into(),
            )));
        };
        let letter = outbox::Letter {
            address: letter.address,
            documents: attachments(letter.documents),
            color: letter.color,
            duplex: letter.duplex,
            paper_weight: letter.paper_weight,
        };
        let origin = u64::from(std::process::id());
        Ok(
            tokio::task::spawn_blocking(move || outbox::write_letter(&queue, &letter, origin))
                .await?
                .map_err(mail_error),
        )
    }
}
