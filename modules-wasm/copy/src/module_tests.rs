//! Behaviour of the whole module, run natively on temporary directories through the
//! SDK's `execute`: new and changed files, idempotence, check and diff mode, backups,
//! validation, directory destinations and directory sources, as Ansible's copy does.

use super::{MANIFEST, copy};
use serde_json::json;
use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;

sandball_guest_sdk::module_test_helpers!(MANIFEST, copy);

fn s(p: &Path) -> String {
    p.to_str().unwrap().to_string()
}

fn mode(p: &Path) -> u32 {
    fs::metadata(p).unwrap().permissions().mode() & 0o7777
}

/// sha1 of "hello\n".
const HELLO_SHA1: &str = "f572d396fae9206628714fb2ce00f72e94f2258f";

#[test]
fn content_is_written_once() {
    let tmp = tempfile::tempdir().unwrap();
    let dest = tmp.path().join("motd");
    let args = json!({"dest": s(&dest), "content": "hello\n"});

    let r = ok(json!({"dest": s(&dest), "content": "hello\n", "_ansible_check_mode": true}));
    assert_eq!(r["changed"], json!(true));
    assert!(!dest.exists());

    let r = ok(args.clone());
    assert_eq!(r["changed"], json!(true));
    assert_eq!(r["checksum"], json!(HELLO_SHA1));
    assert_eq!(r["md5sum"], json!("b1946ac92492d2347c6235b4d2611184"));
    assert_eq!(r["dest"], json!(s(&dest)));
    assert_eq!(
        (r["state"].clone(), r["size"].clone()),
        (json!("file"), json!(6))
    );
    assert!(r.get("src").is_none());
    assert_eq!(
        r["invocation"]["module_args"]["content"],
        json!("VALUE_SPECIFIED_IN_NO_LOG_PARAMETER")
    );
    assert_eq!(fs::read(&dest).unwrap(), b"hello\n");
    let umask = sandball_guest_sdk::host::umask();
    assert_eq!(mode(&dest), 0o666 & !umask);

    assert_eq!(ok(args)["changed"], json!(false));
    assert_eq!(
        fs::read_dir(tmp.path()).unwrap().count(),
        1,
        "no temporary files left"
    );
}

#[test]
fn a_changed_file_keeps_its_mode_and_gets_the_new_one_when_asked() {
    let tmp = tempfile::tempdir().unwrap();
    let dest = tmp.path().join("conf");
    fs::write(&dest, "old\n").unwrap();
    fs::set_permissions(&dest, fs::Permissions::from_mode(0o600)).unwrap();
    let r = ok(json!({"dest": s(&dest), "content": "new\n", "_ansible_diff": true}));
    assert_eq!(r["changed"], json!(true));
    assert_eq!(mode(&dest), 0o600);
    // `content` is no_log, so the SDK masks it in the result, but not in the diff the
    // user asked for (as Ansible's controller-side copy diff shows it).
    assert_eq!(
        r["diff"],
        json!({"before_header": s(&dest), "before": "old\n", "after_header": s(&dest),
               "after": "new\n"})
    );
    let r = ok(json!({"dest": s(&dest), "content": "new\n", "mode": "0640"}));
    assert_eq!(
        (r["changed"].clone(), r["mode"].clone()),
        (json!(true), json!("0640"))
    );
    assert_eq!(
        ok(json!({"dest": s(&dest), "content": "new\n", "mode": "0640"}))["changed"],
        json!(false)
    );
}

#[test]
fn diffs_show_old_and_new_text_or_binary_markers() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    fs::write(&src, "new\n").unwrap();
    let dest = tmp.path().join("dest");
    let r = ok(
        json!({"dest": s(&dest), "src": s(&src), "_ansible_diff": true, "_ansible_check_mode": true}),
    );
    assert_eq!(
        r["diff"],
        json!({"before": "", "after_header": s(&src), "after": "new\n"})
    );
    assert!(!dest.exists());
    fs::write(&dest, [0u8, 1]).unwrap();
    let r = ok(json!({"dest": s(&dest), "src": s(&src), "_ansible_diff": true}));
    assert_eq!(
        r["diff"],
        json!({"dst_binary": 1, "after_header": s(&src), "after": "new\n"})
    );
    let r = ok(json!({"dest": s(&dest), "src": s(&src), "_ansible_diff": true}));
    assert!(r.get("diff").is_none());
}

#[test]
fn backups_keep_the_old_content() {
    let tmp = tempfile::tempdir().unwrap();
    let dest = tmp.path().join("hosts");
    fs::write(&dest, "v1\n").unwrap();
    let r = ok(json!({"dest": s(&dest), "content": "v2\n", "backup": true}));
    let backup = r["backup_file"].as_str().unwrap();
    assert!(
        backup.starts_with(&format!("{}.", s(&dest))) && backup.ends_with('~'),
        "{backup}"
    );
    assert_eq!(fs::read(backup).unwrap(), b"v1\n");
    assert_eq!(fs::read(&dest).unwrap(), b"v2\n");
    let r = ok(json!({"dest": s(&dest), "content": "v2\n", "backup": true}));
    assert!(r.get("backup_file").is_none());
}

#[test]
fn force_false_only_creates() {
    let tmp = tempfile::tempdir().unwrap();
    let dest = tmp.path().join("f");
    fs::write(&dest, "mine").unwrap();
    let r = ok(json!({"dest": s(&dest), "content": "theirs", "force": false}));
    assert_eq!(
        (r["changed"].clone(), r["msg"].clone()),
        (json!(false), json!("file already exists"))
    );
    assert_eq!(fs::read(&dest).unwrap(), b"mine");
}

#[test]
fn src_files_go_into_directories() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("app.conf");
    fs::write(&src, "hello\n").unwrap();
    fs::set_permissions(&src, fs::Permissions::from_mode(0o751)).unwrap();
    let into = format!("{}/etc/app/", s(tmp.path()));
    let r = ok(json!({"dest": into, "src": s(&src), "directory_mode": "0700"}));
    let placed = tmp.path().join("etc/app/app.conf");
    assert_eq!(r["dest"], json!(s(&placed)));
    assert_eq!(r["src"], json!(s(&src)));
    assert_eq!(r["checksum"], json!(HELLO_SHA1));
    assert_eq!(mode(&tmp.path().join("etc")), 0o700);
    assert_eq!(fs::read(&placed).unwrap(), b"hello\n");
    // An existing directory as dest takes the source's name too.
    let r = ok(json!({"dest": s(&tmp.path().join("etc/app")), "src": s(&src), "mode": "preserve"}));
    assert_eq!(
        (r["changed"].clone(), r["mode"].clone()),
        (json!(true), json!("0751"))
    );

    let msg = fails(json!({"dest": s(&tmp.path().join("etc")), "content": "payload"}));
    assert_eq!(msg, "can not use content with a dir as dest");
    let msg = fails(json!({"dest": s(&tmp.path().join("no/such/f")), "content": "payload"}));
    assert_eq!(
        msg,
        format!(
            "Destination directory {} does not exist",
            s(&tmp.path().join("no/such"))
        )
    );
}

#[test]
fn source_problems_and_checksums_fail_clearly() {
    let tmp = tempfile::tempdir().unwrap();
    let dest = tmp.path().join("d");
    let missing = tmp.path().join("missing");
    assert_eq!(
        fails(json!({"dest": s(&dest), "src": s(&missing)})),
        format!("Source {} not found", s(&missing))
    );
    assert_eq!(
        fails(json!({"dest": s(&dest)})),
        "src (or content) is required"
    );
    let (r, failed) = run(json!({"dest": s(&dest), "content": "hello\n", "checksum": "0000"}));
    assert!(failed);
    assert_eq!(
        r["msg"],
        json!("Copied file does not match the expected checksum. Transfer failed.")
    );
    assert_eq!(r["checksum"], json!(HELLO_SHA1));
    assert!(!dest.exists());
    assert_eq!(
        ok(json!({"dest": s(&dest), "content": "hello\n", "checksum": HELLO_SHA1}))["changed"],
        json!(true)
    );
    assert_eq!(
        fails(json!({"dest": s(&dest), "content": "payload", "src": "/etc/hosts"})),
        "parameters are mutually exclusive: src|content"
    );
}

#[test]
fn validate_runs_on_the_staged_file() {
    let tmp = tempfile::tempdir().unwrap();
    let dest = tmp.path().join("sudoers");
    let (r, failed) =
        run(json!({"dest": s(&dest), "content": "bad\n", "validate": "grep -q good %s"}));
    assert!(failed);
    assert_eq!(r["msg"], json!("failed to validate"));
    assert_eq!(r["exit_status"], json!(1));
    assert!(!dest.exists());
    assert_eq!(
        fs::read_dir(tmp.path()).unwrap().count(),
        0,
        "the staged file is removed"
    );
    let r = ok(json!({"dest": s(&dest), "content": "good\n", "validate": "grep -q good %s"}));
    assert_eq!(r["changed"], json!(true));
    assert_eq!(
        fails(json!({"dest": s(&dest), "content": "payload", "validate": "true"})),
        "validate must contain %s: true"
    );
}

#[test]
fn a_symlink_dest_is_replaced_or_followed() {
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("target");
    fs::write(&target, "t\n").unwrap();
    let link = tmp.path().join("link");
    symlink(&target, &link).unwrap();
    let r = ok(json!({"dest": s(&link), "content": "t\n", "follow": true}));
    assert_eq!(
        (r["changed"].clone(), r["dest"].clone()),
        (json!(false), json!(s(&target)))
    );
    let r = ok(json!({"dest": s(&link), "content": "new\n", "follow": true}));
    assert_eq!(r["changed"], json!(true));
    assert_eq!(fs::read(&target).unwrap(), b"new\n");
    // Without follow, the link itself becomes a file (even with the same content).
    let r = ok(json!({"dest": s(&link), "content": "new\n"}));
    assert_eq!(
        (r["changed"].clone(), r["state"].clone()),
        (json!(true), json!("file"))
    );
    assert!(
        !fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(fs::read(&target).unwrap(), b"new\n");
}

#[test]
fn directory_sources_are_copied_and_merged() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("site");
    fs::create_dir_all(src.join("css")).unwrap();
    fs::write(src.join("index.html"), "<h1>").unwrap();
    fs::write(src.join("css/a.css"), "a").unwrap();
    let dest = tmp.path().join("www");
    fs::create_dir(&dest).unwrap();
    let args = json!({"src": s(&src), "dest": s(&dest), "remote_src": true});
    let r = ok(args.clone());
    assert_eq!(
        (r["changed"].clone(), r["dest"].clone()),
        (json!(true), json!(s(&dest.join("site"))))
    );
    assert_eq!(fs::read(dest.join("site/css/a.css")).unwrap(), b"a");
    assert_eq!(ok(args)["changed"], json!(false));

    // A trailing slash copies the contents.
    let flat = tmp.path().join("flat");
    let r = ok(json!({"src": format!("{}/", s(&src)), "dest": s(&flat), "remote_src": true}));
    assert_eq!(r["changed"], json!(true));
    assert_eq!(fs::read(flat.join("index.html")).unwrap(), b"<h1>");

    // Missing parents are made only for a `dest` that ends with `/`.
    let deep = tmp.path().join("no/such/dir");
    assert_eq!(
        fails(json!({"src": s(&src), "dest": s(&deep), "remote_src": true})),
        format!(
            "Destination directory {} does not exist",
            s(&tmp.path().join("no/such"))
        )
    );
    assert!(!tmp.path().join("no").exists());
    let r = ok(json!({"src": s(&src), "dest": format!("{}/", s(&deep)), "remote_src": true}));
    assert_eq!(r["changed"], json!(true));
    assert_eq!(fs::read(deep.join("site/index.html")).unwrap(), b"<h1>");
}
