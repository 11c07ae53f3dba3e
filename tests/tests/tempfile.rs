//! The `tempfile` component against ansible-core 2.19's module of the same name, and
//! its grant: `@tmpdir`, the node's temporary directory, which the shim resolves.
//! The same tasks run under sandball and ansible-playbook with `TMPDIR` set to a
//! directory of the test (the same for both); names are random, so each result's random part is checked
//! to be eight characters of `[a-z0-9_]` and then masked, and the rest compared whole.
//! The audit shows the fallback before anything runs, and the files made are checked
//! on disk (exclusive, mode 0600 / 0700).

use sandball_e2e::Sandbox;
use sandball_e2e::compare::{ansible_bin, both_run_env, result};
use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

const PLAY: &str = r##"
- hosts: all
  gather_facts: false
  tasks:
    - name: a file in the temporary directory
      tempfile: {}
    - name: a directory with a prefix and suffix
      tempfile: {state: directory, prefix: "x-", suffix: ".d"}
    - name: a file in a given directory
      tempfile: {path: "{{ work }}", suffix: .txt}
    - name: in a missing directory
      tempfile: {path: "{{ work }}/missing"}
      ignore_errors: true
    - name: a prefix that is a path
      tempfile: {prefix: "a/b"}
      ignore_errors: true
    - name: in check mode
      tempfile: {}
      check_mode: true
"##;

const TASKS: &[&str] = &[
    "a file in the temporary directory",
    "a directory with a prefix and suffix",
    "a file in a given directory",
    "in a missing directory",
    "a prefix that is a path",
    "in check mode",
];

/// `text` with each random name part after `prefix` (eight characters of
/// `[a-z0-9_]`) replaced by `XXXXXXXX`; panics when one is not random-looking.
fn masked(text: &str, prefix: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(prefix) {
        let (head, tail) = rest.split_at(at + prefix.len());
        out.push_str(head);
        let random: String = tail.chars().take(8).collect();
        assert!(
            random.len() == 8
                && random
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
            "{text}: {random:?} is not eight of [a-z0-9_]"
        );
        out.push_str("XXXXXXXX");
        rest = &tail[8..];
    }
    out.push_str(rest);
    out
}

/// A task's result, its random names masked and the temporary directory named TMP.
fn comparable(v: Value, tmp: &Path) -> Value {
    let text = v.to_string().replace(&tmp.display().to_string(), "TMP");
    let text = masked(&masked(&text, "/ansible."), "/x-");
    serde_json::from_str(&text).unwrap()
}

#[test]
fn tempfile_matches_ansible_core() {
    let sb = Sandbox::new();
    let tmp = sb.dir("tmp");
    let (ours, theirs, ours_work, theirs_work) = both_run_env(
        &sb,
        &ansible_bin("ANSIBLE_BIN_DIR", "venv"),
        PLAY,
        &[],
        &[("TMPDIR", &tmp)],
    );
    assert!(!ours.stdout.contains("legacy"), "{ours}");
    for task in TASKS {
        let a = comparable(result(&ours, task, &ours_work), &tmp);
        let b = comparable(result(&theirs, task, &theirs_work), &tmp);
        assert_eq!(
            a, b,
            "task {task:?}: sandball gave\n{a:#}\nansible-playbook gave\n{b:#}"
        );
    }
    // What was made, by each run: one file and one directory in the temporary
    // directory, one file in work, with Python's modes (less the umask, 022 here).
    let made = |dirs: &[&Path]| {
        let mut made: Vec<(String, bool, u32)> = dirs
            .iter()
            .flat_map(|d| std::fs::read_dir(d).unwrap())
            .map(|e| {
                let e = e.unwrap();
                let meta = std::fs::symlink_metadata(e.path()).unwrap();
                let name = format!("/{}", e.file_name().to_string_lossy());
                let name = masked(&masked(&name, "/ansible."), "/x-");
                (name, meta.is_dir(), meta.permissions().mode() & 0o7777)
            })
            .collect();
        made.sort();
        made
    };
    let entry = |name: &str, dir: bool, mode: u32| (name.to_string(), dir, mode);
    assert_eq!(
        made(&[&ours_work]),
        [entry("/ansible.XXXXXXXX.txt", false, 0o600)]
    );
    assert_eq!(
        made(&[&tmp, &ours_work, &theirs_work]),
        [
            entry("/ansible.XXXXXXXX", false, 0o600),
            entry("/ansible.XXXXXXXX", false, 0o600),
            entry("/ansible.XXXXXXXX.txt", false, 0o600),
            entry("/ansible.XXXXXXXX.txt", false, 0o600),
            entry("/x-XXXXXXXX.d", true, 0o700),
            entry("/x-XXXXXXXX.d", true, 0o700),
        ]
    );
}

#[test]
fn the_audit_shows_the_node_temporary_directory() {
    let sb = Sandbox::new();
    let out = sb.sandball(["audit", "module", "tempfile"]).run();
    out.assert_no_panic().assert_code(0);
    out.assert_stdout_has("fs read+write+create on $path (whole tree); without that argument, on @tmpdir (the node's temporary directory");
    sb.inventory(&["localhost"]);
    let pb = sb.write(
        "play.yml",
        "- hosts: all\n  gather_facts: false\n  tasks:\n    - tempfile: {}\n    - tempfile: {path: /srv/x}\n",
    );
    let inventory = sb.path().join("inventory.ini");
    let out = sb
        .sandball([
            "audit",
            "playbook",
            pb.to_str().unwrap(),
            "-i",
            inventory.to_str().unwrap(),
        ])
        .run();
    out.assert_no_panic().assert_code(0);
    out.assert_stdout_has("fs read+write+create on @tmpdir (the node's temporary directory: $TMPDIR, $TEMP or $TMP, else /tmp, /var/tmp or /usr/tmp, resolved by the shim) (whole tree)");
    out.assert_stdout_has("fs read+write+create on /srv/x (whole tree)");
    assert!(!out.stdout.contains("without that argument"), "{out}");
}
