//! Templating: Ansible's Templar on minijinja.
//!
//! [`Templar`] renders the strings of a task (and evaluates `when`-style expressions)
//! against the [`Vars`] of one task on one host. Variables from the playbook and
//! inventory are *trusted*: their strings are templates, rendered lazily when used.
//! Module results and facts are *data* (Ansible's "unsafe"): never templated again.
//! The environment carries Ansible's filters and tests and its undefined semantics.

mod backslashes;
mod conditional;
mod convert;
pub(crate) mod crypt;
pub mod encoding;
mod engine_errors;
mod environment;
pub(crate) mod error;
mod file_vars;
mod filters;
mod jinja_globals;
mod jinja_tests;
pub mod lookups;
mod marked;
mod methods;
mod operands;
mod overrides;
mod percent;
pub(crate) mod plugin_calls;
mod protomatter;
mod pyrandom;
pub(crate) mod python;
mod scope;
mod templar;
pub(crate) mod trust;
mod undefined;
mod vars;
mod vaulted;
mod view;
mod warnings;

pub use environment::FileOptions;
pub use error::TemplateError;
pub(crate) use error::UNTRUSTED;
pub(crate) use file_vars::file_vars;
pub(crate) use scope::{is_possibly_all_template, is_template};
pub use templar::Templar;
pub(crate) use trust::{has_unsafe_marks, untrusted, without_unsafe_marks};
pub use vars::{HostVarsSource, Var, Vars};
pub(crate) use view::unsafe_mark;
pub use warnings::{About, Deprecation, Notice, Warning, take_warnings};
pub(crate) use warnings::{deprecate, deprecations_of, warn, warn_about};

/// Python's `str()` of a JSON value (`True`, `[1, 'a']`, `{'k': None}`), as Ansible shows
/// values in text (e.g. `ansible-inventory --graph --vars`).
pub fn python_str(value: &serde_json::Value) -> Result<String, TemplateError> {
    python::py_str(&convert::from_json(value)).map_err(|e| TemplateError::from_engine(&e, ""))
}

/// A JSON value written as YAML the way PyYAML's `yaml.dump(..., default_flow_style=False)`
/// writes it (keys sorted, block style, indent 2).
pub fn yaml_dump(value: &serde_json::Value) -> Result<String, TemplateError> {
    filters::yaml_dump(&convert::from_json(value)).map_err(|e| TemplateError::from_engine(&e, ""))
}

/// A result as ansible-core's callbacks show it with `callback_result_format = yaml`,
/// every line indented by `column`.
pub fn callback_yaml(value: &serde_json::Value, column: usize) -> Result<String, TemplateError> {
    filters::callback_yaml(&convert::from_json(value), column)
        .map_err(|e| TemplateError::from_engine(&e, ""))
}

/// The value of Ansible's `omit` variable: a module argument templated to exactly this
/// string must be removed from the module's arguments before the module runs.
pub const OMIT: &str = "__omit_place_holder__5bb7c4b2d3f1a0e9c8d7";

/// `v` without the values that are `omit` (in its collections too); `None` when it is
/// `omit` itself.
pub(crate) fn strip_omit(v: serde_json::Value) -> Option<serde_json::Value> {
    match v {
        serde_json::Value::String(s) if s == OMIT => None,
        serde_json::Value::Object(m) => Some(serde_json::Value::Object(
            m.into_iter()
                .filter_map(|(k, v)| strip_omit(v).map(|v| (k, v)))
                .collect(),
        )),
        serde_json::Value::Array(a) => Some(serde_json::Value::Array(
            a.into_iter().filter_map(strip_omit).collect(),
        )),
        other => Some(other),
    }
}
