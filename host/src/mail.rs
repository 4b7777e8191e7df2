//! The `mail` interface: e-mail through a durable queue, delivered over SMTP by
//! `deliver`; letters into the postal print queue. The `Queue` is files in the data
//! directory (`faktura_backend::outbox`) on a redb store, and the `faktura_mail` table
//! (`mail_pg`) on a PostgreSQL store, where every host of the store queues and delivers.
//!
//! With files, `send` returns only once the message is on disk in `outbox/queue/`. With
//! SMTP configured, `deliver` sends queued messages and moves them to `sent/`; a temporary
//! refusal or an unreachable server leaves them queued with a `{id}.state` (attempts,
//! next try, last error) and retries with backoff, also after a restart; a permanent
//! refusal moves them to `failed/` with the reason. Nothing is dropped. A crash between
//! the server's acceptance and the move to `sent/` sends that message once more.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use faktura_backend::outbox::{
    self, DeliveryState, FAILED, OutboxEntry, QUEUE, SENT, list, now_unix, retire,
};
use lettre::address::Envelope;
use lettre::{AsyncSmtpTransport, AsyncTransport, Tokio1Executor};
use tokio::sync::Notify;

use crate::bindings::faktura::service::mail::{
    self as wit, Attachment, Letter, MailError, Message,
};
use crate::mail_pg::MailTable;
use crate::metrics::StoreMetrics;
use crate::{Options, State};

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

/// Where `send` and `post` queue, and where delivery looks.
pub(crate) enum Queue {
    /// Files in the data directory: `MailConfig::outbox`, letters in `MailConfig::postal`.
    Files,
    /// The PostgreSQL store's table, shared by every host on the store.
    Postgres(MailTable),
}

/// The queue, and what wakes the delivery task when this host queued a message.
pub(crate) struct Outbox {
    pub(crate) queued: Notify,
    queue: Queue,
}

impl Outbox {
    pub(crate) fn new(queue: Queue) -> Outbox {
        Outbox {
            queued: Notify::new(),
            queue,
        }
    }

    /// Counts the queued and failed messages; read at every scrape, so counted without
    /// reading a message.
    pub(crate) async fn backlog(&self, config: &MailConfig) -> Result<Backlog, String> {
        match &self.queue {
            Queue::Files => {
                let outbox = config.outbox.clone();
                tokio::task::spawn_blocking(move || Backlog {
                    queued: outbox::count(&outbox, QUEUE) as u64,
                    failed: outbox::count(&outbox, FAILED) as u64,
                })
                .await
                .map_err(|e| e.to_string())
            }
            Queue::Postgres(table) => table.backlog().await,
        }
    }
}

/// Messages still to deliver and messages refused for good (the outbox gauges of
/// `/metrics`).
pub(crate) struct Backlog {
    pub(crate) queued: u64,
    pub(crate) failed: u64,
}

/// First retry delay; it doubles per attempt up to `RETRY_DELAY_MAX`.
const RETRY_DELAY: Duration = Duration::from_secs(1);
const RETRY_DELAY_MAX: Duration = Duration::from_secs(15 * 60);

/// How long a message waits after its `attempts`th failed attempt.
pub(crate) fn retry_delay(attempts: u32) -> Duration {
    RETRY_DELAY
        .saturating_mul(1u32 << attempts.min(16).saturating_sub(1))
        .min(RETRY_DELAY_MAX)
}

/// What became of one attempt to deliver a message (or to hand a letter to the postal
/// queue), with the note kept as its last error.
pub(crate) enum Attempt {
    /// Taken: "accepted: 250".
    Delivered(String),
    /// Refused for good: "refused: …".
    Refused(String),
    /// Not taken for now: "will retry: …"; tried again after `retry_delay`.
    Later(String),
}

/// Sends one message over SMTP.
pub(crate) async fn attempt(
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
        match attempt(transport, &envelope, &eml).await {
            Attempt::Delivered(note) => {
                state.last_error = note;
                let _ = state.write(&queue, &entry.id);
                if let Err(e) = retire(outbox, &entry.id, SENT) {
                    tracing::error!("moving sent message {}: {e}", entry.id);
                }
                tracing::info!(message = entry.id, "mail delivered");
            }
            Attempt::Refused(reason) => {
                tracing::warn!(message = entry.id, "mail {reason}");
                state.last_error = reason;
                let _ = state.write(&queue, &entry.id);
                let _ = retire(outbox, &entry.id, FAILED);
            }
            Attempt::Later(reason) => {
                state.next_try = now_unix() + retry_delay(state.attempts).as_secs();
                tracing::warn!(
                    message = entry.id,
                    attempts = state.attempts,
                    "mail not delivered yet, {reason}"
                );
                state.last_error = reason;
                let _ = state.write(&queue, &entry.id);
                next_due = Some(next_due.map_or(state.next_try, |n| n.min(state.next_try)));
            }
        }
    }
    next_due
}

pub(crate) fn transport(
    url: &str,
) -> Result<AsyncSmtpTransport<Tokio1Executor>, lettre::transport::smtp::Error> {
    Ok(AsyncSmtpTransport::<Tokio1Executor>::from_url(url)?
        .timeout(Some(Duration::from_secs(30)))
        .build())
}

/// The table of the PostgreSQL store `options` names, or `None` for the data directory's
/// files.
fn store_table(options: &Options) -> anyhow::Result<Option<MailTable>> {
    match options.store.as_deref().map(str::trim) {
        None | Some("") => Ok(None),
        Some(url) => Ok(Some(MailTable::new(
            crate::store::postgres::Postgres::new(url, StoreMetrics::default())?.pool(),
        ))),
    }
}

/// Every message and letter of the outbox of the store `options` names, oldest first: the
/// data directory's `outbox/`, or the PostgreSQL store's table (`faktura outbox list`).
pub async fn entries(options: &Options) -> anyhow::Result<Vec<OutboxEntry>> {
    match store_table(options)? {
        None => Ok(list(&options.outbox_dir())?),
        Some(table) => table
            .list()
            .await
            .map_err(|e| anyhow::anyhow!("listing the mail of the store: {e}")),
    }
}

/// Tries every due message of the outbox of the store `options` names once (`faktura
/// outbox deliver`, for outboxes that no running host delivers, such as the standalone
/// component's).
pub async fn deliver_once(options: &Options, url: &str) -> anyhow::Result<()> {
    let transport = transport(url).map_err(|e| anyhow::anyhow!("bad SMTP URL {url}: {e}"))?;
    match store_table(options)? {
        None => {
            deliver_due(&options.outbox_dir(), &transport).await;
        }
        Some(table) => {
            table
                .deliver_due(&transport)
                .await
                .map_err(|e| anyhow::anyhow!("delivering the mail of the store: {e}"))?;
        }
    }
    Ok(())
}

/// Delivers the outbox over SMTP until the task is dropped; on a PostgreSQL store also
/// moves letters into this host's postal queue.
pub(crate) async fn deliver(config: MailConfig, outbox: Arc<Outbox>) {
    let transport = match config.smtp.as_deref().map(transport) {
        None => None,
        Some(Ok(t)) => Some(t),
        Some(Err(e)) => {
            let url = config.smtp.as_deref().unwrap_or_default();
            tracing::error!("bad SMTP URL {url}: {e}; mail stays in the outbox");
            None
        }
    };
    if let Queue::Postgres(table) = &outbox.queue {
        return table
            .deliver(transport, config.postal.clone(), &outbox.queued)
            .await;
    }
    let Some(transport) = transport else {
        return;
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
        outbox::MailError::Unavailable(m) => {
            // The component keeps the message in the store and hands it over again later.
            tracing::error!("the mail queue could not take a message: {m}");
            MailError::Unavailable(m)
        }
    }
}

impl wit::Host for State {
    async fn send(&mut self, msg: Message) -> wasmtime::Result<Result<String, MailError>> {
        let queued = self.shared.outbox.clone();
        let msg = outbox::Message {
            from: msg.from,
            to: msg.to,
            cc: msg.cc,
            bcc: msg.bcc,
            subject: msg.subject,
            body: msg.body,
            attachments: attachments(msg.attachments),
        };
        let result = match &queued.queue {
            Queue::Files => {
                let outbox = self.shared.mail.outbox.clone();
                let origin = u64::from(std::process::id());
                tokio::task::spawn_blocking(move || outbox::write_outbox(&outbox, &msg, origin))
                    .await?
            }
            Queue::Postgres(table) => table.queue_mail(&msg).await,
        }
        .map_err(mail_error);
        if result.is_ok() {
            queued.queued.notify_one();
        }
        Ok(result)
    }

    async fn post(&mut self, letter: Letter) -> wasmtime::Result<Result<String, MailError>> {
        let letter = outbox::Letter {
            address: letter.address,
            documents: attachments(letter.documents),
            color: letter.color,
            duplex: letter.duplex,
            paper_weight: letter.paper_weight,
        };
        let queued = self.shared.outbox.clone();
        if let Queue::Postgres(table) = &queued.queue {
            // Any host of the store with a postal queue takes it from the table.
            let result = table.queue_letter(&letter).await.map_err(mail_error);
            if result.is_ok() {
                queued.queued.notify_one();
            }
            return Ok(result);
        }
        let Some(queue) = self.shared.mail.postal.clone() else {
            return Ok(Err(MailError::NotConfigured(
                "postal dispatch is not configured".into(),
            )));
        };
        let origin = u64::from(std::process::id());
        Ok(
            tokio::task::spawn_blocking(move || outbox::write_letter(&queue, &letter, origin))
                .await?
                .map_err(mail_error),
        )
    }
}
