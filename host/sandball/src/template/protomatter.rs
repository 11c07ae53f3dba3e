//! ansible-core 2.19's `ansible._protomatter` filters and tests that look at a value's
//! trust: `tagged_with('TrustedAsTemplate')`, `tagged` and `apply_trust`. ansible-core
//! keeps that trust in Python tags the plugin worker never sees, so sandball answers
//! these itself from the engine's own mark of trusted text (see `trust.rs`).

use minijinja::value::ValueKind;
use minijinja::{Error, ErrorKind, Value};

use crate::template::undefined::Plugins;

/// The collection the filters and tests belong to.
const PREFIX: &str = "ansible._protomatter.";

/// The tag of trusted text.
const TRUSTED: &str = "TrustedAsTemplate";

/// The other tags ansible-core knows, which sandball does not carry.
const UNTRACKED: &[&str] = &["Origin", "VaultedValue", "SourceWasEncrypted", "Deprecated"];

/// Registers the filters and tests under their full names.
pub(crate) fn register(env: &mut Plugins<'_>) {
    env.add_test(format!("{PREFIX}tagged_with"), tagged_with);
    env.add_test(format!("{PREFIX}tagged"), tagged);
    env.add_filter(format!("{PREFIX}apply_trust"), apply_trust);
}

/// Whether a value is trusted text: a string the playbook, the inventory or a vars
/// file wrote, passed through unchanged.
pub(crate) fn is_trusted(value: &Value) -> bool {
    value.kind() == ValueKind::String && value.is_safe()
}

/// `value is ansible._protomatter.tagged_with(name)`.
fn tagged_with(value: &Value, name: &str) -> Result<bool, Error> {
    match name {
        TRUSTED => Ok(is_trusted(value)),
        _ if UNTRACKED.contains(&name) => Err(Error::new(
            ErrorKind::InvalidOperation,
            format!("sandball does not track the tag {name:?} of values"),
        )),
        _ => Err(Error::new(
            ErrorKind::InvalidOperation,
            format!(
                "Unknown tag name {}.",
                sandball_pycompat::pyfmt::py_repr(&serde_json::Value::from(name))
            ),
        )),
    }
}

/// `value is ansible._protomatter.tagged`: whether it carries a tag sandball tracks.
fn tagged(value: &Value) -> Result<bool, Error> {
    Ok(is_trusted(value))
}

/// `value | ansible._protomatter.apply_trust`: a string made trusted text; any other
/// value (an undefined one too) as it is.
fn apply_trust(value: Value) -> Value {
    match value.as_str() {
        Some(text) if value.kind() == ValueKind::String => Value::from_safe_string(text.into()),
        _ => value,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_marked_strings_are_trusted() {
        assert!(is_trusted(&Value::from_safe_string("x".into())));
        assert!(!is_trusted(&Value::from("x")));
        assert!(!is_trusted(&Value::from(1)));
        assert!(is_trusted(&apply_trust(Value::from("x"))));
        assert!(!is_trusted(&apply_trust(Value::from(1))));
        assert!(apply_trust(Value::UNDEFINED).is_undefined());
    }
}
