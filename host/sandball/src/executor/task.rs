//! One task on one host: loop items, `when`, templating the arguments, the action,
//! `changed_when`/`failed_when`, `until`/`retries`, `register`, `no_log`, and the
//! reports to the callback.

use super::{Run, RunOptions, loops};
use crate::assemble::Component;
use crate::playbook::{Chain, Keyword, Task};
use crate::plugins::action::copy;
use crate::plugins::action::legacy;
use crate::plugins::action::normal::{self, ModuleFlags};
use crate::plugins::action::{self, ActionContext, controller_action, failed, truthy};
use crate::plugins::r#become::{Become, Keywords as BecomeKeywords};
use crate::plugins::callback::{Report, Status};
use crate::plugins::connection::SessionError;
use crate::plugins::connection::pool::{ConnectError, transport_for};
use crate::policy;
use crate::template::{OMIT, Var, Vars};
use crate::vars::PlayScope;
use sandball_wire::capability::Grant;
use sandball_wire::python::py_truth;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use std::collections::HashSet;
use std::sync::Arc;

/// The message that replaces a `no_log` result.
pub const CENSORED: &str =
    "the output has been hidden due to the fact that 'no_log: true' was specified for this result";

/// The task's become settings on a host (`Err`: a failed result).
fn become_for(
    run: &Run,
    t: &Task,
    kw: &Chain<'_>,
    vars: &Vars,
) -> Result<Option<Become>, Map<String, Value>> {
    let layers: Vec<BecomeKeywords<'_>> = kw
        .levels()
        .iter()
        .map(|level| BecomeKeywords {
            become_: level.get(Keyword::Become),
            user: level.get(Keyword::BecomeUser),
            method: level.get(Keyword::BecomeMethod),
            flags: level.get(Keyword::BecomeFlags),
            exe: level.get(Keyword::BecomeExe),
        })
        .collect();
    Become::resolve(&run.templar, vars, &layers, &run.options.become_).map_err(|e| {
        failed(format!(
            "{e}\n\nThe error appears to be in '{}'.",
            t.location
        ))
    })
}

/// How a task ended on a host, for the strategy.
pub struct HostOutcome {
    /// Final status.
    pub status: Status,
    /// A failure let through by `ignore_errors`.
    pub ignored: bool,
    /// The result of a failure that was not ignored (hidden as shown when `no_log`),
    /// for a block's `rescue` (`ansible_failed_result`).
    pub failure: Option<Map<String, Value>>,
    /// The result as `register` stores it (for `run_once`, which gives it to every
    /// host).
    pub registered: Map<String, Value>,
}

/// Whether `-t`/`--skip-tags` select the task whose keywords are `kw` (its tags and
/// those of its play and blocks; `always` and `never` as Ansible).
pub fn selected_by_tags(opts: &RunOptions, kw: &Chain<'_>) -> bool {
    let tags: HashSet<&str> = kw.tags().collect();
    if opts
        .skip_tags
        .iter()
        .any(|s| tags.contains(s.as_str()) || (s == "all"))
    {
        return false;
    }
    if opts.tags.is_empty() || opts.tags.iter().any(|t| t == "all") {
        return !tags.contains("never");
    }
    tags.contains("always")
        || opts.tags.iter().any(|s| {
            tags.contains(s.as_str())
                || (s == "tagged" && !tags.is_empty())
                || (s == "untagged" && tags.is_empty())
        })
}

/// Whether a handler was notified by name or by one of its `listen` topics.
pub fn handler_matches(h: &Task, notified: &HashSet<String>) -> bool {
    h.name.as_ref().is_some_and(|n| notified.contains(n))
        || h.listen.iter().any(|l| notified.contains(l))
}

/// The task's banner name: its templated `name`, else its action.
pub fn display_name(
    run: &Run,
    scope: &PlayScope<'_>,
    t: &Task,
    host: &str,
    kw: &Chain<'_>,
) -> String {
    let Some(name) = &t.name else {
        return t.action.clone();
    };
    if !name.contains("{{") {
        return name.clone();
    }
    let vars = task_vars(run, scope, host, kw);
    match run.templar.template(&Value::String(name.clone()), &vars) {
        Ok(Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => name.clone(),
    }
}

/// The variables of a task (whose keywords are `kw`) on a host, before it runs.
pub(crate) fn task_vars(run: &Run, scope: &PlayScope<'_>, host: &str, kw: &Chain<'_>) -> Vars {
    let inventory = run.inventory();
    let mut layers = kw.vars();
    let files_layer = scope.vars_files.map(|files| {
        // Names are templated with the variables below the layer, until all are read.
        let below = if files.complete(host) {
            Vars::new()
        } else {
            run.vars.task_vars(&inventory, host, scope, &[])
        };
        let (layer, errors) = files.layer(&run.templar, host, &below);
        for e in errors {
            run.callback.warning(&e);
        }
        layer
    });
    if let Some(layer) = &files_layer {
        layers.insert(0, layer);
    }
    run.vars.task_vars(&inventory, host, scope, &layers)
}

fn templated_bool(
    run: &Run,
    vars: &Vars,
    v: Option<&Value>,
    default: bool,
) -> Result<bool, String> {
    match v {
        None => Ok(default),
        Some(v) => {
            let t = run.templar.template(v, vars).map_err(|e| e.to_string())?;
            truthy(Some(&t), default)
        }
    }
}

/// Runs a task on one host and reports it.
pub async fn run_on_host(
    run: &Run,
    scope: &PlayScope<'_>,
    t: &Task,
    kw: &Chain<'_>,
    host: &str,
) -> HostOutcome {
    let vars = task_vars(run, scope, host, kw);
    // A no_log that cannot be worked out hides the result: secrets stay hidden.
    let no_log = templated_bool(run, &vars, kw.nearest(Keyword::NoLog), false).unwrap_or(true);
    let result = match &t.loop_ {
        None => run_once(run, t, kw, host, &vars, no_log).await,
        Some(spec) => run_loop(run, t, kw, host, &vars, spec, no_log).await,
    };
    if let Some(name) = &t.register {
        run.vars
            .register(host, name, Value::Object(registered(&result)));
    }
    let status = Status::of(&result);
    let ignore = |k| templated_bool(run, &vars, kw.nearest(k), false).unwrap_or_default();
    let ignored = match status {
        Status::Failed => ignore(Keyword::IgnoreErrors),
        Status::Unreachable => ignore(Keyword::IgnoreUnreachable),
        _ => false,
    };
    let changed = result.get("changed").is_some_and(py_truth);
    run.stats.record(host, status, ignored, changed);
    let kept = registered(&result);
    let failure = (status == Status::Failed && !ignored).then(|| {
        registered(&if no_log {
            censor(&result)
        } else {
            result.clone()
        })
    });
    if t.loop_.is_none() {
        let shown = if no_log { censor(&result) } else { result };
        run.callback.result(&Report {
            host,
            action: &t.action,
            status,
            result: &shown,
            item: None,
            ignored,
        });
    } else if ignored || status == Status::Skipped {
        run.callback.result(&Report {
            host,
            action: &t.action,
            status,
            result: &loop_summary(&result),
            item: None,
            ignored,
        });
    }
    HostOutcome {
        status,
        ignored,
        failure,
        registered: kept,
    }
}

/// The result `register` stores: without internal keys.
fn registered(result: &Map<String, Value>) -> Map<String, Value> {
    result
        .iter()
        .filter(|(k, _)| !k.starts_with("_ansible_"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn loop_summary(result: &Map<String, Value>) -> Map<String, Value> {
    result
        .iter()
        .filter(|(k, _)| k.as_str() != "results")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// What is shown of a `no_log` result.
fn censor(result: &Map<String, Value>) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("censored".into(), Value::String(CENSORED.into()));
    for k in ["changed", "failed", "skipped", "unreachable"] {
        if let Some(v) = result.get(k) {
            m.insert(k.into(), v.clone());
        }
    }
    m
}

/// A loop's items (`spec` templated, then expanded as its `loop`/`with_*` keyword says),
/// each with the variables its run sees: the item under `loop_var`, `index_var`,
/// `ansible_loop_var`.
pub(crate) fn loop_items(
    run: &Run,
    t: &Task,
    vars: &Vars,
    spec: &Value,
) -> Result<Vec<(Value, Vars)>, String> {
    let items = run
        .templar
        .template(spec, vars)
        .map_err(|e| format!("Error while resolving the loop: {e}"))
        .and_then(|v| loops::items(&t.loop_kind, v))?;
    let control = t.loop_control.clone().unwrap_or_default();
    let loop_var = control.loop_var;
    Ok(items
        .into_iter()
        .enumerate()
        .map(|(index, item)| {
            let mut item_vars = vars.clone();
            item_vars.set_data(&loop_var, item.clone());
            if let Some(iv) = &control.index_var {
                item_vars.set_data(iv, json!(index));
            }
            item_vars.set_data("ansible_loop_var", Value::String(loop_var.clone()));
            (item, item_vars)
        })
        .collect())
}

async fn run_loop(
    run: &Run,
    t: &Task,
    kw: &Chain<'_>,
    host: &str,
    vars: &Vars,
    spec: &Value,
    no_log: bool,
) -> Map<String, Value> {
    let items = match loop_items(run, t, vars, spec) {
        Ok(items) => items,
        Err(e) => return failed(e),
    };
    let control = t.loop_control.clone().unwrap_or_default();
    let loop_var = control.loop_var.clone();
    let mut results = Vec::with_capacity(items.len());
    let (mut changed, mut any_failed, mut all_skipped) = (false, false, !items.is_empty());
    for (index, (item, item_vars)) in items.iter().enumerate() {
        let mut r = run_once(run, t, kw, host, item_vars, no_log).await;
        r.insert(loop_var.clone(), item.clone());
        r.insert("ansible_loop_var".into(), Value::String(loop_var.clone()));
        if let Some(iv) = &control.index_var {
            r.insert(iv.clone(), json!(index));
            r.insert("ansible_index_var".into(), Value::String(iv.clone()));
        }
        let status = Status::of(&r);
        changed |= status == Status::Changed || r.get("changed").is_some_and(py_truth);
        any_failed |= status == Status::Failed;
        all_skipped &= status == Status::Skipped;
        let label = match &control.label {
            Some(l) => match run.templar.template(l, item_vars) {
                Ok(v) => loops::label(&v),
                Err(_) => loops::label(l),
            },
            None => loops::label(item),
        };
        let shown = if no_log { censor(&r) } else { r.clone() };
        run.callback.result(&Report {
            host,
            action: &t.action,
            status,
            result: &shown,
            item: Some(&label),
            ignored: false,
        });
        results.push(Value::Object(r));
    }
    let mut m = Map::new();
    m.insert("changed".into(), Value::Bool(changed));
    m.insert(
        "msg".into(),
        Value::String(
            if any_failed {
                "One or more items failed"
            } else if all_skipped {
                "All items skipped"
            } else {
                "All items completed"
            }
            .into(),
        ),
    );
    if any_failed {
        m.insert("failed".into(), Value::Bool(true));
    }
    if all_skipped {
        m.insert("skipped".into(), Value::Bool(true));
    }
    m.insert("results".into(), Value::Array(results));
    m
}

/// One run of the task (one loop item, or the task itself), with `until` retries.
async fn run_once(
    run: &Run,
    t: &Task,
    kw: &Chain<'_>,
    host: &str,
    vars: &Vars,
    no_log: bool,
) -> Map<String, Value> {
    for cond in kw.when() {
        match run.templar.conditional(cond, vars) {
            Ok(true) => {}
            Ok(false) => {
                return action::ok_with(json!({
                    "skipped": true,
                    "skip_reason": "Conditional result was False",
                    "false_condition": cond,
                }));
            }
            Err(e) => {
                return failed(format!(
                    "The conditional check '{}' failed. The error was: {e}\n\nThe error appears to be in '{}'.",
                    cond_text(cond),
                    t.location
                ));
            }
        }
    }
    let Some(until) = &t.until else {
        return attempt_in_time(run, t, kw, host, vars, no_log).await;
    };
    let retries = match t.retries.as_ref().map(|r| run.templar.template(r, vars)) {
        None => 3,
        Some(Ok(v)) => v
            .as_u64()
            .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
            .unwrap_or(3),
        Some(Err(e)) => return failed(e.to_string()),
    };
    let delay = match t.delay.as_ref().map(|r| run.templar.template(r, vars)) {
        None => 5.0,
        Some(Ok(v)) => v
            .as_f64()
            .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
            .unwrap_or(5.0),
        Some(Err(e)) => return failed(e.to_string()),
    };
    let mut attempts = 0;
    loop {
        attempts += 1;
        let mut r = attempt_in_time(run, t, kw, host, vars, no_log).await;
        let mut check_vars = vars.clone();
        bind_result(&mut check_vars, t, &r);
        let done = run.templar.conditional(until, &check_vars).unwrap_or(false);
        r.insert("attempts".into(), json!(attempts));
        if done {
            r.remove("failed");
            return r;
        }
        if attempts > retries {
            r.insert("failed".into(), Value::Bool(true));
            r.entry("msg")
                .or_insert_with(|| Value::String("Retries exceeded".into()));
            return r;
        }
        run.callback.retrying(
            host,
            t.name.as_deref().unwrap_or(&t.action),
            retries + 1 - attempts,
        );
        tokio::time::sleep(std::time::Duration::from_secs_f64(delay.max(0.0))).await;
    }
}

fn cond_text(cond: &Value) -> String {
    match cond {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Makes a result visible to `changed_when`/`failed_when`/`until` under the register
/// name, as Ansible does.
fn bind_result(vars: &mut Vars, t: &Task, r: &Map<String, Value>) {
    if let Some(name) = &t.register {
        vars.set_data(name, Value::Object(registered(r)));
    }
}

/// [`attempt`] within the task's `timeout` (seconds; 0 or unset: no limit). A task
/// that runs out of time fails as Ansible's does; its module run is abandoned.
async fn attempt_in_time(
    run: &Run,
    t: &Task,
    kw: &Chain<'_>,
    host: &str,
    vars: &Vars,
    no_log: bool,
) -> Map<String, Value> {
    let seconds = match kw.nearest(Keyword::Timeout) {
        None => 0,
        Some(v) => match run.templar.template(v, vars).map(|v| integer(&v)) {
            Ok(Some(n)) if n >= 0 => n as u64,
            Ok(_) => {
                return failed(format!(
                    "timeout must be a whole number of seconds, got {v}\n\nThe error appears to be in '{}'.",
                    t.location
                ));
            }
            Err(e) => return failed(e.to_string()),
        },
    };
    if seconds == 0 {
        return attempt(run, t, kw, host, vars, no_log).await;
    }
    let limit = std::time::Duration::from_secs(seconds);
    match tokio::time::timeout(limit, attempt(run, t, kw, host, vars, no_log)).await {
        Ok(result) => result,
        Err(_) => {
            let mut r = failed(format!("Timed out after {seconds} second(s)."));
            r.insert("timedout".into(), json!({"period": seconds}));
            r
        }
    }
}

/// A whole number from a keyword's templated value (`5`, `"5"`).
pub(crate) fn integer(v: &Value) -> Option<i64> {
    v.as_i64()
        .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
}

/// Keeps the facts a result carries for `host`: `set_fact` values, or a module's
/// `ansible_facts`.
pub(crate) fn record_facts(run: &Run, t: &Task, host: &str, result: &Map<String, Value>) {
    if let Some(Value::Object(facts)) = result.get("ansible_facts") {
        if controller_action(&t.action) == Some("set_fact") {
            run.vars.set_facts(host, facts);
        } else {
            run.vars.add_module_facts(host, facts);
        }
    }
}

/// The action itself, then `changed_when`/`failed_when`.
async fn attempt(
    run: &Run,
    t: &Task,
    kw: &Chain<'_>,
    host: &str,
    vars: &Vars,
    no_log: bool,
) -> Map<String, Value> {
    let mut result = match controller_action(&t.action) {
        Some(name) => controller(run, t, kw, name, vars),
        None if action::connection_action(&t.action).is_some() => raw(run, t, kw, host, vars).await,
        None => module(run, t, kw, host, vars, no_log).await,
    };
    // A delegated module's result says where it ran (`ok: [web1 -> localhost]`); its
    // facts belong to the task's host unless `delegate_facts` gives them to the other.
    let mut facts_host = host.to_string();
    if controller_action(&t.action).is_none()
        && let Ok(Some(other)) = delegated_to(run, kw, vars)
    {
        result.insert(
            "_ansible_delegated_vars".into(),
            json!({"ansible_host": other, "ansible_delegated_host": other}),
        );
        if templated_bool(run, vars, kw.nearest(Keyword::DelegateFacts), false).unwrap_or(false) {
            facts_host = other;
        }
    }
    record_facts(run, t, &facts_host, &result);
    if result.get("unreachable").is_some_and(py_truth) {
        return result;
    }
    if !t.changed_when.is_empty() || !t.failed_when.is_empty() {
        let mut check_vars = vars.clone();
        bind_result(&mut check_vars, t, &result);
        if !t.changed_when.is_empty() {
            match all_true(run, &t.changed_when, &check_vars) {
                Ok(b) => {
                    result.insert("changed".into(), Value::Bool(b));
                }
                Err(e) => return failed(e),
            }
        }
        if !t.failed_when.is_empty() {
            match all_true(run, &t.failed_when, &check_vars) {
                Ok(b) => {
                    result.insert("failed_when_result".into(), Value::Bool(b));
                    if b {
                        result.insert("failed".into(), Value::Bool(true));
                    } else {
                        result.remove("failed");
                    }
                }
                Err(e) => return failed(e),
            }
        }
    }
    if no_log {
        result.insert("_ansible_no_log".into(), Value::Bool(true));
    }
    result
}

fn all_true(run: &Run, conds: &[Value], vars: &Vars) -> Result<bool, String> {
    for c in conds {
        match run.templar.conditional(c, vars) {
            Ok(true) => {}
            Ok(false) => return Ok(false),
            Err(e) => {
                return Err(format!(
                    "The conditional check '{}' failed. The error was: {e}",
                    cond_text(c)
                ));
            }
        }
    }
    Ok(true)
}

/// Where the loader keeps arguments given as one template.
const VARIABLE_PARAMS: &str = "_variable_params";

/// Arguments that an action evaluates itself, so they are not templated beforehand.
fn raw_args(action: &str) -> &'static [&'static str] {
    match action {
        "debug" => &["var"],
        "assert" => &["that", "fail_msg", "msg", "success_msg"],
        _ => &[],
    }
}

/// Templates the task's arguments (leaving those the action evaluates itself) and
/// drops values that are `omit`.
/// The task's arguments, templated.
pub(crate) fn template_args(
    run: &Run,
    t: &Task,
    kw: &Chain<'_>,
    short: &str,
    vars: &Vars,
) -> Result<Map<String, Value>, String> {
    let keep = raw_args(short);
    let mut out = Map::new();
    // `module: "{{ a_dict }}"` (or `args: "{{ a_dict }}"`): the template gives the
    // arguments; arguments written out beside it win.
    if let Some(params) = t.args.get(VARIABLE_PARAMS) {
        match run.templar.template(params, vars) {
            Ok(Value::Object(m)) => out.extend(m),
            Ok(other) => {
                return Err(format!(
                    "the arguments of the task must be a mapping, the template gave {other}\n\nThe error appears to be in '{}'.",
                    t.location
                ));
            }
            Err(e) => {
                return Err(format!(
                    "{e}\n\nThe error appears to be in '{}'.",
                    t.location
                ));
            }
        }
    }
    for (k, v) in t.args.iter().filter(|(k, _)| k.as_str() != VARIABLE_PARAMS) {
        let value = if keep.contains(&k.as_str()) {
            v.clone()
        } else {
            run.templar.template(v, vars).map_err(|e| {
                format!(
                    "The task includes an option with an undefined variable or a template error. The error was: {e}\n\nThe error appears to be in '{}'.",
                    t.location
                )
            })?
        };
        if let Some(v) = strip_omit(value) {
            out.insert(k.clone(), v);
        }
    }
    for (k, v) in module_defaults(run, kw, &t.action, vars)? {
        if !out.contains_key(&k)
            && let Some(v) = strip_omit(v)
        {
            out.insert(k, v);
        }
    }
    Ok(out)
}

/// Whether a `module_defaults` key names the task's action: the same name, or the same
/// built-in module by its short name and its `ansible.builtin`/`ansible.legacy` ones.
fn names_action(key: &str, action: &str) -> bool {
    let builtin = |n: &str| {
        !n.contains('.') || n.starts_with("ansible.builtin.") || n.starts_with("ansible.legacy.")
    };
    key == action
        || (builtin(key)
            && builtin(action)
            && crate::assemble::component::short_name(key)
                == crate::assemble::component::short_name(action))
}

/// The argument defaults `module_defaults` gives the task's action: the nearest level's
/// (a block's replaces the play's, as in ansible-core), templated; the task's own
/// arguments win over them.
fn module_defaults(
    run: &Run,
    kw: &Chain<'_>,
    action: &str,
    vars: &Vars,
) -> Result<Map<String, Value>, String> {
    let Some(setting) = kw.nearest_setting(Keyword::ModuleDefaults) else {
        return Ok(Map::new());
    };
    let templated = run
        .templar
        .template(&setting.value, vars)
        .map_err(|e| format!("module_defaults (at {}): {e}", setting.at))?;
    let levels = match templated {
        Value::Array(items) => items,
        one => vec![one],
    };
    let mut defaults = Map::new();
    for level in levels {
        let Value::Object(by_module) = level else {
            continue;
        };
        for (key, args) in by_module {
            if key.starts_with("group/") {
                return Err(format!(
                    "module_defaults (at {}): action groups ({key}) are not supported by sandball yet",
                    setting.at
                ));
            }
            if names_action(&key, action)
                && let Value::Object(args) = args
            {
                defaults.extend(args);
            }
        }
    }
    Ok(defaults)
}

fn strip_omit(v: Value) -> Option<Value> {
    match v {
        Value::String(s) if s == OMIT => None,
        Value::Object(m) => Some(Value::Object(
            m.into_iter()
                .filter_map(|(k, v)| strip_omit(v).map(|v| (k, v)))
                .collect(),
        )),
        Value::Array(a) => Some(Value::Array(a.into_iter().filter_map(strip_omit).collect())),
        other => Some(other),
    }
}

fn controller(run: &Run, t: &Task, kw: &Chain<'_>, name: &str, vars: &Vars) -> Map<String, Value> {
    let args = match template_args(run, t, kw, name, vars) {
        Ok(a) => a,
        Err(e) => return failed(e),
    };
    let ctx = ActionContext {
        templar: &run.templar,
        vars,
        verbosity: run.options.verbosity,
    };
    action::run_controller(name, &ctx, &args)
}

fn unreachable(msg: String) -> Map<String, Value> {
    action::ok_with(json!({"unreachable": true, "msg": msg}))
}

/// The UNREACHABLE result of a host that could not be connected to.
fn connect_failure(e: ConnectError) -> Map<String, Value> {
    match e {
        ConnectError::Session(SessionError::Version { .. })
        | ConnectError::Unsupported(_)
        | ConnectError::Vars(_)
        | ConnectError::Connection(_) => unreachable(e.to_string()),
        ConnectError::Session(e) => unreachable(format!("Failed to start the shim session: {e}")),
    }
}

/// `raw`: the task's command over the host's connection, no module.
async fn raw(run: &Run, t: &Task, kw: &Chain<'_>, host: &str, vars: &Vars) -> Map<String, Value> {
    let become_ = match become_for(run, t, kw, vars) {
        Ok(b) => b,
        Err(e) => return e,
    };
    let args = match template_args(run, t, kw, "raw", vars) {
        Ok(a) => a,
        Err(e) => return failed(e),
    };
    let check_mode =
        match templated_bool(run, vars, kw.nearest(Keyword::CheckMode), run.options.check) {
            Ok(b) => b,
            Err(e) => return failed(e),
        };
    let conn = match target(run, kw, host, vars) {
        Ok(to) => run.sessions.connection(&to.name, &to.transport).await,
        Err(e) => Err(e),
    };
    match conn {
        Ok(conn) => action::raw::run(&conn, become_.as_ref(), &args, check_mode).await,
        Err(e) => connect_failure(e),
    }
}

/// Where a task's module runs: its host, or the host it is delegated to.
pub(crate) struct Target {
    /// The inventory name of the host the module runs on (sessions are kept per name).
    pub name: String,
    /// How to reach it.
    pub transport: crate::plugins::connection::pool::Transport,
}

/// The host a task is delegated to (`delegate_to`, `local_action`), templated with the
/// task's host's variables; `None` when it runs on its own host.
pub(crate) fn delegated_to(
    run: &Run,
    kw: &Chain<'_>,
    vars: &Vars,
) -> Result<Option<String>, String> {
    let Some(setting) = kw.nearest_setting(Keyword::DelegateTo) else {
        return Ok(None);
    };
    match run.templar.template(&setting.value, vars) {
        Ok(Value::Null) => Ok(None),
        Ok(Value::String(name)) if name.trim().is_empty() => Ok(None),
        Ok(Value::String(name)) => Ok(Some(name)),
        Ok(other) => Ok(Some(other.to_string())),
        Err(e) => Err(format!("delegate_to (at {}): {e}", setting.at)),
    }
}

/// How the task reaches the host its module runs on (its own, or the one it is
/// delegated to): that host's inventory variables (`ansible_connection`,
/// `ansible_user`, `ansible_port`…), where they are unset the task's `connection`,
/// `remote_user` and `port` keywords (templated), as Ansible ranks them: variables
/// over keywords. A delegated host the inventory does not know is reached by its name
/// (`localhost` on the local connection).
fn target(run: &Run, kw: &Chain<'_>, host: &str, vars: &Vars) -> Result<Target, ConnectError> {
    let name = delegated_to(run, kw, vars)
        .map_err(ConnectError::Vars)?
        .unwrap_or_else(|| host.to_string());
    let mut host_vars = run.inventory().host_vars(&name);
    for (keyword, variable) in [
        (Keyword::Connection, "ansible_connection"),
        (Keyword::RemoteUser, "ansible_user"),
        (Keyword::Port, "ansible_port"),
    ] {
        if host_vars.contains_key(variable) {
            continue;
        }
        if let Some(setting) = kw.nearest_setting(keyword) {
            let value = run.templar.template(&setting.value, vars).map_err(|e| {
                ConnectError::Vars(format!("{} (at {}): {e}", keyword.name(), setting.at))
            })?;
            host_vars.insert(variable.to_string(), value);
        }
    }
    // The command line comes last: `-c`, `-u`, `--private-key`.
    for (option, variables) in [
        (&run.options.connection, &["ansible_connection"][..]),
        (
            &run.options.remote_user,
            &["ansible_user", "ansible_ssh_user"][..],
        ),
        (
            &run.options.private_key,
            &["ansible_ssh_private_key_file", "ansible_private_key_file"][..],
        ),
    ] {
        if let Some(value) = option
            && !variables.iter().any(|v| host_vars.contains_key(*v))
        {
            host_vars.insert(variables[0].to_string(), Value::String(value.clone()));
        }
    }
    let transport = transport_for(&name, &host_vars)?;
    Ok(Target { name, transport })
}

/// The `capabilities:` keywords of the play, the enclosing blocks and the task,
/// templated and parsed, outermost first.
pub fn capability_keywords(
    run: &Run,
    kw: &Chain<'_>,
    vars: &Vars,
) -> Result<Vec<policy::Adjustment>, String> {
    kw.all(Keyword::Capabilities)
        .map(|v| {
            run.templar
                .template(v, vars)
                .map_err(|e| e.to_string())
                .and_then(|v| policy::keyword(&v).map_err(|e| e.to_string()))
        })
        .collect()
}

/// The task's `environment`: every level's (play, blocks, task; each a mapping or a
/// list of them), templated and merged outermost first, so the task's own values win.
pub(crate) fn environment(
    run: &Run,
    kw: &Chain<'_>,
    vars: &Vars,
) -> Result<Map<String, Value>, String> {
    let mut merged = Map::new();
    for level in kw.all(Keyword::Environment) {
        let templated = run
            .templar
            .template(level, vars)
            .map_err(|e| e.to_string())?;
        let parts = match templated {
            Value::Array(items) => items,
            other => vec![other],
        };
        for part in parts {
            match part {
                Value::Object(m) => merged.extend(m),
                Value::Null => {}
                other => {
                    return Err(format!(
                        "environment must be a dictionary, received {other} ({})",
                        sandball_wire::python::short_type_name(&other)
                    ));
                }
            }
        }
    }
    Ok(merged)
}

/// Whether the task's module runs as a legacy module: there is no built-in component
/// of that name, or the task (or `SANDBALL_LEGACY_MODULES`) asks for the legacy one.
pub(crate) fn runs_legacy(run: &Run, t: &Task, vars: &Vars) -> bool {
    let short = crate::assemble::component::component_name(&t.action);
    !run.modules.exists(&t.action)
        || run
            .legacy
            .prefers_legacy(short, var_value(run, vars, PREFER_LEGACY_VAR).as_ref())
}

async fn module(
    run: &Run,
    t: &Task,
    kw: &Chain<'_>,
    host: &str,
    vars: &Vars,
    no_log: bool,
) -> Map<String, Value> {
    if runs_legacy(run, t, vars) {
        return legacy_module(run, t, kw, host, vars, no_log).await;
    }
    let component: Arc<Component> = match run.modules.get(&t.action) {
        Ok(c) => c,
        Err(e) => return failed(e.to_string()),
    };
    run.callback.verbose(
        3,
        Some(host),
        &format!(
            "Using module file {} (sandball component, sha256 {})",
            component.path.display(),
            component.sha256
        ),
    );
    let mut args = match template_args(run, t, kw, &component.name, vars) {
        Ok(a) => a,
        Err(e) => return failed(e),
    };
    let check_mode =
        match templated_bool(run, vars, kw.nearest(Keyword::CheckMode), run.options.check) {
            Ok(b) => b,
            Err(e) => return failed(e),
        };
    let diff = match templated_bool(run, vars, kw.nearest(Keyword::Diff), run.options.diff) {
        Ok(b) => b,
        Err(e) => return failed(e),
    };
    let to = match target(run, kw, host, vars) {
        Ok(to) => to,
        Err(e) => return unreachable(e.to_string()),
    };
    // The grant is the one policy gives the host the module runs on.
    let subject = policy::Subject {
        module: &component.name,
        sha256: Some(&component.sha256),
        builtin: component.builtin,
        host: Some(&to.name),
    };
    let flags = ModuleFlags {
        check_mode,
        diff,
        no_log,
        verbosity: run.options.verbosity,
    };
    let become_ = match become_for(run, t, kw, vars) {
        Ok(b) => b,
        Err(e) => return e,
    };
    let slot = run.sessions.slot(&to.name, &to.transport, become_.as_ref());
    let mut guard = slot.lock().await;
    if let Err(e) = run
        .sessions
        .ensure_open(&mut guard, &to.name, &to.transport, become_.as_ref())
        .await
    {
        return connect_failure(e);
    }
    let Some(session) = guard.as_mut() else {
        return unreachable("the shim session is not open".into());
    };
    // `copy` with a `src` on the controller: the file goes to the node first, and the
    // module copies it from there.
    match copy::controller_source(&component.name, &args, &run.templar, vars) {
        Ok(None) => {}
        Ok(Some(local)) => match copy::send(session, &local).await {
            Ok(node_path) => copy::use_node_copy(&mut args, node_path),
            Err(e) => {
                if e.broke_session() {
                    *guard = None;
                }
                return failed(e.to_string());
            }
        },
        Err(e) => return failed(e),
    }
    let grant = match capability_keywords(run, kw, vars).and_then(|adjustments| {
        policy::grant_for(
            &run.policy,
            &subject,
            &component.manifest,
            &Value::Object(args.clone()),
            &adjustments,
            run.options.limits,
        )
        .map_err(|e| e.to_string())
    }) {
        Ok(g) => g,
        Err(e) => {
            return failed(format!(
                "{e}\n\nThe error appears to be in '{}'.",
                t.location
            ));
        }
    };
    let mut grant = grant;
    if flags.check_mode {
        // A dry run changes nothing, not even the parents a grant would create: a
        // missing directory fails the task instead.
        for fs in &mut grant.fs {
            fs.create_parents = false;
        }
    }
    let comp: &Component = &component;
    let send = move |args: Value, grant: Grant| async move {
        session
            .run_module(&comp.sha256, &comp.bytes, &comp.name, args, grant)
            .await
    };
    let hint = |capability: &str| policy::how_to_grant(&run.policy, &subject, capability);
    let logged_grant = run.audit_log.as_ref().map(|_| grant.clone());
    let r = match normal::run(&component, &args, grant, &hint, flags, send).await {
        Ok(r) => {
            if normal::retires_session(&r) {
                *guard = None;
            }
            r
        }
        Err(e) => {
            // The session is unusable; the next task on this host starts a fresh one.
            *guard = None;
            failed(format!(
                "MODULE FAILURE: the shim session on {host} failed while running {}: {e}",
                component.name
            ))
        }
    };
    // Every run is logged, also one that ended its session (the shim killed, or it
    // stopped a module stuck past its limit).
    if let Some(grant) = &logged_grant {
        audit(
            run,
            &policy::audit_log::Entry {
                host,
                task: t.name.as_deref().unwrap_or(&t.action),
                module: &component.name,
                sha256: &component.sha256,
                manifest: Some(&component.manifest),
                args: &args,
                no_log,
                grant: Some(grant),
                result: &r,
            },
        );
    }
    r
}

/// The legacy module an action runs, and whether it runs through the shell: `shell`
/// is `command` with `_uses_shell`, as Ansible's shell action does it, and
/// `gather_facts` is `setup`, the facts module Ansible's gather_facts action runs on
/// POSIX hosts.
pub(crate) fn legacy_action(action: &str) -> (String, bool) {
    let short = crate::assemble::component::short_name(action);
    let prefix = &action[..action.len() - short.len()];
    match short {
        "shell" => (format!("{prefix}command"), true),
        "gather_facts" => (format!("{prefix}setup"), false),
        _ => (action.to_string(), false),
    }
}

/// The variable that asks for legacy modules instead of built-in components: a list of
/// names, a comma-separated string, or `all`.
const PREFER_LEGACY_VAR: &str = "sandball_legacy_modules";

/// A variable's value, templated when it is trusted.
fn var_value(run: &Run, vars: &Vars, name: &str) -> Option<Value> {
    match vars.get(name)? {
        Var::Trusted(v) => run.templar.template(v, vars).ok(),
        Var::Data(v) => Some(v.clone()),
        Var::Hosts(_) => None,
    }
}

/// The host variables a legacy run reads (interpreters, pipelining, remote tmp…).
fn connection_vars(run: &Run, vars: &Vars) -> Map<String, Value> {
    let names: Vec<String> = vars
        .names()
        .filter(|n| is_connection_var(n))
        .map(str::to_string)
        .collect();
    names
        .into_iter()
        .filter_map(|n| var_value(run, vars, &n).map(|v| (n, v)))
        .collect()
}

/// Whether a variable is a setting of how legacy modules run on a host.
fn is_connection_var(n: &str) -> bool {
    n.starts_with("ansible_")
        && (n.ends_with("_interpreter")
            || matches!(
                n,
                "ansible_pipelining"
                    | "ansible_remote_tmp"
                    | "ansible_shell_executable"
                    | "ansible_keep_remote_files"
                    | legacy::WORLD_READABLE_VAR
            ))
}

/// A task whose module is not a built-in component (or that asks for the legacy
/// module): found and assembled the classic way, run over the host's connection.
async fn legacy_module(
    run: &Run,
    t: &Task,
    kw: &Chain<'_>,
    host: &str,
    vars: &Vars,
    no_log: bool,
) -> Map<String, Value> {
    let short = crate::assemble::component::short_name(&t.action);
    let become_ = match become_for(run, t, kw, vars) {
        Ok(b) => b,
        Err(e) => return e,
    };
    let (action, uses_shell) = legacy_action(&t.action);
    let module = match run.legacy.get(&action) {
        Ok(m) => m,
        Err(e) => {
            return failed(format!(
                "{e}; and no sandball component '{short}' in: {}",
                run.modules.searched()
            ));
        }
    };
    run.callback.verbose(
        3,
        Some(host),
        &format!(
            "Using module file {} (legacy module, {})",
            module.path.display(),
            crate::assemble::module_type::detect(&module.bytes).name()
        ),
    );
    // Legacy modules run outside the WebAssembly sandbox, with the connection user's
    // rights: policy decides here whether that may happen.
    match policy::legacy_decision(&run.policy, &module.name, host) {
        policy::LegacyDecision::Allow => {}
        policy::LegacyDecision::Warn(msg) => {
            if run.legacy.first_warning(&module.name) {
                run.callback.warning(&msg);
            }
        }
        policy::LegacyDecision::Deny(msg) => return failed(msg),
    }
    let mut args = match template_args(run, t, kw, &module.name, vars) {
        Ok(a) => a,
        Err(e) => return failed(e),
    };
    if uses_shell {
        args.insert("_uses_shell".into(), Value::Bool(true));
    }
    // `command: {cmd: …}` is the free-form command line, as Ansible's argument parser
    // has it (command modules before 2.19 do not know `cmd`).
    if module.name == "command"
        && !args.contains_key("_raw_params")
        && let Some(cmd) = args.remove("cmd")
    {
        args.insert("_raw_params".into(), cmd);
    }
    let check_mode =
        match templated_bool(run, vars, kw.nearest(Keyword::CheckMode), run.options.check) {
            Ok(b) => b,
            Err(e) => return failed(e),
        };
    let diff = match templated_bool(run, vars, kw.nearest(Keyword::Diff), run.options.diff) {
        Ok(b) => b,
        Err(e) => return failed(e),
    };
    let environment = match environment(run, kw, vars) {
        Ok(env) => env,
        Err(e) => {
            return failed(format!(
                "{e}\n\nThe error appears to be in '{}'.",
                t.location
            ));
        }
    };
    let to = match target(run, kw, host, vars) {
        Ok(to) => to,
        Err(e) => return unreachable(e.to_string()),
    };
    let conn = match run.sessions.connection(&to.name, &to.transport).await {
        Ok(c) => c,
        Err(e) => return unreachable(e.to_string()),
    };
    // Interpreters and temporary directories are the settings of the host the module
    // runs on: a delegated host's own.
    let conn_vars = if to.name == host {
        connection_vars(run, vars)
    } else {
        run.inventory()
            .host_vars(&to.name)
            .into_iter()
            .filter(|(n, _)| is_connection_var(n))
            .collect()
    };
    let request = legacy::LegacyRun {
        module: &module,
        args: &args,
        flags: ModuleFlags {
            check_mode,
            diff,
            no_log,
            verbosity: run.options.verbosity,
        },
        host: &to.name,
        host_vars: &conn_vars,
        environment: &environment,
        become_: become_.as_ref(),
    };
    let result = legacy::run(&run.legacy, &conn, &request).await;
    if run.audit_log.is_some() {
        let sha256 = hex::encode(Sha256::digest(module.bytes.as_slice()));
        audit(
            run,
            &policy::audit_log::Entry {
                host,
                task: t.name.as_deref().unwrap_or(&t.action),
                module: &module.name,
                sha256: &sha256,
                manifest: None,
                args: &args,
                no_log,
                grant: None,
                result: &result,
            },
        );
    }
    result
}

/// Writes one module run to the audit log, when there is one; a failed write is a
/// warning, never a failed task.
fn audit(run: &Run, entry: &policy::audit_log::Entry<'_>) {
    if let Some(log) = &run.audit_log
        && let Err(e) = log.record(entry)
    {
        run.callback
            .warning(&format!("cannot write to the audit log: {e}"));
    }
}
