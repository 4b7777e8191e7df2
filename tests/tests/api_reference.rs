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
    for method in ["POST", "TRACE"] {
        let reply = app.send(method, "/api/openapi.json", None, &[]).await;
        assert_eq!(reply.status, 405, "{method}: {}", reply.body);
        assert_eq!(reply.header("allow"), Some("GET, HEAD"), "{method}");
    }
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

/// `format` names what the answer is: a value the path does not answer in is refused with
/// 400, not ignored; the common values are read in any case.
#[tokio::test]
async fn a_format_the_path_does_not_answer_in_is_refused() {
    let app = App::spawn().await;
    app.get("/api/clients?format=csv")
        .await
        .assert_error(400, "format must be xml or json, got \"csv\"");
    let json = app.get("/api/clients?format=JSON").await;
    assert_eq!(json.status, 200);
    assert!(json.header("content-type").unwrap().contains("json"));
    let client = app
        .create("/api/clients", "<client><name>Format</name></client>")
        .await
        .id();
    let invoice = app
        .create(
            "/api/invoices",
            &format!(
                "<invoice><client_id>{client}</client_id><invoice-items><invoice-item>\
                 <title>x</title><quantity>1</quantity><unit_price>10</unit_price>\
                 </invoice-item></invoice-items></invoice>"
            ),
        )
        .await
        .id();
    assert_eq!(
        app.put(&format!("/api/invoices/{invoice}/complete"), "")
            .await
            .status,
        200
    );
    let pdf = format!("/api/invoices/{invoice}/pdf");
    app.get(&format!("{pdf}?format=csv"))
        .await
        .assert_error(400, "format must be xml, json or pdf");
    let bytes = app.get(&format!("{pdf}?format=PDF")).await;
    assert_eq!(bytes.header("content-type"), Some("application/pdf"));
    app.get("/api/incomings/1/pdf?format=xml")
        .await
        .assert_error(400, "format must be pdf");
    app.get("/api/incomings?supplier_id=abc")
        .await
        .assert_error(400, "supplier_id must list positive integers");
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
        // A list that also answers groups names the list first among its shapes.
        let shape = |media: &str| {
            let schema = &ok[media]["schema"];
            schema["anyOf"].get(0).unwrap_or(schema).clone()
        };
        let xml_schema = shape("application/xml");
        let Some(xml_name) = xml_schema["xml"]["name"].as_str() else {
            continue;
        };
        let json_schema = &shape("application/json");
        let json_key = json_schema["required"][0].as_str().unwrap();
        // Lists of records that belong to another name their owner.
        let required_owner = get["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["required"] == true)
            .filter_map(|p| p["name"].as_str())
            .find(|n| n.ends_with("_id"));
        let query = match required_owner {
            Some("invoice_id") => "?invoice_id=1".to_owned(),
            Some("client_id") => format!("?client_id={client}"),
            Some(_) => continue,
            None => String::new(),
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

/// One record of each kind, in the states the operations that name them need, for the
/// schemathesis hooks (`FAKTURA_ST_IDS`): the ids by name.
async fn seed(app: &App) -> serde_json::Map<String, Value> {
    let mut ids = serde_json::Map::new();
    let mut add = |name: &str, id: u64| {
        ids.insert(name.into(), Value::from(id));
    };
    let client = app
        .create("/api/clients", "<client><name>Seed GmbH</name></client>")
        .await
        .id();
    add("client", client);
    let supplier = app
        .create(
            "/api/suppliers",
            "<supplier><name>Lieferant AG</name></supplier>",
        )
        .await
        .id();
    add("supplier", supplier);
    let incoming = app
        .create(
            "/api/incomings",
            &format!(
                "<incoming><supplier_id>{supplier}</supplier_id><number>R-1</number>\
                 <date>2026-11-01</date></incoming>"
            ),
        )
        .await
        .id();
    add("incoming", incoming);
    add("user", 1);
    for (name, path, root) in [
        ("user_property", "/api/user-properties", "user-property"),
        (
            "incoming_property",
            "/api/incoming-properties",
            "incoming-property",
        ),
        (
            "client_property",
            "/api/client-properties",
            "client-property",
        ),
    ] {
        let body = format!("<{root}><name>p</name><type>TEXTFIELD</type></{root}>");
        add(name, app.create(path, &body).await.id());
    }
    let template = app
        .create(
            "/api/email-templates",
            "<email-template><name>e</name><subject>s</subject><text>t</text></email-template>",
        )
        .await
        .id();
    add("email_template", template);
    for (name, kind) in [
        ("invoice_template", "INVOICE"),
        ("credit_note_template", "CREDIT_NOTE"),
    ] {
        use base64::Engine as _;
        let rtf = base64::engine::general_purpose::STANDARD.encode(r"{\rtf1 Rechnung}");
        let body = format!(
            "<template><name>t</name><type>{kind}</type><format>rtf</format>\
             <base64file>{rtf}</base64file></template>"
        );
        add(name, app.create("/api/templates", &body).await.id());
    }
    for (kind, plural, item) in [
        ("invoice", "invoices", "invoice-item"),
        ("credit_note", "credit-notes", "credit-note-item"),
    ] {
        let root = plural.trim_end_matches('s');
        let body = format!(
            "<{root}><client_id>{client}</client_id><{item}s><{item}><title>x</title>\
             <quantity>1</quantity><unit_price>100</unit_price></{item}></{item}s></{root}>"
        );
        add(
            &format!("draft_{kind}"),
            app.create(&format!("/api/{plural}"), &body).await.id(),
        );
        let open = app.create(&format!("/api/{plural}"), &body).await.id();
        let done = app.put(&format!("/api/{plural}/{open}/complete"), "").await;
        assert_eq!(done.status, 200, "{}", done.body);
        add(&format!("open_{kind}"), open);
    }
    ids
}

/// PyPI `schemathesis` against the live server with the reference: every operation, with
/// generated requests (positive and negative) in both media types and the stateful links
/// it finds, and the checks of the answers: no server error, only documented statuses,
/// content types and headers, and bodies that match their schemas. The hooks in
/// tests/fixtures/schemathesis_hooks.py hold the requests to what the schema cannot say.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schemathesis_finds_the_answers_as_the_reference_describes_them() {
    const REQUESTS_MIN: u64 = 2000;
    let app = App::spawn().await;
    let ids = seed(&app).await;
    let dir = tempfile::tempdir().unwrap();
    let fixtures = faktura_tests::workspace_root().join("tests/fixtures");
    let out = std::process::Command::new("st")
        .current_dir(dir.path())
        .env("PYTHONPATH", &fixtures)
        .env("SCHEMATHESIS_HOOKS", "schemathesis_hooks")
        .env("FAKTURA_ST_IDS", Value::Object(ids).to_string())
        .arg("--config-file")
        .arg(fixtures.join("schemathesis.toml"))
        .args(["run", &format!("{}/api/openapi.json", app.base)])
        .args(["-H", &format!("X-ServiceApiKey: {}", app.key)])
        .args(["--checks", "all"])
        // One worker: hypothesis's cache of lambda sources is not safe across threads
        // (a KeyError in `AST_LAMBDAS_CACHE` with two).
        .args(["--max-examples", "5", "--workers", "1", "--seed", "24"])
        .args(["--no-color"])
        .output()
        .expect("schemathesis runs (pip install schemathesis)");
    let report = String::from_utf8_lossy(&out.stdout);
    // The summary's "N generated, …" line.
    let generated: u64 = report
        .lines()
        .find_map(|l| l.trim().split_once(" generated,")?.0.parse().ok())
        .unwrap_or(0);
    assert!(
        out.status.success(),
        "schemathesis found failures:\n{report}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        generated >= REQUESTS_MIN,
        "schemathesis sent {generated} requests, fewer than {REQUESTS_MIN}:\n{report}"
    );
}
