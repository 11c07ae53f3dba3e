//! [`Diff`]: what a module would change, in Ansible's `diff` shape, shown with `--diff`.

use serde::Serialize;
use serde_json::{Map, Value};

/// Before and after states of what a module changes. File attributes go into `before`
/// and `after` objects (`{"mode": "0644"}`); content diffs use texts.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Diff {
    /// The state before.
    pub before: Value,
    /// The state after.
    pub after: Value,
    /// Title of the before side (e.g. the path).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before_header: Option<String>,
    /// Title of the after side.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after_header: Option<String>,
}

impl Default for Diff {
    /// Empty `before` and `after` objects, ready for attributes.
    fn default() -> Self {
        Diff {
            before: Value::Object(Map::new()),
            after: Value::Object(Map::new()),
            before_header: None,
            after_header: None,
        }
    }
}

impl Diff {
    /// Records one attribute's old and new value, when `before`/`after` are objects
    /// (null sides become objects).
    pub fn record(&mut self, key: &str, before: impl Into<Value>, after: impl Into<Value>) {
        for (side, value) in [
            (&mut self.before, before.into()),
            (&mut self.after, after.into()),
        ] {
            if side.is_null() {
                *side = Value::Object(Map::new());
            }
            if let Value::Object(map) = side {
                map.insert(key.to_string(), value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn serialises_like_ansible_and_records_attributes() {
        let mut d = Diff {
            before: Value::Null,
            ..Diff::default()
        };
        d.record("mode", "0644", "0600");
        assert_eq!(
            serde_json::to_value(&d).unwrap(),
            json!({"before": {"mode": "0644"}, "after": {"mode": "0600"}})
        );
        let text = Diff {
            before: json!("a\n"),
            after: json!("b\n"),
            before_header: Some("/x".into()),
            after_header: Some("/x".into()),
        };
        assert_eq!(
            serde_json::to_value(&text).unwrap(),
            json!({"before": "a\n", "after": "b\n", "before_header": "/x", "after_header": "/x"})
        );
    }
}
