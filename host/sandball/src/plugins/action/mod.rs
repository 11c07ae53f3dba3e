//! Action plugins: what a task does on the controller. `debug`, `assert`, `set_fact`
//! and `fail` do all their work here; [`raw`] runs a command over the connection; every
//! other action goes to [`normal`], which runs a module on the node ([`legacy`] when it
//! is not a sandball component).

pub mod assert;
pub mod copy;
pub mod debug;
pub mod fail;
pub mod legacy;
pub mod no_log;
pub mod normal;
pub mod raw;
pub mod set_fact;

use crate::template::{Templar, Vars};
use serde_json::{Map, Value};

/// Actions handled on the controller, by short name.
pub const CONTROLLER_ACTIONS: &[&str] = &["debug", "assert", "set_fact", "fail"];

/// Which action plugin handles an action name (FQCN or short); `None` means `normal`.
pub fn controller_action(action: &str) -> Option<&'static str> {
    let short = crate::assemble::component::short_name(action);
    CONTROLLER_ACTIONS.iter().copied().find(|a| *a == short)
}

/// Actions that use the host's connection but no module.
pub const CONNECTION_ACTIONS: &[&str] = &["raw"];

/// Which connection action handles an action name (FQCN or short).
pub fn connection_action(action: &str) -> Option<&'static str> {
    let short = crate::assemble::component::short_name(action);
    CONNECTION_ACTIONS.iter().copied().find(|a| *a == short)
}

/// A failed result with a message.
pub fn failed(msg: impl Into<String>) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("failed".into(), Value::Bool(true));
    m.insert("msg".into(), Value::String(msg.into()));
    m.insert("changed".into(), Value::Bool(false));
    m
}

/// What a controller-side action needs.
pub struct ActionContext<'a> {
    /// The templating engine.
    pub templar: &'a Templar,
    /// The task's variables on this host (loop item included).
    pub vars: &'a Vars,
    /// Verbosity (`-v` count).
    pub verbosity: u8,
}

/// Runs a controller-side action with its (templated, except where the action says
/// otherwise) arguments.
pub fn run_controller(
    name: &str,
    ctx: &ActionContext<'_>,
    args: &Map<String, Value>,
) -> Map<String, Value> {
    match name {
        "debug" => debug::run(ctx, args),
        "assert" => assert::run(ctx, args),
        "set_fact" => set_fact::run(args),
        "fail" => fail::run(args),
        other => failed(format!("no controller action named {other}")),
    }
}

/// Checks that only known arguments were given, as Ansible's action plugins do.
pub fn check_args(
    action: &str,
    args: &Map<String, Value>,
    allowed: &[&str],
) -> Result<(), Map<String, Value>> {
    let unknown: Vec<&str> = args
        .keys()
        .map(String::as_str)
        .filter(|k| !allowed.contains(k))
        .collect();
    if unknown.is_empty() {
        return Ok(());
    }
    let mut sorted = allowed.to_vec();
    sorted.sort_unstable();
    Err(failed(format!(
        "Unsupported parameters for ({action}) module: {}. Supported parameters include: {}.",
        unknown.join(", "),
        sorted.join(", ")
    )))
}

/// Ansible's truthiness of an argument value (`yes`, `true`, `1`, …).
pub fn truthy(v: Option<&Value>, default: bool) -> Result<bool, String> {
    match v {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Bool(b)) => Ok(*b),
        Some(Value::Number(n)) if n.as_i64() == Some(1) => Ok(true),
        Some(Value::Number(n)) if n.as_i64() == Some(0) => Ok(false),
        Some(Value::String(s)) => match s.to_ascii_lowercase().as_str() {
            "yes" | "on" | "1" | "true" | "y" | "t" => Ok(true),
            "no" | "off" | "0" | "false" | "n" | "f" | "" => Ok(false),
            _ => Err(format!("The value '{s}' is not a valid boolean.")),
        },
        Some(other) => Err(format!("The value {other} is not a valid boolean.")),
    }
}

/// `{"changed": false}` plus the given fields.
pub fn ok_with(fields: Value) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("changed".into(), Value::Bool(false));
    if let Value::Object(f) = fields {
        m.extend(f);
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn controller_actions_resolve_by_fqcn() {
        assert_eq!(controller_action("ansible.builtin.debug"), Some("debug"));
        assert_eq!(controller_action("file"), None);
    }

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
    fn booleans_read_like_ansible() {
        assert_eq!(truthy(Some(&json!("yes")), false), Ok(true));
        assert_eq!(truthy(Some(&json!(0)), true), Ok(false));
        assert_eq!(truthy(None, true), Ok(true));
        assert!(truthy(Some(&json!("maybe")), false).is_err());
    }
}
