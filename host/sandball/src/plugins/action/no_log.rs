//! Secrets of a module run: the values of the arguments its own argument spec marks
//! `no_log` (or all of them, for a `no_log` task), and their masking, as Ansible's
//! `remove_values` does, in whatever reaches an output: the task result (messages,
//! denials quoting a refused command line), the JSON lines and the audit log.

use sandball_wire::manifest::Manifest;
use serde_json::{Map, Value};

/// What a secret is replaced with.
pub const MASK: &str = "********";

/// The argument values that must never be shown: every value of a `no_log` task, and
/// the values of arguments (or their aliases) the module's spec marks `no_log`. Longest
/// first, so that a secret containing another is masked whole.
pub fn secrets(
    manifest: Option<&Manifest>,
    args: &Map<String, Value>,
    no_log: bool,
) -> Vec<String> {
    let mut out = Vec::new();
    for (name, value) in args {
        let secret = no_log
            || manifest.is_some_and(|m| {
                m.argument_spec.iter().any(|(n, spec)| {
                    spec.no_log && (n == name || spec.aliases.iter().any(|a| a == name))
                })
            });
        if secret {
            strings(value, &mut out);
        }
    }
    out.retain(|s| !s.is_empty());
    out.sort_by_key(|s| std::cmp::Reverse(s.len()));
    out.dedup();
    out
}

fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|i| strings(i, out)),
        Value::Object(m) => m.values().for_each(|i| strings(i, out)),
        Value::Number(n) => out.push(n.to_string()),
        Value::Bool(_) | Value::Null => {}
    }
}

/// Replaces every occurrence of a secret in the strings of `v`, and every key that is a
/// secret.
pub fn mask(v: &mut Value, secrets: &[String]) {
    match v {
        Value::String(s) => mask_text(s, secrets),
        Value::Array(items) => items.iter_mut().for_each(|i| mask(i, secrets)),
        Value::Object(m) => mask_map(m, secrets),
        _ => {}
    }
}

/// [`mask`] for a result map. A key is masked only when it is a secret, whole: keys are
/// mostly field names the executor and callbacks read (`changed`, `failed`, `diff`'s
/// `after`…), which a short secret must not turn into `ch********nged`.
pub fn mask_map(m: &mut Map<String, Value>, secrets: &[String]) {
    if secrets.is_empty() {
        return;
    }
    if m.keys().any(|k| secrets.contains(k)) {
        let entries = std::mem::take(m);
        for (k, v) in entries {
            let k = if secrets.contains(&k) {
                MASK.to_string()
            } else {
                k
            };
            m.insert(k, v);
        }
    }
    m.values_mut().for_each(|i| mask(i, secrets));
}

fn mask_text(s: &mut String, secrets: &[String]) {
    for secret in secrets {
        if s.contains(secret.as_str()) {
            *s = s.replace(secret.as_str(), MASK);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn spec_secrets_are_masked_everywhere() {
        let manifest: Manifest = serde_json::from_value(json!({
            "name": "demo",
            "argument_spec": {
                "password": {"type": "str", "no_log": true, "aliases": ["pass"]},
                "user": {"type": "str"}
            }
        }))
        .expect("a manifest");
        let args = json!({"pass": "hunter2", "user": "bob"});
        let secrets = secrets(Some(&manifest), args.as_object().expect("args"), false);
        assert_eq!(secrets, vec!["hunter2".to_string()]);
        let mut result = json!({
            "msg": "denied exec /bin/login bob hunter2",
            "denials": [{"capability": "exec /bin/login hunter2"}],
            "hunter2": true
        });
        mask(&mut result, &secrets);
        let text = result.to_string();
        assert!(!text.contains("hunter2") && text.contains("bob"), "{text}");
        assert_eq!(result["msg"], "denied exec /bin/login bob ********");
    }

    #[test]
    fn keys_are_masked_only_when_they_are_a_secret() {
        let secrets = vec!["a".to_string()];
        let mut result = json!({"changed": true, "msg": "a file", "diff": {"after": "a", "a": 1}});
        mask_map(result.as_object_mut().expect("a map"), &secrets);
        assert_eq!(
            result,
            json!({"changed": true, "msg": "******** file", "diff": {"after": "********", "********": 1}})
        );
    }

    #[test]
    fn a_no_log_task_masks_every_argument() {
        let args = json!({"a": "one", "b": ["two", 3]});
        let secrets = secrets(None, args.as_object().expect("args"), true);
        assert_eq!(secrets.len(), 3);
    }
}
