//! What only credit notes do: a title and numbers apart from invoices, credit notes made
//! from an invoice, the contact filter and the contract's spelling of the number filter,
//! postal letters and e-mail templates. What they share with invoices is in both_kinds.rs.

use std::sync::Arc;

use base64::Engine as _;
use faktura_tests::{App, SmtpSink, free_port, postal_letters, test_component};

use crate::support::{CREDIT_NOTES, INVOICES, client, complete, create, create_for, item, items};

const CLIENT: &str =
    "<name>Müller AG</name><street>Weg 1</street><zip>10115</zip><city>Berlin</city>";

/// The items of a credit note with one item at `price`, taxed at `rate` %.
fn one_item(price: &str, rate: &str) -> String {
    let kind = &CREDIT_NOTES;
    items(kind, &[item(kind, "1", price, "MwSt", rate, "")])
}

#[tokio::test]
async fn credit_notes_have_a_title_and_numbers_and_ids_apart_from_invoices() {
    let app = App::spawn().await;
    let c = client(&app, CLIENT).await;
    let titled = "<title>Gutschrift</title>";
    let cn = create_for(&app, &CREDIT_NOTES, c, titled).await;
    assert!(cn.body.contains("<credit-note>"), "{}", cn.body);
    cn.assert_fields(&[
        ("credit_note_number", "CN-00001"),
        ("status", "DRAFT"),
        ("title", "Gutschrift"),
    ]);
    let id = cn.id();
    // Invoices and credit notes number independently and keep their ids apart.
    let inv = create_for(&app, &INVOICES, c, "").await;
    inv.assert_fields(&[("invoice_number", "INV-00001")]);
    assert_eq!(
        app.get(&INVOICES.at(id)).await.status,
        200,
        "ids are per kind"
    );
}

#[tokio::test]
async fn a_credit_note_made_from_an_invoice_copies_client_and_items() {
    let app = App::spawn().await;
    let c = client(&app, CLIENT).await;
    let work = "<invoice-items><invoice-item><title>Work</title><quantity>3</quantity><unit_price>100</unit_price>\
                <tax_rate>19</tax_rate><tax_name>MwSt</tax_name></invoice-item></invoice-items>";
    let inv = create_for(&app, &INVOICES, c, work).await;
    let made = format!("<invoice_id>{}</invoice_id>", inv.id());
    let cn = create(&app, &CREDIT_NOTES, &made).await;
    assert_eq!(cn.field("client_id"), inv.field("client_id"));
    cn.assert_fields(&[
        ("invoice_id", &inv.id().to_string()),
        ("total_gross", "357"),
    ]);
    let items = app.get(&CREDIT_NOTES.parts_of("items", cn.id())).await;
    assert_eq!(items.fields("title"), vec!["Work"]);
    for (inner, fragment) in [
        (
            "<invoice_id>999</invoice_id>",
            "invoice_id 999 does not exist",
        ),
        ("<title>x</title>", "client_id is mandatory"),
    ] {
        let r = app
            .post(&CREDIT_NOTES.list(), &CREDIT_NOTES.body(inner))
            .await;
        r.assert_error(400, fragment);
    }
}

#[tokio::test]
async fn credit_notes_filter_by_contact_and_by_the_contracts_spelling_of_the_number() {
    let app = App::spawn().await;
    let a = client(&app, CLIENT).await;
    let b = client(&app, CLIENT).await;
    let mut contacts = Vec::new();
    for cl in [a, b] {
        let r = app
            .post(
                "/api/contacts",
                &format!("<contact><client_id>{cl}</client_id><name>Buchhaltung</name></contact>"),
            )
            .await;
        assert_eq!(r.status, 201, "{}", r.body);
        contacts.push(r.id());
    }
    for (cl, contact) in [(a, contacts[0]), (a, contacts[0]), (b, contacts[1])] {
        let contact = format!("<contact_id>{contact}</contact_id>");
        create_for(&app, &CREDIT_NOTES, cl, &contact).await;
    }
    let contact = app
        .get(&format!("/api/credit-notes?contact_id={}", contacts[1]))
        .await;
    assert_eq!(contact.header("x-total-count"), Some("1"));
    let spelled = app
        .call("HEAD", "/api/credit-notes?credit-note_number=00002", None)
        .await;
    assert_eq!(spelled.header("x-total-count"), Some("1"));
}

#[tokio::test]
async fn letters_go_to_the_postal_queue_once_it_is_configured() {
    let postal = tempfile::tempdir().unwrap();
    let queue = postal.path().to_path_buf();
    let data = Arc::new(tempfile::tempdir().unwrap());
    let app = App::spawn_configured(data, test_component(), move |o| o.postal = Some(queue)).await;
    let c = client(&app, CLIENT).await;
    let id = create_for(&app, &CREDIT_NOTES, c, &one_item("50", "19"))
        .await
        .id();
    let url = format!("/api/credit-notes/{id}");
    app.post(&format!("{url}/mail"), "")
        .await
        .assert_error(400, "only completed credit notes");
    complete(&app, &CREDIT_NOTES, id).await;

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
    let mut jobs = postal_letters(postal.path(), 3, 10).await;
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
    // Without a postal queue the add-on is off. On a PostgreSQL store a letter waits in
    // the store's mail table for any host with a postal queue (README), so a host without
    // one takes it too.
    let plain = App::spawn().await;
    let c = client(&plain, CLIENT).await;
    let other = create_for(&plain, &CREDIT_NOTES, c, "").await.id();
    complete(&plain, &CREDIT_NOTES, other).await;
    let letter = plain
        .post(&format!("/api/credit-notes/{other}/mail"), "")
        .await;
    if plain.store.is_none() {
        letter.assert_error(400, "postal dispatch is not configured");
    } else {
        assert_eq!(letter.status, 200, "{}", letter.body);
        let queued = plain.outbox().await;
        assert_eq!(queued.len(), 1, "the letter waits in the store");
        assert_eq!(queued[0].status, "queued");
    }
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
    let c = client(&app, CLIENT).await;
    let id = create_for(&app, &CREDIT_NOTES, c, &one_item("10", "0"))
        .await
        .id();
    complete(&app, &CREDIT_NOTES, id).await;
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
