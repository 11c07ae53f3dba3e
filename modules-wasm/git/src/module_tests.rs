//! Behaviour of the whole module, run natively through the SDK's `execute` with the
//! local git: clone, idempotence, updates, versions, local modifications, check mode,
//! and the options it refuses.

use super::{MANIFEST, git};
use sandball_guest_sdk::json;
use std::path::Path;
use std::process::Command;

sandball_guest_sdk::module_test_helpers!(MANIFEST, git);

fn sh(dir: &Path, script: &str) -> String {
    let out = Command::new("sh")
        .args(["-c", script])
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .unwrap();
    assert!(out.status.success(), "{script}: {out:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// An upstream repository with two commits on `main` and a tag `v1` on the first.
fn upstream(root: &Path) -> std::path::PathBuf {
    let up = root.join("up");
    std::fs::create_dir(&up).unwrap();
    sh(
        &up,
        "git init -q -b main . && echo 1 > f && git add f && git commit -qm one && git tag v1 \
         && echo 2 > f && git commit -qam two",
    );
    up
}

#[test]
fn clones_then_keeps_up_with_upstream() {
    if Command::new("git").arg("--version").output().is_err() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let up = upstream(tmp.path());
    let dest = tmp.path().join("a/b/co");
    let head = sh(&up, "git rev-parse HEAD");
    let args = json!({"repo": up, "dest": dest});
    let r = ok(args.clone());
    assert_eq!(r["changed"], json!(true));
    assert_eq!(r["before"], json!(null));
    assert_eq!(r["after"], json!(head));
    assert_eq!(std::fs::read_to_string(dest.join("f")).unwrap(), "2\n");

    let r = ok(args.clone());
    assert_eq!(r["changed"], json!(false), "{r:?}");
    assert_eq!(r["before"], json!(head));
    assert_eq!(r["remote_url_changed"], json!(false));

    sh(&up, "echo 3 > f && git commit -qam three");
    let new = sh(&up, "git rev-parse HEAD");
    let mut check = args.as_object().unwrap().clone();
    check.insert("_ansible_check_mode".into(), json!(true));
    let r = ok(json!(check));
    assert_eq!(
        (r["changed"].clone(), r["after"].clone()),
        (json!(true), json!(new))
    );
    assert_eq!(
        sh(&dest, "git rev-parse HEAD"),
        head,
        "check mode changed nothing"
    );
    let r = ok(args.clone());
    assert_eq!(
        (r["before"].clone(), r["after"].clone()),
        (json!(head), json!(new))
    );

    let v1 = sh(&up, "git rev-parse v1");
    let r = ok(json!({"repo": up, "dest": dest, "version": "v1"}));
    assert_eq!(
        (r["changed"].clone(), r["after"].clone()),
        (json!(true), json!(v1))
    );

    std::fs::write(dest.join("f"), "local\n").unwrap();
    let (r, failed) = run(json!({"repo": up, "dest": dest, "version": "v1"}));
    assert!(failed);
    assert_eq!(
        r["msg"],
        json!(format!(
            "Local modifications exist in the destination: {} (force=no).",
            dest.display()
        ))
    );
    assert_eq!(r["before"], json!(v1));
    let r = ok(json!({"repo": up, "dest": dest, "version": "main", "force": true}));
    assert_eq!(r["after"], json!(new));
    assert_eq!(std::fs::read_to_string(dest.join("f")).unwrap(), "3\n");
}

#[test]
fn refused_and_invalid_options_are_named() {
    let msg = fails(json!({"repo": "/x", "dest": "/tmp/y", "key_file": "/k"}));
    assert!(msg.contains("'key_file'"), "{msg}");
    let msg = fails(json!({"repo": "/x", "dest": "/tmp/y", "umask": "022"}));
    assert!(msg.contains("'umask'"), "{msg}");
    let msg = fails(json!({"repo": "/x", "dest": "/tmp/y", "verify_commit": true}));
    assert!(msg.contains("'verify_commit'"), "{msg}");
    let msg = fails(json!({"repo": "/x"}));
    assert_eq!(
        msg,
        "the destination directory must be specified unless clone=no"
    );
    let msg = fails(json!({"dest": "/tmp/y"}));
    assert!(msg.contains("repo"), "{msg}");
}
