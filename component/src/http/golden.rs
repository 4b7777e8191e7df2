//! Golden files of the wire format: each resource is created through `handle` with
//! in-memory capabilities and a fixed clock, then read in XML and in JSON; both must match
//! the hand-checked files in `tests/cases/<case>/response.{xml,json}`. `UPDATE_EXPECT=1`
//! rewrites the files.

#![expect(
    clippy::disallowed_methods,
    reason = "the golden files are files, and UPDATE_EXPECT an environment variable, of the test run, not of the component"
)]

use std::cell::Cell;
use std::path::PathBuf;

use super::{Body, Method, Request, handle};
use crate::caps::Caps;
use crate::caps::mem::{
    CountingRandom, FixedClock, MemStore, NoMail, Receiver, TextPdf, Unlimited, Vars,
};

const KEY: &str = "golden-key-0123456789";

pub(super) struct World {
    pub(super) store: MemStore,
    clock: FixedClock,
    random: CountingRandom,
    rate: Unlimited,
    pub(super) env: Vars,
    pub(super) receiver: Receiver,
}

impl World {
    pub(super) fn new() -> World {
        let w = World {
            store: MemStore::default(),
            clock: FixedClock(Cell::new(1_795_000_000)),
            random: CountingRandom::default(),
            rate: Unlimited::default(),
            env: Vars::default(),
            receiver: Receiver::default(),
        };
        let mut txn = crate::caps::Store::begin_write(&w.store).unwrap();
        crate::domain::opening::open_account(
            txn.as_mut(),
            "Golden",
            "admin@example.com",
            0,
            &w.random,
            Some(KEY),
        )
        .unwrap();
        txn.commit().unwrap();
        w
    }

    pub(super) fn clock(&self) -> &FixedClock {
        &self.clock
    }

    pub(super) fn caps(&self) -> Caps<'_> {
        self.caps_on(&self.store)
    }

    /// The world's capabilities with `store` in place of its own.
    pub(super) fn caps_on<'a>(&'a self, store: &'a dyn crate::caps::Store) -> Caps<'a> {
        Caps {
            store,
            clock: &self.clock,
            random: &self.random,
            pdf: &TextPdf,
            mail: &NoMail,
            rate: &self.rate,
            env: &self.env,
            outbound: &self.receiver,
        }
    }

    /// A request with the world's key, answered in `accept`'s format.
    pub(super) fn request_as(
        &self,
        method: Method,
        path: &str,
        body: &str,
        accept: &str,
    ) -> Request {
        let (path, query) = path.split_once('?').unwrap_or((path, ""));
        Request {
            method,
            path: path.into(),
            query: query.into(),
            headers: vec![
                ("x-serviceapikey".into(), KEY.into()),
                ("accept".into(), accept.into()),
            ],
            body: Body::Bytes(body.as_bytes().to_vec()),
        }
    }

    pub(super) fn request(&self, method: Method, path: &str) -> Request {
        self.request_as(method, path, "", "application/xml")
    }

    pub(super) fn call(
        &self,
        method: Method,
        path: &str,
        body: &str,
        accept: &str,
    ) -> (u16, String) {
        let r = handle(&self.caps(), &self.request_as(method, path, body, accept));
        (r.status, String::from_utf8(r.body).unwrap())
    }

    pub(super) fn ok(&self, method: Method, path: &str, body: &str) {
        let (status, text) = self.call(method, path, body, "application/xml");
        assert!(status < 300, "{path}: {status} {text}");
    }
}

pub(super) fn seed() -> World {
    let w = World::new();
    let rtf = "e1xydGYxIFJlY2hudW5nIFtJbnZvaWNlLmludm9pY2VfbnVtYmVyXVxwYXJ9";
    w.ok(Method::Put, "/api/settings", "<settings><company_name>Faktura GmbH</company_name><company_city>Berlin</company_city></settings>");
    w.ok(Method::Post, "/api/templates", &format!("<template><name>Standard</name><type>INVOICE</type><format>rtf</format><base64file>{rtf}</base64file></template>"));
    w.ok(Method::Post, "/api/user-properties", "<user-property><name>Team</name><type>TEXTFIELD</type><default_value>Sales</default_value></user-property>");
    w.ok(
        Method::Post,
        "/api/incoming-properties",
        "<incoming-property><name>Cost centre</name><type>TEXTAREA</type></incoming-property>",
    );
    w.ok(Method::Post, "/api/client-properties", "<client-property><name>VIP</name><type>CHECKBOX</type><default_value>0</default_value><is_nvl>1</is_nvl></client-property>");
    w.ok(
        Method::Post,
        "/api/country-taxes",
        "<country-tax><country_code>CH</country_code></country-tax>",
    );
    w.ok(
        Method::Post,
        "/api/taxes",
        "<tax><name>MwSt</name><rate>19</rate></tax>",
    );
    w.ok(Method::Post, "/api/clients", "<client><name>Müller &amp; Söhne AG</name><street>Hauptstraße 5</street><zip>10115</zip><city>Berlin</city><country_code>DE</country_code><email>info@mueller.example</email></client>");
    w.ok(Method::Post, "/api/invoices", "<invoice><client_id>1</client_id><date>2026-11-02</date><label>Website</label><invoice-items><invoice-item><title>Design</title><quantity>10</quantity><unit>h</unit><unit_price>95.5</unit_price></invoice-item><invoice-item><title>Buch</title><quantity>1</quantity><unit_price>39.9</unit_price><tax_name>ermäßigt</tax_name><tax_rate>7</tax_rate></invoice-item></invoice-items></invoice>");
    w.ok(Method::Put, "/api/invoices/1/complete", "");
    w.ok(Method::Post, "/api/invoice-payments", "<invoice-payment><invoice_id>1</invoice_id><amount>100</amount><type>BANK_TRANSFER</type><date>2026-11-10</date><comment>First part</comment></invoice-payment>");
    w.ok(Method::Post, "/api/invoice-comments", "<invoice-comment><invoice_id>1</invoice_id><comment>Called about the rest</comment></invoice-comment>");
    w.ok(Method::Post, "/api/credit-notes", "<credit-note><invoice_id>1</invoice_id><title>Gutschrift</title><date>2026-11-12</date></credit-note>");
    w.ok(
        Method::Post,
        "/api/credit-note-tags",
        "<credit-note-tag><credit_note_id>1</credit_note_id><name>Retoure</name></credit-note-tag>",
    );
    w.ok(Method::Post, "/api/email-templates", "<email-template><name>Standard</name><subject>Gutschrift [CreditNote.credit_note_number]</subject><body>Anbei.</body><is_default>1</is_default></email-template>");
    w
}

/// Case name and the GET whose answer is recorded.
const CASES: &[(&str, &str)] = &[
    ("templates/get", "/api/templates/1"),
    ("templates/list", "/api/templates?type=invoice"),
    ("user-properties/get", "/api/user-properties/1"),
    ("incoming-properties/list", "/api/incoming-properties"),
    ("client-properties/get", "/api/client-properties/1"),
    ("country-taxes/list", "/api/country-taxes?country=CH"),
    ("taxes/get", "/api/taxes/1"),
    ("clients/get", "/api/clients/1"),
    ("settings/get", "/api/settings"),
    ("invoices/get", "/api/invoices/1"),
    ("invoices/list", "/api/invoices?status=OPEN"),
    ("invoices/groups", "/api/invoices?group_by=client,month"),
    ("invoice-items/list", "/api/invoice-items?invoice_id=1"),
    ("invoice-payments/get", "/api/invoice-payments/1"),
    (
        "invoice-comments/list",
        "/api/invoice-comments?invoice_id=1",
    ),
    ("pdf/get", "/api/invoices/1/pdf"),
    ("credit-notes/get", "/api/credit-notes/1"),
    (
        "credit-notes/groups",
        "/api/credit-notes?group_by=status,year",
    ),
    (
        "credit-note-items/list",
        "/api/credit-note-items?credit_note_id=1",
    ),
    (
        "credit-note-tags/list",
        "/api/credit-note-tags?credit_note_id=1",
    ),
    ("email-templates/get", "/api/email-templates/1"),
    ("errors/not-found", "/api/clients/999"),
    (
        "errors/invalid",
        "/api/invoices?status=LATE&from=2026-13-01",
    ),
];

/// A world with several documents of each kind in every state, for pages of several.
fn seed_pages() -> World {
    let w = World::new();
    w.ok(
        Method::Post,
        "/api/taxes",
        "<tax><name>MwSt</name><rate>19</rate></tax>",
    );
    w.ok(Method::Post, "/api/clients", "<client><name>Müller &amp; Söhne AG</name><street>Hauptstraße 5</street><zip>10115</zip><city>Berlin</city></client>");
    w.ok(Method::Post, "/api/clients", "<client><first_name>Anna</first_name><last_name>Schmidt</last_name><net_gross>GROSS</net_gross><reduction>5%</reduction><currency_code>CHF</currency_code></client>");
    for (client, date, items) in [
        (
            1,
            "2026-10-01",
            "<invoice-item><title>Design</title><quantity>10</quantity><unit_price>95.5</unit_price></invoice-item>",
        ),
        (
            2,
            "2026-10-15",
            "<invoice-item><title>Buch</title><unit_price>39.9</unit_price><tax_name>ermäßigt</tax_name><tax_rate>7</tax_rate></invoice-item><invoice-item><title>Beratung &lt;vor Ort&gt;</title><quantity>2.5</quantity><unit_price>120</unit_price></invoice-item>",
        ),
        (
            1,
            "2026-11-02",
            "<invoice-item><title>Hosting</title><unit_price>19.99</unit_price><reduction>10%</reduction></invoice-item>",
        ),
        (
            2,
            "2026-11-20",
            "<invoice-item><title>Entwurf</title><unit_price>5</unit_price></invoice-item>",
        ),
    ] {
        w.ok(
            Method::Post,
            "/api/invoices",
            &format!("<invoice><client_id>{client}</client_id><date>{date}</date><label>Job &amp; more</label><invoice-items>{items}</invoice-items></invoice>"),
        );
    }
    for id in 1..=3 {
        w.ok(Method::Put, &format!("/api/invoices/{id}/complete"), "");
    }
    w.ok(Method::Post, "/api/invoice-payments", "<invoice-payment><invoice_id>2</invoice_id><amount>500</amount><type>CASH</type><mark_invoice_as_paid>1</mark_invoice_as_paid></invoice-payment>");
    w.ok(Method::Put, "/api/invoices/3/cancel", "");
    w.ok(
        Method::Post,
        "/api/invoice-tags",
        "<invoice-tag><invoice_id>1</invoice_id><name>VIP</name></invoice-tag>",
    );
    w.ok(Method::Post, "/api/credit-notes", "<credit-note><invoice_id>2</invoice_id><title>Gutschrift</title><date>2026-11-12</date></credit-note>");
    w.ok(Method::Post, "/api/credit-notes", "<credit-note><client_id>1</client_id><date>2026-11-13</date><credit-note-items><credit-note-item><title>Rückgabe</title><unit_price>50</unit_price></credit-note-item></credit-note-items></credit-note>");
    w.ok(Method::Put, "/api/credit-notes/1/complete", "");
    w
}

/// Case name and the GET whose answer is recorded, on the world of `seed_pages`.
const PAGE_CASES: &[(&str, &str)] = &[
    ("invoices/page", "/api/invoices"),
    ("invoices/page-2", "/api/invoices?per_page=2&page=2"),
    (
        "invoices/page-ordered",
        "/api/invoices?order_by=total_gross+DESC&per_page=3",
    ),
    ("credit-notes/page", "/api/credit-notes"),
    // Part of the name in another case, and the clients of two invoices: one client.
    (
        "clients/list-filtered",
        "/api/clients?name=S%C3%96HNE&invoice_id=1,2",
    ),
];

fn cases_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/cases")
}

/// Answers `cases` in both formats and compares each with its golden files: the status,
/// the XML and the JSON (pretty-printed); `update` rewrites the files instead.
fn check_cases(w: &World, cases: &[(&str, &str)], update: bool, mismatches: &mut Vec<String>) {
    for (case, path) in cases {
        let (status, xml) = w.call(Method::Get, path, "", "application/xml");
        let (json_status, json) = w.call(Method::Get, path, "", "application/json");
        assert_eq!(status, json_status, "{path}");
        let json: serde_json::Value = serde_json::from_str(&json).unwrap();
        let json = serde_json::to_string_pretty(&json).unwrap() + "\n";
        let status = format!("{status}\n");
        let dir = cases_dir().join(case);
        for (file, actual) in [
            ("status", &status),
            ("response.xml", &xml),
            ("response.json", &json),
        ] {
            let path = dir.join(file);
            if update {
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(&path, actual).unwrap();
                continue;
            }
            let expected = std::fs::read_to_string(&path).unwrap_or_default();
            if &expected != actual {
                mismatches.push(format!("{}:\n{actual}", path.display()));
            }
        }
    }
}

#[test]
fn wire_formats_match_the_golden_files() {
    let update = std::env::var_os("UPDATE_EXPECT").is_some();
    let mut mismatches = Vec::new();
    check_cases(&seed(), CASES, update, &mut mismatches);
    check_cases(&seed_pages(), PAGE_CASES, update, &mut mismatches);
    assert!(
        mismatches.is_empty(),
        "golden files differ (rerun with UPDATE_EXPECT=1 after checking):\n{}",
        mismatches.join("\n")
    );
}

#[test]
fn json_requests_give_the_same_records_as_xml() {
    let w = World::new();
    let xml = w.call(Method::Post, "/api/clients", "<client><name>A</name><country_code>DE</country_code><discount_rate>2.5</discount_rate></client>", "application/json").1;
    let json = w
        .call(
            Method::Post,
            "/api/clients",
            r#"{"client": {"name": "A", "country_code": "DE", "discount_rate": 2.5}}"#,
            "application/json",
        )
        .1;
    let strip = |s: &str| s.replace("\"1\"", "\"ID\"").replace("\"2\"", "\"ID\"");
    assert_eq!(strip(&xml), strip(&json));
}
