//! Operating the host: Prometheus metrics, health and readiness on the metrics listener
//! (`--metrics ADDR`), JSON logs whose lines carry the request id, and `X-Request-Id`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use faktura_host::Limits;
use faktura_tests::{App, SmtpSink, free_port, send_raw, start_host_with, test_component};

use crate::support::{INVOICES, client, complete, create_for};

/// One sample of an exposition: its metric name, its labels and its value.
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

/// The samples of an exposition in the Prometheus text format.
struct Exposition(Vec<Sample>);

impl Exposition {
    fn parse(text: &str) -> Exposition {
        let samples = text
            .lines()
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(|line| {
                let (series, value) = line.rsplit_once(' ').expect("a sample has a value");
                let value = value.parse().unwrap_or_else(|_| panic!("a number: {line}"));
                let Some((name, rest)) = series.split_once('{') else {
                    return Sample {
                        name: series.into(),
                        labels: BTreeMap::new(),
                        value,
                    };
                };
                let mut labels = BTreeMap::new();
                let mut rest = rest.strip_suffix('}').expect("labels end with }");
                while let Some((key, after)) = rest.split_once("=\"") {
                    let end = after.find('"').expect("a label value ends with \"");
                    labels.insert(key.to_owned(), after[..end].to_owned());
                    rest = after[end + 1..].trim_start_matches(',');
                }
                Sample {
                    name: name.into(),
                    labels,
                    value,
                }
            })
            .collect();
        Exposition(samples)
    }

    /// The value of the sample of `name` with exactly `labels`; 0 when there is none, as
    /// for a counter nothing has counted yet.
    fn value(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        let labels: BTreeMap<String, String> = labels
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        self.0
            .iter()
            .find(|s| s.name == name && s.labels == labels)
            .map_or(0.0, |s| s.value)
    }

    /// The buckets of the histogram `name` with `labels` besides `le`, in their order:
    /// upper bound and count.
    fn buckets(&self, name: &str, labels: &[(&str, &str)]) -> Vec<(String, f64)> {
        let bucket = format!("{name}_bucket");
        self.0
            .iter()
            .filter(|s| {
                s.name == bucket
                    && s.labels.len() == labels.len() + 1
                    && labels
                        .iter()
                        .all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(v))
            })
            .map(|s| (s.labels["le"].clone(), s.value))
            .collect()
    }

    /// Asserts that the histogram `name` with `labels` counted `n` observations: in its
    /// count, in its last bucket, and in buckets that never decrease.
    #[track_caller]
    fn assert_histogram(&self, name: &str, labels: &[(&str, &str)], n: f64) {
        assert_eq!(self.value(&format!("{name}_count"), labels), n, "{name}");
        let buckets = self.buckets(name, labels);
        assert!(buckets.len() >= 10, "{name}: {buckets:?}");
        assert_eq!(
            buckets.last().map(|b| (b.0.as_str(), b.1)),
            Some(("+Inf", n))
        );
        assert!(
            buckets.windows(2).all(|w| w[0].1 <= w[1].1),
            "{name}: {buckets:?}"
        );
        assert!(self.value(&format!("{name}_sum"), labels) > 0.0, "{name}");
    }
}

async fn get(base: &str, path: &str) -> faktura_tests::Reply {
    send_raw(base, "GET", path, None, &[]).await
}

async fn scrape(app: &App) -> Exposition {
    let r = get(
        app.metrics_base.as_deref().expect("a metrics listener"),
        "/metrics",
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(
        r.header("content-type")
            .is_some_and(|t| t.starts_with("text/plain; version=0.0.4")),
        "{:?}",
        r.header("content-type")
    );
    Exposition::parse(&r.body)
}

/// An app with a metrics listener on a free port, its limits adjusted by `limits`.
async fn app_with_metrics(limits: impl FnOnce(&mut Limits)) -> Arc<App> {
    let data = Arc::new(tempfile::tempdir().unwrap());
    Arc::new(
        App::spawn_configured(data, test_component(), |o| {
            o.metrics = Some("127.0.0.1:0".parse().unwrap());
            limits(&mut o.limits);
        })
        .await,
    )
}

fn request<'a>(route: &'a str, method: &'a str, status: &'a str) -> [(&'a str, &'a str); 3] {
    [("route", route), ("method", method), ("status", status)]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_count_requests_by_route_with_their_times_commits_pdfs_refusals_and_traps() {
    let app = app_with_metrics(|_| {}).await;
    let metrics = app.metrics_base.clone().unwrap();
    let health = get(&metrics, "/healthz").await;
    assert_eq!((health.status, health.body.as_str()), (200, "ok\n"));
    let ready = get(&metrics, "/readyz").await;
    assert_eq!((ready.status, ready.body.as_str()), (200, "ready\n"));
    // The API port serves none of them.
    assert_eq!(app.get("/metrics").await.status, 404);

    assert_eq!(app.get("/api/clients").await.status, 200);
    app.get("/api/invoices/999999")
        .await
        .assert_error(404, "does not exist");
    let client = app
        .create("/api/clients", "<client><name>Kunde AG</name></client>")
        .await
        .id();
    let invoice = app
        .create(
            "/api/invoices",
            &format!(
                "<invoice><client_id>{client}</client_id><invoice-items><invoice-item>\
                 <name>Beratung</name><quantity>3</quantity><unit_price>120</unit_price>\
                 </invoice-item></invoice-items></invoice>"
            ),
        )
        .await
        .id();
    let rendered = "faktura_pdf_render_duration_seconds";
    let before = scrape(&app).await;
    assert_eq!(before.value(&format!("{rendered}_count"), &[]), 0.0);
    let done = app
        .put(&format!("/api/invoices/{invoice}/complete"), "")
        .await;
    assert_eq!(done.status, 200, "{}", done.body);
    let pdf = app
        .get(&format!("/api/invoices/{invoice}/pdf?format=pdf"))
        .await;
    assert_eq!(pdf.status, 200, "{}", pdf.body);
    // A seller without the data XRechnung asks for: refused with the rules it fails.
    app.get(&format!(
        "/api/invoices/{invoice}/e-invoice?profile=xrechnung-cii"
    ))
    .await
    .assert_error(400, "xrechnung-cii: BR-");
    app.post(
        "/api/_test/half-written-client",
        "<client><name>Half</name></client>",
    )
    .await
    .assert_error(500, "internal error");
    assert_eq!(app.get("/favicon.ico").await.status, 404);
    assert_eq!(app.get("/api/invoices/1/Über").await.status, 404);

    let m = scrape(&app).await;
    let requests = "faktura_http_requests_total";
    for (labels, n) in [
        (request("/api/clients", "GET", "200"), 1.0),
        (request("/api/invoices/{id}", "GET", "404"), 1.0),
        (request("/api/clients", "POST", "201"), 1.0),
        (request("/api/invoices", "POST", "201"), 1.0),
        (request("/api/invoices/{id}/complete", "PUT", "200"), 1.0),
        (request("/api/invoices/{id}/pdf", "GET", "200"), 1.0),
        (request("/api/invoices/{id}/e-invoice", "GET", "400"), 1.0),
        (
            request("/api/_test/half-written-client", "POST", "500"),
            1.0,
        ),
        // The raw paths are no labels: the API port's /metrics, /favicon.ico and a path
        // with a segment of no route's shape are all `other`.
        (request("other", "GET", "404"), 3.0),
        (request("/api/clients", "GET", "404"), 0.0),
    ] {
        assert_eq!(m.value(requests, &labels), n, "{labels:?}");
    }
    let total: f64 =
        m.0.iter()
            .filter(|s| s.name == requests)
            .map(|s| s.value)
            .sum();
    assert_eq!(total, 11.0);
    let duration = "faktura_http_request_duration_seconds";
    m.assert_histogram(
        duration,
        &[("route", "/api/clients"), ("method", "GET")],
        1.0,
    );
    m.assert_histogram(duration, &[("route", "other"), ("method", "GET")], 3.0);

    assert_eq!(
        m.value(
            "faktura_einvoice_refusals_total",
            &[("route", "/api/invoices/{id}/e-invoice")]
        ),
        1.0
    );
    assert_eq!(m.value("faktura_guest_traps_total", &[]), 1.0);
    assert_eq!(m.value("faktura_guest_deadline_stops_total", &[]), 0.0);
    assert_eq!(m.value("faktura_instances_max", &[]), 16.0);
    // Bootstrap, two creates and a completion committed; each write waited for a durable
    // commit.
    let batches = m.value("faktura_store_commit_batches_total", &[]);
    assert!(batches >= 4.0, "{batches} commit batches");
    let durable = m.value("faktura_store_commit_duration_seconds_count", &[]);
    assert!(
        (1.0..=batches).contains(&durable),
        "{durable} durable commits"
    );
    m.assert_histogram("faktura_store_commit_duration_seconds", &[], durable);
    // The completion rendered the invoice's PDF (the PDF request served what it kept).
    let pdfs = m.value(&format!("{rendered}_count"), &[]);
    assert!(pdfs >= 1.0, "{pdfs} PDFs rendered");
    m.assert_histogram(rendered, &[], pdfs);
    // Nothing was sent, nothing is queued.
    assert_eq!(
        m.value("faktura_mail_outbox_messages", &[("state", "queued")]),
        0.0
    );
    assert_eq!(
        m.value("faktura_mail_outbox_messages", &[("state", "failed")]),
        0.0
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_guest_stopped_at_its_deadline_holds_an_instance_until_then_and_is_no_trap() {
    let app = app_with_metrics(|l| {
        l.request_time_max = Duration::from_secs(2);
        // The upkeep takes an instance when the server starts, then not for an hour.
        l.upkeep_every = Duration::from_secs(3600);
    })
    .await;
    // The gauge once it reads `n` (at most 5 s), else what it read last.
    let in_use = async |n: f64| {
        let mut seen = -1.0;
        for _ in 0..50 {
            seen = scrape(&app).await.value("faktura_instances_in_use", &[]);
            if seen == n {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        seen
    };
    assert_eq!(in_use(0.0).await, 0.0, "idle");
    let looping = {
        let app = app.clone();
        tokio::spawn(async move { app.get("/api/_test/loop").await })
    };
    assert_eq!(in_use(1.0).await, 1.0, "the looping guest's instance");
    looping.await.unwrap().assert_error(500, "internal error");
    let m = scrape(&app).await;
    assert_eq!(m.value("faktura_guest_deadline_stops_total", &[]), 1.0);
    assert_eq!(m.value("faktura_guest_traps_total", &[]), 0.0);
    assert_eq!(
        in_use(0.0).await,
        0.0,
        "the stopped guest's instance is free"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_outbox_gauges_count_mail_waiting_and_mail_refused_for_good() {
    let refusing = SmtpSink::refusing(free_port(), true).await;
    for (smtp, state) in [(None, "queued"), (Some(refusing.url()), "failed")] {
        let data = Arc::new(tempfile::tempdir().unwrap());
        let app = App::spawn_configured(data, test_component(), |o| {
            o.metrics = Some("127.0.0.1:0".parse().unwrap());
            o.smtp = smtp;
        })
        .await;
        app.put(
            "/api/settings",
            "<settings><default_email_sender>billing@faktura.example</default_email_sender>\
             </settings>",
        )
        .await;
        let buyer = client(&app, "<name>Müller AG</name>").await;
        let items = "<invoice-items><invoice-item><title>Work</title>\
                     <unit_price>100</unit_price></invoice-item></invoice-items>";
        let invoice = create_for(&app, &INVOICES, buyer, items).await.id();
        complete(&app, &INVOICES, invoice).await;
        let sent = app
            .post(
                &format!("/api/invoices/{invoice}/email"),
                "<email><recipients><to>client@example.org</to></recipients></email>",
            )
            .await;
        assert_eq!(sent.status, 200, "{}", sent.body);
        // Mail is handed over and tried after the request.
        let gauge = "faktura_mail_outbox_messages";
        let expected = if state == "queued" {
            (1.0, 0.0)
        } else {
            (0.0, 1.0)
        };
        let mut counted = (0.0, 0.0);
        for _ in 0..100 {
            let m = scrape(&app).await;
            counted = (
                m.value(gauge, &[("state", "queued")]),
                m.value(gauge, &[("state", "failed")]),
            );
            if counted == expected {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert_eq!(counted, expected, "{state}");
    }
}

/// The lines of a host's JSON log, each parsed; fails on a line that is not an object.
fn json_lines(log: &str) -> Vec<serde_json::Value> {
    log.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value =
                serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}"));
            assert!(v.is_object(), "not an object: {l}");
            v
        })
        .collect()
}

/// The lines logged in the span of the request `id`.
fn lines_of<'a>(lines: &'a [serde_json::Value], id: &str) -> Vec<&'a serde_json::Value> {
    lines
        .iter()
        .filter(|l| l["span"]["request_id"] == id)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_json_log_has_an_object_per_line_and_each_request_its_id_unique_across_restarts() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let key = "json-log-admin-key-0123456789";
    let start = |log: &str| {
        let file = std::fs::File::create(dir.path().join(log)).unwrap();
        let port = free_port();
        let host = start_host_with(&data, port, key, &[], |c| {
            c.env("FAKTURA_LOG_FORMAT", "json")
                .env("FAKTURA_LOG", "info")
                .stderr(file);
        });
        (host, format!("http://127.0.0.1:{port}"))
    };
    let (mut first, base) = start("first.log");
    first.wait_ready(&base, key).await;
    let call = async |base: &str, extra: &[(&str, &str)]| {
        let mut headers = vec![("X-ServiceApiKey", key)];
        headers.extend_from_slice(extra);
        send_raw(base, "GET", "/api/clients", None, &headers).await
    };

    // The first request after the readiness check, in both runs.
    let made = call(&base, &[]).await;
    let first_id = made.header("x-request-id").unwrap().to_owned();
    let given = call(&base, &[("X-Request-Id", "abc-123")]).await;
    assert_eq!(given.status, 200);
    assert_eq!(given.header("x-request-id"), Some("abc-123"));
    // Too long, or not printable ASCII: the host makes one of its own instead.
    let long = "x".repeat(201);
    for bad in [long.as_str(), "tab\there"] {
        let r = call(&base, &[("X-Request-Id", bad)]).await;
        let id = r.header("x-request-id").unwrap();
        assert!(id != bad && id != first_id && !id.is_empty(), "{id}");
    }
    let kept = "y".repeat(200);
    let r = call(&base, &[("X-Request-Id", kept.as_str())]).await;
    assert_eq!(r.header("x-request-id"), Some(kept.as_str()));
    // A guest's own error lines join the log in the span of their request.
    let trapped = send_raw(
        &base,
        "POST",
        "/api/_test/half-written-client",
        Some(b"<client><name>Half</name></client>".to_vec()),
        &[
            ("X-ServiceApiKey", key),
            ("Content-Type", "application/xml"),
            ("X-Request-Id", "trap-1"),
        ],
    )
    .await;
    assert_eq!(trapped.status, 500);
    assert_eq!(trapped.header("x-request-id"), Some("trap-1"));
    first.kill();

    let log = std::fs::read_to_string(dir.path().join("first.log")).unwrap();
    let lines = json_lines(&log);
    let given_lines = lines_of(&lines, "abc-123");
    assert!(
        given_lines.iter().any(|l| l["message"] == "request"
            && l["status"] == 200
            && l["path"] == "/api/clients"),
        "{log}"
    );
    let trap_lines = lines_of(&lines, "trap-1");
    assert!(
        trap_lines.iter().any(|l| l["target"] == "faktura::guest"
            && l["message"].as_str().is_some_and(|m| m.contains("panic"))),
        "the guest's panic message in its request's span: {log}"
    );
    assert!(
        trap_lines
            .iter()
            .any(|l| l["message"] == "request" && l["status"] == 500),
        "{log}"
    );
    assert!(!lines_of(&lines, &first_id).is_empty(), "{log}");

    // Started again, the host makes ids that repeat none of the first run's, though its
    // counter starts again: the same requests come first, the readiness check and this.
    let (mut second, base) = start("second.log");
    second.wait_ready(&base, key).await;
    let again = call(&base, &[]).await;
    let second_id = again.header("x-request-id").unwrap();
    assert_ne!(second_id, first_id);
    second.kill();
    let log = std::fs::read_to_string(dir.path().join("second.log")).unwrap();
    assert!(!lines_of(&json_lines(&log), second_id).is_empty(), "{log}");
}
