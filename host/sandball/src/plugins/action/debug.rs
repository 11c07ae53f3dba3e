//! `debug`: prints a message (`msg`) or a variable (`var`), at a minimum `verbosity`.

use super::{Context, check_args, failed, ok_with};
use crate::template::UNTRUSTED;
use serde_json::{Map, Value, json};

/// Runs `debug`. `msg` arrives templated; `var` is a variable name or expression,
/// evaluated here.
pub fn run(ctx: &dyn Context, args: &Map<String, Value>) -> super::TaskResult {
    if let Err(e) = check_args("debug", args, &["msg", "var", "verbosity"]) {
        return e.into();
    }
    if args.contains_key("msg") && args.contains_key("var") {
        return super::raised(
            super::Failure::Raised,
            "parameters are mutually exclusive: msg|var",
        )
        .into();
    }
    let verbosity = match args.get("verbosity") {
        None => 0,
        Some(v) => match v
            .as_u64()
            .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
        {
            Some(n) => n,
            None => return failed(format!("verbosity must be an integer, got {v}")).into(),
        },
    };
    if (ctx.verbosity() as u64) < verbosity {
        return ok_with(json!({"skipped_reason": "Verbosity threshold not met.", "skipped": true}))
            .into();
    }
    let mut result = ok_with(json!({"_ansible_verbose_always": true}));
    // `var` templated to `omit` is no `var`.
    let var = args.get("var").filter(|var| {
        !matches!(var, Value::String(name) if name.contains("{{")
            && matches!(ctx.templar().template(var, ctx.vars()), Ok(Value::String(s)) if s == crate::template::OMIT))
    });
    match var {
        Some(Value::String(written)) => {
            // A name or an expression; written as a template, what the template gives
            // (shown under that name) when it passes a trusted name through, as
            // ansible-core 2.19 has it: other text a template makes is never evaluated.
            let mut name = written.clone();
            if crate::template::is_template(written) {
                let trusted = ctx
                    .templar()
                    .passes_trust(var.unwrap_or(&Value::Null), ctx.vars());
                match ctx
                    .templar()
                    .template(&Value::String(written.clone()), ctx.vars())
                {
                    Ok(Value::String(text)) if trusted => name = text,
                    Ok(Value::String(_)) => {
                        return failed(format!(
                            "Task failed: Error while resolving `var` expression: {UNTRUSTED}"
                        ))
                        .into();
                    }
                    Ok(other) => return not_a_string(&other).into(),
                    Err(e) => {
                        return failed(format!(
                            "Task failed: Finalization of task args for 'ansible.builtin.debug' failed: Error while resolving value for 'var': {}",
                            e.cause()
                        )).into();
                    }
                }
            }
            let name = &name;
            let evaluated = ctx.templar().evaluate(name, ctx.vars());
            // `omit` in what it gives is left out; all of it `omit`, a placeholder is
            // shown, with a warning, as in ansible-core 2.19.
            let evaluated = evaluated.map(|v| {
                crate::template::strip_omit(v).unwrap_or_else(|| {
                    result.insert(
                        "warnings".into(),
                        json!(["The result of the `var` expression could not be omitted; a placeholder was used instead."]),
                    );
                    json!("<<Omit>>")
                })
            });
            // What is undefined is shown in its place, with a warning, as
            // ansible-core 2.19 shows a template error in `var`.
            // The warning is the result's, as in ansible-core (`result.warnings`).
            let value = match evaluated {
                Ok(v) => v,
                Err(crate::template::TemplateError::Undefined { detail, .. }) => {
                    result.insert(
                        "warnings".into(),
                        json!([format!("Encountered 1 template error.\nerror 1 - {detail}")]),
                    );
                    Value::String(format!("<< error 1 - {detail} >>"))
                }
                Err(e) => {
                    return failed(format!(
                        "Task failed: Error while resolving `var` expression: {}",
                        e.cause()
                    ))
                    .into();
                }
            };
            result.insert(name.clone(), value);
        }
        // `var: !unsafe name`: data marked untrusted is never evaluated.
        Some(other) if crate::template::unsafe_mark(other).is_some() => {
            return failed(format!(
                "Task failed: Error while resolving `var` expression: {UNTRUSTED}"
            ))
            .into();
        }
        Some(other) => return not_a_string(other).into(),
        None => {
            let msg = args
                .get("msg")
                .cloned()
                .unwrap_or_else(|| json!("Hello world!"));
            result.insert("msg".into(), msg);
        }
    }
    result.into()
}

/// The error for a `var` that is no string.
fn not_a_string(var: &Value) -> Map<String, Value> {
    use sandball_pycompat::pyfmt::py_str;
    use sandball_pycompat::pyfmt::short_type_name;
    super::raised(
        super::Failure::Raised,
        format!(
            "argument 'var' is of type {} and we were unable to convert to _check_type_str_no_conversion: '{}' is not a string and conversion is not allowed",
            short_type_name(var),
            py_str(var)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::action::testing::{FakeContext, args};

    #[test]
    fn an_undefined_var_is_shown_in_its_place_as_ansible_2_19_shows_it() {
        let mut ctx = FakeContext::default();
        ctx.vars.set_data("d", json!({"a": 1}));
        let r = run(&ctx, &args(json!({"var": "nope"})));
        assert_eq!(r["nope"], "<< error 1 - 'nope' is undefined >>");
        assert_eq!(
            r["warnings"],
            json!(["Encountered 1 template error.\nerror 1 - 'nope' is undefined"])
        );
        let r = run(&ctx, &args(json!({"var": "d.b"})));
        assert_eq!(
            r["d.b"],
            "<< error 1 - object of type 'dict' has no attribute 'b' >>"
        );
        let r = run(&ctx, &args(json!({"var": "d.a"})));
        assert_eq!(r["d.a"], 1);
        ctx.vars.set_data("o", json!(crate::template::OMIT));
        let r = run(&ctx, &args(json!({"var": "o"})));
        assert_eq!(r["o"], "<<Omit>>");
        assert_eq!(r["warnings"].as_array().map(Vec::len), Some(1));
        let r = run(&ctx, &args(json!({"var": "[o, 1]"})));
        assert_eq!(r["[o, 1]"], json!([1]));
        let r = run(&ctx, &args(json!({"var": "{{ omit }}"})));
        assert_eq!(r["msg"], "Hello world!");
        let r = run(&ctx, &args(json!({"var": {"__ansible_unsafe": "d"}})));
        assert_eq!(r["failed"], true);
        assert!(r["msg"].as_str().unwrap().contains("untrusted template"));
        let r = run(&ctx, &args(json!({"var": {"a": 1}})));
        assert_eq!(
            r["msg"],
            "argument 'var' is of type dict and we were unable to convert to _check_type_str_no_conversion: '{'a': 1}' is not a string and conversion is not allowed"
        );
    }
}
