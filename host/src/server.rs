//! The HTTP front: hyper on tokio, one fresh component instance per request, a log line per
//! request in a span carrying its id (`X-Request-Id`), 500 for a trapped guest, graceful
//! shutdown; the operations listener beside it when one is configured. What the component
//! says of an answer for the metrics (`metrics::OUTCOME`) is counted and taken off here.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::LazyLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use anyhow::anyhow;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tracing::Instrument as _;
use wasmtime_wasi_http::WasiHttpView;
use wasmtime_wasi_http::p2::bindings::http::types::{ErrorCode, Scheme};
use wasmtime_wasi_http::p2::body::HyperOutgoingBody;

use crate::deliveries::DELIVER;
use crate::engine::{DeadlineExceeded, Runtime, new_store};
use crate::metrics::OUTCOME;
use crate::store::DbError;

/// How long shutdown waits for requests in flight.
const DRAIN_TIME_MAX: Duration = Duration::from_secs(10);

/// Longest `X-Request-Id` of a client that is taken as the request's id.
const REQUEST_ID_BYTES_MAX: usize = 200;

/// This process's part of the ids it makes: random, so that ids stay unique across
/// restarts and hosts, where the counter beside it starts again.
static REQUEST_ID_PREFIX: LazyLock<u64> =
    LazyLock::new(|| getrandom::u64().expect("the operating system gives random bytes"));
static REQUEST_IDS: AtomicU64 = AtomicU64::new(1);

/// The id of a request in the log and in its `X-Request-Id` answer: the client's when it
/// sent one of printable ASCII of at most `REQUEST_ID_BYTES_MAX` bytes, else a new one.
fn request_id(headers: &hyper::HeaderMap) -> String {
    let sent = headers
        .get("x-request-id")
        .map(|v| v.as_bytes())
        .filter(|id| {
            (1..=REQUEST_ID_BYTES_MAX).contains(&id.len())
                && id.iter().all(|b| (b' '..=b'~').contains(b))
        });
    match sent {
        Some(id) => String::from_utf8_lossy(id).into_owned(),
        None => format!(
            "{:016x}-{}",
            *REQUEST_ID_PREFIX,
            REQUEST_IDS.fetch_add(1, Ordering::Relaxed)
        ),
    }
}

type Response = hyper::Response<HyperOutgoingBody>;

/// The format of a body: the client's choice for an answer of the host's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Xml,
    Json,
}

impl Format {
    /// The format the component answers `req` in, by the same rule (`response_format` in
    /// the component's `http` module): `format=json|xml` in the query wins, then an Accept
    /// naming JSON or XML, then the format of the request's body; XML otherwise.
    fn wanted<B>(req: &hyper::Request<B>) -> Format {
        let query = req.uri().query().unwrap_or_default();
        for (name, value) in form_urlencoded::parse(query.as_bytes()) {
            if name == "format" {
                match value.to_ascii_lowercase().as_str() {
                    "json" => return Format::Json,
                    "xml" => return Format::Xml,
                    _ => {}
                }
            }
        }
        let header = |name| {
            req.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_ascii_lowercase)
        };
        if let Some(accept) = header(hyper::header::ACCEPT) {
            if accept.contains("application/json") {
                return Format::Json;
            }
            if accept.contains("xml") {
                return Format::Xml;
            }
        }
        match header(hyper::header::CONTENT_TYPE) {
            Some(t) if t.starts_with("application/json") => Format::Json,
            _ => Format::Xml,
        }
    }
}

/// An answer of the host's own: `status` with an `<errors>` body holding `message`, in
/// `format` (JSON: `{"errors": {"error": message}}`, as the component writes it).
fn error_answer(status: hyper::StatusCode, message: &str, format: Format) -> Response {
    let (body, content_type) = match format {
        Format::Xml => (
            format!(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<errors>\n  <error>{message}</error>\n</errors>\n"
            ),
            "application/xml; charset=utf-8",
        ),
        Format::Json => (
            serde_json::json!({ "errors": { "error": message } }).to_string(),
            "application/json; charset=utf-8",
        ),
    };
    let mut response = hyper::Response::new(
        Full::new(Bytes::from(body))
            .map_err(|never: Infallible| match never {})
            .boxed_unsync(),
    );
    *response.status_mut() = status;
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static(content_type),
    );
    response
}

/// The answer when the guest failed: the details are in the log, never in the body.
fn internal_error(format: Format) -> Response {
    error_answer(
        hyper::StatusCode::INTERNAL_SERVER_ERROR,
        "internal error",
        format,
    )
}

/// The answer in place of one whose reads saw a commit that could not be made durable:
/// 507 when the disk is full, else 503; the client may send the request again.
fn not_durable(e: &DbError, format: Format) -> Response {
    match e {
        DbError::Full(_) => error_answer(
            hyper::StatusCode::INSUFFICIENT_STORAGE,
            "the server's disk is full: what this request read could not be made durable; \
             send the request again later",
            format,
        ),
        _ => error_answer(
            hyper::StatusCode::SERVICE_UNAVAILABLE,
            "the store could not make what this request read durable; send the request \
             again later",
            format,
        ),
    }
}

impl Runtime {
    /// Serves one request in a fresh instance.
    async fn call(
        &self,
        req: hyper::Request<Incoming>,
        format: Format,
    ) -> anyhow::Result<Response> {
        let slot = self.slots.clone().acquire_owned().await?;
        let mut store = new_store(&self.engine, self.shared.clone(), &self.limits, self.fuel);
        store.set_epoch_deadline(1);
        let (sender, receiver) = oneshot::channel();
        let large_body = has_large_body(&req);
        // With fuel counted (`FAKTURA_PROFILE=fuel`), each request's count is logged with it.
        let profiled = self
            .fuel
            .then(|| format!("{} {}", req.method(), logged_path(req.uri().path())));
        let req = store
            .data_mut()
            .http()
            .new_incoming_request(Scheme::Http, req)?;
        let out = store.data_mut().http().new_response_outparam(sender)?;
        let seen = store.data().seen.clone();
        let pre = self.pre.instance_pre().clone();
        let http = self.http.clone();
        let shared = self.shared.clone();
        let guest = async move {
            let result = async {
                let instance = pre.instantiate_async(&mut store).await?;
                http.load(&mut store, &instance)?
                    .call_handle(&mut store, req, out)
                    .await
            }
            .await;
            if let Err(e) = &result {
                shared.metrics.guest_failed(e.is::<DeadlineExceeded>());
                tracing::error!("guest failed: {e:?}");
            }
            if let Some(request) = profiled
                && let Ok(left) = store.get_fuel()
            {
                tracing::info!(request, wasm_ops = u64::MAX - left, "guest finished");
            }
            // The pooled instance is freed with its store; only then may the next request
            // take the slot, or the pool can be full while a permit is free.
            drop(store);
            drop(slot);
            result
        };
        // In the request's span wherever it runs on: its own task, or past the answer.
        let guest = guest.instrument(tracing::Span::current());
        let guest = Box::pin(CatchUnwind(Box::pin(guest)));
        let answer = if large_body {
            // A large body arrives while the guest reads it: the guest runs on a task of
            // its own, in parallel with this connection's task feeding it.
            let task = tokio::spawn(guest);
            match receiver.await {
                Ok(answer) => answer,
                Err(_) => {
                    let finished = task.await.unwrap_or_else(|e| Err(e.to_string()));
                    return Err(guest_failure(finished));
                }
            }
        } else {
            answer_on_this_task(guest, receiver).await?
        };
        self.answer(answer, &seen, format).await
    }

    /// The guest's response, held until every commit its reads could see is durable.
    async fn answer(
        &self,
        answer: Result<Response, ErrorCode>,
        seen: &AtomicU64,
        format: Format,
    ) -> anyhow::Result<Response> {
        match answer {
            Ok(response) => {
                // Never show a client a commit that a crash could still take back.
                let seen = seen.load(Ordering::SeqCst);
                match self.shared.store.db.durable(seen).await {
                    Ok(()) => Ok(response),
                    Err(e) => {
                        tracing::error!("making what the reads saw durable: {e}");
                        Ok(not_durable(&e, format))
                    }
                }
            }
            Err(code) => Err(anyhow!("guest answered with error code {code:?}")),
        }
    }

    async fn handle(&self, req: hyper::Request<Incoming>) -> Result<Response, Infallible> {
        let id = request_id(req.headers());
        // At error level, so that the id is on every line a request logs whatever the
        // filter lets through.
        let span = tracing::error_span!("request", request_id = %id);
        let mut response = self.respond(req).instrument(span).await;
        response.headers_mut().insert(
            "x-request-id",
            hyper::header::HeaderValue::from_str(&id).expect("an id is printable ASCII"),
        );
        Ok(response)
    }

    /// The answer to a request, logged and counted.
    async fn respond(&self, req: hyper::Request<Incoming>) -> Response {
        let started = Instant::now();
        let method = req.method().clone();
        let path = req.uri().path().to_owned();
        let format = Format::wanted(&req);
        let answering = self.shared.deliveries.answering();
        let mut response = match self.call(req, format).await {
            Ok(r) => r,
            Err(e) => {
                tracing::error!(%method, path = %logged_path(&path), "{e:#}");
                internal_error(format)
            }
        };
        drop(answering);
        // Said for the metrics alone: it never leaves the host.
        let outcome = response.headers_mut().remove(OUTCOME);
        // Said to the host alone: the webhook deliveries of an account are to be sent.
        if let Some(account) = response.headers_mut().remove(DELIVER) {
            match account.to_str().ok().and_then(|a| a.parse().ok()) {
                Some(account) => self.shared.deliveries.ask(account),
                None => tracing::warn!("the component named no account in {DELIVER}"),
            }
        }
        let status = response.status().as_u16();
        let took = started.elapsed();
        self.shared
            .metrics
            .request(&method, &path, status, outcome.as_ref(), took);
        tracing::info!(
            %method,
            path = %logged_path(&path),
            status,
            duration_us = took.as_micros() as u64,
            "request"
        );
        response
    }
}

/// Request bodies up to this size are read by a guest running on its connection's task.
const INLINE_BODY_MAX: u64 = 64 * 1024;

/// The path as the log shows it. A link of the customer portal (`/portal/{token}`, and
/// its downloads below it) opens a document without an API key: its token is a
/// credential, which a log must not hold (the store keeps only its hash), so it is
/// written as `…`. Every other path is logged as sent; a query, where an API key may be,
/// never is. The host decides this itself, where the component says everything else of
/// its answers (`OUTCOME`): the path is logged also for a request the guest never
/// answered (a trap, a deadline), and that line must not hold the token either.
fn logged_path(path: &str) -> std::borrow::Cow<'_, str> {
    match path.strip_prefix("/portal/") {
        Some(rest) if !rest.is_empty() && rest != "style.css" => match rest.split_once('/') {
            Some((_, tail)) => format!("/portal/…/{tail}").into(),
            None => "/portal/…".into(),
        },
        _ => path.into(),
    }
}

/// Whether a request's body may be too large to arrive before the guest reads it: sent in
/// chunks, or longer than `INLINE_BODY_MAX`.
fn has_large_body(req: &hyper::Request<Incoming>) -> bool {
    let header = |name| req.headers().get(name).and_then(|v| v.to_str().ok());
    header(hyper::header::TRANSFER_ENCODING).is_some()
        || header(hyper::header::CONTENT_LENGTH)
            .and_then(|n| n.parse::<u64>().ok())
            .is_some_and(|n| n > INLINE_BODY_MAX)
}

/// Runs the guest on this connection's task until it answers (most finish their body in
/// the same go, sparing a task and a cross-thread wake-up per request); one still writing
/// its body, or whose client went away, goes on in a task of its own.
async fn answer_on_this_task<F>(
    guest: Pin<Box<F>>,
    mut receiver: oneshot::Receiver<Result<Response, ErrorCode>>,
) -> anyhow::Result<Result<Response, ErrorCode>>
where
    F: Future<Output = Result<wasmtime::Result<()>, String>> + Send + 'static,
{
    let mut guest = RunToEnd(Some(guest));
    let running = guest.0.as_mut().expect("the guest is set");
    let answer = tokio::select! {
        biased;
        finished = running => {
            guest.0 = None;
            match receiver.await {
                Ok(answer) => answer,
                Err(_) => return Err(guest_failure(finished)),
            }
        }
        answer = &mut receiver => match answer {
            Ok(answer) => answer,
            Err(_) => {
                let finished = guest.0.take().expect("the guest is set").await;
                return Err(guest_failure(finished));
            }
        },
    };
    drop(guest);
    Ok(answer)
}

/// Why a guest that set no response failed.
fn guest_failure(finished: Result<wasmtime::Result<()>, String>) -> anyhow::Error {
    match finished {
        Ok(Ok(())) => anyhow!("guest never set a response"),
        Ok(Err(e)) => anyhow!("guest trapped: {e:#}"),
        Err(panic) => anyhow!("request task failed: {panic}"),
    }
}

/// Hands a guest that has not ended to a task of its own when dropped: a request runs to
/// its end whether or not anyone waits for the answer.
struct RunToEnd<F: Future + Send + 'static>(Option<Pin<Box<F>>>)
where
    F::Output: Send + 'static;

impl<F: Future + Send + 'static> Drop for RunToEnd<F>
where
    F::Output: Send + 'static,
{
    fn drop(&mut self) {
        if let Some(rest) = self.0.take() {
            tokio::spawn(rest);
        }
    }
}

/// A future whose panic is its output's error, so that a bug in a host function costs its
/// request a 500 rather than the connection.
struct CatchUnwind<F>(Pin<Box<F>>);

impl<F: Future> Future for CatchUnwind<F> {
    type Output = Result<F::Output, String>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match std::panic::catch_unwind(AssertUnwindSafe(|| self.0.as_mut().poll(cx))) {
            Ok(Poll::Ready(out)) => Poll::Ready(Ok(out)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(panic) => Poll::Ready(Err(panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panic".to_owned()))),
        }
    }
}

/// Accepts connections until `shutdown` resolves, then drains requests in flight; serves
/// the metrics on the address the runtime's options name, if any.
pub async fn serve(
    runtime: Runtime,
    listener: TcpListener,
    shutdown: impl Future<Output = ()>,
) -> anyhow::Result<()> {
    let metrics = listen_metrics(&runtime).await?;
    let admin = listen_admin(&runtime);
    serve_with(runtime, listener, metrics, admin, shutdown).await
}

/// The listener of `/metrics`, `/healthz` and `/readyz` (`Options::metrics`), bound
/// before the server answers anything, so that a taken address stops the start.
async fn listen_metrics(runtime: &Runtime) -> anyhow::Result<Option<TcpListener>> {
    let Some(addr) = runtime.metrics_addr else {
        return Ok(None);
    };
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|e| anyhow!("listening for metrics on {addr}: {e}"))?;
    Ok(Some(listener))
}

/// The admin socket, bound before the server answers anything: a command run once the
/// server is up finds it, instead of opening the store beside the server.
fn listen_admin(runtime: &Runtime) -> Option<tokio::task::JoinHandle<()>> {
    crate::admin::listen(runtime.clone(), &runtime.data_dir)
        .inspect_err(|e| {
            tracing::warn!(
                "no admin socket ({e:#}); `faktura user` commands need the server stopped"
            )
        })
        .ok()
}

async fn serve_with(
    runtime: Runtime,
    listener: TcpListener,
    metrics: Option<TcpListener>,
    admin: Option<tokio::task::JoinHandle<()>>,
    shutdown: impl Future<Output = ()>,
) -> anyhow::Result<()> {
    let graceful = GracefulShutdown::new();
    let delivery = runtime.start_mail_delivery();
    let upkeep = runtime.start_upkeep(runtime.limits.upkeep_every);
    let webhooks = runtime.start_deliveries();
    let metrics = metrics.map(|m| tokio::spawn(crate::operations::serve(runtime.clone(), m)));
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    tracing::warn!("accept failed: {e}");
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let runtime = runtime.clone();
        let connection = http1::Builder::new().keep_alive(true).serve_connection(
            TokioIo::new(stream),
            hyper::service::service_fn(move |req| {
                let runtime = runtime.clone();
                async move { runtime.handle(req).await }
            }),
        );
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!("connection ended: {e}");
            }
        });
    }
    tracing::info!("shutting down: draining requests in flight");
    delivery.abort();
    upkeep.abort();
    webhooks.abort();
    if let Some(metrics) = metrics {
        metrics.abort();
    }
    if let Some(admin) = admin {
        // Awaiting the aborted task waits until it is dropped, which removes the socket.
        admin.abort();
        let _ = admin.await;
    }
    if tokio::time::timeout(DRAIN_TIME_MAX, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("requests still in flight after {DRAIN_TIME_MAX:?}; stopping anyway");
    }
    Ok(())
}

/// A server running in the background (tests, embedding).
pub struct Server {
    addr: SocketAddr,
    metrics_addr: Option<SocketAddr>,
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<anyhow::Result<()>>,
}

impl Server {
    /// Binds `addr` (port 0 picks a free one), and the metrics address of the runtime's
    /// options if it has one, and serves until `stop`.
    pub async fn start(runtime: Runtime, addr: SocketAddr) -> anyhow::Result<Server> {
        let listener = TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let metrics = listen_metrics(&runtime).await?;
        let metrics_addr = metrics.as_ref().map(TcpListener::local_addr).transpose()?;
        let (stop, stopped) = oneshot::channel::<()>();
        let admin = listen_admin(&runtime);
        let task = tokio::spawn(serve_with(runtime, listener, metrics, admin, async move {
            let _ = stopped.await;
        }));
        Ok(Server {
            addr,
            metrics_addr,
            stop: Some(stop),
            task,
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Where `/metrics`, `/healthz` and `/readyz` answer, when the options named a place.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics_addr
    }

    /// Stops accepting, drains requests in flight and waits for the end.
    pub async fn stop(mut self) -> anyhow::Result<()> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        (&mut self.task).await?
    }
}

#[cfg(test)]
mod tests {
    use http_body_util::BodyExt as _;

    use super::*;

    fn request(uri: &str, headers: &[(&str, &str)]) -> hyper::Request<()> {
        let mut req = hyper::Request::builder().uri(uri);
        for (name, value) in headers {
            req = req.header(*name, *value);
        }
        req.body(()).unwrap()
    }

    #[test]
    fn a_portal_token_never_reaches_the_log() {
        let token = "VPlS_mmr8dvqioPyn11MTnJeX3zJy6c5";
        assert_eq!(logged_path(&format!("/portal/{token}")), "/portal/…");
        assert_eq!(
            logged_path(&format!("/portal/{token}/pdf")),
            "/portal/…/pdf"
        );
        assert_eq!(
            logged_path(&format!("/portal/{token}/girocode.svg")),
            "/portal/…/girocode.svg"
        );
        assert_eq!(logged_path("/portal/style.css"), "/portal/style.css");
        assert_eq!(logged_path("/portal"), "/portal");
        assert_eq!(logged_path("/api/invoices/7"), "/api/invoices/7");
    }

    #[test]
    fn the_host_answers_in_the_format_the_component_would() {
        let json = "application/json";
        for (uri, headers, wanted) in [
            ("/api/invoices", &[][..], Format::Xml),
            ("/api/invoices?format=json", &[][..], Format::Json),
            (
                "/api/invoices?format=JSON",
                &[("accept", "application/xml")][..],
                Format::Json,
            ),
            (
                "/api/invoices?format=xml",
                &[("accept", json)][..],
                Format::Xml,
            ),
            ("/api/invoices", &[("accept", json)][..], Format::Json),
            ("/api/invoices", &[("accept", "text/xml")][..], Format::Xml),
            ("/api/invoices", &[("content-type", json)][..], Format::Json),
            (
                "/api/invoices",
                &[("accept", "application/xml"), ("content-type", json)][..],
                Format::Xml,
            ),
            ("/api/invoices", &[("accept", "text/html")][..], Format::Xml),
        ] {
            assert_eq!(
                Format::wanted(&request(uri, headers)),
                wanted,
                "{uri} {headers:?}"
            );
        }
    }

    #[tokio::test]
    async fn a_refusal_of_the_host_is_an_errors_body_in_the_format_asked_for() {
        let body = |r: Response| async move {
            let kind = r.headers()[hyper::header::CONTENT_TYPE]
                .to_str()
                .unwrap()
                .to_owned();
            let bytes = r.into_body().collect().await.unwrap().to_bytes();
            (kind, String::from_utf8(bytes.to_vec()).unwrap())
        };
        let full = DbError::Full("no room".into());
        let (kind, text) = body(not_durable(&full, Format::Json)).await;
        assert_eq!(kind, "application/json; charset=utf-8");
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert!(
            v["errors"]["error"]
                .as_str()
                .unwrap()
                .contains("disk is full"),
            "{text}"
        );
        let (kind, text) = body(not_durable(&full, Format::Xml)).await;
        assert_eq!(kind, "application/xml; charset=utf-8");
        assert!(
            text.contains("<errors>\n  <error>the server's disk is full"),
            "{text}"
        );
        let (kind, text) = body(internal_error(Format::Json)).await;
        assert_eq!(
            (kind.as_str(), text.as_str()),
            (
                "application/json; charset=utf-8",
                r#"{"errors":{"error":"internal error"}}"#
            )
        );
    }
}
