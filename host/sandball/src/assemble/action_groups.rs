//! Action groups: the actions a `group/NAME` entry of `module_defaults` gives its
//! defaults to, resolved as ansible-core resolves them. `NAME` is `ns.coll.group` (a
//! short name is ansible-core's own, `ansible.builtin.group`); the group is listed
//! under `action_groups` in the collection's `meta/runtime.yml` (ansible-core's in its
//! `config/ansible_builtin_runtime.yml`), by its full or its short name; a member
//! written without a collection is the group's collection's; a `metadata` entry's
//! `extend_group` adds the actions of other groups (which need not exist). A group whose
//! entries are not action names and one `metadata` mapping of `extend_group` alone is
//! warned about, in ansible-core's words, unless `validate_action_group_metadata` is
//! off.

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

/// Each group resolved so far (by full name): its actions.
static GROUPS: Mutex<BTreeMap<String, Vec<String>>> = Mutex::new(BTreeMap::new());

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

/// A resolved group.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Group {
    /// Its actions, fully qualified, extended groups' included.
    pub actions: Vec<String>,
    /// What is wrong with the metadata of it and the groups it extends.
    pub warnings: Vec<String>,
}

/// The actions of group `name` (as `module_defaults` writes it after `group/`), fully
/// qualified, extended groups' included. A group is resolved once: the warnings about
/// its metadata come with that first resolution only.
pub fn actions(roots: &CodeRoots, name: &str) -> Result<Group, Unresolved> {
    let full = in_collection("ansible.builtin", name);
    let mut groups = GROUPS.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(actions) = groups.get(&full) {
        return Ok(Group {
            actions: actions.clone(),
            warnings: Vec::new(),
        });
    }
    let mut out = Group::default();
    collect(roots, &full, true, &mut BTreeSet::new(), &mut out)?;
    groups.insert(full, out.actions.clone());
    Ok(out)
}

/// Adds the actions of group `group` (fully qualified) to `out`; a missing group is an
/// error only when `mandatory` (a group named in `module_defaults`, not one extended).
fn collect(
    roots: &CodeRoots,
    group: &str,
    mandatory: bool,
    seen: &mut BTreeSet<String>,
    out: &mut Group,
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
    let mut found_metadata = false;
    for entry in entries {
        match entry {
            Value::String(action) => out.actions.push(in_collection(&collection, action)),
            Value::Object(m) => {
                let problems = metadata_problems(m, found_metadata);
                if !problems.is_empty() && crate::config::settings().flag(VALIDATE, true) {
                    out.warnings.push(format!(
                        "Invalid metadata was found for action_group {group} while loading module_defaults. {}",
                        problems.join(" ")
                    ));
                }
                let Some(Value::Object(meta)) = m.get("metadata") else {
                    continue;
                };
                found_metadata = true;
                // A later metadata entry's groups replace an earlier one's.
                extended = match meta.get("extend_group") {
                    Some(Value::String(one)) => vec![one.clone()],
                    Some(Value::Array(list)) => list
                        .iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect(),
                    _ => Vec::new(),
                };
            }
            _ => {}
        }
    }
    for other in extended {
        collect(roots, &in_collection(&collection, &other), false, seen, out)?;
    }
    Ok(())
}

/// The setting that turns the metadata warnings off.
const VALIDATE: &str = "ANSIBLE_VALIDATE_ACTION_GROUP_METADATA";

/// What is wrong with a group's mapping entry, as ansible-core words it: it must be
/// `metadata` alone, once, a mapping of `extend_group` (a name or a list) only.
fn metadata_problems(entry: &serde_json::Map<String, Value>, found_before: bool) -> Vec<String> {
    let python = |v: &Value| crate::template::python_str(v).unwrap_or_else(|_| v.to_string());
    let Some(meta) = entry.get("metadata").filter(|_| entry.len() == 1) else {
        let mut keys: Vec<&str> = entry.keys().map(String::as_str).collect();
        keys.sort_unstable();
        return vec![format!(
            "The only expected key is metadata, but got keys: {}",
            keys.join(", ")
        )];
    };
    let mut problems = Vec::new();
    if found_before {
        problems.push("The group contains multiple metadata entries.".to_string());
    }
    let Value::Object(meta) = meta else {
        problems.push(format!(
            "The metadata is not a dictionary. Got {}",
            python(meta)
        ));
        return problems;
    };
    let unexpected: Vec<&str> = meta
        .keys()
        .map(String::as_str)
        .filter(|k| *k != "extend_group")
        .collect();
    if !unexpected.is_empty() {
        problems.push(format!(
            "The metadata contains unexpected keys: {}",
            unexpected.join(", ")
        ));
    }
    if let Some(v) = meta
        .get("extend_group")
        .filter(|v| !matches!(v, Value::String(_) | Value::Array(_)))
    {
        problems.push(format!(
            "The metadata contains unexpected key types: extend_group is {} (expected type list)",
            python(v)
        ));
    }
    problems
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
        let data = crate::yaml::load_data(&text, &f).ok()?;
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
            actions(&r, "ag_ns.one.first").unwrap().actions,
            ["ag_ns.one.mod_a", "other.coll.mod_b", "ag_ns.one.mod_c"]
        );
        assert_eq!(
            actions(&r, "ag_ns.one.second").unwrap().actions,
            ["ag_ns.one.mod_c", "ag_ns.one.mod_a", "other.coll.mod_b"]
        );
        assert_eq!(
            actions(&r, "ag_ns.one.nope").unwrap_err().to_string(),
            "Error loading module_defaults: could not resolve the module_defaults group ag_ns.one.nope"
        );
        assert!(actions(&r, "ag_ns.absent.g").is_err());
        assert!(actions(&r, "short").is_err());
    }

    #[test]
    fn malformed_group_metadata_is_warned_about_as_ansible_core_words_it() {
        let d = tempfile::tempdir().unwrap();
        let meta = d
            .path()
            .join("colls/ansible_collections/md_ns/c/meta/runtime.yml");
        std::fs::create_dir_all(meta.parent().unwrap()).unwrap();
        std::fs::write(
            &meta,
            "action_groups:\n  base: [mod_a]\n  fine:\n    - metadata: {extend_group: base}\n  empty:\n    - metadata: {}\n  format:\n    - {unexpected_key: {key: value}, metadata: {extend_group: base}}\n  twice:\n    - metadata: {extend_group: fine}\n    - metadata: {extend_group: base}\n  options:\n    - metadata: {unexpected_key: base}\n  kind:\n    - metadata: [base]\n  option_kind:\n    - metadata: {extend_group: {name: base}}\n",
        )
        .unwrap();
        let r = roots(d.path());
        let warning = |group: &str| {
            let g = actions(&r, &format!("md_ns.c.{group}")).unwrap();
            g.warnings.join("|")
        };
        assert_eq!(warning("fine"), "");
        assert_eq!(warning("empty"), "");
        let head = |g: &str| {
            format!(
                "Invalid metadata was found for action_group md_ns.c.{g} while loading module_defaults. "
            )
        };
        assert_eq!(
            warning("format"),
            head("format")
                + "The only expected key is metadata, but got keys: metadata, unexpected_key"
        );
        assert_eq!(
            warning("twice"),
            head("twice") + "The group contains multiple metadata entries."
        );
        assert_eq!(
            warning("options"),
            head("options") + "The metadata contains unexpected keys: unexpected_key"
        );
        assert_eq!(
            warning("kind"),
            head("kind") + "The metadata is not a dictionary. Got ['base']"
        );
        assert_eq!(
            warning("option_kind"),
            head("option_kind")
                + "The metadata contains unexpected key types: extend_group is {'name': 'base'} (expected type list)"
        );
        // A malformed entry's groups are still extended; a later entry's replace an
        // earlier one's.
        assert_eq!(
            actions(&r, "md_ns.c.format").unwrap().actions,
            ["md_ns.c.mod_a"]
        );
        assert_eq!(
            actions(&r, "md_ns.c.twice").unwrap().actions,
            ["md_ns.c.mod_a"]
        );
    }
}
