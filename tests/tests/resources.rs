//! Every resource of the foundation end to end: create, read, update, delete, list.

use faktura_tests::App;

const RTF: &str = "e1xydGYxIFtJbnZvaWNlLmludm9pY2VfbnVtYmVyXX0="; // {\rtf1 [Invoice.invoice_number]}
const DOCX: &str = "UEsDBBQAAAAIAA=="; // PK\x03\x04...

fn template(name: &str, ty: &str, format: &str, file: &str) -> String {
    format!(
        "<template><name>{name}</name><type>{ty}</type><format>{format}</format>\
         <base64file>{file}</base64file></template>"
    )
}

#[tokio::test]
async fn templates_are_stored_byte_exact_and_filtered_by_type() {
    let app = App::spawn().await;
    let created = app
        .post(
            "/api/templates",
            &template("Standard", "invoice", "rtf", RTF),
        )
        .await;
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(created.field("type").as_deref(), Some("INVOICE"));
    assert_eq!(created.field("base64file").as_deref(), Some(RTF));
    assert_eq!(created.field("is_default").as_deref(), Some("1"));
    let id = created.id();

    let credit = app
        .post(
            "/api/templates",
            &template("Gutschrift", "CREDIT_NOTE", "docx", DOCX),
        )
        .await;
    assert_eq!(credit.status, 201, "{}", credit.body);

    let one = app.get(&format!("/api/templates/{id}")).await;
    assert_eq!(one.status, 200);
    assert_eq!(one.field("base64file").as_deref(), Some(RTF));
    assert_eq!(one.field("name").as_deref(), Some("Standard"));

    let all = app.get("/api/templates").await;
    assert_eq!(all.fields("name"), vec!["Standard", "Gutschrift"]);
    assert!(!all.body.contains("base64file"), "lists leave files out");

    for path in ["/api/templates?type=invoice", "/api/template?type=INVOICE"] {
        let filtered = app.get(path).await;
        assert_eq!(filtered.status, 200, "{path}");
        assert_eq!(filtered.fields("name"), vec!["Standard"], "{path}");
    }

    let updated = app
        .put(
            &format!("/api/templates/{id}"),
            "<template><name>Renamed</name></template>",
        )
        .await;
    assert_eq!(updated.status, 200, "{}", updated.body);
    assert_eq!(updated.field("name").as_deref(), Some("Renamed"));
    assert_eq!(updated.field("base64file").as_deref(), Some(RTF));

    // A second default of the same type takes the flag over.
    let second = app
        .post(
            "/api/templates",
            &template("Neu", "INVOICE", "rtf", RTF)
                .replace("</name>", "</name><is_default>1</is_default>"),
        )
        .await;
    assert_eq!(second.field("is_default").as_deref(), Some("1"));
    let first = app.get(&format!("/api/templates/{id}")).await;
    assert_eq!(first.field("is_default").as_deref(), Some("0"));

    let deleted = app.delete(&format!("/api/templates/{id}")).await;
    assert_eq!(deleted.status, 200);
    assert!(deleted.body.is_empty());
    assert_eq!(app.get(&format!("/api/templates/{id}")).await.status, 404);
}

#[tokio::test]
async fn a_template_file_must_match_its_format() {
    let app = App::spawn().await;
    let wrong = app
        .post("/api/templates", &template("T", "INVOICE", "docx", RTF))
        .await;
    wrong.assert_error(400, "not a docx file");
    let not_base64 = app
        .post("/api/templates", &template("T", "INVOICE", "rtf", "%%%"))
        .await;
    not_base64.assert_error(400, "base64file is not valid base64");
    let missing = app
        .post(
            "/api/templates",
            "<template><name>T</name><type>INVOICE</type></template>",
        )
        .await;
    missing.assert_error(400, "format is mandatory");
    assert!(
        missing.body.contains("base64file is mandatory"),
        "{}",
        missing.body
    );
    let bad_type = app
        .post("/api/templates", &template("T", "LETTER", "rtf", RTF))
        .await;
    bad_type.assert_error(400, "type must be one of");
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
        let created = app
            .post(
                path,
                &format!(
                    "<{root}><name>Kostenstelle</name><type>textfield</type>\
                     <default_value>4711</default_value><is_nvl>1</is_nvl></{root}>"
                ),
            )
            .await;
        assert_eq!(created.status, 201, "{path}: {}", created.body);
        assert!(
            created.body.contains(&format!("<{root}>")),
            "{}",
            created.body
        );
        assert_eq!(created.field("type").as_deref(), Some("TEXTFIELD"));
        assert_eq!(created.field("account_id").as_deref(), Some("1"));
        assert_eq!(created.field("is_nvl").as_deref(), Some("1"));
        let id = created.id();
        let updated = app
            .put(
                &format!("{path}/{id}"),
                &format!(
                    "<{root}><type>CHECKBOX</type><default_value>true</default_value></{root}>"
                ),
            )
            .await;
        assert_eq!(updated.status, 200, "{}", updated.body);
        assert_eq!(updated.field("default_value").as_deref(), Some("1"));
        let list = app.get(path).await;
        let plural = path.trim_start_matches("/api/");
        assert!(
            list.body.contains(&format!("<{plural} type=\"array\"")),
            "{}",
            list.body
        );
        assert_eq!(list.fields("name"), vec!["Kostenstelle"]);
        let bad = app
            .post(
                path,
                &format!("<{root}><name>x</name><type>SELECT</type></{root}>"),
            )
            .await;
        bad.assert_error(400, "type must be one of TEXTFIELD, TEXTAREA, CHECKBOX");
        assert_eq!(app.delete(&format!("{path}/{id}")).await.status, 200);
        assert_eq!(app.get(&format!("{path}/{id}")).await.status, 404);
    }
}

#[tokio::test]
async fn country_taxes_take_both_spellings_of_filter_and_path() {
    let app = App::spawn().await;
    let at = app
        .post(
            "/api/country-taxes",
            "<country-tax><country_code>at</country_code></country-tax>",
        )
        .await;
    assert_eq!(at.status, 201, "{}", at.body);
    assert_eq!(at.field("country_code").as_deref(), Some("AT"));
    let ch = app
        .post(
            "/api/country-taxes",
            "<country-tax><country_code>CH</country_code></country-tax>",
        )
        .await;
    assert_eq!(ch.status, 201);
    let dup = app
        .post(
            "/api/country-taxes",
            "<country-tax><country_code>AT</country_code></country-tax>",
        )
        .await;
    dup.assert_error(400, "AT is already listed");
    let bogus = app
        .post(
            "/api/country-taxes",
            "<country-tax><country_code>XX</country_code></country-tax>",
        )
        .await;
    bogus.assert_error(400, "ISO 3166");

    for query in ["country=AT", "country_code=at"] {
        let list = app.get(&format!("/api/country-taxes?{query}")).await;
        assert_eq!(list.fields("country_code"), vec!["AT"], "{query}");
    }
    let id = at.id();
    for (path, code) in [
        (format!("/api/country_taxes/{id}"), "FR"),
        (format!("/api/country-taxes/{id}"), "NL"),
    ] {
        let updated = app
            .put(
                &path,
                &format!("<country-tax><country_code>{code}</country_code></country-tax>"),
            )
            .await;
        assert_eq!(updated.status, 200, "{path}: {}", updated.body);
        assert_eq!(updated.field("country_code").as_deref(), Some(code));
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
    assert_eq!(settings.field("client_number_next").as_deref(), Some("1"));
    let a = app
        .post(
            "/api/clients",
            "<client><name>Müller &amp; Söhne</name><street>Hauptstr. 1</street><zip>10115</zip>\
             <city>Berlin</city><country_code>de</country_code><email>info@example.de</email></client>",
        )
        .await;
    assert_eq!(a.status, 201, "{}", a.body);
    assert_eq!(a.field("client_number").as_deref(), Some("K-0001"));
    assert_eq!(a.field("name").as_deref(), Some("Müller & Söhne"));
    assert_eq!(
        a.field("address").as_deref(),
        Some("Müller & Söhne\nHauptstr. 1\n10115 Berlin\nDE")
    );
    assert_eq!(a.field("tax_rule").as_deref(), Some("COUNTRY"));
    let b = app
        .post(
            "/api/clients",
            "<client><name>B</name><number>7</number></client>",
        )
        .await;
    assert_eq!(b.field("client_number").as_deref(), Some("K-0007"));
    let taken = app
        .post(
            "/api/clients",
            "<client><name>C</name><number>7</number></client>",
        )
        .await;
    taken.assert_error(400, "number 7 is already used");
    let c = app
        .post("/api/clients", "<client><name>C</name></client>")
        .await;
    // The next number is one past the highest in use.
    assert_eq!(c.field("client_number").as_deref(), Some("K-0008"));

    let invalid = app
        .post(
            "/api/clients",
            "<client><email>nope</email><tax_rule>SOMETIMES</tax_rule><due_days>x</due_days></client>",
        )
        .await;
    invalid.assert_error(400, "email must be an e-mail address");
    for fragment in [
        "tax_rule must be one of",
        "due_days must be an integer",
        "name is mandatory",
    ] {
        assert!(
            invalid.body.contains(fragment),
            "{fragment}: {}",
            invalid.body
        );
    }

    let updated = app
        .put(
            &format!("/api/clients/{}", a.id()),
            "<client><city>Hamburg</city><zip>20095</zip></client>",
        )
        .await;
    assert_eq!(updated.status, 200, "{}", updated.body);
    assert!(updated.field("address").unwrap().contains("20095 Hamburg"));
    assert_eq!(updated.field("client_number").as_deref(), Some("K-0001"));

    let ordered = app.get("/api/clients?order_by=name+DESC").await;
    assert_eq!(ordered.fields("name"), vec!["Müller & Söhne", "C", "B"]);
    let paged = app.get("/api/clients?per_page=2&page=2").await;
    assert_eq!(paged.fields("name"), vec!["C"]);
    assert!(
        paged.body.contains("page=\"2\" per_page=\"2\" total=\"3\""),
        "{}",
        paged.body
    );
    app.get("/api/clients?order_by=nope")
        .await
        .assert_error(400, "order_by: unknown field");
    app.get("/api/clients?per_page=-5")
        .await
        .assert_error(400, "per_page must be a positive integer");
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
    let d = app
        .post(
            "/api/clients",
            "<client><name>D</name><number>7</number></client>",
        )
        .await;
    assert_eq!(d.status, 201, "{}", d.body);
}

#[tokio::test]
async fn settings_read_defaults_and_change_field_by_field() {
    let app = App::spawn().await;
    let defaults = app.get("/api/settings").await;
    assert_eq!(defaults.status, 200);
    assert_eq!(defaults.field("currency_code").as_deref(), Some("EUR"));
    assert_eq!(defaults.field("invoice_number_next").as_deref(), Some("1"));
    let changed = app
        .put(
            "/api/settings",
            "<settings><currency_code>chf</currency_code><due_days>30</due_days>\
             <payment_types>cash,bank_transfer</payment_types><company_name>Faktura AG</company_name></settings>",
        )
        .await;
    assert_eq!(changed.status, 200, "{}", changed.body);
    assert_eq!(changed.field("currency_code").as_deref(), Some("CHF"));
    assert_eq!(changed.field("due_days").as_deref(), Some("30"));
    assert_eq!(changed.field("locale").as_deref(), Some("de_DE"));
    let again = app.get("/api/settings").await;
    assert_eq!(again.field("company_name").as_deref(), Some("Faktura AG"));
    let bad = app
        .put(
            "/api/settings",
            "<settings><currency_code>EURO</currency_code><payment_types>GOLD</payment_types><discount_rate>120</discount_rate></settings>",
        )
        .await;
    bad.assert_error(400, "ISO 4217");
    assert!(
        bad.body.contains("payment_types must list values"),
        "{}",
        bad.body
    );
    assert!(
        bad.body.contains("discount_rate must be between 0 and 100"),
        "{}",
        bad.body
    );
    assert_eq!(
        app.get("/api/settings")
            .await
            .field("currency_code")
            .as_deref(),
        Some("CHF")
    );
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
        .post("/api/taxes", "<tax><name>MwSt</name><rate>19</rate></tax>")
        .await;
    assert_eq!(first.status, 201, "{}", first.body);
    assert_eq!(first.field("is_default").as_deref(), Some("1"));
    assert_eq!(first.field("rate").as_deref(), Some("19"));
    let reduced = app
        .post(
            "/api/taxes",
            "<tax><name>ermäßigt</name><rate>7.0</rate><is_default>1</is_default></tax>",
        )
        .await;
    assert_eq!(reduced.field("rate").as_deref(), Some("7"));
    assert_eq!(
        app.get(&format!("/api/taxes/{}", first.id()))
            .await
            .field("is_default")
            .as_deref(),
        Some("0")
    );
    app.post("/api/taxes", "<tax><name>x</name><rate>101</rate></tax>")
        .await
        .assert_error(400, "rate must be between 0 and 100");
    let updated = app
        .put(
            &format!("/api/taxes/{}", first.id()),
            "<tax><rate>20</rate></tax>",
        )
        .await;
    assert_eq!(updated.field("rate").as_deref(), Some("20"));
    assert_eq!(
        app.get("/api/taxes").await.fields("name"),
        vec!["MwSt", "ermäßigt"]
    );
    assert_eq!(
        app.delete(&format!("/api/taxes/{}", first.id()))
            .await
            .status,
        200
    );
    assert_eq!(
        app.get("/api/taxes").await.header("x-total-count"),
        Some("1")
    );
}
