//! Molecule (from PyPI, `make ansible-runner`'s venv), as role authors test a role: a
//! scenario of the default driver against localhost, `converge`, `idempotence` and
//! `verify`, run by `molecule test` once with ansible-core's ansible-playbook first on
//! `PATH` and once with the `ansible-playbook` that `sandball install-aliases` links.
//! Both pass on an idempotent role; both fail the idempotence step, naming the same
//! task, on a role that changes something every time (Molecule reads the `changed:`
//! lines of ansible-playbook's output for it).
//!
//! Only the `ansible-playbook` link goes first on `PATH`: Molecule also runs
//! `ansible-config dump` and `ansible-galaxy`, which stay ansible-core's (sandball's
//! `ansible-config dump` names settings by their environment variables, where
//! Molecule's ansible-compat reads Ansible's names, `DEFAULT_MODULE_PATH`).

use sandball_e2e::binaries::{ansible_python, runner_venv_tool, workspace_root};
use sandball_e2e::{Binaries, Output, Sandbox};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The scenario: the default driver, unmanaged (nothing to create or destroy), one
/// instance on the local connection, the steps `converge`, `idempotence` and `verify`.
fn molecule_yml(python: &Path) -> String {
    format!(
        r#"driver:
  name: default
  options:
    managed: false
platforms:
  - name: instance
provisioner:
  name: ansible
  inventory:
    hosts:
      all:
        hosts:
          instance:
            ansible_connection: local
            ansible_python_interpreter: {}
  env:
    ANSIBLE_ROLES_PATH: ../../..
scenario:
  test_sequence: [converge, idempotence, verify]
verifier:
  name: ansible
"#,
        python.display()
    )
}

const CONVERGE: &str = r#"- name: converge
  hosts: all
  gather_facts: false
  roles: [greet]
"#;

const VERIFY: &str = r#"- name: verify
  hosts: all
  gather_facts: false
  tasks:
    - name: read it
      slurp: {src: "{{ greet_dest }}"}
      register: greeting
    - name: check it
      assert: {that: "greeting.content | b64decode == 'hello\n'"}
"#;

/// The role `greet` in `dir/greet`, with its scenario; `extra` is added to its tasks.
fn role(sb: &Sandbox, dir: &str, extra: &str) -> PathBuf {
    let dest = sb.path().join(format!("{dir}-out/greeting"));
    sb.dir(&format!("{dir}-out"));
    let role = format!("{dir}/greet");
    sb.write(
        &format!("{role}/tasks/main.yml"),
        &format!(
            "- name: write the greeting\n  copy: {{content: \"hello\\n\", dest: \"{{{{ greet_dest }}}}\"}}\n{extra}"
        ),
    );
    sb.write(
        &format!("{role}/defaults/main.yml"),
        &format!("greet_dest: {}\n", dest.display()),
    );
    sb.write(
        &format!("{role}/molecule/default/molecule.yml"),
        &molecule_yml(&ansible_python()),
    );
    sb.write(&format!("{role}/molecule/default/converge.yml"), CONVERGE);
    sb.write(
        &format!("{role}/molecule/default/verify.yml"),
        &VERIFY.replace("{{ greet_dest }}", &dest.display().to_string()),
    );
    sb.path().join(role)
}

/// The `PATH` of a run: `path_first`, then Molecule's venv (its ansible-core's
/// `ansible-galaxy`, which Molecule also runs and sandball does not replace).
fn search_path(path_first: &Path) -> String {
    let venv = runner_venv_tool("molecule");
    let venv_bin = venv.parent().unwrap_or(Path::new("/"));
    format!(
        "{}:{}:/usr/bin:/bin",
        path_first.display(),
        venv_bin.display()
    )
}

/// `molecule test` in the role's directory, `path_first` first on `PATH`.
fn molecule_test(sb: &Sandbox, role: &Path, path_first: &Path) -> Output {
    let bins = Binaries::get();
    let mut cmd = Command::new(runner_venv_tool("molecule"));
    cmd.arg("test")
        .current_dir(role)
        .env_clear()
        .env("PATH", search_path(path_first))
        .env("HOME", sb.dir("home"))
        .env("LC_ALL", "C.UTF-8")
        .env("NO_COLOR", "1")
        .env("ANSIBLE_NOCOLOR", "1")
        .env("ANSIBLE_HOME", sb.path().join("ansible-home"))
        .env("ANSIBLE_LOCAL_TEMP", sb.path().join("ansible-local"))
        .env("SANDBALL_SHIM", &bins.shim)
        .env(
            "SANDBALL_CACHE_DIR",
            workspace_root().join("target/e2e-shim-cache"),
        )
        .env("SANDBALL_ANSIBLE_PYTHON", ansible_python());
    Output::run(cmd, Duration::from_secs(300))
}

/// The steps Molecule says it ran, and how each ended (`converge: Executed:
/// Successful`), from its details at the end.
fn steps(out: &Output) -> Vec<String> {
    let re = regex::Regex::new(r"(?m)^default (?:➜|>) (\w+): (.*)$").unwrap();
    let text = format!("{}{}", out.stdout, out.stderr);
    re.captures_iter(&text)
        .map(|c| format!("{}: {}", &c[1], c[2].trim()))
        .collect()
}

#[test]
fn converge_idempotence_and_verify_pass_through_sandball_as_ansible_playbook() {
    let Some(reference) = std::env::var_os("ANSIBLE_BIN_DIR").map(PathBuf::from) else {
        panic!("ANSIBLE_BIN_DIR is unset: `make test` sets it to ansible-core's venv");
    };
    let sb = Sandbox::new();
    let all_aliases = sb.path().join("aliases");
    let linked = sb
        .sandball([
            std::ffi::OsStr::new("install-aliases"),
            all_aliases.as_os_str(),
        ])
        .run();
    assert_eq!(linked.code, 0, "{linked}");
    let aliases = sb.dir("playbook-alias");
    std::os::unix::fs::symlink(
        all_aliases.join("ansible-playbook"),
        aliases.join("ansible-playbook"),
    )
    .unwrap();
    // Molecule runs the `ansible-playbook` its `PATH` finds first: sandball's.
    let mut which = Command::new("/bin/sh");
    which
        .args(["-c", "command -v ansible-playbook"])
        .env_clear()
        .env("PATH", search_path(&aliases));
    let found = Output::run(which, Duration::from_secs(10));
    assert_eq!(
        found.stdout.trim(),
        aliases.join("ansible-playbook").display().to_string()
    );

    let ours = molecule_test(&sb, &role(&sb, "ours", ""), &aliases);
    let theirs = molecule_test(&sb, &role(&sb, "theirs", ""), &reference);
    assert_eq!(theirs.code, 0, "{theirs}");
    assert_eq!(ours.code, 0, "{ours}");
    let done = [
        "converge: Executed: Successful",
        "idempotence: Executed: Successful",
        "verify: Executed: Successful",
    ];
    for step in done {
        assert!(steps(&theirs).iter().any(|s| s == step), "{theirs}");
        assert!(steps(&ours).iter().any(|s| s == step), "{ours}");
    }
    assert_eq!(
        std::fs::read_to_string(sb.path().join("ours-out/greeting")).unwrap(),
        "hello\n"
    );

    // A task that changes something on every run: idempotence fails, naming it.
    let changing = "- name: always changes\n  command: /bin/true\n";
    let ours = molecule_test(&sb, &role(&sb, "ours-changing", changing), &aliases);
    let theirs = molecule_test(&sb, &role(&sb, "theirs-changing", changing), &reference);
    assert_ne!(theirs.code, 0, "{theirs}");
    assert_eq!(ours.code, theirs.code, "{ours}");
    for out in [&ours, &theirs] {
        let text = format!("{}{}", out.stdout, out.stderr);
        assert!(
            text.contains("Idempotence test failed because of the following tasks"),
            "{out}"
        );
        assert!(text.contains("always changes"), "{out}");
    }
}
