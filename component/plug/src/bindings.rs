//! The WIT side of the plug: `generate!` for the `plug` world and the exported interfaces
//! mapped onto `store`, `faktura_providers::render` and `faktura_providers::outbox`.

#![expect(
    unsafe_code,
    reason = "wit-bindgen's generated glue exports and calls raw ABI functions"
)]

use faktura_providers::{kv, outbox, render};

use crate::services;
use crate::store::StoreError;
use crate::txn::{CommitError, ReadTxn, WriteTxn};

wit_bindgen::generate!({
    path: "../../wit",
    world: "faktura:service/plug",
    generate_all,
});

use self::exports::faktura::service::mail::{self as wmail, MailError};
use self::exports::faktura::service::pdf::{self as wpdf};
use self::exports::faktura::service::ratelimit::{self as wrate, Window};
use self::exports::faktura::service::store::{self as wstore, Entries, Error};

struct Plug;

fn error(e: StoreError) -> Error {
    match e {
        StoreError::TooLarge => Error::TooLarge,
        StoreError::Conflict => Error::Conflict,
        StoreError::Backend(m) => Error::Backend(m),
    }
}

/// A scan's entries as the interface answers them (`kv::pack`).
fn entries(list: Vec<kv::Entry>) -> Result<Entries, Error> {
    let (bytes, ends) = kv::pack(&list).ok_or(Error::TooLarge)?;
    Ok(Entries { bytes, ends })
}

impl wstore::GuestReadTxn for ReadTxn {
    fn get(&self, key: Vec<u8>) -> Result<Option<Vec<u8>>, Error> {
        ReadTxn::get(self, &key).map_err(error)
    }

    fn get_many(&self, keys: Vec<Vec<u8>>) -> Result<Vec<Option<Vec<u8>>>, Error> {
        ReadTxn::get_many(self, &keys).map_err(error)
    }

    fn scan(
        &self,
        prefix: Vec<u8>,
        after: Option<Vec<u8>>,
        limit: u32,
        reverse: bool,
    ) -> Result<Entries, Error> {
        ReadTxn::scan(self, &prefix, after.as_deref(), limit, reverse)
            .map_err(error)
            .and_then(entries)
    }
}

impl wstore::GuestWriteTxn for WriteTxn {
    fn get(&self, key: Vec<u8>) -> Result<Option<Vec<u8>>, Error> {
        WriteTxn::get(self, &key).map_err(error)
    }

    fn get_many(&self, keys: Vec<Vec<u8>>) -> Result<Vec<Option<Vec<u8>>>, Error> {
        WriteTxn::get_many(self, &keys).map_err(error)
    }

    fn scan(
        &self,
        prefix: Vec<u8>,
        after: Option<Vec<u8>>,
        limit: u32,
        reverse: bool,
    ) -> Result<Entries, Error> {
        WriteTxn::scan(self, &prefix, after.as_deref(), limit, reverse)
            .map_err(error)
            .and_then(entries)
    }

    fn put(&self, key: Vec<u8>, value: Vec<u8>) -> Result<(), Error> {
        WriteTxn::put(self, &key, &value).map_err(error)
    }

    fn delete(&self, key: Vec<u8>) -> Result<(), Error> {
        WriteTxn::delete(self, &key).map_err(error)
    }

    fn write_many(&self, writes: Vec<wstore::Write>) -> Result<(), Error> {
        WriteTxn::write_many(self, writes.into_iter().map(|w| (w.key, w.value))).map_err(error)
    }

    fn next_ids(&self, counter: Vec<u8>, n: u32) -> Result<Vec<u64>, Error> {
        WriteTxn::next_ids(self, &counter, n).map_err(error)
    }

    fn commit(txn: wstore::WriteTxn) -> Result<(), Error> {
        txn.into_inner::<WriteTxn>().commit().map_err(|e| match e {
            CommitError::Store(e) => error(e),
            CommitError::Full(m) => Error::Full(m),
        })
    }
}

impl wstore::Guest for Plug {
    type ReadTxn = ReadTxn;
    type WriteTxn = WriteTxn;

    fn begin_read() -> Result<wstore::ReadTxn, Error> {
        Ok(wstore::ReadTxn::new(ReadTxn::begin().map_err(error)?))
    }

    /// The scope orders writers only where they run side by side; the plug's writers
    /// take turns on the whole store already.
    fn begin_write(_scope: Vec<u8>) -> Result<wstore::WriteTxn, Error> {
        Ok(wstore::WriteTxn::new(WriteTxn::begin().map_err(error)?))
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
        services::send(&msg, origin()).map_err(mail_error)
    }

    fn post(letter: wmail::Letter) -> Result<String, MailError> {
        let letter = outbox::Letter {
            address: letter.address,
            documents: attachments(letter.documents),
            color: letter.color,
            duplex: letter.duplex,
            paper_weight: letter.paper_weight,
        };
        services::post(&letter, origin()).map_err(|e| match e {
            services::PostError::NotConfigured(m) => MailError::NotConfigured(m),
            services::PostError::Mail(e) => mail_error(e),
        })
    }
}

fn window(w: services::Window) -> Window {
    Window {
        limit: w.limit,
        remaining: w.remaining,
        reset: w.reset,
        allowed: w.allowed,
    }
}

impl wrate::Guest for Plug {
    fn hit(_bucket: String) -> Window {
        window(services::hit())
    }

    fn hit_limited(_bucket: String, limit: u32, window_secs: u32) -> Window {
        window(services::hit_limited(limit, window_secs))
    }
}

export!(Plug);
