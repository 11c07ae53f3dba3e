//! The keywords of one playbook object (play, block, task, role entry, `loop_control`):
//! looking them up by name and turning their values into the types Ansible's field
//! attributes have (string, list of strings, conditionals, vars…), with errors that
//! name the keyword and say where it is.

use serde_json::{Map, Value};

use crate::yaml::error::PlaybookError;
use crate::yaml::location::Location;
use crate::yaml::source::{Mark, SourceFile};
use crate::yaml::{Node, Yaml};

/// `register` projections: each variable name and its expression (or value), in order.
pub(crate) type Projections = Vec<(String, Value)>;

/// Python's reserved words, which Ansible refuses as variable names.
const PYTHON_KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

/// Whether `name` can be a variable name: an ASCII identifier that is not a Python
/// reserved word.
pub(crate) fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !PYTHON_KEYWORDS.contains(&name)
}

/// One keyword of an object: its name, its key node and its value node.
pub(crate) struct Entry<'a> {
    /// The keyword as written.
    pub(crate) name: &'a str,
    /// The key, for positions.
    pub(crate) key: &'a Node,
    /// The value.
    pub(crate) value: &'a Node,
}

/// The keywords of one playbook object.
pub(crate) struct Fields<'a> {
    source: &'a SourceFile,
    owner: &'static str,
    mark: Mark,
    entries: Vec<Entry<'a>>,
}

impl<'a> Fields<'a> {
    /// The keywords of `node`, an object Ansible calls `owner` ("Play", "Task"…); the
    /// node must be a mapping with string keys.
    pub(crate) fn new(
        source: &'a SourceFile,
        node: &'a Node,
        owner: &'static str,
    ) -> Result<Self, PlaybookError> {
        let Some(map) = node.as_map() else {
            return Err(source.error(
                node.mark,
                format!("a {owner} must be a mapping, got {}", node.describe()),
            ));
        };
        let mut entries = Vec::with_capacity(map.len());
        for (key, value) in map {
            let Some(name) = key.as_str() else {
                return Err(source.error(
                    key.mark,
                    format!(
                        "the keywords of a {owner} must be strings, got {} ({})",
                        key.describe(),
                        key.key_text()
                    ),
                ));
            };
            entries.push(Entry { name, key, value });
        }
        Ok(Self {
            source,
            owner,
            mark: node.mark,
            entries,
        })
    }

    /// The file being loaded.
    pub(crate) fn source(&self) -> &'a SourceFile {
        self.source
    }

    /// Where the object starts.
    pub(crate) fn location(&self) -> Location {
        self.source.location(self.mark)
    }

    /// All keywords, in order.
    pub(crate) fn entries(&self) -> &[Entry<'a>] {
        &self.entries
    }

    /// The keyword `name`, if present.
    pub(crate) fn entry(&self, name: &str) -> Option<&Entry<'a>> {
        self.entries.iter().find(|entry| entry.name == name)
    }

    /// The value of keyword `name`, if present (null included).
    pub(crate) fn node(&self, name: &str) -> Option<&'a Node> {
        self.entry(name).map(|entry| entry.value)
    }

    /// Whether keyword `name` is present.
    pub(crate) fn has(&self, name: &str) -> bool {
        self.entry(name).is_some()
    }

    /// ansible-core's warning for a variable named `name` at `mark` when Ansible
    /// reserves the name, shown with the run's next result (ansible-core warns when it
    /// gathers the variables).
    pub(crate) fn warn_if_reserved(&self, name: &str, mark: Mark) {
        warn_if_reserved(self.source, name, mark);
    }

    /// An error at `mark`.
    pub(crate) fn error_at(&self, mark: Mark, message: impl Into<String>) -> PlaybookError {
        self.source.error(mark, message)
    }

    /// An error at the start of the object.
    pub(crate) fn error(&self, message: impl Into<String>) -> PlaybookError {
        self.source.error(self.mark, message)
    }

    /// Refuses the first keyword that `known` does not accept, as Ansible does.
    pub(crate) fn reject_unknown(&self, known: impl Fn(&str) -> bool) -> Result<(), PlaybookError> {
        match self.entries.iter().find(|entry| !known(entry.name)) {
            Some(entry) => Err(self.error_at(
                entry.key.mark,
                format!(
                    "'{}' is not a valid attribute for a {}",
                    entry.name, self.owner
                ),
            )),
            None => Ok(()),
        }
    }

    /// The value of `name` as JSON; absent and null both give `None` (the keyword is
    /// unset and inherits).
    pub(crate) fn value(&self, name: &str) -> Option<Value> {
        self.node(name)
            .filter(|node| !node.is_null())
            .map(Node::to_json)
    }

    /// The value of `name` as a string; numbers and booleans become their text.
    pub(crate) fn string(&self, name: &str) -> Result<Option<String>, PlaybookError> {
        let Some(node) = self.node(name).filter(|node| !node.is_null()) else {
            return Ok(None);
        };
        match node.scalar_text() {
            Some(text) => Ok(Some(text)),
            None => Err(self.error_at(
                node.mark,
                format!(
                    "the field '{name}' should be a string, got {}",
                    node.describe()
                ),
            )),
        }
    }

    /// The value of `name` as a variable name (`register`).
    pub(crate) fn identifier(&self, name: &str) -> Result<Option<String>, PlaybookError> {
        let text = self.string(name)?;
        match (text, self.node(name)) {
            (Some(text), Some(node)) if !is_identifier(&text) => {
                let value = node.to_json();
                let of_type = if value.is_string() {
                    String::new()
                } else {
                    format!(
                        " of type '{}'",
                        sandball_pycompat::pyfmt::short_type_name(&value)
                    )
                };
                Err(self.error_at(
                    node.mark,
                    format!("Invalid '{name}' specified: Invalid variable name '{text}'{of_type}."),
                ))
            }
            (text, _) => Ok(text),
        }
    }

    /// `register`: a variable name, or (from ansible-core 2.21) a mapping of variable
    /// names to the expressions that give their values (register projections), in
    /// order. Before 2.21 a mapping is refused as ansible-core 2.19 refuses it.
    pub(crate) fn register(&self) -> Result<(Option<String>, Projections), PlaybookError> {
        let Some((node, entries)) = self
            .node("register")
            .and_then(|node| node.as_map().map(|entries| (node, entries)))
        else {
            return Ok((self.identifier("register")?, Vec::new()));
        };
        let at = entries.first().map_or(node.mark, |(key, _)| key.mark);
        if !crate::compat::core().at_least(21) {
            return Err(self.error_at(
                at,
                "Invalid 'register' specified: Invalid variable name of type 'dict'.",
            ));
        }
        let projections = entries
            .iter()
            .map(|(key, value)| {
                let name = key.key_text();
                if is_identifier(&name) {
                    Ok((name, value.to_json()))
                } else {
                    Err(self.error_at(
                        key.mark,
                        format!("Invalid 'register' specified: Invalid variable name '{name}'."),
                    ))
                }
            })
            .collect::<Result<_, _>>()?;
        Ok((None, projections))
    }

    /// The value of `name` as a list of names (`notify`, `listen`): one string is a
    /// one-element list.
    pub(crate) fn name_list(&self, name: &str) -> Result<Vec<String>, PlaybookError> {
        let Some(node) = self.node(name).filter(|node| !node.is_null()) else {
            return Ok(Vec::new());
        };
        if let Some(text) = node.scalar_text() {
            return Ok(vec![text]);
        }
        self.scalar_texts(node, name, "a string or a list of strings")
    }

    /// `tags`: a list, or a comma-separated string whose parts are trimmed.
    pub(crate) fn tags(&self) -> Result<Vec<String>, PlaybookError> {
        let Some(node) = self.node("tags").filter(|node| !node.is_null()) else {
            return Ok(Vec::new());
        };
        if let Some(text) = node.as_str() {
            return Ok(text.split(',').map(|tag| tag.trim().to_owned()).collect());
        }
        self.scalar_texts(node, "tags", "a list or a comma-separated string")
    }

    /// The texts of a list of scalars.
    fn scalar_texts(
        &self,
        node: &Node,
        name: &str,
        expected: &str,
    ) -> Result<Vec<String>, PlaybookError> {
        let Some(items) = node.as_seq() else {
            return Err(self.error_at(
                node.mark,
                format!(
                    "the field '{name}' must be {expected}, got {}",
                    node.describe()
                ),
            ));
        };
        items
            .iter()
            .map(|item| {
                item.scalar_text().ok_or_else(|| {
                    self.error_at(
                        item.mark,
                        format!(
                            "the field '{name}' must be {expected}, but an item is {}",
                            item.describe()
                        ),
                    )
                })
            })
            .collect()
    }

    /// A conditional keyword (`when`, `changed_when`, `failed_when`, `break_when`): a
    /// string or boolean, or a list of them; one value becomes a one-element list.
    pub(crate) fn conditionals(&self, name: &str) -> Result<Vec<Value>, PlaybookError> {
        let Some(node) = self.node(name).filter(|node| !node.is_null()) else {
            return Ok(Vec::new());
        };
        let items: Vec<&Node> = match node.as_seq() {
            Some(items) => items.iter().collect(),
            None => vec![node],
        };
        items
            .into_iter()
            .map(|item| {
                if item.is_scalar() {
                    Ok(item.to_json())
                } else {
                    Err(self.error_at(
                        item.mark,
                        format!(
                            "the field '{name}' must be a conditional (a string or a boolean) or a list of them, got {}",
                            item.describe()
                        ),
                    ))
                }
            })
            .collect()
    }

    /// `vars`: a mapping, or a list of mappings merged in order; every name must be a
    /// valid variable name, and one Ansible reserves draws a warning.
    pub(crate) fn vars(&self) -> Result<Map<String, Value>, PlaybookError> {
        let Some(node) = self.node("vars").filter(|node| !node.is_null()) else {
            return Ok(Map::new());
        };
        let wrong = |node: &Node| {
            self.error_at(
                node.mark,
                format!(
                    "vars in a {} must be a mapping or a list of mappings, got {}",
                    self.owner,
                    node.describe()
                ),
            )
        };
        let mappings: Vec<&[(Node, Node)]> = match &node.value {
            Yaml::Map(entries) => vec![entries],
            Yaml::Seq(items) => items
                .iter()
                .map(|item| item.as_map().ok_or_else(|| wrong(item)))
                .collect::<Result<_, _>>()?,
            _ => return Err(wrong(node)),
        };
        let mut vars = Map::new();
        for (key, value) in mappings.into_iter().flatten() {
            match key.as_str() {
                Some(name) if is_identifier(name) => {
                    self.warn_if_reserved(name, key.mark);
                    vars.insert(name.to_owned(), value.to_json());
                }
                _ => {
                    return Err(self.error_at(
                        key.mark,
                        format!(
                            "invalid variable name in vars specified for {}: '{}' is not a valid variable name",
                            self.owner,
                            key.key_text()
                        ),
                    ));
                }
            }
        }
        Ok(vars)
    }
}

/// ansible-core's warning for a variable named `name` at `mark` of `source` when
/// Ansible reserves the name, shown with the run's next result.
pub(crate) fn warn_if_reserved(source: &SourceFile, name: &str, mark: Mark) {
    if crate::inventory::vars::is_reserved_name(name) {
        crate::template::warn(format!(
            "{}\n{}",
            crate::inventory::vars::reserved_name_warning(name),
            source.location(mark).origin_block(true)
        ));
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::json;

    use super::*;
    use crate::yaml;

    fn with_fields<T>(text: &str, check: impl FnOnce(Result<Fields<'_>, PlaybookError>) -> T) -> T {
        let source = SourceFile::new(Path::new("f.yml"), text);
        let root = match yaml::load(&source) {
            Ok(document) => document.root,
            Err(error) => panic!("{error}"),
        };
        let Some(root) = root else { panic!("empty") };
        check(Fields::new(&source, &root, "Task"))
    }

    fn first_line(error: PlaybookError) -> String {
        error
            .to_string()
            .lines()
            .next()
            .unwrap_or_default()
            .to_owned()
    }

    #[test]
    fn identifiers() {
        assert!(is_identifier("a_b1"));
        assert!(is_identifier("_x"));
        assert!(!is_identifier("1a"));
        assert!(!is_identifier("a-b"));
        assert!(!is_identifier(""));
        assert!(!is_identifier("for"));
        assert!(!is_identifier("é"));
    }

    #[test]
    fn refuses_non_mappings_and_non_string_keys() {
        let error = with_fields("- a\n", |fields| fields.err());
        assert_eq!(
            error.map(first_line).as_deref(),
            Some("ERROR! a Task must be a mapping, got a list in 'f.yml': line 1, column 1")
        );
        let error = with_fields("name: x\n1: y\n", |fields| fields.err());
        assert_eq!(
            error.map(first_line).as_deref(),
            Some(
                "ERROR! the keywords of a Task must be strings, got an integer (1) in 'f.yml': line 2, column 1"
            )
        );
    }

    #[test]
    fn unknown_keywords_are_named_at_their_key() {
        let error = with_fields("name: x\nfoo: 1\n", |fields| {
            fields
                .and_then(|f| f.reject_unknown(|name| name == "name"))
                .err()
        });
        assert_eq!(
            error.map(first_line).as_deref(),
            Some("ERROR! 'foo' is not a valid attribute for a Task in 'f.yml': line 2, column 1")
        );
    }

    #[test]
    fn strings_and_values() {
        with_fields("a: 5\nb: yes\nc: [1]\nd:\ne: {x: 1}\n", |fields| {
            let Ok(fields) = fields else { panic!("fields") };
            assert_eq!(fields.string("a").ok().flatten().as_deref(), Some("5"));
            assert_eq!(fields.string("b").ok().flatten().as_deref(), Some("True"));
            assert_eq!(fields.string("d").ok().flatten(), None);
            assert_eq!(fields.string("zz").ok().flatten(), None);
            assert_eq!(
                fields.string("c").err().map(first_line).as_deref(),
                Some(
                    "ERROR! the field 'c' should be a string, got a list in 'f.yml': line 3, column 4"
                )
            );
            assert_eq!(fields.value("e"), Some(json!({"x": 1})));
            assert_eq!(fields.value("d"), None);
            assert!(fields.has("d"));
            assert!(!fields.has("zz"));
            assert_eq!(fields.location().to_string(), "f.yml:1:1");
        });
    }

    #[test]
    fn name_lists_and_tags() {
        with_fields(
            "notify: restart x\nlisten: [a, 2]\ntags: 'a, b ,c'\nbad: {x: 1}\nnested: [[a]]\n",
            |fields| {
                let Ok(fields) = fields else { panic!("fields") };
                assert_eq!(
                    fields.name_list("notify").ok(),
                    Some(vec!["restart x".to_owned()])
                );
                assert_eq!(
                    fields.name_list("listen").ok(),
                    Some(vec!["a".to_owned(), "2".to_owned()])
                );
                assert_eq!(fields.name_list("none").ok(), Some(vec![]));
                assert_eq!(
                    fields.tags().ok(),
                    Some(vec!["a".to_owned(), "b".to_owned(), "c".to_owned()])
                );
                assert_eq!(
                    fields.name_list("bad").err().map(first_line).as_deref(),
                    Some(
                        "ERROR! the field 'bad' must be a string or a list of strings, got a mapping in 'f.yml': line 4, column 6"
                    )
                );
                assert_eq!(
                    fields.name_list("nested").err().map(first_line).as_deref(),
                    Some(
                        "ERROR! the field 'nested' must be a string or a list of strings, but an item is a list in 'f.yml': line 5, column 10"
                    )
                );
            },
        );
        with_fields("tags: [a, 1, true]\n", |fields| {
            let tags = fields.and_then(|f| f.tags()).ok();
            assert_eq!(
                tags,
                Some(vec!["a".to_owned(), "1".to_owned(), "True".to_owned()])
            );
        });
        with_fields("tags: 5\n", |fields| {
            let error = fields.and_then(|f| f.tags()).err().map(first_line);
            assert_eq!(
                error.as_deref(),
                Some(
                    "ERROR! the field 'tags' must be a list or a comma-separated string, got an integer in 'f.yml': line 1, column 7"
                )
            );
        });
    }

    #[test]
    fn conditionals_become_lists() {
        with_fields(
            "when: x is defined\nchanged_when: false\nfailed_when: [a, b]\nbad: [{x: 1}]\n",
            |fields| {
                let Ok(fields) = fields else { panic!("fields") };
                assert_eq!(
                    fields.conditionals("when").ok(),
                    Some(vec![json!("x is defined")])
                );
                assert_eq!(
                    fields.conditionals("changed_when").ok(),
                    Some(vec![json!(false)])
                );
                assert_eq!(
                    fields.conditionals("failed_when").ok(),
                    Some(vec![json!("a"), json!("b")])
                );
                assert_eq!(fields.conditionals("missing").ok(), Some(vec![]));
                assert_eq!(
                    fields.conditionals("bad").err().map(first_line).as_deref(),
                    Some(
                        "ERROR! the field 'bad' must be a conditional (a string or a boolean) or a list of them, got a mapping in 'f.yml': line 4, column 7"
                    )
                );
            },
        );
    }

    #[test]
    fn vars_from_a_mapping_or_a_list_of_mappings() {
        with_fields("vars: {a: 1, b: [x]}\n", |fields| {
            assert_eq!(
                fields.and_then(|f| f.vars()).ok(),
                Some(
                    json!({"a": 1, "b": ["x"]})
                        .as_object()
                        .cloned()
                        .unwrap_or_default()
                )
            );
        });
        with_fields("vars: [{a: 1}, {a: 2, b: 3}]\n", |fields| {
            assert_eq!(
                fields.and_then(|f| f.vars()).ok(),
                Some(
                    json!({"a": 2, "b": 3})
                        .as_object()
                        .cloned()
                        .unwrap_or_default()
                )
            );
        });
        with_fields("vars: x\n", |fields| {
            assert_eq!(
                fields
                    .and_then(|f| f.vars())
                    .err()
                    .map(first_line)
                    .as_deref(),
                Some(
                    "ERROR! vars in a Task must be a mapping or a list of mappings, got a string in 'f.yml': line 1, column 7"
                )
            );
        });
        with_fields("vars:\n  ok: 1\n  not-ok: 2\n", |fields| {
            assert_eq!(
                fields
                    .and_then(|f| f.vars())
                    .err()
                    .map(first_line)
                    .as_deref(),
                Some(
                    "ERROR! invalid variable name in vars specified for Task: 'not-ok' is not a valid variable name in 'f.yml': line 3, column 3"
                )
            );
        });
    }

    #[test]
    fn register_must_be_a_variable_name() {
        with_fields("register: out\nbad: my-out\n", |fields| {
            let Ok(fields) = fields else { panic!("fields") };
            assert_eq!(
                fields.identifier("register").ok().flatten().as_deref(),
                Some("out")
            );
            assert_eq!(
                fields.identifier("bad").err().map(first_line).as_deref(),
                Some(
                    "ERROR! Invalid 'bad' specified: Invalid variable name 'my-out'. in 'f.yml': line 2, column 6"
                )
            );
        });
    }
}
