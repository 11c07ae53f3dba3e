//! YAML (and JSON) inventory and vars files, read with the playbook's YAML loader
//! ([`crate::yaml`]: PyYAML's YAML 1.1 types, `<<` merge keys, anchors and
//! aliases, `!unsafe`, timestamps as ISO text) so that a value types the same wherever it
//! is written. As Ansible's loader does, a file that is valid JSON is read as JSON (where
//! `1e3` is a number). Errors become inventory errors that say file:line.

use super::error::InventoryError;
use crate::yaml::source::{Mark, SourceFile};
pub(crate) use crate::yaml::{Node, Yaml};
use serde_json::{Map, Value};
use std::path::Path;

/// What the inventory asks of a loaded node beyond what the playbook loader offers.
pub(crate) trait NodeExt {
    /// The 1-based line the node starts on.
    fn line(&self) -> Option<usize>;
    /// Python's truth value: false for null, `false`, zero, and empty strings and collections.
    fn is_truthy(&self) -> bool;
    /// A short name of the node's type for messages ("a list", "a dictionary", ...).
    fn type_name(&self) -> &'static str;
}

impl NodeExt for Node {
    fn line(&self) -> Option<usize> {
        Some(self.mark.line)
    }

    fn is_truthy(&self) -> bool {
        match &self.value {
            Yaml::Scalar(Value::Null) => false,
            Yaml::Scalar(Value::Bool(b)) => *b,
            Yaml::Scalar(Value::Number(n)) => n.as_f64() != Some(0.0),
            Yaml::Scalar(Value::String(s)) | Yaml::Unsafe(s) => !s.is_empty(),
            Yaml::Scalar(Value::Array(items)) => !items.is_empty(),
            Yaml::Scalar(Value::Object(map)) => !map.is_empty(),
            Yaml::Seq(items) => !items.is_empty(),
            Yaml::Map(pairs) => !pairs.is_empty(),
        }
    }

    fn type_name(&self) -> &'static str {
        match self.describe() {
            "a mapping" => "a dictionary",
            other => other,
        }
    }
}

/// Loads the single document of `text` (from file `path`, for messages); `None` when the
/// file holds no document at all. Warnings (duplicate keys) are returned beside it.
pub(crate) fn load(text: &str, path: &str) -> Result<(Option<Node>, Vec<String>), InventoryError> {
    if let Ok(json) = serde_json::from_str::<Value>(text) {
        return Ok((Some(from_json(json)), Vec::new()));
    }
    let source = SourceFile::new(Path::new(path), text);
    let document = crate::yaml::load(&source).map_err(|e| {
        let line = e.location().map(|l| l.line);
        let message = match &e {
            crate::yaml::PlaybookError::Invalid { message, .. } => message.clone(),
            other => other.to_string(),
        };
        InventoryError::parse(path, line, message)
    })?;
    Ok((document.root, document.warnings))
}

/// A JSON value as a node tree (every node placed on line 1: JSON files are rarely wrong
/// in ways that need a line).
fn from_json(value: Value) -> Node {
    let mark = Mark { line: 1, column: 1 };
    let value = match value {
        Value::Array(items) => Yaml::Seq(items.into_iter().map(from_json).collect()),
        Value::Object(map) => Yaml::Map(
            map.into_iter()
                .map(|(k, v)| (from_json(Value::String(k)), from_json(v)))
                .collect(),
        ),
        scalar => Yaml::Scalar(scalar),
    };
    Node { value, mark }
}

/// Loads a vars file (`group_vars/…`, `host_vars/…`): a mapping, or nothing when empty.
pub fn load_mapping(text: &str, path: &str) -> Result<Option<Map<String, Value>>, InventoryError> {
    let (Some(node), _) = load(text, path)? else {
        return Ok(None);
    };
    match node.to_json() {
        Value::Null => Ok(None),
        Value::Object(map) => Ok(Some(map)),
        _ => Err(InventoryError::parse(
            path,
            node.line(),
            format!(
                "vars files must contain a dictionary, got {}",
                node.type_name()
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn json_of(text: &str) -> Value {
        load(text, "t.yml").unwrap().0.unwrap().to_json()
    }

    #[test]
    fn yaml_1_1_values_as_playbooks_read_them() {
        let v = json_of(
            "a: yes\nb: 017\nc: 1:30\nd: 1e3\ne: '5'\nf: 2024-1-5\ng: !unsafe '{{ x }}'\n\
             base: &b {x: 1}\nm:\n  <<: *b\n  y: 2\n",
        );
        assert_eq!(
            v,
            json!({"a": true, "b": 15, "c": 90, "d": "1e3", "e": "5", "f": "2024-01-05",
                   "g": {"__ansible_unsafe": "{{ x }}"}, "base": {"x": 1}, "m": {"x": 1, "y": 2}})
        );
    }

    #[test]
    fn json_files_use_json_numbers() {
        assert_eq!(
            json_of(r#"{"a": 1e3, "b": [true, null], "c": "x"}"#),
            json!({"a": 1000.0, "b": [true, null], "c": "x"})
        );
    }

    #[test]
    fn lines_and_duplicate_key_warnings_are_kept() {
        let (node, warnings) = load("# c\nall:\n  hosts:\n    a:\n  hosts:\n", "t.yml").unwrap();
        let node = node.unwrap();
        let Yaml::Map(pairs) = &node.value else {
            panic!()
        };
        assert_eq!(pairs[0].0.line(), Some(2));
        assert_eq!(warnings.len(), 1, "{warnings:?}");
    }

    #[test]
    fn errors_name_file_and_line() {
        let e = load("a: 1\nb: [1, 2\n", "/x/h.yml")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("/x/h.yml:"), "{e}");
        let e = load("a: 2024-13-01\n", "/x/h.yml").unwrap_err().to_string();
        assert!(e.starts_with("/x/h.yml:1: month must be in 1..12"), "{e}");
        assert!(
            load_mapping("- a\n", "/x/v.yml")
                .unwrap_err()
                .to_string()
                .contains("dictionary")
        );
    }

    #[test]
    fn empty_documents() {
        assert_eq!(load("", "t").unwrap().0, None);
        assert_eq!(load("# only a comment\n", "t").unwrap().0, None);
        assert_eq!(load_mapping("---\n", "t").unwrap(), None);
    }
}
