//! What the engine gives, as Ansible gives it: a bare expression's value, a native
//! result as JSON, and an engine error as the `TemplateError` ansible-core 2.19 words
//! (an undefined result named by its innermost undefined value, an attribute a defined
//! value lacks named by the value's type).

use std::sync::Arc;

use minijinja::Value;

use crate::template::convert::to_json;
use crate::template::error::TemplateError;
use crate::template::scope::{Scope, single_expression};

/// A bare expression's value, its error reported as [`engine_error`] reports it.
pub(super) fn eval(scope: &Arc<Scope>, expr: &str) -> Result<Value, TemplateError> {
    scope
        .eval_expression(expr)
        .map_err(|err| engine_error(scope, &err, expr))
}

/// The JSON form of a native result of `template` (the text that produced it is `source`,
/// and `as_template` is that text as a template that prints it).
pub(super) fn native(
    scope: &Arc<Scope>,
    value: &Value,
    source: &str,
    as_template: &str,
) -> Result<serde_json::Value, TemplateError> {
    if value.is_undefined() {
        return Err(undefined_result(scope, source, as_template));
    }
    to_json(value).map_err(|err| engine_error(scope, &err, source))
}

/// The error for a result that is undefined. Printing the expression in strict mode
/// fails with the engine's message naming the variable; that message is used.
pub(super) fn undefined_result(
    scope: &Arc<Scope>,
    source: &str,
    as_template: &str,
) -> TemplateError {
    let err = match scope.render_text(as_template) {
        Err(err) => err,
        Ok(_) => minijinja::Error::new(
            minijinja::ErrorKind::UndefinedError,
            format!("'{}' is undefined", source.trim()),
        ),
    };
    engine_error(scope, &err, source)
}

/// For `base.name` (or `base['name']`) where `base` is defined but has no `name`: the
/// message ansible-core 2.19 gives ("object of type 'dict' has no attribute 'name'").
fn missing_attribute(scope: &Arc<Scope>, expr: &str) -> Option<String> {
    let subscript = ["'", "\""].iter().find_map(|q| {
        let (base, key) = expr
            .strip_suffix(&format!("{q}]"))?
            .rsplit_once(&format!("[{q}"))?;
        Some((base, key))
    });
    let (base, name) = match subscript {
        Some(found) => found,
        None => expr.rsplit_once('.')?,
    };
    let word = |w: &str| {
        w.chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_')
            && w.chars().all(|c| c.is_alphanumeric() || c == '_')
    };
    if !word(name) || !base.split('.').all(word) {
        return None;
    }
    let value = scope.eval_expression(base).ok()?;
    if value.is_undefined() || value.is_none() {
        return None;
    }
    Some(format!(
        "object of type '{}' has no attribute '{name}'",
        super::filters::python_type(&value)
    ))
}

/// What the engine says of an undefined value found inside a result, naming nothing.
const UNNAMED_UNDEFINED: [&str; 2] = [
    "the result contains an undefined value",
    "an undefined value cannot be turned into text",
];

/// An engine error as a `TemplateError`. An undefined variable whose own template met
/// an undefined value is reported by the innermost such value, as ansible-core 2.19
/// reports it; an attribute a defined value lacks is named as it names it.
pub(super) fn engine_error(
    scope: &Arc<Scope>,
    err: &minijinja::Error,
    source: &str,
) -> TemplateError {
    let mut error = TemplateError::from_engine(err, source);
    // An undefined value inside a result (`[{'k': nope}]`) is named by the variable
    // that is undefined, as ansible-core names it.
    if let TemplateError::Undefined { detail, .. } = &mut error
        && UNNAMED_UNDEFINED.contains(&detail.as_str())
        && let Some(name) = scope
            .undefined_variable_in_template(source)
            .or_else(|| scope.undefined_variable(single_expression(source).unwrap_or(source)))
    {
        *detail = format!("'{name}' is undefined");
    }
    if let TemplateError::Render { detail, .. } = &mut error
        && detail.ends_with(super::error::MANDATORY)
        && let Some(name) = scope
            .undefined_variable_in_template(source)
            .or_else(|| scope.undefined_variable(single_expression(source).unwrap_or(source)))
    {
        *detail = detail.replace(
            super::error::MANDATORY,
            &format!("Mandatory variable '{name}' not defined."),
        );
    }
    if let TemplateError::Undefined { detail, inner, .. } = &mut error
        && let Some(expr) = detail
            .strip_prefix('\'')
            .and_then(|d| d.strip_suffix("' is undefined"))
    {
        if let Some((message, source)) = scope.undefined_root(expr) {
            *detail = message;
            *inner = Some(source);
        } else if let Some(message) = missing_attribute(scope, expr) {
            *detail = message;
        }
    }
    error
}
