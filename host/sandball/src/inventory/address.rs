//! Host addresses as Ansible's `parse_address` reads them: a hostname, IPv4 or IPv6
//! address, optionally with `[x:y]` ranges, and an optional port (`host:22`, `[::1]:22`).

use regex::Regex;
use std::sync::LazyLock;

const NUMERIC_RANGE: &str = r"\[(?:[0-9]+:[0-9]+)(?::[0-9]+)?\]";
const HEX_RANGE: &str = r"\[(?:[0-9a-f]+:[0-9a-f]+)(?::[0-9]+)?\]";
const ALNUM_RANGE: &str = r"\[(?:[a-z]:[a-z]|[0-9]+:[0-9]+)(?::[0-9]+)?\]";

struct Patterns {
    bracketed_hostport: Regex,
    hostport: Regex,
    ipv4: Regex,
    ipv6: Regex,
    hostname: Regex,
}

static PATTERNS: LazyLock<Patterns> = LazyLock::new(|| {
    let v4 = format!(r"(?:[01]?[0-9]{{1,2}}|2[0-4][0-9]|25[0-5]|{NUMERIC_RANGE})");
    let c = format!(r"(?:[0-9a-f]{{1,4}}|{HEX_RANGE})");
    // Each alternative is anchored at the start only and the last one also at the end,
    // exactly as Ansible's pattern (an unparenthesised alternation) behaves with `match`.
    let ipv6 = [
        format!("(?:{c}:){{7}}{c}"),
        format!("(?:{c}:){{1,6}}:"),
        format!("(?:{c}:)(?::{c}){{1,6}}"),
        format!("(?:{c}:){{2}}(?::{c}){{1,5}}"),
        format!("(?:{c}:){{3}}(?::{c}){{1,4}}"),
        format!("(?:{c}:){{4}}(?::{c}){{1,3}}"),
        format!("(?:{c}:){{5}}(?::{c}){{1,2}}"),
        format!("(?:{c}:){{6}}(?::{c})"),
        format!(":(?::{c}){{1,6}}"),
        format!("{c}?::"),
        format!(r"(?:0:){{6}}(?:{c}\.){{3}}{c}"),
        format!(r"::(?:ffff:)?(?:{c}\.){{3}}{c}"),
        format!(r"(?:0:){{5}}ffff:(?:{c}\.){{3}}{c}$"),
    ]
    .join("|");
    // A label starts with a word character or a range, continues with word characters,
    // dashes or ranges, and does not end with a dash or an underscore.
    let r = ALNUM_RANGE;
    let label = format!(r"(?:(?:\w|{r})(?:[\w-]|{r})*(?:[^\W_]|{r})|[^\W_]|{r})");
    let build = |p: &str| Regex::new(p).expect("static regex");
    Patterns {
        bracketed_hostport: build(r"^\[(.+)\]:([0-9]+)$"),
        hostport: build(r"^((?:[^:\[\]]|\[[^\]]*\])*):([0-9]+)$"),
        ipv4: build(&format!(r"(?i)^(?:{v4}\.){{3}}{v4}$")),
        ipv6: build(&format!("(?i)^(?:{ipv6})")),
        hostname: build(&format!(r"(?i)^{label}(?:\.{label})*$")),
    }
});

/// Why a string is not a host address.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum AddressError {
    /// Not a hostname, IPv4 or IPv6 address.
    #[error("Not a valid network hostname: {0}")]
    NotAHost(String),
    /// A valid address with a `[x:y]` range where ranges are not allowed.
    #[error("Detected range in host but was asked to ignore ranges")]
    Range,
}

/// Splits `address` into host and port. Ranges (`web[1:3]`) are accepted only when
/// `allow_ranges`; an IPv6 address takes a port only in brackets (`[::1]:22`).
pub fn parse_address(
    address: &str,
    allow_ranges: bool,
) -> Result<(String, Option<u64>), AddressError> {
    let p = &*PATTERNS;
    let mut address = address.to_string();
    let mut port = None;
    for re in [&p.bracketed_hostport, &p.hostport] {
        let parts = re
            .captures(&address)
            .map(|c| (c[1].to_string(), c[2].parse::<u64>().ok()));
        if let Some((host, number)) = parts {
            address = host;
            port = Some(number.ok_or_else(|| AddressError::NotAHost(address.clone()))?);
        }
    }
    if !(p.ipv4.is_match(&address) || p.ipv6.is_match(&address) || p.hostname.is_match(&address)) {
        return Err(AddressError::NotAHost(address));
    }
    if !allow_ranges && address.contains('[') {
        return Err(AddressError::Range);
    }
    Ok((address, port))
}

/// Whether `name` reads as an IPv4 or IPv6 address (so `inventory_hostname_short` keeps it whole).
pub fn is_ip_address(name: &str) -> bool {
    PATTERNS.ipv4.is_match(name) || PATTERNS.ipv6.is_match(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(a: &str, ranges: bool) -> (String, Option<u64>) {
        parse_address(a, ranges).unwrap()
    }

    #[test]
    fn hostnames_and_ports() {
        assert_eq!(
            ok("web1.example.com", false),
            ("web1.example.com".into(), None)
        );
        assert_eq!(ok("db:2200", false), ("db".into(), Some(2200)));
        assert_eq!(ok("10.0.0.1:22", false), ("10.0.0.1".into(), Some(22)));
        assert_eq!(ok("_svc", false), ("_svc".into(), None));
        assert!(parse_address("bad_", false).is_err());
        assert!(parse_address("-x-", false).is_err());
        assert!(parse_address("a b", false).is_err());
        assert!(parse_address("web*", false).is_err());
        assert_eq!(ok("héllo", false), ("héllo".into(), None));
    }

    #[test]
    fn ipv6_needs_brackets_for_a_port() {
        assert_eq!(ok("::1", false), ("::1".into(), None));
        assert_eq!(ok("[::1]:2222", false), ("::1".into(), Some(2222)));
        assert_eq!(ok("fe80::1:22", false), ("fe80::1:22".into(), None));
        assert!(parse_address("[::1]", false).is_err());
        assert_eq!(
            ok("2001:db8::ff00:42:8329", false).0,
            "2001:db8::ff00:42:8329"
        );
    }

    #[test]
    fn ranges_only_when_allowed() {
        assert_eq!(
            ok("web[01:10].example.com", true),
            ("web[01:10].example.com".into(), None)
        );
        assert_eq!(ok("db-[a:f]:2222", true), ("db-[a:f]".into(), Some(2222)));
        assert_eq!(ok("10.0.0.[1:5]", true).0, "10.0.0.[1:5]");
        assert_eq!(parse_address("web[1:3]", false), Err(AddressError::Range));
        assert!(parse_address("g[0]", true).is_err());
    }

    #[test]
    fn ip_detection_for_short_names() {
        assert!(is_ip_address("192.168.1.10"));
        assert!(is_ip_address("::1"));
        assert!(!is_ip_address("web1.example.com"));
    }
}
