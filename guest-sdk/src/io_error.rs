//! I/O errors as a module meets them under WASI. A path outside every granted
//! directory reads as missing (`ENOENT`); a path that leaves a granted directory — by
//! `..` or through a symlink to an absolute path, which WASI never follows — fails
//! with `EPERM`. These helpers name the second case so users learn why, and
//! [`on_node`] turns what WASI cannot tell (a granted path below a missing directory
//! or a file) into the error the node gives.

use std::path::Path;

/// The error numbers as the target numbers them (WASI's differ from Linux's).
#[cfg(target_os = "wasi")]
mod target {
    pub const EACCES: i32 = 2;
    pub const EPERM: i32 = 63;
    pub const ENOENT: i32 = 44;
    pub const ENOTDIR: i32 = 54;
}
#[cfg(not(target_os = "wasi"))]
mod target {
    pub const EACCES: i32 = 13;
    pub const EPERM: i32 = 1;
    pub const ENOENT: i32 = 2;
    pub const ENOTDIR: i32 = 20;
}
use target::EPERM;

/// The kind of a Linux error number, as host calls report them (whatever the
/// target's own numbering).
pub(crate) fn linux_kind(errno: i32) -> std::io::ErrorKind {
    use std::io::ErrorKind;
    match errno {
        1 | 13 => ErrorKind::PermissionDenied,
        2 => ErrorKind::NotFound,
        17 => ErrorKind::AlreadyExists,
        18 => ErrorKind::CrossesDevices,
        20 => ErrorKind::NotADirectory,
        21 => ErrorKind::IsADirectory,
        22 => ErrorKind::InvalidInput,
        28 => ErrorKind::StorageFull,
        30 => ErrorKind::ReadOnlyFilesystem,
        39 => ErrorKind::DirectoryNotEmpty,
        // Natively the target's numbers are Linux's.
        _ if !cfg!(target_os = "wasi") => std::io::Error::from_raw_os_error(errno).kind(),
        _ => ErrorKind::Other,
    }
}

/// The error the node gives for an operation on `path` that failed under WASI with
/// `e`. Where a granted path's directory is missing, is a file, or is one the user
/// may not open, the module sees an empty read-only directory in its place: WASI then
/// fails a write with `EPERM` and finds the path missing, where the node says
/// `ENOENT`, `ENOTDIR` or `EACCES`.
/// The shim knows why that directory stands in and answers host calls on the granted
/// paths there as the node does; this asks it (`stat` of the path and, for a write,
/// of its parent) and returns the node's error, or `e` unchanged when the path is
/// merely outside the grant. Natively, `e` itself.
pub fn on_node(e: std::io::Error, path: impl AsRef<Path>) -> std::io::Error {
    if !cfg!(target_os = "wasi") {
        return e;
    }
    let Some(path) = path.as_ref().to_str() else {
        return e;
    };
    let errno = match e.raw_os_error() {
        Some(target::ENOENT) => refused(path),
        Some(EPERM) => refused(path).or_else(|| in_missing_directory(path)),
        _ => None,
    };
    errno.map_or(e, std::io::Error::from_raw_os_error)
}

/// `ENOTDIR` or `EACCES` when the node says `path` lies below something that is not a
/// directory, or one the user may not search.
fn refused(path: &str) -> Option<i32> {
    use std::io::ErrorKind;
    match crate::host::stat(path, false) {
        Err(h) if !h.denied => match linux_kind(h.errno) {
            ErrorKind::NotADirectory => Some(target::ENOTDIR),
            ErrorKind::PermissionDenied => Some(target::EACCES),
            _ => None,
        },
        _ => None,
    }
}

/// `ENOENT` when neither `path` nor its directory exists on the node.
fn in_missing_directory(path: &str) -> Option<i32> {
    let parent = Path::new(path)
        .parent()
        .and_then(Path::to_str)
        .filter(|p| !p.is_empty())?;
    let missing = |p: &str| matches!(crate::host::stat(p, true), Ok(None));
    (missing(path) && missing(parent)).then_some(target::ENOENT)
}

/// Whether `e` says the path leaves the directories granted to the module. Only WASI
/// reports this; natively, nothing is confined and this is always false.
pub fn leaves_grant(e: &std::io::Error) -> bool {
    cfg!(target_os = "wasi") && e.raw_os_error() == Some(EPERM)
}

/// Describes an I/O error, explaining a path that leaves the granted directories.
pub fn describe_io_error(e: &std::io::Error) -> String {
    if leaves_grant(e) {
        format!(
            "{e}: the path leads outside the directories granted to this module \
             (WASI does not follow `..` out of them or symlinks to absolute paths)"
        )
    } else {
        e.to_string()
    }
}

/// Python's `OSError` number and text for an error (Linux numbering), for the kinds
/// a module reports as ansible-core's would; `None` for the others.
pub fn python_errno(e: &std::io::Error) -> Option<(i32, &'static str)> {
    use std::io::ErrorKind;
    if leaves_grant(e) {
        return None;
    }
    Some(match e.kind() {
        ErrorKind::NotFound => (2, "No such file or directory"),
        ErrorKind::PermissionDenied => (13, "Permission denied"),
        ErrorKind::AlreadyExists => (17, "File exists"),
        ErrorKind::NotADirectory => (20, "Not a directory"),
        ErrorKind::IsADirectory => (21, "Is a directory"),
        ErrorKind::ReadOnlyFilesystem => (30, "Read-only file system"),
        ErrorKind::StorageFull => (28, "No space left on device"),
        _ => return None,
    })
}

/// An error on `path` as Python's `str(OSError)` shows it (`[Errno 2] No such file
/// or directory: '/x'`), or [`describe_io_error`] and the path for the other kinds.
pub fn python_os_error(e: &std::io::Error, path: &str) -> String {
    python_os_error_on(e, &[path], false)
}

/// [`python_os_error`] for an error on one path or two (a link, a rename: `'a' ->
/// 'b'`), each quoted as Python quotes a `str`, or with `bytes` as it quotes a bytes
/// path (`b'/x'`, as modules that work on bytes paths show them).
pub fn python_os_error_on(e: &std::io::Error, paths: &[&str], bytes: bool) -> String {
    let quoted: Vec<String> = paths
        .iter()
        .map(|p| {
            let text = sandball_pycompat::pyfmt::py_repr(&serde_json::Value::from(*p));
            if bytes { format!("b{text}") } else { text }
        })
        .collect();
    let quoted = quoted.join(" -> ");
    match python_errno(e) {
        Some((errno, text)) => format!("[Errno {errno}] {text}: {quoted}"),
        None => format!("{}: {quoted}", describe_io_error(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn natively_nothing_leaves_the_grant() {
        let e = std::io::Error::from_raw_os_error(EPERM);
        assert!(!leaves_grant(&e));
        assert_eq!(describe_io_error(&e), e.to_string());
        // Nor does the node tell another error than the one met.
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope/x");
        let e = std::fs::write(&missing, b"x").unwrap_err();
        assert_eq!(on_node(e, &missing).kind(), std::io::ErrorKind::NotFound);
    }

    #[test]
    fn errors_read_as_python_words_them() {
        let missing = std::fs::metadata("/nonexistent/sandball").unwrap_err();
        assert_eq!(
            python_os_error(&missing, "/nonexistent/sandball"),
            "[Errno 2] No such file or directory: '/nonexistent/sandball'"
        );
        assert_eq!(
            python_errno(&missing),
            Some((2, "No such file or directory"))
        );
        let below_file = std::fs::metadata("/etc/passwd/x").unwrap_err();
        assert_eq!(
            python_os_error(&below_file, "/etc/passwd/x"),
            "[Errno 20] Not a directory: '/etc/passwd/x'"
        );
        assert_eq!(linux_kind(20), std::io::ErrorKind::NotADirectory);
        assert_eq!(
            python_os_error_on(&below_file, &["/a", "/etc/passwd/x"], true),
            "[Errno 20] Not a directory: b'/a' -> b'/etc/passwd/x'"
        );
        let other = std::io::Error::other("odd");
        assert_eq!(python_os_error(&other, "/x"), "odd: '/x'");
    }
}
