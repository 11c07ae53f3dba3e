//! Static imports (`import_tasks`, `import_role`, `import_playbook`) whose names are
//! templates of what ansible-core knows when it reads a playbook — `playbook_dir`, the
//! extra vars, the play's `vars` and `vars_files`, the run's magic variables and
//! `groups` — and `playbook_dir` of an imported playbook's plays (its own directory),
//! compared with ansible-playbook.

use sandball_e2e::Sandbox;

const PLAY: &str = r#"
- name: the play
  hosts: all
  gather_facts: false
  vars_files: [vars.yml]
  vars:
    known: "{{ 'pre' if ansible_check_mode is defined and 'nodes' in groups and ansible_version.major == 2 and ansible_play_name == 'the play' else 'unknown' }}"
  tasks:
    - name: by playbook_dir
      import_tasks: "{{ playbook_dir }}/tasks/pre.yml"
    - name: by an extra var
      import_tasks: "tasks/{{ which }}.yml"
    - name: by a vars_files variable
      import_tasks: "tasks/{{ from_file }}.yml"
    - name: by magic variables
      import_tasks: "tasks/{{ known }}.yml"
    - name: a role by an extra var
      import_role:
        name: "{{ role }}"
- import_playbook: "{{ playbook_dir }}/sub/{{ which }}.yml"
"#;

const SUB: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: playbook_dir of an imported playbook
      debug:
        msg: "{{ playbook_dir | basename }}"
    - import_tasks: "{{ playbook_dir }}/../tasks/pre.yml"
"#;

#[test]
fn import_names_see_what_ansible_core_knows_when_it_reads_them() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    sb.write("tasks/pre.yml", "- name: pre\n  debug: {msg: imported}\n");
    sb.write("vars.yml", "from_file: pre\n");
    sb.write(
        "roles/greeter/tasks/main.yml",
        "- name: greet\n  debug: {msg: \"{{ role_name }}\"}\n",
    );
    sb.write("sub/pre.yml", SUB);
    let pb = sb.write("play.yml", PLAY);
    let work = sb.dir("work");
    let extra = ["-e", "which=pre", "-e", "role=greeter"];
    let ours = sb.play(&pb, &work, &extra).run();
    ours.assert_no_panic().assert_code(0);
    ours.assert_stdout_has("\"msg\": \"sub\"");
    assert_eq!(ours.host("alpha").ok, 7, "{ours}");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &extra) {
        let theirs = theirs.run();
        assert_eq!(theirs.code, 0, "{theirs}");
        ours.assert_same_recap_as(&theirs).assert_same_results_as(
            &theirs,
            &[
                "pre",
                "greeter : greet",
                "playbook_dir of an imported playbook",
            ],
        );
    }
}

#[test]
fn a_host_variable_is_not_known_when_the_playbook_is_read() {
    let sb = Sandbox::new();
    sb.write(
        "inventory.ini",
        "[nodes]\nalpha ansible_connection=local which=pre\n",
    );
    sb.write("tasks/pre.yml", "- debug: {msg: imported}\n");
    let pb = sb.write(
        "play.yml",
        "- hosts: all\n  gather_facts: false\n  tasks:\n    - import_tasks: \"tasks/{{ which }}.yml\"\n",
    );
    let work = sb.dir("work");
    let ours = sb.play(&pb, &work, &[]).run();
    ours.assert_no_panic();
    ours.assert_stderr_has("'which' is undefined");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.run();
        theirs.assert_stderr_has("'which' is undefined");
        assert_eq!(ours.code, theirs.code, "{ours}\n{theirs}");
    }
}
