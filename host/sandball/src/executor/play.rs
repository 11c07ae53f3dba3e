//! The linear strategy: a play's tasks in order, each on every active host (up to
//! `forks` at a time) before the next starts; failed and unreachable hosts leave the
//! play; notified handlers run at the end of each section.

use super::task::{self, HostOutcome, Inherited};
use super::{ExecError, Run};
use crate::playbook::{Play, Task, TaskItem};
use crate::plugins::action::controller_action;
use crate::plugins::callback::Status;
use crate::vars::PlayScope;
use futures::StreamExt;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

/// Checks, before anything runs, that every task can be run: its action exists and it
/// uses no keyword sandball does not support yet.
pub fn check(run: &Run, play: &Play) -> Result<(), ExecError> {
    let unsupported = |what: &str| ExecError::Unsupported {
        what: what.to_string(),
        location: play.location.clone(),
    };
    if !play.roles.is_empty() {
        return Err(unsupported("`roles`"));
    }
    if !play.vars_files.is_empty() {
        return Err(unsupported("`vars_files`"));
    }
    if play
        .strategy
        .as_ref()
        .is_some_and(|s| s.as_str() != Some("linear"))
    {
        return Err(unsupported("a strategy other than `linear`"));
    }
    if play.serial.is_some() {
        return Err(unsupported("`serial`"));
    }
    let sections = [
        &play.pre_tasks,
        &play.tasks,
        &play.post_tasks,
        &play.handlers,
    ];
    for items in sections {
        check_items(run, items)?;
    }
    Ok(())
}

fn check_items(run: &Run, items: &[TaskItem]) -> Result<(), ExecError> {
    for item in items {
        match item {
            TaskItem::Task(t) => check_task(run, t)?,
            TaskItem::Block(b) => {
                if !b.rescue.is_empty() || !b.always.is_empty() {
                    return Err(ExecError::Unsupported {
                        what: "`rescue`/`always` in a block".into(),
                        location: b.location.clone(),
                    });
                }
                check_items(run, &b.block)?;
            }
        }
    }
    Ok(())
}

fn check_task(run: &Run, t: &Task) -> Result<(), ExecError> {
    let unsupported = |what: &str| ExecError::Unsupported {
        what: what.to_string(),
        location: t.location.clone(),
    };
    if t.delegate_to.is_some() {
        return Err(unsupported("`delegate_to`"));
    }
    if t.async_.is_some() {
        return Err(unsupported("`async`"));
    }
    let short = crate::assemble::component::short_name(&t.action);
    if short == "meta" {
        return match meta_action(t) {
            Some("refresh_inventory") => Ok(()),
            other => Err(unsupported(&format!(
                "`meta: {}`",
                other.unwrap_or_default()
            ))),
        };
    }
    if UNSUPPORTED_ACTIONS.contains(&short) {
        return Err(unsupported(&format!("the `{short}` action")));
    }
    if controller_action(&t.action).is_some()
        || crate::plugins::action::connection_action(&t.action).is_some()
        || run.modules.exists(&t.action)
    {
        return Ok(());
    }
    let legacy = match run.legacy.get(&super::task::legacy_action(&t.action).0) {
        Ok(m) if crate::assemble::module_type::documentation_only(&m.bytes) => {
            return Err(unsupported(&format!(
                "the `{short}` action (its module file {} holds only documentation: in ansible-core the work is done by an action plugin of that name)",
                m.path.display()
            )));
        }
        Ok(_) => return Ok(()),
        Err(crate::assemble::finder::FindError::NotFound { searched, .. }) => searched,
        Err(e) => e.to_string(),
    };
    Err(ExecError::UnknownAction {
        action: t.action.clone(),
        components: run.modules.searched(),
        legacy,
        location: t.location.clone(),
    })
}

/// Actions of the playbook language that later work brings.
const UNSUPPORTED_ACTIONS: &[&str] = &[
    "include_tasks",
    "import_tasks",
    "include_role",
    "import_role",
    "include_vars",
    "include",
    "add_host",
    "group_by",
];

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
    ]
    .into_iter()
    .filter_map(|(k, v)| Some((k.to_string(), v.clone()?)))
    .collect();
    Some(Task {
        name: Some("Gathering Facts".into()),
        action: "ansible.builtin.gather_facts".into(),
        args,
        tags: vec!["always".into()],
        location: play.location.clone(),
        ..Task::default()
    })
}

/// What a `meta` task asks for (`refresh_inventory`, `flush_handlers`, ...).
fn meta_action(t: &Task) -> Option<&str> {
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
    for h in &hosts {
        run.stats.touch(h);
    }
    let state = PlayState {
        active: Mutex::new(hosts.clone()),
        notified: Mutex::new(HashMap::new()),
    };
    let root = Inherited::for_play(play);
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
    inherited: &Inherited<'_>,
) -> bool {
    for item in items {
        match item {
            TaskItem::Task(t) => {
                if !run_task(run, play, all, state, t, inherited, false).await {
                    return false;
                }
            }
            TaskItem::Block(b) => {
                let inner = inherited.with_block(b);
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

/// Runs a task on the play's active hosts (or, for a handler, on the hosts that
/// notified it). Returns false when no hosts are left.
async fn run_task(
    run: &Run,
    play: &Play,
    all: &[String],
    state: &PlayState,
    t: &Task,
    inherited: &Inherited<'_>,
    handler: bool,
) -> bool {
    if !task::selected_by_tags(&run.options, play, t, inherited) {
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
        vars: &play.vars,
        hosts_all: all,
        hosts_active: &hosts,
    };
    run.callback.task_start(
        &task::display_name(run, &scope, t, &hosts[0], inherited),
        handler,
    );
    let outcomes: Vec<(String, HostOutcome)> = futures::stream::iter(hosts.iter())
        .map(|h| async {
            let o = task::run_on_host(run, &scope, t, inherited, h).await;
            (h.clone(), o)
        })
        .buffer_unordered(run.options.forks.max(1))
        .collect()
        .await;
    let mut active = lock(&state.active);
    for (host, o) in outcomes {
        match o.status {
            Status::Failed if !o.ignored => active.retain(|h| h != &host),
            Status::Unreachable => active.retain(|h| h != &host),
            Status::Changed if !t.notify.is_empty() => {
                let mut n = lock(&state.notified);
                n.entry(host).or_default().extend(t.notify.iter().cloned());
            }
            _ => {}
        }
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
    let root = Inherited::for_play(play);
    for item in &play.handlers {
        if let TaskItem::Task(h) = item
            && !run_task(run, play, all, state, h, &root, true).await
        {
            break;
        }
    }
    lock(&state.notified).clear();
}
