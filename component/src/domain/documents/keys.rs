//! Where a document and its index entries are stored: the document key layout on top of
//! `store::keys`, and which index entries a document has. Lists read candidates from
//! the entries instead of scanning documents.

use rust_decimal::Decimal;

use super::super::Error;
use super::super::date::Date;
use super::kind::DocKind;
use super::lifecycle::Status;
use super::model::Document;
use crate::caps::StoreError;
use crate::store::keys::{self, i32_of_sortable, sortable_i32};

pub(super) fn record(account: u64, kind: DocKind, id: u64) -> Vec<u8> {
    keys::record(account, kind.collection(), id)
}

/// Prefix of every document of a kind of one account.
pub(super) fn all(account: u64, kind: DocKind) -> Vec<u8> {
    keys::collection(account, kind.collection())
}

/// A stored status as one key byte.
pub(super) fn status_byte(status: Status) -> u8 {
    match status {
        Status::Draft => b'D',
        Status::Open => b'O',
        Status::Paid => b'P',
        Status::Canceled => b'C',
        Status::Won => b'W',
        Status::Lost => b'L',
        Status::Cleared => b'X',
        Status::Completed => b'F',
        Status::Created => b'N',
    }
}

pub(super) fn status_of_byte(byte: u8) -> Option<Status> {
    Status::ALL.into_iter().find(|s| status_byte(*s) == byte)
}

/// The kind of document an entry of the client's document index names: its byte stands
/// before the id.
pub(super) fn kind_of_client_entry(key: &[u8]) -> Option<DocKind> {
    let byte = *key.len().checked_sub(9).and_then(|at| key.get(at))?;
    DocKind::ALL
        .into_iter()
        .find(|kind| kind.spec().client_byte == byte)
}

/// Prefix of the status index entries of every stored status.
pub(super) fn status_index(account: u64, kind: DocKind) -> Vec<u8> {
    keys::index(account, kind.collection(), "status")
}

/// Prefix of the status index entries of one stored status.
pub(super) fn status_prefix(account: u64, kind: DocKind, status: Status) -> Vec<u8> {
    let mut prefix = status_index(account, kind);
    prefix.push(status_byte(status));
    prefix
}

/// Prefix of the date index (every document has one entry, by its date).
pub(super) fn date_index(account: u64, kind: DocKind) -> Vec<u8> {
    keys::index(account, kind.collection(), "date")
}

/// Prefix of the index of open documents by due date.
pub(super) fn open_due_index(account: u64, kind: DocKind) -> Vec<u8> {
    keys::index(account, kind.collection(), "open-due")
}

/// Prefix of the index of recurring invoices by the moment of their next run.
pub(super) fn due_index(account: u64, kind: DocKind) -> Vec<u8> {
    keys::index(account, kind.collection(), "due")
}

/// Prefix of the index of reminders by their invoice.
pub(super) fn invoice_index(account: u64, kind: DocKind) -> Vec<u8> {
    keys::index(account, kind.collection(), "invoice")
}

/// Prefix of the reminders of one invoice.
pub(super) fn of_invoice(account: u64, kind: DocKind, invoice: u64) -> Vec<u8> {
    let mut prefix = invoice_index(account, kind);
    prefix.extend_from_slice(&invoice.to_be_bytes());
    prefix
}

/// An index value of a moment (Unix seconds; fixed width, sorting as the moment).
pub(super) fn moment(unix: i64) -> [u8; 8] {
    (unix as u64 ^ (1 << 63)).to_be_bytes()
}

/// An index value of a date (fixed width, sorting as the date).
pub(super) fn day(date: Date) -> [u8; 4] {
    sortable_i32(date.julian())
}

/// The prefix of a client's documents of `kind` in the client's document index.
pub(super) fn client_documents(account: u64, client: u64, kind: DocKind) -> Vec<u8> {
    let mut k = keys::client_documents(account, client);
    k.push(kind.spec().client_byte);
    k
}

/// The status index entry of a document; for open ones of a kind that falls due the value
/// is the day it is due, so that OPEN and OVERDUE pages are told apart without loading
/// documents.
pub(super) fn status_entry(account: u64, doc: &Document) -> (Vec<u8>, Vec<u8>) {
    let mut key = status_prefix(account, doc.kind, doc.status);
    key.extend_from_slice(&doc.id.to_be_bytes());
    let value = if doc.falls_due() {
        day(doc.due_date).to_vec()
    } else {
        Vec::new()
    };
    (key, value)
}

/// Index entries of a document (key, value).
pub(super) fn index_entries(account: u64, doc: &Document) -> Vec<(Vec<u8>, Vec<u8>)> {
    let coll = doc.kind.collection();
    let mut entries = vec![
        status_entry(account, doc),
        (
            keys::index_entry(account, coll, "date", &day(doc.date), doc.id),
            Vec::new(),
        ),
        (
            keys::client_document(account, doc.client_id, doc.kind.spec().client_byte, doc.id),
            Vec::new(),
        ),
    ];
    if let Some(next) = doc.schedule.as_ref().and_then(|s| s.next_run) {
        entries.push((
            keys::index_entry(account, coll, "due", &moment(next), doc.id),
            Vec::new(),
        ));
    }
    if let Some(contact) = doc.contact_id.filter(|c| *c > 0) {
        entries.push((
            keys::contact_document(account, contact as u64, doc.kind.spec().client_byte, doc.id),
            Vec::new(),
        ));
    }
    if let (DocKind::Reminder, Some(invoice)) = (doc.kind, doc.invoice_id.filter(|i| *i > 0)) {
        entries.push((
            keys::index_entry(
                account,
                coll,
                "invoice",
                &(invoice as u64).to_be_bytes(),
                doc.id,
            ),
            Vec::new(),
        ));
    }
    if doc.falls_due() {
        entries.push(open_due_entry(account, doc));
    }
    entries
}

/// The open-due index entry of an open document of a kind that falls due: by the day it
/// is due, holding what grouped totals sum it by (`Due`).
pub(super) fn open_due_entry(account: u64, doc: &Document) -> (Vec<u8>, Vec<u8>) {
    (
        keys::index_entry(
            account,
            doc.kind.collection(),
            "open-due",
            &day(doc.due_date),
            doc.id,
        ),
        Due::value_of(doc),
    )
}

/// What grouped totals sum an open document that falls due by, kept as the value of its
/// open-due index entry, so that the documents due this month (OPEN or OVERDUE by the day)
/// are summed from the index without being loaded. One fixed layout, as every index value
/// has: the client (8 bytes), the date (4, as `day`), net and gross (16 each,
/// `Decimal::serialize`), then the currency's bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct Due<'a> {
    pub client: u64,
    pub date: Date,
    pub net: Decimal,
    pub gross: Decimal,
    pub currency: &'a str,
}

/// Bytes of a `Due` before its currency.
const DUE_FIXED: usize = 8 + 4 + 16 + 16;

impl Due<'_> {
    /// The open-due entry's value of `doc`.
    fn value_of(doc: &Document) -> Vec<u8> {
        let mut v = Vec::with_capacity(DUE_FIXED + doc.currency_code.len());
        v.extend_from_slice(&doc.client_id.to_be_bytes());
        v.extend_from_slice(&day(doc.date));
        v.extend_from_slice(&doc.total_net.serialize());
        v.extend_from_slice(&doc.total_gross.serialize());
        v.extend_from_slice(doc.currency_code.as_bytes());
        v
    }

    /// What an open-due entry's value keeps; `None` for an entry written before values
    /// were kept (empty), whose document is loaded instead.
    pub fn read(value: &[u8]) -> Result<Option<Due<'_>>, Error> {
        if value.is_empty() {
            return Ok(None);
        }
        let corrupt = || Error::from(StoreError::Backend("corrupt open-due entry".into()));
        if value.len() < DUE_FIXED {
            return Err(corrupt());
        }
        let decimal = |at: usize| -> Result<Decimal, Error> {
            let bytes: [u8; 16] = value[at..at + 16].try_into().map_err(|_| corrupt())?;
            Ok(Decimal::deserialize(bytes))
        };
        Ok(Some(Due {
            client: u64::from_be_bytes(value[0..8].try_into().map_err(|_| corrupt())?),
            date: Date::from_julian(i32_of_sortable(&value[8..12]).ok_or_else(corrupt)?),
            net: decimal(12)?,
            gross: decimal(28)?,
            currency: std::str::from_utf8(&value[DUE_FIXED..]).map_err(|_| corrupt())?,
        }))
    }
}
