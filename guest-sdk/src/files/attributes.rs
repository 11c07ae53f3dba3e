//! `set_fs_attributes_if_different`: brings a file's owner, group, mode and `chattr`
//! attributes to what the file arguments ask for, through the `posix` host calls;
//! records before/after in the diff and changes nothing in check mode.

use super::args::FileArgs;
use super::chattr::set_attributes_if_different;
use super::mode::resolve_mode;
use crate::Fail;
use crate::diff::Diff;
use crate::host::{self, FileKind, FileStat};

/// Sets owner and group, tolerating EPERM like Ansible (an unprivileged user cannot
/// give files away; the file then keeps the user's own ids).
pub fn carry_owner(path: &str, uid: u32, gid: u32) -> Result<(), Fail> {
    match host::chown(path, Some(uid), Some(gid), true) {
        Err(e) if !e.denied && e.errno == EPERM => Ok(()),
        other => Ok(other?),
    }
}

/// `EPERM` ("operation not permitted"), the same number on every POSIX system.
const EPERM: i32 = 1;

/// Which id of a file an ownership change sets.
#[derive(Clone, Copy)]
enum Id {
    User,
    Group,
}
use serde_json::Value;

/// Ansible's rendering of a mode in diffs and results: `0644`, `04755`.
pub fn mode_text(mode: u32) -> String {
    format!("0{mode:03o}")
}

/// Applies `args` to `path`; returns `changed`, set when anything was (or, in check
/// mode, would be) changed.
pub fn set_fs_attributes_if_different(
    args: &FileArgs,
    path: &str,
    changed: bool,
    mut diff: Option<&mut Diff>,
    check_mode: bool,
) -> Result<bool, Fail> {
    let target = Target { path, check_mode };
    let mut changed = target.set_id(
        Id::User,
        args.owner.as_deref(),
        changed,
        diff.as_deref_mut(),
    )?;
    changed = target.set_id(
        Id::Group,
        args.group.as_deref(),
        changed,
        diff.as_deref_mut(),
    )?;
    changed = target.mode(args.mode.as_ref(), changed, diff.as_deref_mut())?;
    set_attributes_if_different(path, args.attributes.as_deref(), changed, diff, check_mode)
}

struct Target<'a> {
    path: &'a str,
    check_mode: bool,
}

impl Target<'_> {
    /// In check mode a file that does not exist yet would be created: report a change.
    fn absent_in_check_mode(&self) -> Result<bool, Fail> {
        Ok(self.check_mode && host::stat(self.path, true)?.is_none())
    }

    fn lstat(&self) -> Result<FileStat, Fail> {
        host::stat(self.path, false)?.ok_or_else(|| {
            Fail::new(format!(
                "cannot set the attributes of {}: it does not exist",
                self.path
            ))
            .with("path", self.path)
        })
    }

    fn id(
        &self,
        given: &str,
        lookup: fn(&str) -> Option<u32>,
        command: &str,
        what: &str,
    ) -> Result<u32, Fail> {
        given.parse().ok().or_else(|| lookup(given)).ok_or_else(|| {
            Fail::new(format!(
                "{command} failed: failed to look up {what} {given}"
            ))
            .with("path", self.path)
        })
    }

    /// Sets the owner (`Id::User`) or the group (`Id::Group`) when it differs.
    fn set_id(
        &self,
        which: Id,
        name: Option<&str>,
        changed: bool,
        diff: Option<&mut Diff>,
    ) -> Result<bool, Fail> {
        let Some(name) = name else {
            return Ok(changed);
        };
        if self.absent_in_check_mode()? {
            return Ok(true);
        }
        let st = self.lstat()?;
        let (lookup, command, what, key, current): (fn(&str) -> Option<u32>, _, _, _, _) =
            match which {
                Id::User => (host::user_id, "chown", "user", "owner", st.uid),
                Id::Group => (host::group_id, "chgrp", "group", "group", st.gid),
            };
        let id = self.id(name, lookup, command, what)?;
        if current == id {
            return Ok(changed);
        }
        if let Some(d) = diff {
            d.record(key, current, id);
        }
        if self.check_mode {
            return Ok(true);
        }
        let (uid, gid) = match which {
            Id::User => (Some(id), None),
            Id::Group => (None, Some(id)),
        };
        host::chown(self.path, uid, gid, false).map_err(|e| {
            Fail::new(format!("{command} failed: {}", e.message)).with("path", self.path)
        })?;
        Ok(true)
    }

    fn mode(
        &self,
        mode: Option<&Value>,
        changed: bool,
        diff: Option<&mut Diff>,
    ) -> Result<bool, Fail> {
        let Some(mode) = mode else { return Ok(changed) };
        if self.absent_in_check_mode()? {
            return Ok(true);
        }
        let st = self.lstat()?;
        // Linux has no mode of a symlink's own to set (chmod would change its target).
        if st.kind == FileKind::Symlink {
            return Ok(changed);
        }
        let wanted = resolve_mode(mode, st.mode, st.kind == FileKind::Directory, host::umask)
            .map_err(|e| {
                Fail::new(e.to_string())
                    .with("path", self.path)
                    .with("details", e.details())
            })?;
        if st.mode == wanted {
            return Ok(changed);
        }
        if let Some(d) = diff {
            d.record("mode", mode_text(st.mode), mode_text(wanted));
        }
        if self.check_mode {
            return Ok(true);
        }
        host::chmod(self.path, wanted).map_err(|e| {
            Fail::new("chmod failed")
                .with("path", self.path)
                .with("details", e.message)
        })?;
        Ok(changed || self.lstat()?.mode != st.mode)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn file_with_mode(mode: u32) -> (tempfile::TempDir, String) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, b"x").unwrap();
        let p = p.to_string_lossy().into_owned();
        host::chmod(&p, mode).unwrap();
        (dir, p)
    }

    fn mode_of(p: &str) -> u32 {
        host::stat(p, false).unwrap().unwrap().mode
    }

    #[test]
    fn sets_mode_only_when_different() {
        let (_d, p) = file_with_mode(0o644);
        let args = FileArgs {
            mode: Some(json!("0600")),
            ..FileArgs::default()
        };
        let mut diff = Diff::default();
        assert_eq!(
            set_fs_attributes_if_different(&args, &p, false, Some(&mut diff), false),
            Ok(true)
        );
        assert_eq!(mode_of(&p), 0o600);
        assert_eq!(
            serde_json::to_value(&diff).unwrap(),
            json!({"before": {"mode": "0644"}, "after": {"mode": "0600"}})
        );
        assert_eq!(
            set_fs_attributes_if_different(&args, &p, false, None, false),
            Ok(false)
        );
        let sym = FileArgs {
            mode: Some(json!("u+x,g-r")),
            ..FileArgs::default()
        };
        assert_eq!(
            set_fs_attributes_if_different(&sym, &p, false, None, false),
            Ok(true)
        );
        assert_eq!(mode_of(&p), 0o700);
    }

    #[test]
    fn check_mode_computes_but_does_not_apply() {
        let (d, p) = file_with_mode(0o644);
        let args = FileArgs {
            mode: Some(json!(0o755)),
            ..FileArgs::default()
        };
        let mut diff = Diff::default();
        assert_eq!(
            set_fs_attributes_if_different(&args, &p, false, Some(&mut diff), true),
            Ok(true)
        );
        assert_eq!(mode_of(&p), 0o644);
        assert_eq!(diff.after, json!({"mode": "0755"}));
        let missing = d.path().join("missing").to_string_lossy().into_owned();
        assert_eq!(
            set_fs_attributes_if_different(&args, &missing, false, None, true),
            Ok(true)
        );
        let err = set_fs_attributes_if_different(&args, &missing, false, None, false).unwrap_err();
        assert!(err.msg().contains("does not exist"), "{err}");
    }

    #[test]
    fn owner_and_group_by_name_or_id() {
        let (_d, p) = file_with_mode(0o644);
        let st = host::stat(&p, false).unwrap().unwrap();
        let same = FileArgs {
            owner: Some(st.uid.to_string()),
            group: host::group_name(st.gid),
            ..FileArgs::default()
        };
        assert_eq!(
            set_fs_attributes_if_different(&same, &p, false, None, false),
            Ok(false)
        );
        let unknown = FileArgs {
            owner: Some("no-such-user-here".into()),
            ..FileArgs::default()
        };
        let err = set_fs_attributes_if_different(&unknown, &p, false, None, false).unwrap_err();
        assert_eq!(
            err.msg(),
            "chown failed: failed to look up user no-such-user-here"
        );
        let unknown = FileArgs {
            group: Some("no-such-group-here".into()),
            ..FileArgs::default()
        };
        let err = set_fs_attributes_if_different(&unknown, &p, false, None, false).unwrap_err();
        assert_eq!(
            err.msg(),
            "chgrp failed: failed to look up group no-such-group-here"
        );
        let other = FileArgs {
            owner: Some((st.uid + 1).to_string()),
            ..FileArgs::default()
        };
        let mut diff = Diff::default();
        assert_eq!(
            set_fs_attributes_if_different(&other, &p, false, Some(&mut diff), true),
            Ok(true)
        );
        assert_eq!(diff.before, json!({"owner": st.uid}));
        assert_eq!(diff.after, json!({"owner": st.uid + 1}));
    }

    #[test]
    fn bad_modes_fail_with_details() {
        let (_d, p) = file_with_mode(0o644);
        let err = set_fs_attributes_if_different(
            &FileArgs {
                mode: Some(json!("u+z")),
                ..FileArgs::default()
            },
            &p,
            false,
            None,
            false,
        )
        .unwrap_err();
        assert_eq!(err.msg(), "mode must be in octal or symbolic form");
        assert_eq!(
            err.fields()["details"],
            json!("bad symbolic permission for mode: u+z")
        );
        let err = set_fs_attributes_if_different(
            &FileArgs {
                mode: Some(json!("17777")),
                ..FileArgs::default()
            },
            &p,
            false,
            None,
            false,
        )
        .unwrap_err();
        assert_eq!(
            err.msg(),
            "Invalid mode supplied, only permission info is allowed"
        );
    }

    #[test]
    fn symlinks_keep_their_mode_and_their_target() {
        let (d, p) = file_with_mode(0o644);
        let link = d.path().join("l").to_string_lossy().into_owned();
        host::symlink(&p, &link).unwrap();
        let args = FileArgs {
            mode: Some(json!("0600")),
            ..FileArgs::default()
        };
        assert_eq!(
            set_fs_attributes_if_different(&args, &link, false, None, false),
            Ok(false)
        );
        assert_eq!(mode_of(&p), 0o644);
    }
}
