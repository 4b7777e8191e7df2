//! Brings a store to the data version this code writes (`store::DATA_VERSION`), one step
//! at a time, before the store is served: the host runs it at start-up (the `admin`
//! export `migrate`); where no host can (`wasmtime serve`, Spin), the first request that
//! finds data of an older version runs it (`http::authenticate`).
//!
//! Every step is idempotent and commits on its own, and the version is raised last: a
//! migration cut short runs again from the start.

use super::Error;
use super::accounts;
use super::documents::{self, DocKind, tallies};
use super::einvoice;
use super::records;
use crate::caps::Store;
use crate::limits;
use crate::store::{self, DATA_VERSION, keys};

/// What a migration did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Report {
    /// The data version found, and the one the store is at now.
    pub from: u8,
    pub to: u8,
    /// Key entries rewritten as principal records.
    pub key_entries: u64,
    /// Kinds of documents of an account whose tallied sums and counts were rebuilt.
    pub tallies_rebuilt: u64,
    /// Completed documents whose e-invoices were made.
    pub einvoices_made: u64,
    /// Index entries written for records that name another (an incoming's items).
    pub index_entries: u64,
}

/// Runs every step from the store's data version to the current one.
pub fn run(store: &dyn Store) -> Result<Report, Error> {
    let from = store::data_version(store.begin_read()?.as_ref())?;
    let mut report = Report {
        from,
        to: from,
        ..Report::default()
    };
    if from >= DATA_VERSION {
        return Ok(report);
    }
    if from == store::UNMARKED_VERSION && account_ids(store)?.is_empty() {
        // A new store: nothing to bring along, it is of this version from the start.
        let mut txn = store.begin_write()?;
        store::set_data_version(txn.as_mut(), DATA_VERSION)?;
        txn.commit()?;
        report.from = DATA_VERSION;
        report.to = DATA_VERSION;
        return Ok(report);
    }
    if from < 3 {
        key_entries_and_tallies(store, &mut report)?;
    }
    if from < 4 {
        // Version 4: completed documents have their e-invoices (made from the data as it
        // is now, the best there is for documents completed before they were kept).
        for account in account_ids(store)? {
            for kind in DocKind::ALL.into_iter().filter(|k| k.spec().einvoices) {
                report.einvoices_made += make_einvoices(store, account, kind)?;
            }
        }
    }
    if from < 7 {
        report.index_entries += contacts_and_dunning(store)?;
    }
    if from < 8 {
        // Version 8: open-due entries keep what grouped totals sum their documents by.
        for account in account_ids(store)? {
            for kind in DocKind::ALL.into_iter().filter(|k| k.spec().falls_due) {
                report.index_entries += keep_due_sums(store, account, kind)?;
            }
        }
    }
    // Version 5: the records that name another (an incoming's items, payments, comments)
    // are found through an index. Version 6: clients are found by number and by a part of
    // their name through indexes, and their tags by client and name.
    for account in account_ids(store)? {
        for res in INDEXED {
            report.index_entries += reindex(store, account, res)?;
        }
    }
    // Key entries carry the version last, with the version itself: a request that finds
    // an older one (where no host migrates) runs the migration.
    let mut txn = store.begin_write()?;
    accounts::migrate_key_entries(txn.as_mut())?;
    store::set_data_version(txn.as_mut(), DATA_VERSION)?;
    txn.commit()?;
    report.to = DATA_VERSION;
    Ok(report)
}

/// Version 3: key entries hold the principal, and every account has tallies.
fn key_entries_and_tallies(store: &dyn Store, report: &mut Report) -> Result<(), Error> {
    let mut txn = store.begin_write()?;
    report.key_entries = accounts::migrate_key_entries(txn.as_mut())?;
    txn.commit()?;
    for account in account_ids(store)? {
        for kind in DocKind::ALL {
            if !tallies::needs_rebuild(store.begin_read()?.as_ref(), account, kind)? {
                continue;
            }
            repair_open_entries(store, account, kind)?;
            let mut txn = store.begin_write()?;
            rebuild_tallies(txn.as_mut(), account, kind)?;
            txn.commit()?;
            report.tallies_rebuilt += 1;
        }
    }
    Ok(())
}

/// Version 7: documents are indexed by the contact they name, and every account has
/// dunning levels and base rates. The index entries written.
fn contacts_and_dunning(store: &dyn Store) -> Result<u64, Error> {
    let mut index_entries = 0;
    for account in account_ids(store)? {
        for kind in DocKind::ALL {
            index_entries += index_contacts(store, account, kind)?;
        }
        let mut txn = store.begin_write()?;
        if super::dunning::unseeded(txn.as_read(), account)? {
            let ctx = super::Ctx {
                account_id: account,
                user_id: 0,
                is_admin: true,
                now: 0,
                utc_offset: 0,
            };
            super::dunning::seed(&ctx, txn.as_mut())?;
        }
        txn.commit()?;
    }
    Ok(index_entries)
}

/// Every account's id.
fn account_ids(store: &dyn Store) -> Result<Vec<u64>, Error> {
    let txn = store.begin_read()?;
    let mut ids = Vec::new();
    for (k, _) in store::scan_all(txn.as_ref(), &keys::accounts())? {
        ids.push(store::id_of_key(&k)?);
    }
    Ok(ids)
}

/// Every resource with an index.
pub static INDEXED: &[&records::Resource] = &[
    &super::clients::CLIENTS,
    &super::record_tags::CLIENT_TAGS,
    &super::incomings::INCOMINGS,
    &super::suppliers::SUPPLIERS,
    &super::incomings::INCOMING_ITEMS,
    &super::incomings::INCOMING_PAYMENTS,
    &super::incomings::INCOMING_COMMENTS,
    &super::property_values::INCOMING_PROPERTY_VALUES,
    &super::property_values::CLIENT_PROPERTY_VALUES,
    &super::property_values::USER_PROPERTY_VALUES,
    &super::property_values::ARTICLE_PROPERTY_VALUES,
    &super::units::UNITS,
    &super::articles::ARTICLES,
    &super::record_tags::ARTICLE_TAGS,
    &super::contacts::CONTACTS,
    &super::documents::recurring::RECEIVERS,
];

/// Writes the index entries of the records of `res` in an account, a bounded number of
/// records per transaction.
fn reindex(store: &dyn Store, account: u64, res: &records::Resource) -> Result<u64, Error> {
    let prefix = keys::collection(account, res.collection);
    let mut after: Option<Vec<u8>> = None;
    let mut written = 0;
    loop {
        let batch = {
            let txn = store.begin_read()?;
            txn.scan(&prefix, after.as_deref(), limits::MIGRATION_BATCH, false)?
        };
        let done = batch.len() < limits::MIGRATION_BATCH as usize;
        after = batch.last().map(|(k, _)| k.clone());
        let mut txn = store.begin_write()?;
        for (_, v) in &batch {
            written += records::index(txn.as_mut(), res, account, &records::decode_record(v)?)?;
        }
        txn.commit()?;
        if done {
            return Ok(written);
        }
    }
}

/// Writes the contact index entries of the documents that name a contact, a bounded
/// number per transaction.
fn index_contacts(store: &dyn Store, account: u64, kind: DocKind) -> Result<u64, Error> {
    let mut naming = Vec::new();
    documents::storage::for_each(store.begin_read()?.as_ref(), account, kind, |doc| {
        if doc.contact_id.is_some_and(|c| c > 0) {
            naming.push(doc.id);
        }
        Ok(())
    })?;
    for batch in naming.chunks(limits::MIGRATION_BATCH as usize) {
        let mut txn = store.begin_write()?;
        for doc in documents::storage::load_many(txn.as_read(), account, kind, batch)? {
            for (k, v) in documents::storage::index_entries(account, &doc) {
                txn.put(&k, &v)?;
            }
        }
        txn.commit()?;
    }
    Ok(naming.len() as u64)
}

/// Writes again the status entries of open documents that lack the day they are due
/// (written before data version 2).
fn repair_open_entries(store: &dyn Store, account: u64, kind: DocKind) -> Result<(), Error> {
    let prefix = documents::storage::status_prefix(account, kind, documents::Status::Open);
    rewrite_entries(
        store,
        account,
        kind,
        &prefix,
        |v| v.len() != 4,
        documents::storage::status_entry,
    )
    .map(|_| ())
}

/// Writes again the open-due entries that keep nothing (written before data version 8)
/// with what they keep now. The entries written.
fn keep_due_sums(store: &dyn Store, account: u64, kind: DocKind) -> Result<u64, Error> {
    let prefix = documents::storage::open_due_prefix(account, kind);
    rewrite_entries(
        store,
        account,
        kind,
        &prefix,
        <[u8]>::is_empty,
        documents::storage::open_due_entry,
    )
}

/// Writes again, as `entry` makes it from its document, every index entry of `kind` under
/// `prefix` whose value is `stale`, a bounded number per transaction so that no write
/// transaction grows with the account. The entries written.
fn rewrite_entries(
    store: &dyn Store,
    account: u64,
    kind: DocKind,
    prefix: &[u8],
    stale: impl Fn(&[u8]) -> bool,
    entry: impl Fn(u64, &documents::Document) -> (Vec<u8>, Vec<u8>),
) -> Result<u64, Error> {
    let mut after: Option<Vec<u8>> = None;
    let mut written = 0;
    loop {
        let txn = store.begin_read()?;
        let batch = txn.scan(prefix, after.as_deref(), limits::MIGRATION_BATCH, false)?;
        let done = batch.len() < limits::MIGRATION_BATCH as usize;
        after = batch.last().map(|(k, _)| k.clone());
        let mut ids = Vec::new();
        for (k, v) in &batch {
            if stale(v) {
                ids.push(store::id_of_key(k)?);
            }
        }
        drop(txn);
        if !ids.is_empty() {
            let mut txn = store.begin_write()?;
            for doc in documents::storage::load_many(txn.as_read(), account, kind, &ids)? {
                let (k, v) = entry(account, &doc);
                txn.put(&k, &v)?;
                written += 1;
            }
            txn.commit()?;
        }
        if done {
            return Ok(written);
        }
    }
}

/// Makes the e-invoices of the completed documents of an account's kind that lack them, a
/// bounded number per transaction. Documents whose data fails a profile's rules keep
/// that refusal, as a completion would.
fn make_einvoices(store: &dyn Store, account: u64, kind: DocKind) -> Result<u64, Error> {
    let mut missing = Vec::new();
    {
        let txn = store.begin_read()?;
        let mut completed = Vec::new();
        documents::storage::for_each(txn.as_ref(), account, kind, |doc| {
            if doc.status != documents::Status::Draft {
                completed.push(doc.id);
            }
            Ok(())
        })?;
        for id in completed {
            if !einvoice::exists(txn.as_ref(), account, kind, id)? {
                missing.push(id);
            }
        }
    }
    for batch in missing.chunks(limits::MIGRATION_BATCH as usize) {
        let mut txn = store.begin_write()?;
        for doc in documents::storage::load_many(txn.as_read(), account, kind, batch)? {
            let inv = einvoice::model(txn.as_read(), account, &doc)?;
            einvoice::issue(txn.as_mut(), account, &doc, &inv, &[])?;
        }
        txn.commit()?;
    }
    Ok(missing.len() as u64)
}

/// Sums and counts every document of an account's kind afresh: reads every document,
/// writes a few thousand sums at most (one per month, client, status and currency).
fn rebuild_tallies(
    txn: &mut dyn crate::caps::Write,
    account: u64,
    kind: DocKind,
) -> Result<(), Error> {
    let mut rebuild = tallies::Rebuild::default();
    documents::storage::for_each(txn.as_read(), account, kind, |doc| {
        rebuild.add(account, &doc);
        Ok(())
    })?;
    rebuild.write(txn, account, kind)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::caps::mem::{CountingRandom, MemStore};

    #[test]
    fn a_new_store_starts_at_this_version_without_a_migration() {
        let store = MemStore::default();
        let report = run(&store).unwrap();
        assert_eq!((report.from, report.to), (DATA_VERSION, DATA_VERSION));
        let read = store.begin_read().unwrap();
        assert_eq!(store::data_version(read.as_ref()).unwrap(), DATA_VERSION);
    }

    #[test]
    fn an_unmarked_store_is_migrated_once_and_a_current_one_not_at_all() {
        let store = MemStore::default();
        let mut w = store.begin_write().unwrap();
        accounts::create_account(
            w.as_mut(),
            "A",
            "a@example.com",
            0,
            &CountingRandom::default(),
            None,
        )
        .unwrap();
        w.commit().unwrap();
        let first = run(&store).unwrap();
        assert_eq!(
            (first.from, first.to),
            (store::UNMARKED_VERSION, DATA_VERSION)
        );
        assert_eq!(
            first.tallies_rebuilt,
            documents::DocKind::ALL.len() as u64,
            "every kind of the one account"
        );
        // An account from before dunning gets its levels and the published base rates.
        let read = store.begin_read().unwrap();
        let account = account_ids(&store).unwrap()[0];
        let levels = crate::domain::dunning::levels::levels(read.as_ref(), account).unwrap();
        assert_eq!(levels.len(), 3);
        let rates = crate::domain::dunning::base_rates::rates(read.as_ref(), account).unwrap();
        assert_eq!(
            rates.len(),
            crate::domain::dunning::base_rates::PUBLISHED.len()
        );
        drop(read);
        let again = run(&store).unwrap();
        assert_eq!(
            again,
            Report {
                from: DATA_VERSION,
                to: DATA_VERSION,
                ..Report::default()
            }
        );
    }

    /// A store of version 4 (records naming an incoming without an index, key entries of
    /// version 4): the migration indexes the records, and a request that finds the old key
    /// entry knows the store is unmigrated.
    #[test]
    fn records_of_version_4_are_indexed_and_the_key_entries_say_so() {
        use crate::domain::incomings::INCOMING_COMMENTS;
        use crate::domain::schema::{Record, Scalar};
        let store = MemStore::default();
        let mut w = store.begin_write().unwrap();
        let key = accounts::create_account(
            w.as_mut(),
            "A",
            "a@example.com",
            0,
            &CountingRandom::default(),
            Some("k-0123456789abcdef0123456789abcdef"),
        )
        .unwrap();
        let account = key.account_id;
        let mut comment = Record::default();
        comment.set("id", Some(Scalar::Int(7)));
        comment.set("incoming_id", Some(Scalar::Int(3)));
        comment.set("comment", Some(Scalar::Text("x".into())));
        w.put(
            &keys::record(account, INCOMING_COMMENTS.collection, 7),
            &records::encode_record(&comment),
        )
        .unwrap();
        // The key entry as version 4 wrote it.
        let hash = keys::api_keys();
        let (k, v) = store::scan_all(w.as_read(), &hash).unwrap().remove(0);
        let mut old = v.clone();
        old[0] = 4;
        w.put(&k, &old).unwrap();
        store::set_data_version(w.as_mut(), 4).unwrap();
        w.commit().unwrap();
        let children = |store: &MemStore| {
            records::children(
                store.begin_read().unwrap().as_ref(),
                &INCOMING_COMMENTS,
                account,
                "incoming_id",
                3,
            )
            .unwrap()
            .len()
        };
        assert_eq!(children(&store), 0, "not indexed before");
        assert_eq!(
            accounts::authenticate(
                store.begin_read().unwrap().as_ref(),
                "k-0123456789abcdef0123456789abcdef"
            )
            .unwrap(),
            accounts::Found::Unmigrated
        );
        let report = run(&store).unwrap();
        assert_eq!((report.from, report.to), (4, DATA_VERSION));
        assert_eq!(report.index_entries, 1);
        assert_eq!(children(&store), 1);
        assert!(matches!(
            accounts::authenticate(
                store.begin_read().unwrap().as_ref(),
                "k-0123456789abcdef0123456789abcdef"
            )
            .unwrap(),
            accounts::Found::Principal(_)
        ));
    }

    /// A store of version 5 (clients without an index): the migration indexes each
    /// client by number and by the parts of its name, and the lookups find it.
    #[test]
    fn clients_of_version_5_are_indexed_by_number_and_name() {
        use crate::domain::clients::CLIENTS;
        use crate::domain::schema::{Record, Scalar};
        let store = MemStore::default();
        let mut w = store.begin_write().unwrap();
        let key = accounts::create_account(
            w.as_mut(),
            "A",
            "a@example.com",
            0,
            &CountingRandom::default(),
            None,
        )
        .unwrap();
        let account = key.account_id;
        let mut client = Record::default();
        client.set("id", Some(Scalar::Int(4)));
        client.set("number", Some(Scalar::Int(12)));
        client.set("name", Some(Scalar::Text("Müller GmbH".into())));
        w.put(
            &keys::record(account, CLIENTS.collection, 4),
            &records::encode_record(&client),
        )
        .unwrap();
        store::set_data_version(w.as_mut(), 5).unwrap();
        w.commit().unwrap();
        let found = |store: &MemStore| {
            let txn = store.begin_read().unwrap();
            (
                records::ids_where(txn.as_ref(), &CLIENTS, account, "number", 12).unwrap(),
                records::search(txn.as_ref(), &CLIENTS, account, "name", "LLER")
                    .unwrap()
                    .unwrap(),
            )
        };
        assert_eq!(found(&store), (vec![], vec![]), "not indexed before");
        let report = run(&store).unwrap();
        assert_eq!((report.from, report.to), (5, DATA_VERSION));
        // One number entry, one entry per ending of "müllergmbh".
        assert_eq!(report.index_entries, 1 + 10);
        assert_eq!(found(&store), (vec![4], vec![4]));
    }
}
