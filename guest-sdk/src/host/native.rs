//! The host interface served by the local operating system, for native builds: unit
//! tests of the SDK and of modules, and running a module outside the shim to debug it.
//! Nothing is confined here; confinement is the shim's job on a node.

use super::{Command, FileKind, FileStat, HostError, Output};
use std::ffi::{CStr, CString};
use std::fs;
use std::io::{self, Write};
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

pub(super) fn stat(path: &str, follow: bool) -> Result<Option<FileStat>, HostError> {
    let meta = if follow {
        fs::metadata(path)
    } else {
        fs::symlink_metadata(path)
    };
    let meta = match meta {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_error("cannot stat", path, e)),
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
                tv_sec: secs as libc::time_t,
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
