//! The host interface served by the local operating system, for native builds: unit
//! tests of the SDK and of modules, and running a module outside the shim to debug it.
//! Nothing is confined here; confinement is the shim's job on a node.

use super::{
    Command, FileKind, FileStat, FileStorage, FsUsage, HostError, Identity, IfAddress, Output,
    Passwd, Uname, Zone,
};
use std::ffi::{CStr, CString};
use std::fs;
use std::io::{self, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::process::Stdio;

fn io_error(what: &str, path: &str, e: io::Error) -> HostError {
    HostError {
        denied: false,
        errno: e.raw_os_error().unwrap_or(0),
        message: format!("{what} {path}: {e}"),
    }
}

fn c_string(what: &str, text: &str) -> Result<CString, HostError> {
    CString::new(text).map_err(|_| HostError {
        denied: false,
        errno: libc::EINVAL,
        message: format!("{what} {text:?}: contains a NUL byte"),
    })
}

pub(super) fn run(cmd: Command) -> Result<Output, HostError> {
    let Some((program, args)) = cmd.argv.split_first() else {
        return Err(HostError {
            denied: false,
            errno: libc::EINVAL,
            message: "cannot run a command with an empty argv".into(),
        });
    };
    let mut command = std::process::Command::new(program);
    command
        .args(args)
        // As the shim does on a node.
        .envs(super::task_environment())
        .envs(cmd.env.iter().map(|(k, v)| (k, v)))
        .stdin(if cmd.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(cwd) = &cmd.cwd {
        command.current_dir(cwd);
    }
    let mut child = command
        .spawn()
        .map_err(|e| io_error("cannot run", program, e))?;
    if let (Some(bytes), Some(mut pipe)) = (cmd.stdin, child.stdin.take()) {
        // A program that exits without reading its stdin closes the pipe: not an error.
        match pipe.write_all(&bytes) {
            Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
                return Err(io_error("cannot write the stdin of", program, e));
            }
            _ => {}
        }
    }
    let out = child
        .wait_with_output()
        .map_err(|e| io_error("cannot wait for", program, e))?;
    Ok(Output {
        rc: out.status.code().unwrap_or(-1),
        stdout: out.stdout,
        stderr: out.stderr,
    })
}

fn seconds(secs: i64, nanos: i64) -> f64 {
    secs as f64 + nanos as f64 / 1e9
}

/// `path`'s metadata, following a final symlink or not; `None` when it is missing.
fn metadata(path: &str, follow: bool) -> Result<Option<fs::Metadata>, HostError> {
    let meta = if follow {
        fs::metadata(path)
    } else {
        fs::symlink_metadata(path)
    };
    match meta {
        Ok(m) => Ok(Some(m)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_error("cannot stat", path, e)),
    }
}

pub(super) fn stat(path: &str, follow: bool) -> Result<Option<FileStat>, HostError> {
    let Some(meta) = metadata(path, follow)? else {
        return Ok(None);
    };
    let t = meta.file_type();
    let kind = if t.is_symlink() {
        FileKind::Symlink
    } else if t.is_dir() {
        FileKind::Directory
    } else if t.is_file() {
        FileKind::File
    } else if t.is_block_device() {
        FileKind::BlockDevice
    } else if t.is_char_device() {
        FileKind::CharDevice
    } else if t.is_fifo() {
        FileKind::Fifo
    } else if t.is_socket() {
        FileKind::Socket
    } else {
        FileKind::Unknown
    };
    Ok(Some(FileStat {
        kind,
        mode: meta.mode() & 0o7777,
        uid: meta.uid(),
        gid: meta.gid(),
        size: meta.size(),
        inode: meta.ino(),
        dev: meta.dev(),
        nlink: meta.nlink(),
        atime: seconds(meta.atime(), meta.atime_nsec()),
        mtime: seconds(meta.mtime(), meta.mtime_nsec()),
        ctime: seconds(meta.ctime(), meta.ctime_nsec()),
    }))
}

pub(super) fn stat_storage(path: &str, follow: bool) -> Result<Option<FileStorage>, HostError> {
    Ok(metadata(path, follow)?.map(|m| FileStorage {
        blocks: m.blocks(),
        block_size: m.blksize(),
        device_type: m.rdev(),
    }))
}

pub(super) fn chmod(path: &str, mode: u32) -> Result<(), HostError> {
    fs::set_permissions(path, fs::Permissions::from_mode(mode))
        .map_err(|e| io_error("cannot chmod", path, e))
}

pub(super) fn chown(
    path: &str,
    uid: Option<u32>,
    gid: Option<u32>,
    follow: bool,
) -> Result<(), HostError> {
    let result = if follow {
        std::os::unix::fs::chown(path, uid, gid)
    } else {
        std::os::unix::fs::lchown(path, uid, gid)
    };
    result.map_err(|e| io_error("cannot chown", path, e))
}

pub(super) fn readlink(path: &str) -> Result<String, HostError> {
    let target = fs::read_link(path).map_err(|e| io_error("cannot read the symlink", path, e))?;
    Ok(target.to_string_lossy().into_owned())
}

pub(super) fn access(path: &str, mode: u32) -> Result<bool, HostError> {
    let c = c_string("cannot check access to", path)?;
    // SAFETY: `c` is a valid NUL-terminated string for the duration of the call.
    if unsafe { libc::access(c.as_ptr(), mode as libc::c_int) } == 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EACCES | libc::EPERM | libc::EROFS | libc::ETXTBSY) => Ok(false),
        _ => Err(io_error("cannot check access to", path, e)),
    }
}

pub(super) fn symlink(target: &str, path: &str) -> Result<(), HostError> {
    std::os::unix::fs::symlink(target, path).map_err(|e| io_error("cannot create symlink", path, e))
}

fn timespec(t: Option<f64>) -> libc::timespec {
    match t {
        None => libc::timespec {
            tv_sec: 0,
            tv_nsec: libc::UTIME_NOW,
        },
        Some(t) => {
            let secs = t.floor();
            libc::timespec {
                // `time_t`, which libc deprecates naming on musl.
                tv_sec: secs as _,
                tv_nsec: ((t - secs) * 1e9) as libc::c_long,
            }
        }
    }
}

pub(super) fn set_times(
    path: &str,
    atime: Option<f64>,
    mtime: Option<f64>,
    follow: bool,
) -> Result<(), HostError> {
    let c_path = c_string("cannot set times of", path)?;
    let times = [timespec(atime), timespec(mtime)];
    let flags = if follow { 0 } else { libc::AT_SYMLINK_NOFOLLOW };
    // SAFETY: `c_path` is a valid NUL-terminated string and `times` holds two timespecs,
    // as utimensat(2) requires; both outlive the call.
    let rc = unsafe { libc::utimensat(libc::AT_FDCWD, c_path.as_ptr(), times.as_ptr(), flags) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io_error(
            "cannot set times of",
            path,
            io::Error::last_os_error(),
        ))
    }
}

/// Calls one of the reentrant `getpw*_r`/`getgr*_r` functions with a growing buffer and
/// reads a field of the entry found.
fn lookup<E, T>(
    call: impl Fn(&mut E, &mut [libc::c_char], &mut *mut E) -> libc::c_int,
    read: impl Fn(&E) -> T,
) -> Option<T> {
    let mut size = 1024;
    while size <= 1 << 20 {
        let mut buf = vec![0 as libc::c_char; size];
        // SAFETY: an all-zero passwd/group struct is a valid value (integers and null
        // pointers); the libc call fills it in.
        let mut entry: E = unsafe { std::mem::zeroed() };
        let mut found: *mut E = std::ptr::null_mut();
        match call(&mut entry, &mut buf, &mut found) {
            0 if found.is_null() => return None,
            0 => return Some(read(&entry)),
            libc::ERANGE => size *= 4,
            _ => return None,
        }
    }
    None
}

fn text(ptr: *const libc::c_char) -> String {
    // SAFETY: the pointer comes from a passwd/group entry just filled in by libc; it
    // points into the buffer that is still alive and is NUL-terminated.
    unsafe { CStr::from_ptr(ptr) }
        .to_string_lossy()
        .into_owned()
}

pub(super) fn user_id(name: &str) -> Option<u32> {
    let name = CString::new(name).ok()?;
    lookup(
        // SAFETY: all pointers are valid for the duration of the call; the buffer length
        // is the buffer's real length.
        |pw: &mut libc::passwd, buf, found| unsafe {
            libc::getpwnam_r(name.as_ptr(), pw, buf.as_mut_ptr(), buf.len(), found)
        },
        |pw| pw.pw_uid,
    )
}

pub(super) fn group_id(name: &str) -> Option<u32> {
    let name = CString::new(name).ok()?;
    lookup(
        // SAFETY: as in `user_id`.
        |gr: &mut libc::group, buf, found| unsafe {
            libc::getgrnam_r(name.as_ptr(), gr, buf.as_mut_ptr(), buf.len(), found)
        },
        |gr| gr.gr_gid,
    )
}

pub(super) fn user_name(uid: u32) -> Option<String> {
    lookup(
        // SAFETY: as in `user_id`.
        |pw: &mut libc::passwd, buf, found| unsafe {
            libc::getpwuid_r(uid, pw, buf.as_mut_ptr(), buf.len(), found)
        },
        |pw| text(pw.pw_name),
    )
}

pub(super) fn group_name(gid: u32) -> Option<String> {
    lookup(
        // SAFETY: as in `user_id`.
        |gr: &mut libc::group, buf, found| unsafe {
            libc::getgrgid_r(gid, gr, buf.as_mut_ptr(), buf.len(), found)
        },
        |gr| text(gr.gr_name),
    )
}

pub(super) fn umask() -> u32 {
    // The only way to read the umask is to set it; put it straight back.
    // SAFETY: umask(2) cannot fail and has no memory-safety preconditions.
    unsafe {
        let mask = libc::umask(0);
        libc::umask(mask);
        mask as u32
    }
}

fn field(chars: &[libc::c_char]) -> String {
    let bytes: Vec<u8> = chars
        .iter()
        .take_while(|c| **c != 0)
        // `c_char` is i8 on x86_64 and u8 on aarch64: its byte either way.
        .map(|c| c.to_ne_bytes()[0])
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

fn c_text(p: *const libc::c_char) -> String {
    if p.is_null() { String::new() } else { text(p) }
}

pub(super) fn uname() -> Uname {
    // SAFETY: an all-zero utsname is valid and uname(2) fills it.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is valid and writable.
    unsafe { libc::uname(&mut u) };
    Uname {
        sysname: field(&u.sysname),
        nodename: field(&u.nodename),
        release: field(&u.release),
        version: field(&u.version),
        machine: field(&u.machine),
        domainname: field(&u.domainname),
    }
}

pub(super) fn identity() -> Identity {
    // SAFETY: these calls cannot fail and have no preconditions.
    unsafe {
        Identity {
            uid: libc::getuid(),
            gid: libc::getgid(),
            euid: libc::geteuid(),
            egid: libc::getegid(),
        }
    }
}

pub(super) fn user_entry(uid: u32) -> Option<Passwd> {
    lookup(
        // SAFETY: as in `user_id`.
        |pw: &mut libc::passwd, buf, found| unsafe {
            libc::getpwuid_r(uid, pw, buf.as_mut_ptr(), buf.len(), found)
        },
        |pw| Passwd {
            name: c_text(pw.pw_name),
            uid: pw.pw_uid,
            gid: pw.pw_gid,
            gecos: c_text(pw.pw_gecos),
            dir: c_text(pw.pw_dir),
            shell: c_text(pw.pw_shell),
        },
    )
}

// The C library's time zone state (POSIX; not bound by the libc crate).
unsafe extern "C" {
    fn tzset();
    static tzname: [*const libc::c_char; 2];
}

pub(super) fn local_zone(seconds: i64) -> Zone {
    // `time_t` as localtime_r takes it (libc deprecates naming it on musl).
    let t = seconds as _;
    // SAFETY: an all-zero tm is valid; localtime_r fills it.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: tzset has no preconditions; localtime_r gets valid pointers; tzname is
    // read after tzset set it.
    let names = unsafe {
        tzset();
        libc::localtime_r(&t, &mut tm);
        std::ptr::addr_of!(tzname).read()
    };
    Zone {
        offset: i32::try_from(tm.tm_gmtoff).unwrap_or(0),
        name: c_text(tm.tm_zone),
        dst: tm.tm_isdst > 0,
        standard_name: c_text(names[0]),
        daylight_name: c_text(names[1]),
    }
}

pub(super) fn fs_usage(mount_point: &str) -> Result<FsUsage, HostError> {
    let c = c_string("cannot statvfs", mount_point)?;
    // SAFETY: an all-zero statvfs is valid; the call fills it.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: valid NUL-terminated path and a writable struct.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Err(io_error(
            "cannot statvfs",
            mount_point,
            io::Error::last_os_error(),
        ));
    }
    Ok(FsUsage {
        block_size: st.f_bsize,
        fragment_size: st.f_frsize,
        blocks: st.f_blocks,
        blocks_free: st.f_bfree,
        blocks_available: st.f_bavail,
        files: st.f_files,
        files_free: st.f_ffree,
        files_available: st.f_favail,
    })
}

/// The address a `sockaddr` holds, if it is IPv4 or IPv6.
///
/// # Safety
/// `sa` must be null or point to a valid `sockaddr` of the size its family implies.
unsafe fn sock_address(sa: *const libc::sockaddr) -> Option<IpAddr> {
    if sa.is_null() {
        return None;
    }
    // SAFETY: guaranteed by the caller.
    unsafe {
        match i32::from((*sa).sa_family) {
            libc::AF_INET => {
                let sin = &*(sa as *const libc::sockaddr_in);
                Some(IpAddr::V4(Ipv4Addr::from(u32::from_be(
                    sin.sin_addr.s_addr,
                ))))
            }
            libc::AF_INET6 => {
                let sin6 = &*(sa as *const libc::sockaddr_in6);
                Some(IpAddr::V6(Ipv6Addr::from(sin6.sin6_addr.s6_addr)))
            }
            _ => None,
        }
    }
}

pub(super) fn addresses() -> Result<Vec<IfAddress>, HostError> {
    let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: out-pointer; the list is freed below.
    if unsafe { libc::getifaddrs(&mut list) } != 0 {
        return Err(io_error(
            "cannot list",
            "addresses",
            io::Error::last_os_error(),
        ));
    }
    let mut out = Vec::new();
    let mut cur = list;
    while !cur.is_null() {
        // SAFETY: an entry of the live list; its pointers are null or valid.
        let e = unsafe { &*cur };
        cur = e.ifa_next;
        // SAFETY: as above.
        let (addr, mask, bcast) = unsafe {
            (
                sock_address(e.ifa_addr),
                sock_address(e.ifa_netmask),
                sock_address(e.ifa_ifu),
            )
        };
        let Some(addr) = addr else { continue };
        out.push(IfAddress {
            name: c_text(e.ifa_name),
            family: if addr.is_ipv4() { 4 } else { 6 },
            address: addr.to_string(),
            netmask: mask.map(|m| m.to_string()).unwrap_or_default(),
            broadcast: bcast.map(|b| b.to_string()).unwrap_or_default(),
            flags: e.ifa_flags,
        });
    }
    // SAFETY: freed once.
    unsafe { libc::freeifaddrs(list) };
    Ok(out)
}

pub(super) fn table(name: &str) -> Result<String, HostError> {
    let Some(path) = sandball_wire::tables::path(name) else {
        return Err(HostError {
            denied: false,
            errno: libc::EINVAL,
            message: format!("table {name:?}: not one of the tables served"),
        });
    };
    fs::read_to_string(path).map_err(|e| io_error("cannot read", path, e))
}

pub(super) fn present(path: &str) -> Result<bool, HostError> {
    Ok(fs::symlink_metadata(path).is_ok())
}

pub(super) fn fqdn() -> Result<String, HostError> {
    let host = uname().nodename;
    let c = c_string("cannot look up", &host)?;
    // SAFETY: an all-zero addrinfo is a valid "no hints" value.
    let mut hints: libc::addrinfo = unsafe { std::mem::zeroed() };
    hints.ai_flags = libc::AI_CANONNAME;
    hints.ai_socktype = libc::SOCK_STREAM;
    let mut res: *mut libc::addrinfo = std::ptr::null_mut();
    // SAFETY: valid arguments; the list is freed below.
    if unsafe { libc::getaddrinfo(c.as_ptr(), std::ptr::null(), &hints, &mut res) } != 0
        || res.is_null()
    {
        return Ok(host);
    }
    // SAFETY: the first entry of the live list; the name is copied before freeing.
    let canonical = unsafe {
        let name = c_text((*res).ai_canonname);
        libc::freeaddrinfo(res);
        name
    };
    Ok(if canonical.is_empty() {
        host
    } else {
        canonical
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_files_links_and_missing_paths() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        fs::write(&file, b"hello").unwrap();
        chmod(file.to_str().unwrap(), 0o640).unwrap();
        let link = dir.path().join("l");
        symlink("f", link.to_str().unwrap()).unwrap();
        let st = stat(file.to_str().unwrap(), false).unwrap().unwrap();
        assert_eq!((st.kind, st.mode, st.size), (FileKind::File, 0o640, 5));
        let lst = stat(link.to_str().unwrap(), false).unwrap().unwrap();
        assert_eq!(lst.kind, FileKind::Symlink);
        let followed = stat(link.to_str().unwrap(), true).unwrap().unwrap();
        assert_eq!(followed.inode, st.inode);
        assert_eq!(
            stat(dir.path().join("nope").to_str().unwrap(), false),
            Ok(None)
        );
    }

    #[test]
    fn runs_programs_with_stdin_env_and_cwd() {
        let out = run(Command {
            argv: vec!["sh".into(), "-c".into(), "cat; echo $X; pwd; exit 3".into()],
            cwd: Some("/".into()),
            stdin: Some(b"in\n".to_vec()),
            env: vec![("X".into(), "y".into())],
        })
        .unwrap();
        assert_eq!(out.rc, 3);
        assert_eq!(String::from_utf8_lossy(&out.stdout), "in\ny\n/\n");
        let err = run(Command {
            argv: vec!["/nonexistent/prog".into()],
            ..Command::default()
        })
        .unwrap_err();
        assert_eq!(err.errno, libc::ENOENT);
        assert!(err.message.contains("/nonexistent/prog"), "{}", err.message);
    }

    #[test]
    fn sets_times_and_looks_up_users() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        fs::write(&file, b"").unwrap();
        let p = file.to_str().unwrap();
        set_times(p, Some(1_000_000_000.5), Some(1_500_000_000.0), true).unwrap();
        let st = stat(p, true).unwrap().unwrap();
        assert_eq!(st.mtime, 1_500_000_000.0);
        assert_eq!(st.atime, 1_000_000_000.5);
        assert_eq!(user_name(0).as_deref(), Some("root"));
        assert_eq!(user_id("root"), Some(0));
        assert_eq!(group_id("root"), Some(0));
        assert_eq!(group_name(0).as_deref(), Some("root"));
        assert_eq!(user_id("no-such-user-here"), None);
        let mask = umask();
        assert_eq!(umask(), mask);
    }
}
