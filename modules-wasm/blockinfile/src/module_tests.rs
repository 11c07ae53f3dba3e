//! Behaviour of the whole module, run natively on temporary files through the SDK's
//! `execute`: inserting, updating and removing a block, placement, blank lines,
//! check mode and the errors, as Ansible's blockinfile behaves.

use super::{MANIFEST, blockinfile, split_lines};
use serde_json::{Map, Value, json};
use std::fs;

sandball_guest_sdk::module_test_helpers!(MANIFEST, blockinfile);

/// Writes `before` to a fresh file, runs the module with `args` (plus `path`) and
/// returns the result and the file's new text.
fn edit(before: &str, args: Value) -> (Map<String, Value>, String) {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("f");
    fs::write(&path, before).unwrap();
    let mut args = args;
    args["path"] = json!(path.to_str().unwrap());
    let (r, failed) = run(args);
    assert!(!failed, "{r:?}");
    (r, fs::read_to_string(&path).unwrap())
}

const BLOCK: &str = "# BEGIN ANSIBLE MANAGED BLOCK\nx=1\n# END ANSIBLE MANAGED BLOCK\n";

#[test]
fn a_block_is_inserted_updated_and_removed() {
    let (r, text) = edit("a\nb", json!({"block": "x=1"}));
    assert_eq!(r["msg"], json!("Block inserted"));
    assert_eq!(text, format!("a\nb\n{BLOCK}"));
    let (r, again) = edit(&text, json!({"block": "x=1"}));
    assert_eq!(
        (r["changed"].clone(), r["msg"].clone()),
        (json!(false), json!(""))
    );
    assert_eq!(again, text);
    let (_, updated) = edit(&text, json!({"block": "x=2\ny=3\n"}));
    assert_eq!(
        updated,
        "a\nb\n# BEGIN ANSIBLE MANAGED BLOCK\nx=2\ny=3\n# END ANSIBLE MANAGED BLOCK\n"
    );
    let (r, removed) = edit(&text, json!({"state": "absent"}));
    assert_eq!(
        (r["msg"].clone(), removed),
        (json!("Block removed"), "a\nb\n".to_string())
    );
    let (r, _) = edit(&text, json!({"block": ""}));
    assert_eq!(r["msg"], json!("Block removed"));
}

#[test]
fn placement_markers_and_blank_lines() {
    let before = "[a]\nk=v\n[b]\n";
    let (_, text) = edit(before, json!({"block": "x=1", "insertafter": "^\\[a\\]"}));
    assert_eq!(text, format!("[a]\n{BLOCK}k=v\n[b]\n"));
    let (_, text) = edit(before, json!({"block": "x=1", "insertbefore": "^\\["}));
    assert_eq!(text, format!("[a]\nk=v\n{BLOCK}[b]\n"));
    let (_, text) = edit(before, json!({"block": "x=1", "insertbefore": "BOF"}));
    assert_eq!(text, format!("{BLOCK}{before}"));
    let (_, text) = edit(
        before,
        json!({"block": "x=1", "insertafter": "^\\[a\\]", "prepend_newline": true, "append_newline": true}),
    );
    assert_eq!(text, format!("[a]\n\n{BLOCK}\nk=v\n[b]\n"));
    let (_, text) = edit(
        "",
        json!({"block": "x", "marker": "// {mark}", "marker_begin": "start", "marker_end": "stop"}),
    );
    assert_eq!(text, "// start\nx\n// stop\n");
}

#[test]
fn creation_check_mode_and_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("d/f");
    let p = path.to_str().unwrap();
    let (r, _) = run(json!({"path": p, "block": "x", "create": true, "_ansible_check_mode": true}));
    assert_eq!(
        (r["changed"].clone(), r["msg"].clone()),
        (json!(true), json!("File created"))
    );
    assert!(!tmp.path().join("d").exists());
    let (r, _) = run(json!({"path": p, "block": "x", "create": true}));
    assert_eq!(r["msg"], json!("File created"));
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        "# BEGIN ANSIBLE MANAGED BLOCK\nx\n# END ANSIBLE MANAGED BLOCK\n"
    );
    let missing = tmp.path().join("missing");
    let (r, failed) = run(json!({"path": missing.to_str().unwrap(), "block": "x"}));
    assert!(failed);
    assert_eq!(r["rc"], json!(257));
    // Absent from a missing file: an error unless create says the file may be missing.
    let (_, failed) = run(json!({"path": missing.to_str().unwrap(), "state": "absent"}));
    assert!(failed);
    let (r, failed) =
        run(json!({"path": missing.to_str().unwrap(), "state": "absent", "create": true}));
    assert!(!failed);
    assert_eq!(
        (r["changed"].clone(), r["msg"].clone()),
        (
            json!(false),
            json!(format!("File {} not present", missing.display()))
        )
    );
}

#[test]
fn lines_split_as_python_splits_them() {
    assert_eq!(split_lines("a\r\nb\rc\nd"), ["a\r\n", "b\r", "c\n", "d"]);
    assert!(split_lines("").is_empty());
}
