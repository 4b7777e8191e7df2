//! Crash safety: the host binary is killed with SIGKILL at random moments while clients
//! create, complete and pay invoices; after every restart each acknowledged write is there,
//! no document is half-written, and numbers stay unique and without gaps.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use faktura_tests::{HostProcess, Reply, SmtpSink, free_port, start_host, try_send};

pub(crate) const KEY: &str = "crash-test-key-0123456789";
const ROUNDS: usize = 20;
const WORKERS: usize = 6;

fn start(data: &std::path::Path, port: u16) -> HostProcess {
    start_host(data, port, KEY, &[])
}

fn start_with(data: &std::path::Path, port: u16, extra: &[&str]) -> HostProcess {
    start_host(data, port, KEY, extra)
}

async fn wait_ready(base: &str) {
    faktura_tests::wait_ready(base, KEY).await;
}

/// What the clients were told: invoice id → (number, completed, paid). The standalone
/// component's crash test (`standalone.rs`) drives and checks it the same way.
pub(crate) type Acknowledged = Arc<Mutex<BTreeMap<u64, (u64, bool, bool)>>>;

/// The clients' new invoice: one item of 10, which one payment of 10 pays.
pub(crate) fn invoice_body(client: u64) -> String {
    format!(
        "<invoice><client_id>{client}</client_id><invoice-items><invoice-item>\
         <unit_price>10</unit_price></invoice-item></invoice-items></invoice>"
    )
}

pub(crate) fn payment_body(id: u64) -> String {
    format!("<invoice-payment><invoice_id>{id}</invoice_id><amount>10</amount></invoice-payment>")
}

/// Notes the invoice `reply` acknowledged as created; its id.
pub(crate) fn created(acked: &Acknowledged, reply: &Reply) -> u64 {
    let id = reply.id();
    let number: u64 = reply.field("number").unwrap().parse().unwrap();
    acked.lock().unwrap().insert(id, (number, false, false));
    id
}

/// Notes that completing invoice `id` was acknowledged.
pub(crate) fn completed(acked: &Acknowledged, id: u64) {
    acked.lock().unwrap().get_mut(&id).unwrap().1 = true;
}

/// Notes that paying invoice `id` was acknowledged.
pub(crate) fn paid(acked: &Acknowledged, id: u64) {
    acked.lock().unwrap().get_mut(&id).unwrap().2 = true;
}

pub(crate) async fn work(base: String, client: u64, acked: Acknowledged) {
    loop {
        let body = invoice_body(client);
        let Some(r) = try_send(&base, "POST", "/api/invoices", Some(&body), KEY).await else {
            return;
        };
        if r.status != 201 {
            return;
        }
        let id = created(&acked, &r);
        let Some(r) = try_send(
            &base,
            "PUT",
            &format!("/api/invoices/{id}/complete"),
            Some(""),
            KEY,
        )
        .await
        else {
            return;
        };
        if r.status != 200 {
            return;
        }
        completed(&acked, id);
        let pay = payment_body(id);
        let Some(r) = try_send(&base, "POST", "/api/invoice-payments", Some(&pay), KEY).await
        else {
            return;
        };
        if r.status != 201 {
            return;
        }
        paid(&acked, id);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_writes_survive_sigkill() {
    let data = tempfile::tempdir().unwrap();
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let acked: Acknowledged = Arc::default();
    let mut server = start(data.path(), port);
    wait_ready(&base).await;
    let client = try_send(
        &base,
        "POST",
        "/api/clients",
        Some("<client><name>Crash AG</name></client>"),
        KEY,
    )
    .await
    .unwrap()
    .id();
    let mut seed = 0x9e37_79b9_u64;
    for round in 0..ROUNDS {
        let workers: Vec<_> = (0..WORKERS)
            .map(|_| tokio::spawn(work(base.clone(), client, acked.clone())))
            .collect();
        // A pseudo-random moment between 50 and 550 ms.
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        tokio::time::sleep(Duration::from_millis(50 + seed % 500)).await;
        server.kill();
        for w in workers {
            let _ = w.await;
        }
        server = start(data.path(), port);
        wait_ready(&base).await;
        verify(&base, &acked, round).await;
    }
    server.kill();
    let acked = acked.lock().unwrap();
    assert!(
        acked.len() >= ROUNDS,
        "the workers got writes acknowledged: {}",
        acked.len()
    );
    eprintln!(
        "crash test: {ROUNDS} kills survived, {} invoices acknowledged ({} completed, {} paid)",
        acked.len(),
        acked.values().filter(|v| v.1).count(),
        acked.values().filter(|v| v.2).count()
    );
}

pub(crate) async fn verify(base: &str, acked: &Acknowledged, round: usize) {
    let expected = acked.lock().unwrap().clone();
    for (id, (number, completed, paid)) in &expected {
        let r = try_send(base, "GET", &format!("/api/invoices/{id}"), None, KEY)
            .await
            .unwrap();
        assert_eq!(
            r.status, 200,
            "round {round}: acknowledged invoice {id} is missing"
        );
        assert_eq!(
            r.field("number").unwrap(),
            number.to_string(),
            "round {round}: invoice {id}"
        );
        let status = r.field("status").unwrap();
        if *completed {
            assert_ne!(
                status, "DRAFT",
                "round {round}: completion of {id} was lost"
            );
            let pdf = try_send(base, "GET", &format!("/api/invoices/{id}/pdf"), None, KEY)
                .await
                .unwrap();
            assert_eq!(pdf.status, 200, "round {round}: the PDF of {id} is missing");
        }
        if *paid {
            assert_eq!(status, "PAID", "round {round}: payment of {id} was lost");
            assert_eq!(r.field("paid_amount").as_deref(), Some("10"));
        }
    }
    // Every invoice there is whole, and the numbers run 1..=n without gaps or repeats.
    let mut numbers = Vec::new();
    let mut page = 1;
    loop {
        let r = try_send(
            base,
            "GET",
            &format!("/api/invoices?per_page=1000&page={page}"),
            None,
            KEY,
        )
        .await
        .unwrap();
        let batch = r.fields("number");
        for total in r.fields("total_gross") {
            assert_eq!(total, "10", "round {round}: a half-written invoice");
        }
        numbers.extend(batch.iter().map(|n| n.parse::<u64>().unwrap()));
        if batch.len() < 1000 {
            break;
        }
        page += 1;
    }
    numbers.sort_unstable();
    let n = numbers.len() as u64;
    assert_eq!(
        numbers,
        (1..=n).collect::<Vec<_>>(),
        "round {round}: numbers have gaps or repeats"
    );
    assert!(n >= expected.len() as u64);
}

/// The sender crashes after the SMTP server took the message but before its acceptance
/// arrived: after the restart the message goes out once more, and then never again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_during_delivery_sends_the_message_at_most_once_more() {
    let sink = SmtpSink::stalling_first(free_port()).await;
    let smtp = sink.url();
    let data = tempfile::tempdir().unwrap();
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let mut server = start_with(data.path(), port, &["--smtp", &smtp]);
    wait_ready(&base).await;
    let send = |method: &'static str, path: String, body: String| {
        let base = base.clone();
        async move {
            try_send(&base, method, &path, Some(&body), KEY)
                .await
                .unwrap()
        }
    };
    send(
        "PUT",
        "/api/settings".into(),
        "<settings><default_email_sender>billing@faktura.example</default_email_sender></settings>"
            .into(),
    )
    .await;
    let client = send(
        "POST",
        "/api/clients".into(),
        "<client><name>Mail AG</name></client>".into(),
    )
    .await
    .id();
    let id = send("POST", "/api/invoices".into(), invoice_body(client))
        .await
        .id();
    assert_eq!(
        send("PUT", format!("/api/invoices/{id}/complete"), String::new())
            .await
            .status,
        200
    );
    let r = send(
        "POST",
        format!("/api/invoices/{id}/email"),
        "<email><recipients><to>client@example.org</to></recipients></email>".into(),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    // The server has the message; the sender waits for its answer and dies.
    sink.wait_for(1, 20).await;
    server.kill();
    let outbox = data.path().join("outbox");
    let listed = faktura_host::list_outbox(&outbox).unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(
        listed[0].status, "queued",
        "not known to be delivered: {:?}",
        listed[0]
    );
    let mut server = start_with(data.path(), port, &["--smtp", &smtp]);
    wait_ready(&base).await;
    let got = sink.wait_for(2, 30).await;
    let mut sent = false;
    for _ in 0..100 {
        if faktura_host::list_outbox(&outbox).unwrap()[0].status == "sent" {
            sent = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(sent, "the resent message was not moved to sent/");
    let id_of = |m: &str| {
        m.lines()
            .find(|l| l.to_ascii_lowercase().starts_with("message-id:"))
            .map(str::to_owned)
    };
    assert!(
        id_of(&got[0]).is_some(),
        "{}",
        &got[0][..got[0].len().min(800)]
    );
    assert_eq!(id_of(&got[0]), id_of(&got[1]), "the same message twice");
    // Nothing more goes out, also after another restart.
    server.kill();
    let mut server = start_with(data.path(), port, &["--smtp", &smtp]);
    wait_ready(&base).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(sink.messages().len(), 2, "sent once more, not again");
    server.kill();
    eprintln!("mail crash test: 1 message, killed mid-delivery, delivered 2 times in all");
}
