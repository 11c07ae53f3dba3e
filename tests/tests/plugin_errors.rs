//! Filters and tests named by their full names (`ansible.builtin.…`)
//! and the errors of failing filters and tests, which name the plugin as ansible-core
//! does ("The filter plugin 'ansible.builtin.mandatory' failed: …"); compared with
//! ansible-playbook; the `to_uuid` filter.

use sandball_e2e::Sandbox;
use sandball_e2e::compare::{failing_tasks, same_as_ansible};

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
];

#[test]
fn failing_plugins_are_named() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    let pb = sb.write(
        "play.yml",
        &PLAY.replace("BAD\n", &failing_tasks("bad", BAD)),
    );
    same_as_ansible(&sb, &pb, &["full names", "the plugins are named"]);
}
