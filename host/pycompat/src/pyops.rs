//! Python's operations on values that Ansible's behaviour rests on: truth
//! (`bool(value)`), equality (`a == b`) and `str.splitlines()`.

use serde_json::Value;

/// Python's `str.splitlines()`: lines without their ends, split at `\n`, `\r\n`, `\r`
/// and the other line boundaries Python knows.
pub fn splitlines(text: &str) -> Vec<&str> {
    lines(text).map(|(line, _)| line).collect()
}

/// Python's `str.splitlines(keepends=True)`: each line with its end.
pub fn splitlines_keepends(text: &str) -> Vec<&str> {
    lines(text).map(|(_, with_end)| with_end).collect()
}

/// Each line of `text` as Python's `splitlines` finds them: without its end, and
/// with it.
fn lines(text: &str) -> impl Iterator<Item = (&str, &str)> {
    let is_break = |c: char| {
        matches!(
            c,
            '\n' | '\r'
                | '\x0b'
                | '\x0c'
                | '\x1c'
                | '\x1d'
                | '\x1e'
                | '\u{85}'
                | '\u{2028}'
                | '\u{2029}'
        )
    };
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    std::iter::from_fn(move || {
        while let Some((i, c)) = chars.next() {
            if is_break(c) {
                let mut next = i + c.len_utf8();
                if c == '\r' && chars.peek().is_some_and(|(_, n)| *n == '\n') {
                    chars.next();
                    next += 1;
                }
                let line = (&text[start..i], &text[start..next]);
                start = next;
                return Some(line);
            }
        }
        (start < text.len()).then(|| {
            let rest = &text[start..];
            start = text.len();
            (rest, rest)
        })
    })
}

/// Python's truth value (`bool(value)`): false for `None`, `False`, zero, and empty
/// strings, lists and dicts; true for everything else (`"false"` and `"no"` too).
/// Ansible reads a result's `failed`, `changed`, `skipped` and `unreachable` this way.
pub fn py_truth(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(items) => !items.is_empty(),
        Value::Object(map) => !map.is_empty(),
    }
}

/// Python's `a == b`: numbers compare by value (`1 == 1.0`) and booleans as 0 and 1.
pub fn py_eq(a: &Value, b: &Value) -> bool {
    fn num(v: &Value) -> Option<f64> {
        match v {
            Value::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
            Value::Number(n) => n.as_f64(),
            _ => None,
        }
    }
    match (a, b) {
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| py_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| py_eq(v, w)))
        }
        _ => match (num(a), num(b)) {
            (Some(x), Some(y)) => x == y,
            _ => a == b,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lines_split_as_python_splits_them() {
        assert_eq!(splitlines("a\r\nb\rc\x0bd\n"), ["a", "b", "c", "d"]);
        assert_eq!(splitlines("a\n\nb"), ["a", "", "b"]);
        assert!(splitlines("").is_empty());
    }

    #[test]
    fn truth_follows_python() {
        for v in [
            json!(true),
            json!("false"),
            json!("no"),
            json!({"a": 1}),
            json!([0]),
            json!(-1),
            json!(0.5),
        ] {
            assert!(py_truth(&v), "{v}");
        }
        for v in [
            json!(false),
            json!(""),
            json!({}),
            json!([]),
            json!(0),
            json!(0.0),
            json!(null),
        ] {
            assert!(!py_truth(&v), "{v}");
        }
    }

    #[test]
    fn equality_follows_python() {
        assert!(py_eq(&json!(1), &json!(1.0)));
        assert!(py_eq(&json!(true), &json!(1)));
        assert!(!py_eq(&json!("1"), &json!(1)));
        assert!(py_eq(&json!({"a": [1]}), &json!({"a": [1.0]})));
    }
}
