//! `become_method: su` with a password, from a user that is not root (su asks it for
//! the password): on the local connection and over ssh, a raw command, a component (in
//! the su user's own shim session) and a legacy module run as the su user, and a wrong
//! password fails the host with ansible-core's message. One playbook, four hosts (right
//! and wrong password, local and ssh), run by both tools as the unprivileged user.

use sandball_e2e::sshd::{Sshd, deployable_shim};
use sandball_e2e::users::{BECOME_USER, become_uid, become_user_ready, ensure_user, set_password};
use sandball_e2e::{Output, Sandbox};
use serde_json::Value;
use std::os::unix::fs::{PermissionsExt, chown};
use std::path::Path;

/// The user su becomes, with a password.
const SU_USER: &str = "sandball-su";
const PASSWORD: &str = "su-pw-not-shown-7";

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  become: true
  become_method: su
  become_user: sandball-su
  tasks:
    - name: raw
      raw: id -un
    - name: component
      command: id -un
    - name: legacy
      who_runs:
"#;

const WHO_RUNS: &str = r#"#!/usr/bin/python
from ansible.module_utils.basic import AnsibleModule
import os
import pwd

AnsibleModule(argument_spec={}).exit_json(changed=False, user=pwd.getpwuid(os.getuid()).pw_name)
"#;

/// The one-line result (`-v`) of `task` on `host`.
fn result(out: &Output, task: &str, host: &str) -> Value {
    let tag = format!("[{host}]");
    let line = out
        .task_lines(task)
        .into_iter()
        .find(|l| l.contains(&tag) && l.contains("=> {"))
        .unwrap_or_else(|| panic!("no result of {task} on {host}:\n{out}"));
    let json = &line[line.find("=> {").unwrap_or(0) + 3..];
    serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {line}\n{out}"))
}

#[test]
fn su_with_a_password_runs_raw_components_and_legacy_modules() {
    if !become_user_ready() {
        return;
    }
    ensure_user(SU_USER);
    set_password(SU_USER, PASSWORD);
    // Over ssh the su user's shim is deployed through su (on its terminal) every time.
    let _ = std::fs::remove_dir_all(format!("/home/{SU_USER}/.sandball"));
    let sshd = Sshd::start();
    let sb = Sandbox::new();
    let uid = become_uid();
    let own = |p: &Path, mode: u32| {
        chown(p, Some(uid), Some(uid)).unwrap();
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    // Everything the unprivileged controller reads or writes is its own; the ssh
    // client wants its key private.
    let copy = |from: &Path, name: &str, mode: u32| {
        let to = sb.path().join(name);
        std::fs::copy(from, &to).unwrap();
        own(&to, mode);
        to
    };
    let key = copy(&sshd.client_key(), "client_key", 0o600);
    let known = copy(&sshd.known_hosts(), "known_hosts", 0o644);
    let vars = |pw: &str| format!("ansible_user={BECOME_USER} ansible_become_password={pw}");
    let node = |alias: &str, pw: &str| {
        let cache = sb.dir(&format!("node-{alias}"));
        own(&cache, 0o700);
        sshd.host_line_with(alias, &cache, &known, &key, &vars(pw))
    };
    let inventory = format!(
        "[nodes]\nhere ansible_connection=local ansible_become_password={PASSWORD}\n\
         here-wrong ansible_connection=local ansible_become_password=wrong-pw\n{}{}\
         [nodes:vars]\nansible_python_interpreter={}\nansible_shell_allow_world_readable_temp=true\n",
        node("there", PASSWORD),
        node("there-wrong", "wrong-pw"),
        sandball_e2e::binaries::ansible_python().display(),
    );
    sb.write("inventory.ini", &inventory);
    let pb = sb.write("play.yml", PLAY);
    sb.write("library/who_runs.py", WHO_RUNS);
    let ours_work = sb.dir("work");
    let theirs_work = sb.dir("ansible-work");
    let cache = sb.dir("cache");
    for p in [
        "inventory.ini",
        "play.yml",
        "library",
        "library/who_runs.py",
    ] {
        own(&sb.path().join(p), 0o755);
    }
    for p in [sb.path(), &ours_work, &theirs_work, &cache] {
        own(p, 0o755);
    }
    let ours = sb
        .play_with_core(&pb, &ours_work, &["-v"])
        .env("SANDBALL_SHIM", deployable_shim())
        .env("SANDBALL_CACHE_DIR", &cache)
        .env("SSH_AUTH_SOCK", "")
        .as_user(uid, uid, sb.path())
        .run();
    ours.assert_no_panic().assert_code(2);
    assert!(
        !ours.stdout.contains(PASSWORD) && !ours.stderr.contains(PASSWORD),
        "the become password was shown:\n{ours}"
    );
    for host in ["here", "there"] {
        let raw = result(&ours, "raw", host);
        assert_eq!(raw["stdout_lines"], serde_json::json!([SU_USER]), "{ours}");
        assert_eq!(
            result(&ours, "component", host)["stdout"],
            SU_USER,
            "{ours}"
        );
        assert_eq!(result(&ours, "legacy", host)["user"], SU_USER, "{ours}");
    }
    let Some(theirs) = sb.ansible_play(&pb, &theirs_work, &["-v"]) else {
        return;
    };
    // No ssh master left running after the test (ansible-core's ControlPersist).
    let theirs = theirs
        .env("SSH_AUTH_SOCK", "")
        .env("ANSIBLE_SSH_ARGS", "-o ControlMaster=no")
        .as_user(uid, uid, sb.path())
        .run();
    ours.assert_same_recap_as(&theirs);
    // Over ssh, ansible-core's terminal is not raw: its output has `\r\n` and the blank
    // line su leaves after the password.
    let lines = |v: &Value| -> Vec<String> {
        let text = v["stdout"].as_str().unwrap_or_default().to_string();
        text.lines()
            .map(|l| l.trim_end_matches('\r').to_string())
            .filter(|l| !l.is_empty())
            .collect()
    };
    for host in ["here", "there"] {
        assert_eq!(
            lines(&result(&ours, "raw", host)),
            lines(&result(&theirs, "raw", host)),
            "raw on {host}:\n{ours}\n{theirs}"
        );
        for (task, field) in [("component", "stdout"), ("legacy", "user")] {
            assert_eq!(
                result(&ours, task, host)[field],
                result(&theirs, task, host)[field],
                "{task} on {host}:\n{ours}\n{theirs}"
            );
        }
    }
    for host in ["here-wrong", "there-wrong"] {
        assert_eq!(
            result(&ours, "raw", host)["msg"],
            result(&theirs, "raw", host)["msg"],
            "{host}:\n{ours}\n{theirs}"
        );
    }
}
