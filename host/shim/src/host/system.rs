//! `system.*`: what the node says about itself that no granted file shows a sandboxed
//! module (the kernel's identity, the shim's ids, the time zone, interface addresses,
//! the shim's own mount and route tables). All of it is read-only information any
//! process on the node can learn; `fs-usage` answers for mount points only and `fqdn`
//! needs the `dns` capability, like any other name lookup.

use super::sandball::host::system::{
    Host, Ids, IfAddress, PasswdEntry, UnameInfo, Usage, ZoneInfo,
};
use super::{HostError, HostState, deny, failure, users};
use std::ffi::{CStr, CString};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The marker paths `present` answers for: their existence identifies containers,
/// hypervisors, init systems and package managers (as ansible-core's facts check them).
pub const MARKERS: &[&str] = &[
    "/.dockerenv",
    "/.dockerinit",
    "/run/.containerenv",
    "/run/systemd/system",
    "/run/ostree-booted",
    "/dev/kvm",
    "/dev/.run/systemd",
    "/dev/.systemd",
    "/proc/vz",
    "/proc/bc",
    "/proc/lve",
    "/proc/xen",
    "/rhev",
    "/sbin/openrc",
    "/sbin/init",
    "/bin/systemctl",
    "/usr/bin/systemctl",
    "/sbin/initctl",
    "/etc/init",
    "/etc/init.d",
    "/etc/dinit.d",
    "/sys/fs/selinux",
    "/sys/kernel/security/apparmor",
    "/usr/bin/rpm-ostree",
    "/usr/bin/yum",
    "/usr/bin/dnf",
    "/usr/bin/dnf-3",
    "/usr/bin/dnf5",
    "/usr/bin/microdnf",
    "/usr/bin/apt-get",
    "/usr/bin/rpm",
    "/usr/bin/zypper",
    "/usr/sbin/urpmi",
    "/usr/bin/pacman",
    "/bin/opkg",
    "/usr/pkg/bin/pkgin",
    "/opt/local/bin/pkgin",
    "/opt/tools/bin/pkgin",
    "/opt/local/bin/port",
    "/usr/local/bin/brew",
    "/opt/homebrew/bin/brew",
    "/sbin/apk",
    "/usr/sbin/pkg",
    "/usr/sbin/swlist",
    "/usr/bin/emerge",
    "/usr/sbin/pkgadd",
    "/usr/bin/pkg",
    "/usr/bin/xbps-install",
    "/usr/local/sbin/pkg",
    "/usr/bin/swupd",
    "/usr/sbin/sorcery",
    "/usr/bin/installp",
    "/usr/bin/lsb_release",
];

/// A C string field as text (lossy).
fn text(chars: &[libc::c_char]) -> String {
    let bytes: Vec<u8> = chars
        .iter()
        .take_while(|c| **c != 0)
        // `c_char` is i8 on x86_64 and u8 on aarch64: its byte either way.
        .map(|c| c.to_ne_bytes()[0])
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The address a `sockaddr` holds, if it is IPv4 or IPv6.
///
/// # Safety
/// `sa` must be null or point to a valid `sockaddr` of the size its family implies.
unsafe fn address(sa: *const libc::sockaddr) -> Option<IpAddr> {
    if sa.is_null() {
        return None;
    }
    // SAFETY: guaranteed by the caller; the family decides which struct it is.
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

/// The mount points of the shim's mount table (octal escapes of spaces decoded).
fn mount_points() -> std::io::Result<Vec<String>> {
    let table = std::fs::read_to_string("/proc/self/mounts")?;
    Ok(table
        .lines()
        .filter_map(|l| l.split(' ').nth(1))
        .map(unescape_octal)
        .collect())
}

/// Decodes the `\040`-style escapes of /proc/self/mounts.
pub(crate) fn unescape_octal(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes
            .get(i + 1..i + 4)
            .filter(|d| bytes[i] == b'\\' && d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match octal {
            Some(d) => {
                let value = d.iter().fold(0u32, |acc, c| acc * 8 + u32::from(c - b'0'));
                out.push(u8::try_from(value).unwrap_or(b'?'));
                i += 4;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Python's socket.getfqdn() of the host name: the name a reverse lookup of its
/// address gives (or the canonical name, when only that has a dot), else the host
/// name itself.
fn lookup_fqdn(hostname: &str) -> String {
    let Ok(name) = CString::new(hostname) else {
        return hostname.to_string();
    };
    // SAFETY: an all-zero addrinfo is a valid "no hints" value.
    let mut hints: libc::addrinfo = unsafe { std::mem::zeroed() };
    hints.ai_flags = libc::AI_CANONNAME;
    hints.ai_socktype = libc::SOCK_STREAM;
    let mut res: *mut libc::addrinfo = std::ptr::null_mut();
    // SAFETY: valid NUL-terminated name, valid hints, and an out-pointer freed below.
    let rc = unsafe { libc::getaddrinfo(name.as_ptr(), std::ptr::null(), &hints, &mut res) };
    if rc != 0 || res.is_null() {
        return hostname.to_string();
    }
    let mut host = [0 as libc::c_char; 1025];
    // SAFETY: `res` is the list getaddrinfo returned; its first entry's address and
    // canonical name are used before the list is freed; `host` is as long as stated.
    let (canonical, reverse) = unsafe {
        let first = &*res;
        let c = first.ai_canonname;
        let canonical = (!c.is_null()).then(|| CStr::from_ptr(c).to_string_lossy().into_owned());
        let reverse = (libc::getnameinfo(
            first.ai_addr,
            first.ai_addrlen,
            host.as_mut_ptr(),
            host.len() as libc::socklen_t,
            std::ptr::null_mut(),
            0,
            libc::NI_NAMEREQD,
        ) == 0)
            .then(|| text(&host));
        libc::freeaddrinfo(res);
        (canonical, reverse)
    };
    match (reverse, canonical) {
        (Some(r), _) if r.contains('.') => r,
        (_, Some(c)) if c.contains('.') => c,
        (Some(r), _) => r,
        _ => hostname.to_string(),
    }
}

impl Host for HostState {
    fn uname(&mut self) -> UnameInfo {
        // SAFETY: an all-zero utsname is valid; uname(2) fills it and cannot fail
        // with a valid pointer.
        let mut u: libc::utsname = unsafe { std::mem::zeroed() };
        // SAFETY: `u` is a valid, writable utsname.
        unsafe { libc::uname(&mut u) };
        UnameInfo {
            sysname: text(&u.sysname),
            nodename: text(&u.nodename),
            release: text(&u.release),
            version: text(&u.version),
            machine: text(&u.machine),
            domainname: text(&u.domainname),
        }
    }

    fn identity(&mut self) -> Ids {
        Ids {
            uid: rustix::process::getuid().as_raw(),
            gid: rustix::process::getgid().as_raw(),
            euid: rustix::process::geteuid().as_raw(),
            egid: rustix::process::getegid().as_raw(),
        }
    }

    fn user_entry(&mut self, uid: u32) -> Option<PasswdEntry> {
        users::passwd_of(uid).map(|p| PasswdEntry {
            name: p.name,
            uid: p.uid,
            gid: p.gid,
            gecos: p.gecos,
            dir: p.dir,
            shell: p.shell,
        })
    }

    fn local_zone(&mut self, seconds: i64) -> ZoneInfo {
        // The SDK's own reading of the C library's zone, as a native module gets it.
        let z = sandball_guest_sdk::host::local_zone(seconds);
        ZoneInfo {
            offset: z.offset,
            name: z.name,
            dst: z.dst,
            standard_name: z.standard_name,
            daylight_name: z.daylight_name,
        }
    }

    fn fs_usage(&mut self, mount_point: String) -> Result<Usage, HostError> {
        let points = mount_points()
            .map_err(|e| failure(e.raw_os_error().unwrap_or(0), format!("mount table: {e}")))?;
        if !points.contains(&mount_point) {
            return Err(deny(
                &mut self.denials,
                format!("fs-usage {mount_point}"),
                format!(
                    "fs-usage of {mount_point} denied: only mount points of the node's mount table are answered"
                ),
            ));
        }
        let st = rustix::fs::statvfs(mount_point.as_str()).map_err(|e| {
            failure(
                e.raw_os_error(),
                format!("statvfs {mount_point}: {}", std::io::Error::from(e)),
            )
        })?;
        Ok(Usage {
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

    fn addresses(&mut self) -> Result<Vec<IfAddress>, HostError> {
        let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
        // SAFETY: `list` is an out-pointer; the list is freed below.
        if unsafe { libc::getifaddrs(&mut list) } != 0 {
            let e = std::io::Error::last_os_error();
            return Err(failure(
                e.raw_os_error().unwrap_or(0),
                format!("getifaddrs: {e}"),
            ));
        }
        let mut out = Vec::new();
        let mut cur = list;
        while !cur.is_null() {
            // SAFETY: `cur` is an entry of the list getifaddrs returned, alive until
            // freeifaddrs; its pointers are null or valid for their family.
            let entry = unsafe { &*cur };
            cur = entry.ifa_next;
            // SAFETY: as above.
            let Some(addr) = (unsafe { address(entry.ifa_addr) }) else {
                continue;
            };
            // SAFETY: as above.
            let netmask = unsafe { address(entry.ifa_netmask) };
            // SAFETY: as above (ifa_ifu is the broadcast or peer address).
            let broadcast = unsafe { address(entry.ifa_ifu) };
            // SAFETY: ifa_name is a NUL-terminated name owned by the list.
            let name = unsafe { CStr::from_ptr(entry.ifa_name) }
                .to_string_lossy()
                .into_owned();
            out.push(IfAddress {
                name,
                family: if addr.is_ipv4() { 4 } else { 6 },
                address: addr.to_string(),
                netmask: netmask.map(|m| m.to_string()).unwrap_or_default(),
                broadcast: broadcast.map(|b| b.to_string()).unwrap_or_default(),
                if_flags: entry.ifa_flags,
            });
        }
        // SAFETY: the list came from getifaddrs and is freed once.
        unsafe { libc::freeifaddrs(list) };
        Ok(out)
    }

    fn table(&mut self, name: String) -> Result<String, HostError> {
        let Some(path) = sandball_wire::tables::path(&name) else {
            return Err(failure(
                libc::EINVAL,
                format!(
                    "table {name:?}: not one of the tables served ({})",
                    sandball_wire::tables::names()
                ),
            ));
        };
        std::fs::read_to_string(path).map_err(|e| {
            failure(
                e.raw_os_error().unwrap_or(0),
                format!("cannot read {path}: {e}"),
            )
        })
    }

    fn present(&mut self, path: String) -> Result<bool, HostError> {
        if !MARKERS.contains(&path.as_str()) {
            return Err(failure(
                libc::EINVAL,
                format!("present {path}: not one of the well-known marker paths answered"),
            ));
        }
        Ok(std::fs::symlink_metadata(&path).is_ok())
    }

    fn fqdn(&mut self) -> Result<String, HostError> {
        let hostname = self.uname().nodename;
        if !self.dns {
            return Err(deny(
                &mut self.denials,
                "dns".into(),
                format!(
                    "looking up the name {hostname} denied: the grant does not allow name lookups; grant it with a `capabilities:` entry dns"
                ),
            ));
        }
        Ok(lookup_fqdn(&hostname))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;
    use std::time::{Duration, Instant};

    fn state(dns: bool) -> HostState {
        let mut s = HostState::new(
            Vec::new(),
            Vec::new(),
            Vec::new(),
            crate::paths::Places::at(std::path::Path::new("/")),
            Instant::now() + Duration::from_secs(60),
            1 << 20,
        );
        s.allow_dns(dns);
        s
    }

    #[test]
    fn uname_and_identity_describe_this_process() {
        let mut s = state(false);
        let u = s.uname();
        assert_eq!(u.sysname, "Linux");
        assert_eq!(
            u.release,
            std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .unwrap()
                .trim()
        );
        assert_eq!(u.machine, std::env::consts::ARCH);
        let id = s.identity();
        assert_eq!(id.uid, rustix::process::getuid().as_raw());
        let me = s.user_entry(id.uid).unwrap();
        assert_eq!(me.uid, id.uid);
        assert!(me.dir.starts_with('/'), "{}", me.dir);
        assert!(s.user_entry(3_999_999_999).is_none());
    }

    #[test]
    fn fs_usage_answers_mount_points_only() {
        let mut s = state(false);
        let root = s.fs_usage("/".into()).unwrap();
        assert!(root.blocks > 0 && root.block_size > 0);
        let e = s.fs_usage("/etc".into()).unwrap_err();
        assert!(e.denied, "{}", e.message);
        assert_eq!(s.take_denials()[0].capability, "fs-usage /etc");
    }

    #[test]
    fn tables_are_served_by_name_only() {
        let mut s = state(false);
        assert!(s.table("mounts".into()).unwrap().contains(" / "));
        let e = s.table("environ".into()).unwrap_err();
        assert!(
            !e.denied && e.message.contains("not one of"),
            "{}",
            e.message
        );
        let e = s.table("../1/environ".into()).unwrap_err();
        assert_eq!(e.errno, libc::EINVAL);
    }

    #[test]
    fn addresses_include_loopback() {
        let mut s = state(false);
        let all = s.addresses().unwrap();
        assert!(
            all.iter()
                .any(|a| a.address == "127.0.0.1" && a.netmask == "255.0.0.0"),
            "{all:?}"
        );
    }

    #[test]
    fn markers_only_are_answered() {
        let mut s = state(false);
        assert_eq!(
            s.present("/usr/bin/apt-get".into()).unwrap(),
            Path::new("/usr/bin/apt-get").exists()
        );
        let e = s.present("/etc/shadow".into()).unwrap_err();
        assert_eq!(e.errno, libc::EINVAL, "{}", e.message);
    }

    #[test]
    fn fqdn_needs_dns() {
        let mut s = state(false);
        let e = s.fqdn().unwrap_err();
        assert!(e.denied && e.message.contains("dns"), "{}", e.message);
        let mut s = state(true);
        assert!(!s.fqdn().unwrap().is_empty());
    }

    #[test]
    fn zone_offsets_are_reported() {
        let mut s = state(false);
        let z = s.local_zone(1_700_000_000);
        assert!(!z.name.is_empty());
        assert!(z.offset.abs() <= 14 * 3600);
    }

    #[test]
    fn octal_escapes_are_decoded() {
        assert_eq!(unescape_octal(r"/mnt/a\040b"), "/mnt/a b");
        assert_eq!(unescape_octal(r"/x\\y"), r"/x\\y");
        assert_eq!(unescape_octal("/plain"), "/plain");
    }
}
