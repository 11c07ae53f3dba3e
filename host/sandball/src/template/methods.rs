//! The Python methods Ansible users call on values in templates (`d.items()`,
//! `s.startswith('x')`, `s.split(',')`, `l.index(x)`), which Jinja2 allows because its
//! values are Python objects.

use minijinja::value::{Tuple, ValueKind, from_args};
use minijinja::{Error, ErrorKind, State, Value};

use crate::template::filters::strings::{py_split, py_splitlines, py_strip};

/// The engine's unknown-method callback: dispatches Python methods by the value's kind.
pub(crate) fn call_method(
    _state: &mut State,
    value: &Value,
    method: &str,
    args: &[Value],
) -> Result<Value, Error> {
    match value.kind() {
        // A method of an undefined value is undefined, as in Ansible (`nope.upper() |
        // default('x')`); using it is the error naming the variable.
        ValueKind::Undefined => Ok(value.clone()),
        ValueKind::Map => map_method(value, method, args),
        ValueKind::Seq => list_method(value, method, args),
        ValueKind::String => string_method(value.as_str().unwrap_or_default(), method, args),
        _ => Err(Error::from(ErrorKind::UnknownMethod)),
    }
}

fn map_method(map: &Value, method: &str, args: &[Value]) -> Result<Value, Error> {
    match method {
        "items" => {
            let () = from_args(args)?;
            let mut pairs = Vec::with_capacity(map.len().unwrap_or(0));
            for key in map.try_iter()?.checked() {
                let key = key?;
                let value = map.get_item(&key)?;
                pairs.push(Value::from(Tuple::from(vec![key, value])));
            }
            Ok(Value::from(pairs))
        }
        "keys" => {
            let () = from_args(args)?;
            Ok(Value::from(map.try_iter()?.collect::<Vec<_>>()))
        }
        "values" => {
            let () = from_args(args)?;
            let mut values = Vec::with_capacity(map.len().unwrap_or(0));
            for key in map.try_iter()?.checked() {
                values.push(map.get_item(&key?)?);
            }
            Ok(Value::from(values))
        }
        "get" => {
            let (key, default): (Value, Option<Value>) = from_args(args)?;
            let found = map.get_item(&key)?;
            Ok(if found.is_undefined() {
                default.unwrap_or(Value::from(()))
            } else {
                found
            })
        }
        _ => Err(Error::from(ErrorKind::UnknownMethod)),
    }
}

fn list_method(list: &Value, method: &str, args: &[Value]) -> Result<Value, Error> {
    match method {
        "index" => {
            let (needle,): (Value,) = from_args(args)?;
            list.try_iter()?
                .position(|item| item == needle)
                .map(Value::from)
                .ok_or_else(|| {
                    Error::new(
                        ErrorKind::InvalidOperation,
                        format!("{needle} is not in list"),
                    )
                })
        }
        "count" => {
            let (needle,): (Value,) = from_args(args)?;
            Ok(Value::from(
                list.try_iter()?.filter(|item| *item == needle).count(),
            ))
        }
        _ => Err(Error::from(ErrorKind::UnknownMethod)),
    }
}

fn string_method(s: &str, method: &str, args: &[Value]) -> Result<Value, Error> {
    match method {
        "startswith" | "endswith" => {
            let (affix,): (Value,) = from_args(args)?;
            let candidates: Vec<Value> = match affix.kind() {
                ValueKind::Seq => affix.try_iter()?.collect(),
                _ => vec![affix],
            };
            let mut found = false;
            for candidate in &candidates {
                let text = candidate.as_str().ok_or_else(|| {
                    Error::new(
                        ErrorKind::InvalidOperation,
                        format!("{method} needs a string or a list of strings"),
                    )
                })?;
                found |= if method == "startswith" {
                    s.starts_with(text)
                } else {
                    s.ends_with(text)
                };
            }
            Ok(Value::from(found))
        }
        "split" => {
            let (sep, maxsplit): (Option<Option<String>>, Option<i64>) = from_args(args)?;
            py_split(s, sep.flatten().as_deref(), maxsplit.unwrap_or(-1))
        }
        "splitlines" => {
            let () = from_args(args)?;
            Ok(Value::from(py_splitlines(s)))
        }
        "strip" | "lstrip" | "rstrip" => {
            let (chars,): (Option<Option<String>>,) = from_args(args)?;
            let chars = chars.flatten();
            Ok(Value::from(py_strip(
                s,
                chars.as_deref(),
                method != "rstrip",
                method != "lstrip",
            )))
        }
        "lower" => Ok(Value::from(s.to_lowercase())),
        "upper" => Ok(Value::from(s.to_uppercase())),
        "capitalize" => {
            let mut chars = s.chars();
            Ok(Value::from(match chars.next() {
                Some(first) => first
                    .to_uppercase()
                    .chain(chars.as_str().to_lowercase().chars())
                    .collect(),
                None => String::new(),
            }))
        }
        "replace" => {
            let (old, new, count): (String, String, Option<i64>) = from_args(args)?;
            Ok(Value::from(match count {
                Some(count) if count >= 0 => s.replacen(&old, &new, count as usize),
                _ => s.replace(&old, &new),
            }))
        }
        "find" => {
            let (needle,): (String,) = from_args(args)?;
            Ok(Value::from(match s.find(&needle) {
                Some(byte) => s[..byte].chars().count() as i64,
                None => -1,
            }))
        }
        "count" => {
            let (needle,): (String,) = from_args(args)?;
            Ok(Value::from(if needle.is_empty() {
                s.chars().count() + 1
            } else {
                s.matches(&needle).count()
            }))
        }
        "join" => {
            let (items,): (Value,) = from_args(args)?;
            let mut parts = Vec::new();
            for item in items.try_iter()?.checked() {
                let item = item?;
                let text = item.as_str().ok_or_else(|| {
                    Error::new(
                        ErrorKind::InvalidOperation,
                        format!("join expects strings, found {}", item.kind()),
                    )
                })?;
                parts.push(text.to_string());
            }
            Ok(Value::from(parts.join(s)))
        }
        "isdigit" => char_class(s, args, |c| c.is_ascii_digit()),
        "isalpha" => char_class(s, args, char::is_alphabetic),
        "isalnum" => char_class(s, args, char::is_alphanumeric),
        "isspace" => char_class(s, args, char::is_whitespace),
        "islower" => {
            let () = from_args(args)?;
            Ok(Value::from(
                s.chars().any(char::is_lowercase) && !s.chars().any(char::is_uppercase),
            ))
        }
        "isupper" => {
            let () = from_args(args)?;
            Ok(Value::from(
                s.chars().any(char::is_uppercase) && !s.chars().any(char::is_lowercase),
            ))
        }
        _ => Err(Error::from(ErrorKind::UnknownMethod)),
    }
}

/// Python's `str.isdigit()` and friends: non-empty and every character in the class.
fn char_class(s: &str, args: &[Value], class: fn(char) -> bool) -> Result<Value, Error> {
    let () = from_args(args)?;
    Ok(Value::from(!s.is_empty() && s.chars().all(class)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(value: serde_json::Value, method: &str, args: &[Value]) -> serde_json::Value {
        let env = minijinja::Environment::new();
        let mut state = env.empty_state();
        let value = Value::from(minijinja::value::Serde(&value));
        let result = call_method(&mut state, &value, method, args).unwrap();
        crate::template::convert::to_json(&result).unwrap()
    }

    #[test]
    fn dict_methods() {
        let d = json!({"a": 1, "b": 2});
        assert_eq!(call(d.clone(), "items", &[]), json!([["a", 1], ["b", 2]]));
        assert_eq!(call(d.clone(), "keys", &[]), json!(["a", "b"]));
        assert_eq!(call(d.clone(), "values", &[]), json!([1, 2]));
        assert_eq!(call(d.clone(), "get", &[Value::from("a")]), json!(1));
        assert_eq!(call(d.clone(), "get", &[Value::from("z")]), json!(null));
        assert_eq!(
            call(d, "get", &[Value::from("z"), Value::from(0)]),
            json!(0)
        );
    }

    #[test]
    fn list_methods() {
        let l = json!(["x", "y", "x"]);
        assert_eq!(call(l.clone(), "index", &[Value::from("y")]), json!(1));
        assert_eq!(call(l, "count", &[Value::from("x")]), json!(2));
    }

    #[test]
    fn string_methods() {
        let s = json!("  Hello, World  ");
        assert_eq!(call(s.clone(), "strip", &[]), json!("Hello, World"));
        assert_eq!(call(s.clone(), "lstrip", &[]), json!("Hello, World  "));
        assert_eq!(
            call(s.clone(), "split", &[Value::from(",")]),
            json!(["  Hello", " World  "])
        );
        assert_eq!(call(s, "split", &[]), json!(["Hello,", "World"]));
        assert_eq!(
            call(json!("abc"), "startswith", &[Value::from("ab")]),
            json!(true)
        );
        assert_eq!(
            call(json!("abc"), "endswith", &[Value::from(vec!["x", "bc"])]),
            json!(true)
        );
        assert_eq!(
            call(
                json!("a-b-c"),
                "replace",
                &[Value::from("-"), Value::from("+"), Value::from(1)]
            ),
            json!("a+b-c")
        );
        assert_eq!(call(json!("hello"), "find", &[Value::from("l")]), json!(2));
        assert_eq!(call(json!("hello"), "find", &[Value::from("z")]), json!(-1));
        assert_eq!(call(json!("hello"), "count", &[Value::from("l")]), json!(2));
        assert_eq!(
            call(json!(","), "join", &[Value::from(vec!["a", "b"])]),
            json!("a,b")
        );
        assert_eq!(
            call(json!("a\nb\r\nc"), "splitlines", &[]),
            json!(["a", "b", "c"])
        );
        assert_eq!(call(json!("123"), "isdigit", &[]), json!(true));
        assert_eq!(call(json!(""), "isdigit", &[]), json!(false));
        assert_eq!(call(json!("hELLO"), "capitalize", &[]), json!("Hello"));
        assert_eq!(call(json!("ABC1"), "isupper", &[]), json!(true));
    }

    #[test]
    fn unknown_methods_are_reported() {
        let env = minijinja::Environment::new();
        let mut state = env.empty_state();
        let err = call_method(&mut state, &Value::from(1), "foo", &[]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::UnknownMethod);
    }
}
