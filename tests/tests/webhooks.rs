//! Webhooks through the real host: a receiver on 127.0.0.1 (the host runs with
//! `webhook_allow_private`) verifies every delivery with the Standard Webhooks reference
//! library; events of every resource in both formats, each the record exactly as a GET
//! answers it; retries moved along with the test clock; 410 disabling; redelivery;
//! rotation; the refusals of the private network; and, in the crash test, no event lost
//! or invented across SIGKILLs.

use std::time::Duration;

use faktura_tests::{App, WebhookReceiver, free_port, start_host_with, try_send};
use serde_json::Value;

use crate::recurring::{app_with_test_clock, set_clock};
use crate::support::client;

/// An app whose webhooks may reach the receiver on 127.0.0.1.
async fn app() -> App {
    app_with(|_| {}).await
}

/// `app`, its other options adjusted by `configure`.
async fn app_with(configure: impl FnOnce(&mut faktura_host::Options)) -> App {
    App::spawn_configured(
        std::sync::Arc::new(tempfile::tempdir().unwrap()),
        faktura_tests::test_component(),
        |o| {
            o.webhook_allow_private = true;
            configure(o);
        },
    )
    .await
}

/// Creates a webhook taking `events` to `url` in `format`, trusted by `receiver`; its id.
async fn webhook(
    app: &App,
    receiver: &WebhookReceiver,
    url: &str,
    events: &str,
    format: &str,
) -> u64 {
    let r = app
        .post(
            "/api/webhooks",
            &format!(
                "<webhook><url>{url}</url><events>{events}</events><format>{format}</format>\
                 <description>test</description></webhook>"
            ),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let secret = r.field("secret").unwrap();
    assert!(secret.starts_with("whsec_"), "{secret}");
    receiver.trust(&secret);
    r.id()
}

/// The answer to GET `path` once `settled` holds of it (at most 10 s): an attempt is
/// settled in the store a moment after the receiver has its request.
async fn once_settled(
    app: &App,
    path: &str,
    settled: impl Fn(&faktura_tests::Reply) -> bool,
) -> faktura_tests::Reply {
    for _ in 0..200 {
        let r = app.get(path).await;
        assert_eq!(r.status, 200, "{}", r.body);
        if settled(&r) {
            return r;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let r = app.get(path).await;
    panic!("GET {path} did not settle within 10 s: {}", r.body)
}

fn event(d: &Value) -> &str {
    d["headers"]["x-faktura-event"].as_str().unwrap_or_default()
}

fn events_of<'a>(got: &'a [Value], format: &str) -> Vec<&'a str> {
    got.iter()
        .filter(|d| {
            d["headers"]["content-type"]
                .as_str()
                .is_some_and(|t| t.contains(format))
        })
        .map(event)
        .collect()
}

/// Every event of `want` was received in both formats, each verified by the library.
async fn received_in_both_formats(receiver: &WebhookReceiver, want: &[&str]) -> Vec<Value> {
    let got = receiver
        .wait_until(60, &format!("{want:?} in XML and JSON"), |got| {
            ["xml", "json"].iter().all(|f| {
                let seen = events_of(got, f);
                want.iter().all(|w| seen.contains(w))
            })
        })
        .await;
    for d in &got {
        assert!(
            !d["verified"].as_array().unwrap().is_empty(),
            "every delivery verifies: {d}"
        );
        for h in [
            "webhook-id",
            "webhook-timestamp",
            "webhook-signature",
            "x-faktura-webhook-id",
        ] {
            assert!(d["headers"][h].is_string(), "{h} in {d}");
        }
        assert_eq!(d["headers"]["user-agent"], "Faktura-Webhook");
    }
    got
}

/// The body of the first delivery of `name` in `format`.
fn body_of<'a>(got: &'a [Value], name: &str, format: &str) -> &'a str {
    got.iter()
        .find(|d| {
            event(d) == name
                && d["headers"]["content-type"]
                    .as_str()
                    .is_some_and(|t| t.contains(format))
        })
        .and_then(|d| d["body"].as_str())
        .unwrap_or_else(|| panic!("no {name} in {format}"))
}

#[tokio::test]
async fn every_resource_tells_its_changes_verified_in_both_formats() {
    let app = app().await;
    let receiver = WebhookReceiver::start().await;
    let url = receiver.url("/ok");
    webhook(&app, &receiver, &url, "*", "XML").await;
    webhook(&app, &receiver, &url, "*", "JSON").await;
    app.put(
        "/api/settings",
        "<settings><default_email_sender>billing@faktura.example</default_email_sender></settings>",
    )
    .await;
    let c = client(&app, "<name>Hook AG</name>").await;
    app.put(
        &format!("/api/clients/{c}"),
        "<client><city>Berlin</city><email>a@example.com</email></client>",
    )
    .await;
    let contact = app
        .create(
            "/api/contacts",
            &format!("<contact><client_id>{c}</client_id><name>Anna</name></contact>"),
        )
        .await
        .id();
    app.create(
        "/api/suppliers",
        "<supplier><name>Lieferant</name></supplier>",
    )
    .await;
    app.create(
        "/api/articles",
        "<article><title>Stunde</title><sales_price>90</sales_price></article>",
    )
    .await;
    let invoice = app
        .create(
            "/api/invoices",
            &format!(
                "<invoice><client_id>{c}</client_id><net_gross>GROSS</net_gross>\
                 <invoice-items><invoice-item><title>A</title><quantity>2</quantity>\
                 <unit_price>50</unit_price><tax_rate>19</tax_rate></invoice-item>\
                 </invoice-items></invoice>"
            ),
        )
        .await
        .id();
    app.put(&format!("/api/invoices/{invoice}/complete"), "")
        .await;
    app.create(
        "/api/invoice-payments",
        &format!("<invoice-payment><invoice_id>{invoice}</invoice_id><amount>10</amount></invoice-payment>"),
    )
    .await;
    let r = app
        .post(
            &format!("/api/invoices/{invoice}/email"),
            "<email><recipients><to>kunde@example.com</to></recipients></email>",
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let draft = app
        .create(
            "/api/invoices",
            &format!("<invoice><client_id>{c}</client_id></invoice>"),
        )
        .await
        .id();
    app.delete(&format!("/api/invoices/{draft}")).await;
    app.create(
        "/api/credit-notes",
        &format!("<credit-note><client_id>{c}</client_id></credit-note>"),
    )
    .await;
    app.create(
        "/api/offers",
        &format!("<offer><client_id>{c}</client_id></offer>"),
    )
    .await;
    app.create(
        "/api/incomings",
        "<incoming><supplier_id>1</supplier_id><number>ER-1</number><date>2026-01-05</date>\
         </incoming>",
    )
    .await;
    app.delete(&format!("/api/contacts/{contact}")).await;
    let got = received_in_both_formats(
        &receiver,
        &[
            "client.create",
            "client.update",
            "contact.create",
            "contact.delete",
            "supplier.create",
            "article.create",
            "invoice.create",
            "invoice_item.create",
            "invoice.status",
            "invoice_payment.create",
            "invoice.update",
            "invoice.send",
            "invoice.delete",
            "invoice_comment.create",
            "credit_note.create",
            "offer.create",
            "incoming.create",
        ],
    )
    .await;
    // Each record exactly as a GET answers it (as it was then: the client before its
    // later changes is not asked for; the supplier, the article and the item are unchanged
    // since, and the item's totals follow its gross-priced invoice).
    let items = app
        .get(&format!("/api/invoice-items?invoice_id={invoice}"))
        .await;
    let item = &items.fields("id")[0];
    for (name, path) in [
        ("supplier.create", "/api/suppliers/1".to_owned()),
        ("article.create", "/api/articles/1".to_owned()),
        ("invoice_item.create", format!("/api/invoice-items/{item}")),
    ] {
        for (format, accept) in [("xml", "xml"), ("json", "json")] {
            let get = app.get(&format!("{path}?format={accept}")).await;
            assert_eq!(body_of(&got, name, format), get.body, "{name} in {format}");
        }
    }
    // A delete carries the record as it was.
    assert!(body_of(&got, "contact.delete", "xml").contains("<name>Anna</name>"));
    assert!(body_of(&got, "invoice.delete", "json").contains("\"DRAFT\""));
    // The log lists them, by webhook and event: an attempt is settled once its answer is
    // in, a moment after the receiver has the event.
    let log = once_settled(
        &app,
        "/api/webhook-deliveries?event=invoice.send&status=SUCCEEDED",
        |r| r.fields("event").len() == 2,
    )
    .await;
    assert_eq!(log.fields("event"), ["invoice.send", "invoice.send"]);
}

#[tokio::test]
async fn retries_move_along_with_the_test_clock_with_one_webhook_id() {
    let app = app_with_test_clock(|o| o.webhook_allow_private = true).await;
    let receiver = WebhookReceiver::start().await;
    let hook = webhook(
        &app,
        &receiver,
        &receiver.url("/flaky/2"),
        "client.create",
        "JSON",
    )
    .await;
    client(&app, "<name>Flaky GmbH</name>").await;
    receiver
        .wait_until(30, "the first attempt", |got| got.len() == 1)
        .await;
    let now = app.get("/api/test-clock").await.field("now").unwrap();
    let at = |secs: i64| {
        let t: i64 = chrono_free_seconds(&now) + secs;
        format_utc(t)
    };
    set_clock(&app, &at(6)).await;
    receiver
        .wait_until(30, "the second attempt, 5 s later", |got| got.len() == 2)
        .await;
    set_clock(&app, &at(6 + 301)).await;
    let got = receiver
        .wait_until(30, "the third attempt, 5 min later", |got| got.len() == 3)
        .await;
    let answered: Vec<i64> = got
        .iter()
        .map(|d| d["answered"].as_i64().unwrap())
        .collect();
    assert_eq!(answered, [500, 500, 200]);
    let ids: Vec<&str> = got
        .iter()
        .map(|d| d["headers"]["webhook-id"].as_str().unwrap())
        .collect();
    assert!(ids.iter().all(|id| *id == ids[0]), "{ids:?}");
    // The signature's time is the real one, whatever the account's clock says.
    let stamp: f64 = got[2]["headers"]["webhook-timestamp"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((stamp - got[2]["at"].as_f64().unwrap()).abs() < 60.0);
    let log = once_settled(
        &app,
        &format!("/api/webhook-deliveries?webhook_id={hook}"),
        |r| r.field("attempts").as_deref() == Some("3"),
    )
    .await;
    log.assert_fields(&[("status", "SUCCEEDED"), ("attempts", "3")]);
    assert_eq!(log.fields("http_status"), ["500", "500", "200"]);
}

/// Seconds since the epoch of an ISO 8601 moment with its offset (`2026-11-18T10:00:00+01:00`).
fn chrono_free_seconds(iso: &str) -> i64 {
    let (date, rest) = iso.split_once('T').unwrap();
    let (time, offset) = rest.split_at(8);
    let d: Vec<i64> = date.split('-').map(|x| x.parse().unwrap()).collect();
    let t: Vec<i64> = time.split(':').map(|x| x.parse().unwrap()).collect();
    let (y, m) = if d[1] <= 2 {
        (d[0] - 1, d[1] + 9)
    } else {
        (d[0], d[1] - 3)
    };
    let days = 365 * y + y / 4 - y / 100 + y / 400 + (153 * m + 2) / 5 + d[2] - 719_469;
    let sign = if offset.starts_with('-') { -1 } else { 1 };
    let off: Vec<i64> = offset[1..].split(':').map(|x| x.parse().unwrap()).collect();
    days * 86_400 + t[0] * 3600 + t[1] * 60 + t[2] - sign * (off[0] * 3600 + off[1] * 60)
}

/// A moment as ISO 8601 in UTC.
fn format_utc(t: i64) -> String {
    let days = t.div_euclid(86_400);
    let secs = t.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}+00:00",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// What time makes tells its events too: a recurring invoice's run makes an invoice
/// (`invoice.create`, and `invoice.update` naming the series), an invoice past its due date turns OVERDUE
/// (`invoice.status` on the pass that notices it), and the automatic dunning run makes and
/// completes its reminder (`reminder.create`, `reminder.status`); series and reminders
/// made by requests tell theirs (`recurring.create`, `recurring_item.create`,
/// `reminder.create`).
#[tokio::test]
async fn recurring_and_dunning_runs_and_time_tell_their_events() {
    let app = app_with_test_clock(|o| o.webhook_allow_private = true).await;
    set_clock(&app, "2027-01-01T08:00:00+01:00").await;
    let receiver = WebhookReceiver::start().await;
    webhook(&app, &receiver, &receiver.url("/ok"), "*", "JSON").await;
    let r = app
        .put(
            "/api/settings",
            "<settings><dunning_run>1</dunning_run><dunning_action>COMPLETE</dunning_action>\
             </settings>",
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let c = client(&app, "<name>Zeit GmbH</name>").await;
    let late = crate::dunning::invoice(&app, c, "100", 0).await;
    let manual = crate::dunning::invoice(&app, c, "50", 0).await;
    let r = app
        .post(
            "/api/reminders",
            &format!("<reminder><invoice_id>{manual}</invoice_id></reminder>"),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let r = app
        .post(
            "/api/recurrings",
            &format!(
                "<recurring><client_id>{c}</client_id><name>Miete</name><cycle>MONTHLY</cycle>\
                 <start_date>2027-01-10</start_date><action>CREATE</action><recurring-items>\
                 <recurring-item><title>Miete</title><unit_price>100</unit_price>\
                 </recurring-item></recurring-items></recurring>"
            ),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let series = r.id();
    receiver
        .wait_until(30, "the events of the requests", |got| {
            let seen: Vec<&str> = got.iter().map(event).collect();
            [
                "reminder.create",
                "recurring.create",
                "recurring_item.create",
            ]
            .iter()
            .all(|e| seen.contains(e))
        })
        .await;
    let before = receiver.deliveries().len();
    set_clock(&app, "2027-01-20T08:00:00+01:00").await;
    let got = receiver
        .wait_until(60, "the events of the runs", |got| {
            let new: Vec<&str> = got[before..].iter().map(event).collect();
            [
                "invoice.create",
                "invoice.status",
                "reminder.create",
                "reminder.status",
            ]
            .iter()
            .all(|e| new.contains(e))
        })
        .await;
    let new = &got[before..];
    assert!(
        new.iter()
            .all(|d| !d["verified"].as_array().unwrap().is_empty())
    );
    let bodies = |name: &str| -> Vec<Value> {
        new.iter()
            .filter(|d| event(d) == name)
            .map(|d| serde_json::from_str(d["body"].as_str().unwrap()).unwrap())
            .collect()
    };
    // The run makes the invoice, then names its series on it, in one transaction.
    assert!(
        bodies("invoice.update")
            .iter()
            .any(|b| b["invoice"]["recurring_id"].as_str() == Some(&series.to_string())),
        "the run's invoice names its series: {:?}",
        bodies("invoice.update")
    );
    assert!(
        bodies("invoice.status").iter().any(|b| {
            b["invoice"]["id"].as_str() == Some(&late.to_string())
                && b["invoice"]["status"] == "OVERDUE"
        }),
        "the invoice that fell due: {:?}",
        bodies("invoice.status")
    );
    assert!(
        bodies("reminder.create")
            .iter()
            .any(|b| b["reminder"]["invoice_id"].as_str() == Some(&late.to_string())),
        "the automatic run's reminder: {:?}",
        bodies("reminder.create")
    );
}

/// The host sends a write's events itself, at once, not on its next upkeep (an hour away
/// here): the answer asks for them in a header that never leaves the host.
#[tokio::test]
async fn a_writes_events_go_out_at_once_and_the_hosts_header_stays_inside() {
    let app = app_with(|o| o.limits.upkeep_every = Duration::from_secs(3600)).await;
    let receiver = WebhookReceiver::start().await;
    webhook(
        &app,
        &receiver,
        &receiver.url("/ok"),
        "client.create",
        "JSON",
    )
    .await;
    for name in ["Sofort AG", "Gleich GmbH"] {
        let r = app
            .post(
                "/api/clients",
                &format!("<client><name>{name}</name></client>"),
            )
            .await;
        assert_eq!(r.status, 201, "{}", r.body);
        assert_eq!(r.header("x-faktura-deliver"), None, "{:?}", r.headers);
    }
    let got = receiver
        .wait_until(10, "both client.create events", |got| got.len() == 2)
        .await;
    assert!(got.iter().all(|d| event(d) == "client.create"), "{got:?}");
}

#[tokio::test]
async fn gone_disables_the_webhook_and_a_redirect_is_a_failure() {
    let app = app().await;
    let receiver = WebhookReceiver::start().await;
    let gone = webhook(
        &app,
        &receiver,
        &receiver.url("/gone"),
        "client.create",
        "XML",
    )
    .await;
    let moved = webhook(
        &app,
        &receiver,
        &receiver.url("/redirect"),
        "client.create",
        "XML",
    )
    .await;
    client(&app, "<name>Weg AG</name>").await;
    receiver
        .wait_until(30, "two attempts", |got| got.len() == 2)
        .await;
    let hook = once_settled(&app, &format!("/api/webhooks/{gone}"), |r| {
        r.field("active").as_deref() == Some("0")
    })
    .await;
    assert!(
        hook.field("disabled_reason").unwrap().contains("410"),
        "{}",
        hook.body
    );
    // Not followed: one request to the redirecting URL, none to where it points.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let got = receiver.deliveries();
    assert!(got.iter().all(|d| d["path"] != "/ok"), "{got:?}");
    let log = once_settled(
        &app,
        &format!("/api/webhook-deliveries?webhook_id={moved}"),
        |r| r.field("http_status").is_some(),
    )
    .await;
    log.assert_fields(&[("status", "PENDING"), ("http_status", "302")]);
    assert!(
        log.field("error").unwrap().contains("redirect"),
        "{}",
        log.body
    );
    app.get(&format!("/api/webhooks/{moved}"))
        .await
        .assert_fields(&[("active", "1")]);
    // Disabled, the webhook takes no events; its test is refused until it is active.
    client(&app, "<name>Später AG</name>").await;
    let r = app.put(&format!("/api/webhooks/{gone}/test"), "").await;
    r.assert_error(400, "not active");
}

#[tokio::test]
async fn redelivery_and_the_test_event_keep_their_webhook_id_and_sign() {
    let app = app().await;
    let receiver = WebhookReceiver::start().await;
    let hook = webhook(
        &app,
        &receiver,
        &receiver.url("/ok"),
        "client.create",
        "JSON",
    )
    .await;
    let r = app.put(&format!("/api/webhooks/{hook}/test"), "").await;
    assert_eq!(r.status, 200, "{}", r.body);
    r.assert_fields(&[("event", "webhook.test"), ("status", "SUCCEEDED")]);
    let test = r.id();
    let r = app
        .put(&format!("/api/webhook-deliveries/{test}/redeliver"), "")
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    r.assert_fields(&[("status", "SUCCEEDED"), ("attempts", "2")]);
    let got = receiver.wait_until(10, "two", |got| got.len() == 2).await;
    assert_eq!(
        got[0]["headers"]["webhook-id"],
        got[1]["headers"]["webhook-id"]
    );
    assert_eq!(event(&got[0]), "webhook.test");
    assert!(got[0]["body"].as_str().unwrap().contains("\"webhook\""));
}

#[tokio::test]
async fn after_a_rotation_both_secrets_verify_for_the_overlap() {
    let app = app().await;
    let receiver = WebhookReceiver::start().await;
    let hook = webhook(
        &app,
        &receiver,
        &receiver.url("/ok"),
        "client.create",
        "XML",
    )
    .await;
    let r = app
        .put(&format!("/api/webhooks/{hook}/rotate-secret"), "")
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let new = receiver.trust(&r.field("secret").unwrap());
    assert_eq!(new, 1);
    // The secret is not shown again.
    assert!(
        app.get(&format!("/api/webhooks/{hook}"))
            .await
            .field("secret")
            .is_none()
    );
    client(&app, "<name>Rotiert AG</name>").await;
    let got = receiver.wait_until(30, "one", |got| got.len() == 1).await;
    assert_eq!(got[0]["verified"], serde_json::json!([0, 1]), "{}", got[0]);
}

#[tokio::test]
async fn the_private_network_is_refused_without_the_switch() {
    let app = App::spawn().await;
    for url in [
        "http://127.0.0.1/in",
        "http://[::1]/in",
        "http://10.0.0.1/in",
        "http://169.254.169.254/latest/meta-data",
        "http://localhost:8080/in",
    ] {
        let r = app
            .post(
                "/api/webhooks",
                &format!("<webhook><url>{url}</url><events>*</events></webhook>"),
            )
            .await;
        r.assert_error(400, "url names");
    }
    for (body, problem) in [
        (
            "<url>ftp://example.com/</url><events>*</events>",
            "http or https",
        ),
        (
            "<url>https://u:p@example.com/</url><events>*</events>",
            "credentials",
        ),
        (
            "<url>https://example.com/</url><events>invoice.melt</events>",
            "invoice.melt",
        ),
        (
            "<url>https://example.com/</url><events>*</events><format>CSV</format>",
            "format",
        ),
    ] {
        let r = app
            .post("/api/webhooks", &format!("<webhook>{body}</webhook>"))
            .await;
        r.assert_error(400, problem);
    }
    // A name that resolves to a private address is refused when the host connects: the
    // decimal form of 127.0.0.1 passes the check of the URL as written.
    let receiver = WebhookReceiver::start().await;
    let url = format!("http://2130706433:{}/ok", receiver.port);
    let r = app
        .post(
            "/api/webhooks",
            &format!("<webhook><url>{url}</url><events>client.create</events></webhook>"),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let hook = r.id();
    let t = app.put(&format!("/api/webhooks/{hook}/test"), "").await;
    assert_eq!(t.status, 200, "{}", t.body);
    t.assert_fields(&[("status", "PENDING")]);
    assert!(
        t.field("error").unwrap().contains("private network"),
        "{}",
        t.body
    );
    assert!(receiver.deliveries().is_empty());
    for _ in 0..20 {
        app.post(
            "/api/webhooks",
            "<webhook><url>https://example.com/</url><events>*</events><active>0</active></webhook>",
        )
        .await;
    }
    let r = app
        .post(
            "/api/webhooks",
            "<webhook><url>https://example.com/</url><events>*</events></webhook>",
        )
        .await;
    r.assert_error(400, "at most 20");
}

/// The host killed with SIGKILL while clients are made, each taken by a webhook: after
/// the restarts, every client acknowledged was delivered at least once, and no delivery
/// names a client that is not in the store.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_event_is_lost_or_invented_across_sigkill() {
    const KEY: &str = "webhook-crash-key-0123456789";
    let receiver = WebhookReceiver::start().await;
    let data = tempfile::tempdir().unwrap();
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let start = || {
        start_host_with(
            data.path(),
            port,
            KEY,
            &["--test-clock", "--webhook-allow-private"],
            |_| {},
        )
    };
    let mut host = start();
    host.wait_ready(&base, KEY).await;
    let r = try_send(
        &base,
        "POST",
        "/api/webhooks",
        Some(&format!(
            "<webhook><url>{}</url><events>client.create</events><format>JSON</format></webhook>",
            receiver.url("/ok")
        )),
        KEY,
    )
    .await
    .unwrap();
    assert_eq!(r.status, 201, "{}", r.body);
    receiver.trust(&r.field("secret").unwrap());
    let acked = std::sync::Arc::new(std::sync::Mutex::new(Vec::<u64>::new()));
    let mut seed = 0x2545_f491_u64;
    for _round in 0..5 {
        let workers: Vec<_> = (0..4)
            .map(|w| {
                let (base, acked) = (base.clone(), acked.clone());
                tokio::spawn(async move {
                    for i in 0.. {
                        let body = format!("<client><name>W{w} {i}</name></client>");
                        match try_send(&base, "POST", "/api/clients", Some(&body), KEY).await {
                            Some(r) if r.status == 201 => acked.lock().unwrap().push(r.id()),
                            _ => return,
                        }
                    }
                })
            })
            .collect();
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        tokio::time::sleep(Duration::from_millis(100 + seed % 400)).await;
        host.kill();
        for w in workers {
            let _ = w.await;
        }
        host = start();
        host.wait_ready(&base, KEY).await;
    }
    // Leases of the killed hosts run out on the account's clock: two minutes on, every
    // delivery is due again, and the test clock's pass sends it.
    let clock = try_send(&base, "GET", "/api/test-clock", None, KEY)
        .await
        .unwrap();
    let now = chrono_free_seconds(&clock.field("now").unwrap());
    let r = try_send(
        &base,
        "PUT",
        "/api/test-clock",
        Some(&format!(
            "<test-clock><now>{}</now></test-clock>",
            format_utc(now + 120)
        )),
        KEY,
    )
    .await
    .unwrap();
    assert_eq!(r.status, 200, "{}", r.body);
    let acked = acked.lock().unwrap().clone();
    assert!(!acked.is_empty(), "clients were acknowledged");
    let delivered = |got: &[Value]| -> std::collections::BTreeSet<u64> {
        got.iter()
            .filter_map(|d| {
                let v: Value = serde_json::from_str(d["body"].as_str()?).ok()?;
                v["client"]["id"].as_str()?.parse().ok()
            })
            .collect()
    };
    let missing = |got: &[Value]| -> Vec<u64> {
        let seen = delivered(got);
        acked
            .iter()
            .filter(|id| !seen.contains(id))
            .copied()
            .collect()
    };
    for _ in 0..1200 {
        if missing(&receiver.deliveries()).is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let left = missing(&receiver.deliveries());
    if !left.is_empty() {
        let pending = try_send(
            &base,
            "GET",
            "/api/webhook-deliveries?status=PENDING&per_page=5",
            None,
            KEY,
        )
        .await
        .map(|r| r.body);
        panic!(
            "{} acknowledged clients were not delivered within 120 s ({:?}…); pending: {pending:?}",
            left.len(),
            &left[..left.len().min(10)]
        );
    }
    let got = receiver
        .wait_until(1, "every acknowledged client", |got| {
            let seen = delivered(got);
            acked.iter().all(|id| seen.contains(id))
        })
        .await;
    assert!(
        got.iter()
            .all(|d| !d["verified"].as_array().unwrap().is_empty())
    );
    // Every client stored, page by page.
    let mut stored = std::collections::BTreeSet::<u64>::new();
    for page in 1.. {
        let list = try_send(
            &base,
            "GET",
            &format!("/api/clients?per_page=1000&page={page}"),
            None,
            KEY,
        )
        .await
        .unwrap();
        assert_eq!(list.status, 200, "{}", list.body);
        let ids = list.fields("id");
        if ids.is_empty() {
            break;
        }
        stored.extend(ids.iter().map(|i| i.parse::<u64>().unwrap()));
    }
    assert!(
        acked.iter().all(|id| stored.contains(id)),
        "every acknowledged client is stored"
    );
    eprintln!(
        "{} clients acknowledged across 5 SIGKILLs, {} deliveries received, {} stored",
        acked.len(),
        got.len(),
        stored.len()
    );
    for id in delivered(&got) {
        assert!(
            stored.contains(&id),
            "client {id} was delivered but is not stored"
        );
    }
    host.kill();
}
