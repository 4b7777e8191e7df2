//! The customer portal: a document's link (made at completion, renewed, expired), its
//! page and downloads, the answers to offers and comments sent from it, a client's
//! session, and what keeps a link to what it opens (security headers, the limit of
//! requests per link, form tokens, isolation). `the_portal_works_in_a_browser` drives a
//! headless Chromium through `tests/portal/browser.py`; the rest speaks HTTP.

use std::path::{Path, PathBuf};

use faktura_tests::{App, Reply, check_pdf, run_ok, send_raw, workspace_root};

use crate::einvoice::SELLER;
use crate::recurring::{app_with_test_clock, set_clock};

/// The headers every portal answer carries, with their values.
const SECURITY: [(&str, &str); 4] = [
    (
        "content-security-policy",
        "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; \
         frame-ancestors 'none'; base-uri 'none'",
    ),
    ("x-content-type-options", "nosniff"),
    ("referrer-policy", "no-referrer"),
    ("x-frame-options", "DENY"),
];

/// An app with a test clock whose settings name the seller (with an IBAN) and the app's
/// own address as `public_url`, at a fixed moment.
async fn portal_app() -> App {
    let app = app_with_test_clock(|_| {}).await;
    seller(&app, &app.key).await;
    set_clock(&app, "2030-11-02T10:00:00+01:00").await;
    app
}

/// The seller's settings for the account of `key`, `public_url` the app's address.
async fn seller(app: &App, key: &str) {
    let r = app.call_as(key, "PUT", "/api/settings", Some(SELLER)).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let url = format!("<settings><public_url>{}</public_url></settings>", app.base);
    let r = app.call_as(key, "PUT", "/api/settings", Some(&url)).await;
    assert_eq!(r.status, 200, "{}", r.body);
}

async fn client(app: &App, key: &str, name: &str, locale: &str) -> u64 {
    let name = name
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    let r = app
        .call_as(
            key,
            "POST",
            "/api/clients",
            Some(&format!(
                "<client><name>{name}</name><street>Rathausplatz 2</street><zip>50667</zip>\
                 <city>Köln</city><country_code>DE</country_code><locale>{locale}</locale>\
                 <email>kunde@example.com</email>\
                 <buyer_reference>04011000-12345-03</buyer_reference></client>"
            )),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    r.id()
}

/// A completed document of `kind` (`invoices`, `offers`) for `client` with two items;
/// its id and its portal link.
async fn completed(app: &App, key: &str, kind: &str, client: u64, extra: &str) -> (u64, String) {
    let singular = match kind {
        "invoices" => "invoice",
        "credit-notes" => "credit-note",
        "offers" => "offer",
        "confirmations" => "confirmation",
        "delivery-notes" => "delivery-note",
        other => panic!("{other} is not a kind of document"),
    };
    let body = format!(
        "<{singular}><client_id>{client}</client_id>{extra}<{singular}-items>\
         <{singular}-item><title>Beratung</title><quantity>3</quantity><unit>h</unit>\
         <unit_price>120</unit_price><tax_rate>19</tax_rate></{singular}-item>\
         <{singular}-item><title>Reisekosten</title><quantity>1</quantity>\
         <unit_price>45.5</unit_price><tax_rate>19</tax_rate></{singular}-item>\
         </{singular}-items></{singular}>"
    );
    let r = app
        .call_as(key, "POST", &format!("/api/{kind}"), Some(&body))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let id = r.id();
    let done = app
        .call_as(key, "PUT", &format!("/api/{kind}/{id}/complete"), None)
        .await;
    assert_eq!(done.status, 200, "{}", done.body);
    let doc = app
        .call_as(key, "GET", &format!("/api/{kind}/{id}"), None)
        .await;
    let url = doc.field("customerportal_url").unwrap();
    assert!(
        url.starts_with(&format!("{}/portal/", app.base)),
        "{kind} {id}: {url}"
    );
    (id, url)
}

/// A request to a portal address (absolute, or a path), without an API key.
async fn open(app: &App, method: &str, url: &str, form: Option<&str>) -> Reply {
    let path = url.strip_prefix(&app.base).unwrap_or(url);
    let headers: &[(&str, &str)] = if form.is_some() {
        &[("content-type", "application/x-www-form-urlencoded")]
    } else {
        &[]
    };
    send_raw(
        &app.base,
        method,
        path,
        form.map(|f| f.as_bytes().to_vec()),
        headers,
    )
    .await
}

/// The quoted value that follows the first `before` (which ends with its opening quote) in
/// a page.
fn quoted_after(page: &str, before: &str) -> String {
    let at = page
        .find(before)
        .unwrap_or_else(|| panic!("no {before} in {page}"));
    let rest = &page[at + before.len()..];
    rest[..rest.find('"').unwrap()].to_owned()
}

/// The value of the hidden `form_token` of a page.
fn form_token(page: &str) -> String {
    quoted_after(page, "name=\"form_token\" value=\"")
}

#[track_caller]
fn assert_secure(r: &Reply, what: &str) {
    for (name, value) in SECURITY {
        assert_eq!(r.header(name), Some(value), "{what}: {name}");
    }
}

/// The comments of a document of `kind` with `actionkey`.
async fn comments(app: &App, kind: &str, id: u64, actionkey: &str) -> Vec<String> {
    let parent = match kind {
        "invoices" => "invoice",
        "offers" => "offer",
        other => panic!("no comments of {other} here"),
    };
    let r = app
        .get(&format!("/api/{parent}-comments?{parent}_id={id}"))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let keys = r.fields("actionkey");
    let texts = r.fields("comment");
    keys.iter()
        .zip(texts)
        .filter(|(k, _)| k.as_str() == actionkey)
        .map(|(_, t)| t)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_portal_answer_carries_the_security_headers() {
    let app = portal_app().await;
    let c = client(&app, &app.key, "Stadtverwaltung", "de_DE").await;
    let (_, invoice) = completed(&app, &app.key, "invoices", c, "").await;
    let page = open(&app, "GET", &invoice, None).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert_eq!(
        page.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    assert_eq!(page.header("cache-control"), Some("no-store"));
    let token = form_token(&page.body);
    let answers = [
        ("page", page),
        ("style", open(&app, "GET", "/portal/style.css", None).await),
        (
            "pdf",
            open(&app, "GET", &format!("{invoice}/pdf"), None).await,
        ),
        (
            "e-invoice",
            open(&app, "GET", &format!("{invoice}/e-invoice"), None).await,
        ),
        (
            "girocode",
            open(&app, "GET", &format!("{invoice}/girocode.svg"), None).await,
        ),
        (
            "unknown",
            open(&app, "GET", "/portal/nothing-here", None).await,
        ),
        ("root", open(&app, "GET", "/portal", None).await),
        ("put", open(&app, "PUT", &invoice, Some("")).await),
        (
            "refused form",
            open(&app, "POST", &invoice, Some("action=comment&comment=hi")).await,
        ),
        (
            "comment",
            open(
                &app,
                "POST",
                &invoice,
                Some(&format!("form_token={token}&action=comment&comment=Danke")),
            )
            .await,
        ),
    ];
    let statuses: Vec<(&str, u16)> = answers.iter().map(|(w, r)| (*w, r.status)).collect();
    assert_eq!(
        statuses,
        [
            ("page", 200),
            ("style", 200),
            ("pdf", 200),
            ("e-invoice", 200),
            ("girocode", 200),
            ("unknown", 404),
            ("root", 404),
            ("put", 405),
            ("refused form", 400),
            ("comment", 303),
        ]
    );
    for (what, r) in &answers {
        assert_secure(r, what);
    }
    let style = &answers[1].1;
    assert_eq!(
        style.header("content-type"),
        Some("text/css; charset=utf-8")
    );
    assert!(style.body.contains("@media print"));
    // No script, no inline style, nothing from another origin; the one image is the
    // GiroCode beside the page.
    let page = &answers[0].1.body;
    for banned in ["<script", " style=", "javascript:", "http://", "https://"] {
        assert!(!page.contains(banned), "{banned} in the page");
    }
    let link = invoice.rsplit('/').next().unwrap();
    assert_eq!(page.matches("<img").count(), 1, "{page}");
    assert!(
        page.contains(&format!("<img src=\"{link}/girocode.svg?v=")),
        "{page}"
    );
    let code = &answers[4].1;
    assert_eq!(code.header("content-type"), Some("image/svg+xml"));
    assert!(
        code.body
            .starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\"")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_takes_sixty_requests_a_minute() {
    let app = portal_app().await;
    let c = client(&app, &app.key, "Kunde", "en_US").await;
    let (_, a) = completed(&app, &app.key, "invoices", c, "").await;
    let (_, b) = completed(&app, &app.key, "invoices", c, "").await;
    // The limit counts in the minutes of the host's clock: start early in one.
    let second = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        % 60;
    if second > 40 {
        tokio::time::sleep(std::time::Duration::from_secs(61 - second)).await;
    }
    for i in 0..60 {
        let r = open(&app, "GET", &format!("{a}/pdf"), None).await;
        assert_eq!(r.status, 200, "request {i}");
    }
    let over = open(&app, "GET", &a, None).await;
    assert_eq!(over.status, 429, "{}", over.body);
    assert_secure(&over, "429");
    assert!(over.header("retry-after").is_some());
    assert!(over.body.contains("Too many requests"));
    // Another link counts its own requests.
    assert_eq!(open(&app, "GET", &b, None).await.status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_without_the_token_of_its_link_is_refused() {
    let app = portal_app().await;
    let c = client(&app, &app.key, "Kunde", "en_US").await;
    let (a_id, a) = completed(&app, &app.key, "offers", c, "").await;
    let (_, b) = completed(&app, &app.key, "offers", c, "").await;
    let token_b = form_token(&open(&app, "GET", &b, None).await.body);
    for (what, form) in [
        ("no token", "action=accept&name=Eve".to_owned()),
        (
            "an empty token",
            "form_token=&action=accept&name=Eve".to_owned(),
        ),
        (
            "the token of another link",
            format!("form_token={token_b}&action=accept&name=Eve"),
        ),
    ] {
        let r = open(&app, "POST", &a, Some(&form)).await;
        assert_eq!(r.status, 400, "{what}: {}", r.body);
        assert!(r.body.contains("form_token"), "{what}: {}", r.body);
    }
    let offer = app.get(&format!("/api/offers/{a_id}")).await;
    assert_eq!(offer.field("status").as_deref(), Some("OPEN"));
    // Its own token goes through.
    let token_a = form_token(&open(&app, "GET", &a, None).await.body);
    let r = open(
        &app,
        "POST",
        &a,
        Some(&format!("form_token={token_a}&action=accept&name=Eve")),
    )
    .await;
    assert_eq!(r.status, 303, "{}", r.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offers_are_accepted_and_declined_in_the_portal() {
    let app = portal_app().await;
    let c = client(&app, &app.key, "Kunde", "de_DE").await;
    let (won, won_url) = completed(&app, &app.key, "offers", c, "").await;
    let (lost, lost_url) = completed(&app, &app.key, "offers", c, "").await;
    let page = open(&app, "GET", &won_url, None).await;
    assert!(page.body.contains("Angebot annehmen"), "{}", page.body);
    let token = form_token(&page.body);
    let r = open(
        &app,
        "POST",
        &won_url,
        Some(&format!(
            "form_token={token}&action=accept&name=Erika+Muster"
        )),
    )
    .await;
    assert_eq!(r.status, 303, "{}", r.body);
    let location = r.header("location").unwrap();
    let token_part = won_url.rsplit('/').next().unwrap();
    assert_eq!(location, format!("{token_part}?done=accept"));
    let after = open(&app, "GET", &format!("{won_url}?done=accept"), None).await;
    assert!(after.body.contains("Sie haben das Angebot angenommen"));
    assert!(after.body.contains("Angenommen"));
    assert!(!after.body.contains("Angebot annehmen"));
    let offer = app.get(&format!("/api/offers/{won}")).await;
    assert_eq!(offer.field("status").as_deref(), Some("WON"));
    let notes = comments(&app, "offers", won, "PORTAL_ACCEPT").await;
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0]
            .starts_with("Accepted by Erika Muster in the customer portal on 2030-11-02 at 10:"),
        "{notes:?}"
    );
    // Once answered, an offer takes no other answer.
    let again = open(
        &app,
        "POST",
        &won_url,
        Some(&format!("form_token={token}&action=decline&name=Erika")),
    )
    .await;
    assert_eq!(again.status, 400, "{}", again.body);
    assert!(again.body.contains("OPEN"), "{}", again.body);

    let token = form_token(&open(&app, "GET", &lost_url, None).await.body);
    let r = open(
        &app,
        "POST",
        &lost_url,
        Some(&format!("form_token={token}&action=decline&name=Max")),
    )
    .await;
    assert_eq!(r.status, 303, "{}", r.body);
    let offer = app.get(&format!("/api/offers/{lost}")).await;
    assert_eq!(offer.field("status").as_deref(), Some("LOST"));
    assert_eq!(
        comments(&app, "offers", lost, "PORTAL_DECLINE").await.len(),
        1
    );
    // A name is asked for.
    let (_, third) = completed(&app, &app.key, "offers", c, "").await;
    let token = form_token(&open(&app, "GET", &third, None).await.body);
    let r = open(
        &app,
        "POST",
        &third,
        Some(&format!("form_token={token}&action=accept&name=+")),
    )
    .await;
    assert_eq!(r.status, 400);
    assert!(r.body.contains("name is mandatory"), "{}", r.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_offer_past_its_validity_shows_a_note_instead_of_the_buttons() {
    let app = portal_app().await;
    let c = client(&app, &app.key, "Kunde", "en_GB").await;
    let (id, url) = completed(
        &app,
        &app.key,
        "offers",
        c,
        "<validity_days>3</validity_days>",
    )
    .await;
    let page = open(&app, "GET", &url, None).await;
    assert!(page.body.contains("Accept offer"));
    let token = form_token(&page.body);
    set_clock(&app, "2030-11-06T10:00:00+01:00").await;
    let page = open(&app, "GET", &url, None).await;
    assert_eq!(page.status, 200);
    assert!(!page.body.contains("Accept offer"), "{}", page.body);
    assert!(page.body.contains("This offer was valid until"));
    let r = open(
        &app,
        "POST",
        &url,
        Some(&format!("form_token={token}&action=accept&name=Late")),
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.body.contains("was valid until"), "{}", r.body);
    let offer = app.get(&format!("/api/offers/{id}")).await;
    assert_eq!(offer.field("status").as_deref(), Some("OPEN"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_renewed_link_answers_404_like_an_unknown_or_malformed_one() {
    let app = portal_app().await;
    let c = client(&app, &app.key, "Kunde", "en_US").await;
    let (id, old) = completed(&app, &app.key, "invoices", c, "").await;
    let renewed = app.put(&format!("/api/invoices/{id}/renew-link"), "").await;
    assert_eq!(renewed.status, 200, "{}", renewed.body);
    let new = renewed.field("customerportal_url").unwrap();
    assert_ne!(new, old);
    assert_eq!(
        app.get(&format!("/api/invoices/{id}"))
            .await
            .field("customerportal_url"),
        Some(new.clone())
    );
    assert_eq!(open(&app, "GET", &new, None).await.status, 200);
    let gone = open(&app, "GET", &old, None).await;
    let unknown = open(
        &app,
        "GET",
        "/portal/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        None,
    )
    .await;
    let malformed = open(&app, "GET", "/portal/%3Cscript%3E", None).await;
    for (what, r) in [
        ("renewed", &gone),
        ("unknown", &unknown),
        ("malformed", &malformed),
    ] {
        assert_eq!(r.status, 404, "{what}");
        assert_eq!(
            r.body, gone.body,
            "{what}: one answer for every token that opens nothing"
        );
        assert_secure(r, what);
    }
    assert_eq!(
        open(&app, "GET", &format!("{old}/pdf"), None).await.status,
        404
    );
    // Renewing is for completed documents of the account.
    let draft = app
        .create(
            "/api/invoices",
            &format!("<invoice><client_id>{c}</client_id></invoice>"),
        )
        .await
        .id();
    app.put(&format!("/api/invoices/{draft}/renew-link"), "")
        .await
        .assert_error(400, "DRAFT");
    let other = app.new_account("Other").await;
    let r = app
        .call_as(
            &other,
            "PUT",
            &format!("/api/invoices/{id}/renew-link"),
            Some(""),
        )
        .await;
    assert_eq!(r.status, 404);
    // A deleted document's link opens nothing either.
    let (offer, offer_url) = completed(&app, &app.key, "offers", c, "").await;
    assert_eq!(
        app.delete(&format!("/api/offers/{offer}")).await.status,
        200
    );
    assert_eq!(open(&app, "GET", &offer_url, None).await.status, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_link_answers_410_with_whom_to_contact() {
    let app = portal_app().await;
    let c = client(&app, &app.key, "Kunde", "de_DE").await;
    let (paid, paid_url) = completed(&app, &app.key, "invoices", c, "").await;
    let (_, open_url) = completed(&app, &app.key, "invoices", c, "").await;
    let (_, note_url) = completed(&app, &app.key, "delivery-notes", c, "").await;
    let r = app
        .post(
            "/api/invoice-payments",
            &format!(
                "<invoice-payment><invoice_id>{paid}</invoice_id><amount>482.55</amount>\
                 <mark_invoice_as_paid>1</mark_invoice_as_paid></invoice-payment>"
            ),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    // 89 days on, every link works; 91 days on, a document that is no longer open has lost
    // its link, and an open one keeps it.
    set_clock(&app, "2031-01-30T10:00:00+01:00").await;
    for url in [&paid_url, &open_url, &note_url] {
        assert_eq!(open(&app, "GET", url, None).await.status, 200, "{url}");
    }
    set_clock(&app, "2031-02-01T11:00:00+01:00").await;
    assert_eq!(open(&app, "GET", &open_url, None).await.status, 200);
    for url in [&paid_url, &note_url] {
        let r = open(&app, "GET", url, None).await;
        assert_eq!(r.status, 410, "{url}: {}", r.body);
        assert_secure(&r, "410");
        for contact in [
            "Dieser Link ist abgelaufen",
            "Faktura Test GmbH",
            "rechnung@faktura.example",
            "+49 30 1234567",
        ] {
            assert!(r.body.contains(contact), "{contact} in {}", r.body);
        }
        assert_eq!(
            open(&app, "GET", &format!("{url}/pdf"), None).await.status,
            410
        );
    }
    // A renewed link works again.
    let renewed = app
        .put(&format!("/api/invoices/{paid}/renew-link"), "")
        .await;
    let url = renewed.field("customerportal_url").unwrap();
    assert_eq!(open(&app, "GET", &url, None).await.status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_opens_its_own_document_and_nothing_else() {
    let app = portal_app().await;
    let other = app.new_account("Zweite GmbH").await;
    seller(&app, &other).await;
    let mine = client(&app, &app.key, "Erster Kunde", "en_US").await;
    let theirs = client(&app, &other, "Fremder Kunde", "en_US").await;
    let neighbour = client(&app, &app.key, "Nachbar AG", "en_US").await;
    let (_, a) = completed(
        &app,
        &app.key,
        "invoices",
        mine,
        "<label>Projekt Alpha</label>",
    )
    .await;
    let (_, b) = completed(
        &app,
        &other,
        "invoices",
        theirs,
        "<label>Projekt Beta</label>",
    )
    .await;
    let (_, n) = completed(&app, &app.key, "invoices", neighbour, "").await;
    let page_a = open(&app, "GET", &a, None).await.body;
    let page_b = open(&app, "GET", &b, None).await.body;
    // Both accounts numbered their first invoice alike; each page is of its own account.
    assert!(page_a.contains("INV-00001") && page_b.contains("INV-00001"));
    assert!(page_a.contains("Erster Kunde") && !page_a.contains("Fremder Kunde"));
    assert!(page_b.contains("Fremder Kunde") && !page_b.contains("Erster Kunde"));
    assert!(!page_a.contains("Nachbar AG") && !page_a.contains(&n));
    // A session lists the documents of its client only, and only that account's.
    let session = app
        .post(&format!("/api/clients/{mine}/portal-session"), "")
        .await;
    assert_eq!(session.status, 201, "{}", session.body);
    let url = session.field("url").unwrap();
    let list = open(&app, "GET", &url, None).await;
    assert_eq!(list.status, 200, "{}", list.body);
    assert_secure(&list, "session");
    assert!(list.body.contains(&a), "{}", list.body);
    assert!(!list.body.contains(&n) && !list.body.contains(&b));
    // Another account's key opens no session of this account's client.
    let r = app
        .call_as(
            &other,
            "POST",
            &format!("/api/clients/{mine}/portal-session"),
            Some(""),
        )
        .await;
    assert_eq!(r.status, 404, "{}", r.body);
    // A session takes no forms, and ends after an hour.
    assert_eq!(
        open(&app, "POST", &url, Some("action=comment"))
            .await
            .status,
        405
    );
    set_clock(&app, "2030-11-02T11:00:01+01:00").await;
    assert_eq!(open(&app, "GET", &url, None).await.status, 410);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn views_are_noted_once_an_hour_and_comments_reach_the_document() {
    let app = portal_app().await;
    let c = client(&app, &app.key, "<script>alert(1)</script>", "en_US").await;
    let (id, url) = completed(&app, &app.key, "invoices", c, "").await;
    let page = open(&app, "GET", &url, None).await;
    assert!(!page.body.contains("<script>alert(1)</script>"));
    assert!(page.body.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    open(&app, "GET", &url, None).await;
    assert_eq!(comments(&app, "invoices", id, "PORTAL_VIEW").await.len(), 1);
    // The test clock runs from where it was set: the first view came a moment after
    // 10:00:00 (the client and the completion before it), so an hour later is a little
    // after 11:00:00.
    set_clock(&app, "2030-11-02T11:00:30+01:00").await;
    open(&app, "GET", &url, None).await;
    assert_eq!(comments(&app, "invoices", id, "PORTAL_VIEW").await.len(), 2);
    let token = form_token(&page.body);
    let r = open(
        &app,
        "POST",
        &url,
        Some(&format!(
            "form_token={token}&action=comment&comment=Bitte+%3Cb%3Eneu%3C%2Fb%3E+senden"
        )),
    )
    .await;
    assert_eq!(r.status, 303);
    assert_eq!(
        comments(&app, "invoices", id, "PORTAL_COMMENT").await,
        ["Bitte <b>neu</b> senden"]
    );
    let page = open(&app, "GET", &format!("{url}?done=comment"), None).await;
    assert!(page.body.contains("Bitte &lt;b&gt;neu&lt;/b&gt; senden"));
    assert!(page.body.contains("your message was sent"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn placeholders_name_the_link_in_texts_and_e_mails() {
    let app = portal_app().await;
    let c = client(&app, &app.key, "Kunde", "en_US").await;
    let (id, url) = completed(
        &app,
        &app.key,
        "invoices",
        c,
        "<note>Online: [Invoice.customerportal_url]</note>",
    )
    .await;
    let pdf = app.get(&format!("/api/invoices/{id}/pdf?format=pdf")).await;
    let text = check_pdf(&pdf.bytes);
    let token = url.rsplit('/').next().unwrap();
    assert!(text.contains(token), "{text}");
    let r = app
        .post(
            &format!("/api/invoices/{id}/email"),
            "<email><recipients><to>kunde@example.com</to></recipients><subject>Link</subject>\
             <body>See [Document.customerportal_url]</body></email>",
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let mail = app.queued_messages().join("\n");
    assert!(mail.contains(token), "{mail}");
}

/// The text of the QR codes on the first page of a PDF, decoded by `decode_qr.py`.
fn decode_pdf_codes(pdf: &[u8]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("doc.pdf");
    std::fs::write(&path, pdf).unwrap();
    let out = run_ok(
        std::process::Command::new("python3")
            .arg(portal_dir().join("decode_qr.py"))
            .arg(&path),
        "python3 with zxing-cpp and pdftoppm (make test-deps)",
    );
    String::from_utf8(out.stdout).unwrap()
}

fn portal_dir() -> PathBuf {
    workspace_root().join("tests/portal")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invoice_pdf_carries_the_girocode_when_girocode_is_1() {
    let app = portal_app().await;
    let c = client(&app, &app.key, "Kunde", "de_DE").await;
    let (id, _) = completed(&app, &app.key, "invoices", c, "").await;
    let pdf = app.get(&format!("/api/invoices/{id}/pdf?format=pdf")).await;
    let text = check_pdf(&pdf.bytes);
    assert!(text.contains("GiroCode"), "{text}");
    let codes = decode_pdf_codes(&pdf.bytes);
    assert_eq!(
        codes.trim_end(),
        "BCD\n002\n1\nSCT\nBYLADEM1001\nFaktura Test GmbH\nDE02120300000000202051\nEUR482.55\n\n\nINV-00001",
        "{codes:?}"
    );
    let r = app
        .put(
            "/api/settings",
            "<settings><girocode>0</girocode></settings>",
        )
        .await;
    assert_eq!(r.status, 200);
    let (id, url) = completed(&app, &app.key, "invoices", c, "").await;
    let pdf = app.get(&format!("/api/invoices/{id}/pdf?format=pdf")).await;
    assert!(!check_pdf(&pdf.bytes).contains("GiroCode"));
    assert_eq!(decode_pdf_codes(&pdf.bytes).trim(), "");
    let page = open(&app, "GET", &url, None).await;
    assert!(
        !page.body.contains("girocode.svg"),
        "no code on the page either"
    );
    let code = open(&app, "GET", &format!("{url}/girocode.svg"), None).await;
    assert_eq!(code.status, 404, "nor beside it");
}

/// The address of the GiroCode a page shows, as the page names it (relative to the page).
fn girocode_src(page: &str) -> String {
    quoted_after(page, "<img src=\"")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_browser_keeps_the_girocode_until_a_payment_changes_it() {
    let app = portal_app().await;
    let c = client(&app, &app.key, "Kunde", "de_DE").await;
    let (id, url) = completed(&app, &app.key, "invoices", c, "").await;
    let page = open(&app, "GET", &url, None).await;
    let src = girocode_src(&page.body);
    let dir = &url[..url.rfind('/').unwrap() + 1];
    let code = open(&app, "GET", &format!("{dir}{src}"), None).await;
    assert_eq!(code.status, 200);
    assert_eq!(
        code.header("cache-control"),
        Some("private, max-age=31536000, immutable"),
        "the version the page names never changes"
    );
    let unversioned = open(&app, "GET", &format!("{url}/girocode.svg"), None).await;
    assert_eq!(unversioned.header("cache-control"), Some("no-store"));
    assert_eq!(unversioned.body, code.body);
    let r = app
        .post(
            "/api/invoice-payments",
            &format!(
                "<invoice-payment><invoice_id>{id}</invoice_id><amount>100</amount>\
                 </invoice-payment>"
            ),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let page = open(&app, "GET", &url, None).await;
    let paid_in_part = girocode_src(&page.body);
    assert_ne!(paid_in_part, src, "a new amount is a new version");
    let stale = open(&app, "GET", &format!("{dir}{src}"), None).await;
    assert_eq!(stale.header("cache-control"), Some("no-store"));
    assert_ne!(stale.body, code.body, "the current code, not the old one");
    let current = open(&app, "GET", &format!("{dir}{paid_in_part}"), None).await;
    assert_eq!(stale.body, current.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn links_need_the_public_url() {
    let app = app_with_test_clock(|_| {}).await;
    let c = client(&app, &app.key, "Kunde", "en_US").await;
    let r = app
        .create(
            "/api/invoices",
            &format!("<invoice><client_id>{c}</client_id></invoice>"),
        )
        .await;
    let id = r.id();
    assert_eq!(
        app.put(&format!("/api/invoices/{id}/complete"), "")
            .await
            .status,
        200
    );
    let doc = app.get(&format!("/api/invoices/{id}")).await;
    assert_eq!(doc.field("customerportal_url").as_deref(), Some(""));
    app.put(&format!("/api/invoices/{id}/renew-link"), "")
        .await
        .assert_error(400, "public_url");
    app.post(&format!("/api/clients/{c}/portal-session"), "")
        .await
        .assert_error(400, "public_url");
    app.put(
        "/api/settings",
        "<settings><public_url>ftp://x</public_url></settings>",
    )
    .await
    .assert_error(400, "public_url must be an address");
    // Once it is set, a renewal gives the document its first link.
    let r = app
        .put(
            "/api/settings",
            &format!(
                "<settings><public_url>{}/</public_url></settings>",
                app.base
            ),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let r = app.put(&format!("/api/invoices/{id}/renew-link"), "").await;
    let url = r.field("customerportal_url").unwrap();
    assert!(url.starts_with(&format!("{}/portal/", app.base)), "{url}");
    assert_eq!(open(&app, "GET", &url, None).await.status, 200);
}

/// Drives `tests/portal/browser.py` in a headless Chromium against a host with documents
/// made for it; the script checks what a client sees and does, and saves screenshots at
/// phone and desktop widths into target/portal-screenshots/.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_portal_works_in_a_browser() {
    let app = portal_app().await;
    let c = client(&app, &app.key, "Stadtverwaltung Musterstadt", "de_DE").await;
    let (invoice, invoice_url) = completed(
        &app,
        &app.key,
        "invoices",
        c,
        "<intro>Vielen Dank für Ihren Auftrag.</intro>",
    )
    .await;
    let (accept, accept_url) = completed(&app, &app.key, "offers", c, "").await;
    let (decline, decline_url) = completed(&app, &app.key, "offers", c, "").await;
    let (renewed, renewed_url) = completed(&app, &app.key, "invoices", c, "").await;
    assert_eq!(
        app.put(&format!("/api/invoices/{renewed}/renew-link"), "")
            .await
            .status,
        200
    );
    let english = client(&app, &app.key, "Acme Ltd", "en_GB").await;
    let (_, english_url) = completed(&app, &app.key, "invoices", english, "").await;
    let hostile = client(&app, &app.key, "<script>alert(1)</script>", "en_US").await;
    let (_, hostile_url) = completed(&app, &app.key, "invoices", hostile, "").await;
    let (paid, expired_url) = completed(&app, &app.key, "credit-notes", c, "").await;
    let r = app
        .post(
            "/api/credit-note-payments",
            &format!(
                "<credit-note-payment><credit_note_id>{paid}</credit_note_id><amount>482.55</amount>\
                 </credit-note-payment>"
            ),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let session = app
        .post(&format!("/api/clients/{c}/portal-session"), "")
        .await
        .field("url")
        .unwrap();
    let out = workspace_root().join("target/portal-screenshots");
    std::fs::create_dir_all(&out).unwrap();
    let work = tempfile::tempdir().unwrap();
    let api_pdf = app
        .get(&format!("/api/invoices/{invoice}/pdf?format=pdf"))
        .await;
    let api_einvoice = app.get(&format!("/api/invoices/{invoice}/e-invoice")).await;
    assert_eq!(api_einvoice.status, 200);
    std::fs::write(work.path().join("api.pdf"), &api_pdf.bytes).unwrap();
    std::fs::write(work.path().join("api.xml"), &api_einvoice.bytes).unwrap();
    let invoice_doc = app.get(&format!("/api/invoices/{invoice}")).await;
    let plan = serde_json::json!({
        "invoice": invoice_url,
        "number": invoice_doc.field("invoice_number").unwrap(),
        "total": "482,55 EUR",
        "items": ["Beratung", "Reisekosten"],
        "api_pdf": work.path().join("api.pdf"),
        "api_einvoice": work.path().join("api.xml"),
        "girocode": {
            "bic": "BYLADEM1001",
            "name": "Faktura Test GmbH",
            "iban": "DE02120300000000202051",
            "amount": "EUR482.55",
            "reference": invoice_doc.field("invoice_number").unwrap(),
        },
        "accept": accept_url,
        "decline": decline_url,
        "renewed": renewed_url,
        "expired": expired_url,
        "english": english_url,
        "hostile": hostile_url,
        "session": session,
        "downloads": work.path().join("downloads"),
        "screenshots": out,
    });
    // 90 days and more after completion, a credit note that is paid has lost its link; the
    // rest keep theirs while open (offers answer within their validity only, so they are
    // answered first, at today's clock).
    let plan_path = work.path().join("plan.json");
    std::fs::write(&plan_path, plan.to_string()).unwrap();
    let run = |step: &str| {
        let mut command = std::process::Command::new("python3");
        command
            .arg(portal_dir().join("browser.py"))
            .arg(&plan_path)
            .arg(step);
        command
    };
    let output = run_ok(
        &mut run("answers"),
        "python3 with selenium and zxing-cpp, chromium and chromium-driver (make test-deps)",
    );
    print!("{}", String::from_utf8_lossy(&output.stdout));
    let offer = app.get(&format!("/api/offers/{accept}")).await;
    assert_eq!(offer.field("status").as_deref(), Some("WON"));
    let offer = app.get(&format!("/api/offers/{decline}")).await;
    assert_eq!(offer.field("status").as_deref(), Some("LOST"));
    assert_eq!(
        comments(&app, "invoices", invoice, "PORTAL_COMMENT").await,
        ["Bitte schicken Sie uns die Rechnung auch per Post."]
    );
    set_clock(&app, "2031-02-10T10:00:00+01:00").await;
    let output = run_ok(&mut run("expired"), "the browser check of an expired link");
    print!("{}", String::from_utf8_lossy(&output.stdout));
    for name in [
        "invoice-390.png",
        "invoice-1280.png",
        "offer-390.png",
        "session-1280.png",
    ] {
        let path: &Path = &out.join(name);
        assert!(path.exists(), "{}", path.display());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reminder_has_its_own_link_with_the_claim_and_how_to_pay_it() {
    let app = portal_app().await;
    let c = client(&app, &app.key, "Kunde", "de_DE").await;
    let (invoice, invoice_url) = completed(&app, &app.key, "invoices", c, "").await;
    let number = app
        .get(&format!("/api/invoices/{invoice}"))
        .await
        .field("invoice_number")
        .unwrap();
    // The invoice fell due on 2030-11-16.
    set_clock(&app, "2030-11-20T10:00:00+01:00").await;
    let r = app
        .post(
            "/api/reminders",
            &format!("<reminder><invoice_id>{invoice}</invoice_id></reminder>"),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let id = r.id();
    assert_eq!(
        r.field("customerportal_url").as_deref(),
        Some(""),
        "a draft has none"
    );
    let done = app.put(&format!("/api/reminders/{id}/complete"), "").await;
    assert_eq!(done.status, 200, "{}", done.body);
    let done = app.get(&format!("/api/reminders/{id}")).await;
    let url = done.field("customerportal_url").unwrap();
    assert!(url.starts_with(&format!("{}/portal/", app.base)), "{url}");
    assert_ne!(url, invoice_url, "a link of its own");
    let total = done.field("total_gross").unwrap();
    let page = open(&app, "GET", &url, None).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert_secure(&page, "reminder page");
    assert!(page.body.contains("Zahlungserinnerung"), "{}", page.body);
    assert!(page.body.contains(&number), "the invoice it claims");
    assert!(
        page.body
            .contains(&format!("{},", total.split('.').next().unwrap())),
        "the amount due, {total}: {}",
        page.body
    );
    assert!(page.body.contains("DE02 1203"), "the IBAN to pay to");
    let pdf = open(&app, "GET", &format!("{url}/pdf"), None).await;
    let api_pdf = app
        .get(&format!("/api/reminders/{id}/pdf?format=pdf"))
        .await;
    assert_eq!(pdf.status, 200);
    assert!(pdf.bytes == api_pdf.bytes, "the PDF is the API's");
    // A reminder has no e-invoice.
    assert_eq!(
        open(&app, "GET", &format!("{url}/e-invoice"), None)
            .await
            .status,
        404
    );
    let renewed = app
        .put(&format!("/api/reminders/{id}/renew-link"), "")
        .await;
    assert_eq!(renewed.status, 200, "{}", renewed.body);
    let new_url = renewed.field("customerportal_url").unwrap();
    assert_ne!(new_url, url);
    assert_eq!(open(&app, "GET", &url, None).await.status, 404);
    assert_eq!(open(&app, "GET", &new_url, None).await.status, 200);
}
