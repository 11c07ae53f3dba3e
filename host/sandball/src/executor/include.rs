//! Dynamic inclusion, run by the strategy as Ansible runs it: `include_tasks` (and the
//! old `include`) reads its file when it runs, per host — the name templated with the
//! host's variables and loop item — and runs the file's tasks on the hosts that
//! included the same file with the same item, shown as `included: FILE for HOSTS`;
//! `include_role` runs a role's tasks (`tasks_from`, `vars_from`, `defaults_from`) the
//! same way, its variables private to it unless `public` (then the play's from then
//! on). The include's `vars` and loop
//! variable are a level of the included tasks' keywords; `apply` gives them keywords.

use super::play::{PlayRun, run_items};
use super::{lock, task};
use crate::playbook::roles::{self, RoleOptions};
use crate::playbook::{Chain, Keyword, Keywords, Task, TaskItem};
use crate::vars::PlayScope;
use sandball_pycompat::fqcn::ansible_short_name;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// What an include task includes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// `include_tasks`.
    Tasks,
    /// `include_role`.
    Role,
}

/// Whether a task is a dynamic include, and of what.
pub(super) fn kind(t: &Task) -> Option<Kind> {
    match ansible_short_name(&t.action) {
        "include_tasks" => Some(Kind::Tasks),
        "include_role" => Some(Kind::Role),
        _ => None,
    }
}

/// A loop item and the variables it gives the included tasks.
type Item = (Value, Map<String, Value>);

/// One inclusion: the file (or role) and loop item, and the hosts that include it.
struct Group {
    path: PathBuf,
    /// The file (or role) as the include names it, templated.
    name: String,
    item: Option<Item>,
    /// How its `included:` line shows the item: `loop_control.label`, templated with
    /// the item's variables, else the item; none when Python finds it false.
    label: Option<String>,
    hosts: Vec<String>,
    /// An `include_role`'s `tasks_from`, `vars_from`, `defaults_from`,
    /// `handlers_from` and switches, templated with the host's variables.
    from: serde_json::Map<String, Value>,
}

/// Runs an include task on `hosts`; false when no hosts are left.
pub(super) async fn run(
    cx: PlayRun<'_>,
    t: &Task,
    inherited: &Chain<'_>,
    kw: &Chain<'_>,
    scope: &PlayScope<'_>,
    hosts: &[String],
    kind: Kind,
) -> bool {
    let run = cx.run;
    // The include's collections search list, for a role named without a collection.
    let search = kw.collections();
    let mut groups: Vec<Group> = Vec::new();
    // A host whose inclusion fails ends the play for all with `any_errors_fatal`
    // (read, once a host has failed, with the first host's variables).
    let included_failed = std::cell::RefCell::new(None);
    // A failure of the include task itself (its condition, its loop, its templated
    // arguments) is any task's: `ignore_errors` lets the host go on, a `rescue` counts
    // it as rescued. An inclusion that cannot be made (what it names is not there)
    // fails the host whatever `ignore_errors` says and stays counted as failed (once
    // per loop item), as in ansible-core. `register` keeps the failure either way.
    let fail_with = |host: &str, result: crate::plugins::action::TaskResult, rescuable: bool| {
        let vars = task::task_vars(run, scope, host, kw);
        let ignored = rescuable
            && super::coerce::keyword_bool(run, &vars, kw, Keyword::IgnoreErrors, false)
                .unwrap_or(false);
        if !ignored {
            included_failed
                .borrow_mut()
                .get_or_insert_with(|| result.fields.clone());
        }
        super::play::fail_host(cx, t, host, result, ignored, rescuable);
    };
    let fail = |host: &str, e: &str| fail_with(host, failure(t, e).into(), false);
    // A task file or role that is not there fails the host as `fail` does, with
    // ansible-core's reason, which is also shown as an error.
    let fail_for_reason = |host: &str, result: serde_json::Map<String, Value>| {
        if let Some(Value::String(reason)) = result.get("reason") {
            run.callback.error(reason);
        }
        fail_with(host, result.into(), false);
    };
    // A task file that is not there: the one included, or one it imports.
    let no_file = |host: &str, include: &str, missing: &str| {
        fail_for_reason(host, not_found(cx, kind, include, missing));
    };
    let fatal = std::cell::OnceCell::new();
    let fatal_failure = || {
        included_failed.borrow().is_some()
            && *fatal.get_or_init(|| {
                hosts.first().is_some_and(|h| {
                    super::play::any_errors_fatal(run, kw, &task::task_vars(run, scope, h, kw))
                })
            })
    };
    for host in hosts {
        let vars = task::task_vars(run, scope, host, kw);
        // A host the condition leaves out is shown skipped and counted, as Ansible
        // reports an include it does not make; one whose condition fails, fails.
        if let Some(stopped) = task::keywords::when_stops(run, kw, &vars) {
            if stopped.get("failed") == Some(&serde_json::Value::Bool(true)) {
                fail_with(host, stopped, true);
            } else {
                run.stats.record(
                    host,
                    crate::plugins::callback::Status::Skipped,
                    false,
                    false,
                );
                task::register(run, t, host, &stopped);
                run.callback.result(&crate::plugins::callback::Report {
                    host,
                    action: &t.action,
                    status: crate::plugins::callback::Status::Skipped,
                    result: &stopped,
                    item: None,
                    ignored: false,
                    looped: false,
                    origin: None,
                });
            }
            continue;
        }
        let items: Vec<(Option<Item>, crate::template::Vars)> = match &t.loop_ {
            None => vec![(None, vars)],
            Some(spec) => match task::loops::loop_items(run, t, &vars, spec) {
                Ok(items) => items
                    .into_iter()
                    .map(|i| (Some((i.item, i.loop_vars)), i.vars))
                    .collect(),
                Err(e) => {
                    fail_with(host, failure(t, &e.msg).into(), true);
                    continue;
                }
            },
        };
        for (item, item_vars) in items {
            // A label Python finds false (`0`, `""`, an empty list…) is not shown, as
            // ansible-core's default callback leaves it out.
            let label = item.as_ref().and_then(|(value, _)| {
                let label = t
                    .loop_control
                    .as_ref()
                    .and_then(|c| c.label.as_ref())
                    .and_then(|l| run.templar.template(l, &item_vars).ok())
                    .unwrap_or_else(|| value.clone());
                sandball_pycompat::pyops::py_truth(&label)
                    .then(|| super::task::loops::label(&label))
            });
            let role_dir = inherited.role().map(|r| r.path.as_path());
            let found =
                target(cx, t, kind, &item_vars, &search, role_dir).and_then(|(path, name)| {
                    let from = match kind {
                        Kind::Role => role_files(cx, t, &item_vars).map_err(Unmade::Task)?,
                        Kind::Tasks => serde_json::Map::new(),
                    };
                    Ok((path, name, from))
                });
            let (path, name, from) = match found {
                Ok(found) => found,
                Err(Unmade::Task(e)) => {
                    fail_with(host, failure(t, &e).into(), true);
                    continue;
                }
                Err(Unmade::Missing(e)) => {
                    fail(host, &e);
                    continue;
                }
                Err(Unmade::NoFile(name)) => {
                    no_file(host, &name, &name);
                    continue;
                }
                Err(Unmade::NoRole(reason)) => {
                    fail_for_reason(host, unmade_result(None, reason));
                    continue;
                }
            };
            // A host that includes the same file with the same item twice (a loop
            // with duplicate items) runs it twice: a group holds a host once.
            let same = groups.iter_mut().find(|g| {
                g.path == path
                    && g.from == from
                    && g.item.as_ref().map(|i| &i.0) == item.as_ref().map(|i| &i.0)
                    && !g.hosts.contains(host)
            });
            match same {
                Some(g) => g.hosts.push(host.clone()),
                None => groups.push(Group {
                    path,
                    name,
                    item,
                    label,
                    hosts: vec![host.clone()],
                    from,
                }),
            }
        }
    }
    // Every inclusion is read, then shown (and counted as ok), before any of them
    // runs, as in ansible-core: one that cannot be read fails its hosts, one whose
    // content is not a valid playbook's ends the run.
    let mut ready = Vec::new();
    for g in groups {
        let loaded = match load(cx, t, kind, &g.path, &g.from, inherited.role(), &search) {
            Ok(l) => l,
            Err(Unread::Failed(e)) => {
                for h in &g.hosts {
                    fail(h, &e);
                }
                continue;
            }
            Err(Unread::NoFile(missing)) => {
                for h in &g.hosts {
                    no_file(h, &g.name, &missing);
                }
                continue;
            }
            // Shown as an error, then failing the host as an inclusion that cannot be
            // made does (its rescue runs; `ignore_errors` does not let it go on).
            Err(Unread::Rescuable(e)) => {
                run.callback.error(&e);
                for h in &g.hosts {
                    fail_with(h, crate::plugins::action::failed(e.clone()).into(), false);
                }
                continue;
            }
            Err(Unread::Invalid(e)) => {
                let mut active = lock(&cx.state.active);
                super::play::abort(cx.state, &mut active, e, 4);
                return false;
            }
        };
        // Its tasks are checked as the play's were before the run: an unknown action
        // or a refused keyword ends the run as ansible-core's parser errors do.
        if let Err(e) = super::keyword_support::included(run, &loaded, inherited, cx.in_handler) {
            let mut active = lock(&cx.state.active);
            super::play::abort(cx.state, &mut active, e.to_string(), 4);
            return false;
        }
        let label = g
            .label
            .as_ref()
            .map(|l| format!(" => (item={l})"))
            .unwrap_or_default();
        // What reading it gave to warn about comes first, as ansible-core shows it.
        super::task::reports::show_warnings(run, Some(&t.location));
        run.callback.verbose(
            0,
            None,
            &format!(
                "included: {} for {}{label}",
                g.path.display(),
                g.hosts.join(", ")
            ),
        );
        for h in &g.hosts {
            run.stats
                .record(h, crate::plugins::callback::Status::Ok, false, false);
        }
        ready.push((g, loaded));
    }
    for (g, loaded) in ready {
        if fatal_failure() {
            break;
        }
        let mut level = match apply_keywords(t) {
            Ok(k) => k,
            Err(e) => {
                for h in &g.hosts {
                    fail(h, &e);
                }
                continue;
            }
        };
        level.include_params = t.keywords.vars.clone();
        if let Some((_, vars)) = &g.item {
            level.vars.extend(vars.clone());
        }
        let chain = inherited.with(&level);
        let state = cx.state;
        let entering = lock(&state.active).clone();
        let group: Vec<String> = entering
            .iter()
            .filter(|h| g.hosts.contains(h))
            .cloned()
            .collect();
        let waiting = std::mem::replace(&mut *lock(&state.active), group);
        Box::pin(run_items(cx, &loaded, &chain)).await;
        let survivors = std::mem::take(&mut *lock(&state.active));
        *lock(&state.active) = state.in_order(&entering, |h| {
            (waiting.contains(h) && !g.hosts.contains(h)) || survivors.contains(h)
        });
    }
    if fatal_failure()
        && let Some(result) = included_failed.borrow().as_ref()
    {
        super::play::fail_every_host(cx.state, t, result);
    }
    !lock(&cx.state.active).is_empty()
}

/// The keywords `apply` gives the included tasks (`include_tasks`, `include_role`).
fn apply_keywords(t: &Task) -> Result<Keywords, String> {
    match t.args.get("apply") {
        None | Some(Value::Null) => Ok(Keywords::default()),
        Some(Value::Object(m)) => Keywords::from_map(m, &t.location),
        Some(other) => Err(format!("apply must be a mapping of keywords, got {other}")),
    }
}

/// The file an `include_tasks` includes (or the role directory of an `include_role`),
/// and its name as templated with the host's variables; `role_dir` is the directory
/// of the role whose task it is.
fn target(
    cx: PlayRun<'_>,
    t: &Task,
    kind: Kind,
    vars: &crate::template::Vars,
    search: &[String],
    role_dir: Option<&Path>,
) -> Result<(PathBuf, String), Unmade> {
    let keys: &[&str] = match kind {
        Kind::Tasks => &["file", "_raw_params"],
        Kind::Role => &["name", "role"],
    };
    let Some(raw) = keys.iter().find_map(|k| t.args.get(*k)) else {
        return Err(Unmade::Task(match kind {
            Kind::Tasks => "No file specified for include_tasks".into(),
            Kind::Role => "'name' is a required field for include_role.".into(),
        }));
    };
    let name = match cx.run.templar.template(raw, vars) {
        Ok(Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(e) => return Err(Unmade::Task(e.to_string())),
    };
    let base = base_dir(cx);
    let missing = |e: &dyn std::fmt::Display| Unmade::Missing(first_line(&e.to_string()));
    match kind {
        Kind::Tasks => match crate::playbook::imports::find_file(t, &base, role_dir, &name) {
            Ok(p) => Ok((std::path::absolute(&p).unwrap_or(p), name)),
            Err(_) => Err(Unmade::NoFile(name)),
        },
        // A role that is not there fails the host before anything is included, with
        // ansible-core's reason.
        Kind::Role => match roles::find_role(&name, &t.location, &base, search) {
            Ok(_) => Ok((PathBuf::from(&name), name)),
            Err(crate::yaml::PlaybookError::Invalid { message, .. }) => {
                Err(Unmade::NoRole(message))
            }
            Err(e) => Err(missing(&e)),
        },
    }
}

/// The failed result of an include whose task file `missing` (the one it includes, or
/// one that file imports) is not there, as ansible-core gives it: the reason, which
/// names the file as if beside the playbook, and for `include_tasks` the file it
/// includes.
fn not_found(
    cx: PlayRun<'_>,
    kind: Kind,
    include: &str,
    missing: &str,
) -> serde_json::Map<String, Value> {
    let base = base_dir(cx);
    let path = std::path::absolute(base.join(missing)).unwrap_or_else(|_| base.join(missing));
    let p = path.display();
    let unreadable = format!(
        "Unable to retrieve file contents.\n\
         Could not find or access '{p}' on the Ansible Controller.\n\
         If you are using a module and expect the file to exist on the remote, see the remote_src option: \
         [Errno 2] No such file or directory: '{p}'"
    );
    match kind {
        Kind::Tasks => unmade_result(
            Some(include),
            format!("Could not find or access '{p}' on the Ansible Controller: {unreadable}"),
        ),
        Kind::Role => unmade_result(None, unreadable),
    }
}

/// The failed result of an inclusion that could not be made: `include_tasks`' file
/// (`include`), then ansible-core's reason.
fn unmade_result(include: Option<&str>, reason: String) -> serde_json::Map<String, Value> {
    let mut result = serde_json::Map::new();
    result.insert("failed".into(), Value::Bool(true));
    result.insert("changed".into(), Value::Bool(false));
    if let Some(include) = include {
        result.insert("include".into(), Value::String(include.to_string()));
    }
    result.insert("reason".into(), Value::String(reason));
    result
}

/// Why a host's inclusion could not be made.
enum Unmade {
    /// The include task's own arguments failed (a template): a task failure like any.
    Task(String),
    /// What it names is not there.
    Missing(String),
    /// The task file it names is not there.
    NoFile(String),
    /// The role it names is not there (why, in ansible-core's words).
    NoRole(String),
}

/// The playbook's directory.
fn base_dir(cx: PlayRun<'_>) -> PathBuf {
    cx.play
        .location
        .file
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

fn first_line(text: &str) -> String {
    text.trim_start_matches("ERROR! ")
        .lines()
        .next()
        .unwrap_or_default()
        .to_string()
}

/// An `include_role`'s `*_from` files, their names templated with the host's
/// variables (the include's own `vars` among them).
fn role_files(
    cx: PlayRun<'_>,
    t: &Task,
    vars: &crate::template::Vars,
) -> Result<serde_json::Map<String, Value>, String> {
    let mut out = serde_json::Map::new();
    // An option templated to `omit` is left out, as in Ansible.
    let omitted = |v: &Value| v.as_str() == Some(crate::template::OMIT);
    for key in roles::FILE_OPTIONS {
        let Some(raw) = t.args.get(key) else { continue };
        let value = match cx.run.templar.template(raw, vars) {
            Ok(v) if omitted(&v) => continue,
            Ok(Value::String(s)) => s,
            Ok(other) => return Err(roles::not_a_file_name(key, &other)),
            Err(e) => return Err(format!("{key}: {e}")),
        };
        out.insert(key.to_string(), Value::String(value));
    }
    for key in roles::FLAG_OPTIONS {
        let Some(raw) = t.args.get(key) else { continue };
        let value = cx
            .run
            .templar
            .template(raw, vars)
            .map_err(|e| format!("{key}: {e}"))?;
        if !omitted(&value) {
            out.insert(key.to_string(), value);
        }
    }
    Ok(out)
}

/// Why an inclusion was not made.
enum Unread {
    /// The file could not be read, or holds no list: the hosts including it fail.
    Failed(String),
    /// A task file it imports is not there (named as the import names it): the hosts
    /// including it fail.
    NoFile(String),
    /// What it holds is not a valid playbook's (bad YAML, a malformed task, a role's
    /// file missing): the run ends, as ansible-core ends it.
    Invalid(String),
    /// A role's file it names is not there, under ansible-core 2.21 and `rescuable`
    /// (its default): the hosts including it fail, and a `rescue` runs.
    Rescuable(String),
}

impl From<crate::yaml::PlaybookError> for Unread {
    fn from(e: crate::yaml::PlaybookError) -> Unread {
        match e {
            crate::yaml::PlaybookError::Read { .. } => Unread::Failed(first_line(&e.to_string())),
            crate::yaml::PlaybookError::Missing { name, .. } => Unread::NoFile(name),
            crate::yaml::PlaybookError::Invalid { .. } | crate::yaml::PlaybookError::Removed(_) => {
                let text = e.to_string();
                Unread::Invalid(text.trim_start_matches("ERROR! ").to_string())
            }
        }
    }
}

/// The tasks an inclusion runs.
fn load(
    cx: PlayRun<'_>,
    t: &Task,
    kind: Kind,
    path: &Path,
    from: &serde_json::Map<String, Value>,
    including: Option<&roles::Role>,
    search: &[String],
) -> Result<Vec<TaskItem>, Unread> {
    match kind {
        Kind::Tasks => {
            // A file a handler includes holds handlers.
            let mut items = roles::included_tasks_file(path, cx.in_handler)?
                .ok_or_else(|| Unread::Failed(roles::NOT_A_TASK_LIST.into()))?;
            expand_imports(cx, &mut items, None, including, search)?;
            Ok(items)
        }
        Kind::Role => {
            // ansible-core 2.21 fails the task on a role's file that is not there,
            // unless `rescuable: false` (checked before the run: a boolean).
            let rescuable = t
                .args
                .get("rescuable")
                .is_none_or(|v| sandball_pycompat::boolean::truthy(Some(v), true) == Ok(true));
            if crate::compat::core().at_least(21) && rescuable {
                let name = path.display().to_string();
                let dir = roles::find_role(&name, &t.location, &base_dir(cx), search)?;
                for (key, sub) in roles::FILE_OPTIONS.iter().zip(roles::FILE_DIRS) {
                    if let Some(Value::String(file)) = from.get(*key)
                        && let Some(missing) = roles::missing_file(&dir, sub, file)
                    {
                        return Err(Unread::Rescuable(missing));
                    }
                }
            }
            // The file options and switches as templated (those templated to `omit`
            // left out).
            let mut args = t.args.clone();
            for key in roles::FILE_OPTIONS.iter().chain(&roles::FLAG_OPTIONS) {
                args.remove(*key);
            }
            args.extend(from.clone());
            let options = RoleOptions::of_task(&args, true);
            let name = path.display().to_string();
            let (mut tasks, handlers, role) = roles::load_one(
                &name,
                &t.location,
                &base_dir(cx),
                &options,
                including,
                search,
            )?;
            // What the role's tasks import is read now, as a play's roles' is at load.
            expand_imports(cx, &mut tasks, Some(&role.name), including, search)?;
            // The role's handlers can be notified from now on; with `public`, its
            // variables are the play's too.
            super::roles::add_role(cx, handlers, role.public.then_some(role));
            Ok(tasks)
        }
    }
}

/// Reads the imports of an included task list (and of the role `included_role`, whose
/// name is added after theirs; `including` is the role of the include task): the roles
/// it imports are the play's roles, and their handlers the play's handlers, from now on.
fn expand_imports(
    cx: PlayRun<'_>,
    items: &mut [TaskItem],
    included_role: Option<&str>,
    including: Option<&roles::Role>,
    search: &[String],
) -> Result<(), Unread> {
    let (imported, handlers) =
        crate::playbook::imports::expand_list(items, &base_dir(cx), including, search).map_err(
            |e| match e {
                crate::yaml::PlaybookError::Missing { name, .. } => Unread::NoFile(name),
                e => Unread::Failed(first_line(&e.to_string())),
            },
        )?;
    let mut names: Vec<String> = imported
        .iter()
        .map(|r| r.shown_name().to_string())
        .collect();
    names.extend(included_role.map(str::to_string));
    super::roles::add_role_names(cx, names);
    // The variables of the public roles it imports are the play's from now on.
    for role in imported.into_iter().filter(|r| r.public) {
        super::roles::add_public_role(cx, role);
    }
    for h in handlers {
        super::roles::add_role(cx, h, None);
    }
    Ok(())
}

/// The failed result of an include that could not be made on a host, saying where the
/// task is.
fn failure(t: &Task, msg: &str) -> serde_json::Map<String, Value> {
    crate::plugins::action::failed(t.location.appears_in(msg))
}
