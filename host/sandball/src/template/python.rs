//! Python's text forms of values, which Ansible users see whenever a value is turned into
//! text: `str()` (`True`, `None`, `[1, 'a']`) and `repr()` of template values; strings
//! and floats are written by pycompat's [`quote`] and [`float_repr`], as modules
//! write them.

use std::fmt::Write;

use minijinja::value::ValueKind;
use minijinja::{Error, Output, State, Value};

use crate::template::convert::{ensure_defined, invalid};
use sandball_pycompat::pyfmt::{float_repr, quote};

/// What a render wrote through `{{ }}`: how many values, and the last one (a template
/// whose whole output is one value is that value, as ansible-core 2.19 renders it).
#[derive(Default)]
pub(crate) struct Emitted {
    /// How many values were written.
    pub(crate) count: usize,
    /// The last of them.
    pub(crate) last: Value,
}

/// The engine's output formatter: what `{{ x }}` writes into text. Strings as they are,
/// `none` as nothing (as Ansible's finalize does), anything else as Python's `str()`.
/// Each value is counted in the render's [`Emitted`].
pub(crate) fn format_output(
    out: &mut Output,
    state: &mut State,
    value: &Value,
) -> Result<(), Error> {
    let emitted = state.get_or_insert_extension_with(Emitted::default);
    emitted.count += 1;
    emitted.last = value.clone();
    match value.kind() {
        ValueKind::None | ValueKind::Undefined => Ok(()),
        ValueKind::String => Ok(out.write_str(value.as_str().unwrap_or_default())?),
        _ => Ok(out.write_str(&py_str(value)?)?),
    }
}

/// Python's `str()` of a value.
pub(crate) fn py_str(value: &Value) -> Result<String, Error> {
    match value.kind() {
        ValueKind::String => Ok(value.as_str().unwrap_or_default().to_string()),
        _ => {
            let mut out = String::new();
            py_repr(value, &mut out)?;
            Ok(out)
        }
    }
}

/// The text a filter works on, as Ansible's `to_text` gives it: strings as they are,
/// other values as Python's `str()`, undefined values an error.
pub(crate) fn text_arg(state: &State, value: &Value) -> Result<String, Error> {
    ensure_defined(state, value)?;
    py_str(value)
}

/// Whether Python holds the value for a tuple (`zip`'s pairs, a mapping's `items()`,
/// `groupby`'s groups), not a list.
pub(crate) fn is_tuple(value: &Value) -> bool {
    value.is_tuple()
        || value
            .downcast_object_ref::<super::filters::GroupTuple>()
            .is_some()
}

/// Appends Python's `repr()` of a value.
pub(crate) fn py_repr(value: &Value, out: &mut String) -> Result<(), Error> {
    super::vaulted::ensure_decryptable(value)?;
    match value.kind() {
        ValueKind::Undefined => {
            return Err(Error::new(
                minijinja::ErrorKind::UndefinedError,
                "an undefined value cannot be turned into text",
            ));
        }
        ValueKind::Invalid => return Err(invalid(value)),
        ValueKind::None => out.push_str("None"),
        ValueKind::Bool => out.push_str(if value.is_true() { "True" } else { "False" }),
        ValueKind::Number if value.is_integer() => write!(out, "{value}")?,
        ValueKind::Number => out.push_str(&float_repr(f64::try_from(value.clone())?)),
        ValueKind::String => quote(value.as_str().unwrap_or_default(), out),
        ValueKind::Bytes => {
            out.push('b');
            quote(
                &String::from_utf8_lossy(value.as_bytes().unwrap_or_default()),
                out,
            );
        }
        ValueKind::Seq | ValueKind::Iterable => {
            let tuple = is_tuple(value);
            let (open, close) = if tuple { ('(', ")") } else { ('[', "]") };
            out.push(open);
            let mut count = 0;
            for item in value.try_iter()?.checked() {
                if count > 0 {
                    out.push_str(", ");
                }
                py_repr(&item?, out)?;
                count += 1;
            }
            out.push_str(if tuple && count == 1 { ",)" } else { close });
        }
        ValueKind::Map => {
            out.push('{');
            for (index, key) in value.try_iter()?.checked().enumerate() {
                let key = key?;
                if index > 0 {
                    out.push_str(", ");
                }
                py_repr(&key, out)?;
                out.push_str(": ");
                py_repr(&value.get_item(&key)?, out)?;
            }
            out.push('}');
        }
        _ => write!(out, "{value}")?,
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repr_like_python() {
        let value = Value::from(minijinja::value::Serde(serde_json::json!({
            "a": [1, 2.0, "x", null, true],
            "b": "it's",
            "c": {"d": "tab\there"}
        })));
        assert_eq!(
            py_str(&value).unwrap(),
            "{'a': [1, 2.0, 'x', None, True], 'b': \"it's\", 'c': {'d': 'tab\\there'}}"
        );
        assert_eq!(py_str(&Value::from("plain")).unwrap(), "plain");
        assert_eq!(py_str(&Value::from(false)).unwrap(), "False");
    }

    #[test]
    fn tuples_like_python() {
        let one = Value::from(minijinja::value::Tuple::from(vec![Value::from(1)]));
        assert_eq!(py_str(&one).unwrap(), "(1,)");
        let two = Value::from(minijinja::value::Tuple::from(vec![
            Value::from(1),
            Value::from("a"),
        ]));
        assert_eq!(py_str(&two).unwrap(), "(1, 'a')");
    }

    #[test]
    fn undefined_cannot_be_text() {
        let list = Value::from(vec![Value::UNDEFINED]);
        assert!(py_str(&list).is_err());
    }
}
