//! Results that claim success in a type Ansible reads otherwise: `failed: "false"`,
//! `failed: {...}`, `changed: [1]`, `skipped: "no"`, `unreachable: "no"`. Ansible reads
//! each flag by Python's truth value, so a module (or anything forging its output)
//! cannot slip a failure past the recap by writing `"false"`. And output that is no
//! valid UTF-8 once decoded (a lone surrogate escape, as Python writes undecodable
//! bytes) is refused on the controller, as ansible-core 2.19 refuses it.

use sandball_e2e::{HostRecap, Sandbox};

const MODULE: &str = "#!/usr/bin/python\n# WANT_JSON\nimport json, sys\nargs = json.load(open(sys.argv[1]))\nprint(json.dumps(args['out']))\n";

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - {name: failed-text-false, echo_result: {out: {failed: "false"}}, ignore_errors: true}
    - {name: failed-dict, echo_result: {out: {failed: {a: 1}}}, ignore_errors: true}
    - {name: failed-empty-text, echo_result: {out: {failed: ""}}, ignore_errors: true}
    - {name: failed-zero, echo_result: {out: {failed: 0}}, ignore_errors: true}
    - {name: changed-text-false, echo_result: {out: {changed: "false"}}}
    - {name: changed-list, echo_result: {out: {changed: [1]}}}
    - {name: changed-empty-list, echo_result: {out: {changed: []}}}
    - {name: skipped-text-no, echo_result: {out: {skipped: "no"}}}
    - {name: unreachable-text-no, echo_result: {out: {unreachable: "no"}}, ignore_errors: true}
    - {name: never reached, debug: {msg: hi}}
"#;

#[test]
fn result_flags_count_by_python_truth_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory_with_python(&["alpha"]);
    sb.write("library/echo_result.py", MODULE);
    let work = sb.dir("work");
    let pb = sb.write("play.yml", PLAY);
    let out = sb.play(&pb, &work, &[]).run();
    out.assert_no_panic().assert_code(4);
    // The status line of a task (the legacy-module warning comes before it).
    let status = |task: &str| {
        out.result_lines(task)
            .into_iter()
            .find(|l| !l.starts_with("[WARNING]"))
            .unwrap_or_default()
            .to_string()
    };
    let mut tried = 0;
    for (task, expected) in [
        ("failed-text-false", "fatal: [alpha]: FAILED!"),
        ("failed-dict", "fatal: [alpha]: FAILED!"),
        ("failed-empty-text", "ok: [alpha]"),
        ("failed-zero", "ok: [alpha]"),
        ("changed-text-false", "changed: [alpha]"),
        ("changed-list", "changed: [alpha]"),
        ("changed-empty-list", "ok: [alpha]"),
        ("skipped-text-no", "skipping: [alpha]"),
        ("unreachable-text-no", "fatal: [alpha]: UNREACHABLE!"),
    ] {
        assert!(
            status(task).starts_with(expected),
            "{task}: {}\n{out}",
            status(task)
        );
        tried += 1;
    }
    assert!(!out.stdout.contains("TASK [never reached]"), "{out}");
    assert_eq!(
        out.host("alpha"),
        HostRecap {
            ok: 7,
            changed: 2,
            unreachable: 1,
            skipped: 1,
            ignored: 2,
            ..HostRecap::default()
        },
        "{out}"
    );
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.run();
        assert_eq!(theirs.code, out.code, "{theirs}");
        out.assert_same_recap_as(&theirs);
    }
    eprintln!("adversarial: {tried} result types tried, {tried} read as Ansible reads them");
}

#[test]
fn module_output_in_a_condition_is_never_evaluated() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    let work = sb.dir("work");
    let sentinel = work.join("INJECTED");
    let pb = sb.write(
        "play.yml",
        &format!(
            r#"- hosts: all
  gather_facts: false
  vars:
    trusted_expr: "1 == 1"
    names: [foo, bar]
  tasks:
    - shell: echo "lookup('pipe', 'touch {sentinel} && echo x')"
      register: untrusted_expr
    - shell: echo "['foo', 'baz']"
      register: literal_out
    - debug: {{msg: never}}
      when: '"foo" in {{{{ untrusted_expr.stdout }}}}'
      ignore_errors: true
      register: refused
    - shell: echo "x\" or lookup('pipe', 'touch {sentinel}') or \""
      register: breakout
    - debug: {{msg: never}}
      when: 'inventory_hostname == "{{{{ breakout.stdout }}}}"'
      ignore_errors: true
      register: refused_in_quotes
    - assert:
        that:
          - refused is failed
          - refused_in_quotes is failed
          - 'inventory_hostname == "{{{{ inventory_hostname }}}}"'
          - "{{{{ trusted_expr }}}}"
          - '"foo" in {{{{ names }}}}'
          - '"foo" in {{{{ literal_out.stdout }}}}'
"#,
            sentinel = sentinel.display()
        ),
    );
    let out = sb.play(&pb, &work, &[]).run();
    out.assert_no_panic().assert_code(0);
    out.assert_stdout_has("Encountered untrusted template or expression");
    assert!(
        !sentinel.exists(),
        "module output ran as an expression:\n{out}"
    );
    eprintln!("adversarial: 2 expression injections through a condition tried, 2 contained");
}

/// Writes its output as given, unparsed: a JSON text with a lone surrogate escape.
const RAW_MODULE: &str = "#!/usr/bin/python\n# WANT_JSON\nimport sys\nsys.stdout.write('{\"changed\": false, \"out\": \"ab\\\\ud83d\\\\ude00\\\\udcff\"}')\n";

#[test]
fn output_with_a_lone_surrogate_is_refused_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory_with_python(&["alpha"]);
    sb.write("library/surrogate.py", RAW_MODULE);
    let work = sb.dir("work");
    let pb = sb.write(
        "play.yml",
        "- hosts: all\n  gather_facts: false\n  tasks:\n    - {name: undecodable, surrogate: {}, register: r, ignore_errors: true}\n    - {name: what it said, debug: {var: r.msg}}\n",
    );
    let out = sb.play(&pb, &work, &[]).run();
    out.assert_no_panic().assert_code(0);
    out.assert_stdout_has(
        "Refusing to deserialize an invalid UTF8 string value: 'utf-8' codec can't encode character '\\\\udcff' in position 3: surrogates not allowed",
    );
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.run();
        out.assert_same_recap_as(&theirs)
            .assert_same_results_as(&theirs, &["what it said"]);
    }
}
