//! `no_log` values: collected from arguments marked `no_log` (and their defaults and
//! fallbacks), then masked wherever they appear in a module's result, as Ansible does:
//! a value equal to a secret becomes `VALUE_SPECIFIED_IN_NO_LOG_PARAMETER`, a secret
//! inside a longer text becomes `********`.

use sandball_pycompat::pyfmt::py_str;
use serde_json::{Map, Value};
use std::collections::BTreeSet;

/// What replaces a value that is a secret.
pub const MASK: &str = "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER";
/// What replaces a secret inside a longer text.
pub const STARS: &str = "********";

/// Adds the secrets held by `value` to `into`: every non-empty text and every number
/// in it (booleans and nulls hide nothing).
pub fn collect(value: &Value, into: &mut BTreeSet<String>) {
    match value {
        Value::String(s) if !s.is_empty() => {
            into.insert(s.clone());
        }
        Value::Number(_) => {
            into.insert(py_str(value));
        }
        Value::Array(items) => items.iter().for_each(|v| collect(v, into)),
        Value::Object(map) => map.values().for_each(|v| collect(v, into)),
        _ => {}
    }
}

/// Masks `secrets` in a whole result. The result's own top-level keys (`changed`,
/// `invocation`, …) are kept as they are; keys below them are masked like values.
///
/// The `diff` is left alone: it is only produced when the user asked for it (`--diff`)
/// and shows file contents the user wrote, as Ansible's controller-side diffs do
/// (`copy content=…`); a task's `no_log` still hides the whole result, diff included.
pub fn mask_result(result: &mut Map<String, Value>, secrets: &BTreeSet<String>) {
    if secrets.is_empty() {
        return;
    }
    let ordered = longest_first(secrets);
    for (key, value) in result.iter_mut() {
        if key != "diff" {
            mask_value(value, secrets, &ordered);
        }
    }
}

fn longest_first(secrets: &BTreeSet<String>) -> Vec<&str> {
    let mut v: Vec<&str> = secrets.iter().map(String::as_str).collect();
    v.sort_by_key(|s| std::cmp::Reverse(s.len()));
    v
}

fn mask_text(text: &str, secrets: &BTreeSet<String>, ordered: &[&str]) -> String {
    if secrets.contains(text) {
        return MASK.to_string();
    }
    let mut out = text.to_string();
    for secret in ordered {
        if out.contains(secret) {
            out = out.replace(secret, STARS);
        }
    }
    out
}

fn mask_value(value: &mut Value, secrets: &BTreeSet<String>, ordered: &[&str]) {
    match value {
        Value::String(s) => *s = mask_text(s, secrets, ordered),
        Value::Number(_) => {
            if secrets.contains(&py_str(value)) {
                *value = Value::String(MASK.to_string());
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|v| mask_value(v, secrets, ordered)),
        Value::Object(map) => {
            let old = std::mem::take(map);
            for (k, mut v) in old {
                mask_value(&mut v, secrets, ordered);
                map.insert(mask_text(&k, secrets, ordered), v);
            }
        }
        Value::Bool(_) | Value::Null => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn collects_leaves_of_nested_values() {
        let mut s = BTreeSet::new();
        collect(
            &json!({"a": ["pw1", {"b": 1234}], "c": true, "d": "", "e": null}),
            &mut s,
        );
        assert_eq!(s.into_iter().collect::<Vec<_>>(), vec!["1234", "pw1"]);
    }

    #[test]
    fn masks_values_substrings_numbers_and_keys() {
        let secrets: BTreeSet<String> = ["hunter2".to_string(), "1234".to_string()].into();
        let Value::Object(mut result) = json!({
            "changed": true,
            "msg": "login with hunter2 failed",
            "invocation": {"module_args": {"password": "hunter2", "pin": 1234, "user": "bob"}},
            "nested": [{"hunter2": "x"}, 12345]
        }) else {
            unreachable!()
        };
        mask_result(&mut result, &secrets);
        assert_eq!(
            Value::Object(result),
            json!({
                "changed": true,
                "msg": "login with ******** failed",
                "invocation": {"module_args": {"password": MASK, "pin": MASK, "user": "bob"}},
                "nested": [{MASK: "x"}, 12345]
            })
        );
    }
}
