//! Background jobs (`async`): a module run handed to the task's shim as a job, which
//! outlives the session (`poll: 0`), and what the shim says of a job afterwards, read
//! as its module run would have been (`async_status`, the executor's polls).

use super::interpret::interpret;
use super::session::target_session;
use crate::executor::Run;
use crate::executor::context::{Background, TaskContext, unreachable, var_value};
use crate::plugins::action::TaskResult;
use crate::plugins::action::failed;
use crate::plugins::connection::{JobReply, JobStart, RunReply, Session};
use crate::template::Vars;
use sandball_wire::protocol::{Job, JobState, Outcome, RunResult};
use serde_json::{Map, Value, json};

/// Where a background job stands on the task's target, or with `cleanup` its record
/// removed: the result `async_status` returns.
pub(crate) async fn status(cx: &TaskContext<'_>, jid: &str, cleanup: bool) -> TaskResult {
    let (_, mut guard) = match target_session(cx).await {
        Ok(s) => s,
        Err(r) => return r.into(),
    };
    let Some(session) = guard.as_mut() else {
        return unreachable("the shim session is not open".into()).into();
    };
    let async_dir = async_dir(cx.run, cx.vars);
    match session.job_status(jid, async_dir.as_deref(), cleanup).await {
        Ok(reply) => job_result(jid, reply),
        Err(e) => {
            if e.broke_session() {
                *guard = None;
            }
            failed(e.to_string()).into()
        }
    }
}

/// Starts a background job in `session`: the task's result (`started`, not
/// `finished`, the job id and file, as Ansible reports a task with `poll: 0`), and
/// whether the session broke.
pub(super) async fn start(
    cx: &TaskContext<'_>,
    session: &mut Session,
    background: &Background,
    module_bytes: Option<&[u8]>,
    job: Job,
    stdin: &[u8],
) -> (Map<String, Value>, bool) {
    let async_dir = async_dir(cx.run, cx.vars);
    let start = JobStart {
        jid: &background.jid,
        async_dir: async_dir.as_deref(),
        limit_s: background.limit_s,
        module_bytes,
    };
    match session.start_job(start, job, stdin).await {
        Ok(reply) => {
            let mut r = Map::new();
            r.insert("ansible_job_id".into(), json!(background.jid));
            r.insert("started".into(), json!(true));
            r.insert("finished".into(), json!(false));
            r.insert("results_file".into(), json!(reply.results_file));
            r.insert("changed".into(), json!(true));
            (r, false)
        }
        Err(e) => {
            let broke = e.broke_session();
            (failed(format!("cannot start the job: {e}")), broke)
        }
    }
}

/// The result `async_status` returns for what the shim says of a job: the job's own
/// result once it has finished, as its module run would have been reported.
fn job_result(jid: &str, reply: JobReply) -> TaskResult {
    let mut r = match reply.state {
        JobState::Missing => {
            let mut r = TaskResult::from(failed("could not find job"));
            r.insert("finished".into(), json!(true));
            r.insert("started".into(), json!(true));
            r
        }
        JobState::Running => {
            let mut r = TaskResult::default();
            r.insert("finished".into(), json!(false));
            r.insert("started".into(), json!(true));
            r.insert("changed".into(), json!(false));
            r
        }
        JobState::Finished {
            result:
                RunResult {
                    outcome: Outcome::TimedOut { .. },
                    ..
                },
            ..
        } => timed_out(None),
        JobState::Finished {
            module,
            result,
            stdout,
        } => {
            let stderr = result.stderr.clone();
            let reply = RunReply {
                outcome: result.outcome,
                stdout: stdout.into_bytes(),
                stderr: result.stderr,
                denials: result.denials,
                denials_omitted: result.denials_omitted,
                warnings: result.warnings,
            };
            let mut r = interpret(&module, reply, &[], &|capability| {
                format!("grant {capability} to the module in the policy")
            });
            // What a background job wrote to stderr is its result's `stderr`, as
            // ansible-core's async wrapper reports it (a failure already says it).
            if !stderr.is_empty() && !r.contains_key("module_stderr") {
                r.insert("stderr".into(), json!(stderr));
            }
            // ansible-core's async wrapper keeps no `invocation`.
            r.remove("invocation");
            if let Some(msg) = python_exception(&stderr)
                && r.contains_key("module_stderr")
            {
                r.insert("msg".into(), json!(msg));
            }
            r.insert("finished".into(), json!(true));
            r.insert("started".into(), json!(true));
            r
        }
        JobState::TimedOut { pid, .. } => timed_out(Some(pid)),
        JobState::Erased => {
            let mut r = TaskResult::default();
            r.insert("erased".into(), json!(reply.results_file));
            r.insert("finished".into(), json!(false));
            r.insert("started".into(), json!(false));
            r.insert("changed".into(), json!(false));
            r
        }
    };
    r.insert("ansible_job_id".into(), json!(jid));
    r.entry("results_file")
        .or_insert_with(|| json!(reply.results_file));
    // ansible-core's async_status starts from empty output, which the job's own result
    // replaces, each split into lines.
    for (text, lines) in [("stdout", "stdout_lines"), ("stderr", "stderr_lines")] {
        let split: Vec<Value> = match r.entry(text).or_insert_with(|| json!("")) {
            Value::String(t) => sandball_pycompat::pyops::splitlines(t)
                .into_iter()
                .map(|l| Value::String(l.to_string()))
                .collect(),
            _ => Vec::new(),
        };
        r.entry(lines).or_insert_with(|| Value::Array(split));
    }
    r
}

/// A job stopped at its time limit, as `async_status` reports it.
fn timed_out(pid: Option<u32>) -> TaskResult {
    let mut r = failed("Timeout exceeded");
    if let Some(pid) = pid {
        r.insert("child_pid".into(), json!(pid));
    }
    r.insert("finished".into(), json!(true));
    r.insert("started".into(), json!(true));
    r.into()
}

/// Where the target keeps its job files: `ansible_async_dir`, else `ANSIBLE_ASYNC_DIR`,
/// else the shim's default (`~/.ansible_async`).
fn async_dir(run: &Run, vars: &Vars) -> Option<String> {
    match var_value(run, vars, "ansible_async_dir") {
        Some(Value::String(dir)) => Some(dir),
        _ => crate::config::settings()
            .get("ANSIBLE_ASYNC_DIR")
            .map(str::to_string),
    }
}

/// The message for a module that died of a Python exception (a traceback on stderr):
/// the exception, the traceback being in `module_stderr`.
fn python_exception(stderr: &str) -> Option<String> {
    stderr
        .contains("Traceback (most recent call last)")
        .then(|| {
            let last = stderr.trim().lines().last().unwrap_or_default();
            format!(
                "MODULE FAILURE: the module raised a Python exception: {last}\nSee module_stderr for the traceback"
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(state: JobState) -> JobReply {
        JobReply {
            results_file: "/root/.ansible_async/j1".into(),
            state,
        }
    }

    #[test]
    fn every_answer_has_output_as_ansible_cores_async_status_starts_it() {
        for state in [JobState::Missing, JobState::Running, JobState::Erased] {
            let r = job_result("j1", reply(state.clone()));
            assert_eq!(r["stdout"], json!(""), "{state:?}");
            assert_eq!(r["stderr"], json!(""), "{state:?}");
            assert_eq!(r["stdout_lines"], json!([]), "{state:?}");
            assert_eq!(r["stderr_lines"], json!([]), "{state:?}");
        }
    }

    #[test]
    fn a_finished_jobs_own_output_replaces_the_empty_one() {
        let result = RunResult {
            id: 1,
            outcome: Outcome::Exited { code: 0 },
            stderr: String::new(),
            denials: Vec::new(),
            denials_omitted: 0,
            warnings: Vec::new(),
            elapsed_us: 0,
        };
        let r = job_result(
            "j1",
            reply(JobState::Finished {
                module: "command".into(),
                result,
                stdout: r#"{"changed": true, "stdout": "moo\nbaa", "rc": 0}"#.into(),
            }),
        );
        assert_eq!(r["changed"], json!(true));
        assert_eq!(r["stdout"], json!("moo\nbaa"));
        assert_eq!(r["stdout_lines"], json!(["moo", "baa"]));
        assert_eq!(r["stderr"], json!(""));
        assert_eq!(r["stderr_lines"], json!([]));
        assert_eq!(r["finished"], json!(true));
    }
}
