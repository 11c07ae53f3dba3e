//! The `config` lookup, compared with ansible-playbook: base settings by Ansible's
//! names from ansible.cfg, the environment and the defaults, typed (integers,
//! booleans, lists, paths) and with `show_origin`; plugin options from a task's
//! variables (the last variable named winning); `on_missing`; and the errors for a
//! missing setting, a bad option value, a term that is not a string, half a plugin,
//! and an unknown plugin. `ALLOW_BROKEN_CONDITIONALS` read through it decides, as in
//! ansible-core, whether a non-boolean condition fails.

use sandball_e2e::{Invocation, Sandbox};

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  vars:
    allow_broken: "{{ lookup('config', 'ALLOW_BROKEN_CONDITIONALS') }}"
  tasks:
    - name: base settings
      debug:
        msg: "{{ lookup('config', 'DEFAULT_FORKS', 'ALLOW_BROKEN_CONDITIONALS', 'DEFAULT_BECOME_USER', 'DEFAULT_REMOTE_USER', 'DEFAULT_TIMEOUT', show_origin=True) }}"
    - name: typed
      debug:
        msg: "{{ q('config', 'DEFAULT_GATHERING', 'INVENTORY_ENABLED', 'DEFAULT_TIMEOUT', 'FACTS_MODULES') }}"
    - name: plugin options
      debug:
        msg: "{{ q('config', 'remote_user', 'port', plugin_type='connection', plugin_name='ssh', show_origin=True) }}"
      vars: {ansible_user: a, ansible_ssh_user: b, ansible_ssh_port: 2022}
    - name: shell option
      debug:
        msg: "{{ q('config', 'remote_tmp', plugin_type='shell', plugin_name='sh', show_origin=True) }}"
      vars: {ansible_remote_tmp: /somewhere}
    - name: skipped
      debug:
        msg: "{{ q('config', 'NOPE', 'DEFAULT_BECOME_METHOD', on_missing='skip') }}"
    - name: a broken conditional
      assert: {that: "'static text'"}
      ignore_errors: true
      register: broken
    - name: missing
      debug: {msg: "{{ lookup('config', 'NOPE') }}"}
      ignore_errors: true
      register: r1
    - name: bad on_missing
      debug: {msg: "{{ lookup('config', 'NOPE', on_missing='boo') }}"}
      ignore_errors: true
      register: r2
    - name: not a string
      debug: {msg: "{{ lookup('config', 1337) }}"}
      ignore_errors: true
      register: r3
    - name: half a plugin
      debug: {msg: "{{ q('config', 'remote_tmp', plugin_type='shell') }}"}
      ignore_errors: true
      register: r4
    - name: no such option
      debug: {msg: "{{ q('config', 'nope', plugin_type='shell', plugin_name='sh') }}"}
      ignore_errors: true
      register: r5
    - name: no such plugin
      debug: {msg: "{{ q('config', 'nope', plugin_type='connection', plugin_name='nosuch') }}"}
      ignore_errors: true
      register: r6
    - name: messages
      assert:
        that:
          - broken.failed != allow_broken
          - r1.msg is contains "No config definition exists for 'NOPE'"
          - r2.msg is contains "Invalid value 'boo' for config 'on_missing'"
          - r3.msg is contains "Invalid setting identifier, 1337 is not a <class 'str'>, its a <class 'int'>"
          - r4.msg is contains "Both plugin_type and plugin_name are required"
          - r5.msg is contains "No config definition exists for 'nope' for 'sh' shell plugin"
          - r6.msg is contains "Unable to load connection plugin 'nosuch'"
"#;

#[test]
fn config_lookup_reads_settings_as_ansible_does() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    let cfg = sb.write(
        "lookup.cfg",
        "[defaults]\nforks = 7\nallow_broken_conditionals = yes\n",
    );
    let pb = sb.write("play.yml", PLAY);
    let work = sb.dir("work");
    let tasks = [
        "base settings",
        "typed",
        "plugin options",
        "shell option",
        "skipped",
    ];
    // Once with ansible.cfg allowing broken conditionals, once without a file.
    for config in [Some(&cfg), None] {
        let with = |inv: Invocation| {
            let inv = inv.env("ANSIBLE_TIMEOUT", "33");
            match config {
                Some(c) => inv.env("ANSIBLE_CONFIG", c),
                // sandball's own default of forks is 50, not 5.
                None => inv
                    .env("ANSIBLE_CONFIG", sb.path().join("none.cfg"))
                    .env("ANSIBLE_FORKS", "3"),
            }
        };
        let ours = with(sb.play(&pb, &work, &[])).run();
        ours.assert_no_panic().assert_code(0);
        let Some(theirs) = sb.ansible_play(&pb, &work, &[]) else {
            continue;
        };
        let theirs = with(theirs).run();
        ours.assert_same_results_as(&theirs, &tasks);
        ours.assert_same_recap_as(&theirs);
    }
}
