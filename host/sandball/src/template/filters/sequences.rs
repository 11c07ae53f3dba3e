//! Filters that make sequences out of a list: `combinations` and `permutations` (as
//! Python's `itertools` makes them, each one a tuple), `subelements` (each element
//! paired with each item of one of its lists) and `groupby` (each group a named tuple
//! `(grouper, list)`).

use std::sync::Arc;

use minijinja::value::{Enumerator, Kwargs, Object, ObjectRepr, Tuple, ValueKind};
use minijinja::{Error, ErrorKind, State, Value};

use crate::template::convert::ensure_defined;
use crate::template::python::py_repr;
use crate::template::undefined::Plugins;

pub(super) fn register(env: &mut Plugins<'_>) {
    env.add_filter("combinations", combinations);
    env.add_filter("permutations", permutations);
    env.add_filter("subelements", subelements);
    env.add_filter("groupby", groupby);
}

fn error(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::InvalidOperation, message.into())
}

/// The items of any iterable (a string's characters, a mapping's keys), as
/// `itertools` takes them.
fn iterable(state: &State, value: &Value) -> Result<Vec<Value>, Error> {
    ensure_defined(state, value)?;
    value.try_iter()?.checked().collect()
}

/// A length argument: a non-negative integer.
fn length(value: &Value, what: &str) -> Result<usize, Error> {
    match i64::try_from(value.clone()) {
        Ok(n) if n >= 0 && value.is_integer() => Ok(n as usize),
        Ok(_) if value.is_integer() => Err(error(format!("{what} must be non-negative"))),
        _ => Err(error(format!(
            "Expected int as r, got {}",
            crate::template::filters::python_type(value)
        ))),
    }
}

/// The tuples of `indices` picked from `pool`.
fn tuples(pool: &[Value], rows: Vec<Vec<usize>>) -> Value {
    Value::from(
        rows.into_iter()
            .map(|row| {
                Value::from(Tuple::from(
                    row.into_iter().map(|i| pool[i].clone()).collect::<Vec<_>>(),
                ))
            })
            .collect::<Vec<_>>(),
    )
}

/// `combinations(r)`: the `r`-long combinations of the items, in
/// `itertools.combinations` order.
fn combinations(state: &State, value: &Value, r: &Value) -> Result<Value, Error> {
    let pool = iterable(state, value)?;
    let r = length(r, "r")?;
    let n = pool.len();
    let mut rows = Vec::new();
    if r <= n {
        let mut indices: Vec<usize> = (0..r).collect();
        loop {
            rows.push(indices.clone());
            // The rightmost index that can still move right.
            let Some(i) = (0..r).rev().find(|&i| indices[i] != i + n - r) else {
                break;
            };
            indices[i] += 1;
            for j in i + 1..r {
                indices[j] = indices[j - 1] + 1;
            }
        }
    }
    Ok(tuples(&pool, rows))
}

/// `permutations(r=None)`: the `r`-long (all items long by default) permutations of
/// the items, in `itertools.permutations` order.
fn permutations(
    state: &State,
    value: &Value,
    r: Option<Value>,
    kwargs: Kwargs,
) -> Result<Value, Error> {
    let r = super::positional_or_named(r, &kwargs, "r")?;
    kwargs.assert_all_used()?;
    let pool = iterable(state, value)?;
    let n = pool.len();
    let r = match r.filter(|r| !r.is_none()) {
        None => n,
        Some(r) => length(&r, "r")?,
    };
    let mut rows = Vec::new();
    if r <= n {
        let mut indices: Vec<usize> = (0..n).collect();
        let mut cycles: Vec<usize> = (0..r).map(|i| n - i).collect();
        rows.push(indices[..r].to_vec());
        'next: loop {
            for i in (0..r).rev() {
                cycles[i] -= 1;
                if cycles[i] == 0 {
                    let moved = indices.remove(i);
                    indices.push(moved);
                    cycles[i] = n - i;
                } else {
                    let j = n - cycles[i];
                    indices.swap(i, j);
                    rows.push(indices[..r].to_vec());
                    continue 'next;
                }
            }
            break;
        }
    }
    Ok(tuples(&pool, rows))
}

/// Python's `repr()` of a value, for the messages.
fn repr(value: &Value) -> String {
    let mut out = String::new();
    match py_repr(value, &mut out) {
        Ok(()) => out,
        Err(_) => value.to_string(),
    }
}

/// `subelements(keys, skip_missing=False)`: `(element, item)` for each item of the list
/// that the dotted `keys` (or list of keys) lead to in each element of a list (or of
/// a mapping's values).
fn subelements(
    state: &State,
    value: &Value,
    keys: &Value,
    skip_missing: Option<bool>,
    kwargs: Kwargs,
) -> Result<Value, Error> {
    ensure_defined(state, value)?;
    let skip_missing = match kwargs.get::<Option<bool>>("skip_missing")? {
        Some(flag) => flag,
        None => skip_missing.unwrap_or(false),
    };
    kwargs.assert_all_used()?;
    let elements: Vec<Value> = match value.kind() {
        ValueKind::Map => value
            .try_iter()?
            .map(|key| value.get_item(&key))
            .collect::<Result<_, _>>()?,
        ValueKind::Seq => value.try_iter()?.collect(),
        _ => return Err(error("obj must be a list of dicts or a nested dict")),
    };
    let keys: Vec<Value> = match keys.kind() {
        ValueKind::Seq => keys.try_iter()?.collect(),
        ValueKind::String => keys
            .as_str()
            .unwrap_or_default()
            .split('.')
            .map(Value::from)
            .collect(),
        _ => return Err(error("subelements must be a list or a string")),
    };
    let mut out = Vec::new();
    for element in elements {
        let mut values = element.clone();
        for key in &keys {
            match values.kind() {
                ValueKind::Map => match Some(values.get_item(key)?).filter(|v| !v.is_undefined()) {
                    Some(next) => values = next,
                    None if skip_missing => {
                        values = Value::from(Vec::<Value>::new());
                        break;
                    }
                    None => {
                        return Err(error(format!(
                            "could not find {} key in iterated item {}",
                            repr(key),
                            repr(&values)
                        )));
                    }
                },
                _ => {
                    return Err(error(format!(
                        "the key {} should point to a dictionary, got '{}'",
                        crate::template::python::py_str(key)?,
                        crate::template::python::py_str(&values)?
                    )));
                }
            }
        }
        if values.kind() != ValueKind::Seq || crate::template::python::is_tuple(&values) {
            return Err(error(format!(
                "the key {} should point to a list, got {}",
                keys.last().map(repr).unwrap_or_default(),
                repr(&values)
            )));
        }
        for item in values.try_iter()? {
            out.push(Value::from(Tuple::from(vec![element.clone(), item])));
        }
    }
    Ok(Value::from(out))
}

/// One group of `groupby`: Python's named tuple `(grouper, list)`, whose fields are
/// read by position or by name, and which is a tuple wherever Python tells one apart
/// (its text, `type_debug`, `%` formatting).
#[derive(Debug)]
pub(crate) struct GroupTuple {
    grouper: Value,
    list: Value,
}

impl Object for GroupTuple {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Seq
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        match (key.as_i64(), key.as_str()) {
            (Some(0), _) | (_, Some("grouper")) => Some(self.grouper.clone()),
            (Some(1), _) | (_, Some("list")) => Some(self.list.clone()),
            _ => None,
        }
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Seq(2)
    }
}

/// `groupby(attribute, default=None, case_sensitive=False)`: Jinja's grouping (sorted
/// by the attribute, a dotted path or an index), each group a [`GroupTuple`] whose
/// `list` is a list, as ansible-core's groupby gives them.
fn groupby(value: Value, attribute: Option<Value>, kwargs: Kwargs) -> Result<Value, Error> {
    let attribute = attribute.map(|a| match a.as_str() {
        Some(name) => name.to_string(),
        None => a.to_string(),
    });
    let groups = minijinja::filters::groupby(value, attribute.as_deref(), kwargs)?;
    let mut out = Vec::new();
    for group in groups.try_iter()? {
        out.push(Value::from_object(GroupTuple {
            grouper: group.get_item_by_index(0)?,
            list: Value::from(group.get_attr("list")?.try_iter()?.collect::<Vec<_>>()),
        }));
    }
    Ok(Value::from(out))
}

#[cfg(test)]
mod tests {
    use crate::template::filters::testing::{error, eval};
    use serde_json::json;

    #[test]
    fn combinations_and_permutations_as_itertools() {
        assert_eq!(
            eval("[1, 2, 3, 4] | combinations(2) | list"),
            json!([[1, 2], [1, 3], [1, 4], [2, 3], [2, 4], [3, 4]])
        );
        assert_eq!(eval("[1, 2] | combinations(3) | list"), json!([]));
        assert_eq!(eval("[1, 2] | combinations(0) | list"), json!([[]]));
        assert_eq!(
            eval("[1, 2, 3] | permutations | list"),
            json!([
                [1, 2, 3],
                [1, 3, 2],
                [2, 1, 3],
                [2, 3, 1],
                [3, 1, 2],
                [3, 2, 1]
            ])
        );
        assert_eq!(
            eval("'abc' | permutations(2) | map('join') | list"),
            json!(["ab", "ac", "ba", "bc", "ca", "cb"])
        );
        assert_eq!(eval("[1, 2] | permutations(3) | list"), json!([]));
    }

    #[test]
    fn subelements_pairs_elements_with_their_items() {
        assert_eq!(
            eval("[{'n': 'a', 'g': [1, 2]}, {'n': 'b', 'g': []}] | subelements('g')"),
            json!([[{"n": "a", "g": [1, 2]}, 1], [{"n": "a", "g": [1, 2]}, 2]])
        );
        assert_eq!(
            eval("{'x': {'n': 'a', 'd': {'g': [3]}}} | subelements(['d', 'g'])"),
            json!([[{"n": "a", "d": {"g": [3]}}, 3]])
        );
        assert_eq!(
            eval("[{'n': 'a'}] | subelements('g', skip_missing=True)"),
            json!([])
        );
        assert!(
            error("[{'n': 'a'}] | subelements('g')")
                .contains("could not find 'g' key in iterated item {'n': 'a'}")
        );
        assert!(
            error("[{'n': 'a'}] | subelements('n')")
                .contains("the key 'n' should point to a list, got 'a'")
        );
        assert!(
            error("1 | subelements('n')").contains("obj must be a list of dicts or a nested dict")
        );
        assert!(error("[] | subelements(1)").contains("subelements must be a list or a string"));
    }

    #[test]
    fn groupby_groups_are_named_tuples() {
        let fruits =
            "[{'n': 'apple', 'e': true}, {'n': 'kiwi', 'e': false}, {'n': 'fig', 'e': true}]";
        assert_eq!(
            eval(&format!(
                "{fruits} | groupby('e') | map(attribute='grouper') | list"
            )),
            json!([false, true])
        );
        assert_eq!(
            eval(&format!(
                "({fruits} | groupby('e'))[1].list | map(attribute='n') | list"
            )),
            json!(["apple", "fig"])
        );
        assert_eq!(
            eval(&format!("{fruits} | groupby('e')")),
            json!([
                [false, [{"n": "kiwi", "e": false}]],
                [true, [{"n": "apple", "e": true}, {"n": "fig", "e": true}]]
            ])
        );
        assert_eq!(
            eval("([{'a': 1}] | groupby('a'))[0] | string"),
            json!("(1, [{'a': 1}])")
        );
        assert_eq!(
            eval("([{'a': 1}] | groupby('a'))[0] | type_debug"),
            json!("GroupTuple")
        );
        assert_eq!(
            eval("'%s: %s' % ([[2, 'x']] | groupby(0))[0]"),
            json!("2: [[2, 'x']]")
        );
    }
}
