//! The module's own logic, run natively through the SDK's `execute` (no HTTP
//! transport there): checksum files parsed as Ansible parses them, file names from
//! URLs, argument checks, and an existing file with a matching checksum left alone
//! without any request. Downloads are compared with ansible-core's module end to
//! end (`tests/tests/get_url.rs`).

use super::{MANIFEST, get_url, parse_digest_lines, url_filename};
use serde_json::json;
use std::fs;

sandball_guest_sdk::module_test_helpers!(MANIFEST, get_url);

#[test]
fn checksum_files_are_read_as_ansible_reads_them() {
    let pairs = |v: Vec<(String, String)>| v;
    assert_eq!(
        pairs(parse_digest_lines("f.tgz", &["abc123"])),
        vec![("abc123".to_string(), "f.tgz".to_string())]
    );
    assert_eq!(
        parse_digest_lines(
            "f.tgz",
            &[
                "abc  f.tgz",
                "def *g.tgz",
                "0a1 ./h.tgz",
                "SHA256 (i.tgz) = 99ff",
                "junk"
            ]
        ),
        vec![
            ("abc".to_string(), "f.tgz".to_string()),
            ("def".to_string(), "g.tgz".to_string()),
            ("0a1".to_string(), "h.tgz".to_string()),
            ("99ff".to_string(), "i.tgz".to_string()),
        ]
    );
}

#[test]
fn file_names_come_from_the_url_path() {
    assert_eq!(url_filename("http://h/a/b.tar.gz?x=1"), "b.tar.gz");
    assert_eq!(url_filename("http://h/"), "index.html");
    assert_eq!(url_filename("http://h"), "index.html");
}

#[test]
fn bad_checksums_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dest = tmp.path().join("f").to_str().unwrap().to_string();
    let msg = fails(json!({"url": "http://127.0.0.1:1/f", "dest": dest, "checksum": "nocolon"}));
    assert_eq!(
        msg,
        "The checksum parameter has to be in format <algorithm>:<checksum>"
    );
    let msg = fails(json!({"url": "http://127.0.0.1:1/f", "dest": dest, "checksum": "sha256:xyz"}));
    assert_eq!(msg, "The checksum format is invalid");
    let msg = fails(json!({"url": "http://127.0.0.1:1/f", "dest": dest, "ciphers": ["AES"]}));
    assert!(msg.contains("ciphers is not supported"), "{msg}");
}

#[test]
fn a_file_with_the_right_checksum_is_not_fetched() {
    let tmp = tempfile::tempdir().unwrap();
    let dest = tmp.path().join("f");
    fs::write(&dest, b"hello\n").unwrap();
    let d = dest.to_str().unwrap();
    // sha256 of "hello\n"; the URL is unreachable, so any request would fail.
    let sum = "sha256:5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03";
    let r = ok(json!({"url": "http://127.0.0.1:1/f", "dest": d, "checksum": sum}));
    assert_eq!(r["msg"], json!("file already exists"));
    assert_eq!(r["changed"], json!(false));
    assert_eq!(r["size"], json!(6));
    let r = ok(json!({"url": "http://127.0.0.1:1/f", "dest": d, "checksum": sum, "mode": "0600"}));
    assert_eq!(
        r["msg"],
        json!("file already exists but file attributes changed")
    );
    assert_eq!(r["changed"], json!(true));
    // A mismatch downloads again (and fails here, with no transport).
    let (r, failed) =
        run(json!({"url": "http://127.0.0.1:1/f", "dest": d, "checksum": "sha256:00ff"}));
    assert!(failed, "{r:?}");
    assert!(
        r["msg"]
            .as_str()
            .unwrap()
            .starts_with("Request failed: <urlopen error"),
        "{r:?}"
    );
    assert_eq!(fs::read(&dest).unwrap(), b"hello\n");
}
