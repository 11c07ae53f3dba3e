//! Behaviour of the whole module, run natively on temporary directories through the
//! SDK's `execute` (the host interface is then served by the local OS): each state,
//! idempotence on a second run, check mode and diffs, against Ansible's results.

use super::{MANIFEST, file};
use serde_json::json;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::path::Path;

sandball_guest_sdk::module_test_helpers!(MANIFEST, file);

fn mode(p: &Path) -> u32 {
    fs::symlink_metadata(p).unwrap().permissions().mode() & 0o7777
}

fn s(p: &Path) -> String {
    p.to_str().unwrap().to_string()
}

#[test]
fn directory_creates_parents_with_the_mode_and_is_idempotent() {
    let tmp = tempfile::tempdir().unwrap();
    let leaf = tmp.path().join("a/b/c");
    let args = json!({"path": s(&leaf), "state": "directory", "mode": "0750"});

    let r = ok(
        json!({"path": s(&leaf), "state": "directory", "mode": "0750", "_ansible_check_mode": true}),
    );
    assert_eq!(r["changed"], json!(true));
    assert!(!tmp.path().join("a").exists(), "check mode creates nothing");

    let r = ok(args.clone());
    assert_eq!(r["changed"], json!(true));
    assert_eq!(r["path"], json!(s(&leaf)));
    assert_eq!(r["state"], json!("directory"));
    assert_eq!(r["mode"], json!("0750"));
    // As in Ansible, every directory created gets the mode.
    assert_eq!(mode(&tmp.path().join("a")), 0o750);
    assert_eq!(mode(&leaf), 0o750);

    assert_eq!(ok(args)["changed"], json!(false));
    let r =
        ok(json!({"path": s(&leaf), "state": "directory", "mode": "0700", "_ansible_diff": true}));
    assert_eq!(r["changed"], json!(true));
    assert_eq!(
        r["diff"],
        json!({"before": {"path": s(&leaf), "mode": "0750"}, "after": {"path": s(&leaf), "mode": "0700"}})
    );
}

#[test]
fn directory_refuses_a_file_in_the_way() {
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("f");
    fs::write(&f, "").unwrap();
    let msg = fails(json!({"path": s(&f), "state": "directory"}));
    assert_eq!(msg, format!("{} already exists as a file", s(&f)));
}

#[test]
fn recurse_sets_mode_on_the_whole_tree() {
    let tmp = tempfile::tempdir().unwrap();
    let top = tmp.path().join("top");
    fs::create_dir_all(top.join("sub")).unwrap();
    fs::write(top.join("sub/f"), "").unwrap();
    symlink("sub/f", top.join("link")).unwrap();
    let args =
        json!({"path": s(&top), "state": "directory", "recurse": true, "mode": "u=rwX,g=rX,o="});
    assert_eq!(ok(args.clone())["changed"], json!(true));
    assert_eq!(mode(&top.join("sub")), 0o750);
    assert_eq!(mode(&top.join("sub/f")), 0o640);
    assert_eq!(ok(args)["changed"], json!(false));
    let msg = fails(json!({"path": s(&top), "state": "file", "recurse": true}));
    assert_eq!(msg, "recurse option requires state to be 'directory'");
}

#[test]
fn file_state_never_creates() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("missing");
    let msg = fails(json!({"path": s(&missing), "state": "file"}));
    assert_eq!(
        msg,
        format!("file ({}) is absent, cannot continue", s(&missing))
    );
    // Without state, a missing path means state=file.
    let (r, failed) = run(json!({"path": s(&missing)}));
    assert!(failed);
    assert_eq!(r["state"], json!("absent"));

    let f = tmp.path().join("f");
    fs::write(&f, "abc").unwrap();
    let r = ok(json!({"path": s(&f), "mode": "0600"}));
    assert_eq!(
        (r["changed"].clone(), r["mode"].clone(), r["size"].clone()),
        (json!(true), json!("0600"), json!(3))
    );
    assert_eq!(
        ok(json!({"path": s(&f), "state": "file", "mode": "0600"}))["changed"],
        json!(false)
    );
}

#[test]
fn touch_creates_then_always_changes() {
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("t");
    let r = ok(json!({"path": s(&f), "state": "touch", "_ansible_check_mode": true}));
    assert_eq!(r["changed"], json!(true));
    assert!(!f.exists());

    let r = ok(json!({"path": s(&f), "state": "touch", "mode": "0640"}));
    assert_eq!(r["changed"], json!(true));
    assert_eq!(r["dest"], json!(s(&f)));
    assert_eq!(r["state"], json!("file"));
    assert_eq!(mode(&f), 0o640);
    assert_eq!(
        ok(json!({"path": s(&f), "state": "touch"}))["changed"],
        json!(true)
    );
    // Preserving both times makes a touch idempotent.
    let keep = json!({"path": s(&f), "state": "touch", "modification_time": "preserve", "access_time": "preserve"});
    assert_eq!(ok(keep)["changed"], json!(false));
}

#[test]
fn explicit_times_are_set_once() {
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("f");
    fs::write(&f, "").unwrap();
    let args = json!({"path": s(&f), "modification_time": "202401021530.45", "access_time": "now", "access_time_format": "%Y"});
    let r = ok(args);
    assert_eq!(r["changed"], json!(true));
    assert_eq!(fs::metadata(&f).unwrap().mtime(), 1_704_209_445);
    let args = json!({"path": s(&f), "modification_time": "202401021530.45"});
    assert_eq!(ok(args)["changed"], json!(false));
    let msg = fails(json!({"path": s(&f), "modification_time": "soon"}));
    assert!(
        msg.starts_with("Error while obtaining timestamp for time soon using format %Y%m%d%H%M.%S"),
        "{msg}"
    );
}

#[test]
fn absent_removes_trees_and_reports_their_content() {
    let tmp = tempfile::tempdir().unwrap();
    let top = tmp.path().join("top");
    fs::create_dir_all(top.join("sub")).unwrap();
    fs::write(top.join("sub/f"), "").unwrap();
    let r = ok(
        json!({"path": s(&top), "state": "absent", "_ansible_check_mode": true, "_ansible_diff": true}),
    );
    assert_eq!(r["changed"], json!(true));
    assert_eq!(
        r["diff"]["before"]["path_content"],
        json!({"directories": [s(&top.join("sub"))], "files": [s(&top.join("sub/f"))]})
    );
    assert!(top.exists());
    let r = ok(json!({"path": s(&top), "state": "absent"}));
    assert_eq!(
        (r["changed"].clone(), r["state"].clone()),
        (json!(true), json!("absent"))
    );
    assert!(!top.exists());
    assert_eq!(
        ok(json!({"path": s(&top), "state": "absent"}))["changed"],
        json!(false)
    );
}

#[test]
fn symlinks_absolute_relative_and_retargeted() {
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("target");
    fs::write(&target, "x").unwrap();
    let link = tmp.path().join("link");
    let args = json!({"path": s(&link), "src": s(&target), "state": "link"});
    let r = ok(args.clone());
    assert_eq!(
        (r["changed"].clone(), r["state"].clone(), r["src"].clone()),
        (json!(true), json!("link"), json!(s(&target)))
    );
    assert_eq!(fs::read_link(&link).unwrap(), target);
    assert_eq!(ok(args)["changed"], json!(false));

    let r = ok(json!({"path": s(&link), "src": "target", "state": "link", "_ansible_diff": true}));
    assert_eq!(r["changed"], json!(true));
    assert_eq!(r["diff"]["before"]["src"], json!(s(&target)));
    assert_eq!(r["diff"]["after"]["src"], json!("target"));
    assert_eq!(fs::read_link(&link).unwrap().to_str(), Some("target"));
}

#[test]
fn symlink_force_rules() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("file");
    fs::write(&file, "").unwrap();
    let missing = tmp.path().join("missing");
    let link = tmp.path().join("l");

    let msg = fails(json!({"path": s(&link), "src": s(&missing), "state": "link"}));
    assert!(
        msg.starts_with("src file does not exist, use 'force=yes'"),
        "{msg}"
    );
    let r = ok(json!({"path": s(&link), "src": s(&missing), "state": "link", "force": true}));
    assert_eq!(r["changed"], json!(true));
    assert!(
        r["warnings"][0]
            .as_str()
            .unwrap()
            .starts_with("Cannot set fs attributes on a non-existent symlink target")
    );

    let msg = fails(json!({"path": s(&file), "src": "/etc", "state": "link"}));
    assert_eq!(
        msg,
        format!("refusing to convert from file to symlink for {}", s(&file))
    );
    assert_eq!(
        ok(json!({"path": s(&file), "src": "/etc", "state": "link", "force": true}))["changed"],
        json!(true)
    );
    assert_eq!(fs::read_link(&file).unwrap().to_str(), Some("/etc"));

    let msg = fails(json!({"path": s(&tmp.path().join("new")), "state": "link"}));
    assert_eq!(msg, "src is required for creating new symlinks");
}

#[test]
fn hard_links_share_the_inode() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    fs::write(&src, "data").unwrap();
    let hard = tmp.path().join("hard");
    let args = json!({"path": s(&hard), "src": s(&src), "state": "hard"});
    let r = ok(args.clone());
    assert_eq!(
        (r["changed"].clone(), r["state"].clone()),
        (json!(true), json!("hard"))
    );
    assert_eq!(
        fs::metadata(&hard).unwrap().ino(),
        fs::metadata(&src).unwrap().ino()
    );
    assert_eq!(ok(args)["changed"], json!(false));

    let other = tmp.path().join("other");
    fs::write(&other, "").unwrap();
    let msg = fails(json!({"path": s(&other), "src": s(&src), "state": "hard"}));
    assert_eq!(msg, "Cannot link, file exists at destination");
    assert_eq!(
        ok(json!({"path": s(&other), "src": s(&src), "state": "hard", "force": true}))["changed"],
        json!(true)
    );
    assert_eq!(
        fs::metadata(&other).unwrap().ino(),
        fs::metadata(&src).unwrap().ino()
    );
}

#[test]
fn src_needs_a_link_state_and_diff_peek_reports_binary() {
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("f");
    fs::write(&f, [0u8, 1, 2]).unwrap();
    let msg = fails(json!({"path": s(&f), "src": "/etc/hosts", "state": "file"}));
    assert_eq!(msg, "src option requires state to be 'link' or 'hard'");
    let r = ok(json!({"path": s(&f), "_diff_peek": true}));
    assert_eq!(r["appears_binary"], json!(true));
    assert_eq!(r["changed"], json!(false));
}

#[test]
fn a_directory_path_places_the_entry_inside_it() {
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("data.txt");
    fs::write(&target, "").unwrap();
    let dir = tmp.path().join("dir");
    fs::create_dir(&dir).unwrap();
    let r = ok(json!({"path": s(&dir), "src": s(&target), "state": "hard"}));
    assert_eq!(r["dest"], json!(s(&dir.join("data.txt"))));
    assert!(dir.join("data.txt").exists());
}
