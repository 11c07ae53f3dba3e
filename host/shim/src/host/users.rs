//! Lookups in the node's password and group databases (through libc, so NSS
//! sources such as LDAP are honoured).

use std::ffi::{CStr, CString};
use std::ptr;

/// Largest buffer tried for one database entry.
const MAX_BUFFER: usize = 1 << 20;

/// Calls a reentrant libc lookup with a growing buffer. `call` returns the lookup's
/// error number, and `Some` once the entry is found.
fn lookup<T>(mut call: impl FnMut(&mut [libc::c_char]) -> (libc::c_int, Option<T>)) -> Option<T> {
    let mut size = 1024;
    loop {
        let mut buf: Vec<libc::c_char> = vec![0; size];
        match call(&mut buf) {
            (0, found) => return found,
            (libc::ERANGE, _) if size < MAX_BUFFER => size *= 4,
            _ => return None,
        }
    }
}

/// Copies what `field` of a found passwd entry points to.
fn passwd_entry<T>(
    call: impl Fn(&mut libc::passwd, &mut [libc::c_char], &mut *mut libc::passwd) -> libc::c_int,
    field: impl Fn(&libc::passwd) -> T,
) -> Option<T> {
    lookup(|buf| {
        // SAFETY: passwd is a plain C struct for which all-zero bytes are valid.
        let mut entry: libc::passwd = unsafe { std::mem::zeroed() };
        let mut result: *mut libc::passwd = ptr::null_mut();
        let rc = call(&mut entry, buf, &mut result);
        let found = (rc == 0 && !result.is_null()).then(|| field(&entry));
        (rc, found)
    })
}

/// Copies what `field` of a found group entry points to.
fn group_entry<T>(
    call: impl Fn(&mut libc::group, &mut [libc::c_char], &mut *mut libc::group) -> libc::c_int,
    field: impl Fn(&libc::group) -> T,
) -> Option<T> {
    lookup(|buf| {
        // SAFETY: group is a plain C struct for which all-zero bytes are valid.
        let mut entry: libc::group = unsafe { std::mem::zeroed() };
        let mut result: *mut libc::group = ptr::null_mut();
        let rc = call(&mut entry, buf, &mut result);
        let found = (rc == 0 && !result.is_null()).then(|| field(&entry));
        (rc, found)
    })
}

/// Copies a C string owned by a database entry.
///
/// # Safety
/// `p` must be null or point to a NUL-terminated string that outlives the call.
unsafe fn c_bytes(p: *const libc::c_char) -> Vec<u8> {
    if p.is_null() {
        return Vec::new();
    }
    // SAFETY: guaranteed by the caller.
    unsafe { CStr::from_ptr(p) }.to_bytes().to_vec()
}

/// The user id of a user name.
pub fn user_id(name: &str) -> Option<u32> {
    let name = CString::new(name).ok()?;
    passwd_entry(
        // SAFETY: every pointer is valid for the call; `buf` is as long as stated.
        |e, buf, r| unsafe { libc::getpwnam_r(name.as_ptr(), e, buf.as_mut_ptr(), buf.len(), r) },
        |e| e.pw_uid,
    )
}

/// The name of a user id.
pub fn user_name(uid: u32) -> Option<String> {
    passwd_entry(
        // SAFETY: every pointer is valid for the call; `buf` is as long as stated.
        |e, buf, r| unsafe { libc::getpwuid_r(uid, e, buf.as_mut_ptr(), buf.len(), r) },
        // SAFETY: pw_name points into the buffer, alive during this closure.
        |e| String::from_utf8_lossy(&unsafe { c_bytes(e.pw_name) }).into_owned(),
    )
}

/// The home directory (raw bytes) of a user id.
pub fn home_of(uid: u32) -> Option<Vec<u8>> {
    passwd_entry(
        // SAFETY: every pointer is valid for the call; `buf` is as long as stated.
        |e, buf, r| unsafe { libc::getpwuid_r(uid, e, buf.as_mut_ptr(), buf.len(), r) },
        // SAFETY: pw_dir points into the buffer, alive during this closure.
        |e| unsafe { c_bytes(e.pw_dir) },
    )
    .filter(|h| !h.is_empty())
}

/// A password database entry, as text.
pub struct Passwd {
    /// Login name.
    pub name: String,
    /// User id.
    pub uid: u32,
    /// Primary group id.
    pub gid: u32,
    /// The GECOS (comment) field.
    pub gecos: String,
    /// Home directory.
    pub dir: String,
    /// Login shell.
    pub shell: String,
}

/// The password database entry of a user id.
pub fn passwd_of(uid: u32) -> Option<Passwd> {
    let text = |p: Vec<u8>| String::from_utf8_lossy(&p).into_owned();
    passwd_entry(
        // SAFETY: every pointer is valid for the call; `buf` is as long as stated.
        |e, buf, r| unsafe { libc::getpwuid_r(uid, e, buf.as_mut_ptr(), buf.len(), r) },
        // SAFETY: the fields point into the buffer, alive during this closure.
        |e| unsafe {
            Passwd {
                name: text(c_bytes(e.pw_name)),
                uid: e.pw_uid,
                gid: e.pw_gid,
                gecos: text(c_bytes(e.pw_gecos)),
                dir: text(c_bytes(e.pw_dir)),
                shell: text(c_bytes(e.pw_shell)),
            }
        },
    )
}

/// The group id of a group name.
pub fn group_id(name: &str) -> Option<u32> {
    let name = CString::new(name).ok()?;
    group_entry(
        // SAFETY: every pointer is valid for the call; `buf` is as long as stated.
        |e, buf, r| unsafe { libc::getgrnam_r(name.as_ptr(), e, buf.as_mut_ptr(), buf.len(), r) },
        |e| e.gr_gid,
    )
}

/// The name of a group id.
pub fn group_name(gid: u32) -> Option<String> {
    group_entry(
        // SAFETY: every pointer is valid for the call; `buf` is as long as stated.
        |e, buf, r| unsafe { libc::getgrgid_r(gid, e, buf.as_mut_ptr(), buf.len(), r) },
        // SAFETY: gr_name points into the buffer, alive during this closure.
        |e| String::from_utf8_lossy(&unsafe { c_bytes(e.gr_name) }).into_owned(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_is_known_both_ways() {
        assert_eq!(user_id("root"), Some(0));
        assert_eq!(user_name(0).as_deref(), Some("root"));
        let root_group = group_name(0).unwrap();
        assert_eq!(group_id(&root_group), Some(0));
        assert!(home_of(0).is_some());
    }

    #[test]
    fn unknown_names_and_ids_are_none() {
        assert_eq!(user_id("no-such-user-sandball"), None);
        assert_eq!(group_id("no-such-group-sandball"), None);
        assert_eq!(user_id("nul\0inside"), None);
        assert_eq!(user_name(3_999_999_999), None);
    }
}
