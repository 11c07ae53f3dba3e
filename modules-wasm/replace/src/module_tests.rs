//! Behaviour of the whole module, run natively on temporary files through the SDK's
//! `execute`: multiline replacement, groups, after/before sections, check mode,
//! backups, encodings and the errors, as Ansible's replace behaves.

use super::{MANIFEST, replace};
use serde_json::{Map, Value, json};
use std::fs;

sandball_guest_sdk::module_test_helpers!(MANIFEST, replace);

/// Writes `before` to a fresh file, runs the module with `args` (plus `path`) and
/// returns the result, whether it failed, and the file's new bytes.
fn edit(before: &[u8], args: Value) -> (Map<String, Value>, bool, Vec<u8>) {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("f");
    fs::write(&path, before).unwrap();
    let mut args = args;
    args["path"] = json!(path.to_str().unwrap());
    let (r, failed) = run(args);
    (r, failed, fs::read(&path).unwrap())
}

#[test]
fn every_match_is_replaced_line_by_line() {
    let (r, _, text) = edit(
        b"a=1\nb=2\na=3\n",
        json!({"regexp": "^a=(\\d)$", "replace": "a=\\1\\1"}),
    );
    assert_eq!(
        (r["changed"].clone(), r["msg"].clone(), r["rc"].clone()),
        (json!(true), json!("2 replacements made"), json!(0))
    );
    assert_eq!(text, b"a=11\nb=2\na=33\n");
    let (r, _, text) = edit(b"a=1\n", json!({"regexp": "^z"}));
    assert_eq!(
        (r["changed"].clone(), r["msg"].clone()),
        (json!(false), json!(""))
    );
    assert_eq!(text, b"a=1\n");
    // A replacement that changes nothing is no change.
    let (r, _, _) = edit(b"a=1\n", json!({"regexp": "a", "replace": "a"}));
    assert_eq!(r["changed"], json!(false));
}

#[test]
fn after_and_before_bound_the_section() {
    let before = b"x\n[s]\nx\n[t]\nx\n";
    let (_, _, text) = edit(
        before,
        json!({"regexp": "^x$", "replace": "y", "after": "\\[s\\]"}),
    );
    assert_eq!(text, b"x\n[s]\ny\n[t]\ny\n");
    let (_, _, text) = edit(
        before,
        json!({"regexp": "^x$", "replace": "y", "before": "\\[t\\]"}),
    );
    assert_eq!(text, b"y\n[s]\ny\n[t]\nx\n");
    let (_, _, text) = edit(
        before,
        json!({"regexp": "^x$", "replace": "y", "after": "\\[s\\]", "before": "\\["}),
    );
    assert_eq!(text, b"x\n[s]\ny\n[t]\nx\n");
    let (r, failed, _) = edit(before, json!({"regexp": "x", "after": "nothing"}));
    assert!(!failed);
    assert_eq!(
        r["msg"],
        json!(
            "Pattern for before/after params did not match the given file: nothing(?P<subsection>.*)"
        )
    );
}

#[test]
fn check_mode_diff_and_backup() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("f");
    fs::write(&path, "old\n").unwrap();
    let p = path.to_str().unwrap();
    let (r, _) = run(json!({"path": p, "regexp": "old", "replace": "new",
                            "_ansible_check_mode": true, "_ansible_diff": true}));
    assert_eq!(r["changed"], json!(true));
    assert_eq!(r["diff"]["after"], json!("new\n"));
    assert_eq!(fs::read_to_string(&path).unwrap(), "old\n");
    let (r, _) = run(json!({"path": p, "regexp": "old", "replace": "new", "backup": true}));
    assert_eq!(
        fs::read_to_string(r["backup_file"].as_str().unwrap()).unwrap(),
        "old\n"
    );
    assert_eq!(fs::read_to_string(&path).unwrap(), "new\n");
}

#[test]
fn encodings_and_errors() {
    let (_, failed, text) = edit(
        b"caf\xe9\n",
        json!({"regexp": "caf.", "replace": "tea", "encoding": "latin-1"}),
    );
    assert!(!failed);
    assert_eq!(text, b"tea\n");
    let (r, failed, _) = edit(b"caf\xe9\n", json!({"regexp": "x"}));
    assert!(failed);
    assert!(
        r["msg"].as_str().unwrap().contains("is not valid utf-8"),
        "{r:?}"
    );
    let (r, failed, _) = edit(b"a\n", json!({"regexp": "a", "encoding": "utf-16"}));
    assert!(
        failed && r["msg"].as_str().unwrap().contains("not supported"),
        "{r:?}"
    );
    let (r, failed) = run(json!({"path": "/nonexistent/x", "regexp": "a"}));
    assert!(failed);
    assert_eq!(
        (r["msg"].clone(), r["rc"].clone()),
        (json!("Path /nonexistent/x does not exist !"), json!(257))
    );
}

#[test]
fn from_2_20_line_ends_are_read_as_python_s_text_mode_reads_them() {
    // 2.19 works on the bytes' line ends as they are.
    let args = json!({"regexp": "b$", "replace": "B", "_ansible_version": "2.19.0"});
    let (r, _, text) = edit(b"a\r\nb\r\n", args);
    assert_eq!(
        (r["changed"].clone(), text),
        (json!(false), b"a\r\nb\r\n".to_vec())
    );
    // 2.20 and later read CRLF and CR as LF, and write LF.
    let args = json!({"regexp": "b$", "replace": "B", "_ansible_version": "2.21.0"});
    let (r, _, text) = edit(b"a\r\nb\r\nc\rd\r", args);
    assert_eq!(
        (r["changed"].clone(), text),
        (json!(true), b"a\nB\nc\nd\n".to_vec())
    );
    // Nothing replaced: the file is left as it was.
    let args = json!({"regexp": "z", "_ansible_version": "2.21.0"});
    let (_, _, text) = edit(b"a\r\n", args);
    assert_eq!(text, b"a\r\n".to_vec());
}
