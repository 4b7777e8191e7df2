//! Concurrent requests: numbers stay unique and consecutive, payments add up with exactly
//! one transition to PAID, and concurrent edits never mix fields.

use std::sync::Arc;

use faktura_tests::App;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_creates_get_distinct_consecutive_numbers() {
    let app = Arc::new(App::spawn().await);
    let c = app
        .post("/api/clients", "<client><name>A</name></client>")
        .await
        .id();
    let tasks: Vec<_> = (0..64)
        .map(|_| {
            let app = app.clone();
            tokio::spawn(async move {
                let r = app
                    .post(
                        "/api/invoices",
                        &format!("<invoice><client_id>{c}</client_id></invoice>"),
                    )
                    .await;
                assert_eq!(r.status, 201, "{}", r.body);
                r.field("number").unwrap().parse::<u32>().unwrap()
            })
        })
        .collect();
    let mut numbers = Vec::new();
    for t in tasks {
        numbers.push(t.await.unwrap());
    }
    numbers.sort();
    assert_eq!(numbers, (1..=64).collect::<Vec<_>>());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_payments_add_up_and_settle_once() {
    let app = Arc::new(App::spawn().await);
    let c = app
        .post("/api/clients", "<client><name>A</name></client>")
        .await
        .id();
    let id = app
        .post(
            "/api/invoices",
            &format!("<invoice><client_id>{c}</client_id><invoice-items><invoice-item><unit_price>320</unit_price></invoice-item></invoice-items></invoice>"),
        )
        .await
        .id();
    assert_eq!(
        app.put(&format!("/api/invoices/{id}/complete"), "")
            .await
            .status,
        200
    );
    let tasks: Vec<_> = (0..32)
        .map(|_| {
            let app = app.clone();
            tokio::spawn(async move {
                app.post(
                    "/api/invoice-payments",
                    &format!("<invoice-payment><invoice_id>{id}</invoice_id><amount>10</amount></invoice-payment>"),
                )
                .await
                .status
            })
        })
        .collect();
    for t in tasks {
        assert_eq!(t.await.unwrap(), 201);
    }
    let inv = app.get(&format!("/api/invoices/{id}")).await;
    assert_eq!(inv.field("paid_amount").as_deref(), Some("320"));
    assert_eq!(inv.field("status").as_deref(), Some("PAID"));
    let comments = app
        .get(&format!("/api/invoice-comments?invoice_id={id}"))
        .await;
    let paid = comments
        .fields("comment")
        .iter()
        .filter(|c| *c == "Status changed to PAID")
        .count();
    assert_eq!(paid, 1, "exactly one transition to PAID");
    assert_eq!(
        comments
            .fields("actionkey")
            .iter()
            .filter(|k| *k == "PAYMENT")
            .count(),
        32
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_edits_of_a_draft_never_interleave_fields() {
    let app = Arc::new(App::spawn().await);
    let c = app
        .post("/api/clients", "<client><name>A</name></client>")
        .await
        .id();
    let id = app
        .post(
            "/api/invoices",
            &format!("<invoice><client_id>{c}</client_id></invoice>"),
        )
        .await
        .id();
    let tasks: Vec<_> = (0..24)
        .map(|i| {
            let app = app.clone();
            tokio::spawn(async move {
                app.put(
                    &format!("/api/invoices/{id}"),
                    &format!("<invoice><label>edit {i}</label><intro>edit {i}</intro><note>edit {i}</note></invoice>"),
                )
                .await
                .status
            })
        })
        .collect();
    for t in tasks {
        assert_eq!(t.await.unwrap(), 200);
    }
    let inv = app.get(&format!("/api/invoices/{id}")).await;
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
        App::spawn_configured(data, faktura_tests::test_component(), |o| {
            o.limits.instances_max = 2;
        })
        .await,
    );
    for _ in 0..5 {
        let tasks: Vec<_> = (0..64)
            .map(|_| {
                let app = app.clone();
                tokio::spawn(async move { app.get("/api/clients").await.status })
            })
            .collect();
        for t in tasks {
            assert_eq!(t.await.unwrap(), 200);
        }
    }
}
