//! I/O errors as a module meets them under WASI. A path outside every granted
//! directory reads as missing (`ENOENT`); a path that leaves a granted directory — by
//! `..` or through a symlink to an absolute path, which WASI never follows — fails
//! with `EPERM`. These helpers name the second case so users learn why.

/// `EPERM` as the target numbers it (WASI's numbering differs from Linux's).
#[cfg(target_os = "wasi")]
const EPERM: i32 = 63;
#[cfg(not(target_os = "wasi"))]
const EPERM: i32 = 1;

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
    let quoted = crate::args::python::py_repr(&serde_json::Value::from(path));
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
        let other = std::io::Error::other("odd");
        assert_eq!(python_os_error(&other, "/x"), "odd: '/x'");
    }
}
