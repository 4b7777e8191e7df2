//! Quote to cash: offers, order confirmations and delivery notes through the real host.
//! The chain from an offer with an optional line to the invoice made from it; each kind's
//! own lifecycle and refusals; presets; links between the documents and across clients;
//! their PDFs and e-mail. What every kind shares is in both_kinds.rs.

use faktura_tests::{App, Reply, SmtpSink, check_pdf, free_port};

use crate::support::{
    CONFIRMATIONS, DELIVERY_NOTES, INVOICES, Kind, OFFERS, client, complete, create_for, item,
    items,
};

/// Runs an action (`win`, `clear`, ...) on a document, which must succeed.
async fn act(app: &App, kind: &Kind, id: u64, action: &str) {
    let r = app.put(&format!("{}/{action}", kind.at(id)), "").await;
    assert_eq!(r.status, 200, "{action}: {}", r.body);
}

async fn status(app: &App, kind: &Kind, id: u64) -> String {
    app.get(&kind.at(id)).await.field("status").unwrap()
}

async fn pdf_text(app: &App, kind: &Kind, id: u64) -> String {
    let pdf = app.get(&format!("{}/pdf?format=pdf", kind.at(id))).await;
    assert_eq!(pdf.status, 200, "{}", pdf.body);
    check_pdf(&pdf.bytes)
}

async fn comments(app: &App, kind: &Kind, id: u64) -> Vec<String> {
    app.get(&kind.parts_of("comments", id))
        .await
        .fields("actionkey")
}

/// An offer of three lines, the last optional: 2 × 100 and 1 × 50 at 19 %, and a 500
/// option.
async fn offer_with_an_option(app: &App, c: u64) -> Reply {
    let option = format!(
        "<{0}><title>Wartungsvertrag</title><quantity>1</quantity><unit_price>500</unit_price>\
         <tax_name>MwSt</tax_name><tax_rate>19</tax_rate><optional>1</optional></{0}>",
        OFFERS.named("item")
    );
    let lines = items(
        &OFFERS,
        &[
            item(&OFFERS, "2", "100", "MwSt", "19", ""),
            item(&OFFERS, "1", "50", "MwSt", "19", ""),
            option,
        ],
    );
    create_for(
        app,
        &OFFERS,
        c,
        &format!(
            "<date>2026-04-01</date><validity_days>14</validity_days><label>Projekt Nord</label>\
             <intro>Unser Angebot</intro>{lines}"
        ),
    )
    .await
}

#[tokio::test]
async fn from_an_offer_with_an_option_to_the_invoice_and_the_offer_cleared() {
    let app = App::spawn().await;
    let c = client(
        &app,
        "<name>Nord GmbH</name><street>Hafen 1</street><zip>20095</zip><city>Hamburg</city>",
    )
    .await;
    let offer = offer_with_an_option(&app, c).await;
    // The option is shown but counts for nothing: 250 net, 47.50 tax.
    offer.assert_fields(&[
        ("offer_number", "OFR-00001"),
        ("status", "DRAFT"),
        ("validity_days", "14"),
        ("validity_date", "2026-04-15"),
        ("total_net", "250"),
        ("total_gross", "297.5"),
    ]);
    let offer_id = offer.id();
    let lines = app.get(&OFFERS.parts_of("items", offer_id)).await;
    assert_eq!(lines.fields("optional"), vec!["0", "0", "1"]);
    complete(&app, &OFFERS, offer_id).await;
    assert_eq!(status(&app, &OFFERS, offer_id).await, "OPEN");
    let text = pdf_text(&app, &OFFERS, offer_id).await;
    for wanted in [
        "OFR-00001",
        "Wartungsvertrag",
        "Optional",
        "15.04.2026",
        "297,50",
    ] {
        assert!(text.contains(wanted), "{wanted} in the offer's PDF: {text}");
    }
    // No confirmation from an offer that is not won yet? It may be OPEN; won it is now.
    act(&app, &OFFERS, offer_id, "win").await;
    assert_eq!(status(&app, &OFFERS, offer_id).await, "WON");

    // The confirmation from the offer's preset: its client, texts and every line but the
    // option.
    let preset = app
        .get(&format!("/api/confirmations/preset?offer_id={offer_id}"))
        .await;
    assert_eq!(preset.status, 200, "{}", preset.body);
    preset.assert_fields(&[
        ("client_id", &c.to_string()),
        ("label", "Projekt Nord"),
        ("offer_id", &offer_id.to_string()),
    ]);
    assert_eq!(preset.fields("unit_price"), vec!["100", "50"]);
    let confirmation = app.post("/api/confirmations", &preset.body).await;
    assert_eq!(confirmation.status, 201, "{}", confirmation.body);
    confirmation.assert_fields(&[
        ("confirmation_number", "OC-00001"),
        ("offer_id", &offer_id.to_string()),
        ("total_gross", "297.5"),
    ]);
    let confirmation_id = confirmation.id();
    complete(&app, &CONFIRMATIONS, confirmation_id).await;
    assert_eq!(
        status(&app, &CONFIRMATIONS, confirmation_id).await,
        "COMPLETED"
    );
    assert!(
        comments(&app, &OFFERS, offer_id)
            .await
            .contains(&"CREATE_FROM_OFFER".to_string())
    );

    // A delivery note of the confirmation: quantities, no prices on its PDF.
    let delivered = items(
        &DELIVERY_NOTES,
        &[item(&DELIVERY_NOTES, "2", "100", "MwSt", "19", "")],
    );
    let note = create_for(
        &app,
        &DELIVERY_NOTES,
        c,
        &format!(
            "<offer_id>{offer_id}</offer_id><confirmation_id>{confirmation_id}</confirmation_id>{delivered}"
        ),
    )
    .await;
    note.assert_fields(&[("delivery_note_number", "DN-00001")]);
    complete(&app, &DELIVERY_NOTES, note.id()).await;
    assert_eq!(status(&app, &DELIVERY_NOTES, note.id()).await, "CREATED");
    let text = pdf_text(&app, &DELIVERY_NOTES, note.id()).await;
    assert!(text.contains("DN-00001") && text.contains("Item"), "{text}");
    assert!(
        !text.contains("EUR"),
        "no prices on a delivery note: {text}"
    );

    // The invoice from the confirmation's preset names both; completing it is ordinary.
    let preset = app
        .get(&format!(
            "/api/invoices/preset?confirmation_id={confirmation_id}"
        ))
        .await;
    assert_eq!(preset.status, 200, "{}", preset.body);
    preset.assert_fields(&[
        ("offer_id", &offer_id.to_string()),
        ("confirmation_id", &confirmation_id.to_string()),
    ]);
    let invoice = app.post("/api/invoices", &preset.body).await;
    assert_eq!(invoice.status, 201, "{}", invoice.body);
    invoice.assert_fields(&[("invoice_number", "INV-00001"), ("total_gross", "297.5")]);
    complete(&app, &INVOICES, invoice.id()).await;
    assert_eq!(status(&app, &INVOICES, invoice.id()).await, "OPEN");
    let invoice_comments = comments(&app, &INVOICES, invoice.id()).await;
    assert!(
        invoice_comments.contains(&"CREATE_FROM_CONFIRMATION".to_string()),
        "{invoice_comments:?}"
    );
    assert!(
        comments(&app, &CONFIRMATIONS, confirmation_id)
            .await
            .contains(&"CREATE_FROM_CONFIRMATION".to_string())
    );
    // The offer stays WON until cleared; the delivery note is listed under the invoice's
    // documents by its links.
    assert_eq!(status(&app, &OFFERS, offer_id).await, "WON");
    act(&app, &OFFERS, offer_id, "clear").await;
    assert_eq!(status(&app, &OFFERS, offer_id).await, "CLEARED");
    act(&app, &CONFIRMATIONS, confirmation_id, "clear").await;
    assert_eq!(
        status(&app, &CONFIRMATIONS, confirmation_id).await,
        "CLEARED"
    );
    for (list, query, count) in [
        ("/api/invoices", format!("offer_id={offer_id}"), "1"),
        (
            "/api/invoices",
            format!("confirmation_id={confirmation_id}"),
            "1",
        ),
        ("/api/confirmations", format!("offer_id={offer_id}"), "1"),
        (
            "/api/delivery-notes",
            format!("confirmation_id={confirmation_id}"),
            "1",
        ),
        ("/api/offers", "status=CLEARED".to_string(), "1"),
        ("/api/offers", "status=WON".to_string(), "0"),
    ] {
        let r = app.call("HEAD", &format!("{list}?{query}"), None).await;
        assert_eq!(r.header("x-total-count"), Some(count), "{list}?{query}");
    }
}

#[tokio::test]
async fn an_offer_is_won_lost_cleared_canceled_only_from_the_right_status() {
    let app = App::spawn().await;
    let c = client(&app, "<name>A</name>").await;
    let id = offer_with_an_option(&app, c).await.id();
    let refused = async |action: &str, status: &str| {
        app.put(&format!("{}/{action}", OFFERS.at(id)), "")
            .await
            .assert_error(400, &format!("this offer is {status}"));
    };
    refused("win", "DRAFT").await;
    refused("cancel", "DRAFT").await;
    complete(&app, &OFFERS, id).await;
    refused("complete", "OPEN").await;
    refused("clear", "OPEN").await;
    act(&app, &OFFERS, id, "lose").await;
    refused("win", "LOST").await;
    refused("clear", "LOST").await;
    app.get(&format!("/api/invoices/preset?offer_id={id}"))
        .await
        .assert_error(400, "offer_id");
    act(&app, &OFFERS, id, "cancel").await;
    assert_eq!(status(&app, &OFFERS, id).await, "CANCELED");
    act(&app, &OFFERS, id, "uncancel").await;
    assert_eq!(status(&app, &OFFERS, id).await, "OPEN");
    act(&app, &OFFERS, id, "win").await;
    act(&app, &OFFERS, id, "clear").await;
    refused("cancel", "CLEARED").await;
    act(&app, &OFFERS, id, "unclear").await;
    assert_eq!(status(&app, &OFFERS, id).await, "WON");
    let keys = comments(&app, &OFFERS, id).await;
    for key in ["LOSE", "CANCEL", "UNCANCEL", "WIN", "CLEAR", "UNCLEAR"] {
        assert!(keys.contains(&key.to_string()), "{key} in {keys:?}");
    }
    // A delivery note is made, never canceled.
    let note = create_for(&app, &DELIVERY_NOTES, c, "").await.id();
    complete(&app, &DELIVERY_NOTES, note).await;
    assert_eq!(
        app.put(&format!("{}/cancel", DELIVERY_NOTES.at(note)), "")
            .await
            .status,
        404,
        "no such route"
    );
    app.put(
        &DELIVERY_NOTES.at(note),
        "<delivery-note><label>x</label></delivery-note>",
    )
    .await
    .assert_error(400, "this delivery note is CREATED");
}

#[tokio::test]
async fn bad_sales_input_is_refused_and_changes_nothing() {
    let app = App::spawn().await;
    let a = client(&app, "<name>A</name>").await;
    let b = client(&app, "<name>B</name>").await;
    let offer_of_a = offer_with_an_option(&app, a).await.id();
    let item = |inner: &str| {
        items(
            &OFFERS,
            &[format!(
                "<{0}><unit_price>1</unit_price>{inner}</{0}>",
                OFFERS.named("item")
            )],
        )
    };
    for (path, body, problem) in [
        (
            "/api/offers",
            format!("<offer><client_id>{a}</client_id><validity_days>-1</validity_days></offer>"),
            "validity_days must be 0 or more".to_string(),
        ),
        (
            "/api/offers",
            format!(
                "<offer><client_id>{a}</client_id>{}</offer>",
                item("<optional>2</optional>")
            ),
            "optional must be".to_string(),
        ),
        (
            "/api/confirmations",
            format!(
                "<confirmation><client_id>{b}</client_id><offer_id>{offer_of_a}</offer_id></confirmation>"
            ),
            format!("offer_id {offer_of_a} is an offer of client {a}, not of client {b}"),
        ),
        (
            "/api/invoices",
            format!("<invoice><client_id>{a}</client_id><offer_id>999</offer_id></invoice>"),
            "offer_id 999 does not exist".to_string(),
        ),
        (
            "/api/delivery-notes",
            format!(
                "<delivery-note><client_id>{a}</client_id><invoice_id>999</invoice_id></delivery-note>"
            ),
            "invoice_id 999 does not exist".to_string(),
        ),
    ] {
        app.post(path, &body).await.assert_error(400, &problem);
    }
    // A preset from a draft, of nothing, of another account.
    app.get(&format!("/api/invoices/preset?offer_id={offer_of_a}"))
        .await
        .assert_error(400, "is DRAFT");
    app.get("/api/invoices/preset")
        .await
        .assert_error(400, "needs exactly one of offer_id, confirmation_id");
    let other = app.new_account("Other").await;
    let theirs = app
        .call_as(
            &other,
            "GET",
            &format!("/api/invoices/preset?offer_id={offer_of_a}"),
            None,
        )
        .await;
    theirs.assert_error(404, "does not exist");
    for (list, count) in [
        ("/api/offers", "1"),
        ("/api/confirmations", "0"),
        ("/api/invoices", "0"),
        ("/api/delivery-notes", "0"),
    ] {
        assert_eq!(
            app.call("HEAD", list, None).await.header("x-total-count"),
            Some(count),
            "{list}"
        );
    }
}

#[tokio::test]
async fn sales_documents_are_mailed_under_their_own_names() {
    let port = free_port();
    let smtp = SmtpSink::start(port).await;
    let url = smtp.url();
    let app = App::spawn_configured(
        std::sync::Arc::new(tempfile::tempdir().unwrap()),
        faktura_tests::test_component(),
        move |o| o.smtp = Some(url),
    )
    .await;
    let c = client(&app, "<name>A</name><email>a@example.org</email>").await;
    let offer = offer_with_an_option(&app, c).await.id();
    complete(&app, &OFFERS, offer).await;
    let email = "<email><recipients><to>a@example.org</to></recipients></email>";
    let sent = app
        .post(&format!("{}/email", OFFERS.at(offer)), email)
        .await;
    assert_eq!(sent.status, 200, "{}", sent.body);
    let messages = smtp.wait_for(1, 30).await;
    assert!(
        messages[0].contains(&format!("offer_{offer}.pdf")),
        "{}",
        &messages[0][..messages[0].len().min(2000)]
    );
    assert!(
        messages[0].contains("Subject: Offer OFR-00001"),
        "{}",
        messages[0]
    );
    // An offer has no e-invoice to attach.
    app.post(
        &format!("{}/email", OFFERS.at(offer)),
        "<email><recipients><to>a@example.org</to></recipients><einvoice>factur-x</einvoice></email>",
    )
    .await
    .assert_error(400, "an offer has no e-invoice");
}
