//! YAML as Ansible reads it: a marked node tree built from saphyr-parser events, typed by
//! the YAML 1.1 rules of Ansible's loader (`reindent.rs`: the lines libyaml reads but
//! saphyr refuses, padded); the text of a file and where things are in it
//! (`source.rs`, `location.rs`); why a file could not be loaded (`error.rs`); data
//! documents as JSON ([`load_data`], [`load_all_data`]); data files read through
//! Vault ([`read_file`]).

pub mod error;
mod loader;
pub mod location;
mod node;
mod reindent;
mod resolver;
pub(crate) mod source;

use std::path::Path;

pub use error::PlaybookError;
pub use location::Location;
use source::SourceFile;

pub(crate) use loader::{Document, load, load_all};
pub(crate) use node::{Node, Yaml};
pub use node::{UNSAFE_KEY, VAULT_KEY};

/// Every document of a YAML text, typed as [`load_data`] types one (an empty one is
/// `null`; a text without any has none), for the `from_yaml_all` filter.
pub fn load_all_data(text: &str, path: &Path) -> Result<Vec<serde_json::Value>, PlaybookError> {
    let source = SourceFile::new(path, text);
    let Document { root, earlier, .. } = load_all(&source)?;
    let json = |node: Option<Node>| node.map_or(serde_json::Value::Null, |n| n.to_json());
    let mut documents: Vec<serde_json::Value> = earlier.into_iter().map(json).collect();
    if root.is_some() || !documents.is_empty() {
        documents.push(json(root));
    }
    Ok(documents)
}

/// Loads a YAML (or JSON) data document typed as Ansible's loader types it, for vars
/// files and `-e @file`. An empty document is `null`.
pub fn load_data(text: &str, path: &Path) -> Result<serde_json::Value, PlaybookError> {
    let source = SourceFile::new(path, text);
    let Document { root, .. } = load(&source)?;
    Ok(root.map(|r| r.to_json()).unwrap_or(serde_json::Value::Null))
}

/// A file's text, decrypted with the run's passwords when it is vault-encrypted.
pub fn read_file(path: &Path) -> std::io::Result<String> {
    let text = std::fs::read_to_string(path)?;
    let Some(plain) = crate::vault::decrypted(text.as_bytes(), path)? else {
        return Ok(text);
    };
    let plain = String::from_utf8(plain).map_err(|_| {
        std::io::Error::other(format!(
            "{} holds encrypted data that is not text",
            path.display()
        ))
    })?;
    remember_data(&plain, path);
    Ok(plain)
}

/// Remembers what a decrypted vars file holds: each of its values (text and numbers
/// as text), or its lines when it is not YAML data.
fn remember_data(text: &str, path: &Path) {
    fn leaves(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::String(s) => out.push(s.clone()),
            serde_json::Value::Number(n) => out.push(n.to_string()),
            serde_json::Value::Array(items) => items.iter().for_each(|i| leaves(i, out)),
            serde_json::Value::Object(m) => m.values().for_each(|i| leaves(i, out)),
            _ => {}
        }
    }
    let mut found = Vec::new();
    match load_data(text, path) {
        Ok(data) if data.is_object() || data.is_array() => leaves(&data, &mut found),
        _ => found.extend(text.lines().map(str::to_string)),
    }
    crate::vault::remember(found.iter().map(String::as_str));
}
