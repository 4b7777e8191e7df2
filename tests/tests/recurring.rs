//! Recurring invoices through the real host, driven by the test clock: every cycle over
//! two years (February of a leap year, ultimo), the hour of a run across both DST changes
//! in two zones, each action, iterations, end dates, stopping, a completion the e-invoice
//! rules refuse, and a clock moved seven months in one step. Runs on PostgreSQL with
//! several hosts at once are in postgres.rs.

use faktura_tests::{App, Reply, SmtpSink, free_port, postal_letters};

use crate::support::client;

/// An app whose accounts have test clocks (`--test-clock`), with the options `configure`
/// sets besides.
pub(crate) async fn app_with_test_clock(configure: impl FnOnce(&mut faktura_host::Options)) -> App {
    App::spawn_configured(
        std::sync::Arc::new(tempfile::tempdir().unwrap()),
        faktura_tests::test_component(),
        |o| {
            o.test_clock = true;
            configure(o);
        },
    )
    .await
}

/// Moves the account's clock to `now` (ISO 8601 with offset), which must be accepted.
pub(crate) async fn set_clock(app: &App, now: &str) -> Reply {
    let r = app
        .put(
            "/api/test-clock",
            &format!("<test-clock><now>{now}</now></test-clock>"),
        )
        .await;
    assert_eq!(r.status, 200, "{now}: {}", r.body);
    r
}

/// A recurring invoice of `client` with one item of 100 and the fields `inner`.
async fn recurring(app: &App, client: u64, inner: &str) -> u64 {
    let r = app
        .post(
            "/api/recurrings",
            &format!(
                "<recurring><client_id>{client}</client_id>{inner}<recurring-items><recurring-item>\
                 <title>Miete [Date.month_name] [Date.year]</title><unit_price>100</unit_price>\
                 </recurring-item></recurring-items></recurring>"
            ),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    r.id()
}

/// The dates of the invoices a recurring made, in id order.
async fn made(app: &App, recurring: u64) -> Vec<String> {
    let list = app.get("/api/invoices?per_page=1000&order_by=id").await;
    let ids = list.fields("recurring_id");
    list.fields("date")
        .into_iter()
        .zip(ids)
        .filter(|(_, r)| *r == recurring.to_string())
        .map(|(d, _)| d)
        .collect()
}

#[tokio::test]
async fn without_the_flag_the_test_clock_is_no_resource() {
    let app = App::spawn().await;
    assert_eq!(app.get("/api/test-clock").await.status, 404);
    assert_eq!(
        app.put(
            "/api/test-clock",
            "<test-clock><now>2030-01-01T00:00:00+00:00</now></test-clock>"
        )
        .await
        .status,
        404
    );
}

#[tokio::test]
async fn the_test_clock_moves_only_forward_and_everything_follows_it() {
    let app = app_with_test_clock(|_| {}).await;
    let now = app.get("/api/test-clock").await;
    assert_eq!(now.status, 200, "{}", now.body);
    assert_eq!(now.field("time_zone").as_deref(), Some("Europe/Berlin"));
    app.put(
        "/api/test-clock",
        "<test-clock><now>2020-01-01T00:00:00+01:00</now></test-clock>",
    )
    .await
    .assert_error(400, "now must not go back");
    app.put(
        "/api/test-clock",
        "<test-clock><now>next week</now></test-clock>",
    )
    .await
    .assert_error(400, "now must be a date-time");
    let moved = set_clock(&app, "2030-03-01T10:00:00+01:00").await;
    assert!(
        moved.field("now").unwrap().starts_with("2030-03-01T10:00"),
        "{}",
        moved.body
    );
    // Today, the default date and OVERDUE follow the account's clock.
    let c = client(&app, "<name>A</name>").await;
    let inv = app
        .post(
            "/api/invoices",
            &format!("<invoice><client_id>{c}</client_id></invoice>"),
        )
        .await;
    inv.assert_fields(&[("date", "2030-03-01"), ("due_date", "2030-03-15")]);
    assert_eq!(
        app.put(&format!("/api/invoices/{}/complete", inv.id()), "")
            .await
            .status,
        200
    );
    set_clock(&app, "2030-03-16T00:30:00+01:00").await;
    app.get(&format!("/api/invoices/{}", inv.id()))
        .await
        .assert_fields(&[("status", "OVERDUE")]);
    // Another account keeps the system's time.
    let other = app.new_account("Other").await;
    let theirs = app.call_as(&other, "GET", "/api/test-clock", None).await;
    assert!(
        !theirs.field("now").unwrap().starts_with("2030"),
        "{}",
        theirs.body
    );
    // A zone of its own: 23:30 in New York is already tomorrow in Berlin.
    let ny = app
        .put(
            "/api/test-clock",
            "<test-clock><now>2030-03-16T23:30:00-04:00</now><time_zone>America/New_York</time_zone></test-clock>",
        )
        .await;
    assert_eq!(ny.status, 200, "{}", ny.body);
    app.get("/api/settings")
        .await
        .assert_fields(&[("time_zone", "America/New_York")]);
    let late = app
        .post(
            "/api/invoices",
            &format!("<invoice><client_id>{c}</client_id></invoice>"),
        )
        .await;
    late.assert_fields(&[("date", "2030-03-16")]);
    app.put(
        "/api/settings",
        "<settings><time_zone>Mars/Olympus</time_zone></settings>",
    )
    .await
    .assert_error(400, "time_zone must be an IANA time zone");
}

#[tokio::test]
async fn every_cycle_runs_on_its_dates_for_two_years() {
    let app = app_with_test_clock(|_| {}).await;
    set_clock(&app, "2027-01-01T00:00:00+01:00").await;
    let c = client(&app, "<name>A</name><locale>de_DE</locale>").await;
    let cases = [
        (
            "<cycle>MONTHLY</cycle><start_date>2027-01-31</start_date>",
            24,
        ),
        (
            "<cycle>MONTHLY</cycle><start_date>2027-01-15</start_date><ultimo>1</ultimo>",
            24,
        ),
        (
            "<cycle>QUARTERLY</cycle><start_date>2027-11-30</start_date>",
            5,
        ),
        (
            "<cycle>SEMIYEARLY</cycle><start_date>2027-02-28</start_date>",
            4,
        ),
        (
            "<cycle>YEARLY</cycle><start_date>2027-02-28</start_date>",
            2,
        ),
        (
            "<cycle>WEEKLY</cycle><cycle_number>4</cycle_number><start_date>2027-01-04</start_date>",
            26,
        ),
        (
            "<cycle>DAILY</cycle><cycle_number>30</cycle_number><start_date>2027-01-01</start_date>",
            25,
        ),
    ];
    let mut ids = Vec::new();
    for (fields, _) in cases {
        ids.push(recurring(&app, c, fields).await);
    }
    // Month by month over two years: each run made at its own date.
    for month in 1..=24 {
        let (y, m) = (2027 + (month - 1) / 12, (month - 1) % 12 + 1);
        set_clock(&app, &format!("{y}-{m:02}-28T23:00:00+01:00")).await;
    }
    set_clock(&app, "2028-12-31T23:30:00+01:00").await;
    let monthly = made(&app, ids[0]).await;
    assert_eq!(monthly.len(), 24, "{monthly:?}");
    assert_eq!(
        &monthly[..4],
        ["2027-01-31", "2027-02-28", "2027-03-31", "2027-04-30"]
    );
    assert_eq!(monthly[13], "2028-02-29", "a leap year's February");
    let ultimo = made(&app, ids[1]).await;
    assert_eq!(&ultimo[..2], ["2027-01-31", "2027-02-28"]);
    assert_eq!(ultimo[13], "2028-02-29");
    assert_eq!(
        made(&app, ids[2]).await,
        [
            "2027-11-30",
            "2028-02-29",
            "2028-05-30",
            "2028-08-30",
            "2028-11-30"
        ]
    );
    assert_eq!(
        made(&app, ids[3]).await,
        ["2027-02-28", "2027-08-28", "2028-02-28", "2028-08-28"]
    );
    assert_eq!(made(&app, ids[4]).await, ["2027-02-28", "2028-02-28"]);
    for (id, (_, count)) in ids.iter().zip(cases) {
        assert_eq!(made(&app, *id).await.len(), count, "recurring {id}");
        let r = app.get(&format!("/api/recurrings/{id}")).await;
        assert_eq!(r.field("counter"), Some(count.to_string()), "{}", r.body);
    }
    // Texts follow the run's date, in the client's language.
    let first = app.get("/api/invoices?per_page=1").await.id();
    let items = app
        .get(&format!("/api/invoice-items?invoice_id={first}"))
        .await;
    assert_eq!(items.field("title").as_deref(), Some("Miete Januar 2027"));
}

#[tokio::test]
async fn a_run_is_at_its_hour_in_the_accounts_zone_across_dst_changes() {
    let app = app_with_test_clock(|_| {}).await;
    set_clock(&app, "2027-03-26T00:00:00+01:00").await;
    let c = client(&app, "<name>A</name>").await;
    // 28 March 2027: Berlin skips from 02:00 to 03:00.
    let spring = recurring(
        &app,
        c,
        "<cycle>DAILY</cycle><hour>2</hour><start_date>2027-03-28</start_date><iterations>1</iterations>",
    )
    .await;
    set_clock(&app, "2027-03-28T01:59:00+01:00").await;
    assert!(made(&app, spring).await.is_empty(), "before 02:00 CET");
    set_clock(&app, "2027-03-28T03:00:00+02:00").await;
    assert_eq!(made(&app, spring).await, ["2027-03-28"]);
    // 31 October 2027: 02:00 happens twice; the run is at the first.
    let autumn = recurring(
        &app,
        c,
        "<cycle>DAILY</cycle><hour>2</hour><start_date>2027-10-31</start_date><iterations>1</iterations>",
    )
    .await;
    set_clock(&app, "2027-10-31T01:59:00+02:00").await;
    assert!(made(&app, autumn).await.is_empty());
    set_clock(&app, "2027-10-31T02:00:00+02:00").await;
    assert_eq!(made(&app, autumn).await, ["2027-10-31"]);
    // In New York the hour is New York's: 06:00 there is 12:00 in Berlin.
    set_clock(&app, "2027-11-01T00:00:00-04:00").await;
    let r = app
        .put(
            "/api/test-clock",
            "<test-clock><now>2027-11-01T00:00:00-04:00</now><time_zone>America/New_York</time_zone></test-clock>",
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let ny = recurring(
        &app,
        c,
        "<cycle>DAILY</cycle><hour>6</hour><start_date>2027-11-07</start_date><iterations>1</iterations>",
    )
    .await;
    // 7 November 2027: New York falls back from EDT to EST at 02:00.
    set_clock(&app, "2027-11-07T05:59:00-05:00").await;
    assert!(made(&app, ny).await.is_empty());
    set_clock(&app, "2027-11-07T06:00:00-05:00").await;
    assert_eq!(made(&app, ny).await, ["2027-11-07"]);
}

#[tokio::test]
async fn a_clock_moved_seven_months_at_once_makes_the_seven_invoices_with_their_dates() {
    let app = app_with_test_clock(|_| {}).await;
    set_clock(&app, "2027-01-01T00:00:00+01:00").await;
    let c = client(&app, "<name>A</name>").await;
    let id = recurring(
        &app,
        c,
        "<start_date>2027-01-10</start_date><action>COMPLETE</action>",
    )
    .await;
    set_clock(&app, "2027-07-10T12:00:00+02:00").await;
    let dates = made(&app, id).await;
    assert_eq!(
        dates,
        [
            "2027-01-10",
            "2027-02-10",
            "2027-03-10",
            "2027-04-10",
            "2027-05-10",
            "2027-06-10",
            "2027-07-10"
        ]
    );
    let r = app.get(&format!("/api/recurrings/{id}")).await;
    r.assert_fields(&[
        ("counter", "7"),
        ("last_creation_date", "2027-07-10"),
        ("next_creation_date", "2027-08-10"),
    ]);
    let numbers = app
        .get("/api/invoices?per_page=100")
        .await
        .fields("invoice_number");
    assert_eq!(numbers.len(), 7);
    assert_eq!(numbers[6], "INV-00007", "gapless");
    let statuses = app.get("/api/invoices?per_page=100").await.fields("status");
    assert!(
        statuses.iter().all(|s| s == "OPEN" || s == "OVERDUE"),
        "{statuses:?}"
    );
}

#[tokio::test]
async fn iterations_end_dates_and_stop_end_a_series() {
    let app = app_with_test_clock(|_| {}).await;
    set_clock(&app, "2027-01-01T00:00:00+01:00").await;
    let c = client(&app, "<name>A</name>").await;
    let three = recurring(
        &app,
        c,
        "<start_date>2027-01-05</start_date><iterations>3</iterations>",
    )
    .await;
    let until = recurring(
        &app,
        c,
        "<start_date>2027-01-05</start_date><end_date>2027-02-20</end_date>",
    )
    .await;
    let stopped = recurring(&app, c, "<start_date>2027-01-05</start_date>").await;
    set_clock(&app, "2027-01-06T00:00:00+01:00").await;
    let stop = app
        .put(&format!("/api/recurrings/{stopped}/stop"), "")
        .await;
    assert_eq!(stop.status, 200, "{}", stop.body);
    stop.assert_fields(&[("next_creation_date", "")]);
    set_clock(&app, "2027-12-31T00:00:00+01:00").await;
    assert_eq!(made(&app, three).await.len(), 3);
    assert_eq!(made(&app, until).await, ["2027-01-05", "2027-02-05"]);
    assert_eq!(made(&app, stopped).await, ["2027-01-05"]);
    app.get(&format!("/api/recurrings/{three}"))
        .await
        .assert_fields(&[("next_creation_date", ""), ("counter", "3")]);
    // Set to a date again, the series runs from it.
    let again = app
        .put(
            &format!("/api/recurrings/{stopped}"),
            "<recurring><next_creation_date>2028-01-15</next_creation_date></recurring>",
        )
        .await;
    assert_eq!(again.status, 200, "{}", again.body);
    set_clock(&app, "2028-02-16T00:00:00+01:00").await;
    assert_eq!(
        made(&app, stopped).await,
        ["2027-01-05", "2028-01-15", "2028-02-15"]
    );
}

#[tokio::test]
async fn bad_recurrings_are_refused_and_change_nothing() {
    let app = app_with_test_clock(|_| {}).await;
    set_clock(&app, "2027-06-15T12:00:00+02:00").await;
    let c = client(&app, "<name>A</name>").await;
    let of = |inner: &str| format!("<recurring><client_id>{c}</client_id>{inner}</recurring>");
    for (inner, problem) in [
        ("<cycle>FORTNIGHTLY</cycle>", "cycle must be one of"),
        ("<action>PRINT</action>", "action must be one of"),
        ("<hour>24</hour>", "hour must be between 0 and 23"),
        (
            "<start_date>2027-06-14</start_date>",
            "start_date 2027-06-14 is before today",
        ),
        (
            "<cycle_number>0</cycle_number>",
            "cycle_number must be at least 1",
        ),
        (
            "<start_date>2027-07-01</start_date><end_date>2027-06-30</end_date>",
            "end_date 2027-06-30 is before start_date",
        ),
        (
            "<next_creation_date>2027-01-01</next_creation_date>",
            "is in the past",
        ),
        (
            "<iterations>-1</iterations>",
            "iterations must be 0 or more",
        ),
        ("<template_id>999</template_id>", "template_id"),
    ] {
        app.post("/api/recurrings", &of(inner))
            .await
            .assert_error(400, problem);
    }
    app.post("/api/recurrings", "<recurring><name>x</name></recurring>")
        .await
        .assert_error(400, "client_id is mandatory");
    let other = app.new_account("Other").await;
    app.call_as(&other, "POST", "/api/recurrings", Some(&of("")))
        .await
        .assert_error(400, "client_id");
    let id = recurring(&app, c, "").await;
    app.post(
        "/api/recurring-email-receivers",
        &format!("<recurring-email-receiver><recurring_id>{id}</recurring_id><address>not mail</address></recurring-email-receiver>"),
    )
    .await
    .assert_error(400, "address");
    assert_eq!(
        app.call("HEAD", "/api/recurrings", None)
            .await
            .header("x-total-count"),
        Some("1")
    );
}

#[tokio::test]
async fn each_action_completes_mails_or_posts_and_a_refusal_leaves_a_draft() {
    let smtp = SmtpSink::start(free_port()).await;
    let postal = tempfile::tempdir().unwrap();
    let (url, queue) = (smtp.url(), postal.path().to_path_buf());
    let app = app_with_test_clock(move |o| {
        o.smtp = Some(url);
        o.postal = Some(queue);
    })
    .await;
    set_clock(&app, "2027-01-01T00:00:00+01:00").await;
    // The runs send in the company's name.
    assert_eq!(
        app.put(
            "/api/settings",
            "<settings><company_email>billing@example.com</company_email></settings>"
        )
        .await
        .status,
        200
    );
    let c = client(
        &app,
        "<name>A GmbH</name><email>a@example.org</email><street>Weg 1</street><zip>10115</zip><city>Berlin</city>",
    )
    .await;
    let start = "<start_date>2027-01-10</start_date><iterations>1</iterations>";
    let email = recurring(
        &app,
        c,
        &format!(
            "{start}<action>EMAIL</action><email_subject>Miete [Date.month_name]</email_subject>"
        ),
    )
    .await;
    let receiver = format!(
        "<recurring-email-receiver><recurring_id>{email}</recurring_id><type>cc</type>\
         <address>buchhaltung@example.org</address></recurring-email-receiver>"
    );
    assert_eq!(
        app.post("/api/recurring-email-receivers", &receiver)
            .await
            .status,
        201
    );
    let mail = recurring(&app, c, &format!("{start}<action>MAIL</action>")).await;
    // XRechnung for this client needs a buyer reference and a seller it lacks: refused.
    let picky = client(
        &app,
        "<name>B</name><einvoice_profile>xrechnung-cii</einvoice_profile>",
    )
    .await;
    let refused = recurring(&app, picky, &format!("{start}<action>COMPLETE</action>")).await;
    set_clock(&app, "2027-01-10T12:00:00+01:00").await;
    let messages = smtp.wait_for(1, 30).await;
    assert!(
        messages[0].contains("billing@example.com"),
        "sent in the company's name: {}",
        messages[0]
    );
    assert!(
        messages[0].contains("Subject: Miete Januar"),
        "{}",
        messages[0]
    );
    assert!(
        messages[0].contains("buchhaltung@example.org"),
        "{}",
        messages[0]
    );
    let letters = postal_letters(postal.path(), 1, 30).await;
    assert_eq!(letters.len(), 1);
    for id in [email, mail] {
        app.get(&format!("/api/recurrings/{id}"))
            .await
            .assert_fields(&[("last_error", ""), ("counter", "1")]);
    }
    let r = app.get(&format!("/api/recurrings/{refused}")).await;
    let error = r.field("last_error").unwrap();
    assert!(
        error.contains("left a draft") && error.contains("BR-"),
        "{error}"
    );
    let drafts = app.get("/api/invoices?status=DRAFT").await;
    assert_eq!(drafts.fields("recurring_id"), vec![refused.to_string()]);
    // The series goes on after a refusal.
    r.assert_fields(&[("counter", "1")]);
}
