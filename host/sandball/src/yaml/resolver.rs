//! How a YAML scalar becomes a typed value, the way Ansible's loader (PyYAML's YAML 1.1
//! resolver and safe constructor) types it: `yes`/`on`/`True` are booleans, `0755` is
//! octal, `1:30` is sexagesimal, `1e3` stays a string; quoted scalars are always strings.
//!
//! JSON cannot hold infinities or NaN, so `.inf`/`.nan` keep their text as a string.
//! Timestamps (`2024-05-01`, `2001-12-14 21:59:43.10 -5`) become the text Python's
//! `isoformat()` gives the date or datetime PyYAML builds, as Ansible's JSON shows them.

use regex::Regex;
use serde_json::{Number, Value};
use std::sync::LazyLock;

static TIMESTAMP: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})(?:(?:[Tt]|[ \t]+)([0-9]{1,2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]*))?(?:[ \t]*(Z|([-+])([0-9]{1,2})(?::([0-9]{2}))?))?)?$",
    )
    .expect("static regex")
});

/// The value of an untagged plain scalar; an error for a timestamp that is no date.
pub(crate) fn implicit(text: &str) -> Result<Value, String> {
    Ok(if is_null(text) {
        Value::Null
    } else if let Some(value) = bool_value(text) {
        Value::Bool(value)
    } else if is_float(text) {
        float_value(text).unwrap_or_else(|| Value::String(text.to_owned()))
    } else if is_int(text) {
        int_value(text).unwrap_or_else(|| Value::String(text.to_owned()))
    } else if let Some(c) = TIMESTAMP.captures(text) {
        timestamp(&c)?
    } else {
        Value::String(text.to_owned())
    })
}

/// The value of a scalar with an explicit core-schema tag (`!!str`, `!!int`…), named by
/// the tag's suffix; an error says why the text does not fit the tag.
pub(crate) fn explicit(kind: &str, text: &str) -> Result<Value, String> {
    match kind {
        "str" => Ok(Value::String(text.to_owned())),
        "timestamp" => match TIMESTAMP.captures(text) {
            Some(c) => timestamp(&c),
            None => Err(format!("'{text}' is not a timestamp")),
        },
        "null" => Ok(Value::Null),
        "bool" => match text.to_ascii_lowercase().as_str() {
            "yes" | "true" | "on" => Ok(Value::Bool(true)),
            "no" | "false" | "off" => Ok(Value::Bool(false)),
            _ => Err(format!("'{text}' is not a boolean")),
        },
        "int" => int_value(text).ok_or_else(|| format!("'{text}' is not an integer")),
        "float" => float_value(text).ok_or_else(|| format!("'{text}' is not a float")),
        other => Err(format!(
            "the YAML tag '!!{other}' is not supported on a scalar"
        )),
    }
}

fn is_null(text: &str) -> bool {
    matches!(text, "" | "~" | "null" | "Null" | "NULL")
}

fn bool_value(text: &str) -> Option<bool> {
    match text {
        "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => Some(true),
        "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => Some(false),
        _ => None,
    }
}

/// `text` without one leading sign, and whether that sign was `-`.
fn split_sign(text: &str) -> (bool, &str) {
    match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    }
}

fn all(text: &str, allowed: impl Fn(u8) -> bool) -> bool {
    text.bytes().all(allowed)
}

fn digit_or_underscore(c: u8) -> bool {
    c.is_ascii_digit() || c == b'_'
}

/// `[1-9][0-9_]*`: the integral part of a decimal or sexagesimal integer.
fn is_decimal_run(text: &str) -> bool {
    matches!(text.as_bytes().first(), Some(b'1'..=b'9')) && all(text, digit_or_underscore)
}

/// `(:[0-5]?[0-9])+`, the base-60 tail of a sexagesimal number (given without the head).
fn is_base60_tail(parts: &[&str]) -> bool {
    !parts.is_empty()
        && parts.iter().all(|part| match part.as_bytes() {
            [d] => d.is_ascii_digit(),
            [t, d] => (b'0'..=b'5').contains(t) && d.is_ascii_digit(),
            _ => false,
        })
}

/// `[eE][-+][0-9]+`, an exponent (note the mandatory sign).
fn is_exponent(text: &str) -> bool {
    match text.as_bytes() {
        [b'e' | b'E', b'-' | b'+', digits @ ..] => {
            !digits.is_empty() && digits.iter().all(u8::is_ascii_digit)
        }
        _ => false,
    }
}

/// `[0-9_]*` optionally followed by an exponent: what may follow the dot of a float.
fn is_fraction(text: &str) -> bool {
    let end = text.find(['e', 'E']).unwrap_or(text.len());
    all(&text[..end], digit_or_underscore) && (end == text.len() || is_exponent(&text[end..]))
}

fn is_int(text: &str) -> bool {
    let (_, body) = split_sign(text);
    if let Some(bits) = body.strip_prefix("0b") {
        return !bits.is_empty() && all(bits, |c| matches!(c, b'0' | b'1' | b'_'));
    }
    if let Some(hex) = body.strip_prefix("0x") {
        return !hex.is_empty() && all(hex, |c| c.is_ascii_hexdigit() || c == b'_');
    }
    if body == "0" {
        return true;
    }
    if let Some(octal) = body.strip_prefix('0') {
        return !octal.is_empty() && all(octal, |c| matches!(c, b'0'..=b'7' | b'_'));
    }
    let parts: Vec<&str> = body.split(':').collect();
    is_decimal_run(parts[0]) && (parts.len() == 1 || is_base60_tail(&parts[1..]))
}

fn is_float(text: &str) -> bool {
    let (_, body) = split_sign(text);
    if matches!(text, ".nan" | ".NaN" | ".NAN") || matches!(body, ".inf" | ".Inf" | ".INF") {
        return true;
    }
    if let Some(fraction) = text.strip_prefix('.') {
        // `.5`: a float may start with its dot only when it has no sign
        return fraction.as_bytes().first().is_some_and(u8::is_ascii_digit)
            && is_fraction(fraction);
    }
    let Some((whole, fraction)) = body.split_once('.') else {
        return false;
    };
    if !whole.as_bytes().first().is_some_and(u8::is_ascii_digit) {
        return false;
    }
    let parts: Vec<&str> = whole.split(':').collect();
    if parts.len() == 1 {
        all(whole, digit_or_underscore) && is_fraction(fraction)
    } else {
        all(parts[0], digit_or_underscore)
            && is_base60_tail(&parts[1..])
            && all(fraction, digit_or_underscore)
    }
}

/// Builds the integer PyYAML's constructor builds from `text` (which need not match the
/// implicit pattern: `!!int` uses it too).
fn int_value(text: &str) -> Option<Value> {
    let cleaned = text.replace('_', "");
    let (negative, body) = split_sign(&cleaned);
    let magnitude: i128 = if body == "0" {
        0
    } else if let Some(bits) = body.strip_prefix("0b") {
        i128::from_str_radix(bits, 2).ok()?
    } else if let Some(hex) = body.strip_prefix("0x") {
        i128::from_str_radix(hex, 16).ok()?
    } else if body.starts_with('0') {
        i128::from_str_radix(body, 8).ok()?
    } else if body.contains(':') {
        body.split(':').try_fold(0i128, |total, part| {
            let digit: i128 = part.parse().ok()?;
            total.checked_mul(60)?.checked_add(digit)
        })?
    } else {
        if body.starts_with(['+', '-']) {
            return None;
        }
        body.parse().ok()?
    };
    let value = if negative { -magnitude } else { magnitude };
    Some(integer(value))
}

/// A JSON number for an integer; integers beyond 64 bits become the nearest float.
fn integer(value: i128) -> Value {
    if let Ok(small) = i64::try_from(value) {
        Value::from(small)
    } else if let Ok(large) = u64::try_from(value) {
        Value::from(large)
    } else {
        Number::from_f64(value as f64).map_or(Value::Null, Value::Number)
    }
}

/// Builds the float PyYAML's constructor builds from `text`.
fn float_value(text: &str) -> Option<Value> {
    let cleaned = text.replace('_', "").to_ascii_lowercase();
    let (negative, body) = split_sign(&cleaned);
    let magnitude = match body {
        ".inf" | ".nan" => return Some(Value::String(text.to_owned())),
        _ if body.contains(':') => {
            let mut total = 0.0;
            for part in body.split(':') {
                if part.starts_with(['+', '-']) {
                    return None;
                }
                total = total * 60.0 + part.parse::<f64>().ok()?;
            }
            total
        }
        _ if body.starts_with(['+', '-']) => return None,
        _ => body.parse::<f64>().ok()?,
    };
    let value = if negative { -magnitude } else { magnitude };
    Some(Number::from_f64(value).map_or_else(|| Value::String(text.to_owned()), Value::Number))
}

/// A YAML 1.1 timestamp as Python's `isoformat()` writes the date or datetime PyYAML builds.
fn timestamp(c: &regex::Captures) -> Result<Value, String> {
    let num = |i: usize| {
        c.get(i)
            .map_or(0, |m| m.as_str().parse::<u32>().unwrap_or(0))
    };
    let (year, month, day) = (num(1), num(2), num(3));
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let days_in_month = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return Err(format!("month must be in 1..12: {}", &c[0])),
    };
    if day == 0 || day > days_in_month {
        return Err(format!("day is out of range for month: {}", &c[0]));
    }
    let date = format!("{year:04}-{month:02}-{day:02}");
    if c.get(4).is_none() {
        return Ok(Value::String(date));
    }
    let (hour, minute, second) = (num(4), num(5), num(6));
    if hour > 23 || minute > 59 || second > 59 {
        return Err(format!("time is out of range: {}", &c[0]));
    }
    let mut out = format!("{date}T{hour:02}:{minute:02}:{second:02}");
    let fraction = c.get(7).map_or("", |m| m.as_str());
    let micros: String = fraction
        .chars()
        .chain(std::iter::repeat('0'))
        .take(6)
        .collect();
    if micros != "000000" {
        out.push('.');
        out.push_str(&micros);
    }
    match c.get(8).map(|m| m.as_str()) {
        Some("Z") => out.push_str("+00:00"),
        Some(_) => {
            let sign = c.get(9).map_or("+", |m| m.as_str());
            out.push_str(&format!("{sign}{:02}:{:02}", num(10), num(11)));
        }
        None => {}
    }
    Ok(Value::String(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The typed value of a plain scalar that must be valid.
    fn implicit(text: &str) -> Value {
        super::implicit(text).expect("a valid scalar")
    }

    #[test]
    fn nulls() {
        for text in ["", "~", "null", "Null", "NULL"] {
            assert_eq!(implicit(text), Value::Null, "{text}");
        }
        assert_eq!(implicit("nULL"), json!("nULL"));
    }

    #[test]
    fn yaml_1_1_booleans() {
        for text in [
            "yes", "Yes", "YES", "on", "On", "ON", "true", "True", "TRUE",
        ] {
            assert_eq!(implicit(text), json!(true), "{text}");
        }
        for text in [
            "no", "No", "NO", "off", "Off", "OFF", "false", "False", "FALSE",
        ] {
            assert_eq!(implicit(text), json!(false), "{text}");
        }
        for text in ["y", "n", "yEs", "tRUE"] {
            assert_eq!(implicit(text), json!(text), "{text}");
        }
    }

    #[test]
    fn integers_in_every_base() {
        assert_eq!(implicit("0"), json!(0));
        assert_eq!(implicit("-0"), json!(0));
        assert_eq!(implicit("42"), json!(42));
        assert_eq!(implicit("+42"), json!(42));
        assert_eq!(implicit("-42"), json!(-42));
        assert_eq!(implicit("1_000"), json!(1000));
        assert_eq!(implicit("0755"), json!(493));
        assert_eq!(implicit("00"), json!(0));
        assert_eq!(implicit("0x1F"), json!(31));
        assert_eq!(implicit("-0x1f"), json!(-31));
        assert_eq!(implicit("0b101"), json!(5));
        assert_eq!(implicit("1:30"), json!(90));
        assert_eq!(implicit("1__:2"), json!(62));
        assert_eq!(implicit("190:20:30"), json!(685_230));
        assert_eq!(
            implicit("18446744073709551615"),
            json!(18_446_744_073_709_551_615u64)
        );
    }

    #[test]
    fn things_that_look_numeric_but_stay_strings() {
        for text in [
            "0o755", "08", "0x", "1e3", "1.0e3", "-.5", "1:60", "0:30", "1.2.3", "12a", "+-1",
        ] {
            assert_eq!(implicit(text), json!(text), "{text}");
        }
    }

    #[test]
    fn floats() {
        assert_eq!(implicit("1.5"), json!(1.5));
        assert_eq!(implicit("1."), json!(1.0));
        assert_eq!(implicit("-2.5"), json!(-2.5));
        assert_eq!(implicit(".5"), json!(0.5));
        assert_eq!(implicit("1_0.5"), json!(10.5));
        assert_eq!(implicit("1.0e+3"), json!(1000.0));
        assert_eq!(implicit("1.5E-1"), json!(0.15));
        assert_eq!(implicit("1:30.5"), json!(90.5));
        assert_eq!(implicit(".inf"), json!(".inf"));
        assert_eq!(implicit("-.Inf"), json!("-.Inf"));
        assert_eq!(implicit(".NaN"), json!(".NaN"));
        assert_eq!(implicit(".nan"), json!(".nan"));
    }

    #[test]
    fn other_scalars_are_strings() {
        assert_eq!(implicit("hello world"), json!("hello world"));
        assert_eq!(implicit("2024-01-31"), json!("2024-01-31"));
        assert_eq!(implicit("<<"), json!("<<"));
    }

    #[test]
    fn timestamps_become_iso_text() {
        assert_eq!(implicit("2024-1-5"), json!("2024-01-05"));
        assert_eq!(
            implicit("2001-12-14t21:59:43.10-05:00"),
            json!("2001-12-14T21:59:43.100000-05:00")
        );
        assert_eq!(
            implicit("2001-12-14 21:59:43.10 -5"),
            json!("2001-12-14T21:59:43.100000-05:00")
        );
        assert_eq!(
            implicit("2002-12-14T01:02:03Z"),
            json!("2002-12-14T01:02:03+00:00")
        );
        assert!(super::implicit("2024-13-01").is_err());
        assert!(super::implicit("2023-02-29").is_err());
    }

    #[test]
    fn explicit_core_tags() {
        assert_eq!(explicit("str", "123"), Ok(json!("123")));
        assert_eq!(explicit("int", "0x10"), Ok(json!(16)));
        assert_eq!(explicit("int", "017"), Ok(json!(15)));
        assert_eq!(explicit("float", "1e3"), Ok(json!(1000.0)));
        assert_eq!(explicit("float", "3"), Ok(json!(3.0)));
        assert_eq!(explicit("bool", "On"), Ok(json!(true)));
        assert_eq!(explicit("null", "anything"), Ok(Value::Null));
        assert_eq!(explicit("timestamp", "2001-12-14"), Ok(json!("2001-12-14")));
        assert_eq!(
            explicit("int", "ten"),
            Err("'ten' is not an integer".to_owned())
        );
        assert_eq!(
            explicit("bool", "maybe"),
            Err("'maybe' is not a boolean".to_owned())
        );
        assert_eq!(explicit("float", "x"), Err("'x' is not a float".to_owned()));
        assert_eq!(
            explicit("set", "AAAA"),
            Err("the YAML tag '!!set' is not supported on a scalar".to_owned())
        );
    }
}
