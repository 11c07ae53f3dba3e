//! Ansible's `merge_hash`: one mapping merged into another, recursively, as variables
//! of one name merge under `hash_behaviour = merge`, `include_vars` merges into a
//! variable and templates merge data into trusted mappings.

use serde_json::Value;

/// `new` merged into `old` when both are mappings (recursively, as ansible-core's
/// `merge_hash`: lists are replaced); otherwise `new`.
pub fn merge_values(old: Option<&Value>, new: Value) -> Value {
    match (old, new) {
        (Some(Value::Object(old)), Value::Object(new)) => {
            let mut out = old.clone();
            for (k, v) in new {
                let merged = merge_values(out.get(&k), v);
                out.insert(k, merged);
            }
            Value::Object(out)
        }
        (_, new) => new,
    }
}
