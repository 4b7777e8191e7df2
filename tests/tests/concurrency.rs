//! Concurrent requests on a multi-thread runtime: numbers stay unique and consecutive,
//! payments add up with exactly one transition to PAID, concurrent edits never mix fields,
//! and a burst beyond the instance pool waits for its turn.

use std::sync::Arc;

use faktura_tests::{App, Reply, test_component};

use crate::support::{INVOICES, client, complete, create_for};

/// An app to share between tasks, with a client; the client's id.
async fn app_with_client() -> (Arc<App>, u64) {
    let app = Arc::new(App::spawn().await);
    let c = client(&app, "<name>A</name>").await;
    (app, c)
}

fn statuses(replies: &[Reply]) -> Vec<u16> {
    replies.iter().map(|r| r.status).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_creates_get_distinct_consecutive_numbers() {
    let (app, c) = app_with_client().await;
    let invoice = INVOICES.body(&format!("<client_id>{c}</client_id>"));
    let replies = app
        .call_concurrently(64, |_| ("POST", INVOICES.list(), Some(invoice.clone())))
        .await;
    let mut numbers: Vec<u32> = replies
        .iter()
        .map(|r| {
            assert_eq!(r.status, 201, "{}", r.body);
            r.field("number").unwrap().parse().unwrap()
        })
        .collect();
    numbers.sort();
    assert_eq!(numbers, (1..=64).collect::<Vec<_>>());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_payments_add_up_and_settle_once() {
    let (app, c) = app_with_client().await;
    let items =
        "<invoice-items><invoice-item><unit_price>320</unit_price></invoice-item></invoice-items>";
    let id = create_for(&app, &INVOICES, c, items).await.id();
    complete(&app, &INVOICES, id).await;
    let payments = INVOICES.parts("payments");
    let payment = INVOICES.part("payment", id, "<amount>10</amount>");
    let replies = app
        .call_concurrently(32, |_| ("POST", payments.clone(), Some(payment.clone())))
        .await;
    assert_eq!(statuses(&replies), vec![201; 32]);
    let inv = app.get(&INVOICES.at(id)).await;
    assert_eq!(inv.field("paid_amount").as_deref(), Some("320"));
    assert_eq!(inv.field("status").as_deref(), Some("PAID"));
    let comments = app.get(&INVOICES.parts_of("comments", id)).await;
    let count =
        |name: &str, text: &str| comments.fields(name).iter().filter(|c| *c == text).count();
    assert_eq!(
        count("comment", "Status changed to PAID"),
        1,
        "exactly one transition to PAID"
    );
    assert_eq!(count("actionkey", "PAYMENT"), 32);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_edits_of_a_draft_never_interleave_fields() {
    let (app, c) = app_with_client().await;
    let id = create_for(&app, &INVOICES, c, "").await.id();
    let replies = app
        .call_concurrently(24, |i| {
            let edit =
                format!("<label>edit {i}</label><intro>edit {i}</intro><note>edit {i}</note>");
            ("PUT", INVOICES.at(id), Some(INVOICES.body(&edit)))
        })
        .await;
    assert_eq!(statuses(&replies), vec![200; 24]);
    let inv = app.get(&INVOICES.at(id)).await;
    let label = inv.field("label").unwrap();
    assert!(label.starts_with("edit "));
    assert_eq!(inv.field("intro"), Some(label.clone()));
    assert_eq!(inv.field("note"), Some(label));
}

/// Regression: a request's instance slot was handed on before its pooled instance was
/// freed, so a burst beyond the pool answered 500 now and then.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_beyond_the_instance_pool_waits_for_slots() {
    let data = Arc::new(tempfile::tempdir().unwrap());
    let app = Arc::new(
        App::spawn_configured(data, test_component(), |o| {
            o.limits.instances_max = 2;
        })
        .await,
    );
    for _ in 0..5 {
        let replies = app
            .call_concurrently(64, |_| ("GET", "/api/clients".into(), None))
            .await;
        assert_eq!(statuses(&replies), vec![200; 64]);
    }
}
