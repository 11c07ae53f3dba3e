//! An action's result ([`TaskResult`]: what Ansible sees of it, and what only sandball's
//! callbacks read beside it), building one (a success with its fields, warnings and the
//! help shown after them), and a result without its internal (`_ansible_*`) keys, as
//! ansible-core shows and registers it.

use super::Cause;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// What an action or a module run gives the executor, and the executor its callbacks:
/// the result Ansible sees ([`TaskResult::fields`], which it dereferences to: what
/// `register` keeps, what the callbacks show), and beside it what only sandball's
/// callbacks read, which is never registered.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TaskResult {
    /// The result as Ansible sees it.
    pub fields: Map<String, Value>,
    /// The help text ansible-core gives a failure, which the default callback shows
    /// after it, said again as the cause of the task's failure ("<<< caused by >>>").
    pub error_help: Option<String>,
    /// What a failure came from in the task's text: the default callback shows its
    /// origin below the task's, as ansible-core 2.19 shows the origin of the value that
    /// failed.
    pub error_cause: Option<Cause>,
    /// The help text shown after one of its `warnings` (by the warning's text), as
    /// ansible-core 2.19's warnings carry it.
    pub warning_help: BTreeMap<String, String>,
    /// The line the default callback shows for each of its `deprecations` (see
    /// [`super::summaries::deprecations`]), in their order.
    pub deprecations_shown: Vec<String>,
    /// The action keeps its result from the verbose output (`gather_facts`, a module's
    /// facts alone).
    pub verbose_override: bool,
    /// Where a delegated task ran: the host it was delegated to and its address.
    pub delegated: Option<Delegated>,
}

/// The host a task was delegated to, as its result says it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delegated {
    /// Its inventory name.
    pub host: String,
    /// Its address (`ansible_host`, else its name).
    pub address: String,
}

/// The key ansible-core's result carries [`TaskResult::verbose_override`] under: its
/// `json` callback shows it, and its action plugins set it.
const VERBOSE_OVERRIDE: &str = "_ansible_verbose_override";

/// The key ansible-core's result carries [`TaskResult::delegated`] under, which its
/// `json` callback shows.
const DELEGATED_VARS: &str = "_ansible_delegated_vars";

/// The keys a result's controller-side fields travel under to a Python action plugin
/// and back ([`TaskResult::to_wire`]): a plugin returns a module's result as it got it.
/// Nowhere else are they keys.
const ERROR_HELP: &str = "_ansible_error_help";
const ERROR_CAUSE: &str = "_ansible_error_cause";
const WARNING_HELP: &str = "_ansible_warning_help";
const DEPRECATIONS_SHOWN: &str = "_ansible_deprecations_shown";

impl From<Map<String, Value>> for TaskResult {
    fn from(fields: Map<String, Value>) -> Self {
        TaskResult {
            fields,
            ..TaskResult::default()
        }
    }
}

impl std::ops::Deref for TaskResult {
    type Target = Map<String, Value>;
    fn deref(&self) -> &Map<String, Value> {
        &self.fields
    }
}

impl std::ops::DerefMut for TaskResult {
    fn deref_mut(&mut self) -> &mut Map<String, Value> {
        &mut self.fields
    }
}

impl TaskResult {
    /// The result as ansible-core's callbacks that keep whole results (`json`, an
    /// ansible-runner event) show it: its fields, and the internal keys ansible-core
    /// shows there (`_ansible_verbose_override`, `_ansible_delegated_vars`).
    pub fn shown(&self) -> Map<String, Value> {
        let mut m = self.fields.clone();
        if self.verbose_override {
            m.insert(VERBOSE_OVERRIDE.into(), Value::Bool(true));
        }
        if let Some(d) = &self.delegated {
            m.insert(
                DELEGATED_VARS.into(),
                serde_json::json!({"ansible_host": d.address, "ansible_delegated_host": d.host}),
            );
        }
        m
    }

    /// The result as a Python action plugin gets it (a module run it asked for): its
    /// fields, and beside them what they do not say under the keys
    /// [`TaskResult::from_wire`] reads back, for the plugin returns the module's
    /// result as it got it.
    pub fn to_wire(&self) -> Map<String, Value> {
        let mut m = self.shown();
        if let Some(help) = &self.error_help {
            m.insert(ERROR_HELP.into(), Value::String(help.clone()));
        }
        if let Some(cause) = &self.error_cause {
            m.insert(ERROR_CAUSE.into(), cause.to_value());
        }
        if !self.warning_help.is_empty() {
            m.insert(WARNING_HELP.into(), serde_json::json!(self.warning_help));
        }
        if !self.deprecations_shown.is_empty() {
            m.insert(
                DEPRECATIONS_SHOWN.into(),
                serde_json::json!(self.deprecations_shown),
            );
        }
        m
    }

    /// The result a Python action plugin returned: its fields, and what it says under
    /// the keys [`TaskResult::to_wire`] writes (`_ansible_verbose_override`, as
    /// ansible-core's own plugins set it, among them).
    pub fn from_wire(mut fields: Map<String, Value>) -> TaskResult {
        let text = |v: &Value| v.as_str().map(str::to_string);
        let error_help = fields.remove(ERROR_HELP).as_ref().and_then(text);
        let error_cause = (fields.remove(ERROR_CAUSE).as_ref()).and_then(Cause::from_value);
        let warning_help = match fields.remove(WARNING_HELP) {
            Some(Value::Object(h)) => h
                .iter()
                .filter_map(|(w, help)| Some((w.clone(), text(help)?)))
                .collect(),
            _ => BTreeMap::new(),
        };
        let deprecations_shown = match fields.remove(DEPRECATIONS_SHOWN) {
            Some(Value::Array(lines)) => lines.iter().filter_map(text).collect(),
            _ => Vec::new(),
        };
        let verbose_override = fields.remove(VERBOSE_OVERRIDE) == Some(Value::Bool(true));
        let delegated = fields.remove(DELEGATED_VARS).and_then(|d| {
            let host = text(d.get("ansible_delegated_host")?)?;
            let address = d.get("ansible_host").and_then(text);
            Some(Delegated {
                address: address.unwrap_or_else(|| host.clone()),
                host,
            })
        });
        TaskResult {
            fields,
            error_help,
            error_cause,
            warning_help,
            deprecations_shown,
            verbose_override,
            delegated,
        }
    }

    /// The same result with `fields` in place of its fields, and every text beside them
    /// passed through `text` (as the callbacks mask what the vault decrypted).
    pub fn with_fields(
        &self,
        fields: Map<String, Value>,
        text: impl Fn(&str) -> String,
    ) -> TaskResult {
        let error_cause = self.error_cause.as_ref().map(|c| Cause {
            steps: c
                .steps
                .iter()
                .map(|(words, at)| {
                    let at = at.as_ref().map(|(kind, written)| (*kind, text(written)));
                    (text(words), at)
                })
                .collect(),
        });
        TaskResult {
            fields,
            error_help: self.error_help.as_deref().map(&text),
            error_cause,
            warning_help: (self.warning_help.iter())
                .map(|(w, help)| (text(w), text(help)))
                .collect(),
            deprecations_shown: self.deprecations_shown.iter().map(|d| text(d)).collect(),
            verbose_override: self.verbose_override,
            delegated: self.delegated.as_ref().map(|d| Delegated {
                host: text(&d.host),
                address: text(&d.address),
            }),
        }
    }

    /// Records the help text shown after the result's warning `w`.
    pub fn warning_help(&mut self, w: &str, help: &str) {
        self.warning_help.insert(w.to_string(), help.to_string());
    }
}

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

/// `{"changed": false}` plus the given fields.
pub fn ok_with(fields: Value) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("changed".into(), Value::Bool(false));
    if let Value::Object(f) = fields {
        m.extend(f);
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::action::CauseAt;
    use serde_json::json;

    #[test]
    fn callbacks_see_ansibles_keys_and_python_plugins_every_field() {
        let mut r = TaskResult::from(ok_with(json!({"warnings": ["w"]})));
        r.error_help = Some("See the output.".into());
        r.error_cause = Some(Cause {
            steps: vec![("bad".into(), Some((CauseAt::Arg, "msg".into())))],
        });
        r.warning_help("w", "Do this.");
        r.deprecations_shown = vec!["old.".into()];
        r.verbose_override = true;
        r.delegated = Some(Delegated {
            host: "db1".into(),
            address: "10.0.0.5".into(),
        });
        // Shown as ansible-core shows a whole result: its two keys, nothing of sandball's.
        assert_eq!(
            Value::Object(r.shown()),
            json!({
                "changed": false,
                "warnings": ["w"],
                "_ansible_verbose_override": true,
                "_ansible_delegated_vars": {"ansible_host": "10.0.0.5", "ansible_delegated_host": "db1"},
            })
        );
        // A Python action plugin returns what it got: every field comes back.
        assert_eq!(TaskResult::from_wire(r.to_wire()), r);
        // A plain result has none of them.
        let plain = TaskResult::from(ok_with(json!({})));
        assert_eq!(plain.to_wire(), plain.fields);
        assert_eq!(TaskResult::from_wire(plain.fields.clone()), plain);
    }
}
