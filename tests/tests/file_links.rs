//! `file: state=link` on what the sandbox cannot open directly, compared with
//! ansible-playbook: a link whose target is absolute is read as written (WASI refuses
//! to read it; the host interface does), so turning it relative is a change and
//! turning it back is one too; a link to a missing path right under `/` is refused
//! without `force` and made with it (an empty stand-in is opened for `/`, never `/`).

use sandball_e2e::{Output, Sandbox};

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: target
      copy: {dest: "{{ work }}/target.txt", content: "x\n"}
    - name: absolute link
      file: {src: "{{ work }}/target.txt", dest: "{{ work }}/link", state: link}
    - name: same absolute link
      file: {src: "{{ work }}/target.txt", dest: "{{ work }}/link", state: link}
    - name: made relative
      file: {src: target.txt, dest: "{{ work }}/link", state: link}
      diff: true
    - name: relative again
      file: {src: target.txt, dest: "{{ work }}/link", state: link}
    - name: back to absolute
      file: {src: "{{ work }}/target.txt", dest: "{{ work }}/link", state: link}
    - name: missing target
      file: {src: /sandball-never-there, dest: "{{ work }}/dangling", state: link}
      ignore_errors: true
    - name: missing target forced
      file: {src: /sandball-never-there, dest: "{{ work }}/dangling", state: link, force: true, follow: false}
    - name: forced again
      file: {src: /sandball-never-there, dest: "{{ work }}/dangling", state: link, force: true, follow: false}
"#;

#[test]
fn links_read_as_written_and_missing_targets_under_the_root() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    let pb = sb.write("play.yml", PLAY);
    let tasks = [
        "absolute link",
        "same absolute link",
        "made relative",
        "relative again",
        "back to absolute",
        "missing target",
        "missing target forced",
        "forced again",
    ];
    let work = sb.dir("work");
    let ours = sb.play(&pb, &work, &[]).run();
    ours.assert_no_panic().assert_code(0);
    // The verdict of a task's result (`changed`, `ok`, `fatal`), past a diff shown
    // before it.
    let verdict = |o: &Output, task: &str| -> String {
        o.result_lines(task)
            .iter()
            .find_map(|l| l.split_once(": [").map(|(v, _)| v.to_string()))
            .unwrap_or_default()
    };
    let lines = |task: &str| ours.result_lines(task).join("\n");
    assert_eq!(verdict(&ours, "made relative"), "changed", "{ours}");
    assert!(
        lines("made relative").contains("+    \"src\": \"target.txt\""),
        "{ours}"
    );
    assert_eq!(verdict(&ours, "relative again"), "ok", "{ours}");
    assert_eq!(verdict(&ours, "back to absolute"), "changed", "{ours}");
    assert!(
        lines("missing target").contains("src file does not exist"),
        "{ours}"
    );
    assert_eq!(
        std::fs::read_link(work.join("dangling")).expect("the dangling link"),
        std::path::Path::new("/sandball-never-there")
    );
    let theirs_work = sb.dir("theirs");
    if let Some(theirs) = sb.ansible_play(&pb, &theirs_work, &[]) {
        let theirs = theirs.run();
        theirs.assert_code(0);
        // Results mention each tool's own directory; the verdicts match.
        for task in tasks {
            assert_eq!(
                verdict(&ours, task),
                verdict(&theirs, task),
                "{task}:\n{ours}\n{theirs}"
            );
        }
        ours.assert_same_recap_as(&theirs);
    }
}
