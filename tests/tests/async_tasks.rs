//! `async`: a job the shim keeps. With `poll` the controller waits, showing `ASYNC POLL`
//! lines, a task still running after `async` seconds fails ("Timeout exceeded"), what
//! the module wrote to stderr is the result's `stderr`, check mode runs it in check
//! mode, and actions that cannot run in the background are refused as ansible-core
//! refuses them — compared with ansible-playbook; `poll: 0` starts a job asked after
//! with `async_status`.

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
    - name: stderr
      shell: echo out; echo err >&2
      async: 10
      poll: 1
      register: e
    - name: both
      debug: {msg: "{{ e.stdout }} {{ e.stderr }} {{ e.keys() | sort | join(' ') }}"}
    - name: checked
      command: echo hi
      async: 10
      poll: 1
      check_mode: true
      register: c
    - name: check result
      debug: {msg: "{{ c.skipped }} {{ c.msg }}"}
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
    out.assert_stdout_has("\"msg\": \"Timeout exceeded\"");
    out.assert_stdout_has("This action (debug) does not support async.");
    out.assert_stdout_has("\"s.stdout\": \"done\"");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.run();
        assert_eq!(theirs.code, 0, "{theirs}");
        out.assert_same_recap_as(&theirs);
        for task in [
            "long",
            "show",
            "too long",
            "not for debug",
            "shown",
            "stderr",
            "both",
            "checked",
            "check result",
        ] {
            assert_eq!(
                lines(&theirs, task),
                lines(&out, task),
                "{task}:\n{theirs}\n{out}"
            );
        }
    }
}

/// Fire and forget (`poll: 0`) of a sandball component (`command`) and of a legacy
/// module (`shell`), then `async_status` until the job has finished, a job stopped at
/// its `async` limit, an unknown job and `mode: cleanup`: the same task lines and
/// recap as ansible-playbook.
const FORGET: &str = r#"
- hosts: all
  gather_facts: false
  vars:
    ansible_async_dir: "{{ work }}/async"
  tasks:
    - name: start
      command: sleep 2
      async: 10
      poll: 0
      register: job
    - name: started
      debug: {msg: "{{ job.started }} {{ job.finished }} {{ job.changed }} {{ job.results_file == ansible_async_dir ~ '/' ~ job.ansible_job_id }}"}
    - name: wait
      async_status: {jid: "{{ job.ansible_job_id }}"}
      register: st
      until: st.finished
      retries: 30
      delay: 1
    - name: finished
      debug: {msg: "{{ st.rc }} {{ st.cmd }} {{ st.finished }} {{ st.changed }}"}
    - name: start legacy
      shell: sleep 1; echo from the background
      async: 10
      poll: 0
      register: sh
    - name: wait legacy
      async_status: {jid: "{{ sh.ansible_job_id }}"}
      register: shs
      until: shs.finished
      retries: 30
      delay: 1
    - name: legacy output
      debug: {var: shs.stdout}
    - name: start noisy
      noisy:
      async: 10
      poll: 0
      register: nz
    - name: wait noisy
      async_status: {jid: "{{ nz.ansible_job_id }}"}
      register: nzs
      until: nzs.finished
      retries: 30
      delay: 1
    - name: noisy stderr
      debug: {msg: "{{ nzs.said }} {{ nzs.stderr }}"}
    - name: stuck
      command: sleep 30
      async: 1
      poll: 0
      register: j2
    - name: later
      pause: {seconds: 4}
    - name: timed out
      async_status: {jid: "{{ j2.ansible_job_id }}"}
      register: st3
      ignore_errors: true
    - name: why
      debug: {msg: "{{ st3.msg }} {{ st3.finished }}"}
    - name: unknown
      async_status: {jid: "j12345.678"}
      register: u
      ignore_errors: true
    - name: unknown msg
      debug: {msg: "{{ u.msg }}"}
    - name: cleanup
      async_status: {jid: "{{ job.ansible_job_id }}", mode: cleanup}
      register: c
    - name: erased
      debug: {msg: "{{ c.erased == job.results_file }} {{ c.finished }} {{ c.started }}"}
"#;

#[test]
fn fire_and_forget_jobs_are_asked_after_with_async_status_as_in_ansible() {
    let sb = Sandbox::new();
    let python = ansible_python();
    sb.inventory_with_python(&["alpha"]);
    let pb = sb.write("forget.yml", FORGET);
    // A module that writes to stderr besides its result: the job's result has it.
    sb.write(
        "library/noisy.py",
        "#!/usr/bin/python\nimport sys\nfrom ansible.module_utils.basic import AnsibleModule\nm = AnsibleModule(argument_spec={})\nprint('noise on stderr', file=sys.stderr)\nm.exit_json(changed=False, said='hi')\n",
    );
    let work = sb.dir("work");
    let out = sb
        .play(&pb, &work, &[])
        .env("SANDBALL_ANSIBLE_PYTHON", &python)
        .run();
    out.assert_no_panic().assert_code(0);
    out.assert_stdout_has("\"msg\": \"True False True True\"");
    out.assert_stdout_has("\"msg\": \"0 ['sleep', '2'] True True\"");
    out.assert_stdout_has("\"shs.stdout\": \"from the background\"");
    out.assert_stdout_has("\"msg\": \"hi noise on stderr\\n\"");
    out.assert_stdout_has("\"msg\": \"Timeout exceeded True\"");
    out.assert_stdout_has("\"msg\": \"could not find job\"");
    out.assert_stdout_has("\"msg\": \"True False False\"");
    assert!(
        !work.join("async").join("j12345.678").exists(),
        "an unknown job leaves no file"
    );
    if let Some(theirs) = sb.ansible_play(&pb, &sb.dir("theirs"), &[]) {
        let theirs = theirs.run();
        assert_eq!(theirs.code, 0, "{theirs}");
        out.assert_same_recap_as(&theirs);
        for task in [
            "start",
            "started",
            "finished",
            "start legacy",
            "legacy output",
            "noisy stderr",
            "stuck",
            "why",
            "unknown msg",
            "cleanup",
            "erased",
        ] {
            assert_eq!(
                lines(&theirs, task),
                lines(&out, task),
                "{task}:\n{theirs}\n{out}"
            );
        }
    }
}

/// A background job outlives the run that started it (the shim keeps it, not the
/// controller), and a job id that would leave the async directory is refused.
#[test]
fn a_background_job_outlives_its_run() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    let work = sb.dir("work");
    let marker = work.join("marker");
    let pb = sb.write(
        "outlive.yml",
        &format!(
            r#"
- hosts: all
  gather_facts: false
  vars:
    ansible_async_dir: "{{{{ work }}}}/async"
  tasks:
    - command: sh -c "sleep 2; touch {marker}"
      async: 30
      poll: 0
    - name: escape
      async_status: {{jid: "../../etc/passwd"}}
      ignore_errors: true
"#,
            marker = marker.display()
        ),
    );
    let out = sb.play(&pb, &work, &[]).run();
    out.assert_no_panic().assert_code(0);
    out.assert_stdout_has(r#"invalid job id \"../../etc/passwd\": a job id has only letters"#);
    assert!(!marker.exists(), "the run waited for the job:\n{out}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !marker.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(
        marker.exists(),
        "the job did not finish after the run:\n{out}"
    );
}
