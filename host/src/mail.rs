//! The `mail` interface: e-mail into a durable outbox, letters into a postal print queue.
//!
//! Nothing is acknowledged before it is on disk: each message is written to a temporary
//! file, synced, renamed into place and the directory synced. An outbox entry is a pair
//! `{id}.envelope` (sender and every recipient, Bcc included) and `{id}.eml` (the RFC 5322
//! message without Bcc); the `.eml` appears last and marks the entry complete.

use std::fs::{self, File};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use lettre::message::header::ContentType;
use lettre::message::{Attachment, Mailbox, MultiPart, SinglePart};

use crate::State;
use crate::bindings::faktura::service::mail::{self as wit, Letter, MailError, Message};

/// Where mail goes.
#[derive(Debug, Clone)]
pub struct MailConfig {
    pub outbox: PathBuf,
    /// The postal print queue; postal dispatch is off without it.
    pub postal: Option<PathBuf>,
}

static SEQUENCE: AtomicU64 = AtomicU64::new(0);

/// A name unique within this process and across restarts.
fn entry_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!(
        "{nanos}-{}-{}",
        std::process::id(),
        SEQUENCE.fetch_add(1, Ordering::Relaxed)
    )
}

fn mailbox(field: &str, s: &str) -> Result<Mailbox, MailError> {
    s.parse()
        .map_err(|e| MailError::Rejected(format!("{field} address \"{s}\": {e}")))
}

/// Builds the message; addresses and headers are checked by lettre (no header injection).
pub fn build(msg: &Message) -> Result<(Vec<u8>, Vec<String>), MailError> {
    if msg.subject.contains(['\r', '\n']) {
        return Err(MailError::Rejected("the subject must be one line".into()));
    }
    let mut builder = lettre::Message::builder()
        .from(mailbox("from", &msg.from)?)
        .subject(msg.subject.clone());
    let mut recipients = Vec::new();
    for to in &msg.to {
        builder = builder.to(mailbox("to", to)?);
        recipients.push(to.clone());
    }
    for cc in &msg.cc {
        builder = builder.cc(mailbox("cc", cc)?);
        recipients.push(cc.clone());
    }
    for bcc in &msg.bcc {
        mailbox("bcc", bcc)?;
        recipients.push(bcc.clone());
    }
    if recipients.is_empty() {
        return Err(MailError::Rejected("a message needs a recipient".into()));
    }
    let mut parts = MultiPart::mixed().singlepart(SinglePart::plain(msg.body.clone()));
    for a in &msg.attachments {
        let ct = ContentType::parse(&a.mimetype)
            .map_err(|_| MailError::Rejected(format!("attachment {}: bad mimetype", a.filename)))?;
        parts = parts.singlepart(Attachment::new(a.filename.clone()).body(a.content.clone(), ct));
    }
    let message = builder
        .multipart(parts)
        .map_err(|e| MailError::Rejected(e.to_string()))?;
    Ok((message.formatted(), recipients))
}

/// Writes `bytes` to `dir/name` so that the file appears whole or not at all.
fn write_atomically(dir: &Path, name: &str, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = dir.join(format!(".tmp-{name}"));
    let mut f = File::create(&tmp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    fs::rename(&tmp, dir.join(name))?;
    File::open(dir)?.sync_all()
}

fn unavailable(e: std::io::Error) -> MailError {
    MailError::Unavailable(e.to_string())
}

pub fn write_outbox(outbox: &Path, msg: &Message) -> Result<String, MailError> {
    let (eml, recipients) = build(msg)?;
    fs::create_dir_all(outbox).map_err(unavailable)?;
    let id = entry_id();
    let mut envelope = format!("from {}\n", msg.from);
    for r in &recipients {
        envelope.push_str(&format!("to {r}\n"));
    }
    write_atomically(outbox, &format!("{id}.envelope"), envelope.as_bytes())
        .map_err(unavailable)?;
    write_atomically(outbox, &format!("{id}.eml"), &eml).map_err(unavailable)?;
    Ok(id)
}

pub fn write_letter(queue: &Path, letter: &Letter) -> Result<String, MailError> {
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
    let id = entry_id();
    let tmp = queue.join(format!(".tmp-{id}"));
    fs::create_dir_all(&tmp).map_err(unavailable)?;
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
        write_atomically(&tmp, &name, &d.content).map_err(unavailable)?;
        job.push_str(&format!("document={name}\n"));
    }
    write_atomically(&tmp, "job.txt", job.as_bytes()).map_err(unavailable)?;
    fs::rename(&tmp, queue.join(&id)).map_err(unavailable)?;
    File::open(queue)
        .and_then(|d| d.sync_all())
        .map_err(unavailable)?;
    Ok(id)
}

impl wit::Host for State {
    async fn send(&mut self, msg: Message) -> wasmtime::Result<Result<String, MailError>> {
        let outbox = self.shared.mail.outbox.clone();
        Ok(tokio::task::spawn_blocking(move || write_outbox(&outbox, &msg)).await?)
    }

    async fn post(&mut self, letter: Letter) -> wasmtime::Result<Result<String, MailError>> {
        let Some(queue) = self.shared.mail.postal.clone() else {
            return Ok(Err(MailError::NotConfigured(
                "postal dispatch is not configured".into(),
            )));
        };
        Ok(tokio::task::spawn_blocking(move || write_letter(&queue, &letter)).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bindings::faktura::service::mail::Attachment as WitAttachment;

    fn message() -> Message {
        Message {
            from: "billing@example.com".into(),
            to: vec!["client@example.org".into()],
            cc: vec![],
            bcc: vec!["archive@example.com".into()],
            subject: "Invoice INV-00001".into(),
            body: "Please find the invoice attached.".into(),
            attachments: vec![WitAttachment {
                filename: "invoice_1.pdf".into(),
                mimetype: "application/pdf".into(),
                content: b"%PDF-1.7 test".to_vec(),
            }],
        }
    }

    #[test]
    fn outbox_keeps_message_and_envelope_without_leaking_bcc() {
        let dir = tempfile::tempdir().unwrap();
        let id = write_outbox(dir.path(), &message()).unwrap();
        let eml = fs::read_to_string(dir.path().join(format!("{id}.eml"))).unwrap();
        let envelope = fs::read_to_string(dir.path().join(format!("{id}.envelope"))).unwrap();
        assert!(eml.contains("Subject: Invoice INV-00001"));
        assert!(eml.contains("invoice_1.pdf"));
        assert!(!eml.contains("archive@example.com"));
        assert!(envelope.contains("to archive@example.com"));
    }

    #[test]
    fn header_injection_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut m = message();
        m.subject = "Hi\r\nBcc: victim@example.com".into();
        assert!(matches!(
            write_outbox(dir.path(), &m),
            Err(MailError::Rejected(_))
        ));
        let mut m = message();
        m.to = vec!["a@example.com\r\nBcc: victim@example.com".into()];
        assert!(matches!(
            write_outbox(dir.path(), &m),
            Err(MailError::Rejected(_))
        ));
    }

    #[test]
    fn letters_must_be_pdfs_on_allowed_paper() {
        let dir = tempfile::tempdir().unwrap();
        let letter = |weight, content: &[u8]| Letter {
            address: vec!["Müller AG".into()],
            documents: vec![WitAttachment {
                filename: "a.pdf".into(),
                mimetype: "application/pdf".into(),
                content: content.to_vec(),
            }],
            color: false,
            duplex: true,
            paper_weight: weight,
        };
        assert!(write_letter(dir.path(), &letter(70, b"%PDF-1.7")).is_err());
        assert!(write_letter(dir.path(), &letter(90, b"GIF89a")).is_err());
        let id = write_letter(dir.path(), &letter(90, b"%PDF-1.7")).unwrap();
        let job = fs::read_to_string(dir.path().join(id).join("job.txt")).unwrap();
        assert!(job.contains("paper_weight=90") && job.contains("duplex=1"));
    }
}
