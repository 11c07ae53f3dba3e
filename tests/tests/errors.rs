//! Bad input gives a clear error and a non-zero exit, never a panic: a playbook that
//! is not YAML, an unknown module, arguments of the wrong type or unknown ones.
//! (Misbehaving modules are in `misbehaving.rs`.)

use sandball_e2e::{HostRecap, Output, Sandbox};

/// Asserts a parse-time error: exit 4, `[ERROR]:` (ansible-core 2.19's) on stderr with `file:line` (any of
/// `lines`), nothing run.
fn assert_parse_error(out: &Output, what: &str, lines: &[u32]) {
    out.assert_no_panic().assert_code(4);
    assert!(
        out.stderr.trim_start().starts_with("[ERROR]: "),
        "stderr must start with [ERROR]: \n{out}"
    );
    out.assert_stderr_has(what);
    assert!(
        lines
            .iter()
            .any(|l| out.stderr.contains(&format!("play.yml:{l}"))),
        "stderr names none of play.yml:{lines:?}:\n{out}"
    );
    assert!(
        !out.stdout.contains("ok: ["),
        "tasks ran despite the error:\n{out}"
    );
    assert!(out.recap().is_empty(), "a recap despite the error:\n{out}");
}

#[test]
fn malformed_yaml_is_an_error_with_file_and_line() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    let pb = sb.write(
        "play.yml",
        "- name: broken\n  hosts: all\n  tasks:\n    - debug:\n        msg: a: b\n",
    );
    let out = sb.play(&pb, &sb.dir("work"), &[]).run();
    assert_parse_error(&out, "", &[5]);
    // The reason is given, not just the place.
    assert!(
        out.stderr.to_lowercase().contains("yaml"),
        "the error does not say it is YAML:\n{out}"
    );
}

#[test]
fn a_playbook_that_is_not_a_list_of_plays_is_an_error() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    let pb = sb.write("play.yml", "hosts: all\ntasks:\n  - ping:\n");
    let out = sb.play(&pb, &sb.dir("work"), &[]).run();
    out.assert_no_panic().assert_code(4);
    assert!(out.stderr.trim_start().starts_with("[ERROR]: "), "{out}");
    out.assert_stderr_has("play.yml");
}

#[test]
fn a_missing_playbook_is_an_error() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    let out = sb
        .play(&sb.path().join("nope.yml"), &sb.dir("work"), &[])
        .run();
    out.assert_no_panic();
    assert_ne!(out.code, 0, "{out}");
    out.assert_stderr_has("nope.yml");
}

#[test]
fn an_unknown_module_is_an_error_before_anything_runs() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    let pb = sb.write(
        "play.yml",
        "- hosts: all\n  gather_facts: false\n  tasks:\n    - ping:\n    - name: typo\n      pnig:\n",
    );
    let out = sb.play(&pb, &sb.dir("work"), &[]).run();
    assert_parse_error(&out, "couldn't resolve module/action 'pnig'", &[5, 6]);
}

#[test]
fn documentation_only_modules_are_named_before_anything_runs() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    // A module file that only documents an action plugin (as a collection's may): every
    // one of ansible-core's has a sandball plugin now.
    sb.write(
        "library/reboot_later.py",
        "#!/usr/bin/python\nDOCUMENTATION = r'''\nmodule: reboot_later\nshort_description: done by an action plugin\n'''\nEXAMPLES = r'''\n- reboot_later:\n'''\n",
    );
    let pb = sb.write(
        "play.yml",
        "- hosts: all\n  gather_facts: false\n  tasks:\n    - ping:\n    - reboot_later:\n        reboot_timeout: 5\n",
    );
    let out = sb
        .play(&pb, &sb.dir("work"), &[])
        .env(
            "SANDBALL_ANSIBLE_PYTHON",
            sandball_e2e::binaries::ansible_python(),
        )
        .run();
    assert_parse_error(&out, "the `reboot_later` action", &[5]);
    out.assert_stderr_has("holds only documentation");
}

const BAD_ARGS: &str = r#"
- name: bad arguments
  hosts: all
  gather_facts: false
  tasks:
    - name: not a boolean
      stat:
        path: "{{ work }}"
        get_checksum: maybe
      when: inventory_hostname == 'wrong_type'

    - name: not a mode
      file: path={{ work }}/x mode=[1] state=touch
      when: inventory_hostname == 'bad_mode'

    - name: no such argument
      file:
        path: "{{ work }}/y"
        state: touch
        foo: 1
      when: inventory_hostname == 'unknown_arg'

    - name: a list for a boolean
      copy:
        content: x
        dest: "{{ work }}/z"
        force: [1]
      when: inventory_hostname == 'list_for_bool'
"#;

#[test]
fn bad_module_arguments_fail_the_task_with_the_reason() {
    let sb = Sandbox::new();
    let hosts = ["wrong_type", "bad_mode", "unknown_arg", "list_for_bool"];
    sb.inventory(&hosts);
    let pb = sb.write("play.yml", BAD_ARGS);
    let work = sb.dir("work");
    let out = sb.play(&pb, &work, &[]).run();
    out.assert_no_panic().assert_code(2);

    let fatal = |task: &str, host: &str| -> String {
        let prefix = format!("fatal: [{host}]: FAILED! => ");
        out.task_lines(task)
            .into_iter()
            .find(|l| l.starts_with(&prefix))
            .unwrap_or_else(|| panic!("no {prefix:?} under {task:?}:\n{out}"))
            .to_string()
    };
    let cases = [
        (
            "not a boolean",
            "wrong_type",
            "argument 'get_checksum' is of type str and we were unable to convert to bool",
        ),
        (
            "not a mode",
            "bad_mode",
            "mode must be in octal or symbolic form",
        ),
        (
            "no such argument",
            "unknown_arg",
            "Unsupported parameters for (file) module: foo",
        ),
        (
            "a list for a boolean",
            "list_for_bool",
            "argument 'force' is of type list and we were unable to convert to bool",
        ),
    ];
    for (task, host, msg) in cases {
        let line = fatal(task, host);
        assert!(
            line.contains(msg),
            "{host}: expected {msg:?} in\n{line}\n{out}"
        );
    }
    for (i, host) in hosts.iter().enumerate() {
        let skipped = i as u32;
        assert_eq!(
            out.host(host),
            HostRecap {
                failed: 1,
                skipped,
                ..HostRecap::default()
            },
            "{out}"
        );
    }
    for f in ["x", "y", "z"] {
        assert!(
            !work.join(f).exists(),
            "{f} was created by a task that failed:\n{out}"
        );
    }
    let reference = sb.dir("ansible-work");
    if let Some(theirs) = sb.ansible_play(&pb, &reference, &[]) {
        out.assert_same_recap_as(&theirs.run());
    }
}

#[test]
fn an_undefined_variable_in_a_condition_fails_the_task_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    let pb = sb.write(
        "play.yml",
        r#"- hosts: all
  gather_facts: false
  tasks:
    - debug: {msg: never}
      when: _undefined == 'yes'
      ignore_errors: true
      register: compared
    - include_tasks: nothing.yml
      when: [_undefined == 'yes']
      ignore_errors: true
      register: included
    - assert:
        that:
          - compared is failed
          - included is failed
          - _undefined is undefined
          - (_undefined | default('x')) == 'x'
          - not (_undefined is defined and _undefined == 'yes')
"#,
    );
    sb.write("nothing.yml", "- debug: {msg: included}\n");
    let work = sb.dir("work");
    let out = sb.play(&pb, &work, &[]).run();
    out.assert_no_panic().assert_code(0);
    out.assert_stdout_has("'_undefined' is undefined");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        out.assert_same_recap_as(&theirs.run());
    }
}

#[test]
fn a_literal_string_in_a_template_is_never_a_condition() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    let pb = sb.write(
        "play.yml",
        "- hosts: all\n  gather_facts: false\n  tasks:\n    - assert: {that: \"{{ '1 == 1' }}\"}\n      ignore_errors: yes\n      register: r\n    - assert:\n        that:\n          - r is failed\n          - r.msg is contains 'untrusted template or expression'\n          - '{{ 1 == 1 }}'\n",
    );
    let work = sb.dir("work");
    let out = sb.play(&pb, &work, &[]).run();
    out.assert_no_panic().assert_code(0);
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        out.assert_same_recap_as(&theirs.run());
    }
}

const MODULE_NAMES: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - file: {path: "{{ work }}/f", bogus: 1}
      ignore_errors: true
      register: short
    - ansible.builtin.file: {path: "{{ work }}/f", bogus: 1}
      ignore_errors: true
      register: qualified
    - copy: {content: "x", dest: "{{ work }}/f", bogus: 1}
      ignore_errors: true
      register: by_action
    - name: names
      debug:
        msg: "{{ [short, qualified, by_action] | map(attribute='msg') | map('split', ':') | map('first') }}"
"#;

/// A module's messages name it as the task wrote it, or `ansible.legacy.NAME` when an
/// action plugin of Ansible's (`copy`) runs it, as in ansible-core.
#[test]
fn modules_are_named_in_their_messages_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory_with_python(&["localhost"]);
    let pb = sb.write("play.yml", MODULE_NAMES);
    sandball_e2e::compare::same_as_ansible(&sb, &pb, &["names"]);
    let out = sb.play(&pb, &sb.dir("work"), &[]).run();
    out.assert_stdout_has("Unsupported parameters for (ansible.legacy.copy) module");
}

const RAISED_FAILURES: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - {name: unsupported async, debug: {msg: x}, async: 5, poll: 1, ignore_errors: true, register: r1}
    - {name: retries not a number, debug: {msg: x}, retries: abc, until: true, ignore_errors: true, register: r2}
    - {name: check_mode undefined, debug: {msg: x}, check_mode: "{{ nope }}", ignore_errors: true, register: r3}
    - {name: timeout out of range, debug: {msg: x}, timeout: -1, ignore_errors: true, register: r4}
    - {name: pause not a number, debug: {msg: x}, loop: [1], loop_control: {pause: abc}, ignore_errors: true, register: r5}
    - name: break_when undefined
      debug: {msg: x}
      loop: [1]
      loop_control: {break_when: nope == 1}
      ignore_errors: true
      register: r6
    - {name: set_fact without facts, set_fact: {}, ignore_errors: true, register: r7}
    - {name: the action's own failure, fail: {msg: boom}, ignore_errors: true}
    - {name: arguments against the action's spec, debug: {msg: a, var: b}, ignore_errors: true}
    - {name: a required argument missing, assert: {}, ignore_errors: true}
    - {name: the copy action's own check, copy: {dest: "{{ work }}/x"}, ignore_errors: true}
    - {name: a success failed_when fails, set_fact: {a: 1}, failed_when: true, ignore_errors: true, register: r8}
    - {name: a module's success failed_when fails, command: "true", failed_when: true, ignore_errors: true, register: r9}
    - add_host: {name: closed, ansible_host: 127.0.0.1, ansible_port: 1, ansible_connection: ssh}
    - {name: unreachable, ping: , delegate_to: closed, ignore_unreachable: true, register: r10}
    - name: messages
      debug:
        msg: "{{ [r1, r2, r3, r4, r5, r6, r7, r8, r9, r10] | map(attribute='msg') }}"
"#;

/// The `[ERROR]` lines of a run, in order.
fn error_lines(out: &Output) -> Vec<String> {
    format!("{}\n{}", out.stdout, out.stderr)
        .lines()
        .filter(|l| l.starts_with("[ERROR]: "))
        .map(str::to_string)
        .collect()
}

/// A failure raised while a task runs (by the executor, reading its keywords, by the
/// action, or by the connection) is worded as ansible-core words it: "Task failed: "
/// and the error, not the action's or module's failure; one raised by its loop is the
/// error alone; one `failed_when` made of a success is the action's; the registered
/// messages are ansible-core's too.
#[test]
fn raised_failures_are_worded_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    let pb = sb.write("play.yml", RAISED_FAILURES);
    let work = sb.dir("work");
    let out = sb.play(&pb, &work, &[]).run();
    out.assert_no_panic().assert_code(0);
    let ours = error_lines(&out);
    assert!(
        ours.contains(&"[ERROR]: Task failed: This action (debug) does not support async.".into()),
        "{out}"
    );
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.run();
        assert_eq!(ours, error_lines(&theirs), "{out}\n{theirs}");
        out.assert_same_results_as(&theirs, &["messages"]);
    }
}

/// A playbook error is reported as ansible-core 2.19 reports it: the reason, the
/// `Origin:` of the error, and the lines up to it numbered, a caret under the column.
#[test]
fn a_playbook_error_is_reported_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    let pb = sb.write(
        "play.yml",
        "- hosts: all\n  gather_facts: false\n  foo: 1\n  tasks: []\n",
    );
    let work = sb.dir("work");
    let out = sb.play(&pb, &work, &[]).run();
    assert_parse_error(&out, "'foo' is not a valid attribute for a Play", &[3]);
    // From the error on, without warnings.
    let report = |o: &Output| -> String {
        let at = o.stderr.find("[ERROR]: ").unwrap_or(0);
        o.stderr[at..].to_string()
    };
    let ours = report(&out);
    assert!(ours.contains("\n3   foo: 1\n    ^ column 3\n"), "{out}");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.run();
        theirs.assert_code(4);
        assert_eq!(ours, report(&theirs), "{out}\n{theirs}");
    }
}
