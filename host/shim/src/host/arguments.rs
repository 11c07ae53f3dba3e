//! `arguments.*`: argument handling for modules written in languages other than Rust.
//! The shim runs the Rust SDK's own code ([`sandball_guest_sdk::start`] and
//! [`Outcome::finish`]), so a Python or JavaScript module validates its arguments,
//! refuses check mode and masks `no_log` values exactly as a Rust module does. The
//! module between the two calls is kept in the run's [`HostState`].

use super::HostState;
use super::sandball::host::arguments::Host;
use sandball_guest_sdk::{Module, Outcome};
use serde_json::{Map, Value, json};

/// What `start` hands the module: its validated parameters and run settings.
fn settings(module: &Module) -> Value {
    json!({
        "params": module.params(),
        "check_mode": module.check_mode(),
        "diff": module.diff_mode(),
        "no_log": module.no_log(),
        "verbosity": module.verbosity(),
        "module_name": module.module_name(),
    })
}

/// The printed form of an outcome.
fn text(outcome: &Outcome) -> String {
    serde_json::to_string(&outcome.result).unwrap_or_else(|e| {
        format!(r#"{{"failed": true, "msg": "cannot serialise the result: {e}"}}"#)
    })
}

impl Host for HostState {
    fn start(
        &mut self,
        manifest: String,
        args: String,
        env: Vec<(String, String)>,
    ) -> Result<String, String> {
        // Path arguments and `$VAR`s see the task's `environment` before the module's
        // own variables, as in the Rust SDK.
        let lookup = |name: &str| {
            self.task_env
                .iter()
                .chain(env.iter())
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        };
        match sandball_guest_sdk::start(&manifest, args.as_bytes(), &lookup) {
            Ok(module) => {
                let answer = settings(&module).to_string();
                self.module = Some(module);
                Ok(answer)
            }
            Err(outcome) => Err(text(&outcome)),
        }
    }

    fn finish(&mut self, outcome: String, secrets: Vec<String>) -> Result<String, String> {
        let Some(mut module) = self.module.take() else {
            return Err("arguments.finish was called before arguments.start".into());
        };
        let result: Map<String, Value> = match serde_json::from_str(&outcome) {
            Ok(Value::Object(map)) => map,
            Ok(other) => {
                return Err(format!(
                    "a module's result must be a JSON object, got {}",
                    sandball_pycompat::pyfmt::type_name(&other)
                ));
            }
            Err(e) => return Err(format!("a module's result is not valid JSON: {e}")),
        };
        for secret in secrets {
            module.no_log_value(secret);
        }
        Ok(text(&Outcome::finish(module, Ok(result))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::Places;
    use std::time::Instant;

    const MANIFEST: &str = r#"{"name": "demo", "supports_check_mode": true, "argument_spec": {
        "path": {"type": "path", "required": true, "aliases": ["dest"]},
        "token": {"no_log": true},
        "state": {"default": "present", "choices": ["present", "absent"]},
        "home": {"type": "path", "fallback": {"env": ["DEMO_HOME"]}}
    }}"#;

    fn state() -> HostState {
        HostState::new(
            Vec::new(),
            Vec::new(),
            Vec::new(),
            Places::of_process(),
            Instant::now(),
            1024,
        )
    }

    fn env() -> Vec<(String, String)> {
        vec![
            ("DEMO_HOME".into(), "/srv/demo".into()),
            ("HOME".into(), "/home/ann".into()),
        ]
    }

    #[test]
    fn start_validates_and_finish_completes_the_result() {
        let mut host = state();
        host.set_task_environment(vec![("DEMO_HOME".into(), "/opt/demo".into())]);
        let args = r#"{"dest": "~/x", "token": "s3cret", "_ansible_check_mode": true, "_ansible_diff": true, "_ansible_module_name": "ns.col.demo"}"#;
        let answer = host.start(MANIFEST.into(), args.into(), env()).unwrap();
        let answer: Value = serde_json::from_str(&answer).unwrap();
        assert_eq!(
            answer["params"],
            json!({"path": "/home/ann/x", "token": "s3cret", "state": "present", "home": "/opt/demo"})
        );
        assert_eq!(answer["check_mode"], json!(true));
        assert_eq!(answer["diff"], json!(true));
        assert_eq!(answer["module_name"], json!("ns.col.demo"));
        let done = host
            .finish(
                r#"{"msg": "token s3cret, key k3y", "warnings": ["own"]}"#.into(),
                vec!["k3y".into()],
            )
            .unwrap();
        let done: Value = serde_json::from_str(&done).unwrap();
        assert_eq!(done["msg"], json!("token ********, key ********"));
        assert_eq!(done["changed"], json!(false));
        assert_eq!(done["warnings"], json!(["own"]));
        assert_eq!(
            done["invocation"]["module_args"]["token"],
            json!("VALUE_SPECIFIED_IN_NO_LOG_PARAMETER")
        );
        // One finish per start.
        assert!(host.finish("{}".into(), Vec::new()).is_err());
    }

    #[test]
    fn argument_errors_and_check_mode_are_the_rust_sdks() {
        let mut host = state();
        let err = host
            .start(
                MANIFEST.into(),
                r#"{"state": "gone", "path": "/x"}"#.into(),
                env(),
            )
            .unwrap_err();
        let err: Value = serde_json::from_str(&err).unwrap();
        assert_eq!(
            err["msg"],
            json!("value of state must be one of: present, absent, got: gone")
        );
        assert_eq!(err["failed"], json!(true));
        let nocheck = r#"{"name": "nocheck"}"#;
        let err = host
            .start(
                nocheck.into(),
                r#"{"_ansible_check_mode": true}"#.into(),
                env(),
            )
            .unwrap_err();
        let err: Value = serde_json::from_str(&err).unwrap();
        assert_eq!(err["skipped"], json!(true));
        assert_eq!(
            err["msg"],
            json!("remote module (nocheck) does not support check mode")
        );
        assert!(host.finish("{}".into(), Vec::new()).is_err());
        host.start(nocheck.into(), "{}".into(), env()).unwrap();
        let err = host.finish("[1]".into(), Vec::new()).unwrap_err();
        assert_eq!(
            err,
            "a module's result must be a JSON object, got <class 'list'>"
        );
    }

    #[test]
    fn a_failure_keeps_its_fields_and_gets_no_changed() {
        let mut host = state();
        host.start(
            MANIFEST.into(),
            r#"{"path": "/x", "token": "t0k"}"#.into(),
            env(),
        )
        .unwrap();
        let done = host
            .finish(
                r#"{"failed": true, "msg": "no t0k", "rc": 2}"#.into(),
                Vec::new(),
            )
            .unwrap();
        let done: Value = serde_json::from_str(&done).unwrap();
        assert_eq!(done["msg"], json!("no ********"));
        assert_eq!(done["rc"], json!(2));
        assert!(done.get("changed").is_none());
    }
}
