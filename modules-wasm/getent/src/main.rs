//! The `getent` module: runs the node's `getent` on one database (and key, and name
//! service) and returns the entries as the fact `getent_<database>`, shaped as
//! Ansible's getent shapes them: each entry's first field maps to its other fields
//! (a list of such lists when the first field repeats). It may run `/usr/bin/getent`
//! with the task's database, key and service only.

#[cfg(test)]
mod module_tests;

use sandball_guest_sdk::prelude::*;
use sandball_guest_sdk::program::run_command;
use sandball_pycompat::pyops::splitlines;

sandball_guest_sdk::manifest!("../manifest.json");

/// Where the node's getent is.
const GETENT: &str = "/usr/bin/getent";

/// The databases whose fields `:` separates when the task gives no `split`.
const COLON_DATABASES: [&str; 4] = ["passwd", "shadow", "group", "gshadow"];

fn main() {
    sandball_guest_sdk::run(MANIFEST, getent);
}

/// Python's `str.split()` without a separator: runs of whitespace separate, none at
/// either end.
fn split_whitespace(line: &str) -> Vec<String> {
    line.split(|c: char| c.is_whitespace() || ('\x1c'..='\x1f').contains(&c))
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// The entries of getent's output, by first field.
fn entries(out: &str, split: Option<&str>) -> Map<String, Value> {
    let mut tree = Map::new();
    // The first fields seen more than once: their values are lists of entries.
    let mut repeated = std::collections::HashSet::new();
    for line in splitlines(out) {
        let record: Vec<String> = match split {
            Some(sep) => line.split(sep).map(str::to_string).collect(),
            None => split_whitespace(line),
        };
        // An empty line has no fields at all when split on whitespace (Python then
        // fails on `record[0]`); it is skipped.
        let Some((first, rest)) = record.split_first() else {
            continue;
        };
        let rest = json!(rest);
        match tree.get_mut(first) {
            None => {
                tree.insert(first.clone(), rest);
            }
            Some(Value::Array(list)) if repeated.contains(first) => list.push(rest),
            Some(existing) => {
                repeated.insert(first.clone());
                *existing = json!([existing.take(), rest]);
            }
        }
    }
    tree
}

/// The module body.
fn getent(m: &mut Module) -> Result<Map<String, Value>, Fail> {
    let database = m.get_str("database").unwrap_or_default().to_string();
    let key = m.get_str("key").map(str::to_string);
    let split = match m.get_str("split") {
        Some("") => return Err(Fail::new("split: the separator is empty")),
        Some(sep) => Some(sep.to_string()),
        None => COLON_DATABASES
            .contains(&database.as_str())
            .then(|| ":".to_string()),
    };
    let mut argv = vec![GETENT.to_string(), database.clone()];
    argv.extend(key.clone());
    if let Some(service) = m.get_str("service") {
        argv.extend(["-s".to_string(), service.to_string()]);
    }
    let out = run_command(&argv, None, &[])?;
    let tree_name = format!("getent_{database}");
    let msg = match out.rc {
        0 => {
            let tree = entries(&out.stdout, split.as_deref());
            return Ok(json_map!({"ansible_facts": {tree_name: tree}}));
        }
        1 => "Missing arguments, or database unknown.",
        2 => {
            let msg = "One or more supplied key could not be found in the database.";
            if !m.get_bool("fail_key") {
                let mut tree = Map::new();
                tree.insert(key.unwrap_or_else(|| "null".into()), Value::Null);
                return Ok(json_map!({"ansible_facts": {tree_name: tree}, "msg": msg}));
            }
            msg
        }
        3 => "Enumeration not supported on this database.",
        _ => "Unexpected failure!",
    };
    Err(Fail::new(msg))
}
