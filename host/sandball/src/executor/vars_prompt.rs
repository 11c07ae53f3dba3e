//! `vars_prompt`: variables a play asks the user for before it starts, a layer just
//! above the play's `vars`. On a terminal each is asked (`private` ones without echo,
//! `confirm` asks twice, an empty answer takes the `default`); without one, as
//! ansible-playbook does, nothing is asked: a warning says so and each variable takes
//! its `default` (or, as in ansible-core, the text `None`). A variable given with `-e`
//! is not asked for. With `encrypt` (a hash scheme; `salt`, `salt_size`) the value is
//! hashed as the `password_hash` filter hashes it, the default as well as an answer.

use super::{ExecError, Run};
use crate::playbook::Play;
use crate::plugins::callback::prompt;
use serde_json::{Map, Value};
use std::io::IsTerminal;

/// One prompt, as the play writes it.
struct Prompt {
    name: String,
    text: String,
    default: Option<Value>,
    private: bool,
    confirm: bool,
    /// `unsafe`: the answer is never templated.
    unsafe_: bool,
    /// `encrypt`: the hash scheme, with the `salt` (or `salt_size`) to use.
    encrypt: Option<(String, Option<String>, Option<usize>)>,
}

impl Prompt {
    /// The value as the play sees it: hashed when the prompt says `encrypt`.
    fn value(&self, answer: Value) -> Result<Value, String> {
        let Some((scheme, salt, salt_size)) = &self.encrypt else {
            return Ok(answer);
        };
        let secret = match &answer {
            Value::String(s) => s.clone(),
            Value::Object(m) => match m.get(crate::yaml::UNSAFE_KEY) {
                Some(Value::String(s)) => s.clone(),
                _ => answer.to_string(),
            },
            other => other.to_string(),
        };
        let salt = salt
            .clone()
            .or_else(|| salt_size.map(crate::template::crypt::random_salt));
        crate::template::crypt::hash(&secret, scheme, salt.as_deref(), None)
            .map(Value::String)
            .map_err(|e| format!("vars_prompt {}: {e}", self.name))
    }
}

/// Reads the play's prompts; the keys sandball does not know were refused by the
/// pre-run check.
fn prompts(play: &Play) -> Result<Vec<Prompt>, String> {
    let Some(spec) = &play.vars_prompt else {
        return Ok(Vec::new());
    };
    let items = match spec {
        Value::Array(items) => items.clone(),
        Value::Object(_) => vec![spec.clone()],
        other => {
            return Err(format!(
                "vars_prompt must be a list of prompts, got {other}"
            ));
        }
    };
    items
        .into_iter()
        .map(|item| {
            let Value::Object(m) = item else {
                return Err(format!("a vars_prompt entry must be a mapping, got {item}"));
            };
            let name = m
                .get("name")
                .and_then(Value::as_str)
                .ok_or("a vars_prompt entry needs a `name`")?
                .to_string();
            let flag = |k: &str, default: bool| {
                sandball_pycompat::boolean::truthy(m.get(k), default).unwrap_or(default)
            };
            Ok(Prompt {
                text: m
                    .get("prompt")
                    .and_then(Value::as_str)
                    .unwrap_or(&name)
                    .to_string(),
                default: m.get("default").filter(|d| !d.is_null()).cloned(),
                private: flag("private", true),
                confirm: flag("confirm", false),
                unsafe_: flag("unsafe", false),
                encrypt: match m.get("encrypt") {
                    None | Some(Value::Null) => None,
                    Some(Value::String(scheme)) => Some((
                        scheme.clone(),
                        m.get("salt").and_then(Value::as_str).map(str::to_string),
                        m.get("salt_size")
                            .and_then(crate::plugins::action::integer)
                            .and_then(|n| usize::try_from(n).ok()),
                    )),
                    Some(other) => {
                        return Err(format!(
                            "vars_prompt {name}: encrypt must be the name of a hash scheme, got {other}"
                        ));
                    }
                },
                name,
            })
        })
        .collect()
}

/// The values of a play's prompts.
pub(crate) fn values(run: &Run, play: &Play) -> Result<Map<String, Value>, ExecError> {
    let refused = |what: String| ExecError::Refused {
        what,
        location: play.location.clone(),
    };
    let prompts = prompts(play).map_err(refused)?;
    let extra = run.vars.extra_vars_only();
    let wanted: Vec<Prompt> = prompts
        .into_iter()
        .filter(|p| !extra.contains(&p.name))
        .collect();
    let mut out = Map::new();
    if wanted.is_empty() {
        return Ok(out);
    }
    if !std::io::stdin().is_terminal() {
        run.callback
            .warning("Not prompting as we are not in interactive mode");
        for p in wanted {
            // ansible-core gives a prompt without a default the text "None" (and fails
            // to hash it: sandball says why).
            let value = match &p.default {
                Some(d) => p.value(d.clone()).map_err(refused)?,
                None if p.encrypt.is_some() => {
                    return Err(refused(format!(
                        "vars_prompt {}: there is no terminal to ask on and no default to encrypt",
                        p.name
                    )));
                }
                None => Value::String("None".into()),
            };
            out.insert(p.name, value);
        }
        return Ok(out);
    }
    for p in wanted {
        let shown_default = p.default.as_ref().map(|d| match d {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        });
        let question = match &shown_default {
            Some(d) => format!("{} [{d}]: ", p.text),
            None => format!("{}: ", p.text),
        };
        let answer = loop {
            let first = prompt::ask(&question, p.private).map_err(refused)?;
            if !p.confirm {
                break first;
            }
            let again = prompt::ask(&format!("confirm {question}"), p.private).map_err(refused)?;
            if first == again {
                break first;
            }
            run.callback
                .warning("***** VALUES ENTERED DO NOT MATCH ****");
        };
        let value = match (answer.is_empty(), &p.default) {
            (true, Some(d)) => d.clone(),
            _ if p.unsafe_ => serde_json::json!({ crate::yaml::UNSAFE_KEY: answer }),
            _ => Value::String(answer),
        };
        out.insert(p.name.clone(), p.value(value).map_err(refused)?);
    }
    Ok(out)
}
