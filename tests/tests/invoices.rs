//! Invoices end to end: defaults, numbering, money, items, lifecycle, payments, comments,
//! lists, filters and groups.

use faktura_tests::App;

async fn client(app: &App, body: &str) -> u64 {
    let r = app
        .post("/api/clients", &format!("<client>{body}</client>"))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    r.id()
}

async fn invoice(app: &App, body: &str) -> faktura_tests::Reply {
    let r = app
        .post("/api/invoices", &format!("<invoice>{body}</invoice>"))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    r
}

fn item(q: &str, price: &str, tax_name: &str, rate: &str, reduction: &str) -> String {
    format!(
        "<invoice-item><title>Item</title><unit>Stück</unit><quantity>{q}</quantity><unit_price>{price}</unit_price>\
         <tax_name>{tax_name}</tax_name><tax_rate>{rate}</tax_rate><reduction>{reduction}</reduction></invoice-item>"
    )
}

#[tokio::test]
async fn a_new_invoice_takes_its_defaults_from_settings_and_client() {
    let app = App::spawn().await;
    app.put(
        "/api/settings",
        "<settings><due_days>30</due_days><discount_rate>2</discount_rate><discount_days>10</discount_days>\
         <invoice_intro>Thanks!</invoice_intro><invoice_note>Pay soon.</invoice_note>\
         <payment_types>bank_transfer,cash</payment_types><currency_code>EUR</currency_code></settings>",
    )
    .await;
    let c = client(
        &app,
        "<name>Müller AG</name><street>Weg 1</street><zip>10115</zip><city>Berlin</city>",
    )
    .await;
    let inv = invoice(
        &app,
        &format!("<client_id>{c}</client_id><date>2026-03-01</date>"),
    )
    .await;
    assert_eq!(inv.field("status").as_deref(), Some("DRAFT"));
    assert_eq!(inv.field("invoice_number").as_deref(), Some("INV-00001"));
    assert_eq!(inv.field("due_date").as_deref(), Some("2026-03-31"));
    assert_eq!(inv.field("due_days").as_deref(), Some("30"));
    assert_eq!(inv.field("discount_date").as_deref(), Some("2026-03-11"));
    assert_eq!(inv.field("discount_rate").as_deref(), Some("2"));
    assert_eq!(inv.field("intro").as_deref(), Some("Thanks!"));
    assert_eq!(inv.field("note").as_deref(), Some("Pay soon."));
    assert_eq!(
        inv.field("payment_types").as_deref(),
        Some("BANK_TRANSFER,CASH")
    );
    assert_eq!(inv.field("currency_code").as_deref(), Some("EUR"));
    assert_eq!(
        inv.field("address").as_deref(),
        Some("Müller AG\nWeg 1\n10115 Berlin")
    );
    assert_eq!(inv.field("quote").as_deref(), Some("1"));
    assert_eq!(inv.field("net_gross").as_deref(), Some("NET"));
    assert_eq!(inv.field("total_gross").as_deref(), Some("0"));
    assert!(inv.body.contains("<taxes type=\"array\"/>"), "{}", inv.body);
    // Status DRAFT even when the request says otherwise.
    let other = invoice(
        &app,
        &format!("<client_id>{c}</client_id><status>PAID</status>"),
    )
    .await;
    assert_eq!(other.field("status").as_deref(), Some("DRAFT"));
    assert_eq!(other.field("invoice_number").as_deref(), Some("INV-00002"));
}

#[tokio::test]
async fn three_items_at_two_rates_with_a_percent_reduction_add_up_to_the_cent() {
    let app = App::spawn().await;
    let c = client(&app, "<name>A</name>").await;
    let body = format!(
        "<client_id>{c}</client_id><reduction>10%</reduction><invoice-items>{}{}{}</invoice-items>",
        item("3", "100", "MwSt", "19", ""),
        item("2", "49.99", "ermäßigt", "7", "10%"),
        item("1", "10", "MwSt", "19", "")
    );
    let inv = invoice(&app, &body).await;
    // By hand: items 300.00 + 89.98 (99.98 less 10.00) + 10.00 = 399.98 net; 10 % of that is
    // 40.00, spread 31.01 on the 19 % group (310.00) and 8.99 on the 7 % group (89.98):
    // nets 278.99 and 80.99, taxes 53.01 and 5.67.
    assert_eq!(inv.field("total_net_unreduced").as_deref(), Some("399.98"));
    assert_eq!(inv.field("total_reduction").as_deref(), Some("40"));
    assert_eq!(inv.field("total_net").as_deref(), Some("359.98"));
    assert_eq!(inv.field("total_gross").as_deref(), Some("418.66"));
    assert_eq!(inv.fields("amount"), vec!["53.01", "5.67"]);
    assert_eq!(inv.fields("rate"), vec!["19", "7"]);
    let items = app
        .get(&format!("/api/invoice-items?invoice_id={}", inv.id()))
        .await;
    assert_eq!(items.fields("total_net"), vec!["300", "89.98", "10"]);
    assert_eq!(items.fields("total_gross"), vec!["357", "96.28", "11.9"]);
}

#[tokio::test]
async fn gross_invoices_and_tax_free_clients() {
    let app = App::spawn().await;
    let c = client(&app, "<name>A</name><country_code>DE</country_code>").await;
    let gross = invoice(
        &app,
        &format!(
            "<client_id>{c}</client_id><net_gross>GROSS</net_gross><invoice-items>{}{}</invoice-items>",
            item("1", "119", "MwSt", "19", ""),
            item("2", "10.70", "ermäßigt", "7", "")
        ),
    )
    .await;
    assert_eq!(gross.field("total_gross").as_deref(), Some("140.4"));
    assert_eq!(gross.field("total_net").as_deref(), Some("120"));
    assert_eq!(gross.fields("amount"), vec!["19", "1.4"]);

    let no_tax = client(&app, "<name>B</name><tax_rule>NO_TAX</tax_rule>").await;
    let inv = invoice(
        &app,
        &format!(
            "<client_id>{no_tax}</client_id><invoice-items>{}</invoice-items>",
            item("2", "50", "MwSt", "19", "")
        ),
    )
    .await;
    assert_eq!(inv.field("total_gross").as_deref(), Some("100"));
    assert_eq!(inv.field("total_net").as_deref(), Some("100"));

    app.post(
        "/api/country-taxes",
        "<country-tax><country_code>CH</country_code></country-tax>",
    )
    .await;
    let swiss = client(&app, "<name>C</name><country_code>CH</country_code>").await;
    let inv = invoice(
        &app,
        &format!(
            "<client_id>{swiss}</client_id><invoice-items>{}</invoice-items>",
            item("1", "80", "MwSt", "19", "")
        ),
    )
    .await;
    assert_eq!(inv.field("total_gross").as_deref(), Some("80"));
    // A German client with tax rule COUNTRY pays tax.
    let inv = invoice(
        &app,
        &format!(
            "<client_id>{c}</client_id><invoice-items>{}</invoice-items>",
            item("1", "80", "MwSt", "19", "")
        ),
    )
    .await;
    assert_eq!(inv.field("total_gross").as_deref(), Some("95.2"));
}

#[tokio::test]
async fn items_take_the_default_tax_and_keep_the_totals_current() {
    let app = App::spawn().await;
    app.post("/api/taxes", "<tax><name>VAT</name><rate>20</rate></tax>")
        .await;
    let c = client(&app, "<name>A</name>").await;
    let inv = invoice(&app, &format!("<client_id>{c}</client_id>")).await;
    let id = inv.id();
    let created = app
        .post(
            "/api/invoice-items",
            &format!("<invoice-item><invoice_id>{id}</invoice_id><quantity>2</quantity><unit_price>50</unit_price><title>Work</title></invoice-item>"),
        )
        .await;
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(created.field("tax_name").as_deref(), Some("VAT"));
    assert_eq!(created.field("tax_rate").as_deref(), Some("20"));
    assert_eq!(created.field("total_gross").as_deref(), Some("120"));
    assert_eq!(
        app.get(&format!("/api/invoices/{id}"))
            .await
            .field("total_gross")
            .as_deref(),
        Some("120")
    );
    let item_id = created.id();
    let updated = app
        .put(
            &format!("/api/invoice-items/{item_id}"),
            "<invoice-item><quantity>3</quantity></invoice-item>",
        )
        .await;
    assert_eq!(updated.status, 200, "{}", updated.body);
    assert_eq!(
        app.get(&format!("/api/invoices/{id}"))
            .await
            .field("total_gross")
            .as_deref(),
        Some("180")
    );
    assert_eq!(
        app.get(&format!("/api/invoice-items/{item_id}"))
            .await
            .field("quantity")
            .as_deref(),
        Some("3")
    );
    app.get("/api/invoice-items")
        .await
        .assert_error(400, "invoice_id is mandatory");
    app.post(
        "/api/invoice-items",
        "<invoice-item><invoice_id>999</invoice_id></invoice-item>",
    )
    .await
    .assert_error(400, "invoice_id 999 does not exist");
    app.post(
        "/api/invoice-items",
        &format!(
            "<invoice-item><invoice_id>{id}</invoice_id><unit_price>abc</unit_price></invoice-item>"
        ),
    )
    .await
    .assert_error(400, "unit_price must be a decimal");
    assert_eq!(
        app.delete(&format!("/api/invoice-items/{item_id}"))
            .await
            .status,
        200
    );
    assert_eq!(
        app.get(&format!("/api/invoices/{id}"))
            .await
            .field("total_gross")
            .as_deref(),
        Some("0")
    );
    // Once completed, items are frozen.
    let frozen = app
        .post("/api/invoice-items", &format!("<invoice-item><invoice_id>{id}</invoice_id><unit_price>5</unit_price></invoice-item>"))
        .await;
    assert_eq!(frozen.status, 201);
    assert_eq!(
        app.put(&format!("/api/invoices/{id}/complete"), "")
            .await
            .status,
        200
    );
    app.put(
        &format!("/api/invoice-items/{}", frozen.id()),
        "<invoice-item><quantity>9</quantity></invoice-item>",
    )
    .await
    .assert_error(400, "items change only while the invoice is a DRAFT");
    app.delete(&format!("/api/invoice-items/{}", frozen.id()))
        .await
        .assert_error(400, "DRAFT");
    assert_eq!(
        app.get(&format!("/api/invoices/{id}"))
            .await
            .field("total_gross")
            .as_deref(),
        Some("6")
    );
}

#[tokio::test]
async fn numbers_follow_prefixes_placeholders_and_stay_unique() {
    let app = App::spawn().await;
    let c = client(&app, "<name>A</name>").await;
    let a = invoice(&app, &format!("<client_id>{c}</client_id><number_pre>RE-[YYYY]-</number_pre><number_length>3</number_length><date>2026-05-02</date>")).await;
    assert_eq!(a.field("invoice_number").as_deref(), Some("RE-2026-001"));
    let b = invoice(&app, &format!("<client_id>{c}</client_id><number_pre>RE-[YYYY]-</number_pre><number_length>3</number_length><date>2027-01-02</date>")).await;
    assert_eq!(
        b.field("invoice_number").as_deref(),
        Some("RE-2027-001"),
        "a new year starts a new range"
    );
    let explicit = invoice(
        &app,
        &format!("<client_id>{c}</client_id><number>42</number>"),
    )
    .await;
    assert_eq!(
        explicit.field("invoice_number").as_deref(),
        Some("INV-00042")
    );
    app.post(
        "/api/invoices",
        &format!("<invoice><client_id>{c}</client_id><number>42</number></invoice>"),
    )
    .await
    .assert_error(400, "number 42 is already used");
    let next = invoice(&app, &format!("<client_id>{c}</client_id>")).await;
    assert_eq!(next.field("invoice_number").as_deref(), Some("INV-00043"));
}

#[tokio::test]
async fn concurrent_creates_get_distinct_consecutive_numbers() {
    let app = std::sync::Arc::new(App::spawn().await);
    let c = client(&app, "<name>A</name>").await;
    let mut tasks = Vec::new();
    for _ in 0..20 {
        let app = app.clone();
        tasks.push(tokio::spawn(async move {
            let r = app
                .post(
                    "/api/invoices",
                    &format!("<invoice><client_id>{c}</client_id></invoice>"),
                )
                .await;
            assert_eq!(r.status, 201, "{}", r.body);
            r.field("number").unwrap().parse::<u32>().unwrap()
        }));
    }
    let mut numbers = Vec::new();
    for t in tasks {
        numbers.push(t.await.unwrap());
    }
    numbers.sort();
    assert_eq!(numbers, (1..=20).collect::<Vec<_>>());
}

#[tokio::test]
async fn the_lifecycle_with_payments_cancel_and_comments() {
    let app = App::spawn().await;
    let c = client(&app, "<name>A</name>").await;
    let inv = invoice(
        &app,
        &format!(
            "<client_id>{c}</client_id><invoice-items>{}</invoice-items>",
            item("1", "100", "VAT", "0", "")
        ),
    )
    .await;
    let id = inv.id();
    let url = format!("/api/invoices/{id}");
    // Rules bound to DRAFT.
    app.post(
        "/api/invoice-payments",
        &format!(
            "<invoice-payment><invoice_id>{id}</invoice_id><amount>10</amount></invoice-payment>"
        ),
    )
    .await
    .assert_error(
        400,
        "payments can be booked only for OPEN or OVERDUE invoices",
    );
    app.put(&format!("{url}/cancel"), "")
        .await
        .assert_error(400, "cannot be canceled");
    let completed = app
        .call("PUT", &format!("{url}/complete"), Some("<complete/>"))
        .await;
    assert_eq!(completed.status, 200, "{}", completed.body);
    assert!(completed.body.is_empty());
    assert_eq!(app.get(&url).await.field("status").as_deref(), Some("OPEN"));
    // Rules bound to OPEN: each broken one answers 400 and changes nothing.
    let before = app.get(&url).await.body;
    let comments_before = app
        .get(&format!("/api/invoice-comments?invoice_id={id}"))
        .await
        .body;
    app.put(&url, "<invoice><label>x</label></invoice>")
        .await
        .assert_error(400, "only a DRAFT invoice can be changed");
    app.put(&format!("{url}/complete"), "")
        .await
        .assert_error(400, "only a DRAFT invoice can be completed");
    app.put(&format!("{url}/uncancel"), "")
        .await
        .assert_error(400, "only a CANCELED invoice can be uncanceled");
    app.post(
        "/api/invoice-items",
        &format!("<invoice-item><invoice_id>{id}</invoice_id></invoice-item>"),
    )
    .await
    .assert_error(400, "DRAFT");
    assert_eq!(app.get(&url).await.body, before);
    assert_eq!(
        app.get(&format!("/api/invoice-comments?invoice_id={id}"))
            .await
            .body,
        comments_before
    );

    let p1 = app
        .post(
            "/api/invoice-payments",
            &format!("<invoice-payment><invoice_id>{id}</invoice_id><amount>40</amount><type>cash</type><date>2026-11-20</date></invoice-payment>"),
        )
        .await;
    assert_eq!(p1.status, 201, "{}", p1.body);
    assert_eq!(p1.field("type").as_deref(), Some("CASH"));
    let after = app.get(&url).await;
    assert_eq!(after.field("status").as_deref(), Some("OPEN"));
    assert_eq!(after.field("paid_amount").as_deref(), Some("40"));
    assert_eq!(after.field("open_amount").as_deref(), Some("60"));
    let p2 = app
        .post("/api/invoice-payments", &format!("<invoice-payment><invoice_id>{id}</invoice_id><amount>60</amount></invoice-payment>"))
        .await;
    assert_eq!(app.get(&url).await.field("status").as_deref(), Some("PAID"));
    assert_eq!(
        app.get(&url).await.field("open_amount").as_deref(),
        Some("0")
    );
    app.post(
        "/api/invoice-payments",
        &format!(
            "<invoice-payment><invoice_id>{id}</invoice_id><amount>1</amount></invoice-payment>"
        ),
    )
    .await
    .assert_error(400, "this invoice is PAID");
    app.put(
        &format!("/api/invoice-payments/{}", p2.id()),
        "<invoice-payment/>",
    )
    .await
    .assert_error(405, "method not allowed");
    assert_eq!(
        app.delete(&format!("/api/invoice-payments/{}", p2.id()))
            .await
            .status,
        200
    );
    assert_eq!(app.get(&url).await.field("status").as_deref(), Some("OPEN"));
    let marked = app
        .post(
            "/api/invoice-payments",
            &format!("<invoice-payment><invoice_id>{id}</invoice_id><amount>5</amount><mark_invoice_as_paid>1</mark_invoice_as_paid></invoice-payment>"),
        )
        .await;
    assert_eq!(marked.status, 201);
    assert_eq!(app.get(&url).await.field("status").as_deref(), Some("PAID"));
    let list = app
        .get(&format!("/api/invoice-payments?invoice_id={id}"))
        .await;
    assert_eq!(list.fields("amount"), vec!["40", "5"]);
    app.get("/api/invoice-payments")
        .await
        .assert_error(400, "invoice_id is mandatory");
    app.post(
        "/api/invoice-payments",
        &format!(
            "<invoice-payment><invoice_id>{id}</invoice_id><amount>ten</amount></invoice-payment>"
        ),
    )
    .await
    .assert_error(400, "amount must be a decimal");
    app.post("/api/invoice-payments", &format!("<invoice-payment><invoice_id>{id}</invoice_id><amount>5</amount><type>GOLD</type></invoice-payment>"))
        .await
        .assert_error(400, "type must be one of");

    assert_eq!(app.put(&format!("{url}/cancel"), "").await.status, 200);
    assert_eq!(
        app.get(&url).await.field("status").as_deref(),
        Some("CANCELED")
    );
    app.put(&format!("{url}/cancel"), "")
        .await
        .assert_error(400, "already canceled");
    assert_eq!(app.put(&format!("{url}/uncancel"), "").await.status, 200);
    assert_eq!(app.get(&url).await.field("status").as_deref(), Some("PAID"));

    let user_comment = app
        .post("/api/invoice-comments", &format!("<invoice-comment><invoice_id>{id}</invoice_id><comment>Called the client</comment></invoice-comment>"))
        .await;
    assert_eq!(user_comment.status, 201, "{}", user_comment.body);
    assert_eq!(user_comment.field("actionkey").as_deref(), Some("COMMENT"));
    let comments = app
        .get(&format!("/api/invoice-comments?invoice_id={id}"))
        .await;
    assert_eq!(
        comments.fields("actionkey"),
        vec![
            "CREATE",
            "STATUS",
            "PAYMENT",
            "PAYMENT",
            "STATUS",
            "DELETE_PAYMENT",
            "STATUS",
            "PAYMENT",
            "STATUS",
            "CANCEL",
            "UNCANCEL",
            "COMMENT"
        ]
    );
    app.get("/api/invoice-comments")
        .await
        .assert_error(400, "invoice_id is mandatory");
    app.post(
        "/api/invoice-comments",
        &format!("<invoice-comment><invoice_id>{id}</invoice_id></invoice-comment>"),
    )
    .await
    .assert_error(400, "comment is mandatory");
    assert_eq!(
        app.get(&format!("/api/invoice-comments/{}", user_comment.id()))
            .await
            .status,
        200
    );
    assert_eq!(
        app.delete(&format!("/api/invoice-comments/{}", user_comment.id()))
            .await
            .status,
        200
    );

    // Deleting the invoice takes items, payments and comments with it.
    assert_eq!(app.delete(&url).await.status, 200);
    assert_eq!(app.get(&url).await.status, 404);
    assert_eq!(
        app.get(&format!("/api/invoice-payments/{}", p1.id()))
            .await
            .status,
        404
    );
    assert_eq!(
        app.get(&format!("/api/invoice-comments?invoice_id={id}"))
            .await
            .status,
        404
    );
}

#[tokio::test]
async fn an_open_invoice_past_its_due_date_reads_and_filters_as_overdue() {
    let app = App::spawn().await;
    let c = client(&app, "<name>A</name>").await;
    let old = invoice(
        &app,
        &format!(
            "<client_id>{c}</client_id><date>2020-01-01</date><due_date>2020-01-15</due_date>"
        ),
    )
    .await;
    let fresh = invoice(&app, &format!("<client_id>{c}</client_id>")).await;
    for id in [old.id(), fresh.id()] {
        assert_eq!(
            app.put(&format!("/api/invoices/{id}/complete"), "")
                .await
                .status,
            200
        );
    }
    assert_eq!(
        app.get(&format!("/api/invoices/{}", old.id()))
            .await
            .field("status")
            .as_deref(),
        Some("OVERDUE")
    );
    let overdue = app.get("/api/invoices?status=OVERDUE").await;
    assert_eq!(
        overdue.fields("invoice_number"),
        vec![old.field("invoice_number").unwrap()]
    );
    let open = app.get("/api/invoices?status=open").await;
    assert_eq!(
        open.fields("invoice_number"),
        vec![fresh.field("invoice_number").unwrap()]
    );
    let both = app.get("/api/invoices?status=OPEN,OVERDUE").await;
    assert_eq!(both.header("x-total-count"), Some("2"));
}

#[tokio::test]
async fn bad_input_gets_400_and_changes_nothing() {
    let app = App::spawn().await;
    let c = client(&app, "<name>A</name>").await;
    let cases = [
        (
            "<invoice><date>2026-01-01</date></invoice>".to_string(),
            "client_id is mandatory",
        ),
        (
            "<invoice><client_id>999</client_id></invoice>".to_string(),
            "client_id 999 does not exist",
        ),
        (
            format!("<invoice><client_id>{c}</client_id><date>2026-02-30</date></invoice>"),
            "date must be a date",
        ),
        (
            format!("<invoice><client_id>{c}</client_id><quote>abc</quote></invoice>"),
            "quote must be a decimal",
        ),
        (
            format!("<invoice><client_id>{c}</client_id><reduction>lots</reduction></invoice>"),
            "reduction must be an amount",
        ),
        (
            format!("<invoice><client_id>{c}</client_id><net_gross>BOTH</net_gross></invoice>"),
            "net_gross must be one of",
        ),
        (
            format!(
                "<invoice><client_id>{c}</client_id><invoice-items><invoice-item><quantity>x</quantity></invoice-item></invoice-items></invoice>"
            ),
            "quantity must be a decimal",
        ),
        (
            format!(
                "<invoice><client_id>{c}</client_id><date>2026-05-01</date><due_date>2026-04-01</due_date></invoice>"
            ),
            "is before the invoice date",
        ),
    ];
    for (body, fragment) in &cases {
        app.post("/api/invoices", body)
            .await
            .assert_error(400, fragment);
    }
    for (query, fragment) in [
        ("status=LATE", "status must list values"),
        ("from=2026-05-01&to=2026-04-01", "is after to"),
        ("from=2026-13-01", "from must be a date"),
        ("client_id=abc", "client_id must be a positive integer"),
        ("payment_type=GOLD", "payment_type must list values"),
        ("group_by=decade", "group_by must list values"),
        ("order_by=colour", "order_by: unknown field"),
    ] {
        app.get(&format!("/api/invoices?{query}"))
            .await
            .assert_error(400, fragment);
    }
    assert_eq!(
        app.get("/api/invoices").await.header("x-total-count"),
        Some("0")
    );
    assert_eq!(
        app.get("/api/settings")
            .await
            .field("invoice_number_next")
            .as_deref(),
        Some("1")
    );
}

#[tokio::test]
async fn lists_page_filter_and_order() {
    let app = App::spawn().await;
    let a = client(&app, "<name>A</name>").await;
    let b = client(&app, "<name>B</name>").await;
    for i in 0..250 {
        let (cl, label, date) = if i % 5 == 0 {
            (b, "Project Apollo", "2026-02-10")
        } else {
            (a, "Routine", "2026-03-15")
        };
        let r = app
            .post(
                "/api/invoices",
                &format!("<invoice><client_id>{cl}</client_id><label>{label}</label><date>{date}</date><intro>Intro {i}</intro><note>Note {i}</note></invoice>"),
            )
            .await;
        assert_eq!(r.status, 201);
    }
    let page3 = app.get("/api/invoices?per_page=100&page=3").await;
    assert!(
        page3
            .body
            .contains("page=\"3\" per_page=\"100\" total=\"250\""),
        "{}",
        &page3.body[..200]
    );
    assert_eq!(page3.fields("invoice_number").len(), 50);
    assert_eq!(page3.fields("invoice_number")[0], "INV-00201");
    assert_eq!(
        app.call("HEAD", "/api/invoices", None)
            .await
            .header("x-total-count"),
        Some("250")
    );
    let count = |q: &str| {
        let app = &app;
        let q = q.to_string();
        async move {
            app.call("HEAD", &format!("/api/invoices?{q}"), None)
                .await
                .header("x-total-count")
                .unwrap()
                .to_string()
        }
    };
    assert_eq!(count(&format!("client_id={b}")).await, "50");
    assert_eq!(count("label=apollo").await, "50");
    assert_eq!(count("intro=intro%20249").await, "1");
    assert_eq!(count("note=NOTE+1").await, "111"); // 1, 10-19, 100-199
    assert_eq!(count("invoice_number=inv-0010").await, "10"); // INV-00100 .. INV-00109
    assert_eq!(count("from=2026-03-01").await, "200");
    assert_eq!(count("to=2026-02-28").await, "50");
    assert_eq!(count("from=2026-02-10&to=2026-02-10").await, "50");
    assert_eq!(count("status=DRAFT").await, "250");
    assert_eq!(count("status=PAID,CANCELED").await, "0");
    assert_eq!(
        count(&format!(
            "client_id={a}&label=routine&from=2026-03-15&status=DRAFT"
        ))
        .await,
        "200"
    );
    assert_eq!(count(&format!("client_id={a}&label=apollo")).await, "0");
    // Pay one to check the payment type filter.
    let first = app
        .get(&format!("/api/invoices?client_id={b}&per_page=1"))
        .await
        .id();
    app.put(&format!("/api/invoices/{first}/complete"), "")
        .await;
    app.post("/api/invoice-payments", &format!("<invoice-payment><invoice_id>{first}</invoice_id><amount>0.01</amount><type>PAYPAL</type></invoice-payment>")).await;
    assert_eq!(count("payment_type=paypal,cash").await, "1");
    assert_eq!(count("payment_type=CASH").await, "0");
    let ordered = app
        .get("/api/invoices?order_by=date+DESC,id+DESC&per_page=2")
        .await;
    assert_eq!(ordered.fields("date"), vec!["2026-03-15", "2026-03-15"]);
    assert_eq!(
        ordered.fields("invoice_number"),
        vec!["INV-00250", "INV-00249"]
    );
}

#[tokio::test]
async fn groups_by_client_month_and_iso_week_across_the_year_boundary() {
    let app = App::spawn().await;
    let a = client(&app, "<name>A</name>").await;
    let b = client(&app, "<name>B</name>").await;
    for (cl, date, price) in [
        (a, "2026-12-28", "10"),
        (a, "2026-12-31", "20"),
        (a, "2027-01-03", "30"),
        (b, "2027-01-04", "40"),
        (b, "2027-01-20", "50"),
    ] {
        invoice(
            &app,
            &format!(
                "<client_id>{cl}</client_id><date>{date}</date><invoice-items>{}</invoice-items>",
                item("1", price, "X", "10", "")
            ),
        )
        .await;
    }
    let by_week = app.get("/api/invoices?group_by=week").await;
    assert_eq!(by_week.status, 200, "{}", by_week.body);
    assert!(
        by_week
            .body
            .contains("<invoice-groups type=\"array\" currency_code=\"EUR\">"),
        "{}",
        by_week.body
    );
    assert_eq!(
        by_week.fields("week"),
        vec![
            "2026-W53", "2026-W53", "2027-W01", "2027-W01", "2027-W03", "2027-W03"
        ]
    );
    assert_eq!(by_week.fields("total_net"), vec!["60", "40", "50"]);
    assert_eq!(by_week.fields("total_gross"), vec!["66", "44", "55"]);
    let by_client_month = app.get("/api/invoices?group_by=client,month").await;
    let groups: Vec<(String, String)> = by_client_month
        .fields("client_id")
        .into_iter()
        .step_by(2)
        .zip(by_client_month.fields("month").into_iter().step_by(2))
        .collect();
    assert_eq!(
        groups,
        vec![
            (a.to_string(), "2026-12".to_string()),
            (a.to_string(), "2027-01".to_string()),
            (b.to_string(), "2027-01".to_string()),
        ]
    );
    assert_eq!(by_client_month.fields("total_net"), vec!["30", "30", "90"]);
    assert!(
        by_client_month.body.contains("<invoice-params>"),
        "{}",
        by_client_month.body
    );
    let filtered = app
        .get(&format!("/api/invoices?group_by=year&client_id={b}"))
        .await;
    assert_eq!(filtered.fields("year"), vec!["2027", "2027"]);
    assert_eq!(filtered.fields("total_net"), vec!["90"]);
}

#[tokio::test]
async fn invoices_of_one_account_are_invisible_to_another() {
    let app = App::spawn().await;
    let other = app.new_account("Other").await;
    let c = client(&app, "<name>A</name>").await;
    let inv = invoice(
        &app,
        &format!(
            "<client_id>{c}</client_id><invoice-items>{}</invoice-items>",
            item("1", "5", "X", "0", "")
        ),
    )
    .await;
    let id = inv.id();
    app.put(&format!("/api/invoices/{id}/complete"), "").await;
    let pay = app
        .post(
            "/api/invoice-payments",
            &format!(
                "<invoice-payment><invoice_id>{id}</invoice_id><amount>1</amount></invoice-payment>"
            ),
        )
        .await;
    let items = app
        .get(&format!("/api/invoice-items?invoice_id={id}"))
        .await;
    let item_id: u64 = items.field("id").unwrap().parse().unwrap();
    let comment = app
        .get(&format!("/api/invoice-comments?invoice_id={id}"))
        .await;
    let comment_id: u64 = comment.field("id").unwrap().parse().unwrap();
    for path in [
        format!("/api/invoices/{id}"),
        format!("/api/invoice-items/{item_id}"),
        format!("/api/invoice-payments/{}", pay.id()),
        format!("/api/invoice-comments/{comment_id}"),
        format!("/api/invoice-items?invoice_id={id}"),
        format!("/api/invoice-payments?invoice_id={id}"),
        format!("/api/invoice-comments?invoice_id={id}"),
    ] {
        assert_eq!(
            app.call_as(&other, "GET", &path, None).await.status,
            404,
            "{path}"
        );
    }
    for path in [
        format!("/api/invoices/{id}/cancel"),
        format!("/api/invoices/{id}"),
    ] {
        assert_eq!(
            app.call_as(&other, "PUT", &path, Some("<invoice/>"))
                .await
                .status,
            404,
            "{path}"
        );
    }
    assert_eq!(
        app.call_as(
            &other,
            "DELETE",
            &format!("/api/invoice-payments/{}", pay.id()),
            None
        )
        .await
        .status,
        404
    );
    app.call_as(
        &other,
        "POST",
        "/api/invoice-payments",
        Some(&format!(
            "<invoice-payment><invoice_id>{id}</invoice_id><amount>1</amount></invoice-payment>"
        )),
    )
    .await
    .assert_error(400, "does not exist");
    app.call_as(
        &other,
        "POST",
        "/api/invoices",
        Some(&format!("<invoice><client_id>{c}</client_id></invoice>")),
    )
    .await
    .assert_error(400, "does not exist");
    assert_eq!(
        app.call_as(&other, "GET", "/api/invoices", None)
            .await
            .header("x-total-count"),
        Some("0")
    );
    // The client with documents cannot be deleted.
    app.delete(&format!("/api/clients/{c}"))
        .await
        .assert_error(400, "has documents");
}

#[tokio::test]
async fn invoice_tags_are_added_listed_filtered_and_removed() {
    let app = App::spawn().await;
    let c = client(&app, "<name>A</name>").await;
    let a = invoice(&app, &format!("<client_id>{c}</client_id>"))
        .await
        .id();
    invoice(&app, &format!("<client_id>{c}</client_id>")).await;
    let tag = app
        .post(
            "/api/invoice-tags",
            &format!("<invoice-tag><invoice_id>{a}</invoice_id><name>urgent</name></invoice-tag>"),
        )
        .await;
    assert_eq!(tag.status, 201, "{}", tag.body);
    assert_eq!(
        app.get(&format!("/api/invoice-tags?invoice_id={a}"))
            .await
            .fields("name"),
        vec!["urgent"]
    );
    assert_eq!(
        app.get("/api/invoices?tags=URGENT")
            .await
            .header("x-total-count"),
        Some("1")
    );
    app.post(
        "/api/invoice-tags",
        "<invoice-tag><invoice_id>999</invoice_id><name>x</name></invoice-tag>",
    )
    .await
    .assert_error(400, "invoice_id 999 does not exist");
    assert_eq!(
        app.delete(&format!("/api/invoice-tags/{}", tag.id()))
            .await
            .status,
        200
    );
    assert_eq!(
        app.get("/api/invoices?tags=urgent")
            .await
            .header("x-total-count"),
        Some("0")
    );
}
