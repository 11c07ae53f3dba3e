//! `sandball inventory` flags beyond the corpus of `inventory.rs`: `--toml` (the same
//! data as `ansible-inventory --list --toml`, compared parsed), the vault flags
//! (encrypted `group_vars` read with `--vault-password-file`), `-e` (seen by
//! `constructed` sources with `use_extra_vars`), no action or two of them (refused as ansible-inventory
//! words it), and what an inventory script that worked wrote to stderr, shown as an
//! error unless `ANSIBLE_INVENTORY_PLUGIN_SCRIPT_STDERR` is false, as ansible-inventory
//! shows it.

use sandball_e2e::Sandbox;
use sandball_e2e::compare::ansible_bin;
use std::path::Path;

/// A TOML file as sorted JSON, parsed by the venv's Python (`tomllib`).
fn toml_as_json(python: &Path, file: &Path) -> String {
    let out = std::process::Command::new(python)
        .args([
            "-c",
            "import json, sys, tomllib; print(json.dumps(tomllib.load(open(sys.argv[1], 'rb')), sort_keys=True))",
        ])
        .arg(file)
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn toml_lists_the_inventory_as_ansible_inventory_does() {
    let sb = Sandbox::new();
    let inv = sb
        .write(
            "hosts.ini",
            "a x=1\n[g]\nb y=2\n[g:vars]\nz=3\n[p:children]\ng\n[all:vars]\nq=1\n",
        )
        .display()
        .to_string();
    let python = ansible_bin("ANSIBLE_BIN_DIR", "venv").join("python");
    for export in [false, true] {
        let mut args = vec!["inventory", "-i", &inv, "--list", "--toml"];
        if export {
            args.push("--export");
        }
        let mine = sb.path().join(format!("mine-{export}.toml"));
        let ours = sb
            .sandball(
                args.iter()
                    .copied()
                    .chain(["--output", mine.to_str().unwrap_or_default()]),
            )
            .run();
        ours.assert_no_panic().assert_code(0);
        let parsed = toml_as_json(&python, &mine);
        let expected = if export {
            r#"{"all": {"vars": {"q": 1}}, "g": {"hosts": {"b": {"y": 2}}, "vars": {"z": 3}}, "p": {"children": ["g"]}, "ungrouped": {"hosts": {"a": {"x": 1}}}}"#
        } else {
            r#"{"g": {"hosts": {"b": {"q": 1, "y": 2, "z": 3}}}, "p": {"children": ["g"]}, "ungrouped": {"hosts": {"a": {"q": 1, "x": 1}}}}"#
        };
        assert_eq!(parsed.trim(), expected);
        // ansible-inventory needs the tomli-w library for TOML: compared when it has it.
        let Some(theirs) = sb.ansible_tool("ansible-inventory", args[1..].iter().copied()) else {
            continue;
        };
        let theirs = theirs.run();
        if theirs.code == 0 {
            let file = sb.write(&format!("theirs-{export}.toml"), &theirs.stdout);
            assert_eq!(parsed, toml_as_json(&python, &file));
        } else {
            eprintln!(
                "ansible-inventory --toml unavailable here: {}",
                theirs.stderr.trim()
            );
        }
    }
}

#[test]
fn vaulted_group_vars_are_read_with_the_vault_flags() {
    let sb = Sandbox::new();
    let inv = sb
        .write("inv/hosts.ini", "[web]\nw1\n")
        .display()
        .to_string();
    let vars = sb.write("inv/group_vars/web.yml", "secret_port: 8443\n");
    let pw = sb.write("pw", "hunter2\n");
    let pw_text = pw.display().to_string();
    sb.sandball([
        "vault",
        "encrypt",
        vars.to_str().unwrap_or_default(),
        "--vault-password-file",
        &pw_text,
    ])
    .run()
    .assert_code(0);
    assert!(
        std::fs::read_to_string(&vars)
            .unwrap_or_default()
            .starts_with("$ANSIBLE_VAULT;")
    );
    let out = sb
        .sandball([
            "inventory",
            "-i",
            &inv,
            "--host",
            "w1",
            "--vault-password-file",
            &pw_text,
            "-e",
            "x=1",
        ])
        .run();
    out.assert_no_panic().assert_code(0);
    out.assert_stdout_has("\"secret_port\": 8443");
    let without = sb.sandball(["inventory", "-i", &inv, "--host", "w1"]).run();
    assert_ne!(without.code, 0, "{without}");
}

#[test]
fn no_action_or_two_are_refused_as_ansible_inventory_words_it() {
    let sb = Sandbox::new();
    let inv = sb.write("hosts.ini", "a\n").display().to_string();
    for args in [
        vec!["-i", inv.as_str()],
        vec!["-i", inv.as_str(), "--list", "--graph"],
    ] {
        let ours = sb
            .sandball(["inventory"].into_iter().chain(args.iter().copied()))
            .run();
        ours.assert_no_panic();
        let Some(theirs) = sb.ansible_tool("ansible-inventory", args.iter().copied()) else {
            continue;
        };
        let theirs = theirs.run();
        assert_eq!(ours.code, theirs.code, "{theirs}\n{ours}");
        assert_eq!(ours.stderr.trim(), theirs.stderr.trim(), "{theirs}\n{ours}");
    }
}

#[test]
fn a_working_scripts_stderr_is_shown_as_an_error_as_in_ansible_inventory() {
    use std::os::unix::fs::PermissionsExt;
    let sb = Sandbox::new();
    let script = sb.write(
        "inv.sh",
        "#!/bin/sh\necho 'this is stderr' >&2\necho '{\"g\": {\"hosts\": [\"h1\"]}, \"_meta\": {\"hostvars\": {}}}'\n",
    );
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))
        .expect("the script is made executable");
    let script = script.display().to_string();
    let errors = |stderr: &str| -> Vec<String> {
        stderr
            .lines()
            .filter(|l| l.starts_with("[ERROR]"))
            .map(str::to_string)
            .collect()
    };
    for (show, expected) in [("", 1), ("false", 0)] {
        let args = ["-i", script.as_str(), "--list"];
        let mut ours = sb.sandball(["inventory"].into_iter().chain(args));
        if !show.is_empty() {
            ours = ours.env("ANSIBLE_INVENTORY_PLUGIN_SCRIPT_STDERR", show);
        }
        let ours = ours.run();
        ours.assert_no_panic().assert_code(0);
        assert_eq!(errors(&ours.stderr).len(), expected, "{ours}");
        let Some(mut theirs) = sb.ansible_tool("ansible-inventory", args) else {
            continue;
        };
        if !show.is_empty() {
            theirs = theirs.env("ANSIBLE_INVENTORY_PLUGIN_SCRIPT_STDERR", show);
        }
        let theirs = theirs.run();
        assert_eq!(
            errors(&ours.stderr),
            errors(&theirs.stderr),
            "{theirs}\n{ours}"
        );
    }
}

#[test]
fn extra_vars_reach_constructed_with_use_extra_vars_as_in_ansible_inventory() {
    let sb = Sandbox::new();
    let config = sb
        .write(
            "extra_vars_constructed.yml",
            "plugin: ansible.builtin.constructed\nstrict: true\nuse_extra_vars: True\ncompose:\n  example: \" 'hello' +  from_extras\"\n",
        )
        .display()
        .to_string();
    let args = [
        "-i",
        "testhost,",
        "-i",
        config.as_str(),
        "--list",
        "-e",
        "from_extras=hey ",
    ];
    let ours = sb.sandball(["inventory"].into_iter().chain(args)).run();
    ours.assert_no_panic().assert_code(0);
    // The composed value (ansible-inventory marks it unsafe: it comes of an extra var),
    // and the extra var itself among the host's variables.
    let hostvars = |text: &str| {
        let list: serde_json::Value = serde_json::from_str(text).unwrap_or_default();
        let host = &list["_meta"]["hostvars"]["testhost"];
        let example = host["example"]
            .get("__ansible_unsafe")
            .unwrap_or(&host["example"])
            .clone();
        (example, host["from_extras"].clone())
    };
    assert_eq!(
        hostvars(&ours.stdout),
        (serde_json::json!("hellohey"), serde_json::json!("hey")),
        "{ours}"
    );
    if let Some(theirs) = sb.ansible_tool("ansible-inventory", args) {
        let theirs = theirs.run();
        assert_eq!(
            hostvars(&ours.stdout),
            hostvars(&theirs.stdout),
            "{theirs}\n{ours}"
        );
    }
}
