//! Views of incoming invoices: grouped totals (`group_by`) and the readable PDF.

use base64::Engine as _;
use faktura_tests::{App, check_pdf};

fn root() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn upload(path: &str) -> (Vec<u8>, String) {
    let bytes = std::fs::read(root().join(path)).unwrap();
    let body = format!(
        "<incoming><filename>upload</filename><base64file>{}</base64file></incoming>",
        base64::engine::general_purpose::STANDARD.encode(&bytes)
    );
    (bytes, body)
}

/// An incoming entered by hand.
async fn manual(
    app: &App,
    supplier: u64,
    number: &str,
    date: &str,
    currency: &str,
    net: &str,
    tax: &str,
) -> u64 {
    let gross: f64 = net.parse::<f64>().unwrap() + tax.parse::<f64>().unwrap();
    app.create(
        "/api/incomings",
        &format!(
            "<incoming><supplier_id>{supplier}</supplier_id><number>{number}</number><date>{date}</date>\
             <due_date>2099-01-01</due_date><currency_code>{currency}</currency_code><total_net>{net}</total_net>\
             <total_tax>{tax}</total_tax><total_gross>{gross:.2}</total_gross><payable_amount>{gross:.2}</payable_amount></incoming>"
        ),
    )
    .await
    .id()
}

#[tokio::test]
async fn incomings_group_by_supplier_status_and_period_per_currency() {
    let app = App::spawn().await;
    let a = app
        .create("/api/suppliers", "<supplier><name>A GmbH</name></supplier>")
        .await
        .id();
    let b = app
        .create("/api/suppliers", "<supplier><name>B AG</name></supplier>")
        .await
        .id();
    let first = manual(&app, a, "A-1", "2026-01-15", "EUR", "100", "19").await;
    manual(&app, a, "A-2", "2026-02-03", "EUR", "50", "9.50").await;
    manual(&app, b, "B-1", "2026-02-20", "EUR", "10", "0.70").await;
    // The first is paid.
    let paid = app
        .post(
            "/api/incoming-payments",
            &format!(
                "<incoming-payment><incoming_id>{first}</incoming_id><amount>119</amount></incoming-payment>"
            ),
        )
        .await;
    assert_eq!(paid.status, 201, "{}", paid.body);

    let r = app.get("/api/incomings?group_by=supplier").await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.body.contains("<incoming-groups"), "{}", r.body);
    assert_eq!(
        r.fields("supplier_id"),
        vec![a.to_string(), a.to_string(), b.to_string(), b.to_string()],
        "key and param per group"
    );
    assert_eq!(r.fields("total_net"), vec!["150", "10"]);
    assert_eq!(r.fields("total_gross"), vec!["178.5", "10.7"]);
    assert_eq!(r.fields("open_amount"), vec!["59.5", "10.7"]);
    assert_eq!(r.fields("count"), vec!["2", "1"]);

    // Keys in the order of aggregation; groups ordered by their key values.
    let r = app.get("/api/incomings?group_by=status,month").await;
    assert_eq!(r.status, 200, "{}", r.body);
    let groups: Vec<String> = r
        .body
        .split("<incoming-group>")
        .skip(1)
        .map(|g| {
            let field = |name: &str| {
                let start = g.find(&format!("<{name}")).unwrap();
                let start = g[start..].find('>').unwrap() + start + 1;
                let end = g[start..].find('<').unwrap() + start;
                g[start..end].to_owned()
            };
            format!("{} {} {}", field("status"), field("month"), field("count"))
        })
        .collect();
    assert_eq!(groups, vec!["OPEN 2026-02 2", "PAID 2026-01 1"]);

    // The list filter by supplier, alone and OR-ed.
    for (query, count) in [
        (format!("supplier_id={a}"), "2"),
        (format!("supplier_id={b}"), "1"),
        (format!("supplier_id={a},{b}"), "3"),
        ("supplier_id=999".to_owned(), "0"),
    ] {
        let r = app.get(&format!("/api/incomings?{query}")).await;
        assert_eq!(r.header("x-total-count"), Some(count), "{query}");
    }

    // With the filters; by year and week.
    let r = app
        .get(&format!("/api/incomings?group_by=year&supplier_id={b}"))
        .await;
    assert_eq!(r.fields("year"), vec!["2026", "2026"]);
    assert_eq!(r.fields("count"), vec!["1"]);
    let r = app.get("/api/incomings?group_by=week,day").await;
    assert_eq!(r.fields("week")[0], "2026-W03");
    assert_eq!(r.fields("day")[0], "2026-01-15");

    // Another currency: one list per currency.
    manual(&app, b, "B-2", "2026-03-01", "CHF", "20", "0").await;
    let r = app.get("/api/incomings?group_by=supplier").await;
    assert!(r.body.contains("<incoming-group-lists"), "{}", r.body);
    assert!(r.body.contains("currency_code=\"CHF\""), "{}", r.body);
    assert!(r.body.contains("currency_code=\"EUR\""), "{}", r.body);

    // In JSON too.
    let r = app
        .send(
            "GET",
            "/api/incomings?group_by=supplier&supplier_id=1",
            None,
            &[
                ("X-ServiceApiKey", app.key.as_str()),
                ("Accept", "application/json"),
            ],
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.body.contains("\"count\""), "{}", r.body);

    app.get("/api/incomings?group_by=client")
        .await
        .assert_error(400, "group_by must list values of supplier");
}

#[tokio::test]
async fn an_incoming_shows_as_a_readable_pdf() {
    let app = App::spawn().await;
    // An XML e-invoice: laid out with seller, buyer, lines, totals and payment data.
    let (_, body) = upload("tests/einvoice/samples/01.01a-INVOICE_uncefact.xml");
    let xml = app.create("/api/incomings", &body).await.id();
    let r = app.get(&format!("/api/incomings/{xml}/pdf")).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.header("content-type"), Some("application/pdf"));
    let text = check_pdf(&r.bytes);
    for shown in [
        "123456XX",
        "[Seller name]",
        "[Buyer name]",
        "Porto + Versandkosten",
        "DE79000000001234567890",
        "336,90 EUR",
        "04.04.2016",
        "no problem",
    ] {
        assert!(text.contains(shown), "{shown} in:\n{text}");
    }
    // A PDF upload is its own readable form.
    let (bytes, body) = upload("tests/einvoice/incoming/facturx-gs.pdf");
    let other = app.new_account("other").await;
    let r = app
        .call_as(&other, "POST", "/api/incomings", Some(&body))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let pdf = app
        .call_as(
            &other,
            "GET",
            &format!("/api/incomings/{}/pdf", r.id()),
            None,
        )
        .await;
    assert_eq!(pdf.status, 200);
    assert_eq!(pdf.bytes, bytes);
    // One entered by hand has no e-invoice to show.
    let supplier = app
        .create("/api/suppliers", "<supplier><name>S</name></supplier>")
        .await
        .id();
    let hand = manual(&app, supplier, "H-1", "2026-05-01", "EUR", "1", "0").await;
    app.get(&format!("/api/incomings/{hand}/pdf"))
        .await
        .assert_error(404, "entered by hand");
}

#[tokio::test]
async fn an_imported_incoming_keeps_what_its_file_says() {
    let app = App::spawn().await;
    let (_, body) = upload("tests/einvoice/samples/01.01a-INVOICE_uncefact.xml");
    let imported = app.create("/api/incomings", &body).await;
    let id = imported.id();
    let at = format!("/api/incomings/{id}");
    let r = app
        .put(
            &at,
            "<incoming><label>Checked</label><note>Booked on 4711</note><due_date>2030-01-31</due_date></incoming>",
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.field("label").as_deref(), Some("Checked"));
    assert_eq!(r.field("due_date").as_deref(), Some("2030-01-31"));
    for (body, field) in [
        ("<incoming><number>X-1</number></incoming>", "number"),
        (
            "<incoming><total_gross>1.00</total_gross></incoming>",
            "total_gross",
        ),
        (
            "<incoming><date>2020-01-01</date><label>L</label></incoming>",
            "date",
        ),
    ] {
        app.put(&at, body)
            .await
            .assert_error(400, &format!("{field} comes from the imported e-invoice"));
    }
    // The same values as before are no change.
    let number = imported.field("number").unwrap();
    let same = app
        .put(
            &at,
            &format!("<incoming><number>{number}</number></incoming>"),
        )
        .await;
    assert_eq!(same.status, 200, "{}", same.body);
    let now = app.get(&at).await;
    assert_eq!(now.field("total_gross"), imported.field("total_gross"));
    assert_eq!(now.field("label").as_deref(), Some("Checked"));

    // An incoming entered by hand changes freely, but not into another's number.
    let supplier = imported.field("supplier_id").unwrap().parse().unwrap();
    let hand = manual(&app, supplier, "H-1", "2026-05-01", "EUR", "1", "0").await;
    let r = app
        .put(
            &format!("/api/incomings/{hand}"),
            "<incoming><total_net>2</total_net><number>H-2</number></incoming>",
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    app.put(
        &format!("/api/incomings/{hand}"),
        &format!("<incoming><number>{number}</number></incoming>"),
    )
    .await
    .assert_error(409, &format!("incoming {id} already holds number"));
    assert_eq!(
        app.get(&format!("/api/incomings/{hand}"))
            .await
            .field("number")
            .as_deref(),
        Some("H-2")
    );
}
