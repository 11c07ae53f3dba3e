//! String filters with Python's semantics: `quote` (shell), `join` (items as Python
//! `str()`), `splitlines`; and the Python string operations the methods share.

use minijinja::value::Kwargs;
use minijinja::{Error, ErrorKind, State, Value};

use crate::template::convert::ensure_defined;
use crate::template::python::{py_str, text_arg};
use crate::template::undefined::Plugins;

pub(super) fn register(env: &mut Plugins<'_>) {
    env.add_filter("quote", quote);
    env.add_filter("join", join);
    env.add_filter("splitlines", |state: &State, value: &Value| {
        Ok::<_, Error>(Value::from(py_splitlines(&text_arg(state, value)?)))
    });
    env.add_filter("escape", escape);
    env.add_filter("e", escape);
}

/// Jinja's `escape`, which escapes trusted text too: the engine's mark of trusted text
/// is the one it gives escaped text (see `trust.rs`), so text `escape` already gave is
/// escaped again, where Jinja keeps it.
fn escape(state: &mut State, value: &Value) -> Result<Value, Error> {
    match value.as_str() {
        Some(text) if value.is_safe() => minijinja::filters::escape(state, &Value::from(text)),
        _ => minijinja::filters::escape(state, value),
    }
}

/// Python's `shlex.quote`: the text as one shell word.
fn quote(state: &State, value: &Value) -> Result<String, Error> {
    let text = if value.is_none() {
        String::new()
    } else {
        text_arg(state, value)?
    };
    Ok(crate::plugins::shell::quote(&text))
}

/// Jinja's `join(d='', attribute=None)`: the items (or an attribute of each) as Python
/// `str()`, joined.
fn join(
    state: &State,
    value: &Value,
    separator: Option<String>,
    attribute: Option<String>,
    kwargs: Kwargs,
) -> Result<String, Error> {
    ensure_defined(state, value)?;
    let separator = match separator {
        Some(s) => s,
        None => kwargs.get::<Option<String>>("d")?.unwrap_or_default(),
    };
    let attribute = match attribute {
        Some(a) => Some(a),
        None => kwargs.get::<Option<String>>("attribute")?,
    };
    kwargs.assert_all_used()?;
    let mut parts = Vec::new();
    for item in value.try_iter()?.checked() {
        let mut item = item?;
        if let Some(attribute) = &attribute {
            for part in attribute.split('.') {
                item = match part.parse::<usize>() {
                    Ok(index) => item.get_item(&Value::from(index))?,
                    Err(_) => item.get_attr(part)?,
                };
            }
        }
        ensure_defined(state, &item)?;
        parts.push(py_str(&item)?);
    }
    Ok(parts.join(&separator))
}

/// Python's `str.split(sep=None, maxsplit=-1)`.
pub(crate) fn py_split(s: &str, sep: Option<&str>, maxsplit: i64) -> Result<Value, Error> {
    let limit = usize::try_from(maxsplit).ok();
    let parts: Vec<Value> = match sep {
        Some("") => {
            return Err(Error::new(
                ErrorKind::InvalidOperation,
                "split: empty separator",
            ));
        }
        Some(sep) => match limit {
            Some(n) => s.splitn(n + 1, sep).map(Value::from).collect(),
            None => s.split(sep).map(Value::from).collect(),
        },
        None => {
            let mut parts = Vec::new();
            let mut rest = s.trim_start();
            while !rest.is_empty() {
                if limit.is_some_and(|n| parts.len() == n) {
                    parts.push(Value::from(rest));
                    break;
                }
                let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
                parts.push(Value::from(&rest[..end]));
                rest = rest[end..].trim_start();
            }
            parts
        }
    };
    Ok(Value::from(parts))
}

/// Python's `str.splitlines()`, as owned strings.
pub(crate) fn py_splitlines(s: &str) -> Vec<String> {
    sandball_wire::python::splitlines(s)
        .into_iter()
        .map(str::to_string)
        .collect()
}

/// Python's `str.strip(chars)` (and `lstrip`, `rstrip`): whitespace when `chars` is
/// `None`.
pub(crate) fn py_strip(s: &str, chars: Option<&str>, left: bool, right: bool) -> String {
    let strip = |c: char| match chars {
        Some(chars) => chars.contains(c),
        None => c.is_whitespace(),
    };
    let mut out = s;
    if left {
        out = out.trim_start_matches(strip);
    }
    if right {
        out = out.trim_end_matches(strip);
    }
    out.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::template::filters::testing::{error, eval, render};
    use serde_json::json;

    #[test]
    fn text_output_is_python_text() {
        assert_eq!(
            render("{{ 1.0 }} {{ true }} [{{ none }}] {{ {'a': [1, 'b']} }}"),
            "1.0 True [] {'a': [1, 'b']}"
        );
        assert_eq!(render("{{ ['x', 'y'] | join(', ') }}"), "x, y");
    }

    #[test]
    fn quote_like_shlex() {
        assert_eq!(eval("'simple' | quote"), json!("simple"));
        assert_eq!(eval("'a b' | quote"), json!("'a b'"));
        assert_eq!(eval("\"it's\" | quote"), json!("'it'\"'\"'s'"));
        assert_eq!(eval("'' | quote"), json!("''"));
        assert_eq!(
            eval("'/p/a-b_c.d@e%f+g=h:i,j' | quote"),
            json!("/p/a-b_c.d@e%f+g=h:i,j")
        );
        assert_eq!(eval("'$HOME' | quote"), json!("'$HOME'"));
    }

    #[test]
    fn join_uses_python_text() {
        assert_eq!(
            eval("[1, 'a', true, none] | join(',')"),
            json!("1,a,True,None")
        );
        assert_eq!(eval("['a', 'b'] | join"), json!("ab"));
        assert_eq!(
            eval("[{'n': 'x'}, {'n': 'y'}] | join(', ', attribute='n')"),
            json!("x, y")
        );
        assert!(error("[{'n': 'x'}, {}] | join(attribute='n')").contains("undefined"));
    }

    #[test]
    fn splitting() {
        assert_eq!(
            eval("'a\\nb\\r\\nc\\n' | splitlines"),
            json!(["a", "b", "c"])
        );
        assert_eq!(eval("'a,b,,c' | split(',')"), json!(["a", "b", "", "c"]));
        assert_eq!(eval("' a  b ' | split"), json!(["a", "b"]));
        let split = |s: &str, sep, n| {
            crate::template::convert::to_json(&py_split(s, sep, n).unwrap()).unwrap()
        };
        assert_eq!(split("a b  c", None, 1), json!(["a", "b  c"]));
        assert_eq!(split("a,b,c", Some(","), 1), json!(["a", "b,c"]));
        assert_eq!(split("  ", None, -1), json!([]));
        assert!(py_split("a", Some(""), -1).is_err());
    }

    #[test]
    fn stripping() {
        assert_eq!(py_strip("xxaxx", Some("x"), true, false), "axx");
        assert_eq!(py_strip("xxaxx", Some("x"), false, true), "xxa");
        assert_eq!(py_strip(" \ta\n", None, true, true), "a");
    }
}
