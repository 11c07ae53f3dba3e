//! Behaviour of the whole module, run natively on this machine's getent: the shapes
//! of the facts per database, repeated first fields, `split`, and the failures.

use super::{MANIFEST, entries, getent};
use serde_json::json;

sandball_guest_sdk::module_test_helpers!(MANIFEST, getent);

#[test]
fn passwd_entries_are_split_on_colons() {
    let r = ok(json!({"database": "passwd", "key": "root"}));
    let root = &r["ansible_facts"]["getent_passwd"]["root"];
    assert_eq!(root[0], json!("x"));
    assert_eq!(root[1], json!("0"));
    assert_eq!(root[2], json!("0"));
    assert_eq!(root.as_array().unwrap().len(), 6, "{root}");
    assert_eq!(r["changed"], json!(false));
}

#[test]
fn a_whole_database_is_every_entry() {
    let r = ok(json!({"database": "group"}));
    let groups = r["ansible_facts"]["getent_group"].as_object().unwrap();
    assert_eq!(groups["root"][1], json!("0"));
    assert!(groups.len() > 1, "{groups:?}");
}

#[test]
fn other_databases_split_on_whitespace_unless_told() {
    let text = "127.0.0.1       localhost\n::1  localhost ip6-localhost\n10.0.0.1\tgw gateway\n";
    let tree = entries(text, None);
    assert_eq!(
        serde_json::Value::Object(tree),
        json!({"127.0.0.1": ["localhost"], "::1": ["localhost", "ip6-localhost"], "10.0.0.1": ["gw", "gateway"]})
    );
    let tree = entries("a b:c\n", Some(":"));
    assert_eq!(serde_json::Value::Object(tree), json!({"a b": ["c"]}));
}

#[test]
fn a_repeated_first_field_gathers_its_entries_in_a_list() {
    let tree = entries("k:1\nk:2\nother:x\nk:3\n", Some(":"));
    assert_eq!(
        serde_json::Value::Object(tree),
        json!({"k": [["1"], ["2"], ["3"]], "other": ["x"]})
    );
}

#[test]
fn a_missing_key_fails_unless_fail_key_is_false() {
    let key = "sandball-no-such-user-here";
    assert_eq!(
        fails(json!({"database": "passwd", "key": key})),
        "One or more supplied key could not be found in the database."
    );
    let r = ok(json!({"database": "passwd", "key": key, "fail_key": false}));
    assert_eq!(r["ansible_facts"]["getent_passwd"][key], json!(null));
    assert_eq!(
        r["msg"],
        json!("One or more supplied key could not be found in the database.")
    );
}

#[test]
fn an_unknown_database_or_an_empty_split_fails() {
    assert_eq!(
        fails(json!({"database": "nonsense"})),
        "Missing arguments, or database unknown."
    );
    assert_eq!(
        fails(json!({"database": "passwd", "split": ""})),
        "split: the separator is empty"
    );
    assert!(fails(json!({})).contains("database"));
}
