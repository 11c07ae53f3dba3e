//! `delegate_to`, `local_action` and `delegate_facts`: the module runs on the other
//! host (reached with that host's own settings) while the task keeps its host's
//! variables, results and facts; the output says where it ran. A task's own host is
//! reached with the connection variables wherever they were set (play or task `vars`,
//! `set_fact`), not only the inventory's. Compared with ansible-playbook.

use sandball_e2e::Sandbox;
use sandball_e2e::binaries::ansible_python;

const FACTS: &str = "#!/usr/bin/python\n# WANT_JSON\nimport json, sys\nargs = json.load(open(sys.argv[1]))\nprint(json.dumps({'changed': False, 'ansible_facts': {'planted_by': args['by']}}))\n";

const PLAY: &str = r#"
- hosts: alpha
  gather_facts: false
  tasks:
    - name: on the controller
      file: {path: "{{ work }}/{{ inventory_hostname }}-here", state: touch}
      delegate_to: localhost
    - name: the local action
      local_action: {module: command, cmd: "echo {{ inventory_hostname }}"}
      register: local
    - name: on beta, as alpha
      command: echo {{ inventory_hostname }}
      delegate_to: beta
      register: remote
    - name: on itself
      command: "true"
      delegate_to: "{{ inventory_hostname }}"
    - name: facts stay with alpha
      facts: {by: alpha}
      delegate_to: beta
    - name: facts go to beta
      facts: {by: beta}
      delegate_to: beta
      delegate_facts: true
    - name: what each knows
      debug:
        msg: "{{ local.stdout }} {{ remote.stdout }} {{ planted_by }} {{ hostvars['beta'].planted_by }}"
"#;

#[test]
fn delegate_to_runs_the_module_elsewhere_as_in_ansible() {
    let sb = Sandbox::new();
    let python = ansible_python();
    sb.write(
        "inventory.ini",
        &format!(
            "alpha ansible_connection=local ansible_python_interpreter={p}\nbeta ansible_connection=local ansible_host=127.0.0.1 ansible_python_interpreter={p}\n",
            p = python.display()
        ),
    );
    sb.write("library/facts.py", FACTS);
    let work = sb.dir("work");
    let pb = sb.write("play.yml", PLAY);
    let out = sb
        .play(&pb, &work, &[])
        .env("SANDBALL_ANSIBLE_PYTHON", &python)
        .run();
    out.assert_no_panic().assert_code(0);
    assert!(work.join("alpha-here").exists(), "{out}");
    let status = |task: &str| {
        out.task_lines(task)
            .into_iter()
            .filter(|l| !l.starts_with("[WARNING]"))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        status("on the controller"),
        vec!["changed: [alpha -> localhost]"],
        "{out}"
    );
    assert_eq!(
        status("the local action"),
        vec!["changed: [alpha -> localhost]"],
        "{out}"
    );
    // The address shows when it is not the name; a task delegated to its own host
    // shows no arrow.
    assert_eq!(
        status("on beta, as alpha"),
        vec!["changed: [alpha -> beta(127.0.0.1)]"],
        "{out}"
    );
    assert_eq!(status("on itself"), vec!["changed: [alpha]"], "{out}");
    out.assert_stdout_has("\"msg\": \"alpha alpha alpha beta\"");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.run();
        assert_eq!(theirs.code, 0, "{theirs}");
        out.assert_same_recap_as(&theirs);
        for task in [
            "on the controller",
            "the local action",
            "on beta, as alpha",
            "on itself",
            "what each knows",
        ] {
            let theirs_lines: Vec<String> = theirs
                .task_lines(task)
                .into_iter()
                .filter(|l| !l.starts_with("[WARNING]"))
                .map(str::to_string)
                .collect();
            assert_eq!(theirs_lines, status(task), "{task}:\n{theirs}\n{out}");
        }
    }
}

#[test]
fn delegated_tasks_and_an_imported_roles_handlers_see_ansible_delegated_vars() {
    let sb = Sandbox::new();
    sb.inventory(&["a", "b"]);
    sb.write(
        "roles/notifier/tasks/main.yml",
        "- command: \"true\"\n  notify: [delegated handler]\n",
    );
    sb.write(
        "roles/notifier/handlers/main.yml",
        "- name: delegated handler\n  assert:\n    that: ansible_delegated_vars is defined\n",
    );
    let pb = sb.write(
        "play.yml",
        r#"- hosts: all
  gather_facts: false
  tasks:
    - assert:
        that:
          - "'localhost' in ansible_delegated_vars"
          - ansible_delegated_vars['localhost']['inventory_hostname'] == inventory_hostname
          - ansible_delegated_vars['localhost']['inventory_hostname_short'] == 'localhost'
          - ansible_delegated_vars['localhost']['ansible_host'] == 'localhost'
          - ansible_delegated_vars['localhost']['ansible_port'] is none
      delegate_to: localhost
    - assert:
        that: ansible_delegated_vars is not defined
    - import_role: {name: notifier}
      delegate_to: localhost
"#,
    );
    let work = sb.dir("work");
    let out = sb.play(&pb, &work, &[]).run();
    out.assert_no_panic().assert_code(0);
    assert_eq!(out.host("a").ok, 4, "{out}");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        out.assert_same_recap_as(&theirs.run());
    }
}

#[test]
fn connection_variables_set_in_the_play_reach_the_host_as_in_ansible() {
    let sb = Sandbox::new();
    let python = ansible_python();
    // Unset, the host would be reached over SSH at 127.0.0.1:1, which refuses.
    sb.write(
        "inventory.ini",
        &format!(
            "far ansible_host=127.0.0.1 ansible_port=1 ansible_python_interpreter={}\n",
            python.display()
        ),
    );
    let pb = sb.write(
        "play.yml",
        r#"- hosts: far
  gather_facts: false
  vars:
    ansible_connection: local
  tasks:
    - name: through the play's variable
      command: echo play
    - name: through the task's, templated
      command: echo task
      vars:
        ansible_connection: "{{ 'ss' ~ 'h' }}"
      ignore_unreachable: true
    - set_fact:
        ansible_connection: ssh
    - name: through set_fact
      command: echo fact
      ignore_unreachable: true
    - name: set_fact over the task's variables
      command: echo back
      vars:
        ansible_connection: local
      ignore_unreachable: true
"#,
    );
    let work = sb.dir("work");
    let out = sb.play(&pb, &work, &[]).run();
    out.assert_no_panic().assert_code(0);
    let status = |o: &sandball_e2e::Output, task: &str| -> Vec<String> {
        o.task_lines(task)
            .into_iter()
            .filter(|l| {
                ["ok: [", "changed: [", "fatal: ["]
                    .iter()
                    .any(|p| l.starts_with(p))
            })
            .map(|l| l.split(" => ").next().unwrap_or(l).to_string())
            .collect()
    };
    assert_eq!(
        status(&out, "through the play's variable"),
        vec!["changed: [far]"],
        "{out}"
    );
    assert_eq!(
        status(&out, "through the task's, templated"),
        vec!["fatal: [far]: UNREACHABLE!"],
        "{out}"
    );
    assert_eq!(
        status(&out, "set_fact over the task's variables"),
        vec!["fatal: [far]: UNREACHABLE!"],
        "{out}"
    );
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.run();
        out.assert_same_recap_as(&theirs);
        for task in [
            "through the play's variable",
            "through the task's, templated",
            "through set_fact",
            "set_fact over the task's variables",
        ] {
            assert_eq!(
                status(&theirs, task),
                status(&out, task),
                "{task}:\n{theirs}\n{out}"
            );
        }
    }
}

#[test]
fn a_delegate_that_cannot_be_reached_is_shown_by_its_name_alone_as_in_ansible() {
    let sb = Sandbox::new();
    let python = ansible_python();
    // `gone` is reached over SSH at 127.0.0.1:1, which refuses.
    sb.write(
        "inventory.ini",
        &format!(
            "alpha ansible_connection=local ansible_python_interpreter={p}\ngone ansible_connection=ssh ansible_host=127.0.0.1 ansible_port=1 ansible_python_interpreter={p}\n",
            p = python.display()
        ),
    );
    let pb = sb.write(
        "play.yml",
        r#"- hosts: alpha
  gather_facts: false
  tasks:
    - name: on gone
      command: "true"
      delegate_to: gone
      ignore_unreachable: true
"#,
    );
    let work = sb.dir("work");
    let out = sb.play(&pb, &work, &[]).run();
    out.assert_no_panic().assert_code(0);
    let status = |o: &sandball_e2e::Output| -> Vec<String> {
        o.task_lines("on gone")
            .into_iter()
            .filter(|l| l.starts_with("fatal: ["))
            .map(|l| l.split(" => ").next().unwrap_or(l).to_string())
            .collect()
    };
    // A reachable delegate shows its address (`[alpha -> gone(127.0.0.1)]`); an
    // unreachable one its name alone.
    assert_eq!(
        status(&out),
        vec!["fatal: [alpha -> gone]: UNREACHABLE!"],
        "{out}"
    );
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.run();
        out.assert_same_recap_as(&theirs);
        assert_eq!(status(&theirs), status(&out), "{theirs}\n{out}");
    }
}
