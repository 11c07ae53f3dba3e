//! The `tempfile` module: a new file (mode 0600) or directory (0700), less the
//! umask, named `prefix`, eight random characters of `[a-z0-9_]` and `suffix` as
//! Python's `mkstemp`/`mkdtemp` name them, created exclusively (another name is
//! drawn when one exists) in `path` or, without it, in the node's temporary
//! directory. Its grant is that directory: `$path`, or the node place `@tmpdir`,
//! which the shim resolves on the node and tells the module as `TMPDIR`.

use sandball_guest_sdk::files::{abspath, join, path_info, random_u64};
use sandball_guest_sdk::prelude::*;
use sandball_guest_sdk::python_os_error;

sandball_guest_sdk::manifest!("../manifest.json");

/// The characters of a random name, as Python's tempfile draws them.
const NAME_CHARS: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789_";

/// Names tried before giving up (Python's `TMP_MAX`).
const ATTEMPTS: usize = 10000;

/// Eight random characters of [`NAME_CHARS`].
fn random_name() -> String {
    let mut bits = random_u64();
    (0..8)
        .map(|_| {
            let c = NAME_CHARS[(bits % NAME_CHARS.len() as u64) as usize];
            bits /= NAME_CHARS.len() as u64;
            char::from(c)
        })
        .collect()
}

/// The directory to create in: `path`, else the node's temporary directory (the
/// shim gives it as `TMPDIR`; natively, `TMPDIR` or `/tmp`).
fn directory(m: &Module) -> String {
    match m.get_str("path") {
        Some(path) => path.to_string(),
        None => std::env::var("TMPDIR")
            .ok()
            .filter(|d| !d.is_empty())
            .unwrap_or_else(|| "/tmp".to_string()),
    }
}

/// Refuses a prefix or suffix that is not a single name component.
fn check_component(m: &Module, what: &str) -> Result<String, Fail> {
    let text = m.get_str(what).unwrap_or_default().to_string();
    if text.contains('/') {
        let quoted = sandball_pycompat::pyfmt::py_repr(&Value::from(text.as_str()));
        return Err(Fail::new(format!(
            "{what} must be a valid file name component, got {quoted}"
        )));
    }
    Ok(text)
}

/// Creates the entry at `path` if nothing is there.
fn create(path: &str, directory: bool) -> std::io::Result<()> {
    if directory {
        std::fs::create_dir(path)
    } else {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .map(drop)
    }
}

/// The module body.
fn tempfile(m: &mut Module) -> Result<Map<String, Value>, Fail> {
    let prefix = check_component(m, "prefix")?;
    let suffix = check_component(m, "suffix")?;
    let is_dir = m.get_str("state") == Some("directory");
    let dir = directory(m);
    for _ in 0..ATTEMPTS {
        let file = join(&dir, &format!("{prefix}{}{suffix}", random_name()));
        let path = abspath(&file);
        match create(&path, is_dir) {
            Ok(()) => {
                // mkstemp and mkdtemp create with these modes, less the umask.
                let mode = if is_dir { 0o700 } else { 0o600 };
                host::chmod(&path, mode & !host::umask())?;
                let mut result = json_map!({"changed": true});
                result.extend(path_info(&path));
                return Ok(result);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(Fail::new(python_os_error(&e, &file))),
        }
    }
    Err(Fail::new("[Errno 17] No usable temporary file name found"))
}

fn main() {
    sandball_guest_sdk::run_with_paths(MANIFEST, tempfile)
}

#[cfg(test)]
mod module_tests;
