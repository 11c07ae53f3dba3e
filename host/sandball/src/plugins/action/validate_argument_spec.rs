//! `validate_argument_spec`: checks arguments (`provided_arguments`, and the task's
//! variables of the same names) against an `argument_spec` as ansible-core's action
//! does — with the same validator the sandball components use (the guest SDK's), so
//! types, `required`, `choices`, `elements`, suboptions and aliases mean the same
//! everywhere. A role whose `meta/argument_specs.yml` has a spec for its entry point
//! gets this task first (`playbook/roles.rs`).

use super::{Context, failed, ok_with};
use sandball_guest_sdk::args::{self, StringConversion};
use sandball_wire::manifest::{ArgSpec, Dependencies};
use serde_json::{Map, Value, json};

/// Runs `validate_argument_spec`.
pub fn run(ctx: &dyn Context, task_args: &Map<String, Value>) -> super::TaskResult {
    let Some(Value::Object(spec_data)) = task_args.get("argument_spec") else {
        return failed("\"argument_spec\" arg is required in args: {}").into();
    };
    let mut spec: Vec<(String, ArgSpec)> = Vec::new();
    for (name, data) in spec_data {
        match serde_json::from_value::<ArgSpec>(data.clone()) {
            Ok(s) => spec.push((name.clone(), s)),
            Err(e) => {
                return failed(format!(
                    "argument_spec: option '{name}' cannot be read: {e}"
                ))
                .into();
            }
        }
    }
    let provided = match task_args.get("provided_arguments") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(other) => {
            return failed(format!(
                "Incorrect type for provided_arguments, expected dict and got {}",
                sandball_pycompat::pyfmt::short_type_name(other)
            ))
            .into();
        }
    };
    // The task's variables of the spec's names count as given (role defaults and vars
    // included), the explicit ones winning.
    let mut given = Map::new();
    for (name, _) in &spec {
        if let Ok(v) = ctx.templar().evaluate(name, ctx.vars()) {
            given.insert(name.clone(), v);
        }
    }
    given.extend(provided);
    let env = |name: &str| crate::config::settings().get(name).map(str::to_string);
    let validation = args::validate(
        &spec,
        &Dependencies::default(),
        given,
        &args::Context {
            env: &env,
            string_conversion: StringConversion::Ignore,
            ignore_unknown: false,
        },
    );
    let context = task_args
        .get("validate_args_context")
        .cloned()
        .unwrap_or_else(|| json!({}));
    if validation.errors.is_empty() {
        return ok_with(json!({
            "msg": "The arg spec validation passed",
            "validate_args_context": context,
        }))
        .into();
    }
    let errors: Vec<String> = validation
        .errors
        .iter()
        .map(|e| e.message.clone())
        .collect();
    let mut r = failed(format!(
        "Validation of arguments failed:\n{}",
        errors.join("\n")
    ));
    r.insert("argument_errors".into(), json!(errors));
    r.insert(
        "argument_spec_data".into(),
        Value::Object(spec_data.clone()),
    );
    r.insert("validate_args_context".into(), context);
    r.into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::action::testing::FakeContext;

    #[test]
    fn types_required_and_choices_are_checked() {
        let mut ctx = FakeContext::default();
        ctx.vars.set_data("port", json!("8080"));
        let spec = json!({
            "port": {"type": "int", "required": true},
            "mode": {"type": "str", "choices": ["a", "b"], "default": "a"},
        });
        let ok = run(&ctx, json!({"argument_spec": spec}).as_object().unwrap());
        assert_eq!(ok["msg"], "The arg spec validation passed", "{ok:?}");
        let bad = run(
            &ctx,
            json!({"argument_spec": spec, "provided_arguments": {"mode": "c"}})
                .as_object()
                .unwrap(),
        );
        assert_eq!(bad["failed"], true);
        assert!(bad["msg"].as_str().unwrap().contains("mode"), "{bad:?}");
        let missing = run(
            &FakeContext::default(),
            json!({"argument_spec": spec}).as_object().unwrap(),
        );
        assert!(
            missing["msg"].as_str().unwrap().contains("port"),
            "{missing:?}"
        );
    }

    #[test]
    fn unknown_options_and_suboptions_are_errors() {
        let spec = json!({
            "port": {"type": "int"},
            "nested": {"type": "dict", "options": {"level": {"type": "int"}}},
        });
        for (provided, error) in [
            (
                json!({"other": 1, "nested": {"level": 2}}),
                "other. Supported parameters include: nested, port.",
            ),
            (
                json!({"nested": {"lvl": 2}}),
                "nested.lvl. Supported parameters include: level.",
            ),
        ] {
            let bad = run(
                &FakeContext::default(),
                json!({"argument_spec": spec, "provided_arguments": provided})
                    .as_object()
                    .unwrap(),
            );
            assert_eq!(bad["argument_errors"], json!([error]), "{bad:?}");
        }
    }
}
