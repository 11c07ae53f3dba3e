//! The parsed YAML tree: typed scalars, sequences and mappings, each node keeping the
//! mark where it starts so that every error can say file:line:column.

use serde_json::{Map, Value};

use crate::yaml::source::Mark;

/// The key under which a `!unsafe` string travels in JSON: `{"__ansible_unsafe": "text"}`,
/// Ansible's own JSON encoding of a value that must never be templated.
pub const UNSAFE_KEY: &str = "__ansible_unsafe";

/// The key under which a `!vault` value the run's passwords do not open travels in JSON:
/// `{"__ansible_vault": "$ANSIBLE_VAULT;…"}`, Ansible's own JSON encoding of a vaulted
/// value. Using it fails; only the `unvault` filter and `vault_encrypted` test take it.
pub const VAULT_KEY: &str = "__ansible_vault";

/// One YAML node and where it starts.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Node {
    /// The node's content.
    pub(crate) value: Yaml,
    /// Where the node starts (for an alias: where its anchor's node starts).
    pub(crate) mark: Mark,
}

/// The content of a YAML node.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Yaml {
    /// null, a boolean, a number or a string.
    Scalar(Value),
    /// A string tagged `!unsafe`: never to be templated.
    Unsafe(String),
    /// A sequence.
    Seq(Vec<Node>),
    /// A mapping, its keys unique and in first-seen order (a duplicated key keeps its first
    /// place and its last value, as a Python dict does).
    Map(Vec<(Node, Node)>),
}

impl Node {
    /// The text of a string node (plain or `!unsafe`).
    pub(crate) fn as_str(&self) -> Option<&str> {
        match &self.value {
            Yaml::Scalar(Value::String(text)) | Yaml::Unsafe(text) => Some(text),
            _ => None,
        }
    }

    /// The items of a sequence node.
    pub(crate) fn as_seq(&self) -> Option<&[Node]> {
        match &self.value {
            Yaml::Seq(items) => Some(items),
            _ => None,
        }
    }

    /// The entries of a mapping node.
    pub(crate) fn as_map(&self) -> Option<&[(Node, Node)]> {
        match &self.value {
            Yaml::Map(entries) => Some(entries),
            _ => None,
        }
    }

    /// Whether the node is null (`~`, `null`, or nothing at all).
    pub(crate) fn is_null(&self) -> bool {
        matches!(self.value, Yaml::Scalar(Value::Null))
    }

    /// Whether the node is a scalar (null included).
    pub(crate) fn is_scalar(&self) -> bool {
        matches!(self.value, Yaml::Scalar(_) | Yaml::Unsafe(_))
    }

    /// The node's type for error messages: "a string", "a list", "a mapping"…
    pub(crate) fn describe(&self) -> &'static str {
        match &self.value {
            Yaml::Scalar(Value::Null) => "null",
            Yaml::Scalar(Value::Bool(_)) => "a boolean",
            Yaml::Scalar(Value::Number(number)) if number.is_f64() => "a float",
            Yaml::Scalar(Value::Number(_)) => "an integer",
            Yaml::Scalar(Value::String(_)) | Yaml::Unsafe(_) => "a string",
            Yaml::Scalar(Value::Array(_)) | Yaml::Seq(_) => "a list",
            Yaml::Scalar(Value::Object(_)) | Yaml::Map(_) => "a mapping",
        }
    }

    /// A scalar as the text Ansible would make of it where a string is expected
    /// (`True`, `42`, `1.5`); `None` for null and collections.
    pub(crate) fn scalar_text(&self) -> Option<String> {
        match &self.value {
            Yaml::Scalar(Value::String(text)) | Yaml::Unsafe(text) => Some(text.clone()),
            Yaml::Scalar(Value::Bool(true)) => Some("True".to_owned()),
            Yaml::Scalar(Value::Bool(false)) => Some("False".to_owned()),
            Yaml::Scalar(Value::Number(number)) => Some(number.to_string()),
            _ => None,
        }
    }

    /// This node, used as a mapping key, as a JSON object key: strings as they are, other
    /// scalars as JSON writes them (`true`, `null`, `3`).
    pub(crate) fn key_text(&self) -> String {
        match &self.value {
            Yaml::Scalar(Value::String(text)) | Yaml::Unsafe(text) => text.clone(),
            _ => self.to_json().to_string(),
        }
    }

    /// The node as JSON; `!unsafe` strings become `{"__ansible_unsafe": text}`.
    pub(crate) fn to_json(&self) -> Value {
        match &self.value {
            Yaml::Scalar(value) => value.clone(),
            Yaml::Unsafe(text) => {
                let mut wrapped = Map::new();
                wrapped.insert(UNSAFE_KEY.to_owned(), Value::String(text.clone()));
                Value::Object(wrapped)
            }
            Yaml::Seq(items) => Value::Array(items.iter().map(Node::to_json).collect()),
            Yaml::Map(entries) => Value::Object(
                entries
                    .iter()
                    .map(|(key, value)| (key.key_text(), value.to_json()))
                    .collect(),
            ),
        }
    }

    /// How many nodes this tree holds.
    pub(crate) fn count(&self) -> usize {
        1 + match &self.value {
            Yaml::Scalar(_) | Yaml::Unsafe(_) => 0,
            Yaml::Seq(items) => items.iter().map(Node::count).sum(),
            Yaml::Map(entries) => entries
                .iter()
                .map(|(key, value)| key.count() + value.count())
                .sum(),
        }
    }

    /// How deeply this tree nests (a scalar is 1).
    pub(crate) fn depth(&self) -> usize {
        1 + match &self.value {
            Yaml::Scalar(_) | Yaml::Unsafe(_) => 0,
            Yaml::Seq(items) => items.iter().map(Node::depth).max().unwrap_or(0),
            Yaml::Map(entries) => entries
                .iter()
                .map(|(key, value)| key.depth().max(value.depth()))
                .max()
                .unwrap_or(0),
        }
    }

    /// This tree with every string in it made `!unsafe` (a tag on a collection applies to
    /// everything inside, as Ansible's `!unsafe` does).
    pub(crate) fn into_unsafe(self) -> Node {
        let value = match self.value {
            Yaml::Scalar(Value::String(text)) => Yaml::Unsafe(text),
            Yaml::Seq(items) => Yaml::Seq(items.into_iter().map(Node::into_unsafe).collect()),
            Yaml::Map(entries) => Yaml::Map(
                entries
                    .into_iter()
                    .map(|(key, value)| (key.into_unsafe(), value.into_unsafe()))
                    .collect(),
            ),
            other => other,
        };
        Node {
            value,
            mark: self.mark,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn at(value: Yaml) -> Node {
        Node {
            value,
            mark: Mark { line: 1, column: 1 },
        }
    }

    fn scalar(value: Value) -> Node {
        at(Yaml::Scalar(value))
    }

    #[test]
    fn converts_to_json_with_unsafe_wrapped() {
        let node = at(Yaml::Map(vec![
            (
                scalar(json!("a")),
                at(Yaml::Seq(vec![scalar(json!(1)), scalar(Value::Null)])),
            ),
            (scalar(json!(true)), at(Yaml::Unsafe("{{ x }}".into()))),
            (scalar(json!(3)), scalar(json!(1.5))),
        ]));
        assert_eq!(
            node.to_json(),
            json!({"a": [1, null], "true": {"__ansible_unsafe": "{{ x }}"}, "3": 1.5})
        );
        assert_eq!(node.count(), 9);
        assert_eq!(node.depth(), 3);
    }

    #[test]
    fn describes_types() {
        assert_eq!(scalar(json!("x")).describe(), "a string");
        assert_eq!(scalar(json!(1)).describe(), "an integer");
        assert_eq!(scalar(json!(1.5)).describe(), "a float");
        assert_eq!(scalar(json!(false)).describe(), "a boolean");
        assert_eq!(scalar(Value::Null).describe(), "null");
        assert_eq!(at(Yaml::Seq(vec![])).describe(), "a list");
        assert_eq!(at(Yaml::Map(vec![])).describe(), "a mapping");
        assert_eq!(at(Yaml::Unsafe("x".into())).describe(), "a string");
    }

    #[test]
    fn scalar_text_is_what_python_str_gives() {
        assert_eq!(scalar(json!(true)).scalar_text().as_deref(), Some("True"));
        assert_eq!(scalar(json!(false)).scalar_text().as_deref(), Some("False"));
        assert_eq!(scalar(json!(12)).scalar_text().as_deref(), Some("12"));
        assert_eq!(scalar(json!("s")).scalar_text().as_deref(), Some("s"));
        assert_eq!(scalar(Value::Null).scalar_text(), None);
        assert_eq!(at(Yaml::Seq(vec![])).scalar_text(), None);
    }

    #[test]
    fn accessors() {
        let seq = at(Yaml::Seq(vec![scalar(json!(1))]));
        assert_eq!(seq.as_seq().map(<[Node]>::len), Some(1));
        assert!(seq.as_map().is_none());
        assert!(!seq.is_scalar());
        assert!(scalar(Value::Null).is_null());
        assert!(scalar(Value::Null).is_scalar());
        assert_eq!(at(Yaml::Unsafe("u".into())).as_str(), Some("u"));
        assert_eq!(scalar(json!(1)).as_str(), None);
    }

    #[test]
    fn into_unsafe_marks_every_string() {
        let node = at(Yaml::Map(vec![(
            scalar(json!("k")),
            at(Yaml::Seq(vec![scalar(json!("{{ a }}")), scalar(json!(2))])),
        )]))
        .into_unsafe();
        assert_eq!(
            node.to_json(),
            json!({"k": [{"__ansible_unsafe": "{{ a }}"}, 2]})
        );
    }
}
