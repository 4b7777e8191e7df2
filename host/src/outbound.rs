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

use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use http_body_util::BodyExt as _;
use hyper::Uri;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use wasmtime_wasi_http::{Error, RequestOptions, WasiBody};

/// The longest a request may take until its answer's head has arrived.
const EXCHANGE_TIME_MAX: Duration = Duration::from_secs(10);

/// What every request's outgoing HTTP shares: whether the private network may be reached.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OutboundCtx {
    pub(crate) allow_private: bool,
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
        let ctx = self.0;
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
    // The connection is driven on a task of its own for as long as the answer is read;
    // it ends when the answer's body is dropped.
    tokio::spawn(async move {
        if let Err(e) = connection.await {
            tracing::debug!("outgoing connection: {e}");
        }
    });
    // The request goes to the host itself, not to a proxy: only the path is sent.
    *request.uri_mut() = Uri::builder()
        .path_and_query(uri.path_and_query().map_or("/", |p| p.as_str()))
        .build()
        .map_err(|_| Error::HttpRequestUriInvalid)?;
    let answer = sender.send_request(request).await.map_err(Error::Hyper)?;
    let answer = answer.map(|body| body.map_err(Error::Hyper).boxed_unsync());
    Ok((answer, Box::new(async { Ok(()) })))
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
        let ctx = OutboundCtx {
            allow_private: false,
        };
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
            let refused = send(request, ctx).await.err();
            assert!(
                matches!(refused, Some(Error::DestinationIpProhibited)),
                "{uri}: {refused:?}"
            );
        }
    }
}
