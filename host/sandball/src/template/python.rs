//! Python's text forms of values, which Ansible users see whenever a value is turned into
//! text: `str()` (`True`, `None`, `[1, 'a']`) and `repr()`, floats included.

use std::fmt::Write;

use minijinja::value::ValueKind;
use minijinja::{Error, Output, State, Value};

use crate::template::convert::{ensure_defined, invalid};

/// The engine's output formatter: what `{{ x }}` writes into text. Strings as they are,
/// `none` as nothing (as Ansible's finalize does), anything else as Python's `str()`.
pub(crate) fn format_output(
    out: &mut Output,
    _state: &mut State,
    value: &Value,
) -> Result<(), Error> {
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

/// Appends Python's `repr()` of a value.
pub(crate) fn py_repr(value: &Value, out: &mut String) -> Result<(), Error> {
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
        ValueKind::Number => out.push_str(&py_float(f64::try_from(value.clone())?)),
        ValueKind::String => py_quote(value.as_str().unwrap_or_default(), out),
        ValueKind::Bytes => {
            out.push('b');
            py_quote(
                &String::from_utf8_lossy(value.as_bytes().unwrap_or_default()),
                out,
            );
        }
        ValueKind::Seq | ValueKind::Iterable => {
            let (open, close) = if value.is_tuple() {
                ('(', ")")
            } else {
                ('[', "]")
            };
            out.push(open);
            let mut count = 0;
            for item in value.try_iter()?.checked() {
                if count > 0 {
                    out.push_str(", ");
                }
                py_repr(&item?, out)?;
                count += 1;
            }
            out.push_str(if value.is_tuple() && count == 1 {
                ",)"
            } else {
                close
            });
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

/// Appends a string quoted as Python's `repr()` quotes it.
pub(crate) fn py_quote(s: &str, out: &mut String) {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || (0x7f..0xa0).contains(&(c as u32)) => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push(quote);
}

/// Python's `repr()` of a float: the shortest digits that read back the same, in fixed
/// notation for exponents from -4 to 15 and scientific notation (`1e+16`) otherwise.
pub(crate) fn py_float(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf" } else { "-inf" }.into();
    }
    let sign = if f.is_sign_negative() { "-" } else { "" };
    // `{:e}` gives the shortest round-tripping digits: `1.2345e2`, `5e-7`.
    let sci = format!("{:e}", f.abs());
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    if (-4..16).contains(&exponent) {
        let point = exponent + 1;
        if point <= 0 {
            format!(
                "{sign}0.{}{digits}",
                "0".repeat(point.unsigned_abs() as usize)
            )
        } else if digits.len() <= point as usize {
            format!(
                "{sign}{digits}{}.0",
                "0".repeat(point as usize - digits.len())
            )
        } else {
            let (int, frac) = digits.split_at(point as usize);
            format!("{sign}{int}.{frac}")
        }
    } else {
        let (first, rest) = digits.split_at(1);
        let mantissa = if rest.is_empty() {
            first.to_string()
        } else {
            format!("{first}.{rest}")
        };
        let exp_sign = if exponent < 0 { '-' } else { '+' };
        format!("{sign}{mantissa}e{exp_sign}{:02}", exponent.unsigned_abs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_like_python() {
        let cases = [
            (1.0, "1.0"),
            (0.1, "0.1"),
            (-2.5, "-2.5"),
            (123.456, "123.456"),
            (1e16, "1e+16"),
            (1.5e-7, "1.5e-07"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1e15, "1000000000000000.0"),
            (-0.0, "-0.0"),
            (12345678.9, "12345678.9"),
            (f64::NAN, "nan"),
            (f64::NEG_INFINITY, "-inf"),
        ];
        for (f, text) in cases {
            assert_eq!(py_float(f), text, "{f}");
        }
    }

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
        let mut out = String::new();
        py_quote("both ' and \"", &mut out);
        assert_eq!(out, "'both \\' and \"'");
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
