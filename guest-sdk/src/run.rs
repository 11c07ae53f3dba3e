//! [`run`]: a module's `main`. Reads the arguments from stdin, validates them against
//! the manifest, skips modules without check-mode support in check mode, calls the
//! body and prints exactly one JSON object on stdout (exit code 1 on failure).
//! [`execute`] is the same without the process I/O, for tests; [`start`] is its first
//! half, which the shim serves to modules written in other languages.

use crate::fail::Fail;
use crate::module::Module;
use crate::result::Outcome;
use sandball_wire::manifest::Manifest;
use sandball_wire::protocol::task_environment;
use serde_json::{Map, Value};
use std::io::{Read, Write};

/// [`run`] for a module that takes paths: relative paths start at the node's working
/// directory, as they would for an Ansible module there (WASI starts a component at
/// `/`; the shim says where that directory is as WASI's `initial-cwd`, when the grant
/// named a relative path). Changing directory needs the filesystem interface, which a
/// module without paths (`ping`) does not import.
pub fn run_with_paths<F>(manifest: &str, body: F)
where
    F: FnOnce(&mut Module) -> Result<Map<String, Value>, Fail>,
{
    #[cfg(target_arch = "wasm32")]
    if let Some(dir) = wasip2::cli::environment::initial_cwd().filter(|d| d.starts_with('/'))
        && std::env::set_current_dir(&dir).is_err()
    {
        // The directory is not one the grant opens: path arguments are made
        // absolute from it instead.
        crate::args::relative_from(dir);
    }
    run(manifest, body);
}

/// Runs a module: `manifest` is its manifest JSON (see [`manifest!`](crate::manifest)),
/// `body` does the work and returns the result object or a [`Fail`].
pub fn run<F>(manifest: &str, body: F)
where
    F: FnOnce(&mut Module) -> Result<Map<String, Value>, Fail>,
{
    let mut input = Vec::new();
    let outcome = match std::io::stdin().read_to_end(&mut input) {
        Ok(_) => execute(manifest, &input, &|name| std::env::var(name).ok(), body),
        Err(e) => {
            Outcome::early_failure(format!("cannot read the module arguments from stdin: {e}"))
        }
    };
    let mut text = serde_json::to_string(&outcome.result).unwrap_or_else(|e| {
        format!(r#"{{"failed": true, "msg": "cannot serialise the result: {e}"}}"#)
    });
    text.push('\n');
    let mut stdout = std::io::stdout().lock();
    let written = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush());
    if outcome.failed || written.is_err() {
        std::process::exit(1);
    }
}

/// Runs a module on the argument bytes `input`, reading environment variables through
/// `env`, and returns what [`run`] would print.
pub fn execute<F>(
    manifest: &str,
    input: &[u8],
    env: &dyn Fn(&str) -> Option<String>,
    body: F,
) -> Outcome
where
    F: FnOnce(&mut Module) -> Result<Map<String, Value>, Fail>,
{
    match start(manifest, input, env) {
        Ok(mut module) => {
            let body_result = body(&mut module);
            Outcome::finish(module, body_result)
        }
        Err(outcome) => outcome,
    }
}

/// What [`execute`] does before the body: reads the arguments, validates them against
/// the manifest and refuses check mode for a module without support. Returns the
/// module for the body, or the outcome to print without running it (bad input, an
/// argument error, a check-mode skip). The shim serves this to modules in other
/// languages (`sandball:host/arguments`), so that every language has the same
/// argument handling; [`Outcome::finish`] is the other half.
pub fn start(
    manifest: &str,
    input: &[u8],
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Module, Outcome> {
    let manifest = match Manifest::from_json(manifest.as_bytes()) {
        Ok(m) => m,
        Err(e) => return Err(Outcome::early_failure(e.to_string())),
    };
    let args = match serde_json::from_slice::<Value>(input) {
        Ok(Value::Object(mut map)) => match map.shift_remove("ANSIBLE_MODULE_ARGS") {
            // Ansible's own envelope, accepted so the same arguments file serves both.
            Some(Value::Object(inner)) if map.is_empty() => inner,
            Some(other) => {
                map.insert("ANSIBLE_MODULE_ARGS".into(), other);
                map
            }
            None => map,
        },
        Ok(other) => {
            return Err(Outcome::early_failure(format!(
                "module arguments must be a JSON object, got {}",
                sandball_pycompat::pyfmt::type_name(&other)
            )));
        }
        Err(e) => {
            return Err(Outcome::early_failure(format!(
                "module arguments on stdin are not valid JSON: {e}"
            )));
        }
    };
    // The task's `environment` is the module's environment in Ansible: path arguments
    // and `$VAR`s see it before the module's own variables.
    crate::host::set_task_environment(task_environment(&args));
    let env = |name: &str| crate::host::task_variable(name).or_else(|| env(name));
    let (module, error) = Module::new(&manifest, args, &env);
    if let Some(error) = error {
        let msg = error.module_message(module.module_name());
        let fail = if error.kind == crate::args::ArgErrorKind::Unsupported {
            Fail::not_carried_out(msg)
        } else {
            Fail::new(msg)
        };
        return Err(Outcome::finish(module, Err(fail)));
    }
    if module.check_mode() && !manifest.supports_check_mode {
        // ansible-core's modules refuse check mode themselves, in their words; `uri` is
        // refused by its action plugin first, in that plugin's words.
        let name = module.module_name();
        let msg = if name == "uri" || name.ends_with(".uri") {
            format!("This action ({name}) does not support check mode.")
        } else {
            format!("remote module ({name}) does not support check mode")
        };
        let skipped = crate::json_map!({"skipped": true, "msg": msg, "changed": false});
        return Err(Outcome::finish(module, Ok(skipped)));
    }
    Ok(module)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json_map;
    use serde_json::json;

    const MANIFEST: &str = r#"{
        "name": "demo",
        "supports_check_mode": true,
        "argument_spec": {
            "path": {"type": "path", "required": true, "aliases": ["dest"]},
            "password": {"no_log": true},
            "state": {"choices": ["present", "absent"], "default": "present"}
        }
    }"#;

    fn exec(input: &str) -> Outcome {
        execute(MANIFEST, input.as_bytes(), &|_| None, |m: &mut Module| {
            if m.get_str("path") == Some("/fail") {
                return Err(Fail::new("it failed with hunter2").with("rc", 3));
            }
            m.warn("careful");
            m.deprecate("old thing", Some("2.0.0"), None, Some("ns.col"));
            Ok(json_map!({"path": m.get_str("path"), "secret_echo": m.get_str("password")}))
        })
    }

    #[test]
    fn success_adds_changed_invocation_warnings_and_masks_secrets() {
        let out = exec(r#"{"dest": "/x", "password": "hunter2", "_ansible_verbosity": 1}"#);
        assert!(!out.failed);
        assert_eq!(out.exit_code(), 0);
        assert_eq!(
            Value::Object(out.result),
            json!({
                "path": "/x",
                "secret_echo": "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER",
                "changed": false,
                "invocation": {"module_args": {"path": "/x", "password": "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER", "state": "present"}},
                "warnings": ["careful"],
                "deprecations": [{"msg": "old thing", "version": "2.0.0", "collection_name": "ns.col"}]
            })
        );
    }

    #[test]
    fn failures_carry_fields_invocation_and_exit_code_one() {
        let out = exec(r#"{"path": "/fail", "password": "hunter2"}"#);
        assert!(out.failed);
        assert_eq!(out.exit_code(), 1);
        assert_eq!(out.result["msg"], json!("it failed with ********"));
        assert_eq!(out.result["rc"], json!(3));
        assert_eq!(out.result["failed"], json!(true));
        assert_eq!(
            out.result["invocation"]["module_args"]["path"],
            json!("/fail")
        );
        assert!(!out.result.contains_key("changed"));
    }

    #[test]
    fn validation_errors_fail_before_the_body() {
        let out = exec(r#"{"state": "gone"}"#);
        assert_eq!(out.result["msg"], json!("missing required arguments: path"));
        let out = exec(r#"{"path": "/x", "state": "gone"}"#);
        assert_eq!(
            out.result["msg"],
            json!("value of state must be one of: present, absent, got: gone")
        );
        let out = exec(r#"{"path": "/x", "colour": "red"}"#);
        assert_eq!(
            out.result["msg"],
            json!(
                "Unsupported parameters for (demo) module: colour. Supported parameters include: password, path (dest), state."
            )
        );
        assert!(out.failed);
        let out = exec(
            r#"{"path": "/x", "colour": "red", "_ansible_module_name": "ns.col.demo", "_ansible_ignore_unknown_opts": true}"#,
        );
        assert!(!out.failed, "{:?}", out.result);
    }

    #[test]
    fn bad_stdin_is_a_failure_not_a_crash() {
        let out = exec("not json");
        assert!(out.failed);
        assert!(
            out.result["msg"]
                .as_str()
                .unwrap()
                .starts_with("module arguments on stdin are not valid JSON")
        );
        let out = exec("[1, 2]");
        assert_eq!(
            out.result["msg"],
            json!("module arguments must be a JSON object, got <class 'list'>")
        );
        let out = exec("");
        assert!(out.failed);
        let out = execute("{", b"{}", &|_| None, |_| Ok(Map::new()));
        assert!(
            out.result["msg"]
                .as_str()
                .unwrap()
                .starts_with("invalid module manifest")
        );
    }

    #[test]
    fn ansible_envelope_is_accepted() {
        let out = exec(r#"{"ANSIBLE_MODULE_ARGS": {"path": "/y"}}"#);
        assert_eq!(out.result["path"], json!("/y"));
    }

    #[test]
    fn check_mode_without_support_skips_the_body() {
        let manifest = r#"{"name": "nocheck", "argument_spec": {}}"#;
        let out = execute(
            manifest,
            br#"{"_ansible_check_mode": true}"#,
            &|_| None,
            |_| Err(Fail::new("the body must not run")),
        );
        assert!(!out.failed);
        assert_eq!(
            Value::Object(out.result),
            json!({"skipped": true, "msg": "remote module (nocheck) does not support check mode", "changed": false, "invocation": {"module_args": {}}})
        );
        let out = execute(manifest, b"{}", &|_| None, |_| {
            Ok(json_map!({"changed": true}))
        });
        assert_eq!(out.result["changed"], json!(true));
    }

    #[test]
    fn body_warnings_merge_with_module_warnings() {
        let out = execute(r#"{"name": "w"}"#, b"{}", &|_| None, |m: &mut Module| {
            m.warn("first");
            Ok(json_map!({"warnings": ["second"]}))
        });
        assert_eq!(out.result["warnings"], json!(["first", "second"]));
    }
}
