//! `state: absent`: removes a file, a symlink, or a directory with everything in it.

use crate::state::{State, get_state, initial_diff, is_missing};
use crate::task::{Outcome, Task};
use sandball_guest_sdk::describe_io_error;
use sandball_guest_sdk::prelude::*;
use std::fs;

/// Removes `task.path` if anything is there.
pub fn ensure_absent(task: &Task) -> Result<Outcome, Fail> {
    let path = &task.path;
    let prev = get_state(path)?;
    if prev == State::Absent {
        return Ok(Outcome::new("path", path, false).with("state", "absent"));
    }
    let diff = initial_diff(path, "absent", prev);
    if !task.m.check_mode() {
        if prev == State::Directory {
            // `dir/` is the directory `dir` (WASI refuses the trailing slash).
            let dir = match path.trim_end_matches('/') {
                "" => path.as_str(),
                trimmed => trimmed,
            };
            fs::remove_dir_all(dir)
                .map_err(|e| Fail::new(format!("rmtree failed: {}", describe_io_error(&e))))?;
        } else {
            match fs::remove_file(path) {
                Err(e) if !is_missing(&e) => {
                    return Err(
                        Fail::new(format!("Unlinking failed: {}", describe_io_error(&e)))
                            .with("path", path.as_str()),
                    );
                }
                _ => {}
            }
        }
    }
    Ok(Outcome::new("path", path, true)
        .with_diff(diff)
        .with("state", "absent"))
}
