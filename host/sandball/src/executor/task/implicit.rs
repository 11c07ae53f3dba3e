//! ansible-core 2.21's implicit task object and register projections. `_task` is what
//! the task has produced so far on the host, seen by its `changed_when`,
//! `failed_when`, `until`, `loop_control.break_when` and a loop item's `when` and
//! arguments: `result` (the latest result: the current attempt's, or before an item
//! runs the previous item's), `loop_result` (under a loop, `{"results": [...]}` of the
//! items so far, then the whole loop's result) and `polymorphic_result` (the latest
//! result, then the whole loop's). `register` written as a mapping names variables
//! and the expressions that give them: each is seen by those conditions as a variable
//! evaluated when used (in any order, one naming another), and registered once the
//! task is done. Before 2.21 there is neither (see [`crate::compat`]).

use crate::executor::Run;
use crate::playbook::Task;
use crate::template::{Var, Vars};
use serde_json::{Map, Value, json};

/// The name of the implicit object.
const TASK: &str = "_task";

/// Whether the run follows a release with the implicit object and projections.
pub(super) fn enabled() -> bool {
    crate::compat::core().at_least(21)
}

/// Before a loop item runs: `_task` as the earlier items left it (`results`, their
/// results as registered), and the projections.
pub(super) fn before_item(vars: &mut Vars, t: &Task, results: Vec<Value>) {
    if !enabled() {
        return;
    }
    let mut object = Map::new();
    if let Some(last) = results.last() {
        object.insert("result".into(), last.clone());
        object.insert("polymorphic_result".into(), last.clone());
    }
    object.insert("loop_result".into(), json!({"results": results}));
    vars.set_data(TASK, Value::Object(object));
    bind_projections(vars, t);
}

/// Once a result is there (an attempt's, an item's; `r` as registered): `_task.result`
/// is it, and under a loop it is the last of `_task.loop_result.results`; the
/// projections see it.
pub(super) fn with_result(vars: &mut Vars, t: &Task, r: Value) {
    if !enabled() {
        return;
    }
    let mut object = match vars.get(TASK) {
        Some(Var::Data(Value::Object(o)) | Var::Trusted(Value::Object(o))) => o.clone(),
        _ => Map::new(),
    };
    if let Some(Value::Object(looped)) = object.get_mut("loop_result")
        && let Some(Value::Array(results)) = looped.get_mut("results")
    {
        results.push(r.clone());
    }
    object.insert("result".into(), r.clone());
    object.insert("polymorphic_result".into(), r);
    vars.set_data(TASK, Value::Object(object));
    bind_projections(vars, t);
}

/// The projections as variables evaluated when used: an expression (a string) as the
/// template of its value, any other value as itself; trusted, being the playbook's.
fn bind_projections(vars: &mut Vars, t: &Task) {
    for (name, expr) in &t.projections {
        vars.set_trusted(name, lazy(expr));
    }
}

/// A projection's expression as the template of its value; a value that is no string
/// as itself.
fn lazy(expr: &Value) -> Value {
    match expr {
        Value::String(e) => Value::String(format!("{{{{ {e} }}}}")),
        other => other.clone(),
    }
}

/// The projections' values once the task is done on a host (`vars` the variables its
/// last loop item saw, or the task's), `_task` holding its result as registered,
/// `whole` (a loop's: `result` its last item's, `loop_result` and
/// `polymorphic_result` the whole); an error, for the task's failure, names those that
/// could not be evaluated.
pub(super) fn project(
    run: &Run,
    t: &Task,
    vars: &Vars,
    whole: Map<String, Value>,
) -> Result<Map<String, Value>, String> {
    if t.projections.is_empty() || !enabled() {
        return Ok(Map::new());
    }
    let mut vars = vars.clone();
    let mut object = Map::new();
    if let Some(Value::Array(items)) = whole.get("results") {
        if let Some(last) = items.last() {
            object.insert("result".into(), last.clone());
        }
        object.insert("loop_result".into(), Value::Object(whole.clone()));
    } else {
        object.insert("result".into(), Value::Object(whole.clone()));
    }
    object.insert("polymorphic_result".into(), Value::Object(whole));
    vars.set_data(TASK, Value::Object(object));
    bind_projections(&mut vars, t);
    let mut values = Map::new();
    let mut errors = Vec::new();
    for (name, expr) in &t.projections {
        match run.templar.template(&lazy(expr), &vars) {
            Ok(v) => {
                values.insert(name.clone(), v);
            }
            Err(e) => errors.push(format!(
                "Register projection '{name}' failed: {}",
                e.detail()
            )),
        }
    }
    if errors.is_empty() {
        Ok(values)
    } else {
        Err(format!(
            "Task failed due to errors in {} out of {} register projections: {}",
            errors.len(),
            t.projections.len(),
            errors.join("; ")
        ))
    }
}
