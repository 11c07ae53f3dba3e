//! Expansion of the `path` argument type: environment variables and a leading `~`
//! (`sandball_pycompat::expand`), and relative paths made absolute where the module
//! could not change into its working directory.

/// Where relative paths are made absolute from, when a module could not change into
/// its working directory (see [`relative_from`]).
static RELATIVE_BASE: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Makes relative `path` arguments absolute from `dir` from now on: under WASI a
/// module can change only into a directory its grant opens, and a grant for `sub/file`
/// opens `sub` alone, so such a path must not be left to resolve from `/`.
pub fn relative_from(dir: String) {
    let _ = RELATIVE_BASE.set(dir);
}

/// A `path` argument: [`sandball_pycompat::expand::expand_path`], then made absolute from the working directory
/// when the module could not change into it ([`relative_from`]).
pub(crate) fn path_argument(path: &str, env: &dyn Fn(&str) -> Option<String>) -> String {
    let expanded = sandball_pycompat::expand::expand_path(path, env);
    match RELATIVE_BASE.get() {
        Some(base) if !expanded.is_empty() && !expanded.starts_with(['/', '~']) => {
            let joined = format!("{}/{expanded}", base.trim_end_matches('/'));
            // A path climbing out of the working directory (`../../shared/x`) is
            // normalised as its grant is (`..` taken lexically), so it names the place
            // the grant opens.
            if expanded.split('/').any(|part| part == "..") {
                sandball_wire::capability::normalize_path(&joined)
            } else {
                joined
            }
        }
        _ => expanded,
    }
}
