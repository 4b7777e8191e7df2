//! The mail outbox on disk: messages queued for SMTP delivery and letters queued for
//! postal dispatch, written so that an acknowledged message is never lost.
//!
//! A queued message is a pair in `outbox/queue/`: `{id}.envelope` (sender and every
//! recipient, Bcc included) and `{id}.eml` (the RFC 5322 message without Bcc), each
//! written to a temporary file, synced and renamed, the `.eml` last. Delivery (the
//! host's) moves them to `sent/` or `failed/` and keeps a `{id}.state` beside them. A
//! letter is a directory in the postal queue with its PDFs and a `job.txt`, renamed into
//! place whole. The faktura host and the plug component both write through this module,
//! so `faktura outbox list` reads what either queued. No network, no async.

use std::fs::{self, File};
use std::io::Write as _;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use lettre::message::header::ContentType;
use lettre::message::{Attachment as MailAttachment, Mailbox, MultiPart, SinglePart};

/// A file attached to a message or printed in a letter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachment {
    pub filename: String,
    pub mimetype: String,
    pub content: Vec<u8>,
}

/// An e-mail message as the `mail` interface hands it over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub from: String,
    pub to: Vec<String>,
    pub cc: Vec<String>,
    pub bcc: Vec<String>,
    pub subject: String,
    pub body: String,
    pub attachments: Vec<Attachment>,
}

/// A postal letter: address lines and the PDFs to print, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Letter {
    pub address: Vec<String>,
    pub documents: Vec<Attachment>,
    pub color: bool,
    pub duplex: bool,
    pub paper_weight: u32,
}

/// Why a message or letter was not queued.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MailError {
    /// The message was refused (bad address, header injection, not a PDF).
    Rejected(String),
    /// Nothing was queued: the disk failed.
    Unavailable(String),
}

/// Subdirectories of the outbox: waiting, delivered, refused for good.
pub const QUEUE: &str = "queue";
pub const SENT: &str = "sent";
pub const FAILED: &str = "failed";

static SEQUENCE: AtomicU64 = AtomicU64::new(0);

/// Wall-clock seconds since the Unix epoch.
pub fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// A name unique across writers and restarts, sorting by time: `origin` tells writers
/// apart (the host's process id, a plug instance's random number).
fn entry_id(origin: u64) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!(
        "{nanos:020}-{origin:x}-{}",
        SEQUENCE.fetch_add(1, Ordering::Relaxed)
    )
}

fn mailbox(field: &str, s: &str) -> Result<Mailbox, MailError> {
    s.trim()
        .parse()
        .map_err(|e| MailError::Rejected(format!("{field} address \"{s}\": {e}")))
}

/// Builds the message; addresses and headers are checked by lettre (no header injection).
/// `id` (the outbox entry's) makes its Message-ID, so that a message sent once more after a
/// crash is recognizably the same message to its recipients.
pub fn build(msg: &Message, id: &str) -> Result<(Vec<u8>, Vec<String>), MailError> {
    if msg.subject.contains(['\r', '\n']) {
        return Err(MailError::Rejected("the subject must be one line".into()));
    }
    let from = mailbox("from", &msg.from)?;
    let message_id = format!("<{id}@{}>", from.email.domain());
    let mut builder = lettre::Message::builder()
        .from(from)
        .message_id(Some(message_id))
        .subject(msg.subject.clone());
    let mut recipients = Vec::new();
    for to in &msg.to {
        builder = builder.to(mailbox("to", to)?);
        recipients.push(to.trim().to_owned());
    }
    for cc in &msg.cc {
        builder = builder.cc(mailbox("cc", cc)?);
        recipients.push(cc.trim().to_owned());
    }
    for bcc in &msg.bcc {
        mailbox("bcc", bcc)?;
        recipients.push(bcc.trim().to_owned());
    }
    if recipients.is_empty() {
        return Err(MailError::Rejected("a message needs a recipient".into()));
    }
    let mut parts = MultiPart::mixed().singlepart(SinglePart::plain(msg.body.clone()));
    for a in &msg.attachments {
        let ct = ContentType::parse(&a.mimetype)
            .map_err(|_| MailError::Rejected(format!("attachment {}: bad mimetype", a.filename)))?;
        parts =
            parts.singlepart(MailAttachment::new(a.filename.clone()).body(a.content.clone(), ct));
    }
    let message = builder
        .multipart(parts)
        .map_err(|e| MailError::Rejected(e.to_string()))?;
    Ok((message.formatted(), recipients))
}

/// Writes `bytes` to `dir/name` so that the file appears whole or not at all. A write
/// that fails (a full disk) removes its temporary file, so that it holds no room.
pub fn write_atomically(dir: &Path, name: &str, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = dir.join(format!(".tmp-{name}"));
    let written = File::create(&tmp)
        .and_then(|mut f| f.write_all(bytes).and_then(|()| f.sync_all()))
        .and_then(|()| fs::rename(&tmp, dir.join(name)));
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    File::open(dir)?.sync_all()
}

fn unavailable(e: std::io::Error) -> MailError {
    MailError::Unavailable(e.to_string())
}

/// Queues a message durably; returns its outbox id.
pub fn write_outbox(outbox: &Path, msg: &Message, origin: u64) -> Result<String, MailError> {
    let id = entry_id(origin);
    let (eml, recipients) = build(msg, &id)?;
    let queue = outbox.join(QUEUE);
    fs::create_dir_all(&queue).map_err(unavailable)?;
    let mut envelope = format!("from {}\n", msg.from.trim());
    for r in &recipients {
        envelope.push_str(&format!("to {r}\n"));
    }
    let written = write_atomically(&queue, &format!("{id}.envelope"), envelope.as_bytes())
        .and_then(|()| write_atomically(&queue, &format!("{id}.eml"), &eml));
    if let Err(e) = written {
        // The caller is told nothing was queued (and keeps the message to queue it again),
        // so nothing is: a message whose files may not be durable would be sent twice.
        for ext in ["eml", "envelope"] {
            let _ = fs::remove_file(queue.join(format!("{id}.{ext}")));
        }
        return Err(unavailable(e));
    }
    Ok(id)
}

/// Delivery bookkeeping of a queued message.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeliveryState {
    pub attempts: u32,
    pub next_try: u64,
    pub last_error: String,
}

impl DeliveryState {
    pub fn read(path: &Path) -> DeliveryState {
        let text = fs::read_to_string(path).unwrap_or_default();
        let mut s = DeliveryState::default();
        for line in text.lines() {
            match line.split_once(' ') {
                Some(("attempts", v)) => s.attempts = v.parse().unwrap_or(0),
                Some(("next_try", v)) => s.next_try = v.parse().unwrap_or(0),
                Some(("last_error", v)) => s.last_error = v.to_owned(),
                _ => {}
            }
        }
        s
    }

    pub fn write(&self, dir: &Path, id: &str) -> std::io::Result<()> {
        let text = format!(
            "attempts {}\nnext_try {}\nlast_error {}\n",
            self.attempts,
            self.next_try,
            self.last_error.replace(['\r', '\n'], " ")
        );
        write_atomically(dir, &format!("{id}.state"), text.as_bytes())
    }
}

/// One entry of `faktura outbox list`.
#[derive(Debug, Clone)]
pub struct OutboxEntry {
    pub id: String,
    /// queued, sent or failed.
    pub status: &'static str,
    pub recipients: Vec<String>,
    pub subject: String,
    pub state: DeliveryState,
}

/// Every message of the outbox, oldest first.
pub fn list(outbox: &Path) -> std::io::Result<Vec<OutboxEntry>> {
    let mut out = Vec::new();
    for (dir, status) in [(QUEUE, "queued"), (SENT, "sent"), (FAILED, "failed")] {
        let dir = outbox.join(dir);
        let mut ids = message_ids(&dir);
        ids.sort();
        for id in ids {
            let envelope =
                fs::read_to_string(dir.join(format!("{id}.envelope"))).unwrap_or_default();
            let recipients = envelope
                .lines()
                .filter_map(|l| l.strip_prefix("to "))
                .map(str::to_owned)
                .collect();
            let eml = fs::read(dir.join(format!("{id}.eml"))).unwrap_or_default();
            let subject = String::from_utf8_lossy(&eml)
                .lines()
                .find_map(|l| l.strip_prefix("Subject: ").map(str::to_owned))
                .unwrap_or_default();
            out.push(OutboxEntry {
                state: DeliveryState::read(&dir.join(format!("{id}.state"))),
                id,
                status,
                recipients,
                subject,
            });
        }
    }
    out.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(out)
}

/// How many messages the outbox holds in `dir` (`QUEUE`, `SENT` or `FAILED`), without
/// reading them.
pub fn count(outbox: &Path, dir: &str) -> usize {
    message_ids(&outbox.join(dir)).len()
}

/// The ids of the messages in `dir`, in no order: each has its `.eml` (a message being
/// written, `.tmp-…`, is not one yet). None when there is no `dir`.
fn message_ids(dir: &Path) -> Vec<String> {
    let Ok(read) = fs::read_dir(dir) else {
        return Vec::new();
    };
    read.filter_map(|e| e.ok())
        .filter_map(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.strip_suffix(".eml"))
                .filter(|n| !n.starts_with('.'))
                .map(str::to_owned)
        })
        .collect()
}

/// Moves a message's files from the queue to `to`.
pub fn retire(outbox: &Path, id: &str, to: &str) -> std::io::Result<()> {
    let target = outbox.join(to);
    fs::create_dir_all(&target)?;
    // The .eml moves last: until then the message still counts as queued.
    for ext in ["envelope", "state", "eml"] {
        let from = outbox.join(QUEUE).join(format!("{id}.{ext}"));
        if from.exists() {
            fs::rename(&from, target.join(format!("{id}.{ext}")))?;
        }
    }
    File::open(&target)?.sync_all()?;
    File::open(outbox.join(QUEUE))?.sync_all()
}

/// Refuses a letter that cannot be printed: paper other than 80 or 90 g/m², no document,
/// or a document that is not a PDF. `write_letter` checks it too.
pub fn check_letter(letter: &Letter) -> Result<(), MailError> {
    if ![80, 90].contains(&letter.paper_weight) {
        return Err(MailError::Rejected(format!(
            "paper_weight must be 80 or 90, got {}",
            letter.paper_weight
        )));
    }
    if letter.documents.is_empty() {
        return Err(MailError::Rejected("a letter needs a document".into()));
    }
    if let Some(bad) = letter
        .documents
        .iter()
        .find(|d| !d.content.starts_with(b"%PDF-"))
    {
        return Err(MailError::Rejected(format!(
            "{} is not a PDF file",
            bad.filename
        )));
    }
    Ok(())
}

/// Queues a letter for postal dispatch; returns its id (the directory name).
pub fn write_letter(queue: &Path, letter: &Letter, origin: u64) -> Result<String, MailError> {
    check_letter(letter)?;
    let id = entry_id(origin);
    let tmp = queue.join(format!(".tmp-{id}"));
    fs::create_dir_all(&tmp).map_err(unavailable)?;
    // As for a message: a letter not queued durably is not left in the queue.
    queue_letter(queue, &tmp, &id, letter).map_err(|e| {
        let _ = fs::remove_dir_all(&tmp);
        let _ = fs::remove_dir_all(queue.join(&id));
        unavailable(e)
    })?;
    Ok(id)
}

/// Writes a letter's files into `tmp` and renames it to `queue/id`, durably.
fn queue_letter(queue: &Path, tmp: &Path, id: &str, letter: &Letter) -> std::io::Result<()> {
    let mut job = format!(
        "color={}\nduplex={}\npaper_weight={}\n",
        u8::from(letter.color),
        u8::from(letter.duplex),
        letter.paper_weight
    );
    for line in &letter.address {
        job.push_str(&format!("address={}\n", line.replace(['\r', '\n'], " ")));
    }
    for (i, d) in letter.documents.iter().enumerate() {
        let name = format!("{:02}.pdf", i + 1);
        write_atomically(tmp, &name, &d.content)?;
        job.push_str(&format!("document={name}\n"));
    }
    write_atomically(tmp, "job.txt", job.as_bytes())?;
    fs::rename(tmp, queue.join(id))?;
    File::open(queue)?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message() -> Message {
        Message {
            from: "billing@example.com".into(),
            to: vec!["client@example.org".into()],
            cc: vec![],
            bcc: vec!["archive@example.com".into()],
            subject: "Invoice INV-00001".into(),
            body: "Please find the invoice attached.".into(),
            attachments: vec![Attachment {
                filename: "invoice_1.pdf".into(),
                mimetype: "application/pdf".into(),
                content: b"%PDF-1.7 test".to_vec(),
            }],
        }
    }

    #[test]
    fn outbox_keeps_message_and_envelope_without_leaking_bcc() {
        let dir = tempfile::tempdir().unwrap();
        let id = write_outbox(dir.path(), &message(), 1).unwrap();
        let queue = dir.path().join(QUEUE);
        let eml = fs::read_to_string(queue.join(format!("{id}.eml"))).unwrap();
        let envelope = fs::read_to_string(queue.join(format!("{id}.envelope"))).unwrap();
        assert!(eml.contains("Subject: Invoice INV-00001"));
        assert!(eml.contains("invoice_1.pdf"));
        assert!(!eml.contains("archive@example.com"));
        assert!(envelope.contains("to archive@example.com"));
        let from_domain = message().from.rsplit_once('@').unwrap().1.to_owned();
        assert!(
            eml.contains(&format!("Message-ID: <{id}@{from_domain}>")),
            "{eml}"
        );
        let listed = list(dir.path()).unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].status, "queued");
        assert_eq!(listed[0].subject, "Invoice INV-00001");
    }

    #[test]
    fn header_injection_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut m = message();
        m.subject = "Hi\r\nBcc: victim@example.com".into();
        assert!(matches!(
            write_outbox(dir.path(), &m, 1),
            Err(MailError::Rejected(_))
        ));
        let mut m = message();
        m.to = vec!["a@example.com\r\nBcc: victim@example.com".into()];
        assert!(matches!(
            write_outbox(dir.path(), &m, 1),
            Err(MailError::Rejected(_))
        ));
    }

    #[test]
    fn letters_must_be_pdfs_on_allowed_paper() {
        let dir = tempfile::tempdir().unwrap();
        let letter = |weight, content: &[u8]| Letter {
            address: vec!["Müller AG".into()],
            documents: vec![Attachment {
                filename: "a.pdf".into(),
                mimetype: "application/pdf".into(),
                content: content.to_vec(),
            }],
            color: false,
            duplex: true,
            paper_weight: weight,
        };
        assert!(write_letter(dir.path(), &letter(70, b"%PDF-1.7"), 1).is_err());
        assert!(write_letter(dir.path(), &letter(90, b"GIF89a"), 1).is_err());
        let id = write_letter(dir.path(), &letter(90, b"%PDF-1.7"), 1).unwrap();
        let job = fs::read_to_string(dir.path().join(id).join("job.txt")).unwrap();
        assert!(job.contains("paper_weight=90") && job.contains("duplex=1"));
    }

    #[test]
    fn delivery_state_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let s = DeliveryState {
            attempts: 3,
            next_try: 42,
            last_error: "will retry: connection refused\nsecond line".into(),
        };
        s.write(dir.path(), "x").unwrap();
        let back = DeliveryState::read(&dir.path().join("x.state"));
        assert_eq!(back.attempts, 3);
        assert_eq!(back.next_try, 42);
        assert_eq!(
            back.last_error,
            "will retry: connection refused second line"
        );
    }
}
