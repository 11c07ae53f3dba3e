//! Behaviour of the whole module, run natively on cron files in temporary directories
//! through the SDK's `execute` (user crontabs are left to the end-to-end tests, which
//! compare them with ansible-core's): jobs added, found, updated, named and removed,
//! variables placed, check mode, diffs and the errors, as Ansible's cron behaves.

use super::{MANIFEST, cron};
use serde_json::{Value, json};
use std::fs;

sandball_guest_sdk::module_test_helpers!(MANIFEST, cron);

/// A fresh directory and the path of a cron file in it.
fn file() -> (tempfile::TempDir, String) {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("jobs").to_str().unwrap().to_string();
    (tmp, path)
}

fn on(path: &str, mut args: Value) -> Value {
    args["cron_file"] = json!(path);
    args["user"] = json!("root");
    args
}

#[test]
fn jobs_are_added_found_updated_and_removed() {
    let (_tmp, path) = file();
    let args = on(
        &path,
        json!({"name": "backup", "job": "/bin/backup", "minute": "5", "hour": "2"}),
    );
    let r = ok(args.clone());
    assert_eq!(r["changed"], json!(true));
    assert_eq!(r["jobs"], json!(["backup"]));
    assert_eq!(r["envs"], json!([]));
    assert_eq!(r["cron_file"], json!(path));
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        "#Ansible: backup\n5 2 * * * root /bin/backup\n"
    );
    assert_eq!(ok(args)["changed"], json!(false));
    let r = ok(on(
        &path,
        json!({"name": "backup", "job": "/bin/backup", "special_time": "daily", "disabled": true}),
    ));
    assert_eq!(r["changed"], json!(true));
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        "#Ansible: backup\n#@daily root /bin/backup\n"
    );
    // A line equal to the job, without a name, gets one.
    fs::write(&path, "1 1 * * * root /bin/x\n").unwrap();
    let r = ok(on(
        &path,
        json!({"name": "x", "job": "/bin/x", "minute": "1", "hour": "1"}),
    ));
    assert_eq!(r["changed"], json!(true));
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        "#Ansible: x\n1 1 * * * root /bin/x\n"
    );
    // Removing the last job removes the file.
    let r = ok(on(&path, json!({"name": "x", "state": "absent"})));
    assert_eq!(r["changed"], json!(true));
    assert_eq!(r["state"], json!("absent"));
    assert!(fs::metadata(&path).is_err());
    let r = ok(on(&path, json!({"name": "x", "state": "absent"})));
    assert_eq!(r["changed"], json!(false));
}

#[test]
fn variables_go_first_or_beside_another() {
    let (_tmp, path) = file();
    fs::write(&path, "#Ansible: j\n* * * * * root true\n").unwrap();
    ok(on(
        &path,
        json!({"name": "PATH", "job": "/bin", "env": true}),
    ));
    ok(on(
        &path,
        json!({"name": "SHELL", "job": "/bin/sh", "env": true, "insertafter": "PATH"}),
    ));
    ok(on(
        &path,
        json!({"name": "MAILTO", "job": "", "env": true, "insertbefore": "SHELL"}),
    ));
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        "PATH=\"/bin\"\nMAILTO=\"\"\nSHELL=\"/bin/sh\"\n#Ansible: j\n* * * * * root true\n"
    );
    let r = ok(on(
        &path,
        json!({"name": "PATH", "job": "/usr/bin", "env": true}),
    ));
    assert_eq!(r["envs"], json!(["PATH", "MAILTO", "SHELL"]));
    assert_eq!(r["jobs"], json!(["j"]));
    let r = ok(on(
        &path,
        json!({"name": "MAILTO", "env": true, "state": "absent"}),
    ));
    assert_eq!(r["changed"], json!(true));
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        "PATH=\"/usr/bin\"\nSHELL=\"/bin/sh\"\n#Ansible: j\n* * * * * root true\n"
    );
    let msg = fails(on(
        &path,
        json!({"name": "X", "job": "1", "env": true, "insertafter": "NOPE"}),
    ));
    assert_eq!(msg, "Variable named 'NOPE' not found.");
}

#[test]
fn check_mode_and_diff_change_nothing() {
    let (_tmp, path) = file();
    fs::write(&path, "A=\"1\"").unwrap();
    let mut args = on(&path, json!({"name": "j", "job": "true"}));
    args["_ansible_check_mode"] = json!(true);
    args["_ansible_diff"] = json!(true);
    let r = ok(args);
    assert_eq!(r["changed"], json!(true));
    assert_eq!(
        r["diff"],
        json!({
            "before": "A=\"1\"",
            "before_header": path,
            "after": "A=\"1\"\n#Ansible: j\n* * * * * root true\n",
            "after_header": path,
        })
    );
    assert_eq!(fs::read_to_string(&path).unwrap(), "A=\"1\"");
    // A file without a final newline is rewritten even when nothing else changes.
    let r = ok(on(&path, json!({"name": "A", "job": "1", "env": true})));
    assert_eq!(r["changed"], json!(true));
    assert_eq!(fs::read_to_string(&path).unwrap(), "A=\"1\"\n");
}

#[test]
fn bad_input_is_named() {
    let (_tmp, path) = file();
    let cases = [
        (
            json!({"name": "j", "job": "x", "cron_file": "/etc/crontab", "user": "root"}),
            "Will not manage /etc/crontab via cron_file, see documentation.",
        ),
        (
            json!({"name": "j", "job": "x", "cron_file": path}),
            "To use cron_file=... parameter you must specify user=... as well",
        ),
        (
            on(&path, json!({"name": "j"})),
            "You must specify 'job' to install a new cron job or variable",
        ),
        (
            on(
                &path,
                json!({"name": "j", "job": "x", "special_time": "daily", "hour": "1"}),
            ),
            "You cannot combine special_time with any of the time or day/date parameters.",
        ),
        (
            on(&path, json!({"name": "j", "job": "x", "insertafter": "A"})),
            "Insertafter and insertbefore parameters are valid only with env=yes",
        ),
        (
            on(&path, json!({"name": "A B", "job": "x", "env": true})),
            "Invalid name for environment variable",
        ),
    ];
    for (args, msg) in cases {
        assert_eq!(fails(args), msg);
    }
    assert!(fails(on(&path, json!({"name": "j", "job": "x", "backup": true}))).contains("backup"));
    let r = ok(on(&path, json!({"name": "j", "job": "x\ny"})));
    assert_eq!(r["warnings"], json!(["Job should not contain line breaks"]));
}
