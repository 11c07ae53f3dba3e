//! Behaviour of the whole module, run natively on temporary files through the SDK's
//! `execute`: replacing, inserting, removing, backrefs, check and diff mode, backups,
//! validation and the errors, as Ansible's lineinfile behaves.

use super::{MANIFEST, lineinfile};
use serde_json::{Map, Value, json};
use std::fs;
use std::path::Path;

sandball_guest_sdk::module_test_helpers!(MANIFEST, lineinfile);

fn s(p: &Path) -> String {
    p.to_str().unwrap().to_string()
}

/// Writes `before` to a fresh file, runs the module with `args` (plus `path`) and
/// returns the result and the file's new text.
fn edit(before: &str, args: Value) -> (Map<String, Value>, String) {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("f");
    fs::write(&path, before).unwrap();
    let mut args = args;
    args["path"] = json!(s(&path));
    let r = ok(args);
    (r, fs::read_to_string(&path).unwrap())
}

#[test]
fn a_missing_line_is_added_at_the_end_once() {
    let (r, text) = edit("a\nb", json!({"line": "c"}));
    assert_eq!(
        (r["changed"].clone(), r["msg"].clone()),
        (json!(true), json!("line added"))
    );
    assert_eq!(text, "a\nb\nc\n");
    let (r, text) = edit("a\nc\nb\n", json!({"line": "c"}));
    assert_eq!(
        (r["changed"].clone(), r["msg"].clone()),
        (json!(false), json!(""))
    );
    assert_eq!(text, "a\nc\nb\n");
}

#[test]
fn regexp_replaces_the_last_match_or_the_first() {
    let before = "port=1\nx\nport=2\n";
    let (r, text) = edit(before, json!({"regexp": "^port=", "line": "port=9"}));
    assert_eq!(r["msg"], json!("line replaced"));
    assert_eq!(text, "port=1\nx\nport=9\n");
    let (_, text) = edit(
        before,
        json!({"regexp": "^port=", "line": "port=9", "firstmatch": true}),
    );
    assert_eq!(text, "port=9\nx\nport=2\n");
    // `$` matches before the line's newline, as in Python.
    let (_, text) = edit("a=1\n", json!({"regexp": "^a=1$", "line": "a=2"}));
    assert_eq!(text, "a=2\n");
    let (_, text) = edit("a=1\n", json!({"search_string": "=1", "line": "a=3"}));
    assert_eq!(text, "a=3\n");
}

#[test]
fn insertafter_and_insertbefore_place_new_lines() {
    let before = "[a]\nx=1\n[b]\ny=1\n";
    let (_, text) = edit(before, json!({"line": "z=1", "insertafter": "^\\[a\\]"}));
    assert_eq!(text, "[a]\nz=1\nx=1\n[b]\ny=1\n");
    let (r, again) = edit(&text, json!({"line": "z=1", "insertafter": "^\\[a\\]"}));
    assert_eq!((r["changed"].clone(), again), (json!(false), text));
    let (_, text) = edit(before, json!({"line": "z=1", "insertbefore": "^\\["}));
    assert_eq!(text, "[a]\nx=1\nz=1\n[b]\ny=1\n");
    let (_, text) = edit(
        before,
        json!({"line": "z=1", "insertbefore": "^\\[", "firstmatch": true}),
    );
    assert_eq!(text, "z=1\n[a]\nx=1\n[b]\ny=1\n");
    let (_, text) = edit(before, json!({"line": "z=1", "insertbefore": "BOF"}));
    assert_eq!(text, "z=1\n[a]\nx=1\n[b]\ny=1\n");
    // Nothing matches insertafter: the end.
    let (_, text) = edit(before, json!({"line": "z=1", "insertafter": "^nothing"}));
    assert_eq!(text, "[a]\nx=1\n[b]\ny=1\nz=1\n");
    // A regexp match wins over insertafter.
    let (_, text) = edit(
        before,
        json!({"line": "x=2", "regexp": "^x=", "insertafter": "^\\[b\\]"}),
    );
    assert_eq!(text, "[a]\nx=2\n[b]\ny=1\n");
}

#[test]
fn backrefs_expand_groups_and_change_nothing_without_a_match() {
    let (r, text) = edit(
        "listen 80;\n",
        json!({"regexp": "^listen (\\d+);", "line": "listen \\1 ssl; # was \\g<1>", "backrefs": true}),
    );
    assert_eq!(r["changed"], json!(true));
    assert_eq!(text, "listen 80 ssl; # was 80\n");
    let (r, text) = edit(
        "other\n",
        json!({"regexp": "^listen (\\d+)", "line": "listen \\1", "backrefs": true}),
    );
    assert_eq!(
        (r["changed"].clone(), text),
        (json!(false), "other\n".to_string())
    );
    // Lookaround, which the regex crate alone cannot do.
    let (_, text) = edit(
        "a=1\nb=1\n",
        json!({"regexp": "^(?!a)\\w=1", "line": "b=2"}),
    );
    assert_eq!(text, "a=1\nb=2\n");
}

#[test]
fn absent_removes_every_match_and_counts_them() {
    let (r, text) = edit("#a\nb\n#c\n", json!({"regexp": "^#", "state": "absent"}));
    assert_eq!(
        (r["changed"].clone(), r["found"].clone(), r["msg"].clone()),
        (json!(true), json!(2), json!("2 line(s) removed"))
    );
    assert_eq!(text, "b\n");
    let (r, text) = edit("a\nb\n", json!({"line": "b", "state": "absent"}));
    assert_eq!((r["found"].clone(), text), (json!(1), "a\n".to_string()));
    let (r, _) = edit("a\n", json!({"line": "z", "state": "absent"}));
    assert_eq!(
        (r["changed"].clone(), r["found"].clone()),
        (json!(false), json!(0))
    );
    let r = ok(json!({"path": "/nonexistent/x", "line": "z", "state": "absent"}));
    assert_eq!(r["msg"], json!("file not present"));
}

#[test]
fn check_mode_and_diff_mode() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("f");
    fs::write(&path, "a\n").unwrap();
    let r = ok(
        json!({"path": s(&path), "line": "b", "_ansible_check_mode": true, "_ansible_diff": true}),
    );
    assert_eq!(r["changed"], json!(true));
    assert_eq!(fs::read_to_string(&path).unwrap(), "a\n");
    assert_eq!(r["diff"][0]["before"], json!("a\n"));
    assert_eq!(r["diff"][0]["after"], json!("a\nb\n"));
    assert_eq!(
        r["diff"][1],
        json!({"before_header": format!("{} (file attributes)", s(&path)),
               "after_header": format!("{} (file attributes)", s(&path))})
    );
    // Check mode on a file that does not exist yet: changed, nothing made.
    let new = tmp.path().join("d/new");
    let r = ok(json!({"path": s(&new), "line": "b", "create": true, "_ansible_check_mode": true}));
    assert_eq!(r["changed"], json!(true));
    assert!(!tmp.path().join("d").exists());
}

#[test]
fn create_makes_the_file_and_its_directories() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("d/e/f");
    let r = ok(json!({"path": s(&path), "line": "x", "create": true, "mode": "0600"}));
    assert_eq!(r["changed"], json!(true));
    assert_eq!(
        r["msg"],
        json!("line added and ownership, perms or SE linux context changed")
    );
    assert_eq!(fs::read_to_string(&path).unwrap(), "x\n");
    let msg = fails(json!({"path": s(&tmp.path().join("nope")), "line": "x"}));
    assert_eq!(
        msg,
        format!(
            "Destination {} does not exist !",
            s(&tmp.path().join("nope"))
        )
    );
}

#[test]
fn backups_and_validation() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("f");
    fs::write(&path, "a\n").unwrap();
    let r = ok(json!({"path": s(&path), "line": "b", "backup": true}));
    let backup = r["backup"].as_str().unwrap();
    assert_eq!(fs::read_to_string(backup).unwrap(), "a\n");
    let msg = fails(json!({"path": s(&path), "line": "c", "validate": "grep -q nothing %s"}));
    assert!(msg.starts_with("failed to validate: rc:1 error:"), "{msg}");
    assert_eq!(fs::read_to_string(&path).unwrap(), "a\nb\n");
    ok(json!({"path": s(&path), "line": "c", "validate": "grep -q a %s"}));
    assert_eq!(fs::read_to_string(&path).unwrap(), "a\nb\nc\n");
    let msg = fails(json!({"path": s(&path), "line": "d", "validate": "true"}));
    assert_eq!(msg, "validate must contain %s: true");
    let left: Vec<_> = fs::read_dir(tmp.path()).unwrap().collect();
    assert_eq!(left.len(), 2, "the file and its backup, no staged copies");
}

#[test]
fn bad_input_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let path = s(&tmp.path().join("f"));
    fs::write(&path, "a\n").unwrap();
    assert_eq!(
        fails(json!({"path": path, "regexp": "a", "backrefs": false})),
        "line is required with state=present"
    );
    assert_eq!(
        fails(json!({"path": path, "line": "x", "backrefs": true})),
        "regexp is required with backrefs=true"
    );
    assert_eq!(
        fails(json!({"path": path, "state": "absent"})),
        "one of line, search_string, or regexp is required with state=absent"
    );
    assert_eq!(
        fails(json!({"path": s(tmp.path()), "line": "x"})),
        format!("Path {} is a directory !", s(tmp.path()))
    );
    assert!(
        fails(json!({"path": path, "line": "x", "regexp": "("}))
            .contains("invalid regular expression")
    );
    let (r, _) = run(json!({"path": path, "line": "x", "regexp": "a", "search_string": "a"}));
    assert!(
        r["msg"].as_str().unwrap().contains("mutually exclusive"),
        "{r:?}"
    );
    let (r, _) = edit("a\n", json!({"line": "x", "regexp": ""}));
    assert!(
        r["warnings"][0]
            .as_str()
            .unwrap()
            .starts_with("The regular expression is an empty string")
    );
}
