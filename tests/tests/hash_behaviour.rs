//! `hash_behaviour = merge` (`ANSIBLE_HASH_BEHAVIOUR=merge`), compared with
//! ansible-playbook: mappings of one name merge, recursively, across inventory groups,
//! a host's own variables, role defaults, play, block and task `vars`, `set_fact` and
//! extra vars (lists are replaced); data merged into playbook values stays literal text.

use sandball_e2e::Sandbox;
use sandball_e2e::compare::same_as_ansible_env;

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  roles: [r]
  vars:
    conf: {play: p, deep: {b: play}, list: [play]}
  tasks:
    - command: echo '{{ "{{" }} x }}'
      register: out
    - set_fact:
        conf: {fact: "{{ out.stdout }}", deep: {c: fact}}
    - name: merged
      vars:
        conf: {task: t, deep: {d: task}}
      debug: {var: conf}
    - name: inventory merged
      debug: {msg: "{{ inv }}"}
"#;

#[test]
fn mappings_merge_across_layers() {
    let sb = Sandbox::new();
    sb.write(
        "inventory.ini",
        "[g]\nlocalhost ansible_connection=local inv='{\"host\": 1, \"deep\": {\"h\": 1}}'\n\n[g:vars]\ninv={\"group\": 1, \"deep\": {\"g\": 1}}\n\n[all:vars]\ninv={\"all\": 1, \"deep\": {\"a\": 1}}\n",
    );
    sb.write(
        "roles/r/defaults/main.yml",
        "conf: {default: d, deep: {a: default}, list: [default]}\n",
    );
    let pb = sb.write("play.yml", PLAY);
    same_as_ansible_env(
        &sb,
        &pb,
        &["merged", "inventory merged"],
        &[("ANSIBLE_HASH_BEHAVIOUR", "merge")],
    );
}
