//! `state: hard`: makes `path` another name of the file `src` (same inode). `force`
//! replaces a different file already there. The inode numbers tell whether the link
//! is already right.
//!
//! Under WASI a hard link is made within the granted directories, and both must be
//! writable: a `src` granted read-only can only be linked from the same directory.

use crate::replace::replace_with;
use crate::state::{State, exists, get_state, initial_diff, is_link, link_target, same_file};
use crate::task::{Outcome, Task};
use sandball_guest_sdk::prelude::*;
use sandball_guest_sdk::{describe_io_error, on_node, python_os_error_on};
use std::fs;
use std::io;

/// Creates or corrects the hard link `task.path`.
pub fn ensure_hardlink(task: &Task) -> Result<Outcome, Fail> {
    let path = task.path.as_str();
    let prev = get_state(path)?;
    let src = task.src.as_deref();
    let attributes_path = task.attributes_path(path);

    if prev != State::Hard && src.is_none() {
        return Err(Fail::new("src is required for creating new hardlinks"));
    }
    if let Some(src) = src
        && !exists(src)
    {
        return Err(Fail::new("src does not exist")
            .with("dest", path)
            .with("src", src));
    }

    let mut diff = initial_diff(path, "hard", prev);
    let conflict = |msg: &str| {
        Fail::new(msg.to_string())
            .with("dest", path)
            .with("src", src)
    };
    let changed = match (prev, src) {
        (State::Absent, _) => true,
        (State::Link, Some(src)) => {
            // A symlink is never a hard link; only its text could make Ansible keep it.
            let old = link_target(path)?;
            let changed = old != src;
            if changed {
                diff.record("src", old, src);
            }
            changed
        }
        (State::Hard, Some(src)) => {
            let differs = !same_file(path, src);
            if differs && !task.force {
                return Err(conflict(
                    "Cannot link, different hard link exists at destination",
                ));
            }
            differs
        }
        (State::File, _) => {
            if !task.force {
                return Err(conflict("Cannot link, file exists at destination"));
            }
            true
        }
        (State::Directory, Some(src)) => {
            if same_file(path, src) {
                return Ok(Outcome::new("path", path, false));
            }
            if !task.force {
                return Err(conflict(
                    "Cannot link: different hard link exists at destination",
                ));
            }
            true
        }
        (_, None) => false,
    };

    if changed && !task.m.check_mode() {
        let src = src.unwrap_or_default();
        if prev == State::Absent {
            let target = if task.follow && is_link(src) {
                files::read_link(std::path::Path::new(src))
                    .map(|t| t.to_string_lossy().into_owned())
                    .unwrap_or_else(|_| src.to_string())
            } else {
                src.to_string()
            };
            hard_link(&target, path).map_err(|e| {
                // The sandbox's own explanation as it is; the node's errors as
                // Python words them.
                let cause = if e.raw_os_error().is_some() {
                    python_os_error_on(&e, &[target.as_str(), path], true)
                } else {
                    describe_io_error(&e)
                };
                Fail::new(format!("Error while linking: {cause}")).with("path", path)
            })?;
        } else {
            replace_with(path, prev, |tmp| hard_link(src, tmp))?;
        }
    }

    let outcome = Outcome::new("dest", path, changed).with("src", src);
    if task.m.check_mode() && !exists(path) {
        return Ok(outcome.with_diff(diff));
    }
    let mut changed = task.set_attributes(&attributes_path, changed, Some(&mut diff))?;
    changed |= task
        .times
        .apply(&attributes_path, task.m.check_mode(), Some(&mut diff))?;
    Ok(outcome.changed(changed).with_diff(diff))
}

/// Links `src` as `path`, explaining the sandbox's extra condition when refused.
fn hard_link(src: &str, path: &str) -> io::Result<()> {
    fs::hard_link(src, path).map_err(|e| {
        let e = on_node(e, path);
        if e.kind() == io::ErrorKind::PermissionDenied {
            io::Error::new(
                e.kind(),
                format!(
                    "{} (in the sandbox a hard link needs read-write access to the directories of both src and path)",
                    describe_io_error(&e)
                ),
            )
        } else {
            e
        }
    })
}
