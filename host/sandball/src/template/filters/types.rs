//! Filters that convert or check the type of a value: `bool`, `int`, `float`, `string`,
//! `type_debug`, and the ones about missing values: `default`/`d`, `mandatory`, `ternary`.

use minijinja::value::{Kwargs, Rest, ValueKind, ValueOrKwargs};
use minijinja::{Error, ErrorKind, Value};

use crate::template::python::py_str;
use crate::template::undefined::Plugins;

pub(super) fn register(env: &mut Plugins<'_>) {
    env.add_filter("bool", to_bool);
    env.add_filter("int", to_int);
    env.add_filter("float", to_float);
    env.add_filter("string", to_string);
    env.taking_undefined().add_filter("type_debug", type_debug);
    env.taking_undefined().add_filter("default", default);
    env.taking_undefined().add_filter("d", default);
    env.taking_undefined().add_filter("mandatory", mandatory);
    env.taking_undefined().add_filter("ternary", ternary);
}

/// Ansible's `bool`: booleans as they are; `yes`, `on`, `true`, `1`, `y`, `t` (any case)
/// and the number 1 are true; everything else is false.
fn to_bool(value: &Value) -> Result<bool, Error> {
    Ok(match value.kind() {
        ValueKind::Bool => value.is_true(),
        ValueKind::String => {
            sandball_pycompat::boolean::word(value.as_str().unwrap_or_default()) == Some(true)
        }
        ValueKind::Number => f64::try_from(value.clone()).is_ok_and(|f| f == 1.0),
        _ => false,
    })
}

/// Jinja's `int`: Python's `int()` of the value (strings in `base`, floats truncated,
/// float strings through `float()`), or `default` (0) when it cannot be converted.
fn to_int(
    value: &Value,
    default: Option<Value>,
    base: Option<u32>,
    kwargs: Kwargs,
) -> Result<Value, Error> {
    let default = match default {
        Some(default) => default,
        None => kwargs
            .get::<Option<Value>>("default")?
            .unwrap_or(Value::from(0)),
    };
    let base = match base {
        Some(base) => base,
        None => kwargs.get::<Option<u32>>("base")?.unwrap_or(10),
    };
    kwargs.assert_all_used()?;
    let converted = match value.kind() {
        ValueKind::Bool => Some(Value::from(i64::from(value.is_true()))),
        ValueKind::Number if value.is_integer() => Some(value.clone()),
        ValueKind::Number => f64::try_from(value.clone()).ok().and_then(float_to_int),
        ValueKind::String => {
            let text = value.as_str().unwrap_or_default();
            parse_python_int(text, base)
                .map(Value::from)
                .or_else(|| parse_python_float(text).and_then(float_to_int))
        }
        _ => None,
    };
    Ok(converted.unwrap_or(default))
}

/// Jinja's `float`: Python's `float()` of the value, or `default` (0.0).
fn to_float(value: &Value, default: Option<Value>, kwargs: Kwargs) -> Result<Value, Error> {
    let default = match default {
        Some(default) => default,
        None => kwargs
            .get::<Option<Value>>("default")?
            .unwrap_or(Value::from(0.0)),
    };
    kwargs.assert_all_used()?;
    let converted = match value.kind() {
        ValueKind::Bool => Some(if value.is_true() { 1.0 } else { 0.0 }),
        ValueKind::Number => f64::try_from(value.clone()).ok(),
        ValueKind::String => parse_python_float(value.as_str().unwrap_or_default()),
        _ => None,
    };
    Ok(converted.map(Value::from).unwrap_or(default))
}

/// Python's `str()` of the value.
fn to_string(value: &Value) -> Result<String, Error> {
    py_str(value)
}

/// The Python type name of the value, as Ansible users know them (an undefined value's
/// is ansible-core 2.19's name for it).
fn type_debug(value: &Value) -> &'static str {
    if value.is_undefined() {
        return "UndefinedMarker";
    }
    python_type(value)
}

/// The Python type name of a value (`int`, `str`, `dict`, `NoneType`…).
pub(crate) fn python_type(value: &Value) -> &'static str {
    match value.kind() {
        ValueKind::None => "NoneType",
        ValueKind::Bool => "bool",
        ValueKind::Number if value.is_integer() => "int",
        ValueKind::Number => "float",
        ValueKind::String => "str",
        ValueKind::Bytes => "bytes",
        ValueKind::Seq if value.downcast_object_ref::<super::GroupTuple>().is_some() => {
            "GroupTuple"
        }
        ValueKind::Seq if value.is_tuple() => "tuple",
        ValueKind::Seq | ValueKind::Iterable => "list",
        ValueKind::Map => "dict",
        _ => "object",
    }
}

/// `default(default_value='', boolean=False)`: the default when the value is undefined
/// (or, with `boolean`, false-ish). The default is given as it is, `None` or undefined
/// too (`nope | default(other) | default('x')` is `x`).
fn default(value: &Value, args: Rest<ValueOrKwargs>) -> Result<Value, Error> {
    let args = args.into_values();
    let (positional, kwargs): (&[Value], Kwargs) = minijinja::value::from_args(&args)?;
    if positional.len() > 2 {
        return Err(Error::from(ErrorKind::TooManyArguments));
    }
    let default_value = match positional.first() {
        Some(v) => v.clone(),
        None if kwargs.has("default_value") => kwargs.get::<Value>("default_value")?,
        None => Value::from(""),
    };
    let boolean = match positional.get(1) {
        Some(v) => v.is_true(),
        None => kwargs.get::<Option<bool>>("boolean")?.unwrap_or(false),
    };
    kwargs.assert_all_used()?;
    Ok(if value.is_undefined() || (boolean && !value.is_true()) {
        default_value
    } else {
        value.clone()
    })
}

/// `mandatory(msg=None)`: the value, or an error if it is undefined.
fn mandatory(value: &Value, msg: Option<String>, kwargs: Kwargs) -> Result<Value, Error> {
    let msg = super::positional_or_named(msg, &kwargs, "msg")?;
    kwargs.assert_all_used()?;
    if value.is_undefined() {
        // The template's error names the variable (see `MANDATORY`).
        let message = msg.unwrap_or_else(|| crate::template::error::MANDATORY.to_string());
        return Err(Error::new(ErrorKind::InvalidOperation, message));
    }
    Ok(value.clone())
}

/// `ternary(true_val, false_val, none_val=None)`: an undefined value is the result, an
/// undefined value not chosen does not matter.
fn ternary(
    value: &Value,
    true_val: Value,
    false_val: Value,
    rest: Rest<ValueOrKwargs>,
) -> Result<Value, Error> {
    // `none_val`, by position or by name (the engine passes at most five arguments).
    let raw: Vec<Value> = rest.iter().map(|a| Value::from(a.clone())).collect();
    let (none_val, kwargs): (Option<Value>, Kwargs) = minijinja::value::from_args(&raw)?;
    let none_val = super::positional_or_named(none_val, &kwargs, "none_val")?;
    kwargs.assert_all_used()?;
    Ok(match none_val {
        _ if value.is_undefined() => value.clone(),
        Some(none_val) if value.is_none() => none_val,
        _ if value.is_true() => true_val,
        _ => false_val,
    })
}

fn float_to_int(f: f64) -> Option<Value> {
    f.is_finite().then(|| Value::from(f.trunc() as i128))
}

/// Python's `int(text, base)`: surrounding whitespace, a sign, the base's prefix
/// (`0x` for 16, `0o` for 8, `0b` for 2) and underscores between digits are accepted.
fn parse_python_int(text: &str, base: u32) -> Option<i128> {
    if !(2..=36).contains(&base) {
        return None;
    }
    let text = text.trim();
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let prefix = match base {
        16 => Some("0x"),
        8 => Some("0o"),
        2 => Some("0b"),
        _ => None,
    };
    let digits = match prefix {
        Some(prefix) if digits.len() > 2 && digits[..2].eq_ignore_ascii_case(prefix) => {
            digits[2..].strip_prefix('_').unwrap_or(&digits[2..])
        }
        _ => digits,
    };
    if digits.is_empty()
        || digits.starts_with('_')
        || digits.ends_with('_')
        || digits.contains("__")
        || digits.starts_with(['+', '-'])
    {
        return None;
    }
    let digits = digits.replace('_', "");
    let magnitude = i128::from_str_radix(&digits, base).ok()?;
    Some(if negative { -magnitude } else { magnitude })
}

/// Python's `float(text)`: surrounding whitespace, `inf`, `nan` and exponents accepted.
pub(super) fn parse_python_float(text: &str) -> Option<f64> {
    let text = text.trim();
    let lower = text.to_ascii_lowercase();
    let unsigned = lower.trim_start_matches(['+', '-']);
    if matches!(unsigned, "inf" | "infinity" | "nan") {
        return lower.parse().ok();
    }
    if text.is_empty() || text.contains(|c: char| c.is_ascii_alphabetic() && !"eE".contains(c)) {
        return None;
    }
    text.replace('_', "").parse().ok()
}

#[cfg(test)]
mod tests {
    use crate::template::filters::testing::{error, eval};
    use serde_json::json;

    #[test]
    fn bool_filter() {
        for truthy in [
            "'yes'", "'on'", "'1'", "'true'", "'True'", "'YES'", "1", "true",
        ] {
            assert_eq!(eval(&format!("{truthy} | bool")), json!(true), "{truthy}");
        }
        for falsy in [
            "'no'", "'off'", "'0'", "'false'", "'foo'", "''", "0", "2", "none", "false",
        ] {
            assert_eq!(eval(&format!("{falsy} | bool")), json!(false), "{falsy}");
        }
    }

    #[test]
    fn int_filter() {
        assert_eq!(eval("'42' | int"), json!(42));
        assert_eq!(eval("' 42 ' | int"), json!(42));
        assert_eq!(eval("'-7' | int"), json!(-7));
        assert_eq!(eval("'3.9' | int"), json!(3));
        assert_eq!(eval("3.9 | int"), json!(3));
        assert_eq!(eval("-3.9 | int"), json!(-3));
        assert_eq!(eval("true | int"), json!(1));
        assert_eq!(eval("'abc' | int"), json!(0));
        assert_eq!(eval("'abc' | int(5)"), json!(5));
        assert_eq!(eval("'abc' | int(default=7)"), json!(7));
        assert_eq!(eval("none | int"), json!(0));
        assert_eq!(eval("'0x1f' | int(base=16)"), json!(31));
        assert_eq!(eval("'1f' | int(0, 16)"), json!(31));
        assert_eq!(eval("'0x1f' | int"), json!(0));
        assert_eq!(eval("'755' | int(base=8)"), json!(493));
        assert_eq!(eval("'1_000' | int"), json!(1000));
        assert_eq!(eval("'1e3' | int"), json!(1000));
        assert_eq!(eval("['1', '2'] | map('int') | list"), json!([1, 2]));
        assert!(error("nope | int").contains("'nope' is undefined"));
    }

    #[test]
    fn float_filter() {
        assert_eq!(eval("'1.5' | float"), json!(1.5));
        assert_eq!(eval("' 2 ' | float"), json!(2.0));
        assert_eq!(eval("3 | float"), json!(3.0));
        assert_eq!(eval("'x' | float"), json!(0.0));
        assert_eq!(eval("'x' | float(1.5)"), json!(1.5));
        assert_eq!(eval("'1e2' | float"), json!(100.0));
    }

    #[test]
    fn string_filter() {
        assert_eq!(eval("1 | string"), json!("1"));
        assert_eq!(eval("true | string"), json!("True"));
        assert_eq!(eval("none | string"), json!("None"));
        assert_eq!(eval("[1, 'a'] | string"), json!("[1, 'a']"));
        assert_eq!(eval("{'a': 1.0} | string"), json!("{'a': 1.0}"));
    }

    #[test]
    fn type_debug_filter() {
        let cases = [
            ("1", "int"),
            ("1.5", "float"),
            ("'a'", "str"),
            ("true", "bool"),
            ("none", "NoneType"),
            ("[1]", "list"),
            ("{}", "dict"),
        ];
        for (expr, name) in cases {
            assert_eq!(eval(&format!("{expr} | type_debug")), json!(name), "{expr}");
        }
    }

    #[test]
    fn default_filter() {
        assert_eq!(eval("nope | default('x')"), json!("x"));
        assert_eq!(eval("nope | d('x')"), json!("x"));
        assert_eq!(eval("nope | default"), json!(""));
        assert_eq!(eval("'' | default('x')"), json!(""));
        assert_eq!(eval("'' | default('x', true)"), json!("x"));
        assert_eq!(eval("0 | default('x', boolean=true)"), json!("x"));
        assert_eq!(eval("'v' | default('x', true)"), json!("v"));
        assert_eq!(eval("none | default('x')"), json!(null));
        assert_eq!(eval("{'a': 1}.b | default(2)"), json!(2));
    }

    #[test]
    fn mandatory_filter() {
        assert_eq!(eval("1 | mandatory"), json!(1));
        let e = error("nope | mandatory");
        assert!(e.contains("Mandatory variable 'nope' not defined."), "{e}");
        assert!(error("nope | mandatory('set nope please')").contains("set nope please"));
    }

    #[test]
    fn ternary_filter() {
        assert_eq!(eval("true | ternary('y', 'n')"), json!("y"));
        assert_eq!(eval("0 | ternary('y', 'n')"), json!("n"));
        assert_eq!(eval("none | ternary('y', 'n')"), json!("n"));
        assert_eq!(eval("none | ternary('y', 'n', 'z')"), json!("z"));
        assert_eq!(eval("'x' | ternary(1, 2)"), json!(1));
        assert_eq!(eval("none | ternary('y', 'n', none_val='z')"), json!("z"));
    }
}
