//! How a template that fails is reported, compared with ansible-playbook 2.19: task
//! arguments ("Finalization of task args for 'ansible.builtin.debug' failed: Error
//! while resolving value for 'msg': …", a module of the playbook's `library/` by its
//! plain name), conditionals of `when` and `assert` ("Error while evaluating
//! conditional: …"), and a variable whose own template meets an undefined value, named
//! by that innermost value (also in what `debug: var` shows), and an undefined value
//! inside a list or mapping the template makes named by its variable. What each
//! failure came from is said as ansible-core 2.19 chains it, each step with the origin
//! of the value it is written at: the action, the argument, the template deeper inside
//! it or the variable's template that failed, the conditional, the loop, an `until`
//! that cannot be evaluated (no retry) — the whole output compared.

use sandball_e2e::Sandbox;
use sandball_e2e::compare::same_as_ansible;

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  vars:
    chained: '{{ middle }}'
    middle: '{{ not_defined }}'
    nested: {k: '{{ also_not_defined }}'}
  tasks:
    - name: debug msg
      debug: {msg: "{{ chained }}"}
      ignore_errors: true
    - name: debug var
      debug: {var: chained}
    - name: nested value
      debug: {msg: "{{ nested.k }}"}
      ignore_errors: true
    - name: set_fact
      set_fact: {x: "{{ nope }}"}
      ignore_errors: true
    - name: command free form
      command: "echo {{ nope }}"
      ignore_errors: true
    - name: library module
      mymod: {a: "{{ nope }}"}
      ignore_errors: true
    - name: missing attribute
      debug: {msg: "{{ nested.zz }}"}
      ignore_errors: true
    - name: when
      debug: {msg: hi}
      when: chained == 1
      ignore_errors: true
    - name: assert
      assert: {that: ["1 == 1", "nope == 1"]}
      ignore_errors: true
    - name: undefined inside the result
      debug: {msg: "{{ [{'key': nested_and_undefined}] }}"}
      ignore_errors: true
    - name: undefined inside text
      debug: {msg: "{{ [{'key': nested_and_undefined}] }} and more"}
      ignore_errors: true
    - name: swallowed undefined then another
      debug: {msg: "{{ chained | default(1) }}{{ nope }}"}
      ignore_errors: true
    - name: loop
      debug: {msg: x}
      loop: "{{ nope }}"
      ignore_errors: true
    - name: deep in an argument
      debug:
        msg:
          deep: ["{{ nope }}"]
      ignore_errors: true
    - name: until
      debug: {msg: x}
      until: nope
      retries: 1
      delay: 0
      ignore_errors: true
"#;

const TASKS: &[&str] = &[
    "debug msg",
    "debug var",
    "nested value",
    "set_fact",
    "command free form",
    "library module",
    "missing attribute",
    "when",
    "assert",
    "undefined inside the result",
    "undefined inside text",
    "swallowed undefined then another",
    "loop",
    "deep in an argument",
    "until",
];

#[test]
fn template_failures_are_reported_as_ansible_reports_them() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    sb.write(
        "library/mymod.py",
        "#!/usr/bin/python\nfrom ansible.module_utils.basic import AnsibleModule\nAnsibleModule(argument_spec={'a': {}}).exit_json()\n",
    );
    let pb = sb.write("play.yml", PLAY);
    let work = sb.dir("work");
    let ours = sb.play(&pb, &work, &[]).run();
    ours.assert_no_panic().assert_code(0);
    assert!(
        ours.stdout.contains(
            "Finalization of task args for 'ansible.builtin.debug' failed: Error while resolving value for 'msg': 'not_defined' is undefined"
        ),
        "{ours}"
    );
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.run();
        assert_eq!(theirs.code, 0, "{theirs}");
        ours.assert_same_recap_as(&theirs)
            .assert_same_results_as(&theirs, TASKS);
        assert_eq!(ours.stdout, theirs.stdout);
    }
}

/// A failed operation is introduced as ansible-core 2.19 introduces it ("Error rendering
/// template: …" in a template, "Error rendering expression: …" in a condition), and a
/// loop that cannot be worked out fails in its words, compared with ansible-playbook;
/// `with_first_found` passes over a term that is undefined, while a lookup's undefined
/// option is an error.
#[test]
fn failed_operations_are_worded_as_ansible_words_them() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    sb.write("files/found.txt", "x\n");
    let pb = sb.write(
        "play.yml",
        r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: division in an argument
      debug: {msg: "{{ 1 / 0 }}"}
      ignore_errors: true
    - name: division in a loop
      debug: {msg: "{{ item }}"}
      loop: "{{ [1 / 0] }}"
      ignore_errors: true
    - name: undefined loop
      debug: {msg: "{{ item }}"}
      loop: "{{ nope }}"
      ignore_errors: true
    - name: division in a condition
      debug: {msg: x}
      when: 1 / 0 == 1
      ignore_errors: true
    - name: undefined term passed over
      debug: {msg: "{{ item | basename }}"}
      with_first_found:
        - "{{ nope }}found.txt"
        - found.txt
    - name: undefined lookup option
      debug: {msg: "{{ lookup('first_found', files=nope) }}"}
      ignore_errors: true
"#,
    );
    same_as_ansible(
        &sb,
        &pb,
        &[
            "division in an argument",
            "undefined loop",
            "division in a condition",
            "undefined term passed over",
            "undefined lookup option",
        ],
    );
}

/// A notice about a text of the task's — a conditional written as a template
/// (deprecated, in a task and in a block), a lookup's constant term holding a template
/// (a warning) — shows that text's origin, as ansible-core 2.19 shows it, so that two
/// such conditionals are two notices; the whole output compared with ansible-playbook.
#[test]
fn notices_about_a_tasks_text_show_its_origin() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    let pb = sb.write(
        "play.yml",
        r#"
- hosts: all
  gather_facts: false
  vars:
    flag: true
    who: flag
  tasks:
    - debug: msg=one
      when: "{{ flag }}"
    - assert:
        that:
          - "{{ flag }}"
    - block:
        - debug: msg="{{ lookup('vars', '{{ who }}') }}"
      when: "{{ not false }}"
"#,
    );
    let work = sb.dir("work");
    let ours = sb
        .play(&pb, &work, &[])
        .env("ANSIBLE_DEPRECATION_WARNINGS", "1")
        .run();
    ours.assert_no_panic().assert_code(0);
    assert_eq!(ours.stderr.matches("Origin: ").count(), 4, "{ours}");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.env("ANSIBLE_DEPRECATION_WARNINGS", "1").run();
        assert_eq!(theirs.code, 0, "{theirs}");
        assert_eq!(ours.stdout, theirs.stdout);
        assert_eq!(ours.stderr, theirs.stderr);
    }
}
