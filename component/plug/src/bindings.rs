//! The WIT side of the plug: `generate!` for the `plug` world and the exported interfaces
//! mapped onto `store`, `faktura_providers::render` and `faktura_providers::outbox`.

#![expect(
    unsafe_code,
    reason = "wit-bindgen's generated glue exports and calls raw ABI functions"
)]

use std::cell::{Cell, RefCell};

use faktura_providers::{kv, outbox, render};

use crate::Config;
use crate::store::{self, StoreError};

wit_bindgen::generate!({
    path: "../../wit",
    world: "faktura:service/plug",
    generate_all,
});

use self::exports::faktura::service::mail::{self as wmail, MailError};
use self::exports::faktura::service::pdf::{self as wpdf};
use self::exports::faktura::service::ratelimit::{self as wrate, Window};
use self::exports::faktura::service::store::{self as wstore, Entry, Error};

struct Plug;

fn error(e: StoreError) -> Error {
    match e {
        StoreError::TooLarge => Error::TooLarge,
        StoreError::Conflict => Error::Conflict,
        StoreError::Backend(m) => Error::Backend(m),
    }
}

fn entries(list: Vec<kv::Entry>) -> Vec<Entry> {
    list.into_iter()
        .map(|(key, value)| Entry { key, value })
        .collect()
}

fn backend(e: impl std::fmt::Display) -> Error {
    Error::Backend(e.to_string())
}

/// A commit the disk had no room for is `full` (the host answers 507); any other failure
/// is the backend's.
fn commit_error(e: redb::CommitError) -> Error {
    match redb::Error::from(e) {
        redb::Error::Io(io) if io.kind() == std::io::ErrorKind::StorageFull => {
            Error::Full(io.to_string())
        }
        e => backend(e),
    }
}

/// A read transaction: a snapshot that holds nothing, so dropping it ends it.
struct ReadTxn(store::Snapshot);

/// The write transaction; dropped without `commit` it rolls back, and ends the turn.
struct WriteTxn {
    txn: RefCell<Option<redb::WriteTransaction>>,
    committed: Cell<bool>,
}

impl Drop for WriteTxn {
    fn drop(&mut self) {
        drop(self.txn.take());
        store::end_write(self.committed.get());
    }
}

impl ReadTxn {
    fn with<T>(
        &self,
        f: impl FnOnce(&redb::ReadTransaction) -> Result<T, StoreError>,
    ) -> Result<T, Error> {
        self.0.txn().and_then(f).map_err(error)
    }
}

impl WriteTxn {
    /// Runs `f` on the transaction once the turn is confirmed.
    fn with<T>(
        &self,
        f: impl FnOnce(&redb::WriteTransaction) -> Result<T, StoreError>,
    ) -> Result<T, Error> {
        store::confirm_turn().map_err(error)?;
        let txn = self.txn.borrow();
        let txn = txn
            .as_ref()
            .ok_or_else(|| backend("the transaction has ended"))?;
        f(txn).map_err(error)
    }
}

impl wstore::GuestReadTxn for ReadTxn {
    fn get(&self, key: Vec<u8>) -> Result<Option<Vec<u8>>, Error> {
        self.with(|txn| store::get(&store::read_table(txn)?, &key))
    }

    fn get_many(&self, keys: Vec<Vec<u8>>) -> Result<Vec<Option<Vec<u8>>>, Error> {
        self.with(|txn| {
            let table = store::read_table(txn)?;
            keys.iter().map(|k| store::get(&table, k)).collect()
        })
    }

    fn scan(
        &self,
        prefix: Vec<u8>,
        after: Option<Vec<u8>>,
        limit: u32,
        reverse: bool,
    ) -> Result<Vec<Entry>, Error> {
        self.with(|txn| {
            store::scan(
                &store::read_table(txn)?,
                &prefix,
                after.as_deref(),
                limit,
                reverse,
            )
        })
        .map(entries)
    }
}

impl wstore::GuestWriteTxn for WriteTxn {
    fn get(&self, key: Vec<u8>) -> Result<Option<Vec<u8>>, Error> {
        self.with(|txn| store::get(&store::write_table(txn)?, &key))
    }

    fn get_many(&self, keys: Vec<Vec<u8>>) -> Result<Vec<Option<Vec<u8>>>, Error> {
        self.with(|txn| {
            let table = store::write_table(txn)?;
            keys.iter().map(|k| store::get(&table, k)).collect()
        })
    }

    fn scan(
        &self,
        prefix: Vec<u8>,
        after: Option<Vec<u8>>,
        limit: u32,
        reverse: bool,
    ) -> Result<Vec<Entry>, Error> {
        self.with(|txn| {
            store::scan(
                &store::write_table(txn)?,
                &prefix,
                after.as_deref(),
                limit,
                reverse,
            )
        })
        .map(entries)
    }

    fn put(&self, key: Vec<u8>, value: Vec<u8>) -> Result<(), Error> {
        self.with(|txn| store::put(txn, &key, &value))
    }

    fn delete(&self, key: Vec<u8>) -> Result<(), Error> {
        self.with(|txn| store::delete(txn, &key))
    }

    fn write_many(&self, writes: Vec<wstore::Write>) -> Result<(), Error> {
        self.with(|txn| store::write_many(txn, writes.into_iter().map(|w| (w.key, w.value))))
    }

    fn next_ids(&self, counter: Vec<u8>, n: u32) -> Result<Vec<u64>, Error> {
        self.with(|txn| store::next_ids(txn, &counter, n))
    }

    fn commit(txn: wstore::WriteTxn) -> Result<(), Error> {
        let txn: WriteTxn = txn.into_inner();
        store::confirm_turn().map_err(error)?;
        let inner = txn.txn.borrow_mut().take();
        let result = match inner {
            // A commit that failed because the turn was lost on the way kept nothing.
            Some(t) => t
                .commit()
                .map_err(|e| store::confirm_turn().map_or_else(error, |()| commit_error(e))),
            None => Err(backend("the transaction has ended")),
        };
        txn.committed.set(result.is_ok());
        // Dropping `txn` ends the turn.
        drop(txn);
        result
    }
}

impl wstore::Guest for Plug {
    type ReadTxn = ReadTxn;
    type WriteTxn = WriteTxn;

    fn begin_read() -> Result<wstore::ReadTxn, Error> {
        let txn = store::begin_read(&Config::get().store).map_err(error)?;
        Ok(wstore::ReadTxn::new(ReadTxn(txn)))
    }

    /// The scope orders writers only where they run side by side; the plug's writers
    /// take turns on the whole store already.
    fn begin_write(_scope: Vec<u8>) -> Result<wstore::WriteTxn, Error> {
        let txn = store::begin_write(&Config::get().store).map_err(error)?;
        Ok(wstore::WriteTxn::new(WriteTxn {
            txn: RefCell::new(Some(txn)),
            committed: Cell::new(false),
        }))
    }
}

fn rows(rows: Vec<wpdf::MetaRow>) -> Vec<render::MetaRow> {
    rows.into_iter()
        .map(|r| render::MetaRow {
            label: r.label,
            value: r.value,
        })
        .collect()
}

impl wpdf::Guest for Plug {
    fn render(doc: wpdf::Document) -> Result<Vec<u8>, String> {
        let archive = render::Archive {
            conformance: match doc.conformance {
                wpdf::Conformance::Plain => render::Conformance::Plain,
                wpdf::Conformance::Pdfa3b => render::Conformance::PdfA3b,
            },
            attachments: doc
                .attachments
                .into_iter()
                .map(|a| render::EmbeddedFile {
                    filename: a.filename,
                    mimetype: a.mimetype,
                    description: a.description,
                    relationship: a.relationship,
                    modified: a.modified,
                    content: a.content,
                })
                .collect(),
            factur_x: doc.factur_x.map(|f| render::FacturX {
                document_type: f.document_type,
                filename: f.filename,
                version: f.version,
                conformance_level: f.conformance_level,
            }),
        };
        let doc = render::Document {
            title: doc.title,
            sender: doc.sender,
            recipient: doc.recipient,
            meta: rows(doc.meta),
            preamble: doc.preamble,
            items: render::Table {
                header: doc.items.header,
                rows: doc.items.rows,
                right_aligned: doc.items.right_aligned,
            },
            totals: rows(doc.totals),
            closing: doc.closing,
            footer: doc.footer,
            print: doc.print,
            matrix: doc.matrix.map(|m| render::Matrix {
                caption: m.caption,
                modules: m.modules,
            }),
        };
        render::render_archival(&doc, &archive)
    }

    fn thumbnail(page: wpdf::PageText, format: wpdf::ImageFormat) -> Result<Vec<u8>, String> {
        let format = match format {
            wpdf::ImageFormat::Png => render::ImageFormat::Png,
            wpdf::ImageFormat::Gif => render::ImageFormat::Gif,
            wpdf::ImageFormat::Jpg => render::ImageFormat::Jpg,
        };
        render::thumbnail(&page.paragraphs, format)
    }
}

fn attachments(list: Vec<wmail::Attachment>) -> Vec<outbox::Attachment> {
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

/// Tells this instance's outbox entries from those of instances writing at the same time.
fn origin() -> u64 {
    wasi::random::random::get_random_u64()
}

impl wmail::Guest for Plug {
    fn send(msg: wmail::Message) -> Result<String, MailError> {
        let msg = outbox::Message {
            from: msg.from,
            to: msg.to,
            cc: msg.cc,
            bcc: msg.bcc,
            subject: msg.subject,
            body: msg.body,
            attachments: attachments(msg.attachments),
        };
        outbox::write_outbox(&Config::get().data.join("outbox"), &msg, origin()).map_err(mail_error)
    }

    fn post(letter: wmail::Letter) -> Result<String, MailError> {
        let Some(queue) = &Config::get().postal else {
            return Err(MailError::NotConfigured(
                "postal dispatch is not configured (set FAKTURA_POSTAL)".into(),
            ));
        };
        let letter = outbox::Letter {
            address: letter.address,
            documents: attachments(letter.documents),
            color: letter.color,
            duplex: letter.duplex,
            paper_weight: letter.paper_weight,
        };
        outbox::write_letter(queue, &letter, origin()).map_err(mail_error)
    }
}

/// Length of a rate-limit window, as the host counts them.
const WINDOW_SECS: u64 = 15 * 60;

impl wrate::Guest for Plug {
    /// No limit applies: every request is allowed and the window only feeds the headers.
    fn hit(_bucket: String) -> Window {
        let now = outbox::now_unix();
        Window {
            limit: None,
            remaining: u32::MAX,
            reset: now - now % WINDOW_SECS + WINDOW_SECS,
            allowed: true,
        }
    }

    /// Counted nowhere either: an instance of the plug serves one request or a few, and
    /// keeps no count between them (a limit the guest names holds under the faktura host).
    fn hit_limited(_bucket: String, limit: u32, window_secs: u32) -> Window {
        let now = outbox::now_unix();
        let window = u64::from(window_secs.max(1));
        Window {
            limit: Some(limit),
            remaining: limit,
            reset: now - now % window + window,
            allowed: true,
        }
    }
}

export!(Plug);
