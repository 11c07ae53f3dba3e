//! Vaulted values in templates: a `!vault` value the run's passwords do not open (carried
//! in JSON as `{"__ansible_vault": text}`) reaches the engine as an [`Undecryptable`]
//! that fails wherever it is used, as ansible-core 2.19 fails on it ("Attempt to use
//! undecryptable variable: …"), except in the `unvault` filter and the `vault_encrypted`
//! test. The `vault` and `unvault` filters encrypt and decrypt text with a password given
//! in the template.

use std::fmt;
use std::sync::Arc;

use minijinja::value::{Kwargs, Object, ObjectRepr};
use minijinja::{Error, ErrorKind, Value};

use crate::template::filters::python_type;
use crate::template::undefined::Plugins;
use crate::vault::{self, Secret};
use crate::yaml::VAULT_KEY;

/// The `vault_id` the filters use when none is given.
const FILTER_DEFAULT: &str = "filter_default";

/// A `!vault` value no password of the run opens: its vault text.
#[derive(Debug)]
pub(crate) struct Undecryptable {
    ciphertext: String,
}

impl Object for Undecryptable {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Plain
    }

    fn render(self: &Arc<Self>, f: &mut fmt::Formatter<'_>) -> fmt::Result
    where
        Self: Sized + 'static,
    {
        // Text made of it goes through `use_error` first; the engine's own fallback
        // says nothing of the secret.
        f.write_str("<undecryptable vaulted value>")
    }
}

/// The vault text inside a `{"__ansible_vault": text}` mark, if `node` is one.
pub(crate) fn vault_mark(node: &serde_json::Value) -> Option<&str> {
    match node {
        serde_json::Value::Object(map) if map.len() == 1 => map.get(VAULT_KEY)?.as_str(),
        _ => None,
    }
}

/// The engine value of a vault mark's text.
pub(crate) fn undecryptable(ciphertext: &str) -> Value {
    Value::from_object(Undecryptable {
        ciphertext: ciphertext.to_string(),
    })
}

/// The vault text of an undecryptable value, if `value` is one.
fn ciphertext(value: &Value) -> Option<&str> {
    value
        .downcast_object_ref::<Undecryptable>()
        .map(|v| v.ciphertext.as_str())
}

/// The error of using `value` when it is an undecryptable vaulted value.
pub(crate) fn ensure_decryptable(value: &Value) -> Result<(), Error> {
    match ciphertext(value) {
        Some(text) => Err(use_error(text)),
        None => Ok(()),
    }
}

/// ansible-core's error for a use of an undecryptable value, with why it is one.
pub(crate) fn use_error(ciphertext: &str) -> Error {
    let why = match vault::decrypt_value(ciphertext) {
        Err(e) => e.to_string(),
        Ok(_) => "the value was read before the vault passwords".to_string(),
    };
    Error::new(
        ErrorKind::InvalidOperation,
        format!("Attempt to use undecryptable variable: {why}."),
    )
}

pub(super) fn register(env: &mut Plugins<'_>) {
    env.add_filter("vault", vault_filter);
    env.add_filter("unvault", unvault_filter);
    env.taking_undefined()
        .add_test("vault_encrypted", |value: &Value| {
            ciphertext(value).is_some_and(vault::is_vault)
        });
}

/// The text of a string argument, or Ansible's type error naming what it must be.
fn string_arg(value: &Value, what: &str) -> Result<String, Error> {
    value.as_str().map(str::to_string).ok_or_else(|| {
        Error::new(
            ErrorKind::InvalidOperation,
            format!("{what}, instead we got <class '{}'>.", python_type(value)),
        )
    })
}

/// The `vault_id` of the filters' options (`vaultid` is its old name).
fn vault_id(kwargs: &Kwargs) -> Result<String, Error> {
    let id: Option<String> = kwargs.get("vault_id")?;
    let old: Option<String> = kwargs.get("vaultid")?;
    Ok(id.or(old).unwrap_or_else(|| FILTER_DEFAULT.to_string()))
}

/// `vault(secret, salt=None, vault_id='filter_default')`: `data` encrypted with the
/// password `secret`, as a vault text labelled with the vault id.
fn vault_filter(data: &Value, secret: &Value, kwargs: Kwargs) -> Result<Value, Error> {
    let password = string_arg(secret, "Secret passed is required to be a string")?;
    let plain = string_arg(data, "Can only vault strings")?;
    let salt: Option<Value> = kwargs.get("salt")?;
    let label = vault_id(&kwargs)?;
    let wrap: Option<bool> = kwargs.get("wrap_object")?;
    kwargs.assert_all_used()?;
    if wrap == Some(true) {
        return Err(Error::new(
            ErrorKind::InvalidOperation,
            "wrap_object=True (a vaulted value object) is not supported by sandball",
        ));
    }
    let secret = Secret {
        label,
        password: password.into_bytes(),
    };
    let text = match salt.filter(|s| !s.is_none()) {
        None => vault::encrypt(plain.as_bytes(), &secret),
        Some(salt) => {
            // Python's `to_bytes(salt)`: the text of a string, `str()` of anything else.
            let salt = crate::template::python::py_str(&salt)?;
            if salt.is_empty() {
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    "Unable to encrypt: Empty or invalid salt passed to encrypt()",
                ));
            }
            vault::encrypt_salted(plain.as_bytes(), &secret, salt.as_bytes())
        }
    };
    Ok(Value::from(text))
}

/// `unvault(secret, vault_id='filter_default')`: the text a vault text (or an
/// undecryptable vaulted value) holds, opened with the password `secret`; text that is
/// not a vault comes back as it is.
fn unvault_filter(data: &Value, secret: &Value, kwargs: Kwargs) -> Result<Value, Error> {
    let password = string_arg(secret, "Secret passed is required to be as string")?;
    let label = vault_id(&kwargs)?;
    kwargs.assert_all_used()?;
    let text = match ciphertext(data) {
        Some(text) => text.to_string(),
        None => string_arg(data, "Vault should be in the form of a string")?,
    };
    if !vault::is_vault(&text) {
        return Ok(Value::from(text));
    }
    let secret = Secret {
        label,
        password: password.into_bytes(),
    };
    let plain = vault::decrypt(&text, &[secret]).map_err(|e| {
        Error::new(ErrorKind::InvalidOperation, "Unable to decrypt.").with_source(e)
    })?;
    Ok(Value::from(String::from_utf8_lossy(&plain).into_owned()))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::template::filters::testing::{error, eval};

    #[test]
    fn vault_and_unvault_round_trip() {
        assert_eq!(
            eval("'secret' | vault('pw') | unvault('pw')"),
            json!("secret")
        );
        assert_eq!(
            eval("'secret' | vault('pw', vault_id='x') | unvault('pw', vault_id='x')"),
            json!("secret")
        );
        // A salt makes the text the same each time; a vault id other than `default`
        // labels it.
        let one = eval("'secret' | vault('pw', salt=7)");
        assert_eq!(one, eval("'secret' | vault('pw', salt=7)"));
        assert!(
            one.as_str()
                .is_some_and(|t| t.starts_with("$ANSIBLE_VAULT;1.2;AES256;filter_default\n"))
        );
        assert_eq!(eval("'plain' | unvault('pw')"), json!("plain"));
        assert!(error("'secret' | vault('pw') | unvault('other')").contains("Unable to decrypt."));
        assert!(
            error("'secret' | vault(1)").contains(
                "Secret passed is required to be a string, instead we got <class 'int'>."
            )
        );
        assert!(error("'secret' | vault('pw', wrap_object=True)").contains("wrap_object"));
    }

    #[test]
    fn text_is_not_a_vaulted_value() {
        assert_eq!(eval("'x' | vault('pw') is vault_encrypted"), json!(false));
    }
}
