//! `atomic_write`: replaces a file's content all at once, so readers see the old or the
//! new file, never a partial one: a temporary file in the destination's directory,
//! given the old file's mode and owner, then renamed over it.

use crate::host;
use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::io;
use std::path::Path;

/// Tries before giving up on finding a free temporary name.
const ATTEMPTS: usize = 16;

/// Writes `bytes` to `dest` atomically. A new file gets the default mode (0666 less the
/// umask); an existing one keeps its mode and, when allowed, its owner and group.
/// Errors are the node's ([`crate::on_node`]).
pub fn atomic_write(dest: impl AsRef<Path>, bytes: &[u8]) -> io::Result<()> {
    let dest = dest.as_ref();
    write_atomically(dest, bytes).map_err(|e| crate::on_node(e, dest))
}

fn write_atomically(dest: &Path, bytes: &[u8]) -> io::Result<()> {
    let name = dest.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} does not name a file", dest.display()),
        )
    })?;
    let dir = match dest.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let existing = host::stat(&dest.to_string_lossy(), true).ok().flatten();
    let (tmp, file) = create_temp(dir, &name.to_string_lossy())?;
    let tmp_text = tmp.to_string_lossy().into_owned();
    let written = (|| {
        super::fill(&file, &mut &bytes[..])?;
        file.sync_all()?;
        drop(file);
        if let Some(st) = existing {
            host::chmod(&tmp_text, st.mode)?;
            // Only root may give a file away; keeping the writer's ownership otherwise
            // is what Ansible does too.
            let _ = host::chown(&tmp_text, Some(st.uid), Some(st.gid), false);
        }
        std::fs::rename(&tmp, dest)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// A random number from the platform's source (WASI `random` on a node).
pub fn random_u64() -> u64 {
    RandomState::new().hash_one(0u8)
}

fn create_temp(dir: &Path, name: &str) -> io::Result<(std::path::PathBuf, std::fs::File)> {
    let mut last = None;
    for _ in 0..ATTEMPTS {
        let tmp = dir.join(format!(".sandball_tmp{:016x}{name}", random_u64()));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
        {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("no free temporary file name")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_content_and_keeps_the_mode() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        atomic_write(&p, b"one").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"one");
        host::chmod(&p.to_string_lossy(), 0o600).unwrap();
        atomic_write(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        assert_eq!(
            host::stat(&p.to_string_lossy(), false)
                .unwrap()
                .unwrap()
                .mode,
            0o600
        );
        let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temporary file is left behind");
    }

    #[test]
    fn fails_without_a_directory() {
        let dir = tempfile::tempdir().unwrap();
        let err = atomic_write(dir.path().join("missing/f"), b"x").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
        assert!(atomic_write("/", b"x").is_err());
    }
}
