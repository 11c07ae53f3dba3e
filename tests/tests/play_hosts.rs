//! What a play shows when it has no host to run on (its pattern matched none, or every
//! host it matched failed earlier), and how an error found before anything runs says
//! where it is, and the warning an empty inventory gives — compared with
//! ansible-playbook's output.

use sandball_e2e::{Output, Sandbox};

const PLAYS: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: fail one
      fail:
      when: inventory_hostname == 'a'
- hosts: a
  gather_facts: false
  tasks:
    - name: never
      debug: {msg: x}
- hosts: nomatch
  gather_facts: false
  tasks:
    - name: none
      debug: {msg: x}
- hosts: b
  gather_facts: false
  tasks:
    - name: last
      debug: {msg: x}
"#;

#[test]
fn plays_without_hosts_show_what_ansible_shows() {
    let sb = Sandbox::new();
    sb.write(
        "inventory.ini",
        "a ansible_connection=local\nb ansible_connection=local\n",
    );
    let work = sb.dir("work");
    let pb = sb.write("play.yml", PLAYS);
    // One host at a time: the whole output is compared, and with several forks the
    // hosts of a task report in the order they finish.
    let one_fork = ["-f", "1"];
    let out = sb.play(&pb, &work, &one_fork).run();
    out.assert_no_panic().assert_code(2);
    out.assert_stdout_has("PLAY [nomatch] ***");
    out.assert_stdout_has("skipping: no hosts matched");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &one_fork) {
        let theirs = theirs.run();
        assert_eq!(theirs.code, out.code, "{theirs}\n{out}");
        out.assert_same_stdout_as(&theirs);
    }
}

const NO_FILE: &str = "- hosts: all
  gather_facts: false
  tasks:
    - name: fine
      debug: {msg: x}

    - name: an include without a file
      include_tasks:
";

#[test]
fn a_task_refused_before_the_run_is_quoted_where_it_is_written() {
    let sb = Sandbox::new();
    sb.write("inventory.ini", "a ansible_connection=local\n");
    let work = sb.dir("work");
    let pb = sb.write("play.yml", NO_FILE);
    let out = sb.play(&pb, &work, &[]).run();
    out.assert_no_panic();
    let origin = format!(
        "Origin: {}:7:7\n\n5       debug: {{msg: x}}\n6\n7     - name: an include without a file\n        ^ column 7\n",
        pb.display()
    );
    out.assert_stderr_has(&origin);
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.run();
        theirs.assert_stderr_has(&origin);
    }
}

/// An empty inventory is warned about once, before the plays, whatever their patterns
/// (`ANSIBLE_LOCALHOST_WARNING=0` silences it), as ansible-playbook warns about it.
#[test]
fn an_empty_inventory_is_warned_about_once() {
    let sb = Sandbox::new();
    sb.write(
        "play.yml",
        "- hosts: localhost\n  gather_facts: false\n  tasks:\n    - debug: {msg: one}\n- hosts: all\n  gather_facts: false\n  tasks:\n    - debug: {msg: two}\n",
    );
    let warnings = |o: &Output| -> Vec<String> {
        o.stderr
            .lines()
            .filter(|l| l.starts_with("[WARNING]"))
            .map(str::to_string)
            .collect()
    };
    let ours = sb
        .sandball(["playbook", "play.yml"])
        .env("ANSIBLE_LOCALHOST_WARNING", "1")
        .run();
    ours.assert_no_panic().assert_code(0);
    let empty = "provided hosts list is empty, only localhost is available";
    assert_eq!(
        warnings(&ours).iter().filter(|w| w.contains(empty)).count(),
        1,
        "{ours}"
    );
    let quiet = sb
        .sandball(["playbook", "play.yml"])
        .env("ANSIBLE_LOCALHOST_WARNING", "0")
        .run();
    quiet.assert_no_panic().assert_code(0);
    assert!(!quiet.stderr.contains(empty), "{quiet}");
    if let Some(theirs) = sb.ansible_playbook(["play.yml"]) {
        let theirs = theirs.env("ANSIBLE_LOCALHOST_WARNING", "1").run();
        assert_eq!(warnings(&ours), warnings(&theirs), "{theirs}");
    }
}
