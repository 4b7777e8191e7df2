//! Incoming invoices: e-invoices written by other tools (the official XRechnung test
//! suite, Factur-X PDFs made with Ghostscript and the PyPI `factur-x` library) and by
//! Faktura itself imported with the values in the file; hostile files refused with
//! nothing stored.

use base64::Engine as _;
use faktura_tests::{App, Reply};

use crate::support::{INVOICES, client, create};

fn root() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn upload(bytes: &[u8], filename: &str) -> String {
    format!(
        "<incoming><filename>{filename}</filename><base64file>{}</base64file></incoming>",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    )
}

/// The text of the first element `tag` (any prefix, any attributes) in `xml`, as the test
/// reads it itself.
fn first(xml: &str, tag: &str) -> String {
    let mut from = 0;
    while let Some(found) = xml[from..].find(tag) {
        let at = from + found;
        from = at + tag.len();
        let open = xml[..at].rfind('<').unwrap_or(0);
        let name = &xml[open + 1..at];
        let after = xml[at + tag.len()..].chars().next();
        if !name.starts_with('/')
            && (name.is_empty() || name.ends_with(':') && !name.contains([' ', '>']))
            && matches!(after, Some('>' | ' '))
        {
            let start = xml[at..].find('>').unwrap() + at + 1;
            let end = xml[start..].find('<').unwrap() + start;
            return xml[start..end].trim().to_owned();
        }
    }
    panic!("{tag} in the file")
}

/// A decimal as the API writes it (no trailing zeros).
fn api_decimal(s: &str) -> String {
    let s = s.trim();
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s.to_owned()
    }
}

async fn count(app: &App, path: &str) -> String {
    app.call("HEAD", path, None)
        .await
        .header("x-total-count")
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn e_invoices_of_other_tools_import_with_the_values_in_the_file() {
    let samples = root().join("tests/einvoice/samples");
    let mut imported = 0;
    // 01.01a is one invoice in both syntaxes: each sample goes to a data directory of its
    // own (the first is kept for the duplicate below).
    let mut apps = Vec::new();
    for (name, syntax) in [
        ("01.01a-INVOICE_uncefact.xml", "cii"),
        ("01.18a-INVOICE_uncefact.xml", "cii"),
        ("01.01a-INVOICE_ubl.xml", "ubl"),
        ("01.21a-INVOICE_ubl.xml", "ubl"),
    ] {
        let bytes = std::fs::read(samples.join(name)).unwrap();
        let xml = String::from_utf8(bytes.clone()).unwrap();
        let app = App::spawn().await;
        let r = app.post("/api/incomings", &upload(&bytes, name)).await;
        assert_eq!(r.status, 201, "{name}: {}", r.body);
        imported += 1;
        let (net, tax, gross, due) = if syntax == "cii" {
            (
                "TaxBasisTotalAmount",
                "TaxTotalAmount",
                "GrandTotalAmount",
                "DuePayableAmount",
            )
        } else {
            (
                "TaxExclusiveAmount",
                "TaxAmount",
                "TaxInclusiveAmount",
                "PayableAmount",
            )
        };
        assert_eq!(r.field("format").as_deref(), Some(syntax), "{name}");
        let number = if syntax == "cii" {
            // The document's ID follows the ExchangedDocument element.
            let at = xml.find("ExchangedDocument>").unwrap();
            first(&xml[at..], "ID")
        } else {
            let at = xml.find("<cbc:ID>").unwrap();
            first(&xml[at..], "ID")
        };
        assert_eq!(r.field("number"), Some(number), "{name}");
        for (field, tag) in [
            ("total_net", net),
            ("total_tax", tax),
            ("total_gross", gross),
            ("payable_amount", due),
        ] {
            assert_eq!(
                r.field(field).map(|v| api_decimal(&v)),
                Some(api_decimal(&first(&xml, tag))),
                "{name} {field}"
            );
        }
        let file = app.get(&format!("/api/incomings/{}/file", r.id())).await;
        assert_eq!(file.bytes, bytes, "{name}: the file byte for byte");
        assert_eq!(file.header("content-type"), Some("application/xml"));
        let items = count(&app, &format!("/api/incoming-items?incoming_id={}", r.id())).await;
        let lines = if syntax == "cii" {
            xml.matches("IncludedSupplyChainTradeLineItem>").count() / 2
        } else {
            xml.matches("<cac:InvoiceLine>").count()
        };
        assert_eq!(items, lines.to_string(), "{name}: one item per line");
        apps.push(app);
    }
    // Factur-X PDFs made by Ghostscript and the factur-x library, with object streams,
    // and with the ZUGFeRD name: the embedded XML is the first sample's.
    let xml = std::fs::read_to_string(samples.join("01.01a-INVOICE_uncefact.xml")).unwrap();
    for name in ["facturx-gs.pdf", "facturx-objstm.pdf", "zugferd-named.pdf"] {
        let bytes = std::fs::read(root().join("tests/einvoice/incoming").join(name)).unwrap();
        let app = App::spawn().await;
        let r = app.post("/api/incomings", &upload(&bytes, name)).await;
        assert_eq!(r.status, 201, "{name}: {}", r.body);
        imported += 1;
        assert_eq!(r.field("format").as_deref(), Some("pdf-cii"));
        assert_eq!(
            r.field("total_gross").map(|v| api_decimal(&v)),
            Some(api_decimal(&first(&xml, "GrandTotalAmount")))
        );
        let file = app.get(&format!("/api/incomings/{}/file", r.id())).await;
        assert_eq!(file.bytes, bytes);
        assert_eq!(file.header("content-type"), Some("application/pdf"));
    }
    assert_eq!(imported, 7);
    // The same supplier and number again (the UBL form of the first CII sample): 409
    // naming the incoming, nothing stored; the seller matched to the same supplier.
    let app = &apps[0];
    let bytes = std::fs::read(samples.join("01.01a-INVOICE_ubl.xml")).unwrap();
    let again = app
        .post("/api/incomings", &upload(&bytes, "again.xml"))
        .await;
    again.assert_error(409, "already holds number");
    assert_eq!(count(app, "/api/incomings").await, "1");
    assert_eq!(count(app, "/api/suppliers").await, "1");
}

#[tokio::test]
async fn faktura_e_invoices_import_back_with_their_totals_taxes_and_lines() {
    let app = App::spawn().await;
    let r = app
        .put(
            "/api/settings",
            "<settings><company_name>Faktura Test GmbH</company_name><company_street>Hauptstraße 1</company_street>\
             <company_zip>10115</company_zip><company_city>Berlin</company_city><company_country_code>DE</company_country_code>\
             <company_vat_number>DE123456789</company_vat_number><company_contact_name>Erika</company_contact_name>\
             <company_phone>+49 30 1234567</company_phone><company_email>rechnung@faktura.example</company_email>\
             <company_bank_iban>DE02120300000000202051</company_bank_iban><einvoice_pdf>1</einvoice_pdf></settings>",
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let i = &INVOICES;
    let c = client(
        &app,
        "<name>Kunde AG</name><street>Weg 2</street><zip>50667</zip><city>Köln</city>\
         <country_code>DE</country_code><email>k@kunde.example</email><buyer_reference>B-1</buyer_reference>",
    )
    .await;
    let items = "<invoice-items>\
        <invoice-item><title>Beratung</title><quantity>3</quantity><unit_price>120</unit_price><tax_rate>19</tax_rate></invoice-item>\
        <invoice-item><title>Buch</title><quantity>2</quantity><unit_price>39.90</unit_price><tax_rate>7</tax_rate></invoice-item>\
        </invoice-items>";
    let id = create(
        &app,
        i,
        &format!("<client_id>{c}</client_id><reduction>5%</reduction>{items}"),
    )
    .await
    .id();
    assert_eq!(
        app.put(&format!("{}/complete", i.at(id)), "").await.status,
        200
    );
    let doc = app.get(&i.at(id)).await;
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    for p in ["xrechnung-cii", "xrechnung-ubl", "factur-x"] {
        let r = app
            .get(&format!("{}/e-invoice?profile={p}", i.at(id)))
            .await;
        assert_eq!(r.status, 200);
        files.push((format!("{p}.xml"), r.bytes));
    }
    let pdf = app.get(&format!("{}/pdf?format=pdf", i.at(id))).await;
    files.push(("invoice.pdf".into(), pdf.bytes));
    let cii = String::from_utf8(files[0].1.clone()).unwrap();
    for (name, bytes) in files {
        // A fresh account each time: the same number may be imported once per account.
        let other = app.new_account(&name).await;
        let r: Reply = app
            .call_as(
                &other,
                "POST",
                "/api/incomings",
                Some(&upload(&bytes, &name)),
            )
            .await;
        assert_eq!(r.status, 201, "{name}: {}", r.body);
        for (field, want) in [("total_net", "total_net"), ("total_gross", "total_gross")] {
            assert_eq!(
                r.field(field).map(|v| api_decimal(&v)),
                doc.field(want).map(|v| api_decimal(&v)),
                "{name} {field}"
            );
        }
        assert_eq!(r.field("number"), doc.field("invoice_number"), "{name}");
        assert_eq!(
            r.fields("category"),
            vec!["S", "S"],
            "{name}: two VAT groups"
        );
        assert!(
            r.body.contains("<valid type=\"integer\">1</valid>"),
            "{name}: {}",
            r.body
        );
        let items = app
            .call_as(
                &other,
                "GET",
                &format!("/api/incoming-items?incoming_id={}", r.id()),
                None,
            )
            .await;
        assert_eq!(items.fields("name"), vec!["Beratung", "Buch"], "{name}");
    }
    // A total that does not add up is imported, and the service's rules say so.
    let gross = first(&cii, "GrandTotalAmount");
    let broken = cii.replacen(
        &format!(">{gross}</ram:GrandTotalAmount>"),
        ">1.00</ram:GrandTotalAmount>",
        1,
    );
    assert_ne!(broken, cii);
    let other = app.new_account("broken").await;
    let r = app
        .call_as(
            &other,
            "POST",
            "/api/incomings",
            Some(&upload(broken.as_bytes(), "b.xml")),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert!(
        r.body.contains("<valid type=\"integer\">0</valid>"),
        "{}",
        r.body
    );
    assert!(r.body.contains("<rule>BR-CO-15</rule>"), "{}", r.body);
}

#[tokio::test]
async fn hostile_files_are_refused_at_once_and_nothing_is_stored() {
    let app = App::spawn().await;
    let mut bomb = b"%PDF-1.7\n1 0 obj\n<< /Type /Catalog >>\nendobj\n".to_vec();
    bomb.extend(std::iter::repeat_n(b'x', 1000));
    let deep = format!("<?xml version=\"1.0\"?>{}", "<a>".repeat(10_000));
    let laughs = "<?xml version=\"1.0\"?><!DOCTYPE lolz [<!ENTITY lol \"lol\"><!ENTITY lol2 \"&lol;&lol;&lol;&lol;\">]>\
                  <rsm:CrossIndustryInvoice xmlns:rsm=\"urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100\">&lol2;</rsm:CrossIndustryInvoice>";
    let random: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    let pdf = std::fs::read(root().join("tests/einvoice/incoming/facturx-gs.pdf")).unwrap();
    let truncated = &pdf[..pdf.len() / 2];
    for (name, bytes, fragment) in [
        (
            "pdf-without-e-invoice",
            bomb.as_slice(),
            "no readable e-invoice",
        ),
        ("deep", deep.as_bytes(), "not a readable e-invoice"),
        ("entities", laughs.as_bytes(), "not a readable e-invoice"),
        ("random", random.as_slice(), "neither XML nor PDF"),
        ("truncated", truncated, "e-invoice"),
        (
            "not-an-invoice",
            b"<html><body/></html>".as_slice(),
            "not a readable e-invoice",
        ),
    ] {
        let started = std::time::Instant::now();
        let r = app.post("/api/incomings", &upload(bytes, name)).await;
        assert!(r.status == 400, "{name}: {} {}", r.status, r.body);
        assert!(r.body.contains(fragment), "{name}: {}", r.body);
        if faktura_tests::slow_tests() {
            assert!(started.elapsed().as_secs() < 1, "{name} answered at once");
        }
    }
    assert_eq!(count(&app, "/api/incomings").await, "0");
    assert_eq!(count(&app, "/api/suppliers").await, "0");
    // Over the size limit: 413; and the next request is served.
    let big = vec![b'<'; 11 * 1024 * 1024];
    let r = app.post("/api/incomings", &upload(&big, "big.xml")).await;
    assert_eq!(r.status, 413, "{}", r.body);
    assert_eq!(app.get("/api/incomings").await.status, 200);
}

#[tokio::test]
async fn payments_settle_an_incoming_and_deleting_them_opens_it_again() {
    let app = App::spawn().await;
    let bytes =
        std::fs::read(root().join("tests/einvoice/samples/01.01a-INVOICE_uncefact.xml")).unwrap();
    let r = app.post("/api/incomings", &upload(&bytes, "a.xml")).await;
    assert_eq!(r.status, 201, "{}", r.body);
    let id = r.id();
    let payable = r.field("payable_amount").unwrap();
    let pay = |amount: &str, mark: &str| {
        format!(
            "<incoming-payment><incoming_id>{id}</incoming_id><amount>{amount}</amount>\
             <mark_incoming_as_paid>{mark}</mark_incoming_as_paid></incoming-payment>"
        )
    };
    let part = app.post("/api/incoming-payments", &pay("100", "0")).await;
    assert_eq!(part.status, 201, "{}", part.body);
    let now = app.get(&format!("/api/incomings/{id}")).await;
    assert_eq!(now.field("paid_amount").as_deref(), Some("100"));
    assert_ne!(now.field("status").as_deref(), Some("PAID"));
    let rest = app.post("/api/incoming-payments", &pay("1", "1")).await;
    assert_eq!(rest.status, 201, "{}", rest.body);
    let now = app.get(&format!("/api/incomings/{id}")).await;
    assert_eq!(now.field("status").as_deref(), Some("PAID"), "{}", now.body);
    assert_eq!(now.field("paid_amount"), Some(payable));
    assert_eq!(now.field("open_amount").as_deref(), Some("0"));
    assert_eq!(count(&app, "/api/incomings?status=PAID").await, "1");
    let gone = app
        .delete(&format!("/api/incoming-payments/{}", rest.id()))
        .await;
    assert_eq!(gone.status, 200, "{}", gone.body);
    let now = app.get(&format!("/api/incomings/{id}")).await;
    assert_eq!(now.field("paid_amount").as_deref(), Some("100"));
    assert_ne!(now.field("status").as_deref(), Some("PAID"));
    // The service's comments, as invoices have them; and one of a user.
    let comments = app
        .get(&format!("/api/incoming-comments?incoming_id={id}"))
        .await;
    assert_eq!(
        comments.fields("actionkey"),
        vec![
            "IMPORT",
            "PAYMENT",
            "PAYMENT",
            "STATUS",
            "DELETE_PAYMENT",
            "STATUS"
        ],
        "{}",
        comments.body
    );
    let mine = app
        .post(
            "/api/incoming-comments",
            &format!("<incoming-comment><incoming_id>{id}</incoming_id><comment>Geprüft</comment></incoming-comment>"),
        )
        .await;
    assert_eq!(mine.status, 201, "{}", mine.body);
    // Bad payments are refused and change nothing.
    app.post("/api/incoming-payments", &pay("-5", "0"))
        .await
        .assert_error(400, "amount");
    app.post(
        "/api/incoming-payments",
        "<incoming-payment><incoming_id>999</incoming_id><amount>5</amount></incoming-payment>",
    )
    .await
    .assert_error(400, "incoming_id 999 does not exist");
    assert_eq!(
        count(&app, &format!("/api/incoming-payments?incoming_id={id}")).await,
        "1"
    );
    // Due-date filters and deleting the incoming with what it holds.
    let due = now.field("due_date").unwrap_or_default();
    if !due.is_empty() {
        assert_eq!(
            count(&app, &format!("/api/incomings?due_from={due}&due_to={due}")).await,
            "1"
        );
    }
    assert_eq!(
        app.delete(&format!("/api/incomings/{id}")).await.status,
        200
    );
    assert_eq!(count(&app, "/api/incomings").await, "0");
    app.get(&format!("/api/incoming-items?incoming_id={id}"))
        .await
        .assert_error(404, "does not exist");
}
