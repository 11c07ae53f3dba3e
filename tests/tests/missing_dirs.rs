//! Writing below a directory that does not exist: `copy`, `template` and `file` fail
//! as ansible-core's do and make no directory, except where Ansible makes them (a
//! `dest` ending in `/`, `state: directory`) — compared with ansible-playbook on the
//! recap, the messages and what is left on disk.

use sandball_e2e::Sandbox;
use sandball_e2e::tree::snapshot;
use std::path::Path;

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - template: {src: t.j2, dest: "{{ work }}/t/a/b"}
      ignore_errors: true
    - copy: {content: payload, dest: "{{ work }}/c/a/b"}
      ignore_errors: true
    - copy: {src: "{{ work }}/../in.txt", dest: "{{ work }}/r/a/b", remote_src: true}
      ignore_errors: true
    - copy: {src: "{{ work }}/../tree", dest: "{{ work }}/rt/a/b", remote_src: true}
      ignore_errors: true
    - copy: {content: payload, dest: "{{ work }}/cd/a/b/"}
      ignore_errors: true
    - file: {path: "{{ work }}/f/a/b", state: touch}
      ignore_errors: true
    - copy: {src: in.txt, dest: "{{ work }}/made/a/"}
    - file: {path: "{{ work }}/d/a/b", state: directory}
"#;

/// The paths below `dir`, relative to it, sorted.
fn listing(dir: &Path) -> Vec<String> {
    snapshot(dir).into_keys().collect()
}

#[test]
fn nothing_is_made_below_a_missing_directory_unless_ansible_makes_it() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    sb.write("templates/t.j2", "t\n");
    sb.write("in.txt", "in\n");
    sb.write("files/in.txt", "in\n");
    sb.write("tree/x.txt", "x\n");
    let pb = sb.write("play.yml", PLAY);
    let ours = sb.dir("ours");
    let out = sb.play(&pb, &ours, &[]).run();
    out.assert_no_panic().assert_code(0);
    assert_eq!(out.host("alpha").ignored, 6, "{out}");
    for dir in ["t/a", "c/a", "r/a", "rt/a"] {
        let missing = format!(
            "Destination directory {}/{dir} does not exist",
            ours.display()
        );
        assert!(out.stdout.contains(&missing), "{missing}\n{out}");
    }
    assert!(
        out.stdout
            .contains("can not use content with a dir as dest"),
        "{out}"
    );
    let made = listing(&ours);
    assert_eq!(
        made,
        ["d", "d/a", "d/a/b", "made", "made/a", "made/a/in.txt"]
    );
    if let Some(theirs) = sb.ansible_play(&pb, &sb.dir("theirs"), &[]) {
        let theirs = theirs.run();
        out.assert_same_recap_as(&theirs);
        assert_eq!(made, listing(&sb.path().join("theirs")));
    }
}
