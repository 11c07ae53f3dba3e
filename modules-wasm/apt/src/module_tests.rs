//! The module's pieces that need no package manager (command-line words, diffs,
//! specs) and its refusals and argument checks, run natively through `execute`.

use super::{MANIFEST, apt, expand_dpkg_options, package_split, parse_diff};
use sandball_guest_sdk::json;

sandball_guest_sdk::module_test_helpers!(MANIFEST, apt);

#[test]
fn specs_split_into_name_comparison_and_version() {
    assert_eq!(package_split("hello"), ("hello".into(), None, None));
    assert_eq!(
        package_split("hello=2.10*"),
        ("hello".into(), Some("="), Some("2.10*".into()))
    );
    assert_eq!(
        package_split("hello>=2.9"),
        ("hello".into(), Some(">="), Some("2.9".into()))
    );
}

#[test]
fn dpkg_options_become_apt_get_options() {
    assert_eq!(
        expand_dpkg_options("force-confdef,force-confold"),
        "-o \"Dpkg::Options::=--force-confdef\" -o \"Dpkg::Options::=--force-confold\""
    );
}

#[test]
fn the_diff_is_what_apt_get_says_between_its_markers() {
    let out = "Reading package lists...\nBuilding dependency tree...\nReading state information...\nThe following NEW packages will be installed:\n  hello\n0 upgraded, 1 newly installed, 0 to remove and 3 not upgraded.\nInst hello (2.10-3 Debian:12/stable [amd64])\n";
    assert_eq!(
        parse_diff(out),
        json!({"prepared": "The following NEW packages will be installed:\n  hello\n0 upgraded, 1 newly installed, 0 to remove and 3 not upgraded."})
    );
    assert_eq!(parse_diff("a\nb"), json!({"prepared": "a\nb"}));
}

#[test]
fn what_is_not_carried_out_is_refused_by_name() {
    let msg = fails(json!({"name": "hello", "state": "build-dep"}));
    assert!(msg.contains("state=build-dep"), "{msg}");
    let msg = fails(json!({"upgrade": "dist"}));
    assert!(msg.contains("upgrade=dist"), "{msg}");
    let msg = fails(json!({"name": "hello", "policy_rc_d": 101}));
    assert!(msg.contains("policy_rc_d"), "{msg}");
    let msg = fails(json!({"deb": "https://example.com/x.deb"}));
    assert!(msg.contains("deb with a URL"), "{msg}");
    let msg = fails(json!({"name": "*", "state": "latest"}));
    assert!(msg.contains("name='*'"), "{msg}");
    let msg = fails(json!({"name": "hello", "deb": "/x.deb"}));
    assert!(msg.contains("mutually exclusive"), "{msg}");
    let msg = fails(json!({"name": ["a==1"]}));
    assert_eq!(msg, "invalid package spec: a==1");
}
