//! `state: directory`: creates the directory and any missing parents (like
//! `mkdir -p`; each directory created gets the task's mode, owner and group, as in
//! Ansible), or brings an existing one's attributes in line — with `recurse`, those
//! of everything below it too.

use crate::state::{State, exists, get_state, initial_diff, is_dir, is_link};
use crate::task::{Outcome, Task};
use sandball_guest_sdk::files::{existing_kind, realpath};
use sandball_guest_sdk::prelude::*;
use sandball_guest_sdk::{describe_io_error, on_node, python_os_error_on};
use std::fs;
use std::io;
use std::path::Path;

/// Creates or updates the directory `task.path`.
pub fn ensure_directory(task: &Task) -> Result<Outcome, Fail> {
    let mut path = task.path.clone();
    let mut prev = get_state(&path)?;
    if task.follow && prev == State::Link {
        path = realpath(&path);
        prev = get_state(&path)?;
    }
    let mut diff = initial_diff(&path, "directory", prev);
    match prev {
        State::Absent => {
            if task.m.check_mode() {
                return Ok(Outcome::new("path", &path, true).with_diff(diff));
            }
            let changed = create_all(task, &path, &mut diff)?;
            Ok(Outcome::new("path", &path, changed).with_diff(diff))
        }
        State::Directory => {
            let check = task.m.check_mode();
            let mut changed = task.set_attributes(&path, false, Some(&mut diff))?;
            changed |= task.times.apply(&path, check, Some(&mut diff))?;
            if task.recurse {
                changed |= recursive_set_attributes(task, &path)?;
            }
            Ok(Outcome::new("path", &path, changed).with_diff(diff))
        }
        other => {
            Err(Fail::new(format!("{path} already exists as a {other}"))
                .with("path", path.as_str()))
        }
    }
}

/// Creates every missing directory of `path` from the top, applying attributes to
/// each one created, then the times to the last. The missing ones are found from the
/// bottom up, so ancestors the module cannot see (outside its grant) are never touched.
fn create_all(task: &Task, path: &str, diff: &mut Diff) -> Result<bool, Fail> {
    let mut missing = Vec::new();
    let mut current = Path::new(path);
    // Only what the node says is absent, or cannot be there (below a file: as
    // `os.path.exists` is false there, so its making fails as on the node); what the
    // host may not show (outside the grant) is left alone.
    while matches!(existing_kind(&current.to_string_lossy()), Ok(None)) {
        missing.push(current.to_string_lossy().into_owned());
        match current.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => current = parent,
            _ => break,
        }
    }
    let mut changed = false;
    for dir in missing.iter().rev() {
        let issue = |e: String| {
            Fail::new(format!(
                "There was an issue creating {dir} as requested: {e}"
            ))
            .with("path", path)
        };
        match fs::create_dir(dir) {
            Ok(()) => changed = true,
            // Someone else made it meanwhile: fine as long as it is a directory.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && is_dir(dir) => {}
            Err(e) => {
                let e = on_node(e, dir);
                return Err(issue(python_os_error_on(&e, &[dir.as_str()], true)));
            }
        }
        changed = task
            .set_attributes(dir, changed, Some(&mut *diff))
            .map_err(|f| issue(f.msg().to_string()))?;
    }
    changed |= task.times.apply(path, false, Some(diff))?;
    Ok(changed)
}

/// Applies attributes and times to everything below `root`. Symlinks get them
/// themselves; with `follow`, so do their targets (and a directory target's tree).
fn recursive_set_attributes(task: &Task, root: &str) -> Result<bool, Fail> {
    let check = task.m.check_mode();
    let mut changed = false;
    let mut pending = vec![root.to_string()];
    let mut links_followed = 0usize;
    while let Some(dir) = pending.pop() {
        let entries = fs::read_dir(&dir).map_err(|e| {
            Fail::new(format!(
                "Could not recursively set attributes on {dir}: {}",
                describe_io_error(&e)
            ))
        })?;
        let mut names: Vec<String> = entries
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        for name in names {
            let entry = format!("{}/{name}", dir.trim_end_matches('/'));
            changed |= task.set_attributes(&entry, changed, None)?;
            // Times are set through links; a dangling one has none to set.
            if exists(&entry) {
                changed |= task.times.apply(&entry, check, None)?;
            }
            if !is_link(&entry) {
                if fs::symlink_metadata(&entry).is_ok_and(|m| m.is_dir()) {
                    pending.push(entry);
                }
                continue;
            }
            if !task.follow {
                continue;
            }
            let Ok(target) = files::read_link(std::path::Path::new(&entry)) else {
                continue;
            };
            let target = resolve_from(&dir, &target.to_string_lossy());
            let Ok(meta) = fs::metadata(&target) else {
                continue;
            };
            links_followed += 1;
            if links_followed > MAX_FOLLOWED {
                return Err(Fail::new(format!(
                    "Could not recursively set attributes on {root}: too many symlinks followed (a loop?)"
                )));
            }
            if meta.is_dir() {
                pending.push(target.clone());
            }
            changed |= task.set_attributes(&target, changed, None)?;
            changed |= task.times.apply(&target, check, None)?;
        }
    }
    Ok(changed)
}

/// Directory symlinks followed in one recursive walk before it is called a loop
/// (Python's recursion limit plays this part in Ansible).
const MAX_FOLLOWED: usize = 1000;

/// A link target read in `dir`: absolute as is, relative joined to `dir`.
fn resolve_from(dir: &str, target: &str) -> String {
    if target.starts_with('/') {
        target.to_string()
    } else {
        format!("{}/{target}", dir.trim_end_matches('/'))
    }
}
