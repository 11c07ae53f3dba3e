//! Tests on collections: `subset`, `superset` (old names `issubset`, `issuperset`),
//! `nan` (`isnan`), `contains`, `any`, `all` (Python's, on
//! the items' truth), and `sequence` as Jinja2 has it (strings, lists and dictionaries
//! are sequences).

use minijinja::value::ValueKind;
use minijinja::{Error, ErrorKind, State, Value};

use crate::template::convert::ensure_defined;
use crate::template::filters::collections::Seen;
use crate::template::undefined::Plugins;

pub(super) fn register(env: &mut Plugins<'_>) {
    let subset = |state: &State, a: &Value, b: &Value| is_subset(state, a, b);
    let superset = |state: &State, a: &Value, b: &Value| is_subset(state, b, a);
    env.add_test("subset", subset);
    env.add_test("issubset", subset);
    env.add_test("superset", superset);
    env.add_test("issuperset", superset);
    // `nan` (old name `isnan`): a float that is not a number; anything else is not.
    let nan = |value: &Value| f64::try_from(value.clone()).is_ok_and(f64::is_nan);
    env.add_test("nan", nan);
    env.add_test("isnan", nan);
    env.add_test("contains", contains);
    env.add_test("any", |state: &State, seq: &Value| {
        Ok::<_, Error>(items(state, seq)?.iter().any(Value::is_true))
    });
    env.add_test("all", |state: &State, seq: &Value| {
        Ok::<_, Error>(items(state, seq)?.iter().all(Value::is_true))
    });
    env.add_test("sequence", |value: &Value| {
        matches!(
            value.kind(),
            ValueKind::String | ValueKind::Seq | ValueKind::Map
        )
    });
}

fn items(state: &State, value: &Value) -> Result<Vec<Value>, Error> {
    ensure_defined(state, value)?;
    value.try_iter()?.checked().collect()
}

/// Every item of `a` is in `b`.
fn is_subset(state: &State, a: &Value, b: &Value) -> Result<bool, Error> {
    let b = Seen::of(&items(state, b)?);
    Ok(items(state, a)?.iter().all(|x| b.contains(x)))
}

/// `seq is contains(value)`: Python's `value in seq`.
fn contains(state: &State, seq: &Value, value: &Value) -> Result<bool, Error> {
    ensure_defined(state, seq)?;
    ensure_defined(state, value)?;
    match seq.kind() {
        ValueKind::String => match value.as_str() {
            Some(needle) => Ok(seq.as_str().unwrap_or_default().contains(needle)),
            None => Err(Error::new(
                ErrorKind::InvalidOperation,
                format!("'in <string>' requires a string, not {}", value.kind()),
            )),
        },
        ValueKind::Map => Ok(!seq.get_item(value)?.is_undefined()),
        _ => Ok(items(state, seq)?.contains(value)),
    }
}

#[cfg(test)]
mod tests {
    use crate::template::filters::testing::eval;
    use serde_json::json;

    #[test]
    fn sets() {
        assert_eq!(eval("[1, 2] is subset([1, 2, 3])"), json!(true));
        assert_eq!(eval("[1, 4] is subset([1, 2, 3])"), json!(false));
        assert_eq!(eval("[1, 2, 3] is superset([3, 1])"), json!(true));
        assert_eq!(eval("[1] is superset([2])"), json!(false));
        assert_eq!(eval("[1] is issubset([1, 2])"), json!(true));
        assert_eq!(eval("[1, 2] is issuperset([3])"), json!(false));
        assert_eq!(eval("('nan' | float) is nan"), json!(true));
        assert_eq!(eval("('nan' | float) is isnan"), json!(true));
        assert_eq!(eval("'bad' is nan"), json!(false));
        assert_eq!(eval("1.5 is nan"), json!(false));
    }

    #[test]
    fn containment() {
        assert_eq!(eval("[1, 2] is contains(2)"), json!(true));
        assert_eq!(eval("[1, 2] is contains(3)"), json!(false));
        assert_eq!(eval("'abc' is contains('b')"), json!(true));
        assert_eq!(eval("{'a': 1} is contains('a')"), json!(true));
        assert_eq!(
            eval("[[1], [2]] | select('contains', 2) | list"),
            json!([[2]])
        );
        assert_eq!(eval("2 is in [1, 2]"), json!(true));
    }

    #[test]
    fn jinja_type_tests() {
        assert_eq!(eval("'a' is sequence"), json!(true));
        assert_eq!(eval("{} is sequence"), json!(true));
        assert_eq!(eval("1 is sequence"), json!(false));
        assert_eq!(eval("'a' is string"), json!(true));
        assert_eq!(eval("1 is number"), json!(true));
        assert_eq!(eval("1.5 is float"), json!(true));
        assert_eq!(eval("1 is integer"), json!(true));
        assert_eq!(eval("{} is mapping"), json!(true));
        assert_eq!(eval("'ab' is iterable"), json!(true));
        assert_eq!(eval("true is boolean"), json!(true));
        assert_eq!(eval("none is none"), json!(true));
    }
}
