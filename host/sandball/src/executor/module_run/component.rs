//! A sandball component's run: its arguments with the internal ones, controller files
//! sent first, the grant policy gives the host it runs on (narrowed to reading in check
//! mode), the task's `environment` handed to it, then the run in the task's shim
//! session (or a background job there) and its reply read as the task's result.

use super::interpret::{interpret, retires_session};
use super::session::target_session;
use super::{ModuleFlags, audit, invoked_name, jobs, transfer, with_internal_args};
use crate::assemble::Component;
use crate::executor::context::{
    TaskContext, capability_keywords, environment, node_workdir, unreachable,
};
use crate::plugins::action::TaskResult;
use crate::plugins::action::summaries::ERROR_MESSAGE;
use crate::plugins::action::{ModuleRequest, failed, no_log};
use crate::plugins::connection::{RunReply, SessionError};
use crate::policy;
use sandball_wire::protocol::Job;
use serde_json::Value;
use std::sync::Arc;

/// Runs the component `request` names on the task's target; the result is the task's
/// (failures included). What the module's spec marks `no_log` never reaches an output,
/// even quoted back by the module, by a denial (a refused command line) or by the
/// controller's own refusal to grant it. The diff is left as it is: it shows the
/// content the task writes, which `--diff` asks to see (Ansible's copy shows it too:
/// its action plugin hands the module a file, not the no_log text).
pub(super) async fn run(cx: &TaskContext<'_>, request: ModuleRequest<'_>) -> TaskResult {
    let component: Arc<Component> = match cx.run.modules.get(request.name) {
        Ok(c) => c,
        Err(e) => return failed(e.to_string()).into(),
    };
    let secrets = no_log::secrets(Some(&component.manifest), &request.args, false);
    let mut result = run_component(cx, request, component).await;
    let diff = result.remove("diff");
    no_log::mask_map(&mut result, &secrets);
    if let Some(diff) = diff {
        result.insert("diff".into(), diff);
    }
    result
}

async fn run_component(
    cx: &TaskContext<'_>,
    request: ModuleRequest<'_>,
    component: Arc<Component>,
) -> TaskResult {
    let (run, host) = (cx.run, cx.host);
    run.callback.verbose(
        3,
        Some(host),
        &format!(
            "Using module file {} (sandball component, sha256 {})",
            component.path.display(),
            component.sha256
        ),
    );
    let invoked = invoked_name(cx, request.name);
    let mut args = request.args;
    let (to_name, mut guard) = match target_session(cx).await {
        Ok(s) => s,
        Err(r) => return r.into(),
    };
    // The grant is the one policy gives the host the module runs on.
    let subject = policy::Subject {
        module: &component.name,
        sha256: Some(&component.sha256),
        builtin: component.builtin,
        host: Some(&to_name),
    };
    let flags = ModuleFlags::of(cx);
    let Some(session) = guard.as_mut() else {
        return unreachable("the shim session is not open".into()).into();
    };
    // Controller files go to the node first, in the same session as the run (files
    // staged on the node belong to their session).
    for t in &request.transfers {
        match transfer::send(session, &t.local).await {
            Ok(node_path) => {
                args.insert(t.arg.into(), Value::String(node_path));
            }
            Err(e) => {
                if e.broke_session() {
                    *guard = None;
                }
                return failed(e.to_string()).into();
            }
        }
    }
    let adjustments = match capability_keywords(run, cx.kw, cx.vars) {
        Ok(a) => a,
        Err(e) => return failed(cx.task.location.appears_in(e)).into(),
    };
    if run.options.verbosity >= 1 {
        let warnings = policy::launchers::policy_warnings(
            &run.policy,
            &subject,
            &component.manifest,
            &adjustments,
            false,
        );
        for w in warnings {
            if run.first_warning(&w) {
                run.callback.warning(&w);
            }
        }
    }
    let task_args = Value::Object(args.clone());
    let grant_at = |workdir: Option<&str>| {
        policy::grant_for(
            &run.policy,
            &subject,
            &component.manifest,
            &task_args,
            &adjustments,
            run.options.limits,
            workdir,
        )
    };
    // A relative path climbing above the working directory (`../../shared/x`) is
    // granted where it leads from the node's working directory, asked for then.
    let granted = match grant_at(None) {
        Err(policy::PolicyError::Climbs { .. }) => match node_workdir(cx).await {
            Ok(dir) => grant_at(Some(&dir)),
            Err(r) => return r.into(),
        },
        other => other,
    };
    let mut grant = match granted {
        Ok(g) => g,
        Err(e) => return failed(cx.task.location.appears_in(e.to_string())).into(),
    };
    if flags.check_mode {
        // A dry run changes nothing: every path is granted for reading only, and a
        // missing directory is seen as empty (it would be made by an earlier task of a
        // real run) rather than created.
        for fs in &mut grant.fs {
            fs.ops = sandball_wire::capability::FsOps::READ;
            fs.create_parents = false;
        }
    }
    // The task's `environment` reaches the programs the component runs (the SDK sets
    // it on each), through an internal argument.
    match environment(run, cx.kw, cx.vars) {
        Ok(env) if env.is_empty() => {}
        Ok(env) => {
            args.insert("_ansible_environment".into(), Value::Object(env));
        }
        Err(e) => {
            return failed(cx.task.location.appears_in(e)).into();
        }
    }
    let ran = audit::Ran {
        module: &component.name,
        sha256: &component.sha256,
        manifest: Some(&component.manifest),
    };
    if let Some(background) = cx.background {
        let job = Job::Module {
            sha256: component.sha256.clone(),
            module: component.name.clone(),
            args: with_internal_args(&invoked, &args, flags),
            grant: grant.clone(),
        };
        let (r, broke) =
            jobs::start(cx, session, background, Some(&component.bytes), job, &[]).await;
        if broke {
            *guard = None;
        }
        audit::record(cx, &ran, &args, Some(&grant), &r);
        return r.into();
    }
    let hint = |capability: &str| policy::how_to_grant(&run.policy, &subject, capability);
    let logged_grant = audit::wanted(cx).then(|| grant.clone());
    let granted_fs: Vec<String> = grant.fs.iter().map(ToString::to_string).collect();
    let sent = with_internal_args(&invoked, &args, flags);
    let reply = session
        .run_module(
            &component.sha256,
            &component.bytes,
            &component.name,
            sent,
            grant,
        )
        .await;
    let r = match reply {
        Ok(reply) => {
            let r = result(&component, reply, &granted_fs, &hint);
            if retires_session(&r) {
                *guard = None;
            }
            r
        }
        Err(e) => {
            // The session is unusable; the next task on this host starts a fresh one.
            *guard = None;
            TaskResult::from(match e {
                // The module may have run: it is not run again.
                SessionError::Lost { .. } => unreachable(format!(
                    "the connection to {host} was lost while running {}: {e}",
                    component.name
                )),
                _ => failed(format!(
                    "MODULE FAILURE: the shim session on {host} failed while running {}: {e}",
                    component.name
                )),
            })
        }
    };
    // Every run is logged, also one that ended its session (the shim killed, or it
    // stopped a module stuck past its limit).
    if let Some(grant) = &logged_grant {
        audit::record(cx, &ran, &args, Some(grant), &r);
    }
    r
}

/// A component's reply as the task's result;
/// `hint` says how a denied capability can be granted.
fn result(
    component: &Component,
    reply: RunReply,
    granted_fs: &[String],
    hint: &dyn Fn(&str) -> String,
) -> TaskResult {
    let mut result = interpret(&component.name, reply, granted_fs, hint);
    // A component that crashed (it reports the exception, as ping's `data: crash`
    // does): ansible-core 2.19 reports a module's unhandled exception this way. A
    // legacy module's own `fail_json(exception=…)` keeps its message.
    if result.contains_key("exception")
        && !result.contains_key(ERROR_MESSAGE)
        && result
            .get("failed")
            .is_some_and(sandball_pycompat::pyops::py_truth)
        && let Some(Value::String(msg)) = result.get_mut("msg")
    {
        *msg = format!("Task failed: Module failed: {msg}");
    }
    result
}
