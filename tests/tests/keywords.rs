//! Task keywords and exit codes: failures (exit 2, the other hosts go on),
//! `ignore_errors`, `when`, loops, `register` with `is changed`, `failed_when`,
//! `changed_when` and `no_log`, compared with ansible-playbook where it runs.

use sandball_e2e::{HostRecap, Sandbox};

const FAILURES: &str = r#"
- name: failures
  hosts: all
  gather_facts: false
  tasks:
    - name: alpha fails
      fail:
        msg: alpha is broken
      when: inventory_hostname == 'alpha'

    - name: the others go on
      ping:
"#;

#[test]
fn a_failed_task_stops_its_host_only_and_exits_2() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha", "beta"]);
    let pb = sb.write("play.yml", FAILURES);
    let work = sb.dir("work");
    let out = sb.play(&pb, &work, &[]).run();
    out.assert_no_panic().assert_code(2);
    assert_eq!(
        out.result_lines("alpha fails"),
        vec![
            "fatal: [alpha]: FAILED! => {\"changed\": false, \"msg\": \"alpha is broken\"}",
            "skipping: [beta]"
        ],
        "{out}"
    );
    assert_eq!(
        out.task_lines("the others go on"),
        vec!["ok: [beta]"],
        "{out}"
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
            ok: 1,
            skipped: 1,
            ..HostRecap::default()
        },
        "{out}"
    );
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.run();
        assert_eq!(theirs.code, 2, "{theirs}");
        out.assert_same_recap_as(&theirs);
    }
}

#[test]
fn a_green_run_exits_0() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    let pb = sb.write(
        "play.yml",
        "- hosts: all\n  gather_facts: false\n  tasks:\n    - ping:\n",
    );
    let work = sb.dir("work");
    let out = sb.play(&pb, &work, &[]).run();
    out.assert_no_panic().assert_code(0);
    assert_eq!(
        out.host("localhost"),
        HostRecap {
            ok: 1,
            ..HostRecap::default()
        }
    );
    assert_eq!(out.task_lines("ping"), vec!["ok: [localhost]"]);
}

const KEYWORDS: &str = r#"
- name: keywords
  hosts: all
  gather_facts: false
  tasks:
    - name: a failure that is ignored
      fail:
        msg: expected failure
      ignore_errors: true

    - name: a task whose condition is false
      ping:
      when: 1 == 2

    - name: a loop
      copy:
        content: "{{ item }}\n"
        dest: "{{ work }}/{{ item }}.txt"
      loop: [a, b, c]
      register: looped

    - name: react to a change
      debug:
        msg: "the loop changed {{ looped.results | selectattr('changed') | list | length }} files"
      when: looped is changed

    - name: never changed
      command: /bin/true
      changed_when: false

    - name: a non-zero exit that is fine
      command: /bin/false
      register: f
      failed_when: f.rc != 1

    - name: a success that counts as a failure
      command: /bin/echo boom
      register: b
      failed_when: "'boom' in b.stdout"
      ignore_errors: true

    - name: a secret message
      debug:
        msg: "the password is hunter2"
      no_log: true

    - name: a secret file
      copy:
        content: "hunter2\n"
        dest: "{{ work }}/secret.txt"
      no_log: true

    - name: a secret failure
      fail:
        msg: "hunter2 is wrong"
      no_log: true
      ignore_errors: true

    - name: a secret loop
      debug:
        msg: "{{ item }}"
      loop: [hunter2, other]
      no_log: true
"#;

const CENSORED: &str = "\"censored\": \"the output has been hidden due to the fact that 'no_log: true' was specified for this result\"";

#[test]
fn keywords_behave_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    let pb = sb.write("play.yml", KEYWORDS);
    let work = sb.dir("work");

    let first = sb.play(&pb, &work, &[]).run();
    first.assert_no_panic().assert_code(0);
    assert_eq!(
        first.host("localhost"),
        HostRecap {
            ok: 10,
            changed: 4,
            skipped: 1,
            ignored: 3,
            ..HostRecap::default()
        },
        "{first}"
    );
    assert_eq!(
        first.result_lines("a failure that is ignored"),
        vec![
            "fatal: [localhost]: FAILED! => {\"changed\": false, \"msg\": \"expected failure\"}",
            "...ignoring"
        ],
        "{first}"
    );
    assert_eq!(
        first.task_lines("a task whose condition is false"),
        vec!["skipping: [localhost]"]
    );
    assert_eq!(
        first.task_lines("a loop"),
        vec![
            "changed: [localhost] => (item=a)",
            "changed: [localhost] => (item=b)",
            "changed: [localhost] => (item=c)"
        ],
        "{first}"
    );
    for item in ["a", "b", "c"] {
        assert_eq!(
            std::fs::read_to_string(work.join(format!("{item}.txt"))).unwrap(),
            format!("{item}\n")
        );
    }
    first.assert_stdout_has("\"msg\": \"the loop changed 3 files\"");
    assert_eq!(first.task_lines("never changed"), vec!["ok: [localhost]"]);
    assert_eq!(
        first.task_lines("a non-zero exit that is fine"),
        vec!["changed: [localhost]"]
    );
    let boom = first.result_lines("a success that counts as a failure");
    assert!(
        boom[0].starts_with("fatal: [localhost]: FAILED! => {")
            && boom[0].contains("\"failed_when_result\": true"),
        "{first}"
    );
    assert_eq!(boom.last(), Some(&"...ignoring"));
    assert_eq!(
        std::fs::read_to_string(work.join("secret.txt")).unwrap(),
        "hunter2\n"
    );

    // Second run: the loop changes nothing, so the reaction is skipped.
    let second = sb.play(&pb, &work, &["-v"]).run();
    second.assert_no_panic().assert_code(0);
    assert_eq!(
        second.host("localhost"),
        HostRecap {
            ok: 9,
            changed: 2,
            skipped: 2,
            ignored: 3,
            ..HostRecap::default()
        },
        "{second}"
    );
    assert_eq!(
        second.task_lines("react to a change"),
        vec!["skipping: [localhost] => {\"false_condition\": \"looped is changed\"}"],
        "{second}"
    );

    // no_log hides arguments and results, even failures, at any verbosity.
    assert_eq!(
        second.task_lines("a secret message"),
        vec![format!("ok: [localhost] => {{{CENSORED}}}")],
        "{second}"
    );
    let failure = second.result_lines("a secret failure");
    assert!(
        failure[0].starts_with("fatal: [localhost]: FAILED! => {") && failure[0].contains(CENSORED),
        "{second}"
    );
    // Its error line says how it failed, without the message (ansible-core 2.19 shows
    // the message there).
    assert_eq!(
        second.task_lines("a secret failure")[0],
        "[ERROR]: Task failed: Action failed.",
        "{second}"
    );
    assert!(
        second
            .task_lines("a secret loop")
            .iter()
            .all(|l| l.contains("(item=(censored due to no_log))")),
        "{second}"
    );
    let loud = sb.play(&pb, &work, &["-vvv"]).run();
    loud.assert_no_panic().assert_code(0);
    for run in [&first, &second, &loud] {
        assert!(
            !run.stdout.contains("hunter2") && !run.stderr.contains("hunter2"),
            "no_log leaked:\n{run}"
        );
    }

    let reference = sb.dir("ansible-work");
    if let Some(theirs) = sb.ansible_play(&pb, &reference, &[]) {
        first.assert_same_recap_as(&theirs.run());
        let theirs = sb
            .ansible_play(&pb, &reference, &["-v"])
            .expect("ansible ran once already")
            .run();
        second.assert_same_recap_as(&theirs);
        second.assert_same_task_lines_as(&theirs, &["a secret loop"]);
    }
}

const RETRIES: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: at once
      command: /bin/true
      register: ok_now
      until: ok_now.rc == 0
      retries: 3
      delay: 0

    - name: give up
      command: /bin/false
      register: r
      until: r.rc == 0
      retries: 2
      delay: 0
      ignore_errors: true

    # `failed_when` sees the attempt; its verdict decides the task's status even when
    # the retries run out (the registered result still says failed).
    - name: forgiven
      command: /bin/false
      register: f
      until: f.rc == 0
      retries: 1
      delay: 0
      failed_when: f.attempts > 6
    - name: forgiven items
      command: /bin/false
      register: fi
      until: fi.rc == 0
      retries: 1
      delay: 0
      failed_when: fi.attempts > 6
      loop: [1]
    - name: what they say
      debug: {msg: "{{ f is failed }} {{ f.attempts }} {{ fi is failed }} {{ fi.results[0].attempts }}"}

    # `retries` alone retries until the task succeeds.
    - name: until it succeeds
      shell: "[ -f {{ marker }} ] || (touch {{ marker }} && false)"
      register: s
      retries: 3
      delay: 0
    - name: never succeeds
      fail: {msg: no}
      register: n
      retries: 2
      delay: 0
      ignore_errors: true
    - name: how often they ran
      debug: {msg: "{{ s.attempts }} {{ n.attempts }} {{ n is failed }}"}
"#;

#[test]
fn until_retries_until_the_condition_holds_then_gives_up() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    let pb = sb.write("play.yml", RETRIES);
    let work = sb.dir("work");
    let marker = |who: &str| format!("marker={}", sb.path().join(who).display());
    let out = sb.play(&pb, &work, &["-e", &marker("ours")]).run();
    out.assert_no_panic().assert_code(0);
    out.assert_stdout_has("\"msg\": \"2 2 True\"");
    assert_eq!(
        out.task_lines("at once"),
        vec!["changed: [localhost]"],
        "{out}"
    );
    let give_up = out.result_lines("give up");
    assert_eq!(
        give_up[..2],
        [
            "FAILED - RETRYING: [localhost]: give up (2 retries left).",
            "FAILED - RETRYING: [localhost]: give up (1 retries left).",
        ],
        "{out}"
    );
    assert!(
        give_up[2].starts_with("fatal: [localhost]: FAILED! => {")
            && give_up[2].contains("\"msg\": \"non-zero return code\""),
        "{out}"
    );
    assert_eq!(give_up.last(), Some(&"...ignoring"), "{out}");
    out.assert_stdout_has("\"msg\": \"True 1 True 1\"");
    if let Some(theirs) = sb.ansible_play(&pb, &sb.dir("ansible-work"), &["-e", &marker("theirs")])
    {
        let theirs = theirs.run();
        out.assert_same_recap_as(&theirs);
        // Whole: the error each says before its (not failed) result included.
        out.assert_same_task_lines_as(
            &theirs,
            &[
                "forgiven",
                "forgiven items",
                "what they say",
                "how often they ran",
            ],
        );
    }
}

#[test]
fn a_retried_unnamed_task_of_a_role_is_named_by_its_role_and_action_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    sb.write(
        "roles/patient/tasks/main.yml",
        "- command: \"true\"\n  register: r\n  until: r is failed\n  retries: 1\n  delay: 0\n  ignore_errors: true\n- name: named\n  command: \"true\"\n  register: n\n  until: n is failed\n  retries: 1\n  delay: 0\n  ignore_errors: true\n",
    );
    let pb = sb.write(
        "play.yml",
        "- hosts: all\n  gather_facts: false\n  roles: [patient]\n",
    );
    let work = sb.dir("work");
    let out = sb.play(&pb, &work, &[]).run();
    out.assert_no_panic().assert_code(0);
    let retries = |o: &sandball_e2e::Output| -> Vec<String> {
        o.stdout
            .lines()
            .filter(|l| l.starts_with("FAILED - RETRYING"))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(
        retries(&out),
        vec![
            "FAILED - RETRYING: [localhost]: patient : command (1 retries left).",
            "FAILED - RETRYING: [localhost]: named (1 retries left).",
        ],
        "{out}"
    );
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.run();
        out.assert_same_recap_as(&theirs);
        assert_eq!(retries(&theirs), retries(&out), "{theirs}\n{out}");
    }
}

const WITH_LOOPS: &str = r#"
- hosts: all
  gather_facts: false
  vars:
    users:
      - {name: a, keys: [k1, k2]}
      - {name: b, keys: [k3]}
      - {name: c}
  tasks:
    - {name: seq1, debug: {msg: "{{ item }}"}, with_sequence: start=1 end=5 stride=2 format=host%02d}
    - {name: seq2, debug: {msg: "{{ item }}"}, with_sequence: count=3}
    - {name: seq3, debug: {msg: "{{ item }}"}, with_sequence: "2-4"}
    - {name: seq4, debug: {msg: "{{ item }}"}, with_sequence: start=5 end=1 stride=-2}
    - {name: nested, debug: {msg: "{{ item }}"}, with_nested: [[1, 2], [x, y]]}
    - {name: together, debug: {msg: "{{ item }}"}, with_together: [[1, 2, 3], [x, y]]}
    - {name: sub, debug: {msg: "{{ item.0.name }} {{ item.1 }}"}, with_subelements: ["{{ users }}", keys, {skip_missing: true}]}
"#;

#[test]
fn with_sequence_nested_together_and_subelements_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    let pb = sb.write("play.yml", WITH_LOOPS);
    let work = sb.dir("work");
    let out = sb.play(&pb, &work, &[]).run();
    out.assert_no_panic().assert_code(0);
    assert!(
        out.task_lines("sub")
            .contains(&"ok: [alpha] => (item=[{'name': 'a'}, 'k1']) => {"),
        "{out}"
    );
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.run();
        out.assert_same_recap_as(&theirs);
        out.assert_same_task_lines_as(&theirs, &["seq1", "seq2", "seq3", "seq4", "sub"]);
    }
}

/// Actions named by templates, resolved when the task runs.
const TEMPLATED_ACTIONS: &str = r#"
- hosts: all
  gather_facts: false
  vars:
    namespace: ansible.builtin.
  tasks:
    - action: "{{ prefix }}debug msg=from-extra-vars"
    - action: "{{ namespace }}set_fact fact=set"
    - name: named
      action: "{{ namespace }}debug msg={{ fact }}"
    - action: "{{ prefix }}file path={{ work }}/made state=touch"
    - name: each host its own
      action: "{{ 'debug' if inventory_hostname == 'alpha' else 'set_fact' }} msg=mine"
"#;

#[test]
fn templated_action_names_resolve_when_the_task_runs() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha", "beta"]);
    let pb = sb.write("play.yml", TEMPLATED_ACTIONS);
    let work = sb.dir("work");
    let args = ["-e", "prefix=", "-f", "1"];
    let out = sb.play(&pb, &work, &args).run();
    out.assert_no_panic().assert_code(0);
    assert!(work.join("made").exists(), "{out}");
    let tasks = [
        "{{ prefix }}debug",
        "{{ namespace }}set_fact",
        "named",
        "each host its own",
        "{{ prefix }}file",
    ];
    let theirs_work = sb.dir("theirs");
    if let Some(theirs) = sb.ansible_play(&pb, &theirs_work, &args) {
        let theirs = theirs.run();
        out.assert_same_recap_as(&theirs);
        out.assert_same_task_lines_as(&theirs, &tasks[..4]);
    }
    assert!(
        out.task_lines("named")
            .iter()
            .any(|l| l.contains("\"msg\": \"set\"")),
        "{out}"
    );
}

#[test]
fn a_boolean_keyword_that_is_not_one_is_named_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    let pb = sb.write(
        "play.yml",
        "- hosts: all\n  gather_facts: false\n  tasks:\n    - name: bad\n      debug: {msg: x}\n      diff: yes.\n      ignore_errors: true\n      register: bad\n    - name: why\n      debug: {msg: \"{{ bad.msg is contains(\\\"Error processing keyword 'diff': The value 'yes.' could not be converted to 'bool'\\\") }}\"}\n",
    );
    let work = sb.dir("work");
    let ours = sb.play(&pb, &work, &[]).run();
    ours.assert_no_panic().assert_code(0);
    ours.assert_stdout_has("\"msg\": true");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.run();
        theirs.assert_stdout_has("\"msg\": true");
        ours.assert_same_recap_as(&theirs);
    }
}

#[test]
fn a_plays_user_is_its_remote_user_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    let work = sb.dir("work");
    let me = std::env::var("USER").unwrap_or_else(|_| "root".into());
    let alone = sb.write(
        "alone.yml",
        &format!("- hosts: all\n  gather_facts: false\n  user: {me}\n  tasks:\n    - name: runs\n      command: /bin/true\n"),
    );
    let both = sb.write(
        "both.yml",
        &format!("- hosts: all\n  gather_facts: false\n  user: {me}\n  remote_user: {me}\n  tasks:\n    - command: /bin/true\n"),
    );
    let ours = sb.play(&alone, &work, &[]).run();
    ours.assert_no_panic().assert_code(0);
    let refused = sb.play(&both, &work, &[]).run();
    refused.assert_no_panic().assert_code(4);
    let said = "both 'user' and 'remote_user' are set for this play.";
    assert!(refused.stderr.contains(said), "{refused}");
    if let Some(theirs) = sb.ansible_play(&alone, &work, &[]) {
        ours.assert_same_recap_as(&theirs.run());
    }
    if let Some(theirs) = sb.ansible_play(&both, &work, &[]) {
        let theirs = theirs.run();
        assert_eq!(theirs.code, 4, "{theirs}");
        assert!(theirs.stderr.contains(said), "{theirs}");
    }
}

#[test]
fn a_plays_name_is_templated_with_its_vars_and_the_extra_vars_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    let work = sb.dir("work");
    let named = sb.write(
        "named.yml",
        "- name: \"deploy {{ app }} {{ stage | default('dev') }} {{ inventory_hostname | default('none') }}\"\n  hosts: all\n  gather_facts: false\n  vars: {app: web}\n  tasks:\n    - debug: {msg: \"{{ ansible_play_name }}\"}\n\
         - hosts: \"{{ target }}\"\n  gather_facts: false\n  tasks:\n    - debug: {msg: \"{{ ansible_play_name }}\"}\n\
         - name: \"broken {{ nowhere }}\"\n  hosts: all\n  gather_facts: false\n  tasks:\n    - debug: {msg: never}\n",
    );
    let args = ["-e", "stage=prod", "-e", "target=alpha"];
    let ours = sb.play(&named, &work, &args).run();
    ours.assert_no_panic().assert_code(4);
    ours.assert_stdout_has("PLAY [deploy web prod none] ***");
    ours.assert_stdout_has("\"msg\": \"alpha\"");
    ours.assert_stderr_has("Error processing keyword 'name': 'nowhere' is undefined");
    if let Some(theirs) = sb.ansible_play(&named, &work, &args) {
        let theirs = theirs.run();
        theirs
            .assert_code(4)
            .assert_stderr_has("Error processing keyword 'name': 'nowhere' is undefined");
        ours.assert_same_stdout_as(&theirs);
    }
}
