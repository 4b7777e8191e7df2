//! Incoming invoices: e-invoices written by other tools (the official XRechnung test
//! suite, Factur-X PDFs made with Ghostscript and the PyPI `factur-x` library) and by
//! Faktura itself imported with the values in the file; hostile files refused with
//! nothing stored.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use faktura_tests::{App, Reply};
use serde_json::Value;

use crate::support::{INVOICES, client, create};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

pub(crate) fn upload(bytes: &[u8], filename: &str) -> String {
    format!(
        "<incoming><filename>{filename}</filename><base64file>{}</base64file></incoming>",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    )
}

/// A decimal in one spelling for comparing: no sign for zero, no `+`, no leading or
/// trailing zeros (`"019.50"`, `"+19.5"` and `"19.500"` are all `"19.5"`). Text that is no
/// decimal comes back trimmed, as it is.
pub(crate) fn decimal(s: &str) -> String {
    let s = s.trim();
    let (negative, digits) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
    if int.is_empty() && frac.is_empty()
        || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())
    {
        return s.to_owned();
    }
    let int = match int.trim_start_matches('0') {
        "" => "0",
        int => int,
    };
    let frac = frac.trim_end_matches('0');
    let value = if frac.is_empty() {
        int.to_owned()
    } else {
        format!("{int}.{frac}")
    };
    if negative && value != "0" {
        format!("-{value}")
    } else {
        value
    }
}

/// What tests/einvoice/expected.py reads with XPath in each of `files` (XML, or the XML a
/// hybrid PDF carries), by the path as given: number, dates, currency, totals, VAT
/// breakdown and lines.
pub(crate) fn expected(files: &[PathBuf]) -> BTreeMap<String, Value> {
    let out = std::process::Command::new("python3")
        .arg(root().join("tests/einvoice/expected.py"))
        .args(files)
        .output()
        .expect("python3 reads the e-invoices (make test-deps installs lxml and factur-x)");
    assert!(
        out.status.success(),
        "expected.py reads every file: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let all: BTreeMap<String, Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(all.len(), files.len());
    all
}

/// The elements `<tag>` (with or without attributes) of `body`, each as a reply of its own
/// so that `field` reads inside one of them.
pub(crate) fn blocks(body: &str, tag: &str) -> Vec<Reply> {
    let (open, close) = (format!("<{tag}"), format!("</{tag}>"));
    let mut out = Vec::new();
    let mut rest = body;
    while let Some(start) = rest.find(&open) {
        let after = &rest[start + open.len()..];
        if !after.starts_with([' ', '>']) {
            rest = after;
            continue;
        }
        let end = after.find(&close).expect("a closed element") + close.len();
        let inner = format!("{open}{}", &after[..end]);
        out.push(Reply {
            status: 200,
            headers: Default::default(),
            bytes: inner.clone().into_bytes(),
            body: inner,
        });
        rest = &after[end..];
    }
    out
}

/// The items of incoming `id`, in the order of the file's lines.
pub(crate) async fn items(app: &App, key: &str, id: u64) -> Vec<Reply> {
    let r = app
        .call_as(
            key,
            "GET",
            &format!("/api/incoming-items?incoming_id={id}&per_page=1000"),
            None,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    blocks(&r.body, "incoming-item")
}

/// Where the imported incoming (the reply `r` to its import, its `items`) differs from
/// `want`, what expected.py read in the file, which came as `format` (cii, ubl, pdf-cii):
/// one line per difference, none when all agree.
pub(crate) fn differences(r: &Reply, items: &[Reply], want: &Value, format: &str) -> Vec<String> {
    let mut out = Vec::new();
    let text = |v: &Value, k: &str| v[k].as_str().unwrap_or_default().trim().to_owned();
    let mut same = |what: &str, got: Option<String>, want: String, numeric: bool| {
        let got = got.unwrap_or_default();
        let (g, w) = if numeric {
            (decimal(&got), decimal(&want))
        } else {
            (got.trim().to_owned(), want.clone())
        };
        if g != w {
            out.push(format!("{what}: imported {got:?}, the file holds {want:?}"));
        }
    };
    same("format", r.field("format"), format.to_owned(), false);
    same("number", r.field("number"), text(want, "number"), false);
    same("date", r.field("date"), text(want, "date"), false);
    same(
        "due_date",
        r.field("due_date"),
        text(want, "due_date"),
        false,
    );
    same(
        "currency_code",
        r.field("currency_code"),
        text(want, "currency"),
        false,
    );
    let kind = if text(want, "kind") == "credit-note" {
        "CREDIT_NOTE"
    } else {
        "INVOICE"
    };
    same("type", r.field("type"), kind.to_owned(), false);
    for (field, key) in [
        ("total_net", "net"),
        ("total_tax", "tax"),
        ("total_gross", "gross"),
        ("payable_amount", "payable"),
    ] {
        same(field, r.field(field), text(want, key), true);
    }
    // No prepaid amount in the file is none paid.
    let prepaid = r.field("prepaid_amount").filter(|p| !p.is_empty());
    same(
        "prepaid_amount",
        Some(prepaid.unwrap_or_else(|| "0".into())),
        text(want, "prepaid"),
        true,
    );
    // The VAT breakdown as a sorted list.
    let taxes = r
        .body
        .find("<taxes")
        .map(|at| blocks(&r.body[at..], "tax"))
        .unwrap_or_default();
    let mut got: Vec<[String; 4]> = taxes
        .iter()
        .map(|t| {
            [
                t.field("category").unwrap_or_default(),
                decimal(&t.field("rate").unwrap_or_default()),
                decimal(&t.field("taxable_amount").unwrap_or_default()),
                decimal(&t.field("amount").unwrap_or_default()),
            ]
        })
        .collect();
    let mut wanted: Vec<[String; 4]> = want["taxes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            [
                text(t, "category"),
                decimal(&text(t, "rate")),
                decimal(&text(t, "taxable")),
                decimal(&text(t, "amount")),
            ]
        })
        .collect();
    got.sort();
    wanted.sort();
    if got != wanted {
        out.push(format!(
            "taxes (category, rate, taxable, amount): imported {got:?}, the file holds {wanted:?}"
        ));
    }
    let lines = want["lines"].as_array().unwrap();
    if items.len() != lines.len() {
        out.push(format!(
            "{} items imported, the file holds {} lines",
            items.len(),
            lines.len()
        ));
    }
    for (n, (item, line)) in items.iter().zip(lines).enumerate() {
        for (field, key, numeric) in [
            ("line_id", "id", false),
            ("name", "name", false),
            ("quantity", "quantity", true),
            ("unit_code", "unit_code", false),
            ("net_price", "net_price", true),
            ("net_amount", "net_amount", true),
            ("tax_category", "category", false),
            ("tax_rate", "rate", true),
        ] {
            let got = item.field(field).unwrap_or_default();
            let want = text(line, key);
            let differs = if numeric {
                decimal(&got) != decimal(&want)
            } else {
                got.trim() != want
            };
            if differs {
                out.push(format!(
                    "line {} {field}: imported {got:?}, the file holds {want:?}",
                    n + 1
                ));
            }
        }
    }
    out
}

/// The code-list rules (BR-CL) among the findings of an imported incoming `r`, sorted,
/// once per finding.
pub(crate) fn code_list_rules(r: &Reply) -> Vec<String> {
    let mut rules: Vec<String> = blocks(&r.body, "finding")
        .iter()
        .filter_map(|f| f.field("rule"))
        .filter(|rule| rule.starts_with("BR-CL-"))
        .collect();
    rules.sort();
    rules
}

/// Where the code-list findings of imports (by file, as `code_list_rules` reads them)
/// differ from those of the official CEN rules (tests/einvoice/validate.py, errors and
/// warnings alike: XRechnung counts BR-CL-21 and BR-CL-23 as warnings only), one line per
/// file; and how many findings agree. A PDF is checked by the XML it carries; ZUGFeRD 1.0,
/// whose namespaces the CEN rules do not bind, gets no finding from either.
pub(crate) fn code_list_disagreements(
    imported: &BTreeMap<PathBuf, Vec<String>>,
) -> (usize, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<(PathBuf, &str)> = imported
        .keys()
        .map(|path| {
            let ubl = !path.to_string_lossy().ends_with(".pdf")
                && std::fs::read_to_string(path)
                    .unwrap_or_default()
                    .contains("urn:oasis:names:specification:ubl:schema:xsd:");
            let profile = if ubl {
                "xrechnung-ubl"
            } else {
                "xrechnung-cii"
            };
            (path.clone(), profile)
        })
        .collect();
    let report = crate::einvoice::report(dir.path(), &files);
    let (mut agreeing, mut out) = (0, Vec::new());
    for (result, (path, _)) in report["results"].as_array().unwrap().iter().zip(&files) {
        let mut official: Vec<String> = ["errors", "warnings"]
            .iter()
            .flat_map(|k| result[*k].as_array().unwrap())
            .filter(|f| f["source"] == "cen")
            .filter_map(|f| f["id"].as_str())
            .filter(|id| id.starts_with("BR-CL-"))
            .map(str::to_owned)
            .collect();
        official.sort();
        if official == imported[path] {
            agreeing += official.len();
        } else {
            out.push(format!(
                "{}: the import found {:?}, the official rules {official:?}",
                path.display(),
                imported[path]
            ));
        }
    }
    (agreeing, out)
}

/// Whether the service's rules found nothing in the incoming (`<valid>1</valid>`).
pub(crate) fn valid(r: &Reply) -> bool {
    r.body.contains("<valid type=\"integer\">1</valid>")
}

async fn count(app: &App, path: &str) -> String {
    app.call("HEAD", path, None)
        .await
        .header("x-total-count")
        .unwrap_or_default()
        .to_owned()
}

async fn count_as(app: &App, key: &str, path: &str) -> String {
    app.call_as(key, "HEAD", path, None)
        .await
        .header("x-total-count")
        .unwrap_or_default()
        .to_owned()
}

/// The XML files of a directory, sorted by name.
fn xml_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "xml"))
        .collect();
    files.sort();
    files
}

/// Samples of the XRechnung test suite the service refuses, rightly: (file, the reason in
/// the refusal).
const REFUSED_SAMPLES: &[(&str, &str)] = &[];

#[tokio::test]
async fn e_invoices_of_other_tools_import_with_the_values_in_the_file() {
    let started = std::time::Instant::now();
    // Every business case of the KoSIT XRechnung test suite, both syntaxes, the standard
    // ones and the extension's (samples/README.md); and the Factur-X PDFs made by
    // Ghostscript and the factur-x library, with object streams, and with the ZUGFeRD name.
    let samples = root().join("tests/einvoice/samples");
    let standard = xml_files(&samples);
    let extension = xml_files(&samples.join("extension"));
    let pdfs: Vec<PathBuf> = ["facturx-gs.pdf", "facturx-objstm.pdf", "zugferd-named.pdf"]
        .iter()
        .map(|f| root().join("tests/einvoice/incoming").join(f))
        .collect();
    assert!(
        standard.len() >= 66 && extension.len() >= 6,
        "{} standard and {} extension samples",
        standard.len(),
        extension.len()
    );
    let files: Vec<PathBuf> = [&standard[..], &extension[..], &pdfs[..]].concat();
    let want = expected(&files);
    // One data directory, each file in an account of its own: the suite reuses numbers
    // and sellers.
    let app = App::spawn().await;
    let mut keys = BTreeMap::new();
    let mut tally: BTreeMap<&str, [usize; 3]> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut code_lists = BTreeMap::new();
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let file = want[&path.to_string_lossy().into_owned()].clone();
        let format = if name.ends_with(".pdf") {
            "pdf-cii"
        } else if name.ends_with("_ubl.xml") {
            "ubl"
        } else {
            "cii"
        };
        let bytes = std::fs::read(path).unwrap();
        let key = app.new_account(&name).await;
        let r = app
            .call_as(&key, "POST", "/api/incomings", Some(&upload(&bytes, &name)))
            .await;
        let counts = tally.entry(format).or_default();
        if let Some((_, reason)) = REFUSED_SAMPLES.iter().find(|(f, _)| *f == name) {
            if r.status / 100 == 4 && r.body.contains(reason) {
                counts[1] += 1;
            } else {
                counts[2] += 1;
                failures.push(format!(
                    "{name}: refused for {reason:?} expected, got {} {}",
                    r.status, r.body
                ));
            }
            continue;
        }
        if r.status != 201 {
            counts[2] += 1;
            failures.push(format!("{name}: HTTP {} {}", r.status, r.body));
            continue;
        }
        counts[0] += 1;
        code_lists.insert(path.clone(), code_list_rules(&r));
        let lines = items(&app, &key, r.id()).await;
        let mut wrong = differences(&r, &lines, &file, format);
        // The suite's standard cases pass the official rules (einvoice.rs checks it), so
        // the service's own rules find nothing in them either.
        if path.parent() == Some(samples.as_path()) && !valid(&r) {
            wrong.push(format!("not valid: {}", r.body));
        }
        let stored = app
            .call_as(
                &key,
                "GET",
                &format!("/api/incomings/{}/file", r.id()),
                None,
            )
            .await;
        if stored.bytes != bytes {
            wrong.push("the stored file differs from the upload".into());
        }
        let media = if format == "pdf-cii" {
            "application/pdf"
        } else {
            "application/xml"
        };
        if stored.header("content-type") != Some(media) {
            wrong.push(format!("content type {:?}", stored.header("content-type")));
        }
        if !wrong.is_empty() {
            failures.push(format!("{name}:\n    {}", wrong.join("\n    ")));
        }
        keys.insert(name, key);
    }
    for (format, [imported, refused, unexpected]) in &tally {
        println!(
            "incoming samples, {format}: {imported} imported, {refused} refused as expected, \
             {unexpected} refused unexpectedly"
        );
    }
    // What the import finds of the code lists (BR-CL) is what the official rules find.
    let (agreeing, disagreeing) = code_list_disagreements(&code_lists);
    println!(
        "incoming samples: {agreeing} code-list findings of the official rules in {} files, \
         each found by the import too; {} files where they differ",
        code_lists.len(),
        disagreeing.len()
    );
    failures.extend(disagreeing);
    println!(
        "{} files in {:.1} s",
        files.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(
        failures.is_empty(),
        "{} of {} files not imported as they are:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
    // The same supplier and number again (the UBL form of the first CII sample): 409
    // naming the incoming, nothing stored; the seller matched to the same supplier.
    let key = &keys["01.01a-INVOICE_uncefact.xml"];
    let bytes = std::fs::read(samples.join("01.01a-INVOICE_ubl.xml")).unwrap();
    let again = app
        .call_as(
            key,
            "POST",
            "/api/incomings",
            Some(&upload(&bytes, "again.xml")),
        )
        .await;
    again.assert_error(409, "already holds number");
    assert_eq!(count_as(&app, key, "/api/incomings").await, "1");
    assert_eq!(count_as(&app, key, "/api/suppliers").await, "1");
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
                r.field(field).map(|v| decimal(&v)),
                doc.field(want).map(|v| decimal(&v)),
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
    let dir = tempfile::tempdir().unwrap();
    let cii_path = dir.path().join("cii.xml");
    std::fs::write(&cii_path, &cii).unwrap();
    let read = expected(std::slice::from_ref(&cii_path));
    let gross = read[&cii_path.to_string_lossy().into_owned()]["gross"]
        .as_str()
        .unwrap()
        .to_owned();
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

/// A PDF of `objects` (object `n + 1` is `objects[n]`, the first the catalog), with a
/// cross-reference table; `trailer` writes what follows the table from its offset and the
/// table's `/Size`, None for the plain trailer.
fn pdf_of(objects: &[Vec<u8>], trailer: Option<&dyn Fn(usize, usize) -> String>) -> Vec<u8> {
    let mut out = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n".to_vec();
    let mut offsets = Vec::new();
    for (n, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend(format!("{} 0 obj\n", n + 1).as_bytes());
        out.extend(body);
        out.extend(b"\nendobj\n");
    }
    let xref = out.len();
    let size = objects.len() + 1;
    out.extend(format!("xref\n0 {size}\n0000000000 65535 f \n").as_bytes());
    for offset in offsets {
        out.extend(format!("{offset:010} 00000 n \n").as_bytes());
    }
    let tail = match trailer {
        Some(write) => write(xref, size),
        None => format!("trailer\n<< /Size {size} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n"),
    };
    out.extend(tail.as_bytes());
    out
}

/// A stream object: `dict` (without /Length) and `data`.
fn stream_of(dict: &str, data: &[u8]) -> Vec<u8> {
    let mut out = format!("<< {dict} /Length {} >>\nstream\n", data.len()).into_bytes();
    out.extend(data);
    out.extend(b"\nendstream");
    out
}

/// The objects of a Factur-X PDF up to its attachment: catalog (1) naming the file
/// specification (4) in /Names /EmbeddedFiles and /AF, pages (2), page (3); the
/// specification's embedded file is object 5.
fn hybrid_objects() -> Vec<Vec<u8>> {
    [
        "<< /Type /Catalog /Pages 2 0 R /Names << /EmbeddedFiles << /Names [(factur-x.xml) 4 0 R] >> >> /AF [4 0 R] >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] >>",
        "<< /Type /Filespec /F (factur-x.xml) /UF (factur-x.xml) /AFRelationship /Data /EF << /F 5 0 R /UF 5 0 R >> >>",
    ]
    .iter()
    .map(|o| o.as_bytes().to_vec())
    .collect()
}

/// The Adler-32 of `count` bytes `byte` following data of Adler-32 parts `(a, b)`.
fn adler_run((a, b): (u64, u64), byte: u8, count: u64) -> (u64, u64) {
    const M: u128 = 65521;
    let (a0, n, c) = (a as u128, count as u128, byte as u128);
    let b = (b as u128 + n % M * a0 + c * (n * (n + 1) / 2 % M)) % M;
    let a = (a0 + n % M * c) % M;
    (a as u64, b as u64)
}

fn adler_of(parts: (u64, u64), data: &[u8]) -> (u64, u64) {
    data.iter()
        .fold(parts, |parts, &byte| adler_run(parts, byte, 1))
}

/// Raw deflate of `data` from a fresh dictionary, ending byte-aligned without a last block
/// (a sync flush), or with the last block when `last`: such pieces chain into one stream.
fn deflate_piece(data: &[u8], last: bool) -> Vec<u8> {
    use std::io::Write as _;
    let mut encoder = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(data).unwrap();
    if last {
        encoder.finish().unwrap()
    } else {
        encoder.flush().unwrap();
        encoder.get_ref().clone()
    }
}

/// A zlib stream (what /FlateDecode reads) inflating to `head`, then `mebibytes` MiB of
/// `fill`, then `tail`, made without compressing the fill: one MiB deflated once and its
/// bytes repeated.
fn inflating_to(head: &[u8], fill: u8, mebibytes: u64, tail: &[u8]) -> Vec<u8> {
    let mib = deflate_piece(&vec![fill; 1 << 20], false);
    let mut out = vec![0x78, 0x9c];
    out.extend(deflate_piece(head, false));
    for _ in 0..mebibytes {
        out.extend(&mib);
    }
    out.extend(deflate_piece(tail, true));
    let parts = adler_of((1, 0), head);
    let parts = adler_run(parts, fill, mebibytes << 20);
    let (a, b) = adler_of(parts, tail);
    out.extend(((b << 16 | a) as u32).to_be_bytes());
    out
}

/// Hostile PDFs: decompression bombs in the embedded file and loops in the object graph
/// and the cross-reference sections, each by name.
fn hostile_pdfs() -> Vec<(&'static str, Vec<u8>)> {
    use std::io::Write as _;
    let mut out = Vec::new();
    let embedded = |filter: &str, data: &[u8]| {
        stream_of(
            &format!("/Type /EmbeddedFile /Subtype /text#2Fxml /Filter {filter}"),
            data,
        )
    };
    // 5 GiB of zeros deflated twice: some kB on the wire.
    let once = inflating_to(b"", 0, 5 << 10, b"");
    let mut twice = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    twice.write_all(&once).unwrap();
    let twice = twice.finish().unwrap();
    let mut objects = hybrid_objects();
    objects.push(embedded("[/FlateDecode /FlateDecode]", &twice));
    out.push(("bomb-5-gib-zeros-deflated-twice", pdf_of(&objects, None)));
    // A real e-invoice of 200 MiB: the sample with spaces before its end tag, deflated
    // once.
    let xml =
        std::fs::read(root().join("tests/einvoice/samples/01.01a-INVOICE_uncefact.xml")).unwrap();
    let end = b"</rsm:CrossIndustryInvoice>";
    let at = xml.windows(end.len()).rposition(|w| w == end).unwrap();
    let mut objects = hybrid_objects();
    objects.push(embedded(
        "/FlateDecode",
        &inflating_to(&xml[..at], b' ', 200, &xml[at..]),
    ));
    out.push(("bomb-200-mib-e-invoice", pdf_of(&objects, None)));
    // A name tree whose node is its own kid, and two nodes each the other's kid.
    let tree = |nodes: &[&str]| {
        let mut objects = vec![
            b"<< /Type /Catalog /Pages 2 0 R /Names << /EmbeddedFiles 4 0 R >> >>".to_vec(),
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] >>".to_vec(),
        ];
        objects.extend(nodes.iter().map(|n| n.as_bytes().to_vec()));
        pdf_of(&objects, None)
    };
    out.push(("names-kids-self", tree(&["<< /Kids [4 0 R] >>"])));
    out.push((
        "names-kids-cycle",
        tree(&[
            "<< /Kids [5 0 R] /Limits [(a) (z)] >>",
            "<< /Kids [4 0 R] /Limits [(a) (z)] >>",
        ]),
    ));
    // References that only name each other, an /AF array holding itself.
    out.push(("reference-cycle", tree(&["5 0 R", "4 0 R"])));
    let mut objects = hybrid_objects();
    objects[0] = b"<< /Type /Catalog /Pages 2 0 R /AF 4 0 R >>".to_vec();
    objects[3] = b"[4 0 R]".to_vec();
    out.push(("af-holds-itself", pdf_of(&objects, None)));
    // A page tree whose node is its own kid.
    let objects = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [2 0 R] /Count 1 >>".to_vec(),
    ];
    out.push(("pages-kids-self", pdf_of(&objects, None)));
    // An embedded file whose /Length is itself.
    let mut objects = hybrid_objects();
    let mut file = b"<< /Type /EmbeddedFile /Length 5 0 R >>\nstream\n".to_vec();
    file.extend(b"<a/>");
    file.extend(b"\nendstream");
    objects.push(file);
    out.push(("length-is-itself", pdf_of(&objects, None)));
    // Cross-reference sections: one whose /Prev is itself, two each the other's /Prev.
    let mut objects = hybrid_objects();
    objects.push(embedded("/FlateDecode", &{
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        z.write_all(b"<a/>").unwrap();
        z.finish().unwrap()
    }));
    let self_prev = |xref: usize, size: usize| {
        format!("trailer\n<< /Size {size} /Root 1 0 R /Prev {xref} >>\nstartxref\n{xref}\n%%EOF\n")
    };
    out.push(("xref-prev-self", pdf_of(&objects, Some(&self_prev))));
    let cycle = |xref: usize, size: usize| {
        // The second section follows the first trailer; 10-digit offsets keep its length.
        let first =
            |second: usize| format!("trailer\n<< /Size {size} /Root 1 0 R /Prev {second:010} >>\n");
        let second = xref + xref_table_len(size) + first(0).len();
        format!(
            "{}xref\n0 1\n0000000000 65535 f \ntrailer\n<< /Size {size} /Root 1 0 R /Prev {xref:010} >>\nstartxref\n{second}\n%%EOF\n",
            first(second)
        )
    };
    out.push(("xref-prev-cycle", pdf_of(&objects, Some(&cycle))));
    out.push(("object-stream-holds-itself", self_holding_object_stream()));
    out
}

/// The length of the cross-reference table `pdf_of` writes for `size` entries.
fn xref_table_len(size: usize) -> usize {
    format!("xref\n0 {size}\n").len() + 20 * size
}

/// A PDF with a cross-reference stream: the file specification (object 4) is in object
/// stream 6, and object stream 6 is, by the same cross-reference stream, inside itself.
fn self_holding_object_stream() -> Vec<u8> {
    let mut out = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n".to_vec();
    let objects = hybrid_objects();
    let mut offsets = [0usize; 8];
    for (n, body) in objects.iter().enumerate().take(3) {
        offsets[n + 1] = out.len();
        out.extend(format!("{} 0 obj\n", n + 1).as_bytes());
        out.extend(body);
        out.extend(b"\nendobj\n");
    }
    offsets[5] = out.len();
    out.extend(b"5 0 obj\n");
    out.extend(stream_of("/Type /EmbeddedFile", b"<a/>"));
    out.extend(b"\nendobj\n");
    let xref = out.len();
    // W [1 4 2]: type, offset or object stream, generation or index.
    let mut rows = Vec::new();
    for n in 0..8u32 {
        let (kind, field, index): (u8, u32, u16) = match n {
            0 => (0, 0, 65535),
            4 => (2, 6, 0),
            6 => (2, 6, 1),
            7 => (1, xref as u32, 0),
            n => (1, offsets[n as usize] as u32, 0),
        };
        rows.push(kind);
        rows.extend(field.to_be_bytes());
        rows.extend(index.to_be_bytes());
    }
    out.extend(b"7 0 obj\n");
    out.extend(stream_of(
        "/Type /XRef /Size 8 /W [1 4 2] /Root 1 0 R",
        &rows,
    ));
    out.extend(format!("\nendobj\nstartxref\n{xref}\n%%EOF\n").as_bytes());
    out
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
    let mut cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("pdf-without-e-invoice", bomb, "no readable e-invoice"),
        ("deep", deep.into_bytes(), "not a readable e-invoice"),
        (
            "entities",
            laughs.as_bytes().to_vec(),
            "not a readable e-invoice",
        ),
        ("random", random, "neither XML nor PDF"),
        ("truncated", truncated.to_vec(), "e-invoice"),
        (
            "not-an-invoice",
            b"<html><body/></html>".to_vec(),
            "not a readable e-invoice",
        ),
    ];
    for (name, bytes) in hostile_pdfs() {
        let fragment = match name {
            n if n.starts_with("bomb") => "too large to read",
            // These reach an embedded file, which holds no e-invoice.
            "length-is-itself" | "xref-prev-self" | "xref-prev-cycle" => "not a readable e-invoice",
            _ => "no readable e-invoice",
        };
        cases.push((name, bytes, fragment));
    }
    // Over the size limits: a file over the limit of an upload, a request body over the
    // limit of any request: 413.
    cases.push(("big-file", vec![b'<'; 11 * 1024 * 1024], "larger than"));
    cases.push(("big", vec![b'<'; 30 * 1024 * 1024], "larger than"));
    // FAKTURA_INCOMING_DIR keeps the files for a look.
    if let Some(dir) = std::env::var_os("FAKTURA_INCOMING_DIR") {
        for (name, bytes, _) in &cases {
            std::fs::write(PathBuf::from(&dir).join(name), bytes).unwrap();
        }
    }
    let mut slow = Vec::new();
    for (name, bytes, fragment) in &cases {
        let body = upload(bytes, name);
        let started = std::time::Instant::now();
        let r = app.post("/api/incomings", &body).await;
        let took = started.elapsed();
        println!(
            "{name}: {} bytes, HTTP {} in {} ms",
            bytes.len(),
            r.status,
            took.as_millis()
        );
        let status = if name.starts_with("big") { 413 } else { 400 };
        r.assert_error(status, fragment);
        if took.as_secs() >= 1 {
            slow.push(format!("{name}: {} ms", took.as_millis()));
        }
        // Nothing stored, and the next request is served.
        assert_eq!(count(&app, "/api/incomings").await, "0", "{name}");
        assert_eq!(count(&app, "/api/suppliers").await, "0", "{name}");
        assert_eq!(app.get("/api/incomings").await.status, 200, "{name}");
    }
    if faktura_tests::slow_tests() {
        assert!(slow.is_empty(), "answered after a second or more: {slow:?}");
    }
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

/// The first sample of the XRechnung suite imported: its id.
async fn import_sample(app: &App) -> u64 {
    let bytes =
        std::fs::read(root().join("tests/einvoice/samples/01.01a-INVOICE_uncefact.xml")).unwrap();
    let r = app.post("/api/incomings", &upload(&bytes, "a.xml")).await;
    assert_eq!(r.status, 201, "{}", r.body);
    r.id()
}

/// A supplier to enter incomings of by hand: its id.
async fn supplier(app: &App) -> u64 {
    let r = app
        .post(
            "/api/suppliers",
            "<supplier><name>Bürobedarf Nord GmbH</name></supplier>",
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    r.id()
}

#[tokio::test]
async fn an_incoming_entered_by_hand_without_a_payable_amount_is_paid_by_its_total() {
    let app = App::spawn().await;
    let supplier = supplier(&app).await;
    let r = app
        .post(
            "/api/incomings",
            &format!(
                "<incoming><supplier_id>{supplier}</supplier_id><number>H-1</number>\
                 <date>2026-01-10</date><total_gross>119.00</total_gross></incoming>"
            ),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.field("status").as_deref(), Some("OPEN"));
    assert_eq!(r.field("open_amount").as_deref(), Some("119"));
    let id = r.id();
    let paid = app
        .post(
            "/api/incoming-payments",
            &format!("<incoming-payment><incoming_id>{id}</incoming_id><amount>119</amount></incoming-payment>"),
        )
        .await;
    assert_eq!(paid.status, 201, "{}", paid.body);
    let now = app.get(&format!("/api/incomings/{id}")).await;
    assert_eq!(now.field("status").as_deref(), Some("PAID"), "{}", now.body);
    assert_eq!(now.field("open_amount").as_deref(), Some("0"));
    assert_eq!(count(&app, "/api/incomings?status=PAID").await, "1");
}

#[tokio::test]
async fn an_import_without_a_currency_the_service_knows_is_refused_and_nothing_is_stored() {
    let app = App::spawn().await;
    let cii =
        std::fs::read_to_string(root().join("tests/einvoice/samples/01.01a-INVOICE_uncefact.xml"))
            .unwrap();
    let ubl = std::fs::read_to_string(root().join("tests/einvoice/samples/01.01a-INVOICE_ubl.xml"))
        .unwrap();
    let cii_with = |currency: &str| {
        cii.replace(
            "<ram:InvoiceCurrencyCode>EUR</ram:InvoiceCurrencyCode>",
            &format!("<ram:InvoiceCurrencyCode>{currency}</ram:InvoiceCurrencyCode>"),
        )
    };
    let ubl_with = |currency: &str| {
        ubl.replace(
            "<cbc:DocumentCurrencyCode>EUR</cbc:DocumentCurrencyCode>",
            &format!("<cbc:DocumentCurrencyCode>{currency}</cbc:DocumentCurrencyCode>"),
        )
    };
    for (file, fragment) in [
        (
            cii_with(""),
            "base64file: the e-invoice names no invoice currency (BT-5",
        ),
        (
            cii_with("XEU"),
            "base64file: the invoice currency (BT-5) 'XEU'",
        ),
        (
            ubl_with(""),
            "base64file: the e-invoice names no invoice currency (BT-5",
        ),
        (
            ubl_with("EURO"),
            "base64file: the invoice currency (BT-5) 'EURO'",
        ),
    ] {
        assert_ne!(file, cii, "the sample names its currency as written here");
        app.post("/api/incomings", &upload(file.as_bytes(), "x.xml"))
            .await
            .assert_error(400, fragment);
    }
    assert_eq!(count(&app, "/api/incomings").await, "0");
    assert_eq!(count(&app, "/api/suppliers").await, "0");
}

#[tokio::test]
async fn a_file_of_megabytes_is_stored_whole_and_the_import_beside_it_too() {
    // An e-invoice padded to 3 MiB before its end tag: its file is a value larger than a
    // writer holds back, so it goes to the store on its own call, between the writes held
    // before and after it.
    let xml =
        std::fs::read(root().join("tests/einvoice/samples/01.01a-INVOICE_uncefact.xml")).unwrap();
    let end = b"</rsm:CrossIndustryInvoice>";
    let at = xml.windows(end.len()).rposition(|w| w == end).unwrap();
    let mut big = xml[..at].to_vec();
    big.resize(3 * 1024 * 1024, b' ');
    big.extend_from_slice(&xml[at..]);
    let app = App::spawn().await;
    let r = app.post("/api/incomings", &upload(&big, "big.xml")).await;
    assert_eq!(r.status, 201, "{}", r.body);
    let id = r.id();
    let stored = app
        .call("GET", &format!("/api/incomings/{id}/file"), None)
        .await;
    assert_eq!(stored.status, 200);
    assert!(
        stored.bytes == big,
        "the stored file differs from the upload"
    );
    let got = app.get(&format!("/api/incomings/{id}")).await;
    assert_eq!(got.status, 200, "{}", got.body);
    assert_eq!(count(&app, "/api/incomings").await, "1");
}

#[tokio::test]
async fn users_comments_on_incomings_are_comments_as_on_documents() {
    let app = App::spawn().await;
    let id = import_sample(&app).await;
    let mine = app
        .post(
            "/api/incoming-comments",
            &format!("<incoming-comment><incoming_id>{id}</incoming_id><comment>Geprüft</comment></incoming-comment>"),
        )
        .await;
    assert_eq!(mine.status, 201, "{}", mine.body);
    assert_eq!(mine.field("actionkey").as_deref(), Some("COMMENT"));
    let comments = app
        .get(&format!("/api/incoming-comments?incoming_id={id}"))
        .await;
    assert_eq!(comments.fields("actionkey"), ["IMPORT", "COMMENT"]);
}

#[tokio::test]
async fn incoming_payment_types_are_the_words_of_document_payments_in_any_case() {
    let app = App::spawn().await;
    let id = import_sample(&app).await;
    let pay = |kind: &str| {
        format!(
            "<incoming-payment><incoming_id>{id}</incoming_id><amount>1</amount>\
             <payment_type>{kind}</payment_type></incoming-payment>"
        )
    };
    let r = app
        .post("/api/incoming-payments", &pay("bank_transfer"))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.field("payment_type").as_deref(), Some("BANK_TRANSFER"));
    app.post("/api/incoming-payments", &pay("by wire"))
        .await
        .assert_error(400, "payment_type must be one of CREDIT_NOTE, BANK_CARD");
    assert_eq!(
        count(&app, &format!("/api/incoming-payments?incoming_id={id}")).await,
        "1"
    );
}

#[tokio::test]
async fn an_import_the_code_lists_of_en_16931_reject_is_stored_as_not_valid() {
    let app = App::spawn().await;
    // KoSIT's extension case 04.05a names identifier schemes outside the ISO 6523 ICD
    // list (XR01 to XR03): the official CEN rules refuse it (BR-CL-10, BR-CL-21).
    let bytes =
        std::fs::read(root().join("tests/einvoice/samples/extension/04.05a-INVOICE_uncefact.xml"))
            .unwrap();
    let r = app
        .post("/api/incomings", &upload(&bytes, "04.05a.xml"))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert!(!valid(&r), "{}", r.body);
    assert!(
        r.body.contains("<valid type=\"integer\">0</valid>"),
        "{}",
        r.body
    );
    assert_eq!(
        code_list_rules(&r),
        ["BR-CL-10", "BR-CL-10", "BR-CL-10", "BR-CL-21"]
    );
    assert!(
        r.body
            .contains("PayeeTradeParty/GlobalID/@schemeID: 'XR03' is not in the ISO 6523 ICD list"),
        "{}",
        r.body
    );
    // The same file read back keeps what was found.
    let again = app.get(&format!("/api/incomings/{}", r.id())).await;
    assert_eq!(code_list_rules(&again), code_list_rules(&r));
    // A sample the official rules accept stays valid.
    let id = import_sample(&app).await;
    let sample = app.get(&format!("/api/incomings/{id}")).await;
    assert!(valid(&sample), "{}", sample.body);
    assert!(code_list_rules(&sample).is_empty());
}
