//! Filters and tests at their edges, compared with ansible-playbook: `unique` over
//! lists of lists or dictionaries and its errors, `rekey_on_member`, `log`/`pow`/`root`,
//! `human_readable`/`human_to_bytes` with keyword arguments and bad input, the `version`
//! test's parameters (`strict` by position, `pep440`) and its error messages, undefined
//! values through filters to `default` (an operation on one still failing); played on
//! the implicit localhost, whose interpreter is the controller's Python as in Ansible.

use sandball_e2e::Sandbox;
use sandball_e2e::compare::{failing_tasks, same_as_ansible};

const PLAY: &str = r#"
- hosts: localhost
  gather_facts: false
  tasks:
    - name: unique values
      debug:
        msg: "{{ [[1, 2, 2, 1] | unique, ['a', 'A', 'b'] | unique,
                 ['a', 'A'] | unique(case_sensitive=true), [{'a': 1}, [1], {'a': 1}, [1]] | unique,
                 'foo' | unique, {'x': 1, 'y': 2} | unique,
                 [{'n': 'a'}, {'n': 'A'}, {'n': 'b'}] | unique(attribute='n')] }}"
    - name: arithmetic and sizes
      debug:
        msg: "{{ [1 | log, 100 | log(10), 8 | log(2), 2 | pow(4), 4 | root, 27 | root(3),
                 (2.3 | log(42) | string)[:8], 1 | human_readable(isbits=True),
                 102400000 | human_readable(unit='G'), 102400000 | human_readable(isbits=True, unit='G'),
                 2048 | human_readable(unit='GB'), 10240 | human_readable,
                 '10.00 Kb' | human_to_bytes(isbits=True), '1.1 GB' | human_to_bytes] }}"
    - name: rekeyed
      debug:
        msg: "{{ [[{'p': 'a', 'n': 1}, {'p': 'b'}] | rekey_on_member('p'),
                 {'x': {'p': 'a', 'n': 1}, 'y': {'p': 'a'}} | rekey_on_member('p', duplicates='overwrite')] }}"
    - name: rekey duplicates
      set_fact: {x: "{{ [{'p': 'a'}, {'p': 'a'}] | rekey_on_member('p') }}"}
      ignore_errors: true
      register: rekey_dup
    - name: log of a string
      set_fact: {x: "{{ 'yo' | log }}"}
      ignore_errors: true
      register: log_str
    - name: human_readable of a string
      set_fact: {x: "{{ 'monkeys' | human_readable }}"}
      ignore_errors: true
      register: human_str
    - name: unique of a boolean
      set_fact: {x: "{{ True | unique }}"}
      ignore_errors: true
      register: unique_bool
    - name: unique of dictionaries, case-insensitively
      set_fact: {x: "{{ [{'a': 1}] | unique(case_sensitive=False) }}"}
      ignore_errors: true
      register: unique_dicts
    - name: versions compared
      debug:
        msg: "{{ ['1.0' is version('1.0.0', '==', true), '1.0' is version_compare('1.1', 'lt'),
                 '2.14.0rc1' is version('2.14.0', 'lt', version_type='pep440'),
                 '1.0.dev1' is version('1.0a1', '<', version_type='pep440'),
                 '1.0-1' is version('1.0.post1', '==', version_type='pep440'),
                 '1.2.3' is version('2.0.0', 'lt', version_type='semver')] }}"
BAD_VERSIONS
    - name: undefined values through filters
      debug:
        msg: "{{ [nope | lower | default('x'), nope | int | to_json | length | default('x'),
                 'k' | extract(nope) | default('x'), nope.a | lower is defined,
                 nope | default(None), true | ternary(nope, 1) | default('x'),
                 false | ternary(nope, 1), [nope, 1] | select('defined') | list,
                 nope | type_debug, nope.upper() | default('x')] }}"
    - name: an operation on an undefined value
      set_fact: {x: "{{ (nope ~ 'a') | default('x') }}"}
      ignore_errors: true
      register: undefined_op
    - name: the errors say what Ansible says
      assert:
        that:
          - "\"'bool' object is not iterable\" in unique_bool.msg"
          - "\"'nope' is undefined\" in undefined_op.msg"
          - "'log() can only be used on numbers' in log_str.msg"
          - "\"Key 'a' is not unique, cannot convert to dict.\" in rekey_dup.msg"
          - "\"human_readable() failed on bad input: '>=' not supported between instances of 'str' and 'int'\" in human_str.msg"
          - "\"cannot fall back to Ansible's version\" in unique_dicts.msg"
          - bad | map(attribute='failed') | unique == [true]
          - "\"Invalid operator type (equals). Must be one of '==', '='\" in bad[0].msg"
          - "'Input version value cannot be empty' in bad[1].msg"
          - "'Version parameter to compare against cannot be empty' in bad[2].msg"
          - "\"Cannot specify both 'strict' and 'version_type'\" in bad[3].msg"
          - "\"Invalid version type (boom). Must be one of 'loose', 'strict', 'semver', 'semantic', 'pep440'\" in bad[4].msg"
          - "\"Version comparison failed: invalid semantic version 'nope'\" in bad[5].msg"
          - "\"Version comparison failed: Invalid version: 'nope'\" in bad[6].msg"
          - "\"'<' not supported between instances of 'int' and 'str'\" in bad[7].msg"
    - name: the implicit localhost runs the controller's Python
      debug: {msg: "{{ ansible_python_interpreter == ansible_playbook_python }}"}
"#;

/// Expressions the `version` test refuses, each evaluated by a task of its own whose
/// result lands in `bad`.
const BAD_VERSIONS: &[&str] = &[
    "'1.0' is version('1.0', 'equals')",
    "'' is version('1.0')",
    "'1.0' is version('')",
    "'1.0' is version('1.0', strict=true, version_type='loose')",
    "'1.0' is version('1.0', version_type='boom')",
    "'nope' is version('1.0', version_type='semver')",
    "'nope' is version('1.0', version_type='pep440')",
    "'1.0' is version('a.0', '<')",
];

#[test]
fn unique_and_version_behave_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    let bad = failing_tasks("bad", BAD_VERSIONS);
    let pb = sb.write("play.yml", &PLAY.replace("BAD_VERSIONS\n", &bad));
    same_as_ansible(
        &sb,
        &pb,
        &[
            "unique values",
            "arithmetic and sizes",
            "rekeyed",
            "versions compared",
            "undefined values through filters",
            "the errors say what Ansible says",
            "the implicit localhost runs the controller's Python",
        ],
    );
}
