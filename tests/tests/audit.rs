//! `sandball audit`: a module's sha256, manifest and imports read without running it,
//! and the mismatches between imports and manifest.

use sandball_e2e::{Binaries, Sandbox};
use serde_json::Value;
use sha2::{Digest, Sha256};

fn audit_module(sb: &Sandbox, target: &str) -> (i32, Value, String) {
    let out = sb.sandball(["audit", "module", target, "--json"]).run();
    out.assert_no_panic();
    let report: Value =
        serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("not JSON ({e}):\n{out}"));
    (out.code, report, out.to_string())
}

#[test]
fn every_built_in_module_imports_only_what_its_manifest_covers() {
    let sb = Sandbox::new();
    for module in [
        "command",
        "copy",
        "file",
        "ping",
        "slurp",
        "stat",
        "lineinfile",
        "replace",
        "blockinfile",
        "wait_for",
        "known_hosts",
        "cron",
    ] {
        let (code, report, out) = audit_module(&sb, module);
        assert_eq!(code, 0, "{module}:\n{out}");
        assert_eq!(report["module"], module, "{out}");
        assert_eq!(report["builtin"], true, "{out}");
        assert_eq!(report["findings"], Value::Array(vec![]), "{module}:\n{out}");
        let path = report["path"].as_str().unwrap();
        let sha = hex::encode(Sha256::digest(std::fs::read(path).unwrap()));
        assert_eq!(report["sha256"], Value::String(sha), "{out}");
        assert_eq!(report["manifest"]["name"], module, "{out}");
        let imports: Vec<&str> = report["imports"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["name"].as_str().unwrap())
            .collect();
        assert!(
            imports.iter().any(|i| i.starts_with("wasi:cli/stdout@")),
            "{module}: {imports:?}"
        );
        // Only the modules that run programs import the process interface (stat runs
        // `file` and `lsattr` on its path, the text editors their `validate`).
        assert_eq!(
            imports
                .iter()
                .any(|i| i.starts_with("sandball:host/process@")),
            [
                "command",
                "copy",
                "file",
                "stat",
                "lineinfile",
                "replace",
                "blockinfile",
                "cron"
            ]
            .contains(&module),
            "{module}: {imports:?}"
        );
    }
}

#[test]
fn imports_the_manifest_does_not_cover_are_errors() {
    let sb = Sandbox::new();
    let file = Binaries::fixtures().join("denied_reader.wasm");
    let (code, report, out) = audit_module(&sb, file.to_str().unwrap());
    assert_eq!(code, 2, "{out}");
    assert_eq!(report["builtin"], false, "{out}");
    let errors: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["level"] == "error")
        .map(|f| f["message"].as_str().unwrap())
        .collect();
    for what in ["sandball:host/process", "wasi:filesystem/preopens"] {
        assert!(
            errors.iter().any(|e| e.contains(what)),
            "no error about {what}: {errors:?}"
        );
    }
    // The text form says the same, for people.
    let text = sb
        .sandball(["audit", "module", file.to_str().unwrap()])
        .run();
    text.assert_code(2);
    text.assert_stdout_has("kind:         component (third-party)");
    text.assert_stdout_has("error: imports sandball:host/process@");
}

#[test]
fn unknown_modules_are_clear_errors() {
    let sb = Sandbox::new();
    let out = sb.sandball(["audit", "module", "nosuchmodule"]).run();
    out.assert_code(1);
    out.assert_stderr_has("couldn't resolve module/action 'nosuchmodule'");
}

const LOGGED: &str = r#"
- name: logged
  hosts: all
  gather_facts: false
  tasks:
    - name: ping
      ping:

    - name: a secret path
      stat:
        path: "{{ work }}/s3cr3t-dir/file"
      no_log: true

    - name: denied
      denied_reader:
        via: exec
      ignore_errors: true

    - name: not a module
      debug:
        msg: controller side

    - name: old style
      hello_legacy:
        greeting: hi
"#;

/// An old-style module (a shell script reading `key=value` pairs), for the legacy line.
const HELLO_LEGACY: &str = "#!/bin/sh\necho '{\"changed\": true, \"msg\": \"hello\"}'\n";

#[test]
fn the_audit_log_has_one_line_per_module_run_and_no_secrets() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha", "beta"]);
    let pb = sb.write("play.yml", LOGGED);
    let legacy = sb.write("library/hello_legacy", HELLO_LEGACY);
    let log = sb.path().join("audit.jsonl");
    let out = sb
        .play(
            &pb,
            &sb.dir("work"),
            &["--audit-log", log.to_str().unwrap()],
        )
        .env("SANDBALL_MODULE_PATH", Binaries::fixtures())
        .run();
    out.assert_no_panic().assert_code(0);
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        !text.contains("s3cr3t"),
        "a no_log value is in the log:\n{text}"
    );
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    // Four module tasks on two hosts; debug runs on the controller, no module.
    assert_eq!(lines.len(), 8, "{text}");
    for l in &lines {
        for key in [
            "time",
            "host",
            "task",
            "module",
            "kind",
            "sha256",
            "sandboxed",
            "grant",
            "denials",
            "status",
        ] {
            assert!(l.get(key).is_some(), "no {key}: {l}");
        }
        assert!(l["time"].as_str().unwrap().ends_with('Z'), "{l}");
    }
    let of = |task: &str, host: &str| -> &Value {
        lines
            .iter()
            .find(|l| l["task"] == task && l["host"] == host)
            .unwrap_or_else(|| panic!("no line for {task} on {host}:\n{text}"))
    };
    assert_eq!(of("ping", "alpha")["status"], "ok");
    assert_eq!(of("ping", "alpha")["grant"]["fs"], Value::Array(vec![]));
    let secret = of("a secret path", "beta");
    assert_eq!(secret["grant"]["fs"][0]["path"], "********", "{secret}");
    let denied = of("denied", "beta");
    assert_eq!(denied["status"], "failed", "{denied}");
    assert_eq!(
        denied["denials"][0]["capability"], "exec /bin/cat",
        "{denied}"
    );
    let wasm = Binaries::fixtures().join("denied_reader.wasm");
    let sha = hex::encode(Sha256::digest(std::fs::read(wasm).unwrap()));
    assert_eq!(denied["sha256"], Value::String(sha));
    assert_eq!(denied["sandboxed"], true, "{denied}");
    // A legacy module runs unsandboxed, and the log says so.
    let old = of("old style", "alpha");
    assert_eq!(old["kind"], "legacy", "{old}");
    assert_eq!(old["sandboxed"], false, "{old}");
    assert_eq!(old["grant"], Value::Null, "{old}");
    assert_eq!(old["status"], "changed", "{old}");
    let sha = hex::encode(Sha256::digest(std::fs::read(legacy).unwrap()));
    assert_eq!(old["sha256"], Value::String(sha));
}

const PLANNED: &str = r#"
- name: planned
  hosts: all
  gather_facts: false
  vars:
    target: "{{ work }}/made"
  tasks:
    - name: touch a file
      file:
        path: "{{ target }}"
        state: touch
      register: touched

    - name: depends on the run
      stat:
        path: "{{ touched.dest }}"

    - name: granted by the keyword
      denied_reader:
        via: exec
      capabilities:
        - {kind: exec, program: /bin/cat}

    - name: on the controller
      debug:
        msg: hello

    - name: old style
      legacy_thing:

    - name: each item
      file:
        path: "{{ work }}/{{ item }}"
        state: touch
      loop: [one, two]

    - name: items from the run
      file:
        path: "{{ item }}"
        state: touch
      loop: "{{ touched.paths }}"

    - name: through the shell
      shell: "true"
"#;

#[test]
fn a_playbook_audit_shows_each_task_and_host_before_anything_runs() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha", "beta"]);
    let pb = sb.write("play.yml", PLANNED);
    sb.write(
        "library/legacy_thing.py",
        "#!/usr/bin/python\n# WANT_JSON\nprint('{}')\n",
    );
    let work = sb.dir("work");
    let inventory = sb.path().join("inventory.ini");
    let args = |json: bool| {
        let mut a = vec![
            "audit".to_string(),
            "playbook".into(),
            pb.display().to_string(),
            "-i".into(),
            inventory.display().to_string(),
            "-l".into(),
            "alpha".into(),
            "-e".into(),
            format!("work={}", work.display()),
        ];
        if json {
            a.push("--json".into());
        }
        a
    };
    let out = sb
        .sandball(args(true))
        .env("SANDBALL_MODULE_PATH", Binaries::fixtures())
        .env(
            "SANDBALL_ANSIBLE_PYTHON",
            sandball_e2e::binaries::ansible_python(),
        )
        .run();
    out.assert_no_panic().assert_code(0);
    let rows: Vec<Value> =
        serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("not JSON ({e}):\n{out}"));
    assert_eq!(
        rows.len(),
        9,
        "one row per task (and loop item) on alpha only:\n{out}"
    );
    assert!(rows.iter().all(|r| r["host"] == "alpha"), "{out}");
    let row = |task: &str| rows.iter().find(|r| r["task"] == task).unwrap();
    let touch = row("touch a file");
    assert_eq!(touch["kind"], "component");
    assert_eq!(
        touch["grant"]["fs"][0]["path"],
        Value::String(format!("{}/made", work.display())),
        "{out}"
    );
    let later = row("depends on the run");
    assert!(later.get("grant").is_none(), "{out}");
    assert!(
        later["unknown"].as_str().unwrap().contains("touched"),
        "{out}"
    );
    assert_eq!(
        row("granted by the keyword")["grant"]["exec"][0]["program"],
        "/bin/cat"
    );
    assert_eq!(row("on the controller")["kind"], "action");
    let old = row("old style");
    assert_eq!(old["kind"], "legacy", "{out}");
    assert_eq!(old["decision"], "warn", "{out}");
    // A loop with known items is planned item by item; one whose items come from the
    // run is unknown, saying why.
    let items: Vec<&Value> = rows.iter().filter(|r| r["task"] == "each item").collect();
    assert_eq!(items.len(), 2, "{out}");
    for (row, item) in items.iter().zip(["one", "two"]) {
        assert_eq!(row["item"], item, "{out}");
        assert_eq!(
            row["grant"]["fs"][0]["path"],
            Value::String(format!("{}/{item}", work.display())),
            "{out}"
        );
    }
    let later = row("items from the run");
    assert!(
        later["unknown"]
            .as_str()
            .is_some_and(|u| u.contains("loop") && u.contains("touched")),
        "{out}"
    );
    // `shell` is the shell component, granted the shell it runs the line with.
    let shell = row("through the shell");
    assert_eq!(
        (&shell["kind"], &shell["module"]),
        (&Value::from("component"), &Value::from("shell")),
        "{out}"
    );
    assert_eq!(shell["grant"]["exec"][0]["program"], "/bin/sh", "{out}");
    // Nothing ran.
    assert!(!work.join("made").exists());

    let table = sb
        .sandball(args(false))
        .env("SANDBALL_MODULE_PATH", Binaries::fixtures())
        .run();
    table.assert_code(0);
    table.assert_stdout_has("TASK");
    let line = table
        .stdout
        .lines()
        .find(|l| l.starts_with("old style"))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(
        line.contains("legacy") && line.contains("not sandboxed"),
        "{line}"
    );
    let line = table
        .stdout
        .lines()
        .find(|l| l.starts_with("depends on the run"))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(line.contains("unknown until it runs"), "{line}");
}

#[test]
fn a_playbook_audit_templates_the_hosts_pattern_as_a_run_does() {
    let sb = Sandbox::new();
    sb.inventory(&["alpha", "beta"]);
    let pb = sb.write(
        "play.yml",
        "- hosts: \"{{ target }}\"\n  gather_facts: false\n  tasks:\n    - ping:\n",
    );
    let inventory = sb.path().join("inventory.ini");
    let out = sb
        .sandball([
            "audit",
            "playbook",
            pb.to_str().unwrap(),
            "-i",
            inventory.to_str().unwrap(),
            "-e",
            "target=beta",
            "--json",
        ])
        .run();
    out.assert_no_panic().assert_code(0);
    let rows: Vec<Value> =
        serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("not JSON ({e}):\n{out}"));
    let hosts: Vec<&Value> = rows.iter().map(|r| &r["host"]).collect();
    assert_eq!(hosts, [&Value::from("beta")], "{out}");
}
