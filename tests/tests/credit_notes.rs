//! Credit notes: the same document implementation as invoices, with their own names and
//! rules, tags, e-mail templates and postal mail.

use std::sync::Arc;

use base64::Engine as _;
use faktura_tests::{App, SmtpSink, free_port, test_component};

async fn client(app: &App) -> u64 {
    app.post("/api/clients", "<client><name>Müller AG</name><street>Weg 1</street><zip>10115</zip><city>Berlin</city></client>")
        .await
        .id()
}

fn item(title: &str, q: &str, price: &str, rate: &str) -> String {
    format!(
        "<credit-note-item><title>{title}</title><quantity>{q}</quantity><unit_price>{price}</unit_price>\
         <tax_name>MwSt</tax_name><tax_rate>{rate}</tax_rate></credit-note-item>"
    )
}

#[tokio::test]
async fn credit_notes_have_their_own_numbers_fields_and_totals() {
    let app = App::spawn().await;
    let c = client(&app).await;
    let cn = app
        .post(
            "/api/credit-notes",
            &format!(
                "<credit-note><client_id>{c}</client_id><title>Gutschrift</title><net_gross>GROSS</net_gross><reduction>10%</reduction>\
                 <contact_id>7</contact_id><credit-note-items>{}{}</credit-note-items></credit-note>",
                item("Rückgabe", "2", "59.50", "19"),
                item("Buch", "1", "21.40", "7")
            ),
        )
        .await;
    assert_eq!(cn.status, 201, "{}", cn.body);
    assert!(cn.body.contains("<credit-note>"), "{}", cn.body);
    assert_eq!(cn.field("credit_note_number").as_deref(), Some("CN-00001"));
    assert_eq!(cn.field("status").as_deref(), Some("DRAFT"));
    assert_eq!(cn.field("title").as_deref(), Some("Gutschrift"));
    // GROSS: 119.00 + 21.40 = 140.40 gross, less 10 % (14.04) = 126.36, spread 11.90 / 2.14:
    // 107.10 gross at 19 % (net 90.00, tax 17.10) and 19.26 at 7 % (net 18.00, tax 1.26).
    assert_eq!(cn.field("total_gross_unreduced").as_deref(), Some("140.4"));
    assert_eq!(cn.field("total_reduction").as_deref(), Some("14.04"));
    assert_eq!(cn.field("total_gross").as_deref(), Some("126.36"));
    assert_eq!(cn.field("total_net").as_deref(), Some("108"));
    assert_eq!(cn.fields("amount"), vec!["17.1", "1.26"]);
    let id = cn.id();
    let items = app
        .get(&format!("/api/credit-note-items?credit_note_id={id}"))
        .await;
    assert!(
        items.body.contains("<credit-note-items type=\"array\""),
        "{}",
        items.body
    );
    assert_eq!(items.fields("credit_note_id").len(), 2);
    let added = app
        .post(
            "/api/credit-note-items",
            &format!("<credit-note-item><credit_note_id>{id}</credit_note_id><title>Extra</title><unit_price>10</unit_price></credit-note-item>"),
        )
        .await;
    assert_eq!(added.status, 201, "{}", added.body);
    let updated = app
        .put(
            &format!("/api/credit-notes/{id}"),
            "<credit-note><label>Retoure 42</label></credit-note>",
        )
        .await;
    assert_eq!(updated.status, 200, "{}", updated.body);
    assert_eq!(updated.field("label").as_deref(), Some("Retoure 42"));
    // Invoices and credit notes number independently and keep their ids apart.
    let inv = app
        .post(
            "/api/invoices",
            &format!("<invoice><client_id>{c}</client_id></invoice>"),
        )
        .await;
    assert_eq!(inv.field("invoice_number").as_deref(), Some("INV-00001"));
    assert_eq!(
        app.get(&format!("/api/invoices/{id}")).await.status,
        200,
        "ids are per kind"
    );
    app.get("/api/credit-notes/999")
        .await
        .assert_error(404, "credit note 999 does not exist");
}

#[tokio::test]
async fn a_credit_note_made_from_an_invoice_copies_client_and_items() {
    let app = App::spawn().await;
    let c = client(&app).await;
    let inv = app
        .post(
            "/api/invoices",
            &format!("<invoice><client_id>{c}</client_id><invoice-items><invoice-item><title>Work</title><quantity>3</quantity><unit_price>100</unit_price><tax_rate>19</tax_rate><tax_name>MwSt</tax_name></invoice-item></invoice-items></invoice>"),
        )
        .await;
    let cn = app
        .post(
            "/api/credit-notes",
            &format!(
                "<credit-note><invoice_id>{}</invoice_id></credit-note>",
                inv.id()
            ),
        )
        .await;
    assert_eq!(cn.status, 201, "{}", cn.body);
    assert_eq!(cn.field("client_id"), inv.field("client_id"));
    assert_eq!(
        cn.field("invoice_id").as_deref(),
        Some(&*inv.id().to_string())
    );
    assert_eq!(cn.field("total_gross").as_deref(), Some("357"));
    let items = app
        .get(&format!(
            "/api/credit-note-items?credit_note_id={}",
            cn.id()
        ))
        .await;
    assert_eq!(items.fields("title"), vec!["Work"]);
    app.post(
        "/api/credit-notes",
        "<credit-note><invoice_id>999</invoice_id></credit-note>",
    )
    .await
    .assert_error(400, "invoice_id 999 does not exist");
    app.post(
        "/api/credit-notes",
        "<credit-note><title>x</title></credit-note>",
    )
    .await
    .assert_error(400, "client_id is mandatory");
}

#[tokio::test]
async fn lifecycle_payments_comments_and_tags() {
    let app = App::spawn().await;
    let c = client(&app).await;
    let id = app
        .post("/api/credit-notes", &format!("<credit-note><client_id>{c}</client_id><credit-note-items>{}</credit-note-items></credit-note>", item("A", "1", "50", "0")))
        .await
        .id();
    let url = format!("/api/credit-notes/{id}");
    app.post("/api/credit-note-payments", &format!("<credit-note-payment><credit_note_id>{id}</credit_note_id><amount>5</amount></credit-note-payment>"))
        .await
        .assert_error(400, "payments can be booked only for OPEN or OVERDUE credit notes");
    assert_eq!(app.put(&format!("{url}/complete"), "").await.status, 200);
    app.put(&url, "<credit-note><title>x</title></credit-note>")
        .await
        .assert_error(400, "only a DRAFT credit note can be changed");
    let p = app
        .post("/api/credit-note-payments", &format!("<credit-note-payment><credit_note_id>{id}</credit_note_id><amount>50</amount></credit-note-payment>"))
        .await;
    assert_eq!(p.status, 201, "{}", p.body);
    assert_eq!(app.get(&url).await.field("status").as_deref(), Some("PAID"));
    app.delete(&format!("/api/credit-note-payments/{}", p.id()))
        .await;
    assert_eq!(app.get(&url).await.field("status").as_deref(), Some("OPEN"));
    let marked = app
        .post("/api/credit-note-payments", &format!("<credit-note-payment><credit_note_id>{id}</credit_note_id><amount>1</amount><mark_credit_note_as_paid>1</mark_credit_note_as_paid></credit-note-payment>"))
        .await;
    assert_eq!(
        marked.field("mark_credit_note_as_paid").as_deref(),
        Some("1")
    );
    assert_eq!(app.get(&url).await.field("status").as_deref(), Some("PAID"));
    assert_eq!(app.put(&format!("{url}/cancel"), "").await.status, 200);
    assert_eq!(
        app.get(&url).await.field("status").as_deref(),
        Some("CANCELED")
    );
    assert_eq!(app.put(&format!("{url}/uncancel"), "").await.status, 200);
    assert_eq!(app.get(&url).await.field("status").as_deref(), Some("PAID"));
    let comment = app
        .post("/api/credit-note-comments", &format!("<credit-note-comment><credit_note_id>{id}</credit_note_id><comment>ok</comment></credit-note-comment>"))
        .await;
    assert_eq!(comment.status, 201, "{}", comment.body);
    let comments = app
        .get(&format!("/api/credit-note-comments?credit_note_id={id}"))
        .await;
    assert_eq!(
        comments.fields("actionkey"),
        vec![
            "CREATE",
            "STATUS",
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
    let tag = app
        .post("/api/credit-note-tags", &format!("<credit-note-tag><credit_note_id>{id}</credit_note_id><name>Retoure</name></credit-note-tag>"))
        .await;
    assert_eq!(tag.status, 201, "{}", tag.body);
    let tags = app
        .get(&format!("/api/credit-note-tags?credit_note_id={id}"))
        .await;
    assert_eq!(tags.fields("name"), vec!["Retoure"]);
    assert_eq!(
        app.delete(&format!("/api/credit-note-tags/{}", tag.id()))
            .await
            .status,
        200
    );
    assert_eq!(
        app.get(&format!("/api/credit-note-tags?credit_note_id={id}"))
            .await
            .header("x-total-count"),
        Some("0")
    );
}

#[tokio::test]
async fn filters_and_groups_of_credit_notes() {
    let app = App::spawn().await;
    let a = client(&app).await;
    let b = client(&app).await;
    let mut ids = Vec::new();
    for (cl, date, label, article) in [
        (a, "2025-12-30", "Retoure", 11),
        (a, "2026-01-05", "Kulanz", 12),
        (b, "2026-02-01", "Retoure", 11),
    ] {
        let r = app
            .post(
                "/api/credit-notes",
                &format!("<credit-note><client_id>{cl}</client_id><date>{date}</date><label>{label}</label><contact_id>{cl}</contact_id>\
                 <credit-note-items><credit-note-item><article_id>{article}</article_id><unit_price>10</unit_price></credit-note-item></credit-note-items></credit-note>"),
            )
            .await;
        assert_eq!(r.status, 201, "{}", r.body);
        ids.push(r.id());
    }
    app.put(&format!("/api/credit-notes/{}/complete", ids[0]), "")
        .await;
    for name in ["retoure", "wichtig"] {
        app.post("/api/credit-note-tags", &format!("<credit-note-tag><credit_note_id>{}</credit_note_id><name>{name}</name></credit-note-tag>", ids[2])).await;
    }
    app.post("/api/credit-note-tags", &format!("<credit-note-tag><credit_note_id>{}</credit_note_id><name>alt</name></credit-note-tag>", ids[0])).await;
    let count = |q: &'static str| {
        let app = &app;
        async move {
            app.call("HEAD", &format!("/api/credit-notes?{q}"), None)
                .await
                .header("x-total-count")
                .unwrap()
                .to_string()
        }
    };
    assert_eq!(count("tags=wichtig").await, "1");
    assert_eq!(count("tags=alt,wichtig").await, "2");
    assert_eq!(count("credit_note_number=cn-0000").await, "3");
    assert_eq!(count("credit-note_number=00002").await, "1");
    assert_eq!(count("label=retoure").await, "2");
    assert_eq!(count("article_id=11").await, "2");
    assert_eq!(count("status=DRAFT").await, "2");
    assert_eq!(count("from=2026-01-01").await, "2");
    let contact = app.get(&format!("/api/credit-notes?contact_id={b}")).await;
    assert_eq!(contact.header("x-total-count"), Some("1"));
    let groups = app.get("/api/credit-notes?group_by=status,year").await;
    assert!(
        groups
            .body
            .contains("<credit-note-groups type=\"array\" currency_code=\"EUR\">"),
        "{}",
        groups.body
    );
    assert!(
        groups.body.contains("<credit-note-params>"),
        "{}",
        groups.body
    );
    let pairs: Vec<(String, String)> = groups
        .fields("status")
        .into_iter()
        .step_by(2)
        .zip(groups.fields("year").into_iter().step_by(2))
        .collect();
    assert_eq!(
        pairs,
        vec![
            ("DRAFT".to_string(), "2026".to_string()),
            ("OVERDUE".to_string(), "2025".to_string()),
        ]
    );
    assert_eq!(groups.fields("count"), vec!["2", "1"]);
}

#[tokio::test]
async fn print_versions_signatures_and_postal_mail() {
    let postal = tempfile::tempdir().unwrap();
    let queue = postal.path().to_path_buf();
    let data = Arc::new(tempfile::tempdir().unwrap());
    let app = App::spawn_configured(data, test_component(), move |o| o.postal = Some(queue)).await;
    let c = client(&app).await;
    let id = app
        .post("/api/credit-notes", &format!("<credit-note><client_id>{c}</client_id><credit-note-items>{}</credit-note-items></credit-note>", item("A", "1", "50", "19")))
        .await
        .id();
    let url = format!("/api/credit-notes/{id}");
    app.post(&format!("{url}/mail"), "")
        .await
        .assert_error(400, "only completed credit notes");
    assert_eq!(app.put(&format!("{url}/complete"), "").await.status, 200);
    let pdf = app.get(&format!("{url}/pdf")).await;
    assert_eq!(
        pdf.field("credit_note_id").as_deref(),
        Some(&*id.to_string())
    );
    assert_eq!(
        pdf.field("filename").as_deref(),
        Some(&*format!("credit_note_{id}.pdf"))
    );
    app.get(&format!("{url}/pdf?type=print"))
        .await
        .assert_error(400, "print_version");
    app.put(
        "/api/settings",
        "<settings><print_version>1</print_version></settings>",
    )
    .await;
    let print = app.get(&format!("{url}/pdf?type=print&format=pdf")).await;
    assert_eq!(print.status, 200);
    assert!(print.bytes.starts_with(b"%PDF-"));
    assert_ne!(
        print.bytes,
        app.get(&format!("{url}/pdf?format=pdf")).await.bytes
    );
    let signed = base64::engine::general_purpose::STANDARD.encode(b"%PDF-1.7 signed");
    assert_eq!(
        app.put(
            &format!("{url}/upload-signature"),
            &format!("<signature><base64file>{signed}</base64file></signature>")
        )
        .await
        .status,
        200
    );
    assert_eq!(
        app.get(&format!("{url}/pdf?type=signed"))
            .await
            .field("base64file")
            .as_deref(),
        Some(&*signed)
    );

    let extra = base64::engine::general_purpose::STANDARD.encode(b"%PDF-1.4 terms");
    for weight in ["80", "90"] {
        let r = app
            .post(
                &format!("{url}/mail"),
                &format!("<mail><color>1</color><duplex>0</duplex><paper_weight>{weight}</paper_weight><attachments><attachment><filename>terms.pdf</filename><mimetype>application/pdf</mimetype><base64file>{extra}</base64file></attachment></attachments></mail>"),
            )
            .await;
        assert_eq!(r.status, 200, "{}", r.body);
    }
    assert_eq!(
        app.post(&format!("{url}/mail"), "").await.status,
        200,
        "defaults"
    );
    let mut jobs: Vec<String> = std::fs::read_dir(postal.path())
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path().join("job.txt")).unwrap())
        .collect();
    jobs.sort();
    assert_eq!(jobs.len(), 3);
    assert!(
        jobs.iter().any(|j| j.contains("paper_weight=80")
            && j.contains("color=1")
            && j.contains("duplex=0"))
    );
    assert!(
        jobs.iter()
            .any(|j| j.contains("paper_weight=90") && j.contains("document=02.pdf"))
    );
    assert!(
        jobs.iter()
            .any(|j| j.contains("color=0\nduplex=1\npaper_weight=90")),
        "defaults: {jobs:?}"
    );
    assert!(jobs.iter().all(|j| j.contains("address=Müller AG")));
    app.post(
        &format!("{url}/mail"),
        "<mail><paper_weight>100</paper_weight></mail>",
    )
    .await
    .assert_error(400, "paper_weight must be 80 or 90");
    let gif = base64::engine::general_purpose::STANDARD.encode(b"GIF89a");
    app.post(&format!("{url}/mail"), &format!("<mail><attachments><attachment><filename>x.gif</filename><base64file>{gif}</base64file></attachment></attachments></mail>"))
        .await
        .assert_error(400, "not a PDF file");
    let pdf = base64::engine::general_purpose::STANDARD.encode(b"%PDF-1.4\n");
    app.post(&format!("{url}/mail"), &format!("<mail><attachments><attachment><filename>../../x.pdf</filename><base64file>{pdf}</base64file></attachment></attachments></mail>"))
        .await
        .assert_error(400, "attachment filename \"../../x.pdf\" must be a plain file name");
    assert_eq!(
        std::fs::read_dir(postal.path()).unwrap().count(),
        3,
        "refused letters leave nothing"
    );
    let comments = app
        .get(&format!("/api/credit-note-comments?credit_note_id={id}"))
        .await;
    assert_eq!(
        comments
            .fields("actionkey")
            .iter()
            .filter(|k| *k == "LETTER")
            .count(),
        3
    );
    // Without a postal queue the add-on is off.
    let plain = App::spawn().await;
    let c = client(&plain).await;
    let other = plain
        .post(
            "/api/credit-notes",
            &format!("<credit-note><client_id>{c}</client_id></credit-note>"),
        )
        .await
        .id();
    plain
        .put(&format!("/api/credit-notes/{other}/complete"), "")
        .await;
    plain
        .post(&format!("/api/credit-notes/{other}/mail"), "")
        .await
        .assert_error(400, "postal dispatch is not configured");
    plain
        .post(&format!("/api/invoices/{other}/mail"), "")
        .await
        .assert_error(404, "no resource");
}

#[tokio::test]
async fn credit_notes_are_mailed_with_an_email_template() {
    let sink = SmtpSink::start(free_port()).await;
    let data = Arc::new(tempfile::tempdir().unwrap());
    let url = sink.url();
    let app = App::spawn_configured(data, test_component(), move |o| o.smtp = Some(url)).await;
    let template = app
        .post(
            "/api/email-templates",
            "<email-template><name>Gutschrift</name><subject>Gutschrift [CreditNote.credit_note_number]</subject>\
             <body>Wir erstatten [CreditNote.total_gross].</body></email-template>",
        )
        .await;
    assert_eq!(template.status, 201, "{}", template.body);
    let c = client(&app).await;
    let id = app
        .post("/api/credit-notes", &format!("<credit-note><client_id>{c}</client_id><credit-note-items>{}</credit-note-items></credit-note>", item("A", "1", "10", "0")))
        .await
        .id();
    app.put(&format!("/api/credit-notes/{id}/complete"), "")
        .await;
    let r = app
        .post(
            &format!("/api/credit-notes/{id}/email"),
            &format!("<email><email_template_id>{}</email_template_id><recipients><to>client@example.org</to></recipients></email>", template.id()),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let m = &sink.wait_for(1, 15).await[0];
    assert!(m.contains("Subject: Gutschrift CN-00001"), "{m}");
    assert!(m.contains("Wir erstatten 10,00 EUR."), "{m}");
    assert!(
        m.contains("filename=\"invoice_"),
        "the spec's default attachment name: {m}"
    );
    app.post(
        &format!("/api/credit-notes/{id}/email"),
        "<email><email_template_id>999</email_template_id><recipients><to>client@example.org</to></recipients></email>",
    )
    .await
    .assert_error(400, "email_template_id 999 does not exist");
}
