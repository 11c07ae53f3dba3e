//! `state: link`: makes `path` a symbolic link to `src` (any text: absolute, or
//! relative to the link's directory). `force` replaces a file or an empty directory
//! and allows a target that does not exist yet. Links are made by the `posix.symlink`
//! host call, since WASI cannot create links with absolute targets.

use crate::replace::replace_with;
use crate::state::{State, exists, get_state, initial_diff, is_dir, is_link, link_target};
use crate::task::{Outcome, Task};
use sandball_guest_sdk::prelude::*;
use sandball_guest_sdk::python_os_error_on;
use std::fs;
use std::path::Path;

/// Creates or corrects the symlink `task.path`.
pub fn ensure_symlink(task: &Task) -> Result<Outcome, Fail> {
    let path = task.path.as_str();
    let prev = get_state(path)?;
    let mut src = task.src.clone();
    // Without src, an existing link keeps its target (and attributes still apply).
    if src.is_none() && task.follow && is_link(path) && exists(path) {
        src = Some(link_target(path)?);
    }

    let base = if !is_link(path) && is_dir(path) {
        path.to_string()
    } else {
        parent(path)
    };
    if let Some(src) = &src {
        let absolute = join(&base, src);
        if !task.force && !exists(&absolute) {
            return Err(Fail::new(format!(
                "src file does not exist, use 'force=yes' if you really want to create the link: {absolute}"
            ))
            .with("path", path)
            .with("src", src.as_str()));
        }
    }
    match prev {
        State::Directory if !task.force => return Err(refuse(prev, path)),
        State::Directory if fs::read_dir(path).is_ok_and(|mut d| d.next().is_some()) => {
            return Err(Fail::new(format!(
                "the directory {path} is not empty, refusing to convert it"
            ))
            .with("path", path));
        }
        State::File | State::Hard if !task.force => return Err(refuse(prev, path)),
        _ => {}
    }

    let mut diff = initial_diff(path, "link", prev);
    let changed = match (prev, &src) {
        (State::Link, None) => false,
        (State::Link, Some(src)) => {
            let old = link_target(path)?;
            let changed = &old != src;
            if changed {
                diff.record("src", old, src.as_str());
            }
            changed
        }
        (_, None) => return Err(Fail::new("src is required for creating new symlinks")),
        (_, Some(_)) => true,
    };

    if changed && !task.m.check_mode() {
        let target = src.as_deref().unwrap_or_default();
        if prev == State::Absent {
            host::symlink(target, path).map_err(|e| {
                let cause = if e.denied {
                    e.message
                } else {
                    python_os_error_on(&e.into(), &[target, path], true)
                };
                Fail::new(format!("Error while linking: {cause}")).with("path", path)
            })?;
        } else {
            replace_with(path, prev, |tmp| {
                host::symlink(target, tmp).map_err(std::io::Error::from)
            })?;
        }
    }

    let outcome = Outcome::new("dest", path, changed).with("src", src.as_deref());
    if task.m.check_mode() && !exists(path) {
        return Ok(outcome.with_diff(diff));
    }
    let attributes_path = task.attributes_path(path);
    if task.follow && is_link(path) && !exists(&attributes_path) {
        return Ok(outcome.with_diff(diff).warn(
            "Cannot set fs attributes on a non-existent symlink target. follow should be set to False to avoid this.",
        ));
    }
    let mut changed = task.set_attributes(&attributes_path, changed, Some(&mut diff))?;
    changed |= task
        .times
        .apply(&attributes_path, task.m.check_mode(), Some(&mut diff))?;
    Ok(outcome.changed(changed).with_diff(diff))
}

fn refuse(prev: State, path: &str) -> Fail {
    Fail::new(format!(
        "refusing to convert from {prev} to symlink for {path}"
    ))
    .with("path", path)
}

/// The directory holding `path` (empty for a bare relative name).
fn parent(path: &str) -> String {
    Path::new(path)
        .parent()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// `src` as seen from `base`, like Python's `os.path.join`.
fn join(base: &str, src: &str) -> String {
    if src.starts_with('/') || base.is_empty() {
        src.to_string()
    } else {
        format!("{}/{src}", base.trim_end_matches('/'))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joins_link_targets_like_os_path_join() {
        assert_eq!(join("/srv/app", "../shared"), "/srv/app/../shared");
        assert_eq!(join("/srv/app/", "x"), "/srv/app/x");
        assert_eq!(join("/srv", "/abs"), "/abs");
        assert_eq!(join("", "rel"), "rel");
        assert_eq!(parent("/srv/app/current"), "/srv/app");
        assert_eq!(parent("current"), "");
    }
}
