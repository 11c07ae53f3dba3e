//! Replacing a file in one step, as Ansible's `atomic_move` does: the new bytes go to
//! a hidden temporary file in the destination's directory, which takes over the
//! attributes the destination should keep and is then renamed over it, so nobody
//! ever sees half a file. A staged file that is not committed is removed.

use sandball_guest_sdk::files::{carry_owner, fill, random_u64};
use sandball_guest_sdk::host::FileKind;
use sandball_guest_sdk::prelude::*;
use std::fs::{self, OpenOptions};
use std::io::{self, Read};
use std::path::Path;

/// Permission bits of a newly created file before the umask (Ansible's default).
const NEW_FILE_MODE: u32 = 0o666;

/// A temporary file next to its destination, removed on drop unless committed.
pub struct Staged {
    path: String,
    committed: bool,
}

/// Where the staged file takes its attributes from when it replaces the destination.
pub enum Keep<'a> {
    /// Owner, group and mode of the existing destination (the default).
    Destination,
    /// Mode and times of the source file (`remote_src`), as `shutil.copystat` copies.
    Source(&'a str),
}

impl Staged {
    /// Creates the temporary file in `dest`'s directory and fills it from `source`.
    pub fn write(dest: &str, source: &mut dyn Read) -> io::Result<Staged> {
        let path = temp_path_for(dest);
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| sandball_guest_sdk::on_node(e, dest))?;
        let staged = Staged {
            path,
            committed: false,
        };
        fill(&file, source)?;
        Ok(staged)
    }

    /// Path of the temporary file (what `validate` checks).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Gives the staged file the attributes it should have, then renames it over
    /// `dest`. A new destination (or one that was a symlink) gets mode 0666 minus the
    /// umask, as Ansible gives it.
    pub fn commit(mut self, dest: &str, keep: Keep<'_>) -> Result<(), Fail> {
        // A symlink being replaced by a file counts as a new file, as in Ansible.
        let existing = host::stat(dest, false)?.filter(|st| st.kind != FileKind::Symlink);
        match keep {
            Keep::Destination => {
                if let Some(st) = existing {
                    carry_owner(&self.path, st.uid, st.gid)?;
                    host::chmod(&self.path, st.mode)?;
                }
            }
            Keep::Source(src) => {
                if let Some(st) = host::stat(src, true)? {
                    host::chmod(&self.path, st.mode)?;
                    host::set_times(&self.path, Some(st.atime), Some(st.mtime), true)?;
                }
            }
        }
        fs::rename(&self.path, dest)
            .map_err(|e| Fail::new(format!("Could not replace {dest} with {}: {e}", self.path)))?;
        self.committed = true;
        if existing.is_none() {
            host::chmod(dest, NEW_FILE_MODE & !host::umask())?;
        }
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.committed {
            // Best effort: the file is ours and hidden; a failure leaves only litter.
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// A hidden, unpredictable name in `dest`'s directory.
fn temp_path_for(dest: &str) -> String {
    let path = Path::new(dest);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let dir = match path.parent().map(|p| p.to_string_lossy().into_owned()) {
        Some(d) if !d.is_empty() => format!("{}/", d.trim_end_matches('/')),
        _ => String::new(),
    };
    format!("{dir}.{name}.{:016x}.sandball.tmp", random_u64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_files_are_hidden_next_to_the_destination() {
        let p = temp_path_for("/etc/app/conf.ini");
        assert!(p.starts_with("/etc/app/.conf.ini."), "{p}");
        assert!(p.ends_with(".sandball.tmp"));
        assert_ne!(temp_path_for("/x/y"), temp_path_for("/x/y"));
        assert!(temp_path_for("rel").starts_with(".rel."));
        assert!(temp_path_for("/top").starts_with("/.top."));
    }

    #[test]
    fn uncommitted_files_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("f");
        let staged = Staged::write(dest.to_str().unwrap(), &mut &b"data"[..]).unwrap();
        let tmp = staged.path().to_string();
        assert_eq!(fs::read(&tmp).unwrap(), b"data");
        drop(staged);
        assert!(!Path::new(&tmp).exists());
        assert!(!dest.exists());
    }
}
