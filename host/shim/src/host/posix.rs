//! `posix.*`: file metadata and changes WASI 0.2 does not offer, confined to the
//! granted directories ([`super::confine`]). `stat`, `stat-storage`, `readlink` and
//! `access` need
//! read access; `chmod`,
//! `chown`, `symlink` and `set-times` need read-write access to where the path
//! resolves (for `symlink`, to where the link itself is created, and its target must
//! resolve inside the granted directories).

use super::confine::{LocateError, Located};
use super::sandball::host::posix::{FileKind, FileStat, FileStorage, Host};
use super::{HostError, HostState, deny, failure, os_failure, users};
use cap_primitives::fs::{FollowSymlinks, MetadataExt, Permissions, PermissionsExt};
use rustix::fs::{Access as AccessType, AtFlags, Gid, Timespec, Timestamps, Uid};
use sandball_wire::capability::Access;
use std::ffi::OsStr;
use std::fs::File;
use std::path::Path;

fn kind_of(mode: u32) -> FileKind {
    match mode & libc::S_IFMT {
        libc::S_IFREG => FileKind::File,
        libc::S_IFDIR => FileKind::Directory,
        libc::S_IFLNK => FileKind::Symlink,
        libc::S_IFBLK => FileKind::BlockDevice,
        libc::S_IFCHR => FileKind::CharDevice,
        libc::S_IFIFO => FileKind::Fifo,
        libc::S_IFSOCK => FileKind::Socket,
        _ => FileKind::Unknown,
    }
}

fn seconds(secs: i64, nanos: i64) -> f64 {
    secs as f64 + nanos as f64 / 1e9
}

/// A time from the module: seconds since the epoch (negative before it); none is now.
fn timespec(t: Option<f64>) -> Result<Timespec, String> {
    let Some(t) = t else {
        return Ok(Timespec {
            tv_sec: 0,
            tv_nsec: rustix::fs::UTIME_NOW,
        });
    };
    // About 31 million years either way: far inside i64 seconds, and exact to the ns
    // for any date a file system stores.
    if !t.is_finite() || t.abs() > 1e15 {
        return Err(format!("{t} is not a time"));
    }
    let whole = t.floor();
    let nanos = ((t - whole) * 1e9).round() as i64;
    let (secs, nanos) = if nanos >= 1_000_000_000 {
        (whole as i64 + 1, nanos - 1_000_000_000)
    } else {
        (whole as i64, nanos)
    };
    Ok(Timespec {
        tv_sec: secs,
        tv_nsec: nanos,
    })
}

/// Whether an error of access(2) means "not allowed" rather than a failure: no
/// permission, a read-only file system, or a program being run (for writing).
fn refuses_access(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EACCES | libc::EPERM | libc::EROFS | libc::ETXTBSY)
    )
}

/// Calls an `*at` operation on the located path's final component, through its
/// parent directory opened inside the grant (the granted directory itself is `.`).
fn at_parent<T>(
    located: &Located<'_>,
    op: impl FnOnce(&File, &OsStr) -> rustix::io::Result<T>,
) -> std::io::Result<T> {
    let (parent, name) = match (located.rel.parent(), located.rel.file_name()) {
        (Some(parent), Some(name)) => (parent, name),
        _ => return Ok(op(located.dir, OsStr::new("."))?),
    };
    if parent.as_os_str().is_empty() {
        return Ok(op(located.dir, name)?);
    }
    let dir = cap_primitives::fs::open_dir(located.dir, parent)?;
    Ok(op(&dir, name)?)
}

impl HostState {
    /// Locates `path` for `op`, turning refusals into recorded denials.
    fn locate_for(
        &mut self,
        op: &str,
        path: &str,
        follow: bool,
        need: Access,
    ) -> Result<Located<'_>, HostError> {
        match self.confinement.locate(path, follow, need) {
            Ok(located) => Ok(located),
            Err(LocateError::Io(e)) => Err(os_failure(format!("{op} {path}"), &e)),
            Err(LocateError::Denied { resolved, allowed }) => {
                let via = if Path::new(path) == resolved {
                    String::new()
                } else {
                    format!(" (which resolves to {})", resolved.display())
                };
                let message = format!(
                    "{op} of {path}{via} denied: {allowed}; grant it with a `capabilities:` entry fs {need} {}",
                    resolved.display()
                );
                Err(deny(
                    &mut self.denials,
                    format!("fs {need} {}", resolved.display()),
                    message,
                ))
            }
        }
    }
}

impl HostState {
    /// `path`'s metadata as the grant lets the module see it (`call` names the host
    /// call for a denial); `None` when it does not exist.
    fn metadata(
        &mut self,
        call: &str,
        path: &str,
        follow: bool,
    ) -> Result<Option<cap_primitives::fs::Metadata>, HostError> {
        let located = match self.locate_for(call, path, follow, Access::Read) {
            Ok(l) => l,
            Err(e) if e.errno == libc::ENOENT => return Ok(None),
            Err(e) => return Err(e),
        };
        match cap_primitives::fs::stat(located.dir, &located.rel, FollowSymlinks::No) {
            Ok(m) => Ok(Some(m)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(os_failure(format!("stat {path}"), &e)),
        }
    }
}

impl Host for HostState {
    fn stat(&mut self, path: String, follow: bool) -> Result<Option<FileStat>, HostError> {
        Ok(self.metadata("stat", &path, follow)?.map(|m| FileStat {
            kind: kind_of(m.mode()),
            mode: m.mode() & 0o7777,
            uid: m.uid(),
            gid: m.gid(),
            size: m.size(),
            inode: m.ino(),
            dev: m.dev(),
            nlink: m.nlink(),
            atime: seconds(m.atime(), m.atime_nsec()),
            mtime: seconds(m.mtime(), m.mtime_nsec()),
            ctime: seconds(m.ctime(), m.ctime_nsec()),
        }))
    }

    fn stat_storage(
        &mut self,
        path: String,
        follow: bool,
    ) -> Result<Option<FileStorage>, HostError> {
        Ok(self
            .metadata("stat-storage", &path, follow)?
            .map(|m| FileStorage {
                blocks: m.blocks(),
                block_size: m.blksize(),
                device_type: m.rdev(),
            }))
    }

    fn chmod(&mut self, path: String, mode: u32) -> Result<(), HostError> {
        let located = self.locate_for("chmod", &path, true, Access::ReadWrite)?;
        cap_primitives::fs::set_permissions(
            located.dir,
            &located.rel,
            Permissions::from_mode(mode & 0o7777),
        )
        .map_err(|e| os_failure(format!("chmod {path}"), &e))
    }

    fn chown(
        &mut self,
        path: String,
        uid: Option<u32>,
        gid: Option<u32>,
        follow: bool,
    ) -> Result<(), HostError> {
        let located = self.locate_for("chown", &path, follow, Access::ReadWrite)?;
        if uid.is_none() && gid.is_none() {
            return Ok(());
        }
        let owner = uid.map(Uid::from_raw);
        let group = gid.map(Gid::from_raw);
        // The final component was resolved already; never follow it again.
        at_parent(&located, |dir, name| {
            rustix::fs::chownat(dir, name, owner, group, AtFlags::SYMLINK_NOFOLLOW)
        })
        .map_err(|e| os_failure(format!("chown {path}"), &e))
    }

    fn readlink(&mut self, path: String) -> Result<String, HostError> {
        let located = self.locate_for("readlink", &path, false, Access::Read)?;
        let target = cap_primitives::fs::read_link_contents(located.dir, &located.rel)
            .map_err(|e| os_failure(format!("readlink {path}"), &e))?;
        target.into_os_string().into_string().map_err(|raw| {
            failure(
                libc::EILSEQ,
                format!("readlink {path}: the target {raw:?} is not UTF-8"),
            )
        })
    }

    fn access(&mut self, path: String, mode: u32) -> Result<bool, HostError> {
        let Some(wanted) = AccessType::from_bits(mode) else {
            return Err(failure(
                libc::EINVAL,
                format!(
                    "access {path}: mode {mode:#o} is not a combination of R_OK, W_OK and X_OK"
                ),
            ));
        };
        // A symlink inside the grant that leads out of it (`root -> /`, as `stat` asks
        // of a link): the kernel answers for where it leads. Only the answer comes
        // back, never anything of the file.
        let leads_out = matches!(
            self.confinement.locate(&path, true, Access::Read),
            Err(LocateError::Denied { .. })
        ) && self.confinement.locate(&path, false, Access::Read).is_ok();
        let located = self.locate_for("access", &path, !leads_out, Access::Read)?;
        // Otherwise the final component was resolved already; never follow it again.
        // Kernels before 5.8 lack faccessat2 (the flag): there the plain call follows it.
        let flags = if leads_out {
            AtFlags::empty()
        } else {
            AtFlags::SYMLINK_NOFOLLOW
        };
        let checked = at_parent(&located, |dir, name| {
            match rustix::fs::accessat(dir, name, wanted, flags) {
                Err(rustix::io::Errno::NOSYS) => {
                    rustix::fs::accessat(dir, name, wanted, AtFlags::empty())
                }
                other => other,
            }
        });
        match checked {
            Ok(()) => Ok(true),
            Err(e) if refuses_access(&e) => Ok(false),
            Err(e) => Err(os_failure(format!("access {path}"), &e)),
        }
    }

    fn symlink(&mut self, target: String, path: String) -> Result<(), HostError> {
        let link = self
            .locate_for("symlink", &path, false, Access::ReadWrite)?
            .resolved;
        // Where the link leads, judged now: a link out of the grant would hand a
        // later run, granted the link's path, whatever it points to.
        let leads_to = link.parent().unwrap_or(Path::new("/")).join(&target);
        if target.is_empty() || leads_to.to_str().is_none() {
            return Err(failure(
                libc::EINVAL,
                format!("symlink {path} -> {target:?}: the target is empty or not UTF-8"),
            ));
        }
        match self
            .confinement
            .locate(&leads_to.to_string_lossy(), true, Access::Read)
        {
            Ok(_) => {}
            Err(LocateError::Io(e)) => {
                return Err(os_failure(format!("symlink {path} -> {target}"), &e));
            }
            Err(LocateError::Denied { resolved, allowed }) => {
                let message = format!(
                    "symlink {path} -> {target} denied: the target resolves to {}, outside the grant ({allowed}); a link may only point inside the granted directories",
                    resolved.display()
                );
                return Err(deny(
                    &mut self.denials,
                    format!("fs read {}", resolved.display()),
                    message,
                ));
            }
        }
        let located = self.locate_for("symlink", &path, false, Access::ReadWrite)?;
        cap_primitives::fs::symlink_contents(&target, located.dir, &located.rel)
            .map_err(|e| os_failure(format!("symlink {path} -> {target}"), &e))
    }

    fn set_times(
        &mut self,
        path: String,
        atime: Option<f64>,
        mtime: Option<f64>,
        follow: bool,
    ) -> Result<(), HostError> {
        let bad_time = |m: String| failure(libc::EINVAL, format!("set-times {path}: {m}"));
        let times = Timestamps {
            last_access: timespec(atime).map_err(bad_time)?,
            last_modification: timespec(mtime).map_err(bad_time)?,
        };
        let located = self.locate_for("set-times", &path, follow, Access::ReadWrite)?;
        at_parent(&located, |dir, name| {
            rustix::fs::utimensat(dir, name, &times, AtFlags::SYMLINK_NOFOLLOW)
        })
        .map_err(|e| os_failure(format!("set-times {path}"), &e))
    }

    fn user_id(&mut self, name: String) -> Option<u32> {
        users::user_id(&name)
    }

    fn group_id(&mut self, name: String) -> Option<u32> {
        users::group_id(&name)
    }

    fn user_name(&mut self, uid: u32) -> Option<String> {
        users::user_name(uid)
    }

    fn group_name(&mut self, gid: u32) -> Option<String> {
        users::group_name(gid)
    }

    fn umask(&mut self) -> u32 {
        // Reading the umask means setting it; it is put back at once.
        let mask = rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o022));
        rustix::process::umask(mask);
        mask.as_raw_mode()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::regions::Region;
    use std::os::unix::fs::MetadataExt as _;
    use std::os::unix::fs::PermissionsExt;
    use std::path::PathBuf;
    use std::time::{Duration, Instant};

    struct Fixture {
        _tmp: tempfile::TempDir,
        dir: PathBuf,
    }

    impl Fixture {
        fn path(&self, name: &str) -> String {
            self.dir.join(name).to_str().unwrap().to_string()
        }
    }

    /// A directory with a file `f` (mode 0600) and a symlink `l -> f`.
    fn fixture() -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        let dir = std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::write(dir.join("f"), b"12345").unwrap();
        std::fs::set_permissions(dir.join("f"), std::fs::Permissions::from_mode(0o600)).unwrap();
        std::os::unix::fs::symlink("f", dir.join("l")).unwrap();
        Fixture { _tmp: tmp, dir }
    }

    fn state(f: &Fixture, access: Access) -> HostState {
        granting(&f.dir, access)
    }

    /// The host state of a run granted `access` on `dir` only.
    fn granting(dir: &Path, access: Access) -> HostState {
        HostState::new(
            vec![Region {
                dir: dir.to_path_buf(),
                guest: dir.to_path_buf(),
                access,
                grant: "test".into(),
                only_itself: false,
                below: None,
            }],
            Vec::new(),
            Vec::new(),
            crate::paths::Places::at(std::path::Path::new("/")),
            Instant::now() + Duration::from_secs(60),
            1 << 20,
        )
    }

    #[test]
    fn stat_follows_or_not_and_missing_is_none() {
        let f = fixture();
        let mut s = state(&f, Access::Read);
        let st = s.stat(f.path("l"), true).unwrap().unwrap();
        assert_eq!(st.kind, FileKind::File);
        assert_eq!((st.mode, st.size), (0o600, 5));
        let st = s.stat(f.path("l"), false).unwrap().unwrap();
        assert_eq!(st.kind, FileKind::Symlink);
        assert!(s.stat(f.path("missing"), true).unwrap().is_none());
        assert!(s.stat(f.path("missing/deeper"), true).unwrap().is_none());
        assert_eq!(
            s.stat(f.dir.to_str().unwrap().into(), true)
                .unwrap()
                .unwrap()
                .kind,
            FileKind::Directory
        );
    }

    #[test]
    fn storage_fields_are_the_kernels() {
        let f = fixture();
        let mut s = state(&f, Access::Read);
        let meta = std::fs::metadata(f.dir.join("f")).unwrap();
        let st = s.stat_storage(f.path("l"), true).unwrap().unwrap();
        assert_eq!(
            (st.blocks, st.block_size, st.device_type),
            (meta.blocks(), meta.blksize(), 0)
        );
        assert!(s.stat_storage(f.path("missing"), true).unwrap().is_none());
        assert!(s.stat_storage("/dev/null".into(), true).unwrap_err().denied);
        let mut dev = granting(Path::new("/dev"), Access::Read);
        let null = dev.stat_storage("/dev/null".into(), true).unwrap().unwrap();
        assert_eq!(
            null.device_type,
            std::fs::metadata("/dev/null").unwrap().rdev()
        );
    }

    #[test]
    fn reading_outside_the_grant_is_denied_with_how_to_grant_it() {
        let f = fixture();
        let mut s = state(&f, Access::Read);
        let e = s.stat("/etc/hostname".into(), true).unwrap_err();
        assert!(e.denied);
        assert_eq!(
            e.message,
            format!(
                "stat of /etc/hostname denied: the grant allows fs read on [{}]; grant it with a `capabilities:` entry fs read /etc/hostname",
                f.dir.display()
            )
        );
        assert_eq!(s.take_denials()[0].capability, "fs read /etc/hostname");
    }

    #[test]
    fn changes_need_read_write() {
        let f = fixture();
        let mut s = state(&f, Access::Read);
        let e = s.chmod(f.path("f"), 0o644).unwrap_err();
        assert!(
            e.denied && e.message.starts_with("chmod of "),
            "{}",
            e.message
        );
        let mut s = state(&f, Access::ReadWrite);
        s.chmod(f.path("l"), 0o4755).unwrap();
        let mode = std::fs::metadata(f.dir.join("f"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o7777, 0o4755);
    }

    #[test]
    fn readlink_reads_absolute_targets_inside_the_grant_only() {
        let f = fixture();
        let mut s = state(&f, Access::Read);
        std::os::unix::fs::symlink("/etc/passwd", f.dir.join("abs")).unwrap();
        assert_eq!(s.readlink(f.path("abs")).unwrap(), "/etc/passwd");
        assert_eq!(s.readlink(f.path("l")).unwrap(), "f");
        let e = s.readlink("/etc/localtime".into()).unwrap_err();
        assert!(e.denied, "{}", e.message);
        assert_eq!(s.take_denials()[0].capability, "fs read /etc/localtime");
        let e = s.readlink(f.path("f")).unwrap_err();
        assert!(!e.denied && e.errno == libc::EINVAL, "{}", e.message);
    }

    /// A fixture whose grant is only its subdirectory `sub` (with `up -> ..` in it),
    /// so that the fixture's own files lie outside the grant.
    fn granted_sub(f: &Fixture) -> HostState {
        std::fs::create_dir(f.dir.join("sub")).unwrap();
        std::os::unix::fs::symlink("..", f.dir.join("sub/up")).unwrap();
        granting(&f.dir.join("sub"), Access::ReadWrite)
    }

    #[test]
    fn readlink_and_access_refuse_dotdot_and_symlink_escapes() {
        let f = fixture();
        let mut s = granted_sub(&f);
        for path in [f.path("sub/../l"), f.path("sub/up/l")] {
            let e = s.readlink(path.clone()).unwrap_err();
            assert!(
                e.denied
                    && e.message
                        .contains(&format!("(which resolves to {})", f.path("l"))),
                "{path}: {}",
                e.message
            );
            let e = s.access(path.clone(), 4).unwrap_err();
            assert!(
                e.denied && e.message.starts_with("access of "),
                "{}",
                e.message
            );
        }
        // readlink is judged on the link itself, access on where the link leads.
        let denied: Vec<String> = s.take_denials().into_iter().map(|d| d.capability).collect();
        let (link, file) = (
            format!("fs read {}", f.path("l")),
            format!("fs read {}", f.path("f")),
        );
        assert_eq!(denied, [link.as_str(), &file, &link, &file]);
    }

    #[test]
    fn a_link_inside_the_grant_to_nothing_outside_it_dangles_without_a_denial() {
        let f = fixture();
        let nowhere = format!("/sandball-test-nowhere-{}", std::process::id());
        std::os::unix::fs::symlink(&nowhere, f.dir.join("dangling")).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", f.dir.join("out")).unwrap();
        let mut s = state(&f, Access::Read);
        assert!(s.stat(f.path("dangling"), false).unwrap().is_some());
        assert!(s.stat(f.path("dangling"), true).unwrap().is_none());
        let e = s.access(f.path("dangling"), 4).unwrap_err();
        assert!(!e.denied && e.errno == libc::ENOENT, "{}", e.message);
        // access(2) through a link out of the grant is answered by the kernel.
        std::os::unix::fs::symlink("/", f.dir.join("root")).unwrap();
        assert!(s.access(f.path("root"), 4 | 1).unwrap());
        assert!(s.take_denials().is_empty());
        // What exists outside the grant is not stat-ed through it.
        if Path::new("/etc/hostname").exists() {
            assert!(s.stat(f.path("out"), true).unwrap_err().denied);
        }
    }

    #[test]
    fn access_answers_as_access2_inside_the_grant() {
        let f = fixture();
        // A read-only grant is enough to ask about writing.
        let mut s = state(&f, Access::Read);
        assert!(s.access(f.path("f"), 4 | 2).unwrap());
        // 0600: nobody may execute it, not even root.
        assert!(!s.access(f.path("f"), 1).unwrap());
        // Symlinks are followed, as access(2) does.
        assert!(!s.access(f.path("l"), 1).unwrap());
        assert!(s.access(f.dir.to_str().unwrap().into(), 4 | 1).unwrap());
        std::fs::write(f.dir.join("closed"), b"").unwrap();
        std::fs::set_permissions(f.dir.join("closed"), std::fs::Permissions::from_mode(0o000))
            .unwrap();
        let root = rustix::process::getuid().is_root();
        assert_eq!(s.access(f.path("closed"), 4).unwrap(), root);
        let e = s.access(f.path("missing"), 4).unwrap_err();
        assert!(!e.denied && e.errno == libc::ENOENT, "{}", e.message);
        let e = s.access(f.path("f"), 8).unwrap_err();
        assert!(!e.denied && e.errno == libc::EINVAL, "{}", e.message);
        assert!(s.take_denials().is_empty());
    }

    #[test]
    fn access_outside_the_grant_is_denied() {
        let f = fixture();
        let mut s = state(&f, Access::ReadWrite);
        let e = s.access("/etc/hostname".into(), 4).unwrap_err();
        assert!(e.denied, "{}", e.message);
        assert_eq!(
            e.message,
            format!(
                "access of /etc/hostname denied: the grant allows fs read-write on [{}]; grant it with a `capabilities:` entry fs read /etc/hostname",
                f.dir.display()
            )
        );
        assert_eq!(s.take_denials()[0].capability, "fs read /etc/hostname");
        // A link inside the grant to a file outside it: the kernel answers whether
        // it may be read there (only that: stat and reads through it stay denied).
        std::os::unix::fs::symlink("/etc/hostname", f.dir.join("out")).unwrap();
        assert!(s.access(f.path("out"), 4).is_ok());
        assert!(s.take_denials().is_empty());
        assert!(s.stat(f.path("out"), true).unwrap_err().denied);
    }

    #[test]
    fn symlinks_may_only_point_inside_the_grant() {
        let f = fixture();
        let mut s = granted_sub(&f);
        let sub = f.dir.join("sub");
        let link = |name: &str| sub.join(name).to_str().unwrap().to_string();
        // Inside the grant: relative, absolute, and to what does not exist yet.
        s.symlink("../sub/new".into(), link("rel")).unwrap();
        s.symlink(link("up"), link("abs")).unwrap_err();
        s.symlink(sub.join("later").to_str().unwrap().into(), link("abs"))
            .unwrap();
        assert_eq!(
            std::fs::read_link(sub.join("abs")).unwrap(),
            sub.join("later")
        );
        // Outside it: absolute, climbing, and through a symlink that leads out.
        let mut tried = 0;
        for target in ["/etc/passwd", "/", "../f", "up/f", "./up"] {
            tried += 1;
            let name = format!("out{tried}");
            let e = s.symlink(target.into(), link(&name)).unwrap_err();
            assert!(
                e.denied && e.message.contains("a link may only point inside"),
                "{target}: {}",
                e.message
            );
            assert!(
                std::fs::symlink_metadata(sub.join(&name)).is_err(),
                "{target}: link made"
            );
        }
        assert_eq!(s.take_denials().len(), tried + 1);
        let e = s.symlink("x".into(), link("abs")).unwrap_err();
        assert_eq!(e.errno, libc::EEXIST);
    }

    #[test]
    fn times_are_set_or_now() {
        let f = fixture();
        let mut s = state(&f, Access::ReadWrite);
        s.set_times(f.path("f"), Some(1_000_000_000.5), Some(-10.0), true)
            .unwrap();
        let st = s.stat(f.path("f"), true).unwrap().unwrap();
        assert_eq!((st.atime, st.mtime), (1_000_000_000.5, -10.0));
        s.set_times(f.dir.to_str().unwrap().into(), Some(5.0), Some(5.0), true)
            .unwrap();
        assert_eq!(
            std::fs::metadata(&f.dir).unwrap().modified().unwrap(),
            std::time::UNIX_EPOCH + Duration::from_secs(5)
        );
        s.set_times(f.path("l"), None, None, false).unwrap();
        let link = s.stat(f.path("l"), false).unwrap().unwrap();
        assert!(link.mtime > 1_600_000_000.0);
        let e = s
            .set_times(f.path("f"), Some(f64::NAN), None, true)
            .unwrap_err();
        assert_eq!(e.errno, libc::EINVAL);
    }

    #[test]
    fn chown_changes_the_link_or_its_target() {
        let f = fixture();
        let mut s = state(&f, Access::ReadWrite);
        let uid = rustix::process::getuid().as_raw();
        let gid = rustix::process::getgid().as_raw();
        s.chown(f.path("l"), Some(uid), Some(gid), false).unwrap();
        s.chown(f.path("l"), None, Some(gid), true).unwrap();
        s.chown(f.dir.to_str().unwrap().into(), Some(uid), None, true)
            .unwrap();
        let st = s.stat(f.path("f"), true).unwrap().unwrap();
        assert_eq!((st.uid, st.gid), (uid, gid));
        let e = s
            .chown("/etc/hostname".into(), Some(uid), None, true)
            .unwrap_err();
        assert!(e.denied);
    }

    #[test]
    fn umask_is_read_without_changing_it() {
        let mut s = state(&fixture(), Access::Read);
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let line = status.lines().find(|l| l.starts_with("Umask:")).unwrap();
        let expected = u32::from_str_radix(line.split_whitespace().nth(1).unwrap(), 8).unwrap();
        assert_eq!(s.umask(), expected);
        assert_eq!(s.umask(), expected);
    }

    #[test]
    fn names_and_ids_are_looked_up() {
        let mut s = state(&fixture(), Access::Read);
        assert_eq!(s.user_id("root".into()), Some(0));
        assert_eq!(s.user_name(0).as_deref(), Some("root"));
        assert_eq!(s.group_id("no-such-group-sandball".into()), None);
        assert!(s.group_name(0).is_some());
    }
}
