//! The wheel (`make test-wheel`: what `make wheel` builds, from the dev profile)
//! installed with pip into a fresh venv, and sandball run from there with nothing of the
//! checkout on `PATH` or in the environment: `--version` names the installed modules
//! and shim and the ansible-core of the venv, a playbook runs a built-in component and a
//! legacy module, and `audit` reads the installed components. Then the drop-in names
//! `install-aliases` links, whose `--version` tools parse.

use sandball_e2e::binaries::{ansible_python, test_wheel};
use sandball_e2e::{Binaries, Output, Sandbox};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(240);

/// A command whose output must say it succeeded.
fn ok(cmd: Command) -> Output {
    let out = Output::run(cmd, LIMIT);
    assert_eq!(out.code, 0, "{out}");
    out
}

/// A fresh venv in the sandbox with the test wheel installed, pip reading nothing but
/// the wheel. The reference ansible-core (`make ansible`'s venv) is made importable in
/// it by a `.pth` file naming that venv's site-packages, as if it were installed there
/// too, without fetching it again.
fn venv_with_wheel(sb: &Sandbox) -> PathBuf {
    let venv = sb.path().join("venv");
    let mut make = Command::new("python3");
    make.args(["-m", "venv"]).arg(&venv);
    ok(make);
    let mut pip = Command::new(venv.join("bin/pip"));
    pip.args([
        "install",
        "--no-index",
        "--quiet",
        "--disable-pip-version-check",
    ])
    .arg(test_wheel());
    ok(pip);
    let site = |python: &Path, code: &str| {
        let mut cmd = Command::new(python);
        cmd.args(["-c", code]);
        PathBuf::from(ok(cmd).stdout.trim())
    };
    let reference = site(
        &ansible_python(),
        "import ansible, os; print(os.path.dirname(os.path.dirname(ansible.__file__)))",
    );
    let own = site(
        &venv.join("bin/python3"),
        "import sysconfig; print(sysconfig.get_paths()['purelib'])",
    );
    std::fs::write(
        own.join("reference-ansible-core.pth"),
        format!("{}\n", reference.display()),
    )
    .unwrap();
    venv
}

/// The installed `sandball ARGS…`, in the sandbox, with an environment of its own: a
/// `PATH` of the system's directories alone (as a pipx install leaves the venv off it)
/// and a `HOME`, so the shim's cache, in the sandbox.
fn installed(sb: &Sandbox, venv: &Path, args: &[&str]) -> Output {
    let mut cmd = Command::new(venv.join("bin/sandball"));
    cmd.args(args)
        .current_dir(sb.path())
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", sb.dir("home"))
        .env("NO_COLOR", "1");
    Output::run(cmd, LIMIT)
}

/// The value of a `  key = value` line of `--version`.
fn field<'a>(out: &'a Output, key: &str) -> &'a str {
    let prefix = format!("  {key} = ");
    out.stdout
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("no {key} line:\n{out}"))
}

#[test]
fn the_installed_wheel_runs_playbooks_legacy_modules_and_audits_with_no_checkout() {
    let sb = Sandbox::new();
    let venv = venv_with_wheel(&sb);
    let lib = venv.join("lib/sandball");
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x86_64",
        "aarch64" => "aarch64",
        other => panic!("no shim target for {other} in this test"),
    };

    let version = installed(&sb, &venv, &["--version"]);
    assert_eq!(version.code, 0, "{version}");
    let first = version.stdout.lines().next().unwrap_or_default();
    assert!(
        first.starts_with(&format!("sandball {} [core ", env!("CARGO_PKG_VERSION"))),
        "{version}"
    );
    let shipped = std::fs::read_dir(lib.join("modules")).unwrap().count();
    assert!(shipped > 0, "no modules in {}", lib.display());
    assert_eq!(
        field(&version, "built-in modules"),
        format!("{shipped} components"),
        "{version}"
    );
    // Every shim the wheel carries, each by the node it is for, read from its ELF
    // header: the static ones `make build` makes for aarch64 and x86_64.
    let shim = |a: &str| lib.join(format!("shims/{a}-linux/sandball-shim"));
    assert_eq!(
        field(&version, "shims"),
        format!(
            "Linux aarch64 ({}), Linux x86_64 ({})",
            shim("aarch64").display(),
            shim("x86_64").display()
        ),
        "{version}"
    );
    assert!(shim(arch).is_file(), "{version}");
    assert!(
        field(&version, "ansible-core for legacy modules").ends_with(&format!(
            "(the Python of the venv sandball is in, {})",
            venv.join("bin/python3").display()
        )),
        "{version}"
    );
    assert_eq!(
        field(&version, "executable location"),
        venv.join("bin/sandball").display().to_string(),
        "{version}"
    );

    let work = sb.dir("work");
    sb.write(
        "inventory.ini",
        &format!(
            "localhost ansible_connection=local ansible_python_interpreter={}\n",
            venv.join("bin/python3").display()
        ),
    );
    sb.write(
        "site.yml",
        &format!(
            r#"- hosts: localhost
  gather_facts: false
  tasks:
    - name: a built-in component
      copy: {{content: "installed\n", dest: "{work}/out.txt"}}
    - name: a legacy module
      ping: {{data: from-ansible-core}}
      vars: {{sandball_legacy_modules: [ping]}}
      register: pong
    - assert: {{that: pong.ping == 'from-ansible-core'}}
"#,
            work = work.display()
        ),
    );
    let run = installed(&sb, &venv, &["playbook", "-i", "inventory.ini", "site.yml"]);
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(
        std::fs::read_to_string(work.join("out.txt")).unwrap(),
        "installed\n"
    );
    assert!(
        run.stdout
            .contains("localhost                  : ok=3    changed=1"),
        "{run}"
    );
    // ansible-core's ping ran (the warning at the end names the legacy modules that did).
    assert!(
        run.stderr
            .contains("legacy (non-component) modules ran unsandboxed, with all the rights of the remote user: ping ("),
        "{run}"
    );

    let audit = installed(&sb, &venv, &["audit", "module", "copy", "--json"]);
    assert_eq!(audit.code, 0, "{audit}");
    let report: serde_json::Value = serde_json::from_str(&audit.stdout).unwrap();
    assert_eq!(report["builtin"], true, "{audit}");
    assert_eq!(
        report["path"],
        lib.join("modules/copy.wasm").display().to_string(),
        "{audit}"
    );
    let plan = installed(
        &sb,
        &venv,
        &["audit", "playbook", "-i", "inventory.ini", "site.yml"],
    );
    assert_eq!(plan.code, 0, "{plan}");
    assert!(plan.stdout.contains("a built-in component"), "{plan}");
}

/// The first line of `--version` as ansible-compat reads it from `ansible --version`
/// (its `parse_ansible_version`, which Molecule and ansible-lint go through): the
/// version inside `[core …]`.
fn compat_version(stdout: &str) -> Option<String> {
    let re = regex::Regex::new(r"(?m)^ansible \[(?:core|base) (?P<version>[^\]]+)\]").unwrap();
    re.captures(stdout).map(|c| c["version"].to_string())
}

#[test]
fn install_aliases_links_ansibles_command_names_whose_version_tools_parse() {
    let sb = Sandbox::new();
    let dir = sb.path().join("aliases");
    let out = sb
        .sandball([OsStr::new("install-aliases"), dir.as_os_str()])
        .run();
    assert_eq!(out.code, 0, "{out}");
    let names = [
        "ansible-playbook",
        "ansible",
        "ansible-inventory",
        "ansible-vault",
        "ansible-config",
        "ansible-doc",
    ];
    let sandball = std::fs::canonicalize(&Binaries::get().sandball).unwrap();
    for name in names {
        let link = dir.join(name);
        assert_eq!(std::fs::read_link(&link).unwrap(), sandball, "{name}");
        let mut cmd = Command::new(&link);
        cmd.arg("--version");
        let version = ok(cmd);
        let first = version.stdout.lines().next().unwrap_or_default();
        let shape = regex::Regex::new(&format!(
            r"^{name} \[core (\d+\.\d+\.\d+)\] \(sandball {}\)$",
            regex::escape(env!("CARGO_PKG_VERSION"))
        ))
        .unwrap();
        assert!(shape.is_match(first), "{version}");
    }
    // ansible-compat's reading of `ansible --version`, and the release it finds at
    // least its minimum (2.16); sandball follows the reference's release, finding it.
    let mut cmd = Command::new(dir.join("ansible"));
    cmd.arg("--version")
        .env("SANDBALL_ANSIBLE_PYTHON", ansible_python());
    let found = compat_version(&ok(cmd).stdout).expect("ansible-compat reads no version");
    let release: Vec<u32> = found.split('.').map(|p| p.parse().unwrap()).collect();
    assert!(release[..2] >= [2, 16][..], "{found}");
    // ansible-core's own first line has the same shape, for the same release series.
    if let Some(reference) = sb.ansible_tool("ansible", ["--version"]) {
        let reference = reference.run();
        let theirs = compat_version(&reference.stdout).expect("ansible-core's own line");
        assert_eq!(
            theirs.split('.').take(2).collect::<Vec<_>>(),
            found.split('.').take(2).collect::<Vec<_>>(),
            "{reference}"
        );
    }
    // The playbook command runs under its Ansible name.
    sb.write(
        "site.yml",
        "- hosts: localhost\n  gather_facts: false\n  tasks:\n    - debug: {msg: drop-in}\n",
    );
    let mut play = Command::new(dir.join("ansible-playbook"));
    play.arg("site.yml")
        .current_dir(sb.path())
        .env("SANDBALL_SHIM", &Binaries::get().shim)
        .env(
            "SANDBALL_CACHE_DIR",
            sandball_e2e::binaries::workspace_root().join("target/e2e-shim-cache"),
        )
        .env("NO_COLOR", "1");
    let played = ok(play);
    assert!(played.stdout.contains("\"msg\": \"drop-in\""), "{played}");

    // Again: every link is there already, and said so.
    let again = sb
        .sandball([OsStr::new("install-aliases"), dir.as_os_str()])
        .run();
    assert_eq!(again.code, 0, "{again}");
    assert_eq!(
        again.stdout.matches("already runs sandball").count(),
        6,
        "{again}"
    );

    // Another program of one of the names is left alone, and nothing else is linked.
    let other = sb.dir("other");
    std::fs::write(other.join("ansible-doc"), "#!/bin/sh\n").unwrap();
    let refused = sb
        .sandball([OsStr::new("install-aliases"), other.as_os_str()])
        .run();
    assert_eq!(refused.code, 1, "{refused}");
    assert!(
        refused.stderr.contains(&format!(
            "{} exists and is not a link to",
            other.join("ansible-doc").display()
        )),
        "{refused}"
    );
    assert_eq!(std::fs::read_dir(&other).unwrap().count(), 1, "{refused}");
    let forced = sb
        .sandball([
            OsStr::new("install-aliases"),
            other.as_os_str(),
            OsStr::new("--force"),
        ])
        .run();
    assert_eq!(forced.code, 0, "{forced}");
    assert_eq!(
        std::fs::read_link(other.join("ansible-doc")).unwrap(),
        sandball
    );
}
