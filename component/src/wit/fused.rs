//! `caps` on the plug compiled into this component (feature `fused`): its store on redb
//! over WASI files, the PDF renderer, the mail outbox and its rate limit, called as Rust
//! functions where the composed standalone component crosses a component boundary for
//! every call (and copies every key and value across it).

use faktura_plug::services::{self, PostError};
use faktura_plug::store::StoreError as PlugError;
use faktura_plug::txn::{self, CommitError};
use faktura_providers::{outbox, render};

use crate::caps::{self, Entry, StoreError};

pub(super) struct Store;
pub(super) struct Pdf;
pub(super) struct Mail;
pub(super) struct Rate;

fn store_error(e: PlugError) -> StoreError {
    match e {
        PlugError::TooLarge => StoreError::TooLarge,
        PlugError::Conflict => StoreError::Conflict,
        PlugError::Backend(m) => StoreError::Backend(m),
    }
}

/// Implements `caps::Read` on one of the plug's transactions (both kinds have the same
/// reads).
macro_rules! plug_read {
    ($ty:ty) => {
        impl caps::Read for $ty {
            fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
                self.0.get(key).map_err(store_error)
            }
            fn get_many(&self, keys: &[Vec<u8>]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
                self.0.get_many(keys).map_err(store_error)
            }
            // The plug answers a list: `scan` hands it on as it is, `scan_lent` lends it.
            fn scan(
                &self,
                prefix: &[u8],
                after: Option<&[u8]>,
                limit: u32,
                reverse: bool,
            ) -> Result<Vec<Entry>, StoreError> {
                self.0
                    .scan(prefix, after, limit, reverse)
                    .map_err(store_error)
            }
            fn scan_lent(
                &self,
                prefix: &[u8],
                after: Option<&[u8]>,
                limit: u32,
                reverse: bool,
                f: &mut dyn FnMut(&[u8], &[u8]),
            ) -> Result<usize, StoreError> {
                Ok(caps::lend_all(
                    &self.scan(prefix, after, limit, reverse)?,
                    f,
                ))
            }
        }
    };
}

struct Read(txn::ReadTxn);

/// The write transaction. A read of it is a B-tree walk in this instance's own memory, so
/// `get_cached` reads each time (the default) and ids come one call each: what the
/// imported store saves on crossings costs nothing here.
struct Write(txn::WriteTxn);

plug_read!(Read);
plug_read!(Write);

impl caps::Write for Write {
    fn put(&mut self, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
        self.0.put(key, value).map_err(store_error)
    }
    fn delete(&mut self, key: &[u8]) -> Result<(), StoreError> {
        self.0.delete(key).map_err(store_error)
    }
    fn next_ids(&mut self, counter: &[u8], n: u32) -> Result<Vec<u64>, StoreError> {
        self.0.next_ids(counter, n).map_err(store_error)
    }
    fn commit(self: Box<Self>) -> Result<(), StoreError> {
        self.0.commit().map_err(|e| match e {
            CommitError::Store(e) => store_error(e),
            CommitError::Full(m) => StoreError::Full(m),
        })
    }
    fn as_read(&self) -> &dyn caps::Read {
        self
    }
}

impl caps::Store for Store {
    fn begin_read(&self) -> Result<Box<dyn caps::Read>, StoreError> {
        Ok(Box::new(Read(txn::ReadTxn::begin().map_err(store_error)?)))
    }
    /// Writers take turns on the whole store: a scope orders nothing more.
    fn begin_write(&self) -> Result<Box<dyn caps::Write>, StoreError> {
        Ok(Box::new(Write(
            txn::WriteTxn::begin().map_err(store_error)?,
        )))
    }
}

fn rows(rows: &[(String, String)]) -> Vec<render::MetaRow> {
    rows.iter()
        .map(|(label, value)| render::MetaRow {
            label: label.clone(),
            value: value.clone(),
        })
        .collect()
}

impl caps::Pdf for Pdf {
    fn render(&self, doc: &caps::PdfDocument) -> Result<Vec<u8>, String> {
        let archive = render::Archive {
            conformance: if doc.archival {
                render::Conformance::PdfA3b
            } else {
                render::Conformance::Plain
            },
            attachments: doc
                .attachments
                .iter()
                .map(|a| render::EmbeddedFile {
                    filename: a.filename.clone(),
                    mimetype: a.mimetype.clone(),
                    description: a.description.clone(),
                    relationship: a.relationship.clone(),
                    modified: a.modified.clone(),
                    content: a.content.clone(),
                })
                .collect(),
            factur_x: doc
                .factur_x
                .as_ref()
                .map(|(level, filename)| render::FacturX {
                    document_type: caps::FACTUR_X_DOCUMENT_TYPE.into(),
                    filename: filename.clone(),
                    version: caps::FACTUR_X_VERSION.into(),
                    conformance_level: level.clone(),
                }),
        };
        let rendered = render::Document {
            title: doc.title.clone(),
            sender: doc.sender.clone(),
            recipient: doc.recipient.clone(),
            meta: rows(&doc.meta),
            preamble: doc.preamble.clone(),
            items: render::Table {
                header: doc.items.header.clone(),
                rows: doc.items.rows.clone(),
                right_aligned: doc.items.right_aligned.clone(),
            },
            totals: rows(&doc.totals),
            closing: doc.closing.clone(),
            footer: doc.footer.clone(),
            print: doc.print,
            matrix: doc.matrix.as_ref().map(|m| render::Matrix {
                caption: m.caption.clone(),
                modules: m.modules.clone(),
            }),
        };
        render::render_archival(&rendered, &archive)
    }

    fn thumbnail(
        &self,
        paragraphs: &[String],
        format: caps::ImageFormat,
    ) -> Result<Vec<u8>, String> {
        let format = match format {
            caps::ImageFormat::Png => render::ImageFormat::Png,
            caps::ImageFormat::Gif => render::ImageFormat::Gif,
            caps::ImageFormat::Jpg => render::ImageFormat::Jpg,
        };
        render::thumbnail(paragraphs, format)
    }
}

fn attachments(list: &[caps::Attachment]) -> Vec<outbox::Attachment> {
    list.iter()
        .map(|a| outbox::Attachment {
            filename: a.filename.clone(),
            mimetype: a.mimetype.clone(),
            content: a.content.clone(),
        })
        .collect()
}

fn mail_error(e: outbox::MailError) -> caps::MailError {
    match e {
        outbox::MailError::Rejected(m) => caps::MailError::Rejected(m),
        outbox::MailError::Unavailable(m) => caps::MailError::Unavailable(m),
    }
}

/// Tells this instance's outbox entries from those of instances writing at the same time.
fn origin() -> u64 {
    crate::bindings::wasi::random::random::get_random_u64()
}

impl caps::Mail for Mail {
    fn send(&self, msg: &caps::Message) -> Result<String, caps::MailError> {
        let msg = outbox::Message {
            from: msg.from.clone(),
            to: msg.to.clone(),
            cc: msg.cc.clone(),
            bcc: msg.bcc.clone(),
            subject: msg.subject.clone(),
            body: msg.body.clone(),
            attachments: attachments(&msg.attachments),
        };
        services::send(&msg, origin()).map_err(mail_error)
    }

    fn post(&self, letter: &caps::Letter) -> Result<String, caps::MailError> {
        let letter = outbox::Letter {
            address: letter.address.clone(),
            documents: attachments(&letter.documents),
            color: letter.color,
            duplex: letter.duplex,
            paper_weight: letter.paper_weight,
        };
        services::post(&letter, origin()).map_err(|e| match e {
            PostError::NotConfigured(m) => caps::MailError::NotConfigured(m),
            PostError::Mail(e) => mail_error(e),
        })
    }
}

fn window(w: services::Window) -> caps::RateWindow {
    caps::RateWindow {
        limit: w.limit,
        remaining: w.remaining,
        reset: w.reset,
        allowed: w.allowed,
    }
}

impl caps::RateLimit for Rate {
    fn hit(&self, _bucket: &str) -> caps::RateWindow {
        window(services::hit())
    }

    fn hit_limited(&self, _bucket: &str, limit: u32, window_secs: u32) -> caps::RateWindow {
        window(services::hit_limited(limit, window_secs))
    }
}
