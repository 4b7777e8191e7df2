//! Fields that mean what they say: a client's payment terms by their type (SETTINGS,
//! ABSOLUTE, RELATIVE), client values that would break every document refused where they
//! are set, the next number of a prefix with date placeholders, supply dates that must be
//! dates, and the template a completion uses (the request's, for every kind).

use faktura_tests::{App, check_pdf};

use crate::support::{CREDIT_NOTES, INVOICES, Kind, client, complete, create_for, template};

/// The settings every terms case starts from.
const SETTINGS: &str = "<settings><due_days>14</due_days><discount_days>7</discount_days>\
                        <discount_rate>2</discount_rate></settings>";

#[tokio::test]
async fn each_payment_term_follows_its_type_settings_absolute_or_relative() {
    let app = App::spawn().await;
    assert_eq!(app.put("/api/settings", SETTINGS).await.status, 200);
    // (term, the document field that shows it, the settings' value, the client's value,
    // what ABSOLUTE gives, what RELATIVE gives)
    let cases = [
        ("due_days", "due_days", "14", "5", "5", "19"),
        ("discount_days", "discount_days", "7", "-3", "", "4"),
        ("discount_rate", "discount_rate", "2", "1.5", "1.5", "3.5"),
    ];
    for (term, shown, setting, own, absolute, relative) in cases {
        for (ty, want) in [
            ("SETTINGS", setting),
            ("ABSOLUTE", absolute),
            ("RELATIVE", relative),
        ] {
            if want.is_empty() {
                // A negative number of days is no absolute term (below).
                continue;
            }
            let c = client(
                &app,
                &format!(
                    "<name>{term} {ty}</name><{term}>{own}</{term}><{term}_type>{ty}</{term}_type>"
                ),
            )
            .await;
            let doc = create_for(&app, &INVOICES, c, "<date>2026-03-02</date>").await;
            assert_eq!(
                doc.field(shown).as_deref(),
                Some(want),
                "{term} {ty}: {}",
                doc.body
            );
        }
    }
}

#[tokio::test]
async fn client_values_that_would_break_every_document_are_refused_where_they_are_set() {
    let app = App::spawn().await;
    assert_eq!(app.put("/api/settings", SETTINGS).await.status, 200);
    for (fields, problem) in [
        (
            "<reduction>-5</reduction>",
            "reduction must be an amount or a percentage",
        ),
        (
            "<reduction>150%</reduction>",
            "reduction must be at most 100%",
        ),
        (
            "<discount_rate>150</discount_rate><discount_rate_type>ABSOLUTE</discount_rate_type>",
            "discount_rate must be between 0 and 100, got 150",
        ),
        (
            "<discount_rate>99</discount_rate><discount_rate_type>RELATIVE</discount_rate_type>",
            "discount_rate 99 (RELATIVE: added to the settings' 2) gives 101",
        ),
        (
            "<due_days>-20</due_days><due_days_type>RELATIVE</due_days_type>",
            "due_days -20 (RELATIVE: added to the settings' 14) gives -6",
        ),
        (
            "<due_days>-1</due_days><due_days_type>ABSOLUTE</due_days_type>",
            "due_days must be between 0 and 3650, got -1",
        ),
        (
            "<number_pre>KUNDE-0000000000000000000000000000000000000</number_pre>",
            "number_pre must be one line of at most 40 characters",
        ),
    ] {
        let r = app
            .post(
                "/api/clients",
                &format!("<client><name>X</name>{fields}</client>"),
            )
            .await;
        r.assert_error(400, problem);
    }
    assert_eq!(
        app.call("HEAD", "/api/clients", None)
            .await
            .header("x-total-count"),
        Some("0"),
        "nothing was stored"
    );
    // A RELATIVE value that was fine when set, until the settings moved: the document is
    // refused naming the client's field, unless the request sets the field itself.
    let c = client(
        &app,
        "<name>R</name><due_days>-10</due_days><due_days_type>RELATIVE</due_days_type>\
         <discount_rate>50</discount_rate><discount_rate_type>RELATIVE</discount_rate_type>",
    )
    .await;
    let ok = create_for(&app, &INVOICES, c, "<date>2026-03-02</date>").await;
    ok.assert_fields(&[("due_days", "4"), ("discount_rate", "52")]);
    let moved = "<settings><due_days>5</due_days><discount_rate>60</discount_rate></settings>";
    assert_eq!(app.put("/api/settings", moved).await.status, 200);
    for kind in [&INVOICES, &CREDIT_NOTES] {
        let r = app
            .post(
                &kind.list(),
                &kind.body(&format!("<client_id>{c}</client_id>")),
            )
            .await;
        r.assert_error(400, &format!("client {c}'s due_days -10"));
        r.assert_error(400, &format!("client {c}'s discount_rate 50"));
    }
    let own = create_for(
        &app,
        &INVOICES,
        c,
        "<date>2026-03-02</date><due_date>2026-03-20</due_date><discount_rate>3</discount_rate>",
    )
    .await;
    own.assert_fields(&[("due_date", "2026-03-20"), ("discount_rate", "3")]);
}

#[tokio::test]
async fn the_next_number_follows_the_prefix_as_a_document_dated_today_resolves_it() {
    let app = App::spawn().await;
    let settings = "<settings><invoice_number_pre>RE-[YYYY]-</invoice_number_pre>\
                    <credit_note_number_pre>GS-[YY][MM]-</credit_note_number_pre></settings>";
    assert_eq!(app.put("/api/settings", settings).await.status, 200);
    let c = client(&app, "<name>A</name>").await;
    // Two of this year (the default date is today), one of an earlier year: its own series.
    for date in ["", "", "<date>2020-05-05</date>"] {
        create_for(&app, &INVOICES, c, date).await;
    }
    create_for(&app, &CREDIT_NOTES, c, "").await;
    let s = app.get("/api/settings").await;
    s.assert_fields(&[
        ("invoice_number_next", "3"),
        ("credit_note_number_next", "2"),
    ]);
    let year_2020 = app.get("/api/invoices?invoice_number=RE-2020-").await;
    assert_eq!(year_2020.fields("invoice_number"), vec!["RE-2020-00001"]);
}

#[tokio::test]
async fn a_supply_date_of_a_date_type_must_be_a_date() {
    let app = App::spawn().await;
    let c = client(&app, "<name>A</name>").await;
    for ty in ["SUPPLY_DATE", "DELIVERY_DATE"] {
        let r = app
            .post(
                "/api/invoices",
                &format!(
                    "<invoice><client_id>{c}</client_id><supply_date_type>{ty}</supply_date_type>\
                     <supply_date>next week</supply_date></invoice>"
                ),
            )
            .await;
        r.assert_error(
            400,
            &format!("supply_date must be a date (YYYY-MM-DD) with supply_date_type {ty}"),
        );
    }
    let text = create_for(
        &app,
        &INVOICES,
        c,
        "<supply_date_type>SUPPLY_TEXT</supply_date_type><supply_date>March 2026</supply_date>",
    )
    .await;
    // Turning the free text into a date type needs a date too.
    app.put(
        &INVOICES.at(text.id()),
        "<invoice><supply_date_type>DELIVERY_DATE</supply_date_type></invoice>",
    )
    .await
    .assert_error(400, "supply_date must be a date");
    let dated = app
        .put(
            &INVOICES.at(text.id()),
            "<invoice><supply_date_type>DELIVERY_DATE</supply_date_type>\
             <supply_date>2026-03-15</supply_date></invoice>",
        )
        .await;
    assert_eq!(dated.status, 200, "{}", dated.body);
    dated.assert_fields(&[("supply_date", "2026-03-15")]);
    assert_eq!(
        app.call("HEAD", "/api/invoices", None)
            .await
            .header("x-total-count"),
        Some("1")
    );
}

per_kind!(the_template_of_the_complete_request_wins_over_the_documents_own);
async fn the_template_of_the_complete_request_wins_over_the_documents_own(kind: &Kind) {
    let app = App::spawn().await;
    let ty = kind.range.to_uppercase();
    let mut ids = Vec::new();
    for text in ["Vorlage Eigen", "Vorlage Anfrage"] {
        let rtf = base64_of(&format!(r"{{\rtf1\ansi {text}\par}}"));
        let t = app
            .create("/api/templates", &template(text, &ty, "rtf", &rtf))
            .await;
        ids.push(t.id());
    }
    let c = client(&app, "<name>A</name>").await;
    let own = format!("<template_id>{}</template_id>", ids[0]);
    // The request's template wins over the document's own ...
    let asked = create_for(&app, kind, c, &own).await.id();
    let r = app
        .put(
            &format!("{}/complete", kind.at(asked)),
            &format!("<complete><template_id>{}</template_id></complete>", ids[1]),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(
        pdf_text(&app, kind, asked)
            .await
            .contains("Vorlage Anfrage")
    );
    // ... and the document's own applies when the request names none.
    let plain = create_for(&app, kind, c, &own).await.id();
    complete(&app, kind, plain).await;
    assert!(pdf_text(&app, kind, plain).await.contains("Vorlage Eigen"));
}

fn base64_of(text: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(text)
}

async fn pdf_text(app: &App, kind: &Kind, id: u64) -> String {
    let pdf = app.get(&format!("{}/pdf?format=pdf", kind.at(id))).await;
    assert_eq!(pdf.status, 200, "{}", pdf.body);
    check_pdf(&pdf.bytes)
}
