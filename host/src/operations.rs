//! The operations listener (`faktura serve --metrics ADDR`): `/metrics` in the Prometheus
//! text format, `/healthz` and `/readyz`, on a listener of its own so that the API port
//! never exposes them. It reads the runtime's gauges and store; what is counted, and how,
//! is `metrics.rs`'s.

use std::convert::Infallible;
use std::time::Duration;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use prometheus_client::encoding::prometheus_text;
use tokio::net::TcpListener;

use crate::engine::Runtime;

/// How long `/readyz` waits for the store.
const READY_TIME_MAX: Duration = Duration::from_secs(5);

type Answer = hyper::Response<Full<Bytes>>;

fn text(status: hyper::StatusCode, content_type: &'static str, body: String) -> Answer {
    let mut answer = hyper::Response::new(Full::new(Bytes::from(body)));
    *answer.status_mut() = status;
    answer.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static(content_type),
    );
    answer
}

const PLAIN: &str = "text/plain; charset=utf-8";

/// Why the runtime cannot serve now, if it cannot. Its component is compiled and linked
/// before a `Runtime` exists, so a serving runtime has it loaded; what can go away is the
/// store.
async fn unready(runtime: &Runtime) -> Option<String> {
    match tokio::time::timeout(READY_TIME_MAX, runtime.shared.store.db.begin_read()).await {
        Ok(Ok(_snapshot)) => None,
        // What failed, as the store tells it: a file that failed at a write, a database
        // that cannot be reached.
        Ok(Err(e)) => Some(format!("the store cannot serve requests: {e}")),
        Err(_) => Some(format!(
            "the store did not answer within {} s",
            READY_TIME_MAX.as_secs()
        )),
    }
}

async fn answer(runtime: &Runtime, req: hyper::Request<Incoming>) -> Answer {
    use hyper::StatusCode;
    if !matches!(*req.method(), hyper::Method::GET | hyper::Method::HEAD) {
        return text(
            StatusCode::METHOD_NOT_ALLOWED,
            PLAIN,
            "GET or HEAD\n".into(),
        );
    }
    match req.uri().path() {
        "/metrics" => text(
            StatusCode::OK,
            prometheus_text::CONTENT_TYPE,
            exposition(runtime).await,
        ),
        "/healthz" => text(StatusCode::OK, PLAIN, "ok\n".into()),
        "/readyz" => match unready(runtime).await {
            None => text(StatusCode::OK, PLAIN, "ready\n".into()),
            Some(why) => text(StatusCode::SERVICE_UNAVAILABLE, PLAIN, format!("{why}\n")),
        },
        _ => text(
            StatusCode::NOT_FOUND,
            PLAIN,
            "/metrics, /healthz or /readyz\n".into(),
        ),
    }
}

/// The metrics, with the gauges read now.
async fn exposition(runtime: &Runtime) -> String {
    let max = runtime.limits.instances_max as usize;
    let free = runtime.slots.available_permits();
    let outbox = match runtime.shared.mail.backlog().await {
        Ok(backlog) => Some((backlog.queued, backlog.failed)),
        // The gauges keep what they last read; the log says why they are stale.
        Err(e) => {
            tracing::warn!("metrics: counting the outbox: {e}");
            None
        }
    };
    runtime
        .shared
        .metrics
        .exposition(max.saturating_sub(free), max, outbox)
}

/// Serves `/metrics`, `/healthz` and `/readyz` on `listener` until the task is dropped.
pub(crate) async fn serve(runtime: Runtime, listener: TcpListener) {
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                tracing::warn!("metrics: accept failed: {e}");
                continue;
            }
        };
        let runtime = runtime.clone();
        let service = hyper::service::service_fn(move |req| {
            let runtime = runtime.clone();
            async move { Ok::<_, Infallible>(answer(&runtime, req).await) }
        });
        tokio::spawn(async move {
            if let Err(e) = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await
            {
                tracing::debug!("metrics: connection ended: {e}");
            }
        });
    }
}
