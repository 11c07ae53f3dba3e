//! Background jobs: an `async` task started as a job the shim keeps, then waited for
//! every `poll` seconds (or left running with `poll: 0`), as ansible-core's executor
//! does.

use crate::executor::Run;
use crate::executor::coerce::keyword_seconds;
use crate::executor::context::{Background, TaskContext};
use crate::playbook::Task;
use crate::plugins::action::TaskResult;
use crate::plugins::action::{self, Context, Failure, raised, task_failed};
use crate::template::Vars;
use sandball_pycompat::pyops::py_truth;
use serde_json::{Map, Value};

/// The background job an `async` task runs as (`async` and `poll` templated as
/// ansible-core's `int` keywords), which the executor waits for ([`wait_for_job`])
/// unless `poll` is 0; the task's failure when they are not numbers of seconds or its
/// action does not support async.
pub(super) fn job(
    run: &Run,
    t: &Task,
    vars: &Vars,
    spec: &Value,
) -> Result<Background, Map<String, Value>> {
    // ansible-core names `async` by its attribute.
    let seconds = |v: &Value, name: &str| keyword_seconds(run, vars, name, v);
    let limit = seconds(spec, "async_val").map_err(task_failed)?;
    let poll = match t.poll.as_ref().map(|p| seconds(p, "poll")) {
        None => DEFAULT_POLL,
        Some(Ok(n)) => n,
        Some(Err(e)) => return Err(task_failed(e)),
    };
    let plugin = action::find(&t.action);
    if !plugin.supports_async(&t.action) {
        return Err(raised(
            Failure::Raised,
            format!("This action ({}) does not support async.", t.action),
        ));
    }
    Ok(Background {
        jid: format!(
            "j{}.{}",
            rand::random_range(100_000_000_000u64..1_000_000_000_000),
            std::process::id()
        ),
        limit_s: limit,
        poll_s: poll,
    })
}

/// Waits for the background job a task started (`async` with `poll` above 0), as
/// ansible-core's executor does: every `poll` seconds it asks after the job (an
/// `ASYNC POLL` line while it runs), until it finished or `async` seconds are spent;
/// a finished job's record is then removed and its result is the task's.
pub(super) async fn wait_for_job(
    cx: &TaskContext<'_>,
    background: &Background,
    started: TaskResult,
) -> TaskResult {
    let (jid, poll) = (&background.jid, background.poll_s);
    let flag = |r: &Map<String, Value>, k: &str| r.get(k).is_some_and(py_truth);
    if poll == 0 || flag(&started, "failed") || flag(&started, "skipped") {
        return started;
    }
    if flag(&started, "finished") {
        // A job done as it started (a module run in the foreground in its place).
        cx.run.callback.async_done(cx.host, jid, true);
        return started;
    }
    if !started.contains_key("ansible_job_id") {
        // An action that started no job (a Python action plugin none of whose module
        // runs asked for `wrap_async`) fails the task, as under ansible-core.
        cx.run.callback.async_done(cx.host, "None", false);
        return raised(Failure::Action, "No job id was returned by the async task").into();
    }
    let mut left = background.limit_s;
    let mut status = TaskResult::default();
    while left > 0 {
        tokio::time::sleep(std::time::Duration::from_secs(poll)).await;
        status = cx.job_status(jid, false).await;
        if ["finished", "failed", "skipped"]
            .iter()
            .any(|k| flag(&status, k))
        {
            break;
        }
        left = left.saturating_sub(poll);
        cx.run.callback.async_poll(cx.host, jid);
    }
    // Its time is up: the shim is stopping it, and says so in a moment ("Timeout
    // exceeded", as ansible-core's async wrapper records it).
    for _ in 0..GRACE_CHECKS {
        if left > 0 || flag(&status, "finished") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        status = cx.job_status(jid, false).await;
    }
    let result = if flag(&status, "finished") {
        let _ = cx.job_status(jid, true).await;
        status
    } else {
        // The executor's, not the module's, as ansible-core reports it.
        let mut r = raised(
            Failure::Action,
            format!(
                "async task did not complete within the requested time - {}s",
                background.limit_s
            ),
        );
        r.insert("async_result".into(), Value::Object(status.fields));
        TaskResult::from(r)
    };
    cx.run
        .callback
        .async_done(cx.host, jid, !flag(&result, "failed"));
    result
}

/// How many more times (100 ms apart) a job past its time limit is asked after, while
/// the shim stops it.
const GRACE_CHECKS: usize = 10;

/// Seconds between checks of an `async` task, as Ansible's default `poll`.
const DEFAULT_POLL: u64 = 15;
