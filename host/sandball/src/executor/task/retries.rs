//! One run of a task (one loop item, or the task itself) with `until`, `retries` and
//! `delay`: attempted again until its condition holds
//! (or, with `retries` alone, until it succeeds), then given up on as ansible-core
//! gives up.

use super::attempt::{Attempt, NO_TRACEBACK, attempt_in_time, bind_result};
use super::keywords::when_stops;
use super::reports::module_works;
use crate::executor::Run;
use crate::executor::coerce::{keyword_float, keyword_int};
use crate::playbook::{Chain, Task};
use crate::plugins::action::TaskResult;
use crate::plugins::action::{self, Failure, task_failed};
use crate::template::Vars;
use sandball_pycompat::pyops::py_truth;
use serde_json::{Value, json};

/// One run of the task (one loop item, or the task itself), with `until` retries
/// (`retries` alone: until it succeeds). A failure that says nothing gets ansible-core's
/// message for it: "Task failed: Action failed: Unknown error." (or the module's).
pub(super) async fn run_once(
    run: &Run,
    t: &Task,
    kw: &Chain<'_>,
    host: &str,
    vars: &Vars,
    no_log: bool,
) -> TaskResult {
    let mut r = run_retrying(run, t, kw, host, vars, no_log).await;
    if r.get("failed").is_some_and(py_truth) && !r.contains_key("msg") {
        let module = module_works(t) && Failure::of(&r) != Some(Failure::Action);
        let what = if module { "Module" } else { "Action" };
        r.insert(
            "msg".into(),
            Value::from(format!("Task failed: {what} failed: Unknown error.")),
        );
    }
    r
}

/// [`run_once`] before its message is settled.
async fn run_retrying(
    run: &Run,
    t: &Task,
    kw: &Chain<'_>,
    host: &str,
    vars: &Vars,
    no_log: bool,
) -> TaskResult {
    if let Some(r) = when_stops(run, kw, vars) {
        return r;
    }
    // `retries` without `until` retries until the task succeeds, as in ansible-core.
    if t.until.is_none() && t.retries.is_none() {
        let how = Attempt {
            no_log,
            number: None,
        };
        return attempt_in_time(run, t, kw, host, vars, how).await;
    }
    let retries = match t
        .retries
        .as_ref()
        .map(|r| keyword_int(run, vars, "retries", r))
    {
        None => 3,
        // A negative count is no retry, as ansible-core takes it.
        Some(Ok(n)) => u64::try_from(n).unwrap_or_default(),
        Some(Err(e)) => return task_failed(e).into(),
    };
    let delay = match t
        .delay
        .as_ref()
        .map(|d| keyword_float(run, vars, "delay", d))
    {
        None => 5.0,
        Some(Ok(secs)) => secs,
        Some(Err(e)) => return task_failed(e).into(),
    };
    let mut attempts = 0;
    loop {
        attempts += 1;
        let how = Attempt {
            no_log,
            number: Some(attempts),
        };
        let mut r = attempt_in_time(run, t, kw, host, vars, how).await;
        let mut check_vars = vars.clone();
        bind_result(&mut check_vars, t, &r);
        // An `until` that cannot be evaluated fails the task at once, as in ansible-core.
        let done = match &t.until {
            Some(until) => match run.templar.conditional(until, &check_vars) {
                Ok(holds) => holds,
                Err(e) => return action::keyword_conditional_failed(&e, until, "until"),
            },
            None => !r.get("failed").is_some_and(py_truth),
        };
        if done {
            r.remove("failed");
            return r;
        }
        if attempts > retries {
            // Out of retries: failed, however `failed_when` judged the last attempt (its
            // verdict still decides how the task is reported), and with ansible-core's
            // count of attempts, the retries asked for.
            r.insert("failed".into(), Value::Bool(true));
            r.insert("attempts".into(), json!(retries));
            r.entry("exception")
                .or_insert_with(|| Value::String(NO_TRACEBACK.into()));
            r.entry("msg")
                .or_insert_with(|| Value::String("Retries exceeded".into()));
            return r;
        }
        // Its `name`, else its action after its role's name, as ansible-core names it.
        let shown = match (&t.name, kw.role()) {
            (Some(name), _) => name.clone(),
            (None, Some(role)) => format!("{} : {}", role.shown_name(), t.action),
            (None, None) => t.action.clone(),
        };
        run.callback.retrying(host, &shown, retries + 1 - attempts);
        tokio::time::sleep(std::time::Duration::from_secs_f64(delay.max(0.0))).await;
    }
}
