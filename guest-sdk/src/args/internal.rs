//! Ansible's internal arguments (`_ansible_check_mode`, `_ansible_diff`,
//! `_ansible_verbosity`, …): taken out of the task arguments before validation, never
//! reported as unsupported, and read through typed accessors.

use super::context::StringConversion;
use sandball_pycompat::boolean;
use serde_json::{Map, Value};

/// The prefix of every internal argument.
pub const PREFIX: &str = "_ansible_";

/// The internal arguments of one run, keyed without their `_ansible_` prefix.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct InternalArgs {
    values: Map<String, Value>,
}

impl InternalArgs {
    /// Removes every `_ansible_*` key from `params` and keeps them.
    pub fn extract(params: &mut Map<String, Value>) -> Self {
        let keys: Vec<String> = params
            .keys()
            .filter(|k| k.starts_with(PREFIX))
            .cloned()
            .collect();
        let mut values = Map::new();
        for key in keys {
            if let Some(v) = params.shift_remove(&key) {
                values.insert(key[PREFIX.len()..].to_string(), v);
            }
        }
        InternalArgs { values }
    }

    /// The raw value of `_ansible_<name>`.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.values.get(name).filter(|v| !v.is_null())
    }

    fn flag(&self, name: &str) -> bool {
        self.get(name)
            .is_some_and(|v| boolean::strict(v).unwrap_or(false))
    }

    fn text(&self, name: &str) -> Option<&str> {
        self.get(name).and_then(Value::as_str)
    }

    /// `_ansible_check_mode`.
    pub fn check_mode(&self) -> bool {
        self.flag("check_mode")
    }

    /// `_ansible_diff`.
    pub fn diff(&self) -> bool {
        self.flag("diff")
    }

    /// `_ansible_no_log`: the task asked for its output to be hidden.
    pub fn no_log(&self) -> bool {
        self.flag("no_log")
    }

    /// `_ansible_verbosity` (0 when absent or not a number).
    pub fn verbosity(&self) -> u32 {
        match self.get("verbosity") {
            Some(Value::Number(n)) => n.as_u64().map_or(0, |v| v.min(u32::MAX.into()) as u32),
            Some(Value::String(s)) => s.trim().parse().unwrap_or(0),
            _ => 0,
        }
    }

    /// `_ansible_module_name`.
    pub fn module_name(&self) -> Option<&str> {
        self.text("module_name")
    }

    /// `_ansible_string_conversion_action`.
    pub fn string_conversion(&self) -> StringConversion {
        self.text("string_conversion_action")
            .map_or_else(StringConversion::default, StringConversion::from_name)
    }

    /// Whether `_ansible_version` (the ansible-core release the controller follows,
    /// `2.21.0`) is 2.`minor` or later; false without one.
    pub fn release_at_least(&self, minor: u32) -> bool {
        let mut parts = self.text("version").unwrap_or_default().split('.');
        match (
            parts.next(),
            parts.next().and_then(|m| m.parse::<u32>().ok()),
        ) {
            (Some("2"), Some(m)) => m >= minor,
            (Some(major), _) => major.parse::<u32>().is_ok_and(|n| n > 2),
            _ => false,
        }
    }

    /// `_ansible_ignore_unknown_opts`.
    pub fn ignore_unknown_opts(&self) -> bool {
        self.flag("ignore_unknown_opts")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_release_is_read_from_the_version() {
        let of = |v: Value| {
            let mut params = Map::new();
            params.insert("_ansible_version".into(), v);
            InternalArgs::extract(&mut params)
        };
        assert!(of(json!("2.21.0")).release_at_least(21));
        assert!(!of(json!("2.19.14")).release_at_least(21));
        assert!(of(json!("3.0.0")).release_at_least(21));
        assert!(!of(json!(null)).release_at_least(19));
    }

    #[test]
    fn takes_every_internal_key_out() {
        let Value::Object(mut params) = json!({
            "path": "/x",
            "_ansible_check_mode": true,
            "_ansible_diff": "yes",
            "_ansible_verbosity": 3,
            "_ansible_module_name": "file",
            "_ansible_string_conversion_action": "warn",
            "_ansible_ignore_unknown_opts": false,
            "_ansible_tmpdir": "/tmp/ansible-x",
            "_ansible_future_thing": 1
        }) else {
            unreachable!()
        };
        let internal = InternalArgs::extract(&mut params);
        assert_eq!(params, json!({"path": "/x"}).as_object().unwrap().clone());
        assert!(internal.check_mode());
        assert!(internal.diff());
        assert!(!internal.no_log());
        assert_eq!(internal.verbosity(), 3);
        assert_eq!(internal.module_name(), Some("file"));
        assert_eq!(internal.string_conversion(), StringConversion::Warn);
        assert!(!internal.ignore_unknown_opts());
        assert_eq!(internal.get("tmpdir"), Some(&json!("/tmp/ansible-x")));
        assert_eq!(internal.get("future_thing"), Some(&json!(1)));
    }
}
