//! Action groups: the actions a `group/NAME` entry of `module_defaults` gives its
//! defaults to, resolved as ansible-core resolves them. `NAME` is `ns.coll.group` (a
//! short name is ansible-core's own, `ansible.builtin.group`); the group is listed
//! under `action_groups` in the collection's `meta/runtime.yml` (ansible-core's in its
//! `config/ansible_builtin_runtime.yml`), by its full or its short name; a member
//! written without a collection is the group's collection's; a `metadata` entry's
//! `extend_group` adds the actions of other groups (which need not exist).

use crate::assemble::module_utils::CodeRoots;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

/// A group that cannot be resolved, in ansible-core's words.
#[derive(Debug, thiserror::Error)]
#[error("Error loading module_defaults: could not resolve the module_defaults group {0}")]
pub struct Unresolved(pub String);

/// Each collection's `action_groups`, once read (`None`: no metadata found).
static METADATA: Mutex<BTreeMap<String, Option<Arc<Value>>>> = Mutex::new(BTreeMap::new());

/// Whether `name` is fully qualified (`ns.coll.name`).
fn qualified(name: &str) -> bool {
    name.split('.').count() >= 3
}

/// The group's full name: `ns.coll.group`, a short one in `collection`.
fn in_collection(collection: &str, name: &str) -> String {
    if qualified(name) {
        name.to_string()
    } else {
        format!("{collection}.{name}")
    }
}

/// The actions of group `name` (as `module_defaults` writes it after `group/`), fully
/// qualified, extended groups' included.
pub fn actions(roots: &CodeRoots, name: &str) -> Result<Vec<String>, Unresolved> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    collect(
        roots,
        &in_collection("ansible.builtin", name),
        true,
        &mut seen,
        &mut out,
    )?;
    Ok(out)
}

/// Adds the actions of group `group` (fully qualified) to `out`; a missing group is an
/// error only when `mandatory` (a group named in `module_defaults`, not one extended).
fn collect(
    roots: &CodeRoots,
    group: &str,
    mandatory: bool,
    seen: &mut BTreeSet<String>,
    out: &mut Vec<String>,
) -> Result<(), Unresolved> {
    if !seen.insert(group.to_string()) {
        return Ok(());
    }
    let mut parts = group.splitn(3, '.');
    let (Some(ns), Some(coll), Some(short)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(Unresolved(group.to_string()));
    };
    let collection = format!("{ns}.{coll}");
    let groups = metadata(roots, &collection);
    let entries = groups
        .as_deref()
        .and_then(|g| g.get(group).or_else(|| g.get(short)))
        .and_then(Value::as_array);
    let Some(entries) = entries else {
        return if mandatory {
            Err(Unresolved(group.to_string()))
        } else {
            Ok(())
        };
    };
    let mut extended = Vec::new();
    for entry in entries {
        match entry {
            Value::String(action) => out.push(in_collection(&collection, action)),
            Value::Object(m) => match m.get("metadata").and_then(|m| m.get("extend_group")) {
                Some(Value::String(one)) => extended.push(one.clone()),
                Some(Value::Array(list)) => {
                    extended.extend(list.iter().filter_map(Value::as_str).map(str::to_string))
                }
                _ => {}
            },
            _ => {}
        }
    }
    for other in extended {
        collect(roots, &in_collection(&collection, &other), false, seen, out)?;
    }
    Ok(())
}

/// The `action_groups` mapping of `collection`, read once.
fn metadata(roots: &CodeRoots, collection: &str) -> Option<Arc<Value>> {
    let mut cache = METADATA.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(found) = cache.get(collection) {
        return found.clone();
    }
    let file: Option<PathBuf> = if collection == "ansible.builtin" {
        roots
            .ansible
            .as_ref()
            .map(|a| a.join("config/ansible_builtin_runtime.yml"))
    } else {
        let (ns, coll) = collection.split_once('.')?;
        roots
            .collections
            .iter()
            .map(|dir| {
                dir.join("ansible_collections")
                    .join(ns)
                    .join(coll)
                    .join("meta/runtime.yml")
            })
            .find(|f| f.is_file())
    };
    let groups = file.and_then(|f| {
        let text = std::fs::read_to_string(&f).ok()?;
        let data = crate::playbook::load_data(&text, &f).ok()?;
        Some(Arc::new(data.get("action_groups")?.clone()))
    });
    cache.insert(collection.to_string(), groups.clone());
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roots(dir: &std::path::Path) -> CodeRoots {
        CodeRoots {
            ansible: Some(dir.join("site/ansible")),
            module_utils: Vec::new(),
            collections: vec![dir.join("colls")],
        }
    }

    #[test]
    fn groups_resolve_their_members_and_the_groups_they_extend() {
        let d = tempfile::tempdir().unwrap();
        let meta = d
            .path()
            .join("colls/ansible_collections/ag_ns/one/meta/runtime.yml");
        std::fs::create_dir_all(meta.parent().unwrap()).unwrap();
        std::fs::write(
            &meta,
            "action_groups:\n  first:\n    - metadata:\n        extend_group: [second, ag_ns.one.missing]\n    - mod_a\n    - other.coll.mod_b\n  ag_ns.one.second:\n    - metadata: {extend_group: first}\n    - mod_c\n",
        )
        .unwrap();
        let r = roots(d.path());
        assert_eq!(
            actions(&r, "ag_ns.one.first").unwrap(),
            ["ag_ns.one.mod_a", "other.coll.mod_b", "ag_ns.one.mod_c"]
        );
        assert_eq!(
            actions(&r, "ag_ns.one.second").unwrap(),
            ["ag_ns.one.mod_c", "ag_ns.one.mod_a", "other.coll.mod_b"]
        );
        assert_eq!(
            actions(&r, "ag_ns.one.nope").unwrap_err().to_string(),
            "Error loading module_defaults: could not resolve the module_defaults group ag_ns.one.nope"
        );
        assert!(actions(&r, "ag_ns.absent.g").is_err());
        assert!(actions(&r, "short").is_err());
    }
}
