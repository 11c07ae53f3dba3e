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
pub mod assemble;
pub mod assert;
pub mod async_status;
pub mod copy;
pub mod debug;
pub mod fail;
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
pub mod script;
pub mod service;
pub mod set_fact;
pub mod set_stats;
pub mod shell;
pub mod summaries;
pub mod template;
pub mod unarchive;
pub mod validate_argument_spec;
pub mod wait_for_connection;

use crate::inventory::Change;
use crate::plugins::connection::ExecOutput;
use crate::template::{Templar, Vars};
use futures::future::LocalBoxFuture;
use serde_json::{Map, Value};
use std::path::PathBuf;

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
    ) -> LocalBoxFuture<'a, Map<String, Value>>;
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
    fn execute_module<'a>(
        &'a self,
        request: ModuleRequest<'a>,
    ) -> LocalBoxFuture<'a, Map<String, Value>>;
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
    fn job_status<'a>(
        &'a self,
        jid: &'a str,
        cleanup: bool,
    ) -> LocalBoxFuture<'a, Map<String, Value>>;
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
pub type ControllerWork = fn(&dyn Context, &Map<String, Value>) -> Map<String, Value>;

/// The work of an action that waits on the node (or on time).
pub type AsyncWork =
    for<'a> fn(&'a dyn Context, Map<String, Value>) -> LocalBoxFuture<'a, Map<String, Value>>;

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
    ) -> LocalBoxFuture<'a, Map<String, Value>> {
        if let Err(r) = valid_args(action, &args, self.valid_args) {
            return Box::pin(std::future::ready(r));
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

/// A failed result with a message.
pub fn failed(msg: impl Into<String>) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("failed".into(), Value::Bool(true));
    m.insert("msg".into(), Value::String(msg.into()));
    m.insert("changed".into(), Value::Bool(false));
    m
}

/// The internal result key holding the help text ansible-core gives a failure, which
/// the default callback shows after it, said again as the cause of the task's failure
/// ("<<< caused by >>>"). Never shown or registered, as no `_ansible_` key is.
pub const ERROR_HELP: &str = "_ansible_error_help";

/// The internal result key holding what a failure came from in the task's text
/// ([`Cause`]): the default callback shows its origin below the task's, as ansible-core
/// 2.19 shows the origin of the value that failed. Never shown or registered, as no
/// `_ansible_` key is.
pub const ERROR_CAUSE: &str = "_ansible_error_cause";

/// What a failure came from, said below the task's own origin: the steps ansible-core
/// 2.19 chains, outermost first, after the task's own "Task failed".
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cause {
    /// Each step's words and the task's value it is written at (`None`: where the
    /// step before it is).
    pub steps: Vec<(String, Option<(CauseAt, String)>)>,
}

/// Which of the task's values a step of a [`Cause`] is written at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CauseAt {
    /// The action's name.
    Action,
    /// A keyword's value (`loop`).
    Keyword,
    /// An argument of the action.
    Arg,
    /// A text: a conditional, a template.
    Text,
}

impl CauseAt {
    const NAMES: [(CauseAt, &'static str); 4] = [
        (CauseAt::Action, "action"),
        (CauseAt::Keyword, "keyword"),
        (CauseAt::Arg, "arg"),
        (CauseAt::Text, "text"),
    ];
}

impl Cause {
    /// The cause of a conditional `cond` that could not be evaluated (`error` words
    /// it as ansible-core does); `None` when ansible-core names no cause (a refusal) or
    /// is not known to chain it so (an error other than an undefined value).
    pub fn conditional(error: &crate::template::TemplateError, cond: &Value) -> Option<Cause> {
        if !Cause::chained(error) {
            return None;
        }
        let prefix = crate::template::error::CONDITIONAL_ERROR;
        let detail = error.conditional_error().strip_prefix(prefix)?.to_string();
        Some(Cause {
            steps: vec![
                (
                    prefix.trim_end_matches(": ").into(),
                    Some((CauseAt::Text, cond.as_str()?.into())),
                ),
                (
                    detail,
                    error.inner().map(|t| (CauseAt::Text, t.to_string())),
                ),
            ],
        })
    }

    /// The cause of argument `key` of `action` that could not be templated (`what`:
    /// ansible-core's words for resolving it), when it is chained.
    pub fn argument(
        error: &crate::template::TemplateError,
        action: &str,
        what: String,
        key: &str,
    ) -> Option<Cause> {
        Cause::chained(error).then(|| Cause {
            steps: vec![
                (
                    format!("Finalization of task args for '{action}' failed"),
                    Some((CauseAt::Action, String::new())),
                ),
                (what, Some((CauseAt::Arg, key.to_string()))),
                (
                    error.cause(),
                    error.template().map(|t| (CauseAt::Text, t.to_string())),
                ),
            ],
        })
    }

    /// The cause of a loop (written at `keyword`) that could not be templated, when it
    /// is chained.
    pub fn loop_value(error: &crate::template::TemplateError, keyword: String) -> Option<Cause> {
        Cause::chained(error).then(|| Cause {
            steps: vec![(error.cause(), Some((CauseAt::Keyword, keyword)))],
        })
    }

    /// Whether a failure from `error` is chained: where it is known how ansible-core
    /// chains it, an undefined value (other errors split further there).
    fn chained(error: &crate::template::TemplateError) -> bool {
        matches!(error, crate::template::TemplateError::Undefined { .. })
    }

    /// Keeps it in `result`.
    pub fn mark(&self, result: &mut Map<String, Value>) {
        let steps: Vec<Value> = self
            .steps
            .iter()
            .map(|(words, at)| {
                let at = at.as_ref().and_then(|(kind, text)| {
                    let (_, name) = CauseAt::NAMES.iter().find(|(k, _)| k == kind)?;
                    Some(serde_json::json!([name, text]))
                });
                serde_json::json!([words, at])
            })
            .collect();
        result.insert(ERROR_CAUSE.into(), Value::Array(steps));
    }

    /// The cause kept in `result`.
    pub fn of(result: &Map<String, Value>) -> Option<Cause> {
        let steps = result.get(ERROR_CAUSE)?.as_array()?;
        let steps = steps
            .iter()
            .map(|step| {
                let words = step.get(0)?.as_str()?.to_string();
                let at = step.get(1).and_then(|at| {
                    let name = at.get(0)?.as_str()?;
                    let (kind, _) = CauseAt::NAMES.iter().find(|(_, n)| *n == name)?;
                    Some((*kind, at.get(1)?.as_str()?.to_string()))
                });
                Some((words, at))
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Cause { steps })
    }
}

/// The internal result key saying how a failure came about ([`Failure`]), which
/// ansible-core's `[ERROR]` line tells apart: it words the line from the error itself,
/// where `msg` alone cannot say whether the error was raised or returned, nor whether
/// the action or its module returned it. Never shown or registered, as no `_ansible_`
/// key is.
pub const FAILURE: &str = "_ansible_failure";

/// How a failure came about, where its result alone does not say it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// Raised while the task ran, by the action (ansible-core's `AnsibleActionFail`)
    /// or the executor: "Task failed: " and the message.
    Raised,
    /// Raised around the task's runs, by its loop (`loop_control`, `break_when`): the
    /// message alone.
    RaisedByLoop,
    /// Returned by the action, though a module did its work (`failed_when` failed a
    /// module's success): "Task failed: Action failed: " and the message.
    Action,
}

impl Failure {
    /// The value of [`FAILURE`] for it.
    fn as_str(self) -> &'static str {
        match self {
            Failure::Raised => "raised",
            Failure::RaisedByLoop => "raised by loop",
            Failure::Action => "action",
        }
    }

    /// How the failure `result` came about, where it says.
    pub fn of(result: &Map<String, Value>) -> Option<Failure> {
        [Failure::Raised, Failure::RaisedByLoop, Failure::Action]
            .into_iter()
            .find(|f| result.get(FAILURE).and_then(Value::as_str) == Some(f.as_str()))
    }

    /// Marks `result` as failed this way.
    pub fn mark(self, result: &mut Map<String, Value>) {
        result.insert(FAILURE.into(), Value::from(self.as_str()));
    }
}

/// The failed result of conditional `cond`, which could not be evaluated: ansible-core
/// 2.19's message, and its cause (the conditional's text) for the callback.
pub fn conditional_failed(
    error: &crate::template::TemplateError,
    cond: &Value,
) -> Map<String, Value> {
    TaskFailure {
        msg: error.conditional_failure(),
        cause: Cause::conditional(error, cond),
    }
    .result()
}

/// What ansible-core 2.19 puts in `exception` when it shows no traceback.
pub const NO_TRACEBACK: &str = "(traceback unavailable)";

/// [`conditional_failed`] for the task keyword `keyword` (`when`, `until`), with the
/// `exception` ansible-core registers for it, and which 2.21 names in the message
/// ("Task failed: An 'until' expression failed: …").
pub fn keyword_conditional_failed(
    error: &crate::template::TemplateError,
    cond: &Value,
    keyword: &str,
) -> Map<String, Value> {
    let mut failed = conditional_failed(error, cond);
    failed.insert("exception".into(), Value::String(NO_TRACEBACK.into()));
    if crate::compat::core().at_least(21) {
        let article = if keyword.starts_with(['a', 'e', 'i', 'o', 'u']) {
            "An"
        } else {
            "A"
        };
        let msg = format!(
            "Task failed: {article} '{keyword}' expression failed: {}",
            error.conditional_error()
        );
        failed.insert("msg".into(), Value::String(msg));
    }
    failed
}

/// A task's failure before its action ran (its loop or its arguments could not be
/// templated), with what it came from where that is one of the task's values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskFailure {
    /// The failure's message.
    pub msg: String,
    /// What it came from.
    pub cause: Option<Cause>,
}

impl From<String> for TaskFailure {
    fn from(msg: String) -> Self {
        TaskFailure { msg, cause: None }
    }
}

impl TaskFailure {
    /// Its failed result.
    pub fn result(self) -> Map<String, Value> {
        let mut r = failed(self.msg);
        if let Some(cause) = self.cause {
            cause.mark(&mut r);
        }
        r
    }
}

/// The failed result ansible-core's task executor makes of an error raised while the
/// task ran: "Task failed: " and the error, as its `msg` (and its `[ERROR]` line).
pub fn task_failed(error: impl std::fmt::Display) -> Map<String, Value> {
    failed(format!("Task failed: {error}"))
}

/// A failed result with a message, come about as `how` says.
pub fn raised(how: Failure, msg: impl Into<String>) -> Map<String, Value> {
    let mut m = failed(msg);
    how.mark(&mut m);
    m
}

/// Checks that only known arguments were given, as Ansible's action plugins do.
pub fn check_args(
    action: &str,
    args: &Map<String, Value>,
    allowed: &[&str],
) -> Result<(), Map<String, Value>> {
    let unknown = unknown_keys(args, allowed);
    if unknown.is_empty() {
        return Ok(());
    }
    let mut sorted = allowed.to_vec();
    sorted.sort_unstable();
    Err(raised(
        Failure::Raised,
        format!(
            "Unsupported parameters for ({action}) module: {}. Supported parameters include: {}.",
            unknown.join(", "),
            sorted.join(", ")
        ),
    ))
}

/// The argument names of `args` not among `allowed`, in the order given.
fn unknown_keys<'a>(args: &'a Map<String, Value>, allowed: &[&str]) -> Vec<&'a str> {
    args.keys()
        .map(String::as_str)
        .filter(|k| !allowed.contains(k))
        .collect()
}

/// A result without its internal (`_ansible_*`) keys, at every depth (a loop's items,
/// `ansible_facts`), as ansible-core strips them before showing or registering it.
pub fn without_internal_keys(result: &Map<String, Value>) -> Map<String, Value> {
    fn clean(v: &Value) -> Value {
        match v {
            Value::Object(m) => Value::Object(without_internal_keys(m)),
            Value::Array(items) => Value::Array(items.iter().map(clean).collect()),
            other => other.clone(),
        }
    }
    result
        .iter()
        .filter(|(k, _)| !k.starts_with("_ansible_"))
        .map(|(k, v)| (k.clone(), clean(v)))
        .collect()
}

/// A whole number from a keyword's templated value (`5`, `"5"`).
pub fn integer(v: &Value) -> Option<i64> {
    v.as_i64()
        .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
}

/// Checks an action's arguments against the only ones it takes (none listed: any), as
/// ansible-core's action base class checks `_VALID_ARGS`; `action` as the task wrote it.
fn valid_args(
    action: &str,
    args: &Map<String, Value>,
    valid: &[&str],
) -> Result<(), Map<String, Value>> {
    if valid.is_empty() {
        return Ok(());
    }
    let bad = unknown_keys(args, valid);
    if bad.is_empty() {
        return Ok(());
    }
    Err(failed(format!(
        "Invalid options for {action}: {}",
        bad.join(",")
    )))
}

/// Adds a warning to a result's `warnings`.
pub fn push_warning(m: &mut Map<String, Value>, w: String) {
    match m.entry("warnings").or_insert_with(|| Value::Array(vec![])) {
        Value::Array(a) => a.push(Value::String(w)),
        other => *other = serde_json::json!([w]),
    }
}

/// Where a result keeps the help text shown after one of its `warnings` (by the
/// warning's text), as ansible-core 2.19's warnings carry it: shown by the default
/// callback, never registered.
pub const WARNING_HELP: &str = "_ansible_warning_help";

/// Where a result keeps the line the default callback shows for each of its
/// `deprecations` (see [`summaries::deprecations`]), in their order: never registered.
pub const DEPRECATIONS_SHOWN: &str = "_ansible_deprecations_shown";

/// Records the help text shown after the result's warning `w`.
pub fn warning_help(m: &mut Map<String, Value>, w: &str, help: &str) {
    if let Value::Object(h) = m
        .entry(WARNING_HELP)
        .or_insert_with(|| Value::Object(Map::new()))
    {
        h.insert(w.to_string(), Value::String(help.to_string()));
    }
}

/// `{"changed": false}` plus the given fields.
pub fn ok_with(fields: Value) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("changed".into(), Value::Bool(false));
    if let Value::Object(f) = fields {
        m.extend(f);
    }
    m
}

/// A [`Context`] for unit tests of action plugins: no node; commands run through the
/// local connection, module runs are recorded and answered with their own request.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;
    use crate::plugins::connection::Connection;
    use crate::plugins::connection::local::Local;
    use std::cell::RefCell;

    /// A module run a plugin asked for.
    #[derive(Debug, Clone, PartialEq)]
    pub struct Recorded {
        pub name: String,
        pub args: Map<String, Value>,
        pub legacy: bool,
        pub transfers: Vec<Transfer>,
    }

    /// A JSON object as task arguments.
    pub fn args(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    /// A playbook directory holding `files` (path, text), and a context whose
    /// `playbook_dir` is it.
    pub fn project(files: &[(&str, &str)]) -> (tempfile::TempDir, FakeContext) {
        let dir = tempfile::tempdir().expect("a temporary directory");
        for (name, text) in files {
            let path = dir.path().join(name);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).expect("a directory");
            }
            std::fs::write(path, text).expect("a file");
        }
        let mut ctx = FakeContext::default();
        ctx.vars.set_data(
            "playbook_dir",
            serde_json::json!(dir.path().display().to_string()),
        );
        (dir, ctx)
    }

    #[derive(Default)]
    pub struct FakeContext {
        pub templar: Templar,
        pub vars: Vars,
        pub check_mode: bool,
        pub diff: bool,
        pub verbosity: u8,
        pub modules: RefCell<Vec<Recorded>>,
        pub host: String,
        pub changes: RefCell<Vec<Change>>,
        /// `job_status` calls: job id, cleanup.
        pub jobs: RefCell<Vec<(String, bool)>>,
        /// Whether the fake target is the controller (its commands run here either way).
        pub local: bool,
        /// How many times the connection was reset.
        pub resets: std::cell::Cell<usize>,
        /// The modules that run as legacy modules.
        pub legacy: Vec<String>,
        /// The task's `module_defaults`, by module name.
        pub module_defaults: Map<String, Value>,
        /// The task's `environment`.
        pub environment: Map<String, Value>,
        /// The task's action as written.
        pub action: &'static str,
    }

    impl Context for FakeContext {
        fn templar(&self) -> &Templar {
            &self.templar
        }
        fn vars(&self) -> &Vars {
            &self.vars
        }
        fn verbosity(&self) -> u8 {
            self.verbosity
        }
        fn check_mode(&self) -> bool {
            self.check_mode
        }
        fn diff(&self) -> bool {
            self.diff
        }
        fn execute_module<'a>(
            &'a self,
            request: ModuleRequest<'a>,
        ) -> LocalBoxFuture<'a, Map<String, Value>> {
            self.modules.borrow_mut().push(Recorded {
                name: request.name.to_string(),
                args: request.args,
                legacy: request.legacy,
                transfers: request.transfers,
            });
            Box::pin(std::future::ready(ok_with(
                serde_json::json!({"ran": request.name}),
            )))
        }
        fn host(&self) -> &str {
            &self.host
        }
        fn task_name(&self) -> String {
            "a task".into()
        }
        fn action(&self) -> &str {
            self.action
        }
        fn display(&self, _text: &str) {}
        fn warning(&self, _text: &str) {}
        fn has_module(&self, name: &str) -> bool {
            ["systemd", "apt", "dnf", "fakesvc"].contains(&name)
        }
        fn runs_legacy(&self, name: &str) -> bool {
            self.legacy.contains(&name.to_string())
        }
        fn change_inventory(&self, change: &Change) -> Result<bool, String> {
            let mut changes = self.changes.borrow_mut();
            let new = !changes.contains(change);
            changes.push(change.clone());
            Ok(new)
        }
        fn allow_unsandboxed(&self, _what: &str) -> Result<(), Map<String, Value>> {
            Ok(())
        }
        fn job_status<'a>(
            &'a self,
            jid: &'a str,
            cleanup: bool,
        ) -> LocalBoxFuture<'a, Map<String, Value>> {
            self.jobs.borrow_mut().push((jid.to_string(), cleanup));
            Box::pin(async { failed("no node here") })
        }
        fn local_connection(&self) -> bool {
            self.local
        }
        fn reset_connection(&self) -> LocalBoxFuture<'_, ()> {
            self.resets.set(self.resets.get() + 1);
            Box::pin(async {})
        }
        fn environment(&self) -> Result<Map<String, Value>, String> {
            Ok(self.environment.clone())
        }
        fn module_defaults(&self, module: &str) -> Result<Map<String, Value>, String> {
            Ok(self
                .module_defaults
                .get(module)
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default())
        }

        fn exec_command<'a>(
            &'a self,
            line: &'a str,
            stdin: Option<&'a [u8]>,
        ) -> LocalBoxFuture<'a, Result<ExecOutput, Map<String, Value>>> {
            Box::pin(async move {
                Local
                    .exec_command(line, stdin)
                    .await
                    .map_err(|e| failed(e.to_string()))
            })
        }
    }
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

    #[test]
    fn unknown_arguments_are_listed() {
        let args = json!({"msg": "x", "bogus": 1});
        let err = check_args(
            "debug",
            args.as_object().unwrap(),
            &["msg", "var", "verbosity"],
        )
        .unwrap_err();
        assert_eq!(
            err["msg"],
            "Unsupported parameters for (debug) module: bogus. Supported parameters include: msg, var, verbosity."
        );
    }
}
