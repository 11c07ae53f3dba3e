//! Confining `posix` paths to the granted directories.
//!
//! A path is first resolved the way the kernel resolves it (symlinks followed
//! component by component, `..` applied after them) to learn which granted directory
//! it lies in and whether that directory's access is enough. The operation itself is
//! then done through that directory's descriptor with cap-primitives' confined
//! lookups, so a path that changes in between still cannot leave the directory.

use crate::paths::Places;
use crate::sandbox::regions::Region;
use sandball_wire::capability::Access;
use std::collections::VecDeque;
use std::ffi::OsString;
use std::fs::File;
use std::io;
use std::path::{Component, Path, PathBuf};

/// Most symlinks followed while resolving one path (as Linux's `MAXSYMLINKS`).
const MAX_SYMLINKS: usize = 40;

/// The granted directories of one run, opened on first use.
pub struct Confinement {
    regions: Vec<Region>,
    /// Where the module sees the regions' directories, with every symlink resolved,
    /// computed on first use (resolved paths are compared with these; operations go
    /// through the regions' own directories, which differ for stand-ins).
    real_dirs: Option<Vec<PathBuf>>,
    opened: Vec<Option<File>>,
    places: Places,
}

/// A path located inside a granted directory.
pub struct Located<'a> {
    /// The granted directory.
    pub dir: &'a File,
    /// The path below it (`.` for the directory itself); free of `..` and of
    /// symlinks except, when not following, the final component.
    pub rel: PathBuf,
    /// The resolved absolute path, for messages.
    pub resolved: PathBuf,
}

/// Why a path could not be located.
#[derive(Debug)]
pub enum LocateError {
    /// The path resolves outside every granted directory with enough access.
    Denied {
        /// Where it resolves to.
        resolved: PathBuf,
        /// What the grant allows instead ([`Confinement::describe`]).
        allowed: String,
    },
    /// Resolving it failed on the node.
    Io(io::Error),
}

fn split(path: &Path) -> impl Iterator<Item = OsString> + '_ {
    path.components().filter_map(|c| match c {
        Component::Normal(n) => Some(n.to_os_string()),
        Component::ParentDir => Some(OsString::from("..")),
        Component::RootDir | Component::CurDir | Component::Prefix(_) => None,
    })
}

/// Resolves an absolute path as the kernel would, without opening anything:
/// symlinks are followed (the final one only when `follow`), `..` goes up from
/// where the symlinks led. Below a component that cannot be examined (missing, not
/// a directory, no permission) the rest is joined as written, and the operation on
/// it will report the real error.
pub fn resolve(path: &Path, follow: bool) -> io::Result<PathBuf> {
    let mut pending: VecDeque<OsString> = split(path).collect();
    let mut out = PathBuf::from("/");
    let mut hops = 0;
    let mut unexamined: Option<io::Error> = None;
    while let Some(name) = pending.pop_front() {
        if name == ".." {
            if let Some(e) = unexamined {
                return Err(e);
            }
            out.pop();
            continue;
        }
        let candidate = out.join(&name);
        if unexamined.is_some() || (pending.is_empty() && !follow) {
            out = candidate;
            continue;
        }
        match std::fs::symlink_metadata(&candidate) {
            Ok(m) if m.file_type().is_symlink() => {
                hops += 1;
                if hops > MAX_SYMLINKS {
                    return Err(io::Error::from_raw_os_error(libc::ELOOP));
                }
                let target = std::fs::read_link(&candidate)?;
                if target.is_absolute() {
                    out = PathBuf::from("/");
                }
                for part in split(&target).collect::<Vec<_>>().into_iter().rev() {
                    pending.push_front(part);
                }
            }
            Ok(_) => out = candidate,
            Err(e) => {
                unexamined = Some(e);
                out = candidate;
            }
        }
    }
    Ok(out)
}

impl Confinement {
    /// The confinement of a run whose grant opened `regions`; relative paths and
    /// `~` start at `places`.
    pub fn new(regions: Vec<Region>, places: Places) -> Self {
        let opened = regions.iter().map(|_| None).collect();
        Confinement {
            regions,
            real_dirs: None,
            opened,
            places,
        }
    }

    /// What the grant allows, for denial messages.
    pub fn describe(&self) -> String {
        if self.regions.is_empty() {
            return "the grant allows no filesystem access".to_string();
        }
        let mut parts = Vec::new();
        for access in [Access::ReadWrite, Access::Read] {
            let dirs: Vec<String> = self
                .regions
                .iter()
                .filter(|r| r.access == access)
                .map(|r| r.guest.display().to_string())
                .collect();
            if !dirs.is_empty() {
                parts.push(format!("fs {access} on [{}]", dirs.join(", ")));
            }
        }
        format!("the grant allows {}", parts.join(" and "))
    }

    /// Locates `path` (from the module) inside the granted directory that holds it
    /// with at least `need` access, the most specific one when several do. A symlink
    /// inside the grant that leads to nothing outside it (`soft.txt -> /nonexistent`,
    /// or below a file) is, when read through, missing (or `ENOTDIR`) as on the node
    /// (a dangling link), not a denial.
    /// A granted path below a missing directory, or below a stand-in for a file or a
    /// closed directory, fails as on the node (`ENOENT`, `ENOTDIR`, `EACCES`) whatever
    /// the access asked for.
    pub fn locate(
        &mut self,
        path: &str,
        follow: bool,
        need: Access,
    ) -> Result<Located<'_>, LocateError> {
        if path.is_empty() {
            return Err(LocateError::Io(io::Error::from_raw_os_error(libc::ENOENT)));
        }
        let resolved = resolve(&self.places.join(path), follow).map_err(LocateError::Io)?;
        let regions = &self.regions;
        let real_dirs = self.real_dirs.get_or_insert_with(|| {
            regions
                .iter()
                .map(|r| std::fs::canonicalize(&r.guest).unwrap_or_else(|_| r.guest.clone()))
                .collect()
        });
        // Where the most specific directory showing the path knows why it fails on
        // the node (below a directory missing since the run began, below a stand-in
        // for a file), it fails so, whatever access is asked for.
        let standing = regions
            .iter()
            .zip(real_dirs.iter())
            .filter(|(r, real)| !r.only_itself && resolved.starts_with(real))
            .max_by_key(|(_, real)| real.components().count());
        if let Some(errno) =
            standing.and_then(|(r, real)| r.below.as_ref().and_then(|s| s.errno(&resolved, real)))
        {
            return Err(LocateError::Io(io::Error::from_raw_os_error(errno)));
        }
        let Some(index) = regions
            .iter()
            .zip(real_dirs.iter())
            .enumerate()
            .filter(|(_, (r, real))| {
                r.access >= need
                    && if r.only_itself {
                        resolved == **real
                    } else {
                        resolved.starts_with(real)
                    }
            })
            .max_by_key(|(_, (_, real))| real.components().count())
            .map(|(i, _)| i)
        else {
            // Missing, or below a file (`ENOTDIR`): as dangling on the node.
            let dangling = match std::fs::symlink_metadata(&resolved) {
                Err(e) if follow && need == Access::Read => e
                    .raw_os_error()
                    .filter(|n| [libc::ENOENT, libc::ENOTDIR].contains(n)),
                _ => None,
            };
            if let Some(errno) = dangling
                && self.locate(path, false, need).is_ok()
            {
                return Err(LocateError::Io(io::Error::from_raw_os_error(errno)));
            }
            let allowed = self.describe();
            return Err(LocateError::Denied { resolved, allowed });
        };
        let region = &regions[index];
        let rel = match resolved.strip_prefix(&real_dirs[index]) {
            Ok(r) if !r.as_os_str().is_empty() => r.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let dir = match &mut self.opened[index] {
            Some(f) => f,
            slot @ None => {
                let f = cap_primitives::fs::open_ambient_dir(
                    &region.dir,
                    cap_primitives::ambient_authority(),
                )
                .map_err(LocateError::Io)?;
                slot.insert(f)
            }
        };
        Ok(Located { dir, rel, resolved })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cap_primitives::fs::FollowSymlinks;
    use std::os::unix::fs::symlink;

    struct Fixture {
        _tmp: tempfile::TempDir,
        base: PathBuf,
    }

    /// `base/granted/{file, sub/, inner -> file, abs -> base/granted/file,
    /// out -> ../secret, up -> ..}` and `base/secret`.
    fn fixture() -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let g = base.join("granted");
        std::fs::create_dir_all(g.join("sub")).unwrap();
        std::fs::write(g.join("file"), b"f").unwrap();
        std::fs::write(base.join("secret"), b"s").unwrap();
        symlink("file", g.join("inner")).unwrap();
        symlink(g.join("file"), g.join("abs")).unwrap();
        symlink("../secret", g.join("out")).unwrap();
        symlink("..", g.join("up")).unwrap();
        Fixture { _tmp: tmp, base }
    }

    fn confinement(f: &Fixture, access: Access) -> Confinement {
        Confinement::new(
            vec![Region {
                dir: f.base.join("granted"),
                guest: f.base.join("granted"),
                access,
                grant: "test".into(),
                only_itself: false,
                below: None,
            }],
            Places::at(&f.base),
        )
    }

    fn denied(r: Result<Located<'_>, LocateError>) -> PathBuf {
        match r {
            Err(LocateError::Denied { resolved, .. }) => resolved,
            Err(LocateError::Io(e)) => panic!("io error {e}"),
            Ok(l) => panic!("located {}", l.rel.display()),
        }
    }

    #[test]
    fn paths_inside_the_grant_are_located_relative_to_it() {
        let f = fixture();
        let mut c = confinement(&f, Access::ReadWrite);
        let g = f.base.join("granted");
        let l = c
            .locate(g.join("sub/../file").to_str().unwrap(), true, Access::Read)
            .unwrap();
        assert_eq!(l.rel, PathBuf::from("file"));
        let l = c
            .locate(g.join("inner").to_str().unwrap(), true, Access::Read)
            .unwrap();
        assert_eq!(l.rel, PathBuf::from("file"));
        // An absolute symlink that stays inside the grant is followed.
        let l = c
            .locate(g.join("abs").to_str().unwrap(), true, Access::Read)
            .unwrap();
        assert_eq!(l.rel, PathBuf::from("file"));
        // Not following keeps the link itself.
        let l = c
            .locate(g.join("out").to_str().unwrap(), false, Access::Read)
            .unwrap();
        assert_eq!(l.rel, PathBuf::from("out"));
        let l = c.locate(g.to_str().unwrap(), true, Access::Read).unwrap();
        assert_eq!(l.rel, PathBuf::from("."));
        // Relative paths are taken from the working directory (the fixture's base).
        let l = c
            .locate("granted/new-file", true, Access::ReadWrite)
            .unwrap();
        assert_eq!(l.rel, PathBuf::from("new-file"));
    }

    #[test]
    fn dotdot_and_symlink_escapes_are_refused() {
        let f = fixture();
        let mut c = confinement(&f, Access::ReadWrite);
        let g = f.base.join("granted");
        let secret = f.base.join("secret");
        assert_eq!(
            denied(c.locate(g.join("../secret").to_str().unwrap(), true, Access::Read)),
            secret
        );
        assert_eq!(
            denied(c.locate(g.join("out").to_str().unwrap(), true, Access::Read)),
            secret
        );
        assert_eq!(
            denied(c.locate(g.join("up/secret").to_str().unwrap(), false, Access::Read)),
            secret
        );
        assert_eq!(
            denied(c.locate(
                g.join("sub/../../secret").to_str().unwrap(),
                false,
                Access::Read
            )),
            secret
        );
    }

    #[test]
    fn read_only_grants_refuse_changes() {
        let f = fixture();
        let mut c = confinement(&f, Access::Read);
        let file = f.base.join("granted/file");
        assert!(c.locate(file.to_str().unwrap(), true, Access::Read).is_ok());
        assert_eq!(
            denied(c.locate(file.to_str().unwrap(), true, Access::ReadWrite)),
            file
        );
        assert!(c.describe().contains("fs read on ["), "{}", c.describe());
    }

    #[test]
    fn the_confined_operation_cannot_leave_the_directory() {
        // Even handed a relative path that escapes (as a race could produce), the
        // operation through the granted directory refuses it.
        let f = fixture();
        let mut c = confinement(&f, Access::Read);
        let l = c
            .locate(f.base.join("granted").to_str().unwrap(), true, Access::Read)
            .unwrap();
        for rel in ["out", "up/secret", "../secret"] {
            let r = cap_primitives::fs::stat(l.dir, Path::new(rel), FollowSymlinks::Yes);
            assert!(r.is_err(), "{rel} escaped");
        }
        assert!(cap_primitives::fs::stat(l.dir, Path::new("inner"), FollowSymlinks::Yes).is_ok());
    }

    #[test]
    fn granted_directories_reached_through_symlinks_match_resolved_paths() {
        let f = fixture();
        symlink(f.base.join("granted"), f.base.join("alias")).unwrap();
        let mut c = Confinement::new(
            vec![Region {
                dir: f.base.join("alias"),
                guest: f.base.join("alias"),
                access: Access::Read,
                grant: "test".into(),
                only_itself: false,
                below: None,
            }],
            Places::at(&f.base),
        );
        let l = c
            .locate(
                f.base.join("alias/file").to_str().unwrap(),
                true,
                Access::Read,
            )
            .unwrap();
        assert_eq!(l.rel, PathBuf::from("file"));
        assert_eq!(l.resolved, f.base.join("granted/file"));
    }

    #[test]
    fn links_out_of_the_grant_to_nothing_read_as_dangling() {
        let f = fixture();
        let g = f.base.join("granted");
        symlink(f.base.join("nowhere/x"), g.join("missing")).unwrap();
        symlink(f.base.join("secret/x"), g.join("below-file")).unwrap();
        let mut c = confinement(&f, Access::ReadWrite);
        let errno = |c: &mut Confinement, name: &str, follow: bool, need: Access| match c.locate(
            g.join(name).to_str().unwrap(),
            follow,
            need,
        ) {
            Err(LocateError::Io(e)) => e.raw_os_error(),
            Err(LocateError::Denied { .. }) => None,
            Ok(l) => panic!("{name} located at {}", l.rel.display()),
        };
        assert_eq!(
            errno(&mut c, "missing", true, Access::Read),
            Some(libc::ENOENT)
        );
        assert_eq!(
            errno(&mut c, "below-file", true, Access::Read),
            Some(libc::ENOTDIR)
        );
        // Written through, they are out of the grant.
        assert_eq!(errno(&mut c, "below-file", true, Access::ReadWrite), None);
    }

    #[test]
    fn symlink_loops_end() {
        let tmp = tempfile::tempdir().unwrap();
        let a = tmp.path().join("a");
        symlink(tmp.path().join("b"), &a).unwrap();
        symlink(&a, tmp.path().join("b")).unwrap();
        let e = resolve(&a, true).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ELOOP));
    }
}
