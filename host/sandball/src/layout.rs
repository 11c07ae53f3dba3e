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

/// `<prefix>/lib/sandball` of the install whose prefix is `prefix` (its executable in
/// `<prefix>/bin`): the built-in modules in `modules/`, a shim per node architecture in
/// `shims/<arch>-linux/`.
pub fn lib_dir_of(prefix: &Path) -> PathBuf {
    prefix.join("lib").join("sandball")
}

/// The directories the built-in module components are in, in search order: the
/// installed `<prefix>/lib/sandball/modules`, then the build tree's
/// `target/wasm32-wasip2/wasm` (for a `sandball` run from `target/<profile>/`); those
/// that exist, else the installed one (which messages then name as searched).
pub fn builtin_module_dirs() -> Vec<PathBuf> {
    let Some(prefix) = exe_dir().and_then(|d| d.parent().map(Path::to_path_buf)) else {
        return Vec::new();
    };
    let installed = lib_dir_of(&prefix).join("modules");
    let candidates = [installed.clone(), prefix.join("wasm32-wasip2").join("wasm")];
    let dirs: Vec<PathBuf> = candidates.into_iter().filter(|d| d.is_dir()).collect();
    if dirs.is_empty() {
        vec![installed]
    } else {
        dirs
    }
}
