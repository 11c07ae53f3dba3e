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
    // A template whose whole output is one number is that number alone, without the
    // template's trailing newline, as ansible-core 2.19 writes it.
    assert_eq!(
        std::fs::read_to_string(work.join("new/deeper/t.txt")).unwrap(),
        "42"
    );
}

/// Reads, with ansible-core's own Python, whether each of its modules named in `names`
/// declares check mode support (`AnsibleModule(supports_check_mode=…)`, False when not
/// given): `name=True|False|absent` lines, absent when ansible-core has no such module.
fn ansible_core_check_mode_support(names: &[String]) -> Option<Vec<String>> {
    let python = sandball_e2e::binaries::ansible_python();
    if !python.exists() {
        return None;
    }
    const SCRIPT: &str = r#"
import ast, os, sys, ansible.modules
root = os.path.dirname(ansible.modules.__file__)
for name in sys.argv[1:]:
    path = os.path.join(root, name + ".py")
    if not os.path.exists(path):
        print(name + "=absent")
        continue
    support = False
    for node in ast.walk(ast.parse(open(path).read())):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "AnsibleModule":
            for kw in node.keywords:
                if kw.arg == "supports_check_mode":
                    support = ast.literal_eval(kw.value)
    print(name + "=" + str(support))
"#;
    let out = std::process::Command::new(&python)
        .arg("-c")
        .arg(SCRIPT)
        .args(names)
        .output()
        .expect("ansible-core's Python runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(
        String::from_utf8(out.stdout)
            .expect("module names are UTF-8")
            .lines()
            .map(str::to_string)
            .collect(),
    )
}

/// Every native module supports check mode exactly where ansible-core's module of the
/// same name does: the manifest's `supports_check_mode` against the module's
/// `AnsibleModule(supports_check_mode=…)` (a module ansible-core does not have keeps its
/// own). A module without it is skipped under `-C` with ansible-core's message.
#[test]
fn native_modules_support_check_mode_where_ansible_cores_do() {
    let modules = sandball_e2e::binaries::workspace_root().join("modules-wasm");
    let mut names = Vec::new();
    let mut ours = Vec::new();
    for entry in std::fs::read_dir(&modules).expect("modules-wasm is readable") {
        let dir = entry.expect("modules-wasm lists").path();
        let manifest = dir.join("manifest.json");
        let Ok(text) = std::fs::read_to_string(&manifest) else {
            continue;
        };
        let manifest: serde_json::Value = serde_json::from_str(&text).expect("manifest is JSON");
        let name = manifest["name"]
            .as_str()
            .expect("manifest names its module");
        let support = manifest["supports_check_mode"].as_bool().unwrap_or(false);
        names.push(name.to_string());
        ours.push(format!("{name}={}", if support { "True" } else { "False" }));
    }
    assert!(names.len() >= 20, "modules-wasm holds {names:?}");
    let Some(theirs) = ansible_core_check_mode_support(&names) else {
        return;
    };
    let differ: Vec<String> = ours
        .iter()
        .zip(&theirs)
        .filter(|(o, t)| !t.ends_with("=absent") && o != t)
        .map(|(o, t)| format!("sandball {o}, ansible-core {t}"))
        .collect();
    assert!(differ.is_empty(), "check mode support differs: {differ:#?}");
}

/// A module without check mode support (`wait_for`) is skipped under `-C`, with
/// ansible-core's result, and does not wait.
#[test]
fn a_module_without_check_mode_is_skipped_in_a_dry_run_as_in_ansible() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    let pb = sb.write(
        "play.yml",
        "- hosts: all\n  gather_facts: false\n  tasks:\n    - name: wait\n      \
         wait_for: {timeout: 30}\n",
    );
    let work = sb.dir("work");
    let dry = sb.play(&pb, &work, &["-C"]).run();
    dry.assert_no_panic().assert_code(0);
    assert_eq!(dry.host("alpha").skipped, 1, "{dry}");
    if let Some(theirs) = sb.ansible_play(&pb, &work, &["-C"]) {
        let theirs = theirs.run();
        dry.assert_same_recap_as(&theirs)
            .assert_same_results_as(&theirs, &["wait"]);
    }
}
