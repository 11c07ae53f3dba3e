//! A third-party module component (`examples/modules/component`, `json_key`), written
//! against the guest SDK's public API alone and built outside the workspace, runs as
//! the built-ins do: found through `-M`, its arguments checked against its manifest,
//! sandboxed with the grant its manifest asks for (the audit log says so), with check
//! mode, diff mode, idempotence, backups and the file attributes.

use sandball_e2e::{Binaries, Sandbox};
use serde_json::Value;
use std::os::unix::fs::PermissionsExt;

const PLAY: &str = r#"
- hosts: all
  gather_facts: false
  tasks:
    - name: a new file
      json_key: {path: "{{ work }}/app.json", key: server.port, value: 8080, create: true, mode: "0640"}
      register: created
    - name: the same again
      json_key: {path: "{{ work }}/app.json", key: server.port, value: 8080}
      register: again
    - name: a second key, in check mode
      json_key: {path: "{{ work }}/app.json", key: server.name, value: web}
      check_mode: true
      register: checked
    - name: a list value, validated, with a backup
      json_key:
        path: "{{ work }}/app.json"
        key: users
        value: [ann, bob]
        backup: true
        validate: "{{ python }} -m json.tool %s"
      diff: true
      register: listed
    - name: remove a key
      json_key: {path: "{{ work }}/app.json", key: server.port, state: absent}
      register: removed
    - name: remove it again
      json_key: {path: "{{ work }}/app.json", key: server.port, state: absent}
      register: removed_again
    - name: through a value that is not an object
      json_key: {path: "{{ work }}/app.json", key: users.first, value: x}
      ignore_errors: true
      register: through_list
    - name: a missing file without create
      json_key: {path: "{{ work }}/none.json", key: a, value: 1}
      ignore_errors: true
      register: missing
    - name: a validation that refuses
      json_key: {path: "{{ work }}/app.json", key: z, value: 1, validate: "/bin/false %s"}
      ignore_errors: true
      register: refused
    - name: present without a value
      json_key: {path: "{{ work }}/app.json", key: a}
      ignore_errors: true
      register: no_value
    - name: results
      copy:
        dest: "{{ work }}/results.json"
        content: "{{ {'created': created, 'again': again, 'checked': checked, 'listed': listed,
                      'removed': removed, 'removed_again': removed_again,
                      'through_list': through_list, 'missing': missing,
                      'no_value': no_value, 'refused': refused} | to_json }}"
"#;

/// Third-party components get nothing unless policy says so: this rule grants
/// `json_key` what its manifest requests, as a user of the module would.
const POLICY: &str = r#"
[[policy.rule]]
modules = ["json_key"]
manifest = true
"#;

#[test]
fn a_third_party_component_runs_sandboxed_like_a_built_in() {
    let modules = Binaries::example_component();
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    let work = sb.dir("work");
    let pb = sb.write("play.yml", PLAY);
    let policy = sb.write("sandball.toml", POLICY);
    let log = sb.path().join("audit.jsonl");
    let out = sb
        .play(
            &pb,
            &work,
            &[
                "-M",
                modules.to_str().unwrap(),
                "--policy",
                policy.to_str().unwrap(),
                "--audit-log",
                log.to_str().unwrap(),
                "-e",
                &format!(
                    "python={}",
                    sandball_e2e::binaries::ansible_python().display()
                ),
            ],
        )
        .run();
    out.assert_no_panic().assert_code(0);

    let r: Value =
        serde_json::from_str(&std::fs::read_to_string(work.join("results.json")).unwrap()).unwrap();
    assert_eq!(r["created"]["changed"], true, "{r}");
    assert_eq!(r["again"]["changed"], false, "{r}");
    assert_eq!(r["again"]["previous"], 8080, "{r}");
    assert_eq!(r["checked"]["changed"], true, "{r}");
    assert_eq!(r["listed"]["changed"], true, "{r}");
    let backup = r["listed"]["backup_file"].as_str().expect("a backup file");
    assert_eq!(
        std::fs::read_to_string(backup).unwrap(),
        "{\n  \"server\": {\n    \"port\": 8080\n  }\n}\n"
    );
    let diff = &r["listed"]["diff"];
    assert!(
        diff["after"].as_str().unwrap().contains("\"ann\""),
        "{diff}"
    );
    assert_eq!(r["removed"]["changed"], true, "{r}");
    assert_eq!(r["removed"]["previous"], 8080, "{r}");
    assert_eq!(r["removed_again"]["changed"], false, "{r}");
    assert_eq!(
        r["through_list"]["msg"], "cannot reach users.first: users is a list, not an object",
        "{r}"
    );
    assert!(
        r["missing"]["msg"]
            .as_str()
            .unwrap()
            .ends_with("none.json does not exist (create: true starts an empty document)"),
        "{r}"
    );
    assert!(
        r["refused"]["msg"]
            .as_str()
            .unwrap()
            .starts_with("failed to validate: rc:1"),
        "{r}"
    );
    assert_eq!(
        r["no_value"]["msg"], "state is present but all of the following are missing: value",
        "{r}"
    );

    // Check mode wrote nothing: server.name never reached the file.
    let file = work.join("app.json");
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "{\n  \"server\": {},\n  \"users\": [\n    \"ann\",\n    \"bob\"\n  ]\n}\n"
    );
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o640);

    // Every run was a sandboxed component, granted read-write on the file alone.
    let text = std::fs::read_to_string(&log).unwrap();
    let runs: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["module"] == "json_key")
        .collect();
    assert_eq!(runs.len(), 10, "{text}");
    for run in &runs {
        assert_eq!(run["kind"], "component", "{run}");
        assert_eq!(run["sandboxed"], true, "{run}");
        let fs = run["grant"]["fs"].as_array().unwrap();
        assert_eq!(fs.len(), 1, "{run}");
        assert!(fs[0]["path"].as_str().unwrap().ends_with(".json"), "{run}");
        // A program only where the task names a validate command, and only that one.
        let exec: Vec<&str> = run["grant"]["exec"]
            .as_array()
            .map(|e| e.iter().filter_map(|g| g["program"].as_str()).collect())
            .unwrap_or_default();
        match run["task"].as_str().unwrap() {
            "a list value, validated, with a backup" => {
                assert!(exec.len() == 1 && exec[0].ends_with("python"), "{run}")
            }
            "a validation that refuses" => assert_eq!(exec, ["/bin/false"], "{run}"),
            _ => assert!(exec.is_empty(), "{run}"),
        }
    }
}

#[test]
fn the_audit_shows_what_a_third_party_component_asks_for() {
    let modules = Binaries::example_component();
    let sb = Sandbox::new();
    let audit = |extra: &[&str]| {
        let mut args = vec![
            "audit",
            "module",
            "json_key",
            "-M",
            modules.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        sb.sandball(args).run()
    };
    // Without a policy: what it asks for, and that nothing is granted.
    let out = audit(&[]);
    out.assert_no_panic().assert_code(0);
    assert!(
        out.stdout.contains("kind:         component (third-party)"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("fs read-write on $path"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("exec $validate[0]"), "{}", out.stdout);
    assert!(
        out.stdout.contains("granted:      nothing unless"),
        "{}",
        out.stdout
    );
    // With the rule: what it requests.
    let policy = sb.write("sandball.toml", POLICY);
    let out = audit(&["--policy", policy.to_str().unwrap()]);
    out.assert_no_panic().assert_code(0);
    assert!(
        out.stdout.contains("granted:      what it requests"),
        "{}",
        out.stdout
    );
}
