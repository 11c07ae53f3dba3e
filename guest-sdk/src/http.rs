//! A small HTTP client for modules, over `wasi:http`: the shim sends each request
//! only to a `host:port` the run's grant allows (a refused one is
//! [`HttpError::Denied`] and a denial in the task's result) and does TLS on the
//! node. [`send`] makes one exchange; [`fetch`] follows redirects as Ansible's
//! `fetch_url` does (`follow_redirects`), answers a Basic authentication challenge,
//! and keeps the cookies servers set. Off `wasm32` (native unit tests) there is no
//! transport: every request fails with [`HttpError::Failed`].

use crate::{Fail, Module};
use base64::Engine;
use serde_json::{Map, Value, json};
use std::time::Duration;

/// One HTTP request.
#[derive(Clone, Debug, Default)]
pub struct Request {
    /// `GET`, `POST`… (any token).
    pub method: String,
    /// `http://` or `https://` URL (user information in it is taken out; see
    /// [`fetch`]).
    pub url: String,
    /// Headers, in order.
    pub headers: Vec<(String, String)>,
    /// Body, if any (sent with its `Content-Length`).
    pub body: Option<Vec<u8>>,
    /// Time allowed to connect, for the first byte of the response and between
    /// bytes of its body.
    pub timeout: Option<Duration>,
    /// Whether the server's certificate is verified (`validate_certs`).
    pub validate_certs: bool,
    /// PEM CA certificates to verify it against instead of the node's (`ca_path`).
    pub ca_pem: Option<Vec<u8>>,
    /// Names (lowercase) of headers [`fetch`] does not send again after a redirect.
    pub unredirected: Vec<String>,
}

/// A response, its body read whole.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Response {
    /// Status code.
    pub status: u16,
    /// Headers as received (names lowercase), in order.
    pub headers: Vec<(String, String)>,
    /// Body.
    pub body: Vec<u8>,
}

impl Response {
    /// A header's value; several of the same name joined with `, ` (as Python does).
    pub fn header(&self, name: &str) -> Option<String> {
        let values: Vec<&str> = self
            .headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
            .collect();
        (!values.is_empty()).then(|| values.join(", "))
    }

    /// The status's standard reason phrase (wasi:http does not carry the server's).
    pub fn reason(&self) -> &'static str {
        reason(self.status)
    }

    /// The body, gunzipped when `decompress` and the response says
    /// `Content-Encoding: gzip` (as Ansible's `decompress` option does).
    pub fn decoded_body(&self, decompress: bool) -> Result<Vec<u8>, HttpError> {
        let gzip = self
            .header("content-encoding")
            .is_some_and(|e| e.eq_ignore_ascii_case("gzip"));
        if !(decompress && gzip) {
            return Ok(self.body.clone());
        }
        let mut out = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&self.body[..]), &mut out)
            .map_err(|e| HttpError::Failed(format!("cannot decompress the gzip response: {e}")))?;
        Ok(out)
    }

    /// The response's content type as Python's `email.message` reads it (the
    /// type lowercased, `text/plain` when missing or malformed) and its charset
    /// (`utf-8` when none).
    pub fn content_type(&self) -> (String, String) {
        let header = self.header("content-type").unwrap_or_default();
        let mut parts = header.split(';');
        let kind = parts.next().unwrap_or_default().trim().to_ascii_lowercase();
        let kind = if kind.split('/').count() == 2 && !kind.starts_with('/') && !kind.ends_with('/')
        {
            kind
        } else {
            "text/plain".to_string()
        };
        let charset = parts
            .filter_map(|p| p.split_once('='))
            .find(|(k, _)| k.trim().eq_ignore_ascii_case("charset"))
            .map(|(_, v)| v.trim().trim_matches('"').to_ascii_lowercase())
            .unwrap_or_else(|| "utf-8".to_string());
        (kind, charset)
    }

    /// The file name the response suggests, as Ansible's `get_response_filename`:
    /// `Content-Disposition`'s `filename` (its last path component), else the last
    /// component of `url`'s path, percent-decoded.
    pub fn filename(&self, url: &str) -> Option<String> {
        let from_header = self.header("content-disposition").and_then(|d| {
            d.split(';')
                .filter_map(|p| p.split_once('='))
                .find(|(k, _)| k.trim().eq_ignore_ascii_case("filename"))
                .map(|(_, v)| v.trim().trim_matches('"').to_string())
        });
        if let Some(name) = from_header {
            return Some(name.rsplit('/').next().unwrap_or_default().to_string());
        }
        let path = Url::parse(url).ok()?.path_with_query;
        let path = path
            .split('?')
            .next()
            .unwrap_or_default()
            .trim_end_matches('/');
        let name = path.rsplit('/').next().unwrap_or_default();
        (!name.is_empty()).then(|| percent_decode(name))
    }
}

/// Why a request got no response.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HttpError {
    /// The sandbox refused the connection: the grant has no `net` entry for `peer`.
    #[error("{url}: connection to {peer} denied by the sandbox")]
    Denied {
        /// `host:port`.
        peer: String,
        /// The URL requested.
        url: String,
    },
    /// The URL cannot be requested.
    #[error("{0}")]
    BadUrl(String),
    /// A header cannot be sent.
    #[error("{0}")]
    BadHeader(String),
    /// No response arrived in time.
    #[error("timed out")]
    Timeout,
    /// The connection or the exchange failed.
    #[error("{0}")]
    Failed(String),
}

/// A URL taken apart.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Url {
    /// `http` or `https` (lowercase).
    pub scheme: String,
    /// `host[:port]` as written (no user information).
    pub authority: String,
    /// Path and query (`/` at least).
    pub path_with_query: String,
    /// User and password in the URL (`user:pass@`), percent-decoded.
    pub credentials: Option<(String, Option<String>)>,
}

impl Url {
    /// Parses an absolute `http`/`https` URL.
    pub fn parse(url: &str) -> Result<Url, HttpError> {
        let bad = |why: &str| HttpError::BadUrl(format!("{why}: {url}"));
        let (scheme, rest) = url
            .split_once("://")
            .ok_or_else(|| bad("unknown url type"))?;
        let scheme = scheme.to_ascii_lowercase();
        if scheme != "http" && scheme != "https" {
            return Err(bad("unknown url type"));
        }
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(end);
        let tail = tail.split('#').next().unwrap_or_default();
        let (credentials, authority) = match authority.rsplit_once('@') {
            Some((userinfo, host)) => {
                let (user, pass) = match userinfo.split_once(':') {
                    Some((u, p)) => (percent_decode(u), Some(percent_decode(p))),
                    None => (percent_decode(userinfo), None),
                };
                (Some((user, pass)), host)
            }
            None => (None, authority),
        };
        if authority.is_empty() {
            return Err(bad("no host given"));
        }
        let path_with_query = if tail.starts_with('/') {
            tail.replace(' ', "%20")
        } else {
            format!("/{}", tail.replace(' ', "%20"))
        };
        Ok(Url {
            scheme,
            authority: authority.to_string(),
            path_with_query,
            credentials,
        })
    }

    /// `host:port`, with the scheme's default port when the URL has none.
    pub fn peer(&self) -> String {
        let has_port = match self.authority.rsplit_once(':') {
            Some((h, p)) => {
                !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()) && !h.ends_with(':')
            }
            None => false,
        } && !(self.authority.starts_with('[') && self.authority.ends_with(']'));
        if has_port {
            self.authority.to_ascii_lowercase()
        } else {
            let port = if self.scheme == "https" { 443 } else { 80 };
            format!("{}:{port}", self.authority.to_ascii_lowercase())
        }
    }

    /// The URL again, without user information.
    pub fn without_credentials(&self) -> String {
        format!(
            "{}://{}{}",
            self.scheme, self.authority, self.path_with_query
        )
    }

    /// `target` (a `Location`) resolved against this URL.
    pub fn join(&self, target: &str) -> String {
        if target.contains("://") {
            target.to_string()
        } else if let Some(rest) = target.strip_prefix("//") {
            format!("{}://{rest}", self.scheme)
        } else if target.starts_with('/') {
            format!("{}://{}{target}", self.scheme, self.authority)
        } else {
            let path = self.path_with_query.split('?').next().unwrap_or("/");
            let dir = &path[..path.rfind('/').map_or(0, |i| i + 1)];
            format!("{}://{}{dir}{target}", self.scheme, self.authority)
        }
    }
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(v) = text
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Makes one exchange (no redirect followed).
pub fn send(req: &Request) -> Result<Response, HttpError> {
    let url = Url::parse(&req.url)?;
    let mut headers = req.headers.clone();
    if let Some(body) = &req.body
        && !headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("content-length"))
    {
        headers.push(("Content-Length".into(), body.len().to_string()));
    }
    if !req.validate_certs {
        headers.push((NO_VERIFY_HEADER.into(), "1".into()));
    }
    if let Some(pem) = &req.ca_pem {
        headers.push((CA_HEADER.into(), to_hex(pem)));
    }
    transport::exchange(&url, req, &headers).map_err(|e| match e {
        HttpError::Denied { .. } => HttpError::Denied {
            peer: url.peer(),
            url: url.without_credentials(),
        },
        other => other,
    })
}

/// Header by which the shim is asked not to verify the server's certificate.
const NO_VERIFY_HEADER: &str = "sandball-tls-no-verify";
/// Header carrying (hex) the PEM CA certificates the shim verifies against.
const CA_HEADER: &str = "sandball-tls-ca";

fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Which redirects [`fetch`] follows (Ansible's `follow_redirects`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Redirects {
    /// None: a redirect is the answer (`none`, `no`).
    None,
    /// Only for `GET` and `HEAD` (`safe`).
    Safe,
    /// All of them (`all`, `yes`).
    All,
    /// As Python's urllib: `GET` and `HEAD` always, `POST` after `301`/`302`/`303`
    /// (`urllib2`).
    Urllib2,
}

impl Redirects {
    /// From Ansible's choice words.
    pub fn from_choice(word: &str) -> Redirects {
        match word {
            "none" | "no" => Redirects::None,
            "safe" => Redirects::Safe,
            "urllib2" | "urllib" => Redirects::Urllib2,
            _ => Redirects::All,
        }
    }
}

/// Credentials for Basic authentication.
#[derive(Clone, Debug, Default)]
pub struct Auth {
    /// User name.
    pub user: String,
    /// Password (empty when none).
    pub password: String,
    /// Send them with the first request rather than after a 401 challenge.
    pub force: bool,
}

/// What [`fetch`] ends with.
#[derive(Clone, Debug)]
pub struct Fetched {
    /// The last response.
    pub response: Response,
    /// The URL it came from (without user information).
    pub url: String,
    /// Cookies set along the way, `(name, value)`, in order.
    pub cookies: Vec<(String, String)>,
    /// The response is an error (`HTTP Error N: Reason`, as Python's urllib raises
    /// it): any status but 2xx, a redirect not followed or one too many included.
    pub error: Option<String>,
}

/// Most redirects followed (Python's `urllib`: 10).
const MAX_REDIRECTS: usize = 10;

/// Sends `req`, following redirects as `follow` says (a `301`/`302`/`303` turns a
/// request into a body-less `GET` as urllib does, `307`/`308` keep it), answering a
/// Basic challenge (`401` with `WWW-Authenticate: Basic`) when `auth` is given, and
/// sending back cookies the server set.
pub fn fetch(
    mut req: Request,
    follow: Redirects,
    auth: Option<&Auth>,
) -> Result<Fetched, HttpError> {
    let first = Url::parse(&req.url)?;
    let mut auth = auth.cloned();
    if auth.is_none()
        && let Some((user, password)) = &first.credentials
    {
        auth = Some(Auth {
            user: user.clone(),
            password: password.clone().unwrap_or_default(),
            force: false,
        });
    }
    req.url = first.without_credentials();
    let authorization = auth.as_ref().map(|a| {
        let token =
            base64::engine::general_purpose::STANDARD.encode(format!("{}:{}", a.user, a.password));
        ("Authorization".to_string(), format!("Basic {token}"))
    });
    if let (Some(a), Some(h)) = (&auth, &authorization)
        && a.force
    {
        req.headers.push(h.clone());
    }
    let mut cookies: Vec<(String, String)> = Vec::new();
    let mut redirects = 0;
    let mut challenged = false;
    loop {
        let mut this = req.clone();
        if !cookies.is_empty() {
            let jar: Vec<String> = cookies.iter().map(|(n, v)| format!("{n}={v}")).collect();
            this.headers.push(("Cookie".into(), jar.join("; ")));
        }
        let response = send(&this)?;
        for value in response
            .headers
            .iter()
            .filter(|(n, _)| n == "set-cookie")
            .map(|(_, v)| v)
        {
            if let Some((name, value)) = value.split(';').next().and_then(|c| c.split_once('=')) {
                let name = name.trim().to_string();
                let value = value.trim().to_string();
                match cookies.iter_mut().find(|(n, _)| *n == name) {
                    Some(slot) => slot.1 = value,
                    None => cookies.push((name, value)),
                }
            }
        }
        let status = response.status;
        let error = |r: &Response| Some(format!("HTTP Error {}: {}", r.status, r.reason()));
        if status == 401
            && !challenged
            && let (Some(h), Some(a)) = (&authorization, &auth)
            && !a.force
            && response
                .header("www-authenticate")
                .is_some_and(|w| w.to_ascii_lowercase().starts_with("basic"))
        {
            challenged = true;
            req.headers.push(h.clone());
            continue;
        }
        let location = response.header("location");
        let redirect = matches!(status, 301 | 302 | 303 | 307 | 308);
        let method = req.method.to_ascii_uppercase();
        let follows = match follow {
            Redirects::None => false,
            Redirects::Safe => method == "GET" || method == "HEAD",
            Redirects::All => true,
            Redirects::Urllib2 => {
                method == "GET"
                    || method == "HEAD"
                    || (method == "POST" && matches!(status, 301..=303))
            }
        };
        match location {
            Some(location) if redirect && follows => {
                if redirects >= MAX_REDIRECTS {
                    return Ok(Fetched {
                        error: Some(format!(
                            "HTTP Error {status}: The HTTP server returned a redirect error that would lead to an infinite loop.\nThe last 30x error message was:\n{}",
                            response.reason()
                        )),
                        response,
                        url: first.without_credentials(),
                        cookies,
                    });
                }
                redirects += 1;
                let unredirected = std::mem::take(&mut req.unredirected);
                req.headers
                    .retain(|(n, _)| !unredirected.contains(&n.to_ascii_lowercase()));
                let here = Url::parse(&req.url)?;
                req.url = here.join(&location);
                if !matches!(status, 307 | 308) {
                    req.body = None;
                    req.headers.retain(|(n, _)| {
                        !["content-length", "content-type", "transfer-encoding"]
                            .contains(&n.to_ascii_lowercase().as_str())
                    });
                    if method != "HEAD" && (status != 301 || method == "POST") {
                        req.method = "GET".into();
                    }
                }
            }
            _ => {
                let ok = (200..300).contains(&status);
                return Ok(Fetched {
                    error: if ok { None } else { error(&response) },
                    url: if ok {
                        req.url.clone()
                    } else {
                        first.without_credentials()
                    },
                    response,
                    cookies,
                });
            }
        }
    }
}

/// Ansible's URL options (`url_argument_spec`) this client cannot honour, refused
/// when set, each named with the reason: `unix_socket`, `client_cert`/`client_key`,
/// `use_gssapi`, `ciphers`.
pub fn refuse_unsupported(m: &Module) -> Result<(), Fail> {
    let refused = |what: &str, why: &str| {
        Err(Fail::not_carried_out(format!(
            "{what} is not supported by sandball's {} module: {why}",
            m.module_name()
        )))
    };
    if m.get_str("unix_socket").is_some() {
        return refused("unix_socket", "the sandbox grants TCP connections only");
    }
    if m.get_str("client_cert").is_some() || m.get_str("client_key").is_some() {
        return refused(
            "client_cert/client_key",
            "TLS client certificates cannot be passed to the node's TLS",
        );
    }
    if m.get_bool("use_gssapi") {
        return refused("use_gssapi", "GSSAPI authentication is not available");
    }
    if m.get("ciphers").is_some_and(|v| !v.is_null()) {
        return refused("ciphers", "the node's TLS uses its own cipher suites");
    }
    Ok(())
}

/// An HTTP date (`Sun, 06 Nov 1994 08:49:37 GMT`) of a moment since the epoch.
pub fn http_date(t: Duration) -> String {
    let d = crate::civil::DateTime::from_unix(t);
    let days = t.as_secs() / 86_400;
    let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][(days % 7) as usize];
    let month = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ][(d.month.clamp(1, 12) - 1) as usize];
    format!(
        "{weekday}, {:02} {month} {:04} {:02}:{:02}:{:02} GMT",
        d.day, d.year, d.hour, d.minute, d.second
    )
}

/// What a module asks of [`fetch_url`] besides its URL options.
#[derive(Clone, Debug, Default)]
pub struct FetchArgs {
    /// The URL.
    pub url: String,
    /// The method.
    pub method: String,
    /// The body.
    pub body: Option<Vec<u8>>,
    /// The module's own headers (`headers`), after the ones the options make.
    pub headers: Vec<(String, String)>,
    /// A file whose modification time is sent as `If-Modified-Since` (unless `force`).
    pub last_modified_of: Option<String>,
    /// Ask caches not to answer (`Cache-Control: no-cache`; the `force` option).
    pub force: bool,
    /// Redirects followed when the module has no `follow_redirects` option.
    pub default_redirects: &'static str,
}

/// How a [`fetch`] ended.
pub type FetchOutcome = Result<Fetched, HttpError>;

/// Ansible's `fetch_url`: sends `args` with what the module's URL options say
/// (`http_agent`, `timeout`, `validate_certs`, `ca_path`,
/// `unredirected_headers`, `url_username`/`url_password`/`force_basic_auth`,
/// `follow_redirects`) and returns the outcome with its `info` (see
/// [`fetch_info`]). Fails when `ca_path` cannot be read.
pub fn fetch_url(m: &Module, args: FetchArgs) -> Result<(FetchOutcome, Map<String, Value>), Fail> {
    let mut headers = vec![(
        "User-agent".to_string(),
        m.get_str("http_agent")
            .unwrap_or("ansible-httpget")
            .to_string(),
    )];
    if args.force {
        headers.push(("cache-control".into(), "no-cache".into()));
    } else if let Some(since) = args.last_modified_of.as_deref().and_then(|p| {
        let meta = std::fs::metadata(p).ok().filter(|m| m.is_file())?;
        let t = meta
            .modified()
            .ok()?
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?;
        Some(http_date(t))
    }) {
        headers.push(("If-Modified-Since".into(), since));
    }
    headers.extend(args.headers);
    // Python's urllib types a body the request does not type.
    if args.body.is_some()
        && !headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("content-type"))
    {
        headers.push((
            "Content-type".into(),
            "application/x-www-form-urlencoded".into(),
        ));
    }
    let ca_pem = match m.get_str("ca_path") {
        Some(p) => Some(std::fs::read(p).map_err(|e| {
            Fail::new(format!(
                "Failed to read ca_path {p}: {}",
                crate::describe_io_error(&e)
            ))
        })?),
        None => None,
    };
    let request = Request {
        method: args.method,
        url: args.url.clone(),
        headers,
        body: args.body,
        timeout: m
            .get_int("timeout")
            .map(|t| Duration::from_secs(u64::try_from(t).unwrap_or(0))),
        validate_certs: m.get("validate_certs").is_none_or(|v| v != &json!(false)),
        ca_pem,
        unredirected: m
            .get_str_list("unredirected_headers")
            .iter()
            .map(|h| h.to_ascii_lowercase())
            .collect(),
    };
    let auth = m.get_str("url_username").map(|user| Auth {
        user: user.to_string(),
        password: m.get_str("url_password").unwrap_or_default().to_string(),
        force: m.get_bool("force_basic_auth"),
    });
    let follow = Redirects::from_choice(
        m.get_str("follow_redirects")
            .unwrap_or(args.default_redirects),
    );
    let outcome = fetch(request, follow, auth.as_ref());
    let info = fetch_info(&args.url, &outcome);
    Ok((outcome, info))
}

/// `url` with the password of its user information masked, as Ansible's
/// `mask_url` does (`http://user:********@host/`).
pub fn mask_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    match authority.rsplit_once('@') {
        Some((userinfo, host)) if userinfo.contains(':') => {
            let user = userinfo.split(':').next().unwrap_or_default();
            format!("{scheme}://{user}:********@{host}{tail}")
        }
        _ => url.to_string(),
    }
}

/// What Ansible's `fetch_url` reports of an exchange with `url` (its `info`):
/// `url` and `status`; for a response, its headers with lowercase names; for a
/// success, `cookies`, `cookies_string`, `msg` `OK (N bytes)` (N from
/// `Content-Length`, `unknown` without) and the final `url`; for an HTTP error, `msg`
/// (`HTTP Error 404: Not Found`) and `body`; when no response came, status -1 and
/// `msg` `Request failed: <urlopen error …>`.
pub fn fetch_info(url: &str, outcome: &FetchOutcome) -> Map<String, Value> {
    let mut info = Map::new();
    info.insert("url".into(), json!(mask_url(url)));
    info.insert("status".into(), json!(-1));
    match outcome {
        Err(e) => {
            let why = match e {
                HttpError::Timeout => {
                    // A read that timed out, which Python reports outside urlopen's
                    // connection errors.
                    info.insert("msg".into(), json!("Connection failure: timed out"));
                    return info;
                }
                HttpError::Denied { peer, url: target }
                    if *target
                        != Url::parse(url)
                            .map(|u| u.without_credentials())
                            .unwrap_or_default() =>
                {
                    format!(
                        "redirect to {target} denied by the sandbox (no `net` capability grants {peer})"
                    )
                }
                other => other.to_string(),
            };
            info.insert(
                "msg".into(),
                json!(format!("Request failed: <urlopen error {why}>")),
            );
        }
        Ok(f) => {
            let r = &f.response;
            match &f.error {
                Some(error) => {
                    for (name, value) in &r.headers {
                        info.insert(name.clone(), json!(value));
                    }
                    info.insert("msg".into(), json!(error));
                    info.insert("body".into(), json!(String::from_utf8_lossy(&r.body)));
                }
                None => {
                    for (name, _) in &r.headers {
                        info.insert(name.clone(), json!(r.header(name)));
                    }
                    let jar: Vec<String> =
                        f.cookies.iter().map(|(n, v)| format!("{n}={v}")).collect();
                    info.insert("cookies_string".into(), json!(jar.join("; ")));
                    let cookies: Map<String, Value> = f
                        .cookies
                        .iter()
                        .map(|(n, v)| (n.clone(), json!(v)))
                        .collect();
                    info.insert("cookies".into(), Value::Object(cookies));
                    let length = r
                        .header("content-length")
                        .unwrap_or_else(|| "unknown".into());
                    info.insert("msg".into(), json!(format!("OK ({length} bytes)")));
                    info.insert("url".into(), json!(mask_url(&f.url)));
                }
            }
            info.insert("status".into(), json!(r.status));
        }
    }
    info
}

/// The standard reason phrase of a status code (as Python's `http.HTTPStatus`).
pub fn reason(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        101 => "Switching Protocols",
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        203 => "Non-Authoritative Information",
        204 => "No Content",
        205 => "Reset Content",
        206 => "Partial Content",
        300 => "Multiple Choices",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        304 => "Not Modified",
        305 => "Use Proxy",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        402 => "Payment Required",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        407 => "Proxy Authentication Required",
        408 => "Request Timeout",
        409 => "Conflict",
        410 => "Gone",
        411 => "Length Required",
        412 => "Precondition Failed",
        413 => "Content Too Large",
        414 => "URI Too Long",
        415 => "Unsupported Media Type",
        416 => "Range Not Satisfiable",
        417 => "Expectation Failed",
        418 => "I'm a Teapot",
        421 => "Misdirected Request",
        422 => "Unprocessable Content",
        423 => "Locked",
        424 => "Failed Dependency",
        425 => "Too Early",
        426 => "Upgrade Required",
        428 => "Precondition Required",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        451 => "Unavailable For Legal Reasons",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        505 => "HTTP Version Not Supported",
        506 => "Variant Also Negotiates",
        507 => "Insufficient Storage",
        508 => "Loop Detected",
        510 => "Not Extended",
        511 => "Network Authentication Required",
        _ => "Unknown",
    }
}

#[cfg(target_arch = "wasm32")]
mod transport {
    //! The exchange over `wasi:http/outgoing-handler`.
    use super::{HttpError, Request, Response, Url};
    use wasip2::clocks::monotonic_clock;
    use wasip2::http::outgoing_handler;
    use wasip2::http::types::{
        ErrorCode, Fields, IncomingBody, Method, OutgoingBody, OutgoingRequest, RequestOptions,
        Scheme,
    };
    use wasip2::io::poll;
    use wasip2::io::streams::StreamError;

    /// Prefix under which the shim passes hop-by-hop response headers (`connection`…).
    const HOP_PREFIX: &str = "sandball-hop-";

    fn error(e: ErrorCode) -> HttpError {
        match e {
            ErrorCode::HttpRequestDenied => HttpError::Denied {
                peer: String::new(),
                url: String::new(),
            },
            ErrorCode::ConnectionTimeout => HttpError::Failed("timed out".into()),
            ErrorCode::ConnectionReadTimeout | ErrorCode::HttpResponseTimeout => HttpError::Timeout,
            ErrorCode::InternalError(Some(m)) => HttpError::Failed(m),
            ErrorCode::ConnectionRefused => {
                HttpError::Failed("[Errno 111] Connection refused".into())
            }
            other => HttpError::Failed(format!("{other:?}")),
        }
    }

    fn method(word: &str) -> Method {
        match word {
            "GET" => Method::Get,
            "HEAD" => Method::Head,
            "POST" => Method::Post,
            "PUT" => Method::Put,
            "DELETE" => Method::Delete,
            "CONNECT" => Method::Connect,
            "OPTIONS" => Method::Options,
            "TRACE" => Method::Trace,
            "PATCH" => Method::Patch,
            other => Method::Other(other.to_string()),
        }
    }

    pub(super) fn exchange(
        url: &Url,
        req: &Request,
        headers: &[(String, String)],
    ) -> Result<Response, HttpError> {
        let list: Vec<(String, Vec<u8>)> = headers
            .iter()
            .map(|(n, v)| (n.to_ascii_lowercase(), v.clone().into_bytes()))
            .collect();
        let fields = Fields::from_list(&list).map_err(|e| {
            HttpError::BadHeader(format!("the request headers cannot be sent: {e:?}"))
        })?;
        let request = OutgoingRequest::new(fields);
        let bad = |what: &str| HttpError::BadUrl(format!("invalid {what} in {}", req.url));
        request
            .set_method(&method(&req.method))
            .map_err(|()| bad("method"))?;
        let scheme = if url.scheme == "https" {
            Scheme::Https
        } else {
            Scheme::Http
        };
        request
            .set_scheme(Some(&scheme))
            .map_err(|()| bad("scheme"))?;
        request
            .set_authority(Some(&url.authority))
            .map_err(|()| bad("host"))?;
        request
            .set_path_with_query(Some(&url.path_with_query))
            .map_err(|()| bad("path"))?;
        let options = RequestOptions::new();
        if let Some(t) = req.timeout {
            let ns = u64::try_from(t.as_nanos()).unwrap_or(u64::MAX);
            let _ = options.set_connect_timeout(Some(ns));
            let _ = options.set_first_byte_timeout(Some(ns));
            let _ = options.set_between_bytes_timeout(Some(ns));
        }
        let body = request
            .body()
            .map_err(|()| HttpError::Failed("the request body cannot be written".into()))?;
        let future = outgoing_handler::handle(request, Some(options)).map_err(error)?;
        // A server may answer (and close) before reading the whole body, as a
        // redirect often does: the answer counts then, as it does for Python's urllib.
        let mut unsent = None;
        if let Some(bytes) = &req.body {
            let out = body
                .write()
                .map_err(|()| HttpError::Failed("the request body cannot be written".into()))?;
            for chunk in bytes.chunks(4096) {
                if let Err(e) = out.blocking_write_and_flush(chunk) {
                    unsent = Some(format!("sending the body failed: {e:?}"));
                    break;
                }
            }
            drop(out);
        }
        let finished = OutgoingBody::finish(body, None);
        let response = loop {
            match future.get() {
                Some(r) => break r,
                None => future.subscribe().block(),
            }
        };
        let response = match response
            .map_err(|()| HttpError::Failed("the response was taken twice".into()))?
        {
            Ok(r) => r,
            Err(e) => {
                return Err(match (unsent, finished) {
                    (Some(why), _) => HttpError::Failed(why),
                    (None, Err(f)) => error(f),
                    (None, Ok(())) => error(e),
                });
            }
        };
        let status = response.status();
        let headers = response
            .headers()
            .entries()
            .into_iter()
            .map(|(n, v)| {
                let n = n.to_ascii_lowercase();
                let n = n.strip_prefix(HOP_PREFIX).map(str::to_string).unwrap_or(n);
                (n, String::from_utf8_lossy(&v).into_owned())
            })
            .collect();
        let incoming = response
            .consume()
            .map_err(|()| HttpError::Failed("the response body cannot be read".into()))?;
        let stream = incoming
            .stream()
            .map_err(|()| HttpError::Failed("the response body cannot be read".into()))?;
        let mut data = Vec::new();
        let ready = stream.subscribe();
        let wait_ns = req
            .timeout
            .map(|t| u64::try_from(t.as_nanos()).unwrap_or(u64::MAX));
        loop {
            match stream.read(1 << 16) {
                Ok(chunk) if chunk.is_empty() => match wait_ns {
                    Some(ns) => {
                        let timer = monotonic_clock::subscribe_duration(ns);
                        if !poll::poll(&[&ready, &timer]).contains(&0) {
                            return Err(HttpError::Timeout);
                        }
                    }
                    None => ready.block(),
                },
                Ok(chunk) => data.extend_from_slice(&chunk),
                Err(StreamError::Closed) => break,
                Err(StreamError::LastOperationFailed(e)) => {
                    let text = e.to_debug_string();
                    return Err(if text.contains("Timeout") {
                        HttpError::Timeout
                    } else {
                        HttpError::Failed(format!("reading the response failed: {text}"))
                    });
                }
            }
        }
        drop(ready);
        drop(stream);
        let _ = IncomingBody::finish(incoming);
        Ok(Response {
            status,
            headers,
            body: data,
        })
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod transport {
    //! No transport outside a component.
    use super::{HttpError, Request, Response, Url};

    pub(super) fn exchange(
        _url: &Url,
        _req: &Request,
        _headers: &[(String, String)],
    ) -> Result<Response, HttpError> {
        Err(HttpError::Failed(
            "HTTP requests need wasi:http: run the module as a component".into(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_taken_apart_and_joined() {
        let u = Url::parse("HTTP://bob:s%40cret@Example.org:8080/a/b?x=1#frag").unwrap();
        assert_eq!(u.scheme, "http");
        assert_eq!(u.authority, "Example.org:8080");
        assert_eq!(u.path_with_query, "/a/b?x=1");
        assert_eq!(
            u.credentials,
            Some(("bob".to_string(), Some("s@cret".to_string())))
        );
        assert_eq!(u.peer(), "example.org:8080");
        assert_eq!(u.without_credentials(), "http://Example.org:8080/a/b?x=1");
        assert_eq!(u.join("c"), "http://Example.org:8080/a/c");
        assert_eq!(u.join("/d"), "http://Example.org:8080/d");
        assert_eq!(u.join("//h/e"), "http://h/e");
        assert_eq!(u.join("https://o/"), "https://o/");
        assert_eq!(Url::parse("https://h").unwrap().peer(), "h:443");
        assert_eq!(Url::parse("http://[::1]/").unwrap().peer(), "[::1]:80");
        assert_eq!(Url::parse("http://[::1]:81/").unwrap().peer(), "[::1]:81");
        assert_eq!(Url::parse("https://h").unwrap().path_with_query, "/");
        for bad in ["ftp://h/", "h/x", "http:///x"] {
            assert!(
                matches!(Url::parse(bad), Err(HttpError::BadUrl(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn headers_join_and_reasons_are_pythons() {
        let r = Response {
            status: 404,
            headers: vec![
                ("set-cookie".into(), "a=1".into()),
                ("set-cookie".into(), "b=2".into()),
            ],
            body: vec![],
        };
        assert_eq!(r.header("Set-Cookie").as_deref(), Some("a=1, b=2"));
        assert_eq!(r.header("x"), None);
        assert_eq!(r.reason(), "Not Found");
        assert_eq!(reason(418), "I'm a Teapot");
        assert_eq!(Redirects::from_choice("urllib2"), Redirects::Urllib2);
        assert_eq!(Redirects::from_choice("yes"), Redirects::All);
        assert_eq!(Redirects::from_choice("no"), Redirects::None);
    }

    #[test]
    fn http_dates_are_rfc_1123() {
        assert_eq!(
            http_date(Duration::from_secs(784_111_777)),
            "Sun, 06 Nov 1994 08:49:37 GMT"
        );
        assert_eq!(http_date(Duration::ZERO), "Thu, 01 Jan 1970 00:00:00 GMT");
        assert_eq!(mask_url("https://u:p@h/x"), "https://u:********@h/x");
        assert_eq!(mask_url("https://u@h/x"), "https://u@h/x");
    }

    #[test]
    fn no_transport_outside_a_component() {
        let req = Request {
            method: "GET".into(),
            url: "http://127.0.0.1:1/".into(),
            ..Request::default()
        };
        assert!(matches!(send(&req), Err(HttpError::Failed(_))));
        assert!(matches!(
            fetch(req, Redirects::All, None),
            Err(HttpError::Failed(_))
        ));
    }
}
