//! Path handling shared by grants, host calls and the cache: the shim user's home
//! directory, where `~` and relative paths start ([`Places`]), and lexical
//! normalisation.

use sandball_wire::capability::{NODE_TMPDIR, is_node_place};
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::{Component, Path, PathBuf};

/// The home directory of the user the shim runs as: `$HOME`, else the password
/// database entry of the real user id, else `/`.
pub fn home_dir() -> PathBuf {
    if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        return PathBuf::from(home);
    }
    crate::host::users::home_of(rustix::process::getuid().as_raw())
        .map(|h| PathBuf::from(OsString::from_vec(h)))
        .unwrap_or_else(|| PathBuf::from("/"))
}

/// Makes `path` absolute: `~` and `~/…` are the home directory, other relative
/// paths are taken relative to it. Nothing else changes: `..` and symlinks are left
/// for whoever resolves the path.
pub fn from_home(path: &str, home: &Path) -> PathBuf {
    if path == "~" {
        home.to_path_buf()
    } else if let Some(rest) = path.strip_prefix("~/") {
        home.join(rest)
    } else {
        home.join(path)
    }
}

/// Where paths that are not absolute start on the node: `~` and `~/…` at the home
/// directory of the user the shim runs as, other relative paths at the shim's working
/// directory, which is the connection's (the home directory over SSH, the directory
/// the controller runs in on the local connection), as they would for a module
/// Ansible runs there.
#[derive(Clone, Debug, PartialEq)]
pub struct Places {
    pub home: PathBuf,
    pub cwd: PathBuf,
}

impl Places {
    /// The shim process's: its user's home and its working directory (the home
    /// directory when that cannot be read).
    pub fn of_process() -> Places {
        let home = home_dir();
        let cwd = std::env::current_dir().unwrap_or_else(|_| home.clone());
        Places { home, cwd }
    }

    /// Home and working directory both `dir`.
    pub fn at(dir: &Path) -> Places {
        Places {
            home: dir.to_path_buf(),
            cwd: dir.to_path_buf(),
        }
    }

    /// `path` made absolute (`..` and symlinks left for whoever resolves it); a node
    /// place ([`NODE_TMPDIR`]) is where it is on this node.
    pub fn join(&self, path: &str) -> PathBuf {
        if is_node_place(path) {
            let rest = path.trim_start_matches(NODE_TMPDIR).trim_start_matches('/');
            node_tmpdir(self).join(rest)
        } else if path == "~" || path.starts_with("~/") {
            from_home(path, &self.home)
        } else {
            self.cwd.join(path)
        }
    }

    /// [`Places::join`], normalised lexically.
    pub fn absolute(&self, path: &str) -> PathBuf {
        normalize(&self.join(path))
    }
}

/// The node's temporary directory ([`NODE_TMPDIR`]), as Python's
/// `tempfile.gettempdir()` picks it: the first of `$TMPDIR`, `$TEMP`, `$TMP` (as the
/// shim started with them; relative ones from the working directory), `/tmp`,
/// `/var/tmp`, `/usr/tmp` and the working directory that is a directory the shim's
/// user may write in and search; the working directory when none is. Found once per
/// process.
pub fn node_tmpdir(places: &Places) -> PathBuf {
    static FOUND: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    FOUND
        .get_or_init(|| {
            let from_env = ["TMPDIR", "TEMP", "TMP"]
                .into_iter()
                .filter_map(crate::environment::original)
                .filter(|v| !v.is_empty())
                .map(|v| places.cwd.join(v));
            let fixed = ["/tmp", "/var/tmp", "/usr/tmp"]
                .into_iter()
                .map(PathBuf::from);
            from_env
                .chain(fixed)
                .map(|d| normalize(&d))
                .find(|d| {
                    d.is_dir()
                        && rustix::fs::access(
                            d.as_path(),
                            rustix::fs::Access::WRITE_OK | rustix::fs::Access::EXEC_OK,
                        )
                        .is_ok()
                })
                .unwrap_or_else(|| places.cwd.clone())
        })
        .clone()
}

/// [`from_home`], normalised lexically.
pub fn absolute(path: &str, home: &Path) -> PathBuf {
    normalize(&from_home(path, home))
}

/// Removes `.` components, resolves `..` against the preceding component and drops
/// trailing slashes, without touching the filesystem. `..` at the root stays at the
/// root.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    if out.as_os_str().is_empty() {
        out.push("/");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tilde_and_relative_paths_are_taken_from_home() {
        let home = Path::new("/home/ann");
        assert_eq!(absolute("~", home), PathBuf::from("/home/ann"));
        assert_eq!(absolute("~/x/y", home), PathBuf::from("/home/ann/x/y"));
        assert_eq!(
            absolute("notes.txt", home),
            PathBuf::from("/home/ann/notes.txt")
        );
        assert_eq!(absolute("/etc/hosts", home), PathBuf::from("/etc/hosts"));
        assert_eq!(from_home("a/../b", home), PathBuf::from("/home/ann/a/../b"));
    }

    #[test]
    fn normalisation_is_lexical() {
        assert_eq!(normalize(Path::new("/a/./b/../c/")), PathBuf::from("/a/c"));
        assert_eq!(normalize(Path::new("/../../etc")), PathBuf::from("/etc"));
        assert_eq!(normalize(Path::new("/")), PathBuf::from("/"));
    }
}
