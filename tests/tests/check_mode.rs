//! A dry run (`-C`) of a playbook that makes a directory and then writes into it:
//! every task reports the change it would make, as under ansible-playbook, and nothing
//! on the node changes (in check mode a module is granted reading only).

use sandball_e2e::Sandbox;

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: dir
      file: {path: "{{ work }}/new/deeper", state: directory}
    - name: content
      copy: {content: "hello\n", dest: "{{ work }}/new/deeper/a.txt"}
    - name: src into dir
      copy: {src: a.txt, dest: "{{ work }}/new/deeper/"}
    - name: template
      template: {src: t.j2, dest: "{{ work }}/new/deeper/t.txt"}
"#;

#[test]
fn a_dry_run_into_a_directory_to_be_made_changes_nothing_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    sb.write("files/a.txt", "from the controller\n");
    sb.write("templates/t.j2", "{{ 40 + 2 }}\n");
    let pb = sb.write("play.yml", PLAY);
    let work = sb.dir("work");
    let dry = sb.play(&pb, &work, &["-C", "-D"]).run();
    dry.assert_no_panic().assert_code(0);
    assert_eq!(dry.host("alpha").changed, 4, "{dry}");
    assert!(!work.join("new").exists(), "check mode created files");
    for (task, line) in [
        ("content", "+hello"),
        ("src into dir", "+from the controller"),
        ("template", "+42"),
    ] {
        assert!(dry.task_lines(task).contains(&line), "{task}:\n{dry}");
    }
    if let Some(theirs) = sb.ansible_play(&pb, &work, &["-C", "-D"]) {
        let theirs = theirs.run();
        dry.assert_same_recap_as(&theirs);
        dry.assert_same_task_lines_as(&theirs, &["dir", "content", "src into dir"]);
    }
    let real = sb.play(&pb, &work, &[]).run();
    real.assert_no_panic().assert_code(0);
    assert_eq!(
        std::fs::read_to_string(work.join("new/deeper/t.txt")).unwrap(),
        "42\n"
    );
}
