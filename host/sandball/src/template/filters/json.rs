//! JSON filters: `to_json`, `to_nice_json`, `from_json`. Output is byte for byte what
//! Python's `json.dumps` writes (separators, `ensure_ascii`, float forms, key order).

use std::fmt::Write;

use minijinja::value::{Kwargs, ValueKind};
use minijinja::{Error, ErrorKind, State, Value};

use crate::template::convert::{ensure_defined, from_json, invalid};
use crate::template::python::py_str;
use crate::template::undefined::Plugins;
use sandball_pycompat::pyfmt::float_repr;
use sandball_pycompat::pyfmt::json_quote;

pub(super) fn register(env: &mut Plugins<'_>) {
    env.add_filter("to_json", to_json);
    env.add_filter("to_nice_json", to_nice_json);
    env.add_filter("from_json", parse_json);
}

/// How `json.dumps` lays the text out.
struct Layout {
    indent: Option<String>,
    item_separator: String,
    key_separator: String,
    sort_keys: bool,
    ensure_ascii: bool,
}

/// `to_json(indent=None, sort_keys=False, ensure_ascii=True, separators=None)`.
fn to_json(state: &State, value: &Value, kwargs: Kwargs) -> Result<String, Error> {
    ensure_defined(state, value)?;
    let layout = layout(&kwargs, None, false)?;
    dumps(value, &layout)
}

/// `to_nice_json(indent=4, sort_keys=True)`: indented, keys sorted.
fn to_nice_json(
    state: &State,
    value: &Value,
    indent: Option<i64>,
    kwargs: Kwargs,
) -> Result<String, Error> {
    ensure_defined(state, value)?;
    let indent = match indent {
        Some(indent) => indent,
        None => kwargs.get::<Option<i64>>("indent")?.unwrap_or(4),
    };
    let layout = layout(&kwargs, Some(indent), true)?;
    dumps(value, &layout)
}

fn layout(kwargs: &Kwargs, indent: Option<i64>, sort_keys: bool) -> Result<Layout, Error> {
    let indent = match indent {
        Some(indent) => Some(indent),
        None => kwargs.get::<Option<i64>>("indent")?,
    };
    let sort_keys = kwargs
        .get::<Option<bool>>("sort_keys")?
        .unwrap_or(sort_keys);
    let ensure_ascii = kwargs.get::<Option<bool>>("ensure_ascii")?.unwrap_or(true);
    let separators = kwargs.get::<Option<Vec<String>>>("separators")?;
    kwargs.assert_all_used()?;
    let (item_separator, key_separator) = match separators {
        Some(pair) => match <[String; 2]>::try_from(pair) {
            Ok([item, key]) => (item, key),
            Err(_) => {
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    "separators must be a pair of strings",
                ));
            }
        },
        None if indent.is_some() => (",".into(), ": ".into()),
        None => (", ".into(), ": ".into()),
    };
    Ok(Layout {
        indent: indent.map(|n| " ".repeat(n.max(0) as usize)),
        item_separator,
        key_separator,
        sort_keys,
        ensure_ascii,
    })
}

/// Python's `json.dumps` of a value.
fn dumps(value: &Value, layout: &Layout) -> Result<String, Error> {
    let mut out = String::new();
    write_value(value, layout, 0, &mut out)?;
    Ok(out)
}

fn write_value(
    value: &Value,
    layout: &Layout,
    depth: usize,
    out: &mut String,
) -> Result<(), Error> {
    crate::template::vaulted::ensure_decryptable(value)?;
    match value.kind() {
        ValueKind::Undefined => {
            return Err(Error::new(
                ErrorKind::UndefinedError,
                "cannot serialize an undefined value to JSON",
            ));
        }
        ValueKind::Invalid => return Err(invalid(value)),
        ValueKind::None => out.push_str("null"),
        ValueKind::Bool => out.push_str(if value.is_true() { "true" } else { "false" }),
        ValueKind::Number if value.is_integer() => write!(out, "{value}")?,
        ValueKind::Number => out.push_str(&json_float(f64::try_from(value.clone())?)),
        ValueKind::String => {
            json_quote(value.as_str().unwrap_or_default(), layout.ensure_ascii, out)
        }
        ValueKind::Seq | ValueKind::Iterable => {
            let items = value.try_iter()?.checked().collect::<Result<Vec<_>, _>>()?;
            write_container(out, layout, depth, '[', ']', items.len(), |index, out| {
                write_value(&items[index], layout, depth + 1, out)
            })?;
        }
        ValueKind::Map => {
            let mut entries = Vec::new();
            for key in value.try_iter()?.checked() {
                let key = key?;
                let item = value.get_item(&key)?;
                entries.push((json_key(&key)?, item));
            }
            if layout.sort_keys {
                entries.sort_by(|a, b| a.0.cmp(&b.0));
            }
            write_container(out, layout, depth, '{', '}', entries.len(), |index, out| {
                let (key, item) = &entries[index];
                json_quote(key, layout.ensure_ascii, out);
                out.push_str(&layout.key_separator);
                write_value(item, layout, depth + 1, out)
            })?;
        }
        _ => {
            return Err(Error::new(
                ErrorKind::InvalidOperation,
                format!("a {} is not JSON serializable", value.kind()),
            ));
        }
    }
    Ok(())
}

/// Writes `[...]` or `{...}` with `count` items, one per line when indenting.
fn write_container(
    out: &mut String,
    layout: &Layout,
    depth: usize,
    open: char,
    close: char,
    count: usize,
    mut item: impl FnMut(usize, &mut String) -> Result<(), Error>,
) -> Result<(), Error> {
    out.push(open);
    if count == 0 {
        out.push(close);
        return Ok(());
    }
    for index in 0..count {
        if index > 0 {
            out.push_str(&layout.item_separator);
        }
        if let Some(indent) = &layout.indent {
            out.push('\n');
            out.push_str(&indent.repeat(depth + 1));
        }
        item(index, out)?;
    }
    if let Some(indent) = &layout.indent {
        out.push('\n');
        out.push_str(&indent.repeat(depth));
    }
    out.push(close);
    Ok(())
}

/// A mapping key as `json.dumps` writes it: strings as they are, scalars as JSON.
fn json_key(key: &Value) -> Result<String, Error> {
    match key.kind() {
        ValueKind::String => Ok(key.as_str().unwrap_or_default().to_string()),
        ValueKind::None => Ok("null".into()),
        ValueKind::Bool => Ok(if key.is_true() { "true" } else { "false" }.into()),
        ValueKind::Number if key.is_integer() => Ok(key.to_string()),
        ValueKind::Number => Ok(json_float(f64::try_from(key.clone())?)),
        _ => Err(Error::new(
            ErrorKind::InvalidOperation,
            format!(
                "keys must be str, int, float, bool or None, not {}",
                key.kind()
            ),
        )),
    }
}

/// A float as `json.dumps` writes it (Python's repr; `NaN`, `Infinity`).
fn json_float(f: f64) -> String {
    if f.is_nan() {
        "NaN".into()
    } else if f.is_infinite() {
        if f > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else {
        float_repr(f)
    }
}

/// `from_json`: the value a JSON text denotes.
fn parse_json(state: &State, value: &Value) -> Result<Value, Error> {
    ensure_defined(state, value)?;
    let text = match value.as_str() {
        Some(text) => text.to_string(),
        None => py_str(value)?,
    };
    let parsed: serde_json::Value = serde_json::from_str(&text).map_err(|err| {
        Error::new(
            ErrorKind::InvalidOperation,
            format!("from_json: invalid JSON: {err}"),
        )
    })?;
    Ok(from_json(&parsed))
}

#[cfg(test)]
mod tests {
    use crate::template::filters::testing::{error, eval};
    use serde_json::json;

    #[test]
    fn to_json_like_json_dumps() {
        assert_eq!(
            eval("{'b': [1, 2.5, none, true], 'a': 'x'} | to_json"),
            json!("{\"b\": [1, 2.5, null, true], \"a\": \"x\"}")
        );
        assert_eq!(eval("'é\"\\n' | to_json"), json!("\"\\u00e9\\\"\\n\""));
        assert_eq!(eval("'é' | to_json(ensure_ascii=false)"), json!("\"é\""));
        assert_eq!(eval("'😀' | to_json"), json!("\"\\ud83d\\ude00\""));
        assert_eq!(
            eval("{'b': 1, 'a': 2} | to_json(sort_keys=true)"),
            json!("{\"a\": 2, \"b\": 1}")
        );
        assert_eq!(eval("1.0 | to_json"), json!("1.0"));
        assert_eq!(eval("[] | to_json"), json!("[]"));
        assert_eq!(eval("{1: 'a'} | to_json"), json!("{\"1\": \"a\"}"));
    }

    #[test]
    fn to_nice_json_like_ansible() {
        assert_eq!(
            eval("{'b': [1, {}], 'a': {'c': 'd'}} | to_nice_json"),
            json!(
                "{\n    \"a\": {\n        \"c\": \"d\"\n    },\n    \"b\": [\n        1,\n        {}\n    ]\n}"
            )
        );
        assert_eq!(
            eval("[1, 2] | to_nice_json(indent=2)"),
            json!("[\n  1,\n  2\n]")
        );
        assert_eq!(eval("[1, 2] | to_nice_json(2)"), json!("[\n  1,\n  2\n]"));
    }

    #[test]
    fn from_json_parses() {
        assert_eq!(eval("'{\"a\": [1, 2]}' | from_json"), json!({"a": [1, 2]}));
        assert_eq!(eval("('{\"a\": [1, 2]}' | from_json).a[1]"), json!(2));
        assert!(error("'{' | from_json").contains("invalid JSON"));
    }
}
