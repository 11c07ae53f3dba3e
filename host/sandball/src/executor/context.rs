//! The executor's side of an action plugin's [`Context`]: one task on one host, and
//! the services a plugin may ask for — a module run on the task's target (a sandball
//! component under the grant policy gives it, with controller files sent to the node
//! first; or a legacy module assembled the classic way, if policy allows), and a
//! command line over the target's connection. The target is the task's host or the
//! host it is delegated to, reached with the connection settings Ansible would use.

use super::Run;
use crate::assemble::Component;
use crate::assemble::interpreter::{self, PythonSetting};
use crate::playbook::{Chain, Keyword, Task};
use crate::plugins::action::copy;
use crate::plugins::action::legacy;
use crate::plugins::action::normal::{self, ModuleFlags};
use crate::plugins::action::{self, Context, ModuleRequest, failed};
use crate::plugins::r#become::{Become, Keywords as BecomeKeywords};
use crate::plugins::connection::registry::{Transport, transport_for, transport_vars};
use crate::plugins::connection::{
    ConnectError, ConnectionError, ExecOutput, JobReply, JobStart, Session, SessionError,
};
use crate::policy;
use crate::template::{Templar, Var, Vars};
use futures::future::LocalBoxFuture;
use sandball_wire::capability::Grant;
use sandball_wire::protocol::{Job, JobState};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
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

impl Context for TaskContext<'_> {
    fn templar(&self) -> &Templar {
        &self.run.templar
    }

    fn vars(&self) -> &Vars {
        self.vars
    }

    fn verbosity(&self) -> u8 {
        self.run.options.verbosity
    }

    fn check_mode(&self) -> bool {
        self.check_mode
    }

    fn diff(&self) -> bool {
        self.diff
    }

    fn background(&self) -> Option<(u64, u64)> {
        self.background.map(|b| (b.limit_s, b.poll_s))
    }

    fn execute_module<'a>(
        &'a self,
        request: ModuleRequest<'a>,
    ) -> LocalBoxFuture<'a, Map<String, Value>> {
        Box::pin(async move {
            if request.foreground && self.background.is_some() {
                let foreground = TaskContext {
                    background: None,
                    ..*self
                };
                return foreground.execute_module(request).await;
            }
            let legacy = runs_legacy(self.run, request.name, request.legacy, self.vars);
            // ansible-core's modules are Python: the first one a host runs finds its
            // Python, whichever sandball runs in its place. A legacy module that is
            // not Python needs none.
            let python = if !legacy
                || self
                    .run
                    .legacy
                    .get(request.name)
                    .is_ok_and(|m| crate::assemble::legacy::needs_python(&m))
            {
                match target_python(self).await {
                    Ok(p) => Some(p),
                    Err(r) => return r,
                }
            } else {
                None
            };
            let path = python.as_ref().map_or("", |p| p.path.as_str());
            let mut result = if legacy {
                legacy_module(self, request, path).await
            } else {
                // A background job's refusal reaches `async_status`, not this task.
                let component = request.name;
                let handover = self
                    .background
                    .is_none()
                    .then(|| crate::plugins::action::shell::as_legacy(request.clone()));
                let result = module(self, request).await;
                match handover {
                    Some(request) => hand_over(self, result, component, request, path).await,
                    None => result,
                }
            };
            if let Some(TargetPython {
                path,
                discovered: Some(warnings),
            }) = python
            {
                report_discovery(self, path, warnings, &mut result);
            }
            result
        })
    }

    fn host(&self) -> &str {
        self.host
    }

    fn task_name(&self) -> String {
        self.plain_name().to_string()
    }

    fn action(&self) -> &str {
        &self.task.action
    }

    fn display(&self, text: &str) {
        self.run.callback.verbose(0, None, text);
    }

    fn warning(&self, text: &str) {
        self.run.callback.warning(text);
    }

    fn has_module(&self, name: &str) -> bool {
        self.run.modules.exists(name) || self.run.legacy.get(name).is_ok()
    }

    fn runs_legacy(&self, name: &str) -> bool {
        runs_legacy(self.run, name, false, self.vars)
    }

    fn change_inventory(&self, change: &crate::inventory::Change) -> Result<bool, String> {
        self.run.change_inventory(change).map_err(|e| e.to_string())
    }

    fn allow_unsandboxed(&self, what: &str) -> Result<(), Map<String, Value>> {
        unsandboxed(self.run, what, self.host)
    }

    fn job_status<'a>(
        &'a self,
        jid: &'a str,
        cleanup: bool,
    ) -> LocalBoxFuture<'a, Map<String, Value>> {
        Box::pin(async move {
            let (_, mut guard) = match target_session(self).await {
                Ok(s) => s,
                Err(r) => return r,
            };
            let Some(session) = guard.as_mut() else {
                return unreachable("the shim session is not open".into());
            };
            let async_dir = async_dir(self.run, self.vars);
            match session.job_status(jid, async_dir.as_deref(), cleanup).await {
                Ok(reply) => job_result(jid, reply),
                Err(e) => {
                    if e.broke_session() {
                        *guard = None;
                    }
                    failed(e.to_string())
                }
            }
        })
    }

    fn local_connection(&self) -> bool {
        target(self.run, self.kw, self.host, self.vars).is_ok_and(|to| to.transport.local())
    }

    fn reset_connection(&self) -> LocalBoxFuture<'_, ()> {
        Box::pin(async move {
            let name = target(self.run, self.kw, self.host, self.vars)
                .map(|to| to.name)
                .unwrap_or_else(|_| self.host.to_string());
            self.run.sessions.reset(&name).await;
        })
    }

    fn environment(&self) -> Result<Map<String, Value>, String> {
        environment(self.run, self.kw, self.vars)
    }

    fn module_defaults(&self, module: &str) -> Result<Map<String, Value>, String> {
        super::task::module_defaults(self.run, self.kw, module, self.vars)
    }

    fn exec_command<'a>(
        &'a self,
        line: &'a str,
        stdin: Option<&'a [u8]>,
    ) -> LocalBoxFuture<'a, Result<ExecOutput, Map<String, Value>>> {
        Box::pin(async move {
            let become_ = become_for(self.run, self.task, self.kw, self.vars)?;
            let to = target(self.run, self.kw, self.host, self.vars).map_err(connect_failure)?;
            let conn = self
                .run
                .sessions
                .connection(&to.name, &to.transport)
                .await
                .map_err(connect_failure)?;
            crate::plugins::r#become::exec_command(&*conn, become_.as_ref(), line, stdin)
                .await
                .map_err(|e| failed(e.to_string()))
        })
    }
}

impl TaskContext<'_> {
    /// The settings that become a module's internal arguments.
    fn flags(&self) -> ModuleFlags {
        ModuleFlags {
            check_mode: self.check_mode,
            diff: self.diff,
            no_log: self.no_log,
            verbosity: self.run.options.verbosity,
        }
    }

    /// The task's name, else its action (the audit log's name for it).
    fn plain_name(&self) -> &str {
        self.task.name.as_deref().unwrap_or(&self.task.action)
    }
}

/// The fact that keeps the Python discovered on a host.
const DISCOVERED_PYTHON: &str = "discovered_interpreter_python";

/// The Python a module on the task's target runs with, as ansible-core picks it for
/// its modules.
struct TargetPython {
    /// Its path.
    path: String,
    /// Set when this task discovered it: the warnings discovery gave.
    discovered: Option<Vec<interpreter::Warning>>,
}

/// The target's `ansible_python_interpreter` (else `INTERPRETER_PYTHON`); when that is
/// `auto*`, the target's `discovered_interpreter_python` fact; else the Python found
/// there now, over the connection and without become, as ansible-core discovers it.
async fn target_python(cx: &TaskContext<'_>) -> Result<TargetPython, Map<String, Value>> {
    let to = target(cx.run, cx.kw, cx.host, cx.vars).map_err(|e| unreachable(e.to_string()))?;
    let vars = target_vars(cx, &to.name);
    let configured = std::env::var("ANSIBLE_PYTHON_INTERPRETER").ok();
    let silent = match interpreter::python_setting(
        vars.get("ansible_python_interpreter"),
        configured.as_deref(),
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
    let conn = cx
        .run
        .sessions
        .connection(&to.name, &to.transport)
        .await
        .map_err(|e| unreachable(e.to_string()))?;
    let names = interpreter::fallback_list(vars.get(FALLBACK_VAR));
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
    let (path, warnings) = interpreter::discovery_outcome(&to.name, &names, found, silent);
    Ok(TargetPython {
        path,
        discovered: Some(warnings),
    })
}

/// Adds a discovery to the result of the module run that made it, as ansible-core
/// returns it: the `discovered_interpreter_python` fact (unless the task is delegated
/// without `delegate_facts`: ansible-core then keeps it for nobody) and the warnings,
/// the one naming the Python with its help text.
fn report_discovery(
    cx: &TaskContext<'_>,
    path: String,
    warnings: Vec<interpreter::Warning>,
    result: &mut Map<String, Value>,
) {
    let delegated = matches!(delegated_to(cx.run, cx.kw, cx.vars), Ok(Some(_)));
    let keeps_fact = !delegated
        || super::task::keyword_bool(cx.run, cx.vars, cx.kw, Keyword::DelegateFacts, false)
            .unwrap_or(false);
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
            action::warning_help(result, &w, help);
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
            let get = |k| level.get(k).filter(|v| !super::task::omitted(run, vars, v));
            BecomeKeywords {
                become_: get(Keyword::Become),
                user: get(Keyword::BecomeUser),
                method: get(Keyword::BecomeMethod),
                flags: get(Keyword::BecomeFlags),
                exe: get(Keyword::BecomeExe),
            }
        })
        .collect();
    Become::resolve(&run.templar, vars, &layers, &run.options.become_).map_err(|e| {
        failed(format!(
            "{e}\n\nThe error appears to be in '{}'.",
            t.location
        ))
    })
}

/// An UNREACHABLE result: ansible-core raises a connection's failure while the task
/// runs, so its message is "Task failed: " and the reason.
fn unreachable(msg: String) -> Map<String, Value> {
    action::ok_with(json!({"unreachable": true, "msg": format!("Task failed: {msg}")}))
}

/// The UNREACHABLE result of a host that could not be connected to; a become that
/// failed (su refused the password) fails the task instead, as in ansible-core.
fn connect_failure(e: ConnectError) -> Map<String, Value> {
    match e {
        ConnectError::Connection(ConnectionError::Become(_)) => action::failed(e.to_string()),
        ConnectError::Session(SessionError::Version { .. })
        | ConnectError::Unsupported(_)
        | ConnectError::Vars(_)
        | ConnectError::Connection(_) => unreachable(e.to_string()),
        ConnectError::Session(e) => unreachable(format!("Failed to start the shim session: {e}")),
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
/// delegated to): the connection variables (`ansible_connection`, `ansible_user`,
/// `ansible_port`…) — for the task's own host those of the task, wherever they were
/// set (inventory, play or task `vars`, `set_fact`, extra vars); for a delegated host
/// its inventory's — and where they are unset the task's `connection`, `remote_user`
/// and `port` keywords (templated), as Ansible ranks them: variables over keywords. A
/// delegated host the inventory does not know is reached by its name (`localhost` on
/// the local connection).
fn target(run: &Run, kw: &Chain<'_>, host: &str, vars: &Vars) -> Result<Target, ConnectError> {
    let name = delegated_to(run, kw, vars)
        .map_err(ConnectError::Vars)?
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
            let value = run.templar.template(&setting.value, vars).map_err(|e| {
                ConnectError::Vars(format!("{} (at {}): {e}", keyword.name(), setting.at))
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
                .map_err(|e| ConnectError::Vars(format!("{name}: {e}")))?;
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
                        sandball_wire::python::py_repr(&written)
                    )),
                },
            }
        }
    }
    Ok(merged)
}

/// Whether the task's module runs as a legacy module: there is no built-in component
/// of that name, a library module of that name overrides it, or the task (or
/// `SANDBALL_LEGACY_MODULES`) asks for the legacy one.
pub(crate) fn runs_legacy(run: &Run, module: &str, legacy: bool, vars: &Vars) -> bool {
    let short = crate::assemble::component::short_name(module);
    legacy
        || !run.modules.exists(module)
        || run.legacy.in_library(module)
        || run
            .legacy
            .prefers_legacy(short, var_value(run, vars, PREFER_LEGACY_VAR).as_ref())
}

/// The name a module runs under (`_ansible_module_name`, which its messages show): as
/// the task wrote it for the task's own module, `ansible.legacy.NAME` for a module one
/// of Ansible's action plugins runs (`copy`, `package`…), as ansible-core names them.
fn invoked_name(cx: &TaskContext<'_>, module: &str) -> String {
    let plugin = crate::assemble::component::short_name(&cx.task.action);
    if module.contains('.') || !crate::plugins::action::is_builtin_action(plugin) {
        module.to_string()
    } else {
        format!("ansible.legacy.{module}")
    }
}

async fn module(cx: &TaskContext<'_>, request: ModuleRequest<'_>) -> Map<String, Value> {
    let (run, host) = (cx.run, cx.host);
    let component: Arc<Component> = match run.modules.get(request.name) {
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
    let invoked = invoked_name(cx, request.name);
    let mut args = request.args;
    let (to_name, mut guard) = match target_session(cx).await {
        Ok(s) => s,
        Err(r) => return r,
    };
    // The grant is the one policy gives the host the module runs on.
    let subject = policy::Subject {
        module: &component.name,
        sha256: Some(&component.sha256),
        builtin: component.builtin,
        host: Some(&to_name),
    };
    let flags = cx.flags();
    let Some(session) = guard.as_mut() else {
        return unreachable("the shim session is not open".into());
    };
    // Controller files go to the node first, in the same session as the run (files
    // staged on the node belong to their session).
    for transfer in &request.transfers {
        match copy::send(session, &transfer.local).await {
            Ok(node_path) => {
                args.insert(transfer.arg.into(), Value::String(node_path));
            }
            Err(e) => {
                if e.broke_session() {
                    *guard = None;
                }
                return failed(e.to_string());
            }
        }
    }
    let grant = match capability_keywords(run, cx.kw, cx.vars).and_then(|adjustments| {
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
                cx.task.location
            ));
        }
    };
    let mut grant = grant;
    if flags.check_mode {
        // A dry run changes nothing: every path is granted for reading only, and a
        // missing directory is seen as empty (it would be made by an earlier task of a
        // real run) rather than created.
        for fs in &mut grant.fs {
            fs.ops = sandball_wire::capability::FsOps::READ;
            fs.create_parents = false;
        }
    }
    // The task's `environment` reaches the programs the component runs (the SDK sets
    // it on each), through an internal argument.
    match environment(run, cx.kw, cx.vars) {
        Ok(env) if env.is_empty() => {}
        Ok(env) => {
            args.insert("_ansible_environment".into(), Value::Object(env));
        }
        Err(e) => {
            return failed(format!(
                "{e}\n\nThe error appears to be in '{}'.",
                cx.task.location
            ));
        }
    }
    if let Some(background) = cx.background {
        let job = Job::Module {
            sha256: component.sha256.clone(),
            module: component.name.clone(),
            args: normal::with_internal_args(&invoked, &args, flags),
            grant: grant.clone(),
        };
        let (r, broke) = start_job(cx, session, background, Some(&component.bytes), job, &[]).await;
        if broke {
            *guard = None;
        }
        if let Some(log) = run.audit_log.as_ref().map(|_| grant) {
            audit(
                run,
                &policy::audit_log::Entry {
                    host,
                    task: cx.plain_name(),
                    module: &component.name,
                    sha256: &component.sha256,
                    manifest: Some(&component.manifest),
                    args: &args,
                    no_log: cx.no_log,
                    grant: Some(&log),
                    result: &r,
                },
            );
        }
        return r;
    }
    let comp: &Component = &component;
    let send = move |args: Value, grant: Grant| async move {
        session
            .run_module(&comp.sha256, &comp.bytes, &comp.name, args, grant)
            .await
    };
    let hint = |capability: &str| policy::how_to_grant(&run.policy, &subject, capability);
    let logged_grant = run.audit_log.as_ref().map(|_| grant.clone());
    let r = match normal::run(&component, &invoked, &args, grant, &hint, flags, send).await {
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
                task: cx.plain_name(),
                module: &component.name,
                sha256: &component.sha256,
                manifest: Some(&component.manifest),
                args: &args,
                no_log: cx.no_log,
                grant: Some(grant),
                result: &r,
            },
        );
    }
    r
}

/// The task's target and its shim session (as the task's become user), opened if need
/// be; `Err` is the task's result.
async fn target_session(
    cx: &TaskContext<'_>,
) -> Result<(String, tokio::sync::OwnedMutexGuard<Option<Session>>), Map<String, Value>> {
    let run = cx.run;
    let to = target(run, cx.kw, cx.host, cx.vars).map_err(|e| unreachable(e.to_string()))?;
    let become_ = become_for(run, cx.task, cx.kw, cx.vars)?;
    let slot = run.sessions.slot(&to.name, &to.transport, become_.as_ref());
    let mut guard = slot.lock_owned().await;
    let fresh = guard.is_none();
    run.sessions
        .ensure_open(&mut guard, &to.name, &to.transport, become_.as_ref())
        .await
        .map_err(connect_failure)?;
    if fresh && let Some(session) = guard.as_mut() {
        run.callback
            .verbose(3, Some(&to.name), &format!("EXEC {}", session.command));
        // The playbook's components go to a new session at once, to be compiled while
        // the first tasks run.
        let wanted = run.modules.wanted();
        let modules: Vec<(&str, &[u8])> = wanted
            .iter()
            .map(|c| (c.sha256.as_str(), c.bytes.as_slice()))
            .collect();
        if let Some(b) = &become_ {
            share_compiled(run, &to, b, session, &modules).await;
        }
        match session.precompile(&modules).await {
            Ok(count) => tracing::debug!(host = %to.name, count, "precompiling modules"),
            Err(e) => {
                tracing::debug!(host = %to.name, error = %e, "modules not precompiled");
                if e.broke_session() {
                    *guard = None;
                    run.sessions
                        .ensure_open(&mut guard, &to.name, &to.transport, become_.as_ref())
                        .await
                        .map_err(connect_failure)?;
                }
            }
        }
    }
    Ok((to.name, guard))
}

/// Gives a new become user's session the compiled code of `modules` that its cache
/// lacks and the node's root holds, so that it does not compile them again: read
/// from the cache of the login session's shim when the login is root (as the
/// controller knows it: a local controller running as root, an SSH login as root;
/// see [`Transport::logs_in_as_root`]), never from another user's, which a program
/// running as that user could have changed. Best effort: what cannot be shared (the
/// login session busy, code missing or for another engine) is compiled by the shim
/// as before.
async fn share_compiled(
    run: &Run,
    to: &Target,
    become_: &Become,
    session: &mut Session,
    modules: &[(&str, &[u8])],
) {
    if become_.user == "root" || !to.transport.logs_in_as_root() || modules.is_empty() {
        return;
    }
    let shas: Vec<&str> = modules.iter().map(|(sha, _)| *sha).collect();
    let missing = match session.uncompiled(&shas).await {
        Ok(m) if !m.is_empty() => m,
        _ => return,
    };
    let slot = run.sessions.slot(&to.name, &to.transport, None);
    // A login session busy with another task (one delegated here) is not waited for.
    let Ok(mut root) = slot.try_lock() else {
        return;
    };
    if let Err(e) = run
        .sessions
        .ensure_open(&mut root, &to.name, &to.transport, None)
        .await
    {
        tracing::debug!(host = %to.name, error = %e, "no root session to share compiled code from");
        return;
    }
    let Some(donor) = root.as_mut() else { return };
    let engine = session.node.engine.clone();
    if donor.node.engine != engine {
        return;
    }
    let mut shared = 0;
    for sha in &missing {
        let code = match donor.compiled_code(sha).await {
            Ok(Some(code)) => code,
            Ok(None) => continue,
            Err(e) => {
                if e.broke_session() {
                    *root = None;
                }
                return;
            }
        };
        if session.put_compiled(sha, &engine, &code).await.is_err() {
            return;
        }
        shared += 1;
    }
    tracing::debug!(host = %to.name, user = %become_.user, shared, "compiled code shared by root");
}

/// Where the target keeps its job files: `ansible_async_dir`, else `ANSIBLE_ASYNC_DIR`,
/// else the shim's default (`~/.ansible_async`).
fn async_dir(run: &Run, vars: &Vars) -> Option<String> {
    match var_value(run, vars, "ansible_async_dir") {
        Some(Value::String(dir)) => Some(dir),
        _ => std::env::var("ANSIBLE_ASYNC_DIR").ok(),
    }
}

/// Starts a background job in `session`: the task's result (`started`, not
/// `finished`, the job id and file, as Ansible reports a task with `poll: 0`), and
/// whether the session broke.
async fn start_job(
    cx: &TaskContext<'_>,
    session: &mut Session,
    background: &Background,
    module_bytes: Option<&[u8]>,
    job: Job,
    stdin: &[u8],
) -> (Map<String, Value>, bool) {
    let async_dir = async_dir(cx.run, cx.vars);
    let start = JobStart {
        jid: &background.jid,
        async_dir: async_dir.as_deref(),
        limit_s: background.limit_s,
        module_bytes,
    };
    match session.start_job(start, job, stdin).await {
        Ok(reply) => {
            let mut r = Map::new();
            r.insert("ansible_job_id".into(), json!(background.jid));
            r.insert("started".into(), json!(true));
            r.insert("finished".into(), json!(false));
            r.insert("results_file".into(), json!(reply.results_file));
            r.insert("changed".into(), json!(true));
            (r, false)
        }
        Err(e) => {
            let broke = e.broke_session();
            (failed(format!("cannot start the job: {e}")), broke)
        }
    }
}

/// The result `async_status` returns for what the shim says of a job: the job's own
/// result once it has finished, as its module run would have been reported.
fn job_result(jid: &str, reply: JobReply) -> Map<String, Value> {
    let mut r = match reply.state {
        JobState::Missing => {
            let mut r = failed("could not find job");
            r.insert("finished".into(), json!(true));
            r.insert("started".into(), json!(true));
            r
        }
        JobState::Running => {
            let mut r = Map::new();
            r.insert("finished".into(), json!(false));
            r.insert("started".into(), json!(true));
            r.insert("changed".into(), json!(false));
            r
        }
        JobState::Finished {
            result:
                sandball_wire::protocol::RunResult {
                    outcome: sandball_wire::protocol::Outcome::TimedOut { .. },
                    ..
                },
            ..
        } => timed_out(None),
        JobState::Finished {
            module,
            result,
            stdout,
        } => {
            let stderr = result.stderr.clone();
            let reply = crate::plugins::connection::RunReply {
                outcome: result.outcome,
                stdout: stdout.into_bytes(),
                stderr: result.stderr,
                denials: result.denials,
                denials_omitted: result.denials_omitted,
                warnings: result.warnings,
            };
            let mut r = normal::interpret(&module, reply, &[], &|capability| {
                format!("grant {capability} to the module in the policy")
            });
            // What a background job wrote to stderr is its result's `stderr`, as
            // ansible-core's async wrapper reports it (a failure already says it).
            if !stderr.is_empty() && !r.contains_key("module_stderr") {
                r.insert("stderr".into(), json!(stderr));
            }
            // ansible-core's async wrapper keeps no `invocation`.
            r.remove("invocation");
            if let Some(msg) = crate::plugins::action::legacy::python_exception(&stderr)
                && r.contains_key("module_stderr")
            {
                r.insert("msg".into(), json!(msg));
            }
            r.insert("finished".into(), json!(true));
            r.insert("started".into(), json!(true));
            r
        }
        JobState::TimedOut { pid, .. } => timed_out(Some(pid)),
        JobState::Erased => {
            let mut r = Map::new();
            r.insert("erased".into(), json!(reply.results_file));
            r.insert("finished".into(), json!(false));
            r.insert("started".into(), json!(false));
            r.insert("changed".into(), json!(false));
            r
        }
    };
    r.insert("ansible_job_id".into(), json!(jid));
    r.entry("results_file")
        .or_insert_with(|| json!(reply.results_file));
    r
}

/// A job stopped at its time limit, as `async_status` reports it.
fn timed_out(pid: Option<u32>) -> Map<String, Value> {
    let mut r = failed("Timeout exceeded");
    if let Some(pid) = pid {
        r.insert("child_pid".into(), json!(pid));
    }
    r.insert("finished".into(), json!(true));
    r.insert("started".into(), json!(true));
    r
}

/// Sends controller files for a legacy module to a private temporary directory (umask
/// 77) made by the user the module runs as; the directory and each file's path there,
/// `None` when there are none.
async fn send_files(
    conn: &dyn crate::plugins::connection::Connection,
    become_: Option<&Become>,
    transfers: &[action::Transfer],
) -> Result<Option<(String, Vec<String>)>, String> {
    if transfers.is_empty() {
        return Ok(None);
    }
    let exec = |line: String, data: Option<Vec<u8>>| async move {
        crate::plugins::r#become::exec_command(conn, become_, &line, data.as_deref())
            .await
            .map_err(|e| e.to_string())
            .and_then(|out| {
                if out.rc == 0 {
                    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
                } else {
                    Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
                }
            })
    };
    let dir = exec("umask 77 && mktemp -d".into(), None)
        .await
        .map_err(|e| format!("cannot make a temporary directory on the node: {e}"))?;
    let mut paths = Vec::new();
    for (i, t) in transfers.iter().enumerate() {
        let data = std::fs::read(&t.local)
            .map_err(|e| format!("Could not read {}: {e}", t.local.display()))?;
        let name = t
            .local
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| format!("source{i}"));
        let path = format!("{dir}/{name}");
        exec(
            format!("umask 77 && cat > {}", crate::plugins::shell::quote(&path)),
            Some(data),
        )
        .await
        .map_err(|e| format!("cannot send {} to the node: {e}", t.local.display()))?;
        paths.push(path);
    }
    Ok(Some((dir, paths)))
}

/// Legacy modules and scripts run outside the WebAssembly sandbox, with the connection
/// user's rights: policy decides whether that may happen on a host. When it asks for a
/// warning: at `-v`, one per name as it first runs; else one line for the playbook at
/// its end (`Run::playbook`).
fn unsandboxed(run: &Run, name: &str, host: &str) -> Result<(), Map<String, Value>> {
    match policy::legacy_decision(&run.policy, name, host) {
        policy::LegacyDecision::Allow => Ok(()),
        policy::LegacyDecision::Warn(msg) => {
            if run.legacy.first_warning(name) && run.options.verbosity >= 1 {
                run.callback.warning(&msg);
            }
            Ok(())
        }
        policy::LegacyDecision::Deny(msg) => Err(failed(msg)),
    }
}

/// A built-in component's result, or, when the component refused before changing
/// anything an option or a value it does not carry out
/// ([`sandball_wire::NOT_CARRIED_OUT`]), the result of ansible-core's module of that
/// name run instead, as policy allows legacy modules on the host. Without that module
/// (no ansible-core on the controller), or when policy refuses it, the refusal stands,
/// saying why.
async fn hand_over(
    cx: &TaskContext<'_>,
    mut result: Map<String, Value>,
    component: &str,
    request: ModuleRequest<'_>,
    python: &str,
) -> Map<String, Value> {
    if result.remove(sandball_wire::NOT_CARRIED_OUT) != Some(Value::Bool(true)) {
        return result;
    }
    let (run, host) = (cx.run, cx.host);
    let Ok(module) = run.legacy.get(request.name) else {
        return result;
    };
    let refusal = result
        .get("msg")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .trim_end_matches('.')
        .to_string();
    if let policy::LegacyDecision::Deny(why) =
        policy::legacy_decision(&run.policy, &module.name, host)
    {
        let msg = format!("{refusal}. ansible-core's module would carry it out, but {why}");
        result.insert("msg".into(), Value::String(msg));
        return result;
    }
    run.callback.verbose(
        1,
        Some(host),
        &format!(
            "sandball's {} component does not carry this task out ({refusal}): running {} instead",
            crate::assemble::component::short_name(component),
            module.path.display()
        ),
    );
    legacy_module(cx, request, python).await
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

/// The settings of how modules run on the host the module runs on (see
/// [`is_connection_var`]): a delegated host's own.
fn target_vars(cx: &TaskContext<'_>, name: &str) -> Map<String, Value> {
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
                    | legacy::WORLD_READABLE_VAR
            ))
        || n == legacy::FORK_SERVER_VAR
}

/// A task whose module is not a built-in component (or that asks for the legacy
/// module): found and assembled the classic way, run over the host's connection.
async fn legacy_module(
    cx: &TaskContext<'_>,
    request: ModuleRequest<'_>,
    python: &str,
) -> Map<String, Value> {
    let (run, host) = (cx.run, cx.host);
    let short = crate::assemble::component::short_name(request.name);
    let become_ = match become_for(run, cx.task, cx.kw, cx.vars) {
        Ok(b) => b,
        Err(e) => return e,
    };
    let module = match run.legacy.get(request.name) {
        Ok(m) => m,
        Err(e) => {
            return failed(format!(
                "{e}; and no sandball component '{short}' in: {}",
                run.modules.searched()
            ));
        }
    };
    if run.options.verbosity >= 1
        && let Some(note) = run.legacy.ansible_core_note_once()
    {
        run.callback.verbose(1, None, &note);
    }
    run.callback.verbose(
        3,
        Some(host),
        &format!(
            "Using module file {} (legacy module, {})",
            module.path.display(),
            crate::assemble::module_type::detect(&module.bytes).name()
        ),
    );
    if let Err(refused) = unsandboxed(run, &module.name, host) {
        return refused;
    }
    let mut args = request.args;
    // `command: {cmd: …}` is the free-form command line, as Ansible's argument parser
    // has it (command modules before 2.19 do not know `cmd`).
    if module.name == "command"
        && !args.contains_key("_raw_params")
        && let Some(cmd) = args.remove("cmd")
    {
        args.insert("_raw_params".into(), cmd);
    }
    let environment = match environment(run, cx.kw, cx.vars) {
        Ok(env) => env,
        Err(e) => {
            return failed(format!(
                "{e}\n\nThe error appears to be in '{}'.",
                cx.task.location
            ));
        }
    };
    let to = match target(run, cx.kw, host, cx.vars) {
        Ok(to) => to,
        Err(e) => return unreachable(e.to_string()),
    };
    let conn = match run.sessions.connection(&to.name, &to.transport).await {
        Ok(c) => c,
        Err(e) => return unreachable(e.to_string()),
    };
    // Controller files go to a private directory of the user the module runs as.
    let sent = match send_files(&*conn, become_.as_ref(), &request.transfers).await {
        Ok(sent) => sent,
        Err(e) => return failed(e),
    };
    if let Some((_, paths)) = &sent {
        for (transfer, path) in request.transfers.iter().zip(paths) {
            args.insert(transfer.arg.into(), Value::String(path.clone()));
        }
    }
    let conn_vars = target_vars(cx, &to.name);
    // A background job is started by the shim of the task's session (as its become
    // user), which keeps it.
    let module_name = module.name.clone();
    let start = move |cmd: String, payload: Vec<u8>| -> LocalBoxFuture<'_, Map<String, Value>> {
        let module_name = module_name.clone();
        Box::pin(async move {
            let Some(background) = cx.background else {
                return failed("no background job to start");
            };
            let (_, mut guard) = match target_session(cx).await {
                Ok(s) => s,
                Err(r) => return r,
            };
            let Some(session) = guard.as_mut() else {
                return unreachable("the shim session is not open".into());
            };
            let job = Job::Command {
                module: module_name,
                argv: vec!["/bin/sh".into(), "-c".into(), cmd],
            };
            let (r, broke) = start_job(cx, session, background, None, job, &payload).await;
            if broke {
                *guard = None;
            }
            r
        })
    };
    // A piped Python module runs in the fork server of the task's session (the
    // become user's under become); `None` sends it the usual way.
    let forked = |interpreter: String,
                  env: BTreeMap<String, String>,
                  modlib: String,
                  script: Vec<u8>|
     -> LocalBoxFuture<'_, Option<ExecOutput>> {
        Box::pin(async move {
            let (_, mut guard) = target_session(cx).await.ok()?;
            let session = guard.as_mut()?;
            match session
                .run_python(&interpreter, env, Some(&modlib), &script)
                .await
            {
                Ok(out) => Some(out),
                Err(e) => {
                    tracing::debug!(error = %e, "the fork server did not run the module");
                    if e.broke_session() {
                        *guard = None;
                    }
                    None
                }
            }
        })
    };
    let invoked = invoked_name(cx, request.name);
    let legacy_run = legacy::LegacyRun {
        module: &module,
        invoked: &invoked,
        args: &args,
        flags: cx.flags(),
        host: &to.name,
        python,
        host_vars: &conn_vars,
        environment: &environment,
        become_: become_.as_ref(),
        background: cx.background.map(|_| &start as &legacy::StartJob<'_>),
        job_waited_for: cx.background.is_some_and(|b| b.poll_s > 0),
        forked: Some(&forked as &legacy::Forked<'_>),
    };
    let mut result = legacy::run(&run.legacy, &*conn, &legacy_run).await;
    // A module no job can run (a legacy one that cannot be piped) ran in the
    // foreground, in the job's place: its result is the finished job's.
    let done = |k: &str| result.get(k).is_some_and(sandball_wire::python::py_truth);
    if let Some(background) = cx.background
        && !result.contains_key("ansible_job_id")
        && !done("failed")
        && !done("skipped")
    {
        result.insert("ansible_job_id".into(), json!(background.jid));
        result.insert("started".into(), json!(true));
        result.insert("finished".into(), json!(true));
    }
    if let Some((dir, _)) = sent {
        let line = format!("rm -rf {}", crate::plugins::shell::quote(&dir));
        if let Err(e) =
            crate::plugins::r#become::exec_command(&*conn, become_.as_ref(), &line, None).await
        {
            run.callback
                .warning(&format!("cannot remove {dir} on {host}: {e}"));
        }
    }
    if run.audit_log.is_some() {
        let sha256 = hex::encode(Sha256::digest(module.bytes.as_slice()));
        audit(
            run,
            &policy::audit_log::Entry {
                host,
                task: cx.plain_name(),
                module: &module.name,
                sha256: &sha256,
                manifest: None,
                args: &args,
                no_log: cx.no_log,
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
