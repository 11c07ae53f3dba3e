//! The network peers a grant allows: TCP connections checked address by address
//! (host names resolved once per run), HTTP requests' peers, and the refusals recorded.

use super::SandboxError;
use crate::limits::Denials;
use sandball_wire::capability::{Grant, NetHost, NetPattern};
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::sync::{Arc, Mutex};
use wasmtime_wasi::sockets::SocketAddrUse;

/// The TCP peers a grant allows, with host names resolved once per run, and the
/// connections refused so far.
#[derive(Clone, Default)]
pub struct Network {
    /// Each granted pattern as written, parsed, and the addresses of its host name.
    allowed: Arc<Vec<(String, NetPattern, Vec<IpAddr>)>>,
    denials: Arc<Mutex<Denials>>,
}

impl Network {
    /// Parses the grant's patterns and resolves the host names among them (a name
    /// that does not resolve allows nothing).
    pub fn from_grant(grant: &Grant) -> Result<Network, SandboxError> {
        let mut allowed = Vec::new();
        for text in &grant.net {
            let pattern = NetPattern::parse(text)?;
            let resolved = match &pattern.host {
                NetHost::Name(name) => (name.as_str(), 0)
                    .to_socket_addrs()
                    .map(|addrs| addrs.map(|a| a.ip()).collect())
                    .unwrap_or_default(),
                _ => Vec::new(),
            };
            allowed.push((text.clone(), pattern, resolved));
        }
        Ok(Network {
            allowed: Arc::new(allowed),
            denials: Arc::default(),
        })
    }

    /// Whether a socket may use `addr` for `usage`: connections to granted peers,
    /// and the implicit bind to the wildcard address a connection makes first.
    /// Listening, accepting and explicit binds are never granted; UDP is off.
    pub fn allows(&self, addr: SocketAddr, usage: SocketAddrUse) -> bool {
        match usage {
            SocketAddrUse::TcpBind => {
                !self.allowed.is_empty() && addr.ip().is_unspecified() && addr.port() == 0
            }
            SocketAddrUse::TcpConnect => {
                let ok = self
                    .allowed
                    .iter()
                    .any(|(_, p, resolved)| p.matches(addr, resolved));
                if !ok {
                    self.deny(addr, "connect to");
                }
                ok
            }
            SocketAddrUse::TcpListen | SocketAddrUse::TcpAccept => {
                self.deny(addr, "listen on");
                false
            }
            SocketAddrUse::UdpBind | SocketAddrUse::UdpSend | SocketAddrUse::UdpReceive => false,
        }
    }

    fn deny(&self, addr: SocketAddr, what: &str) {
        self.deny_peer(&addr.to_string(), &format!("network {what} {addr}"));
    }

    /// Records the refusal of `peer` (`host:port`, as a `net` entry would name it);
    /// `what` says what was refused.
    fn deny_peer(&self, peer: &str, what: &str) {
        let granted: Vec<&str> = self.allowed.iter().map(|(t, _, _)| t.as_str()).collect();
        let reason = if granted.is_empty() {
            format!("{what} denied: the grant allows no network connections")
        } else {
            format!(
                "{what} denied: the grant allows TCP connections to [{}] only",
                granted.join(", ")
            )
        };
        let mut denials = self.denials.lock().unwrap_or_else(|e| e.into_inner());
        denials.push(format!("net {peer}"), reason);
    }

    /// The addresses an HTTP request to `host:port` may connect to: those of
    /// `addrs` (what `host` resolved to) that a granted pattern allows, every one of
    /// them when a pattern names `host` itself. None allowed records a denial naming
    /// `host:port` and the request (`what`).
    pub fn http_peers(
        &self,
        host: &str,
        port: u16,
        addrs: &[IpAddr],
        what: &str,
    ) -> Vec<SocketAddr> {
        let host = host.to_ascii_lowercase();
        let named = self.names(&host, port);
        let peers: Vec<SocketAddr> = addrs
            .iter()
            .map(|ip| SocketAddr::new(*ip, port))
            .filter(|a| named || self.allowed.iter().any(|(_, p, r)| p.matches(*a, r)))
            .collect();
        if peers.is_empty() {
            let peer = if host.contains(':') {
                format!("[{host}]:{port}")
            } else {
                format!("{host}:{port}")
            };
            self.deny_peer(&peer, what);
        }
        peers
    }

    /// Whether a granted pattern names host `host` (a name) and allows `port`.
    pub fn names(&self, host: &str, port: u16) -> bool {
        self.allowed.iter().any(|(_, p, _)| {
            matches!(&p.host, NetHost::Name(n) if n.eq_ignore_ascii_case(host))
                && p.ports.0 <= port
                && port <= p.ports.1
        })
    }

    /// Takes the denials recorded so far.
    pub fn take_denials(&self) -> Denials {
        std::mem::take(&mut *self.denials.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn network_grants_allow_their_peers_and_record_the_rest() {
        let addr = |s: &str| s.parse::<SocketAddr>().unwrap();
        let none = Network::from_grant(&Grant::default()).unwrap();
        assert!(!none.allows(addr("0.0.0.0:0"), SocketAddrUse::TcpBind));
        assert!(!none.allows(addr("127.0.0.1:80"), SocketAddrUse::TcpConnect));
        let grant = Grant {
            net: vec!["127.0.0.1:8000-8001".into(), "localhost:9000".into()],
            ..Grant::default()
        };
        let net = Network::from_grant(&grant).unwrap();
        assert!(net.allows(addr("0.0.0.0:0"), SocketAddrUse::TcpBind));
        assert!(!net.allows(addr("0.0.0.0:8000"), SocketAddrUse::TcpBind));
        assert!(net.allows(addr("127.0.0.1:8001"), SocketAddrUse::TcpConnect));
        assert!(net.allows(addr("127.0.0.1:9000"), SocketAddrUse::TcpConnect));
        assert!(!net.allows(addr("127.0.0.1:8002"), SocketAddrUse::TcpConnect));
        assert!(!net.allows(addr("0.0.0.0:8000"), SocketAddrUse::TcpListen));
        let denials = net.take_denials();
        assert_eq!(denials.len(), 2);
        assert_eq!(denials[0].capability, "net 127.0.0.1:8002");
        assert!(net.take_denials().is_empty());
        let bad = Grant {
            net: vec!["no port".into()],
            ..Grant::default()
        };
        assert!(Network::from_grant(&bad).is_err());
    }
}
