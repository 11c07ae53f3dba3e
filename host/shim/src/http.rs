//! `wasi:http` for runs granted `net`: the shim sends a module's HTTP requests itself,
//! after checking each one's host and port (the scheme's default port when the URL
//! has none) against the run's `net` patterns (a refused request is recorded as a
//! denial naming `host:port`, and nothing is sent), and does TLS here with rustls.
//! Certificates are checked against the node's CA bundle, or against the CA
//! certificates a module passes (its `ca_path`), or not at all when the module asks
//! so (`validate_certs: false`); wasi:http cannot say either, so a module says it
//! per request with two headers the shim takes out before sending
//! ([`NO_VERIFY_HEADER`], [`CA_HEADER`]). Hop-by-hop response headers, which
//! wasi:http withholds, reach the module renamed ([`HOP_PREFIX`]).

use crate::sandbox::network::Network;
use http::uri::Scheme;
use http_body_util::BodyExt;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, RootCertStore, SignatureScheme};
use std::future::Future;
use std::net::IpAddr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use wasmtime_wasi_http::io::TokioIo;
use wasmtime_wasi_http::{Error, RequestOptions, WasiBody, WasiHttpHooks};

/// Request header by which a module asks that the server's certificate not be
/// verified (`validate_certs: false`); any value. Never sent.
pub const NO_VERIFY_HEADER: &str = "sandball-tls-no-verify";
/// Request header carrying, hex-encoded, the PEM CA certificates the server's
/// certificate is verified against instead of the node's (`ca_path`). Never sent.
pub const CA_HEADER: &str = "sandball-tls-ca";

/// Where the node's CA bundle is looked for (Debian, Red Hat, SUSE, Alpine/BSD).
const CA_BUNDLES: [&str; 4] = [
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/ca-bundle.pem",
    "/etc/ssl/cert.pem",
];

/// Time allowed to connect, and to wait for the response, when the module sets none.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// The run's wasi:http hooks: requests go out only to granted peers.
pub struct HttpGate {
    network: Network,
}

impl HttpGate {
    /// Hooks that check requests against `network` (and record refusals there).
    pub fn new(network: Network) -> HttpGate {
        HttpGate { network }
    }
}

/// Boxed future the hooks hand back.
type Io = Box<dyn Future<Output = Result<(), Error>> + Send>;

impl WasiHttpHooks for HttpGate {
    fn send_request(
        &mut self,
        request: http::Request<WasiBody>,
        options: Option<RequestOptions>,
        _fut: Io,
    ) -> Box<dyn Future<Output = Result<(http::Response<WasiBody>, Io), Error>> + Send> {
        let network = self.network.clone();
        Box::new(async move { send(&network, request, options).await })
    }
}

/// A connection, plain or TLS.
trait Stream: AsyncRead + AsyncWrite + Send + Sync + Unpin + 'static {}
impl<T> Stream for T where T: AsyncRead + AsyncWrite + Send + Sync + Unpin + 'static {}

/// Text of an error as the module shows it.
fn failed(message: String) -> Error {
    Error::InternalError(Some(message))
}

/// An I/O error as Python words it (`[Errno 111] Connection refused`).
fn os_error(e: &std::io::Error) -> String {
    match e.raw_os_error() {
        Some(code) => {
            let text = e.to_string();
            let text = text
                .strip_suffix(&format!(" (os error {code})"))
                .unwrap_or(&text);
            format!("[Errno {code}] {text}")
        }
        None => e.to_string(),
    }
}

async fn send(
    network: &Network,
    mut request: http::Request<WasiBody>,
    options: Option<RequestOptions>,
) -> Result<(http::Response<WasiBody>, Io), Error> {
    let headers = request.headers_mut();
    let verify = headers.remove(NO_VERIFY_HEADER).is_none();
    let ca = match headers.remove(CA_HEADER) {
        Some(v) => Some(
            hex::decode(v.as_bytes())
                .map_err(|_| failed(format!("the {CA_HEADER} header is not hex")))?,
        ),
        None => None,
    };
    let uri = request.uri().clone();
    let tls = match uri.scheme() {
        Some(s) if *s == Scheme::HTTPS => true,
        Some(s) if *s == Scheme::HTTP => false,
        _ => return Err(Error::HttpProtocolError),
    };
    let host = uri
        .host()
        .ok_or(Error::HttpRequestUriInvalid)?
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    let port = uri.port_u16().unwrap_or(if tls { 443 } else { 80 });
    let connect_timeout = options
        .and_then(|o| o.connect_timeout)
        .unwrap_or(DEFAULT_TIMEOUT);
    let first_byte_timeout = options
        .and_then(|o| o.first_byte_timeout)
        .unwrap_or(DEFAULT_TIMEOUT);

    let addrs: Vec<IpAddr> = match host.parse::<IpAddr>() {
        Ok(ip) => vec![ip],
        Err(_) => match tokio::time::timeout(
            connect_timeout,
            tokio::net::lookup_host((host.as_str(), port)),
        )
        .await
        {
            Ok(Ok(found)) => found.map(|a| a.ip()).collect(),
            Ok(Err(_)) | Err(_) => Vec::new(),
        },
    };
    let scheme = if tls { "https" } else { "http" };
    let what = format!(
        "HTTP request to {scheme}://{}",
        uri.authority().map_or("", |a| a.as_str())
    );
    if addrs.is_empty() && network.names(&host, port) {
        return Err(failed("[Errno -2] Name or service not known".to_string()));
    }
    let peers = network.http_peers(&host, port, &addrs, &what);
    if peers.is_empty() {
        return Err(Error::HttpRequestDenied);
    }

    let mut last = None;
    let mut stream = None;
    for peer in &peers {
        match tokio::time::timeout(connect_timeout, TcpStream::connect(peer)).await {
            Ok(Ok(s)) => {
                stream = Some(s);
                break;
            }
            Ok(Err(e)) => last = Some(os_error(&e)),
            Err(_) => last = Some("timed out".to_string()),
        }
    }
    let Some(stream) = stream else {
        return Err(failed(last.unwrap_or_else(|| "no address".to_string())));
    };
    let stream: Box<dyn Stream> = if tls {
        let config = client_config(verify, ca.as_deref())?;
        let name = ServerName::try_from(host.clone())
            .map_err(|e| failed(format!("{host} is not a valid TLS server name: {e}")))?;
        let connector = tokio_rustls::TlsConnector::from(config);
        match tokio::time::timeout(connect_timeout, connector.connect(name, stream)).await {
            Ok(Ok(s)) => Box::new(s),
            Ok(Err(e)) => {
                return Err(failed(format!(
                    "TLS handshake with {host}:{port} failed: {e}"
                )));
            }
            Err(_) => return Err(failed("_ssl.c: The handshake operation timed out".into())),
        }
    } else {
        Box::new(stream)
    };
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(Error::Hyper)?;
    // The connection is driven by its own task while the request is sent.
    let conn = tokio::spawn(conn);
    // The request line carries the path only (the authority is in `Host`).
    let path = uri.path_and_query().map_or("/", |p| p.as_str());
    *request.uri_mut() = http::Uri::try_from(path).map_err(|_| Error::HttpRequestUriInvalid)?;
    let response =
        match tokio::time::timeout(first_byte_timeout, sender.send_request(request)).await {
            Ok(Ok(r)) => r,
            Ok(Err(e)) => return Err(Error::Hyper(e)),
            Err(_) => return Err(Error::ConnectionReadTimeout),
        };
    let (mut parts, body) = response.into_parts();
    hop_headers_renamed(&mut parts.headers);
    let response = http::Response::from_parts(parts, body.map_err(Error::from).boxed_unsync());
    let io: Io = Box::new(async move {
        match conn.await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(Error::Hyper(e)),
            Err(e) => Err(failed(format!("connection task failed: {e}"))),
        }
    });
    Ok((response, io))
}

/// Response headers wasi:http keeps from a module (hop-by-hop ones), which Ansible's
/// modules report; they reach the module renamed with [`HOP_PREFIX`].
const HOP_HEADERS: [&str; 5] = [
    "connection",
    "keep-alive",
    "transfer-encoding",
    "upgrade",
    "proxy-authenticate",
];
/// Prefix of the hop-by-hop response headers passed on to the module.
pub const HOP_PREFIX: &str = "sandball-hop-";

/// Renames the hop-by-hop headers of a response so they reach the module.
fn hop_headers_renamed(headers: &mut http::HeaderMap) {
    for name in HOP_HEADERS {
        let values: Vec<http::HeaderValue> = headers.get_all(name).iter().cloned().collect();
        headers.remove(name);
        if let Ok(renamed) = http::HeaderName::try_from(format!("{HOP_PREFIX}{name}")) {
            for v in values {
                headers.append(renamed.clone(), v);
            }
        }
    }
}

/// The TLS client configuration of one request.
fn client_config(verify: bool, ca: Option<&[u8]>) -> Result<Arc<rustls::ClientConfig>, Error> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| failed(format!("TLS set-up failed: {e}")))?;
    let config = if !verify {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(NoVerify(provider)))
            .with_no_client_auth()
    } else {
        let roots = match ca {
            Some(pem) => Arc::new(
                root_store(pem)
                    .ok_or_else(|| failed("ca_path holds no PEM certificate".to_string()))?,
            ),
            None => system_roots()?,
        };
        builder.with_root_certificates(roots).with_no_client_auth()
    };
    Ok(Arc::new(config))
}

/// The certificates of a PEM text, `None` when there is none.
fn root_store(pem: &[u8]) -> Option<RootCertStore> {
    let mut store = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(pem).flatten() {
        let _ = store.add(cert);
    }
    (!store.is_empty()).then_some(store)
}

/// The node's CA certificates, read once per process.
fn system_roots() -> Result<Arc<RootCertStore>, Error> {
    static ROOTS: OnceLock<Result<Arc<RootCertStore>, String>> = OnceLock::new();
    ROOTS
        .get_or_init(|| {
            CA_BUNDLES
                .iter()
                .find_map(|p| std::fs::read(p).ok().and_then(|pem| root_store(&pem)))
                .map(Arc::new)
                .ok_or_else(|| {
                    format!(
                        "no CA certificates found on the node (looked in {}); give ca_path or validate_certs: false",
                        CA_BUNDLES.join(", ")
                    )
                })
        })
        .clone()
        .map_err(failed)
}

/// Accepts any server certificate (`validate_certs: false`); handshake signatures
/// are still checked.
#[derive(Debug)]
struct NoVerify(Arc<CryptoProvider>);

impl ServerCertVerifier for NoVerify {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
