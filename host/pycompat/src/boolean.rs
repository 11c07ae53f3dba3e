//! Ansible's boolean: the words `y`, `yes`, `on`, `1`, `true`, `t` and `n`, `no`,
//! `off`, `0`, `false`, `f`, in any case.
//!
//! One word table and one case rule ([`word`]: any case, the text as written). The
//! entry points differ where Ansible's readers differ, each documented:
//!
//! - [`strict`]: ansible-core's `boolean(value)` (`check_type_bool`), as module
//!   arguments of type `bool` and the manifests' conditions read a value: text
//!   stripped, the numbers 1 and 0 (also `1.0`, `0.0`), anything else an error;
//! - [`truthy`]: how the controller's actions and keywords read an argument: the text
//!   as written (not stripped), the empty text false, only the integers 1 and 0, a
//!   missing or null value the caller's default;
//! - [`setting_flag`]: a setting's value (environment or ansible.cfg) read through
//!   [`truthy`], its default when unset or not a boolean;
//! - [`setting_lenient`]: a setting as ansible-core's `boolean(value, strict=False)`
//!   reads it (the inventory settings): stripped, true only for a true word.

use serde_json::Value;

/// The words Ansible reads as true.
pub const TRUE_WORDS: [&str; 6] = ["y", "yes", "on", "1", "true", "t"];
/// The words Ansible reads as false.
pub const FALSE_WORDS: [&str; 6] = ["n", "no", "off", "0", "false", "f"];

/// The boolean `text` names, in any case: `None` for any other text. The text is
/// taken as written; readers that strip it as ansible-core does trim it first.
pub fn word(text: &str) -> Option<bool> {
    let lower = text.to_lowercase();
    if TRUE_WORDS.contains(&lower.as_str()) {
        Some(true)
    } else if FALSE_WORDS.contains(&lower.as_str()) {
        Some(false)
    } else {
        None
    }
}

/// ansible-core's `boolean(value)` (strict), as a module argument of type `bool` is
/// read: booleans as they are, a word (stripped), the numbers 1 and 0; anything else
/// is an error with ansible-core's message.
pub fn strict(value: &Value) -> Result<bool, String> {
    let invalid = |shown: String| {
        format!(
            "The value {shown} is not a valid boolean. Valid booleans include: \
             'y', 'yes', 'on', '1', 'true', 't', 1, 1.0, True, \
             'n', 'no', 'off', '0', 'false', 'f', 0, 0.0, False"
        )
    };
    match value {
        Value::Bool(b) => Ok(*b),
        Value::String(s) => word(s.trim()).ok_or_else(|| invalid(format!("'{s}'"))),
        Value::Number(n) => match n.as_f64() {
            Some(1.0) => Ok(true),
            Some(0.0) => Ok(false),
            _ => Err(invalid(n.to_string())),
        },
        other => Err(format!(
            "{} cannot be converted to a bool",
            crate::pyfmt::type_name(other)
        )),
    }
}

/// An action's or keyword's argument read as a boolean (`yes`, `true`, `1`, …):
/// `default` when it is missing or null, the empty text false, the text otherwise as
/// written (not stripped), and only the integers 1 and 0 among numbers.
pub fn truthy(v: Option<&Value>, default: bool) -> Result<bool, String> {
    match v {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Bool(b)) => Ok(*b),
        Some(Value::Number(n)) if n.as_i64() == Some(1) => Ok(true),
        Some(Value::Number(n)) if n.as_i64() == Some(0) => Ok(false),
        Some(Value::String(s)) if s.is_empty() => Ok(false),
        Some(Value::String(s)) => {
            word(s).ok_or_else(|| format!("The value '{s}' is not a valid boolean."))
        }
        Some(other) => Err(format!("The value {other} is not a valid boolean.")),
    }
}

/// A setting's value read as a boolean through [`truthy`]; `default` when it is unset
/// (`None`) or not a boolean.
pub fn setting_flag(value: Option<&str>, default: bool) -> bool {
    value
        .and_then(|v| truthy(Some(&Value::String(v.to_string())), default).ok())
        .unwrap_or(default)
}

/// A setting's value read as ansible-core's `boolean(value, strict=False)` reads it:
/// true for a true word (stripped), false when unset or anything else.
pub fn setting_lenient(value: Option<&str>) -> bool {
    value.is_some_and(|v| word(v.trim()) == Some(true))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn booleans_read_like_ansible() {
        assert_eq!(truthy(Some(&json!("yes")), false), Ok(true));
        assert_eq!(truthy(Some(&json!(0)), true), Ok(false));
        assert_eq!(truthy(None, true), Ok(true));
        assert!(truthy(Some(&json!("maybe")), false).is_err());
    }

    #[test]
    fn readers_differ_where_ansible_does() {
        assert_eq!(word("YES"), Some(true));
        assert_eq!(word(" yes"), None);
        assert_eq!(strict(&json!(" Off ")), Ok(false));
        assert_eq!(strict(&json!(1.0)), Ok(true));
        assert!(strict(&json!("")).is_err());
        assert_eq!(truthy(Some(&json!("")), true), Ok(false));
        assert!(truthy(Some(&json!(1.0)), false).is_err());
        assert!(truthy(Some(&json!(" yes")), false).is_err());
        assert!(setting_flag(Some("yes"), false));
        assert!(setting_flag(Some("maybe"), true));
        assert!(!setting_flag(Some(""), true));
        assert!(!setting_flag(None, false));
        assert!(setting_lenient(Some(" on ")));
        assert!(!setting_lenient(Some("maybe")));
        assert!(!setting_lenient(None));
    }
}
