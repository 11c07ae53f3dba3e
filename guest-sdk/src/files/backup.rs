//! `backup: true`: a copy of the destination taken before it is replaced, named as
//! Ansible names it, `<dest>.<id>.<YYYY-MM-DD@HH:MM:SS~>`, with the original's mode,
//! owner, group and times. Ansible's `<id>` is its process id; a module under WASI
//! has none, so a random number in the same range stands in.

use super::{carry_owner, random_u64};
use crate::civil::{DateTime, since_epoch};
use crate::prelude::*;
use std::fs::{File, OpenOptions};
use std::io;

/// Largest process id on Linux (`pid_max` upper bound); backup ids stay below it.
const PID_RANGE: u64 = 4_194_304;

/// Copies `dest` to a new backup file beside it and returns the backup's path.
pub fn backup_local(dest: &str) -> Result<String, Fail> {
    let name = backup_name(
        dest,
        random_u64() % PID_RANGE + 1,
        DateTime::from_unix(since_epoch()),
    );
    let fail = |e: io::Error| Fail::new(format!("Could not make backup of {dest} to {name}: {e}"));
    // Through a symlink to what it names, as Python's `shutil.copy2` reads it.
    let mut from = File::open(super::realpath(dest)).map_err(fail)?;
    let to = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&name)
        .map_err(fail)?;
    super::fill(&to, &mut from).map_err(fail)?;
    if let Some(st) = host::stat(dest, true)? {
        host::chmod(&name, st.mode)?;
        host::set_times(&name, Some(st.atime), Some(st.mtime), true)?;
        carry_owner(&name, st.uid, st.gid)?;
    }
    Ok(name)
}

/// The backup file name for `dest` taken at `at`.
fn backup_name(dest: &str, id: u64, at: DateTime) -> String {
    format!(
        "{dest}.{id}.{:04}-{:02}-{:02}@{:02}:{:02}:{:02}~",
        at.year, at.month, at.day, at.hour, at.minute, at.second
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn names_backups_like_ansible() {
        let at = DateTime::from_unix(Duration::new(1_704_164_645, 5));
        assert_eq!(
            backup_name("/etc/motd", 4242, at),
            "/etc/motd.4242.2024-01-02@03:04:05~"
        );
    }

    #[cfg(unix)]
    #[test]
    fn backups_keep_content_and_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("conf");
        std::fs::write(&dest, "v1").unwrap();
        std::fs::set_permissions(&dest, std::fs::Permissions::from_mode(0o640)).unwrap();
        let name = backup_local(dest.to_str().unwrap()).unwrap();
        assert!(name.starts_with(dest.to_str().unwrap()));
        assert!(name.ends_with('~'));
        assert_eq!(std::fs::read(&name).unwrap(), b"v1");
        let mode = std::fs::metadata(&name).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o640);
    }
}
