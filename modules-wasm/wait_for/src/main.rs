//! The `wait_for` module: waits, as Ansible's `wait_for` does, for a TCP port to accept
//! connections (optionally until its first data match a pattern) or to stop accepting
//! them, for a file to exist (optionally until it holds a pattern) or to be gone, or
//! simply for `timeout` seconds. It sleeps through WASI's clocks between checks and
//! connects only to the `host:port` its grant names. `state=drained` is refused: it
//! needs a live view of the node's TCP table, which the sandbox does not give.

#[cfg(all(test, unix))]
mod module_tests;

use sandball_guest_sdk::files::path_info;
use sandball_guest_sdk::prelude::*;
use sandball_guest_sdk::pyre::{Anchor, Pattern};
use std::io::{ErrorKind, Read};
use std::net::{IpAddr, Ipv4Addr, Shutdown, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

sandball_guest_sdk::manifest!("../manifest.json");

fn main() {
    sandball_guest_sdk::run_with_paths(MANIFEST, wait_for);
}

/// The TCP states `active_connection_states` may name (those of Linux's TCP table).
const CONNECTION_STATES: &[&str] = &[
    "ESTABLISHED",
    "SYN_SENT",
    "SYN_RECV",
    "FIN_WAIT1",
    "FIN_WAIT2",
    "TIME_WAIT",
    "CLOSE",
    "CLOSE_WAIT",
    "LAST_ACK",
    "LISTEN",
    "CLOSING",
];

/// What the task waits for, once its arguments are checked.
struct Task {
    host: String,
    port: Option<u16>,
    path: Option<String>,
    pattern: Option<Pattern>,
    connect_timeout: Duration,
    sleep: Duration,
    /// The addresses `host` stands for.
    addresses: Vec<IpAddr>,
}

/// The groups a pattern matched, as `match_groups` and `match_groupdict`.
#[derive(Default)]
struct Found {
    groups: Vec<Value>,
    named: Map<String, Value>,
}

/// A whole number of seconds as a duration (negative ones as none).
fn seconds(n: i64) -> Duration {
    Duration::from_secs(u64::try_from(n).unwrap_or(0))
}

/// The module body.
fn wait_for(m: &mut Module) -> Result<Map<String, Value>, Fail> {
    let state = m.get_str("state").unwrap_or("started").to_string();
    let path = m
        .get_str("path")
        .filter(|p| !p.is_empty())
        .map(str::to_string);
    let port = match m.get_int("port") {
        None | Some(0) => None,
        Some(p) => Some(u16::try_from(p).map_err(|_| {
            Fail::new(format!("port {p} is not a TCP port (1 to 65535)")).with("elapsed", 0)
        })?),
    };
    let search_regex = m.get_str("search_regex").map(str::to_string);
    let msg = m.get_str("msg").map(str::to_string);
    let pattern = match &search_regex {
        None => None,
        Some(p) => Some(
            Pattern::new(p, false, true, Anchor::Search)
                .map_err(|e| Fail::new(format!("Invalid regular expression: {e}")))?,
        ),
    };
    let early = |text: &str| Fail::new(text).with("elapsed", 0);
    if port.is_some() && path.is_some() {
        return Err(early(
            "port and path parameter can not both be passed to wait_for",
        ));
    }
    if path.is_some() && (state == "stopped" || state == "drained") {
        return Err(early(&format!(
            "state={state} should only be used for checking a port in the wait_for module"
        )));
    }
    if m.get("exclude_hosts").is_some_and(|v| !v.is_null()) && state != "drained" {
        return Err(early("exclude_hosts should only be with state=drained"));
    }
    for s in m.get_str_list("active_connection_states") {
        if !CONNECTION_STATES.contains(&s.as_str()) {
            return Err(early(&format!(
                "unknown active_connection_state ({s}) defined"
            )));
        }
    }
    if state == "drained" {
        return Err(Fail::not_carried_out(
            "state=drained is not supported by sandball's wait_for: it needs a live view of \
             the node's TCP connection table (/proc/net/tcp), which the sandbox does not give",
        )
        .with("elapsed", 0));
    }
    let task = Task {
        host: m.get_str("host").unwrap_or("127.0.0.1").to_string(),
        port,
        path,
        pattern,
        connect_timeout: seconds(m.get_int("connect_timeout").unwrap_or(5)),
        sleep: seconds(m.get_int("sleep").unwrap_or(1)),
        addresses: match port {
            Some(_) => addresses_of(m.get_str("host").unwrap_or("127.0.0.1"))?,
            None => vec![],
        },
    };
    let timeout = seconds(m.get_int("timeout").unwrap_or(300));
    let start = Instant::now();
    std::thread::sleep(seconds(m.get_int("delay").unwrap_or(0)));
    let end = start + timeout;
    let mut found = Found::default();
    let waited = if task.port.is_none() && task.path.is_none() {
        std::thread::sleep(timeout);
        Ok(())
    } else if state == "absent" || state == "stopped" {
        wait_until(end, task.sleep, || Ok(task.gone()))
    } else {
        wait_until(end, task.sleep, || task.ready(end, &mut found))
    };
    let elapsed = start.elapsed().as_secs();
    match waited {
        Ok(()) => {}
        Err(Waited::Failed(fail)) => return Err(fail.with("elapsed", elapsed)),
        Err(Waited::TimedOut) => {
            let text = msg.unwrap_or_else(|| task.timeout_message(&state, &search_regex));
            return Err(Fail::new(text).with("elapsed", elapsed));
        }
    }
    let mut result = json_map!({
        "changed": false,
        "state": state,
        "port": m.get("port").cloned().unwrap_or(Value::Null),
        "search_regex": search_regex,
        "match_groups": found.groups,
        "match_groupdict": found.named,
        "path": task.path,
        "elapsed": elapsed,
    });
    // As Ansible's exit_json does for any result with a path: what is there now.
    if let Some(path) = &task.path {
        result.extend(path_info(path).into_iter().filter(|(k, _)| k != "path"));
    }
    Ok(result)
}

/// Why waiting ended without the condition met.
enum Waited {
    TimedOut,
    Failed(Fail),
}

/// Checks `met` until it holds or `end` passes, sleeping `sleep` after each miss.
fn wait_until(
    end: Instant,
    sleep: Duration,
    mut met: impl FnMut() -> Result<bool, Fail>,
) -> Result<(), Waited> {
    while Instant::now() < end {
        if met().map_err(Waited::Failed)? {
            return Ok(());
        }
        std::thread::sleep(sleep);
    }
    Err(Waited::TimedOut)
}

impl Task {
    /// The failure message of a timeout.
    fn timeout_message(&self, state: &str, search_regex: &Option<String>) -> String {
        let stopping = state == "absent" || state == "stopped";
        match (&self.port, &self.path, search_regex) {
            (Some(port), _, _) if stopping => {
                format!("Timeout when waiting for {}:{port} to stop.", self.host)
            }
            (_, Some(path), _) if stopping => {
                format!("Timeout when waiting for {path} to be absent.")
            }
            (Some(port), _, Some(re)) => format!(
                "Timeout when waiting for search string {re} in {}:{port}",
                self.host
            ),
            (Some(port), _, None) => format!("Timeout when waiting for {}:{port}", self.host),
            (_, Some(path), Some(re)) => {
                format!("Timeout when waiting for search string {re} in {path}")
            }
            (_, Some(path), None) => format!("Timeout when waiting for file {path}"),
            (None, None, _) => String::new(),
        }
    }

    /// Whether the file is gone or the port no longer accepts connections.
    fn gone(&self) -> bool {
        match (&self.path, self.port) {
            (Some(path), _) => std::fs::metadata(path).is_err(),
            (None, Some(port)) => match self.connect(port, self.connect_timeout) {
                Some(stream) => {
                    let _ = stream.shutdown(Shutdown::Both);
                    false
                }
                None => true,
            },
            (None, None) => true,
        }
    }

    /// Whether the file exists (and holds the pattern) or the port accepts
    /// connections (and its data match the pattern); fills `found` on a match.
    fn ready(&self, end: Instant, found: &mut Found) -> Result<bool, Fail> {
        if let Some(path) = &self.path {
            return self.file_ready(path, found);
        }
        let Some(port) = self.port else {
            return Ok(true);
        };
        // Never wait for a connection past the end (rounded up to a second).
        let left = end.saturating_duration_since(Instant::now());
        let left = Duration::from_secs(left.as_secs() + u64::from(left.subsec_nanos() > 0));
        let Some(mut stream) = self.connect(port, self.connect_timeout.min(left)) else {
            return Ok(false);
        };
        let Some(pattern) = &self.pattern else {
            let _ = stream.shutdown(Shutdown::Both);
            return Ok(true);
        };
        let mut data = Vec::new();
        let mut matched = false;
        let mut buf = [0u8; 1024];
        while Instant::now() < end {
            let left = end.saturating_duration_since(Instant::now());
            let _ = stream.set_read_timeout(Some(left.max(Duration::from_millis(1))));
            match stream.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    data.extend_from_slice(&buf[..n]);
                    let text = String::from_utf8_lossy(&data);
                    if pattern
                        .is_match(&text)
                        .map_err(|e| Fail::new(e.to_string()))?
                    {
                        matched = true;
                        break;
                    }
                }
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        let _ = stream.shutdown(Shutdown::Both);
        Ok(matched)
    }

    /// Whether the file exists and, with a pattern, holds it.
    fn file_ready(&self, path: &str, found: &mut Found) -> Result<bool, Fail> {
        if let Err(e) = std::fs::metadata(path) {
            if e.kind() == ErrorKind::NotFound {
                return Ok(false);
            }
            return Err(Fail::new(format!(
                "Failed to stat {path}, {}",
                sandball_guest_sdk::describe_io_error(&e)
            )));
        }
        let Some(pattern) = &self.pattern else {
            return Ok(true);
        };
        let Ok(bytes) = std::fs::read(path) else {
            return Ok(false);
        };
        let text = String::from_utf8_lossy(&bytes);
        let Some(hit) = pattern
            .search(&text)
            .map_err(|e| Fail::new(e.to_string()))?
        else {
            return Ok(false);
        };
        let text_of = |t: Option<&str>| t.map_or(Value::Null, |s| json!(s));
        found.groups = (1..=pattern.groups())
            .map(|i| text_of(hit.get(i)))
            .collect();
        found.named = pattern
            .group_names()
            .map(|(name, i)| (name.to_string(), text_of(hit.get(i))))
            .collect();
        Ok(true)
    }

    /// A connection to `host:port` within `limit`, or none.
    fn connect(&self, port: u16, limit: Duration) -> Option<TcpStream> {
        let addrs: Vec<SocketAddr> = self
            .addresses
            .iter()
            .map(|ip| SocketAddr::new(*ip, port))
            .collect();
        let limit = limit.max(Duration::from_millis(1));
        // A connection counts once it has a peer: under WASI a refused non-blocking
        // connect may still come back as ready, with the refusal only seen after.
        addrs.iter().find_map(|a| {
            TcpStream::connect_timeout(a, limit)
                .ok()
                .filter(|s| matches!(s.take_error(), Ok(None)) && s.peer_addr().is_ok())
        })
    }
}

/// The addresses `host` stands for: itself when it is one, 127.0.0.1 for `localhost`
/// (the address the shim's grant of `localhost:PORT` surely allows). Other names are refused: looking them up would need the `dns`
/// capability for every run of the module, whatever its arguments.
fn addresses_of(host: &str) -> Result<Vec<IpAddr>, Fail> {
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Ok(vec![ip]);
    }
    if host.eq_ignore_ascii_case("localhost") {
        return Ok(vec![IpAddr::V4(Ipv4Addr::LOCALHOST)]);
    }
    Err(Fail::not_carried_out(format!(
        "host {host:?}: sandball's wait_for connects to IP addresses and localhost only \
         (it does not look up host names); give the address"
    ))
    .with("elapsed", 0))
}
