//! `--list-hosts`, `--list-tasks`, `--list-tags`, `--start-at-task`, and the command
//! line's refusals (`-l` matching nothing, `-f 0`) — compared with ansible-playbook.

use sandball_e2e::{Output, Sandbox};

const PLAY: &str = r#"
- name: first play
  hosts: all
  tags: [p]
  tasks:
    - name: one
      debug: {msg: 1}
      tags: [a, b]
    - block:
        - name: two
          debug: {msg: 2}
      rescue:
        - name: saved
          debug: {msg: r}
      tags: blk
    - debug: {msg: 3}
  handlers:
    - name: h
      debug: {msg: h}
- hosts: fast1
  gather_facts: false
  tasks:
    - name: only
      ping:
"#;

fn sorted_lines(out: &Output) -> Vec<String> {
    let mut lines: Vec<String> = out.stdout.lines().map(str::to_string).collect();
    lines.sort();
    lines
}

#[test]
fn listings_and_command_line_refusals_are_ansibles() {
    let sb = Sandbox::new();
    sb.inventory(&["slow", "fast1", "fast2"]);
    let pb = sb.write("play.yml", PLAY);
    let work = sb.dir("work");
    let cases: &[&[&str]] = &[
        &["--list-tasks"],
        &["--list-tags"],
        &["--list-tasks", "--list-tags", "-t", "a,blk"],
        &["--list-tasks", "--skip-tags", "b"],
        &["--list-hosts", "-l", "fast*"],
        &["--list-hosts", "--list-tasks"],
    ];
    for args in cases {
        let ours = sb.play(&pb, &work, args).run();
        ours.assert_no_panic().assert_code(0);
        assert!(ours.stdout.contains("playbook: "), "{ours}");
        if let Some(theirs) = sb.ansible_play(&pb, &work, args) {
            let theirs = theirs.run();
            if args.contains(&"--list-hosts") {
                // ansible-playbook lists a play's hosts in no set order.
                assert_eq!(sorted_lines(&ours), sorted_lines(&theirs), "{args:?}");
            } else {
                assert_eq!(ours.stdout, theirs.stdout, "{args:?}");
            }
        }
    }
    let version = sb.sandball(["playbook", "--version"]).run();
    version.assert_code(0);
    // A subcommand's `--version` is sandball's whole one.
    version.assert_stdout_has(&format!("sandball {} [core ", env!("CARGO_PKG_VERSION")));
    for (args, code) in [(&["-l", "nomatch"][..], 1), (&["-f", "0"][..], 2)] {
        let ours = sb.play(&pb, &work, args).run();
        ours.assert_no_panic().assert_code(code);
        assert!(!ours.stdout.contains("TASK ["), "{ours}");
        if let Some(theirs) = sb.ansible_play(&pb, &work, args) {
            assert_eq!(theirs.run().code, code, "{args:?}");
        }
    }
    for start in ["two", "sa*", "nothing like it"] {
        let args = ["--start-at-task", start];
        let ours = sb.play(&pb, &work, &args).run();
        ours.assert_no_panic().assert_code(0);
        assert!(!ours.stdout.contains("TASK [one]"), "{ours}");
        // A `rescue` task cannot be started at, as in Ansible; fact gathering is
        // skipped with the tasks before the one started at.
        let found = start == "two";
        if !found {
            ours.assert_stderr_has(&format!("No matching task \"{start}\" found"));
        }
        if let Some(theirs) = sb.ansible_play(&pb, &work, &args) {
            let theirs = theirs.run();
            assert_eq!(theirs.code, 0, "{theirs}");
            let tasks = |o: &Output| -> Vec<String> {
                o.stdout
                    .lines()
                    .filter(|l| l.starts_with("TASK ["))
                    .map(str::to_string)
                    .collect()
            };
            assert_eq!(tasks(&ours), tasks(&theirs), "{ours}\n{theirs}");
            if !found {
                theirs.assert_stderr_has(&format!("No matching task \"{start}\" found"));
            } else {
                ours.assert_same_recap_as(&theirs);
            }
        }
    }
}
