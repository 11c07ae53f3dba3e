//! One task on one host: loop items, `when`, templating the arguments, the action,
//! `changed_when`/`failed_when`, `until`/`retries`, `register`, `no_log`, and the
//! reports to the callback.

use super::context::{Background, TaskContext, delegated_to};
use super::resolve::{DefaultsRole, same_action};
use super::{Run, loops};
use crate::playbook::{Chain, Keyword, LoopKind, Task};
use crate::plugins::action::{
    self, Cause, Context, FactLayer, Failure, Runs, TaskFailure, integer, raised, task_failed,
    truthy,
};
use crate::plugins::callback::{Report, Status};
use crate::template::{OMIT, Vars};
use crate::vars::PlayScope;
use sandball_wire::python::py_truth;
use serde_json::{Map, Value, json};
use std::collections::{BTreeSet, HashSet};

/// What is shown for the item of a `no_log` loop's result.
const CENSORED_ITEM: &str = "(censored due to no_log)";

/// The message that replaces a `no_log` result.
pub const CENSORED: &str =
    "the output has been hidden due to the fact that 'no_log: true' was specified for this result";

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

/// Whether a handler (of `role`, if any) was notified by name, by `role : name`, or by
/// one of its `listen` topics.
pub fn handler_matches(
    h: &Task,
    role: Option<&crate::playbook::roles::Role>,
    notified: &HashSet<String>,
) -> bool {
    let named = |n: &String| {
        notified.contains(n)
            || role.is_some_and(|r| {
                std::iter::once(&r.name)
                    .chain(&r.fqcn)
                    .any(|r| notified.contains(&format!("{r} : {n}")))
            })
    };
    h.name.as_ref().is_some_and(named) || h.listen.iter().any(named)
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
    let include_role = crate::assemble::component::short_name(&t.action) == "include_role";
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

/// Whether a keyword's value templates to `omit`: that level then does not set it,
/// and the keyword is inherited from the levels around it, as in Ansible.
pub(crate) fn omitted(run: &Run, vars: &Vars, v: &Value) -> bool {
    matches!(v, Value::String(s) if s.contains("omit") && crate::template::is_template(s))
        && matches!(run.templar.template(v, vars), Ok(Value::String(s)) if s == OMIT)
}

/// The value of keyword `k` that applies to the task: the innermost level's that sets
/// it, levels that set it to `omit` aside.
pub(crate) fn keyword<'a>(run: &Run, vars: &Vars, kw: &Chain<'a>, k: Keyword) -> Option<&'a Value> {
    kw.nearest_where(k, |v| !omitted(run, vars, v))
}

/// Keyword `k` (see [`keyword`]) templated and read as a boolean.
pub(crate) fn keyword_bool(
    run: &Run,
    vars: &Vars,
    kw: &Chain<'_>,
    k: Keyword,
    default: bool,
) -> Result<bool, String> {
    match keyword(run, vars, kw, k) {
        None => Ok(default),
        Some(v) => {
            let t = run
                .templar
                .template(v, vars)
                .map_err(|e| keyword_error(k.name(), &e))?;
            truthy(Some(&t), default).map_err(|_| keyword_type_error(k.name(), &t, "bool"))
        }
    }
}

/// ansible-core's words for a keyword whose template failed.
fn keyword_error(name: &str, e: &crate::template::TemplateError) -> String {
    format!("Error processing keyword '{name}': {}", e.cause())
}

/// A keyword of ansible-core's `int` type (`retries`, `timeout`, `async`, `poll`),
/// templated: a whole number or text of one; errors worded as ansible-core's.
fn keyword_int(run: &Run, vars: &Vars, name: &str, spec: &Value) -> Result<i64, String> {
    let v = run
        .templar
        .template(spec, vars)
        .map_err(|e| keyword_error(name, &e))?;
    integer(&v).ok_or_else(|| keyword_type_error(name, &v, "int"))
}

/// A keyword of ansible-core's `float` type (`delay`, `loop_control.pause`), templated:
/// a number or text of one; errors worded as ansible-core's.
fn keyword_float(run: &Run, vars: &Vars, name: &str, spec: &Value) -> Result<f64, String> {
    let v = run
        .templar
        .template(spec, vars)
        .map_err(|e| keyword_error(name, &e))?;
    v.as_f64()
        .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
        .ok_or_else(|| keyword_type_error(name, &v, "float"))
}

/// ansible-core's words for a keyword whose value is not of its type (`int`, `float`).
fn keyword_type_error(name: &str, value: &Value, kind: &str) -> String {
    format!(
        "Error processing keyword '{name}': The value {} could not be converted to '{kind}'.",
        sandball_wire::python::py_repr(value)
    )
}

/// Under the `free` strategy, the banner a task's results are shown under: shown before
/// a result when another task's banner was shown last, as ansible-playbook's output
/// has it when hosts run ahead of each other.
#[derive(Clone, Copy)]
pub struct Banner<'a> {
    /// The task whose banner was shown last (shared by the play's hosts).
    pub last: &'a std::sync::Mutex<Option<usize>>,
    /// This task.
    pub task: usize,
    /// Its banner's name.
    pub name: &'a str,
    /// Whether it is a handler.
    pub handler: bool,
}

/// Shows the task's banner when the free strategy's last one was another task's.
pub(super) fn show_banner(run: &Run, banner: Option<Banner<'_>>) {
    let Some(b) = banner else { return };
    let mut last = b.last.lock().unwrap_or_else(|e| e.into_inner());
    if *last != Some(b.task) {
        run.callback.task_start(b.name, b.handler);
        *last = Some(b.task);
    }
}

/// Where a loop's result says whether its unreachable items were all ignored (dropped
/// with the other `_ansible_` keys before it is registered or shown).
const IGNORE_UNREACHABLE: &str = "_ansible_ignore_unreachable";

/// Runs a task on one host and reports it.
pub async fn run_on_host(
    run: &Run,
    scope: &PlayScope<'_>,
    t: &Task,
    kw: &Chain<'_>,
    host: &str,
    banner: Option<Banner<'_>>,
) -> HostOutcome {
    let vars = task_vars(run, scope, host, kw);
    // A no_log that cannot be worked out hides the result: secrets stay hidden.
    let no_log = keyword_bool(run, &vars, kw, Keyword::NoLog, no_log_default()).unwrap_or(true);
    let result = match &t.loop_ {
        None => run_once(run, t, kw, host, &vars, no_log).await,
        Some(spec) => run_loop(run, t, kw, host, &vars, spec, no_log, banner).await,
    };
    // `register` keeps no `invocation` (a loop's items keep theirs), as in ansible-core.
    let mut kept = registered(&result);
    kept.remove("invocation");
    register(run, t, host, &kept);
    let status = Status::of(&result);
    let ignore = |k| keyword_bool(run, &vars, kw, k, false).unwrap_or_default();
    let ignored = match status {
        Status::Failed => ignore(Keyword::IgnoreErrors),
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
    // is shown as a task's.
    let no_items = t.loop_.is_some() && !result.contains_key("results");
    if t.loop_.is_none() || no_items {
        let shown = shown(no_log, &result);
        show_banner(run, banner);
        show_warnings(run, Some(&t.location));
        run.callback.result(&Report {
            host,
            action: &t.action,
            status,
            result: &shown,
            item: None,
            ignored,
            looped: false,
            origin: Some(origin(run, t, kw, &vars)),
        });
    } else {
        // The loop's whole result, for the callbacks that keep results; the stdout
        // ones show it only when it was ignored, skipped or unreachable
        // (`Report::shown`).
        let shown = shown(no_log, &result);
        if ignored || matches!(status, Status::Skipped | Status::Unreachable) {
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
            looped: true,
            origin: Some(origin(run, t, kw, &vars)),
        });
    }
    HostOutcome {
        status,
        ignored,
        failure,
        registered: kept,
    }
}

/// Shows the warnings and deprecations templating or reading the playbook gave
/// (`errors='warn'` lookups) before the result they came with, as ansible-core shows
/// them when they happen; one about a text of `task`'s with that text's origin.
pub(super) fn show_warnings(run: &Run, task: Option<&crate::playbook::Location>) {
    use crate::playbook::value_origin::{Written, find};
    let origin = |about: &Option<crate::template::About>| -> Option<String> {
        let written = match about.as_ref()? {
            crate::template::About::Text(text) => Written::Text(text),
            crate::template::About::Part(part) => Written::Part(part),
        };
        let at = find(task?, &[written]).into_iter().next()??;
        Some(at.origin_block(true))
    };
    let mut notices = crate::template::take_warnings();
    // A task's deprecations come with its result, after its warnings: ansible-core's
    // worker shows warnings as they happen and sends deprecations with the result.
    if task.is_some() {
        notices.sort_by_key(|n| matches!(n, crate::template::Notice::Deprecation(_)));
    }
    for notice in notices {
        match notice {
            crate::template::Notice::Warning(w) => {
                // The origin follows the warning's first line.
                let text = match (origin(&w.written), w.text.split_once('\n')) {
                    (Some(block), Some((first, rest))) => format!("{first}\n{block}{rest}"),
                    (Some(block), None) => format!("{}\n{block}", w.text),
                    (None, _) => w.text,
                };
                run.callback.warning(&text);
            }
            crate::template::Notice::Deprecation(mut d) => {
                if let Some(block) = origin(&d.written) {
                    d.detail = format!("\n{block}{}", d.detail);
                }
                if let Some((_, line)) = crate::plugins::action::summaries::core_deprecation(&d) {
                    run.callback.deprecation(&line);
                }
            }
        }
    }
}

/// Where the task is written and whether a module does its work, for the error block
/// shown before a failure.
fn origin<'a>(
    run: &Run,
    t: &'a Task,
    kw: &Chain<'_>,
    vars: &Vars,
) -> crate::plugins::callback::Origin<'a> {
    crate::plugins::callback::Origin {
        location: &t.location,
        diff: keyword_bool(run, vars, kw, Keyword::Diff, run.options.diff)
            .unwrap_or(run.options.diff),
        module: module_works(t),
    }
}

/// Whether a module does the task's work (its failure is then the module's).
fn module_works(t: &Task) -> bool {
    matches!(
        action::find(&t.action).runs(&t.action),
        Runs::Module { .. } | Runs::Chosen
    )
}

/// The result `register` stores: without internal keys (at any depth).
fn registered(result: &Map<String, Value>) -> Map<String, Value> {
    let mut r = action::without_internal_keys(result);
    with_failed_flag(&mut r);
    r
}

/// A result that ran (was not skipped, is not a loop's summary) says whether it
/// failed, as Ansible's registered results do.
fn with_failed_flag(r: &mut Map<String, Value>) {
    if !r.contains_key("results") && !r.get("skipped").is_some_and(py_truth) {
        r.entry("failed").or_insert(Value::Bool(false));
    }
}

/// Whether a task that sets no `no_log` is `no_log`: the `no_log` setting
/// (`ANSIBLE_NO_LOG`, ansible.cfg's `no_log`), off unless set.
pub fn no_log_default() -> bool {
    action::env_flag("ANSIBLE_NO_LOG", false)
}

/// What is shown of a result: all of it, or only its outcome when the task is
/// `no_log` or the result asks to be hidden (`_ansible_no_log`, which an action plugin
/// may return).
fn shown(no_log: bool, result: &Map<String, Value>) -> Map<String, Value> {
    if no_log || result.get("_ansible_no_log").is_some_and(py_truth) {
        censor(result)
    } else {
        result.clone()
    }
}

/// What is shown of a `no_log` result.
fn censor(result: &Map<String, Value>) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("censored".into(), Value::String(CENSORED.into()));
    for k in [
        "changed",
        "failed",
        "skipped",
        "unreachable",
        action::FAILURE,
    ] {
        if let Some(v) = result.get(k) {
            m.insert(k.into(), v.clone());
        }
    }
    // How it failed stays known to the `[ERROR]` line, which shows no message: an
    // error the executor or the action raised is worded "Task failed: …".
    let raised = result
        .get("msg")
        .and_then(Value::as_str)
        .is_some_and(|msg| msg.starts_with("Task failed: "));
    if raised && !m.contains_key(action::FAILURE) {
        action::Failure::Raised.mark(&mut m);
    }
    m
}

/// A loop's items (`spec` templated, then expanded as its `loop`/`with_*` keyword says),
/// each with the variables its run sees (the item's [`LoopItem::loop_vars`] over the
/// task's).
pub(crate) fn loop_items(
    run: &Run,
    t: &Task,
    vars: &Vars,
    spec: &Value,
) -> Result<Vec<LoopItem>, TaskFailure> {
    let templated = match (t.loop_kind.lookup(), spec) {
        // `with_first_found` passes over the undefined values in its terms, at any
        // depth (a mapping loses the key), as ansible-core's does; terms that are
        // undefined as a whole are the error they are.
        (Some("first_found"), _) => match run.templar.template_omitting_undefined(spec, vars) {
            Ok(Some(terms)) => Ok(terms),
            Ok(None) => run.templar.template(spec, vars),
            Err(e) => Err(e),
        },
        _ => run.templar.template(spec, vars),
    };
    let items = templated
        // Worded as ansible-core 2.19 words a loop's failure, which comes from the
        // loop's value.
        .map_err(|e| match e {
            crate::template::TemplateError::Undefined { .. } => TaskFailure {
                msg: format!("Task failed: {}", e.cause()),
                cause: Cause::loop_value(
                    &e,
                    t.loop_kind
                        .lookup()
                        .map_or_else(|| "loop".into(), |l| format!("with_{l}")),
                ),
            },
            _ => e.cause().into(),
        })
        .and_then(|v| {
            let ctx = crate::template::lookups::TaskLookup {
                templar: &run.templar,
                vars,
                loop_action: Some(&t.action),
            };
            loops::items(&t.loop_kind, v, &ctx).map_err(TaskFailure::from)
        })?;
    let mut control = t.loop_control.clone().unwrap_or_default();
    // `loop_var` and `index_var` may be templated.
    let name = |n: &str| -> Result<String, String> {
        run.templar
            .template(&Value::String(n.to_string()), vars)
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
            .map_err(|e| e.to_string())
    };
    control.loop_var = name(&control.loop_var)?;
    if let Some(iv) = &control.index_var {
        control.index_var = Some(name(iv)?);
    }
    let flag = |v: &Option<Value>, default: bool| match v {
        None => Ok(default),
        Some(v) => run
            .templar
            .template(v, vars)
            .map_err(|e| e.to_string())
            .and_then(|v| truthy(Some(&v), default)),
    };
    let extended = flag(&control.extended, false)?;
    let allitems = flag(&control.extended_allitems, true)?;
    Ok((0..items.len())
        .map(|index| {
            let mut loop_vars = Map::new();
            loop_vars.insert(control.loop_var.clone(), items[index].clone());
            if let Some(iv) = &control.index_var {
                loop_vars.insert(iv.clone(), json!(index));
                loop_vars.insert("ansible_index_var".into(), Value::String(iv.clone()));
            }
            loop_vars.insert(
                "ansible_loop_var".into(),
                Value::String(control.loop_var.clone()),
            );
            if extended {
                let len = items.len();
                let mut info = json!({
                    "index": index + 1,
                    "index0": index,
                    "revindex": len - index,
                    "revindex0": len - index - 1,
                    "first": index == 0,
                    "last": index + 1 == len,
                    "length": len,
                });
                if allitems {
                    info["allitems"] = Value::Array(items.clone());
                }
                if index > 0 {
                    info["previtem"] = items[index - 1].clone();
                }
                if index + 1 < len {
                    info["nextitem"] = items[index + 1].clone();
                }
                loop_vars.insert("ansible_loop".into(), info);
            }
            let mut item_vars = vars.clone();
            for (name, value) in &loop_vars {
                item_vars.set_data(name, value.clone());
            }
            item_vars.set_trusted(
                &control.loop_var,
                loop_value(run, &t.loop_kind, spec, vars, &items, index),
            );
            LoopItem {
                item: items[index].clone(),
                vars: item_vars,
                loop_vars,
            }
        })
        .collect())
}

/// The value of the loop variable for item `index`, its text marked untrusted where
/// ansible-core 2.19 has it untrusted: text templating made (see
/// [`crate::template::Templar::mark_untrusted`]); a `loop` list written out is followed
/// item by item, a value passed through unchanged (by `loop`, `with_list` or
/// `with_items`) stays trusted, what other lookups give is data.
fn loop_value(
    run: &Run,
    kind: &LoopKind,
    spec: &Value,
    vars: &Vars,
    items: &[Value],
    index: usize,
) -> Value {
    let item = &items[index];
    match (kind, spec) {
        (LoopKind::Loop, Value::Array(raw)) if raw.len() == items.len() => {
            run.templar.mark_untrusted(&raw[index], item, vars)
        }
        (LoopKind::Loop | LoopKind::WithList | LoopKind::WithItems, spec)
            if run.templar.passes_trust(spec, vars) =>
        {
            item.clone()
        }
        _ => crate::template::untrusted(item.clone()),
    }
}

/// One item of a task's loop.
pub(crate) struct LoopItem {
    /// The item.
    pub item: Value,
    /// The variables its run sees.
    pub vars: Vars,
    /// What the loop adds to them: the item under `loop_var`, `index_var`,
    /// `ansible_loop_var`, and `ansible_loop` when `extended`.
    pub loop_vars: Map<String, Value>,
}

#[allow(clippy::too_many_arguments)]
async fn run_loop(
    run: &Run,
    t: &Task,
    kw: &Chain<'_>,
    host: &str,
    vars: &Vars,
    spec: &Value,
    no_log: bool,
    banner: Option<Banner<'_>>,
) -> Map<String, Value> {
    let items = match loop_items(run, t, vars, spec) {
        Ok(items) => items,
        // A loop that cannot be templated is skipped when the task's `when` (without
        // an item) does not hold, as in Ansible.
        Err(e) => {
            return match when_stops(run, kw, vars) {
                Some(r) if r.get("skipped").is_some_and(py_truth) => r,
                _ => e.result(),
            };
        }
    };
    if items.is_empty() {
        return action::ok_with(json!({
            "skipped": true,
            "skipped_reason": "No items in the list",
            "results": [],
        }));
    }
    let control = t.loop_control.clone().unwrap_or_default();
    // Read around the task's runs: an error is the loop's, as in ansible-core.
    let pause = match control
        .pause
        .as_ref()
        .map(|p| keyword_float(run, vars, "pause", p))
    {
        None => 0.0,
        Some(Ok(secs)) if secs >= 0.0 => secs,
        Some(Ok(secs)) => {
            return raised(
                Failure::RaisedByLoop,
                format!("loop_control.pause must be a number of seconds, got {secs}"),
            );
        }
        Some(Err(e)) => return raised(Failure::RaisedByLoop, e),
    };
    let mut results = Vec::with_capacity(items.len());
    let (mut changed, mut any_failed, mut all_skipped) = (false, false, !items.is_empty());
    // Whether an item was unreachable, and whether every unreachable item's
    // `ignore_unreachable` (read with the item's variables) held: then the loop's is
    // ignored, as in ansible-core.
    let mut unreachable: Option<bool> = None;
    // What earlier items left for the later ones, as Ansible updates the loop's
    // variables after each item: facts they returned, the registered result.
    let mut carried = Carried::default();
    for (
        index,
        LoopItem {
            item,
            vars,
            loop_vars,
        },
    ) in items.iter().enumerate()
    {
        // `pause` waits between items, not before the first.
        if index > 0 && pause > 0.0 {
            tokio::time::sleep(std::time::Duration::from_secs_f64(pause)).await;
        }
        let mut with_carried;
        let item_vars = if carried.facts.is_empty() && carried.registered.is_none() {
            vars
        } else {
            with_carried = vars.clone();
            crate::vars::add_facts(&mut with_carried, &carried.facts);
            if let (Some(name), Some(r)) = (&t.register, &carried.registered) {
                with_carried.set_data(name, Value::Object(r.clone()));
            }
            &with_carried
        };
        let mut r = run_once(run, t, kw, host, item_vars, no_log).await;
        carry(t, &r, &mut carried);
        // The result says which item it was for: the loop's own variables.
        for (name, value) in loop_vars {
            r.insert(name.clone(), value.clone());
        }
        // The label sees the item's result under `register`, as in Ansible; one that
        // cannot be templated fails the item, which is then shown by its value.
        let label = match &control.label {
            Some(l) => {
                let mut label_vars = item_vars.clone();
                bind_result(&mut label_vars, t, &r);
                match run.templar.template(l, &label_vars) {
                    Ok(v) => loops::label(&v),
                    Err(e) => {
                        r.remove("skipped");
                        r.insert("failed".into(), Value::Bool(true));
                        r.insert(
                            "msg".into(),
                            Value::String(format!(
                                "Failed to template loop_control.label: {}",
                                e.detail()
                            )),
                        );
                        loops::label(item)
                    }
                }
            }
            None => loops::label(item),
        };
        let mut status = Status::of(&r);
        if status == Status::Unreachable {
            let ignored = keyword_bool(run, item_vars, kw, Keyword::IgnoreUnreachable, false)
                .unwrap_or_default();
            unreachable = Some(unreachable.unwrap_or(true) && ignored);
            // An unreachable item is shown failed, the loop unreachable.
            status = Status::Failed;
        }
        changed |= status == Status::Changed || r.get("changed").is_some_and(py_truth);
        // The loop's result is failed when an item's is, whatever `failed_when` made of
        // the item's status (it still decides the task's), as in ansible-core.
        any_failed |= r.get("failed").is_some_and(py_truth);
        all_skipped &= status == Status::Skipped;
        let shown = shown(no_log, &r);
        // A hidden result's item is hidden too: it may be the secret.
        let label = if shown.contains_key("censored") {
            CENSORED_ITEM.to_string()
        } else {
            label
        };
        show_banner(run, banner);
        show_warnings(run, Some(&t.location));
        run.callback.result(&Report {
            host,
            action: &t.action,
            status,
            result: &shown,
            item: Some(&label),
            ignored: false,
            looped: false,
            origin: Some(origin(run, t, kw, vars)),
        });
        // `break_when` ends the loop after an item, seeing its result under `register`.
        let stop = if control.break_when.is_empty() {
            Ok(false)
        } else {
            let mut check_vars = item_vars.clone();
            bind_result(&mut check_vars, t, &r);
            all_true(run, &control.break_when, &check_vars)
        };
        let mut kept = r;
        with_failed_flag(&mut kept);
        results.push(Value::Object(kept));
        match stop {
            Ok(false) => {}
            Ok(true) => break,
            Err(e) => return raised(Failure::RaisedByLoop, e),
        }
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
    if let Some(ignored) = unreachable {
        m.insert("unreachable".into(), Value::Bool(true));
        m.insert(IGNORE_UNREACHABLE.into(), Value::Bool(ignored));
    }
    m.insert("skipped".into(), Value::Bool(all_skipped));
    m.insert("results".into(), Value::Array(results));
    m
}

/// Whether the `ansible_facts` of the task's result are facts: not `debug`'s, whose
/// result shows a variable (`debug: var=ansible_facts`), as in ansible-core.
fn sets_facts(t: &Task) -> bool {
    crate::assemble::component::short_name(&t.action) != "debug"
}

/// What earlier loop items give the later ones.
#[derive(Default)]
struct Carried {
    /// The facts they returned, seen as the host's facts are (never a setting).
    facts: Map<String, Value>,
    /// The last one's result, under `register`.
    registered: Option<Map<String, Value>>,
}

/// Keeps what one loop item's result gives the items after it: its facts and, under
/// `register`, the result itself.
fn carry(t: &Task, r: &Map<String, Value>, carried: &mut Carried) {
    if sets_facts(t)
        && let Some(Value::Object(facts)) = r.get("ansible_facts")
    {
        for (k, v) in facts {
            carried.facts.insert(k.clone(), v.clone());
        }
    }
    if t.register.is_some() {
        carried.registered = Some(r.clone());
    }
}

/// The result of a task whose `when` does not hold (skipped) or cannot be evaluated
/// (failed); `None` when it holds.
pub(super) fn when_stops(run: &Run, kw: &Chain<'_>, vars: &Vars) -> Option<Map<String, Value>> {
    for cond in kw.when() {
        match run.templar.conditional(cond, vars) {
            Ok(true) => {}
            Ok(false) => {
                return Some(action::ok_with(json!({
                    "skipped": true,
                    "skip_reason": "Conditional result was False",
                    "false_condition": cond,
                })));
            }
            Err(e) => return Some(action::conditional_failed(&e, cond)),
        }
    }
    None
}

/// One run of the task (one loop item, or the task itself), with `until` retries
/// (`retries` alone: until it succeeds). A failure that says nothing gets ansible-core's
/// message for it: "Task failed: Action failed: Unknown error." (or the module's).
async fn run_once(
    run: &Run,
    t: &Task,
    kw: &Chain<'_>,
    host: &str,
    vars: &Vars,
    no_log: bool,
) -> Map<String, Value> {
    let mut r = run_retrying(run, t, kw, host, vars, no_log).await;
    if r.get("failed").is_some_and(py_truth) && !r.contains_key("msg") {
        let module = module_works(t) && Failure::of(&r) != Some(Failure::Action);
        let what = if module { "Module" } else { "Action" };
        r.insert(
            "msg".into(),
            Value::from(format!("Task failed: {what} failed: Unknown error.")),
        );
    }
    r
}

/// [`run_once`] before its message is settled.
async fn run_retrying(
    run: &Run,
    t: &Task,
    kw: &Chain<'_>,
    host: &str,
    vars: &Vars,
    no_log: bool,
) -> Map<String, Value> {
    if let Some(r) = when_stops(run, kw, vars) {
        return r;
    }
    // `retries` without `until` retries until the task succeeds, as in ansible-core.
    if t.until.is_none() && t.retries.is_none() {
        let how = Attempt {
            no_log,
            number: None,
        };
        return attempt_in_time(run, t, kw, host, vars, how).await;
    }
    let retries = match t
        .retries
        .as_ref()
        .map(|r| keyword_int(run, vars, "retries", r))
    {
        None => 3,
        // A negative count is no retry, as ansible-core takes it.
        Some(Ok(n)) => u64::try_from(n).unwrap_or_default(),
        Some(Err(e)) => return task_failed(e),
    };
    let delay = match t
        .delay
        .as_ref()
        .map(|d| keyword_float(run, vars, "delay", d))
    {
        None => 5.0,
        Some(Ok(secs)) => secs,
        Some(Err(e)) => return task_failed(e),
    };
    let mut attempts = 0;
    loop {
        attempts += 1;
        let how = Attempt {
            no_log,
            number: Some(attempts),
        };
        let mut r = attempt_in_time(run, t, kw, host, vars, how).await;
        let mut check_vars = vars.clone();
        bind_result(&mut check_vars, t, &r);
        // An `until` that cannot be evaluated fails the task at once, as in ansible-core.
        let done = match &t.until {
            Some(until) => match run.templar.conditional(until, &check_vars) {
                Ok(holds) => holds,
                Err(e) => return action::conditional_failed(&e, until),
            },
            None => !r.get("failed").is_some_and(py_truth),
        };
        if done {
            r.remove("failed");
            return r;
        }
        if attempts > retries {
            // Out of retries: failed, however `failed_when` judged the last attempt (its
            // verdict still decides how the task is reported), and with ansible-core's
            // count of attempts, the retries asked for.
            r.insert("failed".into(), Value::Bool(true));
            r.insert("attempts".into(), json!(retries));
            r.entry("exception")
                .or_insert_with(|| Value::String(NO_TRACEBACK.into()));
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

/// `set_fact`'s templated arguments with the text templating made marked `!unsafe`, so
/// that its facts keep ansible-core 2.19's trust: what the task wrote, or passed through
/// from a trusted variable, stays trusted.
fn with_trust_marks(
    run: &Run,
    t: &Task,
    vars: &Vars,
    args: Map<String, Value>,
) -> Map<String, Value> {
    args.into_iter()
        .map(|(k, v)| {
            let marked = match t.args.get(&k) {
                Some(raw) => run.templar.mark_untrusted(raw, &v, vars),
                None => crate::template::untrusted(v),
            };
            (k, marked)
        })
        .collect()
}

/// Keeps a task's result under its `register` name for `host`: data, but for the
/// results of actions whose facts are variables (`set_fact`, `include_vars`), whose
/// facts keep their trust, as in ansible-core 2.19.
pub(crate) fn register(run: &Run, t: &Task, host: &str, result: &Map<String, Value>) {
    let Some(name) = &t.register else {
        return;
    };
    match action::find(&t.action).fact_layer() {
        FactLayer::Facts => run
            .vars
            .register(host, name, Value::Object(result.clone()), false),
        FactLayer::SetFact | FactLayer::IncludeVars => {
            run.vars
                .register(host, name, Value::Object(with_trusted_facts(result)), true)
        }
    }
}

/// A result with everything but its `ansible_facts` (a loop's items' too) marked
/// `!unsafe`.
fn with_trusted_facts(result: &Map<String, Value>) -> Map<String, Value> {
    result
        .iter()
        .map(|(k, v)| {
            let v = match (k.as_str(), v) {
                ("ansible_facts", facts) => facts.clone(),
                ("results", Value::Array(items)) => items
                    .iter()
                    .map(|item| match item {
                        Value::Object(item) => Value::Object(with_trusted_facts(item)),
                        other => crate::template::untrusted(other.clone()),
                    })
                    .collect(),
                (_, other) => crate::template::untrusted(other.clone()),
            };
            (k.clone(), v)
        })
        .collect()
}

/// Makes a result visible to `changed_when`/`failed_when`/`until` under the register
/// name, as Ansible does.
fn bind_result(vars: &mut Vars, t: &Task, r: &Map<String, Value>) {
    if let Some(name) = &t.register {
        vars.set_data(name, Value::Object(registered(r)));
    }
}

/// How one attempt of a task runs: whether its output is secret (`no_log`), and which
/// attempt of an `until` loop it is (its result's `attempts`, which `changed_when` and
/// `failed_when` see, as in ansible-core).
#[derive(Clone, Copy)]
struct Attempt {
    no_log: bool,
    number: Option<u64>,
}

/// [`attempt`] within the task's `timeout` (seconds; 0 or unset: no limit). A task
/// that runs out of time fails as Ansible's does; its module run is abandoned.
async fn attempt_in_time(
    run: &Run,
    t: &Task,
    kw: &Chain<'_>,
    host: &str,
    vars: &Vars,
    how: Attempt,
) -> Map<String, Value> {
    // The largest `timeout` ansible-core takes (its alarm's bound).
    const MAX_TIMEOUT: i64 = 100_000_000;
    let seconds = match keyword(run, vars, kw, Keyword::Timeout)
        .map(|v| keyword_int(run, vars, Keyword::Timeout.name(), v))
    {
        None => 0,
        Some(Ok(n)) if (0..=MAX_TIMEOUT).contains(&n) => n as u64,
        Some(Ok(n)) => {
            return task_failed(format!(
                "Timeout {n} is invalid, it must be between 0 and {MAX_TIMEOUT}."
            ));
        }
        Some(Err(e)) => return task_failed(e),
    };
    if let Some(spec) = &t.async_ {
        return attempt_async(run, t, kw, host, vars, how, spec).await;
    }
    if seconds == 0 {
        return attempt(run, t, kw, host, vars, how, None).await;
    }
    let limit = std::time::Duration::from_secs(seconds);
    match tokio::time::timeout(limit, attempt(run, t, kw, host, vars, how, None)).await {
        Ok(result) => result,
        Err(_) => {
            let mut r = task_failed(format!("Timed out after {seconds} second(s)."));
            r.insert(
                "timedout".into(),
                json!({"frame": TIMEOUT_FRAME, "period": seconds}),
            );
            r
        }
    }
}

/// [`attempt`] as an `async` task: a background job the shim keeps, which the executor
/// waits for ([`wait_for_job`]) unless `poll` is 0.
async fn attempt_async(
    run: &Run,
    t: &Task,
    kw: &Chain<'_>,
    host: &str,
    vars: &Vars,
    how: Attempt,
    spec: &Value,
) -> Map<String, Value> {
    // ansible-core names `async` by its attribute.
    let seconds = |v: &Value, name: &str| -> Result<u64, String> {
        let n = keyword_int(run, vars, name, v)?;
        u64::try_from(n).map_err(|_| format!("{name} must be a whole number of seconds, got {n}"))
    };
    let limit = match seconds(spec, "async_val") {
        Ok(n) => n,
        Err(e) => return task_failed(e),
    };
    let poll = match t.poll.as_ref().map(|p| seconds(p, "poll")) {
        None => DEFAULT_POLL,
        Some(Ok(n)) => n,
        Some(Err(e)) => return task_failed(e),
    };
    let plugin = action::find(&t.action);
    if !plugin.supports_async(&t.action) {
        return raised(
            Failure::Raised,
            format!("This action ({}) does not support async.", t.action),
        );
    }
    let background = Background {
        jid: format!(
            "j{}.{}",
            rand::random_range(100_000_000_000u64..1_000_000_000_000),
            std::process::id()
        ),
        limit_s: limit,
        poll_s: poll,
    };
    attempt(run, t, kw, host, vars, how, Some(&background)).await
}

/// Waits for the background job a task started (`async` with `poll` above 0), as
/// ansible-core's executor does: every `poll` seconds it asks after the job (an
/// `ASYNC POLL` line while it runs), until it finished or `async` seconds are spent;
/// a finished job's record is then removed and its result is the task's.
async fn wait_for_job(
    cx: &TaskContext<'_>,
    background: &Background,
    started: Map<String, Value>,
) -> Map<String, Value> {
    let (jid, poll) = (&background.jid, background.poll_s);
    let flag = |r: &Map<String, Value>, k: &str| r.get(k).is_some_and(py_truth);
    if poll == 0 || flag(&started, "failed") || flag(&started, "skipped") {
        return started;
    }
    if flag(&started, "finished") {
        // A job done as it started (a module run in the foreground in its place).
        cx.run.callback.async_done(cx.host, jid, true);
        return started;
    }
    if !started.contains_key("ansible_job_id") {
        // An action that started no job (a Python action plugin none of whose module
        // runs asked for `wrap_async`) fails the task, as under ansible-core.
        cx.run.callback.async_done(cx.host, "None", false);
        return raised(Failure::Action, "No job id was returned by the async task");
    }
    let mut left = background.limit_s;
    let mut status = Map::new();
    while left > 0 {
        tokio::time::sleep(std::time::Duration::from_secs(poll)).await;
        status = cx.job_status(jid, false).await;
        if ["finished", "failed", "skipped"]
            .iter()
            .any(|k| flag(&status, k))
        {
            break;
        }
        left = left.saturating_sub(poll);
        cx.run.callback.async_poll(cx.host, jid);
    }
    // Its time is up: the shim is stopping it, and says so in a moment ("Timeout
    // exceeded", as ansible-core's async wrapper records it).
    for _ in 0..GRACE_CHECKS {
        if left > 0 || flag(&status, "finished") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        status = cx.job_status(jid, false).await;
    }
    let result = if flag(&status, "finished") {
        let _ = cx.job_status(jid, true).await;
        status
    } else {
        // The executor's, not the module's, as ansible-core reports it.
        let mut r = raised(
            Failure::Action,
            format!(
                "async task did not complete within the requested time - {}s",
                background.limit_s
            ),
        );
        r.insert("async_result".into(), Value::Object(status));
        r
    };
    cx.run
        .callback
        .async_done(cx.host, jid, !flag(&result, "failed"));
    result
}

/// How many more times (100 ms apart) a job past its time limit is asked after, while
/// the shim stops it.
const GRACE_CHECKS: usize = 10;

/// Seconds between checks of an `async` task, as Ansible's default `poll`.
const DEFAULT_POLL: u64 = 15;

/// What ansible-core's timed-out result gives as `timedout.frame` when tracebacks are
/// not shown.
const TIMEOUT_FRAME: &str = "Configure `DISPLAY_TRACEBACK` to see a traceback on timeout errors.";

/// Keeps the facts a result carries for `host`: `set_fact` values, or a module's
/// `ansible_facts`.
pub(crate) fn record_facts(run: &Run, t: &Task, host: &str, result: &Map<String, Value>) {
    if let Some(Value::Object(stats)) = result.get("ansible_stats")
        && let Some(Value::Object(data)) = stats.get("data")
    {
        let per_host = stats.get("per_host").is_some_and(py_truth);
        let key = if per_host {
            host
        } else {
            crate::plugins::callback::stats::RUN_STATS
        };
        let add = stats.get("aggregate").is_none_or(py_truth);
        run.stats.set_custom(key, data, add);
    }
    if sets_facts(t)
        && let Some(Value::Object(facts)) = result.get("ansible_facts")
    {
        match action::find(&t.action).fact_layer() {
            FactLayer::SetFact => {
                run.vars.set_facts(host, facts);
                // `cacheable: true` makes them facts too (`ansible_facts.name`).
                if result.get(crate::vars::CACHEABLE).is_some_and(py_truth)
                    && let Value::Object(facts) =
                        crate::template::without_unsafe_marks(&Value::Object(facts.clone()))
                {
                    run.vars.add_module_facts(host, &facts);
                }
            }
            FactLayer::IncludeVars => run.vars.include_vars(host, facts),
            FactLayer::Facts => run.vars.add_module_facts(host, facts),
        }
    }
}

/// One attempt at the task ([`attempt_action`]), its failure marked as ansible-core 2.19
/// marks it: a failed result has an `exception` (`(traceback unavailable)` when the
/// module gave none), and one that `failed_when` forgave keeps it as
/// `failed_when_suppressed_exception`. The default callback does not show it.
async fn attempt(
    run: &Run,
    t: &Task,
    kw: &Chain<'_>,
    host: &str,
    vars: &Vars,
    how: Attempt,
    background: Option<&Background>,
) -> Map<String, Value> {
    let mut result = attempt_action(run, t, kw, host, vars, how, background).await;
    if result.get("failed").is_some_and(py_truth) {
        result
            .entry("exception")
            .or_insert_with(|| Value::String(NO_TRACEBACK.into()));
    }
    result
}

/// What ansible-core 2.19 puts in `exception` when it shows no traceback.
const NO_TRACEBACK: &str = "(traceback unavailable)";

/// The action itself (its plugin, with the task's templated arguments), then
/// `changed_when`/`failed_when`.
async fn attempt_action(
    run: &Run,
    t: &Task,
    kw: &Chain<'_>,
    host: &str,
    vars: &Vars,
    how: Attempt,
    background: Option<&Background>,
) -> Map<String, Value> {
    let plugin = action::find(&t.action);
    let mode = |k, default| keyword_bool(run, vars, kw, k, default);
    let (check_mode, diff) = match (
        mode(Keyword::CheckMode, run.options.check),
        mode(Keyword::Diff, run.options.diff),
    ) {
        (Ok(c), Ok(d)) => (c, d),
        (Err(e), _) | (_, Err(e)) => return task_failed(e),
    };
    let args = match template_args(run, t, kw, plugin.raw_args(), vars) {
        Ok(a) if plugin.fact_layer() == FactLayer::SetFact => with_trust_marks(run, t, vars, a),
        Ok(a) => a,
        Err(e) => return e.result(),
    };
    let cx = TaskContext {
        run,
        task: t,
        kw,
        host,
        vars,
        no_log: how.no_log,
        check_mode,
        diff,
        background,
    };
    let mut result = plugin.run(&cx, &t.action, args).await;
    if let Some(background) = background {
        result = wait_for_job(&cx, background, result).await;
    }
    // A delegated module's result says where it ran (`ok: [web1 -> localhost]`); its
    // facts belong to the task's host unless `delegate_facts` gives them to the other.
    let mut facts_host = host.to_string();
    if plugin.runs(&t.action) != Runs::Controller
        && let Ok(Some(other)) = delegated_to(run, kw, vars)
    {
        // Its address as the inventory gives it (`ansible_host`), else its name.
        let address = run
            .inventory()
            .host_vars(&other)
            .get("ansible_host")
            .and_then(Value::as_str)
            .filter(|a| !crate::template::is_template(a))
            .map_or_else(|| other.clone(), str::to_string);
        result.insert(
            "_ansible_delegated_vars".into(),
            json!({"ansible_host": address, "ansible_delegated_host": other}),
        );
        if keyword_bool(run, vars, kw, Keyword::DelegateFacts, false).unwrap_or(false) {
            facts_host = other;
        }
    }
    record_facts(run, t, &facts_host, &result);
    if result.get("unreachable").is_some_and(py_truth) {
        return result;
    }
    // An attempt of an `until` loop says which it is, for `changed_when`/`failed_when`.
    if let Some(n) = how.number {
        result.insert("attempts".into(), json!(n));
    }
    settle_failed(&mut result);
    let failed_before = result.get("failed").is_some_and(py_truth);
    if !t.changed_when.is_empty() || !t.failed_when.is_empty() {
        let mut check_vars = vars.clone();
        bind_result(&mut check_vars, t, &result);
        // A conditional that cannot be evaluated fails the task and keeps its result,
        // saying why under `changed_when_result`/`failed_when_result`, as Ansible does.
        let evaluated = |conds: &[Value]| {
            conds.iter().try_fold(true, |all, c| {
                if !all {
                    return Ok(false);
                }
                run.templar
                    .conditional(c, &check_vars)
                    .map_err(|e| format!("Error while evaluating conditional: {}", e.detail()))
            })
        };
        // A conditional written as a template is deprecated, and registered so.
        let (changed, changed_deprecations) =
            crate::template::deprecations_of(|| evaluated(&t.changed_when));
        let (failed, failed_deprecations) =
            crate::template::deprecations_of(|| evaluated(&t.failed_when));
        if !t.changed_when.is_empty() {
            match changed {
                Ok(b) => {
                    result.insert("changed".into(), Value::Bool(b));
                }
                Err(e) => {
                    result.insert("changed_when_result".into(), Value::String(e));
                    result.insert("failed".into(), Value::Bool(true));
                }
            }
        }
        if !t.failed_when.is_empty() {
            match failed {
                Ok(b) => {
                    result.insert("failed_when_result".into(), Value::Bool(b));
                    if b {
                        result.insert("failed".into(), Value::Bool(true));
                    } else if result.remove("failed").is_some_and(|f| py_truth(&f)) {
                        let exception = result
                            .remove("exception")
                            .unwrap_or_else(|| Value::String(NO_TRACEBACK.into()));
                        result.insert("failed_when_suppressed_exception".into(), exception);
                    }
                }
                Err(e) => {
                    result.insert("failed_when_result".into(), Value::String(e));
                    result.insert("failed".into(), Value::Bool(true));
                }
            }
        }
        crate::plugins::action::summaries::register_deprecations(
            &mut result,
            &[changed_deprecations, failed_deprecations].concat(),
        );
        // A success the conditions made a failure is the action's, whoever did the
        // work, as ansible-core reports it.
        if !failed_before && result.get("failed").is_some_and(py_truth) {
            Failure::Action.mark(&mut result);
        }
    }
    if how.no_log {
        result.insert("_ansible_no_log".into(), Value::Bool(true));
    }
    result
}

/// Whether a result failed, as ansible-core's task executor settles it: a `failed`
/// that is not a boolean by its truth; without one, an `rc` that is not 0 (nor "0",
/// as modules that report only `rc` mean it) fails it, the failure then the action's.
fn settle_failed(result: &mut Map<String, Value>) {
    match result.get("failed") {
        Some(Value::Bool(_)) => {}
        Some(f) => {
            let failed = py_truth(f);
            result.insert("failed".into(), Value::Bool(failed));
        }
        None => {
            let zero = |rc: &Value| match rc {
                Value::Bool(b) => !b,
                Value::Number(n) => n.as_f64() == Some(0.0),
                Value::String(s) => s == "0",
                _ => false,
            };
            if result.get("rc").is_some_and(|rc| !zero(rc)) {
                result.insert("failed".into(), Value::Bool(true));
                Failure::Action.mark(result);
            }
        }
    }
}

/// Whether every condition holds; why one could not be evaluated, as a loop's
/// `break_when` fails with it.
fn all_true(run: &Run, conds: &[Value], vars: &Vars) -> Result<bool, String> {
    for c in conds {
        match run.templar.conditional(c, vars) {
            Ok(true) => {}
            Ok(false) => return Ok(false),
            Err(e) => return Err(e.conditional_error()),
        }
    }
    Ok(true)
}

/// Where the loader keeps arguments given as one template.
const VARIABLE_PARAMS: &str = "_variable_params";

/// Where the loader keeps words given to an action that are not `key=value` pairs.
const RAW_PARAMS: &str = "_raw_params";

/// The task's arguments, templated (except `keep`: those its action evaluates itself),
/// without the values that are `omit`, with the defaults `module_defaults` gives.
pub(crate) fn template_args(
    run: &Run,
    t: &Task,
    kw: &Chain<'_>,
    keep: &[&str],
    vars: &Vars,
) -> Result<Map<String, Value>, TaskFailure> {
    let mut out = Map::new();
    // `module: "{{ a_dict }}"` (or `args: "{{ a_dict }}"`): the template gives the
    // arguments; arguments written out beside it win.
    let finalization = |cause: String| finalization(run, &t.action, &cause);
    // `args: "{{ a_dict }}"`, then words given to an action that takes none (a
    // Python action plugin says whether it does): a template of nothing else gives
    // arguments (winning over `args:`'s), other words fail the task.
    let mut templates: Vec<&Value> = t.args.get(VARIABLE_PARAMS).into_iter().collect();
    let raw = t.args.get(RAW_PARAMS).filter(|_| {
        !crate::playbook::takes_raw_params(&t.action)
            && !crate::plugins::loader::action_traits(&t.action).raw_params
    });
    if let Some(raw) = raw {
        match raw.as_str() {
            Some(text) if crate::template::is_possibly_all_template(text) => templates.push(raw),
            _ => {
                return Err(format!(
                    "Task failed: Action '{}' does not support raw params.",
                    action_name(run, &t.action)
                )
                .into());
            }
        }
    }
    for params in templates {
        // All of them `omit`: none.
        match run
            .templar
            .template(params, vars)
            .map(crate::template::strip_omit)
        {
            // What the plugin evaluates itself (`assert`'s `that`, `debug`'s `var`)
            // is refused where the template made it: only trusted text is evaluated.
            Ok(Some(Value::Object(m))) => {
                let marked = run
                    .templar
                    .mark_untrusted(params, &Value::Object(m.clone()), vars);
                // Arguments written out win, even as `omit`.
                out.extend(
                    m.into_iter()
                        .filter(|(k, _)| !t.args.contains_key(k))
                        .map(
                            |(k, v)| match (keep.contains(&k.as_str()), marked.get(&k)) {
                                (true, Some(marked)) => (k, marked.clone()),
                                _ => (k, v),
                            },
                        ),
                );
            }
            Ok(None) => {}
            Ok(Some(other)) => {
                return Err(finalization(format!(
                    "Task args must resolve to a 'dict' not '{}'.",
                    sandball_wire::python::short_type_name(&other)
                ))
                .into());
            }
            Err(e) => return Err(finalization(e.cause()).into()),
        }
    }
    let given = |k: &str| k != VARIABLE_PARAMS && (raw.is_none() || k != RAW_PARAMS);
    for (k, v) in t.args.iter().filter(|(k, _)| given(k)) {
        let value = if keep.contains(&k.as_str()) {
            v.clone()
        } else {
            run.templar.template(v, vars).map_err(|e| {
                let what = format!("Error while resolving value for '{k}'");
                TaskFailure {
                    msg: finalization(format!("{what}: {}", e.cause())),
                    cause: Cause::argument(&e, &action_name(run, &t.action), what, k),
                }
            })?
        };
        if let Some(v) = crate::template::strip_omit(value) {
            out.insert(k.clone(), v);
        }
    }
    // Defaults fill in what the task does not write (an argument it sets to `omit` is
    // left out, not filled in); they come first, the task's own after them, in the
    // order ansible-core gives a module its arguments.
    let mut merged = Map::new();
    for (k, v) in module_defaults(run, kw, &t.action, vars)? {
        if t.args.contains_key(&k) {
            if let Some(own) = out.shift_remove(&k) {
                merged.insert(k, own);
            }
        } else if let Some(v) = crate::template::strip_omit(v) {
            merged.insert(k, v);
        }
    }
    merged.extend(out);
    Ok(merged)
}

/// The task's action as ansible-core names it in errors: one of its own plugins or
/// modules (sandball's built-in components are those) written without a collection as
/// `ansible.builtin.NAME`, any other as written.
fn action_name(run: &Run, action: &str) -> String {
    if !action.contains('.') && super::resolve::core_own(run, action) {
        format!("ansible.builtin.{action}")
    } else {
        action.to_string()
    }
}

/// The argument defaults `module_defaults` gives the task's action, as ansible-core
/// 2.19 gives them: every level's entries merged by module (a nearer level's entry for
/// a module replaces an outer one's; `debug: {}` removes it), then those of the groups
/// holding the action, in order, and over them the entry naming the action itself.
/// Only what applies is templated, each value on its own, so a broken default of
/// another module fails nothing; one of the action's fails its task as ansible-core's
/// finalization of the task's arguments does.
pub(super) fn module_defaults(
    run: &Run,
    kw: &Chain<'_>,
    action: &str,
    vars: &Vars,
) -> Result<Map<String, Value>, String> {
    let Some(setting) = kw.nearest_setting(Keyword::ModuleDefaults) else {
        return Ok(Map::new());
    };
    let at = |e: &dyn std::fmt::Display| format!("module_defaults (at {}): {e}", setting.at);
    // A level or an entry may be a template of the whole (`ping: "{{ defaults }}"`).
    let whole = |value: &Value| match value {
        Value::String(_) => run.templar.template(value, vars).map_err(|e| at(&e)),
        other => Ok(other.clone()),
    };
    let mut by_module = Map::new();
    for value in kw.all(Keyword::ModuleDefaults) {
        let lists = match whole(value)? {
            Value::Array(items) => items,
            one => vec![one],
        };
        for list in lists {
            if let Value::Object(entries) = list {
                by_module.extend(entries);
            }
        }
    }
    let mut applied = Map::new();
    let mut own = None;
    let roots = run.legacy.roots();
    for (key, args) in by_module {
        if let Some(group) = key.strip_prefix("group/") {
            let members =
                crate::assemble::action_groups::actions(roots, group).map_err(|e| at(&e))?;
            for warning in &members.warnings {
                run.callback.warning(warning);
            }
            if members
                .actions
                .iter()
                .any(|m| same_action(run, m, DefaultsRole::Member, action))
                && let Value::Object(args) = whole(&args)?
            {
                applied.extend(args);
            }
        } else if same_action(run, &key, DefaultsRole::Entry, action) {
            own = Some(args);
        }
    }
    if let Some(Value::Object(args)) = own.map(|args| whole(&args)).transpose()? {
        applied.extend(args);
    }
    applied
        .into_iter()
        .map(|(k, v)| match run.templar.template(&v, vars) {
            Ok(v) => Ok((k, v)),
            Err(e) => Err(finalization(
                run,
                action,
                &format!("Error while resolving value for '{k}': {}", e.cause()),
            )),
        })
        .collect()
}

/// A task's failure to finalise its arguments for `action`, in ansible-core's words.
fn finalization(run: &Run, action: &str, cause: &str) -> String {
    format!(
        "Task failed: Finalization of task args for '{}' failed: {cause}",
        action_name(run, action)
    )
}
