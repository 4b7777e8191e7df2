//! The API reference (`GET /api/openapi.json`): served without a key, a valid OpenAPI 3.1
//! document (PyPI `openapi-spec-validator`), and true to the live server: every list it
//! describes answers under the names it gives, in both media types.

use faktura_tests::{App, run_ok};
use serde_json::Value;

async fn reference(app: &App) -> Value {
    let reply = app.send("GET", "/api/openapi.json", None, &[]).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(
        reply.header("content-type"),
        Some("application/json"),
        "the reference is JSON"
    );
    serde_json::from_str(&reply.body).expect("the reference parses as JSON")
}

#[tokio::test]
async fn the_reference_is_served_without_a_key_and_passes_the_validator() {
    let app = App::spawn().await;
    let doc = reference(&app).await;
    assert_eq!(doc["openapi"], "3.1.0");
    assert_eq!(
        doc["components"]["securitySchemes"]["apiKeyHeader"]["name"],
        "X-ServiceApiKey"
    );
    let complete = &doc["paths"]["/invoices/{id}/complete"]["put"];
    assert!(complete["responses"]["200"].is_object(), "{complete}");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("openapi.json");
    std::fs::write(&file, serde_json::to_vec(&doc).unwrap()).unwrap();
    run_ok(
        std::process::Command::new("python3")
            .arg("-c")
            .arg(
                "import sys\n\
             from openapi_spec_validator import validate\n\
             from openapi_spec_validator.readers import read_from_filename\n\
             validate(read_from_filename(sys.argv[1])[0])",
            )
            .arg(&file),
        "openapi-spec-validator (pip install openapi-spec-validator) accepts the reference",
    );
    // The description is public; the API behind it is not.
    let without_key = app.send("GET", "/api/invoices", None, &[]).await;
    assert_eq!(without_key.status, 401);
}

/// Every list the reference describes answers with the root element (XML) and the key
/// (JSON) the reference names, and its records under the singular name it gives.
#[tokio::test]
async fn every_described_list_answers_under_its_described_names() {
    let app = App::spawn().await;
    let client = app
        .create("/api/clients", "<client><name>Ref</name></client>")
        .await
        .id();
    app.create(
        "/api/invoices",
        &format!("<invoice><client_id>{client}</client_id></invoice>"),
    )
    .await;
    let doc = reference(&app).await;
    let mut checked = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        let Some(get) = item.get("get") else { continue };
        if path.contains('{') || path == "/openapi.json" {
            continue;
        }
        let ok = &get["responses"]["200"]["content"];
        let Some(xml_name) = ok["application/xml"]["schema"]["xml"]["name"].as_str() else {
            continue;
        };
        let json_schema = &ok["application/json"]["schema"];
        let json_key = json_schema["required"][0].as_str().unwrap();
        // Lists of records that belong to another name their owner.
        let required_owner = get["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|p| p["name"].as_str())
            .find(|n| ["invoice_id", "credit_note_id", "incoming_id"].contains(n));
        let query = match required_owner {
            Some("invoice_id") => "?invoice_id=1",
            Some(_) => continue,
            None => "",
        };
        let xml = app.get(&format!("/api{path}{query}")).await;
        assert_eq!(xml.status, 200, "GET {path}: {}", xml.body);
        assert!(
            xml.body.contains(&format!("<{xml_name}")),
            "GET {path}: the XML root is not <{xml_name}>: {}",
            &xml.body[..xml.body.len().min(200)]
        );
        let json = app
            .send(
                "GET",
                &format!("/api{path}{query}"),
                None,
                &[
                    ("X-ServiceApiKey", app.key.as_str()),
                    ("Accept", "application/json"),
                ],
            )
            .await;
        let body: Value = serde_json::from_str(&json.body).unwrap();
        assert!(
            body.get(json_key).is_some(),
            "GET {path}: the JSON has no key {json_key}: {}",
            json.body
        );
        checked += 1;
    }
    assert!(checked >= 20, "only {checked} lists were checked");
}
