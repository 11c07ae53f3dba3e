//! Lookups in templates: the `lookup`, `query` and `q` functions (`wantlist`,
//! `errors`, undefined terms), the context they give a lookup (the template's
//! variables), and the constant terms holding templates that ansible-core 2.19 still
//! renders.

use minijinja::value::{Kwargs, Rest};
use minijinja::{Error, ErrorKind, State, Value};
use serde_json::Value as Json;

use super::{
    LookupContext, LookupError, Options, plain_variables, python_error, python_plugin, run,
};
use crate::template::convert::{ensure_defined, from_json, to_json};
use crate::template::undefined::Plugins;

/// The lookup context of a template call: variables from the template's state.
struct StateContext<'a, 'b> {
    state: &'a State<'a, 'b>,
}

impl StateContext<'_, '_> {
    /// The template's variables, by name.
    fn context(&self) -> Vec<(String, Value)> {
        self.state
            .known_variables()
            .into_iter()
            .filter_map(|name| self.state.lookup(&name).map(|v| (name.to_string(), v)))
            .collect()
    }
}

impl LookupContext for StateContext<'_, '_> {
    fn var_names(&self) -> Vec<String> {
        self.state
            .known_variables()
            .into_iter()
            .map(|n| n.to_string())
            .collect()
    }

    fn var(&self, name: &str) -> Option<Json> {
        self.state
            .lookup(name)
            .filter(|v| !v.is_undefined())
            .and_then(|v| to_json(&v).ok())
    }

    fn render(
        &self,
        text: &str,
        options: &crate::template::FileOptions,
        extra: &Options,
    ) -> Result<String, String> {
        let original = text;
        let (text, options) =
            crate::template::overrides::apply(text, options).map_err(|e| e.to_string())?;
        let mut context = self.context();
        context.extend(extra.iter().map(|(k, v)| (k.clone(), from_json(v))));
        let mut env = self.state.env().clone();
        crate::template::environment::configure(&mut env, &options).map_err(|e| e.to_string())?;
        let text = crate::template::percent::rewrite_template(text, env.syntax());
        let mut rendered = env
            .render_str(&text, Value::from_pairs(context))
            .map_err(|e| e.to_string())?;
        crate::template::overrides::restore_newlines(original, &mut rendered);
        Ok(rendered)
    }
}

/// The global function that renders a string constant holding a template given to a
/// lookup (see `percent.rs`, which rewrites the calls).
pub(crate) const CONST_TEMPLATE: &str = "__sandball_lookup_term";

/// Renders a lookup's constant term `text` with the template's variables, with
/// ansible-core 2.19's warning.
fn const_template(state: &State, text: String) -> Result<Value, Error> {
    crate::template::warn_about(
        "Jinja constant strings should not contain embedded templates. This feature will be \
         disabled by default in ansible-core 2.23.\n\nUse inline expressions, for example: \
         `msg: \"{{ lookup('env', '{{ a_var }}') }}\"` becomes `msg: \"{{ lookup('env', a_var) }}\"`\n"
            .to_string(),
        Some(crate::template::About::Part(text.clone())),
    );
    // What is undefined in it makes the term undefined, which the lookup then gets; one
    // `{{ expression }}` gives its native value (a list keeps its undefined items).
    let context = Value::from_pairs(StateContext { state }.context());
    if let Some(inner) = crate::template::scope::single_expression(&text)
        && let Ok(expr) = state.env().compile_expression(inner)
    {
        return match expr.eval(context) {
            Err(e) if e.kind() == ErrorKind::UndefinedError => Ok(Value::UNDEFINED),
            other => other,
        };
    }
    match state.env().render_str(&text, context) {
        Ok(rendered) => Ok(Value::from(rendered)),
        Err(e) if e.kind() == ErrorKind::UndefinedError => Ok(Value::UNDEFINED),
        Err(e) => Err(e),
    }
}

/// Registers `lookup`, `query` and `q`.
pub(crate) fn register(env: &mut Plugins<'_>) {
    env.taking_undefined()
        .add_function(CONST_TEMPLATE, const_template);
    env.taking_undefined().add_function("lookup", lookup);
    env.taking_undefined().add_function("query", query);
    env.taking_undefined().add_function("q", query);
}

/// The undefined term or option a lookup is given, which is its result, as ansible-core
/// 2.19 gives it (see `template/undefined.rs`); `env`'s `default` may be undefined (its
/// result when the variable is unset) and `first_found` takes undefined terms.
fn undefined_argument(name: &str, terms: &[Value], kwargs: &Kwargs) -> Option<Value> {
    match name {
        "first_found" => return None,
        "env" => return terms.iter().find(|t| t.is_undefined()).cloned(),
        // A Python plugin may accept undefined terms (see `python_marked`).
        _ if python_plugin(name) => return crate::template::undefined::undefined_in(&[], kwargs),
        _ => {}
    }
    crate::template::undefined::undefined_in(terms, kwargs)
}

/// What a lookup of a template gave.
enum Outcome {
    /// Its results (`None` when it failed and `errors` says to go on), and whether
    /// `wantlist` was given.
    Results(Option<Vec<Value>>, bool),
    /// An undefined value: the undefined term a Python plugin that does not accept them
    /// was given (see [`python_marked`]).
    Undefined(Value),
}

/// Runs a lookup of a template; `None` when it failed and `errors` says to go on (with
/// a warning for `warn`).
fn call(state: &State, name: &str, terms: &[Value], kwargs: &Kwargs) -> Result<Outcome, Error> {
    let wantlist: bool = kwargs.get::<Option<bool>>("wantlist")?.unwrap_or(false);
    let errors: String = kwargs
        .get::<Option<String>>("errors")?
        .unwrap_or_else(|| "strict".into());
    let mut options = serde_json::Map::new();
    for key in kwargs.args() {
        if key == "wantlist" || key == "errors" {
            continue;
        }
        let value: Value = kwargs.get(key)?;
        if value.is_undefined() && key == "default" {
            // As if not given (`default=undef()`).
            continue;
        }
        // Any other undefined option is an error naming what is undefined.
        ensure_defined(state, &value)?;
        options.insert(key.to_string(), to_json(&value)?);
    }
    let ran = if python_plugin(name) {
        let (terms, places) =
            crate::template::convert::to_json_marking_undefined(&Value::from(terms.to_vec()))?;
        let terms = match terms {
            Json::Array(terms) => terms,
            other => vec![other],
        };
        if places.is_empty() {
            run(name, &terms, &options, &StateContext { state })
                .map(|results| results.iter().map(from_json).collect())
        } else {
            match python_marked(state, name, &terms, &places, &options) {
                Ok(results) if results.is_undefined() => return Ok(Outcome::Undefined(results)),
                Ok(results) => Ok(match results.kind() {
                    minijinja::value::ValueKind::Seq => results.try_iter()?.collect(),
                    _ => vec![results],
                }),
                Err(e) => Err(e),
            }
        }
    } else {
        let terms: Vec<Json> = terms.iter().map(to_json).collect::<Result<_, _>>()?;
        run(name, &terms, &options, &StateContext { state })
            .map(|results| results.iter().map(from_json).collect())
    };
    match ran {
        Ok(results) => Ok(Outcome::Results(Some(results), wantlist)),
        Err(LookupError::NotFound(..)) => Err(Error::new(
            ErrorKind::InvalidOperation,
            format!("The lookup plugin '{name}' was not found."),
        )),
        Err(LookupError::Unloadable(e)) => Err(Error::new(ErrorKind::InvalidOperation, e)),
        Err(_) if errors == "ignore" => Ok(Outcome::Results(None, wantlist)),
        Err(e) if errors == "warn" => {
            crate::template::warn(format!(
                "An error occurred while running the lookup plugin '{name}': {e}"
            ));
            Ok(Outcome::Results(None, wantlist))
        }
        Err(LookupError::Undefined(e)) => Err(Error::new(ErrorKind::UndefinedError, e)),
        Err(LookupError::Failed(e)) => Err(Error::new(
            ErrorKind::InvalidOperation,
            format!("The lookup plugin '{name}' failed: {e}"),
        )),
    }
}

/// Runs a Python lookup plugin on terms holding undefined values (at `places`), which
/// it gets as ansible-core's undefined markers if it accepts them
/// (`accept_args_markers`); a plugin that does not is not run, its result the first
/// undefined term, as in ansible-core 2.19. The results, with the undefined values
/// the plugin gave back in place.
fn python_marked(
    state: &State,
    name: &str,
    terms: &[Json],
    places: &[crate::template::convert::UndefinedPlace],
    options: &Options,
) -> Result<Value, LookupError> {
    let undefined: Vec<Json> = places
        .iter()
        .map(|(path, value)| {
            let detail = ensure_defined(state, value)
                .err()
                .map(|e| crate::template::error::engine_detail(&e))
                .unwrap_or_default();
            let variable = detail
                .strip_prefix('\'')
                .and_then(|d| d.strip_suffix("' is undefined"))
                .unwrap_or("undefined");
            serde_json::json!({ "path": path, "name": variable })
        })
        .collect();
    let ctx = StateContext { state };
    let (results, paths) = crate::plugins::loader::lookup_marked(
        name,
        terms,
        &undefined,
        options,
        plain_variables(&ctx),
    )
    .map_err(|e| python_error(name, e))?;
    let paths: Vec<&[Json]> = paths
        .iter()
        .filter_map(|p| p.as_array().map(Vec::as_slice))
        .collect();
    let first = places.first().map_or(Value::UNDEFINED, |(_, v)| v.clone());
    Ok(crate::template::convert::from_json_marked(
        &results, &paths, &first,
    ))
}

/// `lookup(name, terms…)`: one result as it is, several texts joined with `,`, none as
/// an empty list; a failure `errors` lets pass is `None` (an empty list with
/// `wantlist`), as in ansible-core 2.19.
fn lookup(state: &State, name: String, terms: Rest<Value>, kwargs: Kwargs) -> Result<Value, Error> {
    if let Some(undefined) = undefined_argument(&name, &terms, &kwargs) {
        return Ok(undefined);
    }
    // `lookup('env', 'X', default=undef())`: an unset variable gives the undefined value
    // itself (so `is defined` can test it), as in Ansible.
    if name == "env"
        && kwargs.has("default")
        && kwargs.get::<Value>("default")?.is_undefined()
        && terms.iter().any(|t| {
            t.as_str()
                .is_some_and(|v| crate::config::settings().get_os(v).is_none())
        })
    {
        return Ok(Value::UNDEFINED);
    }
    let (results, wantlist) = match call(state, &name, &terms, &kwargs)? {
        Outcome::Results(results, wantlist) => (results, wantlist),
        Outcome::Undefined(undefined) => return Ok(undefined),
    };
    let Some(results) = results else {
        return Ok(if wantlist {
            Value::from(Vec::<Value>::new())
        } else {
            Value::from(())
        });
    };
    if wantlist {
        return Ok(Value::from(results));
    }
    Ok(match results.as_slice() {
        [one] => one.clone(),
        many if !many.is_empty() && many.iter().all(|v| v.as_str().is_some()) => Value::from(
            many.iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(","),
        ),
        _ => Value::from(results),
    })
}

/// `query(name, terms…)`: the results as a list (empty when `errors` let a failure
/// pass).
fn query(state: &State, name: String, terms: Rest<Value>, kwargs: Kwargs) -> Result<Value, Error> {
    if let Some(undefined) = undefined_argument(&name, &terms, &kwargs) {
        return Ok(undefined);
    }
    match call(state, &name, &terms, &kwargs)? {
        Outcome::Results(results, _) => Ok(Value::from(results.unwrap_or_default())),
        Outcome::Undefined(undefined) => Ok(undefined),
    }
}
