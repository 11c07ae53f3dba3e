//! Ansible Vault, interoperable both ways with ansible-vault: files and `!vault` values
//! ansible-vault made are read by sandball (password file, executable password file,
//! `--vault-id label@file`), files and strings sandball made are read by ansible-vault
//! and ansible-playbook; a missing or wrong password is an error naming the file.

use sandball_e2e::Sandbox;
use std::path::PathBuf;
use std::process::Command;

fn ansible_vault() -> Option<PathBuf> {
    let dir = std::env::var_os("ANSIBLE_BIN_DIR")?;
    Some(PathBuf::from(dir).join("ansible-vault"))
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().expect("runs");
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn vault_files_and_values_interoperate_with_ansible_vault() {
    let Some(av) = ansible_vault() else {
        eprintln!("skipping: ANSIBLE_BIN_DIR is unset");
        return;
    };
    let sb = Sandbox::new();
    sb.inventory(&["alpha"]);
    let pw = sb.write("pw.txt", "correct horse\n");
    let script = sb.write("pw.sh", "#!/bin/sh\necho 'correct horse'\n");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    // ansible-vault makes, sandball reads.
    let vars = sb.write("group_vars/all.yml", "from_file: s3cret\n");
    run(Command::new(&av)
        .args(["encrypt", "--vault-password-file"])
        .arg(&pw)
        .arg(&vars));
    let value = run(Command::new(&av)
        .args([
            "encrypt_string",
            "inline-secret",
            "--name",
            "inline",
            "--vault-password-file",
        ])
        .arg(&pw));
    let indented: String = value.lines().map(|l| format!("    {l}\n")).collect();
    let blob = sb.write("files/blob.txt", "file secret\n");
    run(Command::new(&av)
        .args(["encrypt", "--vault-password-file"])
        .arg(&pw)
        .arg(&blob));
    let pb = sb.write(
        "play.yml",
        &format!("- hosts: all\n  gather_facts: false\n  vars:\n{indented}    shown: \"{{{{ from_file }}}} {{{{ inline }}}} {{{{ lookup('unvault', 'blob.txt') | trim }}}}\"\n  tasks:\n    - name: show\n      debug: {{msg: \"{{{{ shown }}}}\"}}\n    - name: keep\n      copy: {{content: \"{{{{ shown }}}}\", dest: \"{{{{ work }}}}/shown\"}}\n"),
    );
    let work = sb.dir("work");
    for flag in [
        vec![
            "--vault-password-file".to_string(),
            pw.display().to_string(),
        ],
        vec![
            "--vault-password-file".to_string(),
            script.display().to_string(),
        ],
        vec!["--vault-id".to_string(), format!("dev@{}", pw.display())],
    ] {
        let flags: Vec<&str> = flag.iter().map(String::as_str).collect();
        let out = sb.play(&pb, &work, &flags).run();
        out.assert_no_panic().assert_code(0);
        // Decrypted, used, and never shown.
        assert_eq!(
            std::fs::read_to_string(work.join("shown")).unwrap_or_default(),
            "s3cret inline-secret file secret",
            "{out}"
        );
        out.assert_stdout_has("\"msg\": \"******** ******** ********\"");
        let _ = std::fs::remove_file(work.join("shown"));
    }
    let none = sb.play(&pb, &work, &[]).run();
    none.assert_no_panic();
    assert_ne!(none.code, 0, "{none}");
    none.assert_stderr_has("Attempting to decrypt but no vault secrets found");
    let wrong = sb.write("wrong.txt", "nope\n");
    let wrong_run = sb
        .play(
            &pb,
            &work,
            &["--vault-password-file", &wrong.display().to_string()],
        )
        .run();
    assert_ne!(wrong_run.code, 0, "{wrong_run}");
    assert!(!wrong_run.stdout.contains("s3cret") && !wrong_run.stderr.contains("s3cret"));

    // sandball makes, ansible-vault and ansible-playbook read.
    let mine = sb.write("mine.yml", "made_by: sandball\n");
    let pw_flag = pw.display().to_string();
    let mine_flag = mine.display().to_string();
    sb.sandball([
        "vault",
        "encrypt",
        mine_flag.as_str(),
        "--vault-password-file",
        pw_flag.as_str(),
    ])
    .run()
    .assert_code(0);
    assert!(
        std::fs::read_to_string(&mine)
            .unwrap()
            .starts_with("$ANSIBLE_VAULT;1.1;AES256")
    );
    let viewed = run(Command::new(&av)
        .args(["view", "--vault-password-file"])
        .arg(&pw)
        .arg(&mine));
    assert_eq!(viewed, "made_by: sandball\n");
    let string = sb
        .sandball([
            "vault",
            "encrypt_string",
            "from-sandball",
            "--name",
            "mine",
            "--vault-password-file",
            pw_flag.as_str(),
        ])
        .run();
    string.assert_code(0);
    let indented: String = string
        .stdout
        .lines()
        .map(|l| format!("    {l}\n"))
        .collect();
    let theirs_pb = sb.write(
        "theirs.yml",
        &format!("- hosts: all\n  gather_facts: false\n  vars:\n{indented}  vars_files: [mine.yml]\n  tasks:\n    - name: show\n      debug: {{msg: \"{{{{ mine }}}} {{{{ made_by }}}}\"}}\n"),
    );
    if let Some(theirs) = sb.ansible_play(
        &theirs_pb,
        &work,
        &["--vault-password-file", pw_flag.as_str()],
    ) {
        let theirs = theirs.run();
        assert_eq!(theirs.code, 0, "{theirs}");
        theirs.assert_stdout_has("\"msg\": \"from-sandball sandball\"");
    }
    let ours = sb
        .play(
            &theirs_pb,
            &work,
            &["--vault-password-file", pw_flag.as_str()],
        )
        .run();
    ours.assert_code(0);
    // sandball never shows what the vault decrypted (ansible-playbook does).
    ours.assert_stdout_has("\"msg\": \"******** ********\"");
}

#[test]
fn decrypted_values_are_used_but_never_shown() {
    let sb = Sandbox::new();
    sb.inventory(&["localhost"]);
    let work = sb.dir("work");
    let pw = sb.write("pw", "s3cret-pass\n");
    let pw_flag = pw.display().to_string();
    let secret = sb
        .sandball([
            "vault",
            "encrypt_string",
            "tr0ub4dor&3",
            "--name",
            "db_password",
            "--vault-password-file",
            pw_flag.as_str(),
        ])
        .run();
    secret.assert_code(0);
    let indented: String = secret
        .stdout
        .lines()
        .map(|l| format!("    {l}\n"))
        .collect();
    let vars = sb.write("secrets.yml", "api_token: tok-9f8e7d6c\n");
    sb.sandball([
        "vault",
        "encrypt",
        vars.to_str().unwrap_or_default(),
        "--vault-password-file",
        pw_flag.as_str(),
    ])
    .run()
    .assert_code(0);
    let pb = sb.write(
        "play.yml",
        &format!(
            "- hosts: all\n  gather_facts: false\n  vars:\n{indented}  vars_files: [secrets.yml]\n  tasks:\n    - name: shown\n      debug: {{msg: \"db {{{{ db_password }}}} api {{{{ api_token }}}}\"}}\n    - name: written\n      copy: {{content: \"{{{{ db_password }}}}/{{{{ api_token }}}}\", dest: \"{{{{ work }}}}/out\"}}\n    - name: failed\n      fail: {{msg: \"bad {{{{ api_token }}}}\"}}\n      ignore_errors: true\n"
        ),
    );
    let log = sb.path().join("audit.jsonl");
    let out = sb
        .play(
            &pb,
            &work,
            &[
                "--vault-password-file",
                pw_flag.as_str(),
                "-v",
                "--audit-log",
                log.to_str().unwrap_or_default(),
            ],
        )
        .run();
    out.assert_no_panic().assert_code(0);
    assert_eq!(
        std::fs::read_to_string(work.join("out")).unwrap_or_default(),
        "tr0ub4dor&3/tok-9f8e7d6c",
        "the values are used: {out}"
    );
    out.assert_stdout_has("\"msg\": \"db ******** api ********\"")
        .assert_stdout_has("bad ********");
    let everything = format!(
        "{}{}{}",
        out.stdout,
        out.stderr,
        std::fs::read_to_string(&log).unwrap_or_default()
    );
    for plain in ["tr0ub4dor&3", "tok-9f8e7d6c"] {
        assert!(!everything.contains(plain), "{plain} shown:\n{out}");
    }
}

#[test]
fn edit_and_create_go_through_the_editor() {
    let sb = Sandbox::new();
    let pw = sb.write("pw", "edit-pass\n");
    let pw_flag = pw.display().to_string();
    let file = sb.write("vars.yml", "answer: old\n");
    let file_flag = file.display().to_string();
    sb.sandball([
        "vault",
        "encrypt",
        &file_flag,
        "--vault-password-file",
        &pw_flag,
    ])
    .run()
    .assert_code(0);
    // The editor is a command with its arguments, given the plain file last.
    let edit = sb
        .sandball([
            "vault",
            "edit",
            &file_flag,
            "--vault-password-file",
            &pw_flag,
        ])
        .env("EDITOR", "sed -i s/old/new/")
        .run();
    edit.assert_no_panic().assert_code(0);
    let text = std::fs::read_to_string(&file).unwrap_or_default();
    assert!(text.starts_with("$ANSIBLE_VAULT;1.1;AES256"), "{text}");
    let view = sb
        .sandball([
            "vault",
            "view",
            &file_flag,
            "--vault-password-file",
            &pw_flag,
        ])
        .run();
    assert_eq!(view.stdout, "answer: new\n", "{view}");
    // An editor that changes nothing leaves the file as it was.
    sb.sandball([
        "vault",
        "edit",
        &file_flag,
        "--vault-password-file",
        &pw_flag,
    ])
    .env("EDITOR", "true")
    .run()
    .assert_code(0);
    assert_eq!(std::fs::read_to_string(&file).unwrap_or_default(), text);
    // A failing editor changes nothing either.
    let failed = sb
        .sandball([
            "vault",
            "edit",
            &file_flag,
            "--vault-password-file",
            &pw_flag,
        ])
        .env("EDITOR", "false")
        .run();
    assert_ne!(failed.code, 0, "{failed}");
    assert_eq!(std::fs::read_to_string(&file).unwrap_or_default(), text);
    let template = sb.write("template", "made: here\n");
    let made = sb.path().join("made.yml");
    let made_flag = made.display().to_string();
    sb.sandball([
        "vault",
        "create",
        &made_flag,
        "--vault-password-file",
        &pw_flag,
    ])
    .env("EDITOR", format!("cp {}", template.display()))
    .run()
    .assert_code(0);
    let again = sb
        .sandball([
            "vault",
            "create",
            &made_flag,
            "--vault-password-file",
            &pw_flag,
        ])
        .env("EDITOR", "true")
        .run();
    assert_ne!(again.code, 0, "{again}");
    again.assert_stderr_has("exists");
    if let Some(av) = ansible_vault() {
        for (f, plain) in [(&file, "answer: new\n"), (&made, "made: here\n")] {
            let viewed = run(Command::new(&av)
                .args(["view", "--vault-password-file"])
                .arg(&pw)
                .arg(f));
            assert_eq!(viewed, plain);
        }
    }
}
