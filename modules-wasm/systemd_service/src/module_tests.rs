//! Behaviour of the whole module, run natively through the SDK's `execute`: argument
//! checks and refusals that need no systemd, as ansible-core's module words them.

use super::{MANIFEST, systemd_service};
use sandball_guest_sdk::json;

sandball_guest_sdk::module_test_helpers!(MANIFEST, systemd_service);

#[test]
fn bad_arguments_fail_with_the_modules_words() {
    assert_eq!(
        fails(json!({"name": "ss*", "state": "started"})),
        "This module does not currently support using glob patterns, found '*' in service name: ss*"
    );
    assert_eq!(
        fails(json!({"name": "a[b]", "enabled": true})),
        "This module does not currently support using glob patterns, found '[' in service name: a[b]"
    );
    let msg = fails(json!({"state": "started"}));
    assert!(msg.contains("state") && msg.contains("name"), "{msg}");
    let msg = fails(json!({"name": "x", "state": "running"}));
    assert!(
        msg.contains("reloaded, restarted, started, stopped"),
        "{msg}"
    );
    let msg = fails(json!({"name": "x", "state": "started", "scope": "user"}));
    assert!(msg.contains("scope=user"), "{msg}");
}

#[test]
fn nothing_to_do_but_a_daemon_reload_in_check_mode() {
    let r = ok(json!({"daemon_reload": true, "_ansible_check_mode": true}));
    assert_eq!(r["changed"], json!(false));
    assert_eq!(r["name"], json!(null));
    assert_eq!(r["status"], json!({}));
}
