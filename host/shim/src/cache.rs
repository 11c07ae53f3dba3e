//! The node's cache directory (`~/.sandball` by default, mode 0700):
//! `modules/<sha256>.wasm` holds the modules the controller sent,
//! `compiled/<sha256>-<engine>.cwasm` their code compiled by an engine with that
//! fingerprint (with its sha256 beside it, checked before the code is loaded), and
//! `files/session-<pid>/` the files the controller staged for one session (removed
//! when it ends). Every file is written to a temporary file first and renamed into
//! place, so a reader never sees half a file.
//!
//! The cache is trusted only as far as nobody else can change it: it is used only
//! when it, the shim's own executable and every directory above them are owned by
//! the shim's user or root and not writable by group or others (as OpenSSH's
//! `StrictModes`; see [`check_trusted`]). No grant may open any of them for writing
//! ([`Cache::write_conflict`]).

use crate::error::ShimError;
use sha2::{Digest, Sha256};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The cache directory of one shim.
#[derive(Clone, Debug)]
pub struct Cache {
    /// The cache's root, with symbolic links resolved.
    root: PathBuf,
    /// The shim's own executable, with symbolic links resolved.
    exe: PathBuf,
}

/// The subdirectories of the cache: stored modules, compiled code, staged files.
const SUBDIRS: [&str; 3] = ["modules", "compiled", "files"];

/// How strictly [`check_trusted`] judges a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trust {
    /// A path of the cache (or the shim): it must be owned by the shim's user or
    /// root and writable by nobody else; so must every directory above it, except
    /// that a root-owned sticky directory (such as `/tmp`, where nobody but an
    /// entry's owner can rename or remove it) is accepted above it.
    Cache,
    /// A directory above the cache: a root-owned sticky directory is accepted as
    /// the path itself too.
    Above,
}

/// Checks that `path` (resolved) and every directory above it are owned by the
/// running user (effective uid) or root and are not writable by group or others,
/// with root-owned sticky directories accepted above `path` when `trust` says so.
/// The error names the first offending path and what is wrong with it.
pub fn check_trusted(path: &Path, trust: Trust) -> Result<PathBuf, ShimError> {
    let me = rustix::process::geteuid().as_raw();
    let real = std::fs::canonicalize(path).map_err(|e| ShimError::io("resolve", path, e))?;
    for (depth, p) in real.ancestors().enumerate() {
        let meta = std::fs::symlink_metadata(p).map_err(|e| ShimError::io("inspect", p, e))?;
        let untrusted = |problem: String| ShimError::Untrusted {
            path: p.to_path_buf(),
            problem,
            uid: me,
        };
        if meta.uid() != me && meta.uid() != 0 {
            return Err(untrusted(format!("it is owned by uid {}", meta.uid())));
        }
        let mode = meta.mode() & 0o7777;
        let sticky_root_dir = meta.is_dir() && meta.uid() == 0 && mode & 0o1000 != 0;
        let exempt = sticky_root_dir && (depth > 0 || trust == Trust::Above);
        if mode & 0o022 != 0 && !exempt {
            let who = match mode & 0o022 {
                0o020 => "group",
                0o002 => "others",
                _ => "group and others",
            };
            return Err(untrusted(format!(
                "it is writable by {who} (mode {mode:04o})"
            )));
        }
    }
    Ok(real)
}

/// Lowercase hex sha256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Checks that `sha` is a content address: 64 lowercase hex digits. Addresses become
/// file names, so anything else is refused.
pub fn check_sha(sha: &str) -> Result<(), ShimError> {
    if sha.len() == 64
        && sha
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        Ok(())
    } else {
        Err(ShimError::BadSha(sha.to_string()))
    }
}

fn create_private_dir(path: &Path) -> Result<(), ShimError> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(path)
        .map_err(|e| ShimError::io("create directory", path, e))
}

impl Cache {
    /// Opens the cache at `root`, creating it and its subdirectories (mode 0700),
    /// after checking that it, its subdirectories and the shim's own executable can
    /// be trusted ([`check_trusted`]).
    pub fn open(root: &Path) -> Result<Cache, ShimError> {
        let root = std::path::absolute(root).map_err(|e| ShimError::io("resolve", root, e))?;
        // Nothing is created under a directory others could change.
        if let Some(existing) = root.ancestors().find(|p| p.exists()) {
            let trust = if existing == root {
                Trust::Cache
            } else {
                Trust::Above
            };
            check_trusted(existing, trust)?;
        }
        for sub in SUBDIRS {
            create_private_dir(&root.join(sub))?;
        }
        let root = check_trusted(&root, Trust::Cache)?;
        for sub in SUBDIRS {
            check_trusted(&root.join(sub), Trust::Cache)?;
        }
        let exe = std::env::current_exe()
            .map_err(|e| ShimError::io("find", "the shim's own executable", e))?;
        let exe = check_trusted(&exe, Trust::Cache)?;
        Ok(Cache { root, exe })
    }

    /// The paths no grant may open for writing: the cache's root and the shim's own
    /// executable, resolved. A directory opened with write access must not be one of
    /// them, lie inside one, or lie above one (it could rename it away); see
    /// [`Cache::write_conflict`].
    pub fn protected_paths(&self) -> Vec<PathBuf> {
        vec![self.root.clone(), self.exe.clone()]
    }

    /// The protected path (see [`Cache::protected_paths`]) that opening `dir`
    /// (resolved, absolute) with write access would expose: `dir` is it, lies inside
    /// it, or lies above it. `None` when `dir` is clear of all of them.
    pub fn write_conflict(&self, dir: &Path) -> Option<PathBuf> {
        self.protected_paths()
            .into_iter()
            .find(|p| p.starts_with(dir) || dir.starts_with(p))
    }

    /// The default cache directory: `.sandball` in the shim user's home.
    pub fn default_root() -> PathBuf {
        crate::paths::home_dir().join(".sandball")
    }

    /// `root`, or where the cache goes when `root` cannot be made: a user whose home
    /// does not exist or is not theirs to write (`nobody`'s `/nonexistent`, `www-data`'s
    /// `/var/www`) keeps it in `.sandball-<uid>` under the system's temporary directory,
    /// as Ansible falls back to it for its remote temporary files. [`Cache::open`]
    /// still checks it: one that someone else made first is refused, not used.
    pub fn usable_root(root: PathBuf) -> PathBuf {
        let Some(existing) = root.ancestors().find(|p| p.exists()) else {
            return root;
        };
        if existing == root || rustix::fs::access(existing, rustix::fs::Access::WRITE_OK).is_ok() {
            return root;
        }
        let uid = rustix::process::getuid().as_raw();
        std::env::temp_dir().join(format!(".sandball-{uid}"))
    }

    /// The cache's root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where the module with this address is stored.
    pub fn module_path(&self, sha: &str) -> PathBuf {
        self.root.join("modules").join(format!("{sha}.wasm"))
    }

    /// Where the module's code compiled by the engine with fingerprint `engine` is kept.
    pub fn compiled_path(&self, sha: &str, engine: &str) -> PathBuf {
        self.root
            .join("compiled")
            .join(format!("{sha}-{engine}.cwasm"))
    }

    /// Takes the lock that serialises compiling one module: shims of several hosts
    /// starting together on one node would otherwise all compile it at once. The
    /// lock is released when the returned file is dropped; a failure to lock only
    /// costs a duplicate compile, so it is reported and ignored by the caller.
    pub fn compile_lock(&self, sha: &str, engine: &str) -> Result<std::fs::File, ShimError> {
        let path = self
            .root
            .join("compiled")
            .join(format!("{sha}-{engine}.lock"));
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(&path)
            .map_err(|e| ShimError::io("open the compile lock", &path, e))?;
        rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)
            .map_err(|e| ShimError::io("lock", &path, e.into()))?;
        Ok(file)
    }

    /// Where the sha256 of the compiled code at [`Cache::compiled_path`] is recorded
    /// when it is compiled.
    pub fn digest_path(&self, sha: &str, engine: &str) -> PathBuf {
        self.root
            .join("compiled")
            .join(format!("{sha}-{engine}.cwasm.sha256"))
    }

    /// Keeps a module's compiled code, then the sha256 it must have when loaded.
    pub fn store_compiled(&self, sha: &str, engine: &str, code: &[u8]) -> Result<(), ShimError> {
        write_atomic(&self.compiled_path(sha, engine), code)?;
        write_atomic(&self.digest_path(sha, engine), sha256_hex(code).as_bytes())
    }

    /// The module's compiled code, read into memory and checked against the sha256
    /// recorded when it was compiled (only code that passes may be deserialized).
    pub fn load_compiled(&self, sha: &str, engine: &str) -> Compiled {
        let path = self.compiled_path(sha, engine);
        let code = match read_cache_file(&path) {
            Ok(Some(code)) => code,
            Ok(None) => return Compiled::Missing,
            Err(e) => return Compiled::Rejected(e.to_string()),
        };
        let recorded = match read_cache_file(&self.digest_path(sha, engine)) {
            Ok(Some(d)) => String::from_utf8_lossy(&d).trim().to_string(),
            Ok(None) => {
                return Compiled::Rejected(format!(
                    "{}: no sha256 was recorded for it when it was compiled",
                    path.display()
                ));
            }
            Err(e) => return Compiled::Rejected(e.to_string()),
        };
        if check_sha(&recorded).is_err() {
            return Compiled::Rejected(format!(
                "{}: the sha256 recorded for it is malformed",
                path.display()
            ));
        }
        let actual = sha256_hex(&code);
        if actual != recorded {
            return Compiled::Rejected(format!(
                "{}: its sha256 is {actual}, not the {recorded} recorded when it was compiled",
                path.display()
            ));
        }
        Compiled::Verified(code)
    }

    /// Removes a module's compiled code and its recorded sha256 (best effort: a
    /// file left behind is rejected again next time).
    pub fn discard_compiled(&self, sha: &str, engine: &str) {
        let _ = std::fs::remove_file(self.compiled_path(sha, engine));
        let _ = std::fs::remove_file(self.digest_path(sha, engine));
    }

    /// Stores a module after checking that `bytes` hash to `sha`.
    pub fn store_module(&self, sha: &str, bytes: &[u8]) -> Result<(), ShimError> {
        check_sha(sha)?;
        let actual = sha256_hex(bytes);
        if actual != sha {
            return Err(ShimError::ShaMismatch {
                expected: sha.to_string(),
                actual,
            });
        }
        write_atomic(&self.module_path(sha), bytes)
    }

    /// The directory this process stages the controller's files in (`copy src=`):
    /// `files/session-<pid>`, removed when the session ends ([`Cache::clear_staged`]).
    pub fn staging_dir(&self) -> PathBuf {
        self.root
            .join("files")
            .join(format!("session-{}", std::process::id()))
    }

    /// Where the file with this address is staged (files sent by the controller).
    pub fn file_path(&self, sha: &str) -> PathBuf {
        self.staging_dir().join(sha)
    }

    /// Removes the files this process staged (at the end of its session).
    pub fn clear_staged(&self) -> Result<(), ShimError> {
        remove_tree(&self.staging_dir())
    }

    /// Removes what other sessions left in `files/` and can no longer use: the
    /// staging directories of shims that are no longer running (killed before they
    /// could clear them), and anything else there (files staged by older versions).
    pub fn sweep_staged(&self) -> Result<(), ShimError> {
        let files = self.root.join("files");
        let entries = match std::fs::read_dir(&files) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(ShimError::io("list", files, e)),
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let live = name
                .to_str()
                .and_then(|n| n.strip_prefix("session-"))
                .and_then(|pid| pid.parse::<i32>().ok())
                .and_then(rustix::process::Pid::from_raw)
                .is_some_and(|pid| {
                    // Alive, or alive under another user (then not ours to judge).
                    !matches!(
                        rustix::process::test_kill_process(pid),
                        Err(rustix::io::Errno::SRCH)
                    )
                });
            if !live {
                remove_tree(&entry.path())?;
            }
        }
        Ok(())
    }

    /// The stored file with this address, if there is one.
    pub fn find_file(&self, sha: &str) -> Result<Option<PathBuf>, ShimError> {
        check_sha(sha)?;
        let path = self.file_path(sha);
        Ok(path.is_file().then_some(path))
    }

    /// Adds one chunk of the file `sha` at `offset` (chunks come in order; offset 0
    /// starts afresh). After the `last` chunk the whole is checked against `sha` and
    /// renamed into place; its path is returned then.
    pub fn put_file_chunk(
        &self,
        sha: &str,
        offset: u64,
        bytes: &[u8],
        last: bool,
    ) -> Result<(u64, Option<PathBuf>), ShimError> {
        check_sha(sha)?;
        let dir = self.staging_dir();
        create_private_dir(&dir)?;
        let part = dir.join(format!(".{sha}.part"));
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(offset != 0)
            .write(true)
            .truncate(offset == 0)
            .mode(0o600)
            .open(&part)
            .map_err(|e| ShimError::io("open", &part, e))?;
        let have = file
            .metadata()
            .map_err(|e| ShimError::io("stat", &part, e))?
            .len();
        if have != offset {
            return Err(ShimError::io(
                "append to",
                &part,
                std::io::Error::other(format!("chunk at {offset}, but {have} bytes are there")),
            ));
        }
        file.write_all(bytes)
            .and_then(|()| file.sync_data())
            .map_err(|e| ShimError::io("write", &part, e))?;
        let received = offset + bytes.len() as u64;
        if !last {
            return Ok((received, None));
        }
        let actual =
            sha256_hex(&std::fs::read(&part).map_err(|e| ShimError::io("read", &part, e))?);
        if actual != sha {
            let _ = std::fs::remove_file(&part);
            return Err(ShimError::ShaMismatch {
                expected: sha.to_string(),
                actual,
            });
        }
        let path = self.file_path(sha);
        std::fs::rename(&part, &path).map_err(|e| ShimError::io("rename to", &path, e))?;
        Ok((received, Some(path)))
    }

    /// Reads a stored module, checking that it still hashes to its address. A
    /// stored copy that does not (or that others could have changed) is removed and
    /// reported as [`ShimError::CorruptModule`], so that the controller sends it again.
    pub fn read_module(&self, sha: &str) -> Result<Vec<u8>, ShimError> {
        check_sha(sha)?;
        let path = self.module_path(sha);
        let problem = match read_cache_file(&path) {
            Ok(None) => return Err(ShimError::UnknownModule(sha.to_string())),
            Ok(Some(bytes)) => {
                let actual = sha256_hex(&bytes);
                if actual == sha {
                    return Ok(bytes);
                }
                format!("its content has sha256 {actual}")
            }
            Err(e @ ShimError::Untrusted { .. }) => e.to_string(),
            Err(e) => return Err(e),
        };
        let _ = std::fs::remove_file(&path);
        Err(ShimError::CorruptModule {
            sha: sha.to_string(),
            path,
            problem,
        })
    }
}

/// Removes a file or a directory tree; one that is not there is fine.
fn remove_tree(path: &Path) -> Result<(), ShimError> {
    let removed = match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
        Err(e) => Err(e),
    };
    match removed {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(ShimError::io("remove", path, e)),
        _ => Ok(()),
    }
}

/// Compiled code found in the cache.
#[derive(Debug)]
pub enum Compiled {
    /// There is none.
    Missing,
    /// The code, whose sha256 matches the one recorded when it was compiled.
    Verified(Vec<u8>),
    /// There is some, but it must not be loaded: why.
    Rejected(String),
}

/// Reads a file of the cache (`None` when there is none), refusing one that is not
/// a regular file owned by the shim's user or root and writable by nobody else.
/// Symbolic links are not followed.
fn read_cache_file(path: &Path) -> Result<Option<Vec<u8>>, ShimError> {
    use std::io::Read;
    let mut file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(ShimError::io("open", path, e)),
    };
    let meta = file
        .metadata()
        .map_err(|e| ShimError::io("inspect", path, e))?;
    let me = rustix::process::geteuid().as_raw();
    let untrusted = |problem: String| ShimError::Untrusted {
        path: path.to_path_buf(),
        problem,
        uid: me,
    };
    if !meta.is_file() {
        return Err(untrusted("it is not a regular file".into()));
    }
    if meta.uid() != me && meta.uid() != 0 {
        return Err(untrusted(format!("it is owned by uid {}", meta.uid())));
    }
    if meta.mode() & 0o022 != 0 {
        return Err(untrusted(format!(
            "it is writable by group or others (mode {:04o})",
            meta.mode() & 0o7777
        )));
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)
        .map_err(|e| ShimError::io("read", path, e))?;
    Ok(Some(bytes))
}

/// Writes `bytes` to `path` through a temporary file (mode 0600) in the same
/// directory and a rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), ShimError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .map_err(|e| ShimError::io("create a temporary file in", dir, e))?;
    tmp.write_all(bytes)
        .and_then(|()| tmp.as_file().sync_data())
        .map_err(|e| ShimError::io("write", tmp.path().to_path_buf(), e))?;
    tmp.persist(path)
        .map_err(|e| ShimError::io("rename a temporary file to", path, e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn files_arrive_in_chunks_and_are_checked() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::open(&dir.path().join("c")).unwrap();
        let sha = sha256_hex(b"hello world");
        assert_eq!(cache.find_file(&sha).unwrap(), None);
        assert_eq!(
            cache.put_file_chunk(&sha, 0, b"hello ", false).unwrap(),
            (6, None)
        );
        let out_of_order = cache.put_file_chunk(&sha, 3, b"x", false);
        assert!(out_of_order.is_err());
        let (n, path) = cache.put_file_chunk(&sha, 6, b"world", true).unwrap();
        assert_eq!((n, path.clone()), (11, Some(cache.file_path(&sha))));
        assert_eq!(std::fs::read(path.unwrap()).unwrap(), b"hello world");
        assert_eq!(cache.find_file(&sha).unwrap(), Some(cache.file_path(&sha)));

        let other = sha256_hex(b"other");
        let bad = cache.put_file_chunk(&other, 0, b"not other", true);
        assert!(matches!(bad, Err(ShimError::ShaMismatch { .. })));
        assert_eq!(cache.find_file(&other).unwrap(), None);
        assert!(cache.find_file("../etc").is_err());
    }

    #[test]
    fn staged_files_last_as_long_as_their_session() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::open(&dir.path().join("c")).unwrap();
        let sha = sha256_hex(b"secret content");
        let (_, path) = cache
            .put_file_chunk(&sha, 0, b"secret content", true)
            .unwrap();
        let path = path.unwrap();
        assert!(path.starts_with(cache.staging_dir()));
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        // What a shim that was killed left behind, and a file of an older version.
        let files = dir.path().join("c/files");
        let dead = files.join("session-999999999");
        std::fs::create_dir(&dead).unwrap();
        std::fs::write(dead.join(&sha), b"secret content").unwrap();
        std::fs::write(files.join(&sha), b"secret content").unwrap();
        cache.sweep_staged().unwrap();
        assert!(!dead.exists() && !files.join(&sha).exists());
        assert!(path.exists(), "this session's own file was swept");
        cache.clear_staged().unwrap();
        assert!(!path.exists() && !cache.staging_dir().exists());
        assert_eq!(cache.find_file(&sha).unwrap(), None);
        cache.clear_staged().unwrap();
    }

    #[test]
    fn layout_is_content_addressed_and_private() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("c");
        let cache = Cache::open(&root).unwrap();
        let sha = sha256_hex(b"module");
        assert_eq!(
            cache.module_path(&sha),
            root.join(format!("modules/{sha}.wasm"))
        );
        assert_eq!(
            cache.compiled_path(&sha, "e1"),
            root.join(format!("compiled/{sha}-e1.cwasm"))
        );
        let mode = std::fs::metadata(&root).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        assert!(matches!(
            cache.read_module(&sha),
            Err(ShimError::UnknownModule(_))
        ));
        cache.store_module(&sha, b"module").unwrap();
        let mode = std::fs::metadata(cache.module_path(&sha))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(cache.read_module(&sha).unwrap(), b"module");
    }

    #[test]
    fn caches_others_could_change_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        // A directory above the cache that group and others may write.
        let open = dir.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = Cache::open(&open.join("cache")).unwrap_err();
        assert!(
            !open.join("cache").exists(),
            "created under an open directory"
        );
        let text = err.to_string();
        assert!(matches!(err, ShimError::Untrusted { .. }), "{text}");
        assert!(
            text.contains(&format!("refusing to use {}:", open.display()))
                && text.contains("writable by group and others (mode 0777)"),
            "{text}"
        );
        // The cache root itself, group-writable.
        let root = dir.path().join("root");
        Cache::open(&root).unwrap();
        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o770)).unwrap();
        let text = Cache::open(&root).unwrap_err().to_string();
        assert!(text.contains("writable by group (mode 0770)"), "{text}");
        // A subdirectory owned by another user (the tests may run as root).
        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o700)).unwrap();
        let modules = root.join("modules");
        if std::os::unix::fs::chown(&modules, Some(65534), None).is_ok()
            && rustix::process::geteuid().as_raw() != 65534
        {
            let text = Cache::open(&root).unwrap_err().to_string();
            assert!(
                text.contains(&format!("{}: it is owned by uid 65534", modules.display())),
                "{text}"
            );
        }
        // A root-owned sticky directory above the cache (like /tmp) is accepted, not
        // as the cache itself.
        let tmp = std::env::temp_dir();
        let sticky = std::fs::metadata(&tmp).unwrap();
        if sticky.uid() == 0 && sticky.mode() & 0o1777 == 0o1777 {
            assert!(check_trusted(&tmp, Trust::Cache).is_err());
            assert!(check_trusted(&tmp, Trust::Above).is_ok());
            assert!(check_trusted(dir.path(), Trust::Cache).is_ok());
        }
    }

    #[test]
    fn the_cache_and_the_shim_are_protected_from_write_grants() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::open(&dir.path().join("c")).unwrap();
        let root = std::fs::canonicalize(dir.path().join("c")).unwrap();
        let exe = std::fs::canonicalize(std::env::current_exe().unwrap()).unwrap();
        assert_eq!(cache.protected_paths(), vec![root.clone(), exe.clone()]);
        assert_eq!(cache.write_conflict(&root), Some(root.clone()));
        assert_eq!(
            cache.write_conflict(&root.join("compiled")),
            Some(root.clone())
        );
        assert_eq!(
            cache.write_conflict(root.parent().unwrap()),
            Some(root.clone())
        );
        assert_eq!(cache.write_conflict(Path::new("/")), Some(root.clone()));
        assert_eq!(
            cache.write_conflict(exe.parent().unwrap()),
            Some(exe.clone())
        );
        let beside = dir.path().join("work");
        assert_eq!(
            cache.write_conflict(&std::fs::canonicalize(dir.path()).unwrap().join("work")),
            None
        );
        assert_eq!(cache.write_conflict(&beside.join("c")), None);
    }

    #[test]
    fn wrong_sha_and_bad_addresses_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::open(dir.path()).unwrap();
        let sha = sha256_hex(b"one");
        let err = cache.store_module(&sha, b"two").unwrap_err();
        assert!(matches!(err, ShimError::ShaMismatch { .. }), "{err}");
        assert!(!cache.module_path(&sha).exists());
        assert!(matches!(
            check_sha("../../etc/passwd"),
            Err(ShimError::BadSha(_))
        ));
        assert!(matches!(
            check_sha(&sha.to_uppercase()),
            Err(ShimError::BadSha(_))
        ));
        assert!(matches!(
            cache.read_module(&sha),
            Err(ShimError::UnknownModule(_))
        ));
    }
}
