//! Modules in other languages than Rust: a Python module
//! (`examples/modules/python/conf_line.py`, an ordinary Ansible module) built into a
//! component with componentize-py (`make example-python-module`), and the same module
//! in JavaScript (`examples/modules/js/conf_line.js`) built with componentize-js (`make
//! example-js-module`), run through sandball sandboxed, their arguments handled by the
//! Rust SDK's code through the host interface, and each gives what ansible-core gives
//! running the Python file as a legacy module: results, check mode, diff mode, argument
//! errors. A denied program fails the task with the denial.

use sandball_e2e::{Binaries, Sandbox};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The first run of a component compiles it on the node: an unoptimised wasmtime takes
/// minutes for the Python and JavaScript engines (once per test run: the shim cache is
/// shared).
const FIRST_COMPILE: Duration = Duration::from_secs(900);

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: create
      conf_line: {path: "{{ work }}/app.conf", key: port, value: "8080", create: true}
      register: created
    - name: again, through the alias
      conf_line: {dest: "{{ work }}/app.conf", key: port, value: "8080"}
      register: again
    - name: a second key in check mode
      conf_line: {path: "{{ work }}/app.conf", key: host, value: web}
      check_mode: true
      diff: true
      register: checked
    - name: replaced, validated
      conf_line: {path: "{{ work }}/app.conf", key: port, value: "9090", separator: "=", validate: "/bin/true %s"}
      diff: true
      register: replaced
    - name: removed
      conf_line: {path: "{{ work }}/app.conf", key: port, state: absent}
      register: removed
    - name: a validation that refuses
      conf_line: {path: "{{ work }}/app.conf", key: a, value: "1", validate: "/bin/false %s"}
      ignore_errors: true
      register: refused
    - name: a missing file
      conf_line: {path: "{{ work }}/none.conf", key: a, value: "1"}
      ignore_errors: true
      register: missing
    - name: present without a value
      conf_line: {path: "{{ work }}/app.conf", key: a}
      ignore_errors: true
      register: no_value
    - name: a bad choice
      conf_line: {path: "{{ work }}/app.conf", key: a, state: gone}
      ignore_errors: true
      register: bad_choice
    - name: an unknown argument
      conf_line: {path: "{{ work }}/app.conf", key: a, value: "1", colour: red}
      ignore_errors: true
      register: unknown
    - name: results
      copy:
        dest: "{{ work }}/results.json"
        content: "{{ {'created': created, 'again': again, 'checked': checked, 'replaced': replaced,
                      'removed': removed, 'refused': refused, 'missing': missing,
                      'no_value': no_value, 'bad_choice': bad_choice, 'unknown': unknown} | to_json }}"
"#;

/// The rule a user writes to grant the module what its manifest requests.
const POLICY: &str = r#"
[[policy.rule]]
modules = ["conf_line"]
manifest = true
"#;

/// The fields of a result both runs must agree on.
const COMPARED: &[&str] = &[
    "changed",
    "failed",
    "msg",
    "diff",
    "rc",
    "exit_status",
    "path",
    "invocation",
    "skipped",
];

/// The example module's components: each language's, and the directory it is in.
fn components() -> [(&'static str, PathBuf); 2] {
    [
        ("Python", Binaries::example_python_module()),
        ("JavaScript", Binaries::example_js_module()),
    ]
}

/// Runs PLAY under sandball with the component in `modules`; returns the results and
/// the file.
fn sandball_run(modules: &Path, policy: &str) -> (Value, String) {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    let work = sb.dir("work");
    let pb = sb.write("play.yml", PLAY);
    let policy = sb.write("sandball.toml", policy);
    let out = sb
        .play(
            &pb,
            &work,
            &[
                "-M",
                modules.to_str().unwrap(),
                "--policy",
                policy.to_str().unwrap(),
            ],
        )
        .limit(FIRST_COMPILE)
        .run();
    out.assert_no_panic().assert_code(0);
    let results = std::fs::read_to_string(work.join("results.json")).unwrap();
    let file = std::fs::read_to_string(work.join("app.conf")).unwrap_or_default();
    (serde_json::from_str(&results).unwrap(), file)
}

/// The work directory's path in a result, as a placeholder: the two runs have their own.
fn placeholder(v: &Value, work: &str) -> Value {
    serde_json::from_str(&v.to_string().replace(work, "WORK")).unwrap()
}

/// The results of a sandball run, checked on their own.
fn check_own(language: &str, ours: &Value, file: &str) {
    // Everything added was removed again; check mode and refused validations wrote nothing.
    assert_eq!(file, "", "{language}: {ours}");
    assert_eq!(ours["created"]["changed"], true, "{language}: {ours}");
    assert_eq!(ours["created"]["msg"], "line added", "{language}: {ours}");
    assert_eq!(ours["again"]["changed"], false, "{language}: {ours}");
    assert_eq!(ours["checked"]["changed"], true, "{language}: {ours}");
    assert_eq!(
        ours["checked"]["diff"]["after"], "port=8080\nhost=web\n",
        "{language}: {ours}"
    );
    assert_eq!(
        ours["replaced"]["msg"], "line replaced",
        "{language}: {ours}"
    );
    assert_eq!(
        ours["refused"]["msg"], "failed to validate",
        "{language}: {ours}"
    );
    assert_eq!(
        ours["no_value"]["msg"], "state is present but all of the following are missing: value",
        "{language}: {ours}"
    );
    assert_eq!(
        ours["bad_choice"]["msg"], "value of state must be one of: present, absent, got: gone",
        "{language}: {ours}"
    );
}

/// A program the grant denies (a policy rule's `deny`) fails the task that runs it, as
/// ansible-core fails on an OSError (EACCES); what the grant allows still runs.
fn check_denial(language: &str, dir: &Path) {
    let policy = format!("{POLICY}deny = [{{kind = \"exec\", program = \"/bin/false\"}}]\n");
    let (ours, _) = sandball_run(dir, &policy);
    let refused = &ours["refused"];
    assert_eq!(refused["failed"], true, "{language}: {refused}");
    assert_eq!(refused["rc"], 13, "{language}: {refused}");
    let msg = refused["msg"].as_str().unwrap();
    assert!(msg.contains("/bin/false"), "{language}: {refused}");
    assert!(
        msg.contains("deni") || msg.contains("not granted"),
        "{language}: {refused}"
    );
    assert_eq!(ours["replaced"]["changed"], true, "{language}: {ours}");
}

/// Both runs of each component, in one test: the first compiles the component (minutes
/// for an interpreter in a debug shim), the second reuses its compiled code.
#[test]
fn python_and_javascript_modules_run_sandboxed_as_ansible_core_runs_the_python_original() {
    let runs: Vec<(&str, Value, String)> = components()
        .into_iter()
        .map(|(language, dir)| {
            let (ours, file) = sandball_run(&dir, POLICY);
            check_own(language, &ours, &file);
            check_denial(language, &dir);
            (language, ours, file)
        })
        .collect();

    // ansible-core, running the Python file as a legacy module from the playbook's library/.
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    let work = sb.dir("work");
    let library = sb.dir("library");
    std::fs::copy(
        sandball_e2e::binaries::workspace_root().join("examples/modules/python/conf_line.py"),
        library.join("conf_line.py"),
    )
    .unwrap();
    let pb = sb.write("play.yml", PLAY);
    let Some(run) = sb.ansible_play(&pb, &work, &[]) else {
        return;
    };
    let out = run.run();
    out.assert_code(0);
    let theirs: Value =
        serde_json::from_str(&std::fs::read_to_string(work.join("results.json")).unwrap()).unwrap();
    let their_file = std::fs::read_to_string(work.join("app.conf")).unwrap_or_default();
    let theirs_work = work.display().to_string();
    // ansible-core 2.19 lists an unknown argument's aliases after every name
    // ("…, value (dest)"); the SDK's message, every module's, puts each after its own
    // name, as ansible-core 2.16 did.
    let unsupported = "Unsupported parameters for (conf_line) module: colour. Supported parameters include: create, key, path";
    assert!(
        theirs["unknown"]["msg"]
            .as_str()
            .unwrap()
            .starts_with(unsupported),
        "{theirs}"
    );
    for (language, ours, file) in &runs {
        assert_eq!(file, &their_file, "{language}");
        let ours_work = ours["created"]["path"]
            .as_str()
            .unwrap()
            .trim_end_matches("/app.conf")
            .to_string();
        assert!(
            ours["unknown"]["msg"]
                .as_str()
                .unwrap()
                .starts_with(unsupported),
            "{language}: {ours}"
        );
        for (task, result) in theirs.as_object().unwrap() {
            for key in COMPARED
                .iter()
                .filter(|k| task != "unknown" || **k != "msg")
            {
                assert_eq!(
                    placeholder(&ours[task][key], &ours_work),
                    placeholder(&result[key], &theirs_work),
                    "{language} {task}.{key}: sandball {} ansible-core {}",
                    ours[task],
                    result
                );
            }
        }
    }
}
