//! The play keyword `vars_files`: YAML or JSON files of variables, a layer just above the
//! play's `vars`. Each entry is a file name, or a list of candidates of which the first
//! that exists is read; names are templated per host (with its inventory variables,
//! the play's vars, extra vars and, once gathered, its facts) and found relative to the
//! playbook's directory. A name that cannot be templated yet (it needs facts) is tried
//! again at the next task, as a host's facts arrive.

use crate::template::{Templar, Vars};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Per host, per entry of `vars_files`: the variables read, once the entry's name
/// could be templated.
type Resolved = HashMap<String, Vec<Option<Map<String, Value>>>>;

/// A play's `vars_files`, resolved per host as the play runs.
#[derive(Debug)]
pub struct VarsFiles {
    entries: Vec<Value>,
    base: PathBuf,
    resolved: Mutex<Resolved>,
}

impl VarsFiles {
    /// The `vars_files` of a play whose playbook is in `base`.
    pub fn new(entries: Vec<Value>, base: &Path) -> VarsFiles {
        VarsFiles {
            entries,
            base: base.to_path_buf(),
            resolved: Mutex::new(HashMap::new()),
        }
    }

    /// Whether every entry is resolved for `host` (nothing left to template).
    pub fn complete(&self, host: &str) -> bool {
        self.lock()
            .get(host)
            .is_some_and(|entries| entries.iter().all(Option::is_some))
    }

    /// The variables the files give `host`, in order (later files win), templating the
    /// names not resolved yet with `vars`; beside them, what went wrong with entries
    /// resolved just now (a file that does not exist or cannot be read: the entry then
    /// gives nothing, and is not tried again).
    pub fn layer(
        &self,
        templar: &Templar,
        host: &str,
        vars: &Vars,
    ) -> (Map<String, Value>, Vec<String>) {
        let mut resolved = self.lock();
        let entries = resolved
            .entry(host.to_string())
            .or_insert_with(|| vec![None; self.entries.len()]);
        let mut errors = Vec::new();
        for (entry, slot) in self.entries.iter().zip(entries.iter_mut()) {
            if slot.is_none() {
                *slot = match self.read(templar, entry, vars) {
                    Ok(found) => found,
                    Err(e) => {
                        errors.push(e);
                        Some(Map::new())
                    }
                };
            }
        }
        let mut layer = Map::new();
        for vars in entries.iter().flatten() {
            layer.extend(vars.clone());
        }
        (layer, errors)
    }

    /// One entry: `Ok(None)` while its names cannot be templated.
    fn read(
        &self,
        templar: &Templar,
        entry: &Value,
        vars: &Vars,
    ) -> Result<Option<Map<String, Value>>, String> {
        let candidates: Vec<&Value> = match entry {
            Value::Array(items) => items.iter().collect(),
            one => vec![one],
        };
        let mut tried = Vec::new();
        for candidate in candidates {
            let Ok(name) = templar.template(candidate, vars) else {
                return Ok(None);
            };
            let name = match name {
                Value::String(s) => s,
                other => other.to_string(),
            };
            let path = self.base.join(&name);
            if path.is_file() {
                return load(&path).map(Some);
            }
            tried.push(name);
        }
        Err(format!(
            "vars file {} was not found (looked in {})",
            tried.join(", "),
            std::path::absolute(self.base.join("."))
                .unwrap_or_else(|_| self.base.clone())
                .display()
        ))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Resolved> {
        self.resolved.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A vars file: a mapping (an empty file gives nothing).
pub(crate) fn load(path: &Path) -> Result<Map<String, Value>, String> {
    let text = crate::yaml::read_file(path)
        .map_err(|e| format!("cannot read vars file {}: {e}", path.display()))?;
    match super::load_vars_data(&text, path).map_err(|e| e.to_string())? {
        Value::Object(m) => Ok(m),
        Value::Null => Ok(Map::new()),
        other => Err(format!(
            "vars file {} must hold a mapping of variables, got {}",
            path.display(),
            sandball_pycompat::pyfmt::short_type_name(&other)
        )),
    }
}
