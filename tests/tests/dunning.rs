//! Dunning through the real host, driven by the test clock: reminders of an invoice level
//! by level with their fees, interest, PDFs, e-mail, cancel and uncancel and the invoice's
//! payment; statutory interest across a base-rate change for a business and a consumer,
//! checked against a computation written here, and the flat charge once; the automatic
//! runs over 50 invoices day by day for three months, then a jump of three months. Hosts
//! on PostgreSQL making the runs at once are in `postgres_dunning.rs`.

use std::collections::BTreeMap;

use faktura_tests::{App, Reply, SmtpSink, check_pdf, free_port};
use rust_decimal::Decimal;

use crate::recurring::{app_with_test_clock, set_clock};
use crate::support::client;

/// A completed invoice of `client` over `net` at 19 % (its gross is `net` × 1.19), dated
/// today with `due_days`.
pub(crate) async fn invoice(app: &App, client: u64, net: &str, due_days: u32) -> u64 {
    let r = app
        .post(
            "/api/invoices",
            &format!(
                "<invoice><client_id>{client}</client_id><invoice-items><invoice-item>\
                 <title>Work</title><unit_price>{net}</unit_price><tax_rate>19</tax_rate>\
                 </invoice-item></invoice-items></invoice>"
            ),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let id = r.id();
    let due = app
        .get(&format!("/api/invoices/{id}"))
        .await
        .field("date")
        .unwrap();
    let due = add_days(&due, due_days as i64);
    let put = app
        .put(
            &format!("/api/invoices/{id}"),
            &format!("<invoice><due_date>{due}</due_date></invoice>"),
        )
        .await;
    assert_eq!(put.status, 200, "{}", put.body);
    let done = app.put(&format!("/api/invoices/{id}/complete"), "").await;
    assert_eq!(done.status, 200, "{}", done.body);
    id
}

/// A day as ISO 8601 plus `days`.
pub(crate) fn add_days(day: &str, days: i64) -> String {
    let d: jiff::civil::Date = day.parse().unwrap();
    d.checked_add(jiff::Span::new().days(days))
        .unwrap()
        .to_string()
}

/// Days from `a` to `b`.
fn days_between(a: &str, b: &str) -> i64 {
    let a: jiff::civil::Date = a.parse().unwrap();
    let b: jiff::civil::Date = b.parse().unwrap();
    (b - a).get_days() as i64
}

fn dec(s: &str) -> Decimal {
    s.parse().unwrap()
}

async fn remind(app: &App, invoice: u64, inner: &str) -> Reply {
    app.post(
        "/api/reminders",
        &format!("<reminder><invoice_id>{invoice}</invoice_id>{inner}</reminder>"),
    )
    .await
}

async fn reminder_items(app: &App, reminder: u64) -> Reply {
    let r = app
        .get(&format!("/api/reminder-items?reminder_id={reminder}"))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    r
}

async fn pdf_text(app: &App, reminder: u64) -> String {
    let pdf = app
        .get(&format!("/api/reminders/{reminder}/pdf?format=pdf"))
        .await;
    assert_eq!(pdf.status, 200, "{}", pdf.body);
    check_pdf(&pdf.bytes)
}

fn field_of(r: &Reply, name: &str) -> String {
    r.field(name)
        .unwrap_or_else(|| panic!("no {name} in {}", r.body))
}

#[tokio::test]
async fn reminders_go_level_by_level_with_fees_interest_pdfs_mail_and_the_invoices_payment() {
    let smtp = SmtpSink::start(free_port()).await;
    let url = smtp.url();
    let app = app_with_test_clock(|o| o.smtp = Some(url)).await;
    set_clock(&app, "2027-01-04T09:00:00+01:00").await;
    let c = client(
        &app,
        "<name>Kunde GmbH</name><email>ap@kunde.example</email>",
    )
    .await;
    let inv = invoice(&app, c, "1000", 10).await;
    let number = app
        .get(&format!("/api/invoices/{inv}"))
        .await
        .field("invoice_number")
        .unwrap();
    // Level 1 on 2027-01-20: no fee, no interest; the claim is the invoice's open amount.
    set_clock(&app, "2027-01-20T09:00:00+01:00").await;
    let first = remind(&app, inv, "").await;
    assert_eq!(first.status, 201, "{}", first.body);
    first.assert_fields(&[
        ("status", "DRAFT"),
        ("invoice_id", &inv.to_string()),
        ("client_id", &c.to_string()),
        ("reminder_level", "1"),
        ("reminder_level_name", "Payment reminder"),
        ("date", "2027-01-20"),
        ("due_days", "10"),
        ("due_date", "2027-01-30"),
        ("total_gross", "1190"),
        ("currency_code", "EUR"),
        ("is_old", "0"),
    ]);
    let first = first.id();
    assert!(reminder_items(&app, first).await.fields("id").is_empty());
    assert_eq!(
        app.put(&format!("/api/reminders/{first}/complete"), "")
            .await
            .status,
        200
    );
    let text = pdf_text(&app, first).await;
    for expected in [
        number.as_str(),
        "1.190,00 EUR",
        "30.01.2027",
        "Payment reminder",
    ] {
        assert!(text.contains(expected), "{expected} not in {text}");
    }
    // A completed reminder is neither changed nor deleted.
    app.put(
        &format!("/api/reminders/{first}"),
        "<reminder><note>x</note></reminder>",
    )
    .await
    .assert_error(400, "only a DRAFT reminder can be changed");
    app.delete(&format!("/api/reminders/{first}"))
        .await
        .assert_error(400, "only a DRAFT reminder can be deleted");
    // The e-mail goes to the client, with the PDF named reminder_{id}.
    let sent = app
        .post(
            &format!("/api/reminders/{first}/email"),
            "<email><recipients><to>ap@kunde.example</to></recipients></email>",
        )
        .await;
    assert_eq!(sent.status, 200, "{}", sent.body);
    let mail = smtp.wait_for(1, 30).await;
    assert!(mail[0].contains("ap@kunde.example"), "{}", mail[0]);
    assert!(
        mail[0].contains(&format!("reminder_{first}.pdf")),
        "{}",
        mail[0]
    );
    assert!(
        mail[0].contains(&format!("Payment reminder: invoice {number}")),
        "the subject's placeholders are resolved: {}",
        mail[0]
    );
    let notes = app
        .get(&format!("/api/invoice-comments?invoice_id={inv}"))
        .await
        .fields("actionkey");
    assert_eq!(
        notes.iter().filter(|k| *k == "REMINDER").count(),
        2,
        "completed and sent: {notes:?}"
    );
    // Level 2 after the first reminder's due date: the fee and the default interest from
    // the day after the invoice's due date (2027-01-14) to the reminder's date.
    set_clock(&app, "2027-02-10T09:00:00+01:00").await;
    let second = remind(&app, inv, "").await;
    assert_eq!(second.status, 201, "{}", second.body);
    second.assert_fields(&[
        ("reminder_level", "2"),
        ("reminder_level_name", "First dunning letter"),
    ]);
    let second = second.id();
    let items = reminder_items(&app, second).await;
    assert_eq!(
        items.fields("title"),
        ["Dunning fee", "Default interest"],
        "{}",
        items.body
    );
    assert_eq!(items.fields("is_charge"), ["1", "0"]);
    // 1190 × (1.27 + 9) % × 27 days / 365, rounded half up once.
    let days = days_between("2027-01-14", "2027-02-10");
    assert_eq!(days, 27);
    let interest = (dec("1190") * dec("10.27") * Decimal::from(days) / dec("36500"))
        .round_dp_with_strategy(2, rust_decimal::RoundingStrategy::MidpointAwayFromZero);
    assert_eq!(dec(&items.fields("total")[1]), interest);
    let shown = app.get(&format!("/api/reminders/{second}")).await;
    assert_eq!(
        dec(&field_of(&shown, "total_gross")),
        dec("1190") + dec("5") + interest
    );
    assert_eq!(
        app.put(&format!("/api/reminders/{second}/complete"), "")
            .await
            .status,
        200
    );
    app.get(&format!("/api/reminders/{first}"))
        .await
        .assert_fields(&[("is_old", "1")]);
    let text = pdf_text(&app, second).await;
    let interest_text = format!("{interest}").replace('.', ",");
    for expected in [
        number.as_str(),
        "5,00 EUR",
        interest_text.as_str(),
        "20.02.2027",
        "no VAT",
    ] {
        assert!(text.contains(expected), "{expected} not in {text}");
    }
    // Level 3, then the last level repeats when made by hand.
    set_clock(&app, "2027-03-01T09:00:00+01:00").await;
    let third = remind(&app, inv, "").await;
    third.assert_fields(&[
        ("reminder_level", "3"),
        ("reminder_level_name", "Second dunning letter"),
    ]);
    let third = third.id();
    assert_eq!(reminder_items(&app, third).await.fields("total")[0], "10");
    assert_eq!(
        app.put(&format!("/api/reminders/{third}/complete"), "")
            .await
            .status,
        200
    );
    app.get(&format!("/api/reminders/{second}"))
        .await
        .assert_fields(&[("is_old", "1")]);
    let fourth = remind(&app, inv, "").await;
    fourth.assert_fields(&[
        ("reminder_level", "4"),
        ("reminder_level_name", "Second dunning letter"),
    ]);
    assert_eq!(
        app.delete(&format!("/api/reminders/{}", fourth.id()))
            .await
            .status,
        200,
        "a draft is deleted"
    );
    // Lists by invoice and status.
    let open = app
        .get(&format!(
            "/api/reminders?invoice_id={inv}&status=OPEN,OVERDUE"
        ))
        .await;
    assert_eq!(open.fields("id").len(), 3, "{}", open.body);
    // The invoice paid: its reminders are PAID; cancel and uncancel keep them so.
    let pay = app
        .post(
            "/api/invoice-payments",
            &format!(
                "<invoice-payment><invoice_id>{inv}</invoice_id><amount>1190</amount>\
                 <type>BANK_TRANSFER</type></invoice-payment>"
            ),
        )
        .await;
    assert_eq!(pay.status, 201, "{}", pay.body);
    for r in [first, second, third] {
        app.get(&format!("/api/reminders/{r}"))
            .await
            .assert_fields(&[("status", "PAID"), ("open_amount", "0")]);
    }
    assert_eq!(
        app.put(&format!("/api/reminders/{third}/cancel"), "")
            .await
            .status,
        200
    );
    app.get(&format!("/api/reminders/{third}"))
        .await
        .assert_fields(&[("status", "CANCELED")]);
    assert_eq!(
        app.put(&format!("/api/reminders/{third}/uncancel"), "")
            .await
            .status,
        200
    );
    app.get(&format!("/api/reminders/{third}"))
        .await
        .assert_fields(&[("status", "PAID")]);
    // The payment taken back: OPEN or OVERDUE again by their own due dates.
    let payment = pay.id();
    assert_eq!(
        app.delete(&format!("/api/invoice-payments/{payment}"))
            .await
            .status,
        200
    );
    app.get(&format!("/api/reminders/{first}"))
        .await
        .assert_fields(&[("status", "OVERDUE")]);
    app.get(&format!("/api/reminders/{third}"))
        .await
        .assert_fields(&[("status", "OPEN")]);
    // A reminder for a paid invoice is refused, and nothing is made.
    let pay = app
        .post(
            "/api/invoice-payments",
            &format!(
                "<invoice-payment><invoice_id>{inv}</invoice_id><amount>1190</amount>\
                 </invoice-payment>"
            ),
        )
        .await;
    assert_eq!(pay.status, 201, "{}", pay.body);
    remind(&app, inv, "")
        .await
        .assert_error(400, "only an OPEN or OVERDUE invoice");
    assert_eq!(
        app.get(&format!("/api/reminders?invoice_id={inv}"))
            .await
            .fields("id")
            .len(),
        3
    );
}

/// Default interest as § 288 BGB has it, computed here day by day: each day at the base
/// rate valid on it plus the points, summed exactly, rounded half up once.
fn statutory_interest(
    open: Decimal,
    points: Decimal,
    due: &str,
    until: &str,
    rates: &[(&str, &str)],
) -> Decimal {
    let mut sum = Decimal::ZERO;
    let mut day = add_days(due, 1);
    while days_between(&day, until) >= 0 {
        let base = rates
            .iter()
            .filter(|(from, _)| days_between(from, &day) >= 0)
            .map(|(_, r)| dec(r))
            .next_back()
            .unwrap();
        sum += open * (base + points) / dec("36500");
        day = add_days(&day, 1);
    }
    sum.round_dp_with_strategy(2, rust_decimal::RoundingStrategy::MidpointAwayFromZero)
}

#[tokio::test]
async fn interest_runs_across_a_base_rate_change_and_the_flat_charge_is_taken_once() {
    let app = app_with_test_clock(|_| {}).await;
    set_clock(&app, "2027-06-01T09:00:00+02:00").await;
    assert_eq!(
        app.put(
            "/api/settings",
            "<settings><dunning_flat_charge>1</dunning_flat_charge></settings>"
        )
        .await
        .status,
        200
    );
    let rate = app
        .post(
            "/api/base-rates",
            "<base-rate><valid_from>2027-07-01</valid_from><rate>2.5</rate></base-rate>",
        )
        .await;
    assert_eq!(rate.status, 201, "{}", rate.body);
    let business = client(&app, "<name>Firma AG</name>").await;
    let consumer = client(&app, "<name>Eva Muster</name><consumer>1</consumer>").await;
    app.get(&format!("/api/clients/{business}"))
        .await
        .assert_fields(&[("consumer", "0"), ("dunning_run", "1")]);
    let levels = app.get("/api/reminder-texts?order_by=sorting").await;
    assert_eq!(
        levels.fields("name"),
        [
            "Payment reminder",
            "First dunning letter",
            "Second dunning letter"
        ],
        "{}",
        levels.body
    );
    let second_level = levels.fields("id")[1].clone();
    let b = invoice(&app, business, "2000", 14).await; // due 2027-06-15
    let k = invoice(&app, consumer, "2000", 14).await;
    set_clock(&app, "2027-07-20T09:00:00+02:00").await;
    let rates = [("2026-01-01", "1.27"), ("2027-07-01", "2.5")];
    for (invoice, points, flat) in [(b, "9", true), (k, "5", false)] {
        // A level without a fee takes no flat charge: it waits for the first fee.
        let first = remind(&app, invoice, "").await;
        assert_eq!(first.status, 201, "{}", first.body);
        assert!(
            reminder_items(&app, first.id())
                .await
                .fields("id")
                .is_empty()
        );
        assert_eq!(
            app.put(&format!("/api/reminders/{}/complete", first.id()), "")
                .await
                .status,
            200
        );
        let second = remind(&app, invoice, "").await;
        assert_eq!(second.status, 201, "{}", second.body);
        let items = reminder_items(&app, second.id()).await;
        let expected_titles: Vec<&str> = if flat {
            vec![
                "Dunning fee",
                "Flat charge for late payment",
                "Default interest",
            ]
        } else {
            vec!["Dunning fee", "Default interest"]
        };
        assert_eq!(items.fields("title"), expected_titles, "{}", items.body);
        let interest =
            statutory_interest(dec("2380"), dec(points), "2027-06-15", "2027-07-20", &rates);
        assert_eq!(
            dec(items.fields("total").last().unwrap()),
            interest,
            "{}",
            items.body
        );
        if flat {
            assert_eq!(items.fields("total")[1], "40");
        }
        assert_eq!(
            app.put(&format!("/api/reminders/{}/complete", second.id()), "")
                .await
                .status,
            200
        );
        // The next reminder with a fee takes no second flat charge.
        let third = remind(
            &app,
            invoice,
            &format!("<reminder_text_id>{second_level}</reminder_text_id>"),
        )
        .await;
        assert_eq!(third.status, 201, "{}", third.body);
        third.assert_fields(&[
            ("reminder_level", "3"),
            ("reminder_level_name", "First dunning letter"),
        ]);
        assert_eq!(
            reminder_items(&app, third.id()).await.fields("title"),
            ["Dunning fee", "Default interest"]
        );
        // The draft's interest follows its date.
        let later = app
            .put(
                &format!("/api/reminders/{}", third.id()),
                "<reminder><date>2027-07-25</date></reminder>",
            )
            .await;
        assert_eq!(later.status, 200, "{}", later.body);
        let moved =
            statutory_interest(dec("2380"), dec(points), "2027-06-15", "2027-07-25", &rates);
        assert_eq!(
            dec(reminder_items(&app, third.id())
                .await
                .fields("total")
                .last()
                .unwrap()),
            moved
        );
    }
}

#[tokio::test]
async fn bad_dunning_input_is_refused_and_changes_nothing() {
    let app = app_with_test_clock(|_| {}).await;
    set_clock(&app, "2027-03-01T09:00:00+01:00").await;
    let c = client(&app, "<name>A</name>").await;
    let open = invoice(&app, c, "100", 0).await;
    let draft = app
        .post(
            "/api/invoices",
            &format!("<invoice><client_id>{c}</client_id></invoice>"),
        )
        .await
        .id();
    let other = app.new_account("Other").await;
    let theirs_client = app
        .call_as(
            &other,
            "POST",
            "/api/clients",
            Some("<client><name>B</name></client>"),
        )
        .await
        .id();
    let theirs = app
        .call_as(
            &other,
            "POST",
            "/api/invoices",
            Some(&format!(
                "<invoice><client_id>{theirs_client}</client_id><invoice-items><invoice-item>\
                 <unit_price>5</unit_price></invoice-item></invoice-items></invoice>"
            )),
        )
        .await
        .id();
    assert_eq!(
        app.call_as(
            &other,
            "PUT",
            &format!("/api/invoices/{theirs}/complete"),
            None
        )
        .await
        .status,
        200
    );
    remind(&app, draft, "")
        .await
        .assert_error(400, "is DRAFT: only an OPEN or OVERDUE invoice");
    remind(&app, theirs, "")
        .await
        .assert_error(400, &format!("invoice_id {theirs} does not exist"));
    remind(&app, open, "<reminder_text_id>999999</reminder_text_id>")
        .await
        .assert_error(400, "reminder_text_id 999999 does not exist");
    app.post("/api/reminders", "<reminder><note>x</note></reminder>")
        .await
        .assert_error(400, "invoice_id is mandatory");
    assert!(app.get("/api/reminders").await.fields("id").is_empty());
    let levels_before = app.get("/api/reminder-texts").await.fields("id").len();
    for (body, message) in [
        (
            "<reminder-text><name>X</name><charge_amount>-1</charge_amount></reminder-text>",
            "charge_amount must be between 0",
        ),
        (
            "<reminder-text><name>X</name><days_overdue>-1</days_overdue></reminder-text>",
            "days_overdue must be between 0",
        ),
        (
            "<reminder-text><name>X</name><interest>2</interest></reminder-text>",
            "interest must be 1 or 0",
        ),
    ] {
        app.post("/api/reminder-texts", body)
            .await
            .assert_error(400, message);
    }
    assert_eq!(
        app.get("/api/reminder-texts").await.fields("id").len(),
        levels_before
    );
    let rates_before = app
        .get("/api/base-rates?per_page=100")
        .await
        .fields("id")
        .len();
    for (body, message) in [
        (
            "<base-rate><valid_from>2030-01-01</valid_from><rate>20.01</rate></base-rate>",
            "rate must be between -10 and 20",
        ),
        (
            "<base-rate><valid_from>2030-01-01</valid_from><rate>-10.5</rate></base-rate>",
            "rate must be between -10 and 20",
        ),
        (
            "<base-rate><valid_from>2025-07-01</valid_from><rate>1</rate></base-rate>",
            "valid_from 2025-07-01 already has base rate",
        ),
    ] {
        app.post("/api/base-rates", body)
            .await
            .assert_error(400, message);
    }
    assert_eq!(
        app.get("/api/base-rates?per_page=100")
            .await
            .fields("id")
            .len(),
        rates_before
    );
    app.post(
        "/api/clients",
        "<client><name>C</name><consumer>2</consumer></client>",
    )
    .await
    .assert_error(400, "consumer must be 1 or 0");
    // A reminder's level is fixed once it is made.
    let r = remind(&app, open, "").await;
    assert_eq!(r.status, 201, "{}", r.body);
    let second_level = app
        .get("/api/reminder-texts?order_by=sorting")
        .await
        .fields("id")[1]
        .clone();
    app.put(
        &format!("/api/reminders/{}", r.id()),
        &format!("<reminder><reminder_text_id>{second_level}</reminder_text_id></reminder>"),
    )
    .await
    .assert_error(400, "reminder_text_id is fixed");
}

/// What the automatic runs should have made, computed day by day here: for each invoice
/// the reminders (level, due date) by the rule of the settings and levels.
struct Model {
    /// Per invoice: its due date, whether its client takes part, the day it was paid.
    invoices: BTreeMap<u64, (String, bool, Option<String>)>,
    made: BTreeMap<u64, Vec<(u32, String)>>,
}

impl Model {
    /// A run on `today`: the next level of every overdue, unpaid invoice of a taking part
    /// client whose wait (7 days after the previous due date, at least 1) has passed; no
    /// level past the third without repeats (`repeat` days, else none).
    fn run(&mut self, today: &str, repeat: i64) {
        for (id, (due, takes_part, paid)) in &self.invoices {
            if !takes_part || paid.as_deref().is_some_and(|p| days_between(p, today) > 0) {
                continue;
            }
            if days_between(due, today) < 1 {
                continue;
            }
            let (level, since) = match self.made.get(id).and_then(|m| m.last()) {
                Some((l, d)) => (l + 1, d.clone()),
                None => (1, due.clone()),
            };
            let wait = if level > 3 {
                if repeat == 0 {
                    continue;
                }
                repeat
            } else {
                7
            };
            if days_between(&since, today) >= wait.max(1) {
                self.made
                    .entry(*id)
                    .or_default()
                    .push((level, add_days(today, 10)));
            }
        }
    }
}

/// The reminders the service made: per invoice, (level, due date) in the order made.
async fn made_by_service(app: &App) -> BTreeMap<u64, Vec<(u32, String)>> {
    let list = app.get("/api/reminders?per_page=1000&order_by=id").await;
    let mut out: BTreeMap<u64, Vec<(u32, String)>> = BTreeMap::new();
    for ((invoice, level), due) in list
        .fields("invoice_id")
        .into_iter()
        .zip(list.fields("reminder_level"))
        .zip(list.fields("due_date"))
    {
        out.entry(invoice.parse().unwrap())
            .or_default()
            .push((level.parse().unwrap(), due));
    }
    out
}

#[tokio::test]
async fn automatic_runs_remind_exactly_the_due_invoices_day_by_day_and_one_level_after_a_jump() {
    let app = app_with_test_clock(|_| {}).await;
    set_clock(&app, "2027-01-01T08:00:00+01:00").await;
    assert_eq!(
        app.put(
            "/api/settings",
            "<settings><dunning_run>1</dunning_run><dunning_action>COMPLETE</dunning_action></settings>"
        )
        .await
        .status,
        200
    );
    let taking_part = client(&app, "<name>A</name>").await;
    let left_out = client(&app, "<name>B</name><dunning_run>0</dunning_run>").await;
    let mut model = Model {
        invoices: BTreeMap::new(),
        made: BTreeMap::new(),
    };
    // 50 invoices dated 2027-01-01, due after 0 to 48 days; every fifth of the second
    // client; every seventh paid 30 days after it fell due.
    let mut to_pay = BTreeMap::new();
    for i in 0..50u32 {
        let c = if i % 5 == 4 { left_out } else { taking_part };
        let due_days = i % 49;
        let id = invoice(&app, c, "100", due_days).await;
        let due = add_days("2027-01-01", due_days as i64);
        let paid = (i % 7 == 3).then(|| add_days(&due, 30));
        if let Some(day) = &paid {
            to_pay.entry(day.clone()).or_insert_with(Vec::new).push(id);
        }
        model.invoices.insert(id, (due, c == taking_part, paid));
    }
    let mut day = "2027-01-01".to_owned();
    for _ in 0..92 {
        day = add_days(&day, 1);
        // The day's run, then the day's payments: they count from the next run on.
        set_clock(&app, &format!("{day}T08:00:00+01:00")).await;
        model.run(&day, 0);
        for id in to_pay.get(&day).cloned().unwrap_or_default() {
            let r = app
                .post(
                    "/api/invoice-payments",
                    &format!(
                        "<invoice-payment><invoice_id>{id}</invoice_id><amount>119</amount>\
                         </invoice-payment>"
                    ),
                )
                .await;
            assert_eq!(r.status, 201, "{}", r.body);
        }
        if day.ends_with("-01") || day.ends_with("-15") {
            assert_eq!(made_by_service(&app).await, model.made, "on {day}");
        }
    }
    let made = made_by_service(&app).await;
    assert_eq!(made, model.made, "after three months day by day");
    assert!(
        made.values().flatten().any(|(l, _)| *l == 3),
        "some invoices reached the last level"
    );
    for (id, (_, takes_part, _)) in &model.invoices {
        if !takes_part {
            assert!(
                !made.contains_key(id),
                "invoice {id}'s client takes no part"
            );
        }
    }
    // A PAID invoice's reminders are PAID, and it got none after it was paid.
    let paid = app.get("/api/reminders?status=PAID&per_page=1000").await;
    assert!(!paid.fields("id").is_empty());
    // New invoices, then three months at once: one level each, not a backlog; with
    // repeats on, one repeat of the last level for those at it.
    assert_eq!(
        app.put(
            "/api/settings",
            "<settings><dunning_repeat_days>14</dunning_repeat_days></settings>"
        )
        .await
        .status,
        200
    );
    let mut fresh = Vec::new();
    for _ in 0..3 {
        let id = invoice(&app, taking_part, "50", 1).await;
        let due = add_days(&day, 1);
        model.invoices.insert(id, (due, true, None));
        fresh.push(id);
    }
    let jump = add_days(&day, 92);
    set_clock(&app, &format!("{jump}T08:00:00+02:00")).await;
    model.run(&jump, 14);
    let after = made_by_service(&app).await;
    assert_eq!(after, model.made, "after the jump");
    for id in fresh {
        assert_eq!(
            after[&id].len(),
            1,
            "invoice {id}: one level after the jump"
        );
    }
    // The day's run is made once: another pass on the same day makes nothing.
    set_clock(&app, &format!("{jump}T20:00:00+02:00")).await;
    assert_eq!(made_by_service(&app).await, after);
}

const KEY: &str = "dunning-hosts-key-0123456789";

/// A host process on `url`'s store with test clocks and an upkeep every 0.2 s.
fn dunning_host(data: &std::path::Path, port: u16, url: &str) -> faktura_tests::HostProcess {
    faktura_tests::start_host(
        data,
        port,
        KEY,
        &["--store", url, "--test-clock", "--upkeep-every", "0.2"],
    )
}

async fn call(base: &str, method: &str, path: &str, body: Option<&str>) -> Reply {
    for _ in 0..100 {
        if let Some(r) = faktura_tests::try_send(base, method, path, body, KEY).await {
            return r;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("{base} did not answer {method} {path}");
}

/// Three hosts on one PostgreSQL store make the automatic runs at once, each with its
/// upkeep every 0.2 s while the test clock moves day by day on one of them, and one host
/// is killed with SIGKILL while runs go on and started again: every invoice gets each
/// level once, exactly those the rule makes due.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_hosts_on_postgres_make_each_level_and_each_recurring_run_once_across_a_sigkill() {
    let pg = faktura_tests::PostgresServer::start();
    let url = pg.url();
    let dirs: Vec<tempfile::TempDir> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
    let ports: Vec<u16> = (0..3).map(|_| free_port()).collect();
    let bases: Vec<String> = ports
        .iter()
        .map(|p| format!("http://127.0.0.1:{p}"))
        .collect();
    let mut hosts = Vec::new();
    for i in 0..3 {
        let mut host = dunning_host(dirs[i].path(), ports[i], &url);
        host.wait_ready(&bases[i], KEY).await;
        hosts.push(host);
    }
    let a = bases[0].as_str();
    let clock = |day: &str| format!("<test-clock><now>{day}T08:00:00+01:00</now></test-clock>");
    let r = call(a, "PUT", "/api/test-clock", Some(&clock("2027-01-01"))).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let r = call(
        a,
        "PUT",
        "/api/settings",
        Some(
            "<settings><dunning_run>1</dunning_run><dunning_action>COMPLETE</dunning_action>\
             </settings>",
        ),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let c = call(
        a,
        "POST",
        "/api/clients",
        Some("<client><name>A</name></client>"),
    )
    .await
    .id();
    let mut model = Model {
        invoices: BTreeMap::new(),
        made: BTreeMap::new(),
    };
    for i in 0..200u32 {
        let due = add_days("2027-01-01", (i % 20) as i64);
        let r = call(
            a,
            "POST",
            "/api/invoices",
            Some(&format!(
                "<invoice><client_id>{c}</client_id><due_date>{due}</due_date><invoice-items>\
                 <invoice-item><unit_price>10</unit_price></invoice-item></invoice-items>\
                 </invoice>"
            )),
        )
        .await;
        assert_eq!(r.status, 201, "{}", r.body);
        let id = r.id();
        assert_eq!(
            call(a, "PUT", &format!("/api/invoices/{id}/complete"), None)
                .await
                .status,
            200
        );
        model.invoices.insert(id, (due, true, None));
    }
    // Recurring invoices of a client left out of dunning run on the same upkeep: each
    // makes its two monthly invoices once, across the same kill.
    let renter = call(
        a,
        "POST",
        "/api/clients",
        Some("<client><name>R</name><dunning_run>0</dunning_run></client>"),
    )
    .await
    .id();
    let mut recurrings = Vec::new();
    for i in 0..10u32 {
        let r = call(
            a,
            "POST",
            "/api/recurrings",
            Some(&format!(
                "<recurring><client_id>{renter}</client_id><cycle>MONTHLY</cycle>\
                 <action>COMPLETE</action><next_creation_date>2027-01-{:02}</next_creation_date>\
                 <recurring-items><recurring-item><unit_price>100</unit_price></recurring-item>\
                 </recurring-items></recurring>",
                10 + i
            )),
        )
        .await;
        assert_eq!(r.status, 201, "{}", r.body);
        recurrings.push((r.id(), 10 + i));
    }
    let mut day = "2027-01-01".to_owned();
    for step in 0..60usize {
        day = add_days(&day, 1);
        // The clock moves on host A or C; B runs its upkeep beside them, and on day 20
        // it is killed a moment after the day's runs began, then started again.
        let on = if step % 2 == 0 { 0 } else { 2 };
        let body = clock(&day);
        let put = call(&bases[on], "PUT", "/api/test-clock", Some(&body));
        if step == 19 {
            let (r, ()) = tokio::join!(put, async {
                tokio::time::sleep(std::time::Duration::from_millis(150)).await;
                hosts[1].kill();
            });
            assert_eq!(r.status, 200, "{}", r.body);
            hosts[1] = dunning_host(dirs[1].path(), ports[1], &url);
            hosts[1].wait_ready(&bases[1], KEY).await;
        } else {
            let r = put.await;
            assert_eq!(r.status, 200, "{}", r.body);
        }
        model.run(&day, 0);
    }
    // Runs a host began before the last step have ended.
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    let list = call(a, "GET", "/api/reminders?per_page=1000&order_by=id", None).await;
    let mut made: BTreeMap<u64, Vec<(u32, String)>> = BTreeMap::new();
    for ((invoice, level), due) in list
        .fields("invoice_id")
        .into_iter()
        .zip(list.fields("reminder_level"))
        .zip(list.fields("due_date"))
    {
        made.entry(invoice.parse().unwrap())
            .or_default()
            .push((level.parse().unwrap(), due));
    }
    for (invoice, levels) in &made {
        let numbers: Vec<u32> = levels.iter().map(|(l, _)| *l).collect();
        let expected: Vec<u32> = (1..=numbers.len() as u32).collect();
        assert_eq!(numbers, expected, "invoice {invoice}: each level once");
    }
    assert_eq!(made, model.made);
    let total: usize = made.values().map(Vec::len).sum();
    assert!(total >= 500, "{total} reminders");
    let invoices = call(
        a,
        "GET",
        &format!("/api/invoices?client_id={renter}&per_page=1000&order_by=id"),
        None,
    )
    .await;
    let mut by_recurring: BTreeMap<u64, Vec<String>> = BTreeMap::new();
    for (recurring, date) in invoices
        .fields("recurring_id")
        .into_iter()
        .zip(invoices.fields("date"))
    {
        by_recurring
            .entry(recurring.parse().unwrap())
            .or_default()
            .push(date);
    }
    for (recurring, day) in &recurrings {
        assert_eq!(
            by_recurring.get(recurring).cloned().unwrap_or_default(),
            vec![format!("2027-01-{day:02}"), format!("2027-02-{day:02}")],
            "recurring {recurring}: each run once"
        );
    }
    eprintln!(
        "dunning on three hosts: {total} reminders of 200 invoices, each level once, one SIGKILL"
    );
}
