//! The host interface through the component's imports (`wit-bindgen` bindings of world
//! `module`). Only the functions a module actually calls end up as imports of its
//! component.

use super::{
    Command, FileKind, FileStat, FileStorage, FsUsage, HostError, Identity, IfAddress, Output,
    Passwd, Uname, Zone,
};

wit_bindgen::generate!({
    world: "module",
    path: "wit",
});

use sandball::host::{posix, process, system, types};

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

pub(super) fn stat_storage(path: &str, follow: bool) -> Result<Option<FileStorage>, HostError> {
    Ok(posix::stat_storage(path, follow)?.map(|s| FileStorage {
        blocks: s.blocks,
        block_size: s.block_size,
        device_type: s.device_type,
    }))
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

pub(super) fn uname() -> Uname {
    let u = system::uname();
    Uname {
        sysname: u.sysname,
        nodename: u.nodename,
        release: u.release,
        version: u.version,
        machine: u.machine,
        domainname: u.domainname,
    }
}

pub(super) fn identity() -> Identity {
    let i = system::identity();
    Identity {
        uid: i.uid,
        gid: i.gid,
        euid: i.euid,
        egid: i.egid,
    }
}

pub(super) fn user_entry(uid: u32) -> Option<Passwd> {
    system::user_entry(uid).map(|p| Passwd {
        name: p.name,
        uid: p.uid,
        gid: p.gid,
        gecos: p.gecos,
        dir: p.dir,
        shell: p.shell,
    })
}

pub(super) fn local_zone(seconds: i64) -> Zone {
    let z = system::local_zone(seconds);
    Zone {
        offset: z.offset,
        name: z.name,
        dst: z.dst,
        standard_name: z.standard_name,
        daylight_name: z.daylight_name,
    }
}

pub(super) fn fs_usage(mount_point: &str) -> Result<FsUsage, HostError> {
    let u = system::fs_usage(mount_point)?;
    Ok(FsUsage {
        block_size: u.block_size,
        fragment_size: u.fragment_size,
        blocks: u.blocks,
        blocks_free: u.blocks_free,
        blocks_available: u.blocks_available,
        files: u.files,
        files_free: u.files_free,
        files_available: u.files_available,
    })
}

pub(super) fn addresses() -> Result<Vec<IfAddress>, HostError> {
    Ok(system::addresses()?
        .into_iter()
        .map(|a| IfAddress {
            name: a.name,
            family: a.family,
            address: a.address,
            netmask: a.netmask,
            broadcast: a.broadcast,
            flags: a.if_flags,
        })
        .collect())
}

pub(super) fn table(name: &str) -> Result<String, HostError> {
    Ok(system::table(name)?)
}

pub(super) fn fqdn() -> Result<String, HostError> {
    Ok(system::fqdn()?)
}

pub(super) fn present(path: &str) -> Result<bool, HostError> {
    Ok(system::present(path)?)
}
