//! Filters and tests named by their full names (`ansible.builtin.…`)
//! and the errors of failing filters and tests, which name the plugin as ansible-core
//! does ("The filter plugin 'ansible.builtin.mandatory' failed: …"), and of Python
//! filter, test and lookup plugins whose files fail to load ("The filter plugin 'x'
//! failed to load: …"); compared with ansible-playbook; the `to_uuid` filter.

use sandball_e2e::Sandbox;
use sandball_e2e::compare::{failing_tasks, same_as_ansible_env};

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  vars:
    r: {changed: true, failed: false}
  tasks:
    - name: full names
      debug:
        msg: "{{ [[3, 1] | ansible.builtin.sort, 'a' | ansible.builtin.upper,
                 r is ansible.builtin.changed, r is not ansible.builtin.failed,
                 {'a': 1} | ansible.builtin.dict2items | ansible.builtin.items2dict,
                 'example.com' | ansible.builtin.to_uuid, 'x' | to_uuid(namespace='{11111111-2222-3333-4444-555555555555}')] }}"
BAD
    - name: the plugins are named
      debug:
        msg: "{{ bad | map(attribute='msg') | map('regex_replace', '^.*resolving value for .x.: ', '') }}"
"#;

/// Expressions whose filter or test fails.
const BAD: &[&str] = &[
    "'x' is failed",
    "'x' is not ansible.builtin.changed",
    "'a ' ~ (nope | mandatory)",
    "'a' | ansible.builtin.mandatory('sad wolf') ~ (nope | mandatory('sad wolf'))",
    "'x' | to_uuid(namespace=22)",
    "'' | sad_filter",
    "'' is sad_test",
    "lookup('sad_lookup')",
];

/// A plugin object that fails as ansible-core loads it.
const BROKEN: &str = "class Broken:\n    @property\n    def accept_args_markers(self):\n        raise RuntimeError('cannot load')\n";

#[test]
fn failing_plugins_are_named() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    sb.write(
        "filter_plugins/sad.py",
        &format!("{BROKEN}\nclass FilterModule:\n    def filters(self):\n        return {{'sad_filter': Broken()}}\n"),
    );
    sb.write(
        "test_plugins/sad.py",
        &format!("{BROKEN}\nclass TestModule:\n    def tests(self):\n        return {{'sad_test': Broken()}}\n"),
    );
    sb.write(
        "lookup_plugins/sad_lookup.py",
        "raise RuntimeError('cannot load')\n",
    );
    let pb = sb.write(
        "play.yml",
        &PLAY.replace("BAD\n", &failing_tasks("bad", BAD)),
    );
    // The broken plugins are ansible-core's to load.
    let python = sandball_e2e::binaries::ansible_python();
    same_as_ansible_env(
        &sb,
        &pb,
        &["full names", "the plugins are named"],
        &[("SANDBALL_ANSIBLE_PYTHON", &python.to_string_lossy())],
    );
}
