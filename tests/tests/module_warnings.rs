//! A module's warnings as ansible-core 2.19 shows them, compared with
//! ansible-playbook: each a `[WARNING]` of its own before the task's result (the line
//! break that ends it dropped), never part of the result printed with `-v`.

use sandball_e2e::Sandbox;

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: find where nothing is
      find: {paths: "{{ work }}/nowhere"}
    - name: find below a file
      find: {paths: "{{ work }}/f/x"}
"#;

#[test]
fn module_warnings_come_apart_from_the_result() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    let pb = sb.write("play.yml", PLAY);
    let work = sb.dir("work");
    std::fs::write(work.join("f"), "x\n").unwrap();
    let ours = sb.play(&pb, &work, &["-v"]).run();
    ours.assert_no_panic().assert_code(0);
    let tasks = ["find where nothing is", "find below a file"];
    for task in tasks {
        let lines = ours.task_lines(task).join("\n");
        assert!(lines.contains("skipped_paths"), "{task}\n{ours}");
        assert!(!lines.contains("\"warnings\""), "{task}\n{ours}");
    }
    let warnings = |stderr: &str| -> Vec<String> {
        stderr
            .lines()
            .skip_while(|l| !l.starts_with("[WARNING]: Skipped"))
            .take_while(|l| !l.starts_with("[WARNING]: No inventory"))
            .map(str::to_string)
            .collect()
    };
    let said = warnings(&ours.stderr);
    assert_eq!(said.len(), 2, "{ours}");
    assert!(
        said.iter().all(|l| l.ends_with("is not a directory")),
        "{said:?}"
    );
    let theirs_work = sb.dir("theirs");
    std::fs::write(theirs_work.join("f"), "x\n").unwrap();
    if let Some(theirs) = sb.ansible_play(&pb, &theirs_work, &["-v"]) {
        let theirs = theirs.run();
        theirs.assert_code(0);
        ours.assert_same_recap_as(&theirs);
        let mine = |o: &str, w: &std::path::Path| o.replace(&w.display().to_string(), "WORK");
        for task in tasks {
            assert_eq!(
                mine(&ours.task_lines(task).join("\n"), &work),
                mine(&theirs.task_lines(task).join("\n"), &theirs_work),
                "{task}"
            );
        }
        assert_eq!(
            said.iter().map(|l| mine(l, &work)).collect::<Vec<_>>(),
            warnings(&theirs.stderr)
                .iter()
                .map(|l| mine(l, &theirs_work))
                .collect::<Vec<_>>()
        );
    }
}
