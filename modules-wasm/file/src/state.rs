//! What a path currently is, in the words of Ansible's file module: `absent`,
//! `link`, `directory`, `hard` (a non-directory with more than one name) or `file`
//! (anything else: regular files, devices, sockets…). Also the `diff` every state
//! starts from.

use sandball_guest_sdk::describe_io_error;
use sandball_guest_sdk::host::FileKind;
use sandball_guest_sdk::prelude::*;
use std::fmt;
use std::fs;
use std::io;

/// The state of a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Nothing is there (a dangling symlink is a `Link`).
    Absent,
    /// A directory.
    Directory,
    /// A non-directory with one name.
    File,
    /// A non-directory with several names.
    Hard,
    /// A symbolic link.
    Link,
}

impl State {
    /// The state's name as Ansible writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Absent => "absent",
            State::Directory => "directory",
            State::File => "file",
            State::Hard => "hard",
            State::Link => "link",
        }
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The current state of `path` (not following a final symlink), asked of the host:
/// a path outside the grant is a denial naming the capability, not "absent".
pub fn get_state(path: &str) -> Result<State, Fail> {
    let st = match host::stat(path, false) {
        Ok(Some(st)) => st,
        Ok(None) => return Ok(State::Absent),
        // A path under something that is not a directory does not exist either.
        Err(e) if !e.denied && e.errno == ENOTDIR => return Ok(State::Absent),
        Err(e) => return Err(Fail::from(e).with("path", path)),
    };
    Ok(match st.kind {
        FileKind::Symlink => State::Link,
        FileKind::Directory => State::Directory,
        _ if st.nlink > 1 => State::Hard,
        _ => State::File,
    })
}

/// `ENOTDIR` ("not a directory"), the same number on every POSIX system.
const ENOTDIR: i32 = 20;

/// Whether an error means "nothing there" (Python's `lexists` being false).
pub fn is_missing(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

/// Whether `path` exists, following symlinks (Python's `os.path.exists`). Asked of
/// the host: WASI cannot follow a symlink whose target is absolute.
pub fn exists(path: &str) -> bool {
    matches!(host::stat(path, true), Ok(Some(_)))
}

/// Whether `path` is a directory, following symlinks (Python's `os.path.isdir`).
pub fn is_dir(path: &str) -> bool {
    matches!(host::stat(path, true), Ok(Some(st)) if st.kind == FileKind::Directory)
}

/// The target of the symlink `path` as written (an absolute one too, read through the
/// host interface where WASI refuses it).
pub fn link_target(path: &str) -> Result<String, Fail> {
    match files::read_link(std::path::Path::new(path)) {
        Ok(target) => Ok(target.to_string_lossy().into_owned()),
        Err(e) => Err(Fail::new(format!(
            "cannot read link {path}: {}",
            describe_io_error(&e)
        ))
        .with("path", path)),
    }
}

/// Whether two paths name the same file (same device and inode, following links).
pub fn same_file(a: &str, b: &str) -> bool {
    match (host::stat(a, true), host::stat(b, true)) {
        (Ok(Some(x)), Ok(Some(y))) => (x.dev, x.inode) == (y.dev, y.inode),
        _ => false,
    }
}

/// Whether `path` is a symlink.
pub fn is_link(path: &str) -> bool {
    fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// The diff every state begins with: the path on both sides, and the states when
/// they differ. Removing a directory also lists what was in it.
pub fn initial_diff(path: &str, want: &str, prev: State) -> Diff {
    let mut diff = Diff::default();
    diff.record("path", path, path);
    if prev.as_str() != want {
        diff.record("state", prev.as_str(), want);
        if want == "absent"
            && prev == State::Directory
            && let Value::Object(before) = &mut diff.before
        {
            let (directories, files) = walk(path);
            before.insert(
                "path_content".into(),
                json!({"directories": directories, "files": files}),
            );
        }
    }
    diff
}

/// Every directory and every other entry below `root` (not following links).
fn walk(root: &str) -> (Vec<String>, Vec<String>) {
    let mut directories = Vec::new();
    let mut files = Vec::new();
    let mut pending = vec![root.to_string()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        let mut names: Vec<String> = entries
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        for name in names {
            let full = format!("{}/{name}", dir.trim_end_matches('/'));
            // Like os.walk, a symlink to a directory is listed as a directory but not entered.
            if fs::metadata(&full).is_ok_and(|m| m.is_dir()) {
                if !is_link(&full) {
                    pending.push(full.clone());
                }
                directories.push(full);
            } else {
                files.push(full);
            }
        }
    }
    (directories, files)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn reads_states_like_ansible() {
        let dir = tempfile::tempdir().unwrap();
        let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
        fs::write(p("f"), "").unwrap();
        fs::write(p("h1"), "").unwrap();
        fs::hard_link(p("h1"), p("h2")).unwrap();
        fs::create_dir(p("d")).unwrap();
        std::os::unix::fs::symlink("missing", p("l")).unwrap();
        assert_eq!(get_state(&p("f")).unwrap(), State::File);
        assert_eq!(get_state(&p("h2")).unwrap(), State::Hard);
        assert_eq!(get_state(&p("d")).unwrap(), State::Directory);
        assert_eq!(get_state(&p("l")).unwrap(), State::Link);
        assert_eq!(get_state(&p("none")).unwrap(), State::Absent);
        assert_eq!(get_state(&p("f/under")).unwrap(), State::Absent);
    }

    #[test]
    fn initial_diff_lists_what_a_removal_takes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_str().unwrap();
        fs::create_dir(dir.path().join("sub")).unwrap();
        fs::write(dir.path().join("sub/x"), "").unwrap();
        let d = initial_diff(root, "absent", State::Directory);
        assert_eq!(
            d.before,
            json!({"path": root, "state": "directory", "path_content": {
                "directories": [format!("{root}/sub")], "files": [format!("{root}/sub/x")]}})
        );
        assert_eq!(d.after, json!({"path": root, "state": "absent"}));
        let d = initial_diff(root, "directory", State::Directory);
        assert_eq!(d.before, json!({"path": root}));
    }
}
