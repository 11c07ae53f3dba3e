//! ansible-core 2.19's trust model, compared with ansible-playbook: text a template
//! makes is never evaluated as an expression (`debug`'s `var`, `assert`'s `that`,
//! `when`), while what passes a trusted value through unchanged is (a loop item written
//! out in the playbook, `{{ path }}` of a trusted variable); `debug` of `ansible_facts`
//! sets no facts.

use sandball_e2e::Sandbox;
use sandball_e2e::compare::same_as_ansible;

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  vars:
    k1: v1
    name_var: k1
    templated_name: "{{ 'k' ~ '1' }}"
    d: {a: 1}
    lst: [k1]
  tasks:
    - command: echo "1 == 1"
      register: r
    - name: var passed through
      debug: {var: '{{ name_var }}'}
    - name: var by item
      debug: {var: '{{ lst[0] }}'}
    - name: var made by a template
      debug: {var: '{{ templated_name }}'}
      ignore_errors: true
      register: made
    - name: var of a constant
      debug: {var: '{{ "k1" }}'}
      ignore_errors: true
      register: constant
    - name: var that is no string
      debug: {var: '{{ d }}'}
      ignore_errors: true
      register: mapping
    - name: loop items written out
      debug: {var: '{{ item }}'}
      loop: [k1, "{{ name_var }}"]
    - name: items passed through
      debug: {var: '{{ item.n }}'}
      loop: [{n: k1}]
    - name: items of a lookup
      debug: {var: '{{ item }}'}
      loop: "{{ query('items', 'k1') }}"
      ignore_errors: true
      register: looked_up
    - name: conditions of items
      assert: {that: "{{ item }}"}
      loop: ["k1 == 'v1'", "{{ name_var }} == 'v1'"]
      ignore_errors: true
      register: conditions
    - name: assert arguments of items
      assert: "{{ item }}"
      loop:
        - {that: "k1 == 'v1'"}
        - {that: ["1 == 1", "{{ k1 == 'v1' }}"]}
        - {that: "{{ name_var }} == 'v1'"}
      ignore_errors: true
      register: splat
    - name: a module's text as a condition
      debug: {msg: x}
      when: "{{ r.stdout }}"
      ignore_errors: true
      register: data_when
    - name: facts shown
      debug: {var: ansible_facts}
    - set_fact:
        ansible_facts: {nonfact: 1}
    - debug: {var: ansible_facts}
    - name: what was refused
      debug:
        msg: "{{ [made.msg, constant.msg, mapping.msg, looked_up.results[0].msg,
                 conditions.results | map(attribute='failed', default=false),
                 conditions.results[1].msg, splat.results | map(attribute='failed', default=false),
                 splat.results[2].msg, data_when.msg, nonfact is defined] }}"
"#;

#[test]
fn templates_make_untrusted_text() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    let pb = sb.write("play.yml", PLAY);
    same_as_ansible(
        &sb,
        &pb,
        &[
            "var passed through",
            "var by item",
            "loop items written out",
            "items passed through",
            "what was refused",
        ],
    );
}
