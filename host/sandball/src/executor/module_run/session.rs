//! The task's shim session on its target (as the task's become user): taken from the
//! pool, opened when there is none, and a new one given the playbook's components to
//! compile at once (a become user's, the compiled code root's session already holds).
//! A node with no shim for its architecture is warned about once per host: its legacy
//! modules then run without a session.

use crate::executor::Run;
use crate::executor::context::{Target, TaskContext, become_for, connect_failure, target};
use crate::plugins::r#become::Become;
use crate::plugins::connection::{ConnectError, Session};
use serde_json::{Map, Value};

/// The task's target and its shim session (as the task's become user), opened if need
/// be; `Err` is the task's result.
pub(super) async fn target_session(
    cx: &TaskContext<'_>,
) -> Result<(String, tokio::sync::OwnedMutexGuard<Option<Session>>), Map<String, Value>> {
    let run = cx.run;
    let to = target(run, cx.kw, cx.host, cx.vars).map_err(connect_failure)?;
    let become_ = become_for(run, cx.task, cx.kw, cx.vars)?;
    let slot = run.sessions.slot(&to.name, &to.transport, become_.as_ref());
    let mut guard = slot.lock_owned().await;
    let fresh = guard.is_none();
    if let Err(e) = run
        .sessions
        .ensure_open(&mut guard, &to.name, &to.transport, become_.as_ref())
        .await
    {
        if let ConnectError::NoShim(none) = &e
            && run.sessions.first_shimless(&to.name)
        {
            run.callback.warning(&format!(
                "{}: {none}. Its legacy modules run the classic way, without a shim; its component tasks fail",
                to.name
            ));
        }
        return Err(connect_failure(e));
    }
    if fresh && let Some(session) = guard.as_mut() {
        run.callback
            .verbose(3, Some(&to.name), &format!("EXEC {}", session.command));
        // The playbook's components go to a new session at once, to be compiled while
        // the first tasks run.
        let wanted = run.modules.wanted();
        let modules: Vec<(&str, &[u8])> = wanted
            .iter()
            .map(|c| (c.sha256.as_str(), c.bytes.as_slice()))
            .collect();
        if let Some(b) = &become_ {
            share_compiled(run, &to, b, session, &modules).await;
        }
        match session.precompile(&modules).await {
            Ok(count) => tracing::debug!(host = %to.name, count, "precompiling modules"),
            Err(e) => {
                tracing::debug!(host = %to.name, error = %e, "modules not precompiled");
                if e.broke_session() {
                    *guard = None;
                    run.sessions
                        .ensure_open(&mut guard, &to.name, &to.transport, become_.as_ref())
                        .await
                        .map_err(connect_failure)?;
                }
            }
        }
    }
    Ok((to.name, guard))
}

/// Gives a new become user's session the compiled code of `modules` that its cache
/// lacks and the node's root holds, so that it does not compile them again: read
/// from the cache of the login session's shim when the login is root (as the
/// controller knows it: a local controller running as root, an SSH login as root;
/// see [`crate::plugins::connection::registry::Transport::logs_in_as_root`]), never from another user's, which a program
/// running as that user could have changed. Best effort: what cannot be shared (the
/// login session busy, code missing or for another engine) is compiled by the shim
/// as before.
async fn share_compiled(
    run: &Run,
    to: &Target,
    become_: &Become,
    session: &mut Session,
    modules: &[(&str, &[u8])],
) {
    if become_.user == "root" || !to.transport.logs_in_as_root() || modules.is_empty() {
        return;
    }
    let shas: Vec<&str> = modules.iter().map(|(sha, _)| *sha).collect();
    let missing = match session.uncompiled(&shas).await {
        Ok(m) if !m.is_empty() => m,
        _ => return,
    };
    let slot = run.sessions.slot(&to.name, &to.transport, None);
    // A login session busy with another task (one delegated here) is not waited for.
    let Ok(mut root) = slot.try_lock() else {
        return;
    };
    if let Err(e) = run
        .sessions
        .ensure_open(&mut root, &to.name, &to.transport, None)
        .await
    {
        tracing::debug!(host = %to.name, error = %e, "no root session to share compiled code from");
        return;
    }
    let Some(donor) = root.as_mut() else { return };
    let engine = session.node.engine.clone();
    if donor.node.engine != engine {
        return;
    }
    let mut shared = 0;
    for sha in &missing {
        let code = match donor.compiled_code(sha).await {
            Ok(Some(code)) => code,
            Ok(None) => continue,
            Err(e) => {
                if e.broke_session() {
                    *root = None;
                }
                return;
            }
        };
        if session.put_compiled(sha, &engine, &code).await.is_err() {
            return;
        }
        shared += 1;
    }
    tracing::debug!(host = %to.name, user = %become_.user, shared, "compiled code shared by root");
}
