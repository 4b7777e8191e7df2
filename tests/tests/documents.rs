//! Completion renders real PDFs: checked with qpdf and pdftotext (poppler-utils). Signed
//! and print versions run for both kinds; the rest renders invoices.

use base64::Engine as _;
use faktura_tests::{App, check_pdf, send_raw};

use crate::support::{INVOICES, Kind, complete, template};

/// A .docx file whose word/document.xml is `document`.
fn docx(document: &[u8]) -> Vec<u8> {
    use std::io::Write as _;
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default();
    zip.start_file("word/document.xml", options).unwrap();
    zip.write_all(document).unwrap();
    zip.finish().unwrap().into_inner()
}

async fn setup(app: &App, items: usize) -> u64 {
    setup_as(app, &INVOICES, &app.key, items).await
}

/// Settings, a client and a draft document of `kind` with `items` items, in the account of
/// `key`.
async fn setup_as(app: &App, kind: &Kind, key: &str, items: usize) -> u64 {
    app.call_as(
        key,
        "PUT",
        "/api/settings",
        Some(
            "<settings><company_name>Faktura GmbH</company_name><company_city>Berlin</company_city>\
             <locale>de_DE</locale></settings>",
        ),
    )
    .await;
    let c = app
        .call_as(
            key,
            "POST",
            "/api/clients",
            Some("<client><name>Müller &amp; Söhne AG</name><street>Hauptstraße 5</street><zip>10115</zip><city>Berlin</city></client>"),
        )
        .await
        .id();
    let item = kind.named("item");
    let mut body = format!(
        "<{0}><client_id>{c}</client_id><date>2026-11-02</date><{1}>",
        kind.singular,
        kind.named("items")
    );
    body.push_str(&format!(
        "<{item}><title>Счёт за услуги</title><quantity>1</quantity><unit_price>100</unit_price><tax_name>MwSt</tax_name><tax_rate>19</tax_rate></{item}>",
    ));
    for i in 1..items {
        body.push_str(&format!(
            "<{item}><title>Beratung Teil {i}</title><quantity>2</quantity><unit>Std</unit><unit_price>50</unit_price><tax_name>MwSt</tax_name><tax_rate>19</tax_rate></{item}>"
        ));
    }
    body.push_str(&format!("</{}></{}>", kind.named("items"), kind.singular));
    let doc = app.call_as(key, "POST", &kind.list(), Some(&body)).await;
    assert_eq!(doc.status, 201, "{}", doc.body);
    doc.id()
}

/// The PDF bytes of document `id` of `kind`; `query` adds to `?format=pdf`.
async fn pdf_bytes(app: &App, kind: &Kind, id: u64, query: &str) -> Vec<u8> {
    let r = send_raw(
        &app.base,
        "GET",
        &format!("{}/pdf?format=pdf{query}", kind.at(id)),
        None,
        &[("X-ServiceApiKey", &app.key)],
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.header("content-type"), Some("application/pdf"));
    r.bytes
}

#[tokio::test]
async fn completing_renders_a_pdf_with_the_invoice_text() {
    let app = App::spawn().await;
    let id = setup(&app, 3).await;
    app.get(&format!("/api/invoices/{id}/pdf"))
        .await
        .assert_error(404, "DRAFT");
    complete(&app, &INVOICES, id).await;
    let record = app.get(&format!("/api/invoices/{id}/pdf")).await;
    assert_eq!(record.status, 200, "{}", record.body);
    let filename = format!("invoice_{id}.pdf");
    record.assert_fields(&[("filename", &filename), ("mimetype", "application/pdf")]);
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(record.field("base64file").unwrap())
        .unwrap();
    assert_eq!(record.field("filesize").unwrap(), bytes.len().to_string());
    // The bytes endpoint serves the same file.
    let raw = send_raw(
        &app.base,
        "GET",
        &format!("/api/invoices/{id}/pdf"),
        None,
        &[("X-ServiceApiKey", &app.key), ("Accept", "application/pdf")],
    )
    .await;
    assert_eq!(raw.header("content-type"), Some("application/pdf"));
    assert_eq!(raw.bytes, bytes);
    let text = check_pdf(&bytes);
    for expected in [
        "INV-00001",
        "Müller & Söhne AG",
        "Hauptstraße 5",
        "10115 Berlin",
        "Счёт за услуги",
        "Beratung Teil 1",
        "Beratung Teil 2",
        "300,00 EUR",
        "57,00 EUR",
        "357,00 EUR",
        "Faktura GmbH",
        "02.11.2026",
    ] {
        assert!(text.contains(expected), "{expected:?} missing in:\n{text}");
    }
}

#[tokio::test]
async fn equal_invoices_render_to_equal_bytes() {
    let app = App::spawn().await;
    let other = app.new_account("Twin").await;
    // Two accounts with the same settings, client and invoice.
    let first = setup_as(&app, &INVOICES, &app.key, 4).await;
    let second = setup_as(&app, &INVOICES, &other, 4).await;
    for (key, id) in [(&app.key, first), (&other, second)] {
        let r = app
            .call_as(
                key,
                "PUT",
                &format!("/api/invoices/{id}/complete"),
                Some(""),
            )
            .await;
        assert_eq!(r.status, 200, "{}", r.body);
    }
    let a = app
        .call_as(&app.key, "GET", &format!("/api/invoices/{first}/pdf"), None)
        .await;
    let b = app
        .call_as(&other, "GET", &format!("/api/invoices/{second}/pdf"), None)
        .await;
    assert!(a.field("base64file").is_some_and(|f| f.len() > 1000));
    assert_eq!(a.field("base64file"), b.field("base64file"));
}

#[tokio::test]
async fn long_invoices_span_pages_with_repeated_headers() {
    let app = App::spawn().await;
    let id = setup(&app, 60).await;
    complete(&app, &INVOICES, id).await;
    let text = check_pdf(&pdf_bytes(&app, &INVOICES, id, "").await);
    assert!(text.contains("Page 2 of"), "{text}");
    assert!(
        text.matches("Unit price").count() >= 2,
        "header repeated:\n{text}"
    );
    assert!(text.contains("Beratung Teil 59"));
}

#[tokio::test]
async fn template_text_is_laid_out_with_placeholders_resolved() {
    let app = App::spawn().await;
    let rtf = base64::engine::general_purpose::STANDARD.encode(
        br"{\rtf1\ansi{\fonttbl{\f0 Arial;}}\f0 Rechnung [Invoice.invoice_number] f\'fcr [Client.name]\par Zahlbar bis [Invoice.due_date].\par}",
    );
    let docx = docx(
        br#"<w:document xmlns:w="x"><w:body><w:p><w:r><w:t>Gutschrift-Vorlage [Company.name] / [Invoice.total_gross]</w:t></w:r></w:p></w:body></w:document>"#,
    );
    let docx = base64::engine::general_purpose::STANDARD.encode(docx);
    app.create("/api/templates", &template("R", "INVOICE", "rtf", &rtf))
        .await;
    let docx_template = app
        .create("/api/templates", &template("D", "INVOICE", "docx", &docx))
        .await;
    // The default template (the first one, rtf) applies without template_id.
    let first = setup(&app, 1).await;
    complete(&app, &INVOICES, first).await;
    let text = check_pdf(&pdf_bytes(&app, &INVOICES, first, "").await);
    assert!(
        text.contains("Rechnung INV-00001 für Müller & Söhne AG"),
        "{text}"
    );
    assert!(text.contains("Zahlbar bis 16.11.2026."), "{text}");
    // A template named in the completion wins.
    let second = setup(&app, 1).await;
    let r = app
        .put(
            &format!("/api/invoices/{second}/complete"),
            &format!(
                "<complete><template_id>{}</template_id></complete>",
                docx_template.id()
            ),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let text = check_pdf(&pdf_bytes(&app, &INVOICES, second, "").await);
    assert!(
        text.contains("Gutschrift-Vorlage Faktura GmbH / 119,00 EUR"),
        "{text}"
    );
}

per_kind!(priced: signatures_print_versions_and_bad_input);
async fn signatures_print_versions_and_bad_input(kind: &Kind) {
    let app = App::spawn().await;
    let id = setup_as(&app, kind, &app.key, 1).await;
    let url = kind.at(id);
    let pdf_b64 = base64::engine::general_purpose::STANDARD.encode(b"%PDF-1.7\n% signed\n");
    let signature = format!("<signature><base64file>{pdf_b64}</base64file></signature>");
    app.put(&format!("{url}/upload-signature"), &signature)
        .await
        .assert_error(400, &format!("only for completed {}s", kind.label));
    app.put(
        &format!("{url}/complete"),
        "<complete><template_id>999</template_id></complete>",
    )
    .await
    .assert_error(400, "template_id 999 does not exist");
    assert_eq!(
        app.get(&url).await.field("status").as_deref(),
        Some("DRAFT")
    );
    complete(&app, kind, id).await;
    let record = app.get(&format!("{url}/pdf")).await;
    assert_eq!(record.field(&kind.parent()), Some(id.to_string()));
    assert_eq!(
        record.field("filename"),
        Some(format!("{}_{id}.pdf", kind.file_stem))
    );
    let not_pdf = base64::engine::general_purpose::STANDARD.encode(b"GIF89a");
    app.put(
        &format!("{url}/upload-signature"),
        &format!("<signature><base64file>{not_pdf}</base64file></signature>"),
    )
    .await
    .assert_error(400, "not a PDF");
    app.get(&format!("{url}/pdf?type=signed"))
        .await
        .assert_error(404, "no signed PDF");
    let r = app
        .put(&format!("{url}/upload-signature"), &signature)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let signed = app.get(&format!("{url}/pdf?type=signed")).await;
    assert_eq!(signed.field("base64file").as_deref(), Some(&*pdf_b64));
    assert_eq!(
        signed.field("filename"),
        Some(format!("{}_{id}_signed.pdf", kind.file_stem))
    );
    let comments = app.get(&kind.parts_of("comments", id)).await;
    assert!(comments.fields("actionkey").contains(&"SIGN".to_string()));
    app.get(&format!("{url}/pdf?type=print"))
        .await
        .assert_error(400, "print_version");
    app.put(
        "/api/settings",
        "<settings><print_version>1</print_version></settings>",
    )
    .await;
    let print = pdf_bytes(&app, kind, id, "&type=print").await;
    assert!(print.starts_with(b"%PDF-"));
    check_pdf(&print);
    assert_ne!(print, pdf_bytes(&app, kind, id, "").await);
    app.get(&format!("{url}/pdf?type=fancy"))
        .await
        .assert_error(400, "type must be");
}

#[tokio::test]
async fn template_thumbnails_are_page_sized_images() {
    let app = App::spawn().await;
    let rtf = base64::engine::general_purpose::STANDARD
        .encode(br"{\rtf1\ansi Rechnung [Invoice.invoice_number]\par Vielen Dank!\par}");
    let t = app
        .create("/api/templates", &template("R", "INVOICE", "rtf", &rtf))
        .await;
    for (query, mime, format) in [
        ("", "image/png", image::ImageFormat::Png),
        ("?format=png", "image/png", image::ImageFormat::Png),
        ("?format=gif", "image/gif", image::ImageFormat::Gif),
        ("?format=jpg", "image/jpeg", image::ImageFormat::Jpeg),
    ] {
        let r = app
            .get(&format!("/api/templates/{}/thumb{query}", t.id()))
            .await;
        assert_eq!(r.status, 200, "{query}: {}", r.body);
        assert_eq!(r.header("content-type"), Some(mime));
        assert_eq!(image::guess_format(&r.bytes).unwrap(), format);
        let img = image::load_from_memory(&r.bytes).unwrap();
        assert_eq!(
            (img.width(), img.height()),
            (595, 842),
            "A4 at one pixel per point"
        );
        let dark = img.to_luma8().pixels().filter(|p| p.0[0] < 100).count();
        assert!(
            dark > 100,
            "{query}: the text is drawn ({dark} dark pixels)"
        );
    }
    app.get(&format!("/api/templates/{}/thumb?format=bmp", t.id()))
        .await
        .assert_error(400, "format must be png, gif or jpg");
    app.get("/api/templates/999/thumb")
        .await
        .assert_error(404, "does not exist");
}
