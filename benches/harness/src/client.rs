//! A small HTTP/1.1 client for seeding data and probing readiness: one keep-alive
//! connection per task, many tasks in parallel.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use http_body_util::{BodyExt as _, Full};
use hyper::Request;
use hyper::body::Bytes;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;

/// One request: method, path and query, XML body.
pub(crate) struct Call {
    pub method: &'static str,
    pub path: String,
    pub body: Option<String>,
}

impl Call {
    pub(crate) fn get(path: impl Into<String>) -> Call {
        Call {
            method: "GET",
            path: path.into(),
            body: None,
        }
    }

    pub(crate) fn with(
        method: &'static str,
        path: impl Into<String>,
        body: impl Into<String>,
    ) -> Call {
        Call {
            method,
            path: path.into(),
            body: Some(body.into()),
        }
    }
}

pub(crate) struct Conn {
    addr: SocketAddr,
    key: String,
    sender: SendRequest<Full<Bytes>>,
}

impl Conn {
    pub(crate) async fn open(addr: SocketAddr, key: &str) -> anyhow::Result<Conn> {
        let stream = tokio::net::TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
        tokio::spawn(conn);
        Ok(Conn {
            addr,
            key: key.to_string(),
            sender,
        })
    }

    /// Status and body of one call.
    pub(crate) async fn call(&mut self, call: &Call) -> anyhow::Result<(u16, String)> {
        let reply = self.send(call).await?;
        Ok((reply.status, reply.body))
    }

    /// The whole answer to one call.
    pub(crate) async fn send(&mut self, call: &Call) -> anyhow::Result<Reply> {
        let mut req = Request::builder()
            .method(call.method)
            .uri(&call.path)
            .header("host", self.addr.to_string())
            .header("x-serviceapikey", &self.key);
        if call.body.is_some() {
            req = req.header("content-type", "application/xml");
        }
        let req = req.body(Full::new(Bytes::from(
            call.body.clone().unwrap_or_default(),
        )))?;
        self.sender.ready().await?;
        let response = self.sender.send_request(req).await?;
        let status = response.status().as_u16();
        let content_type = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let total = response
            .headers()
            .get("x-total-count")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse().ok());
        let body = response.into_body().collect().await?.to_bytes();
        Ok(Reply {
            status,
            content_type,
            total,
            body: String::from_utf8_lossy(&body).into_owned(),
        })
    }
}

/// An answer: status, Content-Type (empty when none), `X-Total-Count` (of a list) and
/// body.
pub(crate) struct Reply {
    pub status: u16,
    pub content_type: String,
    pub total: Option<u64>,
    pub body: String,
}

/// One call on a connection of its own, whatever its answer.
pub(crate) async fn once(addr: SocketAddr, key: &str, call: &Call) -> anyhow::Result<Reply> {
    Conn::open(addr, key).await?.send(call).await
}

/// The first `<id>` of a response: the id of the record it describes.
pub(crate) fn id_of(body: &str) -> anyhow::Result<u64> {
    let start = body
        .find("<id type=\"integer\">")
        .context("the response names no id")?
        + "<id type=\"integer\">".len();
    let end = body[start..].find('<').context("an unterminated id")? + start;
    Ok(body[start..end].parse()?)
}

/// Runs `n` calls made by `make(i)` over `connections` parallel connections and returns
/// the id each answer names (0 for answers without a body), by index. Any answer other
/// than 2xx is an error.
pub(crate) async fn each(
    addr: SocketAddr,
    key: &str,
    connections: usize,
    n: usize,
    label: &str,
    make: impl Fn(usize) -> Call + Send + Sync + 'static,
) -> anyhow::Result<Vec<u64>> {
    let make = Arc::new(make);
    let next = Arc::new(AtomicUsize::new(0));
    let ids = Arc::new(Mutex::new(vec![0u64; n]));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..connections.min(n.max(1)) {
        let (make, next, ids, key) = (make.clone(), next.clone(), ids.clone(), key.to_string());
        let label = label.to_string();
        tasks.push(tokio::spawn(async move {
            let mut conn = Conn::open(addr, &key).await?;
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    return anyhow::Ok(());
                }
                let call = make(i);
                let (status, body) = conn.call(&call).await?;
                if !(200..300).contains(&status) {
                    bail!("{} {} answered {status}: {body}", call.method, call.path);
                }
                if !body.is_empty() {
                    ids.lock().expect("ids")[i] = id_of(&body)?;
                }
                if n >= 10_000 && (i + 1) % (n / 10) == 0 {
                    eprintln!(
                        "  {label}: {} of {n} after {:.0} s",
                        i + 1,
                        started.elapsed().as_secs_f64()
                    );
                }
            }
        }));
    }
    for task in tasks {
        task.await??;
    }
    let ids = std::mem::take(&mut *ids.lock().expect("ids"));
    Ok(ids)
}

/// Polls `path` until it answers 200; the time from `since` to that answer.
pub(crate) async fn first_ok(
    addr: SocketAddr,
    key: &str,
    path: &str,
    since: Instant,
    limit: Duration,
) -> anyhow::Result<Duration> {
    loop {
        if since.elapsed() > limit {
            bail!("no 200 from {addr}{path} within {limit:?}");
        }
        if let Ok(mut conn) = Conn::open(addr, key).await
            && let Ok((200, _)) = conn.call(&Call::get(path)).await
        {
            return Ok(since.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}
