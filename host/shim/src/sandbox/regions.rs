//! The directories a grant opens: each grant resolved on the node (symlinks, `~`,
//! the node's temporary directory), checked against the policy's denials and
//! sandball's own files, missing parents stood in for, and `/proc` given as a snapshot.

use super::SandboxError;
use crate::paths::{self, Places};
use sandball_wire::capability::{Access, FsGrant, FsScope, Grant, glob};
use std::path::{Path, PathBuf};

/// One directory a module may use, with the access the grant gives to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Region {
    /// The directory on the node: absolute, with every symlink resolved.
    pub dir: PathBuf,
    /// Where the module sees it: `dir`, except for a `/proc` snapshot.
    pub guest: PathBuf,
    /// Read or read-write.
    pub access: Access,
    /// The grant it came from, for messages.
    pub grant: String,
    /// Only `guest` itself, never what lies below it: WASI does not open it, host
    /// calls reach it alone (`stat`, a program's working directory). For `/`, whose
    /// opening would show every process under `/proc`.
    pub only_itself: bool,
    /// Why granted paths below it fail on the node, where the module cannot learn it
    /// through WASI: host calls on them answer as the node does.
    pub below: Option<Below>,
}

/// Why granted paths below a region's directory fail on the node: so that operations
/// on them fail as there, whatever access they ask for, and with nothing more than
/// that failure revealed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Below {
    /// Granted paths' directories below it (resolved) that did not exist when the
    /// run began: a path at or below one still missing is missing (`ENOENT`).
    Missing(Vec<PathBuf>),
    /// The region is an empty stand-in for a path the node refuses every path below
    /// with this error: `ENOTDIR` below a file, `EACCES` below a directory the
    /// shim's user may not open or search.
    Fails(i32),
}

impl Below {
    /// The error the node gives for `resolved`, which lies in a region whose
    /// directory resolves to `real`; `None` for a path this does not answer for (it
    /// is then an ordinary path of the region, or merely not granted).
    pub fn errno(&self, resolved: &Path, real: &Path) -> Option<i32> {
        match self {
            Below::Missing(dirs) => dirs
                .iter()
                .any(|d| {
                    resolved.starts_with(d)
                        && matches!(std::fs::symlink_metadata(d),
                            Err(e) if e.kind() == std::io::ErrorKind::NotFound)
                })
                .then_some(libc::ENOENT),
            Below::Fails(errno) => {
                (resolved != real && resolved.starts_with(real)).then_some(*errno)
            }
        }
    }
}

/// The directories a grant opens, and what has to live as long as the run.
#[derive(Debug, Default)]
pub struct Regions {
    /// The directories, one per resolved path with the strongest access granted to it.
    pub regions: Vec<Region>,
    /// Private directories standing in for others: the copy of the granted files
    /// directly under `/proc`, empty ones for read grants whose directory is missing,
    /// the one for `/` that holds links to the granted files there.
    stand_ins: Vec<tempfile::TempDir>,
    /// The directory standing in for `/`, once one does.
    root_stand_in: Option<PathBuf>,
}

/// The `/proc` files a grant names directly under `/proc` (such as `/proc/loadavg`)
/// are copied into a private directory the module sees as `/proc`: opening `/proc`
/// itself would show every process, `self` included.
const PROC: &str = "/proc";

/// Whether `a` and `b` are the same path or one lies inside the other.
fn related(a: &Path, b: &Path) -> bool {
    a.starts_with(b) || b.starts_with(a)
}

/// Whether a path names a process under `/proc` (`self`, `thread-self`, a pid).
fn is_process_entry(name: &std::ffi::OsStr) -> bool {
    name == "self"
        || name == "thread-self"
        || name
            .to_str()
            .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
}

/// Resolves `path` (absolute) as far as it exists: the existing part with every
/// symlink resolved, and the missing components below it.
fn resolve_existing(path: &Path) -> std::io::Result<(PathBuf, Vec<std::ffi::OsString>)> {
    let mut missing = Vec::new();
    let mut at = path.to_path_buf();
    loop {
        match std::fs::canonicalize(&at) {
            Ok(real) => {
                missing.reverse();
                return Ok((real, missing));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let Some(name) = at.file_name() else {
                    return Err(e);
                };
                missing.push(name.to_os_string());
                at.pop();
            }
            Err(e) => return Err(e),
        }
    }
}

/// How the node sees one grant's directory: resolved, and whether parts of it are
/// still to be created.
struct Resolved {
    /// The directory as the grant names it (normalised).
    lexical: PathBuf,
    /// Its nearest existing ancestor (itself when it exists), resolved.
    existing: PathBuf,
    /// The components to create below `existing`.
    missing: Vec<std::ffi::OsString>,
}

impl Resolved {
    /// The nearest existing ancestor as the grant names it.
    fn existing_as_named(&self) -> PathBuf {
        let mut p = self.lexical.clone();
        for _ in &self.missing {
            p.pop();
        }
        p
    }

    fn real(&self) -> PathBuf {
        let mut p = self.existing.clone();
        p.extend(&self.missing);
        p
    }
}

/// The checks every opened directory passes, against the whole grant.
struct Checker<'a> {
    grant: &'a Grant,
    places: &'a Places,
    /// The denied paths: as written, and resolved on the node (`None` for patterns).
    deny: Vec<(&'a FsGrant, PathBuf, Option<PathBuf>)>,
    /// sandball's own files, resolved.
    protected: Vec<PathBuf>,
}

impl<'a> Checker<'a> {
    fn new(grant: &'a Grant, places: &'a Places, protected: &[PathBuf]) -> Self {
        let deny = grant
            .deny
            .iter()
            .map(|d| {
                let lexical = places.absolute(&d.path);
                let real = (!d.path.contains(['*', '?'])).then(|| {
                    resolve_existing(&lexical)
                        .map(|(e, m)| e.join(m.iter().collect::<PathBuf>()))
                        .unwrap_or_else(|_| lexical.clone())
                });
                (d, lexical, real)
            })
            .collect();
        let protected = protected
            .iter()
            .map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| paths::normalize(p)))
            .collect();
        Checker {
            grant,
            places,
            deny,
            protected,
        }
    }

    /// Whether the grant names `real` (with at least `access`) as a directory it opens:
    /// the opened directory of an entry, a tree, or a directory below a tree.
    fn covers(&self, real: &Path, access: Access) -> bool {
        self.grant.fs.iter().any(|g| {
            g.access() >= access && {
                let opened = self.places.absolute(&g.opened_dir());
                real == opened
                    || (g.scope == FsScope::Tree && real.starts_with(&opened))
                    || (g.scope == FsScope::Entry && real == self.places.absolute(&g.path))
            }
        })
    }

    fn check(&self, fs: &FsGrant, resolved: &Resolved) -> Result<(), SandboxError> {
        let grant = fs.to_string();
        let real = resolved.real();
        let proc = Path::new(PROC);
        // A path granted for itself opens nothing: only the denied paths apply.
        let itself = fs.scope == FsScope::Itself;
        if !itself && proc.starts_with(&real) && (real != proc || fs.scope == FsScope::Tree) {
            return Err(SandboxError::Proc {
                grant,
                reason: format!(
                    "it opens {}, which holds every process's directory under /proc (their environments among them); grant the /proc files you need as entries, or narrower trees",
                    real.display()
                ),
            });
        }
        if !itself
            && let Ok(rest) = real.strip_prefix(proc)
            && rest
                .components()
                .next()
                .is_some_and(|c| is_process_entry(c.as_os_str()))
        {
            return Err(SandboxError::Proc {
                grant,
                reason: format!(
                    "it opens {}, a process's own directory (its environment among it); grant system-wide /proc files instead",
                    real.display()
                ),
            });
        }
        let kernels = within_sysfs(&resolved.lexical, &real) && fs.access() == Access::Read;
        let system = through_system_links(&resolved.lexical) == real;
        if !itself && !kernels && !system && !self.covers(&real, fs.access()) {
            return Err(SandboxError::Symlinked {
                grant,
                path: resolved.lexical.clone(),
                real,
            });
        }
        let ops = sandball_wire::capability::FsOps::from(fs.access());
        for (d, lexical, d_real) in &self.deny {
            if d.ops.intersect(ops).is_empty() {
                continue;
            }
            let hit = match d_real {
                Some(d_real) => related(&real, d_real) || related(&real, lexical),
                None => real.ancestors().any(|a| {
                    a.to_str()
                        .is_some_and(|a| glob(&lexical.to_string_lossy(), a))
                }),
            };
            if hit {
                return Err(SandboxError::Denied {
                    grant,
                    real,
                    denied: d.to_string(),
                    denied_real: d_real.clone().filter(|r| r != lexical).unwrap_or_default(),
                });
            }
        }
        if fs.access() == Access::ReadWrite
            && let Some(p) = self.protected.iter().find(|p| related(&real, p))
        {
            return Err(SandboxError::Protected {
                grant,
                real,
                protected: p.clone(),
            });
        }
        Ok(())
    }
}

/// Where one grant leads on the node: its directory resolved (tree: the path, which
/// must exist; entry: its parent, never more, which may be missing).
fn resolve_grant(fs: &FsGrant, places: &Places) -> Result<Resolved, SandboxError> {
    let lexical = places.absolute(&fs.opened_dir());
    let open_error = |e: std::io::Error| SandboxError::Open {
        grant: fs.to_string(),
        path: lexical.clone(),
        message: e.to_string(),
    };
    let (existing, missing) = resolve_existing(&lexical).map_err(open_error)?;
    if !existing.is_dir() {
        return Err(SandboxError::NotADirectory {
            grant: fs.to_string(),
            path: lexical,
        });
    }
    if !missing.is_empty() && fs.scope == FsScope::Tree {
        return Err(SandboxError::NotADirectory {
            grant: fs.to_string(),
            path: lexical,
        });
    }
    Ok(Resolved {
        lexical,
        existing,
        missing,
    })
}

/// Creates the missing directories below an existing one, one level at a time
/// through the one above, never following a symlink.
fn create_missing(fs: &FsGrant, resolved: &Resolved) -> Result<(), SandboxError> {
    let fail = |path: PathBuf, e: std::io::Error| SandboxError::Open {
        grant: fs.to_string(),
        path,
        message: e.to_string(),
    };
    let mut dir = cap_primitives::fs::open_ambient_dir(
        &resolved.existing,
        cap_primitives::ambient_authority(),
    )
    .map_err(|e| fail(resolved.existing.clone(), e))?;
    let mut at = resolved.existing.clone();
    for name in &resolved.missing {
        at.push(name);
        match rustix::fs::mkdirat(
            &dir,
            name.as_os_str(),
            rustix::fs::Mode::from_raw_mode(0o777),
        ) {
            Ok(()) | Err(rustix::io::Errno::EXIST) => {}
            Err(e) => return Err(fail(at, e.into())),
        }
        let next = rustix::fs::openat(
            &dir,
            name.as_os_str(),
            rustix::fs::OFlags::DIRECTORY
                | rustix::fs::OFlags::NOFOLLOW
                | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )
        .map_err(|e| fail(at.clone(), e.into()))?;
        dir = std::fs::File::from(next);
    }
    Ok(())
}

/// The directories a grant's fs entries open on the node, each resolved (symlinks
/// included) and checked before anything is opened or created: it must be a
/// directory the grant names, outside every denied path, not overlapping
/// `protected` (sandball's own files) when writable, and not exposing processes
/// under `/proc`. An entry's missing directory is created for a read-write grant that
/// says `create_parents`; otherwise an empty, read-only directory stands in for its
/// nearest existing ancestor, where no other region shows that one. A tree
/// that is not an existing directory opens nothing. Entries
/// directly under `/proc` are copied into a private snapshot. Relative paths and `~`
/// start at `places`.
pub fn regions(
    grant: &Grant,
    places: &Places,
    protected: &[PathBuf],
) -> Result<Regions, SandboxError> {
    let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| paths::normalize(p));
    let places = &Places {
        home: canonical(&places.home),
        cwd: canonical(&places.cwd),
    };
    let checker = Checker::new(grant, places, protected);
    let mut out = Regions::default();
    let mut proc_files = Vec::new();
    let mut missing_parents = Vec::new();
    for fs in &grant.fs {
        let opened = places.absolute(&fs.opened_dir());
        // `file.txt/x`, `0700-dir-of-another/x`: nothing can be reached there, and the
        // node says why ("Not a directory", "Permission denied"). A tree that is
        // itself a file opens nothing (below).
        if fs.scope != FsScope::Itself
            && let Some((at, errno)) = refused_at(&opened)
            && !(fs.scope == FsScope::Tree && at == opened && errno == libc::ENOTDIR)
        {
            out.stand_in(at, fs, Some(Below::Fails(errno)))?;
            continue;
        }
        if fs.scope == FsScope::Tree && !places.absolute(&fs.path).is_dir() {
            // Nothing is opened: the module finds the path missing (WASI reads a path
            // outside every granted directory as missing) and says so in its own
            // words, as where it is not a directory.
            continue;
        }
        if fs.scope == FsScope::Itself {
            out.open_itself(fs, places, &checker)?;
            continue;
        }
        if let Some(root) = root_entry(fs, places) {
            out.open_root_entry(root, fs, places, &checker)?;
            continue;
        }
        let resolved = resolve_grant(fs, places)?;
        checker.check(fs, &resolved)?;
        let real = resolved.real();
        if real == Path::new(PROC) && fs.scope == FsScope::Entry {
            proc_files.push(fs);
            continue;
        }
        if real.to_str().is_none() {
            return Err(SandboxError::NotUtf8 {
                grant: fs.to_string(),
                path: real,
            });
        }
        // The module sees the directory where the grant names it (`/var/run`, a
        // sysfs link); its host calls resolve the path anyway.
        if resolved.missing.is_empty() {
            add(&mut out.regions, real, resolved.lexical, fs, fs.access());
        } else if fs.access() == Access::ReadWrite && fs.create_parents {
            create_missing(fs, &resolved)?;
            add(&mut out.regions, real, resolved.lexical, fs, fs.access());
        } else {
            let first_missing = resolved.existing.join(&resolved.missing[0]);
            missing_parents.push((resolved.existing_as_named(), first_missing, fs));
        }
    }
    // A directory that is not there: an empty one stands in, read-only, for its
    // nearest existing ancestor (unless a real region already shows that ancestor),
    // so the module finds the missing directory missing and can make nothing there.
    // It says so in its own words, as it would on the node ("No such file or
    // directory", "Destination directory … does not exist"), host calls answering
    // `ENOENT` there as the node does, whichever region shows that ancestor.
    for (existing, first_missing, fs) in missing_parents {
        let shown_by = out
            .regions
            .iter_mut()
            .filter(|r| !r.only_itself && existing.starts_with(&r.guest))
            .max_by_key(|r| r.guest.components().count());
        match shown_by {
            Some(r) => match &mut r.below {
                Some(Below::Missing(dirs)) => dirs.push(first_missing),
                Some(Below::Fails(_)) => {}
                None => r.below = Some(Below::Missing(vec![first_missing])),
            },
            None => {
                out.stand_in(existing, fs, Some(Below::Missing(vec![first_missing])))?;
            }
        }
    }
    if !proc_files.is_empty() {
        let (dir, region) = proc_snapshot(&proc_files, places)?;
        out.stand_ins.push(dir);
        out.regions.push(region);
    }
    Ok(out)
}

/// Where the node refuses the directory `path` before anything is opened, and with
/// which error: its nearest existing ancestor (itself included) when that is not a
/// directory (`file.txt` for `file.txt/a/b`: `ENOTDIR`), or the deepest directory on
/// the way that the shim's user may not search, or `path` itself when it may not
/// open it (`EACCES`). `None` when nothing is in the way, or it cannot be examined.
fn refused_at(path: &Path) -> Option<(PathBuf, i32)> {
    use std::io::ErrorKind;
    let mut searched_denied = false;
    for at in path.ancestors() {
        match std::fs::metadata(at) {
            Ok(m) if !m.is_dir() => return Some((at.to_path_buf(), libc::ENOTDIR)),
            Ok(_) => {
                let denied = searched_denied
                    || (at == path
                        && matches!(std::fs::File::open(at),
                            Err(e) if e.kind() == ErrorKind::PermissionDenied));
                return denied.then(|| (at.to_path_buf(), libc::EACCES));
            }
            Err(e) if e.kind() == ErrorKind::PermissionDenied => searched_denied = true,
            Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {}
            Err(_) => return None,
        }
    }
    None
}

/// The compatibility links every Linux system has (the merged `/usr`, `/var/run` to
/// `/run`): made by the system and owned by root, they are followed where a grant's
/// path passes through them. Other symlinks must lead where the grant names.
const SYSTEM_LINKS: &[&str] = &[
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/var/run",
    "/var/lock",
];

/// `lexical` with the system link it starts with replaced by where that leads; the
/// path itself when it starts with none (a link not owned by root is none).
fn through_system_links(lexical: &Path) -> PathBuf {
    use std::os::unix::fs::MetadataExt;
    SYSTEM_LINKS
        .iter()
        .find_map(|link| {
            let rest = lexical.strip_prefix(link).ok()?;
            let meta = std::fs::symlink_metadata(link).ok()?;
            (meta.file_type().is_symlink() && meta.uid() == 0).then_some(())?;
            let target = std::fs::canonicalize(link).ok()?;
            Some(if rest.as_os_str().is_empty() {
                target
            } else {
                target.join(rest)
            })
        })
        .unwrap_or_else(|| lexical.to_path_buf())
}

/// Whether a directory named `lexical` that resolves to `real` stays in sysfs. sysfs
/// is the kernel's: its symlinks (`/sys/class/net/lo` into `/sys/devices`) are made
/// by no user and lead nowhere but `/sys`, so a read grant follows them.
fn within_sysfs(lexical: &Path, real: &Path) -> bool {
    lexical.starts_with("/sys") && real.starts_with("/sys")
}

/// A read-only entry that would open `/` (and with it every process's directory
/// under `/proc`): `/` itself, or what lies directly under it.
enum RootEntry {
    /// `/` itself (a program's working directory).
    Root,
    /// `/x` that does not exist (a link's `src`, a `creates` test).
    Missing,
    /// `/opt`: a directory.
    Dir(PathBuf),
    /// `/swapfile`, `/.dockerenv`: a regular file.
    File(PathBuf),
}

/// What `fs` is when it is a read-only entry that would open `/`; `None` for the
/// others, and for `/proc` and symlinks directly under `/` (these open `/`: refused).
fn root_entry(fs: &FsGrant, places: &Places) -> Option<RootEntry> {
    if fs.scope != FsScope::Entry || fs.access() != Access::Read {
        return None;
    }
    let path = places.absolute(&fs.path);
    if path == Path::new("/") {
        return Some(RootEntry::Root);
    }
    if path.parent() != Some(Path::new("/")) || path == Path::new(PROC) {
        return None;
    }
    match std::fs::symlink_metadata(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(RootEntry::Missing),
        Ok(m) if m.is_dir() => Some(RootEntry::Dir(path)),
        Ok(m) if m.is_file() => Some(RootEntry::File(path)),
        _ => None,
    }
}

impl Regions {
    /// Opens what a read-only entry that would open `/` needs, and nothing else: `/`
    /// for host calls alone; an empty stand-in for `/` where the entry is missing
    /// (the module finds nothing, as on the node); a directory itself; a file linked
    /// into the stand-in for `/` (the same file: its content, owner and times).
    fn open_root_entry(
        &mut self,
        root: RootEntry,
        fs: &FsGrant,
        places: &Places,
        checker: &Checker<'_>,
    ) -> Result<(), SandboxError> {
        let checked = |path: &Path| {
            checker.check(
                fs,
                &Resolved {
                    lexical: path.to_path_buf(),
                    existing: path.to_path_buf(),
                    missing: Vec::new(),
                },
            )
        };
        match root {
            RootEntry::Root => self.open_itself(fs, places, checker)?,
            RootEntry::Missing => {
                self.root_stand_in(fs)?;
            }
            RootEntry::Dir(path) => {
                checked(&path)?;
                add(&mut self.regions, path.clone(), path, fs, Access::Read);
            }
            RootEntry::File(path) => {
                checked(&path)?;
                let dir = self.root_stand_in(fs)?;
                let name = path.file_name().unwrap_or_default();
                match std::fs::hard_link(&path, dir.join(name)) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                    Err(e) => {
                        return Err(SandboxError::Proc {
                            grant: fs.to_string(),
                            reason: format!(
                                "reading {} would open /, which holds every process's directory under /proc, and the file could not be linked into a private stand-in for / ({e}: it must be on the file system of the temporary directory, and yours to link)",
                                path.display()
                            ),
                        });
                    }
                }
            }
        }
        Ok(())
    }

    /// A path granted for itself (a working directory; a read entry of `/`, narrowed
    /// to this): reached by host calls alone, where its symlinks lead, outside every
    /// denied path. A missing one is missing.
    fn open_itself(
        &mut self,
        fs: &FsGrant,
        places: &Places,
        checker: &Checker<'_>,
    ) -> Result<(), SandboxError> {
        let fs = &FsGrant {
            scope: FsScope::Itself,
            ..fs.clone()
        };
        let lexical = places.absolute(&fs.path);
        let dir = match std::fs::canonicalize(&lexical) {
            Ok(real) => {
                checker.check(
                    fs,
                    &Resolved {
                        lexical: lexical.clone(),
                        existing: real.clone(),
                        missing: Vec::new(),
                    },
                )?;
                real
            }
            Err(_) => lexical.clone(),
        };
        self.regions.push(Region {
            dir,
            guest: lexical,
            access: Access::Read,
            grant: fs.to_string(),
            only_itself: true,
            below: None,
        });
        Ok(())
    }

    /// The empty private directory standing in for `/`, read-only, made once.
    fn root_stand_in(&mut self, fs: &FsGrant) -> Result<PathBuf, SandboxError> {
        if let Some(dir) = &self.root_stand_in {
            return Ok(dir.clone());
        }
        let dir = self.stand_in(PathBuf::from("/"), fs, None)?;
        self.root_stand_in = Some(dir.clone());
        Ok(dir)
    }

    /// Opens an empty private directory, read-only, where the module sees `guest`,
    /// standing for what `below` says; where a region shows `guest` already, that
    /// one stays (a stand-in for missing directories learns of these ones too).
    /// Returns the directory that shows `guest`.
    fn stand_in(
        &mut self,
        guest: PathBuf,
        fs: &FsGrant,
        below: Option<Below>,
    ) -> Result<PathBuf, SandboxError> {
        if let Some(r) = self
            .regions
            .iter_mut()
            .find(|r| r.guest == guest && !r.only_itself)
        {
            if let (Some(Below::Missing(have)), Some(Below::Missing(more))) = (&mut r.below, below)
            {
                have.extend(more);
            }
            return Ok(r.dir.clone());
        }
        let dir = private_dir("sandball-empty-", fs)?;
        let path = dir.path().to_path_buf();
        self.regions.push(Region {
            dir: path.clone(),
            guest,
            access: Access::Read,
            grant: fs.to_string(),
            only_itself: false,
            below,
        });
        self.stand_ins.push(dir);
        Ok(path)
    }
}

/// A private temporary directory (mode 0700), removed when dropped.
fn private_dir(prefix: &str, fs: &FsGrant) -> Result<tempfile::TempDir, SandboxError> {
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir()
        .map_err(|e| SandboxError::Open {
            grant: fs.to_string(),
            path: std::env::temp_dir(),
            message: e.to_string(),
        })
}

fn add(regions: &mut Vec<Region>, dir: PathBuf, guest: PathBuf, fs: &FsGrant, access: Access) {
    match regions
        .iter_mut()
        .find(|r| r.guest == guest && !r.only_itself)
    {
        Some(r) if r.access < access => {
            r.access = access;
            r.grant = fs.to_string();
        }
        Some(_) => {}
        None => regions.push(Region {
            dir,
            guest,
            access,
            grant: fs.to_string(),
            only_itself: false,
            below: None,
        }),
    }
}

/// Copies the granted files directly under `/proc` (read-only, regular files
/// only, never a process's directory) into a private directory seen as `/proc`.
fn proc_snapshot(
    files: &[&FsGrant],
    places: &Places,
) -> Result<(tempfile::TempDir, Region), SandboxError> {
    let dir = private_dir("sandball-proc-", files[0])?;
    for fs in files {
        let path = places.absolute(&fs.path);
        let refuse = |reason: String| SandboxError::Proc {
            grant: fs.to_string(),
            reason,
        };
        let name = path.file_name().unwrap_or_default();
        if fs.access() != Access::Read {
            return Err(refuse(format!(
                "{} can only be granted read: opening /proc read-write would expose every process",
                path.display()
            )));
        }
        if is_process_entry(name) {
            return Err(refuse(format!(
                "{} is a process's own directory (its environment among it)",
                path.display()
            )));
        }
        let bytes = match std::fs::symlink_metadata(&path) {
            Ok(m) if m.is_file() => std::fs::read(&path).map_err(|e| e.to_string()),
            Ok(_) => Err("only regular files directly under /proc can be granted as entries; grant a directory as a tree".to_string()),
            // A file this node's kernel does not have (no loadable modules): the module
            // sees it missing, as it is.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => Err(e.to_string()),
        }
        .map_err(|m| refuse(format!("{}: {m}", path.display())))?;
        std::fs::write(dir.path().join(name), bytes).map_err(|e| SandboxError::Open {
            grant: fs.to_string(),
            path: dir.path().to_path_buf(),
            message: e.to_string(),
        })?;
    }
    let region = Region {
        dir: dir.path().to_path_buf(),
        guest: PathBuf::from(PROC),
        access: Access::Read,
        grant: files
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        only_itself: false,
        below: None,
    };
    Ok((dir, region))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fs(path: &str, access: Access, scope: FsScope) -> FsGrant {
        FsGrant {
            path: path.to_string(),
            ops: access.into(),
            scope,
            create_parents: false,
            create_parents_if: None,
            fallback: None,
        }
    }

    fn entry(path: &Path, access: Access) -> FsGrant {
        fs(path.to_str().unwrap(), access, FsScope::Entry)
    }

    fn tree(path: &Path, access: Access) -> FsGrant {
        fs(path.to_str().unwrap(), access, FsScope::Tree)
    }

    fn opened(
        fs: Vec<FsGrant>,
        deny: Vec<FsGrant>,
        protected: &[PathBuf],
    ) -> Result<Regions, SandboxError> {
        let grant = Grant {
            fs,
            deny,
            ..Grant::default()
        };
        regions(
            &grant,
            &Places::at(Path::new("/nonexistent-home")),
            protected,
        )
    }

    fn dirs(r: &Regions) -> Vec<(PathBuf, Access)> {
        r.regions
            .iter()
            .map(|r| (r.dir.clone(), r.access))
            .collect()
    }

    /// A canonical temporary directory.
    fn base() -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        (tmp, base)
    }

    #[test]
    fn entries_open_their_directory_and_trees_themselves() {
        let (_tmp, base) = base();
        std::fs::create_dir(base.join("tree")).unwrap();
        std::fs::write(base.join("file"), b"x").unwrap();
        let got = opened(
            vec![
                entry(&base.join("file"), Access::Read),
                tree(&base.join("tree"), Access::ReadWrite),
                entry(&base.join("new-file"), Access::ReadWrite),
            ],
            vec![],
            &[],
        )
        .unwrap();
        assert_eq!(
            dirs(&got),
            vec![
                (base.clone(), Access::ReadWrite),
                (base.join("tree"), Access::ReadWrite),
            ]
        );
    }

    #[test]
    fn a_missing_parent_is_missing_behind_an_empty_stand_in_never_the_real_ancestor() {
        let (_tmp, base) = base();
        let file = base.join("new/deeper/file");
        // Read or read-write, an empty directory stands in for the nearest existing
        // ancestor, so `new` is missing there; it is read-only: nothing can be made.
        for access in [Access::Read, Access::ReadWrite] {
            let got = opened(vec![entry(&file, access)], vec![], &[]).unwrap();
            assert_eq!(got.regions.len(), 1);
            assert_eq!(got.regions[0].guest, base);
            assert_eq!(got.regions[0].access, Access::Read);
            assert!(!got.regions[0].dir.starts_with(&base));
            assert_eq!(std::fs::read_dir(&got.regions[0].dir).unwrap().count(), 0);
            assert!(!base.join("new").exists());
        }
        // Where a real region shows that ancestor, it shows `new` missing: no stand-in
        // hides what that grant gives.
        let got = opened(
            vec![entry(&file, Access::ReadWrite), tree(&base, Access::Read)],
            vec![],
            &[],
        )
        .unwrap();
        assert_eq!(dirs(&got), vec![(base.clone(), Access::Read)]);
        // Asked to, the shim creates the missing directories and opens the parent only.
        let mut g = entry(&file, Access::ReadWrite);
        g.create_parents = true;
        let got = opened(vec![g], vec![], &[]).unwrap();
        assert_eq!(
            dirs(&got),
            vec![(base.join("new/deeper"), Access::ReadWrite)]
        );
        assert!(base.join("new/deeper").is_dir());
        assert!(!file.exists());
    }

    #[test]
    fn an_entry_below_a_file_is_not_a_directory() {
        let (_tmp, base) = base();
        std::fs::write(base.join("file.txt"), b"x").unwrap();
        for access in [Access::Read, Access::ReadWrite] {
            for below in ["file.txt/x", "file.txt/a/x"] {
                let got = opened(vec![entry(&base.join(below), access)], vec![], &[]).unwrap();
                assert_eq!(got.regions.len(), 1);
                assert_eq!(got.regions[0].guest, base.join("file.txt"));
                assert_eq!(got.regions[0].access, Access::Read);
                assert_eq!(got.regions[0].below, Some(Below::Fails(libc::ENOTDIR)));
                assert_eq!(std::fs::read_dir(&got.regions[0].dir).unwrap().count(), 0);
            }
        }
    }

    /// The error `locate` gives for `path` with `need`, under the regions of `fs`:
    /// `Some(errno)`, `None` for a denial (and a panic when located).
    fn located_errno(fs: Vec<FsGrant>, path: &Path, need: Access) -> Option<i32> {
        let regions = opened(fs, vec![], &[]).unwrap();
        let mut c = crate::host::confine::Confinement::new(
            regions.regions.clone(),
            Places::at(Path::new("/nonexistent-home")),
        );
        match c.locate(path.to_str().unwrap(), false, need) {
            Ok(l) => panic!("{} located at {}", path.display(), l.rel.display()),
            Err(crate::host::confine::LocateError::Io(e)) => e.raw_os_error(),
            Err(crate::host::confine::LocateError::Denied { .. }) => None,
        }
    }

    #[test]
    fn paths_below_missing_or_refused_directories_fail_as_on_the_node_and_the_others_stay_refused()
    {
        let (_tmp, base) = base();
        std::fs::write(base.join("file.txt"), b"x").unwrap();
        let missing = base.join("new/deeper/file");
        let other = base.join("other/file");
        let grants = || {
            vec![
                entry(&missing, Access::ReadWrite),
                entry(&other, Access::ReadWrite),
                entry(&base.join("file.txt/a/x"), Access::ReadWrite),
            ]
        };
        for need in [Access::Read, Access::ReadWrite] {
            for path in [&missing, &base.join("new"), &other] {
                assert_eq!(
                    located_errno(grants(), path, need),
                    Some(libc::ENOENT),
                    "{}",
                    path.display()
                );
            }
            assert_eq!(
                located_errno(grants(), &base.join("file.txt/a/x"), need),
                Some(libc::ENOTDIR)
            );
        }
        // Where a real region shows that ancestor, read-only, the same; and once the
        // directory is there, its paths are ordinary ones again.
        let with_real = || {
            let mut g = grants();
            g.push(tree(&base, Access::Read));
            g
        };
        assert_eq!(
            located_errno(with_real(), &missing, Access::ReadWrite),
            Some(libc::ENOENT)
        );
        let regions = opened(with_real(), vec![], &[]).unwrap();
        std::fs::create_dir_all(missing.parent().unwrap()).unwrap();
        let mut c = crate::host::confine::Confinement::new(
            regions.regions.clone(),
            Places::at(Path::new("/nonexistent-home")),
        );
        assert!(matches!(
            c.locate(missing.to_str().unwrap(), false, Access::ReadWrite),
            Err(crate::host::confine::LocateError::Denied { .. })
        ));
        std::fs::remove_dir_all(base.join("new")).unwrap();
        // What the stand-in shows beside them is not granted: refused, not missing.
        assert_eq!(
            located_errno(grants(), &base.join("elsewhere"), Access::ReadWrite),
            None
        );
        assert_eq!(
            located_errno(grants(), &base.join("file.txt"), Access::ReadWrite),
            None
        );
    }

    #[test]
    fn a_missing_entry_under_the_root_is_read_through_an_empty_stand_in_for_it() {
        let missing = Path::new("/sandball-test-never-there");
        let got = opened(vec![entry(missing, Access::Read)], vec![], &[]).unwrap();
        assert_eq!(got.regions.len(), 1);
        assert_eq!(got.regions[0].guest, Path::new("/"));
        assert_eq!(got.regions[0].access, Access::Read);
        assert_eq!(std::fs::read_dir(&got.regions[0].dir).unwrap().count(), 0);
        // Writing there, or a symlink there, still opens `/` itself: refused.
        for g in [
            entry(missing, Access::ReadWrite),
            entry(Path::new("/etc"), Access::ReadWrite),
            entry(Path::new("/proc"), Access::Read),
        ] {
            let err = opened(vec![g.clone()], vec![], &[]).unwrap_err();
            assert!(matches!(err, SandboxError::Proc { .. }), "{g}: {err}");
        }
    }

    #[test]
    fn a_path_granted_for_itself_follows_symlinks_and_opens_nothing() {
        let (_tmp, base) = base();
        std::fs::create_dir(base.join("real")).unwrap();
        std::os::unix::fs::symlink(base.join("real"), base.join("link")).unwrap();
        let itself = |p: &Path| fs(p.to_str().unwrap(), Access::Read, FsScope::Itself);
        let got = opened(
            vec![itself(&base.join("link")), itself(Path::new("/"))],
            vec![],
            &[],
        )
        .unwrap();
        assert_eq!(got.regions.len(), 2);
        assert!(got.regions.iter().all(|r| r.only_itself));
        assert_eq!(got.regions[0].dir, base.join("real"));
        let mut c =
            crate::host::confine::Confinement::new(got.regions.clone(), Places::at(Path::new("/")));
        let l = c
            .locate(base.join("link").to_str().unwrap(), true, Access::Read)
            .unwrap();
        assert_eq!(l.resolved, base.join("real"));
        assert!(
            c.locate(base.join("link/x").to_str().unwrap(), true, Access::Read)
                .is_err()
        );
        assert!(c.locate("/", true, Access::Read).is_ok());
        // A denied path stays denied, through the symlink too.
        let err = opened(
            vec![itself(&base.join("link"))],
            vec![tree(&base.join("real"), Access::Read)],
            &[],
        )
        .unwrap_err();
        assert!(matches!(err, SandboxError::Denied { .. }), "{err}");
    }

    #[test]
    fn reading_what_lies_directly_under_the_root_never_opens_the_root() {
        // A directory there opens itself, read-only.
        let got = opened(vec![entry(Path::new("/etc"), Access::Read)], vec![], &[]).unwrap();
        assert_eq!(dirs(&got), vec![(PathBuf::from("/etc"), Access::Read)]);
        // `/` itself (a working directory) is reached by host calls alone.
        let got = opened(vec![entry(Path::new("/"), Access::Read)], vec![], &[]).unwrap();
        assert_eq!(got.regions.len(), 1);
        assert!(got.regions[0].only_itself);
        let mut c =
            crate::host::confine::Confinement::new(got.regions.clone(), Places::at(Path::new("/")));
        assert!(c.locate("/", true, Access::Read).is_ok());
        assert!(c.locate("/etc/hostname", true, Access::Read).is_err());
        // A file there is linked into the stand-in for `/`: the same file.
        let file = PathBuf::from(format!("/sandball-test-top-{}", std::process::id()));
        if std::fs::write(&file, b"top").is_ok() {
            let got = opened(vec![entry(&file, Access::Read)], vec![], &[]);
            let _ = std::fs::remove_file(&file);
            match got {
                Ok(got) => {
                    assert_eq!(got.regions.len(), 1);
                    assert_eq!(got.regions[0].guest, Path::new("/"));
                    let names: Vec<_> = std::fs::read_dir(&got.regions[0].dir)
                        .unwrap()
                        .map(|e| e.unwrap().file_name())
                        .collect();
                    assert_eq!(names, [file.file_name().unwrap()]);
                }
                // The temporary directory lies on another file system.
                Err(e) => assert!(e.to_string().contains("could not be linked"), "{e}"),
            }
        }
    }

    #[test]
    fn grants_through_symlinks_to_places_the_grant_does_not_name_are_refused() {
        let (_tmp, base) = base();
        std::fs::create_dir_all(base.join("allowed")).unwrap();
        std::fs::create_dir_all(base.join("secret")).unwrap();
        std::os::unix::fs::symlink(base.join("secret"), base.join("allowed/x")).unwrap();
        for g in [
            tree(&base.join("allowed/x"), Access::Read),
            entry(&base.join("allowed/x/file"), Access::ReadWrite),
            tree(&base.join("allowed/x/../x"), Access::Read),
        ] {
            let err = opened(vec![g.clone()], vec![], &[]).unwrap_err();
            assert!(
                matches!(&err, SandboxError::Symlinked { real, .. } if *real == base.join("secret")),
                "{g}: {err}"
            );
        }
        // Dot-dot is applied to the path as written: allowed/../secret is secret.
        let got = opened(
            vec![tree(&base.join("allowed/../secret"), Access::Read)],
            vec![],
            &[],
        )
        .unwrap();
        assert_eq!(dirs(&got), vec![(base.join("secret"), Access::Read)]);
        // sysfs's own links, read-only, are followed.
        if Path::new("/sys/class/net/lo").is_symlink() {
            let got = opened(
                vec![entry(Path::new("/sys/class/net/lo/carrier"), Access::Read)],
                vec![],
                &[],
            )
            .unwrap();
            assert!(
                got.regions[0].dir.starts_with("/sys/devices"),
                "{:?}",
                dirs(&got)
            );
        }
        // A symlink into a place another part of the grant names is fine.
        let got = opened(
            vec![
                tree(&base.join("allowed/x"), Access::Read),
                tree(&base.join("secret"), Access::Read),
            ],
            vec![],
            &[],
        )
        .unwrap();
        // The module sees it where each grant names it.
        let guests: Vec<_> = got.regions.iter().map(|r| r.guest.clone()).collect();
        assert_eq!(guests, [base.join("allowed/x"), base.join("secret")]);
        assert!(got.regions.iter().all(|r| r.dir == base.join("secret")));
        // The system's compatibility links (`/var/run` to `/run`) are followed.
        if std::fs::read_link("/var/run").is_ok() {
            let got = opened(
                vec![entry(Path::new("/var/run/x"), Access::ReadWrite)],
                vec![],
                &[],
            )
            .unwrap();
            assert_eq!(got.regions[0].guest, Path::new("/var/run"));
            assert_eq!(
                got.regions[0].dir,
                std::fs::canonicalize("/var/run").unwrap()
            );
        }
    }

    #[test]
    fn the_node_temporary_directory_is_resolved_on_the_node_and_checked() {
        use sandball_wire::capability::NODE_TMPDIR;
        let places = Places::at(Path::new("/nonexistent-home"));
        let tmp = std::fs::canonicalize(paths::node_tmpdir(&places)).unwrap();
        assert!(tmp.is_dir());
        let grant = fs(NODE_TMPDIR, Access::ReadWrite, FsScope::Tree);
        let r = opened(vec![grant.clone()], vec![], &[]).unwrap();
        assert_eq!(dirs(&r), [(tmp.clone(), Access::ReadWrite)]);
        // Deny rules are matched against the directory it resolved to.
        let err = opened(vec![grant.clone()], vec![tree(&tmp, Access::Read)], &[]).unwrap_err();
        assert!(matches!(err, SandboxError::Denied { .. }), "{err}");
        // The module learns where it is as TMPDIR, and only with such a grant.
        let env_of = |g: Vec<FsGrant>| {
            let grant = Grant {
                fs: g,
                ..Grant::default()
            };
            crate::sandbox::module_env(&places, &grant).vars
        };
        let dir = paths::node_tmpdir(&places).to_str().unwrap().to_string();
        assert!(env_of(vec![grant]).contains(&("TMPDIR".to_string(), dir)));
        let without = env_of(vec![tree(&tmp, Access::Read)]);
        assert!(!without.iter().any(|(k, _)| k == "TMPDIR"), "{without:?}");
    }

    #[test]
    fn denied_paths_win_after_resolution() {
        let (_tmp, base) = base();
        std::fs::create_dir_all(base.join("d/sub")).unwrap();
        std::os::unix::fs::symlink(base.join("d"), base.join("dlink")).unwrap();
        let cases = [
            // The opened directory is the denied one, named through a symlink.
            (
                entry(&base.join("d/file"), Access::Read),
                tree(&base.join("dlink"), Access::Read),
            ),
            // The opened directory holds the denied entry.
            (
                tree(&base.join("d"), Access::Read),
                entry(&base.join("d/sub/secret"), Access::Read),
            ),
            // The opened directory lies inside the denied tree, written with `..`.
            (
                tree(&base.join("d/sub"), Access::Read),
                tree(&base.join("d/sub/../"), Access::Read),
            ),
            // Patterns match the resolved path.
            (
                tree(&base.join("d/sub"), Access::Read),
                tree(&base.join("d*"), Access::Read),
            ),
        ];
        for (g, d) in cases {
            let err = opened(vec![g.clone()], vec![d.clone()], &[]).unwrap_err();
            assert!(
                matches!(err, SandboxError::Denied { .. }),
                "{g} / {d}: {err}"
            );
            assert!(err.to_string().contains("the policy denies"), "{err}");
        }
        // A denial of writing leaves reading alone.
        let mut d = tree(&base.join("d"), Access::ReadWrite);
        d.ops = sandball_wire::capability::FsOps::of(&[sandball_wire::capability::FsOp::Write]);
        assert!(
            opened(
                vec![tree(&base.join("d"), Access::Read)],
                vec![d.clone()],
                &[]
            )
            .is_ok()
        );
        assert!(opened(vec![tree(&base.join("d"), Access::ReadWrite)], vec![d], &[]).is_err());
    }

    #[test]
    fn sandballs_own_files_and_their_parents_are_never_writable() {
        let (_tmp, base) = base();
        let cache = base.join("home/.sandball");
        std::fs::create_dir_all(cache.join("compiled")).unwrap();
        let protected = [cache.clone()];
        for g in [
            entry(&base.join("home/notes.txt"), Access::ReadWrite),
            tree(&base.join("home"), Access::ReadWrite),
            tree(&cache.join("compiled"), Access::ReadWrite),
            entry(&cache.join("compiled/x.cwasm"), Access::ReadWrite),
        ] {
            let err = opened(vec![g.clone()], vec![], &protected).unwrap_err();
            assert!(
                matches!(&err, SandboxError::Protected { protected, .. } if *protected == cache),
                "{g}: {err}"
            );
            assert!(err.to_string().contains("overlaps sandball's own"), "{err}");
        }
        // Reading is fine, and so is writing beside it.
        assert!(
            opened(
                vec![tree(&base.join("home"), Access::Read)],
                vec![],
                &protected
            )
            .is_ok()
        );
        std::fs::create_dir(base.join("home/work")).unwrap();
        assert!(
            opened(
                vec![tree(&base.join("home/work"), Access::ReadWrite)],
                vec![],
                &protected
            )
            .is_ok()
        );
    }

    #[test]
    fn proc_grants_never_expose_processes() {
        // Files directly under /proc come from a private copy seen as /proc.
        let got = opened(
            vec![entry(Path::new("/proc/loadavg"), Access::Read)],
            vec![],
            &[],
        )
        .unwrap();
        assert_eq!(got.regions.len(), 1);
        let r = &got.regions[0];
        assert_eq!(
            (r.guest.as_path(), r.access),
            (Path::new("/proc"), Access::Read)
        );
        let names: Vec<_> = std::fs::read_dir(&r.dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["loadavg"]);
        let snapshot = r.dir.clone();
        drop(got);
        assert!(!snapshot.exists());
        let me = std::process::id().to_string();
        for g in [
            entry(Path::new("/proc/self/environ"), Access::Read),
            entry(Path::new("/proc/thread-self/environ"), Access::Read),
            entry(&Path::new("/proc").join(&me).join("environ"), Access::Read),
            tree(Path::new("/proc/self"), Access::Read),
            entry(Path::new("/proc/self"), Access::Read),
            tree(Path::new("/proc"), Access::Read),
            tree(Path::new("/"), Access::Read),
            entry(Path::new("/proc/loadavg"), Access::ReadWrite),
            entry(Path::new("/proc/sys"), Access::Read),
        ] {
            let err = opened(vec![g.clone()], vec![], &[]).unwrap_err();
            assert!(matches!(err, SandboxError::Proc { .. }), "{g}: {err}");
        }
    }

    #[test]
    fn same_directory_keeps_the_strongest_access() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().to_str().unwrap();
        let grant = Grant {
            fs: vec![
                fs(dir, Access::Read, FsScope::Tree),
                fs(&format!("{dir}/a"), Access::Read, FsScope::Entry),
            ],
            ..Grant::default()
        };
        let got = regions(&grant, &Places::at(Path::new("/")), &[])
            .unwrap()
            .regions;
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].access, Access::Read);
    }

    #[test]
    fn tilde_and_relative_grants_are_taken_from_home_and_the_working_dir() {
        let home = tempfile::tempdir().unwrap();
        let cwd = tempfile::tempdir().unwrap();
        std::fs::create_dir(home.path().join("work")).unwrap();
        std::fs::create_dir(cwd.path().join("here")).unwrap();
        let places = Places {
            home: home.path().to_path_buf(),
            cwd: cwd.path().to_path_buf(),
        };
        let grant = Grant {
            fs: vec![
                fs("~/work", Access::Read, FsScope::Tree),
                fs("here", Access::Read, FsScope::Tree),
                fs("file.txt", Access::ReadWrite, FsScope::Entry),
            ],
            ..Grant::default()
        };
        let dirs: Vec<PathBuf> = regions(&grant, &places, &[])
            .unwrap()
            .regions
            .into_iter()
            .map(|r| r.dir)
            .collect();
        let real = |p: &Path| std::fs::canonicalize(p).unwrap();
        assert_eq!(
            dirs,
            [
                real(home.path()).join("work"),
                real(cwd.path()).join("here"),
                real(cwd.path())
            ]
        );
        let home = &places.home;
        // A missing tree or a file opens nothing (the module finds the path
        // missing); the other grants still open.
        std::fs::write(home.join("file"), b"").unwrap();
        let grant = Grant {
            fs: vec![
                fs("missing", Access::ReadWrite, FsScope::Tree),
                fs("file", Access::Read, FsScope::Tree),
                fs("work", Access::Read, FsScope::Tree),
            ],
            ..Grant::default()
        };
        let opened: Vec<PathBuf> = regions(&grant, &Places::at(home), &[])
            .unwrap()
            .regions
            .into_iter()
            .map(|r| r.dir)
            .collect();
        assert_eq!(opened, [home.join("work")]);
    }
}
