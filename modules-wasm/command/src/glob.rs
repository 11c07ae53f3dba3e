//! Whether a `creates`/`removes` pattern matches anything, with the rules of
//! Python's `glob.glob` that Ansible's command module uses: `*`, `?` and `[...]`
//! (`[!...]` negates) within one path component, names starting with `.` only
//! matched by a component that starts with `.` too, no escapes, and a pattern
//! without wildcards matching when the path exists (a dangling symlink counts).

use sandball_pycompat::fnmatch::fnmatch;
use std::fs;
use std::path::{Path, PathBuf};

/// True when at least one existing path matches `pattern`.
pub fn any_match(pattern: &str) -> bool {
    if pattern.is_empty() {
        return false;
    }
    let base = if pattern.starts_with('/') {
        PathBuf::from("/")
    } else {
        PathBuf::new()
    };
    let parts: Vec<&str> = pattern.split('/').filter(|p| !p.is_empty()).collect();
    exists_below(base, &parts, pattern.ends_with('/'))
}

/// Whether some path `base/parts...` exists, expanding wildcards in `parts`.
fn exists_below(base: PathBuf, parts: &[&str], must_be_dir: bool) -> bool {
    let Some((first, rest)) = parts.split_first() else {
        return if must_be_dir {
            fs::metadata(&base).is_ok_and(|m| m.is_dir())
        } else {
            fs::symlink_metadata(&base).is_ok()
        };
    };
    if !has_magic(first) {
        return exists_below(base.join(first), rest, must_be_dir);
    }
    let dir: &Path = if base.as_os_str().is_empty() {
        Path::new(".")
    } else {
        &base
    };
    let Ok(entries) = fs::read_dir(dir) else {
        return false;
    };
    let show_hidden = first.starts_with('.');
    entries.flatten().any(|entry| {
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            return false;
        };
        (show_hidden || !name.starts_with('.'))
            && fnmatch(first, name)
            && exists_below(base.join(name), rest, must_be_dir)
    })
}

fn has_magic(part: &str) -> bool {
    part.contains(['*', '?', '['])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_existing_paths_with_wildcards() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir(root.join("sub")).unwrap();
        fs::write(root.join("sub/one.log"), "").unwrap();
        fs::write(root.join(".hidden"), "").unwrap();
        let r = root.to_str().unwrap();
        assert!(any_match(&format!("{r}/sub/one.log")));
        assert!(any_match(&format!("{r}/s*/*.log")));
        assert!(any_match(&format!("{r}/sub/")));
        assert!(!any_match(&format!("{r}/sub/one.log/")));
        assert!(!any_match(&format!("{r}/*/*.txt")));
        assert!(!any_match(&format!("{r}/*hidden")));
        assert!(any_match(&format!("{r}/.h*")));
        assert!(!any_match(&format!("{r}/missing")));
        assert!(!any_match(""));
    }

    #[cfg(unix)]
    #[test]
    fn a_dangling_symlink_exists() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("dangling");
        std::os::unix::fs::symlink("/nonexistent/target", &link).unwrap();
        assert!(any_match(link.to_str().unwrap()));
    }
}
