//! The `mail` interface: e-mail through a durable queue, delivered over SMTP by
//! `MailCtx::deliver`; letters into the postal print queue. The `Queue` is files in the
//! data directory (`files.rs`) on a redb store, and the `faktura_mail` table
//! (`postgres.rs`) on a PostgreSQL store, where every host of the store queues and
//! delivers; `smtp.rs` sends for both and says when to try again.
//!
//! It owns the mapping between the generated bindings and the queue, and the outbox
//! commands of the CLI. It knows nothing of what a message is about: the component writes
//! them whole.

mod files;
mod postgres;
mod smtp;

use std::path::PathBuf;

use faktura_providers::outbox::{self, OutboxEntry};
use tokio::sync::Notify;
use wasmtime::component::{HasData, Linker};

use crate::Options;
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

/// Where `send` and `post` queue, and where delivery looks.
enum Queue {
    /// Files in the data directory: `MailConfig::outbox`, letters in `MailConfig::postal`.
    Files,
    /// The PostgreSQL store's table, shared by every host on the store.
    Postgres(postgres::MailTable),
}

/// The mail of every request, and of the delivery task: the interface's context.
pub(crate) struct MailCtx {
    config: MailConfig,
    queue: Queue,
    /// Wakes the delivery task when this host queued a message.
    queued: Notify,
}

/// Messages still to deliver and messages refused for good (the outbox gauges of
/// `/metrics`).
pub(crate) struct Backlog {
    pub(crate) queued: u64,
    pub(crate) failed: u64,
}

impl MailCtx {
    /// Mail as `config` says, queued in the database of `pool` when the store is
    /// PostgreSQL, else in the files of the data directory.
    pub(crate) fn new(config: MailConfig, pool: Option<crate::postgres::Pool>) -> MailCtx {
        MailCtx {
            config,
            queue: pool.map_or(Queue::Files, |pool| {
                Queue::Postgres(postgres::MailTable::new(pool))
            }),
            queued: Notify::new(),
        }
    }

    /// Queues a message, durable when this returns; its receipt.
    async fn send(&self, msg: outbox::Message) -> wasmtime::Result<Result<String, MailError>> {
        let result = match &self.queue {
            Queue::Files => files::queue_mail(self.config.outbox.clone(), msg).await?,
            Queue::Postgres(table) => table.queue_mail(&msg).await,
        }
        .map_err(mail_error);
        if result.is_ok() {
            self.queued.notify_one();
        }
        Ok(result)
    }

    /// Queues a letter for the postal print queue; its receipt.
    async fn post(&self, letter: outbox::Letter) -> wasmtime::Result<Result<String, MailError>> {
        if let Queue::Postgres(table) = &self.queue {
            // Any host of the store with a postal queue takes it from the table.
            let result = table.queue_letter(&letter).await.map_err(mail_error);
            if result.is_ok() {
                self.queued.notify_one();
            }
            return Ok(result);
        }
        let Some(postal) = self.config.postal.clone() else {
            return Ok(Err(MailError::NotConfigured(
                "postal dispatch is not configured".into(),
            )));
        };
        Ok(files::queue_letter(postal, letter)
            .await?
            .map_err(mail_error))
    }

    /// Counts the queued and failed messages; read at every scrape, so counted without
    /// reading a message.
    pub(crate) async fn backlog(&self) -> Result<Backlog, String> {
        match &self.queue {
            Queue::Files => files::backlog(&self.config.outbox).await,
            Queue::Postgres(table) => table.backlog().await,
        }
    }

    /// Delivers the outbox over SMTP until the task is dropped; on a PostgreSQL store also
    /// moves letters into this host's postal queue.
    pub(crate) async fn deliver(&self) {
        let config = &self.config;
        let transport = match config.smtp.as_deref().map(smtp::transport) {
            None => None,
            Some(Ok(t)) => Some(t),
            Some(Err(e)) => {
                let url = config.smtp.as_deref().unwrap_or_default();
                tracing::error!("bad SMTP URL {url}: {e}; mail stays in the outbox");
                None
            }
        };
        match (&self.queue, transport) {
            (Queue::Postgres(table), transport) => {
                table
                    .deliver(transport, config.postal.clone(), &self.queued)
                    .await
            }
            (Queue::Files, Some(transport)) => {
                files::deliver(&config.outbox, &transport, &self.queued).await
            }
            (Queue::Files, None) => {}
        }
    }
}

/// The table of the PostgreSQL store `options` names, or `None` for the data directory's
/// files.
fn store_table(options: &Options) -> anyhow::Result<Option<postgres::MailTable>> {
    Ok(crate::postgres::Pool::of(options)?.map(postgres::MailTable::new))
}

/// Every message and letter of the outbox of the store `options` names, oldest first: the
/// data directory's `outbox/`, or the PostgreSQL store's table (`faktura outbox list`).
pub async fn entries(options: &Options) -> anyhow::Result<Vec<OutboxEntry>> {
    match store_table(options)? {
        None => Ok(outbox::list(&options.outbox_dir())?),
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
    let transport = smtp::transport(url).map_err(|e| anyhow::anyhow!("bad SMTP URL {url}: {e}"))?;
    match store_table(options)? {
        None => {
            files::deliver_due(&options.outbox_dir(), &transport).await;
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

/// Adds the `mail` import to `linker`; `ctx` finds the context in a request's data.
pub(crate) fn add_to_linker<T: Send + 'static>(
    linker: &mut Linker<T>,
    ctx: fn(&mut T) -> &MailCtx,
) -> wasmtime::Result<()> {
    wit::add_to_linker::<T, HasMail>(linker, ctx)
}

/// What the generated `add_to_linker` hands the `Host` impl: the context alone.
struct HasMail;

impl HasData for HasMail {
    type Data<'a> = &'a MailCtx;
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

impl wit::Host for &MailCtx {
    async fn send(&mut self, msg: Message) -> wasmtime::Result<Result<String, MailError>> {
        let msg = outbox::Message {
            from: msg.from,
            to: msg.to,
            cc: msg.cc,
            bcc: msg.bcc,
            subject: msg.subject,
            body: msg.body,
            attachments: attachments(msg.attachments),
        };
        MailCtx::send(self, msg).await
    }

    async fn post(&mut self, letter: Letter) -> wasmtime::Result<Result<String, MailError>> {
        let letter = outbox::Letter {
            address: letter.address,
            documents: attachments(letter.documents),
            color: letter.color,
            duplex: letter.duplex,
            paper_weight: letter.paper_weight,
        };
        MailCtx::post(self, letter).await
    }
}
