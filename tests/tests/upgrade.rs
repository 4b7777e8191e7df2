//! A data directory written by an earlier version of Faktura (data version 2: before the
//! documents core; `tests/fixtures/data-v2`, seeded through the API of that version) is
//! migrated when the host starts, and answers every request exactly as that version did,
//! but for the fields added since (`ADDED`), which it shows empty or defaulted.

use std::io::Read as _;
use std::path::Path;
use std::sync::Arc;

use faktura_host::Options;
use faktura_tests::{
    App, Instances, WasmtimeServe, free_port, standalone_test_component, start_host_with,
    test_component, wait_ready,
};
use sha2::{Digest, Sha256};

/// The keys of the fixture's two accounts (the first bootstrapped, the second made by
/// `faktura account create`).
const KEY: &str = "fixture-key-0123456789abcdef";
const SECOND_KEY: &str = "4761652499d423e5cff5f588eaeb3afe629746e991f3f79b2ec8a9bb1e859ccf";

/// Fields added after data version 2 (the e-invoice terms of data version 4; the documents
/// an invoice was made from, data versions 5 to 7), with what a migrated record shows for
/// them.
const ADDED: &[&str] = &[
    "buyer_reference",
    "order_reference",
    "contract_reference",
    "unit_code",
    "tax_category",
    "tax_exemption_reason",
    "electronic_address",
    "einvoice_profile",
    "debit_mandate_reference",
    "company_tax_number",
    "company_registration_id",
    "company_contact_name",
    "company_phone",
    "company_email",
    "company_electronic_address",
    "company_bank_account_owner",
    "company_bank_iban",
    "company_bank_bic",
    "company_bank_name",
    "company_creditor_id",
    "einvoice_pdf",
    "offer_id",
    "confirmation_id",
    "recurring_id",
    "price_group",
    "consumer",
    "dunning_run",
    "girocode",
    "public_url",
    "portal_link_days",
];

/// Fields an invoice shows since the customer portal (a credit note showed them before).
const ADDED_TO_INVOICES: &[&str] = &["customerportal_url"];

/// Settings added with the kinds of documents and the dunning of data versions 5 to 7,
/// by the prefix of their names.
const ADDED_SETTINGS: &[&str] = &[
    "offer_",
    "confirmation_",
    "delivery_note_",
    "article_number_",
    "reminder_",
    "dunning_",
    "time_zone",
];

/// Whether `name` is a field added since data version 2.
fn is_added(name: &str) -> bool {
    ADDED.contains(&name) || ADDED_SETTINGS.iter().any(|p| name.starts_with(p))
}

/// The answer of `path` without the fields its records gained since data version 2 besides
/// `ADDED`: an invoice's `customerportal_url`.
fn without_added_to(path: &str, body: &str, json: bool) -> String {
    if !path.starts_with("invoices") {
        return body.to_owned();
    }
    if json {
        fn drop(value: &mut serde_json::Value) {
            match value {
                serde_json::Value::Object(map) => {
                    map.retain(|k, _| !ADDED_TO_INVOICES.contains(&k.as_str()));
                    map.values_mut().for_each(drop);
                }
                serde_json::Value::Array(list) => list.iter_mut().for_each(drop),
                _ => {}
            }
        }
        let mut value: serde_json::Value = serde_json::from_str(body).unwrap();
        drop(&mut value);
        value.to_string()
    } else {
        let empty: Vec<String> = ADDED_TO_INVOICES
            .iter()
            .map(|f| format!("<{f}/>"))
            .collect();
        let mut out = body
            .lines()
            .filter(|l| !empty.iter().any(|e| l.trim() == e))
            .collect::<Vec<_>>()
            .join("\n");
        if body.ends_with('\n') {
            out.push('\n');
        }
        out
    }
}

/// An XML answer without the fields added since data version 2 (empty elements, or the
/// derived unit code and the `einvoice_pdf` default), also where a value spans lines.
fn without_added(body: &str) -> String {
    let mut lines: Vec<String> = Vec::new();
    // The closing tag of an added element whose value goes on over the next lines.
    let mut open_until: Option<String> = None;
    for line in body.lines() {
        if let Some(close) = &open_until {
            if line.ends_with(close.as_str()) {
                open_until = None;
            }
            continue;
        }
        let t = line.trim_start();
        let name: String = t
            .strip_prefix('<')
            .unwrap_or("")
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() || !is_added(&name) {
            lines.push(line.to_owned());
            continue;
        }
        let close = format!("</{name}>");
        if !t.ends_with("/>") && !t.ends_with(&close) {
            open_until = Some(close);
        }
    }
    let mut out = lines.join("\n");
    if body.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// A JSON answer without the members added since data version 2.
fn drop_added(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            map.retain(|k, _| !is_added(k));
            map.values_mut().for_each(drop_added);
        }
        serde_json::Value::Array(list) => list.iter_mut().for_each(drop_added),
        _ => {}
    }
}

fn fixture() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/data-v2")
}

/// A temporary data directory holding the fixture's database.
fn data_dir() -> Arc<tempfile::TempDir> {
    let dir = tempfile::tempdir().unwrap();
    let gz = std::fs::read(fixture().join("faktura.redb.gz")).unwrap();
    let mut db = Vec::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_end(&mut db)
        .unwrap();
    std::fs::write(dir.path().join("faktura.redb"), db).unwrap();
    Arc::new(dir)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_data_directory_of_data_version_2_answers_as_that_version_did() {
    let mut app = App::spawn_with(data_dir(), test_component()).await;
    app.key = KEY.into();
    let expected = fixture().join("expected");
    let paths = std::fs::read_to_string(fixture().join("paths.txt")).unwrap();
    // Every path in both formats, so that one run names every difference.
    let mut differences = Vec::new();
    for (n, path) in paths.lines().enumerate() {
        for format in ["xml", "json"] {
            let accept = format!("application/{format}");
            let reply = app
                .send(
                    "GET",
                    &format!("/api/{path}"),
                    None,
                    &[("x-serviceapikey", KEY), ("accept", &accept)],
                )
                .await;
            let want =
                std::fs::read_to_string(expected.join(format!("{}.{format}", n + 1))).unwrap();
            assert_eq!(reply.status, 200, "{path}: {}", reply.body);
            let (got, want) = if format == "json" {
                // Both through one serializer, the reply without the added members.
                let mut got: serde_json::Value =
                    serde_json::from_str(&without_added_to(path, &reply.body, true)).unwrap();
                drop_added(&mut got);
                let want: serde_json::Value = serde_json::from_str(&want).unwrap();
                (got.to_string(), want.to_string())
            } else {
                (
                    without_added(&without_added_to(path, &reply.body, false)),
                    want,
                )
            };
            if got != want {
                let extra: Vec<_> = got.lines().filter(|l| !want.contains(l)).collect();
                let missing: Vec<_> = want.lines().filter(|l| !got.contains(l)).collect();
                differences.push(format!(
                    "{path} as {format}: shows {extra:?}, lacks {missing:?}"
                ));
            }
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
    let pdf = app.get("/api/invoices/1/pdf?format=pdf").await;
    let want = std::fs::read_to_string(expected.join("invoice-1.pdf.sha256")).unwrap();
    assert_eq!(
        hex::encode(Sha256::digest(&pdf.bytes)),
        want.trim(),
        "the stored PDF"
    );
    // The second account's key (an entry the migration rewrote) still opens its account.
    let second = app
        .send(
            "GET",
            "/api/clients",
            None,
            &[("x-serviceapikey", SECOND_KEY)],
        )
        .await;
    let want = std::fs::read_to_string(expected.join("second-account-clients.xml")).unwrap();
    assert_eq!(without_added(&second.body), want);
    // Writes keep the migrated data going: a new invoice is numbered after the old ones
    // and counted with them.
    let invoice = "<invoice><client_id>1</client_id></invoice>";
    let created = app.create("/api/invoices", invoice).await;
    created.assert_fields(&[("invoice_number", "INV-00004")]);
    let all = app.call("HEAD", "/api/invoices", None).await;
    assert_eq!(all.header("x-total-count"), Some("4"));
    // A restart finds the store at the current version: nothing to migrate again.
    let app = app.restart().await;
    let again = app
        .runtime
        .migrate()
        .await
        .expect("the store is migrated already");
    assert_eq!(again.from_version, again.to_version);
}

/// What `faktura check` finds in the store of `data` (a store of another data version is
/// one of its problems): the problems, or the reason it could not check.
async fn problems(data: &Path) -> Vec<String> {
    match faktura_host::check_store(&Options::new(data, test_component())).await {
        Ok(report) => report.problems,
        Err(e) => vec![format!("{e:#}")],
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_data_directory_of_data_version_2_is_raised_to_this_version_under_wasmtime_serve() {
    let data = data_dir();
    let before = problems(data.path()).await;
    assert!(
        before.iter().any(|p| p.contains("data version 2")),
        "the fixture is of data version 2: {before:?}"
    );
    // `wasmtime serve` runs no migration before serving (nor does Spin): the first request,
    // here a write, raises the store to this version and is then served on it.
    let serve = WasmtimeServe::start_component(
        &standalone_test_component(),
        data.path(),
        KEY,
        Instances::PerRequest,
    )
    .await;
    let created = serve
        .call(
            KEY,
            "POST",
            "/api/invoices",
            Some("<invoice><client_id>1</client_id></invoice>"),
        )
        .await;
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(
        created.field("invoice_number").as_deref(),
        Some("INV-00004")
    );
    let all = serve.call(KEY, "HEAD", "/api/invoices", None).await;
    assert_eq!(all.header("x-total-count"), Some("4"));
    // A lookup by an index the migration wrote (clients by number, data version 6).
    let client = serve.call(KEY, "GET", "/api/clients/1", None).await;
    let number = client.field("number").expect("a client's serial number");
    let found = serve
        .call(
            KEY,
            "GET",
            &format!("/api/clients?client_number={number}"),
            None,
        )
        .await;
    assert_eq!(found.header("x-total-count"), Some("1"), "{}", found.body);
    // The second account's key opens its account as before.
    let second = serve.call(SECOND_KEY, "GET", "/api/clients", None).await;
    let want =
        std::fs::read_to_string(fixture().join("expected/second-account-clients.xml")).unwrap();
    assert_eq!(without_added(&second.body), want);
    serve.kill();
    // The store is of this data version now, whole: `faktura check` finds nothing.
    assert_eq!(problems(data.path()).await, Vec::<String>::new());
}

/// `faktura serve` says what the migration of an older data directory did, the index
/// entries it wrote among it (clients by number and name, a document's parts, open-due
/// entries), and a restart, which finds nothing to migrate, says nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serving_an_older_data_directory_says_what_its_migration_did() {
    let data = data_dir();
    let start = |run: &str| {
        let out = data.path().join(format!("{run}.out"));
        let file = std::fs::File::create(&out).unwrap();
        let port = free_port();
        let process = start_host_with(data.path(), port, KEY, &[], |c| {
            c.stdout(file);
        });
        (process, format!("http://127.0.0.1:{port}"), out)
    };
    let (mut process, base, out) = start("first");
    wait_ready(&base, KEY).await;
    process.kill();
    let printed = std::fs::read_to_string(&out).unwrap();
    let line = printed
        .lines()
        .find(|l| l.starts_with("Migrated the data directory from data version 2 to "))
        .unwrap_or_else(|| panic!("no migration line in {printed}"));
    let written: u64 = line
        .split(" index entries written")
        .next()
        .and_then(|head| head.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count of index entries in {line}"));
    assert!(written > 0, "{line}");
    let (mut process, base, out) = start("again");
    wait_ready(&base, KEY).await;
    process.kill();
    let printed = std::fs::read_to_string(&out).unwrap();
    assert!(!printed.contains("Migrated"), "{printed}");
}
