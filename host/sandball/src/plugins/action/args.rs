//! An action's arguments: checked against the ones it takes, as ansible-core's action
//! plugins check them, and read (a whole number from a keyword's value).

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
}
