//! Webhooks through the whole request path with in-memory capabilities: what each change
//! records in its own transaction, what goes out (headers, signature, the record exactly as
//! a GET answers it), retries on the account's clock, and what the API refuses.

use base64::Engine as _;
use hmac::{Hmac, KeyInit, Mac};

use super::golden::World;
use super::{Method, handle};
use crate::caps::{Outgoing, Read, Store as _, StoreError, forward_read};
use crate::domain::events;

/// A world with a client, and the answer of creating a webhook with `body`.
fn world() -> World {
    let w = World::new();
    w.ok(
        Method::Post,
        "/api/clients",
        "<client><name>Kunde</name><email>k@example.com</email></client>",
    );
    w
}

/// Creates a webhook; its id and secret.
fn webhook(w: &World, events: &str, format: &str) -> (u64, String) {
    let (status, body) = w.call(
        Method::Post,
        "/api/webhooks",
        &format!(
            "<webhook><url>https://hooks.example.com/in</url><events>{events}</events>\
             <format>{format}</format></webhook>"
        ),
        "application/json",
    );
    assert_eq!(status, 201, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    let id = v["webhook"]["id"].as_str().unwrap().parse().unwrap();
    let secret = v["webhook"]["secret"].as_str().unwrap().to_owned();
    assert!(secret.starts_with("whsec_"), "{secret}");
    (id, secret)
}

/// A request answered, then what it leaves to do (the deliveries of its events).
fn send(w: &World, method: Method, path: &str, body: &str) -> (u16, String) {
    let req = w.request_as(method, path, body, "application/xml");
    let caps = w.caps();
    let answer = handle(&caps, &req);
    let status = answer.status;
    let text = String::from_utf8(answer.body.clone()).unwrap();
    if let Some(account) = super::webhooks::written(&req, &answer) {
        super::webhooks::after(&caps, account);
    }
    (status, text)
}

fn sent(w: &World) -> Vec<Outgoing> {
    w.receiver.sent.borrow_mut().drain(..).collect()
}

fn header<'a>(r: &'a Outgoing, name: &str) -> &'a str {
    r.headers
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("no header {name} in {:?}", r.headers))
}

/// Checks a delivery's signature as a receiver does: the HMAC of `id.timestamp.body`
/// under the secret's key is among the signatures of its header.
fn verify(r: &Outgoing, secret: &str) -> bool {
    let b64 = base64::engine::general_purpose::STANDARD;
    let key = b64.decode(secret.strip_prefix("whsec_").unwrap()).unwrap();
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(&key).unwrap();
    mac.update(
        format!(
            "{}.{}.",
            header(r, "webhook-id"),
            header(r, "webhook-timestamp")
        )
        .as_bytes(),
    );
    mac.update(&r.body);
    let want = format!("v1,{}", b64.encode(mac.finalize().into_bytes()));
    header(r, "webhook-signature").split(' ').any(|s| s == want)
}

fn deliveries(w: &World) -> serde_json::Value {
    let (status, body) = w.call(
        Method::Get,
        "/api/webhook-deliveries",
        "",
        "application/json",
    );
    assert_eq!(status, 200, "{body}");
    serde_json::from_str(&body).unwrap()
}

#[test]
fn a_change_sends_its_record_exactly_as_a_get_answers_it_signed() {
    let w = world();
    let (hook, secret) = webhook(&w, "client.update,invoice.create,invoice.status", "JSON");
    // The secret is shown once.
    let (_, shown) = w.call(
        Method::Get,
        &format!("/api/webhooks/{hook}"),
        "",
        "application/xml",
    );
    assert!(
        !shown.contains("whsec_") && !shown.contains("<secret"),
        "{shown}"
    );
    let (status, _) = send(
        &w,
        Method::Put,
        "/api/clients/1",
        "<client><city>Berlin</city></client>",
    );
    assert_eq!(status, 200);
    let out = sent(&w);
    assert_eq!(out.len(), 1, "one event taken by the webhook");
    let r = &out[0];
    assert_eq!(r.url, "https://hooks.example.com/in");
    assert_eq!(header(r, "x-faktura-event"), "client.update");
    assert_eq!(header(r, "x-faktura-webhook-id"), hook.to_string());
    assert_eq!(header(r, "user-agent"), "Faktura-Webhook");
    assert!(header(r, "content-type").starts_with("application/json"));
    assert!(header(r, "webhook-id").starts_with("msg_"));
    assert!(verify(r, &secret));
    let (_, get) = w.call(Method::Get, "/api/clients/1", "", "application/json");
    assert_eq!(String::from_utf8(r.body.clone()).unwrap(), get);
    // A client made is not taken; an invoice made and completed is, twice.
    send(
        &w,
        Method::Post,
        "/api/clients",
        "<client><name>Zwei</name></client>",
    );
    send(
        &w,
        Method::Post,
        "/api/invoices",
        "<invoice><client_id>1</client_id><invoice-items><invoice-item><title>A</title>\
         <quantity>1</quantity><unit_price>10</unit_price></invoice-item></invoice-items></invoice>",
    );
    send(&w, Method::Put, "/api/invoices/1/complete", "");
    let out = sent(&w);
    let events: Vec<&str> = out.iter().map(|r| header(r, "x-faktura-event")).collect();
    assert_eq!(events, ["invoice.create", "invoice.status"]);
    let (_, get) = w.call(Method::Get, "/api/invoices/1", "", "application/json");
    assert_eq!(String::from_utf8(out[1].body.clone()).unwrap(), get);
    assert!(get.contains("\"OPEN\""), "{get}");
    let log = deliveries(&w);
    let list = &log["webhook-deliveries"]["webhook-delivery"];
    assert_eq!(list.as_array().unwrap().len(), 3, "{log}");
    assert_eq!(list[0]["status"], "SUCCEEDED");
    assert_eq!(list[0]["attempts"], "1");
    assert_eq!(list[0]["attempt_log"]["attempt"]["http_status"], "200");
}

#[test]
fn xml_webhooks_get_the_xml_answer_and_deletes_carry_the_record_as_it_was() {
    let w = world();
    let (_, secret) = webhook(&w, "client.delete,invoice_item.create", "XML");
    let (_, before) = w.call(Method::Get, "/api/clients/1", "", "application/xml");
    send(&w, Method::Delete, "/api/clients/1", "");
    let out = sent(&w);
    assert_eq!(out.len(), 1);
    assert_eq!(header(&out[0], "x-faktura-event"), "client.delete");
    assert!(header(&out[0], "content-type").starts_with("application/xml"));
    assert_eq!(String::from_utf8(out[0].body.clone()).unwrap(), before);
    assert!(verify(&out[0], &secret));
    // An item shows its document's values as a GET of it does.
    send(
        &w,
        Method::Post,
        "/api/clients",
        "<client><name>Neu</name></client>",
    );
    send(
        &w,
        Method::Post,
        "/api/invoices",
        "<invoice><client_id>2</client_id><invoice-items><invoice-item><title>A</title>\
         <quantity>2</quantity><unit_price>10</unit_price></invoice-item></invoice-items></invoice>",
    );
    let out = sent(&w);
    assert_eq!(out.len(), 1);
    let (_, item) = w.call(Method::Get, "/api/invoice-items/1", "", "application/xml");
    assert_eq!(String::from_utf8(out[0].body.clone()).unwrap(), item);
    assert!(item.contains("total_gross"), "{item}");
}

#[test]
fn a_refused_write_records_no_event() {
    let w = world();
    webhook(&w, "*", "XML");
    let (status, _) = send(
        &w,
        Method::Post,
        "/api/invoices",
        "<invoice><client_id>99</client_id></invoice>",
    );
    assert_eq!(status, 400);
    assert!(sent(&w).is_empty());
    let log = deliveries(&w);
    assert!(
        log["webhook-deliveries"].get("webhook-delivery").is_none(),
        "{log}"
    );
}

/// A store whose first commit of a write that records a delivery fails as a conflict does:
/// the write runs again, whole.
struct FailsOnce {
    inner: crate::caps::mem::MemStore,
    failed: std::cell::Cell<bool>,
}

struct Failing(Box<dyn crate::caps::Write>, bool);

forward_read!(Failing, |f| f.0);

impl crate::caps::Write for Failing {
    fn put(&mut self, key: &[u8], value: &[u8]) -> Result<(), crate::caps::StoreError> {
        self.1 |= key
            .windows(events::DELIVERIES.len())
            .any(|k| k == events::DELIVERIES.as_bytes());
        self.0.put(key, value)
    }
    fn delete(&mut self, key: &[u8]) -> Result<(), crate::caps::StoreError> {
        self.0.delete(key)
    }
    fn commit(self: Box<Self>) -> Result<(), crate::caps::StoreError> {
        if self.1 {
            return Err(crate::caps::StoreError::Conflict);
        }
        self.0.commit()
    }
    fn as_read(&self) -> &dyn crate::caps::Read {
        self
    }
}

impl crate::caps::Store for FailsOnce {
    fn begin_read(&self) -> Result<Box<dyn crate::caps::Read>, crate::caps::StoreError> {
        self.inner.begin_read()
    }
    fn begin_write(&self) -> Result<Box<dyn crate::caps::Write>, crate::caps::StoreError> {
        let txn = self.inner.begin_write()?;
        if self.failed.replace(true) {
            Ok(txn)
        } else {
            Ok(Box::new(Failing(txn, false)))
        }
    }
}

/// Architecture invariant: an event is recorded in the transaction of its change. A
/// write that runs again after a conflict records its event once; one that never commits
/// records none.
#[test]
fn an_event_is_recorded_in_the_transaction_of_its_change() {
    let w = world();
    webhook(&w, "client.create", "XML");
    let store = FailsOnce {
        inner: w.store.clone(),
        failed: std::cell::Cell::new(false),
    };
    let caps = crate::caps::Caps {
        store: &store,
        ..w.caps()
    };
    let req = w.request_as(
        Method::Post,
        "/api/clients",
        "<client><name>Einmal</name></client>",
        "application/xml",
    );
    assert_eq!(handle(&caps, &req).status, 201);
    assert!(store.failed.get(), "the first commit failed");
    let txn = w.store.begin_read().unwrap();
    let recorded = crate::store::scan_all(
        txn.as_ref(),
        &crate::store::keys::collection(1, events::DELIVERIES),
    )
    .unwrap();
    assert_eq!(recorded.len(), 1, "one event for one committed change");
}

#[test]
fn retries_follow_the_account_clock_and_keep_their_webhook_id() {
    let w = world();
    let (hook, _) = webhook(&w, "client.update", "XML");
    w.receiver.statuses.borrow_mut().extend([500, 500, 200]);
    send(
        &w,
        Method::Put,
        "/api/clients/1",
        "<client><city>A</city></client>",
    );
    let first = sent(&w);
    assert_eq!(first.len(), 1);
    // Not due before its wait is over.
    w.clock().0.set(w.clock().0.get() + 4);
    super::runs::run_due(&w.caps(), 1).unwrap();
    assert!(sent(&w).is_empty());
    w.clock().0.set(w.clock().0.get() + 1);
    super::runs::run_due(&w.caps(), 1).unwrap();
    let second = sent(&w);
    assert_eq!(second.len(), 1, "5 s after the first");
    w.clock().0.set(w.clock().0.get() + 299);
    super::runs::run_due(&w.caps(), 1).unwrap();
    assert!(sent(&w).is_empty());
    w.clock().0.set(w.clock().0.get() + 1);
    super::runs::run_due(&w.caps(), 1).unwrap();
    let third = sent(&w);
    assert_eq!(third.len(), 1, "5 min after the second");
    let ids: Vec<&str> = [&first[0], &second[0], &third[0]]
        .iter()
        .map(|r| header(r, "webhook-id"))
        .collect();
    assert!(ids.iter().all(|id| *id == ids[0]), "{ids:?}");
    let log = deliveries(&w);
    let d = &log["webhook-deliveries"]["webhook-delivery"];
    assert_eq!(
        (d["status"].as_str(), d["attempts"].as_str()),
        (Some("SUCCEEDED"), Some("3"))
    );
    assert_eq!(d["webhook_id"], hook.to_string());
    // Sent again on request, with the same id.
    let (status, body) = send(&w, Method::Put, "/api/webhook-deliveries/1/redeliver", "");
    assert_eq!(status, 200, "{body}");
    let again = sent(&w);
    assert_eq!(header(&again[0], "webhook-id"), ids[0]);
    assert!(
        body.contains("<attempts type=\"integer\">4</attempts>"),
        "{body}"
    );
}

#[test]
fn a_rotated_secret_signs_beside_the_new_one_for_a_day() {
    let w = world();
    let (hook, old) = webhook(&w, "client.update", "XML");
    let (status, body) = w.call(
        Method::Put,
        &format!("/api/webhooks/{hook}/rotate-secret"),
        "",
        "application/json",
    );
    assert_eq!(status, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    let new = v["webhook"]["secret"].as_str().unwrap().to_owned();
    assert_ne!(new, old);
    send(
        &w,
        Method::Put,
        "/api/clients/1",
        "<client><city>A</city></client>",
    );
    let r = &sent(&w)[0];
    assert!(verify(r, &new) && verify(r, &old));
    w.clock().0.set(w.clock().0.get() + 24 * 3600);
    send(
        &w,
        Method::Put,
        "/api/clients/1",
        "<client><city>B</city></client>",
    );
    let r = &sent(&w)[0];
    assert!(verify(r, &new) && !verify(r, &old));
}

#[test]
fn the_test_event_carries_the_webhook_and_410_disables_it() {
    let w = world();
    let (hook, secret) = webhook(&w, "*", "JSON");
    w.receiver.statuses.borrow_mut().push_back(410);
    let (status, body) = send(&w, Method::Put, &format!("/api/webhooks/{hook}/test"), "");
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("<status>FAILED</status>"), "{body}");
    let r = &sent(&w)[0];
    assert_eq!(header(r, "x-faktura-event"), "webhook.test");
    assert!(verify(r, &secret));
    assert!(
        String::from_utf8(r.body.clone())
            .unwrap()
            .contains("hooks.example.com")
    );
    let (_, shown) = w.call(
        Method::Get,
        &format!("/api/webhooks/{hook}"),
        "",
        "application/xml",
    );
    assert!(
        shown.contains("<active>0</active>") && shown.contains("410"),
        "{shown}"
    );
    // Disabled, it takes no further events.
    send(
        &w,
        Method::Put,
        "/api/clients/1",
        "<client><city>A</city></client>",
    );
    assert!(sent(&w).is_empty());
    // Set active again, it does.
    send(
        &w,
        Method::Put,
        &format!("/api/webhooks/{hook}"),
        "<webhook><active>1</active></webhook>",
    );
    send(
        &w,
        Method::Put,
        "/api/clients/1",
        "<client><city>B</city></client>",
    );
    assert_eq!(sent(&w).len(), 1);
}

#[test]
fn documents_that_fall_due_tell_their_status_once() {
    let w = world();
    webhook(&w, "invoice.status", "XML");
    let today = crate::domain::date::Date::from_unix(w.clock().0.get());
    let due = today.add_days(2);
    send(
        &w,
        Method::Post,
        "/api/invoices",
        &format!(
            "<invoice><client_id>1</client_id><date>{today}</date><due_date>{due}</due_date>\
             <invoice-items><invoice-item><title>A</title><quantity>1</quantity>\
             <unit_price>10</unit_price></invoice-item></invoice-items></invoice>"
        ),
    );
    send(&w, Method::Put, "/api/invoices/1/complete", "");
    assert_eq!(sent(&w).len(), 1, "completed: OPEN");
    super::runs::run_due(&w.caps(), 1).unwrap();
    // Due in two days: OVERDUE on the third.
    for day in 1..=5 {
        w.clock().0.set(w.clock().0.get() + 86_400);
        super::runs::run_due(&w.caps(), 1).unwrap();
        let out = sent(&w);
        if day == 3 {
            assert_eq!(out.len(), 1, "day {day}");
            let body = String::from_utf8(out[0].body.clone()).unwrap();
            assert!(body.contains("<status>OVERDUE</status>"), "{body}");
        } else {
            assert!(out.is_empty(), "day {day}");
        }
    }
}

#[test]
fn bad_webhooks_are_refused_naming_each_problem() {
    let w = world();
    for (url, problem) in [
        ("http://127.0.0.1:9/", "127.0.0.1"),
        ("http://[::1]/", "::1"),
        ("http://10.0.0.1/", "10.0.0.1"),
        ("http://169.254.169.254/", "169.254.169.254"),
        ("http://localhost/", "localhost"),
        ("ftp://example.com/", "http or https"),
        ("https://u:p@example.com/", "credentials"),
    ] {
        let (status, body) = w.call(
            Method::Post,
            "/api/webhooks",
            &format!("<webhook><url>{url}</url><events>*</events></webhook>"),
            "application/xml",
        );
        assert_eq!(status, 400, "{url}: {body}");
        assert!(body.contains(problem), "{url}: {body}");
    }
    let (status, body) = w.call(
        Method::Post,
        "/api/webhooks",
        "<webhook><url>https://example.com/</url><events>invoice.create,invoice.melt</events>\
         <format>YAML</format></webhook>",
        "application/xml",
    );
    assert_eq!(status, 400);
    assert!(
        body.contains("invoice.melt") && body.contains("format"),
        "{body}"
    );
    for _ in 0..crate::limits::WEBHOOKS_MAX {
        webhook(&w, "*", "XML");
    }
    let (status, body) = w.call(
        Method::Post,
        "/api/webhooks",
        "<webhook><url>https://example.com/</url><events>*</events></webhook>",
        "application/xml",
    );
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("at most 20"), "{body}");
}

#[test]
fn the_switch_lets_webhooks_into_the_private_network() {
    let mut w = world();
    w.env = crate::caps::mem::Vars(vec![(
        super::webhooks::ALLOW_PRIVATE_VAR.into(),
        "1".into(),
    )]);
    let (status, body) = w.call(
        Method::Post,
        "/api/webhooks",
        "<webhook><url>http://127.0.0.1:9/in</url><events>*</events></webhook>",
        "application/xml",
    );
    assert_eq!(status, 201, "{body}");
}
