//! Conversions between engine values and JSON: the native result of a template becomes
//! JSON for the caller, JSON parsed by a filter becomes an engine value.

use minijinja::value::{StringInput, ValueKind};
use minijinja::{Error, ErrorKind, State, Value};

/// The JSON form of a native template result. Undefined values anywhere in it, and
/// values that are not data (functions, macros), are errors.
pub(crate) fn to_json(value: &Value) -> Result<serde_json::Value, Error> {
    convert(value, false).map(Option::unwrap_or_default)
}

/// [`to_json`], undefined values inside lists and mappings left out (a mapping loses
/// the key), as ansible-core's `with_first_found` drops them; `None` when the value
/// itself is undefined.
pub(crate) fn to_json_omitting_undefined(
    value: &Value,
) -> Result<Option<serde_json::Value>, Error> {
    convert(value, true)
}

/// The JSON form of `value`; an undefined value is `None` when `omit` holds, else an
/// error.
fn convert(value: &Value, omit: bool) -> Result<Option<serde_json::Value>, Error> {
    super::vaulted::ensure_decryptable(value)?;
    Ok(Some(match value.kind() {
        ValueKind::Undefined if omit => return Ok(None),
        ValueKind::Undefined => {
            return Err(Error::new(
                ErrorKind::UndefinedError,
                "the result contains an undefined value",
            ));
        }
        ValueKind::None => serde_json::Value::Null,
        ValueKind::Bool => serde_json::Value::Bool(value.is_true()),
        ValueKind::Number => number_to_json(value)?,
        ValueKind::String => serde_json::Value::String(value.as_str().unwrap_or_default().into()),
        ValueKind::Bytes => serde_json::Value::String(
            String::from_utf8_lossy(value.as_bytes().unwrap_or_default()).into_owned(),
        ),
        ValueKind::Seq | ValueKind::Iterable => {
            let mut items = Vec::with_capacity(value.len().unwrap_or(0));
            for item in value.try_iter()?.checked() {
                items.extend(convert(&item?, omit)?);
            }
            serde_json::Value::Array(items)
        }
        ValueKind::Map => {
            let mut map = serde_json::Map::new();
            for key in value.try_iter()?.checked() {
                let key = key?;
                if let Some(item) = convert(&value.get_item(&key)?, omit)? {
                    map.insert(key_to_string(&key)?, item);
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
