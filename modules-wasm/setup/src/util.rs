//! Small helpers the collectors share: reading a file as ansible-core's
//! `get_file_content` does, marker files, base names.

use sandball_guest_sdk::host;

/// A file's text with surrounding whitespace removed; `None` when it cannot be read
/// (missing, not granted, not text) — as ansible-core's `get_file_content`.
pub fn read(path: &str) -> Option<String> {
    std::fs::read(path)
        .ok()
        .map(|b| String::from_utf8_lossy(&b).trim().to_string())
}

/// A file's text unchanged, or empty.
pub fn read_raw(path: &str) -> String {
    std::fs::read(path)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default()
}

/// Whether a well-known marker path exists (see `host::present`); false when the
/// shim does not answer for it.
pub fn present(path: &str) -> bool {
    host::present(path).unwrap_or(false)
}

/// Whether `path` exists as far as the module can see (granted files only).
pub fn exists(path: &str) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

/// The last component of a path.
pub fn basename(path: &str) -> &str {
    path.trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basenames() {
        assert_eq!(basename("/sys/class/net/eth0"), "eth0");
        assert_eq!(basename("systemd"), "systemd");
    }
}
