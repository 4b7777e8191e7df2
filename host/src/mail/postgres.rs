//! The mail queue of a PostgreSQL store: the `faktura_mail` table, where `send` and `post`
//! queue on every host of the store and from which any host delivers, so that a message
//! outlives the host that took it.
//!
//! A message or letter is a row, durable once its INSERT returns. A host with SMTP claims
//! the oldest due message in a transaction (`FOR UPDATE SKIP LOCKED`), sends it while it
//! holds the claim, and records in the same transaction what came of it: sent, failed
//! with the reason, or queued again after the file outbox's backoff. Two hosts never send
//! one row at once. A host that dies while sending loses its claim with its connection and
//! the row is claimed again: at least once, as with files. Letters wait in the table until
//! a host with a postal queue directory claims them the same way and writes them there.
//!
//! Times are the server's (`now()`), so that the hosts' clocks need not agree. The table
//! is made with the store's others (`crate::postgres`); this module holds no schema.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use deadpool_postgres::Object;
use faktura_providers::outbox::{self, DeliveryState, MailError, OutboxEntry};
use lettre::address::{Address, Envelope};
use lettre::message::Mailbox;
use lettre::{AsyncSmtpTransport, Tokio1Executor};
use tokio::sync::Notify;
use tokio_postgres::Row;

use super::Backlog;
use super::smtp::{Attempt, attempt, retry_delay};
use crate::postgres::Pool;

const TABLE: &str = "faktura_mail";

/// The longest a delivering host waits before it looks for due rows again: rows queued by
/// other hosts wake nobody here.
const POLL: Duration = Duration::from_secs(2);
/// The shortest wait between two looks, so that a row due now is not asked for in a loop.
const POLL_MIN: Duration = Duration::from_millis(50);

/// The table in the database of the store.
pub(super) struct MailTable {
    pool: Pool,
    /// This host, as the rows it queues name it.
    origin: String,
}

fn pg(e: impl std::fmt::Display) -> String {
    format!("PostgreSQL: {e}")
}

/// A claim on rows: a transaction on a connection of its own. Dropped before `commit`
/// (an error, or the delivery task ended while it sent), its connection is closed rather
/// than returned to the pool: the server rolls the transaction back, which releases the
/// claim, and no later user of the pool runs inside it.
struct Claim(Option<Object>);

impl Claim {
    async fn begin(table: &MailTable) -> Result<Claim, String> {
        let claim = Claim(Some(table.connection().await?));
        // READ COMMITTED whatever the server's default: a row another host sent meanwhile
        // is checked again when locked, and skipped as no longer queued.
        claim
            .conn()
            .batch_execute("BEGIN ISOLATION LEVEL READ COMMITTED")
            .await
            .map_err(pg)?;
        Ok(claim)
    }

    fn conn(&self) -> &Object {
        self.0
            .as_ref()
            .expect("a claim has its connection until it ends")
    }

    async fn commit(mut self) -> Result<(), String> {
        self.conn().batch_execute("COMMIT").await.map_err(pg)?;
        // Back to the pool, with no transaction open.
        self.0.take();
        Ok(())
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        if let Some(conn) = self.0.take() {
            drop(Object::take(conn));
        }
    }
}

/// The address alone of a mailbox (`Name <a@b>` → `a@b`), as SMTP's envelope takes it.
fn bare(mailbox: &str) -> String {
    mailbox
        .trim()
        .parse::<Mailbox>()
        .map_or_else(|_| mailbox.trim().to_owned(), |m| m.email.to_string())
}

impl MailTable {
    pub(super) fn new(pool: Pool) -> MailTable {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_owned())
            .unwrap_or_default();
        MailTable {
            pool,
            origin: format!("{host} pid {}", std::process::id()),
        }
    }

    /// A pooled connection, with the tables made.
    async fn connection(&self) -> Result<Object, String> {
        self.pool.get().await.map_err(|e| e.to_string())
    }

    /// A new row's id, and its receipt: time first, so that receipts sort as the file
    /// outbox's do, and the id, which makes it unique (it is also the Message-ID's).
    async fn next_id(&self, conn: &Object, kind: &str) -> Result<(i64, String), String> {
        let id: i64 = conn
            .query_one(
                "SELECT nextval(pg_get_serial_sequence('faktura_mail', 'id'))",
                &[],
            )
            .await
            .map_err(pg)?
            .get(0);
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        Ok((id, format!("{nanos:020}-{kind}-{id}")))
    }

    /// Queues a message: checked and built as the file outbox does, durable when this
    /// returns; its receipt.
    pub(super) async fn queue_mail(&self, msg: &outbox::Message) -> Result<String, MailError> {
        let unavailable = MailError::Unavailable;
        let conn = self.connection().await.map_err(unavailable)?;
        let (id, receipt) = self.next_id(&conn, "mail").await.map_err(unavailable)?;
        let (eml, recipients) = outbox::build(msg, &receipt)?;
        let recipients: Vec<String> = recipients.iter().map(|r| bare(r)).collect();
        conn.execute(
            "INSERT INTO faktura_mail \
             (id, kind, receipt, origin, sender, recipients, subject, message) \
             VALUES ($1, 'mail', $2, $3, $4, $5, $6, $7)",
            &[
                &id,
                &receipt,
                &self.origin,
                &bare(&msg.from),
                &recipients,
                &msg.subject,
                &eml,
            ],
        )
        .await
        .map_err(|e| unavailable(pg(e)))?;
        Ok(receipt)
    }

    /// Queues a letter, checked as the file outbox does; its receipt.
    pub(super) async fn queue_letter(&self, letter: &outbox::Letter) -> Result<String, MailError> {
        outbox::check_letter(letter)?;
        let unavailable = MailError::Unavailable;
        let conn = self.connection().await.map_err(unavailable)?;
        let (id, receipt) = self.next_id(&conn, "letter").await.map_err(unavailable)?;
        let names: Vec<&str> = letter
            .documents
            .iter()
            .map(|d| d.filename.as_str())
            .collect();
        let documents: Vec<&[u8]> = letter
            .documents
            .iter()
            .map(|d| d.content.as_slice())
            .collect();
        let paper_weight = i32::try_from(letter.paper_weight).unwrap_or(i32::MAX);
        conn.execute(
            "INSERT INTO faktura_mail (id, kind, receipt, origin, address, document_names, \
             documents, color, duplex, paper_weight) \
             VALUES ($1, 'letter', $2, $3, $4, $5, $6, $7, $8, $9)",
            &[
                &id,
                &receipt,
                &self.origin,
                &letter.address,
                &names,
                &documents,
                &letter.color,
                &letter.duplex,
                &paper_weight,
            ],
        )
        .await
        .map_err(|e| unavailable(pg(e)))?;
        Ok(receipt)
    }

    /// Claims the oldest due row of `work`'s kind, delivers it while holding the claim, and
    /// records what came of it before the claim ends; `false` when nothing is due.
    ///
    /// One row per claim: what a crash between delivery and COMMIT sends once more is that
    /// one message, as with the file outbox.
    async fn work_one(&self, work: &Work<'_>) -> Result<bool, String> {
        let kind = work.kind();
        let claim = Claim::begin(self).await?;
        let conn = claim.conn();
        let row = conn
            .query_opt(
                "SELECT id, receipt, attempts, sender, recipients, message, address, \
                 document_names, documents, color, duplex, paper_weight FROM faktura_mail \
                 WHERE kind = $1 AND status = 'queued' AND next_try <= now() \
                 ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED",
                &[&kind],
            )
            .await
            .map_err(pg)?;
        let Some(row) = row else {
            claim.commit().await?;
            return Ok(false);
        };
        let id: i64 = row.get("id");
        let receipt: String = row.get("receipt");
        let attempts = row.get::<_, i32>("attempts").saturating_add(1);
        let (status, delay, note) = match work.deliver(&row).await {
            Attempt::Delivered(note) => ("sent", Duration::ZERO, note),
            Attempt::Refused(reason) => ("failed", Duration::ZERO, reason),
            Attempt::Later(reason) => (
                "queued",
                retry_delay(u32::try_from(attempts).unwrap_or(u32::MAX)),
                reason,
            ),
        };
        conn.execute(
            "UPDATE faktura_mail SET status = $2, attempts = $3, \
             next_try = clock_timestamp() + make_interval(secs => $4), last_error = $5 \
             WHERE id = $1",
            &[&id, &status, &attempts, &delay.as_secs_f64(), &note],
        )
        .await
        .map_err(pg)?;
        claim.commit().await?;
        match status {
            "sent" => tracing::info!(message = receipt, "{kind} delivered"),
            "failed" => tracing::warn!(message = receipt, "{kind} {note}"),
            _ => tracing::warn!(
                message = receipt,
                attempts,
                "{kind} not delivered yet, {note}"
            ),
        }
        Ok(true)
    }

    /// Works off every due row of `work`'s kind once; how long until the next is due, at
    /// most `POLL`.
    async fn work_due(&self, work: &Work<'_>) -> Result<Duration, String> {
        while self.work_one(work).await? {}
        let row = self
            .connection()
            .await?
            .query_one(
                "SELECT extract(epoch FROM min(next_try) - now())::float8 FROM faktura_mail \
                 WHERE kind = $1 AND status = 'queued'",
                &[&work.kind()],
            )
            .await
            .map_err(pg)?;
        let due = row.get::<_, Option<f64>>(0).map_or(POLL, |secs| {
            Duration::try_from_secs_f64(secs).unwrap_or(Duration::ZERO)
        });
        Ok(due.clamp(POLL_MIN, POLL))
    }

    /// Sends every due message once over `transport`; how long until the next is due.
    pub(super) async fn deliver_due(
        &self,
        transport: &AsyncSmtpTransport<Tokio1Executor>,
    ) -> Result<Duration, String> {
        self.work_due(&Work::Mail(transport)).await
    }

    /// Delivers due mail over `transport` and moves due letters into `postal` (each when
    /// this host has it) until the task is dropped: when this host queued something, when
    /// the next row is due, and every `POLL` for what other hosts queued.
    pub(super) async fn deliver(
        &self,
        transport: Option<AsyncSmtpTransport<Tokio1Executor>>,
        postal: Option<PathBuf>,
        queued: &Notify,
    ) {
        if transport.is_none() && postal.is_none() {
            return;
        }
        loop {
            let mut wait = POLL;
            if let Some(transport) = &transport {
                match self.deliver_due(transport).await {
                    Ok(due) => wait = wait.min(due),
                    Err(e) => tracing::warn!("delivering mail from the store: {e}"),
                }
            }
            if let Some(postal) = &postal {
                match self.work_due(&Work::Letters(postal)).await {
                    Ok(due) => wait = wait.min(due),
                    Err(e) => tracing::warn!("moving letters from the store: {e}"),
                }
            }
            tokio::select! {
                () = queued.notified() => {}
                () = tokio::time::sleep(wait) => {}
            }
        }
    }

    /// A pooled connection when the table is there: what only reads it never makes it.
    async fn connection_if_made(&self) -> Result<Option<Object>, String> {
        let conn = self.pool.get_as_is().await.map_err(|e| e.to_string())?;
        let exists = crate::postgres::exists(&conn, TABLE).await.map_err(pg)?;
        Ok(exists.then_some(conn))
    }

    /// The rows still to deliver and the rows refused for good, messages and letters;
    /// none when the table was never made.
    pub(super) async fn backlog(&self) -> Result<Backlog, String> {
        let Some(conn) = self.connection_if_made().await? else {
            return Ok(Backlog {
                queued: 0,
                failed: 0,
            });
        };
        let row = conn
            .query_one(
                "SELECT count(*) FILTER (WHERE status = 'queued'), \
                 count(*) FILTER (WHERE status = 'failed') FROM faktura_mail",
                &[],
            )
            .await
            .map_err(pg)?;
        Ok(Backlog {
            queued: row.get::<_, i64>(0) as u64,
            failed: row.get::<_, i64>(1) as u64,
        })
    }

    /// Every row, oldest first, as `faktura outbox list` shows them; nothing when the
    /// table was never made (this lists without creating it).
    pub(super) async fn list(&self) -> Result<Vec<OutboxEntry>, String> {
        let Some(conn) = self.connection_if_made().await? else {
            return Ok(Vec::new());
        };
        let rows = conn
            .query(
                "SELECT receipt, kind, status, recipients, subject, address, \
                 cardinality(documents), attempts, \
                 extract(epoch FROM next_try)::bigint, last_error \
                 FROM faktura_mail ORDER BY id",
                &[],
            )
            .await
            .map_err(pg)?;
        Ok(rows.iter().map(entry).collect())
    }
}

/// What a delivering host does with the rows of one kind.
enum Work<'a> {
    /// Sends messages over SMTP.
    Mail(&'a AsyncSmtpTransport<Tokio1Executor>),
    /// Writes letters into the postal queue directory.
    Letters(&'a Path),
}

impl Work<'_> {
    fn kind(&self) -> &'static str {
        match self {
            Work::Mail(_) => "mail",
            Work::Letters(_) => "letter",
        }
    }

    async fn deliver(&self, row: &Row) -> Attempt {
        match self {
            Work::Mail(transport) => send(transport, row).await,
            Work::Letters(postal) => to_postal(postal, row).await,
        }
    }
}

/// Sends a claimed message.
async fn send(transport: &AsyncSmtpTransport<Tokio1Executor>, row: &Row) -> Attempt {
    let sender: String = row.get("sender");
    let recipients: Vec<String> = row.get("recipients");
    let to: Vec<Address> = recipients.iter().filter_map(|r| r.parse().ok()).collect();
    let envelope = match Envelope::new(sender.parse().ok(), to) {
        Ok(e) => e,
        Err(e) => return Attempt::Refused(format!("bad envelope: {e}")),
    };
    let eml: Vec<u8> = row.get::<_, Option<Vec<u8>>>("message").unwrap_or_default();
    attempt(transport, &envelope, &eml).await
}

/// Writes a claimed letter into the postal queue directory, as `post` does on a host
/// without a PostgreSQL store.
async fn to_postal(postal: &Path, row: &Row) -> Attempt {
    let names: Vec<String> = row.get("document_names");
    let contents: Vec<Vec<u8>> = row.get("documents");
    let letter = outbox::Letter {
        address: row.get("address"),
        documents: names
            .into_iter()
            .zip(contents)
            .map(|(filename, content)| outbox::Attachment {
                filename,
                mimetype: "application/pdf".into(),
                content,
            })
            .collect(),
        color: row.get("color"),
        duplex: row.get("duplex"),
        paper_weight: u32::try_from(row.get::<_, i32>("paper_weight")).unwrap_or(0),
    };
    let postal = postal.to_owned();
    let origin = u64::from(std::process::id());
    match tokio::task::spawn_blocking(move || outbox::write_letter(&postal, &letter, origin)).await
    {
        Ok(Ok(name)) => Attempt::Delivered(format!("in the postal queue as {name}")),
        Ok(Err(MailError::Rejected(reason))) => Attempt::Refused(format!("refused: {reason}")),
        Ok(Err(MailError::Unavailable(reason))) => Attempt::Later(format!("will retry: {reason}")),
        Err(e) => Attempt::Later(format!("will retry: {e}")),
    }
}

/// A row as `faktura outbox list` shows it; a letter's recipients are its address lines.
fn entry(row: &Row) -> OutboxEntry {
    let kind: String = row.get(1);
    let status = match row.get::<_, String>(2).as_str() {
        "sent" => "sent",
        "failed" => "failed",
        _ => "queued",
    };
    let (recipients, subject) = if kind == "letter" {
        let documents = row.get::<_, Option<i32>>(6).unwrap_or(0);
        let plural = if documents == 1 { "" } else { "s" };
        (row.get(5), format!("letter, {documents} PDF{plural}"))
    } else {
        (row.get(3), row.get(4))
    };
    OutboxEntry {
        id: row.get(0),
        status,
        recipients,
        subject,
        state: DeliveryState {
            attempts: u32::try_from(row.get::<_, i32>(7)).unwrap_or(0),
            next_try: u64::try_from(row.get::<_, i64>(8)).unwrap_or(0),
            last_error: row.get(9),
        },
    }
}
