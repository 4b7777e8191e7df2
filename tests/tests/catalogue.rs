//! Articles, units and contacts: items from a catalogue, recipients from a contact. Units
//! unique in any case and kept while an article uses one; articles numbered, filtered and
//! priced by the client's price group; items of every kind made from them; contacts
//! resolved from their client, named by documents, e-mailed and in e-invoices.

use faktura_tests::{App, Reply, SmtpSink, free_port};

use crate::support::{INVOICES, Kind, client, complete, create_for};

async fn unit(app: &App, inner: &str) -> Reply {
    app.post("/api/units", &format!("<unit>{inner}</unit>"))
        .await
}

async fn article(app: &App, inner: &str) -> u64 {
    let r = app
        .post("/api/articles", &format!("<article>{inner}</article>"))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    r.id()
}

async fn count(app: &App, path: &str) -> String {
    app.call("HEAD", path, None)
        .await
        .header("x-total-count")
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn unit_codes_are_those_of_the_lists_e_invoices_take_not_any_of_their_shape() {
    let app = App::spawn().await;
    // AB1 is shaped like a unit code, but in neither UN/ECE Recommendation 20 nor 21, the
    // lists of the official rules (BR-CL-23).
    unit(&app, "<name>Kiste</name><unit_code>AB1</unit_code>")
        .await
        .assert_error(400, "unit_code must be a UN/ECE Recommendation 20 code");
    let r = unit(&app, "<name>Kiste</name><unit_code>XBX</unit_code>").await;
    assert_eq!(r.status, 201, "{}", r.body);
    let client = client(&app, "<name>A</name>").await;
    let item = |code: &str| {
        format!(
            "<client_id>{client}</client_id><invoice-items><invoice-item><title>X</title>\
             <unit_price>10</unit_price><unit_code>{code}</unit_code></invoice-item></invoice-items>"
        )
    };
    app.post(&INVOICES.list(), &INVOICES.body(&item("AB1")))
        .await
        .assert_error(400, "unit_code must be a UN/ECE Recommendation 20 code");
    let r = app
        .post(&INVOICES.list(), &INVOICES.body(&item("XBX")))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
}

#[tokio::test]
async fn units_are_unique_in_any_case_and_kept_while_an_article_uses_them() {
    let app = App::spawn().await;
    let hour = unit(&app, "<name>Stunde</name><unit_code>HUR</unit_code>").await;
    assert_eq!(hour.status, 201, "{}", hour.body);
    unit(&app, "<name>STUNDE</name>")
        .await
        .assert_error(400, "name STUNDE is taken by unit");
    unit(&app, "<name>Kilo</name><unit_code>kilo gram</unit_code>")
        .await
        .assert_error(400, "unit_code must be a UN/ECE Recommendation 20 code");
    let kilo = unit(&app, "<name>Kilogramm</name><unit_code>KGM</unit_code>").await;
    assert_eq!(kilo.status, 201, "{}", kilo.body);
    assert_eq!(count(&app, "/api/units?name=kilogramm").await, "1");
    let a = article(
        &app,
        &format!("<title>Beratung</title><unit_id>{}</unit_id>", hour.id()),
    )
    .await;
    app.delete(&format!("/api/units/{}", hour.id()))
        .await
        .assert_error(400, &format!("used by the articles {a}"));
    assert_eq!(
        app.delete(&format!("/api/units/{}", kilo.id()))
            .await
            .status,
        200
    );
    assert_eq!(app.delete(&format!("/api/articles/{a}")).await.status, 200);
    assert_eq!(
        app.delete(&format!("/api/units/{}", hour.id()))
            .await
            .status,
        200
    );
}

#[tokio::test]
async fn articles_are_numbered_checked_and_filtered() {
    let app = App::spawn().await;
    let hour = unit(&app, "<name>h</name><unit_code>HUR</unit_code>")
        .await
        .id();
    let supplier = app
        .post(
            "/api/suppliers",
            "<supplier><name>Lieferant GmbH</name></supplier>",
        )
        .await
        .id();
    let a = article(
        &app,
        &format!(
            "<title>Beratung Senior</title><description>Strategie und Architektur</description>\
             <sales_price>120</sales_price><currency_code>EUR</currency_code><unit_id>{hour}</unit_id>"
        ),
    )
    .await;
    let b = article(
        &app,
        &format!(
            "<title>Server</title><description>Hardware</description><sales_price>900</sales_price>\
             <currency_code>USD</currency_code><supplier_id>{supplier}</supplier_id>"
        ),
    )
    .await;
    let first = app.get(&format!("/api/articles/{a}")).await;
    first.assert_fields(&[("article_number", "ART-00001"), ("archived", "0")]);
    for (inner, problem) in [
        (
            "<sales_price>-1</sales_price>",
            "sales_price must not be negative",
        ),
        (
            "<sales_price3>-0.5</sales_price3>",
            "sales_price3 must not be negative",
        ),
        (
            "<purchase_price>-2</purchase_price>",
            "purchase_price must not be negative",
        ),
        ("<unit_id>999</unit_id>", "unit_id 999 does not exist"),
        ("<tax_id>999</tax_id>", "tax_id 999 does not exist"),
        (
            "<supplier_id>999</supplier_id>",
            "supplier_id 999 does not exist",
        ),
        ("<type>GOODS</type>", "type must be one of"),
        (
            &*format!("<number_pre>{}</number_pre>", "0".repeat(41)),
            "number_pre must be one line of at most 40 characters",
        ),
    ] {
        app.post("/api/articles", &format!("<article>{inner}</article>"))
            .await
            .assert_error(400, problem);
    }
    let tag =
        format!("<article-tag><article_id>{b}</article_id><name>Hardware</name></article-tag>");
    assert_eq!(app.post("/api/article-tags", &tag).await.status, 201);
    for (query, expected) in [
        ("title=beratung", a.to_string()),
        ("description=ARCHITEKTUR", a.to_string()),
        ("article_number=00002", b.to_string()),
        ("currency_code=usd", b.to_string()),
        (&format!("unit_id={hour}"), a.to_string()),
        (&format!("supplier_id={supplier}"), b.to_string()),
        ("tags=hardware", b.to_string()),
        ("tags_any=hardware,other", b.to_string()),
    ] {
        let r = app.get(&format!("/api/articles?{query}")).await;
        assert_eq!(r.fields("id"), vec![expected], "{query}");
    }
    assert_eq!(count(&app, "/api/articles?tags=hardware,other").await, "0");
    assert_eq!(count(&app, "/api/articles").await, "2");
}

per_kind!(an_item_made_from_an_article_takes_what_the_request_does_not_give);
async fn an_item_made_from_an_article_takes_what_the_request_does_not_give(kind: &Kind) {
    let app = App::spawn().await;
    let tax = app
        .post("/api/taxes", "<tax><name>MwSt</name><rate>19</rate></tax>")
        .await
        .id();
    let hour = unit(&app, "<name>Std</name><unit_code>HUR</unit_code>")
        .await
        .id();
    let a = article(
        &app,
        &format!(
            "<title>Beratung</title><description>vor Ort</description><sales_price>100</sales_price>\
             <sales_price3>80</sales_price3><unit_id>{hour}</unit_id><tax_id>{tax}</tax_id><type>SERVICE</type>"
        ),
    )
    .await;
    let item = |inner: &str| {
        format!(
            "<{0}s><{0}><article_id>{a}</article_id><quantity>2</quantity>{inner}</{0}></{0}s>",
            kind.named("item")
        )
    };
    let normal = client(&app, "<name>A</name>").await;
    let third = client(&app, "<name>B</name><price_group>3</price_group>").await;
    for (c, inner, price, title) in [
        (normal, "", "100", "Beratung"),
        (third, "", "80", "Beratung"),
        (
            third,
            "<unit_price>75</unit_price><title>Sonderpreis</title>",
            "75",
            "Sonderpreis",
        ),
    ] {
        let doc = create_for(&app, kind, c, &item(inner)).await;
        let items = app.get(&kind.parts_of("items", doc.id())).await;
        items.assert_fields(&[
            ("article_id", &a.to_string()),
            ("unit_price", price),
            ("title", title),
            ("unit", "Std"),
            ("unit_code", "HUR"),
            ("tax_name", "MwSt"),
            ("tax_rate", "19"),
            ("type", "SERVICE"),
        ]);
        // Made later from the same article, an item added to the document alone.
        let added = app
            .post(
                &kind.parts("items"),
                &kind.part("item", doc.id(), &format!("<article_id>{a}</article_id>")),
            )
            .await;
        assert_eq!(added.status, 201, "{}", added.body);
        added.assert_fields(&[("title", "Beratung")]);
    }
    // A later change of the article changes no item.
    let changed = app
        .put(
            &format!("/api/articles/{a}"),
            "<article><sales_price>500</sales_price></article>",
        )
        .await;
    assert_eq!(changed.status, 200, "{}", changed.body);
    let first = app
        .get(&format!("{}?article_id={a}&per_page=1", kind.list()))
        .await;
    let items = app.get(&kind.parts_of("items", first.id())).await;
    assert_eq!(items.fields("unit_price")[0], "100");
    assert_eq!(
        count(&app, &format!("{}?article_id={a}", kind.list())).await,
        "3"
    );
    app.post(
        &kind.list(),
        &kind.body(&format!(
            "<client_id>{normal}</client_id><{0}s><{0}><article_id>999</article_id></{0}></{0}s>",
            kind.named("item")
        )),
    )
    .await
    .assert_error(400, "item 1: article_id 999 does not exist");
    // Another account's article is no article of this one.
    let other = app.new_account("Other").await;
    let theirs = app
        .call_as(
            &other,
            "POST",
            "/api/clients",
            Some("<client><name>Z</name></client>"),
        )
        .await
        .id();
    let r = app
        .call_as(
            &other,
            "POST",
            &kind.list(),
            Some(&kind.body(&format!("<client_id>{theirs}</client_id>{}", item("")))),
        )
        .await;
    r.assert_error(400, &format!("article_id {a} does not exist"));
}

#[tokio::test]
async fn contacts_resolve_from_their_client_and_address_documents() {
    let app = App::spawn().await;
    let c = client(
        &app,
        "<name>Müller AG</name><street>Weg 1</street><zip>10115</zip><city>Berlin</city>\
         <email>info@mueller.example</email><phone>030 1</phone>",
    )
    .await;
    let other = client(&app, "<name>Other</name>").await;
    app.post("/api/contacts", "<contact><name>X</name></contact>")
        .await
        .assert_error(400, "client_id is mandatory");
    app.get("/api/contacts")
        .await
        .assert_error(400, "client_id is mandatory");
    let contact = app
        .post(
            "/api/contacts",
            &format!(
                "<contact><client_id>{c}</client_id><label>Buchhaltung</label>\
                 <first_name>Erika</first_name><last_name>Muster</last_name>\
                 <email>buchhaltung@mueller.example</email></contact>"
            ),
        )
        .await;
    assert_eq!(contact.status, 201, "{}", contact.body);
    let id = contact.id();
    // Empty fields show the client's.
    contact.assert_fields(&[
        ("name", "Müller AG"),
        ("street", "Weg 1"),
        ("phone", "030 1"),
        ("email", "buchhaltung@mueller.example"),
        ("address", "Müller AG\nErika Muster\nWeg 1\n10115 Berlin"),
    ]);
    assert_eq!(
        count(&app, &format!("/api/contacts?client_id={c}")).await,
        "1"
    );
    assert_eq!(
        count(&app, &format!("/api/contacts?client_id={other}")).await,
        "0"
    );
    let doc = create_for(
        &app,
        &INVOICES,
        c,
        &format!("<contact_id>{id}</contact_id>"),
    )
    .await;
    doc.assert_fields(&[
        ("contact_id", &id.to_string()),
        ("address", "Müller AG\nErika Muster\nWeg 1\n10115 Berlin"),
    ]);
    app.post(
        "/api/invoices",
        &format!("<invoice><client_id>{other}</client_id><contact_id>{id}</contact_id></invoice>"),
    )
    .await
    .assert_error(
        400,
        &format!("contact_id {id} is a contact of client {c}, not of client {other}"),
    );
    app.delete(&format!("/api/contacts/{id}"))
        .await
        .assert_error(400, "is named by documents");
    assert_eq!(app.delete(&INVOICES.at(doc.id())).await.status, 200);
    assert_eq!(app.delete(&format!("/api/contacts/{id}")).await.status, 200);
    // A client's deletion takes its contacts.
    let kept = app
        .post(
            "/api/contacts",
            &format!("<contact><client_id>{other}</client_id><name>Y</name></contact>"),
        )
        .await
        .id();
    assert_eq!(
        app.delete(&format!("/api/clients/{other}")).await.status,
        200
    );
    assert_eq!(app.get(&format!("/api/contacts/{kept}")).await.status, 404);
}

#[tokio::test]
async fn a_document_with_a_contact_is_mailed_to_it_when_no_recipient_is_named() {
    let smtp = SmtpSink::start(free_port()).await;
    let url = smtp.url();
    let app = App::spawn_configured(
        std::sync::Arc::new(tempfile::tempdir().unwrap()),
        faktura_tests::test_component(),
        move |o| o.smtp = Some(url),
    )
    .await;
    let c = client(&app, "<name>A</name><email>a@example.org</email>").await;
    let contact = app
        .post(
            "/api/contacts",
            &format!(
                "<contact><client_id>{c}</client_id><email>person@example.org</email></contact>"
            ),
        )
        .await
        .id();
    let with = create_for(
        &app,
        &INVOICES,
        c,
        &format!(
            "<contact_id>{contact}</contact_id><invoice-items><invoice-item><title>X</title>\
             <unit_price>10</unit_price></invoice-item></invoice-items>"
        ),
    )
    .await
    .id();
    complete(&app, &INVOICES, with).await;
    let sent = app
        .post(&format!("{}/email", INVOICES.at(with)), "<email/>")
        .await;
    assert_eq!(sent.status, 200, "{}", sent.body);
    let messages = smtp.wait_for(1, 30).await;
    assert!(
        messages[0].contains("person@example.org"),
        "{}",
        messages[0]
    );
    let without = create_for(&app, &INVOICES, c, "").await.id();
    complete(&app, &INVOICES, without).await;
    app.post(&format!("{}/email", INVOICES.at(without)), "<email/>")
        .await
        .assert_error(400, "recipients must name at least one");
}

#[tokio::test]
async fn an_xrechnung_made_from_articles_names_the_contact_and_passes_the_official_rules() {
    use crate::einvoice::{SELLER, buyer, validate};
    let app = App::spawn().await;
    assert_eq!(app.put("/api/settings", SELLER).await.status, 200);
    let tax = app
        .post("/api/taxes", "<tax><name>VAT</name><rate>19</rate></tax>")
        .await
        .id();
    let hour = unit(&app, "<name>Stunde</name><unit_code>HUR</unit_code>")
        .await
        .id();
    let piece = unit(&app, "<name>Stück</name><unit_code>H87</unit_code>")
        .await
        .id();
    let kilo = unit(&app, "<name>kg</name><unit_code>KGM</unit_code>")
        .await
        .id();
    let mut lines = String::new();
    for (title, price, unit) in [
        ("Beratung", "120", hour),
        ("Adapter", "15.5", piece),
        ("Kabel", "4.2", kilo),
    ] {
        let a = article(
            &app,
            &format!(
                "<title>{title}</title><sales_price>{price}</sales_price><unit_id>{unit}</unit_id>\
                 <tax_id>{tax}</tax_id><type>PRODUCT</type>"
            ),
        )
        .await;
        lines.push_str(&format!(
            "<invoice-item><article_id>{a}</article_id><quantity>2</quantity></invoice-item>"
        ));
    }
    let c = client(&app, &buyer("")).await;
    let contact = app
        .post(
            "/api/contacts",
            &format!(
                "<contact><client_id>{c}</client_id><first_name>Erika</first_name>\
                 <last_name>Beispiel</last_name><phone>+49 221 555123</phone>\
                 <email>erika.beispiel@musterstadt.example</email></contact>"
            ),
        )
        .await
        .id();
    let doc = create_for(
        &app,
        &INVOICES,
        c,
        &format!("<contact_id>{contact}</contact_id><invoice-items>{lines}</invoice-items>"),
    )
    .await;
    let done = app
        .put(&format!("{}/complete", INVOICES.at(doc.id())), "")
        .await;
    assert_eq!(done.status, 200, "{}", done.body);
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for profile in ["xrechnung-cii", "xrechnung-ubl"] {
        let xml = app
            .get(&format!(
                "{}/e-invoice?profile={profile}",
                INVOICES.at(doc.id())
            ))
            .await;
        assert_eq!(xml.status, 200, "{}", xml.body);
        for (wanted, term) in [
            ("Erika Beispiel", "BT-56"),
            ("+49 221 555123", "BT-57"),
            ("erika.beispiel@musterstadt.example", "BT-58"),
            ("HUR", "BT-130"),
            ("H87", "BT-130"),
            ("KGM", "BT-130"),
        ] {
            assert!(
                xml.body.contains(wanted),
                "{term} {wanted} in {profile}: {}",
                xml.body
            );
        }
        let path = dir.path().join(format!("{profile}.xml"));
        std::fs::write(&path, &xml.bytes).unwrap();
        files.push((path, profile));
    }
    for (path, errors) in validate(dir.path(), &files) {
        assert!(errors.is_empty(), "{path}: {errors:#?}");
    }
}
