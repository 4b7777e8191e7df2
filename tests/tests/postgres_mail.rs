//! Mail on a PostgreSQL store: whichever host takes a message or letter queues it in the
//! store's `faktura_mail` table, and any host with SMTP (or a postal queue directory)
//! delivers it, each row claimed by one host at a time.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use faktura_host::{Options, OutboxEntry};
use faktura_tests::{App, PostgresServer, SmtpSink, free_port, host_binary, run_ok};

use crate::support::{CREDIT_NOTES, INVOICES, client, complete, create_for};

/// A host on `pg` with a data directory of its own, its options adjusted by `configure`.
async fn host(pg: &PostgresServer, configure: impl FnOnce(&mut Options)) -> App {
    App::spawn_on_store(pg.url(), configure).await
}

/// A host on `pg` that sends mail through `smtp`.
async fn host_mailing_through(pg: &PostgresServer, smtp: String) -> App {
    host(pg, move |o| o.smtp = Some(smtp)).await
}

/// A completed invoice of a client, with a sender and a Bcc archive in the settings.
async fn completed_invoice(app: &App) -> u64 {
    app.put(
        "/api/settings",
        "<settings><company_name>Faktura GmbH</company_name>\
         <default_email_sender>billing@faktura.example</default_email_sender>\
         <bcc_addresses>archive@faktura.example</bcc_addresses></settings>",
    )
    .await;
    let c = client(app, "<name>Müller AG</name>").await;
    let items = "<invoice-items><invoice-item><title>Work</title><unit_price>100</unit_price>\
                 </invoice-item></invoice-items>";
    let id = create_for(app, &INVOICES, c, items).await.id();
    complete(app, &INVOICES, id).await;
    id
}

fn email_body(subject: &str) -> String {
    format!(
        "<email><recipients><to>client@example.org</to></recipients>\
         <subject>{subject}</subject></email>"
    )
}

/// Sends invoice `id` to client@example.org under `subject`, which the API must accept.
async fn email(app: &App, id: u64, subject: &str) {
    let r = app
        .post(&format!("/api/invoices/{id}/email"), &email_body(subject))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
}

/// The store's mail, oldest first, as `faktura outbox list` reads it.
async fn entries(pg: &PostgresServer) -> Vec<OutboxEntry> {
    let mut options = Options::new("unused", "unused.wasm");
    options.store = Some(pg.url());
    faktura_host::outbox_entries(&options).await.unwrap()
}

/// The store's mail once `done` holds for it (at most `secs` seconds).
async fn entries_when(
    pg: &PostgresServer,
    what: &str,
    secs: u64,
    done: impl Fn(&[OutboxEntry]) -> bool,
) -> Vec<OutboxEntry> {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let listed = entries(pg).await;
        if done(&listed) {
            return listed;
        }
        if Instant::now() > deadline {
            panic!("not {what} within {secs} s: {listed:#?}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// `faktura --store URL ARGS…` (the host binary); its standard output.
fn faktura(pg: &PostgresServer, data: &Path, args: &[&str]) -> String {
    let out = run_ok(
        std::process::Command::new(host_binary())
            .arg("--data")
            .arg(data)
            .args(["--store", &pg.url()])
            .args(args),
        faktura_tests::HOST_BINARY_HINT,
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The `Subject:` of each raw message.
fn subjects(messages: &[String]) -> Vec<String> {
    let mut subjects: Vec<String> = messages
        .iter()
        .filter_map(|m| {
            m.lines()
                .find_map(|l| l.strip_prefix("Subject: "))
                .map(|s| s.trim().to_owned())
        })
        .collect();
    subjects.sort();
    subjects
}

#[tokio::test]
async fn mail_taken_by_one_host_is_delivered_once_by_another() {
    let pg = PostgresServer::start();
    let port = free_port();
    // A has no SMTP at all; B's server is down at first.
    let a = host(&pg, |_| {}).await;
    let _b = host_mailing_through(&pg, format!("smtp://127.0.0.1:{port}")).await;
    let id = completed_invoice(&a).await;
    email(&a, id, "Rechnung").await;
    let tried = entries_when(&pg, "tried by B", 15, |e| {
        e.first().is_some_and(|m| m.state.attempts >= 1)
    })
    .await;
    assert_eq!(tried.len(), 1);
    assert_eq!(tried[0].status, "queued");
    assert!(
        tried[0].state.last_error.starts_with("will retry"),
        "{:?}",
        tried[0].state
    );
    assert!(
        !a.data.path().join("outbox").exists(),
        "nothing is queued on A's disk"
    );

    let sink = SmtpSink::start(port).await;
    let sent = entries_when(&pg, "sent", 30, |e| e[0].status == "sent").await;
    assert_eq!(sink.messages().len(), 1, "delivered exactly once");
    let m = &sink.messages()[0];
    assert!(m.contains("Subject: Rechnung"), "{m}");
    assert!(!m.contains("Bcc:"), "{m}");
    for recipient in ["client@example.org", "archive@faktura.example"] {
        assert!(
            sent[0].recipients.contains(&recipient.to_owned()),
            "{:?}",
            sent[0].recipients
        );
    }
    assert!(
        sent[0].state.last_error.starts_with("accepted: 250"),
        "{:?}",
        sent[0].state
    );
}

#[tokio::test]
async fn messages_queued_through_two_delivering_hosts_are_each_sent_once() {
    const EACH: usize = 8;
    let pg = PostgresServer::start();
    let sink = SmtpSink::start(free_port()).await;
    let a = Arc::new(host_mailing_through(&pg, sink.url()).await);
    let b = Arc::new(host_mailing_through(&pg, sink.url()).await);
    let id = completed_invoice(&a).await;
    let path = format!("/api/invoices/{id}/email");
    let (ra, rb) = tokio::join!(
        a.call_concurrently(EACH, |i| (
            "POST",
            path.clone(),
            Some(email_body(&format!("message {i:02}")))
        )),
        b.call_concurrently(EACH, |i| (
            "POST",
            path.clone(),
            Some(email_body(&format!("message {:02}", EACH + i)))
        )),
    );
    for r in ra.iter().chain(&rb) {
        assert_eq!(r.status, 200, "{}", r.body);
    }
    let listed = entries_when(&pg, "all sent", 60, |e| {
        e.len() == 2 * EACH && e.iter().all(|m| m.status == "sent")
    })
    .await;
    assert!(listed.iter().all(|m| m.state.attempts == 1), "{listed:#?}");
    let expected: Vec<String> = (0..2 * EACH).map(|i| format!("message {i:02}")).collect();
    assert_eq!(
        subjects(&sink.messages()),
        expected,
        "each once, none twice"
    );
}

#[tokio::test]
async fn refusals_on_postgres_are_retried_with_growing_delays_or_marked_failed() {
    let pg = PostgresServer::start();
    let temporary = SmtpSink::refusing(free_port(), false).await;
    let a = host_mailing_through(&pg, temporary.url()).await;
    let id = completed_invoice(&a).await;
    email(&a, id, "first").await;
    // When each of the first three attempts was seen.
    let mut seen: Vec<Instant> = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while seen.len() < 3 {
        assert!(Instant::now() < deadline, "three attempts within 20 s");
        if let Some(m) = entries(&pg).await.first() {
            while (m.state.attempts as usize) > seen.len() {
                seen.push(Instant::now());
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // After the first refusal the message waits 1 s, after the second 2 s.
    let gaps = [seen[1] - seen[0], seen[2] - seen[1]];
    assert!(gaps[0] >= Duration::from_millis(600), "{gaps:?}");
    assert!(gaps[1] >= Duration::from_millis(1400), "{gaps:?}");
    let queued = &entries(&pg).await[0];
    assert_eq!(queued.status, "queued");
    assert!(
        queued.state.last_error.contains("451"),
        "{:?}",
        queued.state
    );
    a.stop().await;

    let permanent = SmtpSink::refusing(free_port(), true).await;
    let b = host_mailing_through(&pg, permanent.url()).await;
    email(&b, id, "second").await;
    let listed = entries_when(&pg, "refused for good", 15, |e| {
        e.get(1).is_some_and(|m| m.status == "failed")
    })
    .await;
    assert!(
        listed[1].state.last_error.contains("550"),
        "{:?}",
        listed[1].state
    );
    assert_eq!(listed[1].state.attempts, 1);
}

#[tokio::test]
async fn a_host_stopped_while_sending_leaves_the_message_to_another() {
    let pg = PostgresServer::start();
    let stalling = SmtpSink::stalling_first(free_port()).await;
    let a = host_mailing_through(&pg, stalling.url()).await;
    let id = completed_invoice(&a).await;
    email(&a, id, "stalled").await;
    // The server has the message; A waits for its answer, holding the claim.
    stalling.wait_for(1, 15).await;
    a.stop().await;

    let sink = SmtpSink::start(free_port()).await;
    let _b = host_mailing_through(&pg, sink.url()).await;
    let sent = entries_when(&pg, "sent by B", 15, |e| e[0].status == "sent").await;
    assert_eq!(subjects(&sink.messages()), ["stalled"]);
    assert_eq!(sent[0].state.attempts, 1, "A's attempt left nothing behind");
}

#[tokio::test]
async fn outbox_list_and_deliver_read_the_postgres_store() {
    let pg = PostgresServer::start();
    let cli_data = tempfile::tempdir().unwrap();
    // No host delivers: the message waits in the table.
    let a = host(&pg, |_| {}).await;
    let id = completed_invoice(&a).await;
    email(&a, id, "by hand").await;
    let listed = faktura(&pg, cli_data.path(), &["outbox", "list"]);
    let line = listed
        .lines()
        .find(|l| l.contains("\"by hand\""))
        .unwrap_or_else(|| panic!("{listed}"));
    assert!(line.starts_with("queued"), "{line}");
    assert!(line.contains("client@example.org"), "{line}");

    let sink = SmtpSink::start(free_port()).await;
    let delivered = faktura(
        &pg,
        cli_data.path(),
        &["outbox", "deliver", "--smtp", &sink.url()],
    );
    assert!(
        delivered.lines().any(|l| l.starts_with("sent")
            && l.contains("\"by hand\"")
            && l.contains("accepted: 250")),
        "{delivered}"
    );
    assert_eq!(subjects(&sink.messages()), ["by hand"]);
}

#[tokio::test]
async fn letters_wait_in_postgres_for_a_host_with_a_postal_queue() {
    let pg = PostgresServer::start();
    let a = host(&pg, |_| {}).await;
    let c = client(&a, "<name>Müller AG</name><city>Berlin</city>").await;
    let note = create_for(&a, &CREDIT_NOTES, c, "").await.id();
    complete(&a, &CREDIT_NOTES, note).await;
    let r = a.post(&format!("/api/credit-notes/{note}/mail"), "").await;
    assert_eq!(r.status, 200, "{}", r.body);
    let queued = entries(&pg).await;
    assert_eq!(queued.len(), 1);
    assert_eq!(queued[0].status, "queued");
    assert!(
        queued[0].recipients.iter().any(|l| l == "Müller AG"),
        "{:?}",
        queued[0]
    );

    let postal = tempfile::tempdir().unwrap();
    let queue = postal.path().to_path_buf();
    let _b = host(&pg, move |o| o.postal = Some(queue)).await;
    let moved = entries_when(&pg, "moved", 15, |e| e[0].status == "sent").await;
    assert!(
        moved[0]
            .state
            .last_error
            .starts_with("in the postal queue as"),
        "{:?}",
        moved[0].state
    );
    let jobs: Vec<String> = std::fs::read_dir(postal.path())
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path().join("job.txt")).unwrap())
        .collect();
    assert_eq!(jobs.len(), 1, "{jobs:?}");
    assert!(
        jobs[0].contains("address=Müller AG") && jobs[0].contains("document=01.pdf"),
        "{}",
        jobs[0]
    );
}
