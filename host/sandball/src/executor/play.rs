//! The linear strategy: a play's tasks in order, each on every active host (up to
//! `forks` at a time) before the next starts; failed and unreachable hosts leave the
//! play; notified handlers run at the end of each section.

use super::task::{self, HostOutcome};
use super::{Abort, ExecError, Run};
use crate::playbook::{Chain, Keyword, Play, Task, TaskItem};
use crate::plugins::action::{self, Runs};
use crate::plugins::callback::Status;
use crate::template::Vars;
use crate::vars::vars_files::VarsFiles;
use crate::vars::{HostNames, PlayScope};
use futures::StreamExt;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

/// The task a play runs first when it gathers facts, as Ansible adds it: "Gathering
/// Facts", tagged `always`, running the gather_facts action (the built-in `setup`
/// component, or ansible-core's `setup` when asked for) with the play's
/// `gather_subset` and `gather_timeout`. Plays gather unless they say
/// `gather_facts: false`, or unless `ANSIBLE_GATHERING=explicit` and they do not say
/// `gather_facts: true`; with `smart`, only hosts without facts gather.
pub(crate) fn gathering_task(play: &Play) -> Option<Task> {
    let implicit = !gathering_is("explicit");
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
    // Every host gathers its own facts, whatever the play's `run_once`, as in
    // ansible-core (its gathering block sets `run_once: false`).
    task.keywords.set(
        crate::playbook::Keyword::RunOnce,
        Value::Bool(false),
        play.location.clone(),
    );
    Some(task)
}

/// Whether `ANSIBLE_GATHERING` (`gathering` in ansible.cfg) is `mode` (`implicit`,
/// `explicit`, `smart`).
fn gathering_is(mode: &str) -> bool {
    std::env::var("ANSIBLE_GATHERING").is_ok_and(|g| g.trim().eq_ignore_ascii_case(mode))
}

/// What a `meta` task asks for (`refresh_inventory`, `flush_handlers`, ...).
pub(crate) fn meta_action(t: &Task) -> Option<&str> {
    (crate::assemble::component::short_name(&t.action) == "meta")
        .then(|| t.args.get("_raw_params").and_then(Value::as_str))
        .flatten()
}

/// Whether handlers run for hosts that failed: the play's `force_handlers`, else
/// `--force-handlers`.
fn force_handlers(run: &Run, play: &Play) -> bool {
    play.force_handlers
        .as_ref()
        .and_then(|v| action::truthy(Some(v), false).ok())
        .unwrap_or(run.options.force_handlers)
}

/// Per-host state of a play: which hosts still run tasks, which failed (and how, for
/// a block's `rescue`), which became unreachable, which handlers each notified.
pub(super) struct PlayState {
    /// Hosts that run the next task, in the play's order.
    pub(super) active: Mutex<Vec<String>>,
    /// Hosts whose last failure has not been rescued: the task and its result.
    failed: Mutex<HashMap<String, Failure>>,
    /// Hosts that could not be reached (they never come back in this play).
    unreachable: Mutex<HashSet<String>>,
    /// How often each host was unreachable under `ignore_unreachable` (a role it was
    /// unreachable in has not run on it).
    unreachable_ignored: Mutex<HashMap<String, u32>>,
    notified: Mutex<HashMap<String, HashSet<String>>>,
    /// `meta: end_play` or `end_batch` ended the batch (its handlers do not run).
    ended: Mutex<bool>,
    /// `meta: end_play`: later batches do not run either.
    play_ended: Mutex<bool>,
    /// `max_fail_percentage` was passed: the play, and the playbook, stop.
    broken: Mutex<bool>,
    /// An error that ends the whole run (see [`abort`]).
    aborted: Mutex<Option<Abort>>,
    /// The roles (by key: directory and parameters) that ran on each host.
    roles_ran: Mutex<HashMap<String, HashSet<String>>>,
    /// Hosts for which `meta: end_role` ended a running role: the role's block (by the
    /// address of its keywords) and the host, which skips the rest of that block
    /// (its `rescue` and `always` sections too) and comes back after it.
    roles_ended: Mutex<Vec<(usize, String)>>,
    /// Handlers of roles included while the play runs (`include_role`).
    more_handlers: Mutex<Vec<TaskItem>>,
    /// Roles included with `public: true`: their defaults and vars are the play's from
    /// then on.
    public_roles: Mutex<Vec<std::sync::Arc<crate::playbook::roles::Role>>>,
    /// `ansible_play_role_names`: the play's roles, then those included so far.
    role_names: Mutex<Vec<String>>,
    /// The notices raised (host, notice), in order, since handlers began to run.
    raised: Mutex<Vec<(String, String)>>,
    /// The notices handlers took up as they started (host, notice, how many had been
    /// raised by then): a notice raised after its handler started is left for the
    /// next flush.
    served: Mutex<Vec<(String, String, usize)>>,
    /// Hosts that left the play when `meta: refresh_inventory` read an inventory the
    /// play's pattern no longer selects them from.
    left: Mutex<HashSet<String>>,
    /// What the play's pattern selects since `meta: refresh_inventory`
    /// (`ansible_play_hosts_all`; the hosts new to it take no part in the play).
    refreshed: Mutex<Option<Vec<String>>>,
}

/// What every task of a running play shares.
#[derive(Clone, Copy)]
pub(super) struct PlayRun<'a> {
    pub(super) run: &'a Run,
    pub(super) play: &'a Play,
    /// The play's name, templated (`ansible_play_name`).
    name: &'a str,
    /// The play's vars with the `vars_prompt` answers.
    vars: &'a serde_json::Map<String, Value>,
    /// The hosts the play's pattern selects, those earlier plays gave up on too
    /// (`ansible_play_hosts_all`).
    all: &'a [String],
    /// The hosts of the batch running (all of them without `serial`).
    batch: &'a [String],
    pub(super) state: &'a PlayState,
    vars_files: Option<&'a VarsFiles>,
    /// Under the `free` strategy (each host runs on its own): what the batch's hosts
    /// share (banners are shown with results, not when a task starts).
    free: Option<&'a FreeRun>,
    /// Running tasks a handler included: their banners are handlers' banners.
    pub(super) in_handler: bool,
}

impl PlayRun<'_> {
    /// Shows a task's banner as it starts (under the linear strategy).
    fn banner(&self, name: &str, handler: bool) {
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
struct Failure {
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

/// How a play (or one batch of it) ended, for the playbook.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ended {
    /// Its tasks ran (or it had no hosts).
    Normally,
    /// `meta: end_play`: no more batches of this play; the playbook goes on.
    Play,
    /// Every one of its hosts failed or became unreachable: Ansible runs no more plays.
    EveryHostFailed,
    /// An error ended the whole run (see [`abort`]).
    Aborted(Abort),
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
    let scope = PlayScope {
        name: play.name.as_deref().unwrap_or(&play.hosts),
        vars: play_vars,
        vars_files: None,
        hosts_all: HostNames::new(hosts),
        hosts_active: HostNames::new(hosts),
        roles: &play.loaded_roles,
        role_names: &play.role_names,
        dependent_role_names: &play.dependent_role_names,
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
        Ok(other) => Ok(sandball_wire::python::py_str(&other)),
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
    run.callback.play_start(&name);
    run.callback.play_location(&play.location);
    if selected.is_empty() {
        run.callback.no_hosts_matched();
        return Ok(Ended::Normally);
    }
    if hosts.is_empty() {
        return Ok(Ended::Normally);
    }
    let free = match strategy(run, play, &keyword_vars) {
        Ok(free) => free,
        Err(what) => {
            return Err(ExecError::Refused {
                what,
                location: play.location.clone(),
            });
        }
    };
    let batches = match batches(run, play, &hosts, &keyword_vars) {
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
            free: None,
        };
        let ended = if free {
            run_free(run, cx).await
        } else {
            run_batch(run, cx).await
        };
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

/// Whether the play runs under the `free` strategy (`host_pinned` is the same for
/// sandball: a host keeps its place among the forks until it is done); `linear` is the
/// default.
fn strategy(run: &Run, play: &Play, vars: &Vars) -> Result<bool, String> {
    let Some(value) = &play.strategy else {
        return Ok(false);
    };
    let name = run
        .templar
        .template(value, vars)
        .map_err(|e| format!("`strategy`: {e}"))?;
    let name = name.as_str().unwrap_or_default();
    match name.strip_prefix("ansible.builtin.").unwrap_or(name) {
        "linear" => Ok(false),
        "free" | "host_pinned" => Ok(true),
        other => Err(format!(
            "`strategy: {other}`: sandball has the linear, free and host_pinned strategies"
        )),
    }
}

/// Runs a batch under the `free` strategy: every host goes through the play on its own
/// (up to `forks` at a time), without waiting for the others at each task; results are
/// shown under their task's banner (shown again when another task's came in between),
/// handlers run for a host when it is done.
async fn run_free(run: &Run, b: BatchRun<'_>) -> Ended {
    let shared = FreeRun::default();
    let ends: Vec<Ended> = futures::stream::iter(b.batch.iter())
        .map(|h| {
            let one = BatchRun {
                batch: std::slice::from_ref(h),
                free: Some(&shared),
                ..b
            };
            run_batch(run, one)
        })
        .buffer_unordered(run.options.forks.max(1))
        .collect()
        .await;
    if let Some(aborted) = ends.iter().find(|e| matches!(e, Ended::Aborted(_))) {
        aborted.clone()
    } else if ends.iter().all(|e| matches!(e, Ended::EveryHostFailed)) {
        Ended::EveryHostFailed
    } else if ends.iter().any(|e| matches!(e, Ended::Play)) {
        Ended::Play
    } else {
        Ended::Normally
    }
}

/// The hosts of a play, split into `serial` batches (a number, a percentage of the
/// play's hosts, or a list of them whose last repeats); one batch without `serial`.
fn batches(
    run: &Run,
    play: &Play,
    hosts: &[String],
    vars: &Vars,
) -> Result<Vec<Vec<String>>, String> {
    let Some(serial) = &play.serial else {
        return Ok(vec![hosts.to_vec()]);
    };
    let serial = run
        .templar
        .template(serial, vars)
        .map_err(|e| format!("`serial`: {e}"))?;
    if serial.as_str() == Some(crate::template::OMIT) {
        return Ok(vec![hosts.to_vec()]);
    }
    let steps: Vec<Value> = match serial {
        Value::Array(items) => items,
        one => vec![one],
    };
    let size = |step: &Value| -> Result<usize, String> {
        let text = match step {
            Value::String(s) => s.trim().to_string(),
            other => other.to_string(),
        };
        let n = match text.strip_suffix('%') {
            Some(pct) => {
                let pct: f64 = pct
                    .trim()
                    .parse()
                    .map_err(|_| format!("`serial`: {text} is not a percentage"))?;
                (pct / 100.0 * hosts.len() as f64) as usize
            }
            None => text
                .parse::<usize>()
                .map_err(|_| format!("`serial`: {text} is not a number of hosts"))?,
        };
        // At least one host per batch; 0 means all of them.
        Ok(if n == 0 && !text.ends_with('%') {
            hosts.len()
        } else {
            n.max(1)
        })
    };
    let sizes = steps.iter().map(size).collect::<Result<Vec<_>, _>>()?;
    let mut out = Vec::new();
    let mut rest = hosts;
    let mut i = 0;
    while !rest.is_empty() {
        let n = sizes
            .get(i)
            .or(sizes.last())
            .copied()
            .unwrap_or(rest.len())
            .min(rest.len());
        out.push(rest[..n].to_vec());
        rest = &rest[n..];
        i += 1;
    }
    Ok(out)
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
    /// Under the `free` strategy, what the batch's hosts share.
    free: Option<&'a FreeRun>,
}

/// What the hosts of a batch share under the `free` strategy, each running the play on
/// its own.
#[derive(Default)]
struct FreeRun {
    /// The task whose banner was shown last.
    last: Mutex<Option<usize>>,
    /// Each throttled task's permits (by where it is written: an included task is the
    /// same task for every host), so that no more hosts than its `throttle` run it at
    /// once.
    throttles: Mutex<HashMap<String, std::sync::Arc<tokio::sync::Semaphore>>>,
}

impl FreeRun {
    /// The permits of task `t` under `throttle` (made on first use).
    fn throttle(&self, t: &Task, throttle: usize) -> std::sync::Arc<tokio::sync::Semaphore> {
        lock(&self.throttles)
            .entry(t.location.to_string())
            .or_insert_with(|| std::sync::Arc::new(tokio::sync::Semaphore::new(throttle)))
            .clone()
    }
}

/// Runs a play's tasks and handlers on one batch of its hosts.
async fn run_batch(run: &Run, b: BatchRun<'_>) -> Ended {
    let BatchRun {
        play,
        name,
        vars,
        all,
        batch,
        vars_files,
        free,
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
        free,
        in_handler: false,
    };
    let root = Chain::new(&play.keywords);
    let mut go_on = true;
    // Under `--start-at-task` a play gathers facts only when the task asked for is
    // among its own (or was reached before), as ansible-playbook does.
    if let Some(gather) = gathering_task(play).filter(|g| starts(run, g) || holds_start(run, play))
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
            Ok(()) if gathering_is("smart") => {
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
    let force_handlers = force_handlers(run, play);
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
            flush_handlers(cx, force_handlers).await;
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
            TaskItem::Task(t) if !starts(cx.run, t) => true,
            TaskItem::Task(t) => run_task(cx, t, inherited, false).await,
            TaskItem::Block(b) => Box::pin(run_block(cx, b, inherited)).await,
        };
        if !go_on {
            return false;
        }
    }
    true
}

/// Whether a task runs under `--step`: the user is asked, as ansible-playbook asks
/// (`y` runs it, `c` runs it and every task after it without asking, anything else —
/// or no answer — skips it), and the question is repeated as a banner.
fn stepped(run: &Run, name: &str, handler: bool) -> bool {
    use std::sync::atomic::Ordering;
    let Some(step) = &run.options.step else {
        return true;
    };
    if !step.load(Ordering::SeqCst) {
        return true;
    }
    let kind = if handler { "HANDLER" } else { "TASK" };
    let question = format!("Perform task: {kind}: {name} (N)o/(y)es/(c)ontinue: ");
    let answer = crate::plugins::callback::prompt::ask_line(&question).unwrap_or_default();
    let go = match answer.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" => true,
        "c" | "continue" => {
            step.store(false, Ordering::SeqCst);
            true
        }
        _ => false,
    };
    run.callback.banner(question.trim_end());
    go
}

/// Whether a task runs under `--start-at-task` (every task without it).
fn starts(run: &Run, t: &Task) -> bool {
    run.options
        .start_at_task
        .as_ref()
        .is_none_or(|s| s.runs(start_name(t)))
}

/// The name `--start-at-task` matches a task by: its own, else its action.
fn start_name(t: &Task) -> &str {
    t.name.as_deref().unwrap_or(&t.action)
}

/// Whether the task `--start-at-task` asks for is among the play's tasks (those of
/// its blocks included, not `rescue` or `always`, which are never started at).
fn holds_start(run: &Run, play: &Play) -> bool {
    fn within(start: &super::StartAt, items: &[TaskItem]) -> bool {
        items.iter().any(|item| match item {
            TaskItem::Task(t) => start.matches(start_name(t)),
            TaskItem::Block(b) => within(start, &b.block),
        })
    }
    run.options.start_at_task.as_ref().is_some_and(|start| {
        [&play.pre_tasks, &play.tasks, &play.post_tasks]
            .into_iter()
            .any(|items| within(start, items))
    })
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
        return run_role_once(cx, b, &inner, role).await;
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

/// Runs a role's tasks on the hosts it has not run on yet with the same parameters (the
/// others wait), as Ansible runs a role once per host, unless it allows duplicates; a
/// role whose tasks the tags leave out has not run. The hosts that end the role
/// (`meta: end_role`) go on after it.
async fn run_role_once(
    cx: PlayRun<'_>,
    b: &crate::playbook::Block,
    inner: &Chain<'_>,
    role: &crate::playbook::roles::Role,
) -> bool {
    let state = cx.state;
    let entering = lock(&state.active).clone();
    let ran = lock(&state.roles_ran)
        .get(&role.key)
        .cloned()
        .unwrap_or_default();
    let fresh: Vec<String> = entering
        .iter()
        .filter(|h| role.allow_duplicates || !ran.contains(*h))
        .cloned()
        .collect();
    if fresh.is_empty() {
        return true;
    }
    let selected = any_selected(cx.run, cx.vars, &b.block, inner);
    if selected {
        lock(&state.roles_ran)
            .entry(role.key.clone())
            .or_default()
            .extend(fresh.iter().cloned());
    }
    // What each host has done so far (tasks that ran, not skipped ones), and how often
    // it was unreachable under `ignore_unreachable`.
    let worked = || -> HashMap<String, u32> {
        cx.run
            .stats
            .snapshot()
            .into_iter()
            .map(|(host, s)| (host, s.ok + s.failed + s.unreachable))
            .collect()
    };
    let unreachable = || lock(&state.unreachable_ignored).clone();
    let before = worked();
    let unreachable_before = unreachable();
    let waiting = std::mem::replace(&mut *lock(&state.active), fresh.clone());
    run_items(cx, &b.block, inner).await;
    // A host on which every task of the role was skipped (the entry's `when` did not
    // hold), or that was unreachable in it, has not run it: a later entry of the same
    // role runs, as in Ansible.
    if selected {
        let after = worked();
        let unreachable_after = unreachable();
        let count = |m: &HashMap<String, u32>, h: &String| m.get(h).copied().unwrap_or(0);
        let idle: HashSet<&String> = fresh
            .iter()
            .filter(|h| {
                count(&after, h) == count(&before, h)
                    || count(&unreachable_after, h) > count(&unreachable_before, h)
            })
            .collect();
        if let Some(ran) = lock(&state.roles_ran).get_mut(&role.key) {
            ran.retain(|h| !idle.contains(h));
        }
    }
    // The hosts that ended the role (`meta: end_role`) go on after it too.
    let back = state.role_done(&b.keywords);
    let survivors = std::mem::take(&mut *lock(&state.active));
    *lock(&state.active) = state.in_order(&entering, |h| {
        (waiting.contains(h) && !fresh.contains(h)) || survivors.contains(h) || back.contains(h)
    });
    !lock(&state.active).is_empty()
}

/// Whether the task's `any_errors_fatal` holds (read with the first host's variables,
/// as Ansible reads it): one host's failure then ends the play for every host.
pub(super) fn any_errors_fatal(run: &Run, kw: &Chain<'_>, vars: &crate::template::Vars) -> bool {
    // One that cannot be worked out holds: failing safe.
    task::keywords::keyword_bool(run, vars, kw, Keyword::AnyErrorsFatal, false).unwrap_or(true)
}

/// Adds roles included while the play runs to `ansible_play_role_names`.
pub(super) fn add_role_names(cx: PlayRun<'_>, names: Vec<String>) {
    lock(&cx.state.role_names).extend(names);
}

/// Adds the handlers of a role included while the play runs, and with `public` its
/// variables for the rest of the play.
pub(super) fn add_role(
    cx: PlayRun<'_>,
    handlers: TaskItem,
    public: Option<std::sync::Arc<crate::playbook::roles::Role>>,
) {
    lock(&cx.state.more_handlers).push(handlers);
    if let Some(role) = public {
        add_public_role(cx, role);
    }
}

/// Makes the defaults and vars of a role imported or included while the play runs
/// the play's for the rest of it.
pub(super) fn add_public_role(cx: PlayRun<'_>, role: std::sync::Arc<crate::playbook::roles::Role>) {
    lock(&cx.state.public_roles).push(role);
}

/// Fails a task on a host outside the task's own run (an include that cannot be made):
/// reported, counted, registered, and the host leaves the play as after a failed task
/// (unless the failure is `ignored`); a `rescue` that takes it over counts it as
/// rescued if `rescuable`.
pub(super) fn fail_host(
    cx: PlayRun<'_>,
    t: &Task,
    host: &str,
    result: serde_json::Map<String, Value>,
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
            result,
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

/// Whether `-t`/`--skip-tags` select any task of a list.
fn any_selected(
    run: &Run,
    play_vars: &serde_json::Map<String, Value>,
    items: &[TaskItem],
    inherited: &Chain<'_>,
) -> bool {
    items.iter().any(|item| match item {
        TaskItem::Task(t) => task::selected_by_tags(run, play_vars, &inherited.with(&t.keywords)),
        TaskItem::Block(b) => {
            let inner = inherited.with(&b.keywords);
            [&b.block, &b.rescue, &b.always]
                .iter()
                .any(|part| any_selected(run, play_vars, part, &inner))
        }
    })
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

    /// The hosts that ended the role whose block's keywords are `role_block` (they go
    /// on after it), no longer ended.
    fn role_done(&self, role_block: &crate::playbook::Keywords) -> Vec<String> {
        let id = role_block as *const _ as usize;
        let mut ended = lock(&self.roles_ended);
        let (done, still): (Vec<_>, Vec<_>) = ended.drain(..).partition(|(r, _)| *r == id);
        *ended = still;
        done.into_iter().map(|(_, h)| h).collect()
    }
}

pub(super) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
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
                sandball_wire::python::py_repr(&v)
            ),
        },
        Err(e) => e.to_string(),
    };
    Err(format!(
        "Failed to convert the throttle value to an integer: {why}\n\nThe error appears to be in '{}'.",
        setting.at
    ))
}

/// Runs a task on the play's active hosts (or, for a handler, on the hosts that
/// notified it). Returns false when no hosts are left.
async fn run_task(cx: PlayRun<'_>, t: &Task, inherited: &Chain<'_>, handler: bool) -> bool {
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
                    .is_some_and(|s| task::handler_matches(t, kw.role(), s))
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
    let scope = PlayScope {
        name,
        vars: cx.vars,
        vars_files: cx.vars_files,
        hosts_all: HostNames::new(refreshed.as_deref().unwrap_or(all)),
        hosts_active: HostNames::new(&hosts),
        roles: &roles,
        role_names: &role_names,
        dependent_role_names: &play.dependent_role_names,
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
                    run.callback.warning(&format!(
                        "the action name {:?} could not be templated: {e}\n\nThe error appears to be in '{}'.",
                        t.action, t.location
                    ));
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
    if let Some(action) = meta_action(t) {
        let cx = PlayRun {
            in_handler: cx.in_handler || handler,
            ..cx
        };
        return run_meta(cx, t, &kw, &scope, &hosts, action).await;
    }
    let banner_name = task::display_name(run, &scope, written, &hosts[0], &kw);
    if !stepped(run, &banner_name, handler || cx.in_handler) {
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
    let once = task::keywords::keyword_bool(run, &first_vars, &kw, Keyword::RunOnce, false)
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
            task::register(run, t, other, &o.registered);
            task::attempt::record_facts(run, t, other, &o.registered);
        }
    }
    // Notices are templated (a name, or a list of names), as Ansible reads them.
    let notify: Vec<String> = kw
        .notify()
        .into_iter()
        .flat_map(|n| {
            if !crate::template::is_template(&n) {
                return vec![n];
            }
            match run.templar.template(&Value::String(n.clone()), &first_vars) {
                Ok(Value::String(s)) => vec![s],
                Ok(Value::Array(items)) => items
                    .into_iter()
                    .map(|i| match i {
                        Value::String(s) => s,
                        other => other.to_string(),
                    })
                    .collect(),
                Ok(other) => vec![other.to_string()],
                Err(_) => vec![n],
            }
        })
        .collect();
    // Which handlers answer each notice (read with the first host's variables, as
    // the notices are), worked out once for the task.
    let answers: Vec<(&String, Option<Vec<String>>)> = if notify.is_empty() {
        Vec::new()
    } else {
        let more = lock(&state.more_handlers).clone();
        notify
            .iter()
            .map(|n| (n, answering(cx, &more, n, &first_vars)))
            .collect()
    };
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
            Status::Changed if !notify.is_empty() => {
                // A notice no handler answers is an error (a warning with
                // `error_on_missing_handler = false`), as in Ansible; the host stops.
                let mut missing = Vec::new();
                let mut notices = notify.clone();
                for (n, answer) in &answers {
                    match answer {
                        Some(raw) => notices.extend(raw.iter().cloned()),
                        None => missing.push(*n),
                    }
                }
                for name in missing {
                    let msg = format!(
                        "The requested handler '{name}' was not found in either the main handlers list nor in the listening handlers list"
                    );
                    if crate::plugins::action::env_flag("ANSIBLE_ERROR_ON_MISSING_HANDLER", true) {
                        missing_handler.get_or_insert(msg);
                    } else {
                        run.callback.warning(&msg);
                    }
                }
                lock(&state.raised).extend(notices.iter().map(|n| (host.clone(), n.clone())));
                let mut n = lock(&state.notified);
                n.entry(host).or_default().extend(notices);
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

/// Runs notified handlers, in the order they are defined, then forgets the notices.
/// With `force`, hosts that failed run the handlers they notified too (and stay failed).
async fn flush_handlers(cx: PlayRun<'_>, force: bool) {
    let PlayRun { play, state, .. } = cx;
    if lock(&state.notified).is_empty() {
        return;
    }
    let forced: Vec<String> = if force {
        let failed = lock(&state.failed);
        let mut active = lock(&state.active);
        let extra: Vec<String> = cx
            .all
            .iter()
            .filter(|h| failed.contains_key(*h) && !active.contains(h))
            .cloned()
            .collect();
        active.extend(extra.iter().cloned());
        extra
    } else {
        Vec::new()
    };
    let root = Chain::new(&play.keywords);
    // Handlers run in order; one that notifies a handler that comes before it (or has
    // started) leaves that notice for the next flush (the sections' implicit ones
    // included), as in ansible-core; those that come after it run in this one.
    lock(&state.raised).clear();
    lock(&state.served).clear();
    let mut handlers = play.handlers.clone();
    handlers.extend(lock(&state.more_handlers).iter().cloned());
    Box::pin(run_handlers(cx, &handlers, &root)).await;
    let raised = std::mem::take(&mut *lock(&state.raised));
    let served = std::mem::take(&mut *lock(&state.served));
    let mut left: HashMap<String, HashSet<String>> = HashMap::new();
    for (i, (host, n)) in raised.into_iter().enumerate() {
        let taken = served
            .iter()
            .any(|(h, s, at)| *h == host && *s == n && *at > i);
        if !taken {
            left.entry(host).or_default().insert(n);
        }
    }
    *lock(&state.notified) = left;
    lock(&state.active).retain(|h| !forced.contains(h));
}

/// Whether some handler of the play (or of those `more`, included so far) answers `notice`
/// by name or `listen` (`None` when none does), and the templated handler names that
/// render to it with the notifying task's variables, to notify as written (handler
/// names are templated, `listen` is not, as in Ansible).
fn answering(
    cx: PlayRun<'_>,
    more: &[TaskItem],
    notice: &str,
    vars: &crate::template::Vars,
) -> Option<Vec<String>> {
    let root = Chain::new(&cx.play.keywords);
    let mut handlers = Vec::new();
    handler_list(&cx.play.handlers, &root, &mut handlers);
    handler_list(more, &root, &mut handlers);
    let wanted = HashSet::from([notice.to_string()]);
    let mut found = false;
    let mut raw = Vec::new();
    for (h, chain) in &handlers {
        if task::handler_matches(h, chain.role(), &wanted) {
            found = true;
        } else if let Some(name) = h
            .name
            .as_deref()
            .filter(|n| crate::template::is_template(n))
        {
            match cx
                .run
                .templar
                .template(&Value::String(name.to_string()), vars)
            {
                Ok(Value::String(rendered)) if rendered == notice => {
                    found = true;
                    raw.push(name.to_string());
                }
                Err(e) if h.listen.is_empty() => cx.run.callback.warning(&format!(
                    "Handler '{name}' is unusable: its name cannot be templated with the notifying task's variables and it has no listen topics to be notified by ({e})"
                )),
                _ => {}
            }
        }
    }
    found.then_some(raw)
}

/// The handlers of a list with their keywords, those of roles' blocks included, in
/// order.
fn handler_list<'a>(
    items: &'a [TaskItem],
    inherited: &Chain<'a>,
    out: &mut Vec<(&'a Task, Chain<'a>)>,
) {
    for item in items {
        match item {
            TaskItem::Task(h) => out.push((h, inherited.clone())),
            TaskItem::Block(b) => handler_list(&b.block, &inherited.with(&b.keywords), out),
        }
    }
}

/// Runs the notified handlers; of several handlers with the same name only the last one
/// is notified by it, as in Ansible (the same role twice in a play defines its handlers
/// twice).
async fn run_handlers(cx: PlayRun<'_>, items: &[TaskItem], root: &Chain<'_>) {
    // Each top-level block of handlers (a role's, the play's own) is a group.
    let mut handlers = Vec::new();
    let mut groups = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let before = handlers.len();
        handler_list(std::slice::from_ref(item), root, &mut handlers);
        // Handlers written straight in the play's `handlers:` are one group.
        let group = match item {
            TaskItem::Task(_) if index > 0 && matches!(items[index - 1], TaskItem::Task(_)) => {
                groups.last().copied().unwrap_or(index)
            }
            _ => index,
        };
        groups.extend(std::iter::repeat_n(group, handlers.len() - before));
    }
    for (i, (h, chain)) in handlers.iter().enumerate() {
        // Of the handlers sharing a name, the one that runs is the first of the last
        // group holding that name, as Ansible picks it.
        let shadowed = h.name.is_some()
            && handlers.iter().enumerate().any(|(j, (other, _))| {
                j != i
                    && other.name == h.name
                    && (groups[j] > groups[i] || (groups[j] == groups[i] && j < i))
            });
        if shadowed {
            continue;
        }
        // The notices it answers for the hosts it runs on are taken up as it starts.
        let kw = chain.with(&h.keywords);
        {
            let notified = lock(&cx.state.notified);
            let at = lock(&cx.state.raised).len();
            let mut served = lock(&cx.state.served);
            for (host, notices) in notified.iter() {
                for n in notices {
                    if task::handler_matches(h, kw.role(), &HashSet::from([n.clone()])) {
                        served.push((host.clone(), n.clone(), at));
                    }
                }
            }
        }
        let go_on = run_task(cx, h, chain, true).await;
        if !go_on {
            break;
        }
    }
}

/// Whether every `when` of a task holds for `host`.
pub(super) fn when_holds(run: &Run, scope: &PlayScope<'_>, kw: &Chain<'_>, host: &str) -> bool {
    let vars = task::task_vars(run, scope, host, kw);
    kw.when()
        .all(|cond| run.templar.conditional(cond, &vars).unwrap_or(false))
}

/// The `meta` actions, run by the strategy itself: they act on the hosts for which
/// the task's `when` holds, and count in no recap. False when no hosts are left.
async fn run_meta(
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
            result: &skipped,
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
