//! `debug`'s `var`, compared with ansible-playbook: a name or an expression is shown
//! with its value; a value that is not a string (a mapping, a list, a number) fails with
//! ansible-core's type message; a name marked `!unsafe` is never evaluated; a division
//! by zero in `msg` fails in Python's words; an undefined variable is shown in its
//! place with a warning the result keeps; `var` templated to `omit` is no `var`, a
//! value that is `omit` is shown as a placeholder with a warning, and `omit` inside it
//! is left out; a division by zero in `var` and arguments given as one template
//! (`args: "{{ … }}"`) that give no mapping, or `omit`, are reported as in ansible-core;
//! `vars` and `hostvars` can be shown (a host's entry in `hostvars` holds no `hostvars`);
//! a task name that cannot be templated is shown with its errors in place, and warned
//! about.

use sandball_e2e::Sandbox;

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  vars:
    debug_me: hi
  tasks:
    - name: a name
      debug: {var: debug_me}
    - name: an expression
      debug: {var: "debug_me | upper"}
    - name: a mapping
      debug:
        var: {a: 1}
      ignore_errors: true
    - name: a number
      debug:
        var: 5
      ignore_errors: true
    - name: untrusted
      debug:
        var: !unsafe debug_me
      ignore_errors: true
      register: untrusted
    - name: undefined var
      debug: {var: something_undefined}
      register: undefined
    - name: division by zero
      debug: {msg: "{{ 5 / 0 }}"}
      ignore_errors: true
      register: zero
    - name: "name {{ nope }} and {{ 1/0 }} lost"
      debug: {msg: named}
    - name: var omitted
      debug: {var: "{{ omit }}"}
    - name: var is omit
      debug: {var: indirect_omit}
      vars: {indirect_omit: "{{ omit }}"}
    - name: omit inside var
      debug: {var: "[omit, 1]"}
    - name: var division by zero
      debug: {var: 5/0}
      ignore_errors: true
    - name: args not a mapping
      debug:
      args: '{{ "a string" }}'
      ignore_errors: true
    - name: args undefined
      debug:
      args: '{{ nope }}'
      ignore_errors: true
    - name: args omitted
      debug:
      args: '{{ omit }}'
    - name: all variables
      debug: {var: vars}
    - name: all hosts' variables
      debug: {var: hostvars}
    - name: a host's variables hold no hostvars
      debug:
        msg: "{{ ['hostvars', 'omit'] | intersect(hostvars[inventory_hostname].keys() | list) }}"
    - name: check
      assert:
        that:
          - undefined.warnings | length == 1
          - undefined.warnings[0] is contains "something_undefined"
          - zero is failed
          - "'division by zero' in zero.msg"
          - untrusted is failed
          - untrusted.msg is contains "Encountered untrusted template or expression"
"#;

#[test]
fn debug_var_is_checked_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    let pb = sb.write("play.yml", PLAY);
    let work = sb.dir("work");
    let ours = sb.play(&pb, &work, &[]).run();
    ours.assert_no_panic().assert_code(0);
    let Some(theirs) = sb.ansible_play(&pb, &work, &[]) else {
        return;
    };
    let theirs = theirs.run();
    ours.assert_same_results_as(
        &theirs,
        &[
            "a name",
            "an expression",
            "a mapping",
            "a number",
            "undefined var",
            NAMED,
            "var omitted",
            "var is omit",
            "omit inside var",
            "var division by zero",
            "args not a mapping",
            "args undefined",
            "args omitted",
            "a host's variables hold no hostvars",
            "check",
        ],
    );
    ours.assert_same_recap_as(&theirs);
    let warning = "Encountered 3 template errors.\nerror 1 - 'nope' is undefined\n";
    assert!(theirs.stderr.contains(warning), "{theirs}");
    assert!(ours.stderr.contains(warning), "{ours}");
}

/// The banner of the task whose name cannot be templated.
const NAMED: &str = "name << error 1 - 'nope' is undefined >> and << error 2 - Error rendering template: division by zero >><< error 3 - template potentially truncated >>";
