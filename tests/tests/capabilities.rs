//! Capability grants end to end: a module that reaches for something its grant does
//! not hold is refused, its task fails with a message naming the module, the
//! capability and how to grant it, and the other hosts go on; with the grant the
//! message suggests (the task's `capabilities:` keyword), the same task succeeds.
//!
//! The module is the `denied_reader` fixture (tests/fixtures): its manifest requests
//! nothing, and it reads `/etc/hostname` through WASI, the host interface's `stat`, or
//! by running `/bin/cat`.

use sandball_e2e::{Binaries, HostRecap, Output, Sandbox};
use serde_json::Value;

/// Runs, on hosts alpha and beta: the read without a grant on alpha only, then the
/// read with `grant` on beta, then ping everywhere.
fn run(via: &str, grant: &str) -> Output {
    let sb = Sandbox::new();
    sb.inventory(&["alpha", "beta"]);
    let play = format!(
        r#"
- name: capabilities
  hosts: all
  gather_facts: false
  tasks:
    - name: read without a grant
      denied_reader:
        via: {via}
      when: inventory_hostname == 'alpha'

    - name: read with a grant
      denied_reader:
        via: {via}
      capabilities: {grant}

    - name: the others go on
      ping:
"#
    );
    let pb = sb.write("play.yml", &play);
    let out = sb
        .play(&pb, &sb.dir("work"), &["-v"])
        .env("SANDBALL_MODULE_PATH", Binaries::fixtures())
        .run();
    out.assert_no_panic().assert_code(2);
    out
}

/// The JSON result printed after `prefix` (at `-v`) under `task`.
fn result(out: &Output, task: &str, prefix: &str) -> serde_json::Map<String, Value> {
    let line = out
        .task_lines(task)
        .into_iter()
        .find_map(|l| l.strip_prefix(prefix))
        .unwrap_or_else(|| panic!("no {prefix:?} line under {task:?}:\n{out}"));
    match serde_json::from_str(line) {
        Ok(Value::Object(m)) => m,
        other => panic!("not a JSON object after {prefix:?} ({other:?}):\n{out}"),
    }
}

/// Checks the refusal on alpha (the message names the module, the capability and the
/// least grant that allows it) and that beta went on.
fn assert_denied(out: &Output, capability_words: &[&str], hint: &str) {
    let failure = result(out, "read without a grant", "fatal: [alpha]: FAILED! => ");
    let msg = failure["msg"].as_str().unwrap_or_default();
    for word in ["denied_reader", "capabilities:"]
        .iter()
        .chain(capability_words)
    {
        assert!(
            msg.contains(word),
            "the denial message lacks {word:?}: {msg}\n{out}"
        );
    }
    assert!(
        msg.contains(hint),
        "the denial message does not say how to grant it ({hint:?}): {msg}\n{out}"
    );
    assert_eq!(
        out.host("alpha"),
        HostRecap {
            failed: 1,
            ..HostRecap::default()
        },
        "{out}"
    );
    assert_eq!(
        out.host("beta"),
        HostRecap {
            ok: 2,
            skipped: 1,
            ..HostRecap::default()
        },
        "{out}"
    );
    assert_eq!(
        out.task_lines("the others go on").len(),
        1,
        "only beta is left:\n{out}"
    );
}

fn hostname() -> String {
    std::fs::read_to_string("/etc/hostname").expect("this test needs /etc/hostname")
}

#[test]
fn running_a_program_outside_the_grant_is_denied() {
    let out = run("exec", "[{kind: exec, program: /bin/cat}]");
    assert_denied(
        &out,
        &["exec", "/bin/cat"],
        "{kind: exec, program: /bin/cat}",
    );
    let granted = result(&out, "read with a grant", "ok: [beta] => ");
    assert_eq!(granted["content"], Value::String(hostname()), "{out}");
}

#[test]
fn host_interface_file_access_outside_the_grant_is_denied() {
    let out = run("stat", "[{kind: fs, path: /etc/hostname, access: read}]");
    assert_denied(
        &out,
        &["/etc/hostname"],
        "{kind: fs, path: /etc/hostname, access: read}",
    );
    let granted = result(&out, "read with a grant", "ok: [beta] => ");
    assert_eq!(granted["exists"], Value::Bool(true), "{out}");
}

#[test]
fn wasi_file_access_outside_the_grant_is_denied() {
    let out = run("wasi", "[{kind: fs, path: /etc/hostname, access: read}]");
    assert_denied(
        &out,
        &["/etc/hostname"],
        "{kind: fs, path: /etc/hostname, access: read}",
    );
    let granted = result(&out, "read with a grant", "ok: [beta] => ");
    assert_eq!(granted["content"], Value::String(hostname()), "{out}");
}
