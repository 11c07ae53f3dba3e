//! Modules that misbehave (the fixtures of tests/fixtures): one that traps, one that
//! never ends, one that prints junk. Each fails its task with a clear message, never
//! crashes sandball, and the host's shim session goes on serving the next task.

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
