//! Filters on lists and dictionaries: `combine`, `dict2items`, `items2dict`, the set
//! filters (`union`, `intersect`, `difference`, `symmetric_difference`), `flatten`,
//! `zip_longest`, `product`, `extract`, `unique`, `rekey_on_member`; and the `dict()` global with Python's
//! signature.

use std::collections::BTreeSet;

use indexmap::IndexMap;
use minijinja::value::{Kwargs, Rest, ValueKind, ValueOrKwargs};
use minijinja::{Error, ErrorKind, State, Value};

use super::python_type;
use crate::plugins::loader::Kind;
use crate::template::convert::ensure_defined;
use crate::template::undefined::Plugins;

pub(super) fn register(env: &mut Plugins<'_>) {
    env.add_filter("map", map);
    env.add_filter("unique", unique_filter);
    env.add_filter("rekey_on_member", rekey_on_member);
    env.add_filter("combine", combine);
    env.add_filter("dict2items", dict2items);
    env.add_filter("items2dict", items2dict);
    env.add_filter("union", union);
    env.add_filter("intersect", intersect);
    env.add_filter("difference", difference);
    env.add_filter("symmetric_difference", symmetric_difference);
    env.add_filter("flatten", flatten);
    env.add_filter("zip_longest", zip_longest);
    env.add_filter("product", product);
    env.add_filter("extract", extract);
    env.add_function("dict", dict);
}

type Map = IndexMap<Value, Value>;

fn error(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::InvalidOperation, message.into())
}

/// The entries of a mapping value, in order; `what` names the filter in errors.
fn entries(value: &Value, what: &str) -> Result<Map, Error> {
    if value.kind() != ValueKind::Map {
        return Err(error(format!(
            "{what} expects a dictionary, got {}",
            value.kind()
        )));
    }
    let mut map = Map::with_capacity(value.len().unwrap_or(0));
    for key in value.try_iter()?.checked() {
        let key = key?;
        let item = value.get_item(&key)?;
        map.insert(key, item);
    }
    Ok(map)
}

/// The items of a list value.
fn items(state: &State, value: &Value, what: &str) -> Result<Vec<Value>, Error> {
    ensure_defined(state, value)?;
    match value.kind() {
        ValueKind::Seq | ValueKind::Iterable => value.try_iter()?.checked().collect(),
        kind => Err(error(format!("{what} expects a list, got {kind}"))),
    }
}

/// How `combine` merges two lists found under the same key.
#[derive(Clone, Copy, PartialEq)]
enum ListMerge {
    Replace,
    Keep,
    Append,
    Prepend,
    AppendRp,
    PrependRp,
}

/// `combine(*dicts, recursive=False, list_merge='replace')`: later dictionaries win.
fn combine(value: &Value, others: Rest<Value>, kwargs: Kwargs) -> Result<Value, Error> {
    let recursive = kwargs.get::<Option<bool>>("recursive")?.unwrap_or(false);
    let list_merge = match kwargs.get::<Option<String>>("list_merge")?.as_deref() {
        None | Some("replace") => ListMerge::Replace,
        Some("keep") => ListMerge::Keep,
        Some("append") => ListMerge::Append,
        Some("prepend") => ListMerge::Prepend,
        Some("append_rp") => ListMerge::AppendRp,
        Some("prepend_rp") => ListMerge::PrependRp,
        Some(other) => {
            return Err(error(format!(
                "combine: list_merge must be one of replace, keep, append, prepend, append_rp, prepend_rp, not {other:?}"
            )));
        }
    };
    kwargs
        .assert_all_used()
        .map_err(|_| error("'recursive' and 'list_merge' are the only valid keyword arguments"))?;
    // Lists of dictionaries among the terms are flattened one level; nulls (and the
    // texts `None` and `null`) are left out at both levels, as ansible-core's
    // `flatten` leaves them.
    let null = |v: &Value| v.is_none() || matches!(v.as_str(), Some("None" | "null"));
    let mut dicts = Vec::new();
    for term in std::iter::once(value).chain(others.iter()) {
        match term.kind() {
            _ if null(term) => {}
            ValueKind::Seq | ValueKind::Iterable => {
                for item in term.try_iter()?.checked() {
                    let item = item?;
                    if !null(&item) {
                        dicts.push(item);
                    }
                }
            }
            _ => dicts.push(term.clone()),
        }
    }
    // A single term is the result as it is.
    if let [only] = dicts.as_slice() {
        return Ok(only.clone());
    }
    // ansible-core merges from the last term back: the first pair that is not two
    // mappings is named.
    let is_map = |v: &Value| v.kind() == ValueKind::Map;
    let mut later = dicts.last().map_or("dict", python_type);
    for earlier in dicts.iter().rev().skip(1) {
        if !is_map(earlier) || later != "dict" {
            return Err(error(format!(
                "failed to combine variables, expected dicts but got a '{}' and a '{later}'.",
                python_type(earlier)
            )));
        }
        later = "dict";
    }
    let mut result = Map::new();
    for dict in &dicts {
        let dict = entries(dict, "combine")?;
        merge(&mut result, dict, recursive, list_merge)?;
    }
    Ok(Value::from_object(result))
}

/// Merges `high` into `low` (`high` wins), as Ansible's `merge_hash` does.
fn merge(low: &mut Map, high: Map, recursive: bool, list_merge: ListMerge) -> Result<(), Error> {
    for (key, high_value) in high {
        let Some(low_value) = low.get_mut(&key) else {
            low.insert(key, high_value);
            continue;
        };
        if recursive && low_value.kind() == ValueKind::Map && high_value.kind() == ValueKind::Map {
            let mut merged = entries(low_value, "combine")?;
            merge(
                &mut merged,
                entries(&high_value, "combine")?,
                recursive,
                list_merge,
            )?;
            *low_value = Value::from_object(merged);
        } else if low_value.kind() == ValueKind::Seq
            && high_value.kind() == ValueKind::Seq
            && list_merge != ListMerge::Replace
        {
            let old: Vec<Value> = low_value.try_iter()?.collect();
            let new: Vec<Value> = high_value.try_iter()?.collect();
            let old_only = || old.iter().filter(|x| !new.contains(x)).cloned();
            let merged: Vec<Value> = match list_merge {
                ListMerge::Keep => old.clone(),
                ListMerge::Append => old.iter().chain(new.iter()).cloned().collect(),
                ListMerge::Prepend => new.iter().chain(old.iter()).cloned().collect(),
                ListMerge::AppendRp => old_only().chain(new.iter().cloned()).collect(),
                ListMerge::PrependRp => new.iter().cloned().chain(old_only()).collect(),
                ListMerge::Replace => new.clone(),
            };
            *low_value = Value::from(merged);
        } else {
            *low_value = high_value;
        }
    }
    Ok(())
}

/// `dict2items(key_name='key', value_name='value')`.
fn dict2items(value: &Value, kwargs: Kwargs) -> Result<Value, Error> {
    let key_name = kwargs
        .get::<Option<String>>("key_name")?
        .unwrap_or_else(|| "key".into());
    let value_name = kwargs
        .get::<Option<String>>("value_name")?
        .unwrap_or_else(|| "value".into());
    kwargs.assert_all_used()?;
    if value.kind() != ValueKind::Map {
        return Err(error(format!(
            "dict2items requires a dictionary, got <class '{}'> instead.",
            python_type(value)
        )));
    }
    let pairs = entries(value, "dict2items")?
        .into_iter()
        .map(|(k, v)| Value::from_pairs([(key_name.as_str(), k), (value_name.as_str(), v)]))
        .collect::<Vec<_>>();
    Ok(Value::from(pairs))
}

/// `items2dict(key_name='key', value_name='value')`.
fn items2dict(state: &State, value: &Value, kwargs: Kwargs) -> Result<Value, Error> {
    let key_name = kwargs
        .get::<Option<String>>("key_name")?
        .unwrap_or_else(|| "key".into());
    let value_name = kwargs
        .get::<Option<String>>("value_name")?
        .unwrap_or_else(|| "value".into());
    kwargs.assert_all_used()?;
    ensure_defined(state, value)?;
    if !matches!(value.kind(), ValueKind::Seq | ValueKind::Iterable) {
        return Err(error(format!(
            "items2dict requires a list, got <class '{}'> instead.",
            python_type(value)
        )));
    }
    let shown = || {
        let mut out = String::new();
        match crate::template::python::py_repr(value, &mut out) {
            Ok(()) => out,
            Err(_) => value.to_string(),
        }
    };
    let mut map = Map::new();
    for item in items(state, value, "items2dict")? {
        let field = |name: &str| -> Result<Value, Error> {
            if item.kind() != ValueKind::Map {
                return Err(error(format!(
                    "items2dict requires a list of dictionaries, got {} instead.",
                    shown()
                )));
            }
            let found = item.get_item(&Value::from(name))?;
            if found.is_undefined() {
                return Err(error(format!(
                    "items2dict requires each dictionary in the list to contain the keys '{key_name}' and '{value_name}', got {} instead.",
                    shown()
                )));
            }
            Ok(found)
        };
        map.insert(field(&key_name)?, field(&value_name)?);
    }
    Ok(Value::from_object(map))
}

/// Values already seen, compared with `==` (scalars through an ordered set).
#[derive(Default)]
pub(crate) struct Seen {
    scalars: BTreeSet<Value>,
    containers: Vec<Value>,
}

impl Seen {
    pub(crate) fn of(values: &[Value]) -> Seen {
        let mut seen = Seen::default();
        for value in values {
            seen.insert(value);
        }
        seen
    }

    pub(crate) fn contains(&self, value: &Value) -> bool {
        match value.kind() {
            ValueKind::Map | ValueKind::Seq | ValueKind::Iterable => {
                self.containers.contains(value)
            }
            _ => self.scalars.contains(value),
        }
    }

    /// Remembers `value`; true if it was new.
    fn insert(&mut self, value: &Value) -> bool {
        if self.contains(value) {
            return false;
        }
        match value.kind() {
            ValueKind::Map | ValueKind::Seq | ValueKind::Iterable => {
                self.containers.push(value.clone())
            }
            _ => {
                self.scalars.insert(value.clone());
            }
        }
        true
    }
}

/// The values in order of first appearance, each once.
fn unique(values: impl IntoIterator<Item = Value>) -> Vec<Value> {
    let mut seen = Seen::default();
    values.into_iter().filter(|v| seen.insert(v)).collect()
}

/// `union(other)`: the items of both lists, each once, in order.
fn union(state: &State, value: &Value, other: &Value) -> Result<Value, Error> {
    let mut all = items(state, value, "union")?;
    all.extend(items(state, other, "union")?);
    Ok(Value::from(unique(all)))
}

/// `intersect(other)`: the items of the first list that are in the other, each once.
fn intersect(state: &State, value: &Value, other: &Value) -> Result<Value, Error> {
    let other = Seen::of(&items(state, other, "intersect")?);
    let kept = items(state, value, "intersect")?
        .into_iter()
        .filter(|x| other.contains(x));
    Ok(Value::from(unique(kept)))
}

/// `difference(other)`: the items of the first list not in the other, each once.
fn difference(state: &State, value: &Value, other: &Value) -> Result<Value, Error> {
    let other = Seen::of(&items(state, other, "difference")?);
    let kept = items(state, value, "difference")?
        .into_iter()
        .filter(|x| !other.contains(x));
    Ok(Value::from(unique(kept)))
}

/// `symmetric_difference(other)`: the items in exactly one of the lists, each once.
fn symmetric_difference(state: &State, value: &Value, other: &Value) -> Result<Value, Error> {
    let a = items(state, value, "symmetric_difference")?;
    let b = items(state, other, "symmetric_difference")?;
    let a_seen = Seen::of(&a);
    let b_seen = Seen::of(&b);
    let kept = a
        .iter()
        .chain(b.iter())
        .filter(|x| !(a_seen.contains(x) && b_seen.contains(x)))
        .cloned();
    Ok(Value::from(unique(kept)))
}

/// `flatten(levels=None, skip_nulls=True)`: nested lists spliced in, `levels` deep;
/// `none` (and the strings `None` and `null`) dropped unless `skip_nulls` is false.
fn flatten(
    state: &State,
    value: &Value,
    levels: Option<i64>,
    kwargs: Kwargs,
) -> Result<Value, Error> {
    let levels = match levels {
        Some(levels) => Some(levels),
        None => kwargs.get::<Option<i64>>("levels")?,
    };
    let skip_nulls = kwargs.get::<Option<bool>>("skip_nulls")?.unwrap_or(true);
    kwargs.assert_all_used()?;
    let mut out = Vec::new();
    flatten_into(
        items(state, value, "flatten")?,
        levels,
        skip_nulls,
        &mut out,
    )?;
    Ok(Value::from(out))
}

fn flatten_into(
    items: Vec<Value>,
    levels: Option<i64>,
    skip_nulls: bool,
    out: &mut Vec<Value>,
) -> Result<(), Error> {
    for item in items {
        let is_null = item.is_none() || matches!(item.as_str(), Some("None" | "null"));
        if skip_nulls && is_null {
            continue;
        }
        if item.kind() == ValueKind::Seq && levels.is_none_or(|n| n > 0) {
            let nested = item.try_iter()?.checked().collect::<Result<Vec<_>, _>>()?;
            flatten_into(nested, levels.map(|n| n - 1), skip_nulls, out)?;
        } else {
            out.push(item);
        }
    }
    Ok(())
}

/// `zip_longest(*others, fillvalue=None)`.
fn zip_longest(
    state: &State,
    value: &Value,
    others: Rest<Value>,
    kwargs: Kwargs,
) -> Result<Value, Error> {
    let fill = kwargs
        .get::<Option<Value>>("fillvalue")?
        .unwrap_or(Value::from(()));
    kwargs.assert_all_used()?;
    let mut lists = vec![items(state, value, "zip_longest")?];
    for other in others.iter() {
        lists.push(items(state, other, "zip_longest")?);
    }
    let longest = lists.iter().map(Vec::len).max().unwrap_or(0);
    let rows = (0..longest)
        .map(|i| {
            let row: Vec<Value> = lists
                .iter()
                .map(|l| l.get(i).cloned().unwrap_or(fill.clone()))
                .collect();
            Value::from(row)
        })
        .collect::<Vec<_>>();
    Ok(Value::from(rows))
}

/// `product(*others, repeat=1)`: the cartesian product, as `itertools.product`.
fn product(
    state: &State,
    value: &Value,
    others: Rest<Value>,
    kwargs: Kwargs,
) -> Result<Value, Error> {
    let repeat = kwargs.get::<Option<usize>>("repeat")?.unwrap_or(1);
    kwargs.assert_all_used()?;
    let mut lists = vec![items(state, value, "product")?];
    for other in others.iter() {
        lists.push(items(state, other, "product")?);
    }
    let lists: Vec<&Vec<Value>> = (0..repeat).flat_map(|_| lists.iter()).collect();
    let mut rows: Vec<Vec<Value>> = vec![Vec::new()];
    for list in lists {
        rows = rows
            .iter()
            .flat_map(|row| {
                list.iter().map(move |item| {
                    let mut next = row.clone();
                    next.push(item.clone());
                    next
                })
            })
            .collect();
    }
    Ok(Value::from(
        rows.into_iter().map(Value::from).collect::<Vec<_>>(),
    ))
}

/// `extract(container, morekeys=None)`: `container[item]`, then deeper by `morekeys`;
/// a key that is missing on the way makes the result undefined.
fn extract(item: &Value, container: &Value, morekeys: Option<Value>) -> Result<Value, Error> {
    let mut value = container.get_item(item)?;
    if let Some(morekeys) = morekeys {
        let keys: Vec<Value> = match morekeys.kind() {
            ValueKind::Seq => morekeys.try_iter()?.collect(),
            _ => vec![morekeys],
        };
        for key in keys {
            if value.is_undefined() {
                break;
            }
            value = value.get_item(&key)?;
        }
    }
    Ok(value)
}

/// Python's `dict(mapping_or_pairs=None, **kwargs)`.
fn dict(state: &State, source: Option<Value>, kwargs: Kwargs) -> Result<Value, Error> {
    let mut map = Map::new();
    if let Some(source) = source {
        ensure_defined(state, &source)?;
        match source.kind() {
            ValueKind::Map => map = entries(&source, "dict")?,
            ValueKind::Seq | ValueKind::Iterable => {
                for pair in source.try_iter()?.checked() {
                    let pair = pair?;
                    let parts: Vec<Value> = match pair.kind() {
                        ValueKind::Seq | ValueKind::Iterable => pair.try_iter()?.collect(),
                        _ => Vec::new(),
                    };
                    let [key, value] = <[Value; 2]>::try_from(parts)
                        .map_err(|_| error(format!("dict: {pair} is not a (key, value) pair")))?;
                    map.insert(key, value);
                }
            }
            kind => return Err(error(format!("dict: cannot make a dictionary from {kind}"))),
        }
    }
    for name in kwargs.args() {
        map.insert(Value::from(name), kwargs.peek::<Value>(name)?);
    }
    Ok(Value::from_object(map))
}

/// `map`, as Jinja's, except that `map(attribute=…)` over an item that lacks the
/// attribute (and no `default=`) is an error naming it, as ansible-core 2.19 reports
/// it ("object of type 'dict' has no attribute 'name'"), instead of an undefined value
/// that surfaces later without a name.
fn map(state: &mut State, value: Value, args: Rest<ValueOrKwargs>) -> Result<Value, Error> {
    // Passed on as it is, as ansible-core 2.19's wrapper of Jinja's map passes it.
    if value.is_undefined() {
        return Ok(value);
    }
    let raw: Vec<Value> = args.iter().map(|a| Value::from(a.clone())).collect();
    let (_, kwargs): (&[Value], Kwargs) = minijinja::value::from_args(&raw)?;
    if let Some(attr) = kwargs.get::<Option<Value>>("attribute")?
        && !kwargs.has("default")
        && let Some(path) = attr.as_str()
    {
        for item in value.try_iter()? {
            let found = attribute_path(&item, path);
            if !item.is_undefined() && found.is_ok_and(|v| v.is_undefined()) {
                return Err(Error::new(
                    ErrorKind::UndefinedError,
                    format!(
                        "object of type '{}' has no attribute '{path}'",
                        super::python_type(&item)
                    ),
                ));
            }
        }
    }
    // `map('name', args…)`: the filter may be a plugin.
    let args = match args
        .first()
        .filter(|a| !a.is_kwargs())
        .and_then(|a| a.as_str())
    {
        Some(name) => {
            let name = name.to_string();
            let rest = Rest(args.0.into_iter().skip(1).collect());
            let (name, rest) =
                crate::template::plugin_calls::by_name(Kind::Filter, Some(name.into()), rest);
            let mut all: Vec<ValueOrKwargs> = vec![Value::from(name.as_deref()).into()];
            all.extend(rest.0);
            Rest(all)
        }
        None => args,
    };
    minijinja::filters::map(state, value, args).map(Value::from)
}

/// `rekey_on_member(key, duplicates='error')`: a dictionary of the dictionaries of a
/// list (or of a dictionary's values) by the value each has under `key`; a value seen
/// twice is an error, or the later dictionary wins with `duplicates='overwrite'`.
fn rekey_on_member(
    state: &State,
    value: &Value,
    key: &Value,
    duplicates: Option<String>,
    kwargs: Kwargs,
) -> Result<Value, Error> {
    ensure_defined(state, value)?;
    ensure_defined(state, key)?;
    let duplicates = match duplicates {
        Some(d) => d,
        None => kwargs
            .get::<Option<String>>("duplicates")?
            .unwrap_or_else(|| "error".into()),
    };
    kwargs.assert_all_used()?;
    let repr = |v: &Value| -> Result<String, Error> {
        let mut out = String::new();
        crate::template::python::py_repr(v, &mut out)?;
        Ok(out)
    };
    if duplicates != "error" && duplicates != "overwrite" {
        return Err(error(format!(
            "duplicates parameter to rekey_on_member has unknown value {}",
            repr(&Value::from(duplicates))?
        )));
    }
    let items: Vec<Value> = match value.kind() {
        ValueKind::Map => entries(value, "rekey_on_member")?.into_values().collect(),
        ValueKind::Seq | ValueKind::Iterable => value.try_iter()?.collect(),
        _ => return Err(error("Type is not a valid list, set, or dict")),
    };
    let mut out = Map::new();
    for item in items {
        if item.kind() != ValueKind::Map {
            return Err(error("List item is not a valid dict"));
        }
        let found = item.get_item(key).ok().filter(|v| !v.is_undefined());
        let Some(member) = found else {
            return Err(error(format!("Key {} was not found.", repr(key)?)));
        };
        if out.contains_key(&member) && duplicates == "error" {
            return Err(error(format!(
                "Key {} is not unique, cannot convert to dict.",
                repr(&member)?
            )));
        }
        out.insert(member, item);
    }
    Ok(Value::from_object(out))
}

/// What Jinja's attribute path `path` finds in `item`: `a.b` and `a.0` walk into it.
fn attribute_path(item: &Value, path: &str) -> Result<Value, Error> {
    path.split('.')
        .try_fold(item.clone(), |v, part| match part.parse::<i64>() {
            Ok(i) => v.get_item(&Value::from(i)),
            Err(_) => v.get_attr(part),
        })
}

/// `unique(case_sensitive=None, attribute=None)`, as ansible-core runs it: Jinja's
/// (case-insensitive unless `case_sensitive`), and when an item is a list or a
/// dictionary (which Python cannot hash) Ansible's own, which compares items whole and
/// refuses those two parameters; a value that is not iterable is Python's error.
fn unique_filter(state: &State, value: Value, kwargs: Kwargs) -> Result<Value, Error> {
    ensure_defined(state, &value)?;
    if !matches!(
        value.kind(),
        ValueKind::Seq | ValueKind::Iterable | ValueKind::Map | ValueKind::String
    ) {
        return Err(error(format!(
            "'{}' object is not iterable",
            super::python_type(&value)
        )));
    }
    let attribute = kwargs.get::<Option<Value>>("attribute")?;
    let unhashable = value.try_iter()?.any(|item| {
        let key = match attribute.as_ref().and_then(|a| a.as_str()) {
            Some(path) => attribute_path(&item, path).unwrap_or_default(),
            None => item,
        };
        matches!(
            key.kind(),
            ValueKind::Seq | ValueKind::Iterable | ValueKind::Map
        )
    });
    if !unhashable {
        return minijinja::filters::unique(state, value, kwargs);
    }
    let case_sensitive = kwargs.get::<Option<Value>>("case_sensitive")?;
    kwargs.assert_all_used()?;
    if attribute.is_some_and(|a| a.is_true())
        || case_sensitive.is_some_and(|c| c.kind() == ValueKind::Bool && !c.is_true())
    {
        return Err(error(
            "Jinja2's unique filter failed and we cannot fall back to Ansible's version as it does not support the parameters supplied.",
        ));
    }
    Ok(Value::from(unique(value.try_iter()?)))
}

#[cfg(test)]
mod tests {
    use crate::template::filters::testing::{error, eval};
    use serde_json::json;

    #[test]
    fn map_names_a_missing_attribute_as_ansible_does() {
        assert_eq!(
            eval("[{'name': 'a'}, {'x': 1}] | map(attribute='name', default='z') | list"),
            json!(["a", "z"])
        );
        assert_eq!(
            eval("[{'a': {'b': 1}}, {'a': [5]}] | map(attribute='a.b', default=0) | list"),
            json!([1, 0])
        );
        assert_eq!(eval("['x'] | map('upper') | list"), json!(["X"]));
        assert!(
            error("[{'name': 'a'}, {'x': 1}] | map(attribute='name') | list")
                .contains("object of type 'dict' has no attribute 'name'")
        );
    }

    #[test]
    fn combine_dicts() {
        assert_eq!(
            eval("{'a': 1, 'b': 2} | combine({'b': 3, 'c': 4})"),
            json!({"a": 1, "b": 3, "c": 4})
        );
        assert_eq!(
            eval("{'a': 1} | combine({'b': 2}, {'a': 3})"),
            json!({"a": 3, "b": 2})
        );
        assert_eq!(eval("[{'a': 1}, {'a': 2}] | combine"), json!({"a": 2}));
        assert_eq!(
            eval("{'a': {'x': 1, 'y': 2}} | combine({'a': {'y': 3}})"),
            json!({"a": {"y": 3}})
        );
        assert_eq!(
            eval("{'a': {'x': 1, 'y': 2}} | combine({'a': {'y': 3, 'z': 4}}, recursive=true)"),
            json!({"a": {"x": 1, "y": 3, "z": 4}})
        );
        let lists = "{'l': [1, 2]} | combine({'l': [2, 3]}, list_merge=";
        assert_eq!(eval(&format!("{lists}'replace')")), json!({"l": [2, 3]}));
        assert_eq!(eval(&format!("{lists}'keep')")), json!({"l": [1, 2]}));
        assert_eq!(
            eval(&format!("{lists}'append')")),
            json!({"l": [1, 2, 2, 3]})
        );
        assert_eq!(
            eval(&format!("{lists}'prepend')")),
            json!({"l": [2, 3, 1, 2]})
        );
        assert_eq!(
            eval(&format!("{lists}'append_rp')")),
            json!({"l": [1, 2, 3]})
        );
        assert_eq!(
            eval(&format!("{lists}'prepend_rp')")),
            json!({"l": [2, 3, 1]})
        );
        assert!(error("{} | combine({}, bogus=1)").contains("only valid keyword"));
        assert!(error("{} | combine({}, list_merge='x')").contains("list_merge"));
        assert!(
            error("{} | combine(1)").contains(
                "failed to combine variables, expected dicts but got a 'dict' and a 'int'."
            )
        );
        assert!(error("[{}, [1], {}] | combine").contains("got a 'list' and a 'dict'."));
        assert_eq!(eval("None | combine"), json!({}));
        assert_eq!(eval("[None, {'a': 1}, 'null'] | combine"), json!({"a": 1}));
        assert_eq!(eval("[1] | combine"), json!(1));
    }

    #[test]
    fn dict_items_round_trip() {
        assert_eq!(
            eval("{'a': 1, 'b': 2} | dict2items"),
            json!([{"key": "a", "value": 1}, {"key": "b", "value": 2}])
        );
        assert_eq!(
            eval("{'a': 1} | dict2items(key_name='k', value_name='v')"),
            json!([{"k": "a", "v": 1}])
        );
        assert_eq!(
            eval("[{'key': 'a', 'value': 1}, {'key': 'b', 'value': 2}] | items2dict"),
            json!({"a": 1, "b": 2})
        );
        assert_eq!(
            eval("[{'n': 'a', 'v': 1}] | items2dict(key_name='n', value_name='v')"),
            json!({"a": 1})
        );
        assert!(error("[{'key': 'a'}] | items2dict").contains(
            "items2dict requires each dictionary in the list to contain the keys 'key' and 'value', got [{'key': 'a'}] instead."
        ));
        assert!(
            error("[True] | items2dict")
                .contains("items2dict requires a list of dictionaries, got [True] instead.")
        );
        assert!(
            error("[1] | dict2items")
                .contains("dict2items requires a dictionary, got <class 'list'> instead.")
        );
        assert!(
            error("1 | items2dict")
                .contains("items2dict requires a list, got <class 'int'> instead.")
        );
    }

    #[test]
    fn set_filters() {
        assert_eq!(eval("[1, 2, 2, 3] | union([3, 4, 1])"), json!([1, 2, 3, 4]));
        assert_eq!(eval("[1, 2, 2, 3] | intersect([3, 2, 5])"), json!([2, 3]));
        assert_eq!(eval("[1, 2, 2, 3] | difference([3])"), json!([1, 2]));
        assert_eq!(
            eval("[1, 2, 3] | symmetric_difference([3, 4])"),
            json!([1, 2, 4])
        );
        assert_eq!(eval("['a', 'A'] | union(['a'])"), json!(["a", "A"]));
        assert_eq!(
            eval("[{'a': 1}, {'a': 1}] | union([{'a': 2}])"),
            json!([{"a": 1}, {"a": 2}])
        );
        assert_eq!(eval("['a', 'A', 'b', 'a'] | unique"), json!(["a", "b"]));
        assert_eq!(
            eval("['a', 'A', 'a'] | unique(case_sensitive=true)"),
            json!(["a", "A"])
        );
        assert_eq!(
            eval("[{'a': 1}, [1], {'a': 1}, [1], 'x'] | unique"),
            json!([{"a": 1}, [1], "x"])
        );
        assert_eq!(eval("'foo' | unique | join"), json!("fo"));
        assert_eq!(
            eval("[{'p': 'a', 'n': 1}, {'p': 'b'}] | rekey_on_member('p')"),
            json!({"a": {"p": "a", "n": 1}, "b": {"p": "b"}})
        );
        assert_eq!(
            eval(
                "{'x': {'p': 'a', 'n': 1}, 'y': {'p': 'a'}} | rekey_on_member('p', duplicates='overwrite')"
            ),
            json!({"a": {"p": "a"}})
        );
        assert!(
            error("[{'p': 'a'}, {'p': 'a'}] | rekey_on_member('p')")
                .contains("Key 'a' is not unique, cannot convert to dict.")
        );
        assert!(error("[{'q': 1}] | rekey_on_member('p')").contains("Key 'p' was not found."));
        assert!(error("[True] | rekey_on_member('p')").contains("List item is not a valid dict"));
        assert!(
            error("'s' | rekey_on_member('p')").contains("Type is not a valid list, set, or dict")
        );
        assert!(
            error("[] | rekey_on_member('p', duplicates='boo')")
                .contains("duplicates parameter to rekey_on_member has unknown value 'boo'")
        );
        assert_eq!(eval("{'a': 1, 'b': 2} | unique"), json!(["a", "b"]));
        assert!(error("True | unique").contains("'bool' object is not iterable"));
        assert!(
            error("[{'a': 1}] | unique(case_sensitive=False)")
                .contains("cannot fall back to Ansible's version")
        );
        assert!(
            error("[{'a': [1]}] | unique(attribute='a')")
                .contains("cannot fall back to Ansible's version")
        );
    }

    #[test]
    fn flatten_lists() {
        assert_eq!(eval("[1, [2, [3, [4]]]] | flatten"), json!([1, 2, 3, 4]));
        assert_eq!(
            eval("[1, [2, [3, [4]]]] | flatten(levels=1)"),
            json!([1, 2, [3, [4]]])
        );
        assert_eq!(eval("[1, [2, [3]]] | flatten(1)"), json!([1, 2, [3]]));
        assert_eq!(
            eval("[1, none, 'None', ['null', [none]]] | flatten"),
            json!([1])
        );
        assert_eq!(
            eval("[1, none] | flatten(skip_nulls=false)"),
            json!([1, null])
        );
    }

    #[test]
    fn zips_and_products() {
        assert_eq!(
            eval("[1, 2, 3] | zip(['a', 'b']) | list"),
            json!([[1, "a"], [2, "b"]])
        );
        assert_eq!(
            eval("[1, 2, 3] | zip_longest(['a'])"),
            json!([[1, "a"], [2, null], [3, null]])
        );
        assert_eq!(
            eval("[1, 2] | zip_longest(['a'], fillvalue='-')"),
            json!([[1, "a"], [2, "-"]])
        );
        assert_eq!(
            eval("[1, 2] | product(['a', 'b'])"),
            json!([[1, "a"], [1, "b"], [2, "a"], [2, "b"]])
        );
        assert_eq!(
            eval("[0, 1] | product(repeat=2)"),
            json!([[0, 0], [0, 1], [1, 0], [1, 1]])
        );
    }

    #[test]
    fn extract_and_dict() {
        assert_eq!(
            eval("[0, 2] | map('extract', ['x', 'y', 'z']) | list"),
            json!(["x", "z"])
        );
        assert_eq!(
            eval("['h1'] | map('extract', {'h1': {'ip': {'v4': '1.2.3.4'}}}, ['ip', 'v4']) | list"),
            json!(["1.2.3.4"])
        );
        assert_eq!(eval("'h' | extract({'h': {'ip': 1}}, 'ip')"), json!(1));
        assert_eq!(eval("dict([['a', 1], ['b', 2]])"), json!({"a": 1, "b": 2}));
        assert_eq!(
            eval("dict(['a', 'b'] | zip([1, 2]))"),
            json!({"a": 1, "b": 2})
        );
        assert_eq!(eval("dict({'a': 1}, b=2)"), json!({"a": 1, "b": 2}));
        assert_eq!(eval("dict(a=1)"), json!({"a": 1}));
        assert!(error("dict([1])").contains("not a (key, value) pair"));
    }

    #[test]
    fn builtin_list_filters_behave_like_jinja() {
        assert_eq!(eval("[3, 1, 2] | min"), json!(1));
        assert_eq!(eval("[3, 1, 2] | max"), json!(3));
        assert_eq!(
            eval("[{'n': 3}, {'n': 1}] | max(attribute='n')"),
            json!({"n": 3})
        );
        assert_eq!(eval("[1, 2, 3] | sum"), json!(6));
        assert_eq!(eval("[1, 2, 3] | first"), json!(1));
        assert_eq!(eval("[1, 2, 3] | last"), json!(3));
        assert_eq!(eval("[1, 2, 3] | length"), json!(3));
        assert_eq!(eval("'abc' | count"), json!(3));
        assert_eq!(eval("{'a': 1} | list"), json!(["a"]));
        assert_eq!(
            eval("[{'a': 1}, {'a': 2}] | map(attribute='a') | list"),
            json!([1, 2])
        );
        assert_eq!(eval("[1, 2, 3, 4] | select('even') | list"), json!([2, 4]));
        assert_eq!(eval("[1, 2, 3, 4] | reject('even') | list"), json!([1, 3]));
        assert_eq!(
            eval("[{'a': 1}, {'b': 2}] | selectattr('a', 'defined') | list"),
            json!([{"a": 1}])
        );
        assert_eq!(
            eval("[{'a': 1}, {'a': 2}] | rejectattr('a', 'equalto', 1) | list"),
            json!([{"a": 2}])
        );
        assert_eq!(eval("['A', 'b'] | map('lower') | list"), json!(["a", "b"]));
        assert_eq!(
            eval("'Hello World' | replace('World', 'There') | upper"),
            json!("HELLO THERE")
        );
        assert_eq!(eval("'  x  ' | trim | capitalize"), json!("X"));
        assert_eq!(eval("'hello world' | title"), json!("Hello World"));
    }
}
