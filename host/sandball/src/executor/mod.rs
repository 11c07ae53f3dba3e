//! The executor: runs a playbook's plays over the inventory's hosts.
//!
//! [`keyword_support`] checks every play before anything runs; [`play`] is a play's
//! own flow (its hosts, its `serial` batches, each run under its [`strategy`]: the
//! sections' tasks and blocks, facts gathered first, the handlers after each section),
//! beside it `meta` actions, handlers, roles and dynamic includes; [`task`] runs one
//! task on one host (keywords, loops, `when`, the action, `register`,
//! `changed_when`/`failed_when`, `until`, `async`, what the callback is told);
//! `context` gives the task's action plugin its module runs and commands.

mod batches;
mod coerce;
mod context;
mod gathering;
mod handlers;
mod include;
mod interrupt;
pub mod keyword_support;
pub mod listing;
mod meta;
mod module_run;
pub mod plan;
pub mod play;
mod resolve;
mod roles;
mod services;
mod start_at;
pub mod strategy;
pub mod task;
mod vars_prompt;

#[cfg(test)]
mod tests;

use crate::assemble::ModuleStore;
use crate::inventory::Inventory;
use crate::playbook::Playbook;
use crate::plugins::callback::Callback;
use crate::plugins::callback::stats::Stats;
use crate::plugins::connection::pool::SessionPool;
use crate::template::Templar;
use crate::vars::VariableManager;
use crate::yaml::Location;

/// Settings from the command line.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// `-f/--forks`: hosts in flight at once.
    pub forks: usize,
    /// `-C/--check`.
    pub check: bool,
    /// `-D/--diff`.
    pub diff: bool,
    /// `-v` count.
    pub verbosity: u8,
    /// `-l/--limit`.
    pub limit: Option<String>,
    /// `-t/--tags` (empty: all).
    pub tags: Vec<String>,
    /// `--skip-tags`.
    pub skip_tags: Vec<String>,
    /// Resource limits of every module run.
    pub limits: sandball_wire::capability::Limits,
    /// `-b`, `--become-user`, `--become-method`, `-K`.
    pub become_: crate::plugins::r#become::Options,
    /// `-c/--connection`: below the `connection` keyword and `ansible_connection`.
    pub connection: Option<String>,
    /// `-u/--user`: below the `remote_user` keyword and `ansible_user`.
    pub remote_user: Option<String>,
    /// `--private-key`: below `ansible_ssh_private_key_file`.
    pub private_key: Option<String>,
    /// `-T/--timeout`: below `ansible_timeout`/`ansible_ssh_timeout`.
    pub timeout: Option<String>,
    /// `--ssh-common-args`: below `ansible_ssh_common_args`.
    pub ssh_common_args: Option<String>,
    /// `--ssh-extra-args`: below `ansible_ssh_extra_args`.
    pub ssh_extra_args: Option<String>,
    /// `--force-handlers`: the default of the plays' `force_handlers`.
    pub force_handlers: bool,
    /// `--start-at-task`: tasks before the first one of that name (or glob) are skipped.
    pub start_at_task: Option<StartAt>,
    /// `--step`: each task is confirmed before it runs; the answer `continue` ends the
    /// asking (the flag turns false).
    pub step: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

/// `--start-at-task`: the task name (or glob) to start at, and whether a task of the
/// playbook has matched it.
#[derive(Clone, Debug)]
pub struct StartAt {
    /// The name or glob.
    pub pattern: String,
    /// Whether it matched.
    pub reached: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl StartAt {
    /// Starts at tasks named `pattern` (a glob as `fnmatch` reads it).
    pub fn new(pattern: &str) -> StartAt {
        StartAt {
            pattern: pattern.to_string(),
            reached: Default::default(),
        }
    }

    /// Whether a task whose name is `name` runs: once one has matched, every one does.
    pub fn runs(&self, name: &str) -> bool {
        use std::sync::atomic::Ordering;
        if self.reached.load(Ordering::SeqCst) {
            return true;
        }
        let hit = self.matches(name);
        if hit {
            self.reached.store(true, Ordering::SeqCst);
        }
        hit
    }

    /// Whether `name` is the task asked for (without marking it reached).
    pub fn matches(&self, name: &str) -> bool {
        name == self.pattern || sandball_pycompat::fnmatch::fnmatch(&self.pattern, name)
    }

    /// Whether some task matched.
    pub fn was_reached(&self) -> bool {
        self.reached.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            forks: 50,
            check: false,
            diff: false,
            verbosity: 0,
            limit: None,
            tags: vec![],
            skip_tags: vec![],
            limits: Default::default(),
            become_: Default::default(),
            connection: None,
            remote_user: None,
            private_key: None,
            timeout: None,
            ssh_common_args: None,
            ssh_extra_args: None,
            force_handlers: false,
            start_at_task: None,
            step: None,
        }
    }
}

/// Errors that stop a run before or between plays (task failures are results, not
/// errors).
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// A task names an action nothing implements.
    #[error(
        "couldn't resolve module/action '{action}'. This often indicates a misspelling, missing collection, or incorrect module path. Looked for a sandball component in: {components}; for a legacy module in: {legacy}\n{}",
        location.origin_block(true).trim_end()
    )]
    UnknownAction {
        /// The action.
        action: String,
        /// Where components were looked for.
        components: String,
        /// Where legacy modules were looked for.
        legacy: String,
        /// Where the task is.
        location: Location,
    },
    /// A keyword or action sandball does not run yet.
    #[error(
        "{what} is not supported by sandball yet.\n{}",
        location.origin_block(true).trim_end()
    )]
    Unsupported {
        /// What is missing.
        what: String,
        /// Where.
        location: Location,
    },
    /// A keyword (or a value of it) sandball does not honour, refused before anything
    /// runs; `what` names the keyword and says why.
    #[error("{what}\n{}", location.origin_block(true).trim_end())]
    Refused {
        /// The keyword and why.
        what: String,
        /// Where the keyword is written.
        location: Location,
    },
    /// A host pattern could not be used.
    #[error("{0}")]
    Pattern(String),
    /// An error that ended the run while it ran (a notice no handler answers, a
    /// `throttle` that is not a number, a file included that is no list of tasks):
    /// no recap, as in ansible-core.
    #[error("{}", .0.message)]
    Aborted(Abort),
}

/// Why a run ended while it ran, and its exit code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Abort {
    /// What is shown.
    pub message: String,
    /// The exit code: 1, or 4 when a file read while the run ran is no valid playbook
    /// content, as in ansible-core.
    pub code: i32,
}

/// Everything a run shares.
pub struct Run {
    /// Templating engine.
    pub templar: Templar,
    /// The inventory; `meta: refresh_inventory` replaces it (see [`Run::inventory`]).
    pub inventory: std::sync::RwLock<std::sync::Arc<Inventory>>,
    /// Where modules are found.
    pub modules: ModuleStore,
    /// Legacy modules: found, assembled and run the classic way.
    pub legacy: crate::assemble::legacy::LegacyStore,
    /// Variables and per-host state.
    pub vars: VariableManager,
    /// Output.
    pub callback: Box<dyn Callback>,
    /// Recap counters.
    pub stats: Stats,
    /// Shim sessions.
    pub sessions: SessionPool,
    /// Command-line settings.
    pub options: RunOptions,
    /// The capability policy, its rules bound to the inventory.
    pub policy: crate::policy::Policy,
    /// `--audit-log`: where every module run is recorded.
    pub audit_log: Option<crate::policy::audit_log::AuditLog>,
    /// Hosts that failed (unrescued) or became unreachable in an earlier play: later
    /// plays leave them out, as Ansible does, until `meta: clear_host_errors`.
    pub host_errors: std::sync::Mutex<HostErrors>,
    /// The inventory changes `add_host` and `group_by` made, in order: made again after
    /// `meta: refresh_inventory`, as ansible-core 2.19 keeps them.
    pub dynamic_changes: std::sync::Mutex<Vec<crate::inventory::Change>>,
    /// The warnings given once per run, so far.
    pub warned: std::sync::Mutex<std::collections::HashSet<String>>,
}

/// Hosts a run has given up on.
#[derive(Debug, Default)]
pub struct HostErrors {
    /// Failed and not rescued.
    pub failed: std::collections::HashSet<String>,
    /// Unreachable.
    pub unreachable: std::collections::HashSet<String>,
}

impl HostErrors {
    /// The exit code of `ansible-playbook`: 4 when a host was unreachable, 2 when one
    /// failed (and `meta: clear_host_errors` did not forgive it), 0 otherwise.
    pub fn exit_code(&self) -> i32 {
        if !self.unreachable.is_empty() {
            4
        } else if !self.failed.is_empty() {
            2
        } else {
            0
        }
    }
}

impl Run {
    /// Whether `warning` is new in this run (a warning about the policy, say, is given
    /// once, not on every task and host).
    pub fn first_warning(&self, warning: &str) -> bool {
        self.warned
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(warning.to_string())
    }

    /// The inventory as it is now.
    pub fn inventory(&self) -> std::sync::Arc<Inventory> {
        match self.inventory.read() {
            Ok(inventory) => inventory.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Makes a change to the inventory (`add_host`, `group_by`) that the tasks and plays
    /// after it see; whether anything changed.
    pub fn change_inventory(
        &self,
        change: &crate::inventory::Change,
    ) -> Result<bool, crate::inventory::InventoryError> {
        let mut inventory = match self.inventory.write() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        let changed = match inventory.changed(change)? {
            Some(new) => {
                *inventory = std::sync::Arc::new(new);
                true
            }
            None => false,
        };
        drop(inventory);
        self.dynamic_changes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(change.clone());
        if let crate::inventory::Change::AddHost { name, .. } = change {
            self.host_joined(name);
        }
        Ok(changed)
    }

    /// Gives a host that joined the run the facts the fact cache holds for it.
    fn host_joined(&self, host: &str) {
        if let Err(e) = self.vars.host_joined(host) {
            self.callback.warning(&e);
        }
    }

    /// Reads the inventory sources again, bypassing the cache (`meta: refresh_inventory`);
    /// tasks and plays that follow see the new hosts, groups and variables. The hosts
    /// `add_host` added are added again, then the groups `group_by` made, but for the
    /// hosts the sources no longer have, as ansible-core 2.19 does.
    pub fn refresh_inventory(&self) -> Result<(), crate::inventory::InventoryError> {
        use crate::inventory::Change;
        let mut fresh = self.inventory().reload()?;
        crate::plugins::callback::inventory_notices(self.callback.as_ref(), fresh.notices());
        let changes = self
            .dynamic_changes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let (hosts, groupings): (Vec<&Change>, Vec<&Change>) = changes
            .iter()
            .partition(|c| matches!(c, Change::AddHost { .. }));
        for change in hosts.into_iter().chain(groupings) {
            if let Change::GroupBy { host, .. } = change
                && fresh.data().host_index(host).is_none()
            {
                continue;
            }
            if let Some(changed) = fresh.changed(change)? {
                fresh = changed;
            }
        }
        let fresh = std::sync::Arc::new(fresh);
        match self.inventory.write() {
            Ok(mut inventory) => *inventory = fresh.clone(),
            Err(poisoned) => *poisoned.into_inner() = fresh.clone(),
        }
        for host in fresh.host_names() {
            self.host_joined(&host);
        }
        Ok(())
    }

    /// With `retry_files_enabled` (`ANSIBLE_RETRY_FILES_ENABLED`), the hosts that failed
    /// or were unreachable, one per line, in `PLAYBOOK.retry` beside the playbook (or in
    /// `retry_files_save_path`), for `--limit @file`.
    fn write_retry_file(&self, playbook: &Playbook) {
        if !crate::config::settings().flag("ANSIBLE_RETRY_FILES_ENABLED", false) {
            return;
        }
        let mut hosts: Vec<String> = {
            let errors = self.host_errors.lock().unwrap_or_else(|e| e.into_inner());
            errors.failed.union(&errors.unreachable).cloned().collect()
        };
        if hosts.is_empty() {
            return;
        }
        hosts.sort();
        let dir = match crate::config::settings().get_os("ANSIBLE_RETRY_FILES_SAVE_PATH") {
            Some(d) => std::path::PathBuf::from(d),
            None => std::path::absolute(&playbook.path)
                .ok()
                .and_then(|p| p.parent().map(std::path::Path::to_path_buf))
                .unwrap_or_default(),
        };
        let stem = playbook
            .path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "playbook".into());
        let file = dir.join(format!("{stem}.retry"));
        let text: String = hosts.iter().map(|h| format!("{h}\n")).collect();
        match crate::local_files::write_atomically(&file, text.as_bytes()) {
            Ok(()) => println!("\tto retry, use: --limit @{}", file.display()),
            Err(e) => self.callback.warning(&format!(
                "Could not create retry file '{}'. The error was: {e}",
                file.display()
            )),
        }
    }

    /// Runs every play of a playbook, prints the recap and returns the exit code.
    pub async fn playbook(&self, playbook: &Playbook) -> Result<i32, ExecError> {
        for p in &playbook.plays {
            keyword_support::play(self, p)?;
        }
        self.callback
            .playbook_start(&playbook.path.display().to_string(), playbook.plays.len());
        let plays = async {
            for p in &playbook.plays {
                // As Ansible: when a whole play's hosts failed, the playbook stops.
                if let strategy::Ended::EveryHostFailed = play::run(self, p).await? {
                    break;
                }
            }
            Ok(())
        };
        // Ctrl-C or SIGTERM abandons whatever runs (see `interrupt`).
        let ran = tokio::select! {
            ran = plays => ran,
            signal = interrupt::first() => {
                self.sessions.close_all(interrupt::SHIM_GRACE).await;
                return Err(ExecError::Aborted(signal.abort()));
            }
        };
        self.sessions.shutdown().await;
        ran?;
        let unsandboxed = self.legacy.take_warned();
        if !unsandboxed.is_empty() && self.options.verbosity == 0 {
            self.callback.warning(&format!(
                "legacy (non-component) modules ran unsandboxed, with all the rights of the remote user: {} (the capability policy's legacy = \"warn\"; -v shows each with its hosts and where the setting comes from; legacy = \"allow\" silences this)",
                unsandboxed.join(", ")
            ));
        }
        self.write_retry_file(playbook);
        self.callback.recap(&self.stats);
        Ok(self
            .host_errors
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .exit_code())
    }
}

/// Locks `m`, whether or not a task panicked while it held it.
pub(crate) fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
