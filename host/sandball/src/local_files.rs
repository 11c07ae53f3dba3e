//! Files sandball writes on the controller (fetched files, inventory output, callback
//! reports): always whole, through a temporary file renamed into place.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Writes `data` to `dest` through a temporary file in the same directory (created with
/// its parents when missing), renamed into place; the file keeps its mode, a new one is
/// readable by all (0644).
pub fn write_atomically(dest: &Path, data: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let dir = match dest.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir)?;
    let mode = std::fs::metadata(dest).map_or(0o644, |m| m.permissions().mode() & 0o7777);
    let mut tmp = tempfile::Builder::new()
        .prefix(".sandball-")
        .tempfile_in(dir)?;
    tmp.write_all(data)?;
    tmp.flush()?;
    tmp.as_file()
        .set_permissions(std::fs::Permissions::from_mode(mode))?;
    tmp.persist(dest).map_err(|e| e.error)?;
    Ok(())
}

/// A controller path with `~` (alone or as `~/…`) made the user's home directory, as
/// Ansible expands the paths of its settings; other paths are returned as written.
pub fn expand_user(path: &str) -> PathBuf {
    match (path.strip_prefix('~'), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
            PathBuf::from(home).join(rest.trim_start_matches('/'))
        }
        _ => PathBuf::from(path),
    }
}

/// A path with `.`, `..` and repeated separators resolved in its text, without
/// following links (`/a/b/../c` is `/a/c`; `..` above the root stays at the root, and
/// a relative path keeps the `..` it starts with), for checks that a path stays
/// inside a directory.
pub fn normalized(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => match out.components().next_back() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir | Component::Prefix(_)) => {}
                _ => out.push(c),
            },
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}
