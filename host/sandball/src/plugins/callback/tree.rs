//! The `tree` callback (`sandball run --tree DIR`, or `callbacks_enabled = tree` with
//! `ANSIBLE_CALLBACK_TREE_DIR`): each host's result saved as one line of JSON in
//! `DIR/HOST`, as ansible's `--tree` saves it.

use super::text::dump;
use super::{Callback, Report};
use std::path::PathBuf;

/// Writes each host's last result.
pub struct TreeCallback {
    dir: PathBuf,
}

impl TreeCallback {
    /// Into `dir`.
    pub fn new(dir: PathBuf) -> TreeCallback {
        TreeCallback { dir }
    }
}

impl Callback for TreeCallback {
    fn result(&self, r: &Report<'_>) {
        if !r.is_final() {
            return;
        }
        // A host name is a file name here: one with a path separator is not written
        // outside the directory.
        if r.host.contains('/') || r.host == ".." || r.host == "." {
            eprintln!(
                "[WARNING]: tree: not saving the result of {:?}: not a file name",
                r.host
            );
            return;
        }
        let shown: serde_json::Map<_, _> = r
            .result
            .iter()
            .filter(|(k, _)| !k.starts_with("_ansible_") && k.as_str() != "invocation")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let path = self.dir.join(r.host);
        if let Err(e) = crate::local_files::write_atomically(&path, dump(&shown, false).as_bytes())
        {
            eprintln!("[WARNING]: Unable to write to {}'s file: {e}", r.host);
        }
    }
}
