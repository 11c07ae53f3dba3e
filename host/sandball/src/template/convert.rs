//! Conversions between engine values and JSON: the native result of a template becomes
//! JSON for the caller, JSON parsed by a filter becomes an engine value.

use minijinja::value::{StringInput, ValueKind};
use minijinja::{Error, ErrorKind, State, Value};

/// The JSON form of a native template result. Undefined values anywhere in it, and
/// values that are not data (functions, macros), are errors.
pub(crate) fn to_json(value: &Value) -> Result<serde_json::Value, Error> {
    convert(value, &mut OnUndefined::Fail, &mut Vec::new()).map(Option::unwrap_or_default)
}

/// [`to_json`], undefined values inside lists and mappings left out (a mapping loses
/// the key), as ansible-core's `with_first_found` drops them; `None` when the value
/// itself is undefined.
pub(crate) fn to_json_omitting_undefined(
    value: &Value,
) -> Result<Option<serde_json::Value>, Error> {
    convert(value, &mut OnUndefined::Omit, &mut Vec::new())
}

/// A place of an undefined value in a value: the list indexes and mapping keys down to
/// it (none for the value itself), and the undefined value.
pub(crate) type UndefinedPlace = (Vec<serde_json::Value>, Value);

/// [`to_json`] with null for each undefined value, whose places are given with it.
pub(crate) fn to_json_marking_undefined(
    value: &Value,
) -> Result<(serde_json::Value, Vec<UndefinedPlace>), Error> {
    let mut found = OnUndefined::Record(Vec::new());
    let json = convert(value, &mut found, &mut Vec::new())?.unwrap_or_default();
    match found {
        OnUndefined::Record(places) => Ok((json, places)),
        OnUndefined::Fail | OnUndefined::Omit => Ok((json, Vec::new())),
    }
}

/// What [`convert`] makes of an undefined value.
enum OnUndefined {
    /// An error.
    Fail,
    /// Nothing: it is left out.
    Omit,
    /// Null, its place recorded.
    Record(Vec<UndefinedPlace>),
}

/// The JSON form of `value` (found at `path`); an undefined value is what `undefined`
/// says.
fn convert(
    value: &Value,
    undefined: &mut OnUndefined,
    path: &mut Vec<serde_json::Value>,
) -> Result<Option<serde_json::Value>, Error> {
    super::vaulted::ensure_decryptable(value)?;
    Ok(Some(match value.kind() {
        ValueKind::Undefined => match undefined {
            OnUndefined::Omit => return Ok(None),
            OnUndefined::Record(places) => {
                places.push((path.clone(), value.clone()));
                serde_json::Value::Null
            }
            OnUndefined::Fail => {
                return Err(Error::new(
                    ErrorKind::UndefinedError,
                    "the result contains an undefined value",
                ));
            }
        },
        ValueKind::None => serde_json::Value::Null,
        ValueKind::Bool => serde_json::Value::Bool(value.is_true()),
        ValueKind::Number => number_to_json(value)?,
        ValueKind::String => serde_json::Value::String(value.as_str().unwrap_or_default().into()),
        ValueKind::Bytes => serde_json::Value::String(
            String::from_utf8_lossy(value.as_bytes().unwrap_or_default()).into_owned(),
        ),
        ValueKind::Seq | ValueKind::Iterable => {
            let mut items = Vec::with_capacity(value.len().unwrap_or(0));
            for (index, item) in value.try_iter()?.checked().enumerate() {
                path.push(index.into());
                items.extend(convert(&item?, undefined, path)?);
                path.pop();
            }
            serde_json::Value::Array(items)
        }
        ValueKind::Map => {
            let mut map = serde_json::Map::new();
            for key in value.try_iter()?.checked() {
                let key = key?;
                let name = key_to_string(&key)?;
                path.push(name.clone().into());
                let item = convert(&value.get_item(&key)?, undefined, path)?;
                path.pop();
                if let Some(item) = item {
                    map.insert(name, item);
                }
            }
            serde_json::Value::Object(map)
        }
        ValueKind::Invalid => return Err(invalid(value)),
        _ => {
            return Err(Error::new(
                ErrorKind::InvalidOperation,
                format!("a {} cannot be used as a value", value.kind()),
            ));
        }
    }))
}

/// An engine value made from JSON (e.g. the result of `from_json`).
pub(crate) fn from_json(value: &serde_json::Value) -> Value {
    Value::from(minijinja::value::Serde(value))
}

/// [`from_json`] with `undefined` at each of `paths` (list indexes and mapping keys down
/// to it; an empty path is the whole value).
pub(crate) fn from_json_marked(
    value: &serde_json::Value,
    paths: &[&[serde_json::Value]],
    undefined: &Value,
) -> Value {
    if paths.is_empty() {
        return from_json(value);
    }
    if paths.iter().any(|p| p.is_empty()) {
        return undefined.clone();
    }
    let under = |step: serde_json::Value| -> Vec<&[serde_json::Value]> {
        paths
            .iter()
            .filter_map(|p| p.split_first())
            .filter(|(first, _)| **first == step)
            .map(|(_, rest)| rest)
            .collect()
    };
    match value {
        serde_json::Value::Array(items) => Value::from(
            items
                .iter()
                .enumerate()
                .map(|(i, v)| from_json_marked(v, &under(i.into()), undefined))
                .collect::<Vec<_>>(),
        ),
        serde_json::Value::Object(map) => Value::from_pairs(map.iter().map(|(k, v)| {
            (
                k.clone(),
                from_json_marked(v, &under(k.clone().into()), undefined),
            )
        })),
        other => from_json(other),
    }
}

/// Fails with the engine's undefined error (naming the variable) if `value` is undefined.
pub(crate) fn ensure_defined(state: &State, value: &Value) -> Result<(), Error> {
    if value.is_undefined() {
        // The string coercion fails in strict mode with the variable's name attached.
        StringInput::new(state, value)?;
        return Err(Error::new(ErrorKind::UndefinedError, "value is undefined"));
    }
    Ok(())
}

/// The error an invalid value carries, re-raised.
pub(crate) fn invalid(value: &Value) -> Error {
    // Checked iteration is the engine's public way to reveal an invalid value's error.
    let wrapped = Value::from(vec![value.clone()]);
    match wrapped.try_iter().map(|items| items.checked().next()) {
        Ok(Some(Err(err))) | Err(err) => err,
        Ok(_) => Error::new(ErrorKind::InvalidOperation, value.to_string()),
    }
}

fn number_to_json(value: &Value) -> Result<serde_json::Value, Error> {
    if value.is_integer() {
        if let Ok(i) = i64::try_from(value.clone()) {
            return Ok(i.into());
        }
        if let Ok(u) = u64::try_from(value.clone()) {
            return Ok(u.into());
        }
    }
    let f = f64::try_from(value.clone())?;
    Ok(serde_json::Number::from_f64(f)
        .map(serde_json::Value::Number)
        .unwrap_or(serde_json::Value::Null))
}

/// A mapping key as a JSON key: strings as they are, scalars as JSON writes them.
fn key_to_string(key: &Value) -> Result<String, Error> {
    Ok(match to_json(key)? {
        serde_json::Value::String(s) => s,
        serde_json::Value::Array(_) | serde_json::Value::Object(_) => {
            return Err(Error::new(
                ErrorKind::InvalidOperation,
                format!("a {} cannot be a mapping key", key.kind()),
            ));
        }
        other => other.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn round_trips_json() {
        let value = json!({"a": [1, -2, 3.5, "x", null, true], "b": {"c": {}}, "u": 18446744073709551615u64});
        assert_eq!(to_json(&from_json(&value)).unwrap(), value);
    }

    #[test]
    fn non_string_keys_become_strings() {
        // Not 1 and true: they are one key to Python (True == 1), and minijinja's map
        // merges them only when their hashes happen to meet, so such a test is flaky.
        let value = Value::from_pairs([
            (Value::from(2), Value::from("a")),
            (Value::from(true), Value::from(())),
        ]);
        assert_eq!(to_json(&value).unwrap(), json!({"2": "a", "true": null}));
    }

    #[test]
    fn undefined_values_can_cross_as_their_places() {
        let inner = Value::from_pairs([("k", Value::UNDEFINED), ("v", Value::from(1))]);
        let list = Value::from(vec![Value::UNDEFINED, Value::from(42), inner]);
        let (json, places) = to_json_marking_undefined(&list).unwrap();
        assert_eq!(json, json!([null, 42, {"k": null, "v": 1}]));
        let paths: Vec<_> = places.iter().map(|(p, _)| p.clone()).collect();
        assert_eq!(paths, vec![vec![json!(0)], vec![json!(2), json!("k")]]);
        assert!(places.iter().all(|(_, v)| v.is_undefined()));
        let borrowed: Vec<&[serde_json::Value]> = paths.iter().map(Vec::as_slice).collect();
        let back = from_json_marked(&json, &borrowed, &Value::UNDEFINED);
        assert!(back.get_item(&Value::from(0)).unwrap().is_undefined());
        assert_eq!(back.get_item(&Value::from(1)).unwrap(), Value::from(42));
        let map = back.get_item(&Value::from(2)).unwrap();
        assert!(map.get_attr("k").unwrap().is_undefined());
        assert_eq!(map.get_attr("v").unwrap(), Value::from(1));
        assert!(from_json_marked(&json!([1]), &[&[]], &Value::UNDEFINED).is_undefined());
        assert_eq!(
            to_json(&from_json_marked(&json, &[], &Value::UNDEFINED)).unwrap(),
            json
        );
    }

    #[test]
    fn undefined_and_functions_are_errors() {
        assert_eq!(
            to_json(&Value::UNDEFINED).unwrap_err().kind(),
            ErrorKind::UndefinedError
        );
        let list = Value::from(vec![Value::from(1), Value::UNDEFINED]);
        assert!(to_json(&list).is_err());
        let func = Value::from_function(|| 1);
        assert!(to_json(&func).is_err());
        let err = Error::new(ErrorKind::InvalidOperation, "boom");
        let list = Value::from(vec![Value::from(err)]);
        assert!(to_json(&list).unwrap_err().to_string().contains("boom"));
    }
}
