//! `gather_subset` resolved to collector names as ansible-core resolves it: `min` is
//! always gathered unless `!min`; `all` adds every subset, `!all` takes away all but
//! `min`; `!name` takes away a collector (and the fact names it provides), a name asked
//! for explicitly wins over an exclusion; fact names (`mounts`, `interfaces`…) select
//! the collector that provides them; collectors others need are added.

use std::collections::BTreeSet;

/// Every collector, in the order ansible-core runs them on Linux.
pub const ORDER: &[&str] = &[
    "platform",
    "distribution",
    "lsb",
    "selinux",
    "apparmor",
    "chroot",
    "fips",
    "python",
    "caps",
    "pkg_mgr",
    "service_mgr",
    "cmdline",
    "date_time",
    "env",
    "loadavg",
    "ssh_pub_keys",
    "user",
    "systemd",
    "virtual",
    "hardware",
    "dns",
    "fibre_channel_wwn",
    "network",
    "iscsi",
    "nvme",
    "local",
    "facter",
    "ohai",
];

/// What `min` (and `!all`) gathers.
const MINIMAL: &[&str] = &[
    "apparmor",
    "caps",
    "cmdline",
    "date_time",
    "distribution",
    "dns",
    "env",
    "fips",
    "local",
    "lsb",
    "pkg_mgr",
    "platform",
    "python",
    "selinux",
    "service_mgr",
    "ssh_pub_keys",
    "user",
];

/// The fact names each collector provides, which are subsets of their own.
const FACT_IDS: &[(&str, &[&str])] = &[
    (
        "hardware",
        &[
            "devices",
            "mounts",
            "processor",
            "processor_cores",
            "processor_count",
        ],
    ),
    ("chroot", &["is_chroot"]),
    (
        "virtual",
        &[
            "virtualization_role",
            "virtualization_tech_guest",
            "virtualization_tech_host",
            "virtualization_type",
        ],
    ),
    (
        "ssh_pub_keys",
        &[
            "ssh_host_key_dsa_public",
            "ssh_host_key_ecdsa_public",
            "ssh_host_key_ed25519_public",
            "ssh_host_key_rsa_public",
            "ssh_host_pub_keys",
        ],
    ),
    (
        "caps",
        &["system_capabilities", "system_capabilities_enforced"],
    ),
    ("facter", &["facter"]),
    (
        "network",
        &[
            "all_ipv4_addresses",
            "all_ipv6_addresses",
            "default_ipv4",
            "default_ipv6",
            "interfaces",
        ],
    ),
    (
        "distribution",
        &[
            "distribution_major_version",
            "distribution_release",
            "distribution_version",
            "os_family",
        ],
    ),
    (
        "platform",
        &[
            "architecture",
            "kernel",
            "kernel_version",
            "machine",
            "machine_id",
            "python_version",
            "system",
        ],
    ),
    (
        "user",
        &[
            "effective_group_ids",
            "effective_user_id",
            "real_user_id",
            "user_dir",
            "user_gecos",
            "user_gid",
            "user_id",
            "user_shell",
            "user_uid",
        ],
    ),
];

/// Collectors that need the facts of others.
const REQUIRES: &[(&str, &[&str])] = &[
    ("hardware", &["platform"]),
    ("pkg_mgr", &["distribution"]),
    ("network", &["distribution", "platform"]),
    ("service_mgr", &["distribution", "platform"]),
];

/// The collector that provides a subset name (itself for a collector).
fn collector_of(name: &str) -> Option<&'static str> {
    if let Some(c) = ORDER.iter().find(|c| **c == name) {
        return Some(c);
    }
    FACT_IDS
        .iter()
        .find(|(_, ids)| ids.contains(&name))
        .map(|(c, _)| *c)
}

/// Every valid subset name: collectors and the fact names they provide.
fn valid() -> BTreeSet<&'static str> {
    ORDER
        .iter()
        .copied()
        .chain(FACT_IDS.iter().flat_map(|(_, ids)| ids.iter().copied()))
        .collect()
}

/// The collectors to run for a `gather_subset` list, or the error ansible-core gives.
pub fn resolve(gather_subset: &[String]) -> Result<BTreeSet<&'static str>, String> {
    let valid = valid();
    let minimal: BTreeSet<&str> = MINIMAL.iter().copied().collect();
    let requested: Vec<&str> = if gather_subset.is_empty() {
        vec!["all"]
    } else {
        gather_subset.iter().map(String::as_str).collect()
    };
    let mut added: BTreeSet<String> = BTreeSet::new();
    let mut excluded: BTreeSet<String> = BTreeSet::new();
    let mut explicit: BTreeSet<String> = BTreeSet::new();
    for subset in std::iter::once("min").chain(requested) {
        match subset {
            "min" => added.extend(minimal.iter().map(|s| s.to_string())),
            "all" => added.extend(valid.iter().map(|s| s.to_string())),
            "!min" => excluded.extend(minimal.iter().map(|s| s.to_string())),
            "!all" => excluded.extend(valid.difference(&minimal).map(|s| s.to_string())),
            other => match other.strip_prefix('!') {
                Some(name) => {
                    if let Some((_, ids)) = FACT_IDS.iter().find(|(c, _)| *c == name) {
                        excluded.extend(ids.iter().map(|s| s.to_string()));
                    }
                    excluded.insert(name.to_string());
                }
                None if valid.contains(other) => {
                    explicit.insert(other.to_string());
                    added.insert(other.to_string());
                }
                None => {
                    return Err(format!(
                        "Bad subset '{other}' given to Ansible. gather_subset options allowed: all, {}",
                        valid.iter().copied().collect::<Vec<_>>().join(", ")
                    ));
                }
            },
        }
    }
    let mut collectors: BTreeSet<&'static str> = added
        .iter()
        .filter(|s| !excluded.contains(*s) || explicit.contains(*s))
        .filter_map(|s| collector_of(s))
        .collect();
    let mut pending: Vec<&'static str> = collectors.iter().copied().collect();
    while let Some(c) = pending.pop() {
        for (_, needs) in REQUIRES.iter().filter(|(n, _)| *n == c) {
            for need in needs.iter() {
                if collectors.insert(need) {
                    pending.push(need);
                }
            }
        }
    }
    Ok(collectors)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(spec: &[&str]) -> Vec<&'static str> {
        let spec: Vec<String> = spec.iter().map(|s| s.to_string()).collect();
        resolve(&spec).unwrap().into_iter().collect()
    }

    #[test]
    fn all_min_and_exclusions_resolve_as_ansible_does() {
        assert_eq!(names(&["all"]).len(), ORDER.len());
        let mut min = MINIMAL.to_vec();
        min.sort();
        assert_eq!(names(&["!all"]), min);
        assert_eq!(names(&["min"]), min);
        assert!(names(&["!all", "!min"]).is_empty());
        let no_hw = names(&["all", "!hardware"]);
        assert!(!no_hw.contains(&"hardware") && no_hw.contains(&"network"));
        let net = names(&["!all", "network"]);
        assert!(net.contains(&"network") && !net.contains(&"virtual"));
        assert!(names(&["!all", "!min", "pkg_mgr"]).contains(&"distribution"));
        assert_eq!(
            names(&["!all", "!min", "mounts"]),
            vec!["hardware", "platform"]
        );
        // Asked for by name, a collector wins over its exclusion.
        assert!(names(&["!virtual", "virtual"]).contains(&"virtual"));
        assert!(!names(&["!facter", "!ohai"]).contains(&"facter"));
    }

    #[test]
    fn unknown_subsets_are_refused() {
        let err = resolve(&["bogus".to_string()]).unwrap_err();
        assert!(
            err.starts_with("Bad subset 'bogus' given to Ansible. gather_subset options allowed: all, all_ipv4_addresses, all_ipv6_addresses, apparmor,"),
            "{err}"
        );
    }
}
