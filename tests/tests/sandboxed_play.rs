//! A play that gathers facts the default way and uses the built-in components the
//! common playbook needs runs with no ansible-core on the controller (the finder is
//! pointed at nothing): every task's module is a sandboxed component, as the audit log
//! shows, one line per run.

use sandball_e2e::Sandbox;
use serde_json::Value;
use std::process::Command;

const PLAY: &str = r#"
- hosts: all
  tasks:
    - ping:
    - file: {path: "{{ work }}/d", state: directory, mode: "0755"}
    - copy: {dest: "{{ work }}/d/app.conf", content: "port=1\n"}
    - lineinfile: {path: "{{ work }}/d/app.conf", line: "name={{ ansible_hostname }}"}
    - blockinfile: {path: "{{ work }}/d/app.conf", block: "extra=1"}
    - replace: {path: "{{ work }}/d/app.conf", regexp: '^port=\d+', replace: port=2}
    - stat: {path: "{{ work }}/d/app.conf"}
      register: st
    - find: {paths: "{{ work }}/d", patterns: "*.conf"}
      register: found
    - slurp: {src: "{{ work }}/d/app.conf"}
    - wait_for: {path: "{{ work }}/d/app.conf", search_regex: port=2, timeout: 5}
    - tempfile: {state: file, suffix: .tmp}
      register: tmp
    - file: {path: "{{ tmp.path }}", state: absent}
    - getent: {database: passwd, key: root}
    - known_hosts: {path: "{{ work }}/known_hosts", name: example.org, key: "example.org {{ host_key }}"}
    - git: {repo: "{{ work }}/repo", dest: "{{ work }}/clone"}
    - cron: {name: nightly, job: /bin/true, hour: "3", cron_file: sandball-check, user: root}
      check_mode: true
    - group: {name: sandball_nopy_check, state: present}
      check_mode: true
    - command: echo done
    - assert:
        that:
          - st.stat.exists
          - found.matched == 1
          - getent_passwd.root[0] == 'x'
          - ansible_facts.os_family is defined
"#;

fn sh(cmd: &mut Command) {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_common_play_runs_with_every_module_sandboxed() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    let work = sb.dir("work");
    // A repository to clone and a host key to trust.
    let repo = work.join("repo");
    sh(Command::new("git").args(["init", "-q"]).arg(&repo));
    std::fs::write(repo.join("README"), "hello\n").unwrap();
    sh(Command::new("git")
        .arg("-C")
        .arg(&repo)
        .args(["add", "README"]));
    sh(Command::new("git").arg("-C").arg(&repo).args([
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@example.org",
        "commit",
        "-q",
        "-m",
        "first",
    ]));
    let key = work.join("hostkey");
    sh(Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", ""])
        .arg("-f")
        .arg(&key));
    let public = std::fs::read_to_string(key.with_extension("pub")).unwrap();
    let public: Vec<&str> = public.split_whitespace().take(2).collect();
    let pb = sb.write("site.yml", PLAY);
    let log = sb.path().join("audit.jsonl");
    let host_key = serde_json::json!({"host_key": public.join(" ")}).to_string();
    let out = sb
        .play(
            &pb,
            &work,
            &["--audit-log", log.to_str().unwrap(), "-e", &host_key],
        )
        .env("SANDBALL_ANSIBLE_CORE", "/nonexistent/ansible")
        .env("SANDBALL_ANSIBLE_PYTHON", "/nonexistent/python3")
        .env_remove("ANSIBLE_BIN_DIR")
        .run();
    out.assert_no_panic().assert_code(0);
    let text = std::fs::read_to_string(&log).unwrap();
    let runs: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let modules: std::collections::BTreeSet<&str> =
        runs.iter().filter_map(|r| r["module"].as_str()).collect();
    for m in [
        "setup",
        "ping",
        "file",
        "copy",
        "lineinfile",
        "blockinfile",
        "replace",
        "stat",
        "find",
        "slurp",
        "wait_for",
        "tempfile",
        "getent",
        "known_hosts",
        "git",
        "cron",
        "group",
        "command",
    ] {
        assert!(modules.contains(m), "no audit line for {m}: {modules:?}");
    }
    for r in &runs {
        assert_eq!(r["kind"], "component", "{r}");
        assert_eq!(r["sandboxed"], true, "{r}");
    }
    assert!(!out.stderr.contains("legacy"), "{out}");
}
