//! Safe retries: a write sent again with the same `Idempotency-Key` is carried out once and
//! answered as the first time; e-mail recorded with a write reaches mail after the commit,
//! also when mail could not take it then.

use std::sync::Arc;
use std::time::Duration;

use faktura_tests::{ADMIN_KEY, App, PostgresServer, concurrently, test_component};

use crate::support::{INVOICES, client, complete, create_for};

const ITEMS: &str = "<invoice-items><invoice-item><title>Work</title><unit_price>100</unit_price>\
                     </invoice-item></invoice-items>";

async fn keyed(
    app: &App,
    method: &str,
    path: &str,
    body: Option<&str>,
    key: &str,
) -> faktura_tests::Reply {
    let mut headers = vec![("X-ServiceApiKey", ADMIN_KEY), ("Idempotency-Key", key)];
    if body.is_some() {
        headers.push(("Content-Type", "application/xml"));
    }
    app.send(method, path, body, &headers).await
}

async fn invoice_count(app: &App) -> String {
    let r = app.call("HEAD", "/api/invoices", None).await;
    r.header("x-total-count").unwrap_or_default().to_owned()
}

async fn a_keyed_write_is_made_once(app: &App) {
    let c = client(app, "<name>Kunde AG</name>").await;
    let body = format!("<invoice><client_id>{c}</client_id>{ITEMS}</invoice>");
    // The answer of the first try is lost to the client: it sends the request again.
    let first = keyed(app, "POST", "/api/invoices", Some(&body), "create-1").await;
    assert_eq!(first.status, 201, "{}", first.body);
    let again = keyed(app, "POST", "/api/invoices", Some(&body), "create-1").await;
    assert_eq!(again.status, 201, "{}", again.body);
    assert_eq!(again.body, first.body);
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    assert_eq!(first.header("idempotent-replayed"), None);
    assert_eq!(invoice_count(app).await, "1");
    // The same key with another request is refused and changes nothing.
    let other = format!("<invoice><client_id>{c}</client_id><label>x</label></invoice>");
    keyed(app, "POST", "/api/invoices", Some(&other), "create-1")
        .await
        .assert_error(
            422,
            "Idempotency-Key \"create-1\" was sent before with another request",
        );
    assert_eq!(invoice_count(app).await, "1");
    // A new key is a new request.
    let second = keyed(app, "POST", "/api/invoices", Some(&body), "create-2").await;
    assert_eq!(second.status, 201, "{}", second.body);
    assert_ne!(second.id(), first.id());
    assert_eq!(invoice_count(app).await, "2");

    // An action: completing twice with one key numbers the invoice once and answers
    // both times as the first; without the key the second completion is refused.
    let path = format!("/api/invoices/{}/complete", first.id());
    let done = keyed(app, "PUT", &path, None, "complete-1").await;
    assert_eq!(done.status, 200, "{}", done.body);
    let replayed = keyed(app, "PUT", &path, None, "complete-1").await;
    assert_eq!((replayed.status, &replayed.body), (200, &done.body));
    assert_eq!(app.call("PUT", &path, None).await.status / 100, 4);

    // A refusal is an answer too: kept and sent again, nothing made.
    let bad = "<invoice><client_id>999999</client_id></invoice>";
    let refused = keyed(app, "POST", "/api/invoices", Some(bad), "bad-1").await;
    assert_eq!(refused.status / 100, 4, "{}", refused.body);
    let refused_again = keyed(app, "POST", "/api/invoices", Some(bad), "bad-1").await;
    assert_eq!(
        (refused_again.status, &refused_again.body),
        (refused.status, &refused.body)
    );
    assert_eq!(invoice_count(app).await, "2");

    // Keys belong to an account: another account's same key is its own request.
    let other_key = app.new_account("Zweite GmbH").await;
    let theirs = app
        .send(
            "POST",
            "/api/clients",
            Some("<client><name>Z</name></client>"),
            &[
                ("X-ServiceApiKey", &other_key),
                ("Idempotency-Key", "create-1"),
                ("Content-Type", "application/xml"),
            ],
        )
        .await;
    assert_eq!(theirs.status, 201, "{}", theirs.body);

    // A key that is not a header value of visible characters is refused.
    keyed(app, "POST", "/api/invoices", Some(&body), &"k".repeat(256))
        .await
        .assert_error(
            400,
            "Idempotency-Key must be 1 to 255 visible ASCII characters",
        );
}

#[tokio::test]
async fn a_write_sent_again_with_its_key_is_made_once_and_answered_alike() {
    a_keyed_write_is_made_once(&App::spawn().await).await;
}

#[tokio::test]
async fn on_postgres_a_write_sent_again_with_its_key_is_made_once() {
    let pg = PostgresServer::start();
    let app = App::spawn_on_store(pg.url(), |_| {}).await;
    a_keyed_write_is_made_once(&app).await;
}

#[tokio::test]
async fn the_same_keyed_create_sent_at_once_makes_one_invoice() {
    let app = Arc::new(App::spawn().await);
    let c = client(&app, "<name>Kunde AG</name>").await;
    let body = format!("<invoice><client_id>{c}</client_id>{ITEMS}</invoice>");
    let replies = concurrently(8, |_| {
        let (app, body) = (app.clone(), body.clone());
        async move { keyed(&app, "POST", "/api/invoices", Some(&body), "burst").await }
    })
    .await;
    let ids: std::collections::BTreeSet<u64> = replies
        .iter()
        .map(|r| {
            assert_eq!(r.status, 201, "{}", r.body);
            r.id()
        })
        .collect();
    assert_eq!(ids.len(), 1, "every answer names the one invoice");
    assert_eq!(invoice_count(&app).await, "1");
}

/// E-mail goes to mail after the commit of its write. When mail cannot take it then (its
/// outbox cannot be written), the request is still answered: the message stays recorded
/// in the store and the host's upkeep hands it over once mail takes it again, and only
/// then is the MAIL note written.
#[tokio::test]
async fn mail_that_could_not_be_handed_over_is_handed_over_later() {
    let data = Arc::new(tempfile::tempdir().unwrap());
    let app = App::spawn_configured(data.clone(), test_component(), |o| {
        o.limits.upkeep_every = Duration::from_millis(300);
    })
    .await;
    app.put(
        "/api/settings",
        "<settings><default_email_sender>billing@faktura.example</default_email_sender></settings>",
    )
    .await;
    let c = client(&app, "<name>Müller AG</name>").await;
    let id = create_for(&app, &INVOICES, c, ITEMS).await.id();
    complete(&app, &INVOICES, id).await;
    // Mail's outbox is a file where its directory should be: mail cannot take anything.
    let outbox = data.path().join("outbox");
    let _ = std::fs::remove_dir_all(&outbox);
    std::fs::write(&outbox, b"not a directory").unwrap();
    let sent = app
        .post(
            &format!("/api/invoices/{id}/email"),
            "<email><recipients><to>client@example.org</to></recipients></email>",
        )
        .await;
    assert_eq!(sent.status, 200, "{}", sent.body);
    let comments = format!("/api/invoice-comments?invoice_id={id}");
    assert!(!app.get(&comments).await.body.contains("Sent by e-mail"));
    // Mail takes messages again: the upkeep hands the recorded one over.
    std::fs::remove_file(&outbox).unwrap();
    let mut handed = false;
    for _ in 0..100 {
        if app
            .get(&comments)
            .await
            .body
            .contains("Sent by e-mail to client@example.org")
        {
            handed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(handed, "the recorded message was handed over and noted");
    let queued = app.queued_messages();
    assert_eq!(queued.len(), 1, "handed over once");
    assert!(queued[0].contains("client@example.org"));
}
