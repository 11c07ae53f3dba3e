//! A task's keywords as ansible-core coerces them: the value that applies (a level set
//! to `omit` does not set it), templated and read as a boolean, a whole number or a
//! number of seconds, with ansible-core's words for a value that is not one; the
//! conditions (`when`, and a loop's `break_when`); and the argument defaults
//! `module_defaults` gives the task's action.

use crate::executor::Run;
use crate::executor::resolve::{DefaultsRole, same_action};
use crate::playbook::{Chain, Keyword};
use crate::plugins::action::{self, TaskResult, integer};
use crate::template::{OMIT, Vars};
use sandball_pycompat::boolean::truthy;
use serde_json::{Map, Value, json};

/// Whether a keyword's value templates to `omit`: that level then does not set it,
/// and the keyword is inherited from the levels around it, as in Ansible.
pub(crate) fn omitted(run: &Run, vars: &Vars, v: &Value) -> bool {
    matches!(v, Value::String(s) if s.contains("omit") && crate::template::is_template(s))
        && matches!(run.templar.template(v, vars), Ok(Value::String(s)) if s == OMIT)
}

/// The value of keyword `k` that applies to the task: the innermost level's that sets
/// it, levels that set it to `omit` aside.
pub(crate) fn keyword<'a>(run: &Run, vars: &Vars, kw: &Chain<'a>, k: Keyword) -> Option<&'a Value> {
    kw.nearest_where(k, |v| !omitted(run, vars, v))
}

/// Keyword `k` (see [`keyword`]) templated and read as a boolean.
pub(crate) fn keyword_bool(
    run: &Run,
    vars: &Vars,
    kw: &Chain<'_>,
    k: Keyword,
    default: bool,
) -> Result<bool, String> {
    match keyword(run, vars, kw, k) {
        None => Ok(default),
        Some(v) => {
            let t = run
                .templar
                .template(v, vars)
                .map_err(|e| keyword_error(k.name(), &e))?;
            truthy(Some(&t), default).map_err(|_| keyword_type_error(k.name(), &t, "bool"))
        }
    }
}

/// ansible-core's words for a keyword whose template failed.
fn keyword_error(name: &str, e: &crate::template::TemplateError) -> String {
    format!("Error processing keyword '{name}': {}", e.cause())
}

/// A keyword of ansible-core's `int` type (`retries`, `timeout`, `async`, `poll`),
/// templated: a whole number or text of one; errors worded as ansible-core's.
pub(super) fn keyword_int(run: &Run, vars: &Vars, name: &str, spec: &Value) -> Result<i64, String> {
    let v = run
        .templar
        .template(spec, vars)
        .map_err(|e| keyword_error(name, &e))?;
    integer(&v).ok_or_else(|| keyword_type_error(name, &v, "int"))
}

/// A keyword of ansible-core's `float` type (`delay`, `loop_control.pause`), templated:
/// a number or text of one; errors worded as ansible-core's.
pub(super) fn keyword_float(
    run: &Run,
    vars: &Vars,
    name: &str,
    spec: &Value,
) -> Result<f64, String> {
    let v = run
        .templar
        .template(spec, vars)
        .map_err(|e| keyword_error(name, &e))?;
    v.as_f64()
        .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
        .ok_or_else(|| keyword_type_error(name, &v, "float"))
}

/// ansible-core's words for a keyword whose value is not of its type (`int`, `float`).
fn keyword_type_error(name: &str, value: &Value, kind: &str) -> String {
    format!(
        "Error processing keyword '{name}': The value {} could not be converted to '{kind}'.",
        sandball_pycompat::pyfmt::py_repr(value)
    )
}

/// The task's action as ansible-core names it in errors: one of its own plugins or
/// modules (sandball's built-in components are those) written without a collection as
/// `ansible.builtin.NAME`, any other as written.
pub(super) fn action_name(run: &Run, action: &str) -> String {
    if !action.contains('.') && crate::executor::resolve::core_own(run, action) {
        format!("ansible.builtin.{action}")
    } else {
        action.to_string()
    }
}

/// The argument defaults `module_defaults` gives the task's action, as ansible-core
/// 2.19 gives them: every level's entries merged by module (a nearer level's entry for
/// a module replaces an outer one's; `debug: {}` removes it), then those of the groups
/// holding the action, in order, and over them the entry naming the action itself.
/// Only what applies is templated, each value on its own, so a broken default of
/// another module fails nothing; one of the action's fails its task as ansible-core's
/// finalization of the task's arguments does.
pub(crate) fn module_defaults(
    run: &Run,
    kw: &Chain<'_>,
    action: &str,
    vars: &Vars,
) -> Result<Map<String, Value>, String> {
    let Some(setting) = kw.nearest_setting(Keyword::ModuleDefaults) else {
        return Ok(Map::new());
    };
    let at = |e: &dyn std::fmt::Display| format!("module_defaults (at {}): {e}", setting.at);
    // A level or an entry may be a template of the whole (`ping: "{{ defaults }}"`).
    let whole = |value: &Value| match value {
        Value::String(_) => run.templar.template(value, vars).map_err(|e| at(&e)),
        other => Ok(other.clone()),
    };
    let mut by_module = Map::new();
    for value in kw.all(Keyword::ModuleDefaults) {
        let lists = match whole(value)? {
            Value::Array(items) => items,
            one => vec![one],
        };
        for list in lists {
            if let Value::Object(entries) = list {
                by_module.extend(entries);
            }
        }
    }
    let mut applied = Map::new();
    let mut own = None;
    let roots = run.legacy.roots();
    for (key, args) in by_module {
        if let Some(group) = key.strip_prefix("group/") {
            let members =
                crate::assemble::action_groups::actions(roots, group).map_err(|e| at(&e))?;
            for warning in &members.warnings {
                run.callback.warning(warning);
            }
            if members
                .actions
                .iter()
                .any(|m| same_action(run, m, DefaultsRole::Member, action))
                && let Value::Object(args) = whole(&args)?
            {
                applied.extend(args);
            }
        } else if same_action(run, &key, DefaultsRole::Entry, action) {
            own = Some(args);
        }
    }
    if let Some(Value::Object(args)) = own.map(|args| whole(&args)).transpose()? {
        applied.extend(args);
    }
    applied
        .into_iter()
        .map(|(k, v)| match run.templar.template(&v, vars) {
            Ok(v) => Ok((k, v)),
            Err(e) => Err(finalization(
                run,
                action,
                &format!("Error while resolving value for '{k}': {}", e.cause()),
            )),
        })
        .collect()
}

/// A task's failure to finalise its arguments for `action`, in ansible-core's words.
pub(super) fn finalization(run: &Run, action: &str, cause: &str) -> String {
    format!(
        "Task failed: Finalization of task args for '{}' failed: {cause}",
        action_name(run, action)
    )
}

/// The result of a task whose `when` does not hold (skipped) or cannot be evaluated
/// (failed); `None` when it holds.
pub(crate) fn when_stops(run: &Run, kw: &Chain<'_>, vars: &Vars) -> Option<TaskResult> {
    for cond in kw.when() {
        match run.templar.conditional(cond, vars) {
            Ok(true) => {}
            Ok(false) => {
                return Some(TaskResult::from(action::ok_with(json!({
                    "skipped": true,
                    "skip_reason": "Conditional result was False",
                    "false_condition": cond,
                }))));
            }
            Err(e) => return Some(action::keyword_conditional_failed(&e, cond, "when")),
        }
    }
    None
}

/// Whether every condition holds; why one could not be evaluated, as a loop's
/// `break_when` fails with it.
pub(super) fn all_true(run: &Run, conds: &[Value], vars: &Vars) -> Result<bool, String> {
    for c in conds {
        match run.templar.conditional(c, vars) {
            Ok(true) => {}
            Ok(false) => return Ok(false),
            Err(e) => return Err(e.conditional_error()),
        }
    }
    Ok(true)
}
