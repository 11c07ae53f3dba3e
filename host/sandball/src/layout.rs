//! Where sandball's own files are, found from its executable: an installed sandball
//! (`make install`, the wheel) keeps the built-in modules and the shims in
//! `<prefix>/lib/sandball/` beside `<prefix>/bin/sandball`; one run from a build tree
//! (`target/<profile>/sandball`) finds the modules in `target/wasm32-wasip2/wasm/`.
//! docs/INSTALL.md describes the installed layout.

use std::path::{Path, PathBuf};

/// The file name of the node-side runner.
pub const SHIM_NAME: &str = "sandball-shim";

/// The directory holding the running `sandball` (symbolic links resolved, as
/// `/proc/self/exe` has it: a pipx link in `~/.local/bin` leads to its venv).
pub fn exe_dir() -> Option<PathBuf> {
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(Path::to_path_buf))
}

/// `<prefix>/lib/sandball` of the prefix the executable is in (`<prefix>/bin`).
pub fn lib_dir() -> Option<PathBuf> {
    Some(exe_dir()?.parent()?.join("lib").join("sandball"))
}

/// The directories the built-in module components are in, in search order: the
/// installed `<prefix>/lib/sandball/modules`, then the build tree's
/// `target/wasm32-wasip2/wasm` (for a `sandball` run from `target/<profile>/`); those
/// that exist, else the installed one (which messages then name as searched).
pub fn builtin_module_dirs() -> Vec<PathBuf> {
    let Some(prefix) = exe_dir().and_then(|d| d.parent().map(Path::to_path_buf)) else {
        return Vec::new();
    };
    let installed = prefix.join("lib").join("sandball").join("modules");
    let candidates = [installed.clone(), prefix.join("wasm32-wasip2").join("wasm")];
    let dirs: Vec<PathBuf> = candidates.into_iter().filter(|d| d.is_dir()).collect();
    if dirs.is_empty() {
        vec![installed]
    } else {
        dirs
    }
}

/// The installed shim for nodes of architecture `arch` (`uname -m`, normalised:
/// `x86_64`, `aarch64`): `<prefix>/lib/sandball/shims/<arch>-linux/sandball-shim`.
pub fn installed_shim(arch: &str) -> Option<PathBuf> {
    Some(
        lib_dir()?
            .join("shims")
            .join(format!("{arch}-linux"))
            .join(SHIM_NAME),
    )
}

/// The installed shims, as (target, path) — `x86_64-linux` — sorted by target.
pub fn installed_shims() -> Vec<(String, PathBuf)> {
    let Some(dir) = lib_dir().map(|l| l.join("shims")) else {
        return Vec::new();
    };
    shims_in(&dir)
}

/// The shims in a `shims/` directory: `<target>/sandball-shim` files.
fn shims_in(dir: &Path) -> Vec<(String, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut shims: Vec<(String, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let target = e.file_name().to_str()?.to_string();
            let shim = e.path().join(SHIM_NAME);
            shim.is_file().then_some((target, shim))
        })
        .collect();
    shims.sort();
    shims
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shims_directory_lists_each_target_holding_a_shim() {
        let d = tempfile::tempdir().unwrap();
        for target in ["x86_64-linux", "aarch64-linux", "empty-linux"] {
            std::fs::create_dir_all(d.path().join(target)).unwrap();
        }
        for target in ["x86_64-linux", "aarch64-linux"] {
            std::fs::write(d.path().join(target).join(SHIM_NAME), b"\x7fELF").unwrap();
        }
        let found: Vec<String> = shims_in(d.path()).into_iter().map(|(t, _)| t).collect();
        assert_eq!(found, ["aarch64-linux", "x86_64-linux"]);
        assert!(shims_in(&d.path().join("missing")).is_empty());
    }
}
