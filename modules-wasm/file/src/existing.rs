//! `state: file`: never creates anything; checks that the path is a file (following
//! a symlink when `follow` is set) and brings its attributes and times in line.

use crate::state::{State, get_state, initial_diff};
use crate::task::{Outcome, Task};
use sandball_guest_sdk::files::realpath;
use sandball_guest_sdk::prelude::*;

/// Applies attributes to an existing file; fails when the path is not one.
pub fn ensure_file_attributes(task: &Task) -> Result<Outcome, Fail> {
    let mut path = task.path.clone();
    let mut prev = get_state(&path)?;
    if prev == State::Link && task.follow {
        path = realpath(&path);
        prev = get_state(&path)?;
    }
    if !matches!(prev, State::File | State::Hard) {
        return Err(
            Fail::new(format!("file ({path}) is {prev}, cannot continue"))
                .with("path", path.as_str())
                .with("state", prev.as_str()),
        );
    }
    let mut diff = initial_diff(&path, "file", prev);
    let mut changed = task.set_attributes(&path, false, Some(&mut diff))?;
    changed |= task
        .times
        .apply(&path, task.m.check_mode(), Some(&mut diff))?;
    Ok(Outcome::new("path", &path, changed).with_diff(diff))
}
