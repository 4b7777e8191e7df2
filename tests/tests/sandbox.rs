//! The sandbox: a request that loops forever or allocates without bound costs that request
//! a 500, and concurrent requests go on being served.

use std::sync::Arc;
use std::time::{Duration, Instant};

use faktura_host::Limits;
use faktura_tests::{App, test_component};

async fn limited_app() -> Arc<App> {
    let data = Arc::new(tempfile::tempdir().unwrap());
    Arc::new(
        App::spawn_configured(data, test_component(), |o| {
            o.limits = Limits {
                request_time_max: Duration::from_secs(2),
                memory_bytes_max: 64 << 20,
                instances_max: 16,
                ..Limits::default()
            }
        })
        .await,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_loop_is_stopped_and_others_are_served_meanwhile() {
    let app = limited_app().await;
    let looping = {
        let app = app.clone();
        tokio::spawn(async move {
            let started = Instant::now();
            let r = app.get("/api/_test/loop").await;
            (r, started.elapsed())
        })
    };
    // While the loop runs, ordinary requests still answer promptly.
    tokio::time::sleep(Duration::from_millis(200)).await;
    for _ in 0..10 {
        let started = Instant::now();
        assert_eq!(app.get("/api/clients").await.status, 200);
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "{:?}",
            started.elapsed()
        );
    }
    let (r, took) = looping.await.unwrap();
    r.assert_error(500, "internal error");
    assert!(
        took >= Duration::from_secs(2) && took < Duration::from_secs(10),
        "{took:?}"
    );
    assert_eq!(app.get("/api/clients").await.status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unbounded_allocation_hits_the_memory_limit() {
    let app = limited_app().await;
    let r = app.get("/api/_test/alloc").await;
    r.assert_error(500, "internal error");
    assert_eq!(app.get("/api/clients").await.status, 200);
    assert_eq!(
        app.post("/api/clients", "<client><name>After</name></client>")
            .await
            .status,
        201
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_runs_to_its_end_when_its_client_goes_away() {
    use tokio::io::AsyncWriteExt;
    let app = limited_app().await;
    let body = "<client><name>Left behind</name></client>";
    let request = format!(
        "POST /api/_test/slow-client HTTP/1.1\r\nHost: faktura\r\nX-ServiceApiKey: {}\r\n\
         Content-Type: application/xml\r\nContent-Length: {}\r\n\r\n{body}",
        app.key,
        body.len()
    );
    let address = app.base.trim_start_matches("http://");
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    // The client hangs up while the guest still computes.
    tokio::time::sleep(Duration::from_millis(300)).await;
    drop(stream);
    let started = Instant::now();
    loop {
        let clients = app.get("/api/clients").await;
        if clients.body.contains("Left behind") {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(8),
            "the create was dropped with its connection: {}",
            clients.body
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_guest_that_traps_inside_a_write_leaves_nothing_behind() {
    let app = limited_app().await;
    app.post(
        "/api/_test/half-written-client",
        "<client><name>Half</name></client>",
    )
    .await
    .assert_error(500, "internal error");
    // The next write commits whatever the store still holds.
    assert_eq!(
        app.post("/api/clients", "<client><name>Whole</name></client>")
            .await
            .status,
        201
    );
    let clients = app.get("/api/clients").await;
    assert!(clients.body.contains("Whole"), "{}", clients.body);
    assert!(!clients.body.contains("Half"), "{}", clients.body);
}
