//! `posix.*`: file metadata and changes WASI 0.2 does not offer, confined to the
//! granted directories ([`super::confine`]). `stat` needs read access; `chmod`,
//! `chown`, `symlink` and `set-times` need read-write access to where the path
//! resolves (for `symlink`, to where the link itself is created).

use super::confine::{LocateError, Located};
use super::sandball::host::posix::{FileKind, FileStat, Host};
use super::{HostError, HostState, deny, failure, os_failure, users};
use cap_primitives::fs::{
    FollowSymlinks, MetadataExt, Permissions, PermissionsExt, SystemTimeSpec,
};
use rustix::fs::{AtFlags, Gid, Uid};
use sandball_wire::capability::Access;
use std::path::Path;
use std::time::{Duration, UNIX_EPOCH};

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
fn time_spec(t: Option<f64>) -> Result<SystemTimeSpec, String> {
    let Some(t) = t else {
        return Ok(SystemTimeSpec::SymbolicNow);
    };
    let offset = Duration::try_from_secs_f64(t.abs()).map_err(|_| format!("{t} is not a time"))?;
    let time = if t >= 0.0 {
        UNIX_EPOCH.checked_add(offset)
    } else {
        UNIX_EPOCH.checked_sub(offset)
    }
    .ok_or_else(|| format!("{t} is out of range"))?;
    Ok(SystemTimeSpec::Absolute(
        cap_primitives::time::SystemTime::from_std(time),
    ))
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

impl Host for HostState {
    fn stat(&mut self, path: String, follow: bool) -> Result<Option<FileStat>, HostError> {
        let located = match self.locate_for("stat", &path, follow, Access::Read) {
            Ok(l) => l,
            Err(e) if e.errno == libc::ENOENT => return Ok(None),
            Err(e) => return Err(e),
        };
        match cap_primitives::fs::stat(located.dir, &located.rel, FollowSymlinks::No) {
            Ok(m) => Ok(Some(FileStat {
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
            })),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(os_failure(format!("stat {path}"), &e)),
        }
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
        let fail = |e: std::io::Error| os_failure(format!("chown {path}"), &e);
        let (parent, name) = match (located.rel.parent(), located.rel.file_name()) {
            (Some(parent), Some(name)) => (parent, name),
            // The granted directory itself.
            _ => {
                return rustix::fs::chownat(located.dir, "", owner, group, AtFlags::EMPTY_PATH)
                    .map_err(|e| fail(e.into()));
            }
        };
        let opened;
        let dir = if parent.as_os_str().is_empty() {
            located.dir
        } else {
            opened = cap_primitives::fs::open_dir(located.dir, parent).map_err(fail)?;
            &opened
        };
        // The final component was resolved already; never follow it again.
        rustix::fs::chownat(dir, name, owner, group, AtFlags::SYMLINK_NOFOLLOW)
            .map_err(|e| fail(e.into()))
    }

    fn symlink(&mut self, target: String, path: String) -> Result<(), HostError> {
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
        let atime = time_spec(atime).map_err(bad_time)?;
        let mtime = time_spec(mtime).map_err(bad_time)?;
        let located = self.locate_for("set-times", &path, follow, Access::ReadWrite)?;
        cap_primitives::fs::set_times_nofollow(located.dir, &located.rel, Some(atime), Some(mtime))
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
