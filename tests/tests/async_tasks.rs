//! `async` with `poll`: the controller waits, showing `ASYNC POLL` lines, and a task
//! still running after `async` seconds fails; actions that cannot run in the background
//! and check mode are refused as ansible-core refuses them — compared with
//! ansible-playbook. `poll: 0` is refused before anything runs.

use sandball_e2e::binaries::ansible_python;
use sandball_e2e::{Output, Sandbox};

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: long
      command: sleep 2
      async: 20
      poll: 1
      register: r
    - name: show
      debug: {msg: "{{ r.finished }} {{ r.started }} {{ r.rc }} {{ r.ansible_job_id is match('j[0-9]+[.][0-9]+') }}"}
    - name: too long
      command: sleep 6
      async: 2
      poll: 1
      ignore_errors: true
    - name: not for debug
      debug: {msg: x}
      async: 5
      poll: 1
      ignore_errors: true
    - name: shell
      shell: sleep 1; echo done
      async: 10
      poll: 3
      register: s
    - name: shown
      debug: {var: s.stdout}
"#;

/// The task's result lines, without the `ASYNC POLL` ones (how many there are depends
/// on timing), job ids, and the error excerpts ansible-playbook adds.
fn lines(out: &Output, task: &str) -> Vec<String> {
    const KEPT: &[&str] = &[
        "ASYNC OK",
        "ASYNC FAILED",
        "ok:",
        "changed:",
        "...ignoring",
        "    \"",
        "}",
    ];
    out.task_lines(task)
        .into_iter()
        .filter(|l| KEPT.iter().any(|k| l.starts_with(k)))
        .map(|l| match l.find("jid=") {
            Some(i) => l[..i].to_string(),
            None => l.to_string(),
        })
        .collect()
}

#[test]
fn async_tasks_are_polled_as_in_ansible() {
    let sb = Sandbox::new();
    let python = ansible_python();
    sb.inventory_with_python(&["alpha"]);
    let pb = sb.write("play.yml", PLAY);
    let work = sb.dir("work");
    let out = sb
        .play(&pb, &work, &[])
        .env("SANDBALL_ANSIBLE_PYTHON", &python)
        .run();
    out.assert_no_panic().assert_code(0);
    out.assert_stdout_has("ASYNC POLL on alpha: jid=j");
    out.assert_stdout_has("\"msg\": \"True True 0 True\"");
    out.assert_stdout_has("async task did not complete within the requested time - 2s");
    out.assert_stdout_has("This action (debug) does not support async.");
    out.assert_stdout_has("\"s.stdout\": \"done\"");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.run();
        assert_eq!(theirs.code, 0, "{theirs}");
        out.assert_same_recap_as(&theirs);
        for task in ["long", "show", "too long", "not for debug", "shown"] {
            assert_eq!(
                lines(&theirs, task),
                lines(&out, task),
                "{task}:\n{theirs}\n{out}"
            );
        }
    }

    let zero = sb.write(
        "zero.yml",
        "- hosts: all\n  gather_facts: false\n  tasks:\n    - command: sleep 1\n      async: 10\n      poll: 0\n",
    );
    let out = sb.play(&zero, &work, &[]).run();
    out.assert_no_panic();
    assert_ne!(out.code, 0, "{out}");
    out.assert_stderr_has("`poll: 0`");
    out.assert_stderr_has("zero.yml:4");
}
