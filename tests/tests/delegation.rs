//! `delegate_to`, `local_action` and `delegate_facts`: the module runs on the other
//! host (reached with that host's own settings) while the task keeps its host's
//! variables, results and facts; the output says where it ran. Compared with
//! ansible-playbook.

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
            "alpha ansible_connection=local ansible_python_interpreter={p}\nbeta ansible_connection=local ansible_python_interpreter={p}\n",
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
    assert_eq!(
        status("on beta, as alpha"),
        vec!["changed: [alpha -> beta]"],
        "{out}"
    );
    out.assert_stdout_has("\"msg\": \"alpha alpha alpha beta\"");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.run();
        assert_eq!(theirs.code, 0, "{theirs}");
        out.assert_same_recap_as(&theirs);
        for task in [
            "on the controller",
            "the local action",
            "on beta, as alpha",
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
