//! Real e-invoices written by other software: a selection of the public ZUGFeRD corpus
//! (tests/einvoice/corpus/README.md), ZUGFeRD 1.0 to 2.3, Factur-X from MINIMUM to
//! EXTENDED, XRechnung, as PDF, CII and UBL, from about ten producing tools. Each imports
//! with the values tests/einvoice/expected.py reads in the file, or is refused cleanly when
//! it holds no EN 16931 invoice (or one without a currency); its code-list findings (BR-CL)
//! are those of the official rules.

use std::collections::BTreeMap;
use std::path::PathBuf;

use faktura_tests::{App, Reply};
use serde_json::Value;

use crate::incomings::{
    blocks, code_list_disagreements, code_list_rules, decimal, expected, upload,
};

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("einvoice/corpus")
}

/// Files of the corpus the import refuses: no EN 16931 invoice, or one without a currency
/// (file, why, a fragment of the refusal).
const REFUSED: &[(&str, &str, &str)] = &[
    (
        "MustangGnuaccountingBeispielRE-20140519_499.pdf",
        "the release candidate of ZUGFeRD 1.0 (2014, root rsm:Invoice in namespace \
         urn:un:unece:uncefact:data:standard:CBFBUY:5, elements without namespace), \
         no released ZUGFeRD, CII or UBL",
        "not a CII or UBL e-invoice",
    ),
    (
        "acme_invoice-42_ZUGFeRD.pdf",
        "ZUGFeRD 1.0 BASIC without any VAT breakdown or line VAT (no ApplicableTradeTax, \
         no TaxBasisTotalAmount): its VAT categories and rates can only be guessed",
        "no VAT category (BT-151)",
    ),
    (
        "RE-E-974-Hetzner_2016-01-19_R0005532486.pdf",
        "a PDF invoice with no embedded e-invoice",
        "the PDF has no e-invoice attached",
    ),
    (
        "MustangGnuaccountingBeispielRE-20151008_504.pdf",
        "ZUGFeRD 1.0 COMFORT with an empty InvoiceCurrencyCode: amounts in no currency",
        "no invoice currency (BT-5",
    ),
];

/// The format the import answers for a file of the corpus.
fn format_of(name: &str) -> &'static str {
    if name.ends_with(".pdf") {
        "pdf-cii"
    } else if name.ends_with(".ubl.xml") || name.starts_with("ubl-") {
        "ubl"
    } else {
        "cii"
    }
}

/// Where the import `r` of a file (`lines` items counted by the API, `items` the items
/// themselves) differs from `want`, what expected.py read in it.
///
/// A total the file states must be imported as it is. A total the file does not state
/// (ZUGFeRD 1.0 BASIC has no amount due, Konik's no tax basis, MINIMUM no prepaid amount)
/// may be left empty or 0, or hold the value the calculation rules of EN 16931 give from
/// the totals the file does state (expected.py's `derived`: BT-115 = BT-112 - BT-113 +
/// BT-114, ...): the import may leave the gap or close it as the standard does, but must
/// not invent any other amount.
fn differences(
    r: &Reply,
    lines: Option<u64>,
    items: &[Reply],
    want: &Value,
    format: &str,
) -> Vec<String> {
    let mut out = Vec::new();
    let text = |k: &str| want[k].as_str().unwrap_or_default().trim().to_owned();
    let got = |k: &str| r.field(k).unwrap_or_default().trim().to_owned();
    for (field, key) in [
        ("format", None),
        ("number", Some("number")),
        ("date", Some("date")),
        ("currency_code", Some("currency")),
        ("profile", Some("profile")),
    ] {
        let wanted = key.map_or_else(|| format.to_owned(), text);
        if got(field) != wanted {
            out.push(format!(
                "{field}: imported {:?}, the file holds {wanted:?}",
                got(field)
            ));
        }
    }
    let absent: Vec<&str> = want["absent"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for (field, key, term) in [
        ("total_net", "net", "BT-109"),
        ("total_tax", "tax", "BT-110"),
        ("total_gross", "gross", "BT-112"),
        ("payable_amount", "payable", "BT-115"),
    ] {
        let imported = got(field);
        if absent.contains(&key) {
            let derived = want["derived"][key].as_str();
            let fits = imported.is_empty()
                || decimal(&imported) == "0"
                || derived.is_some_and(|d| decimal(d) == decimal(&imported));
            if !fits {
                out.push(format!(
                    "{field} ({term}): imported {imported:?}, the file states none \
                     (empty, 0 or the derived {derived:?} expected)"
                ));
            }
        } else if decimal(&imported) != decimal(&text(key)) {
            out.push(format!(
                "{field} ({term}): imported {imported:?}, the file holds {:?}",
                text(key)
            ));
        }
    }
    let wanted_lines = want["lines"].as_array().unwrap();
    if lines != Some(wanted_lines.len() as u64) {
        let names = |v: Vec<(String, String)>| {
            v.iter()
                .map(|(name, amount)| format!("{name:.30?} {amount}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let imported = items
            .iter()
            .map(|i| {
                let f = |k: &str| i.field(k).unwrap_or_default();
                (f("name"), f("net_amount"))
            })
            .collect();
        let wanted = wanted_lines
            .iter()
            .map(|l| {
                let f = |k: &str| l[k].as_str().unwrap_or_default().to_owned();
                (f("name"), f("net_amount"))
            })
            .collect();
        out.push(format!(
            "{lines:?} items imported (x-total-count): [{}]; the file holds {} lines: [{}]",
            names(imported),
            wanted_lines.len(),
            names(wanted)
        ));
    }
    out
}

#[tokio::test]
async fn real_e_invoices_of_many_producers_import_with_the_values_in_the_file() {
    let started = std::time::Instant::now();
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "pdf" || e == "xml"))
        .collect();
    files.sort();
    assert!(files.len() >= 50, "{} files in the corpus", files.len());
    let name_of = |p: &PathBuf| p.file_name().unwrap().to_string_lossy().into_owned();
    for (name, _, _) in REFUSED {
        assert!(
            files.iter().any(|p| name_of(p) == *name),
            "{name} is in the corpus"
        );
    }
    let importable: Vec<PathBuf> = files
        .iter()
        .filter(|p| !REFUSED.iter().any(|(n, _, _)| *n == name_of(p)))
        .cloned()
        .collect();
    let want = expected(&importable);

    // One data directory, each file in an account of its own: the samples of one producer
    // share the seller and the number.
    let app = App::spawn().await;
    // (format, profile) -> [imported as in the file, refused as expected, failed]
    let mut tally: BTreeMap<(&str, String), [usize; 3]> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut code_lists = BTreeMap::new();
    for path in &files {
        let name = name_of(path);
        let format = format_of(&name);
        let bytes = std::fs::read(path).unwrap();
        let key = app.new_account(&name).await;
        let r = app
            .call_as(&key, "POST", "/api/incomings", Some(&upload(&bytes, &name)))
            .await;
        let excerpt: String = r.body.chars().take(400).collect();
        if let Some((_, why, fragment)) = REFUSED.iter().find(|(n, _, _)| *n == name) {
            let counts = tally.entry((format, "(none)".into())).or_default();
            if r.status == 400 && r.body.contains("<errors>") && r.body.contains(fragment) {
                counts[1] += 1;
                println!(
                    "corpus, {name}: refused as expected: {}",
                    r.fields("error").join("; ")
                );
            } else {
                counts[2] += 1;
                failures.push(format!(
                    "{name}: a clean 400 naming {fragment:?} expected ({why}), got HTTP {} {excerpt}",
                    r.status
                ));
            }
            continue;
        }
        let file = &want[&path.to_string_lossy().into_owned()];
        let profile = file["profile"].as_str().unwrap_or_default().to_owned();
        let counts = tally.entry((format, profile)).or_default();
        if r.status != 201 {
            counts[2] += 1;
            failures.push(format!("{name}: HTTP {} {excerpt}", r.status));
            continue;
        }
        code_lists.insert(path.clone(), code_list_rules(&r));
        let items = app
            .call_as(
                &key,
                "GET",
                &format!("/api/incoming-items?incoming_id={}&per_page=1000", r.id()),
                None,
            )
            .await;
        assert_eq!(items.status, 200, "{name}: {}", items.body);
        let lines = items
            .header("x-total-count")
            .and_then(|n| n.parse::<u64>().ok());
        let wrong = differences(
            &r,
            lines,
            &blocks(&items.body, "incoming-item"),
            file,
            format,
        );
        if wrong.is_empty() {
            counts[0] += 1;
        } else {
            counts[2] += 1;
            failures.push(format!("{name}:\n    {}", wrong.join("\n    ")));
        }
    }
    for ((format, profile), [imported, refused, failed]) in &tally {
        println!(
            "corpus, {format} {profile}: {imported} imported as in the file, \
             {refused} refused as expected, {failed} failed"
        );
    }
    // What the import finds of the code lists (BR-CL) is what the official rules find.
    let (agreeing, disagreeing) = code_list_disagreements(&code_lists);
    println!(
        "corpus: {agreeing} code-list findings of the official rules in {} files, each found \
         by the import too; {} files where they differ",
        code_lists.len(),
        disagreeing.len()
    );
    failures.extend(disagreeing);
    println!(
        "{} corpus files in {:.1} s",
        files.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(
        failures.is_empty(),
        "{} of {} corpus files not imported as they are:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}
