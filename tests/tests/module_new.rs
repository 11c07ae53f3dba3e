//! `sandball module new --lang rust|python|js NAME`: the directory it makes builds its
//! module with `make` and passes its own `make test` (the module run through sandball,
//! granted, again unchanged, in check mode with a diff, and denied). The language's
//! tools are the ones `make test` already installed (cargo's target directory of the
//! components, `target/venv-componentize`, `target/npm`), given to the scaffold's
//! Makefile through its variables, so nothing is downloaded or compiled twice. The Rust
//! module is built with the example component's `Cargo.lock` (it depends on the guest
//! SDK alone, as the example does): a lock resolved afresh takes the newest patch
//! releases, and a `syn` newer by one would compile every dependency again.

use sandball_e2e::{Binaries, Sandbox};
use std::path::PathBuf;
use std::process::Command;

/// What each language's Makefile is given: the tools already built or installed.
fn tool_vars(lang: &str) -> Vec<String> {
    let target = sandball_e2e::binaries::target_dir();
    let (var, path): (&str, PathBuf) = match lang {
        "rust" => ("CARGO_TARGET_DIR", target.join("components")),
        "python" => (
            "COMPONENTIZE_PY",
            target.join("venv-componentize/bin/componentize-py"),
        ),
        _ => ("JS_TOOLS", target.join("npm/node_modules")),
    };
    assert!(
        path.exists(),
        "{} is missing: run `make test-deps` (make example-component example-python-module example-js-module)",
        path.display()
    );
    vec![format!("{var}={}", path.display())]
}

fn scaffold_builds_and_passes_its_test(lang: &str) {
    let bins = Binaries::get();
    let sb = Sandbox::new();
    let name = format!("hello_{lang}");
    let made = sb.sandball(["module", "new", "--lang", lang, &name]).run();
    made.assert_code(0);
    let dir = sb.path().join(&name);
    for file in ["manifest.json", "test.yml", "Makefile", ".gitignore"] {
        assert!(dir.join(file).is_file(), "{file}: {}", made.stdout);
    }
    if lang == "rust" {
        let lock =
            sandball_e2e::binaries::workspace_root().join("examples/modules/component/Cargo.lock");
        std::fs::copy(&lock, dir.join("Cargo.lock")).unwrap();
    }
    // A second time, nothing is overwritten.
    sb.sandball(["module", "new", "--lang", lang, &name])
        .run()
        .assert_code(1);

    let make = |target: &str| {
        let out = Command::new("make")
            .arg("--no-print-directory")
            .arg(target)
            .args(tool_vars(lang))
            .arg(format!("SANDBALL={}", bins.sandball.display()))
            .current_dir(&dir)
            .env("SANDBALL_SHIM", &bins.shim)
            .env(
                "SANDBALL_CACHE_DIR",
                sandball_e2e::binaries::workspace_root().join("target/e2e-shim-cache"),
            )
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        let text = format!(
            "make {target} ({lang}): {}\n{}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "{text}");
        text
    };
    make("all");
    assert!(dir.join(format!("{name}.wasm")).is_file());
    let tested = make("test");
    // The playbook's assertions held, the denial among them.
    assert!(tested.contains("All assertions passed"), "{tested}");
    assert!(tested.contains("failed=0"), "{tested}");
    assert!(tested.contains("ignored=1"), "{tested}");
}

#[test]
fn a_rust_module_is_scaffolded_built_and_tested() {
    scaffold_builds_and_passes_its_test("rust");
}

#[test]
fn a_python_module_is_scaffolded_built_and_tested() {
    scaffold_builds_and_passes_its_test("python");
}

#[test]
fn a_javascript_module_is_scaffolded_built_and_tested() {
    scaffold_builds_and_passes_its_test("js");
}
