//! `add_host` and `group_by`: hosts and groups made while the playbook runs (the implicit
//! localhost too), seen by the tasks and plays after them — compared with
//! ansible-playbook.

use sandball_e2e::Sandbox;

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: add
      add_host:
        name: "extra{{ item }}"
        groups: [added, more]
        ansible_connection: local
        flavour: "f{{ item }}"
      loop: [1, 2]
    - name: add again
      add_host: {name: extra1, groups: added}
    - name: group
      group_by: {key: "kind_{{ kind }}", parents: [kinds]}
    - name: groups now
      debug:
        msg: "{{ groups['added'] }} {{ groups['kind_a'] }} {{ groups['kinds'] }}"

- hosts: added
  gather_facts: false
  tasks:
    - name: show
      debug: {msg: "{{ inventory_hostname }} {{ flavour }} {{ group_names }}"}

- hosts: kind_b
  gather_facts: false
  tasks:
    - name: kinds
      debug: {msg: "{{ inventory_hostname }} {{ group_names }}"}
"#;

#[test]
fn hosts_and_groups_made_at_run_time_are_used_as_in_ansible() {
    let sb = Sandbox::new();
    sb.write(
        "inventory.ini",
        "[nodes]\nalpha ansible_connection=local kind=a\nbeta ansible_connection=local kind=b\n",
    );
    let work = sb.dir("work");
    let pb = sb.write("play.yml", PLAY);
    // One fork: the order group_by adds hosts in is then the inventory's in both tools
    // (with several, ansible-playbook's depends on which host finishes first).
    let out = sb.play(&pb, &work, &["-f", "1"]).run();
    out.assert_no_panic().assert_code(0);
    out.assert_stdout_has("\"msg\": \"extra2 f2 ['added', 'more']\"");
    out.assert_stdout_has("\"msg\": \"beta ['kind_b', 'kinds', 'nodes']\"");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &["-f", "1"]) {
        let theirs = theirs.run();
        assert_eq!(theirs.code, 0, "{theirs}");
        for task in ["add", "add again", "group", "groups now", "show", "kinds"] {
            // Sorted by host: hosts finish in any order.
            assert_eq!(
                theirs.task_results(task),
                out.task_results(task),
                "task {task}:\n{theirs}\n{out}"
            );
        }
        out.assert_same_recap_as(&theirs);
    }
}

const IMPLICIT: &str = r#"
- hosts: localhost
  gather_facts: false
  tasks:
    - name: group
      group_by: {key: "test_{{ inventory_hostname }}", parents: [outer]}
    - name: again
      group_by: {key: "test_{{ inventory_hostname }}"}
- hosts: outer
  gather_facts: false
  tasks:
    - name: show
      debug:
        msg: "{{ inventory_hostname }} {{ group_names }} {{ groups['test_localhost'] }} {{ groups['outer'] }} {{ groups['all'] }}"
- hosts: all
  gather_facts: false
  tasks:
    - name: all
      debug: {msg: "{{ inventory_hostname }}"}
"#;

#[test]
fn group_by_puts_the_implicit_localhost_in_groups_but_not_in_all_as_ansible() {
    let sb = Sandbox::new();
    let pb = sb.write("implicit.yml", IMPLICIT);
    let out = sb.sandball(["playbook".as_ref(), pb.as_os_str()]).run();
    out.assert_no_panic().assert_code(0);
    out.assert_stdout_has(
        "\"msg\": \"localhost ['outer', 'test_localhost'] ['localhost'] ['localhost'] []\"",
    );
    if let Some(theirs) = sb.ansible_playbook([pb.as_os_str()]) {
        let theirs = theirs.run();
        assert_eq!(theirs.code, 0, "{theirs}");
        // The play of `all` matches no host: "skipping: no hosts matched".
        out.assert_same_stdout_as(&theirs);
    }
}
