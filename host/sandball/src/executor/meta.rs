//! The `meta` actions (`flush_handlers`, `end_play`, `end_host`, `end_role`,
//! `refresh_inventory`, `clear_host_errors`, ...), run by the strategy itself rather
//! than by an action plugin: on the hosts for which the task's `when` holds, counted in
//! no recap.

use super::handlers::{flush_handlers, force_handlers};
use super::play::{PlayRun, abort, hosts_pattern};
use super::{Run, lock, task};
use crate::playbook::{Chain, Task};
use crate::plugins::callback::Status;
use crate::vars::PlayScope;
use serde_json::Value;
use std::collections::HashSet;

/// Whether every `when` of a task holds for `host`.
fn when_holds(run: &Run, scope: &PlayScope<'_>, kw: &Chain<'_>, host: &str) -> bool {
    let vars = task::task_vars(run, scope, host, kw);
    kw.when()
        .all(|cond| run.templar.conditional(cond, &vars).unwrap_or(false))
}

/// The `meta` actions, run by the strategy itself: they act on the hosts for which
/// the task's `when` holds, and count in no recap. False when no hosts are left.
pub(super) async fn run_meta(
    cx: PlayRun<'_>,
    t: &Task,
    kw: &Chain<'_>,
    scope: &PlayScope<'_>,
    hosts: &[String],
    action: &str,
) -> bool {
    let PlayRun { run, state, .. } = cx;
    // Most meta actions run once for the batch, their condition read on its first host
    // (as ansible-core's linear strategy does); these are per host, and ansible-core
    // shows their banner once per host.
    let per_host = matches!(
        action,
        "noop" | "end_host" | "end_role" | "reset_connection" | "flush_handlers"
    );
    let asked = if per_host { hosts } else { &hosts[..1] };
    // Its banner (a handler's, when a handler runs it), with where it is written from
    // -vv, as for any task.
    let banner = || {
        cx.banner(&task::display_name(run, scope, t, &hosts[0], kw), false);
        if cx.free.is_none() {
            run.callback
                .task_running(&crate::plugins::callback::Running {
                    hosts: hosts.len(),
                    action: &t.action,
                    path: &t.location,
                    args: None,
                });
        }
    };
    // `end_role` ends the innermost role the task is in (its block's keywords).
    let role_block = kw.levels().iter().rev().find(|l| l.role.is_some());
    match action {
        "end_role" if cx.in_handler || role_block.is_none() => {
            // Refused before the run for the tasks read with the playbook; an included
            // file's is refused when it runs, ending the run as in ansible-core.
            banner();
            let mut active = lock(&state.active);
            let place = if cx.in_handler {
                "a handler"
            } else {
                "outside of a role"
            };
            abort(
                state,
                &mut active,
                format!("Cannot execute 'end_role' from {place}"),
                4,
            );
            return false;
        }
        "flush_handlers" if cx.in_handler => {
            // A run-ending error, as in ansible-core (running the handlers from a
            // handler would never end).
            banner();
            let mut active = lock(&state.active);
            abort(
                state,
                &mut active,
                "flush_handlers cannot be used as a handler".into(),
                1,
            );
            return false;
        }
        "noop" => {
            for _ in asked {
                banner();
                run.callback.verbose(2, None, "META: noop");
            }
            return true;
        }
        "refresh_inventory" => {
            banner();
            // Once for the play, on the controller, as Ansible does; the hosts the
            // play's pattern no longer selects leave it (hosts new to the inventory
            // take no part in it).
            let refreshed = || -> Result<Vec<String>, String> {
                run.refresh_inventory().map_err(|e| e.to_string())?;
                let pattern = hosts_pattern(run, cx.play).map_err(|e| e.to_string())?;
                let selected = run
                    .inventory()
                    .select(&pattern)
                    .map_err(|e| e.to_string())?;
                Ok(selected.hosts)
            };
            return match refreshed() {
                Ok(selected) => {
                    run.callback
                        .verbose(2, None, "META: inventory successfully refreshed");
                    let mut left = lock(&state.left);
                    left.extend(cx.all.iter().filter(|h| !selected.contains(h)).cloned());
                    let mut active = lock(&state.active);
                    active.retain(|h| !left.contains(h));
                    *lock(&state.refreshed) = Some(selected);
                    !active.is_empty()
                }
                Err(e) => {
                    run.callback
                        .warning(&format!("meta: refresh_inventory failed: {e}"));
                    lock(&state.active).clear();
                    false
                }
            };
        }
        _ => {}
    }
    let holds: Vec<String> = asked
        .iter()
        .filter(|h| when_holds(run, scope, kw, h))
        .cloned()
        .collect();
    // Hosts the condition leaves out are shown skipped (a meta task counts in no
    // recap), with ansible-core's words for why, also shown at -vv.
    for h in asked {
        banner();
        if holds.contains(h) {
            if action == "end_role" {
                // ansible-core reports it under the role's implicit last task, shown
                // only when debugging.
                continue;
            }
            let done = match action {
                "flush_handlers" => format!("triggered running handlers for {h}"),
                "end_host" => format!("ending play for {h}"),
                "end_play" => "ending play".to_string(),
                "end_batch" => "ending batch".to_string(),
                "clear_facts" => "facts cleared".to_string(),
                "clear_host_errors" => "cleared host errors".to_string(),
                "reset_connection" => "reset connection".to_string(),
                other => other.to_string(),
            };
            run.callback.verbose(2, None, &format!("META: {done}"));
            continue;
        }
        let reason = format!(
            "{action} conditional evaluated to False{}",
            match action {
                "flush_handlers" => format!(", not running handlers for {h}"),
                "clear_facts" => format!(", not clearing facts and fact cache for {h}"),
                "clear_host_errors" => format!(", not clearing host error state for {h}"),
                "end_batch" => ", continuing current batch".to_string(),
                "end_play" => ", continuing play".to_string(),
                "end_host" => format!(", continuing execution for {h}"),
                // Without a comma, as ansible-core 2.19 words it.
                "end_role" => format!(
                    "continuing role {} for {h}",
                    kw.role().map(|r| r.shown_name()).unwrap_or_default()
                ),
                _ => String::new(),
            }
        );
        let msg = if action == "end_host" {
            format!("end_host conditional evaluated to false, continuing execution for {h}")
        } else {
            action.to_string()
        };
        run.callback.verbose(2, None, &format!("META: {reason}"));
        let mut skipped = serde_json::Map::new();
        skipped.insert("msg".into(), Value::String(msg));
        skipped.insert("skipped".into(), Value::Bool(true));
        skipped.insert("skip_reason".into(), Value::String(reason));
        run.callback.result(&crate::plugins::callback::Report {
            host: h,
            action: &t.action,
            status: Status::Skipped,
            result: &skipped.into(),
            item: None,
            ignored: false,
            looped: false,
            origin: None,
        });
    }
    let applies: Vec<String> = if per_host || holds.is_empty() {
        holds
    } else {
        hosts.to_vec()
    };
    match action {
        "flush_handlers" => {
            // The hosts its condition leaves out keep their notices for later.
            let held: Vec<(String, HashSet<String>)> = {
                let mut notified = lock(&state.notified);
                let others: Vec<String> = notified
                    .keys()
                    .filter(|h| !applies.contains(h))
                    .cloned()
                    .collect();
                others
                    .iter()
                    .filter_map(|h| notified.remove_entry(h))
                    .collect()
            };
            Box::pin(flush_handlers(cx, force_handlers(cx.run, cx.play))).await;
            lock(&state.notified).extend(held);
        }
        "end_play" | "end_batch" if !applies.is_empty() => {
            *lock(&state.ended) = true;
            *lock(&state.play_ended) = action == "end_play";
            lock(&state.active).clear();
            return false;
        }
        "end_host" => lock(&state.active).retain(|h| !applies.contains(h)),
        "end_role" => {
            if let Some(block) = role_block {
                let id = *block as *const _ as usize;
                lock(&state.roles_ended).extend(applies.iter().map(|h| (id, h.clone())));
                lock(&state.active).retain(|h| !applies.contains(h));
            }
        }
        "clear_host_errors" => {
            // Failures and unreachable hosts are forgiven, those of earlier plays too,
            // for every host the play's pattern selects: they take part in later plays
            // again and do not fail the run. The batch's unreachable hosts come back
            // in this play, those that failed do not, as in Ansible.
            let selected = hosts_pattern(run, cx.play)
                .ok()
                .and_then(|p| run.inventory().select(&p).ok())
                .map(|s| s.hosts)
                .unwrap_or_else(|| cx.all.to_vec());
            let mut forgiven: HashSet<String> = selected.into_iter().collect();
            forgiven.extend(lock(&state.failed).drain().map(|(h, _)| h));
            let back: Vec<String> = lock(&state.unreachable).drain().collect();
            forgiven.extend(back.iter().cloned());
            {
                let active = lock(&state.active).clone();
                *lock(&state.active) =
                    state.in_order(cx.batch, |h| active.contains(h) || back.contains(h));
            }
            let mut errors = lock(&run.host_errors);
            errors.failed.retain(|h| !forgiven.contains(h));
            errors.unreachable.retain(|h| !forgiven.contains(h));
        }
        "clear_facts" => applies.iter().for_each(|h| run.vars.clear_facts(h)),
        "reset_connection" => {
            for h in &applies {
                run.sessions.reset(h).await;
            }
        }
        _ => {}
    }
    !lock(&state.active).is_empty()
}
