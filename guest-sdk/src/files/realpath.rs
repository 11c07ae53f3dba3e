//! `realpath`: a path with every symlink resolved, like Python's non-strict
//! `os.path.realpath` (a component that cannot be read as a link is kept as is).
//! Works under WASI, where `std::fs::canonicalize` is not available.

use std::path::{Component, Path, PathBuf};

/// The target of a symlink. WASI refuses to read a link whose target is absolute (it
/// would lead out of the granted directories: EPERM); such a link is read through the
/// sandball host interface instead, which checks the grant itself.
pub fn read_link(path: &Path) -> std::io::Result<PathBuf> {
    match std::fs::read_link(path) {
        Err(e) if cfg!(target_os = "wasi") && crate::io_error::leaves_grant(&e) => {
            let text = crate::host::readlink(&path.to_string_lossy())?;
            Ok(PathBuf::from(text))
        }
        other => other,
    }
}

/// Links followed before giving up (Linux's limit).
const MAX_LINKS: usize = 40;

/// Resolves `path` against the current directory and follows every symlink in it.
pub fn realpath(path: &str) -> String {
    let mut resolved = PathBuf::from("/");
    let start = Path::new(path);
    let mut pending: Vec<PathBuf> = Vec::new();
    let base = if start.is_absolute() {
        PathBuf::new()
    } else {
        std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"))
    };
    push_components(&mut pending, &base.join(start));
    let mut links = 0;
    while let Some(part) = pending.pop() {
        // `..` comes as an empty marker (see `push_components`).
        if part.as_os_str().is_empty() {
            resolved.pop();
            continue;
        }
        let candidate = resolved.join(&part);
        match read_link(&candidate) {
            Ok(target) if links < MAX_LINKS => {
                links += 1;
                if target.is_absolute() {
                    resolved = PathBuf::from("/");
                }
                push_components(&mut pending, &target);
            }
            _ => resolved = candidate,
        }
    }
    resolved.to_string_lossy().into_owned()
}

/// Queues the components of `path` (last one first, since the queue is a stack);
/// `..` becomes an empty marker, `.` and the root are dropped.
fn push_components(pending: &mut Vec<PathBuf>, path: &Path) {
    let parts: Vec<PathBuf> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(p) => Some(PathBuf::from(p)),
            Component::ParentDir => Some(PathBuf::new()),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => None,
        })
        .collect();
    pending.extend(parts.into_iter().rev());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_nested_relative_and_absolute_links() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join("real/sub")).unwrap();
        std::fs::write(root.join("real/sub/f"), b"").unwrap();
        std::os::unix::fs::symlink("real", root.join("rel")).unwrap();
        std::os::unix::fs::symlink(root.join("rel/sub"), root.join("abs")).unwrap();
        std::os::unix::fs::symlink("../sub/f", root.join("real/sub/up")).unwrap();
        let r = |p: &str| realpath(root.join(p).to_str().unwrap());
        let f = root.join("real/sub/f").to_string_lossy().into_owned();
        assert_eq!(r("abs/f"), f);
        assert_eq!(r("rel/sub/up"), f);
        assert_eq!(r("rel/./sub/../sub/f"), f);
        assert_eq!(
            r("rel/missing"),
            root.join("real/missing").to_string_lossy()
        );
        std::os::unix::fs::symlink("loop", root.join("loop")).unwrap();
        assert_eq!(r("loop"), root.join("loop").to_string_lossy());
    }
}
