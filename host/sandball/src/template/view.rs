//! Lazy views of JSON variables for the template engine: lists and mappings are exposed
//! without copying, and a trusted variable's strings are rendered only when read.
//!
//! This is where every variable's value enters the engine, so `!unsafe` values (carried in
//! JSON as `{"__ansible_unsafe": text}`, the form `ansible-inventory` prints) are unwrapped
//! here: they reach templates as their plain text, never templated, wherever they sit.

use std::fmt;
use std::sync::Arc;

use minijinja::Value;
use minijinja::value::{Enumerator, Object, ObjectRepr};

use crate::template::scope::{Scope, is_template};
use crate::yaml::UNSAFE_KEY;

/// One step into a JSON value.
#[derive(Clone, Debug)]
enum Step {
    Key(String),
    Index(usize),
}

/// Where a value sits: a variable and the keys and indices inside it (`a.b[0]`).
#[derive(Clone, Debug)]
pub(crate) struct Path {
    name: Arc<str>,
    steps: Vec<Step>,
}

impl Path {
    /// The top of variable `name`.
    pub(crate) fn root(name: &str) -> Path {
        Path {
            name: Arc::from(name),
            steps: Vec::new(),
        }
    }

    fn child(&self, step: Step) -> Path {
        let mut steps = Vec::with_capacity(self.steps.len() + 1);
        steps.extend(self.steps.iter().cloned());
        steps.push(step);
        Path {
            name: self.name.clone(),
            steps,
        }
    }

    /// The node this path designates in the variable's value.
    fn resolve<'a>(&self, root: &'a serde_json::Value) -> Option<&'a serde_json::Value> {
        self.steps.iter().try_fold(root, |node, step| match step {
            Step::Key(key) => node.as_object()?.get(key),
            Step::Index(index) => node.as_array()?.get(*index),
        })
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)?;
        for step in &self.steps {
            match step {
                Step::Key(key) => write!(f, ".{key}")?,
                Step::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

/// The engine value of the node at `path` inside `root`: scalars directly, collections as
/// lazy views. Trusted strings with templates are rendered; `None` means undefined.
pub(crate) fn value_at(
    scope: &Arc<Scope>,
    root: &Arc<serde_json::Value>,
    path: Path,
    trusted: bool,
) -> Option<Value> {
    let node = path.resolve(root)?;
    if unsafe_mark(node).is_some() {
        let inner = path.child(Step::Key(UNSAFE_KEY.to_string()));
        return value_at(scope, root, inner, false);
    }
    if let Some(text) = super::vaulted::vault_mark(node) {
        return Some(super::vaulted::undecryptable(text));
    }
    Some(match node {
        serde_json::Value::Null => Value::from(()),
        serde_json::Value::Bool(b) => Value::from(*b),
        serde_json::Value::Number(n) => number(n),
        serde_json::Value::String(s) if trusted && is_template(s) => {
            return scope.render_trusted(&path, s);
        }
        // Trusted text carries the engine's mark of it (see `trust.rs`).
        serde_json::Value::String(s) if trusted => Value::from_safe_string(s.clone()),
        serde_json::Value::String(s) => {
            if is_template(s) {
                untrusted_template_skipped();
            }
            Value::from(s.as_str())
        }
        serde_json::Value::Object(map) if trusted && map.keys().any(|k| is_template(k)) => {
            return templated_keys(scope, root, &path, map);
        }
        serde_json::Value::Array(_) | serde_json::Value::Object(_) => {
            Value::from_object(JsonView {
                scope: scope.clone(),
                root: root.clone(),
                path,
                trusted,
                map: node.is_object(),
            })
        }
    })
}

/// An untrusted string that holds a template is read as its text, never rendered; with
/// the experimental `_ANSIBLE_TEMPLAR_UNTRUSTED_TEMPLATE_BEHAVIOR=warning` ansible-core
/// warns that it skipped one, as this does (`ignore`, its default, says nothing).
fn untrusted_template_skipped() {
    let behavior = crate::config::settings().get("_ANSIBLE_TEMPLAR_UNTRUSTED_TEMPLATE_BEHAVIOR");
    if behavior == Some("warning") {
        super::warnings::warn(super::UNTRUSTED.to_string());
    }
}

/// The value inside an `!unsafe` mark (`{"__ansible_unsafe": value}`), if `node` is one.
pub(crate) fn unsafe_mark(node: &serde_json::Value) -> Option<&serde_json::Value> {
    match node {
        serde_json::Value::Object(map) if map.len() == 1 => map.get(UNSAFE_KEY),
        _ => None,
    }
}

/// A JSON number as an engine number.
pub(crate) fn number(n: &serde_json::Number) -> Value {
    if let Some(i) = n.as_i64() {
        Value::from(i)
    } else if let Some(u) = n.as_u64() {
        Value::from(u)
    } else {
        Value::from(n.as_f64().unwrap_or(f64::NAN))
    }
}

/// A trusted mapping whose keys are templates: its keys are rendered now (values stay
/// lazy), since lookups go by the rendered keys.
fn templated_keys(
    scope: &Arc<Scope>,
    root: &Arc<serde_json::Value>,
    path: &Path,
    map: &serde_json::Map<String, serde_json::Value>,
) -> Option<Value> {
    let mut entries = Vec::with_capacity(map.len());
    for key in map.keys() {
        let rendered = if is_template(key) {
            match scope.render_text(key) {
                Ok(text) => text,
                Err(err) => return Some(Value::from(err)),
            }
        } else {
            key.clone()
        };
        let child = path.child(Step::Key(key.clone()));
        let value = value_at(scope, root, child, true).unwrap_or(Value::UNDEFINED);
        entries.push((Value::from(rendered), value));
    }
    Some(Value::from_pairs(entries))
}

/// A list or mapping inside a variable, read in place.
struct JsonView {
    scope: Arc<Scope>,
    root: Arc<serde_json::Value>,
    path: Path,
    trusted: bool,
    map: bool,
}

impl fmt::Debug for JsonView {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "<{}>", self.path)
    }
}

impl JsonView {
    fn node(&self) -> Option<&serde_json::Value> {
        self.path.resolve(&self.root)
    }

    fn child(&self, step: Step) -> Option<Value> {
        value_at(&self.scope, &self.root, self.path.child(step), self.trusted)
    }
}

impl Object for JsonView {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        if self.map {
            ObjectRepr::Map
        } else {
            ObjectRepr::Seq
        }
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        if self.map {
            self.get_value_by_str(key.as_str()?)
        } else {
            self.child(Step::Index(key.as_usize()?))
        }
    }

    fn get_value_by_str(self: &Arc<Self>, key: &str) -> Option<Value> {
        if self.map {
            self.child(Step::Key(key.to_string()))
        } else {
            None
        }
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        match self.node() {
            Some(serde_json::Value::Object(map)) => {
                Enumerator::Values(map.keys().map(|k| Value::from(k.as_str())).collect())
            }
            Some(serde_json::Value::Array(items)) => Enumerator::Seq(items.len()),
            _ => Enumerator::Empty,
        }
    }

    fn enumerator_len(self: &Arc<Self>) -> Option<usize> {
        match self.node() {
            Some(serde_json::Value::Object(map)) => Some(map.len()),
            Some(serde_json::Value::Array(items)) => Some(items.len()),
            _ => Some(0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_display_like_expressions() {
        let path = Path::root("a")
            .child(Step::Key("b".into()))
            .child(Step::Index(2));
        assert_eq!(path.to_string(), "a.b[2]");
        let value = json!({"b": [0, 1, "two"]});
        assert_eq!(path.resolve(&value), Some(&json!("two")));
        assert_eq!(Path::root("a").child(Step::Index(0)).resolve(&value), None);
    }

    #[test]
    fn numbers_keep_their_kind() {
        assert!(number(&serde_json::Number::from(-3)).is_integer());
        assert!(number(&serde_json::Number::from(u64::MAX)).is_integer());
        let float = serde_json::Number::from_f64(1.5).map(|n| number(&n));
        assert_eq!(float, Some(Value::from(1.5)));
    }
}
