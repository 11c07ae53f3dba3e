//! `ansible_playbook_python`, the controller's Python, compared with ansible-playbook:
//! with ansible-core's venv on `PATH`, sandball names the Python behind its
//! `ansible-playbook`, the interpreter ansible-playbook itself runs on, and a task can
//! run it.

use sandball_e2e::Sandbox;
use sandball_e2e::binaries::ansible_python;
use std::path::Path;

const PLAY: &str = r#"
- hosts: localhost
  gather_facts: false
  tasks:
    - name: the controller's Python
      debug: {msg: "python={{ ansible_playbook_python }}"}
    - name: run it
      command: {argv: ["{{ ansible_playbook_python }}", "-c", "print(6 * 7)"]}
      register: out
    - debug: {msg: "printed={{ out.stdout }}"}
"#;

/// The directory of the Python the run printed.
fn python_dir(stdout: &str) -> String {
    let line = stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix("\"msg\": \"python="))
        .unwrap_or_else(|| panic!("no python= line in:\n{stdout}"));
    let path = line.trim_end_matches('"');
    assert!(Path::new(path).is_absolute(), "{path}");
    Path::new(path).parent().unwrap().display().to_string()
}

#[test]
fn ansible_playbook_python_is_the_controllers_python() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    let pb = sb.write("play.yml", PLAY);
    let work = sb.dir("work");
    let venv_bin = ansible_python().parent().unwrap().to_path_buf();
    let path = format!(
        "{}:{}",
        venv_bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let ours = sb.play(&pb, &work, &[]).env("PATH", &path).run();
    ours.assert_no_panic().assert_code(0);
    ours.assert_stdout_has("\"msg\": \"printed=42\"");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &[]) {
        let theirs = theirs.run();
        theirs.assert_code(0);
        assert_eq!(
            python_dir(&ours.stdout),
            python_dir(&theirs.stdout),
            "{ours}\n{theirs}"
        );
        ours.assert_same_recap_as(&theirs);
    }
}
