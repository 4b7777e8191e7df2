//! The consistency check of a whole store (`faktura check`): what the code keeps beside
//! the records agrees with the records.
//!
//! - Index entries (of documents, of the records with indexed fields, among them clients
//!   and their tags, of a client's documents and a supplier's incoming invoices) name a record that exists and holds
//!   the indexed value; every record has each entry it should.
//! - The tallied sums and counts of each account's documents equal a recount of them.
//! - Number claims name the document or client that holds that number; each one holds
//!   its claim.
//! - Every child of a document (item, payment, comment, tag) has its way back, and its
//!   document exists; every way back names a child.
//! - API key entries name a user of that account, with that key.
//!
//! It reads one snapshot and writes nothing: it finds, it repairs nothing. It checks only
//! what the code keeps up; a problem is a sentence naming the account, the record and
//! the key.

use super::Error;
use super::accounts;
use super::clients::{self, CLIENTS};
use super::documents::{DocKind, Document, storage, tallies};
use super::incomings::{self, INCOMINGS};
use super::migrate::INDEXED;
use super::records::{self, Resource};
use super::schema::Record;
use crate::caps::{Entry, Read};
use crate::limits;
use crate::store::{self, DATA_VERSION, keys};

/// Problems a report lists; past it they are only counted.
pub const PROBLEMS_LISTED_MAX: usize = 1000;

/// What the check read, and what it found wrong.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    pub accounts: u64,
    /// Documents, their children, clients and the records with indexed fields.
    pub records: u64,
    /// Index entries, ways back from children and API key entries.
    pub index_entries: u64,
    /// Tallied sums and counts of documents.
    pub tally_values: u64,
    pub number_claims: u64,
    /// The first `PROBLEMS_LISTED_MAX` problems, one sentence each.
    pub problems: Vec<String>,
    /// Every problem found, listed or not.
    pub problems_found: u64,
}

impl Report {
    fn problem(&mut self, sentence: String) {
        self.problems_found += 1;
        if self.problems.len() < PROBLEMS_LISTED_MAX {
            self.problems.push(sentence);
        }
    }
}

/// Checks the store `txn` reads: one snapshot, so that writes going on beside it are
/// seen whole or not at all.
pub fn check(txn: &dyn Read) -> Result<Report, Error> {
    let accounts = store::scan_all(txn, &keys::accounts())?
        .iter()
        .map(|(k, _)| store::id_of_key(k))
        .collect::<Result<Vec<u64>, _>>()?;
    let version = store::data_version(txn)?;
    // What is kept beside the records changed with the versions; a store of another
    // version would show every change as a problem.
    if version != DATA_VERSION && !accounts.is_empty() {
        let what = if version < DATA_VERSION {
            "start `faktura serve` on it once, which migrates it, and check it then"
        } else {
            "check it with the Faktura that wrote it"
        };
        return Err(Error::invalid(format!(
            "the store is at data version {version}, and this Faktura checks data version \
             {DATA_VERSION}: {what}"
        )));
    }
    let mut report = Report::default();
    report.index_entries += check_entries(
        txn,
        &mut report,
        "",
        &keys::api_keys(),
        &|_, value| {
            let principal = accounts::decode_principal(value).ok()?;
            let user = principal.user_id;
            Some((keys::user(user), format!("user {user}")))
        },
        &mut |_, bytes| Ok(vec![accounts::key_entry(&accounts::decode_user(bytes)?)]),
    )?;
    for account in accounts {
        report.accounts += 1;
        let scope = format!("account {account}: ");
        for kind in DocKind::ALL {
            check_documents(txn, &mut report, &scope, account, kind)?;
            check_children(txn, &mut report, &scope, account, kind)?;
        }
        // Documents by client and by contact: entries of one shape under two prefixes.
        for prefix in [
            keys::all_client_documents(account),
            keys::all_contact_documents(account),
        ] {
            report.index_entries += check_entries(
                txn,
                &mut report,
                &scope,
                &prefix,
                &|key, _| document_named(account, storage::kind_of_client_entry(key)?, key),
                &mut |_, bytes| stored_document_entries(account, bytes),
            )?;
        }
        // Clients are among the indexed resources, checked with their number claims.
        for res in INDEXED {
            check_indexed(txn, &mut report, &scope, account, res)?;
        }
        check_claims(txn, &mut report, &scope, account)?;
    }
    Ok(report)
}

/// A kind's documents against their index entries, number claims and tallies.
fn check_documents(
    txn: &dyn Read,
    report: &mut Report,
    scope: &str,
    account: u64,
    kind: DocKind,
) -> Result<(), Error> {
    let mut recount = tallies::Rebuild::default();
    check_records(
        txn,
        report,
        scope,
        &keys::collection(account, kind.collection()),
        &|key| format!("{} {}", kind.label(), id_or_zero(key)),
        &mut |key, bytes| {
            let doc = storage::decode(bytes)?;
            let id = store::id_of_key(key)?;
            if (doc.kind, doc.id) != (kind, id) {
                return Err(Error::invalid(format!(
                    "it holds {} {}",
                    doc.kind.label(),
                    doc.id
                )));
            }
            recount.add(account, &doc);
            Ok(document_entries(account, &doc))
        },
    )?;
    let mut problems = Vec::new();
    report.tally_values += recount.compare(txn, account, kind, &mut |p| problems.push(p))?;
    for p in problems {
        report.problem(p);
    }
    for prefix in storage::index_prefixes(account, kind) {
        report.index_entries += check_entries(
            txn,
            report,
            scope,
            &prefix,
            &|key, _| document_named(account, kind, key),
            &mut |_, bytes| stored_document_entries(account, bytes),
        )?;
    }
    Ok(())
}

/// The document of `kind` an index entry's key ends with: its record key and its name.
fn document_named(account: u64, kind: DocKind, key: &[u8]) -> Option<(Vec<u8>, String)> {
    let id = store::id_of_key(key).ok()?;
    Some((
        keys::record(account, kind.collection(), id),
        format!("{} {id}", kind.label()),
    ))
}

/// `document_entries` of a stored document.
fn stored_document_entries(account: u64, bytes: &[u8]) -> Result<Vec<Entry>, Error> {
    Ok(document_entries(account, &storage::decode(bytes)?))
}

/// The entries a document has beside it: its index entries and its number claim.
fn document_entries(account: u64, doc: &Document) -> Vec<Entry> {
    let mut entries = storage::index_entries(account, doc);
    if let Some(claim) = storage::claim_key(account, doc) {
        entries.push((claim, doc.id.to_be_bytes().to_vec()));
    }
    entries
}

/// The number claim of a client.
fn client_entries(account: u64, client: &Record) -> Option<Entry> {
    clients::claim_key(account, client).map(|claim| (claim, client.id().to_be_bytes().to_vec()))
}

/// The children of a kind's documents: each under a document that exists, each with its
/// way back, and each way back naming a child.
fn check_children(
    txn: &dyn Read,
    report: &mut Report,
    scope: &str,
    account: u64,
    kind: DocKind,
) -> Result<(), Error> {
    for collection in storage::child_collections(kind) {
        let prefix = keys::collection(account, collection);
        // A child's key ends in its document's id and its own.
        let ids = |key: &[u8]| -> Option<(u64, u64)> {
            let tail = key.strip_prefix(prefix.as_slice())?;
            let parent = store::u64_of(tail.get(..8)?, "id").ok()?;
            let id = store::u64_of(tail.get(8..)?, "id").ok()?;
            Some((parent, id))
        };
        let way_back = |key: &[u8]| -> Result<Vec<Entry>, Error> {
            let (parent, id) =
                ids(key).ok_or_else(|| Error::invalid("its key is not a child's"))?;
            Ok(vec![(
                keys::parent(account, collection, id),
                parent.to_be_bytes().to_vec(),
            )])
        };
        let name = |key: &[u8]| match ids(key) {
            Some((parent, id)) => format!("{collection} record {id} of {} {parent}", kind.label()),
            None => format!("{collection} record {}", show_key(key)),
        };
        check_records(txn, report, scope, &prefix, &name, &mut |key, _| {
            way_back(key)
        })?;
        in_batches(txn, &prefix, |batch| {
            let named: Vec<(Vec<u8>, u64)> = batch
                .iter()
                .filter_map(|(key, _)| Some((key.clone(), ids(key)?.0)))
                .collect();
            let documents: Vec<Vec<u8>> = named
                .iter()
                .map(|(_, parent)| keys::record(account, kind.collection(), *parent))
                .collect();
            for ((key, parent), found) in named.iter().zip(txn.get_many(&documents)?) {
                if found.is_none() {
                    report.problem(format!(
                        "{scope}{} is kept, but {} {parent} does not exist",
                        name(key),
                        kind.label()
                    ));
                }
            }
            Ok(())
        })?;
        report.index_entries += check_entries(
            txn,
            report,
            scope,
            &keys::parents(account, collection),
            &|key, value| {
                let id = store::id_of_key(key).ok()?;
                let parent = store::u64_of(value, "parent").ok()?;
                let child = keys::child(account, collection, parent, id);
                let name = name(&child);
                Some((child, name))
            },
            &mut |key, _| way_back(key),
        )?;
    }
    Ok(())
}

/// The records of a resource with indexed fields against their index entries (and an
/// incoming invoice against its supplier's index, a client against its number claim).
fn check_indexed(
    txn: &dyn Read,
    report: &mut Report,
    scope: &str,
    account: u64,
    res: &Resource,
) -> Result<(), Error> {
    let incomings = res.collection == INCOMINGS.collection;
    let clients = res.collection == CLIENTS.collection;
    let mut holds = |_: &[u8], bytes: &[u8]| -> Result<Vec<Entry>, Error> {
        let record = records::decode_record(bytes)?;
        let mut entries: Vec<Entry> = records::index_keys(res, account, &record)
            .into_iter()
            .map(|key| (key, Vec::new()))
            .collect();
        if incomings {
            entries.push((incomings::supplier_entry(account, &record), Vec::new()));
        }
        if clients {
            entries.extend(client_entries(account, &record));
        }
        Ok(entries)
    };
    check_records(
        txn,
        report,
        scope,
        &keys::collection(account, res.collection),
        &|key| name_of(res, key),
        &mut holds,
    )?;
    let names = |key: &[u8], _: &[u8]| {
        let id = store::id_of_key(key).ok()?;
        Some((
            keys::record(account, res.collection, id),
            format!("{} {id}", res.label),
        ))
    };
    for index in res.index_names() {
        let prefix = keys::index(account, res.collection, &index);
        report.index_entries += check_entries(txn, report, scope, &prefix, &names, &mut holds)?;
    }
    if incomings {
        let prefix = keys::all_supplier_incomings(account);
        report.index_entries += check_entries(txn, report, scope, &prefix, &names, &mut holds)?;
    }
    Ok(())
}

/// Number claims against the documents and clients they name.
fn check_claims(
    txn: &dyn Read,
    report: &mut Report,
    scope: &str,
    account: u64,
) -> Result<(), Error> {
    let clients_prefix = keys::collection(account, CLIENTS.collection);
    report.number_claims += check_entries(
        txn,
        report,
        scope,
        &keys::all_number_claims(account),
        &|key, value| {
            let range = keys::number_claim_range(account, key)?;
            let id = store::u64_of(value, "claim").ok()?;
            if range == clients::RANGE {
                return Some((
                    keys::record(account, CLIENTS.collection, id),
                    format!("client {id}"),
                ));
            }
            let kind = DocKind::ALL.into_iter().find(|k| k.range() == range)?;
            Some((
                keys::record(account, kind.collection(), id),
                format!("{} {id}", kind.label()),
            ))
        },
        &mut |key, bytes| {
            if key.starts_with(&clients_prefix) {
                let client = records::decode_record(bytes)?;
                Ok(client_entries(account, &client).into_iter().collect())
            } else {
                Ok(document_entries(account, &storage::decode(bytes)?))
            }
        },
    )?;
    Ok(())
}

/// What a record should have beside it: from its key and bytes, the entries (key and
/// value) the store must hold as they are; an error when the record cannot be read.
type Holds<'a> = dyn FnMut(&[u8], &[u8]) -> Result<Vec<Entry>, Error> + 'a;

/// Which record an entry names: from the entry's key and value, the record's key and its
/// name in messages; none for an entry that names none.
type Names<'a> = dyn Fn(&[u8], &[u8]) -> Option<(Vec<u8>, String)> + 'a;

/// Every record under `prefix` has the entries `holds` gives for it.
fn check_records(
    txn: &dyn Read,
    report: &mut Report,
    scope: &str,
    prefix: &[u8],
    name: &dyn Fn(&[u8]) -> String,
    holds: &mut Holds<'_>,
) -> Result<(), Error> {
    in_batches(txn, prefix, |batch| {
        let mut wanted: Vec<(String, Entry)> = Vec::new();
        for (key, value) in &batch {
            report.records += 1;
            match holds(key, value) {
                Ok(entries) => wanted.extend(entries.into_iter().map(|e| (name(key), e))),
                Err(e) => report.problem(format!(
                    "{scope}{} ({}) cannot be read: {}",
                    name(key),
                    show_key(key),
                    reason(&e)
                )),
            }
        }
        let keys: Vec<Vec<u8>> = wanted.iter().map(|(_, (k, _))| k.clone()).collect();
        for ((whose, (key, value)), found) in wanted.into_iter().zip(txn.get_many(&keys)?) {
            match found {
                None => {
                    report.problem(format!("{scope}{whose} lacks its entry {}", show_key(&key)))
                }
                Some(stored) if stored != value => report.problem(format!(
                    "{scope}the entry {} of {whose} holds {} instead of {}",
                    show_key(&key),
                    show_value(&stored),
                    show_value(&value)
                )),
                Some(_) => {}
            }
        }
        Ok(())
    })
}

/// Every entry under `prefix` names a record (`names`) that exists and has that entry, as it is, among those `holds` gives for it. The number
/// of entries read.
fn check_entries(
    txn: &dyn Read,
    report: &mut Report,
    scope: &str,
    prefix: &[u8],
    names: &Names<'_>,
    holds: &mut Holds<'_>,
) -> Result<u64, Error> {
    let mut read = 0;
    in_batches(txn, prefix, |batch| {
        read += batch.len() as u64;
        let mut named = Vec::new();
        for (key, value) in batch {
            match names(&key, &value) {
                Some((record, name)) => named.push((key, value, record, name)),
                None => report.problem(format!(
                    "{scope}the entry {} holding {} is not one the store keeps there",
                    show_key(&key),
                    show_value(&value)
                )),
            }
        }
        let records: Vec<Vec<u8>> = named.iter().map(|n| n.2.clone()).collect();
        for ((key, value, record, name), found) in named.into_iter().zip(txn.get_many(&records)?) {
            let Some(bytes) = found else {
                report.problem(format!(
                    "{scope}the entry {} names {name}, which does not exist",
                    show_key(&key)
                ));
                continue;
            };
            match holds(&record, &bytes) {
                Ok(entries) if entries.iter().any(|(k, v)| *k == key && *v == value) => {}
                Ok(_) => report.problem(format!(
                    "{scope}the entry {} holding {} does not agree with {name}",
                    show_key(&key),
                    show_value(&value)
                )),
                Err(e) => report.problem(format!(
                    "{scope}the entry {} names {name}, which cannot be read: {}",
                    show_key(&key),
                    reason(&e)
                )),
            }
        }
        Ok(())
    })?;
    Ok(read)
}

/// Calls `f` with the entries under `prefix` in key order, a batch at a time.
fn in_batches(
    txn: &dyn Read,
    prefix: &[u8],
    mut f: impl FnMut(Vec<Entry>) -> Result<(), Error>,
) -> Result<(), Error> {
    let mut after: Option<Vec<u8>> = None;
    loop {
        let batch = txn.scan(prefix, after.as_deref(), limits::SCAN_BATCH, false)?;
        let done = batch.len() < limits::SCAN_BATCH as usize;
        after = batch.last().map(|(k, _)| k.clone());
        f(batch)?;
        if done || after.is_none() {
            return Ok(());
        }
    }
}

/// A record of `res` in messages: "incoming 7".
fn name_of(res: &Resource, key: &[u8]) -> String {
    format!("{} {}", res.label, id_or_zero(key))
}

/// The id a key ends in; 0 for a key too short to hold one (named by its key elsewhere).
fn id_or_zero(key: &[u8]) -> u64 {
    store::id_of_key(key).unwrap_or(0)
}

/// A key for a message: an account's key as `A{id} ` and a global one as `G `, then its
/// bytes as text, with the bytes that are not printable in hex between brackets.
fn show_key(key: &[u8]) -> String {
    let (mut shown, rest) = match key.split_first() {
        Some((b'A', rest)) if rest.len() >= 8 => {
            let (id, rest) = rest.split_at(8);
            (format!("A{} ", id_or_zero(id)), rest)
        }
        Some((b'G', rest)) => ("G ".to_owned(), rest),
        _ => (String::new(), key),
    };
    let mut in_hex = false;
    for &b in rest {
        let text = b.is_ascii_graphic() && b != b'[' && b != b']';
        if text == in_hex {
            shown.push(if text { ']' } else { '[' });
            in_hex = !text;
        }
        if text {
            shown.push(b as char);
        } else {
            shown.push_str(&format!("{b:02x}"));
        }
    }
    if in_hex {
        shown.push(']');
    }
    shown
}

/// A value for a message: its bytes in hex, or "nothing".
fn show_value(value: &[u8]) -> String {
    if value.is_empty() {
        return "nothing".to_owned();
    }
    format!("[{}]", hex::encode(value))
}

/// Why a record could not be read, for a message.
fn reason(e: &Error) -> String {
    match e {
        Error::Invalid(m) => m.join("; "),
        Error::NotFound(m) | Error::Duplicate(m) | Error::Forbidden(m) | Error::Unavailable(m) => {
            m.clone()
        }
        Error::Store(e) => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_show_their_account_text_and_bytes() {
        let key = keys::index_entry(7, "invoices", "date", &[0x80, 0, 1, 2], 9);
        assert_eq!(
            show_key(&key),
            "A7 ix/invoices/date/[800001020000000000000009]"
        );
        assert_eq!(show_key(&keys::user(1)), "G user/[0000000000000001]");
        assert_eq!(show_value(&[]), "nothing");
        assert_eq!(show_value(&[1, 0xab]), "[01ab]");
    }
}
