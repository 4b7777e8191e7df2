//! `wasi:http/outgoing-handler`: the requests the component sends out (webhook
//! deliveries) leave here. The component decides what is sent, to where, and how it is
//! signed; the host moves the bytes, and keeps them out of the private network: it
//! resolves the URL's host itself, refuses it when any address it resolves to is of the
//! private network (loopback, private, link-local, unique-local, multicast, unspecified;
//! `169.254.169.254` among them) unless `--webhook-allow-private` lifts that, and connects
//! to an address it checked, so that a name cannot answer one address to the check and
//! another to the connection. HTTP/1.1, TLS for https against the web's root
//! certificates, no redirect followed, and at most `EXCHANGE_TIME_MAX` until the answer's
//! head (the component bounds the reading of its body).
//!
//! A connection whose answer was read to its end stays open for the next request to the
//! same destination (`Idle`), as a browser's would: a receiver that takes many deliveries
//! pays for one connection, not one per delivery. A kept connection was checked when it
//! was made; one the receiver closed meanwhile is noticed before the request goes out (it
//! goes over a new connection then), and one idle for `IDLE_TIME_MAX` is closed.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

use http_body_util::BodyExt as _;
use hyper::Uri;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio::time::Instant;
use wasmtime_wasi_http::{Error, RequestOptions, WasiBody};

/// The longest a request may take until its answer's head has arrived.
const EXCHANGE_TIME_MAX: Duration = Duration::from_secs(10);

/// How long a connection is kept open without a request.
const IDLE_TIME_MAX: Duration = Duration::from_secs(20);

/// Most connections kept open to one destination.
const IDLE_PER_DESTINATION_MAX: usize = 32;

/// What every request's outgoing HTTP shares: whether the private network may be reached,
/// and the connections kept open.
#[derive(Clone, Default)]
pub(crate) struct OutboundCtx {
    pub(crate) allow_private: bool,
    pub(crate) idle: Arc<Idle>,
}

/// Where a connection goes: https or not, the host as the URL names it, the port.
type Destination = (bool, String, u16);

/// An open connection without a request, and since when.
type IdleConnection = (Instant, SendRequest<WasiBody>);

/// Open connections without a request, by destination.
#[derive(Default)]
pub(crate) struct Idle(Mutex<HashMap<Destination, Vec<IdleConnection>>>);

impl Idle {
    /// The most recently idle connection to `to` that is still open.
    fn take(&self, to: &Destination) -> Option<SendRequest<WasiBody>> {
        let mut idle = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let kept = idle.get_mut(to)?;
        let found = std::iter::from_fn(|| kept.pop())
            .find(|(since, sender)| since.elapsed() < IDLE_TIME_MAX && sender.is_ready())
            .map(|(_, sender)| sender);
        if kept.is_empty() {
            idle.remove(to);
        }
        found
    }

    /// Keeps `sender` for the next request to `to`.
    fn put(&self, to: Destination, sender: SendRequest<WasiBody>) {
        let mut idle = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let kept = idle.entry(to).or_default();
        if kept.len() < IDLE_PER_DESTINATION_MAX {
            kept.push((Instant::now(), sender));
        }
    }

    /// Drops (closes) the connections to `to` kept `IDLE_TIME_MAX` or closed meanwhile.
    fn expire(&self, to: &Destination) {
        let mut idle = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(kept) = idle.get_mut(to) {
            kept.retain(|(since, sender)| since.elapsed() < IDLE_TIME_MAX && !sender.is_closed());
            if kept.is_empty() {
                idle.remove(to);
            }
        }
    }

    /// Keeps `sender` once the answer it carries was read to its end and the connection
    /// may take another request, and closes it when it was kept `IDLE_TIME_MAX` without
    /// one; a connection the answer closed, or whose answer was not read within
    /// `IDLE_TIME_MAX`, is dropped.
    fn keep_when_ready(self: Arc<Self>, to: Destination, mut sender: SendRequest<WasiBody>) {
        tokio::spawn(async move {
            if let Ok(Ok(())) = tokio::time::timeout(IDLE_TIME_MAX, sender.ready()).await {
                self.put(to.clone(), sender);
                tokio::time::sleep(IDLE_TIME_MAX).await;
                self.expire(&to);
            }
        });
    }

    /// Connections kept to `to`.
    #[cfg(test)]
    fn count(&self, to: &Destination) -> usize {
        let idle = self.0.lock().unwrap_or_else(|p| p.into_inner());
        idle.get(to).map_or(0, Vec::len)
    }
}

/// A request's hooks of `wasi:http`: where its outgoing requests go.
pub(crate) struct Hooks(pub(crate) OutboundCtx);

type Sent = Result<
    (
        hyper::Response<WasiBody>,
        Box<dyn Future<Output = Result<(), Error>> + Send>,
    ),
    Error,
>;

impl wasmtime_wasi_http::WasiHttpHooks for Hooks {
    fn send_request(
        &mut self,
        request: hyper::Request<WasiBody>,
        _options: Option<RequestOptions>,
        _io: Box<dyn Future<Output = Result<(), Error>> + Send>,
    ) -> Box<dyn Future<Output = Sent> + Send> {
        let ctx = self.0.clone();
        Box::new(async move {
            match tokio::time::timeout(EXCHANGE_TIME_MAX, send(request, ctx)).await {
                Ok(sent) => sent,
                Err(_) => Err(Error::ConnectionTimeout),
            }
        })
    }
}

/// Sends one request to an address its host resolves to that may be reached.
async fn send(mut request: hyper::Request<WasiBody>, ctx: OutboundCtx) -> Sent {
    let uri = request.uri().clone();
    let https = uri.scheme() == Some(&hyper::http::uri::Scheme::HTTPS);
    let host = uri
        .host()
        .ok_or(Error::HttpRequestUriInvalid)?
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
    // The request goes to the host itself, not to a proxy: only the path is sent.
    *request.uri_mut() = Uri::builder()
        .path_and_query(uri.path_and_query().map_or("/", |p| p.as_str()))
        .build()
        .map_err(|_| Error::HttpRequestUriInvalid)?;
    let to: Destination = (https, host.clone(), port);
    if let Some(mut sender) = ctx.idle.take(&to) {
        match sender.try_send_request(request).await {
            Ok(answer) => return Ok(answered(answer, sender, to, ctx.idle)),
            // The connection closed before the request went out: a new one takes it.
            Err(mut e) => match e.take_message() {
                Some(unsent) => request = unsent,
                None => return Err(Error::Hyper(e.into_error())),
            },
        }
    }
    let addresses = resolve(&host, port).await?;
    if !ctx.allow_private
        && addresses
            .iter()
            .any(|a| faktura_netguard::is_private(a.ip()))
    {
        tracing::info!(
            host,
            "outgoing request refused: an address of the private network"
        );
        return Err(Error::DestinationIpProhibited);
    }
    let tcp = connect(&addresses).await?;
    let io: Box<dyn Io> = if https {
        Box::new(tls(&host, tcp).await?)
    } else {
        Box::new(tcp)
    };
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(io))
        .await
        .map_err(Error::Hyper)?;
    // The connection is driven on a task of its own for as long as the answer is read and
    // while it is kept; it ends when its sender is dropped or the receiver closes it.
    tokio::spawn(async move {
        if let Err(e) = connection.await {
            tracing::debug!("outgoing connection: {e}");
        }
    });
    let answer = sender.send_request(request).await.map_err(Error::Hyper)?;
    Ok(answered(answer, sender, to, ctx.idle))
}

/// The answer as `wasi:http` hands it on; its connection kept once the answer is read.
fn answered(
    answer: hyper::Response<hyper::body::Incoming>,
    sender: SendRequest<WasiBody>,
    to: Destination,
    idle: Arc<Idle>,
) -> (
    hyper::Response<WasiBody>,
    Box<dyn Future<Output = Result<(), Error>> + Send>,
) {
    idle.keep_when_ready(to, sender);
    let answer = answer.map(|body| body.map_err(Error::Hyper).boxed_unsync());
    (answer, Box::new(async { Ok(()) }))
}

/// The addresses of `host`: itself when it is an address, else what it resolves to.
async fn resolve(host: &str, port: u16) -> Result<Vec<SocketAddr>, Error> {
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Ok(vec![SocketAddr::new(ip, port)]);
    }
    let found: Vec<SocketAddr> = tokio::net::lookup_host((host, port))
        .await
        .map_err(|_| Error::DnsError {
            rcode: None,
            info_code: None,
        })?
        .collect();
    if found.is_empty() {
        return Err(Error::DestinationNotFound);
    }
    Ok(found)
}

/// A connection to the first of `addresses` that takes one.
async fn connect(addresses: &[SocketAddr]) -> Result<TcpStream, Error> {
    let mut last = Error::DestinationUnavailable;
    for address in addresses {
        match TcpStream::connect(address).await {
            Ok(tcp) => return Ok(tcp),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                last = Error::ConnectionRefused;
            }
            Err(e) => last = Error::Connect(e),
        }
    }
    Err(last)
}

/// A byte stream a request can go over: TCP, or TLS over TCP.
trait Io: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static {}
impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static> Io for T {}

/// The TLS client configuration: the web's root certificates, ring's algorithms.
static TLS: LazyLock<Option<Arc<rustls::ClientConfig>>> = LazyLock::new(|| {
    let roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.into(),
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map(|b| Arc::new(b.with_root_certificates(roots).with_no_client_auth()))
        .ok()
});

/// TLS over `tcp` to `host`, whose certificate must name it.
async fn tls(
    host: &str,
    tcp: TcpStream,
) -> Result<tokio_rustls::client::TlsStream<TcpStream>, Error> {
    let config = TLS.clone().ok_or(Error::TlsProtocolError)?;
    let name = match host.parse::<IpAddr>() {
        Ok(ip) => rustls::pki_types::ServerName::from(ip),
        Err(_) => rustls::pki_types::ServerName::try_from(host.to_owned())
            .map_err(|_| Error::HttpRequestUriInvalid)?,
    };
    tokio_rustls::TlsConnector::from(config)
        .connect(name, tcp)
        .await
        .map_err(Error::Tls)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The refusal comes before any connection: a name that resolves to a private address
    /// is refused as an address written literally is.
    #[tokio::test]
    async fn a_private_destination_is_refused_before_connecting() {
        let ctx = OutboundCtx::default();
        for uri in [
            "http://127.0.0.1:9/in",
            "http://localhost:9/in",
            "http://[::1]:9/",
        ] {
            let request = hyper::Request::post(uri)
                .body(
                    http_body_util::Empty::new()
                        .map_err(|never| match never {})
                        .boxed_unsync(),
                )
                .unwrap();
            let refused = send(request, ctx.clone()).await.err();
            assert!(
                matches!(refused, Some(Error::DestinationIpProhibited)),
                "{uri}: {refused:?}"
            );
        }
    }

    /// A receiver on 127.0.0.1 that answers every request "ok", closing each connection
    /// after one answer unless `keep_alive`; the connections it accepted.
    async fn receiver(keep_alive: bool) -> (u16, Arc<std::sync::atomic::AtomicUsize>) {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = accepted.clone();
        tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                count.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(|_req| async {
                        Ok::<_, std::convert::Infallible>(hyper::Response::new(
                            http_body_util::Full::new(hyper::body::Bytes::from_static(b"ok")),
                        ))
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .keep_alive(keep_alive)
                        .serve_connection(TokioIo::new(tcp), service)
                        .await;
                });
            }
        });
        (port, accepted)
    }

    async fn post(ctx: &OutboundCtx, port: u16) -> Vec<u8> {
        let request = hyper::Request::post(format!("http://127.0.0.1:{port}/hooks"))
            .body(
                http_body_util::Full::new(hyper::body::Bytes::from_static(b"{}"))
                    .map_err(|never| match never {})
                    .boxed_unsync(),
            )
            .unwrap();
        let (answer, _) = send(request, ctx.clone()).await.unwrap();
        assert_eq!(answer.status(), 200);
        answer
            .into_body()
            .collect()
            .await
            .unwrap()
            .to_bytes()
            .to_vec()
    }

    /// Requests to one receiver go over one connection, one after the other, once each
    /// answer was read; a receiver that closes its connections still gets every request.
    #[tokio::test]
    async fn a_connection_is_kept_for_the_next_request_to_the_same_receiver() {
        use std::sync::atomic::Ordering;
        let ctx = OutboundCtx {
            allow_private: true,
            ..OutboundCtx::default()
        };
        for (keep_alive, connections) in [(true, 1), (false, 5)] {
            let (port, accepted) = receiver(keep_alive).await;
            for _ in 0..5 {
                assert_eq!(post(&ctx, port).await, b"ok");
                // The connection goes back once hyper has seen the answer's end.
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            assert_eq!(
                accepted.load(Ordering::SeqCst),
                connections,
                "keep-alive {keep_alive}"
            );
        }
    }

    /// A kept connection is closed once it was idle `IDLE_TIME_MAX`, also when no request
    /// to its receiver comes again.
    #[tokio::test]
    async fn a_kept_connection_is_closed_after_its_idle_time() {
        let ctx = OutboundCtx {
            allow_private: true,
            ..OutboundCtx::default()
        };
        let (port, _) = receiver(true).await;
        post(&ctx, port).await;
        let to: Destination = (false, "127.0.0.1".into(), port);
        for _ in 0..100 {
            if ctx.idle.count(&to) == 1 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert_eq!(ctx.idle.count(&to), 1, "kept after the answer");
        tokio::time::pause();
        tokio::time::advance(IDLE_TIME_MAX + Duration::from_secs(1)).await;
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        assert_eq!(ctx.idle.count(&to), 0, "closed after its idle time");
    }
}
