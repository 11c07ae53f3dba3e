//! Paths the node itself refuses: below a directory that does not exist, below a
//! regular file, below a directory the user may not open. Each module fails there as
//! ansible-core's does, naming the node's error (`No such file or directory`, `Not a
//! directory`, `Permission denied`) — never the sandbox's own refusal — compared with
//! ansible-playbook on the recap, the errors each task names and what is left on disk.

use sandball_e2e::{Output, Sandbox};
use std::os::unix::fs::PermissionsExt;

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: a file
      copy: {content: "x\n", dest: "{{ work }}/f"}
    - name: slurp missing dir
      slurp: {src: "{{ work }}/nope/x"}
      ignore_errors: true
    - name: slurp below file
      slurp: {src: "{{ work }}/f/x"}
      ignore_errors: true
    - name: stat missing dir
      stat: {path: "{{ work }}/nope/x"}
    - name: stat below file
      stat: {path: "{{ work }}/f/x"}
      ignore_errors: true
    - name: touch missing dir
      file: {path: "{{ work }}/nope/x", state: touch}
      ignore_errors: true
    - name: touch below file
      file: {path: "{{ work }}/f/x", state: touch}
      ignore_errors: true
    - name: link missing dir
      file: {path: "{{ work }}/nope/l", src: "{{ work }}/f", state: link}
      ignore_errors: true
    - name: link below file
      file: {path: "{{ work }}/f/l", src: "{{ work }}/f", state: link}
      ignore_errors: true
    - name: hard link missing dir
      file: {path: "{{ work }}/nope/h", src: "{{ work }}/f", state: hard}
      ignore_errors: true
    - name: touch through a link into a missing dir
      file: {path: "{{ work }}/to-missing", state: touch}
      ignore_errors: true
    - name: touch through a link below a file
      file: {path: "{{ work }}/to-below-file", state: touch}
      ignore_errors: true
    - name: directory below file
      file: {path: "{{ work }}/f/sub/x", state: directory}
      ignore_errors: true
    - name: replace below file
      replace: {path: "{{ work }}/f/x", regexp: a}
      ignore_errors: true
    - name: blockinfile below file
      blockinfile: {path: "{{ work }}/f/x", block: a, create: true}
      ignore_errors: true
    - name: absent below file
      file: {path: "{{ work }}/f/x", state: absent}
    - name: copy below file
      copy: {content: payload, dest: "{{ work }}/f/x"}
      ignore_errors: true
    - name: lineinfile below file
      lineinfile: {path: "{{ work }}/f/x", line: a, create: true}
      ignore_errors: true
"#;

/// Each failing task and the node's error its output names under both tools.
const NAMED: &[(&str, &str)] = &[
    ("slurp missing dir", "File not found"),
    ("slurp below file", "Not a directory"),
    ("stat below file", "Not a directory"),
    ("touch missing dir", "[Errno 2] No such file or directory"),
    ("touch below file", "[Errno 20] Not a directory"),
    (
        "link missing dir",
        "[Errno 2] No such file or directory: b'",
    ),
    ("link below file", "[Errno 20] Not a directory: b'"),
    (
        "hard link missing dir",
        "[Errno 2] No such file or directory: b'",
    ),
    (
        "touch through a link into a missing dir",
        "[Errno 2] No such file or directory: b'",
    ),
    (
        "touch through a link below a file",
        "[Errno 20] Not a directory: b'",
    ),
    ("directory below file", "[Errno 20] Not a directory: b'"),
    ("replace below file", "does not exist !"),
    ("blockinfile below file", "Not a directory"),
    ("copy below file", "Not a directory"),
    ("lineinfile below file", "Not a directory"),
];

/// What the sandbox says when it, not the node, refuses a path.
const SANDBOX_WORDS: &[&str] = &["denied", "not permitted", "granted"];

fn check_named(out: &Output, tool: &str) {
    for (task, named) in NAMED {
        let lines = out.task_lines(task).join("\n");
        assert!(
            lines.contains(named),
            "{tool}, {task}: {named:?} not said\n{lines}"
        );
        for word in SANDBOX_WORDS {
            assert!(!lines.contains(word), "{tool}, {task}: {word:?}\n{lines}");
        }
    }
}

/// `work/to-missing` and `work/to-below-file`: links into a missing directory and
/// below the file the play writes.
fn links_to_nowhere(work: &std::path::Path) {
    std::os::unix::fs::symlink(work.join("nope/target"), work.join("to-missing")).unwrap();
    std::os::unix::fs::symlink(work.join("f/target"), work.join("to-below-file")).unwrap();
}

#[test]
fn paths_the_node_refuses_fail_with_the_nodes_error() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    let pb = sb.write("play.yml", PLAY);
    let work = sb.dir("work");
    links_to_nowhere(&work);
    let ours = sb.play(&pb, &work, &[]).run();
    ours.assert_no_panic().assert_code(0);
    assert_eq!(ours.host("localhost").ignored, NAMED.len() as u32, "{ours}");
    check_named(&ours, "sandball");
    assert!(
        ours.stdout
            .contains(&format!("File not found: {}/nope/x", work.display())),
        "{ours}"
    );
    let left = |dir: &std::path::Path| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    let made = ["f", "to-below-file", "to-missing"];
    assert_eq!(left(&work), made);
    let theirs_work = sb.dir("theirs");
    links_to_nowhere(&theirs_work);
    if let Some(theirs) = sb.ansible_play(&pb, &theirs_work, &[]) {
        let theirs = theirs.run();
        theirs.assert_code(0);
        ours.assert_same_recap_as(&theirs);
        check_named(&theirs, "ansible-playbook");
        assert_eq!(left(&theirs_work), made);
    }
}

const UNOPENABLE: &str = r#"
- hosts: all
  gather_facts: false
  become: true
  become_user: nobody
  tasks:
    - name: slurp in a closed directory
      slurp: {src: "{{ work }}/closed/secret"}
      ignore_errors: true
    - name: stat in a closed directory
      stat: {path: "{{ work }}/closed/secret"}
      ignore_errors: true
    - name: fetch from a closed directory
      fetch: {src: "{{ work }}/closed/secret", dest: "{{ work }}/fetched"}
      ignore_errors: true
"#;

/// A directory the become user may not open: its files are "not readable", as
/// ansible-core's slurp and fetch say, and stat says "Permission denied", as
/// `os.stat` does (ansible-playbook cannot run its Python modules as `nobody` here:
/// its venv is not theirs to read, so its words are those of ansible-core's sources).
#[test]
fn a_directory_the_user_may_not_open_is_permission_denied() {
    if !sandball_e2e::users::become_user_ready() {
        return;
    }
    let sb = Sandbox::new();
    std::fs::set_permissions(sb.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    sb.inventory(&["localhost"]);
    let work = sb.dir("work");
    std::fs::set_permissions(&work, std::fs::Permissions::from_mode(0o777)).unwrap();
    let closed = work.join("closed");
    std::fs::create_dir(&closed).unwrap();
    std::fs::write(closed.join("secret"), "s\n").unwrap();
    std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o700)).unwrap();
    let pb = sb.write("play.yml", UNOPENABLE);
    let out = sb.play(&pb, &work, &[]).run();
    out.assert_no_panic().assert_code(0);
    assert_eq!(out.host("localhost").ignored, 3, "{out}");
    let secret = closed.join("secret");
    for (task, said) in [
        (
            "slurp in a closed directory",
            format!("File is not readable: {}", secret.display()),
        ),
        (
            "stat in a closed directory",
            "Permission denied".to_string(),
        ),
        (
            "fetch from a closed directory",
            format!("File is not readable: {}", secret.display()),
        ),
    ] {
        let lines = out.result_lines(task).join("\n");
        assert!(lines.contains(&said), "{task}: {said:?}\n{out}");
        assert!(!lines.contains("MODULE FAILURE"), "{task}\n{out}");
    }
    assert!(!work.join("fetched").exists());
}
