//! Where programs run and what lies directly under `/`: `chdir: /`, a `chdir` through
//! a symlink, `stat` and `creates` on a directory under `/`, and a program that cannot
//! start (`Error executing command.`, the error saying the OSError) — compared with
//! ansible-playbook on the recap, the values registered and the failure shown.

use sandball_e2e::Sandbox;
use std::path::Path;

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - command: pwd
      args: {chdir: /}
      register: root
    - shell: pwd && pwd -P
      args: {chdir: "{{ work }}/../link"}
      register: linked
    - stat: {path: /etc}
      register: etc
    - command: "true"
      args: {creates: /etc}
      register: skipped
    - command: sandball-no-such-program --flag
      register: missing
      failed_when: false
    - name: missing again
      command: sandball-no-such-program
      ignore_errors: true
    - copy:
        dest: "{{ work }}/out.json"
        content: "{{ {'root': root.stdout, 'linked': linked.stdout_lines | map('basename') | list,
                      'etc': [etc.stat.isdir, etc.stat.path], 'skipped': skipped.rc,
                      'missing': [missing.changed, missing.rc, 'start' in missing, missing.msg]} | to_json }}"
"#;

#[test]
fn programs_run_where_ansible_runs_them() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    let real = sb.dir("real");
    std::os::unix::fs::symlink(&real, sb.path().join("link")).unwrap();
    let pb = sb.write("play.yml", PLAY);
    let ours = sb.dir("ours");
    let out = sb.play(&pb, &ours, &[]).run();
    out.assert_no_panic().assert_code(0);
    let read = |dir: &std::path::Path| {
        let text = std::fs::read_to_string(dir.join("out.json")).unwrap();
        serde_json::from_str::<serde_json::Value>(&text).unwrap()
    };
    let got = read(&ours);
    assert_eq!(
        got,
        serde_json::json!({"root": "/", "linked": ["real", "real"], "etc": [true, "/etc"],
                           "skipped": 0, "missing": [false, 2, false, "Error executing command."]}),
        "{out}"
    );
    if let Some(theirs) = sb.ansible_play(&pb, &sb.dir("theirs"), &[]) {
        let theirs = theirs.run();
        out.assert_same_recap_as(&theirs)
            .assert_same_task_lines_as(&theirs, &["missing again"]);
        assert_eq!(got, read(&sb.path().join("theirs")));
    }
}

/// Paths through the system's compatibility links (`/var/run` leads to `/run`) are
/// used as Ansible uses them: created, written, read and removed.
#[test]
fn paths_through_var_run_work_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    let dir = format!("/var/run/sandball-e2e-{}", std::process::id());
    let pb = sb.write(
        "run.yml",
        &format!(
            r#"- hosts: all
  gather_facts: false
  tasks:
    - file: {{path: "{dir}/{{{{ tool }}}}", state: directory}}
    - copy: {{content: "pid\n", dest: "{dir}/{{{{ tool }}}}/app.pid"}}
    - stat: {{path: "{dir}/{{{{ tool }}}}/app.pid"}}
      register: pid
    - assert: {{that: [pid.stat.exists, pid.stat.size == 4]}}
    - slurp: {{src: "{dir}/{{{{ tool }}}}/app.pid"}}
      register: read
    - assert: {{that: ["read.content | b64decode == 'pid\n'"]}}
    - file: {{path: "{dir}", state: absent}}
"#
        ),
    );
    let work = sb.dir("work");
    let out = sb.play(&pb, &work, &["-e", "tool=sandball"]).run();
    out.assert_no_panic().assert_code(0);
    assert_eq!(out.host("alpha").changed, 3, "{out}");
    assert!(!Path::new(&dir).exists());
    if let Some(theirs) = sb.ansible_play(&pb, &work, &["-e", "tool=ansible"]) {
        out.assert_same_recap_as(&theirs.run());
    }
}
