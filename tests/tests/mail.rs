//! Sending invoices by e-mail through a real SMTP server, and keeping mail while it is down.

use std::path::Path;
use std::sync::Arc;

use base64::Engine as _;
use faktura_host::OutboxEntry;
use faktura_tests::{App, SmtpSink, free_port, test_component};

use crate::support::{INVOICES, client, complete, create_for};

async fn completed_invoice(app: &App) -> u64 {
    app.put(
        "/api/settings",
        "<settings><company_name>Faktura GmbH</company_name><default_email_sender>billing@faktura.example</default_email_sender>\
         <bcc_addresses>archive@faktura.example</bcc_addresses></settings>",
    )
    .await;
    let c = client(app, "<name>Müller AG</name>").await;
    let items = "<invoice-items><invoice-item><title>Work</title><unit_price>100</unit_price></invoice-item></invoice-items>";
    let id = create_for(app, &INVOICES, c, items).await.id();
    complete(app, &INVOICES, id).await;
    id
}

/// An app that sends mail through `smtp`, with a completed invoice; the invoice's id.
async fn app_mailing_through(smtp: String) -> (App, u64) {
    let data = Arc::new(tempfile::tempdir().unwrap());
    let app = App::spawn_configured(data, test_component(), move |o| o.smtp = Some(smtp)).await;
    let id = completed_invoice(&app).await;
    (app, id)
}

/// Sends invoice `id` to client@example.org, which the API must accept.
async fn email_the_client(app: &App, id: u64) {
    let r = app
        .post(
            &format!("/api/invoices/{id}/email"),
            "<email><recipients><to>client@example.org</to></recipients></email>",
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
}

/// The only message in `outbox` once a delivery of it was attempted (at most 10 s).
async fn first_attempt(outbox: &Path) -> OutboxEntry {
    for _ in 0..100 {
        let listed = faktura_host::list_outbox(outbox).unwrap();
        if listed[0].state.attempts >= 1 {
            return listed[0].clone();
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("a delivery attempt was made");
}

/// The base64 body of the MIME part whose headers name `filename`.
fn attachment(message: &str, filename: &str) -> Vec<u8> {
    let marker = format!("filename=\"{filename}\"");
    let start = message
        .find(&marker)
        .unwrap_or_else(|| panic!("no {filename} in {message}"));
    let rest = &message[start..];
    let body_start = rest.find("\n\n").or_else(|| rest.find("\r\n\r\n")).unwrap();
    let body: String = rest[body_start..]
        .lines()
        .map(str::trim)
        .skip_while(|l| l.is_empty())
        .take_while(|l| !l.is_empty() && !l.starts_with("--"))
        .collect();
    base64::engine::general_purpose::STANDARD
        .decode(&body)
        .unwrap_or_else(|e| panic!("{e}: {body:?} in {}", &rest[..rest.len().min(400)]))
}

#[tokio::test]
async fn an_invoice_is_mailed_with_its_pdf() {
    let sink = SmtpSink::start(free_port()).await;
    let (app, id) = app_mailing_through(sink.url()).await;
    let extra = base64::engine::general_purpose::STANDARD.encode(b"terms and conditions");
    let r = app
        .post(
            &format!("/api/invoices/{id}/email"),
            &format!(
                "<email><recipients><to>client@example.org</to><cc>boss@example.org</cc><bcc>hidden@example.org</bcc></recipients>\
                 <subject>Rechnung [Invoice.invoice_number] für [Client.name]</subject>\
                 <body>Hallo [Client.name], anbei [Invoice.invoice_number] über [Invoice.total_gross].</body>\
                 <attachments><attachment><filename>terms.txt</filename><mimetype>text/plain</mimetype><base64file>{extra}</base64file></attachment></attachments></email>"
            ),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let messages = sink.wait_for(1, 15).await;
    let m = &messages[0];
    assert!(
        m.contains("client@example.org") && m.contains("boss@example.org"),
        "{m}"
    );
    assert!(!m.contains("Bcc:"), "Bcc is not in the message: {m}");
    // ... but the server got it as a recipient (the sink records the envelope).
    assert!(
        m.contains("hidden@example.org, archive@faktura.example"),
        "{m}"
    );
    assert!(m.contains("From: billing@faktura.example"), "{m}");
    assert!(
        m.contains("Subject: =?utf-8?") || m.contains("Subject: Rechnung INV-00001"),
        "{m}"
    );
    let pdf = app.get(&format!("/api/invoices/{id}/pdf")).await;
    let stored = base64::engine::general_purpose::STANDARD
        .decode(pdf.field("base64file").unwrap())
        .unwrap();
    assert_eq!(attachment(m, &format!("invoice_{id}.pdf")), stored);
    // Short text attachments travel as 7-bit text.
    assert!(
        m.contains("filename=\"terms.txt\"") && m.contains("\nterms and conditions\n"),
        "{m}"
    );
    let comments = app
        .get(&format!("/api/invoice-comments?invoice_id={id}"))
        .await;
    assert!(
        comments
            .body
            .contains("Sent by e-mail to client@example.org, boss@example.org"),
        "{}",
        comments.body
    );
    assert!(comments.fields("actionkey").contains(&"MAIL".to_string()));
    // The sent message is listed as such; the account's Bcc archive got it too.
    let listed = faktura_host::list_outbox(&app.data.path().join("outbox")).unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].status, "sent");
    for recipient in ["archive@faktura.example", "hidden@example.org"] {
        assert!(
            listed[0].recipients.contains(&recipient.to_string()),
            "{recipient}: {:?}",
            listed[0].recipients
        );
    }
}

#[tokio::test]
async fn bad_e_mail_requests_are_refused_and_change_nothing() {
    let app = App::spawn().await;
    let id = completed_invoice(&app).await;
    let url = format!("/api/invoices/{id}/email");
    for (body, fragment) in [
        (
            "<email><subject>x</subject></email>",
            "at least one to, cc or bcc",
        ),
        (
            "<email><recipients><to>not-an-address</to></recipients></email>",
            "\"not-an-address\" is not an e-mail address",
        ),
        (
            "<email><recipients><to>a@example.org\r\nBcc: x@example.org</to></recipients></email>",
            "is not an e-mail address",
        ),
        (
            "<email><recipients><to>a@example.org</to></recipients><subject>a&#10;Bcc: x@example.org</subject></email>",
            "subject must be a single line",
        ),
        (
            "<mail><recipients><to>a@example.org</to></recipients></mail>",
            "expected an <email> root element",
        ),
    ] {
        app.post(&url, body).await.assert_error(400, fragment);
    }
    let draft_client = client(&app, "<name>B</name>").await;
    let draft = create_for(&app, &INVOICES, draft_client, "").await.id();
    app.post(
        &format!("/api/invoices/{draft}/email"),
        "<email><recipients><to>a@example.org</to></recipients></email>",
    )
    .await
    .assert_error(400, "only completed invoices can be sent");
    let comments = app
        .get(&format!("/api/invoice-comments?invoice_id={id}"))
        .await;
    assert!(!comments.fields("actionkey").contains(&"MAIL".to_string()));
    assert!(
        faktura_host::list_outbox(&app.data.path().join("outbox"))
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn mail_waits_in_the_outbox_while_the_server_is_down() {
    let port = free_port();
    let (app, id) = app_mailing_through(format!("smtp://127.0.0.1:{port}")).await;
    email_the_client(&app, id).await;
    let outbox = app.data.path().join("outbox");
    // The first attempt fails and is recorded; the message stays queued.
    let entry = first_attempt(&outbox).await;
    assert_eq!(entry.status, "queued");
    assert!(entry.state.attempts >= 1);
    assert!(
        entry.state.last_error.starts_with("will retry"),
        "{:?}",
        entry.state
    );
    // The server comes back: the retry delivers it.
    let sink = SmtpSink::start(port).await;
    let messages = sink.wait_for(1, 30).await;
    assert!(messages[0].contains("client@example.org"));
    for _ in 0..50 {
        if faktura_host::list_outbox(&outbox).unwrap()[0].status == "sent" {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("the delivered message was not moved to sent/");
}

#[tokio::test]
async fn refusals_keep_the_message_queued_or_mark_it_failed_with_the_reason() {
    for permanent in [false, true] {
        let sink = SmtpSink::refusing(free_port(), permanent).await;
        let (app, id) = app_mailing_through(sink.url()).await;
        email_the_client(&app, id).await;
        let entry = first_attempt(&app.data.path().join("outbox")).await;
        if permanent {
            assert_eq!(entry.status, "failed");
            assert!(entry.state.last_error.contains("550"), "{:?}", entry.state);
        } else {
            assert_eq!(entry.status, "queued");
            assert!(entry.state.last_error.contains("451"), "{:?}", entry.state);
            assert!(entry.state.next_try > 0);
        }
    }
}
