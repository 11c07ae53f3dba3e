//! Keywords of plays and blocks reach every task beneath them, with Ansible's
//! inheritance (the nearest level wins; `when` and `tags` add up; `environment`
//! merges), and the keywords sandball does not run yet are refused before anything
//! runs, naming the keyword and its line. Compared with ansible-playbook where it runs.

use sandball_e2e::binaries::ansible_python;
use sandball_e2e::{HostRecap, Output, Sandbox};
use std::net::TcpListener;
use std::time::Duration;

const SECRET: &str = "s3cr3t-inherited-0713";

/// The recaps must agree with ansible-playbook's, when it is installed.
fn same_as_ansible(
    sb: &Sandbox,
    ours: &Output,
    pb: &std::path::Path,
    work: &std::path::Path,
    extra: &[&str],
) {
    if let Some(theirs) = sb.ansible_play(pb, work, extra) {
        let theirs = theirs.run();
        assert_eq!(
            theirs.code, ours.code,
            "exit codes differ:\n{theirs}\n{ours}"
        );
        ours.assert_same_recap_as(&theirs);
    }
}

const PLAY_KEYWORDS: &str = r#"
- name: play keywords
  hosts: all
  gather_facts: false
  check_mode: true
  diff: true
  no_log: true
  ignore_errors: true
  strategy: linear
  debugger: never
  collections: [ansible.builtin]
  vars:
    secret: s3cr3t-inherited-0713
  tasks:
    - name: touch in check mode
      file: {path: "{{ work }}/touched", state: touch}

    - name: write in check mode
      copy: {content: "new\n", dest: "{{ work }}/written"}

    - name: run in check mode
      command: touch {{ work }}/ran

    - name: a secret
      debug: {msg: "the secret is {{ secret }}"}

    - name: a secret failure
      fail: {msg: "{{ secret }} is wrong"}

    - name: the play goes on
      ping:
"#;

#[test]
fn play_keywords_reach_every_task_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha", "beta"]);
    let work = sb.dir("work");
    let pb = sb.write("play.yml", PLAY_KEYWORDS);
    let out = sb.play(&pb, &work, &[]).run();
    out.assert_no_panic().assert_code(0);
    for marker in ["touched", "written", "ran"] {
        assert!(
            !work.join(marker).exists(),
            "check_mode: true on the play did not hold for {marker}:\n{out}"
        );
    }
    assert!(
        !out.stdout.contains(SECRET) && !out.stderr.contains(SECRET),
        "no_log on the play leaked:\n{out}"
    );
    for host in ["alpha", "beta"] {
        assert_eq!(
            out.host(host),
            HostRecap {
                ok: 5,
                changed: 2,
                skipped: 1,
                ignored: 1,
                ..HostRecap::default()
            },
            "{out}"
        );
    }
    assert!(
        out.task_lines("a secret failure")
            .iter()
            .any(|l| l.contains("censored")),
        "{out}"
    );
    same_as_ansible(&sb, &out, &pb, &work, &[]);
}

const BLOCK_KEYWORDS: &str = r#"
- name: block keywords
  hosts: all
  gather_facts: false
  vars:
    secret: s3cr3t-inherited-0713
  pre_tasks:
    - name: before
      action: ping
  post_tasks:
    - name: after
      action: debug
      args: {msg: done}
  tasks:
    - name: a block of secrets
      block:
        - name: touched for real
          file: {path: "{{ work }}/real-{{ inventory_hostname }}", state: touch}
        - name: secret in a block
          debug: {msg: "{{ secret }}"}
        - name: failure in a block
          fail: {msg: "{{ secret }}"}
        - name: after the failure
          ping:
      notify: block handler
      no_log: true
      ignore_errors: true
      when: inventory_hostname == 'alpha'

    - name: a dry block
      block:
        - name: not touched
          file: {path: "{{ work }}/dry", state: touch}
        - name: the task's own check_mode wins
          file: {path: "{{ work }}/wet", state: touch}
          check_mode: false
      check_mode: true

    - name: items
      debug: {msg: "{{ item }}"}
      with_items: [one, two]
      loop_control: {label: "{{ item }}"}

  handlers:
    - name: the handler
      debug: {msg: handled}
      listen: block handler
"#;

#[test]
fn block_keywords_reach_every_task_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha", "beta"]);
    let work = sb.dir("work");
    let pb = sb.write("play.yml", BLOCK_KEYWORDS);
    let out = sb.play(&pb, &work, &[]).run();
    out.assert_no_panic().assert_code(0);
    assert!(work.join("real-alpha").exists(), "{out}");
    assert!(
        !work.join("real-beta").exists(),
        "the block's when did not hold:\n{out}"
    );
    assert!(
        !work.join("dry").exists(),
        "the block's check_mode did not hold:\n{out}"
    );
    assert!(
        work.join("wet").exists(),
        "the task's check_mode did not win:\n{out}"
    );
    assert!(
        !out.stdout.contains(SECRET),
        "no_log on the block leaked:\n{out}"
    );
    assert!(
        out.stdout.contains("RUNNING HANDLER [the handler] ")
            && out
                .stdout
                .contains("ok: [alpha] => {\n    \"msg\": \"handled\"\n}")
            && !out
                .stdout
                .contains("ok: [beta] => {\n    \"msg\": \"handled\""),
        "the block's notify did not reach the handler (for alpha only):\n{out}"
    );
    same_as_ansible(&sb, &out, &pb, &work, &[]);
}

const TAGS: &str = r#"
- name: tags
  hosts: all
  gather_facts: false
  tags: [p]
  tasks:
    - name: untagged task
      ping:
    - name: in block b
      block:
        - name: block task
          ping:
        - name: block task t2
          ping:
          tags: [t2]
      tags: [b]
    - name: tagged t1
      ping:
      tags: t1
    - name: always
      ping:
      tags: [always]
    - name: never
      ping:
      tags: [never, n]
"#;

/// The tasks a run reported on (their TASK banners), in order.
fn tasks_run(out: &Output) -> Vec<String> {
    out.stdout
        .lines()
        .filter_map(|l| l.strip_prefix("TASK ["))
        .filter_map(|l| l.split_once(']').map(|(name, _)| name.to_string()))
        .collect()
}

#[test]
fn tags_of_plays_blocks_and_tasks_add_up_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    let work = sb.dir("work");
    let pb = sb.write("play.yml", TAGS);
    let cases: [(&[&str], &[&str]); 5] = [
        (
            &[],
            &[
                "untagged task",
                "block task",
                "block task t2",
                "tagged t1",
                "always",
            ],
        ),
        (&["-t", "b"], &["block task", "block task t2", "always"]),
        (
            &["-t", "p", "--skip-tags", "t2"],
            &[
                "untagged task",
                "block task",
                "tagged t1",
                "always",
                "never",
            ],
        ),
        (&["-t", "n"], &["always", "never"]),
        (&["--skip-tags", "always,p"], &[]),
    ];
    for (args, expected) in cases {
        let out = sb.play(&pb, &work, args).run();
        out.assert_no_panic().assert_code(0);
        assert_eq!(tasks_run(&out), expected.to_vec(), "{args:?}:\n{out}");
        if let Some(theirs) = sb.ansible_play(&pb, &work, args) {
            let theirs = theirs.run();
            assert_eq!(
                tasks_run(&theirs),
                expected.to_vec(),
                "ansible-playbook {args:?}:\n{theirs}"
            );
        }
    }
}

/// A loopback port nothing listens on.
fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let port = listener.local_addr().expect("its address").port();
    drop(listener);
    port
}

#[test]
fn ignore_unreachable_keeps_the_host_as_in_ansible() {
    let sb = Sandbox::new();
    let port = closed_port();
    sb.write(
        "inventory.ini",
        &format!(
            "[nodes]\nalpha ansible_connection=local\ngone ansible_host=127.0.0.1 ansible_port={port} ansible_connection=ssh ansible_host_key_checking=false\n"
        ),
    );
    let work = sb.dir("work");
    let pb = sb.write(
        "play.yml",
        r#"
- name: kept
  hosts: all
  gather_facts: false
  ignore_unreachable: true
  tasks:
    - name: reach out
      ping:
    - name: still here
      debug: {msg: "{{ inventory_hostname }} goes on"}
- name: not kept
  hosts: all
  gather_facts: false
  tasks:
    - name: reach out again
      ping:
    - name: only alpha
      debug: {msg: "{{ inventory_hostname }} goes on"}
"#,
    );
    let out = sb.play(&pb, &work, &[]).run();
    out.assert_no_panic().assert_code(4);
    assert!(
        out.task_lines("reach out").contains(&"...ignoring"),
        "{out}"
    );
    assert!(
        out.task_lines("still here")
            .iter()
            .any(|l| l.starts_with("ok: [gone]")),
        "{out}"
    );
    assert!(
        !out.task_lines("only alpha")
            .iter()
            .any(|l| l.contains("gone")),
        "{out}"
    );
    assert_eq!(
        out.host("gone"),
        HostRecap {
            ok: 2,
            unreachable: 1,
            ignored: 1,
            ..HostRecap::default()
        },
        "{out}"
    );
    same_as_ansible(&sb, &out, &pb, &work, &[]);
}

#[test]
fn any_errors_fatal_throttle_and_timeout_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha", "beta", "gamma"]);
    let work = sb.dir("work");
    let pb = sb.write(
        "play.yml",
        r#"
- name: limits
  hosts: all
  gather_facts: false
  tasks:
    - name: one at a time
      command: sleep 1
      throttle: 1
    - name: too slow
      command: sleep 30
      timeout: 1
      ignore_errors: true
    - name: out of bounds
      command: sleep 1
      timeout: "{{ -1 if inventory_hostname == 'alpha' else 100000001 }}"
      ignore_errors: true
    - name: one host fails
      fail: {msg: broken}
      when: inventory_hostname == 'beta'
      any_errors_fatal: true
    - name: nobody gets here
      ping:
"#,
    );
    let out = sb
        .play(&pb, &work, &[])
        .limit(Duration::from_secs(120))
        .run();
    out.assert_no_panic().assert_code(2);
    assert!(
        out.elapsed >= Duration::from_secs(3),
        "three one-second commands under throttle: 1 took {:?}:\n{out}",
        out.elapsed
    );
    // The command that timed out is not waited for.
    assert!(
        out.elapsed < Duration::from_secs(25),
        "a timed-out command was waited for: {:?}\n{out}",
        out.elapsed
    );
    let slow = out.task_lines("too slow");
    assert!(
        slow.iter()
            .any(|l| l.contains("Timed out after 1 second(s).")),
        "{out}"
    );
    let bounds = out.task_lines("out of bounds");
    for n in ["-1", "100000001"] {
        let said = format!("Timeout {n} is invalid, it must be between 0 and 100000000.");
        assert!(bounds.iter().any(|l| l.contains(&said)), "{out}");
    }
    assert!(!out.stdout.contains("TASK [nobody gets here]"), "{out}");
    same_as_ansible(&sb, &out, &pb, &work, &[]);
}

#[test]
fn throttle_holds_back_hosts_under_the_free_strategy() {
    // Each host runs on its own under `free`; a throttled task still runs on no more
    // hosts at once than its `throttle`. Each run records how many were running.
    let sb = Sandbox::new();
    sb.inventory(&["alpha", "beta", "gamma", "delta"]);
    let work = sb.dir("work");
    let pb = sb.write(
        "play.yml",
        r#"
- hosts: all
  gather_facts: false
  strategy: free
  tasks:
    - name: not throttled
      shell: |
        mkdir -p {{ work }}/{{ dir }}; touch {{ work }}/{{ dir }}/{{ inventory_hostname }}
        ls {{ work }}/{{ dir }} | wc -l >> {{ work }}/{{ dir }}.seen; sleep 1
        rm {{ work }}/{{ dir }}/{{ inventory_hostname }}
      vars: {dir: free}
    - name: throttled
      shell: |
        mkdir -p {{ work }}/{{ dir }}; touch {{ work }}/{{ dir }}/{{ inventory_hostname }}
        ls {{ work }}/{{ dir }} | wc -l >> {{ work }}/{{ dir }}.seen; sleep 1
        rm {{ work }}/{{ dir }}/{{ inventory_hostname }}
      vars: {dir: throttled}
      throttle: 2
"#,
    );
    let out = sb.play(&pb, &work, &[]).run();
    out.assert_no_panic().assert_code(0);
    let most = |name: &str| -> u32 {
        let seen = std::fs::read_to_string(work.join(name)).expect("counts");
        seen.lines()
            .map(|l| l.trim().parse::<u32>().expect("a count"))
            .max()
            .expect("runs")
    };
    // Without it the hosts do overlap (so the second count means something).
    assert!(most("free.seen") > 2, "{out}");
    assert!(most("throttled.seen") <= 2, "{out}");
}

#[test]
fn order_sorts_the_hosts_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["charlie", "alpha", "bravo"]);
    let work = sb.dir("work");
    // Plain, templated from the play's vars, and from the extra vars over them.
    for (order, extra, expected) in [
        ("sorted", None, ["alpha", "bravo", "charlie"]),
        ("'{{ wanted }}'", None, ["charlie", "bravo", "alpha"]),
        (
            "'{{ wanted }}'",
            Some("wanted=reverse_inventory"),
            ["bravo", "alpha", "charlie"],
        ),
        ("inventory", None, ["charlie", "alpha", "bravo"]),
    ] {
        let pb = sb.write(
            "play.yml",
            &format!(
                "- hosts: all\n  gather_facts: false\n  vars:\n    wanted: reverse_sorted\n  order: {order}\n  tasks:\n    - name: who\n      ping:\n"
            ),
        );
        let mut args = vec!["-f", "1"];
        args.extend(extra.iter().flat_map(|e| ["-e", *e]));
        let out = sb.play(&pb, &work, &args).run();
        out.assert_no_panic().assert_code(0);
        let seen: Vec<String> = out
            .task_lines("who")
            .iter()
            .map(|l| l.to_string())
            .collect();
        let want: Vec<String> = expected.iter().map(|h| format!("ok: [{h}]")).collect();
        assert_eq!(seen, want, "order: {order}\n{out}");
        if let Some(theirs) = sb.ansible_play(&pb, &work, &args) {
            let theirs = theirs.run();
            let theirs: Vec<String> = theirs
                .task_lines("who")
                .iter()
                .map(|l| l.to_string())
                .collect();
            assert_eq!(theirs, want, "ansible-playbook, order: {order}");
        }
    }
}

#[test]
fn environment_of_every_level_reaches_the_module() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    let work = sb.dir("work");
    let pb = sb.write(
        "play.yml",
        r#"
- name: environment
  hosts: all
  gather_facts: false
  environment: {FROM_PLAY: play, BOTH: play, LATE: "{{ ansible_env.HOME }}"}
  tasks:
    - name: a block
      block:
        - name: show it
          shell: echo "$FROM_PLAY $FROM_BLOCK $BOTH ${GONE-unset} ${LATE-unset}"
          register: shown
          environment: [{BOTH: task, GONE: "{{ omit }}"}, "{{ omit }}"]
        - name: what the module saw
          debug: {msg: "saw {{ shown.stdout }}"}
      environment: [{FROM_BLOCK: block}, not a mapping]
"#,
    );
    let out = sb
        .play(&pb, &work, &[])
        .env("SANDBALL_ANSIBLE_PYTHON", ansible_python())
        .run();
    out.assert_no_panic().assert_code(0);
    out.assert_stdout_has("\"msg\": \"saw play block task unset unset\"");
    assert!(
        out.stderr
            .contains("could not parse environment value, skipping: "),
        "{out}"
    );
    same_as_ansible(&sb, &out, &pb, &work, &[]);

    // The command component passes it to the program it runs, as Ansible's module
    // process would, and expands `$VAR`s in its arguments from it (a variable set
    // nowhere stays as written). It is the playbook's: it may set `PATH` (which then
    // finds the program) and the variables a module may never set for its programs.
    let bin = work.join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let tool = bin.join("only-in-task-path");
    std::fs::write(&tool, "#!/bin/sh\necho \"tool $JAVA_HOME $*\"\n").expect("tool");
    std::fs::set_permissions(&tool, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    let component = sb.write(
        "component.yml",
        r#"
- hosts: all
  gather_facts: false
  environment: {FROM_PLAY: play, BOTH: play}
  tasks:
    - name: run env
      command: /usr/bin/env
      environment: {BOTH: task}
      register: env
    - name: what the program saw
      debug: {msg: "{{ env.stdout_lines | select('match', '^(FROM_PLAY|BOTH)=') | sort }}"}
    - name: arguments expanded
      command: echo $FROM_PLAY ${BOTH} $SANDBALL_SET_NOWHERE x$FROM_PLAY/y
      register: expanded
    - name: arguments as written
      command:
        argv: [echo, $FROM_PLAY]
        expand_argument_vars: false
      register: written
    - name: a PATH of the playbook's
      command: only-in-task-path $JAVA_HOME
      environment:
        PATH: "{{ work }}/bin:/usr/bin:/bin"
        JAVA_HOME: /opt/java
      register: tool
    - name: what they printed
      debug: {msg: "{{ [expanded.stdout, written.stdout, tool.stdout] }}"}
"#,
    );
    let out = sb.play(&component, &work, &[]).run();
    out.assert_no_panic().assert_code(0);
    out.assert_stdout_has("\"BOTH=task\",");
    out.assert_stdout_has("\"FROM_PLAY=play\"");
    out.assert_stdout_has("\"play play $SANDBALL_SET_NOWHERE xplay/y\",");
    out.assert_stdout_has("\"$FROM_PLAY\",");
    out.assert_stdout_has("\"tool /opt/java /opt/java\"");
    same_as_ansible(&sb, &out, &component, &work, &[]);
}

#[test]
fn fact_path_reaches_fact_gathering() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    let work = sb.dir("work");
    std::fs::create_dir_all(work.join("facts.d")).expect("facts.d");
    std::fs::write(work.join("facts.d/custom.fact"), "{\"answer\": 42}\n").expect("a fact file");
    let pb = sb.write(
        "play.yml",
        r#"
- hosts: all
  gather_subset: [min]
  gather_timeout: 30
  fact_path: "{{ work }}/facts.d"
  tasks:
    - name: the local fact
      debug: {msg: "answer {{ ansible_local.custom.answer }}"}
"#,
    );
    let out = sb
        .play(&pb, &work, &[])
        .env("SANDBALL_ANSIBLE_PYTHON", ansible_python())
        .run();
    out.assert_no_panic().assert_code(0);
    out.assert_stdout_has("\"msg\": \"answer 42\"");
    same_as_ansible(&sb, &out, &pb, &work, &[]);
}

#[test]
fn keywords_sandball_does_not_run_yet_are_refused_with_their_line() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    let work = sb.dir("work");
    let marker = work.join("ran-first");
    let pb = sb.write(
        "play.yml",
        &format!(
            "- hosts: all\n  gather_facts: false\n  vars_prompt: [{{name: x, hash_it: sha512_crypt}}]\n  tasks:\n    - file: {{path: {}, state: touch}}\n",
            marker.display()
        ),
    );
    let out = sb.play(&pb, &work, &[]).run();
    out.assert_no_panic();
    assert_ne!(out.code, 0, "{out}");
    assert!(
        out.stderr.contains("`vars_prompt`") && out.stderr.contains("play.yml:1:"),
        "vars_prompt was not refused with its line:\n{out}"
    );
    assert!(!marker.exists(), "a task ran before the refusal:\n{out}");
}

const MODULE_DEFAULTS: &str = r#"
- hosts: all
  gather_facts: false
  module_defaults:
    debug: {msg: from defaults}
    ansible.builtin.file: {state: touch}
  tasks:
    - name: debug default
      debug:
    - name: file default
      file: {path: "{{ work }}/play-level"}
    - name: a block
      block:
        - name: the block's defaults replace the play's
          file: {path: "{{ work }}/block-level"}
          ignore_errors: true
        - name: the task's own arguments win
          file: {path: "{{ work }}/block-level", state: touch}
        - name: an inner block
          module_defaults:
            ping: {data: inner}
          block:
            - name: the outer levels' defaults still hold
              debug:
            - name: an argument set to omit is not filled in
              debug: {msg: "{{ omit }}"}
      module_defaults:
        file: {mode: "0600"}
"#;

#[test]
fn module_defaults_fill_in_arguments_as_in_ansible() {
    use std::os::unix::fs::PermissionsExt;
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    let work = sb.dir("work");
    let pb = sb.write("play.yml", MODULE_DEFAULTS);
    let out = sb.play(&pb, &work, &[]).run();
    out.assert_no_panic().assert_code(0);
    out.assert_stdout_has("\"msg\": \"from defaults\"");
    assert!(work.join("play-level").is_file(), "{out}");
    let mode = std::fs::metadata(work.join("block-level"))
        .map(|m| m.permissions().mode() & 0o777)
        .unwrap_or_default();
    assert_eq!(mode, 0o600, "{out}");
    assert!(
        out.task_lines("the block's defaults replace the play's")
            .iter()
            .any(|l| l.starts_with("fatal: [alpha]")),
        "{out}"
    );
    std::fs::remove_file(work.join("play-level")).ok();
    std::fs::remove_file(work.join("block-level")).ok();
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.run();
        out.assert_same_recap_as(&theirs);
        for task in [
            "the outer levels' defaults still hold",
            "an argument set to omit is not filled in",
        ] {
            assert_eq!(
                theirs.task_lines(task),
                out.task_lines(task),
                "{theirs}\n{out}"
            );
        }
    }
}

/// A collection whose `meta/runtime.yml` groups a module of its own, ansible-core's
/// `ping`, and (through `extend_group`) another group.
const GROUPS_RUNTIME: &str = r#"
action_groups:
  basics:
    - metadata:
        extend_group: [more]
    - echo
    - ansible.builtin.ping
  more:
    - demo.tools.also
"#;

const ECHO_MODULE: &str = r#"#!/usr/bin/python
from ansible.module_utils.basic import AnsibleModule

module = AnsibleModule(argument_spec=dict(x=dict(), data=dict()))
module.exit_json(changed=False, got=module.params)
"#;

const ACTION_GROUPS: &str = r#"
- hosts: all
  gather_facts: false
  module_defaults:
    group/demo.tools.basics: {data: from-group}
  tasks:
    - name: ansible-core's module in the group
      ping:
      register: a
    - name: the collection's module by its full name
      demo.tools.echo: {x: "1"}
      register: b
    - name: a module of the extended group
      demo.tools.also: {x: "2"}
      register: c
    - name: the module's own defaults win over the group's
      ping:
      module_defaults:
        ping: {data: own}
      register: d
    - name: what each got
      debug: {msg: "{{ a.ping }} {{ b.got }} {{ c.got }} {{ d.ping }}"}
"#;

const UNKNOWN_GROUP: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: a group nobody defines
      ping:
      module_defaults:
        group/demo.tools.nope: {data: x}
"#;

#[test]
fn module_defaults_action_groups_apply_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory_with_python(&["alpha"]);
    let coll = "collections/ansible_collections/demo/tools";
    sb.write(&format!("{coll}/meta/runtime.yml"), GROUPS_RUNTIME);
    sb.write(&format!("{coll}/plugins/modules/echo.py"), ECHO_MODULE);
    sb.write(&format!("{coll}/plugins/modules/also.py"), ECHO_MODULE);
    let work = sb.dir("work");
    let pb = sb.write("play.yml", ACTION_GROUPS);
    let out = sb.play_with_core(&pb, &work, &[]).run();
    out.assert_no_panic().assert_code(0);
    out.assert_stdout_has("\"msg\": \"from-group {'data': 'from-group', 'x': '1'} {'data': 'from-group', 'x': '2'} own\"");
    let unknown = sb.write("unknown.yml", UNKNOWN_GROUP);
    let refused = sb.play_with_core(&unknown, &work, &[]).run();
    refused
        .assert_no_panic()
        .assert_code(4)
        .assert_stderr_has("could not resolve the module_defaults group demo.tools.nope");
    if let Some(theirs) = sb.ansible_play(&unknown, &work, &[]) {
        theirs.run().assert_code(4);
    }
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.run();
        out.assert_same_recap_as(&theirs);
        out.assert_same_task_lines_as(&theirs, &["what each got"]);
    }
}
