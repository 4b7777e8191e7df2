//! Writes a sample Factur-X (PDF/A-3b) invoice and the CII XML it embeds, for
//! `tests/einvoice/pdfa_check.py`:
//!
//! ```sh
//! cargo run -p faktura-providers --example pdfa_sample -- /tmp/sample.pdf /tmp/factur-x.xml
//! python3 tests/einvoice/pdfa_check.py /tmp/sample.pdf --xml /tmp/factur-x.xml
//! ```

use faktura_providers::render::{
    Archive, Conformance, Document, EmbeddedFile, FacturX, MetaRow, Table, render_archival,
};

/// A minimal EN 16931 CII invoice (not schema-complete: the checker compares bytes).
const XML: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<rsm:CrossIndustryInvoice xmlns:rsm="urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100" xmlns:ram="urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100" xmlns:udt="urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100">
  <rsm:ExchangedDocumentContext>
    <ram:GuidelineSpecifiedDocumentContextParameter>
      <ram:ID>urn:cen.eu:en16931:2017</ram:ID>
    </ram:GuidelineSpecifiedDocumentContextParameter>
  </rsm:ExchangedDocumentContext>
  <rsm:ExchangedDocument>
    <ram:ID>RE-0001</ram:ID>
    <ram:TypeCode>380</ram:TypeCode>
    <ram:IssueDateTime><udt:DateTimeString format="102">20261124</udt:DateTimeString></ram:IssueDateTime>
  </rsm:ExchangedDocument>
</rsm:CrossIndustryInvoice>
"#;

fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let (Some(pdf_path), xml_path) = (args.next(), args.next()) else {
        return Err("usage: pdfa_sample OUT.pdf [OUT.xml]".into());
    };
    let row = |label: &str, value: &str| MetaRow {
        label: label.into(),
        value: value.into(),
    };
    let doc = Document {
        title: "Rechnung RE-0001".into(),
        sender: vec!["Faktura GmbH · Straße 1 · 10115 Berlin".into()],
        recipient: vec![
            "Müller AG".into(),
            "Hauptstraße 5".into(),
            "80331 München".into(),
        ],
        meta: vec![row("Nummer", "RE-0001"), row("Datum", "24.11.2026")],
        preamble: vec!["Vielen Dank für Ihren Auftrag.".into()],
        items: Table {
            header: vec!["Position".into(), "Menge".into(), "Betrag".into()],
            rows: vec![
                vec!["Beratung".into(), "2".into(), "200,00 €".into()],
                vec!["Счёт Ελληνικά 請求".into(), "1".into(), "50,00 €".into()],
            ],
            right_aligned: vec![1, 2],
        },
        totals: vec![row("Netto", "250,00 €"), row("Gesamt", "297,50 €")],
        closing: vec!["Zahlbar innerhalb von 14 Tagen.".into()],
        footer: "Faktura GmbH".into(),
        print: false,
        matrix: None,
    };
    let archive = Archive {
        conformance: Conformance::PdfA3b,
        attachments: vec![EmbeddedFile {
            filename: "factur-x.xml".into(),
            mimetype: "text/xml".into(),
            description: "Factur-X/ZUGFeRD invoice".into(),
            relationship: "Alternative".into(),
            modified: "2026-11-24T00:00:00Z".into(),
            content: XML.as_bytes().to_vec(),
        }],
        factur_x: Some(FacturX {
            document_type: "INVOICE".into(),
            filename: "factur-x.xml".into(),
            version: "1.0".into(),
            conformance_level: "EN 16931".into(),
        }),
    };
    let pdf = render_archival(&doc, &archive)?;
    std::fs::write(&pdf_path, pdf).map_err(|e| format!("{pdf_path}: {e}"))?;
    if let Some(xml_path) = xml_path {
        std::fs::write(&xml_path, XML).map_err(|e| format!("{xml_path}: {e}"))?;
    }
    Ok(())
}
