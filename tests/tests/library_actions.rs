//! A module library holding modules of the names of actions (`shell`, `copy`,
//! `template`… — ansible-core's own `modules/` directory as `ANSIBLE_LIBRARY`, or
//! copies of its files in `library/` beside the playbook): the action of that name
//! still runs, as ansible-core resolves it to its action plugin, and the modules it
//! runs are the library's — compared with ansible-playbook.

use sandball_e2e::Sandbox;
use std::path::PathBuf;

/// Every action sandball has an action plugin for that ansible-core has one for too.
const ACTIONS: &[&str] = &[
    "debug",
    "assert",
    "set_fact",
    "include_vars",
    "add_host",
    "group_by",
    "validate_argument_spec",
    "fail",
    "set_stats",
    "pause",
    "raw",
    "reboot",
    "async_status",
    "script",
    "copy",
    "template",
    "assemble",
    "fetch",
    "unarchive",
    "shell",
    "gather_facts",
    "wait_for_connection",
    "package",
    "service",
];

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  vars: {x: 1}
  tasks:
    - name: shell
      shell: echo hello
    - name: copy
      copy: {content: "a\n", dest: "{{ work }}/c.txt"}
    - name: template
      template: {src: t.j2, dest: "{{ work }}/t.txt"}
    - name: command
      command: echo cmd
    - name: every other action, checked before the run but not run
      when: false
      block:
        - debug: {msg: x}
        - assert: {that: true}
        - set_fact: {a: 1}
        - include_vars: {file: vars.yml}
        - add_host: {name: other}
        - group_by: {key: g}
        - validate_argument_spec: {argument_spec: {}}
        - fail: {msg: x}
        - set_stats: {data: {a: 1}}
        - pause: {seconds: 1}
        - raw: echo
        - reboot:
        - async_status: {jid: "1"}
        - script: x.sh
        - assemble: {src: a, dest: b}
        - fetch: {src: a, dest: b}
        - unarchive: {src: a, dest: b}
        - gather_facts:
        - wait_for_connection:
        - package: {name: x}
        - service: {name: x}
"#;

/// ansible-core's `modules/` directory, in the venv of the Python the tests use.
fn core_modules() -> PathBuf {
    let python = sandball_e2e::binaries::ansible_python();
    let venv = python
        .parent()
        .and_then(|bin| bin.parent())
        .unwrap_or_else(|| panic!("no venv around {}", python.display()));
    std::fs::read_dir(venv.join("lib"))
        .unwrap_or_else(|e| panic!("{}: {e}; run `make ansible`", venv.display()))
        .filter_map(Result::ok)
        .map(|e| e.path().join("site-packages/ansible/modules"))
        .find(|p| p.is_dir())
        .unwrap_or_else(|| panic!("no ansible-core in {}; run `make ansible`", venv.display()))
}

/// Runs the play under both tools with `env`, in a sandbox prepared by `prepare`.
fn runs_as_ansible_playbook(prepare: impl Fn(&Sandbox), env: &[(&str, PathBuf)]) {
    let sb = Sandbox::new();
    sb.inventory_with_python(&["alpha"]);
    sb.write("t.j2", "hi {{ x }}\n");
    prepare(&sb);
    let pb = sb.write("play.yml", PLAY);
    let ours_work = sb.dir("work");
    let mut ours = sb.play_with_core(&pb, &ours_work, &["-v"]);
    for (k, v) in env {
        ours = ours.env(k, v);
    }
    let ours = ours.run();
    ours.assert_no_panic().assert_code(0);
    ours.assert_stdout_has("\"stdout\": \"hello\"");
    assert_eq!(
        std::fs::read_to_string(ours_work.join("t.txt")).unwrap_or_default(),
        "hi 1\n"
    );
    let theirs_work = sb.dir("ansible-work");
    if let Some(mut theirs) = sb.ansible_play(&pb, &theirs_work, &["-v"]) {
        for (k, v) in env {
            theirs = theirs.env(k, v);
        }
        let theirs = theirs.run();
        assert_eq!(theirs.code, 0, "{theirs}");
        ours.assert_same_recap_as(&theirs);
        for file in ["c.txt", "t.txt"] {
            assert_eq!(
                std::fs::read(ours_work.join(file)).ok(),
                std::fs::read(theirs_work.join(file)).ok(),
                "{file}"
            );
        }
    }
}

#[test]
fn a_library_of_action_names_beside_the_playbook_leaves_the_actions_running() {
    let modules = core_modules();
    runs_as_ansible_playbook(
        |sb| {
            for name in ACTIONS.iter().chain(&["command"]) {
                let source = modules.join(format!("{name}.py"));
                let text = std::fs::read_to_string(&source)
                    .unwrap_or_else(|e| panic!("{}: {e}", source.display()));
                sb.write(&format!("library/{name}.py"), &text);
            }
        },
        &[],
    );
}

#[test]
fn ansible_cores_own_modules_as_ansible_library_leave_the_actions_running() {
    runs_as_ansible_playbook(|_| {}, &[("ANSIBLE_LIBRARY", core_modules())]);
}
