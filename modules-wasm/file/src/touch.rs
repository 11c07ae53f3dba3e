//! `state: touch`: creates an empty file when nothing is there, then sets attributes
//! and times (by default both times to now, so a touch always reports a change).

use crate::state::{State, get_state, initial_diff};
use crate::task::{Outcome, Task};
use sandball_guest_sdk::prelude::*;
use sandball_guest_sdk::{on_node, python_os_error_on};
use std::fs::{self, OpenOptions};

/// Creates or touches `task.path`.
pub fn execute_touch(task: &Task) -> Result<Outcome, Fail> {
    let path = &task.path;
    let prev = get_state(path)?;
    let mut changed = false;
    if prev == State::Absent {
        if task.m.check_mode() {
            return Ok(Outcome::new("dest", path, true));
        }
        OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| {
                let e = on_node(e, path);
                Fail::new(format!(
                    "Error, could not touch target: {}",
                    python_os_error_on(&e, &[path], true)
                ))
                .with("path", path.as_str())
            })?;
        changed = true;
    }
    let mut diff = initial_diff(path, "touch", prev);
    let target = task.attributes_path(path);
    let attributes = task
        .set_attributes(&target, changed, Some(&mut diff))
        .and_then(|c| {
            Ok(c | task
                .times
                .apply(&target, task.m.check_mode(), Some(&mut diff))?)
        });
    match attributes {
        Ok(changed) => Ok(Outcome::new("dest", path, changed).with_diff(diff)),
        Err(fail) => {
            if prev == State::Absent {
                // The file is ours, just created: do not leave it half-configured.
                let _ = fs::remove_file(path);
            }
            Err(fail)
        }
    }
}
