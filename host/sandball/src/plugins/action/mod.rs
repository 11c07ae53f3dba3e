//! Action plugins: what a task's action does, on the controller and through the node.
//!
//! Every action is an [`ActionPlugin`] found by name in one registry ([`find`]: the
//! short name, `ansible.builtin.*`, `ansible.legacy.*`); an action without a plugin of
//! its own is [`normal::Normal`], which runs the module of that name. A plugin gets its
//! templated arguments and a [`Context`]: the task's variables and templar, its check
//! and diff modes, and the executor's services — run a module on the task's target
//! (a sandball component, or a legacy module assembled the classic way), with
//! controller files sent to the node first; run a command line over the connection.
//! `async_status` asks the shim after a background job;
//! `debug`, `assert`, `set_fact`, `include_vars`, `add_host`, `group_by`, `pause` and
//! `fail` work on the controller only; [`raw`], `script` and `reboot` use the connection; `copy`,
//! `template`, `assemble`, `fetch`, `unarchive`, `shell`, `gather_facts` and `wait_for_connection`
//! prepare or repeat a module run; `package` and `service` pick the node's module from its facts.
//! Adding an action is a file here and a line in [`PLUGINS`]; the executor does not
//! change.

pub mod add_host;
mod args;
pub mod assemble;
pub mod assert;
pub mod async_status;
pub mod copy;
pub mod debug;
pub mod fail;
mod failure;
pub mod fetch;
pub mod gather_facts;
pub mod group_by;
pub mod include_vars;
pub mod no_log;
pub mod normal;
pub mod package;
pub mod pause;
pub mod python;
pub mod raw;
pub mod reboot;
mod results;
pub mod script;
pub mod service;
pub mod set_fact;
pub mod set_stats;
pub mod shell;
pub mod summaries;
pub mod template;
#[cfg(test)]
pub(crate) mod testing;
pub mod unarchive;
pub mod validate_argument_spec;
pub mod wait_for_connection;

use crate::inventory::Change;
use crate::plugins::connection::ExecOutput;
use crate::template::{Templar, Vars};
use futures::future::LocalBoxFuture;
use serde_json::{Map, Value};
use std::path::PathBuf;

use args::valid_args;
pub use args::{ArgError, check_args, integer};
pub use failure::{
    Cause, CauseAt, FAILURE, Failure, NO_TRACEBACK, TaskFailure, conditional_failed, failed,
    keyword_conditional_failed, raised, task_failed,
};
pub use results::{Delegated, TaskResult, ok_with, push_warning, without_internal_keys};

/// Where an action does its work, for the executor (delegation, planning, checks).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Runs<'a> {
    /// On the controller only: no connection, no module.
    Controller,
    /// A command over the target's connection, no module.
    Connection,
    /// Through a module chosen when it runs, from the target's facts (`package`,
    /// `service`) or the task's arguments (`assemble`).
    Chosen,
    /// Through a module on the target.
    Module {
        /// The module's name (as the task wrote it, or the one the action runs).
        name: &'a str,
        /// Only the legacy module of that name, never a sandball component.
        legacy: bool,
    },
}

/// Which layer the facts an action returns (`ansible_facts`) go to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FactLayer {
    /// Gathered facts (`ansible_facts`, and `ansible_*` variables).
    Facts,
    /// `set_fact`: host variables above the play's.
    SetFact,
    /// `include_vars`: host variables above the task's, below `set_fact`.
    IncludeVars,
}

/// One action plugin.
pub trait ActionPlugin: Sync {
    /// Where the action does its work, for a task whose action is `action`.
    fn runs<'a>(&self, action: &'a str) -> Runs<'a>;

    /// Arguments the action evaluates itself: they arrive untemplated.
    fn raw_args(&self) -> &'static [&'static str] {
        &[]
    }

    /// Where the `ansible_facts` of its result go.
    fn fact_layer(&self) -> FactLayer {
        FactLayer::Facts
    }

    /// Whether `action` can run in the background (`async`).
    fn supports_async(&self, _action: &str) -> bool {
        false
    }

    /// Whether the task runs once, for the first host (`add_host`), whatever the play's
    /// hosts, as if it had `run_once`.
    fn bypasses_host_loop(&self) -> bool {
        false
    }

    /// Runs the action with its templated arguments; the result is a task result
    /// (failures included).
    fn run<'a>(
        &'a self,
        ctx: &'a dyn Context,
        action: &'a str,
        args: Map<String, Value>,
    ) -> LocalBoxFuture<'a, TaskResult>;
}

/// A module run an action asks the executor for.
#[derive(Debug, Clone)]
pub struct ModuleRequest<'a> {
    /// The module (short name or FQCN).
    pub name: &'a str,
    /// Its arguments (templated; the internal `_ansible_*` ones are added by the
    /// executor).
    pub args: Map<String, Value>,
    /// Only the legacy module of that name (for the `shell` component, ansible-core's
    /// `command` module with `_uses_shell`).
    pub legacy: bool,
    /// Controller files sent to the node before the run, each replacing the argument it
    /// names with its path on the node.
    pub transfers: Vec<Transfer>,
    /// Run in the foreground even in an `async` task: a Python action plugin's module
    /// run without `wrap_async`, as under ansible-core.
    pub foreground: bool,
}

impl<'a> ModuleRequest<'a> {
    /// A run of module `name` with `args` (a JSON object), no transfer.
    pub fn new(name: &'a str, args: Value) -> Self {
        ModuleRequest {
            name,
            args: match args {
                Value::Object(m) => m,
                _ => Map::new(),
            },
            legacy: false,
            transfers: Vec::new(),
            foreground: false,
        }
    }
}

/// A controller file a module reads on the node.
#[derive(Debug, Clone, PartialEq)]
pub struct Transfer {
    /// The argument that gets the node's path of the file.
    pub arg: &'static str,
    /// The file on the controller.
    pub local: PathBuf,
}

/// What an action plugin can ask of the executor, for one task on one host.
pub trait Context {
    /// The templating engine.
    fn templar(&self) -> &Templar;
    /// The task's variables on this host (loop item included).
    fn vars(&self) -> &Vars;
    /// Verbosity (`-v` count).
    fn verbosity(&self) -> u8;
    /// Whether the task runs in check mode (`-C`, the `check_mode` keyword).
    fn check_mode(&self) -> bool;
    /// Whether the task shows differences (`-D`, the `diff` keyword).
    fn diff(&self) -> bool;
    /// The task's `async` and `poll` seconds when it runs in the background.
    fn background(&self) -> Option<(u64, u64)> {
        None
    }
    /// Runs a module on the task's target: a sandball component under the grant policy
    /// gives it, or a legacy module.
    fn execute_module<'a>(&'a self, request: ModuleRequest<'a>) -> LocalBoxFuture<'a, TaskResult>;
    /// The host the task runs for.
    fn host(&self) -> &str;
    /// The task's name as its banner shows it.
    fn task_name(&self) -> String;
    /// The task's action as written (`reboot`, `ansible.builtin.reboot`), as an
    /// action's messages name it.
    fn action(&self) -> &str;
    /// Shows a line to the user, as Ansible's `display.display`.
    fn display(&self, text: &str);
    /// Shows a warning at once (not with the result).
    fn warning(&self, text: &str);
    /// Whether a module of that name exists (a sandball component, or a legacy module
    /// sandball can find).
    fn has_module(&self, name: &str) -> bool;
    /// Whether a module of that name runs as a legacy module on this host (no sandball
    /// component, or the component refused by `sandball_legacy_modules`).
    fn runs_legacy(&self, name: &str) -> bool;
    /// Changes the inventory for the rest of the run; whether anything changed.
    fn change_inventory(&self, change: &Change) -> Result<bool, String>;
    /// Runs a command line over the target's connection, as the task's become user;
    /// `Err` is the task's (unreachable or failed) result.
    fn exec_command<'a>(
        &'a self,
        line: &'a str,
        stdin: Option<&'a [u8]>,
    ) -> LocalBoxFuture<'a, Result<ExecOutput, Map<String, Value>>>;
    /// The task's `environment` (every level's, templated and merged, the task's
    /// values winning), for a command the action runs itself (`script`).
    fn environment(&self) -> Result<Map<String, Value>, String>;
    /// The argument defaults the task's `module_defaults` give module `module` (for a
    /// module the action runs with arguments of its own, as `gather_facts` runs
    /// `setup`).
    fn module_defaults(&self, module: &str) -> Result<Map<String, Value>, String>;
    /// Whether the task's target is reached through the local connection (the
    /// controller itself).
    fn local_connection(&self) -> bool;
    /// Closes the target's connection and sessions; the next use opens them again
    /// (as `meta: reset_connection`).
    fn reset_connection(&self) -> LocalBoxFuture<'_, ()>;
    /// Whether policy lets the task run something outside the sandbox (a legacy module,
    /// a `script`) on its host: `Err` is the failed result of a refusal; a warning is
    /// shown once when policy asks for one.
    fn allow_unsandboxed(&self, what: &str) -> Result<(), Map<String, Value>>;
    /// Where a background job (`async` with `poll: 0`) stands on the task's target, or
    /// with `cleanup` its record removed: the result `async_status` returns.
    fn job_status<'a>(&'a self, jid: &'a str, cleanup: bool) -> LocalBoxFuture<'a, TaskResult>;
}

/// Every action with a plugin of its own, by short name; the rest are [`normal::Normal`].
pub static PLUGINS: &[(&str, &dyn ActionPlugin)] = &[
    (
        "debug",
        &Simple {
            raw_args: &["var"],
            ..Simple::now(debug::run)
        },
    ),
    (
        "assert",
        &Simple {
            raw_args: &["that", "fail_msg", "msg", "success_msg"],
            ..Simple::now(assert::run)
        },
    ),
    (
        "set_fact",
        &Simple {
            fact_layer: FactLayer::SetFact,
            ..Simple::now(set_fact::run)
        },
    ),
    (
        "include_vars",
        &Simple {
            fact_layer: FactLayer::IncludeVars,
            ..Simple::now(include_vars::run)
        },
    ),
    (
        "add_host",
        &Simple {
            bypass_host_loop: true,
            ..Simple::now(add_host::run)
        },
    ),
    (
        "group_by",
        &Simple {
            valid_args: &["key", "parents"],
            ..Simple::now(group_by::run)
        },
    ),
    (
        "validate_argument_spec",
        &Simple::now(validate_argument_spec::run),
    ),
    (
        "fail",
        &Simple {
            valid_args: &["msg"],
            ..Simple::now(fail::run)
        },
    ),
    (
        "set_stats",
        &Simple {
            valid_args: &["aggregate", "data", "per_host"],
            ..Simple::now(set_stats::run)
        },
    ),
    (
        "pause",
        &Simple {
            bypass_host_loop: true,
            ..Simple::later(Runs::Controller, pause::work)
        },
    ),
    ("raw", &Simple::later(Runs::Connection, raw::work)),
    (
        "reboot",
        &Simple {
            valid_args: reboot::VALID_ARGS,
            ..Simple::later(Runs::Connection, reboot::work)
        },
    ),
    (
        "async_status",
        &Simple::later(Runs::Connection, async_status::work),
    ),
    ("script", &Simple::later(Runs::Connection, script::work)),
    ("copy", &copy::Copy),
    ("template", &Simple::later(module("copy"), template::work)),
    ("assemble", &Simple::later(Runs::Chosen, assemble::work)),
    ("fetch", &Simple::later(module("slurp"), fetch::work)),
    (
        "unarchive",
        &Simple::later(module("unarchive"), unarchive::work),
    ),
    (
        "shell",
        &Simple {
            supports_async: true,
            ..Simple::later(
                Runs::Module {
                    name: "shell",
                    legacy: false,
                },
                shell::work,
            )
        },
    ),
    (
        "gather_facts",
        &Simple::later(module("setup"), gather_facts::work),
    ),
    (
        "wait_for_connection",
        &Simple {
            valid_args: &["connect_timeout", "delay", "sleep", "timeout"],
            ..Simple::later(module("ping"), wait_for_connection::work)
        },
    ),
    (
        "package",
        &Simple {
            supports_async: true,
            ..Simple::later(Runs::Chosen, package::work)
        },
    ),
    (
        "service",
        &Simple {
            supports_async: true,
            ..Simple::later(Runs::Chosen, service::work)
        },
    ),
];

/// The work of an action done at once, on the controller alone.
pub type ControllerWork = fn(&dyn Context, &Map<String, Value>) -> TaskResult;

/// The work of an action that waits on the node (or on time).
pub type AsyncWork =
    for<'a> fn(&'a dyn Context, Map<String, Value>) -> LocalBoxFuture<'a, TaskResult>;

/// What an action does.
#[derive(Clone, Copy)]
pub enum Work {
    /// At once, on the controller.
    Now(ControllerWork),
    /// Through the node or over time.
    Later(AsyncWork),
}

/// An action plugin described by a line of [`PLUGINS`]: where it works, its flags and
/// its function (every plugin but `normal` and `copy`, which run the module the task
/// names).
pub struct Simple {
    /// Where it works.
    pub runs: Runs<'static>,
    /// Its work.
    pub work: Work,
    /// Arguments it evaluates itself.
    pub raw_args: &'static [&'static str],
    /// Where the facts it returns go.
    pub fact_layer: FactLayer,
    /// It runs once, for the first host.
    pub bypass_host_loop: bool,
    /// It can run in the background (`async`).
    pub supports_async: bool,
    /// The only arguments it takes, checked before it runs as ansible-core checks an
    /// action's `_VALID_ARGS` ("Invalid options for ACTION: …"); empty: not checked here.
    pub valid_args: &'static [&'static str],
}

impl Simple {
    /// An action done on the controller alone, at once.
    const fn now(work: ControllerWork) -> Simple {
        Simple {
            runs: Runs::Controller,
            work: Work::Now(work),
            raw_args: &[],
            fact_layer: FactLayer::Facts,
            bypass_host_loop: false,
            supports_async: false,
            valid_args: &[],
        }
    }

    /// An action that works as `runs` says, through `work`.
    const fn later(runs: Runs<'static>, work: AsyncWork) -> Simple {
        Simple {
            runs,
            work: Work::Later(work),
            raw_args: &[],
            fact_layer: FactLayer::Facts,
            bypass_host_loop: false,
            supports_async: false,
            valid_args: &[],
        }
    }
}

impl ActionPlugin for Simple {
    fn runs<'a>(&self, _action: &'a str) -> Runs<'a> {
        self.runs
    }

    fn raw_args(&self) -> &'static [&'static str] {
        self.raw_args
    }

    fn fact_layer(&self) -> FactLayer {
        self.fact_layer
    }

    fn bypasses_host_loop(&self) -> bool {
        self.bypass_host_loop
    }

    fn supports_async(&self, _action: &str) -> bool {
        self.supports_async
    }

    fn run<'a>(
        &'a self,
        ctx: &'a dyn Context,
        action: &'a str,
        args: Map<String, Value>,
    ) -> LocalBoxFuture<'a, TaskResult> {
        if let Err(r) = valid_args(action, &args, self.valid_args) {
            return Box::pin(std::future::ready(r.into()));
        }
        match self.work {
            Work::Now(work) => Box::pin(std::future::ready(work(ctx, &args))),
            Work::Later(work) => work(ctx, args),
        }
    }
}

/// A module the action runs (for planning and the pre-run check).
const fn module(name: &'static str) -> Runs<'static> {
    Runs::Module {
        name,
        legacy: false,
    }
}

/// The plugin of an action: a Python action plugin when ansible-core would run one
/// (`python`: the playbook's and roles' `action_plugins/` override ansible-core's and
/// sandball's own, as in ansible-core); else by its short name when it is a built-in
/// name (no collection, `ansible.builtin.*`, `ansible.legacy.*`); otherwise `normal`.
pub fn find(action: &str) -> &'static dyn ActionPlugin {
    if crate::plugins::loader::action_plugin(action).is_some() {
        return &python::Python;
    }
    let short = sandball_pycompat::fqcn::short_name(action);
    if short.contains('.') {
        return &normal::Normal;
    }
    PLUGINS
        .iter()
        .find(|(name, _)| *name == short)
        .map_or(&normal::Normal, |(_, plugin)| *plugin)
}

/// Whether `short` names one of the action plugins of Ansible's own that sandball has.
pub fn is_builtin_action(short: &str) -> bool {
    PLUGINS.iter().any(|(name, _)| *name == short)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn plugins_are_found_by_builtin_names_only() {
        assert_eq!(find("ansible.builtin.debug").runs("x"), Runs::Controller);
        assert_eq!(find("ansible.legacy.raw").runs("x"), Runs::Connection);
        assert_eq!(
            find("file").runs("file"),
            Runs::Module {
                name: "file",
                legacy: false
            }
        );
        // A collection's module of the same short name is that collection's.
        assert_eq!(
            find("my.collection.debug").runs("my.collection.debug"),
            Runs::Module {
                name: "my.collection.debug",
                legacy: false
            }
        );
    }

    #[tokio::test]
    async fn actions_with_fixed_arguments_refuse_others_by_the_name_written() {
        let ctx = testing::FakeContext::default();
        let args = json!({"key": "g", "bogus": 1, "other": 2});
        let plugin = find("ansible.builtin.group_by");
        let r = plugin
            .run(
                &ctx,
                "ansible.builtin.group_by",
                args.as_object().unwrap().clone(),
            )
            .await;
        assert_eq!(r["failed"], true);
        assert_eq!(
            r["msg"],
            "Invalid options for ansible.builtin.group_by: bogus,other"
        );
        assert!(ctx.changes.borrow().is_empty());
        let args = json!({"msg": "m"});
        let r = find("fail")
            .run(&ctx, "fail", args.as_object().unwrap().clone())
            .await;
        assert_eq!(r["msg"], "m");
    }
}
