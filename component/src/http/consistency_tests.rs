//! The consistency check (`domain::consistency`) finds nothing in a store the service
//! wrote, and names each kind of damage done to one behind the service's back.

use rust_decimal::Decimal;

use super::Method;
use super::golden::{World, seed};
use crate::caps::{Store as _, Write};
use crate::domain::consistency::{Report, check};
use crate::domain::documents::{DocKind, storage};
use crate::domain::records;
use crate::domain::schema::Scalar;
use crate::store::forms::{Dec16, StoredSums};
use crate::store::{self, keys};

/// The world's one account.
const ACCOUNT: u64 = 1;

/// The golden world at this data version, with what it lacks: a supplier, an incoming invoice with a payment
/// and a comment, a client's property value, a client numbered anew and tagged, and an
/// invoice deleted.
pub(super) fn world() -> World {
    let w = seed();
    // As a host marks a store before it serves.
    let mut txn = w.store.begin_write().unwrap();
    store::set_data_version(txn.as_mut(), store::DATA_VERSION).unwrap();
    txn.commit().unwrap();
    w.ok(
        Method::Post,
        "/api/suppliers",
        "<supplier><name>Lieferant GmbH</name><vat_number>DE123456789</vat_number></supplier>",
    );
    w.ok(
        Method::Post,
        "/api/incomings",
        "<incoming><supplier_id>1</supplier_id><number>L-17</number><date>2026-11-01</date>\
         <currency_code>EUR</currency_code><total_net>100</total_net><total_tax>19</total_tax>\
         <total_gross>119</total_gross><payable_amount>119</payable_amount></incoming>",
    );
    w.ok(
        Method::Post,
        "/api/incoming-payments",
        "<incoming-payment><incoming_id>1</incoming_id><amount>50</amount></incoming-payment>",
    );
    w.ok(
        Method::Post,
        "/api/incoming-comments",
        "<incoming-comment><incoming_id>1</incoming_id><comment>Checked</comment></incoming-comment>",
    );
    w.ok(
        Method::Post,
        "/api/client-property-values",
        "<client-property-value><client_id>1</client_id><client_property_id>1</client_property_id></client-property-value>",
    );
    w.ok(
        Method::Put,
        "/api/clients/1",
        "<client><number>42</number></client>",
    );
    w.ok(
        Method::Post,
        "/api/client-tags",
        "<client-tag><client_id>1</client_id><name>Stammkunde</name></client-tag>",
    );
    w.ok(
        Method::Post,
        "/api/invoices",
        "<invoice><client_id>1</client_id><invoice-items><invoice-item><title>Weg</title>\
         <unit_price>1</unit_price></invoice-item></invoice-items></invoice>",
    );
    w.ok(Method::Delete, "/api/invoices/2", "");
    w
}

fn report(w: &World) -> Report {
    check(w.store.begin_read().unwrap().as_ref()).unwrap()
}

/// The key of one index entry of invoice `id` whose key holds `family`.
fn invoice_entry(w: &World, id: u64, family: &str) -> Vec<u8> {
    let read = w.store.begin_read().unwrap();
    let doc = storage::load(read.as_ref(), ACCOUNT, DocKind::Invoice, id).unwrap();
    storage::index_entries(ACCOUNT, &doc)
        .into_iter()
        .map(|(k, _)| k)
        .find(|k| k.windows(family.len()).any(|w| w == family.as_bytes()))
        .unwrap()
}

/// The first key under `prefix`.
fn first_key(w: &World, prefix: &[u8]) -> Vec<u8> {
    let read = w.store.begin_read().unwrap();
    read.scan(prefix, None, 1, false).unwrap().remove(0).0
}

/// Damages a fresh world with `damage` and checks that the report names the damage (a
/// problem holding every one of `expected`).
fn check_damage(damage: impl FnOnce(&World, &mut dyn Write), expected: &[&str]) {
    let w = world();
    let mut txn = w.store.begin_write().unwrap();
    damage(&w, txn.as_mut());
    txn.commit().unwrap();
    let report = report(&w);
    assert!(
        report
            .problems
            .iter()
            .any(|p| expected.iter().all(|e| p.contains(e))),
        "no problem names {expected:?}: {:#?}",
        report.problems
    );
    assert_eq!(report.problems_found, report.problems.len() as u64);
}

#[test]
fn a_store_the_service_wrote_is_consistent() {
    let report = report(&world());
    assert_eq!(report.problems, Vec::<String>::new());
    assert_eq!(report.problems_found, 0);
    assert_eq!(report.accounts, 1);
    assert!(report.records >= 15, "{report:?}");
    assert!(report.index_entries >= 20, "{report:?}");
    assert!(report.tally_values >= 6, "{report:?}");
    // Invoice 1, credit note 1 and client 1; invoice 2 was deleted with its claim.
    assert_eq!(report.number_claims, 3, "{report:?}");
}

#[test]
fn an_index_entry_whose_record_is_gone_is_reported() {
    check_damage(
        |_, txn| {
            txn.delete(&keys::record(ACCOUNT, "client-property-values", 1))
                .unwrap()
        },
        &[
            "account 1: the entry A1 ix/client-property-values/client_id/",
            "names client property value 1, which does not exist",
        ],
    );
    check_damage(
        |w, txn| {
            let key = invoice_entry(w, 1, "/date/");
            txn.delete(&keys::record(ACCOUNT, "invoices", 1)).unwrap();
            assert!(txn.get(&key).unwrap().is_some());
        },
        &[
            "the entry A1 ix/invoices/date/",
            "names invoice 1, which does not exist",
        ],
    );
}

#[test]
fn a_record_missing_its_index_entry_is_reported() {
    check_damage(
        |w, txn| txn.delete(&invoice_entry(w, 1, "/date/")).unwrap(),
        &["account 1: invoice 1 lacks its entry A1 ix/invoices/date/"],
    );
    check_damage(
        |w, txn| txn.delete(&invoice_entry(w, 1, "client-docs/")).unwrap(),
        &["invoice 1 lacks its entry A1 idx/client-docs/"],
    );
    // The value an entry holds counts: an open invoice's status entry holds its due day.
    check_damage(
        |w, txn| txn.put(&invoice_entry(w, 1, "/status/"), &[]).unwrap(),
        &[
            "the entry A1 ix/invoices/status/",
            "of invoice 1 holds nothing instead of",
        ],
    );
}

#[test]
fn an_entry_that_disagrees_with_its_record_is_reported() {
    // The supplier renamed behind the index's back: its entry holds the old name.
    check_damage(
        |_, txn| {
            let mut supplier = records::load(
                txn.as_read(),
                &crate::domain::suppliers::SUPPLIERS,
                ACCOUNT,
                1,
            )
            .unwrap();
            supplier.set("name", Some(Scalar::Text("Other".into())));
            txn.put(
                &keys::record(ACCOUNT, "suppliers", 1),
                &records::encode_record(&supplier),
            )
            .unwrap();
        },
        &[
            "the entry A1 ix/suppliers/name/lieferantgmbh",
            "does not agree with supplier 1",
        ],
    );
}

/// Clients are indexed by number and by the parts of their name, their tags by client
/// and name: every entry is checked against its record, and every record for its entries.
#[test]
fn client_and_client_tag_index_entries_are_checked_both_ways() {
    check_damage(
        |_, txn| {
            txn.delete(&keys::record(ACCOUNT, "client-tags", 1))
                .unwrap()
        },
        &[
            "the entry A1 ix/client-tags/client_id/",
            "names client tag 1, which does not exist",
        ],
    );
    check_damage(
        |w, txn| {
            let key = first_key(w, &keys::index(ACCOUNT, "client-tags", "name"));
            txn.delete(&key).unwrap();
        },
        &["client tag 1 lacks its entry A1 ix/client-tags/name/stammkunde"],
    );
    check_damage(
        |w, txn| {
            let key = first_key(w, &keys::index(ACCOUNT, "clients", "number"));
            txn.delete(&key).unwrap();
        },
        &["client 1 lacks its entry A1 ix/clients/number/"],
    );
    check_damage(
        |w, txn| {
            let key = first_key(w, &keys::index(ACCOUNT, "clients", "name~"));
            txn.delete(&key).unwrap();
        },
        &["client 1 lacks its entry A1 ix/clients/name~/"],
    );
    // The client renamed behind the index's back: the entries of its old name remain.
    check_damage(
        |_, txn| {
            let mut client =
                records::load(txn.as_read(), &crate::domain::clients::CLIENTS, ACCOUNT, 1).unwrap();
            client.set("name", Some(Scalar::Text("Other".into())));
            txn.put(
                &keys::record(ACCOUNT, "clients", 1),
                &records::encode_record(&client),
            )
            .unwrap();
        },
        &[
            "the entry A1 ix/clients/name~/m[c3bc]ller",
            "does not agree with client 1",
        ],
    );
}

#[test]
fn a_wrong_kept_sum_or_count_is_reported() {
    check_damage(
        |w, txn| {
            let key = first_key(w, &keys::index(ACCOUNT, "invoices", "sums"));
            let wrong = StoredSums {
                count: 1,
                net: Dec16(Decimal::new(1, 0)),
                gross: Dec16(Decimal::new(1, 0)),
            };
            txn.put(&key, &store::encode(&wrong)).unwrap();
        },
        &[
            "account 1: the tallied sums of invoices of 2026-11, client 1, status Open",
            "are 1 documents, net 1, gross 1, but the documents add up to 1 documents",
        ],
    );
    check_damage(
        |_, txn| {
            txn.put(
                &keys::index(ACCOUNT, "credit-notes", "count"),
                &9u64.to_be_bytes(),
            )
            .unwrap()
        },
        &["the tallied count of all credit notes is 9, but there are 1"],
    );
    check_damage(
        |w, txn| {
            let key = first_key(w, &keys::index(ACCOUNT, "invoices", "status-count"));
            txn.delete(&key).unwrap()
        },
        &[
            "the tallied count of invoices of status Open due on",
            "is missing; there are 1",
        ],
    );
}

#[test]
fn a_number_claim_of_no_record_and_a_record_without_its_claim_are_reported() {
    check_damage(
        |_, txn| {
            txn.put(
                &keys::number_claim(ACCOUNT, "invoice", "RE-", 77),
                &99u64.to_be_bytes(),
            )
            .unwrap()
        },
        &[
            "the entry A1 idx/number/invoice/RE-",
            "names invoice 99, which does not exist",
        ],
    );
    check_damage(
        |_, txn| {
            txn.delete(&keys::number_claim(ACCOUNT, "client", "", 42))
                .unwrap()
        },
        &["client 1 lacks its entry A1 idx/number/client/"],
    );
}

#[test]
fn a_child_without_its_way_back_or_its_document_is_reported() {
    check_damage(
        |w, txn| {
            let item = first_key(w, &keys::collection(ACCOUNT, "invoice-items"));
            let id = store::id_of_key(&item).unwrap();
            txn.delete(&keys::parent(ACCOUNT, "invoice-items", id))
                .unwrap()
        },
        &["invoice-items record 1 of invoice 1 lacks its entry A1 parent/invoice-items/"],
    );
    check_damage(
        |_, txn| {
            txn.put(&keys::child(ACCOUNT, "credit-note-tags", 5, 9), b"tag")
                .unwrap()
        },
        &["credit-note-tags record 9 of credit note 5 is kept, but credit note 5 does not exist"],
    );
}

#[test]
fn a_key_entry_of_no_user_is_reported() {
    check_damage(
        |_, txn| txn.delete(&keys::user(1)).unwrap(),
        &["the entry G key/", "names user 1, which does not exist"],
    );
}

#[test]
fn a_store_of_another_data_version_is_refused() {
    let w = world();
    let mut txn = w.store.begin_write().unwrap();
    store::set_data_version(txn.as_mut(), 4).unwrap();
    txn.commit().unwrap();
    let err = check(w.store.begin_read().unwrap().as_ref()).unwrap_err();
    assert!(format!("{err:?}").contains("data version 4"), "{err:?}");
}
