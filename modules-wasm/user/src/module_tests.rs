//! Behaviour of the module run natively, on what it can do without changing the
//! machine: an existing account left alone, check mode, the refusals, the password
//! warning and the expiry dates. Adding, changing and removing accounts is compared
//! with ansible-core end to end (`tests/tests/users_groups.rs`).

use super::{MANIFEST, expiry_date, looks_unhashed, parent_dir, user};
use serde_json::{Value, json};

sandball_guest_sdk::module_test_helpers!(MANIFEST, user);

#[test]
fn root_as_it_is_is_unchanged() {
    let r = ok(json!({"name": "root", "uid": 0, "group": "0", "home": "/root"}));
    assert_eq!(r["changed"], json!(false));
    assert_eq!(r["uid"], json!(0));
    assert_eq!(r["group"], json!(0));
    assert_eq!(r["home"], json!("/root"));
    assert_eq!(r["append"], json!(false));
}

#[test]
fn check_mode_says_changed_and_nothing_more() {
    let mut r = ok(json!({"name": "sbt_never_made", "_ansible_check_mode": true}));
    r.remove("invocation");
    assert_eq!(Value::Object(r), json!({"changed": true}));
    let r = ok(json!({"name": "root", "shell": "/bin/false", "_ansible_check_mode": true}));
    assert_eq!(r["changed"], json!(true));
    assert_eq!(r["shell"], json!("/bin/bash"));
}

#[test]
fn options_not_implemented_are_refused_by_name() {
    for (option, value) in [
        ("generate_ssh_key", json!(true)),
        ("local", json!(true)),
        ("login_class", json!("staff")),
        ("hidden", json!(true)),
        ("role", json!("r")),
    ] {
        let mut args = json!({"name": "sbt_never_made"});
        args[option] = value;
        let msg = fails(args);
        assert!(msg.starts_with(&format!("{option}: ")), "{msg}");
    }
    // false is not asking for anything.
    let r = ok(json!({"name": "root", "generate_ssh_key": false, "local": false}));
    assert_eq!(r["changed"], json!(false));
}

#[test]
fn a_missing_group_is_named() {
    assert_eq!(
        fails(json!({"name": "root", "groups": ["sbt_no_such_group"]})),
        "Group sbt_no_such_group does not exist"
    );
}

#[test]
fn passwords_that_are_not_hashes_are_told_apart() {
    let sha512 = format!("$6$salt${}", "a".repeat(86));
    assert!(!looks_unhashed(&sha512));
    assert!(!looks_unhashed("!"));
    assert!(looks_unhashed("secret"));
    assert!(looks_unhashed("$6$salt$short"));
    assert!(looks_unhashed(&format!("$5$salt${}", "a".repeat(42))));
    let (r, failed) =
        run(json!({"name": "root", "password": "secret", "_ansible_check_mode": true}));
    assert!(!failed);
    assert_eq!(r["password"], json!("NOT_LOGGING_PASSWORD"));
    assert!(
        r["warnings"][0]
            .as_str()
            .unwrap()
            .contains("not to have been hashed")
    );
    assert!(!serde_json::to_string(&r).unwrap().contains("secret\""));
}

#[test]
fn expiry_dates_and_parents() {
    assert_eq!(expiry_date(0.0), "1970-01-01");
    assert_eq!(expiry_date(1_700_000_000.5), "2023-11-14");
    assert_eq!(expiry_date(-1.0), "");
    assert_eq!(parent_dir("/home/a"), "/home");
    assert_eq!(parent_dir("/a"), "/");
}
