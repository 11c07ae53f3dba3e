//! The `file` module: makes a path a file, directory, symlink or hard link, touches
//! or removes it, and sets its mode, owner, group and times, as Ansible's `file`
//! module does — idempotent, with check mode and diffs. Symlinks, modes, owners and
//! times go through the `posix` host calls; everything else through WASI.

mod absent;
mod directory;
mod existing;
mod hard;
mod link;
mod replace;
mod state;
mod strptime;
mod task;
mod times;
mod touch;

#[cfg(all(test, unix))]
mod module_tests;

use sandball_guest_sdk::prelude::*;
use state::{State, get_state};
use std::fs::File;
use std::io::Read;
use task::Task;
use times::Times;

sandball_guest_sdk::manifest!("../manifest.json");

fn main() {
    sandball_guest_sdk::run_with_paths(MANIFEST, file);
}

/// The module body: settle the path and state, then hand over to the state's handler.
/// Failures that name an existing path report its attributes too, as in Ansible.
fn file(m: &mut Module) -> Result<Map<String, Value>, Fail> {
    manage(m).map_err(task::with_path_info)
}

/// Settles the path and the state, then runs the state's handler.
fn manage(m: &mut Module) -> Result<Map<String, Value>, Fail> {
    let path = placed_path(m);
    let state = wanted_state(m, &path)?;
    if m.check_mode() && state != "absent" {
        warn_unknown_ids(m);
    }
    if m.get("_diff_peek").is_some() {
        let mut result = Map::new();
        result.insert("path".into(), json!(path));
        result.insert("changed".into(), json!(false));
        result.insert("appears_binary".into(), json!(appears_binary(&path)));
        return Ok(result);
    }
    let task = Task {
        m,
        src: m.get_str("src").map(str::to_string),
        follow: m.get_bool("follow"),
        force: m.get_bool("force"),
        recurse: m.get_bool("recurse"),
        times: if state == "absent" {
            Times::preserve()
        } else {
            Times::from_module(m, state == "touch")?
        },
        args: m.file_args(),
        path,
    };
    let result = match state.as_str() {
        "absent" => absent::ensure_absent(&task),
        "directory" => directory::ensure_directory(&task),
        "link" => link::ensure_symlink(&task),
        "hard" => hard::ensure_hardlink(&task),
        "touch" => touch::execute_touch(&task),
        _ => existing::ensure_file_attributes(&task),
    };
    Ok(result?.into_result(m))
}

/// `path`, or — when it is a directory and the state places something in it —
/// the entry named by `_original_basename` or `src`'s last component inside it.
fn placed_path(m: &Module) -> String {
    let path = m.get_str("path").unwrap_or_default().to_string();
    let in_dir_states = !matches!(m.get_str("state"), Some("link" | "absent"));
    if !in_dir_states || !state::is_dir(&path) {
        return path;
    }
    // Python's basename: what follows the last `/` (nothing for `dir/`).
    let basename = m
        .get_str("_original_basename")
        .or_else(|| m.get_str("src").and_then(|s| s.rsplit('/').next()))
        .filter(|b| !b.is_empty());
    match basename {
        Some(name) => format!("{}/{name}", path.trim_end_matches('/')),
        None => path,
    }
}

/// The state asked for, defaulting to what the path is now (or `directory` with
/// `recurse`, or `file`), and the combinations Ansible refuses.
fn wanted_state(m: &Module, path: &str) -> Result<String, Fail> {
    let state = match m.get_str("state") {
        Some(s) => s.to_string(),
        None => match get_state(path)? {
            State::Absent if m.get_bool("recurse") => "directory".to_string(),
            State::Absent => "file".to_string(),
            current => current.as_str().to_string(),
        },
    };
    if m.get_bool("recurse") && state != "directory" {
        return Err(Fail::new("recurse option requires state to be 'directory'").with("path", path));
    }
    if m.get_str("src").is_some_and(|s| !s.is_empty()) && !matches!(state.as_str(), "link" | "hard")
    {
        return Err(
            Fail::new("src option requires state to be 'link' or 'hard'").with("path", path),
        );
    }
    Ok(state)
}

/// In check mode an unknown owner or group cannot be checked; Ansible warns.
fn warn_unknown_ids(m: &mut Module) {
    let args = m.file_args();
    let ids = [
        (
            args.owner.as_deref(),
            "user",
            "uid",
            host::user_name as fn(u32) -> Option<String>,
            host::user_id as fn(&str) -> Option<u32>,
        ),
        (
            args.group.as_deref(),
            "group",
            "gid",
            host::group_name,
            host::group_id,
        ),
    ];
    for (given, kind, id_word, name_of, id_of) in ids {
        let Some(given) = given else { continue };
        let (known, what) = match given.parse::<u32>() {
            Ok(id) => (name_of(id).is_some(), format!("{kind} with {id_word}")),
            Err(_) => (id_of(given).is_some(), kind.to_string()),
        };
        if !known {
            m.warn(format!(
                "failed to look up {what} {given}. Create {kind} up to this point in real play"
            ));
        }
    }
}

/// Whether the first 8 KiB of the file hold a NUL byte (unreadable files count as text).
fn appears_binary(path: &str) -> bool {
    let mut head = Vec::with_capacity(8192);
    match File::open(path) {
        Ok(f) => f.take(8192).read_to_end(&mut head).is_ok() && head.contains(&0),
        Err(_) => false,
    }
}
