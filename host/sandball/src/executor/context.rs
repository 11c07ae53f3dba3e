//! One task on one host, as the executor runs it: the task, its keywords, host and
//! variables, and what follows from them — the target its modules run on (its host, or
//! the host it is delegated to, reached with the connection settings Ansible would
//! use), its become settings, the target's Python (configured, or discovered as
//! ansible-core discovers it), its `environment` and `capabilities:` keywords, and the
//! host variables of how modules run there. What an action may ask of it is served in
//! `services.rs`; a module run, by the module runner (`module_run/`).

use super::Run;
use super::coerce::{keyword_bool, omitted};
use crate::assemble::interpreter::{self, PythonSetting};
use crate::playbook::{Chain, Keyword, Task};
use crate::plugins::action::{self, failed};
use crate::plugins::r#become::{Become, Keywords as BecomeKeywords};
use crate::plugins::connection::registry::{Transport, transport_for, transport_vars};
use crate::plugins::connection::{
    ConnectError, Connection, ConnectionError, SessionError, VarError,
};
use crate::policy;
use crate::template::{Var, Vars};
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// One task on one host, as its action plugin sees it.
pub(crate) struct TaskContext<'a> {
    /// The run.
    pub run: &'a Run,
    /// The task.
    pub task: &'a Task,
    /// Its keywords with those of its play, role and blocks.
    pub kw: &'a Chain<'a>,
    /// The host it runs for.
    pub host: &'a str,
    /// Its variables on that host (loop item included).
    pub vars: &'a Vars,
    /// Whether its results are hidden.
    pub no_log: bool,
    /// `check_mode`, resolved.
    pub check_mode: bool,
    /// `diff`, resolved.
    pub diff: bool,
    /// Set when the task starts a background job instead of running (`async`).
    pub background: Option<&'a Background>,
}

/// A task run as a background job (`async`): its job id and time limit; the shim keeps
/// the job, and the executor (every `poll` seconds) or `async_status` (`poll: 0`) asks
/// after it.
pub(crate) struct Background {
    /// The job id.
    pub jid: String,
    /// Seconds the job may run.
    pub limit_s: u64,
    /// Seconds between the executor's checks on the job; 0: it does not wait for it.
    pub poll_s: u64,
}

impl TaskContext<'_> {
    /// The task's name, else its action (the audit log's name for it).
    pub(crate) fn plain_name(&self) -> &str {
        self.task.name.as_deref().unwrap_or(&self.task.action)
    }
}

/// The fact that keeps the Python discovered on a host.
const DISCOVERED_PYTHON: &str = "discovered_interpreter_python";

/// The Python a module on the task's target runs with, as ansible-core picks it for
/// its modules.
pub(crate) struct TargetPython {
    /// Its path.
    pub path: String,
    /// Set when this task discovered it: the warnings discovery gave.
    discovered: Option<Vec<interpreter::Warning>>,
}

/// The target's `ansible_python_interpreter` (else `INTERPRETER_PYTHON`); when that is
/// `auto*`, the target's `discovered_interpreter_python` fact; else the Python found
/// there now, over the connection and without become, as ansible-core discovers it.
pub(crate) async fn target_python(
    cx: &TaskContext<'_>,
) -> Result<TargetPython, Map<String, Value>> {
    let to = target(cx.run, cx.kw, cx.host, cx.vars).map_err(connect_failure)?;
    let vars = target_vars(cx, &to.name);
    let configured = crate::config::settings().get("ANSIBLE_PYTHON_INTERPRETER");
    let minor = crate::compat::core().minor();
    let silent = match interpreter::python_setting(
        vars.get("ansible_python_interpreter"),
        configured,
        minor,
    ) {
        PythonSetting::Path(path) => {
            return Ok(TargetPython {
                path,
                discovered: None,
            });
        }
        PythonSetting::Auto { silent } => silent,
    };
    if let Some(Value::String(path)) = cx.run.vars.fact(&to.name, DISCOVERED_PYTHON) {
        return Ok(TargetPython {
            path,
            discovered: None,
        });
    }
    let conn = target_connection(cx, &to).await?;
    let names = interpreter::fallback_list(vars.get(FALLBACK_VAR), minor);
    let out = conn
        .exec_command(&interpreter::discovery_command(&names), None)
        .await
        .map_err(|e| {
            failed(format!(
                "Python interpreter discovery failed on {}: {e}",
                to.name
            ))
        })?;
    let found = interpreter::parse_discovery(&out.stdout);
    let (path, warnings) = interpreter::discovery_outcome(&to.name, &names, found, silent, minor);
    Ok(TargetPython {
        path,
        discovered: Some(warnings),
    })
}

/// The connection to the task's target `to` (`Err`: an unreachable result).
async fn target_connection(
    cx: &TaskContext<'_>,
    to: &Target,
) -> Result<Arc<dyn Connection>, Map<String, Value>> {
    cx.run
        .sessions
        .connection(&to.name, &to.transport)
        .await
        .map_err(|e| unreachable(e.to_string()))
}

/// The working directory a module starts in on the task's target — the login
/// directory over SSH, the controller's on the local connection — as `pwd` prints it
/// there over the task's connection (`Err`: a failed or unreachable result).
pub(crate) async fn node_workdir(cx: &TaskContext<'_>) -> Result<String, Map<String, Value>> {
    let to = target(cx.run, cx.kw, cx.host, cx.vars).map_err(connect_failure)?;
    let conn = target_connection(cx, &to).await?;
    let out = conn.exec_command("pwd", None).await.map_err(|e| {
        failed(format!(
            "cannot tell the working directory on {}: {e}",
            to.name
        ))
    })?;
    let dir = String::from_utf8_lossy(&out.stdout).trim_end().to_string();
    if out.rc != 0 || !dir.starts_with('/') {
        return Err(failed(format!(
            "cannot tell the working directory on {}: `pwd` exited {} and printed {dir:?}",
            to.name, out.rc
        )));
    }
    Ok(dir)
}

/// Adds a discovery to the result of the module run that made it, as ansible-core
/// returns it: the `discovered_interpreter_python` fact (unless the task is delegated
/// without `delegate_facts`: ansible-core then keeps it for nobody) and the warnings,
/// the one naming the Python with its help text.
/// Nothing when the task found the Python without discovering it.
pub(crate) fn report_discovery(
    cx: &TaskContext<'_>,
    python: TargetPython,
    result: &mut crate::plugins::action::TaskResult,
) {
    let TargetPython {
        path,
        discovered: Some(warnings),
    } = python
    else {
        return;
    };
    let delegated = matches!(delegated_to(cx.run, cx.kw, cx.vars), Ok(Some(_)));
    let keeps_fact = !delegated
        || keyword_bool(cx.run, cx.vars, cx.kw, Keyword::DelegateFacts, false).unwrap_or(false);
    if keeps_fact {
        let facts = result
            .entry("ansible_facts")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(f) = facts {
            f.insert(DISCOVERED_PYTHON.into(), Value::String(path.clone()));
        }
    }
    for (w, help) in warnings {
        if let Some(help) = help {
            result.warning_help(&w, help);
        }
        action::push_warning(result, w);
    }
}

/// The task's become settings on a host (`Err`: a failed result).
pub(crate) fn become_for(
    run: &Run,
    t: &Task,
    kw: &Chain<'_>,
    vars: &Vars,
) -> Result<Option<Become>, Map<String, Value>> {
    let layers: Vec<BecomeKeywords<'_>> = kw
        .levels()
        .iter()
        .map(|level| {
            // A level that sets a keyword to `omit` leaves it to the levels around.
            let get = |k| level.get(k).filter(|v| !omitted(run, vars, v));
            BecomeKeywords {
                become_: get(Keyword::Become),
                user: get(Keyword::BecomeUser),
                method: get(Keyword::BecomeMethod),
                flags: get(Keyword::BecomeFlags),
                exe: get(Keyword::BecomeExe),
            }
        })
        .collect();
    Become::resolve(&run.templar, vars, &layers, &run.options.become_)
        .map_err(|e| failed(t.location.appears_in(e)))
}

/// An UNREACHABLE result: ansible-core raises a connection's failure while the task
/// runs, so its message is "Task failed: " and the reason, and the result carries an
/// `exception` without a traceback.
pub(crate) fn unreachable(msg: String) -> Map<String, Value> {
    action::ok_with(json!({
        "unreachable": true,
        "msg": format!("Task failed: {msg}"),
        "exception": action::NO_TRACEBACK,
    }))
}

/// The UNREACHABLE result of a host that could not be connected to; a become that
/// failed (su refused the password) fails the task instead, as in ansible-core, and so
/// do a connection plugin the release followed no longer has and a node that has no
/// shim for a component to run in.
pub(crate) fn connect_failure(e: ConnectError) -> Map<String, Value> {
    match e {
        ConnectError::Connection(ConnectionError::Become(_)) => action::failed(e.to_string()),
        ConnectError::NotFound(_) => action::failed(format!("Task failed: {e}")),
        ConnectError::Session(SessionError::Version { .. })
        | ConnectError::Unsupported(_)
        | ConnectError::Vars(_)
        | ConnectError::Connection(_) => unreachable(e.to_string()),
        ConnectError::Session(e) => unreachable(format!("Failed to start the shim session: {e}")),
        // The node is reachable (its legacy modules and `raw` still run): the task fails.
        ConnectError::NoShim(e) => action::failed(format!(
            "{e}: component modules cannot run there. Build sandball-shim for {} and point SANDBALL_SHIM at it, or set sandball_legacy_modules=all for the host to run ansible-core's modules instead",
            e.node
        )),
    }
}

/// Where a task's module runs: its host, or the host it is delegated to.
pub(crate) struct Target {
    /// The inventory name of the host the module runs on (sessions are kept per name).
    pub name: String,
    /// How to reach it.
    pub transport: Transport,
}

/// The host a task is delegated to (`delegate_to`, `local_action`), templated with the
/// task's host's variables; `None` when it runs on its own host.
pub(crate) fn delegated_to(
    run: &Run,
    kw: &Chain<'_>,
    vars: &Vars,
) -> Result<Option<String>, VarError> {
    let Some(setting) = kw.nearest_setting(Keyword::DelegateTo) else {
        return Ok(None);
    };
    match run.templar.template(&setting.value, vars) {
        Ok(Value::Null) => Ok(None),
        Ok(Value::String(name)) if name.trim().is_empty() => Ok(None),
        Ok(Value::String(name)) => Ok(Some(name)),
        Ok(other) => Ok(Some(other.to_string())),
        Err(source) => Err(VarError::Template {
            name: Keyword::DelegateTo.name().to_string(),
            at: Some(Box::new(setting.at.clone())),
            source: Box::new(source),
        }),
    }
}

/// How the task reaches the host its module runs on (its own, or the one it is
/// delegated to): the connection variables (`ansible_connection`, `ansible_user`,
/// `ansible_port`…) — for the task's own host those of the task, wherever they were
/// set (inventory, play or task `vars`, `set_fact`, extra vars); for a delegated host
/// its inventory's — and where they are unset the task's `connection`, `remote_user`
/// and `port` keywords (templated), as Ansible ranks them: variables over keywords. A
/// delegated host the inventory does not know is reached by its name (`localhost` on
/// the local connection).
pub(crate) fn target(
    run: &Run,
    kw: &Chain<'_>,
    host: &str,
    vars: &Vars,
) -> Result<Target, ConnectError> {
    let name = delegated_to(run, kw, vars)
        .map_err(ConnectError::from)?
        .unwrap_or_else(|| host.to_string());
    let mut host_vars = if name == host {
        task_transport_vars(run, vars)?
    } else {
        run.inventory().host_vars(&name)
    };
    for (keyword, variable) in [
        (Keyword::Connection, "ansible_connection"),
        (Keyword::RemoteUser, "ansible_user"),
        (Keyword::Port, "ansible_port"),
    ] {
        if host_vars.contains_key(variable) {
            continue;
        }
        if let Some(setting) = kw.nearest_setting(keyword) {
            let value = run
                .templar
                .template(&setting.value, vars)
                .map_err(|source| VarError::Template {
                    name: keyword.name().to_string(),
                    at: Some(Box::new(setting.at.clone())),
                    source: Box::new(source),
                })?;
            host_vars.insert(variable.to_string(), value);
        }
    }
    // The command line comes last: `-c`, `-u`, `--private-key`, `-T`,
    // `--ssh-common-args`, `--ssh-extra-args`.
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
        (
            &run.options.timeout,
            &["ansible_ssh_timeout", "ansible_timeout"][..],
        ),
        (
            &run.options.ssh_common_args,
            &["ansible_ssh_common_args"][..],
        ),
        (&run.options.ssh_extra_args, &["ansible_ssh_extra_args"][..]),
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

/// The connection variables the user set for the task's host, templated. Only
/// trusted (user-written) values count: the `ansible_host` and `ansible_connection`
/// the executor fills in for templates to read stand for the defaults, which
/// [`target`] and [`transport_for`] work out themselves.
fn task_transport_vars(run: &Run, vars: &Vars) -> Result<Map<String, Value>, ConnectError> {
    let mut found = Map::new();
    for name in transport_vars() {
        if let Some(Var::Trusted(value)) = vars.get(name) {
            let value = run
                .templar
                .template(value, vars)
                .map_err(|source| VarError::Template {
                    name: (*name).to_string(),
                    at: None,
                    source: Box::new(source),
                })?;
            found.insert((*name).to_string(), value);
        }
    }
    Ok(found)
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
/// As in Ansible, what is `omit` (a value, an item, a level) is left out, a value that
/// needs the `ansible_env` facts before they are gathered is left out, and an item that
/// is not a mapping is skipped with a warning.
pub(crate) fn environment(
    run: &Run,
    kw: &Chain<'_>,
    vars: &Vars,
) -> Result<Map<String, Value>, String> {
    let mut merged = Map::new();
    for level in kw.all(Keyword::Environment) {
        let items = match level {
            Value::Array(items) => items.clone(),
            Value::Null => Vec::new(),
            one => vec![one.clone()],
        };
        let written = Value::Array(items.clone());
        for item in items {
            match item {
                Value::Object(m) => {
                    for (name, value) in m {
                        match run.templar.template(&value, vars) {
                            Ok(Value::String(s)) if s == crate::template::OMIT => {}
                            Ok(value) => {
                                merged.insert(name, value);
                            }
                            Err(e) if e.to_string().contains("ansible_env") => {}
                            Err(e) => return Err(e.to_string()),
                        }
                    }
                }
                other => match run
                    .templar
                    .template(&other, vars)
                    .map_err(|e| e.to_string())?
                {
                    Value::Object(m) => merged.extend(
                        m.into_iter()
                            .filter(|(_, v)| v.as_str() != Some(crate::template::OMIT)),
                    ),
                    Value::String(s) if s == crate::template::OMIT => {}
                    _ => run.callback.warning(&format!(
                        "could not parse environment value, skipping: {}",
                        sandball_pycompat::pyfmt::py_repr(&written)
                    )),
                },
            }
        }
    }
    Ok(merged)
}

/// A variable's value, templated when it is trusted.
pub(crate) fn var_value(run: &Run, vars: &Vars, name: &str) -> Option<Value> {
    match vars.get(name)? {
        Var::Trusted(v) => run.templar.template(v, vars).ok(),
        Var::Data(v) => Some(v.clone()),
        Var::Hosts(_) => None,
    }
}

/// The settings of how modules run on the host the module runs on (see
/// [`is_connection_var`]): a delegated host's own.
pub(crate) fn target_vars(cx: &TaskContext<'_>, name: &str) -> Map<String, Value> {
    if name == cx.host {
        connection_vars(cx.run, cx.vars)
    } else {
        cx.run
            .inventory()
            .host_vars(name)
            .into_iter()
            .filter(|(n, _)| is_connection_var(n))
            .collect()
    }
}

/// The variable listing the names Python discovery looks for.
const FALLBACK_VAR: &str = "ansible_interpreter_python_fallback";

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
                FALLBACK_VAR
                    | "ansible_pipelining"
                    | "ansible_remote_tmp"
                    | "ansible_shell_executable"
                    | "ansible_keep_remote_files"
                    | WORLD_READABLE_VAR
                    | "ansible_inject_invocation"
            ))
        || n == FORK_SERVER_VAR
}

/// The variable that allows world-readable temporary files for a legacy module run as
/// an unprivileged become user, when nothing safer works.
pub(crate) const WORLD_READABLE_VAR: &str = "ansible_shell_allow_world_readable_temp";

/// The variable (and `SANDBALL_FORK_SERVER` the setting) that turns the Python fork
/// server off for a host: its piped modules then start an interpreter each.
pub(crate) const FORK_SERVER_VAR: &str = "sandball_fork_server";
