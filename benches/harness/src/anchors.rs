//! The machine's limits the workloads are compared with: a native hyper server answering
//! a constant body (B) and a loop of durable single-put redb commits (C).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;

use crate::wrk::Figures;

/// Starts the constant-body server on its own two-thread runtime; it runs until the
/// process ends.
pub(crate) fn constant_server() -> anyhow::Result<SocketAddr> {
    server(2, |_req| async {
        Response::new(Full::new(Bytes::from_static(b"hello\n")))
    })
}

/// Starts an HTTP/1.1 server on 127.0.0.1 on its own runtime of `workers` threads, each
/// request answered by `answer`; it runs until the process ends.
pub(crate) fn server<F, A>(workers: usize, answer: F) -> anyhow::Result<SocketAddr>
where
    F: Fn(Request<Incoming>) -> A + Clone + Send + 'static,
    A: Future<Output = Response<Full<Bytes>>> + Send + 'static,
{
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    listener.set_nonblocking(true)?;
    let addr = listener.local_addr()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()?;
    std::thread::spawn(move || {
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let _ = stream.set_nodelay(true);
                let answer = answer.clone();
                tokio::spawn(async move {
                    let service = service_fn(move |req| {
                        let reply = answer(req);
                        async move { Ok::<_, Infallible>(reply.await) }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
    });
    Ok(addr)
}

/// Durable single-put commits, one after another, for `seconds`: commits/s and the commit
/// latency percentiles.
pub(crate) fn redb_commits(dir: &Path, seconds: u64) -> anyhow::Result<Figures> {
    const TABLE: redb::TableDefinition<u64, &[u8]> = redb::TableDefinition::new("anchor");
    let path = dir.join("anchor.redb");
    let _ = std::fs::remove_file(&path);
    let db = redb::Database::create(&path)?;
    let value = [7u8; 512];
    let mut latencies = Vec::new();
    let started = Instant::now();
    let mut i = 0u64;
    while started.elapsed() < Duration::from_secs(seconds) {
        let t = Instant::now();
        let txn = db.begin_write()?;
        txn.open_table(TABLE)?.insert(i, value.as_slice())?;
        txn.commit()?;
        latencies.push(t.elapsed().as_secs_f64() * 1000.0);
        i += 1;
    }
    let elapsed = started.elapsed().as_secs_f64();
    drop(db);
    std::fs::remove_file(&path)?;
    latencies.sort_by(f64::total_cmp);
    let at = |q: f64| latencies[((latencies.len() - 1) as f64 * q) as usize];
    Ok(Figures {
        per_sec: i as f64 / elapsed,
        p50_ms: at(0.50),
        p99_ms: at(0.99),
        count: i,
        ..Figures::default()
    })
}
