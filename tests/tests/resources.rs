//! Every resource of the foundation end to end: create, read, update, delete, list.

use faktura_tests::App;

use crate::support::template;

const RTF: &str = "e1xydGYxIFtJbnZvaWNlLmludm9pY2VfbnVtYmVyXX0="; // {\rtf1 [Invoice.invoice_number]}
const DOCX: &str = "UEsDBBQAAAAIAA=="; // PK\x03\x04...

#[tokio::test]
async fn templates_are_stored_byte_exact_and_filtered_by_type() {
    let app = App::spawn().await;
    let standard = template("Standard", "invoice", "rtf", RTF);
    let created = app.create("/api/templates", &standard).await;
    created.assert_fields(&[
        ("type", "INVOICE"),
        ("base64file", RTF),
        ("is_default", "1"),
    ]);
    let url = format!("/api/templates/{}", created.id());
    let credit = template("Gutschrift", "CREDIT_NOTE", "docx", DOCX);
    app.create("/api/templates", &credit).await;

    let one = app.get(&url).await;
    assert_eq!(one.status, 200);
    one.assert_fields(&[("base64file", RTF), ("name", "Standard")]);

    let all = app.get("/api/templates").await;
    assert_eq!(all.fields("name"), vec!["Standard", "Gutschrift"]);
    assert!(!all.body.contains("base64file"), "lists leave files out");

    for path in ["/api/templates?type=invoice", "/api/template?type=INVOICE"] {
        let filtered = app.get(path).await;
        assert_eq!(filtered.status, 200, "{path}");
        assert_eq!(filtered.fields("name"), vec!["Standard"], "{path}");
    }

    let updated = app
        .put(&url, "<template><name>Renamed</name></template>")
        .await;
    assert_eq!(updated.status, 200, "{}", updated.body);
    updated.assert_fields(&[("name", "Renamed"), ("base64file", RTF)]);

    // A second default of the same type takes the flag over.
    let second = template("Neu", "INVOICE", "rtf", RTF)
        .replace("</name>", "</name><is_default>1</is_default>");
    let second = app.post("/api/templates", &second).await;
    second.assert_fields(&[("is_default", "1")]);
    app.get(&url).await.assert_fields(&[("is_default", "0")]);

    let deleted = app.delete(&url).await;
    assert_eq!(deleted.status, 200);
    assert!(deleted.body.is_empty());
    assert_eq!(app.get(&url).await.status, 404);
}

#[tokio::test]
async fn a_template_file_must_match_its_format() {
    let app = App::spawn().await;
    for (body, fragment) in [
        (template("T", "INVOICE", "docx", RTF), "not a docx file"),
        (
            template("T", "INVOICE", "rtf", "%%%"),
            "base64file is not valid base64",
        ),
        (template("T", "LETTER", "rtf", RTF), "type must be one of"),
    ] {
        let r = app.post("/api/templates", &body).await;
        r.assert_error(400, fragment);
    }
    let missing = "<template><name>T</name><type>INVOICE</type></template>";
    let missing = app.post("/api/templates", missing).await;
    missing.assert_error(400, "format is mandatory");
    missing.assert_error(400, "base64file is mandatory");
    assert_eq!(
        app.get("/api/templates").await.header("x-total-count"),
        Some("0")
    );
}

#[tokio::test]
async fn the_three_property_collections_work_alike() {
    let app = App::spawn().await;
    for (path, root) in [
        ("/api/user-properties", "user-property"),
        ("/api/incoming-properties", "incoming-property"),
        ("/api/client-properties", "client-property"),
    ] {
        let body = |inner: &str| format!("<{root}>{inner}</{root}>");
        let created = app
            .create(
                path,
                &body(
                    "<name>Kostenstelle</name><type>textfield</type>\
                     <default_value>4711</default_value><is_nvl>1</is_nvl>",
                ),
            )
            .await;
        assert!(
            created.body.contains(&format!("<{root}>")),
            "{}",
            created.body
        );
        created.assert_fields(&[("type", "TEXTFIELD"), ("account_id", "1"), ("is_nvl", "1")]);
        let url = format!("{path}/{}", created.id());
        let updated = app
            .put(
                &url,
                &body("<type>CHECKBOX</type><default_value>true</default_value>"),
            )
            .await;
        assert_eq!(updated.status, 200, "{}", updated.body);
        updated.assert_fields(&[("default_value", "1")]);
        let list = app.get(path).await;
        let plural = path.trim_start_matches("/api/");
        assert!(
            list.body.contains(&format!("<{plural} type=\"array\"")),
            "{}",
            list.body
        );
        assert_eq!(list.fields("name"), vec!["Kostenstelle"]);
        app.post(path, &body("<name>x</name><type>SELECT</type>"))
            .await
            .assert_error(400, "type must be one of TEXTFIELD, TEXTAREA, CHECKBOX");
        assert_eq!(app.delete(&url).await.status, 200);
        assert_eq!(app.get(&url).await.status, 404);
    }
}

#[tokio::test]
async fn country_taxes_take_both_spellings_of_filter_and_path() {
    let app = App::spawn().await;
    let tax =
        |code: &str| format!("<country-tax><country_code>{code}</country_code></country-tax>");
    let at = app.create("/api/country-taxes", &tax("at")).await;
    at.assert_fields(&[("country_code", "AT")]);
    app.create("/api/country-taxes", &tax("CH")).await;
    for (code, status, fragment) in [("AT", 409, "AT is already listed"), ("XX", 400, "ISO 3166")] {
        let r = app.post("/api/country-taxes", &tax(code)).await;
        r.assert_error(status, fragment);
    }

    for query in ["country=AT", "country_code=at"] {
        let list = app.get(&format!("/api/country-taxes?{query}")).await;
        assert_eq!(list.fields("country_code"), vec!["AT"], "{query}");
    }
    let id = at.id();
    for (path, code) in [
        (format!("/api/country_taxes/{id}"), "FR"),
        (format!("/api/country-taxes/{id}"), "NL"),
    ] {
        let updated = app.put(&path, &tax(code)).await;
        assert_eq!(updated.status, 200, "{path}: {}", updated.body);
        updated.assert_fields(&[("country_code", code)]);
    }
    assert_eq!(
        app.delete(&format!("/api/country-taxes/{id}")).await.status,
        200
    );
    assert_eq!(
        app.get("/api/country-taxes").await.fields("country_code"),
        vec!["CH"]
    );
}

#[tokio::test]
async fn clients_get_numbers_and_addresses() {
    let app = App::spawn().await;
    let settings = app
        .put(
            "/api/settings",
            "<settings><client_number_pre>K-</client_number_pre><client_number_length>4</client_number_length></settings>",
        )
        .await;
    assert_eq!(settings.status, 200, "{}", settings.body);
    settings.assert_fields(&[("client_number_next", "1")]);
    let client = |inner: &str| format!("<client>{inner}</client>");
    let a = app
        .create(
            "/api/clients",
            &client(
                "<name>Müller &amp; Söhne</name><street>Hauptstr. 1</street><zip>10115</zip>\
                 <city>Berlin</city><country_code>de</country_code><email>info@example.de</email>",
            ),
        )
        .await;
    a.assert_fields(&[
        ("client_number", "K-0001"),
        ("name", "Müller & Söhne"),
        ("address", "Müller & Söhne\nHauptstr. 1\n10115 Berlin\nDE"),
        ("tax_rule", "COUNTRY"),
    ]);
    let seven = client("<name>B</name><number>7</number>");
    let b = app.post("/api/clients", &seven).await;
    b.assert_fields(&[("client_number", "K-0007")]);
    let taken = client("<name>C</name><number>7</number>");
    let taken = app.post("/api/clients", &taken).await;
    taken.assert_error(409, "number 7 is already used");
    // The next number is one past the highest in use.
    let c = app.post("/api/clients", &client("<name>C</name>")).await;
    c.assert_fields(&[("client_number", "K-0008")]);

    let invalid = client("<email>nope</email><tax_rule>SOMETIMES</tax_rule><due_days>x</due_days>");
    let invalid = app.post("/api/clients", &invalid).await;
    for fragment in [
        "email must be an e-mail address",
        "tax_rule must be one of",
        "due_days must be an integer",
        "name is mandatory",
    ] {
        invalid.assert_error(400, fragment);
    }

    let moved = client("<city>Hamburg</city><zip>20095</zip>");
    let updated = app.put(&format!("/api/clients/{}", a.id()), &moved).await;
    assert_eq!(updated.status, 200, "{}", updated.body);
    assert!(updated.field("address").unwrap().contains("20095 Hamburg"));
    updated.assert_fields(&[("client_number", "K-0001")]);

    let ordered = app.get("/api/clients?order_by=name+DESC").await;
    assert_eq!(ordered.fields("name"), vec!["Müller & Söhne", "C", "B"]);
    let paged = app.get("/api/clients?per_page=2&page=2").await;
    assert_eq!(paged.fields("name"), vec!["C"]);
    assert!(
        paged.body.contains("page=\"2\" per_page=\"2\" total=\"3\""),
        "{}",
        paged.body
    );
    for (query, fragment) in [
        ("order_by=nope", "order_by: unknown field"),
        ("per_page=-5", "per_page must be a positive integer"),
    ] {
        let r = app.get(&format!("/api/clients?{query}")).await;
        r.assert_error(400, fragment);
    }
    let clamped = app.get("/api/clients?per_page=100000").await;
    assert!(
        clamped.body.contains("per_page=\"1000\""),
        "{}",
        clamped.body
    );

    assert_eq!(
        app.delete(&format!("/api/clients/{}", b.id())).await.status,
        200
    );
    // The number is free again.
    let d = client("<name>D</name><number>7</number>");
    app.create("/api/clients", &d).await;
}

#[tokio::test]
async fn settings_read_defaults_and_change_field_by_field() {
    let app = App::spawn().await;
    let defaults = app.get("/api/settings").await;
    assert_eq!(defaults.status, 200);
    defaults.assert_fields(&[("currency_code", "EUR"), ("invoice_number_next", "1")]);
    let changed = app
        .put(
            "/api/settings",
            "<settings><currency_code>chf</currency_code><due_days>30</due_days>\
             <payment_types>cash,bank_transfer</payment_types><company_name>Faktura AG</company_name></settings>",
        )
        .await;
    assert_eq!(changed.status, 200, "{}", changed.body);
    changed.assert_fields(&[
        ("currency_code", "CHF"),
        ("due_days", "30"),
        ("locale", "de_DE"),
    ]);
    let again = app.get("/api/settings").await;
    again.assert_fields(&[("company_name", "Faktura AG")]);
    let bad = app
        .put(
            "/api/settings",
            "<settings><currency_code>EURO</currency_code><payment_types>GOLD</payment_types><discount_rate>120</discount_rate></settings>",
        )
        .await;
    for fragment in [
        "ISO 4217",
        "payment_types must list values",
        "discount_rate must be between 0 and 100",
    ] {
        bad.assert_error(400, fragment);
    }
    let after = app.get("/api/settings").await;
    after.assert_fields(&[("currency_code", "CHF")]);
}

#[tokio::test]
async fn only_an_admin_changes_settings() {
    let app = App::spawn().await;
    let member = app
        .runtime
        .create_user(1, "clerk@example.com")
        .await
        .unwrap()
        .api_key;
    let read = app.call_as(&member, "GET", "/api/settings", None).await;
    assert_eq!(read.status, 200);
    let write = app
        .call_as(
            &member,
            "PUT",
            "/api/settings",
            Some("<settings><due_days>1</due_days></settings>"),
        )
        .await;
    write.assert_error(403, "only an admin");
}

#[tokio::test]
async fn taxes_keep_one_default() {
    let app = App::spawn().await;
    let first = app
        .create("/api/taxes", "<tax><name>MwSt</name><rate>19</rate></tax>")
        .await;
    first.assert_fields(&[("is_default", "1"), ("rate", "19")]);
    let url = format!("/api/taxes/{}", first.id());
    let reduced = "<tax><name>ermäßigt</name><rate>7.0</rate><is_default>1</is_default></tax>";
    let reduced = app.post("/api/taxes", reduced).await;
    reduced.assert_fields(&[("rate", "7")]);
    app.get(&url).await.assert_fields(&[("is_default", "0")]);
    app.post("/api/taxes", "<tax><name>x</name><rate>101</rate></tax>")
        .await
        .assert_error(400, "rate must be between 0 and 100");
    let updated = app.put(&url, "<tax><rate>20</rate></tax>").await;
    updated.assert_fields(&[("rate", "20")]);
    assert_eq!(
        app.get("/api/taxes").await.fields("name"),
        vec!["MwSt", "ermäßigt"]
    );
    assert_eq!(app.delete(&url).await.status, 200);
    assert_eq!(
        app.get("/api/taxes").await.header("x-total-count"),
        Some("1")
    );
}
