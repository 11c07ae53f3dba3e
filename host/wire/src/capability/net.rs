//! Network grants: `host:port` patterns (host `*`, an address, a CIDR block or a name;
//! port `*`, a number or a range) and the peer a URL connects to.

use std::net::{IpAddr, SocketAddr};

/// The `host:port` a URL connects to: its host (an IPv6 address in brackets) and
/// its port, or its scheme's default one (`http` 80, `https` 443, `ftp` 21); a URL
/// may follow a word and a colon (`sha256:https://…`, a checksum's URL). `None`
/// when it is not such a URL (no `scheme://`, no host, an unknown scheme without a
/// port, a port that is not a number).
pub fn url_peer(url: &str) -> Option<String> {
    let (scheme, rest) = url.trim().split_once("://")?;
    // `ALGORITHM:URL` (get_url's `checksum`) names the URL after the algorithm.
    let scheme = scheme.rsplit(':').next().unwrap_or(scheme);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let hostport = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let (host, port) = if let Some(v6) = hostport.strip_prefix('[') {
        let (host, after) = v6.split_once(']')?;
        (format!("[{host}]"), after.strip_prefix(':'))
    } else {
        match hostport.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), Some(p)),
            None => (hostport.to_string(), None),
        }
    };
    if host.is_empty() || host == "[]" {
        return None;
    }
    let port: u16 = match port.filter(|p| !p.is_empty()) {
        Some(p) => p.parse().ok()?,
        None => match scheme.to_ascii_lowercase().as_str() {
            "http" => 80,
            "https" => 443,
            "ftp" => 21,
            _ => return None,
        },
    };
    Some(format!("{}:{port}", host.to_ascii_lowercase()))
}

/// The host part of a [`NetPattern`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NetHost {
    /// `*`: any address.
    Any,
    /// One address.
    Ip(IpAddr),
    /// An address block, `10.0.0.0/8`.
    Cidr(IpAddr, u8),
    /// A host name; the shim resolves it when it builds the run's sandbox.
    Name(String),
}

/// A parsed `host:port` pattern: which TCP peers a module may connect to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NetPattern {
    /// Which hosts.
    pub host: NetHost,
    /// Lowest and highest port allowed.
    pub ports: (u16, u16),
}

/// A `host:port` pattern that does not parse.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error(
    "bad network pattern {0:?} (expected HOST:PORT: HOST `*`, an address, ADDRESS/BITS or a name, `[v6]` for IPv6; PORT `*`, N or N-M)"
)]
pub struct NetPatternError(pub String);

impl NetPattern {
    /// Parses `host:port`.
    pub fn parse(text: &str) -> Result<NetPattern, NetPatternError> {
        let bad = || NetPatternError(text.to_string());
        let (host, port) = text.rsplit_once(':').ok_or_else(bad)?;
        let ports = match port {
            "*" => (0, u16::MAX),
            p => match p.split_once('-') {
                Some((lo, hi)) => (
                    lo.parse().map_err(|_| bad())?,
                    hi.parse().map_err(|_| bad())?,
                ),
                None => {
                    let n = p.parse().map_err(|_| bad())?;
                    (n, n)
                }
            },
        };
        if ports.0 > ports.1 {
            return Err(bad());
        }
        let host = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host);
        let host = if host == "*" {
            NetHost::Any
        } else if let Some((ip, bits)) = host.split_once('/') {
            let ip: IpAddr = ip.parse().map_err(|_| bad())?;
            let bits: u8 = bits.parse().map_err(|_| bad())?;
            let max = if ip.is_ipv4() { 32 } else { 128 };
            if bits > max {
                return Err(bad());
            }
            NetHost::Cidr(ip, bits)
        } else if let Ok(ip) = host.parse::<IpAddr>() {
            NetHost::Ip(ip)
        } else if !host.is_empty()
            && host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.')
        {
            NetHost::Name(host.to_ascii_lowercase())
        } else {
            return Err(bad());
        };
        Ok(NetPattern { host, ports })
    }

    /// Whether the pattern allows `addr`; `resolved` are the addresses of the
    /// pattern's host name, when it has one.
    pub fn matches(&self, addr: SocketAddr, resolved: &[IpAddr]) -> bool {
        if addr.port() < self.ports.0 || addr.port() > self.ports.1 {
            return false;
        }
        let ip = canonical_ip(addr.ip());
        match &self.host {
            NetHost::Any => true,
            NetHost::Ip(a) => canonical_ip(*a) == ip,
            NetHost::Cidr(net, bits) => in_block(ip, canonical_ip(*net), *bits),
            NetHost::Name(_) => resolved.iter().any(|r| canonical_ip(*r) == ip),
        }
    }
}

/// IPv4-mapped IPv6 addresses compare as the IPv4 address they carry.
fn canonical_ip(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6
            .to_ipv4_mapped()
            .map(IpAddr::V4)
            .unwrap_or(IpAddr::V6(v6)),
        v4 => v4,
    }
}

fn in_block(ip: IpAddr, net: IpAddr, bits: u8) -> bool {
    match (ip, net) {
        (IpAddr::V4(a), IpAddr::V4(n)) => {
            let mask = u32::MAX.checked_shl(32 - u32::from(bits)).unwrap_or(0);
            u32::from(a) & mask == u32::from(n) & mask
        }
        (IpAddr::V6(a), IpAddr::V6(n)) => {
            let mask = u128::MAX.checked_shl(128 - u32::from(bits)).unwrap_or(0);
            u128::from(a) & mask == u128::from(n) & mask
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn network_patterns_parse_and_match() {
        let addr = |s: &str| s.parse::<SocketAddr>().unwrap();
        let p = NetPattern::parse("127.0.0.1:8000-8080").unwrap();
        assert!(p.matches(addr("127.0.0.1:8000"), &[]));
        assert!(!p.matches(addr("127.0.0.1:9000"), &[]));
        assert!(!p.matches(addr("127.0.0.2:8000"), &[]));
        assert!(p.matches(addr("[::ffff:127.0.0.1]:8001"), &[]));
        let block = NetPattern::parse("10.0.0.0/8:*").unwrap();
        assert!(block.matches(addr("10.1.2.3:22"), &[]));
        assert!(!block.matches(addr("11.1.2.3:22"), &[]));
        let v6 = NetPattern::parse("[::1]:443").unwrap();
        assert!(v6.matches(addr("[::1]:443"), &[]));
        let name = NetPattern::parse("db.example.org:5432").unwrap();
        assert_eq!(name.host, NetHost::Name("db.example.org".into()));
        let ip: IpAddr = "192.0.2.7".parse().unwrap();
        assert!(name.matches(addr("192.0.2.7:5432"), &[ip]));
        assert!(!name.matches(addr("192.0.2.8:5432"), &[ip]));
        assert!(
            NetPattern::parse("*:*")
                .unwrap()
                .matches(addr("1.2.3.4:5"), &[])
        );
        for bad in [
            "nohost",
            "h:port",
            "1.2.3.4/40:1",
            "h:9-1",
            "bad host:1",
            ":1",
        ] {
            assert!(NetPattern::parse(bad).is_err(), "{bad}");
        }
    }
}
