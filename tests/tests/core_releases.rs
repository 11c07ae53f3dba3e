//! sandball follows the ansible-core release it finds (`crate::compat`): what 2.21
//! changed for playbook authors, run under ansible-playbook 2.21 and under sandball
//! with 2.21's ansible-core on its controller (`target/venv-2.21`, `make ansible-2.21`,
//! or `$ANSIBLE_221_BIN_DIR`); where 2.19 behaves otherwise, the same playbook under
//! 2.19 too. Every task's registered values are compared whole (times left out).

use sandball_e2e::Sandbox;
use sandball_e2e::compare::{ansible_bin, both_run, result};
use serde_json::Value;

/// The registered values the playbook's last task, `show`, prints (`shown`), without
/// what differs from run to run: sandball's, after checking that ansible-playbook
/// (of `bin`, named `release` in the failure) showed the same.
fn shown_by_both(bin: &std::path::Path, play: &str, release: &str) -> Value {
    shown_by_both_in(&Sandbox::new(), bin, play, release)
}

/// [`shown_by_both`] in `sb`, which holds the files the playbook reads.
fn shown_by_both_in(sb: &Sandbox, bin: &std::path::Path, play: &str, release: &str) -> Value {
    let (ours, theirs, ours_work, theirs_work) = both_run(sb, bin, play, &[]);
    ours.assert_code(0);
    let mut a = result(&ours, "show", &ours_work)["shown"].take();
    let mut b = result(&theirs, "show", &theirs_work)["shown"].take();
    without_times(&mut a);
    without_times(&mut b);
    assert!(a.is_object(), "no values shown:\n{ours}");
    assert_eq!(
        a, b,
        "{release}: sandball (left) and ansible-playbook differ"
    );
    a
}

/// `pb` under sandball, following the release of `bin`'s ansible-core, and under that
/// ansible-playbook: the sandbox's inventory, `-e work=<work>` and `extra` for both.
fn run_both(
    sb: &Sandbox,
    bin: &std::path::Path,
    pb: &std::path::Path,
    work: &std::path::Path,
    extra: &[&str],
) -> (sandball_e2e::Output, sandball_e2e::Output) {
    let ours = sb
        .play(pb, work, extra)
        .env("SANDBALL_ANSIBLE_PYTHON", bin.join("python"))
        .env_remove("SANDBALL_ANSIBLE_CORE_VERSION")
        .run();
    ours.assert_no_panic();
    let inventory = sb.path().join("inventory.ini");
    let mut args = vec![
        "-i".to_string(),
        inventory.display().to_string(),
        pb.display().to_string(),
        "-e".to_string(),
        format!("work={}", work.display()),
    ];
    args.extend(extra.iter().map(|a| a.to_string()));
    (ours, sb.ansible_playbook_in(bin, args).run())
}

/// A value without the keys that hold times (`start`, `end`, `delta`) and the
/// arguments a module echoes (`invocation`, whose presence the playbooks show
/// themselves), at any depth.
fn without_times(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for k in ["start", "end", "delta", "invocation"] {
                m.remove(k);
            }
            m.values_mut().for_each(without_times);
        }
        Value::Array(items) => items.iter_mut().for_each(without_times),
        _ => {}
    }
}

/// `_task` in `changed_when`, `failed_when`, `until`, a loop item's `when` and
/// `break_when`, and `register` as a mapping (projections in any order, evaluated once
/// the task is done, seen by those conditions): ansible-core 2.21's additions.
#[test]
fn task_object_and_register_projections_as_in_2_21() {
    let bin = ansible_bin("ANSIBLE_221_BIN_DIR", "venv-2.21");
    let play = r#"- hosts: all
  gather_facts: false
  tasks:
    - name: projections in any order
      debug: {msg: hello}
      register:
        p_answer: p_two + p_three
        p_two: p_one * 2
        p_three: p_one * 3
        p_one: 1
        p_msg: _task.result.msg
    - name: changed_when sees the result
      command: echo hi
      changed_when: _task.result.stdout == 'hi'
      register: {cw: _task.result}
    - name: changed_when sees the loop so far
      command: echo {{ item }}
      loop: [1, 2, 3]
      changed_when: _task.loop_result.results | length <= 1
      register:
        cw_loop: _task.loop_result
        cw_count: _task.loop_result.results | length
        cw_item: item
    - name: failed_when in a loop
      command: echo {{ item }}
      loop: [1, 2, 3]
      failed_when: _task.loop_result.results | length == 2
      ignore_errors: true
      register: {fw: _task.polymorphic_result, fw_last: _task.result}
    - name: until on a projection
      debug: {msg: tries}
      retries: 3
      delay: 0
      until: u_done
      register:
        u_done: _task.result.attempts == 2
        u_result: _task.result
    - name: when sees the previous item
      debug: {msg: "{{ item }}"}
      loop: [1, 2, 3, 4]
      when: _task.result | default({}) is skipped
      register: alternating
    - name: break_when on a projection
      debug: {msg: "{{ item }}"}
      loop: [1, 2, 3]
      loop_control:
        break_when: b_count == 2
      register:
        b_count: _task.loop_result.results | length
        b_item: item
    - name: a skipped task
      debug:
      when: false
      register: {sk: _task.result}
    - name: show
      debug: {var: shown}
      vars:
        shown:
          p: "{{ [p_answer, p_two, p_three, p_one, p_msg] }}"
          cw: "{{ cw }}"
          cw_loop: "{{ cw_loop }}"
          cw_count: "{{ cw_count }}"
          cw_item: "{{ cw_item }}"
          fw: "{{ fw }}"
          fw_last: "{{ fw_last }}"
          u: "{{ [u_done, u_result] }}"
          alternating: "{{ alternating }}"
          b: "{{ [b_count, b_item] }}"
          sk: "{{ sk }}"
"#;
    let ours = shown_by_both(&bin, play, "2.21");
    // What the playbook asks is there, not merely the same.
    assert_eq!(ours["p"], serde_json::json!([5, 2, 3, 1, "hello"]));
    assert_eq!(ours["b"], serde_json::json!([2, 2]));
}

/// The registered results of loops and skipped tasks, `changed_when` and `failed_when`
/// that cannot be evaluated or fail a failure, and `invocation` (and, under both,
/// `failed_when` seeing what `changed_when` made of the result): ansible-core
/// 2.21 gives every result `failed`, leaves a loop's `skipped` out when false, says
/// `changed_when_result` whenever `changed_when` is used and gives no `invocation`
/// unless `ansible_inject_invocation` asks for it; 2.19 otherwise. Under each release
/// sandball (finding that release's ansible-core) registers what it registers.
#[test]
fn results_take_the_shape_of_the_release_found() {
    let play = r#"- hosts: all
  gather_facts: false
  tasks:
    - name: changed_when
      command: echo hi
      changed_when: false
      register: plain
    - name: loop
      command: echo {{ item }}
      loop: [a, b]
      changed_when: item == 'a'
      register: looped
    - name: some items skipped
      debug: {msg: hi}
      loop: [1, 2]
      when: item == 2
      register: partly
    - name: all items skipped
      debug: {msg: hi}
      loop: [1]
      when: false
      register: none_ran
    - name: no items
      debug: {msg: hi}
      loop: []
      register: empty
    - name: skipped
      debug: {msg: hi}
      when: false
      register: skipped
    - name: a failed item
      command: "false"
      loop: [1]
      ignore_errors: true
      register: failing
    - name: failed_when sees what changed_when made
      debug: {msg: x}
      changed_when: true
      failed_when: seen is changed
      register: seen
      ignore_errors: true
    - name: changed_when fails on a failed module
      ping: {data: crash}
      changed_when: 1 / 0
      ignore_errors: true
      register: cw_error
    - name: changed_when cannot be evaluated
      command: echo foo
      changed_when: boom
      ignore_errors: true
      register: cw_undefined
    - name: failed_when cannot be evaluated
      command: echo foo
      failed_when: boom
      ignore_errors: true
      register: fw_undefined
    - name: failed_when on a failure
      command: "false"
      failed_when: true
      ignore_errors: true
      register: fw_failure
    - name: until cannot be evaluated
      command: echo foo
      until: boom
      retries: 1
      delay: 0
      ignore_errors: true
      register: until_undefined
    - name: when cannot be evaluated
      command: echo foo
      when: boom
      ignore_errors: true
      register: when_undefined
    - name: when cannot be evaluated in a loop
      command: echo {{ item }}
      loop: [1]
      when: boom
      ignore_errors: true
      register: when_undefined_looped
    - name: invocation asked for
      file: {path: "{{ work }}", state: directory}
      vars: {ansible_inject_invocation: true}
      loop: [1]
      register: injected
    - name: invocation not asked for
      file: {path: "{{ work }}", state: directory}
      register: plain_file
    - name: show
      debug: {var: shown}
      vars:
        shown:
          plain: "{{ plain }}"
          looped: "{{ looped }}"
          looped_invocation: "{{ looped.results | selectattr('invocation', 'defined') | list | length }}"
          partly: "{{ partly }}"
          none_ran: "{{ none_ran }}"
          empty: "{{ empty }}"
          skipped: "{{ skipped }}"
          failing: "{{ failing.keys() | sort }}"
          failing_item: "{{ [failing.results[0].failed, failing.results[0].msg] }}"
          injected: "{{ injected.results[0].invocation is defined }}"
          plain_file: "{{ plain_file.invocation is defined }}"
          seen: "{{ seen }}"
          until_undefined: "{{ until_undefined }}"
          when_undefined: "{{ when_undefined }}"
          when_undefined_looped: "{{ when_undefined_looped }}"
          cw_error: "{{ [cw_error.msg, cw_error.changed, cw_error.changed_when_result, cw_error.changed_when_suppressed_exception is defined, cw_error.exception is defined] }}"
          cw_undefined: "{{ [cw_undefined.msg, cw_undefined.changed, cw_undefined.changed_when_result, cw_undefined.changed_when_suppressed_exception is defined, cw_undefined.exception is defined] }}"
          fw_undefined: "{{ [fw_undefined.msg, fw_undefined.failed_when_result, fw_undefined.failed_when_suppressed_exception is defined, fw_undefined.exception is defined] }}"
          fw_failure: "{{ [fw_failure.msg, fw_failure.failed_when_result, fw_failure.failed_when_suppressed_exception is defined, fw_failure.exception is defined] }}"
"#;
    for (var, venv) in [
        ("ANSIBLE_BIN_DIR", "venv"),
        ("ANSIBLE_221_BIN_DIR", "venv-2.21"),
    ] {
        let bin = ansible_bin(var, venv);
        shown_by_both(&bin, play, venv);
    }
}

/// How sandball picks the release it follows: the setting, else the ansible-core it
/// finds, else the newest; `ansible_version` says which, and a `register` mapping is
/// refused before 2.21 as 2.19 refuses it.
#[test]
fn the_release_followed_is_the_setting_else_the_one_found() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    let pb = sb.write(
        "version.yml",
        "- hosts: all\n  gather_facts: false\n  tasks:\n    - debug: {msg: \"minor={{ ansible_version.minor }}\"}\n",
    );
    let work = sb.dir("work");
    let minor = |setting: Option<&str>, python: Option<std::path::PathBuf>| {
        let mut run = sb
            .play(&pb, &work, &[])
            .env_remove("SANDBALL_ANSIBLE_CORE_VERSION");
        if let Some(s) = setting {
            run = run.env("SANDBALL_ANSIBLE_CORE_VERSION", s);
        }
        if let Some(p) = python {
            run = run.env("SANDBALL_ANSIBLE_PYTHON", p);
        }
        let out = run.run();
        out.assert_code(0);
        let shown = out
            .stdout
            .split("minor=")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .map(str::to_string);
        shown.unwrap_or_else(|| panic!("no minor shown:\n{out}"))
    };
    let v219 = ansible_bin("ANSIBLE_BIN_DIR", "venv").join("python");
    let v221 = ansible_bin("ANSIBLE_221_BIN_DIR", "venv-2.21").join("python");
    assert_eq!(minor(None, Some(v219.clone())), "19");
    assert_eq!(minor(None, Some(v221.clone())), "21");
    assert_eq!(minor(Some("2.21"), Some(v219.clone())), "21");
    assert_eq!(minor(Some("2.20.3"), Some(v221.clone())), "20");
    // A Python without ansible-core: the newest.
    let bare = sb.write("bare-python", "#!/bin/sh\nexit 1\n");
    std::fs::set_permissions(&bare, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    assert_eq!(minor(None, Some(bare)), "21");

    // ansible.cfg's `[sandball] ansible_core_version`, beneath the environment.
    let cfg = sb.write("release.cfg", "[sandball]\nansible_core_version = 2.20\n");
    let from_file = sb
        .sandball(["--version"])
        .env_remove("SANDBALL_ANSIBLE_CORE_VERSION")
        .env("ANSIBLE_CONFIG", &cfg)
        .env("SANDBALL_ANSIBLE_PYTHON", &v221)
        .run();
    from_file
        .assert_code(0)
        .assert_stdout_has("ansible-core followed = 2.20.0 (SANDBALL_ANSIBLE_CORE_VERSION=2.20)");

    // `--version` says which and why.
    let version = sb
        .sandball(["--version"])
        .env_remove("SANDBALL_ANSIBLE_CORE_VERSION")
        .env("SANDBALL_ANSIBLE_PYTHON", &v221)
        .run();
    version
        .assert_code(0)
        .assert_stdout_has("ansible-core followed = 2.21.0 (the ansible-core found, 2.21.");

    let bad = sb
        .play(&pb, &work, &[])
        .env("SANDBALL_ANSIBLE_CORE_VERSION", "3.1")
        .run();
    bad.assert_code(5)
        .assert_stderr_has("SANDBALL_ANSIBLE_CORE_VERSION must name an ansible-core release");

    let mapped = sb.write(
        "mapped.yml",
        "- hosts: all\n  gather_facts: false\n  tasks:\n    - debug: {msg: hi}\n      register:\n        x: _task.result\n",
    );
    let refused = sb
        .play(&mapped, &work, &[])
        .env("SANDBALL_ANSIBLE_PYTHON", &v219)
        .run();
    refused.assert_no_panic();
    assert_ne!(refused.code, 0, "{refused}");
    assert!(
        format!("{}{}", refused.stdout, refused.stderr)
            .contains("Invalid 'register' specified: Invalid variable name of type 'dict'."),
        "{refused}"
    );
}

/// The two references: ansible-playbook 2.19 and 2.21.
const RELEASES: [(&str, &str); 2] = [
    ("ANSIBLE_BIN_DIR", "venv"),
    ("ANSIBLE_221_BIN_DIR", "venv-2.21"),
];

/// A templated `ignore_unreachable` under a loop: ansible-core 2.21 reads it for every
/// item and ignores the unreachable host when any item's held; 2.19 only when every
/// unreachable item's did. The unreachable loop's result is shown whole (its items
/// with `exception`), as ansible-playbook shows it, under both.
#[test]
fn ignore_unreachable_in_a_loop_as_in_each_release() {
    let play = r#"- hosts: all
  gather_facts: false
  tasks:
    - name: one item ignores
      ping:
      ignore_unreachable: "{{ item }}"
      loop: [false, true]
      register: r
    - name: after
      debug: {msg: "{{ r is unreachable }}"}
    - name: none ignores
      ping:
      ignore_unreachable: "{{ item }}"
      loop: [false, false]
    - name: last
      debug: {msg: last}
"#;
    for (var, venv) in RELEASES {
        let bin = ansible_bin(var, venv);
        let sb = Sandbox::new();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let port = listener.local_addr().expect("its address").port();
        drop(listener);
        sb.write(
            "inventory.ini",
            &format!(
                "good ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n\
                 gone ansible_connection=ssh ansible_host=127.0.0.1 ansible_port={port}\n"
            ),
        );
        let pb = sb.write("core.yml", play);
        let work = sb.dir("work");
        // One host at a time: each task's lines in the inventory's order.
        let (ours, theirs) = run_both(&sb, &bin, &pb, &work, &["-f", "1"]);
        ours.assert_same_recap_as(&theirs)
            .assert_same_task_lines_as(
                &theirs,
                &["one item ignores", "after", "none ignores", "last"],
            );
        let ignored = ours.task_lines("one item ignores").contains(&"...ignoring");
        assert_eq!(ignored, venv == "venv-2.21", "{venv}:\n{ours}");
    }
}

/// `include_vars`' `extensions` and `ignore_files`: from ansible-core 2.20 lists only
/// (`ignore_files` as words still read, deprecated), refused otherwise with the
/// option named where it is written; 2.19 reads text as words (`ignore_files`) and
/// characters (`extensions`). A file's and a directory's options do not go together.
#[test]
fn include_vars_lists_as_in_each_release() {
    let play = r#"- hosts: all
  gather_facts: false
  tasks:
    - {name: ext text, include_vars: {dir: vars/d, extensions: "yml"}, ignore_errors: true, register: r1}
    - {name: ignore words, include_vars: {dir: vars/d, ignore_files: "a.yml c.yaml"}, ignore_errors: true, register: r2}
    - {name: ext mapping, include_vars: {dir: vars/d, extensions: {a: 1}}, ignore_errors: true, register: r3}
    - {name: ext list, include_vars: {dir: vars/d, extensions: [yaml], ignore_unknown_extensions: true}, register: r4}
    - {name: ignore list, include_vars: {dir: vars/d, ignore_files: [a.yml]}, register: r5}
    - {name: file and dir options, include_vars: {file: vars/d/a.yml, extensions: [yml]}, ignore_errors: true, register: r6}
    - name: show
      debug: {var: shown}
      vars:
        shown: {r1: "{{ r1 }}", r3: "{{ r3 }}", r4: "{{ r4 }}", r5: "{{ r5 }}", r6: "{{ r6 }}", r2: "{{ r2 }}"}
"#;
    for (var, venv) in RELEASES {
        let bin = ansible_bin(var, venv);
        let sb = Sandbox::new();
        sb.write("vars/d/a.yml", "a: 1\n");
        sb.write("vars/d/b.yml", "b: 2\n");
        sb.write("vars/d/c.yaml", "c: 3\n");
        let ours = shown_by_both_in(&sb, &bin, play, venv);
        if venv == "venv-2.21" {
            assert_eq!(
                ours["r1"]["msg"],
                "Task failed: The 'extensions' option must be a list."
            );
        }
    }
    // The refusal names the option where it is written (file:line:column).
    let sb = Sandbox::new();
    sb.write("vars/d/a.yml", "a: 1\n");
    let pb = sb.write(
        "lists.yml",
        "- hosts: all\n  gather_facts: false\n  tasks:\n    - include_vars:\n        dir: vars/d\n        ignore_files: {a: 1}\n",
    );
    sb.inventory(&["alpha"]);
    let work = sb.dir("work");
    let out = sb
        .play(&pb, &work, &[])
        .env("SANDBALL_ANSIBLE_CORE_VERSION", "2.21")
        .run();
    out.assert_no_panic()
        .assert_code(2)
        .assert_stdout_has("The 'ignore_files' option must be a list.")
        .assert_stdout_has(&format!("Origin: {}:6:23", pb.display()));
}

/// ansible-core 2.21 removed the `paramiko` connection (a task on it fails: no such
/// plugin) and `auto_legacy` interpreter discovery (the name is then a path, run as
/// any other); under 2.19 paramiko is served by the SSH connection.
#[test]
fn paramiko_and_auto_legacy_removed_in_2_21() {
    let bin = ansible_bin("ANSIBLE_221_BIN_DIR", "venv-2.21");
    let play = r#"- hosts: all
  gather_facts: false
  tasks:
    - {name: paramiko, ping: , vars: {ansible_connection: paramiko}, ignore_errors: true, register: p1}
    - {name: paramiko_ssh, ping: , vars: {ansible_connection: paramiko_ssh}, ignore_errors: true, register: p2}
    - name: auto_legacy
      ansible.builtin.pip: {name: sandball-no-such-package, state: absent}
      vars: {ansible_python_interpreter: auto_legacy}
      ignore_errors: true
      register: a1
    - name: show
      debug: {var: shown}
      vars:
        shown: {p1: "{{ p1 }}", p2: "{{ p2 }}", a1: "{{ a1 }}"}
"#;
    let ours = shown_by_both(&bin, play, "2.21");
    assert_eq!(
        ours["p1"]["msg"],
        "Task failed: the connection plugin 'paramiko' was not found"
    );
}

/// `replace` reads the file as ansible-core 2.20 started to, in text mode: CRLF and a
/// lone CR are read as LF (so `$` matches before them) and the file is written with
/// LFs; under 2.19 the line ends stay as they are.
#[test]
fn replace_reads_line_ends_as_each_release() {
    let play = r#"- hosts: all
  gather_facts: false
  tasks:
    - copy: {dest: "{{ work }}/crlf.txt", content: "a\r\nb\r\nc\r\n"}
    - copy: {dest: "{{ work }}/cr.txt", content: "a\rb\rc\r"}
    - copy: {dest: "{{ work }}/untouched.txt", content: "a\r\nb\r\n"}
    - {replace: {path: "{{ work }}/crlf.txt", regexp: 'b$', replace: B}, register: r1}
    - {replace: {path: "{{ work }}/cr.txt", regexp: '^b', replace: B}, register: r2}
    - {replace: {path: "{{ work }}/untouched.txt", regexp: zzz, replace: B}, register: r3}
    - {slurp: {src: "{{ work }}/crlf.txt"}, register: f1}
    - {slurp: {src: "{{ work }}/cr.txt"}, register: f2}
    - {slurp: {src: "{{ work }}/untouched.txt"}, register: f3}
    - name: show
      debug: {var: shown}
      vars:
        shown:
          changed: "{{ [r1.changed, r2.changed, r3.changed, r1.msg, r2.msg] }}"
          files: "{{ [f1.content | b64decode, f2.content | b64decode, f3.content | b64decode] }}"
"#;
    for (var, venv) in RELEASES {
        let bin = ansible_bin(var, venv);
        shown_by_both(&bin, play, venv);
    }
}

/// A `loop_control.label` that cannot be templated: ansible-core 2.21 warns, keeps the
/// item's result (a skipped item stays skipped) and the warning in the item's and the
/// loop's `warnings`.
#[test]
fn a_label_that_cannot_be_templated_warns_as_in_2_21() {
    let bin = ansible_bin("ANSIBLE_221_BIN_DIR", "venv-2.21");
    let play = r#"- hosts: all
  gather_facts: false
  tasks:
    - command: "echo {{ item }}"
      register: skipping
      loop: [changed, skipped]
      loop_control:
        label: "{{ skipping.stdout }}"
      when: item == "changed"
    - name: run
      debug: {msg: x}
      loop: [1]
      loop_control: {label: "{{ nope }}"}
      register: ran
    - name: show
      debug: {var: shown}
      vars:
        shown: {skipping: "{{ skipping.results[1] }}", ran: "{{ ran }}"}
"#;
    let ours = shown_by_both(&bin, play, "2.21");
    assert_eq!(
        ours["ran"]["warnings"],
        serde_json::json!(["Failed to template loop_control label: 'nope' is undefined"])
    );
}

/// An argument spec's `str` option given `None`: the empty text when it is required or
/// has a default (so a `choices` check sees ''), `None` otherwise — 2.20's change,
/// which 2.19.14 has too — in a role's argument specs and a module's arguments.
#[test]
fn str_options_given_none_as_in_each_release() {
    let play = r#"- hosts: all
  gather_facts: false
  tasks:
    - include_role: {name: r}
      vars: {withdefault: null, required_one: null, plain: null}
    - name: a module's str option with a default, given null
      stat: {path: "{{ work }}", checksum_algorithm: null}
      ignore_errors: true
      register: s
    - name: show
      debug: {var: shown}
      vars:
        shown: {seen: "{{ seen }}", s: "{{ s }}"}
"#;
    for (var, venv) in RELEASES {
        let bin = ansible_bin(var, venv);
        let sb = Sandbox::new();
        sb.write(
            "roles/r/meta/argument_specs.yml",
            "argument_specs:\n  main:\n    options:\n      withdefault: {type: str, default: dflt}\n      required_one: {type: str, required: true}\n      plain: {type: str}\n",
        );
        sb.write(
            "roles/r/tasks/main.yml",
            "- set_fact: {seen: \"{{ [withdefault, required_one, plain] }}\"}\n",
        );
        shown_by_both_in(&sb, &bin, play, venv);
    }
}

/// An `ignore_errors` whose template gives no boolean fails the task before its action
/// runs ("Error processing keyword 'ignore_errors': …"); ansible-core 2.19 then ignores
/// the failure (it judges the template's text), 2.21 does not (the value is false).
#[test]
fn an_ignore_errors_that_is_no_boolean_as_in_each_release() {
    let play = r#"- hosts: all
  gather_facts: false
  tasks:
    - name: no boolean
      command: "false"
      ignore_errors: "{{ 'maybe' }}"
    - name: after
      debug: {msg: after}
"#;
    for (var, venv) in RELEASES {
        let bin = ansible_bin(var, venv);
        let sb = Sandbox::new();
        sb.inventory(&["alpha"]);
        let pb = sb.write("core.yml", play);
        let work = sb.dir("work");
        let (ours, theirs) = run_both(&sb, &bin, &pb, &work, &[]);
        // Under 2.21 the host stops there.
        let tasks: &[&str] = if venv == "venv" {
            &["no boolean", "after"]
        } else {
            &["no boolean"]
        };
        ours.assert_same_recap_as(&theirs)
            .assert_same_results_as(&theirs, tasks);
        assert_eq!(ours.code, theirs.code, "{venv}:\n{ours}\n{theirs}");
        ours.assert_stdout_has(
            "Error processing keyword 'ignore_errors': The value 'maybe' could not be converted to 'bool'.",
        );
    }
}

/// An include's options: one it does not take is refused before the run, as
/// ansible-core refuses it when it loads the task; `include_role`'s `rescuable` is
/// 2.21's (refused before), and honoured there as `false` only (sandball ends the run
/// on a role's file that is not there).
#[test]
fn include_options_as_in_each_release() {
    for (var, venv) in RELEASES {
        let bin = ansible_bin(var, venv);
        let sb = Sandbox::new();
        sb.inventory(&["alpha"]);
        sb.write("roles/rr/tasks/main.yml", "- debug: {msg: in rr}\n");
        sb.write("x.yml", "- debug: {msg: in x}\n");
        let work = sb.dir("work");
        for (name, task) in [
            ("role-bogus", "include_role: {name: rr, bogus: 1}"),
            ("tasks-bogus", "include_tasks: {file: x.yml, bogus: 1}"),
            (
                "rescuable-false",
                "include_role: {name: rr, rescuable: false}",
            ),
        ] {
            let pb = sb.write(
                &format!("{name}.yml"),
                &format!("- hosts: all\n  gather_facts: false\n  tasks:\n    - {task}\n"),
            );
            let (ours, theirs) = run_both(&sb, &bin, &pb, &work, &[]);
            assert_eq!(ours.code, theirs.code, "{venv} {name}:\n{ours}\n{theirs}");
            let error = |o: &sandball_e2e::Output| {
                o.stdout
                    .lines()
                    .chain(o.stderr.lines())
                    .find(|l| l.starts_with("[ERROR]"))
                    .map(str::to_string)
            };
            assert_eq!(
                error(&ours),
                error(&theirs),
                "{venv} {name}:\n{ours}\n{theirs}"
            );
        }
    }
}

/// `include_role` of a role's file that is not there: under ansible-core 2.21 (and
/// `rescuable`, its default) the task fails, its `rescue` runs and the host stays
/// failed whatever `ignore_errors` says, with "its 'vars/' is not usable" for a
/// directory the role lacks; under 2.19, and with `rescuable: false`, the run ends.
#[test]
fn include_role_of_a_missing_file_as_in_each_release() {
    let play = r#"- hosts: all
  gather_facts: false
  tasks:
    - block:
        - name: missing tasks_from
          include_role: {name: rr, tasks_from: nope}
      rescue:
        - debug: {msg: rescued}
    - name: missing vars directory
      include_role: {name: rr, vars_from: nope}
      ignore_errors: true
"#;
    for (var, venv) in RELEASES {
        let bin = ansible_bin(var, venv);
        let sb = Sandbox::new();
        sb.inventory(&["alpha"]);
        sb.write("roles/rr/tasks/main.yml", "- debug: {msg: in rr}\n");
        let pb = sb.write("core.yml", play);
        let work = sb.dir("work");
        let (ours, theirs) = run_both(&sb, &bin, &pb, &work, &[]);
        assert_eq!(ours.code, theirs.code, "{venv}:\n{ours}\n{theirs}");
        // (sandball says the error on stderr, ansible-playbook on stdout.)
        if venv == "venv-2.21" {
            ours.assert_same_recap_as(&theirs)
                .assert_same_results_as(&theirs, &["debug"]);
            for failed in [
                "fatal: [alpha]: FAILED! => {\"changed\": false, \"msg\": \"Could not find specified file in role: tasks/nope\"}",
                "fatal: [alpha]: FAILED! => {\"changed\": false, \"msg\": \"Could not find specified file in role, its 'vars/' is not usable.\"}",
            ] {
                ours.assert_stdout_has(failed);
                theirs.assert_stdout_has(failed);
            }
            ours.assert_stderr_has("[ERROR]: Could not find specified file in role: tasks/nope");
        }
    }
}
