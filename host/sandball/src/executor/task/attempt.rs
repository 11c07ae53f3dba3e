//! One attempt at a task: its action run with the task's templated arguments, within
//! its `timeout` (as a background job under `async`), the result's `failed` settled and
//! `changed_when`/`failed_when` applied, the facts it carries kept; and the result as
//! `register` stores it.

use super::args::{template_args, with_trust_marks};
use super::background;
use super::reports::module_works;
use crate::executor::Run;
use crate::executor::coerce::{keyword, keyword_bool, keyword_int};
use crate::executor::context::{Background, TaskContext, delegated_to};
use crate::playbook::{Chain, Keyword, Task};
use crate::plugins::action::TaskResult;
use crate::plugins::action::{self, FactLayer, Failure, Runs, task_failed};
use crate::template::Vars;
use sandball_pycompat::pyops::py_truth;
use serde_json::{Map, Value, json};

/// How one attempt of a task runs: whether its output is secret (`no_log`), and which
/// attempt of an `until` loop it is (its result's `attempts`, which `changed_when` and
/// `failed_when` see, as in ansible-core).
#[derive(Clone, Copy)]
pub(super) struct Attempt {
    pub(super) no_log: bool,
    pub(super) number: Option<u64>,
}

/// [`attempt`] within the task's `timeout` (seconds; 0 or unset: no limit). A task
/// that runs out of time fails as Ansible's does; its module run is abandoned and its
/// session closed, so that its shim ends what the run started on the node.
pub(super) async fn attempt_in_time(
    run: &Run,
    t: &Task,
    kw: &Chain<'_>,
    host: &str,
    vars: &Vars,
    how: Attempt,
) -> TaskResult {
    // The largest `timeout` ansible-core takes (its alarm's bound).
    const MAX_TIMEOUT: i64 = 100_000_000;
    let seconds = match keyword(run, vars, kw, Keyword::Timeout)
        .map(|v| keyword_int(run, vars, Keyword::Timeout.name(), v))
    {
        None => 0,
        Some(Ok(n)) if (0..=MAX_TIMEOUT).contains(&n) => n as u64,
        Some(Ok(n)) => {
            return task_failed(format!(
                "Timeout {n} is invalid, it must be between 0 and {MAX_TIMEOUT}."
            ))
            .into();
        }
        Some(Err(e)) => return task_failed(e).into(),
    };
    if let Some(spec) = &t.async_ {
        return match background::job(run, t, vars, spec) {
            Ok(job) => attempt(run, t, kw, host, vars, how, Some(&job)).await,
            Err(failed) => failed.into(),
        };
    }
    if seconds == 0 {
        return attempt(run, t, kw, host, vars, how, None).await;
    }
    let limit = std::time::Duration::from_secs(seconds);
    match tokio::time::timeout(limit, attempt(run, t, kw, host, vars, how, None)).await {
        Ok(result) => result,
        Err(_) => {
            // What the abandoned run started on the node ends now.
            run.sessions.close_abandoned(ABANDONED_GRACE).await;
            let mut r = task_failed(format!("Timed out after {seconds} second(s)."));
            r.insert(
                "timedout".into(),
                json!({"frame": TIMEOUT_FRAME, "period": seconds}),
            );
            r.into()
        }
    }
}

/// How long a timed-out task's result waits for the shim of its abandoned session to
/// end (it takes a tick of its watchdog, 50 ms): a node that has stopped answering
/// holds the result no longer than this, and its session is dropped all the same.
const ABANDONED_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// What ansible-core's timed-out result gives as `timedout.frame` when tracebacks are
/// not shown.
const TIMEOUT_FRAME: &str = "Configure `DISPLAY_TRACEBACK` to see a traceback on timeout errors.";

/// Keeps the facts a result carries for `host`: `set_fact` values, or a module's
/// `ansible_facts`.
pub(crate) fn record_facts(run: &Run, t: &Task, host: &str, result: &Map<String, Value>) {
    if let Some(Value::Object(stats)) = result.get("ansible_stats")
        && let Some(Value::Object(data)) = stats.get("data")
    {
        let per_host = stats.get("per_host").is_some_and(py_truth);
        let key = if per_host {
            host
        } else {
            crate::plugins::callback::stats::RUN_STATS
        };
        let add = stats.get("aggregate").is_none_or(py_truth);
        run.stats.set_custom(key, data, add);
    }
    if sets_facts(t)
        && let Some(Value::Object(facts)) = result.get("ansible_facts")
    {
        match action::find(&t.action).fact_layer() {
            FactLayer::SetFact => {
                run.vars.set_facts(host, facts);
                // `cacheable: true` makes them facts too (`ansible_facts.name`).
                if result.get(crate::vars::CACHEABLE).is_some_and(py_truth)
                    && let Value::Object(facts) =
                        crate::template::without_unsafe_marks(&Value::Object(facts.clone()))
                {
                    run.vars.add_module_facts(host, &facts);
                }
            }
            FactLayer::IncludeVars => run.vars.include_vars(host, facts),
            FactLayer::Facts => run.vars.add_module_facts(host, facts),
        }
    }
}

/// One attempt at the task ([`attempt_action`]), its failure marked as ansible-core 2.19
/// marks it: a failed result has an `exception` (`(traceback unavailable)` when the
/// module gave none), and one that `failed_when` forgave keeps it as
/// `failed_when_suppressed_exception`. The default callback does not show it.
async fn attempt(
    run: &Run,
    t: &Task,
    kw: &Chain<'_>,
    host: &str,
    vars: &Vars,
    how: Attempt,
    background: Option<&Background>,
) -> TaskResult {
    let mut result = attempt_action(run, t, kw, host, vars, how, background).await;
    if result.get("failed").is_some_and(py_truth) {
        result
            .entry("exception")
            .or_insert_with(|| Value::String(NO_TRACEBACK.into()));
    }
    result
}

/// The message ansible-core 2.21 gives a result `failed_when` failed that had none.
const FAILED_WHEN_TRUE: &str =
    "Task failed: Action failed: A 'failed_when' expression evaluated to 'True'.";

pub(super) use crate::plugins::action::NO_TRACEBACK;

/// The action itself (its plugin, with the task's templated arguments), then
/// `changed_when`/`failed_when`.
async fn attempt_action(
    run: &Run,
    t: &Task,
    kw: &Chain<'_>,
    host: &str,
    vars: &Vars,
    how: Attempt,
    background: Option<&Background>,
) -> TaskResult {
    let plugin = action::find(&t.action);
    let mode = |k, default| keyword_bool(run, vars, kw, k, default);
    let (check_mode, diff) = match (
        mode(Keyword::CheckMode, run.options.check),
        mode(Keyword::Diff, run.options.diff),
    ) {
        (Ok(c), Ok(d)) => (c, d),
        (Err(e), _) | (_, Err(e)) => return task_failed(e).into(),
    };
    // An `ignore_errors` that cannot be read fails the task before its action runs, as
    // ansible-core's validation of the task's keywords does (whether that failure is
    // ignored: `executor::task::run_on_host`).
    if let Err(e) = mode(Keyword::IgnoreErrors, false) {
        return e.task_failure(Keyword::IgnoreErrors);
    }
    let args = match template_args(run, t, kw, plugin.raw_args(), vars) {
        Ok(a) if plugin.fact_layer() == FactLayer::SetFact => with_trust_marks(run, t, vars, a),
        Ok(a) => a,
        Err(e) => return e.result(),
    };
    let cx = TaskContext {
        run,
        task: t,
        kw,
        host,
        vars,
        no_log: how.no_log,
        check_mode,
        diff,
        background,
    };
    let mut result = plugin.run(&cx, &t.action, args).await;
    if let Some(background) = background {
        result = background::wait_for_job(&cx, background, result).await;
    }
    // A delegated module's result says where it ran (`ok: [web1 -> localhost]`); its
    // facts belong to the task's host unless `delegate_facts` gives them to the other.
    let mut facts_host = host.to_string();
    if plugin.runs(&t.action) != Runs::Controller
        && let Ok(Some(other)) = delegated_to(run, kw, vars)
    {
        // Its address as the inventory gives it (`ansible_host`), else its name; an
        // unreachable result carries no address, as ansible-core's connection failure
        // leaves the delegated host's variables out of it (`[web1 -> db1]`).
        let address = run
            .inventory()
            .host_vars(&other)
            .get("ansible_host")
            .and_then(Value::as_str)
            .filter(|a| !crate::template::is_template(a))
            .filter(|_| !result.get("unreachable").is_some_and(py_truth))
            .map_or_else(|| other.clone(), str::to_string);
        result.delegated = Some(action::Delegated {
            host: other.clone(),
            address,
        });
        if keyword_bool(run, vars, kw, Keyword::DelegateFacts, false).unwrap_or(false) {
            facts_host = other;
        }
    }
    record_facts(run, t, &facts_host, &result);
    if result.get("unreachable").is_some_and(py_truth) {
        return result;
    }
    // An attempt of an `until` loop says which it is, for `changed_when`/`failed_when`.
    if let Some(n) = how.number {
        result.insert("attempts".into(), json!(n));
    }
    settle_failed(&mut result);
    let failed_before = result.get("failed").is_some_and(py_truth);
    if !t.changed_when.is_empty() || !t.failed_when.is_empty() {
        // A conditional that cannot be evaluated fails the task and keeps its result,
        // saying why under `changed_when_result`/`failed_when_result`, as Ansible does.
        let evaluated = |conds: &[Value], result: &Map<String, Value>| {
            if conds.is_empty() {
                return Ok(true);
            }
            let mut check_vars = vars.clone();
            bind_result(&mut check_vars, t, result);
            conds.iter().try_fold(true, |all, c| {
                if !all {
                    return Ok(false);
                }
                // An error rendering the expression is said as it is, as in ansible-core.
                run.templar
                    .conditional(c, &check_vars)
                    .map_err(|e| match e {
                        crate::template::TemplateError::Render { .. } => e.detail().to_string(),
                        _ => format!("Error while evaluating conditional: {}", e.detail()),
                    })
            })
        };
        // A conditional written as a template is deprecated, and registered so.
        let (changed, changed_deprecations) =
            crate::template::deprecations_of(|| evaluated(&t.changed_when, &result));
        if !t.changed_when.is_empty() {
            match changed {
                Ok(b) => {
                    result.insert("changed".into(), Value::Bool(b));
                    // ansible-core 2.21 always says what `changed_when` gave.
                    if crate::compat::core().at_least(21) {
                        result.insert("changed_when_result".into(), Value::Bool(b));
                    }
                }
                Err(e) => {
                    conditional_failed(t, &mut result, "changed_when", &e);
                    result.insert("changed_when_result".into(), Value::String(e));
                    result.insert("failed".into(), Value::Bool(true));
                }
            }
        }
        // `failed_when` sees what `changed_when` made of the result, as in ansible-core.
        let (failed, failed_deprecations) =
            crate::template::deprecations_of(|| evaluated(&t.failed_when, &result));
        if !t.failed_when.is_empty() {
            match failed {
                Ok(b) => {
                    result.insert("failed_when_result".into(), Value::Bool(b));
                    // ansible-core 2.21 says why a result without a message failed.
                    if b && crate::compat::core().at_least(21)
                        && !result.get("msg").is_some_and(py_truth)
                    {
                        result.insert("msg".into(), Value::String(FAILED_WHEN_TRUE.into()));
                    }
                    if b {
                        // ansible-core 2.21 keeps the failure `failed_when` judged anew
                        // as a suppressed one too.
                        if crate::compat::core().at_least(21)
                            && result.get("failed").is_some_and(py_truth)
                        {
                            let exception = result
                                .get("exception")
                                .cloned()
                                .unwrap_or_else(|| Value::String(NO_TRACEBACK.into()));
                            result.insert("failed_when_suppressed_exception".into(), exception);
                        }
                        result.insert("failed".into(), Value::Bool(true));
                    } else if result.remove("failed").is_some_and(|f| py_truth(&f)) {
                        let exception = result
                            .remove("exception")
                            .unwrap_or_else(|| Value::String(NO_TRACEBACK.into()));
                        result.insert("failed_when_suppressed_exception".into(), exception);
                    }
                }
                Err(e) => {
                    conditional_failed(t, &mut result, "failed_when", &e);
                    result.insert("failed_when_result".into(), Value::String(e));
                    result.insert("failed".into(), Value::Bool(true));
                }
            }
        }
        crate::plugins::action::summaries::register_deprecations(
            &mut result,
            &[changed_deprecations, failed_deprecations].concat(),
        );
        // A success the conditions made a failure is the action's, whoever did the
        // work, as ansible-core reports it.
        if !failed_before && result.get("failed").is_some_and(py_truth) {
            Failure::Action.mark(&mut result);
        }
    }
    if how.no_log {
        result.insert("_ansible_no_log".into(), Value::Bool(true));
    }
    result
}

/// A `changed_when` or `failed_when` (`keyword`) that could not be evaluated, as
/// ansible-core 2.21 reports it: the result's message says so (a module's failure
/// staying the module's), and a failure it already had is kept as
/// `<keyword>_suppressed_exception`. Nothing before 2.21.
fn conditional_failed(t: &Task, result: &mut Map<String, Value>, keyword: &str, error: &str) {
    if !crate::compat::core().at_least(21) {
        return;
    }
    let failed = result.get("failed").is_some_and(py_truth);
    if failed {
        let exception = result
            .get("exception")
            .cloned()
            .unwrap_or_else(|| Value::String(NO_TRACEBACK.into()));
        result.insert(format!("{keyword}_suppressed_exception"), exception);
    }
    let module = failed && module_works(t) && Failure::of(result) != Some(Failure::Action);
    let what = if module { "Module" } else { "Action" };
    result.insert(
        "msg".into(),
        Value::String(format!(
            "Task failed: {what} failed: A '{keyword}' expression failed: {error}"
        )),
    );
}

/// Whether a result failed, as ansible-core's task executor settles it: a `failed`
/// that is not a boolean by its truth; without one, an `rc` that is not 0 (nor "0",
/// as modules that report only `rc` mean it) fails it, the failure then the action's.
fn settle_failed(result: &mut Map<String, Value>) {
    match result.get("failed") {
        Some(Value::Bool(_)) => {}
        Some(f) => {
            let failed = py_truth(f);
            result.insert("failed".into(), Value::Bool(failed));
        }
        None => {
            let zero = |rc: &Value| match rc {
                Value::Bool(b) => !b,
                Value::Number(n) => n.as_f64() == Some(0.0),
                Value::String(s) => s == "0",
                _ => false,
            };
            if result.get("rc").is_some_and(|rc| !zero(rc)) {
                result.insert("failed".into(), Value::Bool(true));
                Failure::Action.mark(result);
            }
        }
    }
}

/// Makes a result visible to `changed_when`/`failed_when`/`until` under the register
/// name, as Ansible does.
pub(super) fn bind_result(vars: &mut Vars, t: &Task, r: &Map<String, Value>) {
    let r = Value::Object(registered(r));
    if let Some(name) = &t.register {
        vars.set_data(name, r.clone());
    }
    super::implicit::with_result(vars, t, r);
}

/// The result `register` stores: without internal keys (at any depth).
pub(super) fn registered(result: &Map<String, Value>) -> Map<String, Value> {
    let mut r = action::without_internal_keys(result);
    with_failed_flag(&mut r);
    r
}

/// A result that ran (was not skipped, is not a loop's summary, reached its host)
/// says whether it failed, as Ansible's registered results do; from ansible-core 2.21
/// every result does.
pub(super) fn with_failed_flag(r: &mut Map<String, Value>) {
    if crate::compat::core().at_least(21)
        || (!r.contains_key("results")
            && !r.get("skipped").is_some_and(py_truth)
            && !r.get("unreachable").is_some_and(py_truth))
    {
        r.entry("failed").or_insert(Value::Bool(false));
    }
}

/// Whether the `ansible_facts` of the task's result are facts: not `debug`'s, whose
/// result shows a variable (`debug: var=ansible_facts`), as in ansible-core.
pub(super) fn sets_facts(t: &Task) -> bool {
    sandball_pycompat::fqcn::short_name(&t.action) != "debug"
}
