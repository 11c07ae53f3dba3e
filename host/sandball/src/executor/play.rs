//! A play's own flow: its hosts (pattern, `--limit`, `order`), name and `vars_files`,
//! its batches run under its strategy; in each batch, facts gathered first, then the
//! sections' tasks and blocks in order (a task on every active host, up to `forks` at
//! a time), failed and unreachable hosts leaving the play, and the notified handlers
//! run at the end of each section. The per-host state of the running play
//! ([`PlayState`]) is shared with `meta`, handlers, roles and includes.

use super::strategy::{self, Ended, free::FreeRun};
use super::task::{self, HostOutcome};
use super::{Abort, ExecError, Run, handlers, lock, start_at};
use crate::playbook::vars_files::VarsFiles;
use crate::playbook::{Chain, Keyword, Play, Task, TaskItem};
use crate::plugins::action::{self, Runs};
use crate::plugins::callback::Status;
use crate::template::Vars;
use crate::vars::{HostNames, PlayScope};
use futures::StreamExt;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

/// Per-host state of a play: which hosts still run tasks, which failed (and how, for
/// a block's `rescue`), which became unreachable, which handlers each notified.
pub(super) struct PlayState {
    /// Hosts that run the next task, in the play's order.
    pub(super) active: Mutex<Vec<String>>,
    /// Hosts whose last failure has not been rescued: the task and its result.
    pub(super) failed: Mutex<HashMap<String, Failure>>,
    /// Hosts that could not be reached (they never come back in this play).
    pub(super) unreachable: Mutex<HashSet<String>>,
    /// How often each host was unreachable under `ignore_unreachable` (a role it was
    /// unreachable in has not run on it).
    pub(super) unreachable_ignored: Mutex<HashMap<String, u32>>,
    pub(super) notified: Mutex<HashMap<String, HashSet<String>>>,
    /// `meta: end_play` or `end_batch` ended the batch (its handlers do not run).
    pub(super) ended: Mutex<bool>,
    /// `meta: end_play`: later batches do not run either.
    pub(super) play_ended: Mutex<bool>,
    /// `max_fail_percentage` was passed: the play, and the playbook, stop.
    pub(super) broken: Mutex<bool>,
    /// An error that ends the whole run (see [`abort`]).
    pub(super) aborted: Mutex<Option<Abort>>,
    /// The roles (by key: directory and parameters) that ran on each host.
    pub(super) roles_ran: Mutex<HashMap<String, HashSet<String>>>,
    /// Hosts for which `meta: end_role` ended a running role: the role's block (by the
    /// address of its keywords) and the host, which skips the rest of that block
    /// (its `rescue` and `always` sections too) and comes back after it.
    pub(super) roles_ended: Mutex<Vec<(usize, String)>>,
    /// Handlers of roles included while the play runs (`include_role`).
    pub(super) more_handlers: Mutex<Vec<TaskItem>>,
    /// Roles included with `public: true`: their defaults and vars are the play's from
    /// then on.
    pub(super) public_roles: Mutex<Vec<std::sync::Arc<crate::playbook::roles::Role>>>,
    /// `ansible_play_role_names`: the play's roles, then those included so far.
    pub(super) role_names: Mutex<Vec<String>>,
    /// The notices raised (host, notice), in order, since handlers began to run.
    pub(super) raised: Mutex<Vec<(String, String)>>,
    /// The notices handlers took up as they started (host, notice, how many had been
    /// raised by then): a notice raised after its handler started is left for the
    /// next flush.
    pub(super) served: Mutex<Vec<(String, String, usize)>>,
    /// Hosts that left the play when `meta: refresh_inventory` read an inventory the
    /// play's pattern no longer selects them from.
    pub(super) left: Mutex<HashSet<String>>,
    /// What the play's pattern selects since `meta: refresh_inventory`
    /// (`ansible_play_hosts_all`; the hosts new to it take no part in the play).
    pub(super) refreshed: Mutex<Option<Vec<String>>>,
}

/// What every task of a running play shares.
#[derive(Clone, Copy)]
pub(super) struct PlayRun<'a> {
    pub(super) run: &'a Run,
    pub(super) play: &'a Play,
    /// The play's name, templated (`ansible_play_name`).
    pub(super) name: &'a str,
    /// The play's vars with the `vars_prompt` answers.
    pub(super) vars: &'a serde_json::Map<String, Value>,
    /// The hosts the play's pattern selects, those earlier plays gave up on too
    /// (`ansible_play_hosts_all`).
    pub(super) all: &'a [String],
    /// The hosts of the batch running (all of them without `serial`).
    pub(super) batch: &'a [String],
    pub(super) state: &'a PlayState,
    pub(super) vars_files: Option<&'a VarsFiles>,
    /// Under the `free` strategy (each host runs on its own): what the batch's hosts
    /// share (banners are shown with results, not when a task starts).
    pub(super) free: Option<&'a FreeRun>,
    /// Running tasks a handler included: their banners are handlers' banners.
    pub(super) in_handler: bool,
}

impl PlayRun<'_> {
    /// Shows a task's banner as it starts (under the linear strategy).
    pub(super) fn banner(&self, name: &str, handler: bool) {
        if self.free.is_none() {
            self.run
                .callback
                .task_start(name, handler || self.in_handler);
        }
    }

    /// Under the `free` strategy, shows the banner of an include (whose lines come as
    /// it starts, not through a host's result) unless it was the last one shown; a
    /// meta task shows none there, as in ansible-core.
    fn free_banner(&self, t: &Task, name: &str, handler: bool) {
        if let Some(free) = self.free {
            task::reports::show_banner(
                self.run,
                Some(task::reports::Banner {
                    last: &free.last,
                    task: t as *const Task as usize,
                    name,
                    handler: handler || self.in_handler,
                }),
            );
        }
    }
}

/// A host's failure, as a block's `rescue` sees it.
pub(super) struct Failure {
    /// `ansible_failed_task`.
    task: Value,
    /// `ansible_failed_result`.
    result: serde_json::Map<String, Value>,
    /// Whether a `rescue` taking it over counts it as rescued rather than failed: a
    /// task's own failure does; one that `any_errors_fatal` gave the host because
    /// another failed does not (it is in no recap), nor an include that could not be
    /// made (it stays failed, as in ansible-core).
    rescuable: bool,
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

/// Puts the play's hosts in the order its `order` keyword (templated) asks for
/// (`inventory`, the default, keeps them as the inventory lists them).
fn order_hosts(
    run: &Run,
    hosts: &mut [String],
    order: Option<&Value>,
    vars: &Vars,
) -> Result<(), String> {
    let Some(order) = order else {
        return Ok(());
    };
    let order = run
        .templar
        .template(order, vars)
        .map_err(|e| format!("`order`: {e}"))?;
    if let Some(refused) = super::keyword_support::known_order(&order) {
        return Err(refused);
    }
    match order.as_str() {
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
    Ok(())
}

/// A play's `vars_files`, read for every host before the play starts (names that need
/// facts are read later). A file that does not exist is skipped, as ansible-core 2.19
/// skips it, but with a warning that names it.
pub(crate) fn play_vars_files(
    run: &Run,
    play: &Play,
    play_vars: &serde_json::Map<String, Value>,
    hosts: &[String],
) -> Option<VarsFiles> {
    if play.vars_files.is_empty() {
        return None;
    }
    let base = play.dir();
    let files = VarsFiles::new(play.vars_files.clone(), &base);
    let dir = play.playbook_dir();
    let scope = PlayScope {
        name: play.name.as_deref().unwrap_or(&play.hosts),
        vars: play_vars,
        vars_files: None,
        hosts_all: HostNames::new(hosts),
        hosts_active: HostNames::new(hosts),
        roles: &play.loaded_roles,
        role_names: &play.role_names,
        dependent_role_names: &play.dependent_role_names,
        dir: Some(&dir),
    };
    let mut warned = HashSet::new();
    for host in hosts {
        let below = run
            .vars
            .task_vars(&run.inventory(), host, &scope, &[], None, &[]);
        let (_, errors) = files.layer(&run.templar, host, &below);
        for e in errors {
            if warned.insert(e.clone()) {
                run.callback
                    .warning(&format!("{e}; skipped ({})", play.location));
            }
        }
    }
    Some(files)
}

/// The play's name (else its `hosts`), templated with its vars and the extra vars as
/// ansible-core templates it before the play starts: the banner and
/// `ansible_play_name`.
pub(crate) fn play_name(run: &Run, play: &Play, vars: &Vars) -> Result<String, ExecError> {
    let written = play.name.as_deref().unwrap_or(&play.hosts);
    match run
        .templar
        .template(&Value::String(written.to_string()), vars)
    {
        Ok(Value::String(s)) => Ok(s),
        Ok(other) => Ok(sandball_pycompat::pyfmt::py_str(&other)),
        Err(e) => Err(ExecError::Refused {
            what: format!("Error processing keyword 'name': {e}"),
            location: play.location.clone(),
        }),
    }
}

/// Runs one play.
pub async fn run(run: &Run, play: &Play) -> Result<Ended, ExecError> {
    // `vars_prompt` answers are a layer above the play's vars (asked before the play).
    let mut play_vars = play.keywords.vars.clone();
    play_vars.extend(super::vars_prompt::values(run, play)?);
    let keyword_vars = run.vars.play_level(&play_vars);
    let name = play_name(run, play, &keyword_vars)?;
    // The pattern's warnings come before the play's banner, as in ansible-playbook.
    let mut selected = play_hosts(run, play)?;
    if let Err(what) = order_hosts(run, &mut selected, play.order.as_ref(), &keyword_vars) {
        return Err(ExecError::Refused {
            what,
            location: play.location.clone(),
        });
    }
    // Hosts an earlier play gave up on take no part, as in Ansible (they are still
    // among `ansible_play_hosts_all`).
    let hosts: Vec<String> = {
        let errors = lock(&run.host_errors);
        selected
            .iter()
            .filter(|h| !errors.failed.contains(*h) && !errors.unreachable.contains(*h))
            .cloned()
            .collect()
    };
    // What reading the play's and its roles' variables warned about comes before the
    // banner, as ansible-core reads them before it starts the play.
    let vars_files = play_vars_files(run, play, &play_vars, &hosts);
    super::task::reports::show_warnings(run, None);
    run.callback.play_pattern(&play.hosts);
    run.callback.play_start(&name);
    run.callback.play_location(&play.location);
    if selected.is_empty() {
        run.callback.no_hosts_matched();
        return Ok(Ended::Normally);
    }
    if hosts.is_empty() {
        return Ok(Ended::Normally);
    }
    let strategy = match strategy::of_play(run, play, &keyword_vars) {
        Ok(strategy) => strategy,
        Err(what) => {
            return Err(ExecError::Refused {
                what,
                location: play.location.clone(),
            });
        }
    };
    let batches = match super::batches::batches(run, play, &hosts, &keyword_vars) {
        Ok(b) => b,
        Err(what) => {
            return Err(ExecError::Refused {
                what,
                location: play.location.clone(),
            });
        }
    };
    for (i, batch) in batches.iter().enumerate() {
        if i > 0 {
            // Each batch of a `serial` play runs the play anew, under its banner.
            run.callback.play_pattern(&play.hosts);
            run.callback.play_start(&name);
            run.callback.play_location(&play.location);
        }
        let cx = BatchRun {
            play,
            name: &name,
            vars: &play_vars,
            all: &selected,
            batch,
            vars_files: vars_files.as_ref(),
        };
        let walk: &strategy::Walk<'_> =
            &|hosts, free| Box::pin(run_batch(run, BatchRun { batch: hosts, ..cx }, free));
        let ended = strategy.run(batch, run.options.forks, walk).await;
        match ended {
            Ended::Normally => {}
            Ended::Play => break,
            Ended::EveryHostFailed => return Ok(Ended::EveryHostFailed),
            Ended::Aborted(abort) => return Err(ExecError::Aborted(abort)),
        }
    }
    Ok(Ended::Normally)
}

/// The hosts a play's pattern selects, within `--limit` (warnings shown).
pub(crate) fn play_hosts(run: &Run, play: &Play) -> Result<Vec<String>, ExecError> {
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
    Ok(hosts)
}

/// One batch of a play (every host of the play when there is no `serial`).
#[derive(Clone, Copy)]
struct BatchRun<'a> {
    play: &'a Play,
    /// The play's name, templated.
    name: &'a str,
    /// The play's vars with the `vars_prompt` answers.
    vars: &'a serde_json::Map<String, Value>,
    /// Every host the play's pattern selects (those earlier plays gave up on too).
    all: &'a [String],
    /// The hosts of this batch.
    batch: &'a [String],
    vars_files: Option<&'a VarsFiles>,
}

/// Runs a play's tasks and handlers on one batch of its hosts (under the `free`
/// strategy, on one host of it, with what it shares with the others).
async fn run_batch(run: &Run, b: BatchRun<'_>, free: Option<Arc<FreeRun>>) -> Ended {
    let BatchRun {
        play,
        name,
        vars,
        all,
        batch,
        vars_files,
    } = b;
    let state = PlayState {
        active: Mutex::new(batch.to_vec()),
        failed: Mutex::new(HashMap::new()),
        unreachable: Mutex::new(HashSet::new()),
        unreachable_ignored: Mutex::new(HashMap::new()),
        notified: Mutex::new(HashMap::new()),
        ended: Mutex::new(false),
        play_ended: Mutex::new(false),
        broken: Mutex::new(false),
        aborted: Mutex::new(None),
        roles_ran: Mutex::new(HashMap::new()),
        roles_ended: Mutex::new(Vec::new()),
        more_handlers: Mutex::new(Vec::new()),
        public_roles: Mutex::new(Vec::new()),
        role_names: Mutex::new(play.role_names.clone()),
        left: Mutex::new(HashSet::new()),
        raised: Mutex::new(Vec::new()),
        served: Mutex::new(Vec::new()),
        refreshed: Mutex::new(None),
    };
    let cx = PlayRun {
        run,
        play,
        name,
        vars,
        all,
        batch,
        state: &state,
        vars_files,
        free: free.as_deref(),
        in_handler: false,
    };
    let root = Chain::new(&play.keywords);
    let mut go_on = true;
    // Under `--start-at-task` a play gathers facts only when the task asked for is
    // among its own (or was reached before), as ansible-playbook does.
    if let Some(gather) = super::gathering::gathering_task(play)
        .filter(|g| start_at::starts(run, g) || start_at::holds_start(run, play))
    {
        // The built-in `setup` component gathers without ansible-core; a host that
        // asks for the legacy module (`sandball_legacy_modules`) fails its own task
        // when ansible-core is missing.
        let found = match action::find(&gather.action).runs(&gather.action) {
            Runs::Module { name, legacy } if legacy || !run.modules.exists(name) => {
                run.legacy.get(name).map(|_| ())
            }
            _ => Ok(()),
        };
        match found {
            Ok(()) if super::gathering::gathering_is("smart") => {
                // `gathering = smart`: hosts that have facts (from the fact cache or an
                // earlier play) are not gathered again; the others are.
                let entering = lock(&state.active).clone();
                let (known, needed): (Vec<String>, Vec<String>) =
                    entering.iter().cloned().partition(|h| run.vars.has_facts(h));
                if !needed.is_empty() {
                    *lock(&state.active) = needed;
                    run_task(cx, &gather, &root, false).await;
                    let survivors = std::mem::take(&mut *lock(&state.active));
                    *lock(&state.active) =
                        state.in_order(&entering, |h| known.contains(h) || survivors.contains(h));
                }
                go_on = !lock(&state.active).is_empty();
            }
            Ok(()) => go_on = run_task(cx, &gather, &root, false).await,
            Err(e) => run.callback.warning(&format!(
                "no facts were gathered for play '{name}': there is no `setup` component and ansible-core's setup module: {e} (set `gather_facts: false` to silence this)",
            )),
        }
    }
    let force_handlers = handlers::force_handlers(run, play);
    for section in [&play.pre_tasks, &play.tasks, &play.post_tasks] {
        if go_on {
            go_on = run_items(cx, section, &root).await;
        }
        if *lock(&state.ended) || *lock(&state.broken) {
            break;
        }
        // Handlers run after each section; with force_handlers, for failed hosts too.
        if go_on || force_handlers {
            // ansible-core's implicit `meta: flush_handlers` says so, when debugging,
            // for each host that notified a handler.
            let notified = lock(&state.notified).clone();
            for h in lock(&state.active).iter() {
                if notified.get(h).is_some_and(|n| !n.is_empty()) {
                    crate::plugins::callback::debug(&format!(
                        "META: triggered running handlers for {h}"
                    ));
                }
            }
            handlers::flush_handlers(cx, force_handlers).await;
        }
        if !go_on {
            break;
        }
    }
    let failed: Vec<String> = lock(&state.failed).keys().cloned().collect();
    let unreachable: Vec<String> = lock(&state.unreachable).iter().cloned().collect();
    let every_host_failed = batch
        .iter()
        .all(|h| failed.contains(h) || unreachable.contains(h));
    if let Some(abort) = lock(&state.aborted).take() {
        return Ended::Aborted(abort);
    }
    let broken = *lock(&state.broken);
    let mut errors = lock(&run.host_errors);
    errors.failed.extend(failed);
    errors.unreachable.extend(unreachable);
    if broken || every_host_failed {
        Ended::EveryHostFailed
    } else if *lock(&state.play_ended) {
        Ended::Play
    } else {
        Ended::Normally
    }
}

/// Runs a list of tasks and blocks; false when no hosts are left.
pub(super) async fn run_items(cx: PlayRun<'_>, items: &[TaskItem], inherited: &Chain<'_>) -> bool {
    for item in items {
        let go_on = match item {
            TaskItem::Task(t) if !start_at::starts(cx.run, t) => true,
            TaskItem::Task(t) => run_task(cx, t, inherited, false).await,
            TaskItem::Block(b) => Box::pin(run_block(cx, b, inherited)).await,
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
async fn run_block(cx: PlayRun<'_>, b: &crate::playbook::Block, inherited: &Chain<'_>) -> bool {
    let PlayRun { run, state, .. } = cx;
    let inner = inherited.with(&b.keywords);
    if let Some(role) = &b.keywords.role {
        return super::roles::run_role_once(cx, b, &inner, role).await;
    }
    let entering = lock(&state.active).clone();
    run_items(cx, &b.block, &inner).await;
    if lock(&state.aborted).is_some() {
        // Neither `rescue` nor `always` runs: the run is over.
        return false;
    }
    if run
        .options
        .start_at_task
        .as_ref()
        .is_some_and(|s| !s.was_reached())
    {
        // Still looking for `--start-at-task`: `rescue` and `always` are skipped with
        // the block (the task is never one of theirs, as in Ansible).
        return !lock(&state.active).is_empty();
    }
    if !b.rescue.is_empty() {
        let failed: Vec<String> = {
            let mut failures = lock(&state.failed);
            entering
                .iter()
                .filter_map(|h| failures.remove(h).map(|f| (h, f)))
                .map(|(h, f)| {
                    if f.rescuable {
                        run.stats.rescue(h);
                    }
                    run.vars.register(h, "ansible_failed_task", f.task, false);
                    run.vars
                        .register(h, "ansible_failed_result", Value::Object(f.result), false);
                    h.clone()
                })
                .collect()
        };
        if !failed.is_empty() {
            // The hosts that did not fail wait while the failed ones run `rescue`.
            let waiting = std::mem::replace(&mut *lock(&state.active), failed);
            run_items(cx, &b.rescue, &inner).await;
            let survivors = std::mem::take(&mut *lock(&state.active));
            *lock(&state.active) =
                state.in_order(&entering, |h| waiting.contains(h) || survivors.contains(h));
        }
    }
    if !b.always.is_empty() {
        let unreachable = lock(&state.unreachable).clone();
        *lock(&state.active) = state.in_order(&entering, |h| !unreachable.contains(h));
        run_items(cx, &b.always, &inner).await;
        // A failure that was not rescued still ends the host's play after `always`.
        let failed: HashSet<String> = lock(&state.failed).keys().cloned().collect();
        lock(&state.active).retain(|h| !failed.contains(h));
    }
    !lock(&state.active).is_empty()
}

/// Whether the task's `any_errors_fatal` holds (read with the first host's variables,
/// as Ansible reads it): one host's failure then ends the play for every host.
pub(super) fn any_errors_fatal(run: &Run, kw: &Chain<'_>, vars: &crate::template::Vars) -> bool {
    // One that cannot be worked out holds: failing safe.
    super::coerce::keyword_bool(run, vars, kw, Keyword::AnyErrorsFatal, false).unwrap_or(true)
}

/// Fails a task on a host outside the task's own run (an include that cannot be made):
/// reported, counted, registered, and the host leaves the play as after a failed task
/// (unless the failure is `ignored`); a `rescue` that takes it over counts it as
/// rescued if `rescuable`.
pub(super) fn fail_host(
    cx: PlayRun<'_>,
    t: &Task,
    host: &str,
    result: crate::plugins::action::TaskResult,
    ignored: bool,
    rescuable: bool,
) {
    cx.run.stats.record(host, Status::Failed, ignored, false);
    task::register(cx.run, t, host, &result);
    cx.run.callback.result(&crate::plugins::callback::Report {
        host,
        action: &t.action,
        status: Status::Failed,
        result: &result,
        item: None,
        ignored,
        looped: false,
        origin: None,
    });
    if ignored {
        return;
    }
    lock(&cx.state.active).retain(|h| h != host);
    lock(&cx.state.failed).insert(
        host.to_string(),
        Failure {
            task: failed_task(t),
            result: result.fields,
            rescuable,
        },
    );
}

/// `any_errors_fatal`: one host's failure fails every host still running, so that each
/// goes through the `rescue` and `always` of the blocks it is in (a rescue saves it, as
/// in Ansible) and the play ends for those not rescued.
pub(super) fn fail_every_host(
    state: &PlayState,
    t: &Task,
    result: &serde_json::Map<String, Value>,
) {
    let task = failed_task(t);
    let hosts = std::mem::take(&mut *lock(&state.active));
    let mut failed = lock(&state.failed);
    for h in hosts {
        failed.entry(h).or_insert_with(|| Failure {
            task: task.clone(),
            result: result.clone(),
            rescuable: false,
        });
    }
}

impl PlayState {
    /// The hosts of `order` that `keep` accepts, in that order, but for those that left
    /// the play with the inventory (`meta: refresh_inventory`): the hosts that go on
    /// after others waited.
    pub(super) fn in_order(&self, order: &[String], keep: impl Fn(&String) -> bool) -> Vec<String> {
        let left = lock(&self.left);
        let ended = lock(&self.roles_ended);
        order
            .iter()
            .filter(|h| keep(h) && !left.contains(*h) && !ended.iter().any(|(_, e)| e == *h))
            .cloned()
            .collect()
    }
}

/// The task's `throttle`, templated with `vars`; 0 when unset. A value that is not a
/// whole number is an error in ansible-core's words (Python's, for the conversion).
fn throttle(run: &Run, kw: &Chain<'_>, vars: &crate::template::Vars) -> Result<u64, String> {
    let Some(setting) = kw.nearest_setting(Keyword::Throttle) else {
        return Ok(0);
    };
    let why = match run.templar.template(&setting.value, vars) {
        Ok(v) => match action::integer(&v).map(u64::try_from) {
            Some(Ok(n)) => return Ok(n),
            Some(Err(_)) => format!("{} is not a whole number", v),
            None => format!(
                "invalid literal for int() with base 10: {}",
                sandball_pycompat::pyfmt::py_repr(&v)
            ),
        },
        Err(e) => e.to_string(),
    };
    Err(setting.at.appears_in(format!(
        "Failed to convert the throttle value to an integer: {why}"
    )))
}

/// Runs a task on the play's active hosts (or, for a handler, on the hosts that
/// notified it). Returns false when no hosts are left.
pub(super) async fn run_task(
    cx: PlayRun<'_>,
    t: &Task,
    inherited: &Chain<'_>,
    handler: bool,
) -> bool {
    let PlayRun {
        run,
        play,
        name,
        all,
        state,
        ..
    } = cx;
    let kw = inherited.with(&t.keywords);
    // Tags choose tasks; a notified handler runs whatever its tags, as in Ansible.
    if !handler && !task::selected_by_tags(run, cx.vars, &kw) {
        return true;
    }
    let active = lock(&state.active).clone();
    let hosts: Vec<String> = if handler {
        let notified = lock(&state.notified);
        active
            .into_iter()
            .filter(|h| {
                notified
                    .get(h)
                    .is_some_and(|s| handlers::handler_matches(t, kw.role(), s))
            })
            .collect()
    } else {
        active
    };
    if hosts.is_empty() {
        return handler || !lock(&state.active).is_empty();
    }
    // The play's roles, and those included since with `public: true`.
    let public = lock(&state.public_roles).clone();
    let roles: std::borrow::Cow<'_, [_]> = if public.is_empty() {
        std::borrow::Cow::Borrowed(play.loaded_roles.as_slice())
    } else {
        std::borrow::Cow::Owned(play.loaded_roles.iter().cloned().chain(public).collect())
    };
    let role_names = lock(&state.role_names).clone();
    let refreshed = lock(&state.refreshed).clone();
    let dir = play.playbook_dir();
    let scope = PlayScope {
        name,
        vars: cx.vars,
        vars_files: cx.vars_files,
        hosts_all: HostNames::new(refreshed.as_deref().unwrap_or(all)),
        hosts_active: HostNames::new(&hosts),
        roles: &roles,
        role_names: &role_names,
        dependent_role_names: &play.dependent_role_names,
        dir: Some(&dir),
    };
    // An action named by a template (`action: "{{ prefix }}file"`) is resolved when the
    // task runs, with each host's variables, as Ansible does: the first host's decides
    // how the task runs (a `meta` action, an include, once for the play), each host
    // runs its own; the banner keeps the name as written. A name without a collection
    // is then looked for along the task's collections (checked before the play ran;
    // one that is not found is left as written, and fails as such).
    let written = t;
    let collections = kw.collections();
    let searched =
        |action: String| super::resolve::action(run, &action, &collections).unwrap_or(action);
    let resolved: HashMap<&String, Task> = if crate::template::is_template(&t.action) {
        let mut resolved = HashMap::new();
        for h in &hosts {
            let vars = task::task_vars(run, &scope, h, &kw);
            match run.templar.render(&t.action, &vars) {
                Ok(action) => {
                    let action = searched(action.trim().to_string());
                    resolved.insert(
                        h,
                        Task {
                            action,
                            ..t.clone()
                        },
                    );
                }
                Err(e) => {
                    run.callback.warning(&t.location.appears_in(format!(
                        "the action name {:?} could not be templated: {e}",
                        t.action
                    )));
                    lock(&state.active).clear();
                    return false;
                }
            }
        }
        resolved
    } else {
        HashMap::new()
    };
    let found = resolved
        .is_empty()
        .then(|| super::resolve::task_along(run, t, &collections))
        .flatten();
    let host_task = |h: &String| resolved.get(h).or(found.as_ref()).unwrap_or(written);
    let t = host_task(&hosts[0]);
    if let Some(action) = task::meta_action(t) {
        let cx = PlayRun {
            in_handler: cx.in_handler || handler,
            ..cx
        };
        return super::meta::run_meta(cx, t, &kw, &scope, &hosts, action).await;
    }
    let banner_name = task::display_name(run, &scope, written, &hosts[0], &kw);
    if !start_at::stepped(run, &banner_name, handler || cx.in_handler) {
        return true;
    }
    cx.banner(&banner_name, handler);
    // `throttle`, `any_errors_fatal` and `run_once` are read once for the task, with the
    // first host's variables, as Ansible reads them.
    let first_vars = task::task_vars(run, &scope, &hosts[0], &kw);
    // `run_once`: the first host runs the task; what it registers and the facts it
    // sets reach every host of the play, as in Ansible. On an include it makes the
    // inclusion for the first host alone (the included tasks run there only, unless
    // `apply` gives them `run_once` too).
    let once = super::coerce::keyword_bool(run, &first_vars, &kw, Keyword::RunOnce, false)
        .unwrap_or(false);
    if let Some(kind) = super::include::kind(t) {
        let cx = PlayRun {
            in_handler: cx.in_handler || handler,
            ..cx
        };
        cx.free_banner(written, &banner_name, handler);
        let including = if once { &hosts[..1] } else { &hosts[..] };
        return super::include::run(cx, t, inherited, &kw, &scope, including, kind).await;
    }
    if cx.free.is_none() {
        run.callback
            .task_running(&crate::plugins::callback::Running {
                hosts: hosts.len(),
                action: &t.action,
                path: &t.location,
                args: (kw.nearest_setting(Keyword::NoLog).is_none()
                    && !task::reports::no_log_default())
                .then_some(&t.args),
            });
    }
    let free_banner = cx.free.map(|free| task::reports::Banner {
        last: &free.last,
        task: t as *const Task as usize,
        name: &banner_name,
        handler: handler || cx.in_handler,
    });
    let throttle = match throttle(run, &kw, &first_vars) {
        Ok(n) => n as usize,
        Err(e) => {
            let mut active = lock(&state.active);
            abort(state, &mut active, e, 1);
            return false;
        }
    };
    let fatal = any_errors_fatal(run, &kw, &first_vars);
    let width = match throttle {
        0 => run.options.forks,
        n => n.min(run.options.forks),
    };
    // Under `free` each host runs the task on its own: `throttle` holds the others back.
    let permits = cx
        .free
        .filter(|_| throttle > 0)
        .map(|free| free.throttle(t, throttle));
    let _permit = match &permits {
        Some(permits) => permits.acquire().await.ok(),
        None => None,
    };
    // An action that bypasses the host loop (`add_host`, `pause`) also runs for the first
    // host only, but what it registers stays that host's, as in Ansible.
    let bypass = action::find(&t.action).bypasses_host_loop();
    let running = if once || bypass {
        &hosts[..1]
    } else {
        &hosts[..]
    };
    let outcomes: Vec<(String, HostOutcome)> = futures::stream::iter(running.iter())
        .map(|h| async {
            let o = task::run_on_host(run, &scope, host_task(h), &kw, h, free_banner).await;
            (h.clone(), o)
        })
        .buffer_unordered(width.max(1))
        .collect()
        .await;
    // Every host of the batch gets them, those an include left out too, as in Ansible.
    if once && let Some((first, o)) = outcomes.first() {
        for other in cx.batch.iter().filter(|h| *h != first) {
            task::register_loop(run, t, other, &o.registered, &o.items);
            task::register_projections(run, other, &o.projected);
            task::attempt::record_facts(run, t, other, &o.registered);
        }
    }
    // Notices are templated, and the handlers that answer them found, once for the task.
    let notices = handlers::Notices::of_task(cx, &kw, &first_vars);
    let mut active = lock(&state.active);
    let mut fatal_failure: Option<serde_json::Map<String, Value>> = None;
    let mut missing_handler: Option<String> = None;
    for (host, o) in outcomes {
        match o.status {
            Status::Failed if !o.ignored => {
                active.retain(|h| h != &host);
                let result = o.failure.unwrap_or_default();
                if fatal && fatal_failure.is_none() {
                    fatal_failure = Some(result.clone());
                }
                lock(&state.failed).insert(
                    host,
                    Failure {
                        task: failed_task(t),
                        result,
                        rescuable: true,
                    },
                );
            }
            Status::Unreachable if o.ignored => {
                *lock(&state.unreachable_ignored).entry(host).or_default() += 1;
            }
            Status::Unreachable => {
                active.retain(|h| h != &host);
                if fatal && fatal_failure.is_none() {
                    fatal_failure = Some(o.registered.clone());
                }
                lock(&state.unreachable).insert(host);
            }
            Status::Changed if !notices.is_empty() => {
                // A notice no handler answers is an error (a warning with
                // `error_on_missing_handler = false`), as in Ansible; the host stops.
                if let Some(msg) = notices.raise(cx, host) {
                    missing_handler.get_or_insert(msg);
                }
            }
            _ => {}
        }
    }
    if let Some(msg) = missing_handler {
        abort(state, &mut active, msg, 1);
        return false;
    }
    if let Some(result) = fatal_failure {
        drop(active);
        fail_every_host(state, t, &result);
        return false;
    }
    if let Some(pct) = &play.max_fail_percentage {
        // `max_fail_percentage`: more of the batch failed than allowed: the play and
        // the playbook stop (ansible-core says so twice).
        let limit = run
            .templar
            .template(pct, &first_vars)
            .ok()
            .and_then(|v| v.as_f64().or_else(|| v.as_str()?.trim().parse().ok()))
            .unwrap_or(100.0);
        let gone = lock(&state.failed).len() + lock(&state.unreachable).len();
        if gone as f64 / cx.batch.len().max(1) as f64 > limit / 100.0 {
            *lock(&state.broken) = true;
            active.clear();
            run.callback.no_more_hosts();
            run.callback.no_more_hosts();
            return false;
        }
    }
    // When every host has failed, ansible-core 2.19 ends the play without a word.
    !active.is_empty()
}

/// Ends the whole run with `message`, as ansible-core ends it for a notice no handler
/// answers or a `throttle` that is not a number (exit `code` 1), or for a file read
/// while the run runs that is no valid playbook content (4): no task, `rescue`,
/// `always` or handler runs after it, and `sandball playbook` prints the error and
/// exits with `code`, without a recap. `active` is the batch's active hosts, locked by
/// the caller.
pub(super) fn abort(state: &PlayState, active: &mut Vec<String>, message: String, code: i32) {
    active.clear();
    *lock(&state.broken) = true;
    lock(&state.aborted).get_or_insert(Abort { message, code });
}

/// `ansible_failed_task`: the task that failed, as data.
fn failed_task(t: &Task) -> Value {
    serde_json::json!({
        "name": t.name.clone().unwrap_or_else(|| t.action.clone()),
        "action": t.action,
        "args": t.args,
    })
}
