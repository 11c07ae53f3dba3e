//! Behaviour of the whole module, run natively through the SDK's `execute`: files
//! and directories with random names, modes and the result's path information,
//! prefixes and suffixes, the node's temporary directory, and the errors, as
//! ansible-core's tempfile behaves.

use super::{MANIFEST, NAME_CHARS, random_name, tempfile};
use sandball_guest_sdk::{host, json};
use std::os::unix::fs::PermissionsExt;

sandball_guest_sdk::module_test_helpers!(MANIFEST, tempfile);

/// The part of `path`'s name between `prefix` and `suffix`, checked to be random.
fn random_part<'a>(path: &'a str, dir: &str, prefix: &str, suffix: &str) -> &'a str {
    let name = path
        .strip_prefix(&format!("{dir}/{prefix}"))
        .and_then(|rest| rest.strip_suffix(suffix))
        .unwrap_or_else(|| panic!("{path} is not {dir}/{prefix}…{suffix}"));
    assert_eq!(name.len(), 8, "{path}");
    assert!(name.bytes().all(|b| NAME_CHARS.contains(&b)), "{path}");
    name
}

#[test]
fn a_file_with_a_random_name_and_mode_0600() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = std::fs::canonicalize(tmp.path()).unwrap();
    let dir = dir.to_str().unwrap();
    let r = ok(json!({"path": dir}));
    let path = r["path"].as_str().unwrap();
    random_part(path, dir, "ansible.", "");
    let meta = std::fs::metadata(path).unwrap();
    assert!(meta.is_file() && meta.len() == 0);
    let mode = 0o600 & !host::umask();
    assert_eq!(meta.permissions().mode() & 0o7777, mode);
    assert_eq!(
        (
            r["changed"].clone(),
            r["state"].clone(),
            r["mode"].clone(),
            r["size"].clone()
        ),
        (
            json!(true),
            json!("file"),
            json!(format!("{mode:04o}")),
            json!(0)
        )
    );
    assert!(
        r["owner"].is_string() && r["group"].is_string() && r["uid"].is_u64() && r["gid"].is_u64()
    );
    // Another run draws another name.
    let again = ok(json!({"path": dir}));
    assert_ne!(again["path"], r["path"]);
}

#[test]
fn a_directory_with_prefix_and_suffix() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = std::fs::canonicalize(tmp.path()).unwrap();
    let dir = dir.to_str().unwrap();
    let r = ok(json!({"path": dir, "state": "directory", "prefix": "build-", "suffix": ".d"}));
    let path = r["path"].as_str().unwrap();
    random_part(path, dir, "build-", ".d");
    let meta = std::fs::metadata(path).unwrap();
    assert!(meta.is_dir());
    assert_eq!(meta.permissions().mode() & 0o7777, 0o700 & !host::umask());
    assert_eq!(r["state"], json!("directory"));
    // An empty prefix is allowed, as in Python.
    let r = ok(json!({"path": dir, "prefix": ""}));
    random_part(r["path"].as_str().unwrap(), dir, "", "");
}

#[test]
fn relative_paths_are_made_absolute() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = std::fs::canonicalize(tmp.path()).unwrap();
    let r = ok(json!({"path": format!("{}/./sub/..", dir.display())}));
    random_part(
        r["path"].as_str().unwrap(),
        dir.to_str().unwrap(),
        "ansible.",
        "",
    );
}

#[test]
fn without_a_path_the_temporary_directory() {
    let expected = std::env::var("TMPDIR")
        .ok()
        .filter(|d| !d.is_empty())
        .unwrap_or("/tmp".into());
    let r = ok(json!({"suffix": ".sandball-test"}));
    let path = r["path"].as_str().unwrap();
    random_part(
        path,
        expected.trim_end_matches('/'),
        "ansible.",
        ".sandball-test",
    );
    std::fs::remove_file(path).unwrap();
}

#[test]
fn errors_are_named() {
    assert_eq!(
        fails(json!({"prefix": "a/b"})),
        "prefix must be a valid file name component, got 'a/b'"
    );
    assert_eq!(
        fails(json!({"suffix": "/x"})),
        "suffix must be a valid file name component, got '/x'"
    );
    let msg = fails(json!({"path": "/nonexistent/sandball"}));
    assert!(
        msg.starts_with("[Errno 2] No such file or directory: '/nonexistent/sandball/ansible."),
        "{msg}"
    );
    assert_eq!(
        fails(json!({"state": "link"})),
        "value of state must be one of: file, directory, got: link"
    );
    let (r, _) = run(json!({"_ansible_check_mode": true}));
    assert_eq!(r["skipped"], json!(true));
}

#[test]
fn names_are_drawn_from_pythons_characters() {
    let names: std::collections::HashSet<String> = (0..200).map(|_| random_name()).collect();
    assert!(names.len() > 195);
    assert!(
        names
            .iter()
            .all(|n| n.len() == 8 && n.bytes().all(|b| NAME_CHARS.contains(&b)))
    );
}
