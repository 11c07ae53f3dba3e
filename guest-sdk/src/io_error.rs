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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn natively_nothing_leaves_the_grant() {
        let e = std::io::Error::from_raw_os_error(EPERM);
        assert!(!leaves_grant(&e));
        assert_eq!(describe_io_error(&e), e.to_string());
    }
}
