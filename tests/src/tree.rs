//! What a directory holds (every entry's kind, permission bits and content or link
//! target), to show that a run left it alone.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// One entry of a directory tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entry {
    /// A directory with its permission bits.
    Dir(u32),
    /// A regular file with its permission bits and content.
    File(u32, Vec<u8>),
    /// A symlink with its target.
    Link(String),
    /// Anything else.
    Other,
}

/// Every entry below `root`, by path relative to it.
pub fn snapshot(root: &Path) -> BTreeMap<String, Entry> {
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Entry>) {
    let entries =
        std::fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()));
    for entry in entries {
        let path = entry
            .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
            .path();
        let meta = std::fs::symlink_metadata(&path)
            .unwrap_or_else(|e| panic!("cannot stat {}: {e}", path.display()));
        let mode = meta.permissions().mode() & 0o7777;
        let rel = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .display()
            .to_string();
        let kind = meta.file_type();
        let e = if kind.is_symlink() {
            Entry::Link(
                std::fs::read_link(&path)
                    .map(|t| t.display().to_string())
                    .unwrap_or_default(),
            )
        } else if kind.is_dir() {
            walk(root, &path, out);
            Entry::Dir(mode)
        } else if kind.is_file() {
            Entry::File(mode, std::fs::read(&path).unwrap_or_default())
        } else {
            Entry::Other
        };
        out.insert(rel, e);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sees_files_directories_links_and_modes() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("d")).unwrap();
        std::fs::write(dir.path().join("d/f"), "x").unwrap();
        std::fs::set_permissions(
            dir.path().join("d/f"),
            std::fs::Permissions::from_mode(0o600),
        )
        .unwrap();
        std::os::unix::fs::symlink("d/f", dir.path().join("l")).unwrap();
        let snap = snapshot(dir.path());
        assert_eq!(snap.len(), 3);
        assert_eq!(snap["d/f"], Entry::File(0o600, b"x".to_vec()));
        assert_eq!(snap["l"], Entry::Link("d/f".into()));
        assert!(matches!(snap["d"], Entry::Dir(_)));
    }
}
