//! The account components (`getent`, `group`, `user`) and `hostname` against
//! ansible-core's modules of the same name: one playbook of scenarios per module run
//! under sandball and ansible-playbook 2.19, each task's result fields compared. The
//! accounts a play makes have unique names (`sbt_<pid>_…`); the play writes their
//! `/etc/passwd`, `/etc/group` and `/etc/shadow` lines down before it removes them,
//! and those are compared too. A guard removes whatever is left, even when a test fails.

use sandball_e2e::Sandbox;
use sandball_e2e::compare::{ansible_bin, both_run};

/// The `getent` scenarios: every database shape, the key and service forms, failures.
const GETENT_PLAY: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: one user
      getent: {database: passwd, key: root}
    - name: every user
      getent: {database: passwd}
    - name: the fact is set
      debug: {msg: "{{ getent_passwd.root[4] }} {{ ansible_facts.getent_passwd.root[5] }}"}
    - name: one group
      getent: {database: group, key: root}
    - name: a shadow entry
      getent: {database: shadow, key: root}
    - name: hosts split on whitespace
      getent: {database: hosts, key: localhost}
    - name: a service
      getent: {database: services, key: http}
    - name: every service
      getent: {database: services}
    - name: a split of our own
      getent: {database: passwd, key: root, split: "/"}
    - name: a name service
      getent: {database: passwd, key: root, service: files}
    - name: a missing key tolerated
      getent: {database: passwd, key: sbt_no_such_user, fail_key: false}
    - name: a missing key
      getent: {database: group, key: sbt_no_such_group}
      ignore_errors: true
    - name: an unknown database
      getent: {database: nonsense}
      ignore_errors: true
    - name: no database
      getent: {key: root}
      ignore_errors: true
    - name: check mode
      getent: {database: group, key: root}
      check_mode: true
"#;

const GETENT_FIELDS: &[(&str, &[&str])] = &[
    ("one user", &["changed", "ansible_facts"]),
    ("every user", &["changed", "ansible_facts"]),
    ("the fact is set", &["msg"]),
    ("one group", &["changed", "ansible_facts"]),
    ("a shadow entry", &["changed", "ansible_facts"]),
    ("hosts split on whitespace", &["changed", "ansible_facts"]),
    ("a service", &["changed", "ansible_facts"]),
    ("every service", &["changed", "ansible_facts"]),
    ("a split of our own", &["changed", "ansible_facts"]),
    ("a name service", &["changed", "ansible_facts"]),
    (
        "a missing key tolerated",
        &["changed", "failed", "msg", "ansible_facts"],
    ),
    (
        "a missing key",
        &["changed", "failed", "msg", "ansible_facts"],
    ),
    ("an unknown database", &["changed", "failed", "msg"]),
    ("no database", &["failed", "msg"]),
    ("check mode", &["changed", "ansible_facts"]),
];

#[test]
fn getent_matches_ansible_core() {
    let sb = Sandbox::new();
    let (ours, ..) = both_run(
        &sb,
        &ansible_bin("ANSIBLE_BIN_DIR", "venv"),
        GETENT_PLAY,
        GETENT_FIELDS,
    );
    assert!(!ours.stdout.contains("legacy"), "{ours}");
    assert!(ours.stdout.contains("\"getent_services\""), "{ours}");
}
