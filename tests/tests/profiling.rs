//! `FAKTURA_PROFILE=fuel`: the host counts the wasm operators each request runs and logs
//! them, a measure of the guest's work that does not vary from run to run.

use faktura_tests::{ProfiledHost, try_send, wasm_ops};

const KEY: &str = "profiling-key-0123456789abcdef";

#[tokio::test]
async fn fuel_profiling_logs_the_same_count_for_the_same_request() {
    let data = tempfile::tempdir().unwrap();
    let mut host = ProfiledHost::start(data.path(), KEY).await;
    let client = "<client><name>Fuel GmbH</name></client>";
    let created = try_send(&host.base, "POST", "/api/clients", Some(client), KEY)
        .await
        .unwrap();
    assert_eq!(created.status, 201, "{}", created.body);
    let path = format!("/api/clients/{}", created.id());
    for _ in 0..3 {
        let r = try_send(&host.base, "GET", &path, None, KEY).await.unwrap();
        assert_eq!(r.status, 200, "{}", r.body);
    }
    let request = format!("GET {path}");
    host.ops_when(&request, 3).await;
    host.process.kill();
    let log = host.log();
    let gets = wasm_ops(&log, &request);
    let creates = wasm_ops(&log, "POST /api/clients");
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
