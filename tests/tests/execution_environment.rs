//! `packaging/execution-environment.yml`, the definition of sandball's execution
//! environment (the image AWX runs jobs in), through `ansible-builder create` (from
//! PyPI, `make ansible-runner`'s venv): the build context it writes holds the wheel and
//! a Containerfile that installs it, links sandball's aliases and puts them first on
//! the image's `PATH`, ahead of ansible-core's. No container runtime is here to build
//! the image itself (docs/ANSIBLE-RUNNER.md gives the command where there is one).

use sandball_e2e::binaries::{runner_venv_tool, target_dir, workspace_root};
use sandball_e2e::{Output, Sandbox};
use std::process::Command;
use std::time::Duration;

#[test]
fn ansible_builder_creates_a_context_that_installs_the_wheel_with_its_aliases_first() {
    let sb = Sandbox::new();
    // The definition where it is kept, beside a wheel where `make wheel` puts one (the
    // test wheel, `make test-wheel`'s, stands for it).
    let wheel = std::fs::read_dir(target_dir().join("wheels/dev"))
        .expect("no wheel: run `make test-wheel`")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .expect("no wheel: run `make test-wheel`");
    let wheel_name = wheel.file_name().unwrap().to_string_lossy().into_owned();
    let definition =
        std::fs::read_to_string(workspace_root().join("packaging/execution-environment.yml"))
            .unwrap();
    let file = sb.write("packaging/execution-environment.yml", &definition);
    let wheels = sb.dir("target/wheels/release");
    std::fs::copy(&wheel, wheels.join(&wheel_name)).unwrap();

    let context = sb.path().join("context");
    let mut cmd = Command::new(runner_venv_tool("ansible-builder"));
    cmd.arg("create")
        .arg("-f")
        .arg(&file)
        .arg("--context")
        .arg(&context)
        .args(["--output-filename", "Containerfile"])
        .current_dir(sb.path())
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", sb.dir("home"))
        .env("LC_ALL", "C.UTF-8");
    let out = Output::run(cmd, Duration::from_secs(120));
    assert_eq!(out.code, 0, "{out}");
    assert!(!out.stderr.contains("No matches"), "{out}");

    // The wheel, byte for byte.
    let copied = context.join("_build/sandball").join(&wheel_name);
    assert_eq!(
        std::fs::read(&copied).unwrap_or_else(|e| panic!("{}: {e}\n{out}", copied.display())),
        std::fs::read(&wheel).unwrap()
    );
    // ansible-builder's own scripts, which the Containerfile runs.
    for script in ["assemble", "check_ansible", "entrypoint", "pip_install"] {
        assert!(
            context.join("_build/scripts").join(script).is_file(),
            "{script}"
        );
    }
    let containerfile = std::fs::read_to_string(context.join("Containerfile")).unwrap();
    let lines: Vec<&str> = containerfile.lines().collect();
    let at = |needle: &str| {
        lines
            .iter()
            .position(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no {needle:?} in the Containerfile:\n{containerfile}"))
    };
    // ansible-core and ansible-runner from PyPI, in the base stage.
    assert!(
        containerfile
            .contains("ANSIBLE_INSTALL_REFS=\"ansible-core==2.19.14 ansible-runner>=2.4,<2.5\""),
        "{containerfile}"
    );
    // In the final stage: the wheel copied and installed, the aliases linked, then
    // first on PATH; all before the image's entry point.
    let final_stage = at("FROM base AS final");
    let copy = at("COPY _build/sandball/ /tmp/sandball/");
    let install = at("pip install --no-cache-dir /tmp/sandball/sandball-*.whl");
    let aliases = at("sandball install-aliases /opt/sandball/aliases");
    let path = at("ENV PATH=/opt/sandball/aliases:$PATH");
    let entry = at("ENTRYPOINT");
    assert!(
        final_stage < copy && copy < install && install < aliases && aliases < path && path < entry,
        "{containerfile}"
    );
}
