//! `assert`: checks that expressions are true (`that`), with `fail_msg`/`msg`,
//! `success_msg` and `quiet`.

use super::{Context, check_args, failed, ok_with};
use sandball_pycompat::boolean::truthy;
use serde_json::{Map, Value, json};

/// Runs `assert`. `that` arrives untemplated: each entry is a conditional.
pub fn run(ctx: &dyn Context, args: &Map<String, Value>) -> super::TaskResult {
    if let Err(e) = check_args(
        "assert",
        args,
        &["that", "fail_msg", "msg", "success_msg", "quiet"],
    ) {
        return e.into();
    }
    let Some(that) = args.get("that") else {
        return super::raised(super::Failure::Raised, "missing required arguments: that").into();
    };
    let conditions = match ctx.templar().conditions(that, ctx.vars()) {
        Ok(c) => c,
        Err(e) => return failed(e.conditional_failure()).into(),
    };
    let quiet = match truthy(args.get("quiet"), false) {
        Ok(q) => q,
        Err(e) => return failed(e).into(),
    };
    let message = |key: &str| -> Option<Value> {
        args.get(key).filter(|v| !v.is_null()).map(|v| {
            ctx.templar()
                .template(v, ctx.vars())
                .unwrap_or_else(|e| Value::String(e.to_string()))
        })
    };
    // A condition written as a template is deprecated, and registered so.
    let (mut r, deprecations) =
        crate::template::deprecations_of(|| judge(ctx, &conditions, quiet, &message));
    super::summaries::register_deprecations(&mut r, &deprecations);
    r
}

/// The result of checking `conditions` in turn.
fn judge(
    ctx: &dyn Context,
    conditions: &[Value],
    quiet: bool,
    message: &dyn Fn(&str) -> Option<Value>,
) -> super::TaskResult {
    for cond in conditions {
        match ctx.templar().conditional(cond, ctx.vars()) {
            Ok(true) => continue,
            Ok(false) => {
                let mut r = failed("Assertion failed");
                if let Some(m) = message("fail_msg").or_else(|| message("msg")) {
                    r.insert("msg".into(), m);
                }
                r.insert("assertion".into(), cond.clone());
                r.insert("evaluated_to".into(), Value::Bool(false));
                r.insert("_ansible_verbose_always".into(), Value::Bool(!quiet));
                return r.into();
            }
            Err(e) => return super::conditional_failed(&e, cond),
        }
    }
    let msg = message("success_msg").unwrap_or_else(|| json!("All assertions passed"));
    let mut r = ok_with(json!({"msg": msg}));
    if quiet {
        r.insert("_ansible_verbose_always".into(), Value::Bool(false));
    } else {
        r.insert("_ansible_verbose_always".into(), Value::Bool(true));
    }
    r.into()
}
