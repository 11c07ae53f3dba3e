//! Behaviour of the module run natively, without changing the machine's name: the
//! current name left as it is, check mode with another name (a diff, nothing
//! written), and the strategies refused.

use super::{MANIFEST, hostname};
use serde_json::json;

sandball_guest_sdk::module_test_helpers!(MANIFEST, hostname);

fn permanent() -> String {
    std::fs::read_to_string("/etc/hostname")
        .unwrap_or_default()
        .trim()
        .to_string()
}

#[test]
fn the_name_it_has_is_unchanged() {
    let name = permanent();
    if name.is_empty() {
        return;
    }
    let r = ok(json!({"name": name, "use": "alpine"}));
    assert_eq!(r["changed"], json!(false));
    assert_eq!(r["ansible_facts"]["ansible_nodename"], json!(name));
    assert!(r.get("diff").is_none());
}

#[test]
fn check_mode_tells_the_change_and_writes_nothing() {
    let before = permanent();
    let r =
        ok(json!({"name": "sbt-other.example.org", "use": "alpine", "_ansible_check_mode": true}));
    assert_eq!(r["changed"], json!(true));
    assert_eq!(r["ansible_facts"]["ansible_hostname"], json!("sbt-other"));
    assert_eq!(
        r["diff"],
        json!({"before": format!("hostname = {before}\n"), "after": "hostname = sbt-other.example.org\n"})
    );
    assert_eq!(permanent(), before);
}

#[test]
fn other_strategies_are_refused_by_name() {
    for use_ in ["redhat", "freebsd", "openrc", "generic"] {
        let msg = fails(json!({"name": "x", "use": use_}));
        assert!(
            msg.starts_with(&format!("use: {use_} is not supported")),
            "{msg}"
        );
    }
}
