//! Copying a directory that is already on the node (`remote_src` with a directory
//! `src`), as Ansible's copy module does: a missing destination is created as a
//! copy of the source; an existing one is merged into — files missing or different
//! there are copied (with the source's mode), subdirectories are merged the same
//! way, and nothing is ever removed. Symlinks in the source are recreated as
//! symlinks unless `local_follow` is true, which copies what they point to. The
//! task's `owner`/`group` are then applied to the whole destination tree.

use crate::stage::{Keep, Staged};
use sandball_guest_sdk::prelude::*;
use std::fs::{self, File};
use std::io::{self, Read};
use std::path::Path;

/// One directory copy.
pub struct TreeCopy<'a> {
    /// Report what would change without changing anything.
    pub check_mode: bool,
    /// Copy what symlinks in the source point to instead of the links.
    pub follow_links: bool,
    /// Applies the task's owner and group to one path; true when that changed it.
    pub set_owner: &'a dyn Fn(&str) -> Result<bool, Fail>,
}

impl TreeCopy<'_> {
    /// Copies the directory `src` to `dest`; true when anything changed.
    pub fn copy(&self, src: &str, dest: &str) -> Result<bool, Fail> {
        let mut changed = false;
        if fs::symlink_metadata(dest).is_err() {
            if self.check_mode {
                return Ok(true);
            }
            create_dir_like(src, dest)?;
            changed = true;
        }
        changed |= self.merge(src, dest)?;
        changed |= self.own_tree(dest)?;
        Ok(changed)
    }

    /// Brings the entries of `src` into the existing directory `dest`.
    fn merge(&self, src: &str, dest: &str) -> Result<bool, Fail> {
        let mut changed = false;
        for name in sorted_names(src)? {
            let s = format!("{src}/{name}");
            let d = format!("{dest}/{name}");
            let is_link = fs::symlink_metadata(&s).is_ok_and(|m| m.file_type().is_symlink());
            if is_link && !self.follow_links {
                changed |= self.sync_link(&s, &d)?;
                continue;
            }
            // A dangling link being followed has nothing to copy.
            let Ok(meta) = fs::metadata(&s) else {
                continue;
            };
            if meta.is_dir() {
                changed |= self.sync_dir(&s, &d)?;
            } else if meta.is_file() {
                changed |= self.sync_file(&s, &d)?;
            }
        }
        Ok(changed)
    }

    fn sync_dir(&self, s: &str, d: &str) -> Result<bool, Fail> {
        match fs::symlink_metadata(d) {
            Ok(m) if m.is_dir() => self.merge(s, d),
            // Something other than a directory is in the way: left alone, as Ansible does.
            Ok(_) => Ok(false),
            Err(_) => {
                if !self.check_mode {
                    create_dir_like(s, d)?;
                    self.merge(s, d)?;
                }
                Ok(true)
            }
        }
    }

    fn sync_file(&self, s: &str, d: &str) -> Result<bool, Fail> {
        match fs::symlink_metadata(d) {
            Ok(m) if m.is_dir() => return Ok(false),
            Ok(m) if m.is_file() && same_content(s, d).map_err(|e| io_fail(d, e))? => {
                return Ok(false);
            }
            _ => {}
        }
        if !self.check_mode {
            let mut from = File::open(s).map_err(|e| io_fail(s, e))?;
            let staged = Staged::write(d, &mut from).map_err(|e| io_fail(d, e))?;
            staged.commit(d, Keep::Source(s))?;
            if let Some(st) = host::stat(s, true)? {
                host::chmod(d, st.mode)?;
            }
        }
        Ok(true)
    }

    fn sync_link(&self, s: &str, d: &str) -> Result<bool, Fail> {
        let target = files::read_link(Path::new(s)).map_err(|e| io_fail(s, e))?;
        let target = target.to_string_lossy();
        match fs::symlink_metadata(d) {
            Ok(m)
                if m.file_type().is_symlink()
                    && files::read_link(Path::new(d))
                        .is_ok_and(|t| t.to_string_lossy() == target) =>
            {
                return Ok(false);
            }
            Ok(m) if m.is_dir() => return Ok(false),
            _ => {}
        }
        if !self.check_mode {
            match fs::remove_file(d) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(io_fail(d, e)),
                _ => {}
            }
            host::symlink(&target, d)?;
        }
        Ok(true)
    }

    /// Applies owner and group to `dest` and everything below it (not through links).
    fn own_tree(&self, dest: &str) -> Result<bool, Fail> {
        let mut changed = (self.set_owner)(dest)?;
        let is_dir = fs::symlink_metadata(dest).is_ok_and(|m| m.is_dir());
        if is_dir {
            for name in sorted_names(dest)? {
                changed |= self.own_tree(&format!("{dest}/{name}"))?;
            }
        }
        Ok(changed)
    }
}

/// Creates `dest` with the permission bits of the directory `src`.
fn create_dir_like(src: &str, dest: &str) -> Result<(), Fail> {
    fs::create_dir(dest).map_err(|e| io_fail(dest, e))?;
    if let Some(st) = host::stat(src, true)? {
        host::chmod(dest, st.mode)?;
    }
    Ok(())
}

/// Entry names of a directory, sorted so runs are reproducible.
fn sorted_names(dir: &str) -> Result<Vec<String>, Fail> {
    let mut names = Vec::new();
    for entry in fs::read_dir(dir).map_err(|e| io_fail(dir, e))? {
        let entry = entry.map_err(|e| io_fail(dir, e))?;
        names.push(entry.file_name().to_string_lossy().into_owned());
    }
    names.sort();
    Ok(names)
}

/// Whether two files hold the same bytes.
fn same_content(a: &str, b: &str) -> io::Result<bool> {
    if fs::metadata(a)?.len() != fs::metadata(b)?.len() {
        return Ok(false);
    }
    let (mut fa, mut fb) = (File::open(a)?, File::open(b)?);
    let (mut ba, mut bb) = (vec![0u8; 64 * 1024], vec![0u8; 64 * 1024]);
    loop {
        let n = read_full(&mut fa, &mut ba)?;
        let m = read_full(&mut fb, &mut bb)?;
        if n != m || ba[..n] != bb[..m] {
            return Ok(false);
        }
        if n == 0 {
            return Ok(true);
        }
    }
}

/// Reads until `buf` is full or the file ends; returns the bytes read.
fn read_full(file: &mut File, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match file.read(&mut buf[filled..])? {
            0 => break,
            n => filled += n,
        }
    }
    Ok(filled)
}

fn io_fail(path: &str, e: io::Error) -> Fail {
    Fail::new(format!("Failed to copy {}: {e}", Path::new(path).display()))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::{PermissionsExt, symlink};

    fn no_owner(_: &str) -> Result<bool, Fail> {
        Ok(false)
    }

    fn tree(check_mode: bool, follow_links: bool) -> TreeCopy<'static> {
        TreeCopy {
            check_mode,
            follow_links,
            set_owner: &no_owner,
        }
    }

    fn source(root: &Path) -> String {
        let src = root.join("src");
        fs::create_dir_all(src.join("sub")).unwrap();
        fs::write(src.join("a.txt"), "A").unwrap();
        fs::write(src.join("sub/b.sh"), "B").unwrap();
        fs::set_permissions(src.join("sub/b.sh"), fs::Permissions::from_mode(0o755)).unwrap();
        symlink("a.txt", src.join("link")).unwrap();
        src.to_str().unwrap().to_string()
    }

    #[test]
    fn copies_a_new_tree_then_is_idempotent() {
        let dir = tempfile::tempdir().unwrap();
        let src = source(dir.path());
        let dest = dir.path().join("dest");
        let d = dest.to_str().unwrap();

        assert!(tree(true, false).copy(&src, d).unwrap());
        assert!(!dest.exists(), "check mode changed nothing");

        assert!(tree(false, false).copy(&src, d).unwrap());
        assert_eq!(fs::read(dest.join("sub/b.sh")).unwrap(), b"B");
        let mode = fs::metadata(dest.join("sub/b.sh"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o755);
        assert_eq!(
            fs::read_link(dest.join("link")).unwrap().to_str(),
            Some("a.txt")
        );

        assert!(!tree(false, false).copy(&src, d).unwrap());
    }

    #[test]
    fn merges_changes_and_keeps_extra_files() {
        let dir = tempfile::tempdir().unwrap();
        let src = source(dir.path());
        let dest = dir.path().join("dest");
        let d = dest.to_str().unwrap();
        tree(false, false).copy(&src, d).unwrap();
        fs::write(dest.join("extra"), "keep me").unwrap();
        fs::write(dest.join("a.txt"), "changed").unwrap();

        assert!(tree(true, false).copy(&src, d).unwrap());
        assert_eq!(fs::read(dest.join("a.txt")).unwrap(), b"changed");

        assert!(tree(false, false).copy(&src, d).unwrap());
        assert_eq!(fs::read(dest.join("a.txt")).unwrap(), b"A");
        assert_eq!(fs::read(dest.join("extra")).unwrap(), b"keep me");
    }

    #[test]
    fn local_follow_copies_link_targets() {
        let dir = tempfile::tempdir().unwrap();
        let src = source(dir.path());
        let dest = dir.path().join("dest");
        tree(false, true)
            .copy(&src, dest.to_str().unwrap())
            .unwrap();
        let meta = fs::symlink_metadata(dest.join("link")).unwrap();
        assert!(meta.is_file());
        assert_eq!(fs::read(dest.join("link")).unwrap(), b"A");
    }
}
