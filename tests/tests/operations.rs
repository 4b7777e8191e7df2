//! Operating the host: JSON logs whose lines carry the request id, and `X-Request-Id`.

use faktura_tests::{free_port, send_raw, start_host_with};

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
