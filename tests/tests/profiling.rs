//! `FAKTURA_PROFILE=fuel`: the host counts the wasm operators each request runs and logs
//! them, a measure of the guest's work that does not vary from run to run.

use std::time::Duration;

use faktura_tests::{free_port, start_release_host_with, try_send, wait_ready};

const KEY: &str = "profiling-key-0123456789abcdef";

/// The `wasm_ops` counts the log holds for `request` ("GET /api/clients/1"), in order.
fn counts(log: &str, request: &str) -> Vec<u64> {
    let tag = format!("request=\"{request}\"");
    log.lines()
        .filter(|l| l.contains(&tag))
        .filter_map(|l| l.split("wasm_ops=").nth(1))
        .map(|rest| {
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().expect("wasm_ops is a number")
        })
        .collect()
}

#[tokio::test]
async fn fuel_profiling_logs_the_same_count_for_the_same_request() {
    let data = tempfile::tempdir().unwrap();
    let log_path = data.path().join("host.log");
    let log = std::fs::File::create(&log_path).unwrap();
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let mut host = start_release_host_with(&data.path().join("db"), port, KEY, &[], |c| {
        c.env("FAKTURA_PROFILE", "fuel")
            .env("FAKTURA_LOG", "info")
            .stderr(log);
    });
    wait_ready(&base, KEY).await;
    let client = "<client><name>Fuel GmbH</name></client>";
    let created = try_send(&base, "POST", "/api/clients", Some(client), KEY)
        .await
        .unwrap();
    assert_eq!(created.status, 201, "{}", created.body);
    let path = format!("/api/clients/{}", created.id());
    for _ in 0..3 {
        let r = try_send(&base, "GET", &path, None, KEY).await.unwrap();
        assert_eq!(r.status, 200, "{}", r.body);
    }
    // A request's count is logged once its instance is done, just after its response.
    let read = || std::fs::read_to_string(&log_path).unwrap();
    for _ in 0..100 {
        if counts(&read(), &format!("GET {path}")).len() == 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    host.kill();
    let log = read();
    let gets = counts(&log, &format!("GET {path}"));
    let creates = counts(&log, "POST /api/clients");
    assert_eq!((gets.len(), creates.len()), (3, 1), "{log}");
    assert!(
        gets[0] > 1000,
        "a request runs thousands of operators: {gets:?}"
    );
    assert!(
        gets.iter().all(|n| *n == gets[0]),
        "the same request, the same count: {gets:?}"
    );
    assert_ne!(creates[0], gets[0], "a create is not a read");
}
