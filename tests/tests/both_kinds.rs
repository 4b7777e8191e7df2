//! Invoices and credit notes end to end: defaults, numbering, money, items, lifecycle,
//! payments, comments, tags, lists, filters, groups and account isolation. Each test is
//! written once against a `Kind` and runs for both kinds (`per_kind!`); what only one kind
//! does is in invoices.rs or credit_notes.rs.

use faktura_tests::{App, Reply};

use crate::support::{
    Kind, app_with_client, assert_counts, client, complete, create_for, default_settings, item,
    items,
};

per_kind!(a_new_document_takes_its_defaults_from_settings_and_client);
async fn a_new_document_takes_its_defaults_from_settings_and_client(kind: &Kind) {
    let app = App::spawn().await;
    let settings = app.put("/api/settings", &default_settings(kind)).await;
    assert_eq!(settings.status, 200, "{}", settings.body);
    let c = client(
        &app,
        "<name>Müller AG</name><street>Weg 1</street><zip>10115</zip><city>Berlin</city>",
    )
    .await;
    let doc = create_for(&app, kind, c, "<date>2026-03-01</date>").await;
    assert!(
        doc.body.contains(&format!("<{}>", kind.singular)),
        "{}",
        doc.body
    );
    let first = format!("{}00001", kind.number_pre);
    let number = kind.number();
    let mut expected = vec![
        ("status", "DRAFT"),
        (number.as_str(), first.as_str()),
        ("intro", "Thanks!"),
        ("note", "Pay soon."),
        ("address", "Müller AG\nWeg 1\n10115 Berlin"),
        ("net_gross", "NET"),
        ("total_gross", "0"),
    ];
    if kind.billing {
        expected.extend([("due_date", "2026-03-31"), ("due_days", "30")]);
    }
    if kind.priced {
        expected.extend([("currency_code", "EUR"), ("quote", "1")]);
    }
    if kind.singular == "offer" {
        // The settings' offer_validity_days, 30 unless changed.
        expected.extend([("validity_days", "30"), ("validity_date", "2026-03-31")]);
    }
    doc.assert_fields(&expected);
    assert!(doc.body.contains("<taxes type=\"array\"/>"), "{}", doc.body);
    // Status DRAFT even when the request says otherwise.
    let other = create_for(&app, kind, c, "<status>PAID</status>").await;
    let second = format!("{}00002", kind.number_pre);
    other.assert_fields(&[("status", "DRAFT"), (&kind.number(), &second)]);
    app.get(&kind.at(999))
        .await
        .assert_error(404, &format!("{} 999 does not exist", kind.label));
}

per_kind!(priced: three_items_at_two_rates_with_a_percent_reduction_add_up_to_the_cent);
async fn three_items_at_two_rates_with_a_percent_reduction_add_up_to_the_cent(kind: &Kind) {
    let (app, c) = app_with_client().await;
    let items = items(
        kind,
        &[
            item(kind, "3", "100", "MwSt", "19", ""),
            item(kind, "2", "49.99", "ermäßigt", "7", "10%"),
            item(kind, "1", "10", "MwSt", "19", ""),
        ],
    );
    let doc = create_for(&app, kind, c, &format!("<reduction>10%</reduction>{items}")).await;
    // By hand: items 300.00 + 89.98 (99.98 less 10.00) + 10.00 = 399.98 net; 10 % of that is
    // 40.00, spread 31.01 on the 19 % group (310.00) and 8.99 on the 7 % group (89.98):
    // nets 278.99 and 80.99, taxes 53.01 and 5.67.
    doc.assert_fields(&[
        ("total_net_unreduced", "399.98"),
        ("total_reduction", "40"),
        ("total_net", "359.98"),
        ("total_gross", "418.66"),
    ]);
    assert_eq!(doc.fields("amount"), vec!["53.01", "5.67"]);
    assert_eq!(doc.fields("rate"), vec!["19", "7"]);
    let items = app.get(&kind.parts_of("items", doc.id())).await;
    assert_eq!(items.fields("total_net"), vec!["300", "89.98", "10"]);
    assert_eq!(items.fields("total_gross"), vec!["357", "96.28", "11.9"]);
}

per_kind!(priced: a_gross_document_with_a_percent_reduction_spreads_it_over_the_rates);
async fn a_gross_document_with_a_percent_reduction_spreads_it_over_the_rates(kind: &Kind) {
    let (app, c) = app_with_client().await;
    let gross = "<net_gross>GROSS</net_gross><reduction>10%</reduction>";
    let items = items(
        kind,
        &[
            item(kind, "2", "59.50", "MwSt", "19", ""),
            item(kind, "1", "21.40", "MwSt", "7", ""),
        ],
    );
    let doc = create_for(&app, kind, c, &format!("{gross}{items}")).await;
    // GROSS: 119.00 + 21.40 = 140.40 gross, less 10 % (14.04) = 126.36, spread 11.90 / 2.14:
    // 107.10 gross at 19 % (net 90.00, tax 17.10) and 19.26 at 7 % (net 18.00, tax 1.26).
    doc.assert_fields(&[
        ("total_gross_unreduced", "140.4"),
        ("total_reduction", "14.04"),
        ("total_gross", "126.36"),
        ("total_net", "108"),
    ]);
    assert_eq!(doc.fields("amount"), vec!["17.1", "1.26"]);
}

per_kind!(gross_documents_and_tax_free_clients);
async fn gross_documents_and_tax_free_clients(kind: &Kind) {
    let app = App::spawn().await;
    let c = client(&app, "<name>A</name><country_code>DE</country_code>").await;
    let two_rates = items(
        kind,
        &[
            item(kind, "1", "119", "MwSt", "19", ""),
            item(kind, "2", "10.70", "ermäßigt", "7", ""),
        ],
    );
    let gross = format!("<net_gross>GROSS</net_gross>{two_rates}");
    let gross = create_for(&app, kind, c, &gross).await;
    gross.assert_fields(&[("total_gross", "140.4"), ("total_net", "120")]);
    assert_eq!(gross.fields("amount"), vec!["19", "1.4"]);

    // A document for `client` with one item: `quantity` at `price`, 19 % tax.
    let with_one_item = async |client: u64, quantity: &str, price: &str| {
        let one = items(kind, &[item(kind, quantity, price, "MwSt", "19", "")]);
        create_for(&app, kind, client, &one).await
    };
    let no_tax = client(&app, "<name>B</name><tax_rule>NO_TAX</tax_rule>").await;
    let doc = with_one_item(no_tax, "2", "50").await;
    doc.assert_fields(&[("total_gross", "100"), ("total_net", "100")]);

    app.create(
        "/api/country-taxes",
        "<country-tax><country_code>CH</country_code></country-tax>",
    )
    .await;
    let swiss = client(&app, "<name>C</name><country_code>CH</country_code>").await;
    let doc = with_one_item(swiss, "1", "80").await;
    doc.assert_fields(&[("total_gross", "80")]);
    // A German client with tax rule COUNTRY pays tax.
    let doc = with_one_item(c, "1", "80").await;
    doc.assert_fields(&[("total_gross", "95.2")]);
}

per_kind!(items_take_the_default_tax_and_keep_the_totals_current);
async fn items_take_the_default_tax_and_keep_the_totals_current(kind: &Kind) {
    let (app, c) = app_with_client().await;
    app.create("/api/taxes", "<tax><name>VAT</name><rate>20</rate></tax>")
        .await;
    let id = create_for(&app, kind, c, "").await.id();
    let doc_url = kind.at(id);
    let items_url = kind.parts("items");
    let item_of = |id: u64, inner: &str| kind.part("item", id, inner);
    let add = async |inner: &str| app.post(&items_url, &item_of(id, inner)).await;
    let total_gross = async || app.get(&doc_url).await.field("total_gross");
    let created = add("<quantity>2</quantity><unit_price>50</unit_price><title>Work</title>").await;
    assert_eq!(created.status, 201, "{}", created.body);
    created.assert_fields(&[
        ("tax_name", "VAT"),
        ("tax_rate", "20"),
        ("total_gross", "120"),
    ]);
    assert_eq!(total_gross().await.as_deref(), Some("120"));
    let item_url = format!("{items_url}/{}", created.id());
    let second = add("<title>Extra</title><unit_price>10</unit_price>").await;
    assert_eq!(second.status, 201, "{}", second.body);
    let listed = app.get(&kind.parts_of("items", id)).await;
    assert!(
        listed
            .body
            .contains(&format!("<{} type=\"array\"", kind.named("items"))),
        "{}",
        listed.body
    );
    assert_eq!(listed.fields(&kind.parent()), vec![id.to_string(); 2]);
    let second_url = format!("{items_url}/{}", second.id());
    assert_eq!(app.delete(&second_url).await.status, 200);
    let quantity = |q: u32| format!("<{0}><quantity>{q}</quantity></{0}>", kind.named("item"));
    let updated = app.put(&item_url, &quantity(3)).await;
    assert_eq!(updated.status, 200, "{}", updated.body);
    assert_eq!(total_gross().await.as_deref(), Some("180"));
    app.get(&item_url).await.assert_fields(&[("quantity", "3")]);
    // A draft's own fields change too.
    let relabeled = app
        .put(&doc_url, &kind.body("<label>Retoure 42</label>"))
        .await;
    assert_eq!(relabeled.status, 200, "{}", relabeled.body);
    relabeled.assert_fields(&[("label", "Retoure 42")]);
    app.get(&items_url)
        .await
        .assert_error(400, &format!("{} is mandatory", kind.parent()));
    app.post(&items_url, &item_of(999, ""))
        .await
        .assert_error(400, &format!("{} 999 does not exist", kind.parent()));
    add("<unit_price>abc</unit_price>")
        .await
        .assert_error(400, "unit_price must be a decimal");
    assert_eq!(app.delete(&item_url).await.status, 200);
    assert_eq!(total_gross().await.as_deref(), Some("0"));
    // Once completed, items are frozen.
    let frozen = add("<unit_price>5</unit_price>").await;
    assert_eq!(frozen.status, 201);
    complete(&app, kind, id).await;
    let frozen_url = format!("{items_url}/{}", frozen.id());
    app.put(&frozen_url, &quantity(9)).await.assert_error(
        400,
        &format!("items change only while the {} is a DRAFT", kind.label),
    );
    app.delete(&frozen_url).await.assert_error(400, "DRAFT");
    assert_eq!(total_gross().await.as_deref(), Some("6"));
}

per_kind!(numbers_follow_prefixes_placeholders_and_stay_unique);
async fn numbers_follow_prefixes_placeholders_and_stay_unique(kind: &Kind) {
    let (app, c) = app_with_client().await;
    let dated = |date: &str| {
        format!(
            "<number_pre>RE-[YYYY]-</number_pre><number_length>3</number_length><date>{date}</date>"
        )
    };
    let a = create_for(&app, kind, c, &dated("2026-05-02")).await;
    a.assert_fields(&[(&kind.number(), "RE-2026-001")]);
    let b = create_for(&app, kind, c, &dated("2027-01-02")).await;
    assert_eq!(
        b.field(&kind.number()).as_deref(),
        Some("RE-2027-001"),
        "a new year starts a new range"
    );
    let explicit = create_for(&app, kind, c, "<number>42</number>").await;
    let number = |n: &str| format!("{}{n}", kind.number_pre);
    explicit.assert_fields(&[(&kind.number(), &number("00042"))]);
    app.post(
        &kind.list(),
        &kind.body(&format!("<client_id>{c}</client_id><number>42</number>")),
    )
    .await
    .assert_error(409, "number 42 is already used");
    let next = create_for(&app, kind, c, "").await;
    next.assert_fields(&[(&kind.number(), &number("00043"))]);
}

per_kind!(billing: the_lifecycle_with_payments_cancel_and_comments);
async fn the_lifecycle_with_payments_cancel_and_comments(kind: &Kind) {
    let (app, c) = app_with_client().await;
    let one = items(kind, &[item(kind, "1", "100", "VAT", "0", "")]);
    let id = create_for(&app, kind, c, &one).await.id();
    let url = kind.at(id);
    let payments = kind.parts("payments");
    let comments = kind.parts("comments");
    let comments_of = kind.parts_of("comments", id);
    let pay = async |inner: &str| {
        let payment = kind.part("payment", id, inner);
        app.post(&payments, &payment).await
    };
    let action = async |name: &str| app.put(&format!("{url}/{name}"), "").await;
    let status = async || app.get(&url).await.field("status");
    // Rules bound to DRAFT.
    pay("<amount>10</amount>").await.assert_error(
        400,
        &format!(
            "payments can be booked only for OPEN or OVERDUE {}s",
            kind.label
        ),
    );
    action("cancel")
        .await
        .assert_error(400, "cannot be canceled");
    let completed = app
        .call("PUT", &format!("{url}/complete"), Some("<complete/>"))
        .await;
    assert_eq!(completed.status, 200, "{}", completed.body);
    assert!(completed.body.is_empty());
    assert_eq!(status().await.as_deref(), Some("OPEN"));
    // Rules bound to OPEN: each broken one answers 400 and changes nothing.
    let before = app.get(&url).await.body;
    let comments_before = app.get(&comments_of).await.body;
    app.put(&url, &kind.body("<label>x</label>"))
        .await
        .assert_error(400, &format!("only a DRAFT {} can be changed", kind.label));
    for (name, fragment) in [
        (
            "complete",
            format!("only a DRAFT {} can be completed", kind.label),
        ),
        (
            "uncancel",
            format!("only a CANCELED {} can be uncanceled", kind.label),
        ),
    ] {
        action(name).await.assert_error(400, &fragment);
    }
    app.post(&kind.parts("items"), &kind.part("item", id, ""))
        .await
        .assert_error(400, "DRAFT");
    assert_eq!(app.get(&url).await.body, before);
    assert_eq!(app.get(&comments_of).await.body, comments_before);
    // An amount paid is above 0 and at most the amount limit.
    for (amount, fragment) in [
        ("0", "amount must be greater than 0"),
        ("-5", "amount must be greater than 0"),
        ("1000000000001", "amount must be at most"),
    ] {
        pay(&format!("<amount>{amount}</amount>"))
            .await
            .assert_error(400, fragment);
    }

    let p1 = pay("<amount>40</amount><type>cash</type><date>2026-11-20</date>").await;
    assert_eq!(p1.status, 201, "{}", p1.body);
    p1.assert_fields(&[("type", "CASH")]);
    let after = app.get(&url).await;
    after.assert_fields(&[
        ("status", "OPEN"),
        ("paid_amount", "40"),
        ("open_amount", "60"),
    ]);
    let p2 = pay("<amount>60</amount>").await;
    assert_eq!(p2.status, 201, "{}", p2.body);
    assert_eq!(status().await.as_deref(), Some("PAID"));
    app.get(&url).await.assert_fields(&[("open_amount", "0")]);
    pay("<amount>1</amount>")
        .await
        .assert_error(400, &format!("this {} is PAID", kind.label));
    let p2_url = format!("{payments}/{}", p2.id());
    app.put(&p2_url, &format!("<{}/>", kind.named("payment")))
        .await
        .assert_error(405, "method not allowed");
    assert_eq!(app.delete(&p2_url).await.status, 200);
    assert_eq!(status().await.as_deref(), Some("OPEN"));
    let marked = pay(&format!("<amount>5</amount><{0}>1</{0}>", kind.mark_paid())).await;
    assert_eq!(marked.status, 201);
    marked.assert_fields(&[(&kind.mark_paid(), "1")]);
    assert_eq!(status().await.as_deref(), Some("PAID"));
    let list = app.get(&kind.parts_of("payments", id)).await;
    assert_eq!(list.fields("amount"), vec!["40", "5"]);
    app.get(&payments)
        .await
        .assert_error(400, &format!("{} is mandatory", kind.parent()));
    for (inner, fragment) in [
        ("<amount>ten</amount>", "amount must be a decimal"),
        ("<amount>5</amount><type>GOLD</type>", "type must be one of"),
    ] {
        pay(inner).await.assert_error(400, fragment);
    }

    assert_eq!(action("cancel").await.status, 200);
    assert_eq!(status().await.as_deref(), Some("CANCELED"));
    action("cancel").await.assert_error(400, "already canceled");
    assert_eq!(action("uncancel").await.status, 200);
    assert_eq!(status().await.as_deref(), Some("PAID"));

    let comment = |inner: &str| kind.part("comment", id, inner);
    let user_comment = app
        .post(&comments, &comment("<comment>Called the client</comment>"))
        .await;
    assert_eq!(user_comment.status, 201, "{}", user_comment.body);
    user_comment.assert_fields(&[("actionkey", "COMMENT")]);
    assert_eq!(
        app.get(&comments_of).await.fields("actionkey"),
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
    app.get(&comments)
        .await
        .assert_error(400, &format!("{} is mandatory", kind.parent()));
    app.post(&comments, &comment(""))
        .await
        .assert_error(400, "comment is mandatory");
    let comment_url = format!("{comments}/{}", user_comment.id());
    assert_eq!(app.get(&comment_url).await.status, 200);
    assert_eq!(app.delete(&comment_url).await.status, 200);

    // Deleting the document takes items, payments and comments with it.
    assert_eq!(app.delete(&url).await.status, 200);
    for gone in [url, format!("{payments}/{}", p1.id()), comments_of] {
        assert_eq!(app.get(&gone).await.status, 404, "{gone}");
    }
}

per_kind!(billing: an_open_document_past_its_due_date_reads_and_filters_as_overdue);
async fn an_open_document_past_its_due_date_reads_and_filters_as_overdue(kind: &Kind) {
    let (app, c) = app_with_client().await;
    let past = "<date>2020-01-01</date><due_date>2020-01-15</due_date>";
    let old = create_for(&app, kind, c, past).await;
    let fresh = create_for(&app, kind, c, "").await;
    for id in [old.id(), fresh.id()] {
        complete(&app, kind, id).await;
    }
    let old_now = app.get(&kind.at(old.id())).await;
    old_now.assert_fields(&[("status", "OVERDUE")]);
    let list = kind.list();
    for (status, doc) in [("OVERDUE", &old), ("open", &fresh)] {
        let listed = app.get(&format!("{list}?status={status}")).await;
        let number = doc.field(&kind.number()).unwrap();
        assert_eq!(listed.fields(&kind.number()), vec![number], "{status}");
    }
    let both = app.get(&format!("{list}?status=OPEN,OVERDUE")).await;
    assert_eq!(both.header("x-total-count"), Some("2"));
}

per_kind!(bad_input_gets_400_and_changes_nothing);
async fn bad_input_gets_400_and_changes_nothing(kind: &Kind) {
    let (app, c) = app_with_client().await;
    let of_client = |inner: &str| kind.body(&format!("<client_id>{c}</client_id>{inner}"));
    let bad_quantity = items(
        kind,
        &[format!(
            "<{0}><quantity>x</quantity></{0}>",
            kind.named("item")
        )],
    );
    let before = format!("is before the {} date", kind.label);
    let mut cases = vec![
        (
            kind.body("<date>2026-01-01</date>"),
            "client_id is mandatory",
        ),
        (
            kind.body("<client_id>999</client_id>"),
            "client_id 999 does not exist",
        ),
        (of_client("<date>2026-02-30</date>"), "date must be a date"),
        (
            of_client("<net_gross>BOTH</net_gross>"),
            "net_gross must be one of",
        ),
        (of_client(&bad_quantity), "quantity must be a decimal"),
    ];
    if kind.priced {
        cases.extend([
            (of_client("<quote>abc</quote>"), "quote must be a decimal"),
            (
                of_client("<reduction>lots</reduction>"),
                "reduction must be an amount",
            ),
        ]);
    }
    if kind.billing {
        cases.push((
            of_client("<date>2026-05-01</date><due_date>2026-04-01</due_date>"),
            before.as_str(),
        ));
    }
    for (body, fragment) in &cases {
        app.post(&kind.list(), body)
            .await
            .assert_error(400, fragment);
    }
    let mut queries = vec![
        ("status=LATE", "status must list values"),
        ("from=2026-05-01&to=2026-04-01", "is after to"),
        ("from=2026-13-01", "from must be a date"),
        ("client_id=abc", "client_id must be a positive integer"),
        ("order_by=colour", "order_by: unknown field"),
    ];
    if kind.billing {
        queries.push(("payment_type=GOLD", "payment_type must list values"));
        // A status of another kind of document.
        queries.push(("status=WON", "status must list values"));
    } else {
        queries.push(("status=PAID", "status must list values"));
    }
    if kind.priced {
        queries.push(("group_by=decade", "group_by must list values"));
    }
    for (query, fragment) in queries {
        app.get(&format!("{}?{query}", kind.list()))
            .await
            .assert_error(400, fragment);
    }
    assert_eq!(
        app.get(&kind.list()).await.header("x-total-count"),
        Some("0")
    );
    let next = format!("{}_number_next", kind.range);
    app.get("/api/settings")
        .await
        .assert_fields(&[(&next, "1")]);
}

per_kind!(lists_page_filter_and_order);
async fn lists_page_filter_and_order(kind: &Kind) {
    let app = App::spawn().await;
    let a = client(&app, "<name>A</name>").await;
    let b = client(&app, "<name>B</name>").await;
    for i in 0..250 {
        let (cl, label, date) = if i % 5 == 0 {
            (b, "Project Apollo", "2026-02-10")
        } else {
            (a, "Routine", "2026-03-15")
        };
        create_for(
            &app,
            kind,
            cl,
            &format!("<label>{label}</label><date>{date}</date><intro>Intro {i}</intro><note>Note {i}</note>"),
        )
        .await;
    }
    let list = kind.list();
    let page3 = app.get(&format!("{list}?per_page=100&page=3")).await;
    assert!(
        page3
            .body
            .contains("page=\"3\" per_page=\"100\" total=\"250\""),
        "{}",
        &page3.body[..200]
    );
    let numbers = page3.fields(&kind.number());
    assert_eq!(numbers.len(), 50);
    assert_eq!(numbers[0], format!("{}00201", kind.number_pre));
    assert_eq!(
        app.call("HEAD", &list, None).await.header("x-total-count"),
        Some("250")
    );
    let of_b = format!("client_id={b}");
    // INV-00100 .. INV-00109
    let number = format!("{}={}0010", kind.number(), kind.number_pre.to_lowercase());
    let routine_of_a = format!("client_id={a}&label=routine&from=2026-03-15&status=DRAFT");
    let apollo_of_a = format!("client_id={a}&label=apollo");
    assert_counts(
        &app,
        kind,
        &[
            (&of_b, 50),
            ("label=apollo", 50),
            ("intro=intro%20249", 1),
            ("note=NOTE+1", 111), // 1, 10-19, 100-199
            (&number, 10),
            ("from=2026-03-01", 200),
            ("to=2026-02-28", 50),
            ("from=2026-02-10&to=2026-02-10", 50),
            ("status=DRAFT", 250),
            (&format!("status={}", kind.completed), 0),
            (&routine_of_a, 200),
            (&apollo_of_a, 0),
        ],
    )
    .await;
    let first = app.get(&format!("{list}?{of_b}&per_page=1")).await.id();
    complete(&app, kind, first).await;
    // Dated in February, an invoice or credit note is long past its due date.
    let completed = if kind.billing {
        "OVERDUE"
    } else {
        kind.completed
    };
    assert_counts(
        &app,
        kind,
        &[(&format!("status={completed}"), 1), ("status=DRAFT", 249)],
    )
    .await;
    if kind.billing {
        // Pay one to check the payment type filter.
        let paypal = kind.part("payment", first, "<amount>0.01</amount><type>PAYPAL</type>");
        app.create(&kind.parts("payments"), &paypal).await;
        assert_counts(
            &app,
            kind,
            &[("payment_type=paypal,cash", 1), ("payment_type=CASH", 0)],
        )
        .await;
    }
    let ordered = app
        .get(&format!("{list}?order_by=date+DESC,id+DESC&per_page=2"))
        .await;
    assert_eq!(ordered.fields("date"), vec!["2026-03-15", "2026-03-15"]);
    assert_eq!(
        ordered.fields(&kind.number()),
        vec![
            format!("{}00250", kind.number_pre),
            format!("{}00249", kind.number_pre)
        ]
    );
}

/// The keys `a` and `b` of each group of a grouped list, in order (a group names its keys
/// twice: on itself and in its params).
fn group_keys(groups: &Reply, a: &str, b: &str) -> Vec<(String, String)> {
    let every_other = |name| groups.fields(name).into_iter().step_by(2);
    every_other(a).zip(every_other(b)).collect()
}

/// Asserts a grouped list of `kind`, in euros, echoing its parameters.
#[track_caller]
fn assert_grouped(kind: &Kind, groups: &Reply) {
    assert_eq!(groups.status, 200, "{}", groups.body);
    for element in [
        format!(
            "<{} type=\"array\" currency_code=\"EUR\">",
            kind.named("groups")
        ),
        format!("<{}>", kind.named("params")),
    ] {
        assert!(groups.body.contains(&element), "{element}: {}", groups.body);
    }
}

per_kind!(priced: tags_articles_labels_and_numbers_filter_and_statuses_group);
async fn tags_articles_labels_and_numbers_filter_and_statuses_group(kind: &Kind) {
    let app = App::spawn().await;
    let a = client(&app, "<name>A</name>").await;
    let b = client(&app, "<name>B</name>").await;
    let mut articles = Vec::new();
    for title in ["Beratung", "Wartung"] {
        let r = app
            .post(
                "/api/articles",
                &format!("<article><title>{title}</title></article>"),
            )
            .await;
        assert_eq!(r.status, 201, "{}", r.body);
        articles.push(r.id());
    }
    let mut ids = Vec::new();
    for (cl, date, label, article) in [
        (a, "2025-12-30", "Retoure", articles[0]),
        (a, "2026-01-05", "Kulanz", articles[1]),
        (b, "2026-02-01", "Retoure", articles[0]),
    ] {
        let item = format!(
            "<{0}><article_id>{article}</article_id><unit_price>10</unit_price></{0}>",
            kind.named("item")
        );
        let fields = format!(
            "<date>{date}</date><label>{label}</label>{}",
            items(kind, &[item])
        );
        ids.push(create_for(&app, kind, cl, &fields).await.id());
    }
    complete(&app, kind, ids[0]).await;
    for (doc, name) in [(ids[2], "retoure"), (ids[2], "wichtig"), (ids[0], "alt")] {
        let tag = kind.part("tag", doc, &format!("<name>{name}</name>"));
        app.create(&kind.parts("tags"), &tag).await;
    }
    let number = format!("{}={}0000", kind.number(), kind.number_pre.to_lowercase());
    assert_counts(
        &app,
        kind,
        &[
            ("tags=wichtig", 1),
            // `tags` matches documents carrying all of them, `tags_any` any of them.
            ("tags=alt,wichtig", 0),
            ("tags=retoure,WICHTIG", 1),
            ("tags_any=alt,wichtig", 2),
            ("tags_any=alt", 1),
            (&number, 3),
            ("label=retoure", 2),
            (&format!("article_id={}", articles[0]), 2),
            ("status=DRAFT", 2),
            ("from=2026-01-01", 2),
        ],
    )
    .await;
    let groups = app
        .get(&format!("{}?group_by=status,year", kind.list()))
        .await;
    assert_grouped(kind, &groups);
    // The completed one is long past its due date where the kind falls due.
    let completed = if kind.billing {
        "OVERDUE"
    } else {
        kind.completed
    };
    let mut expected = vec![
        ("DRAFT".to_string(), "2026".to_string()),
        (completed.to_string(), "2025".to_string()),
    ];
    expected.sort();
    assert_eq!(group_keys(&groups, "status", "year"), expected);
}

per_kind!(priced: groups_by_client_month_and_iso_week_across_the_year_boundary);
async fn groups_by_client_month_and_iso_week_across_the_year_boundary(kind: &Kind) {
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
        let one = items(kind, &[item(kind, "1", price, "X", "10", "")]);
        create_for(&app, kind, cl, &format!("<date>{date}</date>{one}")).await;
    }
    let list = kind.list();
    let by_week = app.get(&format!("{list}?group_by=week")).await;
    assert_grouped(kind, &by_week);
    assert_eq!(
        by_week.fields("week"),
        vec![
            "2026-W53", "2026-W53", "2027-W01", "2027-W01", "2027-W03", "2027-W03"
        ]
    );
    assert_eq!(by_week.fields("total_net"), vec!["60", "40", "50"]);
    assert_eq!(by_week.fields("total_gross"), vec!["66", "44", "55"]);
    let by_client_month = app.get(&format!("{list}?group_by=client,month")).await;
    assert_grouped(kind, &by_client_month);
    assert_eq!(
        group_keys(&by_client_month, "client_id", "month"),
        vec![
            (a.to_string(), "2026-12".to_string()),
            (a.to_string(), "2027-01".to_string()),
            (b.to_string(), "2027-01".to_string()),
        ]
    );
    assert_eq!(by_client_month.fields("total_net"), vec!["30", "30", "90"]);
    let filtered = app
        .get(&format!("{list}?group_by=year&client_id={b}"))
        .await;
    assert_eq!(filtered.fields("year"), vec!["2027", "2027"]);
    assert_eq!(filtered.fields("total_net"), vec!["90"]);
}

per_kind!(documents_of_one_account_are_invisible_to_another);
async fn documents_of_one_account_are_invisible_to_another(kind: &Kind) {
    let (app, c) = app_with_client().await;
    let other = app.new_account("Other").await;
    let one = items(kind, &[item(kind, "1", "5", "X", "0", "")]);
    let id = create_for(&app, kind, c, &one).await.id();
    complete(&app, kind, id).await;
    let items_of = kind.parts_of("items", id);
    let item_id = app.get(&items_of).await.id();
    let comments_of = kind.parts_of("comments", id);
    let comment_id = app.get(&comments_of).await.id();
    let mut paths = vec![
        kind.at(id),
        format!("{}/{item_id}", kind.parts("items")),
        format!("{}/{comment_id}", kind.parts("comments")),
        format!("{}/pdf", kind.at(id)),
        items_of,
        comments_of,
    ];
    let payments = kind.parts("payments");
    let payment = kind.part("payment", id, "<amount>1</amount>");
    let paid = if kind.billing {
        let pay = app.post(&payments, &payment).await;
        paths.push(format!("{payments}/{}", pay.id()));
        paths.push(kind.parts_of("payments", id));
        Some(pay.id())
    } else {
        None
    };
    for path in paths {
        assert_eq!(
            app.call_as(&other, "GET", &path, None).await.status,
            404,
            "{path}"
        );
    }
    let action = if kind.billing { "cancel" } else { "complete" };
    for path in [format!("{}/{action}", kind.at(id)), kind.at(id)] {
        assert_eq!(
            app.call_as(&other, "PUT", &path, Some(&format!("<{}/>", kind.singular)))
                .await
                .status,
            404,
            "{path}"
        );
    }
    if let Some(pay) = paid {
        assert_eq!(
            app.call_as(&other, "DELETE", &format!("{payments}/{pay}"), None)
                .await
                .status,
            404
        );
        app.call_as(&other, "POST", &payments, Some(&payment))
            .await
            .assert_error(400, "does not exist");
    }
    app.call_as(
        &other,
        "POST",
        &kind.list(),
        Some(&kind.body(&format!("<client_id>{c}</client_id>"))),
    )
    .await
    .assert_error(400, "does not exist");
    assert_eq!(
        app.call_as(&other, "GET", &kind.list(), None)
            .await
            .header("x-total-count"),
        Some("0")
    );
    // The client with documents cannot be deleted.
    app.delete(&format!("/api/clients/{c}"))
        .await
        .assert_error(400, "has documents");
}

per_kind!(tags_are_added_listed_filtered_and_removed);
async fn tags_are_added_listed_filtered_and_removed(kind: &Kind) {
    let (app, c) = app_with_client().await;
    let a = create_for(&app, kind, c, "").await.id();
    create_for(&app, kind, c, "").await;
    let tags = kind.parts("tags");
    let tags_of = kind.parts_of("tags", a);
    let tag = app
        .post(&tags, &kind.part("tag", a, "<name>urgent</name>"))
        .await;
    assert_eq!(tag.status, 201, "{}", tag.body);
    assert_eq!(app.get(&tags_of).await.fields("name"), vec!["urgent"]);
    let count = async |q: &str| {
        app.get(&format!("{}?{q}", kind.list()))
            .await
            .header("x-total-count")
            .map(str::to_owned)
    };
    assert_eq!(count("tags=URGENT").await.as_deref(), Some("1"));
    app.post(&tags, &kind.part("tag", 999, "<name>x</name>"))
        .await
        .assert_error(400, &format!("{} 999 does not exist", kind.parent()));
    assert_eq!(
        app.delete(&format!("{tags}/{}", tag.id())).await.status,
        200
    );
    assert_eq!(count("tags=urgent").await.as_deref(), Some("0"));
    assert_eq!(app.get(&tags_of).await.header("x-total-count"), Some("0"));
}
