//! The `setup` module: the facts ansible-core's `setup` gathers on Linux, as
//! `ansible_facts` with the same names (`ansible_` prefix) and shapes, read from files
//! under `/proc`, `/sys` and `/etc` and from the sandball host interface (uname, ids,
//! time zone, addresses, mount and route tables, marker files). The only programs it
//! runs are the node's Python 3 with a fixed script, for the `python` facts ([`python`]),
//! and executable local facts, only those the task grants.
//!
//! `gather_subset` is resolved as ansible-core resolves it ([`subset`]), `filter` globs
//! the first-level names, `fact_path` holds local facts ([`local`]), `gather_timeout`
//! bounds the whole gathering (collectors not started in time are skipped with a
//! warning). What differs from ansible-core, and why, is listed in docs/MODULES.md
//! ("setup and facts").

mod datetime;
mod hardware;
mod local;
mod network;
mod python;
mod subset;
mod system;
mod util;
mod virt;

use sandball_guest_sdk::prelude::*;
use std::time::{Duration, Instant};

sandball_guest_sdk::manifest!("../manifest.json");

fn main() {
    sandball_guest_sdk::run_with_paths(MANIFEST, setup);
}

/// The facts of one collector, added to `facts` (names without the `ansible_` prefix).
fn collect(name: &str, facts: &mut Map<String, Value>, m: &mut Module) {
    match name {
        "platform" => {
            system::platform(facts);
            python::version(facts);
        }
        "distribution" => system::distribution(facts),
        "lsb" => system::lsb(facts),
        "selinux" => system::selinux(facts),
        "apparmor" => system::apparmor(facts),
        "fips" => system::fips(facts),
        "python" => python::collect(facts),
        // Not gathered: caps and systemd run `capsh` and `systemctl`, chroot compares
        // `/` with pid 1's root (both outside the grant), facter and ohai run programs
        // that are not part of the node's base system (docs/MODULES.md: setup and facts).
        "caps" | "systemd" | "chroot" | "facter" | "ohai" => {}
        "iscsi" => network::iscsi(facts),
        "nvme" => network::nvme(facts),
        "pkg_mgr" => system::pkg_mgr(facts),
        "service_mgr" => system::service_mgr(facts),
        "cmdline" => system::cmdline(facts),
        "date_time" => datetime::collect(facts),
        "env" => system::env(facts),
        "loadavg" => system::loadavg(facts),
        "ssh_pub_keys" => system::ssh_pub_keys(facts),
        "user" => system::user(facts),
        "dns" => system::dns(facts),
        "fibre_channel_wwn" => network::fibre_channel_wwn(facts),
        "network" => network::collect(facts),
        "hardware" => hardware::collect(facts),
        "virtual" => virt::collect(facts),
        "local" => {
            let path = m.get_str("fact_path").unwrap_or_default().to_string();
            local::collect(&path, facts, m);
        }
        _ => {}
    }
}

/// Whether `name` matches one of the `filter` globs (no globs: everything matches). A
/// glob not starting with `ansible_`, `facter` or `ohai` also matches with `ansible_`
/// put before it, as ansible-core's filter does (`date_time` keeps `ansible_date_time`).
fn kept(name: &str, filters: &[String]) -> bool {
    use sandball_pycompat::fnmatch::fnmatch;
    filters.is_empty()
        || filters.iter().any(|f| {
            f.is_empty()
                || f == "*"
                || fnmatch(f, name)
                || (!["ansible_", "facter", "ohai"]
                    .iter()
                    .any(|p| f.starts_with(p))
                    && fnmatch(&format!("ansible_{f}"), name))
        })
}

/// The module body.
fn setup(m: &mut Module) -> Result<Map<String, Value>, Fail> {
    let requested = m.get_str_list("gather_subset");
    let collectors = subset::resolve(&requested).map_err(Fail::new)?;
    // As in ansible-core, 0 (or nothing) means the default of 10 seconds.
    let timeout = m
        .get_int("gather_timeout")
        .filter(|t| *t != 0)
        .unwrap_or(10);
    let deadline = Duration::from_secs(u64::try_from(timeout).unwrap_or(0));
    let filters = m.get_str_list("filter");
    let started = Instant::now();
    let mut facts = Map::new();
    for name in subset::ORDER.iter().filter(|n| collectors.contains(**n)) {
        if started.elapsed() > deadline {
            m.warn(format!(
                "Gathering the {name} facts was skipped: gather_timeout ({timeout}s) was reached"
            ));
            continue;
        }
        collect(name, &mut facts, m);
    }
    let mut out = Map::new();
    for (key, value) in facts {
        let key = format!("ansible_{key}");
        if kept(&key, &filters) {
            out.insert(key, value);
        }
    }
    let meta = [
        ("gather_subset", json!(requested)),
        ("module_setup", json!(true)),
    ];
    for (key, value) in meta {
        if kept(key, &filters) {
            out.insert(key.to_string(), value);
        }
    }
    Ok(json_map!({"ansible_facts": out}))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gather(args: Value) -> sandball_guest_sdk::Outcome {
        sandball_guest_sdk::execute(
            MANIFEST,
            args.to_string().as_bytes(),
            &|n| std::env::var(n).ok(),
            setup,
        )
    }

    #[test]
    fn min_subset_has_the_minimal_facts_only() {
        let out = gather(json!({"gather_subset": ["!all"]}));
        let facts = out.result["ansible_facts"].as_object().unwrap();
        for key in [
            "ansible_system",
            "ansible_distribution",
            "ansible_user_id",
            "ansible_date_time",
            "ansible_pkg_mgr",
            "ansible_service_mgr",
            "ansible_fips",
        ] {
            assert!(facts.contains_key(key), "{key} missing: {facts:?}");
        }
        for key in [
            "ansible_interfaces",
            "ansible_mounts",
            "ansible_virtualization_type",
        ] {
            assert!(!facts.contains_key(key), "{key} present");
        }
        assert_eq!(facts["gather_subset"], json!(["!all"]));
        assert_eq!(facts["module_setup"], json!(true));
    }

    #[test]
    fn filter_keeps_matching_first_level_names() {
        let out = gather(json!({"filter": ["ansible_*_mb"]}));
        let facts = out.result["ansible_facts"].as_object().unwrap();
        assert!(facts.contains_key("ansible_memtotal_mb"), "{facts:?}");
        assert!(facts.keys().all(|k| k.ends_with("_mb")), "{facts:?}");
    }

    #[test]
    fn filter_without_the_prefix_matches_prefixed_names() {
        let out = gather(json!({"filter": ["date_time", "user_i?"]}));
        let facts = out.result["ansible_facts"].as_object().unwrap();
        let mut keys: Vec<&str> = facts.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["ansible_date_time", "ansible_user_id"]);
    }

    #[test]
    fn bad_subsets_fail_with_the_list_of_valid_ones() {
        let out = gather(json!({"gather_subset": ["nonsense"]}));
        assert!(out.failed);
        let msg = out.result["msg"].as_str().unwrap();
        assert!(
            msg.starts_with(
                "Bad subset 'nonsense' given to Ansible. gather_subset options allowed: all, "
            ),
            "{msg}"
        );
    }
}
