//! Behaviour of the module run natively, on what it can do without changing the
//! machine: existing groups left alone, check mode and the refusals. Adding, changing and removing groups is compared with ansible-core
//! end to end (`tests/tests/users_groups.rs`).

use super::{MANIFEST, group};
use serde_json::{Value, json};

sandball_guest_sdk::module_test_helpers!(MANIFEST, group);

/// The result of a run that must succeed, without `invocation`.
fn bare(args: Value) -> Value {
    let mut r = ok(args);
    r.remove("invocation");
    Value::Object(r)
}

#[test]
fn an_existing_group_with_its_gid_is_unchanged() {
    assert_eq!(
        bare(json!({"name": "root", "gid": 0})),
        json!({"name": "root", "state": "present", "changed": false, "system": false, "gid": 0})
    );
}

#[test]
fn check_mode_says_changed_and_nothing_more() {
    let made = bare(json!({"name": "sbt_never_made", "_ansible_check_mode": true}));
    assert_eq!(made, json!({"changed": true}));
    let removed = bare(json!({"name": "root", "state": "absent", "_ansible_check_mode": true}));
    assert_eq!(removed, json!({"changed": true}));
    let r = ok(json!({"name": "root", "gid": 4242, "_ansible_check_mode": true}));
    assert_eq!(
        (r["changed"].clone(), r["gid"].clone()),
        (json!(true), json!(0))
    );
    assert_eq!(
        bare(json!({"name": "sbt_never_made", "state": "absent"})),
        json!({"name": "sbt_never_made", "state": "absent", "changed": false})
    );
}

#[test]
fn local_and_bad_combinations_are_refused() {
    assert!(fails(json!({"name": "g", "local": true})).contains("local: true is not supported"));
    assert_eq!(
        fails(json!({"name": "g", "local": true, "force": true})),
        "force is not a valid option for local, force=True and local=True are mutually exclusive"
    );
    assert_eq!(
        fails(json!({"name": "g", "local": true, "gid_max": 5})),
        "'gid_max' can not be used with 'local'"
    );
    assert_eq!(
        fails(json!({"name": "g", "non_unique": true})),
        "non_unique is True but all of the following are missing: gid"
    );
}
