//! Replacing whatever is at a path with a new link in one rename, as Ansible does for
//! `state: link` and `state: hard`: the link is made under a hidden temporary name
//! beside the path, then renamed over it (an empty directory is removed first).

use crate::state::State;
use sandball_guest_sdk::describe_io_error;
use sandball_guest_sdk::prelude::*;
use std::collections::hash_map::RandomState;
use std::fs;
use std::hash::BuildHasher;
use std::io;
use std::path::Path;

/// Makes the new entry with `make(tmp)` and renames it over `path`, whose current
/// state is `prev`. On failure the temporary entry is removed.
pub fn replace_with(
    path: &str,
    prev: State,
    make: impl FnOnce(&str) -> io::Result<()>,
) -> Result<(), Fail> {
    let tmp = temp_sibling(path);
    let attempt = (|| {
        if prev == State::Directory {
            fs::remove_dir(path)?;
        }
        make(&tmp)?;
        fs::rename(&tmp, path)
    })();
    attempt.map_err(|e| {
        if fs::symlink_metadata(&tmp).is_ok() {
            let _ = fs::remove_file(&tmp);
        }
        Fail::new(format!("Error while replacing: {}", describe_io_error(&e))).with("path", path)
    })
}

/// A hidden, unpredictable name in `path`'s directory.
pub fn temp_sibling(path: &str) -> String {
    let random = RandomState::new().hash_one(path);
    match Path::new(path).parent().map(|p| p.to_string_lossy()) {
        Some(dir) if !dir.is_empty() => {
            format!("{}/.{random:016x}.tmp", dir.trim_end_matches('/'))
        }
        _ => format!(".{random:016x}.tmp"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_names_stay_in_the_same_directory() {
        assert!(temp_sibling("/srv/app/current").starts_with("/srv/app/."));
        assert!(!temp_sibling("current").contains('/'));
        assert_ne!(temp_sibling("/x/y"), temp_sibling("/x/y"));
    }

    #[cfg(unix)]
    #[test]
    fn replaces_an_empty_directory_and_cleans_up_on_failure() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("entry");
        let p = path.to_str().unwrap();
        fs::create_dir(&path).unwrap();
        replace_with(p, State::Directory, |tmp| {
            std::os::unix::fs::symlink("target", tmp)
        })
        .unwrap();
        assert_eq!(fs::read_link(&path).unwrap().to_str(), Some("target"));

        let err = replace_with(p, State::Link, |tmp| {
            fs::write(tmp, "")?;
            Err(io::Error::other("boom"))
        })
        .unwrap_err();
        assert_eq!(err.msg(), "Error while replacing: boom");
        assert_eq!(
            fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temporary file left"
        );
    }
}
