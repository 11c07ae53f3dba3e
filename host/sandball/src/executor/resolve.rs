//! Which action a task runs: what its name names ([`lookup`]: an action plugin, a
//! sandball component, a legacy module), and, for a name written without a collection,
//! which of its `collections` search list ([`Chain::collections`]) holds it
//! ([`action`]), as ansible-core resolves the name when it reads the task. The list's
//! collections are asked in turn through the same lookup as a qualified name
//! (`ns.coll.name`: the collection's action plugin, its module, its
//! `meta/runtime.yml` routing); `ansible.legacy` is the name as written (the
//! playbook's and roles' `library/`, then sandball's and ansible-core's own),
//! `ansible.builtin` ansible-core's own alone. `module_defaults` entries are matched to
//! the name found by ansible-core's full names ([`same_action`]).
//!
//! [`Chain::collections`]: crate::playbook::Chain::collections

use super::Run;
use crate::assemble::finder::{FindError, LegacyModule};
use crate::playbook::Task;
use crate::plugins::action::{self, Runs};
pub(crate) use crate::plugins::loader::DefaultsRole;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

/// What an action's name leads to.
pub(crate) enum Found<'a> {
    /// An action plugin that runs no module of the task's (or picks one when it runs).
    Plugin,
    /// A sandball component of that name.
    Component(&'a str),
    /// A legacy module.
    Legacy(Arc<LegacyModule>),
}

/// What `action` (short, `ansible.builtin.`, `ansible.legacy.` or a collection's
/// name) leads to; `Err` says where legacy modules were looked for.
pub(crate) fn lookup<'a>(run: &Run, action: &'a str) -> Result<Found<'a>, String> {
    let (module, legacy) = match action::find(action).runs(action) {
        Runs::Controller | Runs::Connection | Runs::Chosen => return Ok(Found::Plugin),
        Runs::Module { name, legacy } => (name, legacy),
    };
    // The legacy module that stands for the component (`command` for `shell`).
    let standin = super::module_run::legacy_name(module);
    if !legacy
        && run.modules.exists(module)
        && !run.legacy.in_library(standin)
        && !super::module_run::python_fallback(run, module)
    {
        return Ok(Found::Component(module));
    }
    match run.legacy.get(standin) {
        Ok(m) => Ok(Found::Legacy(m)),
        Err(FindError::NotFound { searched, .. }) => Err(searched),
        Err(e) => Err(e.to_string()),
    }
}

/// The name a task whose action is written `written` runs under the search list
/// `collections`: the first of the list's collections that has it (a collection's
/// name, `ansible.builtin.name`, or the name as written for `ansible.legacy`); the
/// name as written when it is qualified or there is no list. `Err` says where it was
/// looked for. A collection's name written as a template is no collection (ansible-core
/// warns, and so does this).
pub(crate) fn action(run: &Run, written: &str, collections: &[String]) -> Result<String, String> {
    if collections.is_empty() || written.contains('.') {
        return Ok(written.to_string());
    }
    let mut searched = Vec::new();
    for collection in collections {
        if crate::template::is_template(collection) {
            run.callback.warning(&format!(
                "Error loading plugin '{written}': {collection}.{written} is not a valid collection reference"
            ));
            continue;
        }
        let candidate = match collection.as_str() {
            "ansible.legacy" => written.to_string(),
            other => format!("{other}.{written}"),
        };
        match lookup(run, &candidate) {
            Ok(_) => return Ok(candidate),
            Err(looked) => searched.push(looked),
        }
    }
    Err(searched.join(", "))
}

/// `t` with the action its `collections` find for its name, when that is another name
/// than the one written (`None`: the task runs as written, and a name not found fails
/// as such when it runs; the check before the run has refused it already).
pub(crate) fn task_along(run: &Run, t: &Task, collections: &[String]) -> Option<Task> {
    action(run, &t.action, collections)
        .ok()
        .filter(|action| *action != t.action)
        .map(|action| Task {
            action,
            ..t.clone()
        })
}

/// The full name ansible-core gives what `name` names, to tell whether two names are
/// the same action: a short or `ansible.legacy.` name is `ansible.legacy.NAME` when a
/// library directory or an `action_plugins/` directory of the playbook's or roles' has
/// it, `ansible.builtin.NAME` otherwise; any other name is itself.
fn full_name(run: &Run, name: &str) -> String {
    let short = match name.strip_prefix("ansible.legacy.") {
        Some(short) => short,
        None if !name.contains('.') => name,
        None => return name.to_string(),
    };
    let legacy =
        run.legacy.in_library(short) || crate::plugins::loader::action_plugin(short).is_some();
    match legacy {
        true => format!("ansible.legacy.{short}"),
        false => format!("ansible.builtin.{short}"),
    }
}

/// What [`core_own`] found, by ansible-core's directory and name: asked for every
/// `module_defaults` entry of every task, it looks on disk once a name.
static CORE_OWN: Mutex<BTreeMap<(Option<PathBuf>, String), bool>> = Mutex::new(BTreeMap::new());

/// Whether `short` is one of ansible-core's own actions or modules (sandball's
/// built-in actions and components are those), not a name its routing sends elsewhere.
pub(super) fn core_own(run: &Run, short: &str) -> bool {
    if action::is_builtin_action(short) {
        return true;
    }
    let core = run.legacy.roots().ansible.clone();
    let key = (core, short.to_string());
    if let Some(own) = CORE_OWN
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&key)
    {
        return *own;
    }
    let in_core = |dir: &str| {
        key.0
            .as_deref()
            .is_some_and(|core| core.join(dir).join(format!("{short}.py")).is_file())
    };
    let own = crate::assemble::component::ModuleStore::builtin_dirs()
        .iter()
        .any(|dir| dir.join(format!("{short}.wasm")).is_file())
        || in_core("modules")
        || in_core("plugins/action");
    CORE_OWN
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(key, own);
    own
}

/// The name `module_defaults` know `name` by (`role`: an entry of theirs or of an
/// action group, or a task's action): its [`full_name`], or, for a collection's name or a
/// builtin name that ansible-core routes elsewhere (`formerly_core_ping`), the name
/// ansible-core's loader resolves it to through the collections' `meta/runtime.yml`
/// and their modules' `action_plugin` ([`loader::defaults_name`]).
///
/// [`loader::defaults_name`]: crate::plugins::loader::defaults_name
fn defaults_name(run: &Run, name: &str, role: DefaultsRole) -> String {
    let full = full_name(run, name);
    let own = match full.strip_prefix("ansible.builtin.") {
        Some(short) => core_own(run, short),
        None => full.starts_with("ansible.legacy."),
    };
    if own {
        return full;
    }
    crate::plugins::loader::defaults_name(&full, role).unwrap_or(full)
}

/// Whether `key` (a `module_defaults` entry, or a member of an action group: `role`) names the
/// task's action `action` (as resolved along its `collections`), as ansible-core
/// matches them: the same action by the names `module_defaults` know them by
/// ([`defaults_name`]: `ping` and `ansible.builtin.ping` are one, a library's `ping` is
/// `ansible.legacy.ping`, a module routed to another is that one), and an
/// `ansible.builtin.` action also takes the defaults of its `ansible.legacy.` name
/// (never the other way round).
pub(crate) fn same_action(run: &Run, key: &str, role: DefaultsRole, action: &str) -> bool {
    if key == action {
        return true;
    }
    let (key, action) = (
        defaults_name(run, key, role),
        defaults_name(run, action, DefaultsRole::Action),
    );
    key == action
        || action
            .strip_prefix("ansible.builtin.")
            .is_some_and(|short| key.strip_prefix("ansible.legacy.") == Some(short))
}
