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
/// Facts", tagged `always`, running the gather_facts action (the built-in `setup`
/// component, or ansible-core's `setup` when asked for) with the play's
/// `gather_subset` and `gather_timeout`. Plays gather unless they say
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
/// Per-host state of a play: which hosts still run tasks, which failed (and how, for
/// a block's `rescue`), which became unreachable, which handlers each notified.
struct PlayState {
    /// Hosts that run the next task, in the play's order.
    active: Mutex<Vec<String>>,
    /// Hosts whose last failure has not been rescued: the task and its result.
    failed: Mutex<HashMap<String, Failure>>,
    /// Hosts that could not be reached (they never come back in this play).
    unreachable: Mutex<HashSet<String>>,
    notified: Mutex<HashMap<String, HashSet<String>>>,
}

/// What every task of a running play shares.
#[derive(Clone, Copy)]
struct PlayRun<'a> {
    run: &'a Run,
    play: &'a Play,
    /// The play's hosts.
    all: &'a [String],
    state: &'a PlayState,
}

/// A host's failure, as a block's `rescue` sees it.
struct Failure {
    /// `ansible_failed_task`.
    task: Value,
    /// `ansible_failed_result`.
    result: serde_json::Map<String, Value>,
}

/// Where a task list runs: inside a block that catches failures (with `rescue` or
/// `always`), a host that fails is not the end of the play yet.
#[derive(Clone, Copy, Default)]
struct Section {
    protected: bool,
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
        failed: Mutex::new(HashMap::new()),
        unreachable: Mutex::new(HashSet::new()),
        notified: Mutex::new(HashMap::new()),
    };
    let top = Section::default();
    let cx = PlayRun {
        run,
        play,
        all: &hosts,
        state: &state,
    };
    let root = Chain::new(&play.keywords);
    if let Some(gather) = gathering_task(play) {
        // The built-in `setup` component gathers without ansible-core; a host that
        // asks for the legacy module (`sandball_legacy_modules`) fails its own task
        // when ansible-core is missing.
        let found = if run.modules.exists(&gather.action) {
            Ok(())
        } else {
            run.legacy
                .get(&task::legacy_action(&gather.action).0)
                .map(|_| ())
        };
        match found {
            Ok(()) => {
                if !run_task(cx, &gather, &root, false, top).await {
                    return Ok(());
                }
            }
            Err(e) => run.callback.warning(&format!(
                "no facts were gathered for play '{name}': there is no `setup` component and ansible-core's setup module: {e} (set `gather_facts: false` to silence this)"
            )),
        }
    }
    for section in [&play.pre_tasks, &play.tasks, &play.post_tasks] {
        if !run_items(cx, section, &root, top).await {
            return Ok(());
        }
        flush_handlers(cx).await;
    }
    Ok(())
}

/// Runs a list of tasks and blocks; false when no hosts are left.
async fn run_items(
    cx: PlayRun<'_>,
    items: &[TaskItem],
    inherited: &Chain<'_>,
    section: Section,
) -> bool {
    for item in items {
        let go_on = match item {
            TaskItem::Task(t) => run_task(cx, t, inherited, false, section).await,
            TaskItem::Block(b) => Box::pin(run_block(cx, b, inherited, section)).await,
        };
        if !go_on {
            return false;
        }
    }
    true
}

/// Runs a block as Ansible's linear strategy does: its tasks on the hosts that enter
/// it; then its `rescue` on the hosts that failed there (the others wait), whose
/// failure then counts as rescued; then its `always` on every host that entered and
/// is still reachable. A host whose failure was not rescued leaves the play after
/// `always`. False when no hosts are left.
async fn run_block(
    cx: PlayRun<'_>,
    b: &crate::playbook::Block,
    inherited: &Chain<'_>,
    section: Section,
) -> bool {
    let PlayRun { run, state, .. } = cx;
    let inner = inherited.with(&b.keywords);
    let catches = !b.rescue.is_empty() || !b.always.is_empty();
    let entering = lock(&state.active).clone();
    let inside = Section {
        protected: section.protected || catches,
    };
    run_items(cx, &b.block, &inner, inside).await;
    if !b.rescue.is_empty() {
        let failed: Vec<String> = {
            let mut failures = lock(&state.failed);
            entering
                .iter()
                .filter_map(|h| failures.remove(h).map(|f| (h, f)))
                .map(|(h, f)| {
                    run.stats.rescue(h);
                    run.vars.register(h, "ansible_failed_task", f.task);
                    run.vars
                        .register(h, "ansible_failed_result", Value::Object(f.result));
                    h.clone()
                })
                .collect()
        };
        if !failed.is_empty() {
            // The hosts that did not fail wait while the failed ones run `rescue`.
            let waiting = std::mem::replace(&mut *lock(&state.active), failed);
            let rescue_section = Section {
                protected: section.protected || !b.always.is_empty(),
            };
            run_items(cx, &b.rescue, &inner, rescue_section).await;
            let survivors = std::mem::take(&mut *lock(&state.active));
            *lock(&state.active) =
                in_order(&entering, |h| waiting.contains(h) || survivors.contains(h));
        }
    }
    if !b.always.is_empty() {
        let unreachable = lock(&state.unreachable).clone();
        *lock(&state.active) = in_order(&entering, |h| !unreachable.contains(h));
        run_items(cx, &b.always, &inner, section).await;
        // A failure that was not rescued still ends the host's play after `always`.
        let failed: HashSet<String> = lock(&state.failed).keys().cloned().collect();
        lock(&state.active).retain(|h| !failed.contains(h));
    }
    // When every host failed inside a block that catches failures, Ansible ends the
    // play without the NO MORE HOSTS LEFT banner.
    !lock(&state.active).is_empty()
}

/// The hosts of `order` that `keep` accepts, in that order.
fn in_order(order: &[String], keep: impl Fn(&String) -> bool) -> Vec<String> {
    order.iter().filter(|h| keep(h)).cloned().collect()
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
    cx: PlayRun<'_>,
    t: &Task,
    inherited: &Chain<'_>,
    handler: bool,
    section: Section,
) -> bool {
    let PlayRun {
        run,
        play,
        all,
        state,
    } = cx;
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
            Status::Failed if !o.ignored => {
                active.retain(|h| h != &host);
                fatal_failure |= fatal;
                lock(&state.failed).insert(
                    host,
                    Failure {
                        task: failed_task(t),
                        result: o.failure.unwrap_or_default(),
                    },
                );
            }
            Status::Unreachable if !o.ignored => {
                active.retain(|h| h != &host);
                fatal_failure |= fatal;
                lock(&state.unreachable).insert(host);
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
        if !section.protected {
            run.callback.no_more_hosts();
        }
        return false;
    }
    true
}

/// `ansible_failed_task`: the task that failed, as data.
fn failed_task(t: &Task) -> Value {
    serde_json::json!({
        "name": t.name.clone().unwrap_or_else(|| t.action.clone()),
        "action": t.action,
        "args": t.args,
    })
}

/// Runs notified handlers, in the order they are defined, then forgets the notices.
async fn flush_handlers(cx: PlayRun<'_>) {
    let PlayRun { play, state, .. } = cx;
    if lock(&state.notified).is_empty() {
        return;
    }
    let root = Chain::new(&play.keywords);
    for item in &play.handlers {
        if let TaskItem::Task(h) = item
            && !run_task(cx, h, &root, true, Section::default()).await
        {
            break;
        }
    }
    lock(&state.notified).clear();
}
