//! ansible-core 2.19's trust model, compared with ansible-playbook: text a template
//! makes is never evaluated as an expression (`debug`'s `var`, `assert`'s `that`,
//! `when`), while what passes a trusted value through unchanged is (a loop item written
//! out in the playbook, `{{ path }}` of a trusted variable); `debug` of `ansible_facts`
//! sets no facts. Trust is kept per value through `set_fact`, `include_vars` and their
//! registered results, where a module's result is all data, as the
//! `ansible._protomatter` tests see it; a loop's items keep their own trust in its
//! registered `results`.

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

const KEPT: &str = r#"
- hosts: all
  gather_facts: false
  vars:
    base: "1 == 1"
  tasks:
    - command: echo "3 == 3"
      register: out
    - set_fact:
        lit: "2 == 2"
        passed: "{{ base }}"
        made: "{{ '3 ' ~ '== 3' }}"
        nested: {a: [x, "{{ base }}"], b: "pre {{ base }}"}
        from_module: "{{ out.stdout }}"
        cacheable: "{{ 'no' }}"
      register: sf
    - include_vars: included.yml
      register: iv
    - name: a written fact as an expression
      debug: {var: '{{ lit }}'}
    - name: a passed-through fact as an expression
      debug: {var: '{{ passed }}'}
    - name: a made fact as an expression
      debug: {var: '{{ made }}'}
      ignore_errors: true
      register: made_var
    - name: a registered fact as a condition
      debug: {msg: ok}
      when: "{{ sf.ansible_facts.lit }}"
    - name: trust of each value
      debug:
        msg:
          - "{{ nested.a[0] is ansible._protomatter.tagged_with('TrustedAsTemplate') }}"
          - "{{ nested.a[1] is ansible._protomatter.tagged_with('TrustedAsTemplate') }}"
          - "{{ nested.b is ansible._protomatter.tagged_with('TrustedAsTemplate') }}"
          - "{{ from_module is ansible._protomatter.tagged_with('TrustedAsTemplate') }}"
          - "{{ sf.ansible_facts.passed is ansible._protomatter.tagged_with('TrustedAsTemplate') }}"
          - "{{ sf.ansible_facts.made is ansible._protomatter.tagged_with('TrustedAsTemplate') }}"
          - "{{ iv.ansible_facts.plain is ansible._protomatter.tagged_with('TrustedAsTemplate') }}"
          - "{{ iv.ansible_facts.unsafe is ansible._protomatter.tagged_with('TrustedAsTemplate') }}"
          - "{{ plain is ansible._protomatter.tagged_with('TrustedAsTemplate') }}"
          - "{{ out.stdout is ansible._protomatter.tagged_with('TrustedAsTemplate') }}"
          - "{{ 'x' is ansible._protomatter.tagged }}"
          - "{{ 'x' | ansible._protomatter.apply_trust is ansible._protomatter.tagged }}"
          - "{{ made_var is failed }}"
    - name: results shown
      debug: {var: iv}
"#;

#[test]
fn trust_is_kept_through_set_fact_include_vars_and_register() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    sb.write("included.yml", "plain: x\nunsafe: !unsafe '{{ x }}'\n");
    let pb = sb.write("play.yml", KEPT);
    same_as_ansible(
        &sb,
        &pb,
        &[
            "a written fact as an expression",
            "a passed-through fact as an expression",
            "a registered fact as a condition",
            "trust of each value",
            "results shown",
        ],
    );
}

/// ansible-core's `assert` target: per-item assertions written in a loop's items, read
/// back from its registered results; a module's output there stays data.
const LOOP_ITEMS: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: test misc other assert failures
      assert: '{{ item.args }}'
      loop:
        - args: {that: [true]}
          checks:
            - item is not failed
            - item.item.args.that == [true]
        - args: {that: [false]}
          checks:
            - item is failed
            - item.msg is contains("Assertion failed")
      ignore_errors: true
      register: result
    - name: validate per-item assertions
      assert:
        that: '{{ item.item.checks }}'
      loop: '{{ result.results }}'
      loop_control: {label: "{{ item.item.checks | length }}"}
    - name: a module's output
      command: echo "1 == 1"
      loop: [a]
      register: echoed
    - name: a module's output is not evaluated
      assert:
        that: '{{ item.stdout }}'
      loop: '{{ echoed.results }}'
      loop_control: {label: "{{ item.item }}"}
      ignore_errors: true
      register: refused
    - name: it was refused as untrusted
      assert:
        that: refused.results[0].msg is contains('untrusted')
"#;

#[test]
fn loop_items_keep_their_trust_in_registered_results() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    let pb = sb.write("play.yml", LOOP_ITEMS);
    same_as_ansible(
        &sb,
        &pb,
        &[
            "validate per-item assertions",
            "it was refused as untrusted",
        ],
    );
}
