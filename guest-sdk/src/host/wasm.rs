//! The host interface through the component's imports (`wit-bindgen` bindings of world
//! `module`). Only the functions a module actually calls end up as imports of its
//! component.

use super::{Command, FileKind, FileStat, HostError, Output};

wit_bindgen::generate!({
    world: "module",
    path: "wit",
});

use sandball::host::{posix, process, types};

impl From<types::Error> for HostError {
    fn from(e: types::Error) -> Self {
        HostError {
            denied: e.denied,
            errno: e.errno,
            message: e.message,
        }
    }
}

fn file_stat(s: posix::FileStat) -> FileStat {
    FileStat {
        kind: match s.kind {
            posix::FileKind::File => FileKind::File,
            posix::FileKind::Directory => FileKind::Directory,
            posix::FileKind::Symlink => FileKind::Symlink,
            posix::FileKind::BlockDevice => FileKind::BlockDevice,
            posix::FileKind::CharDevice => FileKind::CharDevice,
            posix::FileKind::Fifo => FileKind::Fifo,
            posix::FileKind::Socket => FileKind::Socket,
            posix::FileKind::Unknown => FileKind::Unknown,
        },
        mode: s.mode,
        uid: s.uid,
        gid: s.gid,
        size: s.size,
        inode: s.inode,
        dev: s.dev,
        nlink: s.nlink,
        atime: s.atime,
        mtime: s.mtime,
        ctime: s.ctime,
    }
}

pub(super) fn run(cmd: Command) -> Result<Output, HostError> {
    let cmd = process::Command {
        argv: cmd.argv,
        cwd: cmd.cwd,
        stdin: cmd.stdin,
        env: cmd.env,
    };
    let out = process::run(&cmd)?;
    Ok(Output {
        rc: out.rc,
        stdout: out.stdout,
        stderr: out.stderr,
    })
}

pub(super) fn stat(path: &str, follow: bool) -> Result<Option<FileStat>, HostError> {
    Ok(posix::stat(path, follow)?.map(file_stat))
}

pub(super) fn readlink(path: &str) -> Result<String, HostError> {
    Ok(posix::readlink(path)?)
}

pub(super) fn access(path: &str, mode: u32) -> Result<bool, HostError> {
    Ok(posix::access(path, mode)?)
}

pub(super) fn chmod(path: &str, mode: u32) -> Result<(), HostError> {
    Ok(posix::chmod(path, mode)?)
}

pub(super) fn chown(
    path: &str,
    uid: Option<u32>,
    gid: Option<u32>,
    follow: bool,
) -> Result<(), HostError> {
    Ok(posix::chown(path, uid, gid, follow)?)
}

pub(super) fn symlink(target: &str, path: &str) -> Result<(), HostError> {
    Ok(posix::symlink(target, path)?)
}

pub(super) fn set_times(
    path: &str,
    atime: Option<f64>,
    mtime: Option<f64>,
    follow: bool,
) -> Result<(), HostError> {
    Ok(posix::set_times(path, atime, mtime, follow)?)
}

pub(super) fn user_id(name: &str) -> Option<u32> {
    posix::user_id(name)
}

pub(super) fn group_id(name: &str) -> Option<u32> {
    posix::group_id(name)
}

pub(super) fn user_name(uid: u32) -> Option<String> {
    posix::user_name(uid)
}

pub(super) fn group_name(gid: u32) -> Option<String> {
    posix::group_name(gid)
}

pub(super) fn umask() -> u32 {
    posix::umask()
}
