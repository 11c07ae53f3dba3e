//! The linear strategy: a play's tasks in order, each on every active host (up to
//! `forks` at a time) before the next starts; failed and unreachable hosts leave the
//! play; notified handlers run at the end of each section.

use super::task::{self, HostOutcome};
use super::{ExecError, Run};
use crate::playbook::{Chain, Keyword, Play, Task, TaskItem};
use crate::plugins::callback::Status;
use crate::vars::PlayScope;
use futures::StreamExt;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

/// The task a play runs first when it gathers facts, as Ansible adds it: "Gathering
/// Facts", tagged `always`, running the gather_facts action (ansible-core's `setup`)
/// with the play's `gather_subset` and `gather_timeout`. Plays gather unless they say
/// `gather_facts: false`, or unless `ANSIBLE_GATHERING=explicit` and they do not say
/// `gather_facts: true`.
pub(crate) fn gathering_task(play: &Play) -> Option<Task> {
    let implicit = !std::env::var("ANSIBLE_GATHERING")
        .is_ok_and(|g| g.trim().eq_ignore_ascii_case("explicit"));
    let gather = match &play.gather_facts {
        Some(v) => crate::plugins::action::truthy(Some(v), implicit).unwrap_or(implicit),
        None => implicit,
    };
    if !gather {
        return None;
    }
    let args = [
        ("gather_subset", &play.gather_subset),
        ("gather_timeout", &play.gather_timeout),
        ("fact_path", &play.fact_path),
    ]
    .into_iter()
    .filter_map(|(k, v)| Some((k.to_string(), v.clone()?)))
    .collect();
    let mut task = Task {
        name: Some("Gathering Facts".into()),
        action: "ansible.builtin.gather_facts".into(),
        args,
        location: play.location.clone(),
        ..Task::default()
    };
    task.keywords.tags = vec!["always".into()];
    Some(task)
}

/// What a `meta` task asks for (`refresh_inventory`, `flush_handlers`, ...).
pub(crate) fn meta_action(t: &Task) -> Option<&str> {
    (crate::assemble::component::short_name(&t.action) == "meta")
        .then(|| t.args.get("_raw_params").and_then(Value::as_str))
        .flatten()
}

/// Per-play bookkeeping shared by the tasks of the play.
struct PlayState {
    active: Mutex<Vec<String>>,
    notified: Mutex<HashMap<String, HashSet<String>>>,
}

/// The play's `hosts:`, templated with the extra vars (the only variables known
/// before the play starts); a list is joined with commas.
pub(crate) fn hosts_pattern(run: &Run, play: &Play) -> Result<String, ExecError> {
    match run.templar.template(
        &Value::String(play.hosts.clone()),
        &run.vars.extra_vars_only(),
    ) {
        Ok(Value::String(s)) => Ok(s),
        Ok(Value::Array(v)) => Ok(v
            .iter()
            .map(|h| {
                h.as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| h.to_string())
            })
            .collect::<Vec<_>>()
            .join(",")),
        Ok(other) => Ok(other.to_string()),
        Err(e) => Err(ExecError::Pattern(format!(
            "cannot template hosts '{}': {e}",
            play.hosts
        ))),
    }
}

/// Puts the play's hosts in the order its `order` keyword asks for (`inventory`, the
/// default, keeps them as the inventory lists them).
fn order_hosts(hosts: &mut [String], order: Option<&Value>) {
    match order.and_then(Value::as_str) {
        Some("sorted") => hosts.sort(),
        Some("reverse_sorted") => {
            hosts.sort();
            hosts.reverse();
        }
        Some("reverse_inventory") => hosts.reverse(),
        Some("shuffle") => {
            use rand::seq::SliceRandom;
            hosts.shuffle(&mut rand::rng());
        }
        _ => {}
    }
}

/// Runs one play.
pub async fn run(run: &Run, play: &Play) -> Result<(), ExecError> {
    let name = play.name.clone().unwrap_or_else(|| play.hosts.clone());
    run.callback.play_start(&name);
    let pattern = hosts_pattern(run, play)?;
    let inventory = run.inventory();
    let selected = inventory
        .select(&pattern)
        .map_err(|e| ExecError::Pattern(e.to_string()))?;
    for w in &selected.warnings {
        run.callback.warning(w);
    }
    let mut hosts = selected.hosts;
    if let Some(limit) = &run.options.limit {
        let limited = inventory
            .apply_limit(&hosts, limit)
            .map_err(|e| ExecError::Pattern(e.to_string()))?;
        for w in &limited.warnings {
            run.callback.warning(w);
        }
        hosts = limited.hosts;
    }
    if hosts.is_empty() {
        run.callback.warning("no hosts matched, nothing to do");
        return Ok(());
    }
    order_hosts(&mut hosts, play.order.as_ref());
    for h in &hosts {
        run.stats.touch(h);
    }
    let state = PlayState {
        active: Mutex::new(hosts.clone()),
        notified: Mutex::new(HashMap::new()),
    };
    let root = Chain::new(&play.keywords);
    if let Some(gather) = gathering_task(play) {
        match run.legacy.get(&task::legacy_action(&gather.action).0) {
            Ok(_) => {
                if !run_task(run, play, &hosts, &state, &gather, &root, false).await {
                    return Ok(());
                }
            }
            Err(e) => run.callback.warning(&format!(
                "no facts were gathered for play '{name}': gathering runs ansible-core's setup module, and {e} (set `gather_facts: false` to silence this)"
            )),
        }
    }
    for section in [&play.pre_tasks, &play.tasks, &play.post_tasks] {
        if !run_items(run, play, &hosts, &state, section, &root).await {
            return Ok(());
        }
        flush_handlers(run, play, &hosts, &state).await;
    }
    Ok(())
}

/// Runs a list of tasks and blocks; false when no hosts are left.
async fn run_items(
    run: &Run,
    play: &Play,
    all: &[String],
    state: &PlayState,
    items: &[TaskItem],
    inherited: &Chain<'_>,
) -> bool {
    for item in items {
        match item {
            TaskItem::Task(t) => {
                if !run_task(run, play, all, state, t, inherited, false).await {
                    return false;
                }
            }
            TaskItem::Block(b) => {
                let inner = inherited.with(&b.keywords);
                if !Box::pin(run_items(run, play, all, state, &b.block, &inner)).await {
                    return false;
                }
            }
        }
    }
    true
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A task keyword that must be a whole number, templated with `vars`; 0 when unset.
fn number_keyword(
    run: &Run,
    kw: &Chain<'_>,
    k: Keyword,
    vars: &crate::template::Vars,
) -> Result<u64, String> {
    let Some(setting) = kw.nearest_setting(k) else {
        return Ok(0);
    };
    run.templar
        .template(&setting.value, vars)
        .ok()
        .and_then(|v| task::integer(&v))
        .and_then(|n| u64::try_from(n).ok())
        .ok_or_else(|| {
            format!(
                "{} must be a whole number, got {}\n\nThe error appears to be in '{}'.",
                k.name(),
                setting.value,
                setting.at
            )
        })
}

/// Runs a task on the play's active hosts (or, for a handler, on the hosts that
/// notified it). Returns false when no hosts are left.
async fn run_task(
    run: &Run,
    play: &Play,
    all: &[String],
    state: &PlayState,
    t: &Task,
    inherited: &Chain<'_>,
    handler: bool,
) -> bool {
    let kw = inherited.with(&t.keywords);
    if !task::selected_by_tags(&run.options, &kw) {
        return true;
    }
    if meta_action(t) == Some("refresh_inventory") {
        // Once for the play, on the controller, as Ansible does; the play keeps its hosts.
        return match run.refresh_inventory() {
            Ok(()) => true,
            Err(e) => {
                run.callback
                    .warning(&format!("meta: refresh_inventory failed: {e}"));
                lock(&state.active).clear();
                run.callback.no_more_hosts();
                false
            }
        };
    }
    let active = lock(&state.active).clone();
    let hosts: Vec<String> = if handler {
        let notified = lock(&state.notified);
        active
            .into_iter()
            .filter(|h| notified.get(h).is_some_and(|s| task::handler_matches(t, s)))
            .collect()
    } else {
        active
    };
    if hosts.is_empty() {
        return handler || !lock(&state.active).is_empty();
    }
    let scope = PlayScope {
        name: play.name.as_deref().unwrap_or(&play.hosts),
        vars: &play.keywords.vars,
        hosts_all: all,
        hosts_active: &hosts,
    };
    run.callback
        .task_start(&task::display_name(run, &scope, t, &hosts[0], &kw), handler);
    // `throttle` and `any_errors_fatal` are read once for the task, with the first
    // host's variables, as Ansible reads them.
    let first_vars = task::task_vars(run, &scope, &hosts[0], &kw);
    let throttle = match number_keyword(run, &kw, Keyword::Throttle, &first_vars) {
        Ok(n) => n as usize,
        Err(e) => {
            run.callback.warning(&e);
            lock(&state.active).clear();
            run.callback.no_more_hosts();
            return false;
        }
    };
    let fatal = kw.nearest(Keyword::AnyErrorsFatal).is_some_and(|v| {
        run.templar
            .template(v, &first_vars)
            .ok()
            .and_then(|v| crate::plugins::action::truthy(Some(&v), false).ok())
            .unwrap_or(true)
    });
    let width = match throttle {
        0 => run.options.forks,
        n => n.min(run.options.forks),
    };
    let outcomes: Vec<(String, HostOutcome)> = futures::stream::iter(hosts.iter())
        .map(|h| async {
            let o = task::run_on_host(run, &scope, t, &kw, h).await;
            (h.clone(), o)
        })
        .buffer_unordered(width.max(1))
        .collect()
        .await;
    let notify = kw.notify();
    let mut active = lock(&state.active);
    let mut fatal_failure = false;
    for (host, o) in outcomes {
        match o.status {
            Status::Failed | Status::Unreachable if !o.ignored => {
                active.retain(|h| h != &host);
                fatal_failure |= fatal;
            }
            Status::Changed if !notify.is_empty() => {
                let mut n = lock(&state.notified);
                n.entry(host).or_default().extend(notify.iter().cloned());
            }
            _ => {}
        }
    }
    if fatal_failure {
        // `any_errors_fatal`: one host's failure ends the play for every host.
        active.clear();
        return false;
    }
    if active.is_empty() {
        run.callback.no_more_hosts();
        return false;
    }
    true
}

/// Runs notified handlers, in the order they are defined, then forgets the notices.
async fn flush_handlers(run: &Run, play: &Play, all: &[String], state: &PlayState) {
    if lock(&state.notified).is_empty() {
        return;
    }
    let root = Chain::new(&play.keywords);
    for item in &play.handlers {
        if let TaskItem::Task(h) = item
            && !run_task(run, play, all, state, h, &root, true).await
        {
            break;
        }
    }
    lock(&state.notified).clear();
}
