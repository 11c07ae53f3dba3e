//! Listing one directory as Python's `os.walk` does for ansible-core's find: the
//! entries in the order the node's `readdir` gives them, split into directories
//! (symlinks to directories included) and the rest, and each directory's path as the
//! walk names it (`root/name`, through symlinks) beside where the module reads it
//! (symlinks resolved, since WASI follows none to an absolute path).

use sandball_guest_sdk::files::{join, realpath};
use sandball_guest_sdk::host::{self, FileKind, HostError};
use sandball_guest_sdk::{python_errno, python_os_error};

/// A directory of the walk.
#[derive(Clone, Debug)]
pub struct Dir {
    /// Its path as the walk names it (`os.walk`'s `root`).
    pub root: String,
    /// Where the module reads it.
    pub real: String,
    /// How many symlinks its path goes through.
    pub links: usize,
}

/// One entry of a directory.
#[derive(Clone, Debug)]
pub struct Entry {
    /// Its name.
    pub name: String,
    /// Whether it is a symlink.
    pub link: bool,
}

/// A directory's entries, as `os.walk` yields them.
#[derive(Debug, Default)]
pub struct Listing {
    /// Directories, and symlinks to directories.
    pub dirs: Vec<Entry>,
    /// Everything else.
    pub files: Vec<Entry>,
}

/// Why a directory could not be listed.
pub enum ListError {
    /// As Python's `OSError` would say it: errno (Linux numbering) and text.
    Os(i32, String),
    /// Another error (the sandbox refused the path, a name that is not UTF-8).
    Other(String),
    /// A host call was denied: the task fails with it.
    Denied(HostError),
}

/// Python's errno and text for an error met while listing `path`.
fn os_error(e: &std::io::Error, path: &str) -> ListError {
    let text = python_os_error(e, path);
    match python_errno(e) {
        Some((errno, _)) => ListError::Os(errno, text),
        None => ListError::Other(text),
    }
}

/// Whether the symlink at `path` leads to a directory. Its target is looked at where
/// the module may read; one outside is asked of the shim when the walk follows links
/// (a denial then fails the task, naming the grant it needs), and counted as no
/// directory otherwise.
fn link_is_dir(path: &str, follow: bool) -> Result<bool, HostError> {
    if let Ok(meta) = std::fs::metadata(realpath(path)) {
        return Ok(meta.is_dir());
    }
    if !follow {
        return Ok(false);
    }
    Ok(host::stat(path, true)?.is_some_and(|st| st.kind == FileKind::Directory))
}

/// Most symlinks a path may go through (Linux's `MAXSYMLINKS`): past them the kernel
/// cannot tell Python whether a link leads to a directory, so a walk that follows a
/// loop of links ends there, the last link listed as no directory.
const MAX_LINKS: usize = 40;

/// Lists `dir`.
pub fn list(dir: &Dir, follow: bool) -> Result<Listing, ListError> {
    let entries = std::fs::read_dir(&dir.real).map_err(|e| os_error(&e, &dir.root))?;
    let mut out = Listing::default();
    for entry in entries {
        let entry = entry.map_err(|e| os_error(&e, &dir.root))?;
        let Ok(name) = entry.file_name().into_string() else {
            return Err(ListError::Other(format!(
                "{}: a name in it is not UTF-8, which the built-in find cannot report",
                dir.root
            )));
        };
        let kind = entry.file_type().ok();
        let link = kind.is_some_and(|k| k.is_symlink());
        let is_dir = if link {
            dir.links < MAX_LINKS
                && link_is_dir(&join(&dir.root, &name), follow).map_err(ListError::Denied)?
        } else {
            kind.is_some_and(|k| k.is_dir())
        };
        let e = Entry { name, link };
        if is_dir {
            out.dirs.push(e);
        } else {
            out.files.push(e);
        }
    }
    Ok(out)
}

/// The subdirectory `entry` of `dir`, as the walk goes into it.
pub fn below(dir: &Dir, entry: &Entry) -> Dir {
    let root = join(&dir.root, &entry.name);
    let real = if entry.link {
        realpath(&root)
    } else {
        join(&dir.real, &entry.name)
    };
    Dir {
        root,
        real,
        links: dir.links + usize::from(entry.link),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listings_split_directories_from_the_rest() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().to_str().unwrap().to_string();
        std::fs::create_dir(tmp.path().join("d")).unwrap();
        std::fs::write(tmp.path().join("f"), b"").unwrap();
        std::os::unix::fs::symlink("d", tmp.path().join("to-d")).unwrap();
        std::os::unix::fs::symlink("f", tmp.path().join("to-f")).unwrap();
        std::os::unix::fs::symlink("nowhere", tmp.path().join("dangling")).unwrap();
        let dir = Dir {
            root: root.clone(),
            real: root.clone(),
            links: 0,
        };
        let Ok(l) = list(&dir, false) else {
            panic!("cannot list")
        };
        let mut dirs: Vec<_> = l.dirs.iter().map(|e| e.name.as_str()).collect();
        let mut files: Vec<_> = l.files.iter().map(|e| e.name.as_str()).collect();
        dirs.sort();
        files.sort();
        assert_eq!(dirs, ["d", "to-d"]);
        assert_eq!(files, ["dangling", "f", "to-f"]);
        let link = l.dirs.iter().find(|e| e.link).unwrap();
        let sub = below(&dir, link);
        assert_eq!(sub.root, format!("{root}/to-d"));
        assert!(sub.real.ends_with("/d"), "{}", sub.real);
        assert_eq!(sub.links, 1);
        let missing = Dir {
            root: format!("{root}/x"),
            real: format!("{root}/x"),
            links: 0,
        };
        match list(&missing, false) {
            Err(ListError::Os(2, text)) => {
                assert_eq!(
                    text,
                    format!("[Errno 2] No such file or directory: '{root}/x'")
                )
            }
            _ => panic!("a missing directory lists as ENOENT"),
        }
    }
}
