//! Behaviour of the whole module, run natively through the SDK's `execute` (programs
//! then run on the local OS): results, skips, check mode and failures as Ansible's
//! command module reports them.

use super::{MANIFEST, command};
use sandball_guest_sdk::execute;
use serde_json::{Map, Value, json};

sandball_guest_sdk::module_test_helpers!(MANIFEST, command);

/// True when `text` reads like Python's `str(datetime)`.
fn is_datetime(text: &Value) -> bool {
    let t = text.as_str().unwrap_or_default();
    t.len() >= 19 && &t[4..5] == "-" && &t[10..11] == " " && &t[13..14] == ":"
}

#[test]
fn runs_a_split_command_line() {
    let r = ok(json!({"_raw_params": "printf '%s|%s' 'a b' \"c#d\""}));
    assert_eq!(r["cmd"], json!(["printf", "%s|%s", "a b", "c#d"]));
    assert_eq!(r["stdout"], json!("a b|c#d"));
    assert_eq!(r["stdout_lines"], json!(["a b|c#d"]));
    assert_eq!(
        (r["rc"].clone(), r["changed"].clone()),
        (json!(0), json!(true))
    );
    assert_eq!(r["msg"], json!(""));
    assert!(is_datetime(&r["start"]) && is_datetime(&r["end"]), "{r:?}");
    assert!(r["delta"].as_str().unwrap().starts_with("0:00:"), "{r:?}");
}

#[test]
fn argv_is_taken_as_given_and_stdin_is_fed() {
    let r = ok(json!({"argv": ["cat"], "stdin": "hello"}));
    assert_eq!(r["stdout"], json!("hello"));
    let r = ok(json!({"argv": ["od", "-c"], "stdin": "x", "stdin_add_newline": false}));
    assert!(!r["stdout"].as_str().unwrap().contains("\\n"), "{r:?}");
    let r = ok(json!({"cmd": "printf 'a\\n\\n'", "strip_empty_ends": false}));
    assert_eq!(r["stdout"], json!("a\n\n"));
    assert_eq!(r["stdout_lines"], json!(["a", ""]));
    let r = ok(json!({"cmd": "printf 'a\\n\\n'"}));
    assert_eq!(r["stdout"], json!("a"));
}

#[test]
fn expands_variables_unless_told_not_to() {
    let Ok(home) = std::env::var("HOME") else {
        return;
    };
    let r = ok(json!({"argv": ["echo", "$HOME", "~"]}));
    assert_eq!(r["stdout"], json!(format!("{home} {home}")));
    assert_eq!(r["cmd"], json!(["echo", "$HOME", "~"]));
    let r = ok(json!({"argv": ["echo", "$HOME"], "expand_argument_vars": false}));
    assert_eq!(r["stdout"], json!("$HOME"));
}

#[test]
fn a_non_zero_exit_fails_with_every_field() {
    let (r, failed) = run(json!({"_raw_params": "sh -c 'echo out; echo err >&2; exit 3'"}));
    assert!(failed);
    assert_eq!(r["msg"], json!("non-zero return code"));
    assert_eq!(r["rc"], json!(3));
    assert_eq!(r["stdout"], json!("out"));
    assert_eq!(r["stderr_lines"], json!(["err"]));
    assert_eq!(r["changed"], json!(true));
}

#[test]
fn a_missing_program_reports_the_os_error() {
    let (r, failed) = run(json!({"_raw_params": "no-such-program-xyz 'a b'"}));
    assert!(failed);
    assert_eq!(r["msg"], json!("Error executing command."), "{r:?}");
    assert_eq!(
        r["exception"]["event"]["chain"]["event"]["msg"],
        json!("[Errno 2] No such file or directory: b'no-such-program-xyz'")
    );
    assert_eq!(r["rc"], json!(2));
    assert_eq!(r["cmd"], json!("no-such-program-xyz 'a b'"));
}

#[test]
fn creates_and_removes_skip_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let made = tmp.path().join("made");
    std::fs::write(&made, "").unwrap();
    let made = made.to_str().unwrap();
    let r = ok(json!({"_raw_params": "false", "creates": made}));
    assert_eq!(r["changed"], json!(false));
    assert_eq!(r["rc"], json!(0));
    assert_eq!(
        r["msg"],
        json!(format!("Did not run command since '{made}' exists"))
    );
    assert_eq!(r["stdout"], json!(format!("skipped, since {made} exists")));
    assert_eq!(r["cmd"], json!(["false"]));

    let gone = tmp.path().join("gone*");
    let r = ok(json!({"_raw_params": "false", "removes": gone.to_str().unwrap()}));
    assert_eq!(r["changed"], json!(false));
    assert!(
        r["msg"].as_str().unwrap().ends_with("does not exist'")
            || r["msg"].as_str().unwrap().ends_with("' does not exist")
    );

    let r = ok(
        json!({"_raw_params": "true", "creates": "made", "chdir": tmp.path().to_str().unwrap()}),
    );
    assert_eq!(r["msg"], json!("Did not run command since 'made' exists"));
}

#[test]
fn check_mode_skips_or_predicts() {
    let r = ok(json!({"_raw_params": "touch /nonexistent/x", "_ansible_check_mode": true}));
    assert_eq!(r["skipped"], json!(true));
    assert_eq!(r["changed"], json!(false));
    assert_eq!(
        r["msg"],
        json!("Command would have run if not in check mode")
    );
    assert_eq!(r["rc"], json!(0));
    let r = ok(
        json!({"_raw_params": "false", "creates": "/nonexistent/x", "_ansible_check_mode": true}),
    );
    assert_eq!(r["changed"], json!(true));
    assert!(r.get("skipped").is_none());
    assert!(r["start"].is_null());
}

#[test]
fn argument_errors_read_like_ansible() {
    let (r, failed) = run(json!({"_raw_params": "true", "argv": ["true"]}));
    assert!(failed);
    assert_eq!(
        r["msg"],
        json!("parameters are mutually exclusive: _raw_params|cmd|argv")
    );
    let (r, failed) = run(json!({"_raw_params": "   "}));
    assert!(failed);
    assert_eq!(
        (r["msg"].clone(), r["rc"].clone()),
        (json!("no command given"), json!(256))
    );
    let (r, failed) = run(json!({"_raw_params": "echo 'unbalanced"}));
    assert!(failed);
    assert!(
        r["msg"].as_str().unwrap().contains("No closing quotation"),
        "{r:?}"
    );
    let (r, failed) = run(json!({"_raw_params": "true", "chdir": "/nonexistent/dir"}));
    assert!(failed);
    assert!(
        r["msg"]
            .as_str()
            .unwrap()
            .starts_with("Unable to change directory before execution")
    );
    // A program that cannot start changed nothing and has no times.
    let (r, failed) = run(json!({"_raw_params": "sandball-no-such-program --flag"}));
    assert!(failed);
    assert_eq!(
        (r["changed"].clone(), r["rc"].clone()),
        (json!(false), json!(2))
    );
    assert!(
        r.get("start").is_none() && r.get("delta").is_none(),
        "{r:?}"
    );
}

#[test]
fn executable_is_ignored_with_a_warning() {
    let r = ok(json!({"_raw_params": "true", "executable": "/bin/bash"}));
    assert!(
        r["warnings"][0].as_str().unwrap().contains("/bin/bash"),
        "{r:?}"
    );
}

/// Runs the `shell` module with `args` (its manifest, the same body).
fn shell(args: Value) -> Map<String, Value> {
    let input = serde_json::to_vec(&args).unwrap();
    let out = execute(
        include_str!("../shell.json"),
        &input,
        &|_| None,
        super::shell,
    );
    assert!(!out.failed, "unexpected failure: {:?}", out.result);
    out.result
}

#[test]
fn shell_runs_the_line_through_the_executable_and_reports_it_as_given() {
    let r =
        shell(json!({"_raw_params": "echo $0 | tr a-z A-Z; echo 'x  y'", "executable": "/bin/sh"}));
    assert_eq!(r["stdout"], json!("/BIN/SH\nx  y"));
    assert_eq!(r["cmd"], json!("echo $0 | tr a-z A-Z; echo 'x  y'"));
    assert_eq!(r["rc"], json!(0));
    // Words of `argv` are quoted into the line; `cmd` shows them as given.
    let r = shell(json!({"argv": ["printf", "%s|", "a b", "$HOME"], "executable": "/bin/sh"}));
    assert_eq!(r["stdout"], json!("a b|$HOME|"));
    assert_eq!(r["cmd"], json!(["printf", "%s|", "a b", "$HOME"]));
    // No executable warning, unlike command.
    assert!(r.get("warnings").is_none(), "{r:?}");
}
