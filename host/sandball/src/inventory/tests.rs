//! End-to-end tests of [`Inventory`]: sources written to a temporary directory, loaded,
//! then queried the way the executor does.

use super::*;
use serde_json::json;
use std::fs;
use std::path::Path;

/// Writes `files` (relative path, content) under a new directory.
fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, content) in files {
        let path = dir.path().join(name);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, content).unwrap();
    }
    dir
}

fn load(dir: &Path, source: &str) -> Inventory {
    Inventory::load(&[dir.join(source).display().to_string()]).unwrap()
}

fn hosts(inv: &Inventory, pattern: &str) -> Vec<String> {
    inv.select(pattern).unwrap().hosts
}

const INI: &str = "\
solo
[web]
web1 http_port=80
web2
web3
[db]
db1
db2
[prod:children]
web
db
[staging]
web3
stage1
";

fn sample() -> (tempfile::TempDir, Inventory) {
    let dir = tree(&[("hosts", INI)]);
    let inv = load(dir.path(), "hosts");
    (dir, inv)
}

/// `all` is walked as Ansible walks it: its own children (`ungrouped`, then the groups
/// that had no parent: `prod`, `staging`) before their children (`web`, `db`).
const ALL_ORDER: [&str; 7] = ["solo", "web3", "stage1", "web1", "web2", "db1", "db2"];

#[test]
fn all_and_star_list_every_host_in_inventory_order() {
    let (_d, inv) = sample();
    assert_eq!(hosts(&inv, "all"), ALL_ORDER);
    assert_eq!(hosts(&inv, "*"), hosts(&inv, "all"));
    assert_eq!(hosts(&inv, "ungrouped"), ["solo"]);
}

#[test]
fn names_groups_globs_and_regexes() {
    let (_d, inv) = sample();
    assert_eq!(hosts(&inv, "web2"), ["web2"]);
    assert_eq!(hosts(&inv, "prod"), ["web1", "web2", "web3", "db1", "db2"]);
    assert_eq!(hosts(&inv, "web*"), ["web1", "web2", "web3"]);
    assert_eq!(hosts(&inv, "db?"), ["db1", "db2"]);
    assert_eq!(hosts(&inv, "~(web|db)1"), ["web1", "db1"]);
    assert_eq!(hosts(&inv, "~stag"), ["web3", "stage1"]);
}

#[test]
fn unions_intersections_and_exclusions() {
    let (_d, inv) = sample();
    assert_eq!(hosts(&inv, "db:staging"), ["db1", "db2", "web3", "stage1"]);
    assert_eq!(
        hosts(&inv, "db,staging,db1"),
        ["db1", "db2", "web3", "stage1"]
    );
    assert_eq!(hosts(&inv, "web:&staging"), ["web3"]);
    assert_eq!(hosts(&inv, "prod:!web"), ["db1", "db2"]);
    assert_eq!(hosts(&inv, "!web:prod"), ["db1", "db2"]);
    assert_eq!(
        hosts(&inv, "!db"),
        ["solo", "web3", "stage1", "web1", "web2"]
    );
    assert_eq!(hosts(&inv, "&staging"), ["web3", "stage1"]);
}

#[test]
fn subscripts_slice_the_matched_hosts() {
    let (_d, inv) = sample();
    assert_eq!(hosts(&inv, "prod[0]"), ["web1"]);
    assert_eq!(hosts(&inv, "prod[-1]"), ["db2"]);
    assert_eq!(hosts(&inv, "prod[1:3]"), ["web2", "web3", "db1"]);
    assert_eq!(hosts(&inv, "prod[3:]"), ["db1", "db2"]);
    assert_eq!(hosts(&inv, "web[0]:db[1]"), ["web1", "db2"]);
    let err = inv.select("web[7]").unwrap_err().to_string();
    assert_eq!(err, "No hosts matched the subscripted pattern 'web[7]'");
}

#[test]
fn unmatched_patterns_warn() {
    let (_d, inv) = sample();
    let s = inv.select("web:nosuch:!nothing*").unwrap();
    assert_eq!(s.hosts, ["web1", "web2", "web3"]);
    assert_eq!(
        s.warnings,
        [
            "Could not match supplied host pattern, ignoring: nosuch",
            "Could not match supplied host pattern, ignoring: nothing*",
        ]
    );
    assert!(
        inv.select("~(")
            .unwrap_err()
            .to_string()
            .starts_with("Invalid host list pattern")
    );
}

#[test]
fn ipv6_patterns_are_not_split() {
    let inv = Inventory::load(&["[::1]:22,fe80::2,".into()]).unwrap();
    assert_eq!(hosts(&inv, "fe80::2"), ["fe80::2"]);
    assert_eq!(hosts(&inv, "::1"), ["::1"]);
}

#[test]
fn limits_filter_selected_hosts() {
    let (dir, inv) = sample();
    let selected = hosts(&inv, "all");
    assert_eq!(
        inv.apply_limit(&selected, "web:!web2").unwrap().hosts,
        ["web3", "web1"]
    );
    assert_eq!(
        inv.apply_limit(&selected, "db[1],solo").unwrap().hosts,
        ["solo", "db2"]
    );
    let retry = dir.path().join("site.retry");
    fs::write(&retry, "web2\ndb1\n\n").unwrap();
    let limited = inv
        .apply_limit(&selected, &format!("@{}", retry.display()))
        .unwrap();
    assert_eq!(limited.hosts, ["web2", "db1"]);
    let limited = inv.apply_limit(&hosts(&inv, "prod"), "!web2").unwrap();
    assert_eq!(limited.hosts, ["web1", "web3", "db1", "db2"]);
    let err = inv
        .apply_limit(&selected, "@/nonexistent/file")
        .unwrap_err()
        .to_string();
    assert_eq!(err, "Unable to find limit file: /nonexistent/file");
    let err = inv
        .apply_limit(&selected, &format!("@{}", dir.path().display()))
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("Limit starting with \"@\" must be a file")
    );
}

#[test]
fn empty_inventory_offers_only_the_implicit_localhost() {
    let inv = Inventory::load(&[]).unwrap();
    assert_eq!(
        inv.warnings(),
        ["No inventory was parsed, only implicit localhost is available"]
    );
    let all = inv.select("all").unwrap();
    assert!(all.hosts.is_empty());
    assert_eq!(
        all.warnings,
        [
            "provided hosts list is empty, only localhost is available. Note that the implicit localhost does not match 'all'"
        ]
    );
    let local = inv.select("localhost").unwrap();
    assert_eq!(local.hosts, ["localhost"]);
    assert!(local.warnings.is_empty());
    assert_eq!(
        inv.host_vars("localhost")["ansible_connection"],
        json!("local")
    );
    assert_eq!(inv.magic_vars("localhost")["group_names"], json!([]));
    assert!(inv.host_vars("elsewhere").is_empty());
}

#[test]
fn implicit_localhost_is_not_in_all_and_keeps_its_first_name() {
    let (_d, inv) = sample();
    assert_eq!(hosts(&inv, "127.0.0.1"), ["127.0.0.1"]);
    assert_eq!(hosts(&inv, "localhost"), ["127.0.0.1"]);
    let mut expected: Vec<&str> = ALL_ORDER.to_vec();
    expected.push("127.0.0.1");
    assert_eq!(hosts(&inv, "all:localhost"), expected);
    assert!(
        !inv.groups_map()["all"]
            .as_array()
            .unwrap()
            .contains(&json!("127.0.0.1"))
    );
}

#[test]
fn an_inventory_localhost_stands_in_for_the_implicit_one() {
    let inv = Inventory::load(&["localhost,other".into()]).unwrap();
    assert_eq!(hosts(&inv, "127.0.0.1"), ["localhost"]);
    assert!(
        !inv.host_vars("localhost")
            .contains_key("ansible_connection")
    );
}

#[test]
fn groups_map_lists_every_group_with_descendant_hosts() {
    let (_d, inv) = sample();
    let groups = inv.groups_map();
    let keys: Vec<&str> = groups.keys().map(String::as_str).collect();
    assert_eq!(keys, ["all", "ungrouped", "web", "db", "prod", "staging"]);
    assert_eq!(
        groups["prod"],
        json!(["web1", "web2", "web3", "db1", "db2"])
    );
    assert_eq!(groups["ungrouped"], json!(["solo"]));
}

#[test]
fn variables_merge_groups_files_and_host() {
    let dir = tree(&[
        (
            "inv/hosts.yml",
            "\
all:
  vars:
    layer: all_inventory
    from_all: 1
  children:
    prod:
      vars:
        layer: prod_inventory
      children:
        web:
          vars:
            layer: web_inventory
          hosts:
            web1:
              layer: host_inventory
            web2:
",
        ),
        (
            "inv/group_vars/all.yml",
            "layer: all_file\nall_file: true\n",
        ),
        ("inv/group_vars/web/main.yml", "layer: web_file\n"),
        ("inv/host_vars/web2.yml", "layer: host_file\n"),
    ]);
    let inv = load(dir.path(), "inv/hosts.yml");
    let web1 = inv.host_vars("web1");
    // Inventory host vars beat group_vars files; group_vars files beat inventory group vars.
    assert_eq!(web1["layer"], json!("host_inventory"));
    assert_eq!(web1["from_all"], json!(1));
    assert_eq!(web1["all_file"], json!(true));
    assert_eq!(inv.host_vars("web2")["layer"], json!("host_file"));
    let magic = inv.magic_vars("web1");
    assert_eq!(magic["group_names"], json!(["prod", "web"]));
    assert_eq!(
        magic["inventory_file"],
        json!(dir.path().join("inv/hosts.yml").display().to_string())
    );
    assert_eq!(inv.host_vars("localhost")["layer"], json!("all_file"));
}

#[test]
fn group_vars_beside_a_directory_source() {
    let dir = tree(&[
        ("inv/01-hosts.ini", "[web]\nw1\n"),
        ("inv/02-more.yml", "web:\n  hosts:\n    w2:\n"),
        ("inv/group_vars/web.yaml", "port: 8080\n"),
    ]);
    let inv = load(dir.path(), "inv");
    assert_eq!(hosts(&inv, "web"), ["w1", "w2"]);
    assert_eq!(inv.host_vars("w2")["port"], json!(8080));
}

#[test]
fn several_sources_merge_in_order() {
    let dir = tree(&[
        ("a.ini", "[g]\nh1 v=1\n"),
        ("b.yml", "g:\n  hosts:\n    h1:\n      v: 2\n    h2:\n"),
    ]);
    let inv = Inventory::load(&[
        dir.path().join("a.ini").display().to_string(),
        dir.path().join("b.yml").display().to_string(),
        "h3,".into(),
    ])
    .unwrap();
    assert_eq!(hosts(&inv, "all"), ["h3", "h1", "h2"]);
    assert_eq!(inv.host_vars("h1")["v"], json!(2));
}

#[test]
fn select_list_splits_each_item() {
    let (_d, inv) = sample();
    let s = inv
        .select_list(&["web:!web1".into(), "db1".into()])
        .unwrap();
    assert_eq!(s.hosts, ["web2", "web3", "db1"]);
}

/// The shared corpus in `tests/inventories` (see its README).
fn corpus(case: &str) -> Inventory {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/inventories");
    Inventory::load(&[root.join(case).display().to_string()]).unwrap()
}

#[test]
fn corpus_ini() {
    let inv = corpus("ini/hosts.ini");
    assert!(inv.warnings().is_empty(), "{:?}", inv.warnings());
    assert_eq!(
        hosts(&inv, "datacenter"),
        [
            "web01.example.com",
            "web02.example.com",
            "web03.example.com",
            "web-canary.example.com",
            "db-a.example.com",
            "db-b.example.com",
            "db-c.example.com",
            "db-backup.example.com",
        ]
    );
    assert_eq!(
        hosts(&inv, "ungrouped"),
        ["bastion.example.com", "10.0.0.5"]
    );
    assert_eq!(hosts(&inv, "legacy"), ["old1", "old3", "old5"]);
    let web01 = inv.host_vars("web01.example.com");
    assert_eq!(web01["maxconn"], json!(1024));
    assert_eq!(web01["http_port"], json!(80));
    assert_eq!(web01["role"], json!("web"));
    assert_eq!(web01["tls"], json!(true));
    assert_eq!(web01["dns_servers"], json!(["192.0.2.53", "192.0.2.54"]));
    let canary = inv.host_vars("web-canary.example.com");
    assert_eq!(canary["ansible_port"], json!(8022));
    assert_eq!(canary["tags"], json!(["a", "b"]));
    assert_eq!(canary["note"], json!("007"));
    let backup = inv.host_vars("db-backup.example.com");
    assert_eq!(backup["opts"], json!({"replica": true, "lag": null}));
    assert_eq!(backup["retention_days"], json!(30));
    assert_eq!(backup["pg_version"], json!(16));
    assert_eq!(backup["pg_listen"], json!("*"));
    assert_eq!(
        backup["backup_window"],
        json!("01:00-03:00   # kept as text, comment and all")
    );
    assert_eq!(backup["role"], json!("from_group_vars_all"));
    assert_eq!(inv.host_vars("old1")["role"], json!("from_group_vars_all"));
    assert_eq!(
        inv.magic_vars("10.0.0.5")["inventory_hostname_short"],
        json!("10.0.0.5")
    );
}

#[test]
fn corpus_yaml() {
    let inv = corpus("yaml/hosts.yml");
    assert_eq!(
        hosts(&inv, "all"),
        [
            "control.example.com",
            "198.51.100.7",
            "app1.example.com",
            "app2.example.com",
            "app3.example.com",
            "redis1.example.com",
        ]
    );
    // Listed under `ungrouped` while parsing, then `control` joins it when reconciled.
    assert_eq!(
        hosts(&inv, "ungrouped"),
        ["198.51.100.7", "control.example.com"]
    );
    let app1 = inv.host_vars("app1.example.com");
    assert_eq!(app1["settings"], json!({"retries": 5, "verbose": false}));
    assert_eq!(app1["port"], json!(15));
    assert_eq!(app1["release"], json!("2024-05-01"));
    assert_eq!(app1["region"], json!("default"));
    assert_eq!(app1["app_user"], json!("deploy"));
    let app3 = inv.host_vars("app3.example.com");
    assert_eq!(app3["ansible_port"], json!(2200));
    assert_eq!(app3["max_heap"], json!("2g"));
    let ip = inv.host_vars("198.51.100.7");
    assert_eq!(
        (&ip["quoted"], &ip["on_off"]),
        (&json!("yes"), &json!(true))
    );
    assert_eq!(inv.groups_map()["empty_group"], json!([]));
    assert_eq!(
        inv.magic_vars("app1.example.com")["group_names"],
        json!(["app", "app_eu"])
    );
}

#[test]
fn corpus_directory() {
    let inv = corpus("dir");
    assert_eq!(
        hosts(&inv, "logging"),
        ["log1.example.com", "mon1.example.com", "mon2.example.com"]
    );
    let mon2 = inv.host_vars("mon2.example.com");
    assert_eq!(mon2["scrape_interval"], json!(30));
    assert_eq!(mon2["alert_email"], json!("ops@example.com"));
    assert!(inv.warnings().is_empty(), "{:?}", inv.warnings());
}
