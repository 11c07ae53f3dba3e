//! An action's arguments: checked against the ones it takes, as ansible-core's action
//! plugins check them, and read as the types actions take (seconds, counts, text,
//! booleans, paths), with an [`ArgError`] naming the option when one is not.

use serde_json::{Map, Value};

use super::failure::{Failure, failed, raised};

/// Checks that only known arguments were given, as Ansible's action plugins do.
pub fn check_args(
    action: &str,
    args: &Map<String, Value>,
    allowed: &[&str],
) -> Result<(), Map<String, Value>> {
    let unknown = unknown_keys(args, allowed);
    if unknown.is_empty() {
        return Ok(());
    }
    let mut sorted = allowed.to_vec();
    sorted.sort_unstable();
    Err(raised(
        Failure::Raised,
        format!(
            "Unsupported parameters for ({action}) module: {}. Supported parameters include: {}.",
            unknown.join(", "),
            sorted.join(", ")
        ),
    ))
}

/// The argument names of `args` not among `allowed`, in the order given.
fn unknown_keys<'a>(args: &'a Map<String, Value>, allowed: &[&str]) -> Vec<&'a str> {
    args.keys()
        .map(String::as_str)
        .filter(|k| !allowed.contains(k))
        .collect()
}

/// A whole number from a keyword's templated value (`5`, `"5"`).
pub fn integer(v: &Value) -> Option<i64> {
    v.as_i64()
        .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
}

/// Why an option given to an action cannot be used: the option and what is wrong.
#[derive(Debug, thiserror::Error)]
pub enum ArgError {
    /// Not a whole number of seconds (`5`, `"5"`).
    #[error("{option} must be a whole number of seconds, got {value}")]
    NotSeconds {
        /// The option.
        option: String,
        /// What it was given.
        value: Value,
    },
    /// Not a whole number of zero or more.
    #[error("{option} must be a whole number, got {value}")]
    NotCount {
        /// The option.
        option: String,
        /// What it was given.
        value: Value,
    },
    /// Not a non-empty string.
    #[error("{option} must be a non-empty string, got {value}")]
    NotText {
        /// The option.
        option: String,
        /// What it was given.
        value: Value,
    },
    /// Not one of Ansible's booleans.
    #[error("{option}: {reason}")]
    NotBoolean {
        /// The option.
        option: String,
        /// Why, in Ansible's words.
        reason: String,
    },
    /// Not a list of paths (one path is a list of one).
    #[error("{option} must be a list of paths, not {value}")]
    NotPaths {
        /// The option.
        option: String,
        /// What it was given (the whole value, or the entry that is not a path).
        value: Value,
    },
    /// Not a list, where only a list is taken (ansible-core's words).
    #[error("The '{option}' option must be a list.")]
    NotList {
        /// The option.
        option: String,
    },
    /// Not a list, where only a list is taken, in ansible-core 2.19's words.
    #[error("Invalid type for \"{option}\" option, it must be a list")]
    NotListBefore2_20 {
        /// The option.
        option: String,
    },
    /// A regular expression that does not compile.
    #[error("{option}: invalid regular expression {pattern:?}: {reason}")]
    BadPattern {
        /// The option.
        option: String,
        /// The expression as given.
        pattern: String,
        /// What the regular expression engine said.
        reason: String,
    },
}

impl ArgError {
    /// Option `option`'s regular expression `pattern` did not compile, for `reason`.
    pub fn bad_pattern(option: &str, pattern: &str, reason: impl std::fmt::Display) -> ArgError {
        ArgError::BadPattern {
            option: option.to_string(),
            pattern: pattern.to_string(),
            reason: reason.to_string(),
        }
    }
}

/// Option `option` as a whole number of seconds, `default` when it is not given (or
/// null); a negative number as it is (`reboot` takes it as zero).
pub fn signed_seconds(
    args: &Map<String, Value>,
    option: &str,
    default: i64,
) -> Result<i64, ArgError> {
    match args.get(option) {
        None | Some(Value::Null) => Ok(default),
        Some(v) => integer(v).ok_or_else(|| ArgError::NotSeconds {
            option: option.to_string(),
            value: v.clone(),
        }),
    }
}

/// Option `option` as a whole number of seconds, not negative; `default` when it is
/// not given (or null).
pub fn seconds(args: &Map<String, Value>, option: &str, default: u64) -> Result<u64, ArgError> {
    match args.get(option) {
        None | Some(Value::Null) => Ok(default),
        Some(v) => integer(v)
            .and_then(|n| u64::try_from(n).ok())
            .ok_or_else(|| ArgError::NotSeconds {
                option: option.to_string(),
                value: v.clone(),
            }),
    }
}

/// Option `option` as a whole number of zero or more, `None` when it is not given.
pub fn count(args: &Map<String, Value>, option: &str) -> Result<Option<usize>, ArgError> {
    match args.get(option) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => integer(v)
            .and_then(|n| usize::try_from(n).ok())
            .map(Some)
            .ok_or_else(|| ArgError::NotCount {
                option: option.to_string(),
                value: v.clone(),
            }),
    }
}

/// Option `option` as a non-empty string, `None` when it is not given (or null).
pub fn text(args: &Map<String, Value>, option: &str) -> Result<Option<String>, ArgError> {
    match args.get(option) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if !s.is_empty() => Ok(Some(s.clone())),
        Some(other) => Err(ArgError::NotText {
            option: option.to_string(),
            value: other.clone(),
        }),
    }
}

/// Option `option` read as Ansible's boolean, `default` when it is not given.
pub fn flag(args: &Map<String, Value>, option: &str, default: bool) -> Result<bool, ArgError> {
    sandball_pycompat::boolean::truthy(args.get(option), default).map_err(|reason| {
        ArgError::NotBoolean {
            option: option.to_string(),
            reason,
        }
    })
}

/// Option `option` as a list of paths (one path is a list of one), `None` when it is
/// not given (or null).
pub fn paths(args: &Map<String, Value>, option: &str) -> Result<Option<Vec<String>>, ArgError> {
    let not_paths = |value: &Value| ArgError::NotPaths {
        option: option.to_string(),
        value: value.clone(),
    };
    match args.get(option) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(vec![s.clone()])),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| v.as_str().map(String::from).ok_or_else(|| not_paths(v)))
            .collect::<Result<_, _>>()
            .map(Some),
        Some(other) => Err(not_paths(other)),
    }
}

/// Checks an action's arguments against the only ones it takes (none listed: any), as
/// ansible-core's action base class checks `_VALID_ARGS`; `action` as the task wrote it.
pub(super) fn valid_args(
    action: &str,
    args: &Map<String, Value>,
    valid: &[&str],
) -> Result<(), Map<String, Value>> {
    if valid.is_empty() {
        return Ok(());
    }
    let bad = unknown_keys(args, valid);
    if bad.is_empty() {
        return Ok(());
    }
    Err(failed(format!(
        "Invalid options for {action}: {}",
        bad.join(",")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unknown_arguments_are_listed() {
        let args = json!({"msg": "x", "bogus": 1});
        let err = check_args(
            "debug",
            args.as_object().unwrap(),
            &["msg", "var", "verbosity"],
        )
        .unwrap_err();
        assert_eq!(
            err["msg"],
            "Unsupported parameters for (debug) module: bogus. Supported parameters include: msg, var, verbosity."
        );
    }

    #[test]
    fn options_are_read_as_their_types_or_refused_by_name() {
        let given = json!({
            "delay": "5", "timeout": -3, "sleep": "soon", "depth": 2, "levels": -1,
            "start": "{%", "end": "", "trim": "yes", "strip": "maybe", "one": "/sbin",
            "many": ["/bin", "/usr/bin"], "bad": ["/bin", 3], "empty": null,
        });
        let a = given.as_object().unwrap();
        assert_eq!(seconds(a, "delay", 0).unwrap(), 5);
        assert_eq!(seconds(a, "missing", 7).unwrap(), 7);
        assert_eq!(seconds(a, "empty", 7).unwrap(), 7);
        assert_eq!(signed_seconds(a, "timeout", 0).unwrap(), -3);
        assert_eq!(
            seconds(a, "timeout", 0).unwrap_err().to_string(),
            "timeout must be a whole number of seconds, got -3"
        );
        assert_eq!(
            seconds(a, "sleep", 0).unwrap_err().to_string(),
            "sleep must be a whole number of seconds, got \"soon\""
        );
        assert_eq!(count(a, "depth").unwrap(), Some(2));
        assert_eq!(count(a, "missing").unwrap(), None);
        assert!(
            matches!(count(a, "levels"), Err(ArgError::NotCount { option, .. }) if option == "levels")
        );
        assert_eq!(text(a, "start").unwrap().as_deref(), Some("{%"));
        assert_eq!(
            text(a, "end").unwrap_err().to_string(),
            "end must be a non-empty string, got \"\""
        );
        assert!(flag(a, "trim", false).unwrap());
        assert!(flag(a, "missing", true).unwrap());
        assert_eq!(
            flag(a, "strip", false).unwrap_err().to_string(),
            "strip: The value 'maybe' is not a valid boolean."
        );
        assert_eq!(paths(a, "one").unwrap(), Some(vec!["/sbin".to_string()]));
        assert_eq!(
            paths(a, "many").unwrap(),
            Some(vec!["/bin".to_string(), "/usr/bin".to_string()])
        );
        assert_eq!(
            paths(a, "bad").unwrap_err().to_string(),
            "bad must be a list of paths, not 3"
        );
        assert_eq!(
            paths(a, "timeout").unwrap_err().to_string(),
            "timeout must be a list of paths, not -3"
        );
    }
}
