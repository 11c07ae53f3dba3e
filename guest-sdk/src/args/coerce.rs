//! Type coercion of one argument value, as Ansible's `type:` checks convert them:
//! booleans from `yes`/`no`/`on`/`off`/…, integers from text, lists from
//! comma-separated text, dicts from JSON or `k=v` text, sizes from `10MB`, and so on.
//! Errors are the text that follows "we were unable to convert to <type>: ".

use super::context::{Context, StringConversion};
use super::path::path_argument;
use super::size::human_to_number;
use sandball_pycompat::boolean;
use sandball_pycompat::pyfmt::{json_dumps, py_repr, py_str, type_name};
use sandball_wire::manifest::ArgType;
use serde_json::{Map, Number, Value};

/// Ansible's name of a type, as used in messages.
pub fn type_label(kind: ArgType) -> &'static str {
    match kind {
        ArgType::Str => "str",
        ArgType::List => "list",
        ArgType::Dict => "dict",
        ArgType::Bool => "bool",
        ArgType::Int => "int",
        ArgType::Float => "float",
        ArgType::Path => "path",
        ArgType::Raw => "raw",
        ArgType::Jsonarg => "jsonarg",
        ArgType::Json => "json",
        ArgType::Bytes => "bytes",
        ArgType::Bits => "bits",
    }
}

/// Converts `value` to `kind`. A conversion warning (see [`StringConversion::Warn`]) is
/// pushed to `warnings`.
pub fn coerce(
    kind: ArgType,
    value: &Value,
    ctx: &Context,
    warnings: &mut Vec<String>,
) -> Result<Value, String> {
    match kind {
        ArgType::Raw => Ok(value.clone()),
        ArgType::Str => to_str(value, ctx, warnings).map(Value::String),
        ArgType::Path => {
            to_str(value, ctx, warnings).map(|s| Value::String(path_argument(&s, ctx.env)))
        }
        ArgType::Bool => boolean::strict(value).map(Value::Bool),
        ArgType::Int => to_int(value),
        ArgType::Float => to_float(value),
        ArgType::List => to_list(value),
        ArgType::Dict => to_dict(value).map(Value::Object),
        ArgType::Json | ArgType::Jsonarg => to_json_text(value).map(Value::String),
        ArgType::Bytes => to_size(value, false, "a Byte"),
        ArgType::Bits => to_size(value, true, "a Bit"),
    }
}

fn to_str(value: &Value, ctx: &Context, warnings: &mut Vec<String>) -> Result<String, String> {
    match value {
        Value::String(s) => return Ok(s.clone()),
        // A null that must convert (a required option, or one with a default) is
        // empty text, as ansible-core 2.19 converts it.
        Value::Null => return Ok(String::new()),
        _ => {}
    }
    let text = py_str(value);
    match ctx.string_conversion {
        StringConversion::Ignore => {}
        StringConversion::Warn => warnings.push(format!(
            "The value {} (type {}) in a string field was converted to {} (type string). \
             If this does not look like what you expect, quote the entire value to ensure \
             it does not change.",
            py_repr(value),
            type_name(value)
                .trim_start_matches("<class '")
                .trim_end_matches("'>"),
            py_repr(&Value::String(text.clone()))
        )),
        StringConversion::Error => {
            return Err(format!(
                "'{text}' is not a string and conversion is not allowed"
            ));
        }
    }
    Ok(text)
}

/// Reads text as Python's `int(Decimal(text))` accepts it when no digit is lost:
/// surrounding blanks, a sign, digits with single underscores between them, a fraction
/// and an exponent (`1.0`, `1e3`, `1_000`), as ansible-core 2.19's `check_type_int`.
fn parse_int_text(text: &str) -> Option<Number> {
    let t = text.trim();
    let (negative, body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], body[i + 1..].parse::<i32>().ok()?),
        None => (body, 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits_ok = |part: &str| {
        !part.starts_with('_')
            && !part.ends_with('_')
            && !part.contains("__")
            && part.chars().all(|c| c.is_ascii_digit() || c == '_')
    };
    if whole.is_empty() && fraction.is_empty() || !digits_ok(whole) || !digits_ok(fraction) {
        return None;
    }
    let mut digits: String = whole
        .chars()
        .chain(fraction.chars())
        .filter(|c| *c != '_')
        .collect();
    // The value is digits × 10^(exponent − fraction digits).
    let shift = exponent - i32::try_from(fraction.chars().filter(|c| *c != '_').count()).ok()?;
    if shift >= 0 {
        digits.extend(std::iter::repeat_n(
            '0',
            usize::try_from(shift).ok()?.min(40),
        ));
    } else {
        let cut = usize::try_from(-shift).ok()?;
        let keep = digits.len().saturating_sub(cut);
        if digits[keep..].chars().any(|c| c != '0') {
            return None;
        }
        digits.truncate(keep);
    }
    let digits = digits.trim_start_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    if negative {
        format!("-{digits}").parse::<i64>().ok().map(Number::from)
    } else {
        digits.parse::<u64>().ok().map(Number::from)
    }
}

fn to_int(value: &Value) -> Result<Value, String> {
    let fail = || format!("\"{}\" cannot be converted to an int", py_repr(value));
    match value {
        Value::Bool(b) => Ok(Value::from(i64::from(*b))),
        Value::Number(n) if !n.is_f64() => Ok(value.clone()),
        Value::Number(n) => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 9.2e18 => Ok(Value::from(f as i64)),
            _ => Err(fail()),
        },
        Value::String(s) => parse_int_text(s).map(Value::Number).ok_or_else(fail),
        _ => Err(fail()),
    }
}

fn to_float(value: &Value) -> Result<Value, String> {
    let fail = || format!("{} cannot be converted to a float", type_name(value));
    let f = match value {
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::Number(n) => n.as_f64().ok_or_else(fail)?,
        Value::String(s) => s.trim().parse::<f64>().map_err(|_| fail())?,
        _ => return Err(fail()),
    };
    Number::from_f64(f).map(Value::Number).ok_or_else(fail)
}

fn to_list(value: &Value) -> Result<Value, String> {
    match value {
        Value::Array(_) => Ok(value.clone()),
        Value::String(s) => Ok(Value::Array(
            s.split(',').map(|p| Value::String(p.to_string())).collect(),
        )),
        Value::Number(_) | Value::Bool(_) => Ok(Value::Array(vec![Value::String(py_str(value))])),
        other => Err(format!(
            "{} cannot be converted to a list",
            type_name(other)
        )),
    }
}

fn to_dict(value: &Value) -> Result<Map<String, Value>, String> {
    match value {
        Value::Object(m) => Ok(m.clone()),
        Value::String(s) if s.trim_start().starts_with('{') => match serde_json::from_str(s) {
            Ok(Value::Object(m)) => Ok(m),
            _ => Err("unable to evaluate string as dictionary".into()),
        },
        Value::String(s) => parse_key_values(s)
            .ok_or_else(|| "dictionary requested, could not parse JSON or key=value".into()),
        other => Err(format!(
            "{} cannot be converted to a dict",
            type_name(other)
        )),
    }
}

/// Reads `k=v k2="v 2",k3=v3`: fields are separated by spaces or commas outside quotes,
/// quotes are removed, a backslash takes the next character literally.
fn parse_key_values(text: &str) -> Option<Map<String, Value>> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in text.trim().chars() {
        if escaped {
            field.push(c);
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if quote == Some(c) {
            quote = None;
        } else if quote.is_none() && (c == '\'' || c == '"') {
            quote = Some(c);
        } else if quote.is_none() && (c == ',' || c == ' ') {
            if !field.is_empty() {
                fields.push(std::mem::take(&mut field));
            }
        } else {
            field.push(c);
        }
    }
    if !field.is_empty() {
        fields.push(field);
    }
    let mut map = Map::new();
    for f in fields {
        let (k, v) = f.split_once('=')?;
        map.insert(k.to_string(), Value::String(v.to_string()));
    }
    Some(map)
}

fn to_json_text(value: &Value) -> Result<String, String> {
    match value {
        Value::String(s) => Ok(s.trim().to_string()),
        Value::Array(_) | Value::Object(_) => Ok(json_dumps(value)),
        other => Err(format!(
            "{} cannot be converted to a json string",
            type_name(other)
        )),
    }
}

fn to_size(value: &Value, bits: bool, what: &str) -> Result<Value, String> {
    let text = match value {
        Value::String(s) => s.clone(),
        Value::Number(_) => py_str(value),
        other => {
            return Err(format!(
                "{} cannot be converted to {what} value",
                type_name(other)
            ));
        }
    };
    human_to_number(&text, bits).map(Value::from).map_err(|e| {
        format!(
            "{} cannot be converted to {what} value: {e}",
            type_name(value)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn env(name: &str) -> Option<String> {
        (name == "HOME").then(|| "/root".to_string())
    }

    fn ok(kind: ArgType, v: Value) -> Value {
        let ctx = Context {
            env: &env,
            string_conversion: StringConversion::Ignore,
            ignore_unknown: false,
        };
        coerce(kind, &v, &ctx, &mut Vec::new()).unwrap()
    }

    fn err(kind: ArgType, v: Value) -> String {
        let ctx = Context {
            env: &env,
            string_conversion: StringConversion::Ignore,
            ignore_unknown: false,
        };
        coerce(kind, &v, &ctx, &mut Vec::new()).unwrap_err()
    }

    #[test]
    fn booleans() {
        for t in ["yes", "YES", "on", "True", "t", "y", "1", " true "] {
            assert_eq!(ok(ArgType::Bool, json!(t)), json!(true), "{t}");
        }
        for f in ["no", "Off", "false", "F", "n", "0"] {
            assert_eq!(ok(ArgType::Bool, json!(f)), json!(false), "{f}");
        }
        assert_eq!(ok(ArgType::Bool, json!(1)), json!(true));
        assert_eq!(ok(ArgType::Bool, json!(0.0)), json!(false));
        assert!(
            err(ArgType::Bool, json!("maybe")).contains("The value 'maybe' is not a valid boolean")
        );
        assert!(err(ArgType::Bool, json!(2)).contains("not a valid boolean"));
        assert_eq!(
            err(ArgType::Bool, json!([])),
            "<class 'list'> cannot be converted to a bool"
        );
    }

    #[test]
    fn integers() {
        assert_eq!(ok(ArgType::Int, json!("42")), json!(42));
        assert_eq!(ok(ArgType::Int, json!(" -7 ")), json!(-7));
        assert_eq!(ok(ArgType::Int, json!("1_000")), json!(1000));
        assert_eq!(ok(ArgType::Int, json!(42.0)), json!(42));
        assert_eq!(ok(ArgType::Int, json!(5)), json!(5));
        assert_eq!(ok(ArgType::Int, json!(true)), json!(1));
        // 2.19 reads text as a decimal number that must be whole.
        assert_eq!(ok(ArgType::Int, json!("4.0")), json!(4));
        assert_eq!(ok(ArgType::Int, json!("1e3")), json!(1000));
        assert_eq!(ok(ArgType::Int, json!("-2.50e1")), json!(-25));
        assert_eq!(ok(ArgType::Int, json!("120e-1")), json!(12));
        assert_eq!(
            err(ArgType::Int, json!(42.5)),
            "\"42.5\" cannot be converted to an int"
        );
        assert_eq!(
            err(ArgType::Int, json!("1.5")),
            "\"'1.5'\" cannot be converted to an int"
        );
        assert_eq!(
            err(ArgType::Int, json!("0x10")),
            "\"'0x10'\" cannot be converted to an int"
        );
        assert_eq!(
            err(ArgType::Int, json!(null)),
            "\"None\" cannot be converted to an int"
        );
        assert_eq!(
            err(ArgType::Int, json!({})),
            "\"{}\" cannot be converted to an int"
        );
    }

    #[test]
    fn floats() {
        assert_eq!(ok(ArgType::Float, json!("1.5")), json!(1.5));
        assert_eq!(ok(ArgType::Float, json!(3)), json!(3.0));
        assert_eq!(ok(ArgType::Float, json!("1e3")), json!(1000.0));
        assert_eq!(
            err(ArgType::Float, json!("abc")),
            "<class 'str'> cannot be converted to a float"
        );
        assert_eq!(
            err(ArgType::Float, json!("nan")),
            "<class 'str'> cannot be converted to a float"
        );
    }

    #[test]
    fn strings_and_paths() {
        assert_eq!(ok(ArgType::Str, json!(8080)), json!("8080"));
        assert_eq!(ok(ArgType::Str, json!(true)), json!("True"));
        assert_eq!(ok(ArgType::Str, json!(1.0)), json!("1.0"));
        assert_eq!(ok(ArgType::Str, json!(["a"])), json!("['a']"));
        assert_eq!(ok(ArgType::Path, json!("~/x")), json!("/root/x"));
        let ctx = Context {
            env: &env,
            string_conversion: StringConversion::Warn,
            ignore_unknown: false,
        };
        let mut warnings = Vec::new();
        assert_eq!(
            coerce(ArgType::Str, &json!(10), &ctx, &mut warnings),
            Ok(json!("10"))
        );
        assert!(
            warnings[0]
                .starts_with("The value 10 (type int) in a string field was converted to '10'"),
            "{warnings:?}"
        );
        let ctx = Context {
            string_conversion: StringConversion::Error,
            ..ctx
        };
        assert_eq!(
            coerce(ArgType::Str, &json!(["a"]), &ctx, &mut warnings),
            Err("'['a']' is not a string and conversion is not allowed".into())
        );
    }

    #[test]
    fn lists() {
        assert_eq!(ok(ArgType::List, json!("a,b, c")), json!(["a", "b", " c"]));
        assert_eq!(ok(ArgType::List, json!(5)), json!(["5"]));
        assert_eq!(ok(ArgType::List, json!(["x", 1])), json!(["x", 1]));
        assert_eq!(
            err(ArgType::List, json!({"a": 1})),
            "<class 'dict'> cannot be converted to a list"
        );
    }

    #[test]
    fn dicts() {
        assert_eq!(ok(ArgType::Dict, json!(r#"{"a": 1}"#)), json!({"a": 1}));
        assert_eq!(
            ok(ArgType::Dict, json!(r#"a=1 b="two words",c='x=y' d=e\ f"#)),
            json!({"a": "1", "b": "two words", "c": "x=y", "d": "e f"})
        );
        assert_eq!(
            err(ArgType::Dict, json!("{bad")),
            "unable to evaluate string as dictionary"
        );
        assert_eq!(
            err(ArgType::Dict, json!("a=1 b")),
            "dictionary requested, could not parse JSON or key=value"
        );
        assert_eq!(
            err(ArgType::Dict, json!([1])),
            "<class 'list'> cannot be converted to a dict"
        );
    }

    #[test]
    fn json_text_raw_and_sizes() {
        assert_eq!(
            ok(ArgType::Json, json!({"a": [1, "b"]})),
            json!(r#"{"a": [1, "b"]}"#)
        );
        assert_eq!(ok(ArgType::Jsonarg, json!(" [1] ")), json!("[1]"));
        assert_eq!(
            err(ArgType::Jsonarg, json!(1)),
            "<class 'int'> cannot be converted to a json string"
        );
        assert_eq!(ok(ArgType::Raw, json!({"k": [1]})), json!({"k": [1]}));
        assert_eq!(ok(ArgType::Bytes, json!("1k")), json!(1024));
        assert_eq!(ok(ArgType::Bytes, json!("10MB")), json!(10 << 20));
        assert_eq!(ok(ArgType::Bytes, json!("1.5G")), json!(1610612736u64));
        assert_eq!(ok(ArgType::Bytes, json!(42)), json!(42));
        assert_eq!(ok(ArgType::Bits, json!("1Mb")), json!(1048576));
        assert!(
            err(ArgType::Bytes, json!("1Mb"))
                .starts_with("<class 'str'> cannot be converted to a Byte value")
        );
        assert!(
            err(ArgType::Bits, json!("1MB"))
                .starts_with("<class 'str'> cannot be converted to a Bit value")
        );
        assert_eq!(
            err(ArgType::Bits, json!([])),
            "<class 'list'> cannot be converted to a Bit value"
        );
    }
}
