//! Which module a task runs: ansible-core's routing of builtin names (`yum` runs `dnf`:
//! there is no `yum` module in ansible-core 2.19, so playbooks written for `yum` are
//! accepted and run it), and the hand-over from a built-in component to ansible-core's
//! module when the component refuses an option it does not carry out (as policy allows
//! legacy modules; `shell`'s is ansible-core's `command` with `_uses_shell`) — compared
//! with ansible-playbook.

use sandball_e2e::Sandbox;

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: only on Red Hat
      yum: {name: httpd, state: present}
      when: false
    - name: through dnf, which this node may lack
      ansible.builtin.yum: {list: installed}
      register: listed
      ignore_errors: true
    - debug: {msg: "{{ listed.failed | default(false) }}"}
"#;

#[test]
fn yum_runs_dnf_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory_with_python(&["alpha"]);
    let pb = sb.write("play.yml", PLAY);
    let work = sb.dir("work");
    let out = sb.play_with_core(&pb, &work, &[]).run();
    out.assert_no_panic().assert_code(0);
    assert!(
        !out.stdout.contains("couldn't resolve module/action"),
        "{out}"
    );
    assert_eq!(out.host("alpha").skipped, 1, "{out}");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        out.assert_same_recap_as(&theirs.run());
    }
}

const HANDOVER: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: a parameter sandball's file does not know
      file: {path: "{{ work }}/x", stae: touch}
      register: typo
      ignore_errors: true
    - name: an option sandball's uri does not carry out
      uri: {url: "http://localhost/", unix_socket: "{{ work }}/none.sock"}
      register: sock
      ignore_errors: true
    - name: a macOS option ansible-core's user ignores on Linux
      user: {name: root, hidden: true}
      check_mode: true
      register: hidden
    - name: a parameter sandball's shell does not know
      shell: echo hi
      args: {bogus: 1}
      register: shell_typo
      ignore_errors: true
    - name: what they said
      debug: {msg: "{{ typo.msg }}|{{ sock.msg }}|{{ hidden.changed }}|{{ shell_typo.msg | split(':') | first }}"}
"#;

#[test]
fn options_a_component_does_not_carry_out_run_ansible_cores_module() {
    let sb = Sandbox::new();
    sb.inventory_with_python(&["alpha"]);
    let pb = sb.write("play.yml", HANDOVER);
    let work = sb.dir("work");
    let out = sb.play_with_core(&pb, &work, &["-v"]).run();
    out.assert_no_panic().assert_code(0);
    for module in ["file", "uri", "user", "shell"] {
        assert!(
            out.stdout.contains(&format!(
                "sandball's {module} component does not carry this task out"
            )),
            "{module}: {out}"
        );
    }
    // ansible-core's uri reports the missing socket; sandball's refuses the option.
    out.assert_stdout_has("Invalid Socket File");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &["-v"]) {
        let theirs = theirs.run();
        out.assert_same_recap_as(&theirs)
            .assert_same_results_as(&theirs, &["what they said"]);
    }

    // A policy that refuses legacy modules keeps the component's refusal, saying what
    // would carry the task out and how to allow it.
    let policy = sb.policy_denying_legacy();
    let denied = sb.play_with_core(&pb, &work, &["--policy", &policy]).run();
    denied.assert_no_panic().assert_code(2);
    denied.assert_stdout_has(
        "unix_socket is not supported by sandball's uri module: the sandbox grants TCP \
         connections only. ansible-core's module would carry it out, but module uri is a \
         legacy (non-component) module",
    );
    assert_eq!(denied.host("alpha").failed, 1, "{denied}");
}

/// A stand-in for the ansible.posix collection's `authorized_key`, beside the playbook.
const FAKE_AUTHORIZED_KEY: &str = r#"#!/usr/bin/python
from ansible.module_utils.basic import AnsibleModule

def main():
    m = AnsibleModule(argument_spec=dict(user=dict(), key=dict()))
    m.exit_json(changed=False, msg="fake authorized_key for %s" % m.params["user"])

main()
"#;

const MOVED: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: a builtin name ansible-core routes to a collection
      authorized_key: {user: nobody, key: "ssh-ed25519 AAAA x"}
"#;

#[test]
fn builtin_names_moved_to_collections_run_the_collections_module_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory_with_python(&["alpha"]);
    let pb = sb.write("play.yml", MOVED);
    let work = sb.dir("work");
    // Without the collection, the error names the task's module and where it was routed.
    let missing = sb
        .play_with_core(&pb, &work, &[])
        .env("ANSIBLE_COLLECTIONS_PATH", sb.dir("none"))
        .run();
    missing.assert_no_panic().assert_code(4);
    missing.assert_stderr_has("couldn't resolve module/action 'authorized_key'");
    missing.assert_stderr_has("routes it to ansible.posix.authorized_key");

    sb.write(
        "collections/ansible_collections/ansible/posix/plugins/modules/authorized_key.py",
        FAKE_AUTHORIZED_KEY,
    );
    let out = sb.play_with_core(&pb, &work, &["-v"]).run();
    out.assert_no_panic().assert_code(0);
    out.assert_stdout_has("fake authorized_key for nobody");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &["-v"]) {
        let theirs = theirs.run();
        out.assert_same_recap_as(&theirs);
        let task = "a builtin name ansible-core routes to a collection";
        assert_eq!(
            out.result_lines(task).last(),
            theirs.result_lines(task).last(),
            "{out}\n{theirs}"
        );
    }
}

/// A `ping` of the playbook's own, in `library/`.
const LIBRARY_PING: &str = r#"#!/usr/bin/python
from ansible.module_utils.basic import AnsibleModule

def main():
    m = AnsibleModule(argument_spec=dict(data=dict(default="mine")))
    m.exit_json(changed=False, ping="WHERE ping: %s" % m.params["data"])

main()
"#;

const OVERRIDE: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: short name
      ping:
    - name: legacy name
      ansible.legacy.ping: {data: legacy}
    - name: builtin name
      ansible.builtin.ping:
"#;

#[test]
fn a_library_module_overrides_the_builtin_of_its_name_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory_with_python(&["alpha"]);
    sb.write("library/ping.py", &LIBRARY_PING.replace("WHERE", "library"));
    // Beside a role (of a playbook with no library/ of its own), and in
    // ANSIBLE_LIBRARY: the role's comes first, as in Ansible.
    sb.write(
        "sub/roles/r/library/ping.py",
        &LIBRARY_PING.replace("WHERE", "role"),
    );
    sb.write(
        "sub/roles/r/tasks/main.yml",
        "- name: in the role\n  ping:\n",
    );
    sb.write(
        "configured/ping.py",
        &LIBRARY_PING.replace("WHERE", "configured"),
    );
    let pb = sb.write("play.yml", OVERRIDE);
    let role_pb = sb.write(
        "sub/role.yml",
        "- hosts: all\n  gather_facts: false\n  roles: [r]\n",
    );
    let configured = sb.path().join("configured");
    let work = sb.dir("work");
    let out = sb.play_with_core(&pb, &work, &["-v"]).run();
    out.assert_no_panic().assert_code(0);
    let last = |o: &sandball_e2e::Output, task: &str| {
        o.result_lines(task)
            .last()
            .map(|l| l.to_string())
            .unwrap_or_default()
    };
    assert!(
        last(&out, "short name").contains("library ping: mine"),
        "{out}"
    );
    assert!(
        last(&out, "legacy name").contains("library ping: legacy"),
        "{out}"
    );
    assert!(
        last(&out, "builtin name").contains("\"ping\": \"pong\""),
        "{out}"
    );
    if let Some(theirs) = sb.ansible_play(&pb, &work, &["-v"]) {
        let theirs = theirs.run();
        out.assert_same_recap_as(&theirs);
        for task in ["short name", "legacy name", "builtin name"] {
            assert_eq!(
                last(&out, task),
                last(&theirs, task),
                "{task}\n{out}\n{theirs}"
            );
        }
    }
    let out = sb
        .play_with_core(&role_pb, &work, &["-v"])
        .env("ANSIBLE_LIBRARY", &configured)
        .run();
    out.assert_no_panic().assert_code(0);
    let task = "r : in the role";
    assert!(last(&out, task).contains("role ping: mine"), "{out}");
    if let Some(theirs) = sb.ansible_play(&role_pb, &work, &["-v"]) {
        let theirs = theirs.env("ANSIBLE_LIBRARY", &configured).run();
        assert_eq!(last(&out, task), last(&theirs, task), "{out}\n{theirs}");
    }
}
