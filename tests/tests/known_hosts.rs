//! The `known_hosts` component against ansible-core's module of the same name: one
//! playbook of scenarios (adding, re-adding, replacing and removing keys, hashed names,
//! ports, check mode, modes, the errors) run under sandball and ansible-playbook 2.19,
//! each task's result fields compared, then every file the two runs left. Hashed host
//! names differ by their random salt, so they are compared by what they hash:
//! `ssh-keygen -F NAME` must find the same lines in both files.

use sandball_e2e::Sandbox;
use sandball_e2e::compare::{ansible_bin, both_run};
use std::path::Path;
use std::process::Command;

const ED1: &str =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGYCcJSkkdz6N52zMhCqDPiyLe1hztS9mR5ETcvnpFQM";
const ED2: &str =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB4cK7jsotLkgFI3AMMPqxVBKdDfloJMx6qNIjQL+vL5";

const PLAY: &str = r##"
- hosts: all
  gather_facts: false
  tasks:
    - name: a file with a mode of its own
      copy: {dest: "{{ work }}/private", content: "# mine\n", mode: "0600"}
    - name: add
      known_hosts: {path: "{{ work }}/kh", name: Web.Example, key: "web.example ED1"}
    - name: add again
      known_hosts: {path: "{{ work }}/kh", name: web.example, key: "web.example ED1"}
    - name: add hashed
      known_hosts: {path: "{{ work }}/kh", name: db, key: "db ED2", hash_host: true}
    - name: add hashed again
      known_hosts: {path: "{{ work }}/kh", name: db, key: "db ED2", hash_host: true}
    - name: the same key given plain for a hashed name
      known_hosts: {path: "{{ work }}/kh", name: db, key: "db ED2"}
    - name: replace a key of the same type
      known_hosts: {path: "{{ work }}/kh", name: web.example, key: "web.example ED2"}
    - name: a port
      known_hosts: {path: "{{ work }}/kh", name: "[web.example]:2222", key: "[web.example]:2222 ED1"}
    - name: check mode
      known_hosts: {path: "{{ work }}/kh", name: new, key: "new ED1"}
      check_mode: true
    - name: absent with a key not there
      known_hosts: {path: "{{ work }}/kh", name: web.example, key: "web.example ED1", state: absent}
    - name: absent with a key
      known_hosts: {path: "{{ work }}/kh", name: "[web.example]:2222", key: "[web.example]:2222 ED1", state: absent}
    - name: absent without a key
      known_hosts: {path: "{{ work }}/kh", name: db, state: absent}
    - name: absent without a key again
      known_hosts: {path: "{{ work }}/kh", name: db, state: absent}
    - name: keeps the mode
      known_hosts: {path: "{{ work }}/private", name: web.example, key: "web.example ED1", hash_host: true}
    - name: a missing directory
      known_hosts: {path: "{{ work }}/nodir/kh", name: web.example, key: "web.example ED1"}
      ignore_errors: true
    - name: no key
      known_hosts: {path: "{{ work }}/kh", name: web.example}
      ignore_errors: true
    - name: a list of names
      known_hosts: {path: "{{ work }}/kh", name: "a,b", key: "a ED1"}
      ignore_errors: true
    - name: a key for another host
      known_hosts: {path: "{{ work }}/kh", name: other, key: "web.example ED1"}
      ignore_errors: true
"##;

const RESULT: &[&str] = &[
    "changed",
    "name",
    "key",
    "hash_host",
    "path",
    "state",
    "mode",
    "size",
    "uid",
    "owner",
];
const FAILED: &[&str] = &["failed", "msg"];

const FIELDS: &[(&str, &[&str])] = &[
    ("add", RESULT),
    ("add again", RESULT),
    ("add hashed", RESULT),
    ("add hashed again", RESULT),
    ("the same key given plain for a hashed name", RESULT),
    ("replace a key of the same type", RESULT),
    ("a port", RESULT),
    ("check mode", RESULT),
    ("absent with a key not there", RESULT),
    ("absent with a key", RESULT),
    ("absent without a key", RESULT),
    ("absent without a key again", RESULT),
    ("keeps the mode", RESULT),
    // ansible-core's message carries Python's errno text and a temporary name.
    ("a missing directory", &["failed"]),
    ("no key", FAILED),
    ("a list of names", FAILED),
    ("a key for another host", FAILED),
];

/// The names the play uses: hashed lines are shown as the one they hash.
const NAMES: &[&str] = &["web.example", "db", "[web.example]:2222", "new"];

/// Every file below `dir` with its content, hashed host names written `<hash of NAME>`.
fn files(dir: &Path) -> Vec<(String, String, u32)> {
    use std::os::unix::fs::PermissionsExt;
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let mut lines: Vec<String> = std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect();
        for name in NAMES {
            let found = Command::new("ssh-keygen")
                .args(["-F", name, "-f"])
                .arg(&path)
                .output()
                .expect("ssh-keygen runs");
            for l in String::from_utf8_lossy(&found.stdout).lines() {
                let Some(n) = l.split("found: line ").nth(1) else {
                    continue;
                };
                let n: usize = n.split_whitespace().next().unwrap().parse().unwrap();
                let line = &mut lines[n - 1];
                if line.starts_with("|1|") {
                    let rest = line.split_once(' ').unwrap().1.to_string();
                    *line = format!("<hash of {name}> {rest}");
                }
            }
        }
        assert!(
            lines.iter().all(|l| !l.starts_with("|1|")),
            "a hashed name of no host the play used: {lines:?}"
        );
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777;
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        out.push((name, lines.join("\n"), mode));
    }
    out.sort();
    out
}

#[test]
fn known_hosts_matches_ansible_core() {
    let sb = Sandbox::new();
    let play = PLAY.replace("ED1", ED1).replace("ED2", ED2);
    let (ours, _, ours_work, theirs_work) =
        both_run(&sb, &ansible_bin("ANSIBLE_BIN_DIR", "venv"), &play, FIELDS);
    assert!(!ours.stdout.contains("legacy"), "{ours}");
    let (a, b) = (files(&ours_work), files(&theirs_work));
    assert!(
        a.iter().any(|(name, _, _)| name == "kh.old"),
        "ssh-keygen -R's backup: {a:?}"
    );
    assert!(
        a.iter()
            .any(|(_, text, _)| text.contains("<hash of web.example>")),
        "{a:?}"
    );
    assert_eq!(a, b, "the files differ:\n{ours}");
}
