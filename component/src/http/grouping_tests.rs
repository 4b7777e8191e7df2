//! Groups summed from the tallied sums answer exactly what summing every document answers,
//! through every change a document goes through, and after the sums are rebuilt.

use super::Method;
use super::golden::World;
use crate::caps::Store as _;

/// Documents of three clients over two years in two currencies, in every status.
fn world() -> World {
    let w = World::new();
    for c in 0..3 {
        w.ok(
            Method::Post,
            "/api/clients",
            &format!("<client><name>Kunde {c}</name></client>"),
        );
    }
    for i in 0..40u32 {
        let month = 1 + (i * 7) % 12;
        let year = 2025 + (i % 2);
        let currency = if i % 7 == 0 { "USD" } else { "EUR" };
        // The world's clock stands in November 2026: some due dates are past, some not.
        let due = if i % 4 == 0 {
            "2027-03-01".to_string()
        } else {
            format!("{year}-{month:02}-28")
        };
        w.ok(
            Method::Post,
            "/api/invoices",
            &format!(
                "<invoice><client_id>{}</client_id><date>{year}-{month:02}-0{}</date>\
                 <due_date>{due}</due_date><currency_code>{currency}</currency_code>\
                 <invoice-items><invoice-item><name>Arbeit</name><quantity>{}</quantity>\
                 <unit_price>10.5</unit_price></invoice-item></invoice-items></invoice>",
                1 + i % 3,
                1 + i % 9,
                i + 1
            ),
        );
    }
    // Due in the clock's own month (November 2026): one overdue, one not yet, one from
    // October overdue since this month, one due today (OPEN) and one due yesterday; and
    // on the days just around the month, which the kept sums hold: the last of October
    // and the first of December.
    for (date, due) in [
        ("2026-11-02", "2026-11-10"),
        ("2026-11-03", "2026-11-25"),
        ("2026-10-05", "2026-11-12"),
        ("2026-11-04", "2026-11-18"),
        ("2026-11-05", "2026-11-17"),
        ("2026-10-20", "2026-10-31"),
        ("2026-11-06", "2026-12-01"),
    ] {
        w.ok(
            Method::Post,
            "/api/invoices",
            &format!(
                "<invoice><client_id>2</client_id><date>{date}</date><due_date>{due}</due_date>\
                 <invoice-items><invoice-item><name>Arbeit</name><quantity>1</quantity>\
                 <unit_price>7</unit_price></invoice-item></invoice-items></invoice>"
            ),
        );
    }
    for id in 41..=47 {
        w.ok(Method::Put, &format!("/api/invoices/{id}/complete"), "");
    }
    for id in 1..=40u32 {
        if id % 2 == 0 {
            w.ok(Method::Put, &format!("/api/invoices/{id}/complete"), "");
        }
        if id % 6 == 0 {
            let (_, body) = w.call(
                Method::Get,
                &format!("/api/invoices/{id}"),
                "",
                "application/xml",
            );
            let gross = body
                .split("<total_gross type=\"float\">")
                .nth(1)
                .and_then(|rest| rest.split('<').next())
                .expect("total_gross");
            w.ok(
                Method::Post,
                "/api/invoice-payments",
                &format!(
                    "<invoice-payment><invoice_id>{id}</invoice_id><amount>{gross}</amount>\
                     <type>CASH</type></invoice-payment>"
                ),
            );
        }
        if id % 10 == 4 {
            w.ok(Method::Put, &format!("/api/invoices/{id}/cancel"), "");
        }
    }
    w.ok(Method::Delete, "/api/invoices/13", "");
    w.ok(
        Method::Post,
        "/api/invoice-items",
        "<invoice-item><invoice_id>15</invoice_id><name>Extra</name><quantity>2</quantity><unit_price>99</unit_price></invoice-item>",
    );
    w.ok(
        Method::Put,
        "/api/invoices/17",
        "<invoice><client_id>2</client_id><date>2024-12-31</date></invoice>",
    );
    w
}

const KEYS: &[&str] = &[
    "client,status,month",
    "year",
    "status",
    "month,client",
    "client,year,status",
];
const FILTERS: &[&str] = &[
    "",
    "&client_id=2",
    "&status=OPEN,PAID",
    "&status=OVERDUE",
    "&status=DRAFT,CANCELED",
];

/// Every combination of keys and filters, as answered.
fn answers(w: &World, extra: &str) -> Vec<String> {
    let mut out = Vec::new();
    for keys in KEYS {
        for filter in FILTERS {
            let (status, body) = w.call(
                Method::Get,
                &format!("/api/invoices?group_by={keys}{filter}{extra}"),
                "",
                "application/xml",
            );
            assert_eq!(status, 200, "{keys} {filter}: {body}");
            out.push(format!("{keys}{filter}\n{body}"));
        }
    }
    out
}

#[test]
fn groups_from_kept_sums_equal_groups_from_every_document() {
    let w = world();
    let from_sums = answers(&w, "");
    // A date filter matching every document takes the path that loads each one.
    let from_documents = answers(&w, "&from=1900-01-01");
    assert!(
        from_sums[0].contains("<count type=\"integer\">"),
        "{}",
        from_sums[0]
    );
    for (a, b) in from_sums.iter().zip(&from_documents) {
        assert_eq!(a, b);
    }
}

/// Keys of the tallied sums, their marker and the tallied count of invoices.
fn is_tally_key(key: &[u8]) -> bool {
    key.windows(b"ix/invoices/sums".len())
        .any(|s| s == b"ix/invoices/sums")
        || key.ends_with(b"ix/invoices/count/")
}

/// Every entry of the store.
fn everything(w: &World) -> Vec<crate::caps::Entry> {
    let read = w.store.begin_read().unwrap();
    crate::store::scan_all(read.as_ref(), b"").unwrap()
}

/// Data from before sums were kept (no sums, no marker) is answered exactly, from the
/// documents, without a write; the migration then keeps the sums again.
#[test]
fn sums_missing_from_older_data_are_answered_without_a_write_and_rebuilt_by_the_migration() {
    let w = world();
    let before = answers(&w, "");
    let mut txn = w.store.begin_write().unwrap();
    let all = crate::store::scan_all(txn.as_read(), b"A").unwrap();
    let sums: Vec<_> = all
        .iter()
        .filter(|(k, _)| is_tally_key(k))
        .map(|(k, _)| k.clone())
        .collect();
    assert!(sums.len() > 10, "{} sum entries", sums.len());
    for k in &sums {
        txn.delete(k).unwrap();
    }
    txn.commit().unwrap();
    // A change to a document while no sums are kept leaves them to the migration.
    w.ok(
        Method::Put,
        "/api/invoices/3",
        "<invoice><label>Neu</label></invoice>",
    );
    let stored = everything(&w);
    assert!(stored.iter().all(|(k, _)| !is_tally_key(k)));
    assert_eq!(answers(&w, ""), before);
    assert_eq!(everything(&w), stored, "a list writes nothing");
    let report = crate::domain::migrate::run(&w.store).unwrap();
    // Invoices, and the other kinds, of which there are none yet.
    assert_eq!(
        report.tallies_rebuilt,
        crate::domain::documents::DocKind::ALL.len() as u64,
        "{report:?}"
    );
    let rebuilt = everything(&w)
        .into_iter()
        .filter(|(k, _)| is_tally_key(k))
        .count();
    assert_eq!(rebuilt, sums.len());
    assert_eq!(answers(&w, ""), before);
}

#[test]
fn counts_and_first_pages_from_kept_sums_equal_those_of_the_indexes() {
    let w = world();
    let header = |path: &str| {
        let (status, body) = w.call(Method::Get, path, "", "application/xml");
        assert_eq!(status, 200, "{path}: {body}");
        body
    };
    // 47 created, one deleted.
    let all = header("/api/invoices?per_page=1000");
    assert!(all.contains("total=\"46\""), "{all}");
    for query in [
        "per_page=7&page=1",
        "per_page=7&page=3",
        "per_page=100&page=1",
        "per_page=5&page=9",
    ] {
        assert_eq!(
            header(&format!("/api/invoices?{query}")),
            header(&format!("/api/invoices?{query}&from=1900-01-01")),
            "{query}"
        );
    }
    for filter in [
        "",
        "?status=OPEN",
        "?status=PAID,CANCELED",
        "?client_id=3",
        "?label=x",
    ] {
        let head = super::handle(
            &w.caps(),
            &w.request(Method::Head, &format!("/api/invoices{filter}")),
        );
        let get = super::handle(
            &w.caps(),
            &w.request(Method::Get, &format!("/api/invoices{filter}")),
        );
        let total = |r: &super::Encoded| {
            r.headers
                .iter()
                .find(|(n, _)| n == "x-total-count")
                .map(|(_, v)| v.clone())
        };
        assert_eq!(head.status, 200);
        assert!(head.body.is_empty());
        assert_eq!(total(&head), total(&get), "{filter}");
        assert!(total(&head).is_some(), "{filter}");
    }
}

/// Every page of every status filter, and its count, as answered.
fn status_pages(w: &World, extra: &str) -> Vec<String> {
    let mut out = Vec::new();
    for statuses in [
        "OPEN",
        "OVERDUE",
        "DRAFT",
        "PAID",
        "CANCELED",
        "OPEN,OVERDUE",
        "DRAFT,PAID",
        "OVERDUE,CANCELED",
        "OPEN,PAID,DRAFT",
        "DRAFT,OPEN,OVERDUE,PAID,CANCELED",
    ] {
        for page in 1..=8 {
            let path = format!("/api/invoices?status={statuses}&per_page=3&page={page}{extra}");
            let (status, body) = w.call(Method::Get, &path, "", "application/xml");
            assert_eq!(status, 200, "{path}: {body}");
            out.push(format!("{statuses} {page}\n{body}"));
        }
        let head = super::handle(
            &w.caps(),
            &w.request(
                Method::Head,
                &format!("/api/invoices?status={statuses}{extra}"),
            ),
        );
        let count = head
            .headers
            .iter()
            .find(|(n, _)| n == "x-total-count")
            .map(|(_, v)| v.clone());
        out.push(format!("{statuses} count {count:?}"));
    }
    out
}

#[test]
fn status_pages_and_counts_equal_those_of_filtering_every_document() {
    let w = world();
    let from_index = status_pages(&w, "");
    // A date filter matching every document takes the path that loads each one.
    let from_documents = status_pages(&w, "&from=1900-01-01");
    for (a, b) in from_index.iter().zip(&from_documents) {
        assert_eq!(a, b);
    }
    let open = from_index
        .iter()
        .find(|a| a.starts_with("OPEN count"))
        .unwrap();
    let overdue = from_index
        .iter()
        .find(|a| a.starts_with("OVERDUE count"))
        .unwrap();
    // The one due today is OPEN, the one due yesterday OVERDUE.
    assert!(
        from_index.iter().any(|a| a.starts_with("OPEN ")
            && a.contains("<due_date type=\"date\">2026-11-18</due_date>")),
        "due today shows as OPEN"
    );
    assert!(
        from_index.iter().any(|a| a.starts_with("OVERDUE ")
            && a.contains("<due_date type=\"date\">2026-11-17</due_date>")),
        "due yesterday shows as OVERDUE"
    );
    assert_ne!(open, overdue);
}

/// Data kept by the first version (a marker without a version, no status counts, status
/// entries of open documents without their due day) is answered exactly without a write,
/// and the migration keeps it as this version does.
#[test]
fn status_counts_and_due_days_missing_from_older_data_are_rebuilt_by_the_migration() {
    let w = world();
    let before = status_pages(&w, "");
    let mut txn = w.store.begin_write().unwrap();
    for (k, v) in crate::store::scan_all(txn.as_read(), b"A").unwrap() {
        let is = |index: &[u8]| k.windows(index.len()).any(|s| s == index);
        if is(b"ix/invoices/status-count/") {
            txn.delete(&k).unwrap();
        } else if is(b"ix/invoices/sums-kept/") {
            txn.put(&k, &[]).unwrap();
        } else if is(b"ix/invoices/status/O") {
            assert_eq!(v.len(), 4, "an open entry holds its due day");
            txn.put(&k, &[]).unwrap();
        }
    }
    txn.commit().unwrap();
    let stored = everything(&w);
    assert_eq!(status_pages(&w, ""), before);
    assert_eq!(everything(&w), stored, "a list writes nothing");
    crate::domain::migrate::run(&w.store).unwrap();
    assert_eq!(status_pages(&w, ""), before);
    let all = everything(&w);
    let is = |k: &[u8], index: &[u8]| k.windows(index.len()).any(|s| s == index);
    assert!(all.iter().any(|(k, _)| is(k, b"ix/invoices/status-count/")));
    assert!(
        all.iter()
            .filter(|(k, _)| is(k, b"ix/invoices/status/O"))
            .all(|(_, v)| v.len() == 4)
    );
}

/// Where `index` begins in `key`, if it is there.
fn find(key: &[u8], index: &[u8]) -> Option<usize> {
    key.windows(index.len()).position(|s| s == index)
}

/// The record key of the invoice an open-due entry names.
fn invoice_of_open_due_entry(key: &[u8]) -> Option<Vec<u8>> {
    let at = find(key, b"ix/invoices/open-due/")?;
    Some([&key[..at], b"invoices/", &key[key.len() - 8..]].concat())
}

/// Open invoices due this month, OPEN or OVERDUE by the day, are summed from what their
/// open-due entries keep: with the records of every open invoice made unreadable, every
/// grouping from the kept sums answers as before.
#[test]
fn documents_due_this_month_are_summed_from_their_open_due_entries_without_being_loaded() {
    let w = world();
    let before = answers(&w, "");
    let mut txn = w.store.begin_write().unwrap();
    let mut unreadable = 0;
    for (k, _) in crate::store::scan_all(txn.as_read(), b"A").unwrap() {
        if let Some(record) = invoice_of_open_due_entry(&k) {
            assert!(
                txn.get(&record).unwrap().is_some(),
                "an open invoice's record"
            );
            txn.put(&record, b"\x08not a document").unwrap();
            unreadable += 1;
        }
    }
    txn.commit().unwrap();
    // The world's open invoices, among them the five due in the clock's month.
    assert!(unreadable >= 10, "{unreadable} open invoices");
    assert_eq!(answers(&w, ""), before);
}

/// Open-due entries written before they kept the sums (empty) are summed from their
/// documents, without a write; the migration writes them again with what they keep, and
/// the store then checks clean.
#[test]
fn open_due_entries_from_older_data_are_summed_from_their_documents_and_kept_by_the_migration() {
    let w = world();
    let before = answers(&w, "");
    let mut txn = w.store.begin_write().unwrap();
    let mut emptied: u64 = 0;
    for (k, v) in crate::store::scan_all(txn.as_read(), b"A").unwrap() {
        if invoice_of_open_due_entry(&k).is_some() {
            assert!(
                v.len() > 44,
                "an open-due entry keeps client, date, sums and currency"
            );
            txn.put(&k, &[]).unwrap();
            emptied += 1;
        }
    }
    txn.commit().unwrap();
    assert!(emptied >= 10, "{emptied} open-due entries");
    let stored = everything(&w);
    assert_eq!(answers(&w, ""), before);
    assert_eq!(everything(&w), stored, "a list writes nothing");
    let report = crate::domain::migrate::run(&w.store).unwrap();
    assert!(report.index_entries >= emptied, "{report:?}");
    let kept = everything(&w)
        .into_iter()
        .filter(|(k, v)| invoice_of_open_due_entry(k).is_some() && v.len() > 44)
        .count() as u64;
    assert_eq!(kept, emptied);
    assert_eq!(answers(&w, ""), before);
    let read = w.store.begin_read().unwrap();
    let checked = crate::domain::consistency::check(read.as_ref()).unwrap();
    assert!(checked.problems.is_empty(), "{:?}", checked.problems);
}

#[test]
fn groups_in_several_currencies_come_as_a_list_of_lists_and_none_as_an_empty_list() {
    let w = world();
    let (status, body) = w.call(
        Method::Get,
        "/api/invoices?group_by=year",
        "",
        "application/xml",
    );
    assert_eq!(status, 200, "{body}");
    assert!(
        body.starts_with(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<invoice-group-lists type=\"array\">\n  \
             <invoice-groups type=\"array\" currency_code=\"EUR\">\n    <invoice-group>\n      \
             <total_gross type=\"float\">"
        ),
        "{body}"
    );
    assert!(
        body.contains("<invoice-groups type=\"array\" currency_code=\"USD\">"),
        "{body}"
    );
    assert!(
        body.contains(
            "<year type=\"integer\">2025</year>\n      <invoice-params>\n        \
             <year type=\"integer\">2025</year>\n      </invoice-params>\n    </invoice-group>"
        ),
        "{body}"
    );
    assert!(
        body.ends_with("  </invoice-groups>\n</invoice-group-lists>\n"),
        "{body}"
    );
    let (_, none) = w.call(
        Method::Get,
        "/api/invoices?group_by=year&client_id=3&status=CANCELED,DRAFT,PAID,OPEN,OVERDUE&from=2030-01-01",
        "",
        "application/xml",
    );
    assert_eq!(
        none,
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<invoice-groups type=\"array\"/>\n"
    );
    let (_, json) = w.call(
        Method::Get,
        "/api/invoices?group_by=year",
        "",
        "application/json",
    );
    assert!(
        json.starts_with("{\"invoice-group-lists\":{\"invoice-groups\":[{\"invoice-group\":"),
        "{json}"
    );
}
