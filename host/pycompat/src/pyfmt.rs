//! Python's text forms of JSON values, for messages and conversions that must read as
//! Ansible's: `str()`, `repr()`, `type()` names and `json.dumps()`. Modules print
//! values with it; the controller's templates quote strings and print floats
//! with the same [`quote`] and [`float_repr`].

use serde_json::Value;
use std::fmt::Write;

/// `type(value)` as Python prints it, e.g. `<class 'str'>`.
pub fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "<class 'NoneType'>",
        Value::Bool(_) => "<class 'bool'>",
        Value::Number(n) if n.is_f64() => "<class 'float'>",
        Value::Number(_) => "<class 'int'>",
        Value::String(_) => "<class 'str'>",
        Value::Array(_) => "<class 'list'>",
        Value::Object(_) => "<class 'dict'>",
    }
}

/// The bare type name (`str`, `list`…), as ansible-core 2.19 writes it in "is of type"
/// messages.
pub fn short_type_name(value: &Value) -> &'static str {
    type_name(value)
        .trim_start_matches("<class '")
        .trim_end_matches("'>")
}

/// `str(value)`: text as is, everything else as `repr()`.
pub fn py_str(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => py_repr(other),
    }
}

/// `repr(value)`: `'text'`, `True`, `None`, `1.0`, `['a', 1]`, `{'k': 'v'}`.
pub fn py_repr(value: &Value) -> String {
    let mut out = String::new();
    write(&mut out, value, &REPR);
    out
}

/// How one of Python's writers spells the scalars and quotes text: `repr()`'s or
/// `json.dumps`'s. Lists and dicts are written alike by both, with `", "` and `": "`.
struct Style {
    null: &'static str,
    yes: &'static str,
    no: &'static str,
    quote: fn(&str, &mut String),
}

/// `repr()`'s spelling.
const REPR: Style = Style {
    null: "None",
    yes: "True",
    no: "False",
    quote,
};

/// `json.dumps`'s spelling (non-ASCII escaped).
const JSON: Style = Style {
    null: "null",
    yes: "true",
    no: "false",
    quote: |s, out| json_quote(s, true, out),
};

fn write(out: &mut String, value: &Value, style: &Style) {
    match value {
        Value::Null => out.push_str(style.null),
        Value::Bool(b) => out.push_str(if *b { style.yes } else { style.no }),
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() => out.push_str(&float_repr(f)),
            _ => out.push_str(&n.to_string()),
        },
        Value::String(s) => (style.quote)(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write(out, item, style);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                (style.quote)(k, out);
                out.push_str(": ");
                write(out, v, style);
            }
            out.push('}');
        }
    }
}

/// Appends `s` quoted as Python's `repr()` quotes it: single quotes unless the text
/// holds one and no double quote, and characters Python does not print escaped.
pub fn quote(s: &str, out: &mut String) {
    let quote = repr_quote(s.contains('\''), s.contains('"'));
    out.push(quote);
    for c in s.chars() {
        if escape(c, quote, out) {
            continue;
        }
        match c {
            c if (c as u32) < 0x20 || matches!(c as u32, 0x7f..=0xa0 | 0xad) => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            // Line and paragraph separators and the invisible format characters.
            c if matches!(c as u32, 0x200b..=0x200f | 0x2028..=0x202e | 0x2060..=0x2064 | 0xfeff) =>
            {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push(quote);
}

/// Python's `repr()` of bytes: `b'...'` (`b"..."` when only `'` is inside), printable
/// ASCII as it is, the rest escaped.
pub fn bytes_repr(bytes: &[u8]) -> String {
    let quote = repr_quote(bytes.contains(&b'\''), bytes.contains(&b'"'));
    let mut out = format!("b{quote}");
    for &b in bytes {
        if !escape(b as char, quote, &mut out) {
            match b {
                0x20..=0x7e => out.push(b as char),
                _ => {
                    let _ = write!(out, "\\x{b:02x}");
                }
            }
        }
    }
    out.push(quote);
    out
}

/// The quote `repr()` encloses text or bytes in: single, unless they hold one and no
/// double quote.
fn repr_quote(single: bool, double: bool) -> char {
    if single && !double { '"' } else { '\'' }
}

/// Appends the escape `repr()` gives `c` in text and bytes alike (the backslash,
/// line breaks, tabs and the enclosing quote); `false` when it has none of those.
fn escape(c: char, quote: char, out: &mut String) -> bool {
    match c {
        '\\' => out.push_str("\\\\"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if c == quote => {
            out.push('\\');
            out.push(c);
        }
        _ => return false,
    }
    true
}

/// Python's `repr(float)`: the shortest text that reads back to the same number, with a
/// `.0` on integral values and an exponent outside `1e-4 <= |x| < 1e16`.
pub fn float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0.0" } else { "0.0" }.into();
    }
    // `{:e}` gives the shortest round-trip digits: "1.5e-5", "1e20", "-1.2345e2".
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    if (-4..16).contains(&exp) {
        let point = exp + 1; // digits before the decimal point
        if point <= 0 {
            format!("{sign}0.{}{digits}", "0".repeat((-point) as usize))
        } else if point as usize >= digits.len() {
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
        let frac = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{first}{frac}e{esign}{:02}", exp.abs())
    }
}

/// Python's `json.dumps(value)` with its default `", "` and `": "` separators and
/// non-ASCII characters escaped as `\uXXXX`.
pub fn json_dumps(value: &Value) -> String {
    let mut out = String::new();
    write(&mut out, value, &JSON);
    out
}

/// Appends `s` as Python's `json.dumps` writes a string: quotes and backslashes and
/// control characters escaped, and with `ensure_ascii` every non-ASCII character as
/// `\uXXXX` (surrogate pairs beyond the BMP).
pub fn json_quote(s: &str, ensure_ascii: bool, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || (ensure_ascii && !c.is_ascii()) => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bytes_are_shown_as_python_shows_them() {
        assert_eq!(bytes_repr(b"/usr/sbin/apache2"), "b'/usr/sbin/apache2'");
        assert_eq!(bytes_repr(b"it's"), "b\"it's\"");
        assert_eq!(bytes_repr(b"a'\"b\\\n\xff"), "b'a\\'\"b\\\\\\n\\xff'");
    }

    #[test]
    fn str_and_repr_read_like_python() {
        assert_eq!(py_str(&json!("a b")), "a b");
        assert_eq!(py_str(&json!(true)), "True");
        assert_eq!(py_str(&json!(null)), "None");
        assert_eq!(py_str(&json!(42)), "42");
        assert_eq!(py_str(&json!(1.0)), "1.0");
        assert_eq!(
            py_str(&json!(["a", 1, false, null, {"k": "it's"}])),
            r#"['a', 1, False, None, {'k': "it's"}]"#
        );
        assert_eq!(py_repr(&json!("a'b\"c\n")), r#"'a\'b"c\n'"#);
        assert_eq!(
            py_repr(&json!("\u{7f}\u{85}\u{a0}\u{ad}é\u{2028}\u{feff}")),
            r"'\x7f\x85\xa0\xadé\u2028\ufeff'"
        );
    }

    #[test]
    fn floats_print_like_python() {
        assert_eq!(float_repr(1.5), "1.5");
        assert_eq!(float_repr(100.0), "100.0");
        assert_eq!(float_repr(0.1), "0.1");
        assert_eq!(float_repr(0.0001), "0.0001");
        assert_eq!(float_repr(0.00001), "1e-05");
        assert_eq!(float_repr(1e16), "1e+16");
        assert_eq!(float_repr(1234567890123456.0), "1234567890123456.0");
        assert_eq!(float_repr(-2.5e-7), "-2.5e-07");
        assert_eq!(float_repr(-0.0), "-0.0");
        assert_eq!(float_repr(1e15), "1000000000000000.0");
        assert_eq!(float_repr(12345678.9), "12345678.9");
        assert_eq!(float_repr(1.5e-7), "1.5e-07");
        assert_eq!(float_repr(f64::NAN), "nan");
        assert_eq!(float_repr(f64::NEG_INFINITY), "-inf");
    }

    #[test]
    fn type_names_and_json_dumps() {
        assert_eq!(type_name(&json!([])), "<class 'list'>");
        assert_eq!(type_name(&json!(1.5)), "<class 'float'>");
        assert_eq!(type_name(&json!(1)), "<class 'int'>");
        assert_eq!(
            json_dumps(&json!({"a": [1, 2.0, "é"], "b": null})),
            r#"{"a": [1, 2.0, "\u00e9"], "b": null}"#
        );
    }
}
