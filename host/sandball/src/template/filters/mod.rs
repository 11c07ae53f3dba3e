//! Ansible's filters, added to (or replacing) minijinja's builtin Jinja filters.

pub(crate) mod collections;
mod encoding;
mod html;
mod json;
mod math;
mod misc;
mod path;
mod regex;
mod sequences;
pub(crate) mod strings;
mod types;
pub(crate) use regex::re_error;
pub(crate) use sequences::GroupTuple;
pub(crate) use types::python_type;
mod yaml;

use crate::template::undefined::Plugins;

pub(crate) use yaml::{callback_yaml, yaml_dump};

/// A parameter Python lets be given by position or by name (`hash('md5')`,
/// `hash(hashtype='md5')`): the positional value, else the keyword one. The caller
/// still checks that no other keyword was given.
pub(crate) fn positional_or_named<'k, T>(
    positional: Option<T>,
    kwargs: &'k minijinja::value::Kwargs,
    name: &'k str,
) -> Result<Option<T>, minijinja::Error>
where
    Option<T>: minijinja::value::ArgType<'k, Output = Option<T>>,
{
    match positional {
        Some(value) => Ok(Some(value)),
        None => kwargs.get(name),
    }
}

/// A Python function's parameters after the value (`truncate(12, end='~')`), each
/// given by position or by name: one entry per name, `None` where it was not given. A
/// name given both ways, more positional arguments than names, or a keyword of no
/// parameter is an error, as in Python.
pub(crate) fn python_args<const N: usize>(
    function: &str,
    names: [&str; N],
    args: &[minijinja::Value],
    kwargs: &minijinja::value::Kwargs,
) -> Result<[Option<minijinja::Value>; N], minijinja::Error> {
    if args.len() > N {
        return Err(minijinja::Error::new(
            minijinja::ErrorKind::InvalidOperation,
            format!(
                "{function}() takes at most {} arguments ({} given)",
                N + 1,
                args.len() + 1
            ),
        ));
    }
    let mut values: [Option<minijinja::Value>; N] = std::array::from_fn(|_| None);
    for (i, name) in names.into_iter().enumerate() {
        values[i] = match (args.get(i), kwargs.get::<Option<minijinja::Value>>(name)?) {
            (Some(_), Some(_)) => {
                return Err(minijinja::Error::new(
                    minijinja::ErrorKind::InvalidOperation,
                    format!("{function}() got multiple values for argument '{name}'"),
                ));
            }
            (given, named) => given.cloned().or(named),
        };
    }
    kwargs.assert_all_used()?;
    Ok(values)
}

/// Adds every filter (and the `dict` global, which Ansible's Jinja accepts pairs for).
pub(crate) fn register(env: &mut Plugins<'_>) {
    collections::register(env);
    encoding::register(env);
    html::register(env);
    json::register(env);
    math::register(env);
    misc::register(env);
    path::register(env);
    regex::register(env);
    sequences::register(env);
    strings::register(env);
    types::register(env);
    yaml::register(env);
}

#[cfg(test)]
pub(crate) mod testing {
    //! Renders filter expressions with the full environment, for the filter tests.

    use serde_json::Value;

    use crate::template::{Templar, Vars};

    /// Evaluates `expr` with no variables.
    pub(crate) fn eval(expr: &str) -> Value {
        eval_with(expr, &Vars::new())
    }

    /// Evaluates `expr` against `vars`.
    pub(crate) fn eval_with(expr: &str, vars: &Vars) -> Value {
        match Templar::new().evaluate(expr, vars) {
            Ok(value) => value,
            Err(err) => panic!("{expr}: {err}"),
        }
    }

    /// The error message of evaluating `expr`.
    pub(crate) fn error(expr: &str) -> String {
        match Templar::new().evaluate(expr, &Vars::new()) {
            Ok(value) => panic!("{expr} succeeded with {value}"),
            Err(err) => err.to_string(),
        }
    }

    /// Renders `source` as text with no variables.
    pub(crate) fn render(source: &str) -> String {
        match Templar::new().render(source, &Vars::new()) {
            Ok(text) => text,
            Err(err) => panic!("{source}: {err}"),
        }
    }
}
