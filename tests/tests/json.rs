//! JSON: a full invoice life as existing JSON clients send it, negotiation, bad JSON,
//! rate limit headers and the optional rate limit.

use std::sync::Arc;

use faktura_tests::{App, Reply, test_component};
use serde_json::{Value, json};

async fn call(app: &App, method: &str, path: &str, body: Option<&str>) -> (Reply, Value) {
    let mut headers = vec![
        ("X-ServiceApiKey", app.key.as_str()),
        ("Accept", "application/json"),
    ];
    if body.is_some() {
        headers.push(("Content-Type", "application/json"));
    }
    let r = app.send(method, path, body, &headers).await;
    let v = if r.body.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&r.body).unwrap_or_else(|e| panic!("{e}: {}", r.body))
    };
    (r, v)
}

#[tokio::test]
async fn a_full_invoice_life_in_json() {
    let app = App::spawn().await;
    let (r, client) = call(
        &app,
        "POST",
        "/api/clients",
        Some(r#"{"client": {"name": "Müller AG", "country_code": "DE", "discount_rate": 2}}"#),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(
        r.header("content-type"),
        Some("application/json; charset=utf-8")
    );
    let client_id = client["client"]["id"].as_str().unwrap().to_owned();
    assert_eq!(client["client"]["discount_rate"], json!("2"));
    // Scalars as strings, nested items as a single object inside the list key.
    let body = json!({"invoice": {
        "client_id": client_id,
        "date": "2026-11-02",
        "invoice-items": {"invoice-item": {"title": "Beratung", "quantity": "2", "unit_price": "150", "tax_name": "MwSt", "tax_rate": "19"}}
    }});
    let (r, inv) = call(&app, "POST", "/api/invoices", Some(&body.to_string())).await;
    assert_eq!(r.status, 201, "{}", r.body);
    let id = inv["invoice"]["id"].as_str().unwrap().to_owned();
    assert_eq!(inv["invoice"]["total_gross"], json!("357"));
    assert_eq!(
        inv["invoice"]["taxes"]["tax"]["amount"],
        json!("57"),
        "one tax: a single object"
    );
    // The other item form: an array of wrapped items, numbers as numbers.
    let body = json!({"invoice": {"client_id": client_id.parse::<u64>().unwrap(),
        "invoice-items": [{"invoice-item": {"title": "A", "unit_price": 10}}, {"invoice-item": {"title": "B", "unit_price": 5.5}}]}});
    let (r, other) = call(&app, "POST", "/api/invoices", Some(&body.to_string())).await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(other["invoice"]["total_net"], json!("15.5"));
    // Actions with a null body.
    let (r, v) = call(
        &app,
        "PUT",
        &format!("/api/invoices/{id}/complete"),
        Some("null"),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(v, json!({}));
    let (r, _) = call(&app, "POST", "/api/invoice-payments", Some(&json!({"invoice-payment": {"invoice_id": id, "amount": "357", "type": "BANK_TRANSFER", "mark_invoice_as_paid": true}}).to_string())).await;
    assert_eq!(r.status, 201, "{}", r.body);
    let (r, _) = call(
        &app,
        "POST",
        "/api/invoice-comments",
        Some(
            &json!({"invoice-comment": {"invoice_id": id, "comment": "paid on time"}}).to_string(),
        ),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let (_, got) = call(&app, "GET", &format!("/api/invoices/{id}"), None).await;
    assert_eq!(got["invoice"]["status"], json!("PAID"));
    let (_, pdf) = call(&app, "GET", &format!("/api/invoices/{id}/pdf"), None).await;
    assert_eq!(pdf["pdf"]["mimetype"], json!("application/pdf"));
    assert!(
        pdf["pdf"]["base64file"]
            .as_str()
            .unwrap()
            .starts_with("JVBERi0")
    ); // %PDF-
    let (r, list) = call(&app, "GET", "/api/invoices?status=PAID", None).await;
    assert_eq!(r.header("x-total-count"), Some("1"));
    assert_eq!(list["invoices"]["@total"], json!("1"));
    assert_eq!(
        list["invoices"]["invoice"]["id"],
        json!(id),
        "one entry: a single object"
    );
    let (_, none) = call(&app, "GET", "/api/invoices?status=CANCELED", None).await;
    assert_eq!(
        none,
        json!({"invoices": {"@page": "1", "@per_page": "100", "@total": "0"}})
    );
    let (_, comments) = call(
        &app,
        "GET",
        &format!("/api/invoice-comments?invoice_id={id}"),
        None,
    )
    .await;
    assert!(
        comments["invoice-comments"]["invoice-comment"]
            .as_array()
            .unwrap()
            .len()
            >= 4
    );
    // E-mail recipients as a string or an array.
    let (r, _) = call(&app, "POST", &format!("/api/invoices/{id}/email"), Some(r#"{"email": {"recipients": {"to": ["a@example.org", "b@example.org"], "cc": "c@example.org"}}}"#)).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let (r, _) = call(
        &app,
        "DELETE",
        &format!(
            "/api/invoice-comments/{}",
            comments["invoice-comments"]["invoice-comment"][0]["id"]
                .as_str()
                .unwrap()
        ),
        None,
    )
    .await;
    assert_eq!(r.status, 200);
}

#[tokio::test]
async fn negotiation_picks_json_or_xml() {
    let app = App::spawn().await;
    // The method, the path, the Accept header if any, the status and how the body starts.
    for (method, path, accept, status, start) in [
        (
            "GET",
            "/api/settings?format=json",
            None,
            200,
            "{\"settings\"",
        ),
        (
            "GET",
            "/api/settings?format=xml",
            Some("application/json"),
            200,
            "<?xml",
        ),
        ("GET", "/api/settings", Some("text/csv"), 200, "<?xml"),
        (
            "DELETE",
            "/api/taxes/99?format=json",
            None,
            404,
            "{\"errors\"",
        ),
    ] {
        let mut headers = vec![("X-ServiceApiKey", app.key.as_str())];
        headers.extend(accept.map(|a| ("Accept", a)));
        let r = app.send(method, path, None, &headers).await;
        assert_eq!(r.status, status, "{method} {path}: {}", r.body);
        assert!(r.body.starts_with(start), "{method} {path}: {}", r.body);
    }
    let yaml = Some("text/yaml");
    app.call_bytes("POST", "/api/clients", b"name: x".to_vec(), yaml)
        .await
        .assert_error(415, "unsupported Content-Type text/yaml");
}

#[tokio::test]
async fn bad_json_gets_400_with_a_json_error_body() {
    let app = App::spawn().await;
    for (body, fragment) in [
        (r#"{"client": {"name": "x""#, "malformed JSON"),
        (
            r#"{"invoice": {"client_id": "1"}}"#,
            "expected a <client> root element",
        ),
        (r#"[{"client": {"name": "x"}}]"#, "must be an object"),
        (r#"{"client": [{"name": "x"}]}"#, "client must be an object"),
        (r#"{"client": "x"}"#, "client must be an object"),
        (
            r#"{"client": {"name": "x", "due_days": 1e400}}"#,
            "due_days must be an integer",
        ),
    ] {
        let (r, v) = call(&app, "POST", "/api/clients", Some(body)).await;
        assert_eq!(r.status, 400, "{body}: {}", r.body);
        let message = v["errors"]["error"].to_string();
        assert!(message.contains(fragment), "{body}: {message}");
    }
    let (r, _) = call(&app, "GET", "/api/clients", None).await;
    assert_eq!(r.header("x-total-count"), Some("0"));
}

#[tokio::test]
async fn rate_limit_headers_and_the_optional_limit() {
    let app = App::spawn().await;
    let r = app.get("/api/clients").await;
    assert_eq!(
        r.header("x-rate-limit-remaining"),
        Some("4294967295"),
        "no limit configured"
    );
    let reset: u64 = r.header("x-rate-limit-reset").unwrap().parse().unwrap();
    assert_eq!(reset % 900, 0, "windows are 15 minutes");
    assert!(
        app.send("GET", "/api/clients", None, &[])
            .await
            .header("x-rate-limit-remaining")
            .is_none()
    );

    let data = Arc::new(tempfile::tempdir().unwrap());
    let limited = App::spawn_configured(data, test_component(), |o| o.rate_limit = Some(3)).await;
    for expected in ["2", "1", "0"] {
        let r = limited.get("/api/clients").await;
        assert_eq!(r.status, 200);
        assert_eq!(r.header("x-rate-limit-remaining"), Some(expected));
    }
    let refused = limited.get("/api/clients").await;
    refused.assert_error(429, "rate limit of 3 requests per 15 minutes exceeded");
    assert_eq!(refused.header("x-rate-limit-remaining"), Some("0"));
    // Another account has its own window.
    let other = limited.new_account("Other").await;
    assert_eq!(
        limited
            .call_as(&other, "GET", "/api/clients", None)
            .await
            .status,
        200
    );
}
