//! Behaviour of the whole module, run natively on temporary files through the SDK's
//! `execute`: adding, replacing and removing keys, hashed names (checked by their
//! HMAC), patterns, check mode, diffs and the errors, as Ansible's known_hosts behaves.

use super::{Entry, MANIFEST, hmac_sha1, known_hosts};
use serde_json::{Value, json};
use std::fs;

sandball_guest_sdk::module_test_helpers!(MANIFEST, known_hosts);

const ED1: &str =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGYCcJSkkdz6N52zMhCqDPiyLe1hztS9mR5ETcvnpFQM";
const ED2: &str =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB4cK7jsotLkgFI3AMMPqxVBKdDfloJMx6qNIjQL+vL5";

/// A fresh directory and the path of a known_hosts file in it.
fn file() -> (tempfile::TempDir, String) {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("known_hosts").to_str().unwrap().to_string();
    (tmp, path)
}

fn with_path(path: &str, mut args: Value) -> Value {
    args["path"] = json!(path);
    args
}

#[test]
fn hmac_sha1_is_rfc_2202() {
    let mac = hmac_sha1(b"Jefe", b"what do ya want for nothing?");
    let hex: String = mac.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(hex, "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79");
}

#[test]
fn patterns_match_as_openssh_does() {
    let e = Entry::parse(&format!("*.lan,!bad.lan {ED1}")).unwrap();
    assert!(e.names("good.lan"));
    assert!(!e.names("bad.lan"));
    assert!(!e.names("other"));
    assert!(e.valid());
    assert!(!Entry::parse("h ssh-ed25519 AAAA").unwrap().valid());
}

#[test]
fn a_key_is_added_once_and_replaced_when_it_changes() {
    let (_tmp, path) = file();
    let r = ok(with_path(
        &path,
        json!({"name": "Host.Example", "key": format!("host.example {ED1}")}),
    ));
    assert_eq!(r["changed"], json!(true));
    assert_eq!(r["name"], json!("Host.Example"));
    assert_eq!(r["state"], json!("file"));
    assert_eq!(r["diff"]["before_header"], json!("/dev/null"));
    assert_eq!(r["diff"]["after"], json!(format!("host.example {ED1}\n")));
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        format!("host.example {ED1}\n")
    );
    let r = ok(with_path(
        &path,
        json!({"name": "host.example", "key": format!("host.example {ED1}")}),
    ));
    assert_eq!(r["changed"], json!(false));
    // Another key of the same type replaces the line.
    fs::write(&path, format!("# c\nhost.example {ED1}\nother {ED1}\n")).unwrap();
    let r = ok(with_path(
        &path,
        json!({"name": "host.example", "key": format!("host.example {ED2}")}),
    ));
    assert_eq!(r["changed"], json!(true));
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        format!("# c\nother {ED1}\nhost.example {ED2}\n")
    );
    // Check mode says so and writes nothing.
    let (r, failed) = {
        let mut args = with_path(
            &path,
            json!({"name": "host.example", "key": format!("host.example {ED1}")}),
        );
        args["_ansible_check_mode"] = json!(true);
        run(args)
    };
    assert!(!failed);
    assert_eq!(r["changed"], json!(true));
    assert_eq!(
        r.get("name"),
        None,
        "Ansible's check mode gives changed and diff only"
    );
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        format!("# c\nother {ED1}\nhost.example {ED2}\n")
    );
}

#[test]
fn hashed_names_verify_and_stay_hashed() {
    let (_tmp, path) = file();
    let args = with_path(
        &path,
        json!({"name": "other", "key": format!("other {ED2}"), "hash_host": true}),
    );
    let r = ok(args.clone());
    assert_eq!(r["changed"], json!(true));
    let text = fs::read_to_string(&path).unwrap();
    let entry = Entry::parse(&text).unwrap();
    assert!(entry.hosts.starts_with("|1|"), "{text}");
    assert!(entry.names("other") && !entry.names("another"), "{text}");
    assert_eq!(format!("{} {}", entry.kind, entry.key), ED2);
    // Again: the same key under a hashed name is no change, whatever the new salt.
    let r = ok(args);
    assert_eq!(r["changed"], json!(false));
    assert_eq!(fs::read_to_string(&path).unwrap(), text);
}

#[test]
fn absent_removes_one_key_or_every_line_of_the_host() {
    let (_tmp, path) = file();
    let original = format!("a {ED1}\nb {ED1}\n@cert-authority a {ED2}\na,c {ED2}\n");
    fs::write(&path, &original).unwrap();
    let r = ok(with_path(
        &path,
        json!({"name": "a", "key": format!("a {ED2}"), "state": "absent"}),
    ));
    // The line with the same type (the first) goes: Ansible's lookup.
    assert_eq!(r["changed"], json!(true));
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        format!("b {ED1}\n@cert-authority a {ED2}\na,c {ED2}\n")
    );
    let r = ok(with_path(
        &path,
        json!({"name": "zzz", "key": format!("zzz {ED2}"), "state": "absent"}),
    ));
    assert_eq!(r["changed"], json!(false));
    let before = fs::read_to_string(&path).unwrap();
    let r = ok(with_path(&path, json!({"name": "a", "state": "absent"})));
    assert_eq!(r["changed"], json!(true));
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        format!("b {ED1}\n@cert-authority a {ED2}\n")
    );
    assert_eq!(fs::read_to_string(format!("{path}.old")).unwrap(), before);
    // Only the @cert-authority line names it now: ssh-keygen -F finds it, -R keeps
    // it, and Ansible still reports a change.
    fs::remove_file(format!("{path}.old")).unwrap();
    let r = ok(with_path(&path, json!({"name": "a", "state": "absent"})));
    assert_eq!(r["changed"], json!(true));
    assert!(fs::metadata(format!("{path}.old")).is_err());
    let r = ok(with_path(&path, json!({"name": "zzz", "state": "absent"})));
    assert_eq!(r["changed"], json!(false));
}

#[test]
fn bad_input_is_named() {
    let (_tmp, path) = file();
    let msg = fails(with_path(&path, json!({"name": "a"})));
    assert_eq!(msg, "No key specified when adding a host");
    let msg = fails(with_path(
        &path,
        json!({"name": "a,b", "key": format!("a {ED1}")}),
    ));
    assert!(
        msg.starts_with("Comma separated list of names is not supported."),
        "{msg}"
    );
    // A key whose host field is not the host (or that OpenSSH would not read).
    for args in [
        json!({"name": "a", "key": format!("b {ED1}")}),
        json!({"name": "a", "key": "a ssh-ed25519 notbase64"}),
        json!({"name": "a", "key": "a", "hash_host": true}),
    ] {
        let msg = fails(with_path(&path, args));
        assert_eq!(
            msg,
            "Host parameter does not match hashed host field in supplied key"
        );
    }
    let msg = fails(with_path(
        &path,
        json!({"name": "a", "key": " ", "hash_host": true}),
    ));
    assert!(msg.contains("not a known_hosts line"), "{msg}");
}
