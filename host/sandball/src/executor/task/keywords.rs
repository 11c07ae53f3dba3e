//! A task's conditions (`when`, and a loop's `break_when`), the argument defaults
//! `module_defaults` gives its action, and the action's name in ansible-core's errors.
//! Reading a keyword's value is [`crate::executor::coerce`]'s.

use crate::executor::Run;
use crate::executor::resolve::{DefaultsRole, same_action};
use crate::playbook::{Chain, Keyword};
use crate::plugins::action::{self, TaskResult};
use crate::template::{TemplateError, Vars};
use serde_json::{Map, Value, json};

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
pub(super) fn all_true(run: &Run, conds: &[Value], vars: &Vars) -> Result<bool, TemplateError> {
    for c in conds {
        if !run.templar.conditional(c, vars)? {
            return Ok(false);
        }
    }
    Ok(true)
}
