//! `caps` on Faktura's imported interfaces (`store`, `pdf`, `mail`, `ratelimit`): what the
//! host (or, composed, the plug) supplies across the component boundary.

use crate::bindings::faktura::service::store as kv;
use crate::caps::{self, StoreError};
use crate::limits;

pub(super) struct WitStore;
struct WitRead(kv::ReadTxn);
/// A write transaction, with what it keeps of `get_cached`, the writes it holds back
/// (`caps::Held`; behind a cell, since they go out before reads, which borrow) and the
/// ids it took ahead (`caps::SpareIds`).
struct WitWrite(
    kv::WriteTxn,
    caps::ReadCache,
    std::cell::RefCell<caps::Held>,
    caps::SpareIds,
);

impl WitWrite {
    /// Sends the held writes, if any.
    fn send_held(&self) -> Result<(), StoreError> {
        self.2.borrow_mut().send(|writes| {
            let writes: Vec<kv::Write> = writes
                .into_iter()
                .map(|(key, value)| kv::Write { key, value })
                .collect();
            self.0.write_many(&writes).map_err(store_error)
        })
    }

    fn hold(&mut self, key: &[u8], value: Option<&[u8]>) -> Result<(), StoreError> {
        self.1.written(key, value);
        if let Some(v) = value
            && v.len() > limits::HELD_WRITE_BYTES_MAX
        {
            // A value this large (a file) goes out on its own call, after the ones held
            // before it, without a copy held in the instance's memory.
            self.send_held()?;
            return self.0.put(key, v).map_err(store_error);
        }
        if self.2.get_mut().hold(key, value) {
            self.send_held()?;
        }
        Ok(())
    }
}
pub(super) struct WitPdf;
pub(super) struct WitMail;
pub(super) struct WitRate;
fn rate_window(w: crate::bindings::faktura::service::ratelimit::Window) -> caps::RateWindow {
    caps::RateWindow {
        limit: w.limit,
        remaining: w.remaining,
        reset: w.reset,
        allowed: w.allowed,
    }
}

impl caps::RateLimit for WitRate {
    fn hit(&self, bucket: &str) -> caps::RateWindow {
        rate_window(crate::bindings::faktura::service::ratelimit::hit(bucket))
    }

    fn hit_limited(&self, bucket: &str, limit: u32, window_secs: u32) -> caps::RateWindow {
        rate_window(crate::bindings::faktura::service::ratelimit::hit_limited(
            bucket,
            limit,
            window_secs,
        ))
    }
}
fn store_error(e: kv::Error) -> StoreError {
    match e {
        kv::Error::Conflict => StoreError::Conflict,
        kv::Error::TooLarge => StoreError::TooLarge,
        kv::Error::Backend(m) => StoreError::Backend(m),
        kv::Error::UnknownOutcome(m) => StoreError::UnknownOutcome(m),
        kv::Error::Unavailable(m) => StoreError::Unavailable(m),
        kv::Error::Full(m) => StoreError::Full(m),
    }
}

/// Implements `caps::Read` on a WIT transaction resource (both kinds have the same reads):
/// each read asks `$ty::held` first (what a writer holds a write of) and reads from
/// `$ty::ready` (the resource, once a writer's held writes went out).
macro_rules! wit_read {
    ($ty:ty) => {
        impl caps::Read for $ty {
            fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
                if let Some(value) = self.held(key) {
                    return Ok(value);
                }
                self.ready()?.get(key).map_err(store_error)
            }
            fn get_many(&self, keys: &[Vec<u8>]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
                self.ready()?.get_many(keys).map_err(store_error)
            }
            fn scan_lent(
                &self,
                prefix: &[u8],
                after: Option<&[u8]>,
                limit: u32,
                reverse: bool,
                f: &mut dyn FnMut(&[u8], &[u8]),
            ) -> Result<usize, StoreError> {
                let packed = self
                    .ready()?
                    .scan(prefix, after, limit, reverse)
                    .map_err(store_error)?;
                caps::lend_entries(&packed.bytes, &packed.ends, f)
            }
        }
    };
}

impl WitRead {
    fn held(&self, _key: &[u8]) -> Option<Option<Vec<u8>>> {
        None
    }
    fn ready(&self) -> Result<&kv::ReadTxn, StoreError> {
        Ok(&self.0)
    }
}

/// A writer's reads see its writes: a key it holds a write of is read from there, and for
/// any other read the held writes go out first.
impl WitWrite {
    fn held(&self, key: &[u8]) -> Option<Option<Vec<u8>>> {
        let held = self.2.borrow();
        if held.failed() {
            // A spent transaction answers its failure, through `ready`.
            return None;
        }
        held.last(key).map(|value| value.map(<[u8]>::to_vec))
    }
    fn ready(&self) -> Result<&kv::WriteTxn, StoreError> {
        self.send_held()?;
        Ok(&self.0)
    }
}

wit_read!(WitRead);
wit_read!(WitWrite);

impl caps::Write for WitWrite {
    fn put(&mut self, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
        self.hold(key, Some(value))
    }
    fn delete(&mut self, key: &[u8]) -> Result<(), StoreError> {
        self.hold(key, None)
    }
    fn get_cached(&mut self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        if let Some(value) = self.1.get(key) {
            return Ok(value);
        }
        let value = caps::Read::get(self, key)?;
        self.1.keep(key, value.clone());
        Ok(value)
    }
    fn next_ids(&mut self, counter: &[u8], n: u32) -> Result<Vec<u64>, StoreError> {
        // A counter is the store's to keep: held writes need to go out first only when
        // one of them is of the counter itself (or they failed: then nothing goes on).
        let held = self.2.get_mut();
        if held.holds(counter) || held.failed() {
            self.send_held()?;
        }
        self.0.next_ids(counter, n).map_err(store_error)
    }
    fn next_id_of_many(&mut self, counter: &[u8]) -> Result<u64, StoreError> {
        let mut spare = std::mem::take(&mut self.3);
        let id = spare.next(counter, |n| caps::Write::next_ids(self, counter, n));
        self.3 = spare;
        id
    }
    fn commit(self: Box<Self>) -> Result<(), StoreError> {
        self.send_held()?;
        kv::WriteTxn::commit(self.0).map_err(store_error)
    }
    fn as_read(&self) -> &dyn caps::Read {
        self
    }
}

impl caps::Store for WitStore {
    fn begin_read(&self) -> Result<Box<dyn caps::Read>, StoreError> {
        Ok(Box::new(WitRead(kv::begin_read().map_err(store_error)?)))
    }
    fn begin_write(&self) -> Result<Box<dyn caps::Write>, StoreError> {
        self.begin_write_in(&[])
    }
    fn begin_write_in(&self, scope: &[u8]) -> Result<Box<dyn caps::Write>, StoreError> {
        Ok(Box::new(WitWrite(
            kv::begin_write(scope).map_err(store_error)?,
            caps::ReadCache::default(),
            Default::default(),
            caps::SpareIds::default(),
        )))
    }
}

impl caps::Pdf for WitPdf {
    fn render(&self, doc: &caps::PdfDocument) -> Result<Vec<u8>, String> {
        use crate::bindings::faktura::service::pdf as wpdf;
        let rows = |rows: &[(String, String)]| -> Vec<wpdf::MetaRow> {
            rows.iter()
                .map(|(label, value)| wpdf::MetaRow {
                    label: label.clone(),
                    value: value.clone(),
                })
                .collect()
        };
        wpdf::render(&wpdf::Document {
            title: doc.title.clone(),
            sender: doc.sender.clone(),
            recipient: doc.recipient.clone(),
            meta: rows(&doc.meta),
            preamble: doc.preamble.clone(),
            items: wpdf::Table {
                header: doc.items.header.clone(),
                rows: doc.items.rows.clone(),
                right_aligned: doc.items.right_aligned.clone(),
            },
            totals: rows(&doc.totals),
            closing: doc.closing.clone(),
            footer: doc.footer.clone(),
            print: doc.print,
            conformance: if doc.archival {
                wpdf::Conformance::Pdfa3b
            } else {
                wpdf::Conformance::Plain
            },
            attachments: doc
                .attachments
                .iter()
                .map(|a| wpdf::EmbeddedFile {
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
                .map(|(level, filename)| wpdf::FacturXInfo {
                    document_type: caps::FACTUR_X_DOCUMENT_TYPE.into(),
                    filename: filename.clone(),
                    version: caps::FACTUR_X_VERSION.into(),
                    conformance_level: level.clone(),
                }),
            matrix: doc.matrix.as_ref().map(|m| wpdf::ModuleMatrix {
                caption: m.caption.clone(),
                modules: m.modules.clone(),
            }),
        })
    }

    fn thumbnail(
        &self,
        paragraphs: &[String],
        format: caps::ImageFormat,
    ) -> Result<Vec<u8>, String> {
        use crate::bindings::faktura::service::pdf as wpdf;
        let format = match format {
            caps::ImageFormat::Png => wpdf::ImageFormat::Png,
            caps::ImageFormat::Gif => wpdf::ImageFormat::Gif,
            caps::ImageFormat::Jpg => wpdf::ImageFormat::Jpg,
        };
        wpdf::thumbnail(
            &wpdf::PageText {
                paragraphs: paragraphs.to_vec(),
            },
            format,
        )
    }
}

impl caps::Mail for WitMail {
    fn send(&self, msg: &caps::Message) -> Result<String, caps::MailError> {
        use crate::bindings::faktura::service::mail as wmail;
        let message = wmail::Message {
            from: msg.from.clone(),
            to: msg.to.clone(),
            cc: msg.cc.clone(),
            bcc: msg.bcc.clone(),
            subject: msg.subject.clone(),
            body: msg.body.clone(),
            attachments: attachments(&msg.attachments),
        };
        wmail::send(&message).map_err(mail_error)
    }

    fn post(&self, letter: &caps::Letter) -> Result<String, caps::MailError> {
        use crate::bindings::faktura::service::mail as wmail;
        wmail::post(&wmail::Letter {
            address: letter.address.clone(),
            documents: attachments(&letter.documents),
            color: letter.color,
            duplex: letter.duplex,
            paper_weight: letter.paper_weight,
        })
        .map_err(mail_error)
    }
}

fn mail_error(e: crate::bindings::faktura::service::mail::MailError) -> caps::MailError {
    use crate::bindings::faktura::service::mail::MailError as W;
    match e {
        W::NotConfigured(m) => caps::MailError::NotConfigured(m),
        W::Rejected(m) => caps::MailError::Rejected(m),
        W::Unavailable(m) => caps::MailError::Unavailable(m),
    }
}

/// Attachments as the `mail` interface takes them.
fn attachments(
    list: &[caps::Attachment],
) -> Vec<crate::bindings::faktura::service::mail::Attachment> {
    list.iter()
        .map(|a| crate::bindings::faktura::service::mail::Attachment {
            filename: a.filename.clone(),
            mimetype: a.mimetype.clone(),
            content: a.content.clone(),
        })
        .collect()
}
