//! Where the binaries under test are. A missing binary, module or fixture fails the
//! test with the command that builds it: the end-to-end tests never skip silently.
//!
//! Defaults, relative to the workspace's target dir (`$CARGO_TARGET_DIR` or `target/`):
//! `debug/sandball`, the static shim for this machine's architecture
//! (`<arch>-unknown-linux-musl/debug/sandball-shim`: the one the controller deploys to
//! such nodes), the built-in modules in `wasm32-wasip2/wasm/`, and the misbehaving test
//! components and the example third-party component, both in
//! `components/wasm32-wasip2/release/`, and the wheel in `wheels/dev/`. `SANDBALL_BIN` and `SANDBALL_SHIM` override the
//! two binaries.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The built-in modules the tests use.
pub const BUILT_IN_MODULES: &[&str] = &[
    "ping",
    "file",
    "stat",
    "copy",
    "command",
    "slurp",
    "setup",
    "lineinfile",
];

/// The misbehaving components of `tests/fixtures/`, built by `make test-fixtures`.
pub const FIXTURES: &[&str] = &[
    "denied_reader",
    "trapper",
    "looper",
    "junk_printer",
    "marker_writer",
    "denial_flood",
];

/// The binaries and module directory the tests run.
#[derive(Debug)]
pub struct Binaries {
    /// The controller.
    pub sandball: PathBuf,
    /// The node-side shim (passed to the controller as `SANDBALL_SHIM`): the static
    /// one for this machine.
    pub shim: PathBuf,
    /// The directory the controller finds the built-in modules in.
    pub modules: PathBuf,
}

/// The workspace root (the parent of this crate).
pub fn workspace_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}

/// The shim cache the tests share (`target/e2e-shim-cache`): it is content-addressed,
/// so sharing it is safe, and every module is compiled once per test run instead of
/// once per test (an unoptimised wasmtime takes seconds per module).
pub fn shared_shim_cache() -> PathBuf {
    workspace_root().join("target/e2e-shim-cache")
}

/// The cargo target directory the Makefile builds into.
pub fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => workspace_root().join(dir),
        None => workspace_root().join("target"),
    }
}

/// The Rust targets `make build` builds a static shim for, by the node architecture
/// (`uname -m`) each is for.
pub const STATIC_SHIMS: &[(&str, &str)] = &[
    ("x86_64", "x86_64-unknown-linux-musl"),
    ("aarch64", "aarch64-unknown-linux-musl"),
];

/// Where `make build` puts the static shim built for the Rust target `triple`.
pub fn static_shim(triple: &str) -> PathBuf {
    target_dir()
        .join(triple)
        .join("debug")
        .join("sandball-shim")
}

/// What `file` says `path` is (`make test` installs `file`).
pub fn file_says(path: &Path) -> String {
    let out = std::process::Command::new("file")
        .arg("-b")
        .arg(path)
        .output()
        .expect("run file (`make test` installs it)");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The lowercase hex sha256 of the file `path`.
pub fn sha256(path: &Path) -> String {
    use sha2::Digest;
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    hex::encode(sha2::Sha256::digest(bytes))
}

/// The Python of the ansible-core venv `make test` installs (`$ANSIBLE_BIN_DIR`, else
/// `target/venv/bin`): sandball finds ansible-core's modules through it
/// (`SANDBALL_ANSIBLE_PYTHON`).
pub fn ansible_python() -> PathBuf {
    std::env::var_os("ANSIBLE_BIN_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| target_dir().join("venv/bin"))
        .join("python")
}

/// The release of the reference ansible-core ([`ansible_python`]'s venv: `2.19.14`),
/// from its `release.py`; `None` without one. sandball runs in the tests follow it
/// (`SANDBALL_ANSIBLE_CORE_VERSION`), as they compare with that ansible-playbook.
pub fn reference_core_release() -> Option<&'static str> {
    static RELEASE: OnceLock<Option<String>> = OnceLock::new();
    RELEASE
        .get_or_init(|| {
            let venv = ansible_python().parent()?.parent()?.to_path_buf();
            std::fs::read_dir(venv.join("lib"))
                .ok()?
                .filter_map(Result::ok)
                .find_map(|lib| {
                    let release = lib.path().join("site-packages/ansible/release.py");
                    let text = std::fs::read_to_string(release).ok()?;
                    let line = text
                        .lines()
                        .find(|l| l.trim_start().starts_with("__version__"))?;
                    line.split(['\'', '"']).nth(1).map(str::to_string)
                })
        })
        .as_deref()
}

impl Binaries {
    /// The binaries under test. Panics, saying to run `make build`, when one is missing.
    pub fn get() -> &'static Binaries {
        static FOUND: OnceLock<Result<Binaries, String>> = OnceLock::new();
        match FOUND.get_or_init(Binaries::find) {
            Ok(b) => b,
            Err(why) => panic!("{why}"),
        }
    }

    fn find() -> Result<Binaries, String> {
        let from_env = |var: &str, default: PathBuf| {
            std::env::var_os(var).map(PathBuf::from).unwrap_or(default)
        };
        let debug = target_dir().join("debug");
        let sandball = from_env("SANDBALL_BIN", debug.join("sandball"));
        let own = format!("{}-unknown-linux-musl", std::env::consts::ARCH);
        let shim = from_env("SANDBALL_SHIM", static_shim(&own));
        for (what, path) in [("the controller", &sandball), ("the shim", &shim)] {
            if !path.is_file() {
                return Err(missing(what, path, "make build"));
            }
        }
        // Where the controller looks from its own directory (`layout::builtin_module_dirs`):
        // an installed `<prefix>/lib/sandball/modules`, else the build tree's.
        let prefix = sandball
            .parent()
            .and_then(Path::parent)
            .unwrap_or(Path::new("."))
            .to_path_buf();
        let candidates = [
            prefix.join("lib").join("sandball").join("modules"),
            prefix.join("wasm32-wasip2").join("wasm"),
        ];
        let modules = candidates
            .iter()
            .find(|d| d.join("ping.wasm").is_file())
            .cloned()
            .unwrap_or_else(|| candidates[1].clone());
        for m in BUILT_IN_MODULES {
            let path = modules.join(format!("{m}.wasm"));
            if !path.is_file() {
                return Err(missing(
                    &format!("the built-in module {m}"),
                    &path,
                    "make build",
                ));
            }
        }
        Ok(Binaries {
            sandball,
            shim,
            modules,
        })
    }

    /// The directory holding the test fixture components. Panics, saying to run
    /// `make test-fixtures`, when one is missing.
    pub fn fixtures() -> PathBuf {
        let dir = components_dir();
        for f in FIXTURES {
            let path = dir.join(format!("{f}.wasm"));
            assert!(
                path.is_file(),
                "{}",
                missing(
                    &format!("the test fixture {f}"),
                    &path,
                    "make test-fixtures"
                )
            );
        }
        dir
    }

    /// The directory holding `examples/modules/component`'s `json_key.wasm` (a
    /// third-party module). Panics, saying to run `make example-component`, when it is
    /// missing.
    pub fn example_component() -> PathBuf {
        let dir = components_dir();
        let path = dir.join("json_key.wasm");
        assert!(
            path.is_file(),
            "{}",
            missing(
                "the example component json_key",
                &path,
                "make example-component"
            )
        );
        dir
    }

    /// The directory holding `examples/modules/python`'s `conf_line.wasm` (a Python module
    /// built with componentize-py). Panics, saying to run `make example-python-module`,
    /// when it is missing.
    pub fn example_python_module() -> PathBuf {
        let dir = target_dir().join("components").join("python");
        let path = dir.join("conf_line.wasm");
        assert!(
            path.is_file(),
            "{}",
            missing(
                "the example Python module conf_line",
                &path,
                "make example-python-module"
            )
        );
        dir
    }

    /// The directory holding `examples/modules/js`'s `conf_line.wasm` (a JavaScript
    /// module built with componentize-js). Panics, saying to run `make
    /// example-js-module`, when it is missing.
    pub fn example_js_module() -> PathBuf {
        let dir = target_dir().join("components").join("js");
        let path = dir.join("conf_line.wasm");
        assert!(
            path.is_file(),
            "{}",
            missing(
                "the example JavaScript module conf_line",
                &path,
                "make example-js-module"
            )
        );
        dir
    }
}

/// The wheel `make test-wheel` builds (`make wheel` from the dev profile), in
/// `target/wheels/dev/`. Panics, saying to run `make test-wheel`, when there is not
/// exactly one.
pub fn test_wheel() -> PathBuf {
    let dir = target_dir().join("wheels").join("dev");
    let wheels: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "whl"))
                .collect()
        })
        .unwrap_or_default();
    match wheels.as_slice() {
        [wheel] => wheel.clone(),
        [] => panic!(
            "{}",
            missing("the wheel", &dir.join("sandball-*.whl"), "make test-wheel")
        ),
        more => panic!("more than one wheel in {}: {more:?}", dir.display()),
    }
}

/// ansible-runner, from `make ansible-runner`'s venv (`target/venv-runner`). Panics,
/// saying to run it, when it is missing.
pub fn ansible_runner() -> PathBuf {
    runner_venv_tool("ansible-runner")
}

/// A command of `make ansible-runner`'s venv (`target/venv-runner/bin`): ansible-runner,
/// `molecule`, `ansible-builder`, its `python`. Panics, saying to run it, when it is
/// missing.
pub fn runner_venv_tool(name: &str) -> PathBuf {
    let tool = target_dir().join("venv-runner/bin").join(name);
    assert!(
        tool.is_file(),
        "{}",
        missing(name, &tool, "make ansible-runner")
    );
    tool
}

/// Where the components built outside the main workspace are (`make test-fixtures`,
/// `make example-component`: one target directory for both).
fn components_dir() -> PathBuf {
    target_dir()
        .join("components")
        .join("wasm32-wasip2")
        .join("release")
}

fn missing(what: &str, path: &Path, make: &str) -> String {
    format!(
        "sandball end-to-end tests: {what} is missing ({} not found); run `{make}` first \
         (`make test` does it)",
        path.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_workspace_root_holds_the_makefile() {
        assert!(workspace_root().join("Makefile").is_file());
        assert!(target_dir().ends_with("target") || std::env::var_os("CARGO_TARGET_DIR").is_some());
    }

    #[test]
    fn missing_binaries_name_the_build_command() {
        let msg = missing("the shim", Path::new("/x/sandball-shim"), "make build");
        assert!(
            msg.contains("/x/sandball-shim") && msg.contains("`make build`"),
            "{msg}"
        );
    }
}
