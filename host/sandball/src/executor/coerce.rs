//! A keyword's value as ansible-core coerces it: the value that applies (a level set
//! to `omit` does not set it), templated and read as a boolean, a whole number, a
//! number or a number of seconds, with a [`KeywordError`] in ansible-core's words for
//! a value that is not one.

use crate::executor::Run;
use crate::playbook::{Chain, Keyword};
use crate::plugins::action::integer;
use crate::template::{OMIT, TemplateError, Vars};
use sandball_pycompat::boolean::truthy;
use serde_json::Value;

/// Whether a keyword's value templates to `omit`: that level then does not set it,
/// and the keyword is inherited from the levels around it, as in Ansible.
pub(crate) fn omitted(run: &Run, vars: &Vars, v: &Value) -> bool {
    matches!(v, Value::String(s) if s.contains("omit") && crate::template::is_template(s))
        && matches!(run.templar.template(v, vars), Ok(Value::String(s)) if s == OMIT)
}

/// The value of keyword `k` that applies to the task: the innermost level's that sets
/// it, levels that set it to `omit` aside.
pub(crate) fn keyword<'a>(run: &Run, vars: &Vars, kw: &Chain<'a>, k: Keyword) -> Option<&'a Value> {
    kw.nearest_where(k, |v| !omitted(run, vars, v))
}

/// Keyword `k` (see [`keyword`]) templated and read as a boolean.
pub(crate) fn keyword_bool(
    run: &Run,
    vars: &Vars,
    kw: &Chain<'_>,
    k: Keyword,
    default: bool,
) -> Result<bool, KeywordError> {
    match keyword(run, vars, kw, k) {
        None => Ok(default),
        Some(v) => {
            let t = templated(run, vars, k.name(), v)?;
            truthy(Some(&t), default).map_err(|_| KeywordError::not_of_type(k.name(), t, "bool"))
        }
    }
}

/// Why a keyword's value could not be used, in ansible-core's words.
#[derive(Debug, thiserror::Error)]
pub(crate) enum KeywordError {
    /// The keyword's template could not be rendered.
    #[error("Error processing keyword '{keyword}': {}", .source.cause())]
    Template {
        /// The keyword as ansible-core names it (`async_val` for `async`).
        keyword: String,
        /// Why the template failed.
        #[source]
        source: TemplateError,
    },
    /// The value is not of the keyword's type (`bool`, `int`, `float`).
    #[error(
        "Error processing keyword '{keyword}': The value {} could not be converted to '{ty}'.",
        sandball_pycompat::pyfmt::py_repr(value)
    )]
    NotOfType {
        /// The keyword as ansible-core names it.
        keyword: String,
        /// Its templated value.
        value: Value,
        /// The type it must have.
        ty: &'static str,
    },
    /// A number of seconds (`async`, `poll`) below zero.
    #[error("{keyword} must be a whole number of seconds, got {value}")]
    NegativeSeconds {
        /// The keyword as ansible-core names it.
        keyword: String,
        /// The number given.
        value: i64,
    },
}

impl KeywordError {
    /// The failed result of a task whose keyword `keyword` could not be read, with
    /// what it came from where ansible-core chains it (a value not of the keyword's
    /// type: the keyword, then the value, both where the keyword is written, which the
    /// callback says as one step where ansible-core says two).
    pub(crate) fn task_failure(self, keyword: Keyword) -> crate::plugins::action::TaskResult {
        use crate::plugins::action::{Cause, CauseAt, TaskFailure};
        let cause = match &self {
            KeywordError::NotOfType { value, ty, .. } => Some(Cause {
                steps: vec![
                    (
                        format!("Error processing keyword '{}'", keyword.name()),
                        Some((CauseAt::Keyword, keyword.name().to_string())),
                    ),
                    (
                        format!(
                            "The value {} could not be converted to '{ty}'.",
                            sandball_pycompat::pyfmt::py_repr(value)
                        ),
                        Some((CauseAt::Keyword, keyword.name().to_string())),
                    ),
                ],
            }),
            _ => None,
        };
        TaskFailure {
            msg: format!("Task failed: {self}"),
            cause,
        }
        .result()
    }

    fn not_of_type(keyword: &str, value: Value, ty: &'static str) -> KeywordError {
        KeywordError::NotOfType {
            keyword: keyword.to_string(),
            value,
            ty,
        }
    }
}

/// A keyword's value templated; a failure is the keyword's.
fn templated(run: &Run, vars: &Vars, name: &str, spec: &Value) -> Result<Value, KeywordError> {
    run.templar
        .template(spec, vars)
        .map_err(|source| KeywordError::Template {
            keyword: name.to_string(),
            source,
        })
}

/// A keyword of ansible-core's `int` type (`retries`, `timeout`, `async`, `poll`),
/// templated: a whole number or text of one; errors worded as ansible-core's.
pub(crate) fn keyword_int(
    run: &Run,
    vars: &Vars,
    name: &str,
    spec: &Value,
) -> Result<i64, KeywordError> {
    let v = templated(run, vars, name, spec)?;
    integer(&v).ok_or_else(|| KeywordError::not_of_type(name, v, "int"))
}

/// A keyword of ansible-core's `int` type that is a number of seconds (`async`, `poll`).
pub(crate) fn keyword_seconds(
    run: &Run,
    vars: &Vars,
    name: &str,
    spec: &Value,
) -> Result<u64, KeywordError> {
    let n = keyword_int(run, vars, name, spec)?;
    u64::try_from(n).map_err(|_| KeywordError::NegativeSeconds {
        keyword: name.to_string(),
        value: n,
    })
}

/// A keyword of ansible-core's `float` type (`delay`, `loop_control.pause`), templated:
/// a number or text of one; errors worded as ansible-core's.
pub(crate) fn keyword_float(
    run: &Run,
    vars: &Vars,
    name: &str,
    spec: &Value,
) -> Result<f64, KeywordError> {
    let v = templated(run, vars, name, spec)?;
    match v
        .as_f64()
        .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
    {
        Some(n) => Ok(n),
        None => Err(KeywordError::not_of_type(name, v, "float")),
    }
}
