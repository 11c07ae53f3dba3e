//! `modification_time` and `access_time`: `preserve` (leave as is), `now`, or a time
//! read with `modification_time_format`/`access_time_format`. Unset, they mean
//! `now` for `state=touch` and `preserve` otherwise, as in Ansible.

use crate::strptime::strptime;
use sandball_guest_sdk::host::HostError;
use sandball_guest_sdk::prelude::*;
use sandball_guest_sdk::python_os_error_on;
use std::time::{SystemTime, UNIX_EPOCH};

/// `ENOENT` as host calls number it (Linux's).
const ENOENT: i32 = 2;

/// What to do with one timestamp.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stamp {
    /// Keep the current value.
    Preserve,
    /// Set to the current time.
    Now,
    /// Set to this many seconds since the epoch.
    At(f64),
}

impl Stamp {
    /// Reads one option: `preserve`, `now` or a time in `format`; `None` takes the
    /// state's default.
    pub fn parse(value: Option<&str>, format: &str, touch: bool) -> Result<Stamp, Fail> {
        match value {
            None if touch => Ok(Stamp::Now),
            None | Some("preserve") => Ok(Stamp::Preserve),
            Some("now") => Ok(Stamp::Now),
            Some(text) => strptime(text, format)
                .map(|t| Stamp::At(t as f64))
                .map_err(|e| {
                    Fail::new(format!(
                        "Error while obtaining timestamp for time {text} using format {format}: {e}"
                    ))
                }),
        }
    }

    /// The value to set, given the current one.
    fn resolve(self, current: f64, now: f64) -> f64 {
        match self {
            Stamp::Preserve => current,
            Stamp::Now => now,
            Stamp::At(t) => t,
        }
    }
}

/// The two timestamps a task asks for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Times {
    /// Modification time.
    pub mtime: Stamp,
    /// Access time.
    pub atime: Stamp,
}

impl Times {
    /// Both timestamps left alone.
    pub fn preserve() -> Times {
        Times {
            mtime: Stamp::Preserve,
            atime: Stamp::Preserve,
        }
    }

    /// Reads the four timestamp options of a task whose state is `touch` or not.
    pub fn from_module(m: &Module, touch: bool) -> Result<Times, Fail> {
        let format = |name: &str| m.get_str(name).unwrap_or("%Y%m%d%H%M.%S").to_string();
        Ok(Times {
            mtime: Stamp::parse(
                m.get_str("modification_time"),
                &format("modification_time_format"),
                touch,
            )?,
            atime: Stamp::parse(
                m.get_str("access_time"),
                &format("access_time_format"),
                touch,
            )?,
        })
    }

    /// Sets the timestamps of `path` (following symlinks) when they differ from what
    /// is asked; records old and new values in `diff`. True when anything changed
    /// (or would, in check mode). `now` for both always counts as a change.
    pub fn apply(
        &self,
        path: &str,
        check_mode: bool,
        diff: Option<&mut Diff>,
    ) -> Result<bool, Fail> {
        if self.mtime == Stamp::Preserve && self.atime == Stamp::Preserve {
            return Ok(false);
        }
        // The node's errors as Python words them on the bytes path; a denial as is.
        let fail = |e: HostError| {
            let cause = if e.denied || e.errno == 0 {
                e.message
            } else {
                python_os_error_on(&e.into(), &[path], true)
            };
            Fail::new(format!(
                "Error while updating modification or access time: {cause}"
            ))
            .with("path", path)
        };
        let current = host::stat(path, true).map_err(fail)?.ok_or_else(|| {
            fail(HostError {
                denied: false,
                errno: ENOENT,
                message: String::new(),
            })
        })?;
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0);
        let both_now = self.mtime == Stamp::Now && self.atime == Stamp::Now;
        let mtime = self.mtime.resolve(current.mtime, now);
        let atime = self.atime.resolve(current.atime, now);
        if !both_now && mtime == current.mtime && atime == current.atime {
            return Ok(false);
        }
        if !check_mode {
            // Both "now": let the node's clock pick the time (needs no ownership of the file).
            let (set_atime, set_mtime) = if both_now {
                (None, None)
            } else {
                (Some(atime), Some(mtime))
            };
            host::set_times(path, set_atime, set_mtime, true).map_err(fail)?;
        }
        if let Some(diff) = diff {
            if mtime != current.mtime {
                diff.record("mtime", current.mtime, mtime);
            }
            if atime != current.atime {
                diff.record("atime", current.atime, atime);
            }
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_depend_on_touch() {
        let f = "%Y%m%d%H%M.%S";
        assert_eq!(Stamp::parse(None, f, true).unwrap(), Stamp::Now);
        assert_eq!(Stamp::parse(None, f, false).unwrap(), Stamp::Preserve);
        assert_eq!(
            Stamp::parse(Some("preserve"), f, true).unwrap(),
            Stamp::Preserve
        );
        assert_eq!(Stamp::parse(Some("now"), f, false).unwrap(), Stamp::Now);
        assert_eq!(
            Stamp::parse(Some("197001010001.05"), f, false).unwrap(),
            Stamp::At(65.0)
        );
    }

    #[test]
    fn bad_times_fail_with_ansible_message() {
        let e = Stamp::parse(Some("yesterday"), "%Y", false).unwrap_err();
        assert_eq!(
            e.msg(),
            "Error while obtaining timestamp for time yesterday using format %Y: time data 'yesterday' does not match format '%Y'"
        );
    }

    #[cfg(unix)]
    #[test]
    fn applies_times_once_then_reports_no_change() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, "").unwrap();
        let p = path.to_str().unwrap();
        let times = Times {
            mtime: Stamp::At(1_000_000.0),
            atime: Stamp::Preserve,
        };
        let mut diff = Diff::default();
        assert!(times.apply(p, true, Some(&mut diff)).unwrap());
        assert_eq!(diff.after["mtime"], json!(1_000_000.0));
        assert!(times.apply(p, false, None).unwrap());
        assert!(!times.apply(p, false, None).unwrap());
        let both_now = Times {
            mtime: Stamp::Now,
            atime: Stamp::Now,
        };
        assert!(both_now.apply(p, false, None).unwrap());
    }
}
