//! Building an action's result: a success with its fields, warnings and the help shown
//! after them, and the result without its internal (`_ansible_*`) keys, as ansible-core
//! shows and registers it.

use serde_json::{Map, Value};

/// A result without its internal (`_ansible_*`) keys, at every depth (a loop's items,
/// `ansible_facts`), as ansible-core strips them before showing or registering it.
pub fn without_internal_keys(result: &Map<String, Value>) -> Map<String, Value> {
    fn clean(v: &Value) -> Value {
        match v {
            Value::Object(m) => Value::Object(without_internal_keys(m)),
            Value::Array(items) => Value::Array(items.iter().map(clean).collect()),
            other => other.clone(),
        }
    }
    result
        .iter()
        .filter(|(k, _)| !k.starts_with("_ansible_"))
        .map(|(k, v)| (k.clone(), clean(v)))
        .collect()
}

/// Adds a warning to a result's `warnings`.
pub fn push_warning(m: &mut Map<String, Value>, w: String) {
    match m.entry("warnings").or_insert_with(|| Value::Array(vec![])) {
        Value::Array(a) => a.push(Value::String(w)),
        other => *other = serde_json::json!([w]),
    }
}

/// Where a result keeps the help text shown after one of its `warnings` (by the
/// warning's text), as ansible-core 2.19's warnings carry it: shown by the default
/// callback, never registered.
pub const WARNING_HELP: &str = "_ansible_warning_help";

/// Where a result keeps the line the default callback shows for each of its
/// `deprecations` (see [`super::summaries::deprecations`]), in their order: never registered.
pub const DEPRECATIONS_SHOWN: &str = "_ansible_deprecations_shown";

/// Records the help text shown after the result's warning `w`.
pub fn warning_help(m: &mut Map<String, Value>, w: &str, help: &str) {
    if let Value::Object(h) = m
        .entry(WARNING_HELP)
        .or_insert_with(|| Value::Object(Map::new()))
    {
        h.insert(w.to_string(), Value::String(help.to_string()));
    }
}

/// `{"changed": false}` plus the given fields.
pub fn ok_with(fields: Value) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("changed".into(), Value::Bool(false));
    if let Value::Object(f) = fields {
        m.extend(f);
    }
    m
}
