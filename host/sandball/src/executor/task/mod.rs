//! One task on one host: run (over its loop's items, each with its `until` retries and
//! attempts), registered and reported; the task's tags, banner name and variables.
//! Beneath it, each file using only those below it: [`loops`]; `retries` (`until`);
//! `attempt` (the action with its templated arguments, within its `timeout`;
//! `changed_when`/`failed_when`; the facts a result carries); `background`
//! (`async`/`poll`); [`args`] (the templated arguments, `module_defaults` filled in);
//! [`reports`] (what the callback is told); [`keywords`] (keyword coercion, the
//! conditions, `module_defaults`).

pub(crate) mod args;
pub(crate) mod attempt;
mod background;
mod implicit;
pub(crate) mod keywords;
pub(crate) mod loops;
pub(crate) mod reports;
mod retries;

use self::attempt::registered;
use self::loops::{IGNORE_ERRORS, IGNORE_UNREACHABLE, run_loop};
use self::reports::{Banner, no_log_default, origin, show_banner, show_warnings, shown};
use self::retries::run_once;
use super::Run;
use crate::executor::coerce::keyword_bool;
use crate::playbook::{Chain, Keyword, Task};
use crate::plugins::action::{self, FactLayer};
use crate::plugins::callback::{Report, Status};
use crate::template::Vars;
use crate::vars::PlayScope;
use sandball_pycompat::pyops::py_truth;
use serde_json::{Map, Value};
use std::collections::BTreeSet;

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
    /// A loop's items as its runs saw them, trust marks and all (see
    /// [`register_loop`]).
    pub items: Vec<Value>,
    /// The values of the task's register projections (ansible-core 2.21).
    pub projected: Map<String, Value>,
}

/// Whether `-t`/`--skip-tags` select the task whose keywords are `kw` (its tags and
/// those of its play and blocks), as ansible-core decides: a task without tags is
/// `untagged`; `always` runs unless skipped by name, `never` only when asked for by
/// name; `all` and `tagged` select (and skip) any other.
pub fn selected_by_tags(run: &Run, play_vars: &Map<String, Value>, kw: &Chain<'_>) -> bool {
    let opts = &run.options;
    let own = tags(run, play_vars, kw);
    let untagged = own.is_empty();
    let has = |t: &str| {
        if untagged {
            t == "untagged"
        } else {
            own.contains(t)
        }
    };
    let named = |list: &[String], t: &str| list.iter().any(|s| s == t);
    let all = [String::from("all")];
    let only: &[String] = if opts.tags.is_empty() {
        &all
    } else {
        &opts.tags
    };
    let selected = has("always")
        || (named(only, "all") && !has("never"))
        || only.iter().any(|t| has(t))
        || (named(only, "tagged") && !untagged && !has("never"));
    let skip = &opts.skip_tags;
    let skipped = if named(skip, "all") {
        !has("always") || named(skip, "always")
    } else {
        skip.iter().any(|t| has(t)) || (named(skip, "tagged") && !untagged)
    };
    selected && !skipped
}

/// The task's tags, its own and inherited, those written as templates rendered with
/// the play's variables (and the extra vars), as ansible-core renders them when it picks
/// the tasks to run: a template may give a list (a text is one tag, commas and all).
/// One that cannot be rendered stays as written.
pub fn tags(run: &Run, play_vars: &Map<String, Value>, kw: &Chain<'_>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut vars = None;
    for tag in kw.tags() {
        if !crate::template::is_template(tag) {
            out.insert(tag.to_string());
            continue;
        }
        let vars = vars.get_or_insert_with(|| run.vars.play_level(play_vars));
        let text = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_string);
        match run.templar.template(&Value::String(tag.to_string()), vars) {
            Ok(Value::Array(items)) => out.extend(items.iter().map(text)),
            Ok(Value::String(s)) => {
                out.insert(s);
            }
            Ok(other) => {
                out.insert(text(&other));
            }
            Err(_) => {
                out.insert(tag.to_string());
            }
        }
    }
    out
}

/// The task's banner name: its templated `name` (one that cannot be templated shown
/// with its errors in place, and warned about), else its action; a role's task is
/// `role : name`.
pub fn display_name(
    run: &Run,
    scope: &PlayScope<'_>,
    t: &Task,
    host: &str,
    kw: &Chain<'_>,
) -> String {
    // An `include_role` task is shown as itself, not as a task of the role it is in;
    // unnamed, as `include_role : ROLE`.
    let include_role = sandball_pycompat::fqcn::short_name(&t.action) == "include_role";
    let name = match &t.name {
        None if include_role => {
            let role = ["name", "role", "_raw_params"]
                .iter()
                .find_map(|k| t.args.get(*k))
                .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
                .unwrap_or_default();
            format!("{} : {role}", t.action)
        }
        None => t.action.clone(),
        Some(name) if !crate::template::is_template(name) => name.clone(),
        Some(name) => {
            let vars = task_vars(run, scope, host, kw);
            match run.templar.template(&Value::String(name.clone()), &vars) {
                Ok(Value::String(s)) => s,
                Ok(other) => other.to_string(),
                // Shown with its errors in place, and warned about, as ansible-core
                // 2.19 shows a name it cannot template.
                Err(_) => {
                    let marked = run.templar.render_marked(name, &vars);
                    if let Some(warning) = marked.warning() {
                        let origin = t
                            .name_location
                            .as_ref()
                            .map(|at| format!("\n{}", at.origin_block(true)))
                            .unwrap_or_default();
                        run.callback.warning(&format!("{warning}{origin}"));
                    }
                    marked.text
                }
            }
        }
    };
    match kw.role() {
        Some(role) if !include_role => format!("{} : {name}", role.shown_name()),
        _ => name,
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
            run.vars.task_vars(&inventory, host, scope, &[], None, &[])
        };
        let (layer, errors) = files.layer(&run.templar, host, &below);
        for e in errors {
            run.callback.warning(&e);
        }
        layer
    });
    // Role vars (every role's of the play, then the task's own role's dependencies'
    // and its own) sit above `vars_files`, below block and task vars.
    let role = kw.role();
    // A role exports its dependencies' vars with its own; the task's own role sees
    // those of the roles above it too, beneath its own.
    let role_vars = scope
        .roles
        .iter()
        .filter(|r| r.public)
        .flat_map(|r| [&r.dependency_vars, &r.vars])
        .chain(
            role.into_iter()
                .flat_map(|r| [&r.inherited.vars, &r.dependency_vars, &r.vars]),
        );
    layers.splice(0..0, files_layer.iter().chain(role_vars));
    let mut vars = run
        .vars
        .task_vars(&inventory, host, scope, &layers, role, &kw.include_params());
    let parents = kw.parent_roles();
    if !parents.is_empty() {
        let list = |f: &dyn Fn(&crate::playbook::roles::Role) -> String| {
            Value::Array(parents.iter().map(|r| Value::String(f(r))).collect())
        };
        vars.set_data("ansible_parent_role_names", list(&|r| r.name.clone()));
        vars.set_data(
            "ansible_parent_role_paths",
            list(&|r| r.path.display().to_string()),
        );
    }
    // Where the task's relative files are searched, as ansible-core's search path has
    // it: its role and the roles above it, its own file's directory, the playbook's.
    if let Some(dir) = kw.task_dir() {
        let dir = if dir.as_os_str().is_empty() {
            std::env::current_dir().unwrap_or_default()
        } else {
            std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf())
        };
        let playbook_dir = match vars.get("playbook_dir") {
            Some(
                crate::template::Var::Trusted(Value::String(d))
                | crate::template::Var::Data(Value::String(d)),
            ) => Some(std::path::PathBuf::from(d)),
            _ => None,
        };
        let mut search: Vec<std::path::PathBuf> = Vec::new();
        for path in kw
            .role()
            .into_iter()
            .chain(kw.parent_roles())
            .map(|r| r.path.clone())
            .chain([dir])
            .chain(playbook_dir)
        {
            if !search.contains(&path) {
                search.push(path);
            }
        }
        let search = search
            .iter()
            .map(|p| Value::String(p.display().to_string()))
            .collect();
        vars.set_data("ansible_search_path", Value::Array(search));
    }
    // A task sees how its host is reached, as Ansible's play context fills it in:
    // `ansible_host` (the host's name unless set) and `ansible_connection`.
    if !vars.contains("ansible_host") {
        vars.set_data("ansible_host", Value::String(host.to_string()));
    }
    if !vars.contains("ansible_connection") {
        let connection = match kw.nearest(Keyword::Connection) {
            Some(Value::String(c)) if !c.contains("{{") => c.clone(),
            _ => run
                .options
                .connection
                .clone()
                .unwrap_or_else(|| "ssh".into()),
        };
        vars.set_data("ansible_connection", Value::String(connection));
    }
    // A delegated task sees the host it is delegated to: `ansible_delegated_vars`
    // holds that host's variables under its name, as in Ansible.
    if kw.nearest(Keyword::DelegateTo).is_some()
        && let Ok(Some(other)) = super::context::delegated_to(run, kw, &vars)
    {
        // Ansible's carries the other host's reach (`ansible_host`, `_port`, `_user`,
        // its short name) and, oddly, the task's own host as `inventory_hostname`.
        let mut theirs = inventory.host_vars(&other);
        theirs
            .entry("ansible_host")
            .or_insert_with(|| Value::String(other.clone()));
        for unset in ["ansible_port", "ansible_user"] {
            theirs.entry(unset).or_insert(Value::Null);
        }
        theirs.insert("inventory_hostname".into(), Value::String(host.to_string()));
        let short = other.split('.').next().unwrap_or(&other).to_string();
        theirs.insert("inventory_hostname_short".into(), Value::String(short));
        let mut delegated = serde_json::Map::new();
        delegated.insert(other, Value::Object(theirs));
        vars.set_data("ansible_delegated_vars", Value::Object(delegated));
    }
    vars
}

/// Runs a task on one host and reports it.
pub async fn run_on_host(
    run: &Run,
    scope: &PlayScope<'_>,
    t: &Task,
    kw: &Chain<'_>,
    host: &str,
    banner: Option<Banner<'_>>,
) -> HostOutcome {
    run.callback.host_start(host);
    let vars = task_vars(run, scope, host, kw);
    // A no_log that cannot be worked out hides the result: secrets stay hidden.
    let no_log = keyword_bool(run, &vars, kw, Keyword::NoLog, no_log_default()).unwrap_or(true);
    let mut items = Vec::new();
    let mut last_vars = None;
    let mut result = match &t.loop_ {
        None => run_once(run, t, kw, host, &vars, no_log).await,
        Some(spec) => {
            let last = Some(&mut last_vars);
            run_loop(
                run, t, kw, host, &vars, spec, no_log, banner, &mut items, last,
            )
            .await
        }
    };
    let inject = crate::compat::core().at_least(21) && inject_invocation(run, &vars);
    if crate::compat::core().at_least(21) && !inject {
        without_invocation(&mut result);
    }
    let last = last_vars.as_ref().unwrap_or(&vars);
    let projected = match implicit::project(run, t, last, registered(&result)) {
        Ok(values) => values,
        Err(e) => {
            result.insert("failed".into(), Value::Bool(true));
            result.insert("msg".into(), Value::String(e));
            Map::new()
        }
    };
    // `register` keeps no `invocation` (a loop's items keep theirs), as in ansible-core
    // 2.19; 2.21 keeps what `INJECT_INVOCATION` gave it.
    let mut kept = registered(&result);
    if !inject {
        kept.remove("invocation");
    }
    register_loop(run, t, host, &kept, &items);
    register_projections(run, host, &projected);
    let status = Status::of(&result);
    let ignore = |k| keyword_bool(run, &vars, kw, k, false).unwrap_or_default();
    let ignored = match status {
        // A loop's says, under 2.21, whether any item's held. One that cannot be
        // read: ansible-core 2.19 judges the template's text, which is true; 2.21
        // takes it as false.
        Status::Failed => match result.get(IGNORE_ERRORS) {
            Some(Value::Bool(ignored)) => *ignored,
            _ => keyword_bool(run, &vars, kw, Keyword::IgnoreErrors, false)
                .unwrap_or(!crate::compat::core().at_least(21)),
        },
        // A loop's says whether its unreachable items were all ignored.
        Status::Unreachable => match result.get(IGNORE_UNREACHABLE) {
            Some(Value::Bool(ignored)) => *ignored,
            _ => ignore(Keyword::IgnoreUnreachable),
        },
        _ => false,
    };
    let changed = result.get("changed").is_some_and(py_truth);
    run.stats.record(host, status, ignored, changed);
    let failure =
        (status == Status::Failed && !ignored).then(|| registered(&shown(no_log, &result)));
    // A loop whose items could not be worked out ends with no item shown: its result
    // is shown as a task's. A loop's whole result is for the callbacks that keep
    // results; the stdout ones show it, and so its banner, only when it was ignored,
    // skipped or unreachable (`Report::shown`).
    let looped = t.loop_.is_some() && result.contains_key("results");
    let shown = shown(no_log, &result);
    if !looped || ignored || matches!(status, Status::Skipped | Status::Unreachable) {
        show_banner(run, banner);
    }
    show_warnings(run, Some(&t.location));
    run.callback.result(&Report {
        host,
        action: &t.action,
        status,
        result: &shown,
        item: None,
        ignored,
        looped,
        origin: Some(origin(run, t, kw, &vars)),
    });
    HostOutcome {
        status,
        ignored,
        failure,
        registered: kept,
        items,
        projected,
    }
}

/// Whether ansible-core 2.21's `INJECT_INVOCATION` asks for `invocation` in results:
/// `ansible_inject_invocation`, else `ANSIBLE_INJECT_INVOCATION`, else not.
fn inject_invocation(run: &Run, vars: &Vars) -> bool {
    if !vars.contains("ansible_inject_invocation") {
        return crate::config::settings().flag("ANSIBLE_INJECT_INVOCATION", false);
    }
    run.templar
        .template(
            &Value::String("{{ ansible_inject_invocation }}".into()),
            vars,
        )
        .ok()
        .and_then(|v| sandball_pycompat::boolean::truthy(Some(&v), false).ok())
        .unwrap_or(false)
}

/// A result (and its loop items') without `invocation`, as ansible-core 2.21's modules
/// give it unless asked.
fn without_invocation(result: &mut Map<String, Value>) {
    result.remove("invocation");
    if let Some(Value::Array(items)) = result.get_mut("results") {
        for item in items {
            if let Value::Object(item) = item {
                item.remove("invocation");
            }
        }
    }
}

/// Registers the values of a task's register projections for `host` (data, as any
/// registered result).
pub(crate) fn register_projections(run: &Run, host: &str, values: &Map<String, Value>) {
    for (name, value) in values {
        run.vars.register(host, name, value.clone(), false);
    }
}

/// What a `meta` task asks for (`refresh_inventory`, `flush_handlers`, ...).
pub(crate) fn meta_action(t: &Task) -> Option<&str> {
    (sandball_pycompat::fqcn::short_name(&t.action) == "meta")
        .then(|| t.args.get("_raw_params").and_then(Value::as_str))
        .flatten()
}

/// Keeps a task's result under its `register` name for `host`: data, but for the
/// results of actions whose facts are variables (`set_fact`, `include_vars`), whose
/// facts keep their trust, as in ansible-core 2.19.
pub(crate) fn register(run: &Run, t: &Task, host: &str, result: &Map<String, Value>) {
    register_loop(run, t, host, result, &[]);
}

/// [`register`] for a loop's result, whose `results[i].item` is `items[i]` — the loop
/// variable as the item's run saw it, marked untrusted where it is — so an item
/// written in the playbook stays trusted in the registered result, as ansible-core
/// 2.19 keeps the item's own trust (`assert: {that: "{{ item.item.checks }}"}` over a
/// registered loop). Everything else in the result is data.
pub(crate) fn register_loop(
    run: &Run,
    t: &Task,
    host: &str,
    result: &Map<String, Value>,
    items: &[Value],
) {
    let Some(name) = &t.register else {
        return;
    };
    let facts_trusted = match action::find(&t.action).fact_layer() {
        FactLayer::Facts => false,
        FactLayer::SetFact | FactLayer::IncludeVars => true,
    };
    if !facts_trusted && items.is_empty() {
        run.vars
            .register(host, name, Value::Object(result.clone()), false);
        return;
    }
    let mut kept = with_trusted_facts(result, facts_trusted);
    if let Some(Value::Array(results)) = kept.get_mut("results") {
        for (r, item) in results.iter_mut().zip(items) {
            if let Value::Object(r) = r
                && r.contains_key("item")
            {
                r.insert("item".into(), item.clone());
            }
        }
    }
    run.vars.register(host, name, Value::Object(kept), true);
}

/// A result with everything but (when `facts` says so) its `ansible_facts` (a loop's
/// items' too) marked `!unsafe`.
fn with_trusted_facts(result: &Map<String, Value>, facts: bool) -> Map<String, Value> {
    result
        .iter()
        .map(|(k, v)| {
            let v = match (k.as_str(), v) {
                ("ansible_facts", kept) if facts => kept.clone(),
                ("results", Value::Array(items)) => items
                    .iter()
                    .map(|item| match item {
                        Value::Object(item) => Value::Object(with_trusted_facts(item, facts)),
                        other => crate::template::untrusted(other.clone()),
                    })
                    .collect(),
                (_, other) => crate::template::untrusted(other.clone()),
            };
            (k.clone(), v)
        })
        .collect()
}
