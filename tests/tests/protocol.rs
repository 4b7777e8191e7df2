//! The protocol around the resources: authentication, account isolation, errors and limits,
//! HEAD, traps and persistence.

use faktura_tests::{App, send_raw, shipped_component};

/// One valid create body per resource, with the path of its collection.
const CREATES: &[(&str, &str)] = &[
    (
        "/api/templates",
        "<template><name>T</name><type>INVOICE</type><format>rtf</format><base64file>e1xydGYxfQ==</base64file></template>",
    ),
    (
        "/api/user-properties",
        "<user-property><name>P</name><type>TEXTFIELD</type></user-property>",
    ),
    (
        "/api/incoming-properties",
        "<incoming-property><name>P</name><type>TEXTAREA</type></incoming-property>",
    ),
    (
        "/api/client-properties",
        "<client-property><name>P</name><type>CHECKBOX</type></client-property>",
    ),
    (
        "/api/country-taxes",
        "<country-tax><country_code>AT</country_code></country-tax>",
    ),
    ("/api/clients", "<client><name>C</name></client>"),
    ("/api/taxes", "<tax><name>VAT</name><rate>20</rate></tax>"),
];

#[tokio::test]
async fn requests_without_a_valid_key_are_refused() {
    let app = App::spawn().await;
    let none = app.send("GET", "/api/clients", None, &[]).await;
    none.assert_error(401, "authentication required");
    let empty = app
        .send("GET", "/api/clients", None, &[("X-ServiceApiKey", "")])
        .await;
    assert_eq!(empty.status, 401);
    let wrong = app
        .send(
            "GET",
            "/api/clients",
            None,
            &[("X-ServiceApiKey", "not-a-key-at-all")],
        )
        .await;
    wrong.assert_error(401, "authentication required");
    let wrong_query = app
        .send("GET", "/api/clients?api_key=nope", None, &[])
        .await;
    assert_eq!(wrong_query.status, 401);
    let by_query = app
        .send(
            "GET",
            &format!("/api/clients?api_key={}", app.key),
            None,
            &[],
        )
        .await;
    assert_eq!(by_query.status, 200, "{}", by_query.body);
    let by_header = app
        .send(
            "GET",
            "/api/clients",
            None,
            &[("X-ServiceApiKey", &app.key)],
        )
        .await;
    assert_eq!(by_header.status, 200);
    // A rejected write changes nothing.
    let write = app
        .send(
            "POST",
            "/api/clients",
            Some("<client><name>X</name></client>"),
            &[("Content-Type", "application/xml")],
        )
        .await;
    assert_eq!(write.status, 401);
    assert_eq!(
        app.get("/api/clients").await.header("x-total-count"),
        Some("0")
    );
}

#[tokio::test]
async fn records_of_one_account_are_invisible_to_another() {
    let app = App::spawn().await;
    let other = app.new_account("Other GmbH").await;
    for (path, body) in CREATES {
        let created = app.post(path, body).await;
        assert_eq!(created.status, 201, "{path}: {}", created.body);
        let member = format!("{path}/{}", created.id());
        let root = body[1..body.find('>').unwrap()].to_owned();
        let get = app.call_as(&other, "GET", &member, None).await;
        get.assert_error(404, "does not exist");
        let put = app
            .call_as(
                &other,
                "PUT",
                &member,
                Some(&format!("<{root}><name>Stolen</name></{root}>")),
            )
            .await;
        put.assert_error(404, "does not exist");
        let delete = app.call_as(&other, "DELETE", &member, None).await;
        assert_eq!(delete.status, 404, "{member}");
        let list = app.call_as(&other, "GET", path, None).await;
        assert_eq!(list.header("x-total-count"), Some("0"), "{path}");
        // Still there, unchanged, for its owner.
        let own = app.get(&member).await;
        assert_eq!(own.status, 200);
        assert!(!own.body.contains("Stolen"));
    }
    let their_settings = app
        .call_as(
            &other,
            "PUT",
            "/api/settings",
            Some("<settings><company_name>Other</company_name></settings>"),
        )
        .await;
    assert_eq!(their_settings.status, 200);
    assert_eq!(
        app.get("/api/settings")
            .await
            .field("company_name")
            .as_deref(),
        Some("")
    );
}

#[tokio::test]
async fn bad_documents_get_400_with_errors_and_change_nothing() {
    let app = App::spawn().await;
    let cases = [
        ("<client><name>x</name>", "malformed XML"),
        ("<client><name>x</client>", "malformed XML"),
        ("not xml at all", "malformed XML"),
        (
            "<invoice><name>x</name></invoice>",
            "expected a <client> root element",
        ),
        (
            "<client><name>x</name><email>x</email></client>",
            "email must be an e-mail address",
        ),
        (
            "<client><tax_rule>MAYBE</tax_rule><name>x</name></client>",
            "tax_rule must be one of TAX, NO_TAX, COUNTRY",
        ),
        (
            "<client><name>x</name><due_days>1e400</due_days></client>",
            "due_days must be an integer",
        ),
        (
            "<client><name>x</name><discount_rate>99999999999999999999999</discount_rate></client>",
            "discount_rate must be a decimal",
        ),
        ("<client><first_name/></client>", "name is mandatory"),
        (
            "<!DOCTYPE lolz [<!ENTITY lol \"lol\"><!ENTITY lol2 \"&lol;&lol;\">]><client><name>&lol2;</name></client>",
            "DOCTYPE",
        ),
        ("<client><name>&xxe;</name></client>", "undefined entity"),
    ];
    for (body, fragment) in cases {
        app.post("/api/clients", body)
            .await
            .assert_error(400, fragment);
    }
    let deep = format!(
        "{}{}",
        "<client>".repeat(10_000),
        "</client>".repeat(10_000)
    );
    app.post("/api/clients", &deep)
        .await
        .assert_error(400, "nests deeper");
    let invalid_utf8 = send_raw(
        &app.base,
        "POST",
        "/api/clients",
        Some(b"<client><name>\xff\xfe</name></client>".to_vec()),
        &[
            ("X-ServiceApiKey", &app.key),
            ("Content-Type", "application/xml"),
        ],
    )
    .await;
    invalid_utf8.assert_error(400, "UTF-8");
    // A 400 on update leaves the record as it was.
    let c = app
        .post("/api/clients", "<client><name>Keep</name></client>")
        .await;
    app.put(
        &format!("/api/clients/{}", c.id()),
        "<client><name>Changed</name><country_code>QQ</country_code></client>",
    )
    .await
    .assert_error(400, "ISO 3166");
    let after = app.get("/api/clients").await;
    assert_eq!(after.fields("name"), vec!["Keep"]);
}

#[tokio::test]
async fn limits_and_methods_answer_with_their_status() {
    let app = App::spawn().await;
    let huge = vec![b'a'; faktura_component::limits::BODY_BYTES_MAX + 10];
    let too_large = send_raw(
        &app.base,
        "POST",
        "/api/templates",
        Some(huge),
        &[
            ("X-ServiceApiKey", &app.key),
            ("Content-Type", "application/xml"),
        ],
    )
    .await;
    too_large.assert_error(413, "larger than");
    let json = app
        .send(
            "POST",
            "/api/clients",
            Some("name=x"),
            &[
                ("X-ServiceApiKey", &app.key),
                ("Content-Type", "application/x-www-form-urlencoded"),
            ],
        )
        .await;
    json.assert_error(415, "unsupported Content-Type");
    let patch = app.call("PATCH", "/api/clients", None).await;
    patch.assert_error(405, "method not allowed");
    assert_eq!(patch.header("allow"), Some("GET, HEAD, POST"));
    app.call("POST", "/api/clients/1", Some("<client/>"))
        .await
        .assert_error(405, "method not allowed");
    app.get("/api/nothing-here")
        .await
        .assert_error(404, "no resource");
    app.get("/api/clients/abc")
        .await
        .assert_error(404, "does not exist");
    app.get("/elsewhere").await.assert_error(404, "no resource");
    let long_query = format!("/api/clients?x={}", "a".repeat(10_000));
    app.get(&long_query)
        .await
        .assert_error(400, "query string is longer");
}

#[tokio::test]
async fn head_on_a_list_answers_the_count_only() {
    let app = App::spawn().await;
    for name in ["A", "B", "C"] {
        app.post(
            "/api/clients",
            &format!("<client><name>{name}</name></client>"),
        )
        .await;
    }
    let head = app.call("HEAD", "/api/clients", None).await;
    assert_eq!(head.status, 200);
    assert_eq!(head.header("x-total-count"), Some("3"));
    assert!(head.body.is_empty());
}

#[tokio::test]
async fn a_guest_panic_costs_one_request_only() {
    let app = App::spawn().await;
    let panicked = app.get("/api/_test/panic").await;
    panicked.assert_error(500, "internal error");
    assert!(
        !panicked.body.contains("panic"),
        "no details leak: {}",
        panicked.body
    );
    let next = app.get("/api/clients").await;
    assert_eq!(next.status, 200);
}

#[tokio::test]
async fn the_shipped_component_has_no_test_routes() {
    let data = std::sync::Arc::new(tempfile::tempdir().unwrap());
    let app = App::spawn_with(data, shipped_component()).await;
    app.get("/api/_test/panic")
        .await
        .assert_error(404, "no resource");
}

#[tokio::test]
async fn data_survives_a_restart() {
    let app = App::spawn().await;
    let mut ids = Vec::new();
    for (path, body) in CREATES {
        let created = app.post(path, body).await;
        assert_eq!(created.status, 201);
        ids.push(format!("{path}/{}", created.id()));
    }
    app.put(
        "/api/settings",
        "<settings><company_name>Persist AG</company_name></settings>",
    )
    .await;
    let app = app.restart().await;
    for member in &ids {
        assert_eq!(app.get(member).await.status, 200, "{member}");
    }
    assert_eq!(
        app.get("/api/settings")
            .await
            .field("company_name")
            .as_deref(),
        Some("Persist AG")
    );
    // Counters survive too: the next client continues the numbering.
    let next = app
        .post("/api/clients", "<client><name>Next</name></client>")
        .await;
    assert_eq!(next.field("number").as_deref(), Some("2"));
}

#[tokio::test]
async fn a_revoked_key_stops_working_with_the_next_request() {
    let app = App::spawn().await;
    let member = app
        .runtime
        .create_user(1, "temp@example.com")
        .await
        .unwrap();
    assert_eq!(
        app.call_as(&member.api_key, "GET", "/api/clients", None)
            .await
            .status,
        200
    );
    app.runtime.revoke_user(member.user_id).await.unwrap();
    app.call_as(&member.api_key, "GET", "/api/clients", None)
        .await
        .assert_error(401, "authentication required");
    assert_eq!(
        app.get("/api/clients").await.status,
        200,
        "other keys keep working"
    );
    assert!(app.runtime.revoke_user(999).await.is_err());
}

#[tokio::test]
async fn hostile_documents_are_refused_without_changing_anything() {
    let app = App::spawn().await;
    // A million siblings (4 MB, under the body limit) trips the element limit.
    let siblings = format!("<client>{}</client>", "<a/>".repeat(1_000_000));
    app.post("/api/clients", &siblings)
        .await
        .assert_error(400, "more than");
    // A huge base64 file trips the body limit.
    let huge = format!(
        "<template><name>T</name><type>INVOICE</type><format>rtf</format><base64file>{}</base64file></template>",
        "QUFB".repeat(6 << 20)
    );
    app.post("/api/templates", &huge)
        .await
        .assert_error(413, "larger than");
    // Attachment names cannot leave the outbox or reach a header.
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
    app.put(&format!("/api/invoices/{id}/complete"), "").await;
    let r = app
        .post(
            &format!("/api/invoices/{id}/email"),
            "<email><recipients><to>a@example.org</to></recipients><filename>../../etc/passwd</filename>\
             <attachments><attachment><filename>../evil\r\nX-Injected: 1.txt</filename><base64file>aGk=</base64file></attachment></attachments></email>",
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let outbox = app.data.path().join("outbox").join("queue");
    let eml = std::fs::read_dir(&outbox)
        .unwrap()
        .flatten()
        .find(|e| e.path().extension().is_some_and(|x| x == "eml"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .unwrap();
    assert!(!eml.contains("X-Injected: 1"), "{eml}");
    assert!(!eml.contains("filename=\"../"), "{eml}");
    assert!(eml.contains("filename=\"_.._etc_passwd.pdf\""), "{eml}");
    assert_eq!(
        std::fs::read_dir(&outbox).unwrap().count(),
        2,
        "one message, nothing else"
    );
    assert_eq!(
        app.get("/api/clients").await.header("x-total-count"),
        Some("1")
    );
    assert_eq!(
        app.get("/api/templates").await.header("x-total-count"),
        Some("0")
    );
}
