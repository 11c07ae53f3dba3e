//! `network`: interfaces (`/sys/class/net`), their addresses (IPv4 from the host
//! interface's getifaddrs, IPv6 from the `net/if_inet6` table), the default IPv4 and
//! IPv6 routes (`net/route`, `net/ipv6_route`), the locally reachable addresses
//! (`net/fib_trie`'s local table, the IPv6 addresses), and `fibre_channel_wwn`.

use crate::util::{basename, read};
use sandball_guest_sdk::host;
use sandball_guest_sdk::prelude::*;
use std::net::{Ipv4Addr, Ipv6Addr};

/// `fibre_channel_wwn`: the port names of `/sys/class/fc_host`.
pub fn fibre_channel_wwn(facts: &mut Map<String, Value>) {
    let mut wwns = Vec::new();
    if let Ok(hosts) = std::fs::read_dir("/sys/class/fc_host") {
        for h in hosts.filter_map(|e| e.ok()) {
            let path = format!(
                "/sys/class/fc_host/{}/port_name",
                h.file_name().to_string_lossy()
            );
            if let Some(name) = read(&path) {
                wwns.push(json!(name.trim_start_matches("0x")));
            }
        }
    }
    facts.insert("fibre_channel_wwn".into(), Value::Array(wwns));
}

/// `iscsi_iqn`: the initiator name of `/etc/iscsi/initiatorname.iscsi`, or empty.
pub fn iscsi(facts: &mut Map<String, Value>) {
    let iqn = crate::util::read_raw("/etc/iscsi/initiatorname.iscsi")
        .lines()
        .find_map(|l| {
            l.strip_prefix("InitiatorName=")
                .map(|v| v.trim().to_string())
        })
        .unwrap_or_default();
    facts.insert("iscsi_iqn".into(), json!(iqn));
}

/// `hostnqn`: the NVMe host name of `/etc/nvme/hostnqn`, or empty.
pub fn nvme(facts: &mut Map<String, Value>) {
    let nqn = read("/etc/nvme/hostnqn").unwrap_or_default();
    facts.insert("hostnqn".into(), json!(nqn));
}

/// The kind of interface a `/sys/class/net/*/type` number names.
fn interface_type(number: &str) -> &'static str {
    match number {
        "1" => "ether",
        "32" => "infiniband",
        "512" => "ppp",
        "772" => "loopback",
        "65534" => "tunnel",
        _ => "unknown",
    }
}

/// One interface's facts from sysfs.
fn interface(device: &str) -> Map<String, Value> {
    let path = format!("/sys/class/net/{device}");
    let get = |f: &str| read(&format!("{path}/{f}"));
    let mut i = json_map!({"device": device});
    if let Some(mac) = get("address").filter(|m| !m.is_empty() && m != "00:00:00:00:00:00") {
        i.insert("macaddress".into(), json!(mac));
    }
    if let Some(mtu) = get("mtu").and_then(|m| m.parse::<i64>().ok()) {
        i.insert("mtu".into(), json!(mtu));
    }
    if let Some(state) = get("operstate") {
        i.insert("active".into(), json!(state != "down"));
    }
    if let Ok(target) = host::readlink(&format!("{path}/device/driver/module")) {
        i.insert("module".into(), json!(basename(&target)));
    }
    if let Some(t) = get("type") {
        i.insert("type".into(), json!(interface_type(&t)));
    }
    if crate::util::exists(&format!("{path}/bridge")) {
        i.insert("type".into(), json!("bridge"));
        let mut members: Vec<String> = std::fs::read_dir(format!("{path}/brif"))
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        members.sort();
        i.insert("interfaces".into(), json!(members));
        if let Some(id) = get("bridge/bridge_id") {
            i.insert("id".into(), json!(id));
        }
        if let Some(stp) = get("bridge/stp_state") {
            i.insert("stp".into(), json!(stp == "1"));
        }
    }
    if let Ok(target) = host::readlink(&format!("{path}/device")) {
        i.insert("pciid".into(), json!(basename(&target)));
    }
    if let Some(speed) = get("speed").and_then(|s| s.parse::<i64>().ok()) {
        i.insert("speed".into(), json!(speed));
    }
    if let Some(flags) =
        get("flags").and_then(|f| i64::from_str_radix(f.trim_start_matches("0x"), 16).ok())
    {
        i.insert("promisc".into(), json!(flags & 0x100 != 0));
    }
    i
}

/// The prefix length of a netmask.
fn prefix_of(mask: &str) -> u32 {
    mask.parse::<Ipv4Addr>()
        .map(|m| u32::from(m).count_ones())
        .unwrap_or(0)
}

/// The IPv6 addresses of `net/if_inet6`: (interface, address, prefix, scope).
fn ipv6_addresses(table: &str) -> Vec<(String, String, String, String)> {
    table
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let [hex, _, prefix, scope, _, name] = f[..] else {
                return None;
            };
            let bytes = u128::from_str_radix(hex, 16).ok()?;
            let address = Ipv6Addr::from(bytes).to_string();
            let prefix = u32::from_str_radix(prefix, 16).ok()?.to_string();
            let scope = match u32::from_str_radix(scope, 16).ok()? & 0xf0 {
                0x00 => "global",
                0x10 => "host",
                0x20 => "link",
                0x40 => "site",
                _ => "unknown",
            };
            Some((name.to_string(), address, prefix, scope.to_string()))
        })
        .collect()
}

/// The local IPv4 routes of `net/fib_trie` (its `Local:` table when the kernel shows
/// the tables apart): `127.0.0.0/8`, `127.0.0.1`… as `ip route show table local`
/// names them.
fn local_v4_routes(fib_trie: &str) -> Vec<String> {
    let section = match fib_trie.split_once("\nLocal:\n") {
        Some((_, local)) => local,
        None => fib_trie.strip_prefix("Local:\n").unwrap_or(fib_trie),
    };
    let mut out: Vec<String> = Vec::new();
    let mut leaf = "";
    for line in section.lines() {
        let t = line.trim();
        if let Some(addr) = t.strip_prefix("|-- ") {
            leaf = addr;
        } else if let Some(rest) = t.strip_prefix('/')
            && rest.ends_with(" LOCAL")
        {
            let plen = rest.split_whitespace().next().unwrap_or("32");
            let route = if plen == "32" {
                leaf.to_string()
            } else {
                format!("{leaf}/{plen}")
            };
            if !out.contains(&route) {
                out.push(route);
            }
        } else if !t.starts_with('+') && !t.is_empty() && !t.starts_with('/') {
            // Another table's header ends the section.
            break;
        }
    }
    out
}

/// The interface and gateway of the default IPv4 route with the lowest metric.
fn default_v4_route(table: &str) -> Option<(String, String)> {
    table
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.len() < 8 || f[1] != "00000000" || f[7] != "00000000" {
                return None;
            }
            let gw = u32::from_str_radix(f[2], 16).ok()?;
            let metric: u64 = f[6].parse().ok()?;
            let gateway = Ipv4Addr::from(gw.swap_bytes()).to_string();
            Some((metric, f[0].to_string(), gateway))
        })
        .min_by_key(|(m, _, _)| *m)
        .map(|(_, i, g)| (i, g))
}

/// The interface and gateway of the default IPv6 route with the lowest metric.
fn default_v6_route(table: &str) -> Option<(String, String)> {
    table
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.len() < 10 || f[0] != "0".repeat(32) || f[1] != "00" || f[4] == "0".repeat(32) {
                return None;
            }
            if f[9] == "lo" {
                return None;
            }
            let metric = u32::from_str_radix(f[5], 16).ok()?;
            let gateway = Ipv6Addr::from(u128::from_str_radix(f[4], 16).ok()?).to_string();
            Some((metric, f[9].to_string(), gateway))
        })
        .min_by_key(|(m, _, _)| *m)
        .map(|(_, i, g)| (i, g))
}

/// Adds interfaces, per-interface facts, addresses and the default routes.
pub fn collect(facts: &mut Map<String, Value>) {
    let mut devices: Vec<String> = std::fs::read_dir("/sys/class/net")
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| {
                    std::fs::metadata(format!("/sys/class/net/{n}")).is_ok_and(|m| m.is_dir())
                })
                .collect()
        })
        .unwrap_or_default();
    devices.sort();
    let mut interfaces: Vec<(String, Map<String, Value>)> =
        devices.iter().map(|d| (d.clone(), interface(d))).collect();
    let mut all_v4 = Vec::new();
    let mut all_v6 = Vec::new();
    for a in host::addresses()
        .unwrap_or_default()
        .iter()
        .filter(|a| a.family == 4)
    {
        let device = a.name.split(':').next().unwrap_or_default();
        let Some((_, i)) = interfaces.iter_mut().find(|(d, _)| d == device) else {
            continue;
        };
        let prefix = prefix_of(&a.netmask);
        let network = a
            .address
            .parse::<Ipv4Addr>()
            .ok()
            .zip(a.netmask.parse::<Ipv4Addr>().ok())
            .map(|(addr, mask)| Ipv4Addr::from(u32::from(addr) & u32::from(mask)).to_string())
            .unwrap_or_default();
        let broadcast = if a.flags & 0x2 != 0 {
            a.broadcast.clone()
        } else {
            String::new()
        };
        let entry = json!({
            "address": a.address,
            "broadcast": broadcast,
            "netmask": a.netmask,
            "network": network,
            "prefix": prefix.to_string(),
        });
        if i.contains_key("ipv4") {
            let list = i.entry("ipv4_secondaries").or_insert_with(|| json!([]));
            if let Value::Array(items) = list {
                items.push(entry);
            }
        } else {
            i.insert("ipv4".into(), entry);
        }
        if !a.address.starts_with("127.") {
            all_v4.push(json!(a.address));
        }
    }
    for (name, address, prefix, scope) in
        ipv6_addresses(&host::table("net/if_inet6").unwrap_or_default())
    {
        let Some((_, i)) = interfaces.iter_mut().find(|(d, _)| *d == name) else {
            continue;
        };
        let list = i.entry("ipv6").or_insert_with(|| json!([]));
        if let Value::Array(items) = list {
            items.push(json!({"address": address, "prefix": prefix, "scope": scope}));
        }
        if address != "::1" {
            all_v6.push(json!(address));
        }
    }
    let find = |name: &str| interfaces.iter().find(|(d, _)| d == name).map(|(_, i)| i);
    let mut default_v4 = Map::new();
    if let Some((iface, gateway)) = default_v4_route(&host::table("net/route").unwrap_or_default())
        && let Some(i) = find(&iface)
    {
        if let Some(Value::Object(v4)) = i.get("ipv4") {
            default_v4.extend(v4.clone());
        }
        default_v4.insert("gateway".into(), json!(gateway));
        default_v4.insert("interface".into(), json!(iface));
        default_v4.insert("alias".into(), json!(iface));
        for key in ["macaddress", "mtu", "type"] {
            if let Some(v) = i.get(key) {
                default_v4.insert(key.into(), v.clone());
            }
        }
    }
    let mut default_v6 = Map::new();
    if let Some((iface, gateway)) =
        default_v6_route(&host::table("net/ipv6_route").unwrap_or_default())
        && let Some(i) = find(&iface)
    {
        let global = i
            .get("ipv6")
            .and_then(Value::as_array)
            .and_then(|l| l.iter().find(|a| a["scope"] == json!("global")).cloned());
        if let Some(Value::Object(v6)) = global {
            default_v6.extend(v6);
        }
        default_v6.insert("gateway".into(), json!(gateway));
        default_v6.insert("interface".into(), json!(iface));
        for key in ["macaddress", "mtu", "type"] {
            if let Some(v) = i.get(key) {
                default_v6.insert(key.into(), v.clone());
            }
        }
    }
    let mut local_v6: Vec<String> = Vec::new();
    for (_, address, _, _) in ipv6_addresses(&host::table("net/if_inet6").unwrap_or_default()) {
        if !local_v6.contains(&address) {
            local_v6.push(address);
        }
    }
    facts.insert(
        "locally_reachable_ips".into(),
        json!({
            "ipv4": local_v4_routes(&host::table("net/fib_trie").unwrap_or_default()),
            "ipv6": local_v6,
        }),
    );
    facts.insert("interfaces".into(), json!(devices));
    for (device, i) in interfaces {
        facts.insert(device.replace(['-', ':'], "_"), Value::Object(i));
    }
    facts.insert("default_ipv4".into(), Value::Object(default_v4));
    facts.insert("default_ipv6".into(), Value::Object(default_v6));
    facts.insert("all_ipv4_addresses".into(), Value::Array(all_v4));
    facts.insert("all_ipv6_addresses".into(), Value::Array(all_v6));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_and_inet6_tables_parse() {
        let route = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n\
                     eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n\
                     eth0\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n";
        assert_eq!(
            default_v4_route(route),
            Some(("eth0".to_string(), "192.0.2.1".to_string()))
        );
        let v6 = "00000000000000000000000000000000 00 00000000000000000000000000000000 00 fd000000000000000000000000000001 00000400 00000001 00000000 00000003     eth0\n";
        assert_eq!(
            default_v6_route(v6),
            Some(("eth0".to_string(), "fd00::1".to_string()))
        );
        let inet6 = "fd000000000000000000000000000002 02 40 00 00     eth0\n00000000000000000000000000000001 01 80 10 80       lo\n";
        assert_eq!(
            ipv6_addresses(inet6),
            vec![
                (
                    "eth0".into(),
                    "fd00::2".into(),
                    "64".into(),
                    "global".into()
                ),
                ("lo".into(), "::1".into(), "128".into(), "host".into())
            ]
        );
        assert_eq!(prefix_of("255.255.255.0"), 24);
        let trie = "Main:\n  +-- 0.0.0.0/0 3 0 5\n     |-- 192.0.2.2\n        /32 host LOCAL\nLocal:\n  +-- 0.0.0.0/0 3 0 5\n     +-- 127.0.0.0/8 2 0 2\n           |-- 127.0.0.0\n              /8 host LOCAL\n           |-- 127.0.0.1\n              /32 host LOCAL\n        |-- 127.255.255.255\n           /32 link BROADCAST\n     |-- 192.0.2.2\n        /32 host LOCAL\n";
        assert_eq!(
            local_v4_routes(trie),
            vec!["127.0.0.0/8", "127.0.0.1", "192.0.2.2"]
        );
        assert_eq!(interface_type("772"), "loopback");
    }
}
