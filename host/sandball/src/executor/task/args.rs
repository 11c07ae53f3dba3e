//! A task's arguments as its action gets them: templated (but for those the action
//! evaluates itself), `omit` values left out, `module_defaults` filled in; `set_fact`'s
//! marked with the trust ansible-core 2.19 gives them.

use super::keywords::{action_name, finalization, module_defaults};
use crate::executor::Run;
use crate::playbook::{Chain, Task};
use crate::plugins::action::{Cause, TaskFailure};
use crate::template::Vars;
use serde_json::{Map, Value};

/// Where the loader keeps arguments given as one template.
const VARIABLE_PARAMS: &str = "_variable_params";

/// Where the loader keeps words given to an action that are not `key=value` pairs.
const RAW_PARAMS: &str = "_raw_params";

/// The task's arguments, templated (except `keep`: those its action evaluates itself),
/// without the values that are `omit`, with the defaults `module_defaults` gives.
pub(crate) fn template_args(
    run: &Run,
    t: &Task,
    kw: &Chain<'_>,
    keep: &[&str],
    vars: &Vars,
) -> Result<Map<String, Value>, TaskFailure> {
    let mut out = Map::new();
    // `module: "{{ a_dict }}"` (or `args: "{{ a_dict }}"`): the template gives the
    // arguments; arguments written out beside it win.
    let finalization = |cause: String| finalization(run, &t.action, &cause);
    // `args: "{{ a_dict }}"`, then words given to an action that takes none (a
    // Python action plugin says whether it does): a template of nothing else gives
    // arguments (winning over `args:`'s), other words fail the task.
    let mut templates: Vec<&Value> = t.args.get(VARIABLE_PARAMS).into_iter().collect();
    let raw = t.args.get(RAW_PARAMS).filter(|_| {
        !crate::playbook::takes_raw_params(&t.action)
            && !crate::plugins::loader::action_traits(&t.action).raw_params
    });
    if let Some(raw) = raw {
        match raw.as_str() {
            Some(text) if crate::template::is_possibly_all_template(text) => templates.push(raw),
            _ => {
                return Err(format!(
                    "Task failed: Action '{}' does not support raw params.",
                    action_name(run, &t.action)
                )
                .into());
            }
        }
    }
    for params in templates {
        // All of them `omit`: none.
        match run
            .templar
            .template(params, vars)
            .map(crate::template::strip_omit)
        {
            // What the plugin evaluates itself (`assert`'s `that`, `debug`'s `var`)
            // is refused where the template made it: only trusted text is evaluated.
            Ok(Some(Value::Object(m))) => {
                let marked = run
                    .templar
                    .mark_untrusted(params, &Value::Object(m.clone()), vars);
                // Arguments written out win, even as `omit`.
                out.extend(
                    m.into_iter()
                        .filter(|(k, _)| !t.args.contains_key(k))
                        .map(
                            |(k, v)| match (keep.contains(&k.as_str()), marked.get(&k)) {
                                (true, Some(marked)) => (k, marked.clone()),
                                _ => (k, v),
                            },
                        ),
                );
            }
            Ok(None) => {}
            Ok(Some(other)) => {
                return Err(finalization(format!(
                    "Task args must resolve to a 'dict' not '{}'.",
                    sandball_pycompat::pyfmt::short_type_name(&other)
                ))
                .into());
            }
            Err(e) => return Err(finalization(e.cause()).into()),
        }
    }
    let given = |k: &str| k != VARIABLE_PARAMS && (raw.is_none() || k != RAW_PARAMS);
    for (k, v) in t.args.iter().filter(|(k, _)| given(k)) {
        let value = if keep.contains(&k.as_str()) {
            v.clone()
        } else {
            run.templar.template(v, vars).map_err(|e| {
                let what = format!("Error while resolving value for '{k}'");
                TaskFailure {
                    msg: finalization(format!("{what}: {}", e.cause())),
                    cause: Cause::argument(&e, &action_name(run, &t.action), what, k),
                }
            })?
        };
        if let Some(v) = crate::template::strip_omit(value) {
            out.insert(k.clone(), v);
        }
    }
    // Defaults fill in what the task does not write (an argument it sets to `omit` is
    // left out, not filled in); they come first, the task's own after them, in the
    // order ansible-core gives a module its arguments.
    let mut merged = Map::new();
    for (k, v) in module_defaults(run, kw, &t.action, vars)? {
        if t.args.contains_key(&k) {
            if let Some(own) = out.shift_remove(&k) {
                merged.insert(k, own);
            }
        } else if let Some(v) = crate::template::strip_omit(v) {
            merged.insert(k, v);
        }
    }
    merged.extend(out);
    Ok(merged)
}

/// `set_fact`'s templated arguments with the text templating made marked `!unsafe`, so
/// that its facts keep ansible-core 2.19's trust: what the task wrote, or passed through
/// from a trusted variable, stays trusted.
pub(super) fn with_trust_marks(
    run: &Run,
    t: &Task,
    vars: &Vars,
    args: Map<String, Value>,
) -> Map<String, Value> {
    args.into_iter()
        .map(|(k, v)| {
            let marked = match t.args.get(&k) {
                Some(raw) => run.templar.mark_untrusted(raw, &v, vars),
                None => crate::template::untrusted(v),
            };
            (k, marked)
        })
        .collect()
}
