//! The shim's own environment. The shim starts with whatever the controller, the SSH
//! login or `sudo` left in its environment, secrets included. [`scrub`], called first
//! thing in `main`, keeps a copy of it in memory (an `env` grant passes a named
//! variable on to a module from that copy, see [`original`]), wipes the original
//! strings (what `/proc/<pid>/environ` shows) and leaves in the process environment
//! only what the shim and the programs it runs need: [`KEPT`] and `LC_*`.

use std::ffi::{CStr, OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::sync::OnceLock;

/// The variables the shim keeps in its environment: `HOME` (its cache and `~`),
/// `PATH` (finding granted programs), `USER` and `LOGNAME`, `LANG` and `TZ`; plus
/// every `LC_*` locale variable. The shim reads no `SANDBALL_*` variable: its cache
/// directory comes on the command line.
pub const KEPT: &[&str] = &["HOME", "PATH", "USER", "LOGNAME", "LANG", "TZ"];

/// The environment the shim started with, once [`scrub`] has run.
static ORIGINAL: OnceLock<Vec<(OsString, OsString)>> = OnceLock::new();

/// Whether `name` stays in the shim's process environment.
pub fn is_kept(name: &OsStr) -> bool {
    KEPT.iter().any(|k| OsStr::new(k) == name) || name.as_bytes().starts_with(b"LC_")
}

unsafe extern "C" {
    /// The C library's environment (POSIX).
    static mut environ: *mut *mut libc::c_char;
}

/// Keeps a copy of the environment in memory, overwrites the original strings with
/// zero bytes (the kernel shows them as `/proc/<pid>/environ`, whatever the process
/// does to its environment later) and sets again only the [`is_kept`] variables.
/// Must be called before any other thread starts (it is the first thing `main` does);
/// later calls do nothing.
pub fn scrub() {
    if ORIGINAL.get().is_some() {
        return;
    }
    let all: Vec<(OsString, OsString)> = std::env::vars_os().collect();
    // SAFETY: `main` calls this before starting any thread, so nothing reads or
    // changes the environment meanwhile. `environ` is the NULL-terminated array the
    // process started with (nothing has called setenv yet: `ORIGINAL` is unset); each
    // entry is a NUL-terminated string in writable memory (the initial stack), and
    // only its bytes before the NUL are overwritten. The environment is then emptied
    // and rebuilt from owned copies, so no variable points at the wiped bytes.
    unsafe {
        let mut entry = environ;
        while !entry.is_null() && !(*entry).is_null() {
            let text = *entry;
            let len = CStr::from_ptr(text).to_bytes().len();
            std::ptr::write_bytes(text, 0, len);
            entry = entry.add(1);
        }
        libc::clearenv();
        for (name, value) in all.iter().filter(|(n, _)| is_kept(n)) {
            std::env::set_var(name, value);
        }
    }
    let _ = ORIGINAL.set(all);
}

/// The whole environment the shim started with (for the programs of legacy-module
/// jobs, which run outside the sandbox as they would over the connection).
pub fn all_original() -> Vec<(OsString, OsString)> {
    match ORIGINAL.get() {
        Some(all) => all.clone(),
        None => std::env::vars_os().collect(),
    }
}

/// The value `name` had when the shim started (what an `env` grant passes on to a
/// module or a program). Without [`scrub`] (the shim used as a library), the
/// current environment.
pub fn original(name: &str) -> Option<OsString> {
    match ORIGINAL.get() {
        Some(all) => all
            .iter()
            .find(|(n, _)| n == OsStr::new(name))
            .map(|(_, v)| v.clone()),
        None => std::env::var_os(name),
    }
}

/// Marks every descriptor above 2 that the shim inherited close-on-exec, so that no
/// program it runs inherits one (its session's, say); the descriptors the shim opens
/// itself are close-on-exec already (Rust's default). Called first thing in `main`,
/// with [`scrub`]: programs are then started without forking the shim, whose copy of
/// the address space cost milliseconds a program (docs/BENCHMARKS.md).
pub fn close_inherited_descriptors() {
    // SAFETY: close_range(2) with CLOSE_RANGE_CLOEXEC only changes descriptor flags.
    let r = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            3u32,
            u32::MAX,
            libc::CLOSE_RANGE_CLOEXEC as libc::c_uint,
        )
    };
    if r == 0 {
        return;
    }
    // Kernels before 5.11: every descriptor up to the limit, one by one.
    let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile)
        .current
        .unwrap_or(1 << 16)
        .min(1 << 20) as i32;
    for fd in 3..limit {
        // SAFETY: fcntl on a descriptor that may not be open; EBADF is ignored.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFD);
            if flags >= 0 {
                libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locale_and_the_basics_are_kept_and_nothing_else() {
        for kept in ["HOME", "PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "USER"] {
            assert!(is_kept(OsStr::new(kept)), "{kept}");
        }
        for dropped in [
            "SSH_AUTH_SOCK",
            "AWS_SECRET_ACCESS_KEY",
            "LD_PRELOAD",
            "SANDBALL_CACHE_DIR",
            "home",
            "PATHX",
            "XLC_ALL",
        ] {
            assert!(!is_kept(OsStr::new(dropped)), "{dropped}");
        }
    }
}
