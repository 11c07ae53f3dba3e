//! Modules that misbehave (the fixtures of tests/fixtures): one that traps, one that
//! never ends, one that prints junk. Each fails its task with a clear message, never
//! crashes sandball, and the host's shim session goes on serving the next task. And
//! legacy modules that misbehave in every way their output can, compared with
//! ansible-playbook in one playbook.

use sandball_e2e::{Binaries, HostRecap, Output, Sandbox};
use std::time::Duration;

/// Runs `yaml` against localhost with the fixtures on the module path.
fn run(yaml: &str, env: &[(&str, &str)]) -> Output {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    let pb = sb.write("play.yml", yaml);
    let mut inv = sb
        .play(&pb, &sb.dir("work"), &[])
        .env("SANDBALL_MODULE_PATH", Binaries::fixtures())
        .limit(Duration::from_secs(120));
    for (k, v) in env {
        inv = inv.env(k, v);
    }
    let out = inv.run();
    out.assert_no_panic();
    out
}

fn fatal_line<'a>(out: &'a Output, task: &str) -> &'a str {
    out.task_lines(task)
        .into_iter()
        .find(|l| l.starts_with("fatal: [localhost]: FAILED! => {"))
        .unwrap_or_else(|| panic!("no failure under {task:?}:\n{out}"))
}

const TRAP: &str = r#"
- name: traps
  hosts: all
  gather_facts: false
  tasks:
    - name: a module that traps
      trapper:
      ignore_errors: true

    - name: the session still works
      ping:

    - name: it traps again
      trapper:
"#;

#[test]
fn a_trapping_module_fails_its_task_only() {
    let out = run(TRAP, &[]);
    out.assert_code(2);
    let line = fatal_line(&out, "a module that traps");
    assert!(
        line.contains("MODULE FAILURE") && line.contains("trapper"),
        "{out}"
    );
    assert_eq!(
        out.task_lines("the session still works"),
        vec!["ok: [localhost]"],
        "{out}"
    );
    assert_eq!(
        out.host("localhost"),
        HostRecap {
            ok: 2,
            failed: 1,
            ignored: 1,
            ..HostRecap::default()
        },
        "{out}"
    );
}

const LOOP: &str = r#"
- name: loops
  hosts: all
  gather_facts: false
  tasks:
    - name: a module that spins
      looper:
        how: spin
      ignore_errors: true

    - name: a module that sleeps
      looper:
        how: sleep
      ignore_errors: true

    - name: the session still works
      ping:

    - name: it spins again
      looper:
"#;

#[test]
fn a_module_that_never_ends_is_stopped_at_its_time_limit() {
    // The default wall-time limit of a module run, in milliseconds.
    let out = run(LOOP, &[("SANDBALL_WALL_TIME_MS", "2000")]);
    out.assert_code(2);
    for task in [
        "a module that spins",
        "a module that sleeps",
        "it spins again",
    ] {
        let line = fatal_line(&out, task);
        assert!(
            line.contains("looper") && line.contains("time limit"),
            "{task}: {line}\n{out}"
        );
    }
    assert_eq!(
        out.task_lines("the session still works"),
        vec!["ok: [localhost]"],
        "{out}"
    );
    assert_eq!(
        out.host("localhost"),
        HostRecap {
            ok: 3,
            failed: 1,
            ignored: 2,
            ..HostRecap::default()
        },
        "{out}"
    );
    assert!(
        out.elapsed < Duration::from_secs(60),
        "three 2 s limits took {:?}:\n{out}",
        out.elapsed
    );
}

const JUNK: &str = r#"
- name: junk
  hosts: all
  gather_facts: false
  tasks:
    - name: junk around the result
      junk_printer:
        junk: around

    - name: nothing but junk
      junk_printer:
        junk: only
"#;

#[test]
fn junk_output_is_tolerated_around_json_and_fails_without_it() {
    let out = run(JUNK, &[]);
    out.assert_code(2);
    let around = out.task_lines("junk around the result");
    assert_eq!(around[0], "ok: [localhost]", "{out}");
    // Warnings go to stderr, as Ansible's.
    assert!(
        out.stderr.lines().any(|l| l.starts_with(
            "[WARNING]: Module invocation had junk after the JSON data: junk after the JSON"
        )),
        "no warning about the trailing junk:\n{out}"
    );
    let line = fatal_line(&out, "nothing but junk");
    assert!(
        line.contains("Module result deserialization failed: No start of json char found"),
        "{out}"
    );
    assert!(
        line.contains("\"module_stdout\": \"this is not JSON at all"),
        "{out}"
    );
    assert_eq!(
        out.host("localhost"),
        HostRecap {
            ok: 1,
            failed: 1,
            ..HostRecap::default()
        },
        "{out}"
    );
}

/// Writes `raw` as given (or `hex`'s bytes, or `out` as JSON, `<<`/`>>` standing for
/// `{{`/`}}`, which the task's own templating would otherwise evaluate), after `mb`
/// MiB of junk or an object nested `deep` levels, then exits with `rc`. It may read
/// its stdin to the end first, leave a child holding its stdout for `child` seconds,
/// sleep, or end with SIGKILL.
const RAW_MODULE: &str = r#"#!/usr/bin/python
# WANT_JSON
import json, os, signal, subprocess, sys, time
args = json.load(open(sys.argv[1]))
if args.get('stdin'):
    sys.stdin.read()
time.sleep(int(args.get('sleep', 0)))
if args.get('child'):
    subprocess.Popen(['sleep', str(args['child'])])
out = sys.stdout.buffer
if args.get('mb'):
    out.write(b'y' * (int(args['mb']) << 20) + b'\n')
n = int(args.get('deep', 0))
if n:
    out.write(b'{"a":' * n + b'1' + b'}' * n)
elif 'hex' in args:
    out.write(bytes.fromhex(args['hex']))
elif 'raw' in args:
    out.write(args['raw'].encode())
else:
    out.write(json.dumps(args['out']).replace('<<', '{{').replace('>>', '}}').encode())
out.flush()
if args.get('kill'):
    os.kill(os.getpid(), signal.SIGKILL)
sys.exit(int(args.get('rc', 0)))
"#;

/// An old-style module: its arguments are a file of `key=value` words.
const OLD_STYLE: &str = "#!/bin/sh\necho '{\"changed\": true, \"msg\": \"'\"$(tr ' ' '\\n' < \"$1\" | grep '^b=')\"'\"}'\n";

/// A new-style module that raises an exception it does not handle, or returns
/// without a result.
const NEW_STYLE: &str = r#"#!/usr/bin/python
from ansible.module_utils.basic import AnsibleModule

module = AnsibleModule(argument_spec=dict(how=dict(type='str')))
if module.params['how'] == 'raise':
    try:
        raise KeyError('the cause')
    except KeyError as e:
        raise ValueError('what went wrong') from e
"#;

const LEGACY_PLAY: &str = r#"
- hosts: all
  gather_facts: false
  vars:
    # Discovered: a module must not be able to choose the next module's Python.
    ansible_python_interpreter: auto_silent
    ansible_interpreter_python_fallback: [PYTHON]
  tasks:
    - {name: junk around, emit: {raw: "motd {\n  {\"changed\": true}\ntrailing junk\n", mb: 12}, ignore_errors: true}
    - {name: two documents, emit: {raw: "{\"a\": 1}\n{\"b\": 2}\n"}, ignore_errors: true}
    - {name: nothing, emit: {raw: ""}, ignore_errors: true}
    - {name: a list, emit: {raw: "[1, 2]\n"}, ignore_errors: true}
    - {name: junk on the closing line, emit: {raw: "{\"changed\": false} post\n"}, ignore_errors: true}
    - {name: python's json, emit: {raw: "{\"v\": NaN, \"w\": -Infinity, \"n\": 123456789012345678901234567890, \"changed\": true, \"changed\": false}\n"}, ignore_errors: true}
    - {name: bad json, emit: {raw: "{\"a\": 1,\n \"b\" 2}\n"}, ignore_errors: true}
    # {"out": "ab\xff\xfecd"}
    - {name: not utf-8, emit: {hex: 7b226f7574223a20226162fffe6364227d0a}, ignore_errors: true}
    - {name: too deep, emit: {deep: 5000}, ignore_errors: true}
    - {name: exit 3 with a result, emit: {out: {msg: fine}, rc: 3}, ignore_errors: true}
    - {name: rc in the result, emit: {out: {msg: said, rc: 5}}, ignore_errors: true}
    - {name: failed as text, emit: {out: {failed: "false"}}, ignore_errors: true}
    - {name: changed as text, emit: {out: {changed: "no"}, stdin: true}}
    - {name: a child holding stdout, emit: {out: {changed: false}, child: 1}}
    - {name: killed mid-result, emit: {raw: "{\"partial\": ", kill: true}, ignore_errors: true}
    - name: internal keys
      emit: {out: {changed: false, _ansible_no_log: true, _ansible_verbose_always: true, add_host: {host_name: evil}}}
    - {name: warnings of the wrong type, emit: {out: {warnings: "one", deprecations: {msg: x}}}}
    - {name: facts that are no mapping, emit: {out: {ansible_facts: [1]}}, ignore_errors: true}
    - name: facts that would steer
      emit:
        out:
          ansible_facts:
            ansible_host: evil.example
            ansible_connection: ssh
            discovered_interpreter_python: "{{ work }}/evil-python"
            mine: "<< lookup('pipe', 'touch {{ work }}/templated') >>"
      register: steering
    - name: what the facts did
      debug:
        msg: "{{ [ansible_host, ansible_connection, ansible_facts.host, mine, steering.ansible_facts.mine] }}"
    - {name: the next module's python, emit: {out: {changed: false}}}
    - {name: old style, old_style: a=1 b=two}
    - {name: an exception not handled, new_style: {how: raise}, ignore_errors: true}
    - {name: no result, new_style: {how: return}, ignore_errors: true}
    - {name: past its timeout, emit: {out: {}, sleep: 20}, timeout: 2, ignore_errors: true}
"#;

/// Legacy modules that misbehave in every way a module's output can (junk, no result,
/// Python's JSON, bytes that are not UTF-8, exit statuses, forged internal keys,
/// facts that would steer the run, a signal, a timeout, an exception not handled) are
/// read as ansible-core reads them: the same task status, message and recap as under ansible-playbook.
/// Nothing a module returns is templated, and none makes the next module run another
/// Python.
#[test]
fn misbehaving_legacy_modules_are_read_as_ansible_reads_them() {
    use std::os::unix::fs::PermissionsExt;
    let sb = Sandbox::new();
    sb.inventory_with_python(&["localhost"]);
    sb.write("library/emit.py", RAW_MODULE);
    sb.write("library/old_style", OLD_STYLE);
    sb.write("library/new_style.py", NEW_STYLE);
    let work = sb.dir("work");
    let evil = work.join("evil-python");
    std::fs::write(&evil, "#!/bin/sh\ntouch \"$0.ran\"\nexec python3 \"$@\"\n").unwrap_or_default();
    let _ = std::fs::set_permissions(&evil, std::fs::Permissions::from_mode(0o755));
    let python = sandball_e2e::binaries::ansible_python();
    let pb = sb.write(
        "play.yml",
        &LEGACY_PLAY.replace("PYTHON", &python.display().to_string()),
    );
    let ours = sb
        .play_with_core(&pb, &work, &[])
        .limit(Duration::from_secs(180))
        .run();
    ours.assert_no_panic().assert_code(0);
    let contained = |out: &Output| {
        assert!(!work.join("evil-python.ran").exists(), "{out}");
        assert!(!work.join("templated").exists(), "{out}");
    };
    contained(&ours);
    let tasks = [
        "junk around",
        "two documents",
        "nothing",
        "a list",
        "junk on the closing line",
        "python's json",
        "bad json",
        "not utf-8",
        "too deep",
        "exit 3 with a result",
        "rc in the result",
        "failed as text",
        "changed as text",
        "a child holding stdout",
        "killed mid-result",
        "internal keys",
        "warnings of the wrong type",
        "facts that are no mapping",
        "what the facts did",
        "the next module's python",
        "old style",
        "an exception not handled",
        "no result",
        "past its timeout",
    ];
    for warning in [
        "[WARNING]: Module invocation had junk after the JSON data: trailing junk",
        "[WARNING]: Removed unexpected internal key in module return: _ansible_no_log = True",
        "[WARNING]: Removed unexpected internal key in module return: add_host = {'host_name': 'evil'}",
        "[WARNING]: Task result `warnings` was <class 'str'> instead of <class 'list'>.",
        "[WARNING]: Removed restricted key from module data: ansible_host",
    ] {
        ours.assert_stderr_has(warning);
    }
    let Some(theirs) = sb.ansible_play(&pb, &work, &[]) else {
        return;
    };
    let theirs = theirs.limit(Duration::from_secs(180)).run();
    contained(&theirs);
    ours.assert_same_recap_as(&theirs)
        .assert_same_results_as(&theirs, &tasks);
    assert_eq!(ours.code, theirs.code, "{theirs}");
    for task in tasks {
        // The error's lines but the source quoted: what failed, and its cause.
        let error = |out: &Output| {
            let lines = out.task_lines(task);
            let mut said = Vec::new();
            for (i, l) in lines.iter().enumerate() {
                let cause = i > 0 && lines[i - 1] == "<<< caused by >>>";
                if l.starts_with("[ERROR]") || l.starts_with("Task failed") || cause {
                    said.push(l.to_string());
                }
            }
            said
        };
        assert_eq!(error(&ours), error(&theirs), "{task}:\n{theirs}\n{ours}");
    }
}
