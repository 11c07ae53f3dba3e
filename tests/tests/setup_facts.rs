//! The built-in `setup` component against ansible-core's `setup` on this machine:
//! every top-level fact of both, compared key by key, with the differences allowed
//! listed below and why; then gather_subset, filter and fact_path scenarios, and fact
//! gathering in a play with no ansible-core on the controller.
//!
//! The comparisons need ansible-core (`ANSIBLE_BIN_DIR`, set by `make test`); without
//! it they only check sandball's own results.

use sandball_e2e::Sandbox;
use serde_json::{Map, Value};
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::Command;

/// Facts that change between two gatherings a second apart: compared by shape (the
/// same keys), not value.
const VOLATILE: &[&str] = &[
    "ansible_date_time",
    "ansible_uptime_seconds",
    "ansible_memfree_mb",
    "ansible_memory_mb",
    "ansible_loadavg",
];

/// Facts sandball's component does not gather, and why (docs/MODULES.md, setup and facts):
/// - system_capabilities(_enforced): ansible-core runs `capsh`; the component runs
///   no program;
/// - is_chroot: needs `stat` of `/` and of pid 1's root, outside the grant.
const NOT_GATHERED: &[&str] = &[
    "ansible_system_capabilities",
    "ansible_system_capabilities_enforced",
    "ansible_is_chroot",
];

/// Lists whose order is the order of a directory or a Python set: compared sorted.
const UNORDERED: &[&str] = &[
    "ansible_interfaces",
    "ansible_virtualization_tech_guest",
    "ansible_virtualization_tech_host",
    "ansible_all_ipv4_addresses",
    "ansible_all_ipv6_addresses",
];

fn ansible_bin() -> Option<PathBuf> {
    std::env::var_os("ANSIBLE_BIN_DIR").map(PathBuf::from)
}

/// The `ansible_facts` of an ad-hoc `setup` run's output (`localhost | SUCCESS => {…}`).
fn facts_of(stdout: &str) -> Map<String, Value> {
    let json = stdout
        .split_once("=> ")
        .map(|(_, j)| j)
        .unwrap_or_else(|| panic!("no result in: {stdout}"));
    let v: Value = serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {json}"));
    v["ansible_facts"]
        .as_object()
        .unwrap_or_else(|| panic!("no ansible_facts: {v}"))
        .clone()
}

/// sandball's setup facts for `args` (ad hoc, on localhost).
fn sandball_facts(sb: &Sandbox, args: &str) -> (Map<String, Value>, String) {
    let out = sb
        .sandball(["run", "localhost", "-m", "setup", "-a", args])
        .run();
    out.assert_no_panic().assert_code(0);
    (facts_of(&out.stdout), out.stdout)
}

/// The node's Python the component describes; ansible-core's setup runs under it, so
/// that both describe the same interpreter.
const NODE_PYTHON: &str = "/usr/bin/python3";

/// The Python ansible-core's setup runs under: the node's [`NODE_PYTHON`] when there
/// is one (then both tools describe it), else the venv's.
fn oracle_python(bin: &std::path::Path) -> PathBuf {
    if std::path::Path::new(NODE_PYTHON).exists() {
        PathBuf::from(NODE_PYTHON)
    } else {
        bin.join("python")
    }
}

/// ansible-core's setup facts for `args` (run by [`oracle_python`]), or `None`
/// without ansible-core.
fn ansible_facts(sb: &Sandbox, args: &str) -> Option<Map<String, Value>> {
    let bin = ansible_bin()?;
    let out = Command::new(bin.join("ansible"))
        .args(["localhost", "-c", "local", "-m", "setup", "-a", args])
        // The implicit localhost would otherwise run the controller's Python.
        .args([
            "-e",
            &format!(
                "ansible_python_interpreter={}",
                oracle_python(&bin).display()
            ),
        ])
        .current_dir(sb.path())
        .env("ANSIBLE_HOME", sb.path().join("ansible-home"))
        .env("ANSIBLE_LOCAL_TEMP", sb.path().join("ansible-local"))
        .env("ANSIBLE_NOCOLOR", "1")
        .env("ANSIBLE_LOCALHOST_WARNING", "0")
        .output()
        .expect("ansible runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "ansible failed: {stdout}");
    Some(facts_of(&stdout))
}

fn sorted(v: &Value) -> Value {
    let mut items: Vec<String> = v
        .as_array()
        .map(|a| a.iter().map(Value::to_string).collect())
        .unwrap_or_default();
    items.sort();
    Value::from(items)
}

/// The keys of an object, sorted.
fn keys(v: &Value) -> Vec<String> {
    let mut k: Vec<String> = v
        .as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default();
    k.sort();
    k
}

/// One fact compared; `None` when equal as allowed, else what differs.
fn differs(key: &str, ours: &Value, theirs: &Value) -> Option<String> {
    let same = if VOLATILE.contains(&key) {
        keys(ours) == keys(theirs) && ours.is_object() == theirs.is_object()
    } else if UNORDERED.contains(&key) {
        sorted(ours) == sorted(theirs)
    } else if key == "ansible_env" {
        // The component sees only the variables its grant passes (and the shim keeps);
        // those must have ansible-core's values.
        ours.as_object()
            .is_some_and(|o| o.iter().all(|(k, v)| theirs.get(k) == Some(v)))
    } else if key == "ansible_locally_reachable_ips" {
        // IPv6 in kernel order vs `ip` order.
        ours["ipv4"] == theirs["ipv4"] && sorted(&ours["ipv6"]) == sorted(&theirs["ipv6"])
    } else if key == "ansible_mounts" {
        // Free space moves; the mounts, devices, types, options and sizes must not.
        let stable = |v: &Value| {
            let mut m: Vec<String> = v
                .as_array()
                .into_iter()
                .flatten()
                .map(|m| {
                    let f = |k: &str| m.get(k).map(Value::to_string).unwrap_or_default();
                    [
                        "mount",
                        "device",
                        "fstype",
                        "options",
                        "dump",
                        "passno",
                        "size_total",
                        "block_size",
                        "block_total",
                        "inode_total",
                        "uuid",
                    ]
                    .iter()
                    .map(|k| f(k))
                    .collect::<Vec<_>>()
                    .join(" ")
                })
                .collect();
            m.sort();
            m
        };
        stable(ours) == stable(theirs)
    } else if ours.get("ipv6").is_some() || theirs.get("ipv6").is_some() {
        // A per-interface fact: IPv6 addresses in kernel order vs `ip` order.
        let strip = |v: &Value| {
            let mut v = v.clone();
            if let Some(o) = v.as_object_mut() {
                let list = o.remove("ipv6").unwrap_or(Value::Null);
                o.insert("ipv6".into(), sorted(&list));
            }
            v
        };
        strip(ours) == strip(theirs)
    } else {
        ours == theirs
    };
    (!same).then(|| format!("{key}:\n  sandball: {ours}\n  ansible:  {theirs}"))
}

/// Every top-level key of both, compared; the list of differences not allowed.
fn compare(ours: &Map<String, Value>, theirs: &Map<String, Value>) -> Vec<String> {
    let mut problems = Vec::new();
    for (key, value) in theirs {
        if NOT_GATHERED.contains(&key.as_str()) || key == "discovered_interpreter_python" {
            continue;
        }
        // Without a node Python, sandball has no python facts and ansible-core
        // describes the venv's: nothing to compare.
        let python_fact = key == "ansible_python" || key == "ansible_python_version";
        if python_fact && !std::path::Path::new(NODE_PYTHON).exists() {
            continue;
        }
        match ours.get(key) {
            None => problems.push(format!("{key}: missing from sandball's facts")),
            Some(v) => problems.extend(differs(key, v, value)),
        }
    }
    for key in ours.keys() {
        if !theirs.contains_key(key) {
            problems.push(format!("{key}: only in sandball's facts"));
        }
    }
    problems
}

#[test]
fn every_fact_matches_ansible_core_but_the_documented_ones() {
    let sb = Sandbox::new();
    let (ours, _) = sandball_facts(&sb, "");
    // What must be there whatever the comparison says.
    for key in [
        "ansible_distribution",
        "ansible_os_family",
        "ansible_kernel",
        "ansible_machine_id",
        "ansible_hostname",
        "ansible_user_id",
        "ansible_interfaces",
        "ansible_default_ipv4",
        "ansible_processor_vcpus",
        "ansible_memtotal_mb",
        "ansible_mounts",
        "ansible_virtualization_type",
        "ansible_service_mgr",
        "ansible_pkg_mgr",
        "ansible_uptime_seconds",
    ] {
        assert!(ours.contains_key(key), "{key} missing: {ours:?}");
    }
    assert_eq!(ours["gather_subset"], serde_json::json!(["all"]));
    assert_eq!(
        ours.get("ansible_python").map(|p| p["executable"].clone()),
        std::path::Path::new(NODE_PYTHON)
            .exists()
            .then(|| serde_json::json!(NODE_PYTHON)),
        "the python fact describes the node's {NODE_PYTHON}"
    );
    let Some(theirs) = ansible_facts(&sb, "") else {
        return;
    };
    let problems = compare(&ours, &theirs);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // Nothing documented as not gathered slipped in with a wrong value.
    for key in NOT_GATHERED {
        assert!(!ours.contains_key(*key), "{key} present");
    }
}

#[test]
fn subsets_and_filters_select_the_same_facts_as_ansible_core() {
    let sb = Sandbox::new();
    for args in [
        "gather_subset=!all",
        "gather_subset=!all,!min",
        "gather_subset=!all,network",
        "gather_subset=!all,hardware",
        "gather_subset=!all,virtual",
        "gather_subset=all,!hardware,!network",
        "gather_subset=!all,!min,mounts",
        "filter=ansible_*_mb",
        "filter=ansible_eth[0-9],ansible_lo",
        "gather_subset=!all filter=ansible_distribution*",
    ] {
        let (ours, _) = sandball_facts(&sb, args);
        assert!(
            ours.contains_key("module_setup") || args.contains("filter"),
            "{args}: {ours:?}"
        );
        if args == "gather_subset=!all" {
            assert!(!ours.contains_key("ansible_interfaces"), "{args}");
            assert!(ours.contains_key("ansible_user_id"), "{args}");
        }
        if args == "filter=ansible_*_mb" {
            assert!(ours.keys().all(|k| k.ends_with("_mb")), "{args}: {ours:?}");
            assert!(ours.contains_key("ansible_memtotal_mb"), "{args}");
        }
        let Some(theirs) = ansible_facts(&sb, args) else {
            continue;
        };
        let mut want: Vec<&String> = theirs
            .keys()
            .filter(|k| {
                !NOT_GATHERED.contains(&k.as_str()) && *k != "discovered_interpreter_python"
            })
            .collect();
        want.sort();
        let mut got: Vec<&String> = ours.keys().collect();
        got.sort();
        assert_eq!(got, want, "{args}");
    }
    let out = sb
        .sandball([
            "run",
            "localhost",
            "-m",
            "setup",
            "-a",
            "gather_subset=bogus",
        ])
        .run();
    out.assert_no_panic();
    assert!(
        out.stdout
            .contains("Bad subset 'bogus' given to Ansible. gather_subset options allowed: all, "),
        "{out}"
    );
}

#[test]
fn local_facts_from_json_ini_and_granted_scripts() {
    let sb = Sandbox::new();
    let facts = sb.dir("facts.d");
    std::fs::write(
        facts.join("app.fact"),
        r#"{"version": "1.2", "tags": ["a"]}"#,
    )
    .unwrap();
    std::fs::write(facts.join("site.fact"), "[General]\nName = edge\n").unwrap();
    std::fs::write(facts.join("broken.fact"), "not json, not ini\n").unwrap();
    let script = facts.join("dyn.fact");
    std::fs::write(&script, "#!/bin/sh\necho '{\"from\": \"script\"}'\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let args = format!(
        "gather_subset=!all filter=ansible_local fact_path={}",
        facts.display()
    );
    // The script runs, as ansible-core runs it: setup is granted to run the `*.fact`
    // files of its fact_path (those files themselves, not what a link there names).
    let out = sb
        .sandball(["run", "localhost", "-m", "setup", "-a", &args])
        .run();
    out.assert_no_panic().assert_code(0);
    let stdout = out.stdout.clone();
    let ours = facts_of(&stdout);
    let local = &ours["ansible_local"];
    assert_eq!(
        local["app"],
        serde_json::json!({"version": "1.2", "tags": ["a"]})
    );
    assert_eq!(
        local["site"],
        serde_json::json!({"General": {"name": "edge"}})
    );
    assert_eq!(
        local["broken"],
        serde_json::json!(format!(
            "error loading facts as JSON or ini - please check content: {}/broken.fact",
            facts.display()
        ))
    );
    assert_eq!(
        local["dyn"],
        serde_json::json!({"from": "script"}),
        "{stdout}"
    );
    if let Some(theirs) = ansible_facts(&sb, &args) {
        let theirs = &theirs["ansible_local"];
        for name in ["app", "site", "broken", "dyn"] {
            assert_eq!(local[name], theirs[name], "{name}");
        }
    }
    // A link there to a program elsewhere is not run: a denial, named.
    std::os::unix::fs::symlink("/bin/echo", facts.join("echo.fact")).unwrap();
    let out = sb
        .sandball(["run", "localhost", "-m", "setup", "-a", &args])
        .run();
    out.assert_no_panic().assert_code(2);
    assert!(
        out.stdout.contains("echo.fact") && out.stdout.contains("denied"),
        "{out}"
    );
}

#[test]
fn a_play_gathers_facts_with_no_ansible_core() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    let pb = sb.write(
        "play.yml",
        "- hosts: all\n  gather_subset: ['!all', 'network']\n  tasks:\n    - debug:\n        msg: \"{{ ansible_os_family }} {{ ansible_interfaces | length > 0 }} {{ ansible_mounts is defined }}\"\n",
    );
    let out = sb
        .play(&pb, &sb.dir("work"), &[])
        .env("SANDBALL_ANSIBLE_PYTHON", "/nonexistent")
        .env("SANDBALL_ANSIBLE_CORE", "/nonexistent")
        .run();
    out.assert_no_panic().assert_code(0);
    assert!(out.stdout.contains("TASK [Gathering Facts]"), "{out}");
    let family = facts_of_local_family();
    assert!(
        out.stdout
            .contains(&format!("\"msg\": \"{family} True False\"")),
        "{out}"
    );
    // With the legacy module forced and no ansible-core, the gathering fails clearly.
    let out = sb
        .play(
            &pb,
            &sb.dir("work"),
            &["-e", "sandball_legacy_modules=setup"],
        )
        .env("SANDBALL_ANSIBLE_PYTHON", "/nonexistent")
        .env("SANDBALL_ANSIBLE_CORE", "/nonexistent")
        .run();
    out.assert_no_panic();
    assert_ne!(out.code, 0, "{out}");
    assert!(out.stdout.contains("fatal: [localhost]"), "{out}");
}

/// The os_family of this machine, read independently of sandball.
fn facts_of_local_family() -> String {
    let os = std::fs::read_to_string("/etc/os-release").unwrap_or_default();
    let id_like = os
        .lines()
        .find_map(|l| l.strip_prefix("ID_LIKE="))
        .unwrap_or_default()
        .trim_matches('"')
        .to_string();
    let id = os
        .lines()
        .find_map(|l| l.strip_prefix("ID="))
        .unwrap_or_default()
        .trim_matches('"')
        .to_string();
    if id == "debian" || id_like.contains("debian") {
        "Debian".into()
    } else if id_like.contains("rhel") || id_like.contains("fedora") {
        "RedHat".into()
    } else {
        id
    }
}
