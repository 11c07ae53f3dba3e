//! A legacy module's run: what Ansible's normal action does with a module that is not
//! a sandball component (or that the task asks for as one).
//!
//! The host's Python is the task context's (configured, or discovered for the host's
//! first module). Policy must allow running outside the sandbox on the host. The module
//! is assembled ([`crate::assemble::legacy`]) with the internal `_ansible_*` arguments,
//! then run over the host's connection: new-style Python is piped to the interpreter's
//! stdin (pipelining, on by default), in the Python fork server of the task's session
//! when it can be; everything else takes the classic flow ([`super::classic`]). Under
//! `become` the run (not the temporary directory) is wrapped by the become plugin. A
//! background job is started by the shim of the task's session, which keeps it. The
//! output is read as a component's is ([`super::interpret`]). What comes back is
//! data: the executor stores results as values that are never templated again.

use super::interpret::interpret;
use super::session::target_session;
use super::{
    ModuleFlags, audit, classic, invoked_name, jobs, transfer, unsandboxed, with_internal_args,
};
use crate::assemble::finder::LegacyModule;
use crate::assemble::legacy::{self, AssembleContext, Assembled, LegacyStore};
use crate::executor::context::{
    Background, FORK_SERVER_VAR, TaskContext, WORLD_READABLE_VAR, become_for, connect_failure,
    environment, target, target_vars, unreachable,
};
use crate::plugins::action::{ModuleRequest, TaskResult, failed};
use crate::plugins::r#become::{self, Become};
use crate::plugins::connection::{Connection, ConnectionError, ExecOutput, RunReply, SessionError};
use crate::plugins::shell::{env_prefix, env_vars};
use sandball_pycompat::boolean::truthy;
use sandball_pycompat::shell::quote;
use sandball_wire::protocol::{Job, Outcome};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

/// A task whose module is not a built-in component (or that asks for the legacy
/// module): found and assembled the classic way, run over the host's connection.
pub(super) async fn run(
    cx: &TaskContext<'_>,
    request: ModuleRequest<'_>,
    python: &str,
) -> TaskResult {
    let (run, host) = (cx.run, cx.host);
    let short = sandball_pycompat::fqcn::short_name(request.name);
    let become_ = match become_for(run, cx.task, cx.kw, cx.vars) {
        Ok(b) => b,
        Err(e) => return e.into(),
    };
    let module = match run.legacy.get(request.name) {
        Ok(m) => m,
        Err(e) => {
            return failed(format!(
                "{e}; and no sandball component '{short}' in: {}",
                run.modules.searched()
            ))
            .into();
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
        return refused.into();
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
            return failed(cx.task.location.appears_in(e)).into();
        }
    };
    let to = match target(run, cx.kw, host, cx.vars) {
        Ok(to) => to,
        Err(e) => return connect_failure(e).into(),
    };
    let conn = match run.sessions.connection(&to.name, &to.transport).await {
        Ok(c) => c,
        Err(e) => return connect_failure(e).into(),
    };
    // Controller files go to a private directory of the user the module runs as.
    let sent = match transfer::send_files(&*conn, become_.as_ref(), &request.transfers).await {
        Ok(sent) => sent,
        Err(e) => return failed(e).into(),
    };
    if let Some((_, paths)) = &sent {
        for (transfer, path) in request.transfers.iter().zip(paths) {
            args.insert(transfer.arg.into(), Value::String(path.clone()));
        }
    }
    let conn_vars = target_vars(cx, &to.name);
    let invoked = invoked_name(cx, request.name);
    let legacy_run = LegacyRun {
        cx,
        module: &module,
        invoked: &invoked,
        args: &args,
        flags: ModuleFlags::of(cx),
        host: &to.name,
        python,
        host_vars: &conn_vars,
        environment: &environment,
        become_: become_.as_ref(),
    };
    let mut result = run_module(&run.legacy, &*conn, &legacy_run).await;
    // A module no job can run (a legacy one that cannot be piped) ran in the
    // foreground, in the job's place: its result is the finished job's.
    let done = |k: &str| {
        result
            .get(k)
            .is_some_and(sandball_pycompat::pyops::py_truth)
    };
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
        let line = format!("rm -rf {}", quote(&dir));
        if let Err(e) = r#become::exec_command(&*conn, become_.as_ref(), &line, None).await {
            run.callback
                .warning(&format!("cannot remove {dir} on {host}: {e}"));
        }
    }
    if audit::wanted(cx) {
        let sha256 = hex::encode(Sha256::digest(module.bytes.as_slice()));
        let ran = audit::Ran {
            module: &module.name,
            sha256: &sha256,
            manifest: None,
        };
        audit::record(cx, &ran, &args, None, &result);
    }
    result
}

/// One legacy module run on one host.
struct LegacyRun<'a> {
    /// The task's context.
    cx: &'a TaskContext<'a>,
    /// The module.
    module: &'a LegacyModule,
    /// The name it runs under (`_ansible_module_name`).
    invoked: &'a str,
    /// The task's templated arguments (internal ones are added here).
    args: &'a Map<String, Value>,
    /// Check mode, diff, no_log, verbosity.
    flags: ModuleFlags,
    /// The name of the host it runs on.
    host: &'a str,
    /// The host's Python (`ansible_python_interpreter`, or the one discovered there),
    /// for a module that needs one.
    python: &'a str,
    /// The connection-related variables of the host (`ansible_*_interpreter`,
    /// `ansible_pipelining`, `ansible_remote_tmp`, `ansible_shell_executable`,
    /// `ansible_keep_remote_files`), templated.
    host_vars: &'a Map<String, Value>,
    /// The task's `environment`, templated.
    environment: &'a Map<String, Value>,
    /// The task's become settings, when it becomes another user.
    become_: Option<&'a Become>,
}

/// The default remote temporary directory, as Ansible's `sh` shell plugin has it.
const DEFAULT_REMOTE_TMP: &str = "~/.ansible/tmp";

/// Assembles the module of `r` and runs it over `conn`; the result is a task result
/// (failures included).
async fn run_module(store: &LegacyStore, conn: &dyn Connection, r: &LegacyRun<'_>) -> TaskResult {
    // As Ansible does, becoming the connection user is skipped (unless
    // ANSIBLE_BECOME_ALLOW_SAME_USER), and only a user other than root and the
    // connection user needs the files handed over.
    let (become_, unprivileged) = match r.become_ {
        None => (None, None),
        Some(b) => match connection_user(store, conn, r.host).await {
            Err(e) => return failed(format!("MODULE FAILURE: {e}")).into(),
            Ok(me) if me == b.user => {
                let same = crate::config::settings().flag("ANSIBLE_BECOME_ALLOW_SAME_USER", false);
                (same.then_some(b), None)
            }
            Ok(_) if ADMIN_USERS.contains(&b.user.as_str()) => (Some(b), None),
            Ok(_) => (Some(b), Some(b.user.as_str())),
        },
    };
    let python = if legacy::needs_python(r.module) {
        r.python.to_string()
    } else {
        String::new()
    };
    let env = match env_prefix(r.environment) {
        Ok(e) => e,
        Err(msg) => return failed(msg).into(),
    };
    let keep = flag(
        r.host_vars,
        "ansible_keep_remote_files",
        "ANSIBLE_KEEP_REMOTE_FILES",
        false,
    );
    let pipelining = flag(
        r.host_vars,
        "ansible_pipelining",
        "ANSIBLE_PIPELINING",
        true,
    );
    let remote_tmp = r
        .host_vars
        .get("ansible_remote_tmp")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| {
            crate::config::settings()
                .get("ANSIBLE_REMOTE_TEMP")
                .map(str::to_string)
        })
        .or_else(|| {
            crate::config::settings()
                .get("ANSIBLE_REMOTE_TMP")
                .map(str::to_string)
        })
        .unwrap_or_else(|| DEFAULT_REMOTE_TMP.to_string());
    let shell = r
        .host_vars
        .get("ansible_shell_executable")
        .and_then(Value::as_str)
        .unwrap_or("/bin/sh")
        .to_string();

    // Pipelining needs no temporary directory; a first assembly tells whether the
    // module can be piped (the arguments do not change that).
    let version = store.ansible_version();
    let mut files = RemoteFiles {
        remote_tmp: &remote_tmp,
        shell: &shell,
        keep,
        tmpdir: None,
    };
    let mut args = internal_args(r, version.as_ref(), &files);
    let mut assembled = match assemble(store, r, &args, &python) {
        Ok(a) => a,
        Err(msg) => return failed(msg).into(),
    };
    let needs_password = match become_needs_password(store, conn, r.host, become_).await {
        Ok(n) => n,
        Err(e) => {
            return failed(format!(
                "MODULE FAILURE: cannot run {} on {}: {e}",
                r.module.name, r.host
            ))
            .into();
        }
    };
    if let Some(background) = r.cx.background {
        // The shim keeps the job, so it runs piped, whatever `ansible_pipelining` says.
        if assembled.pipelining {
            let cmd = format!(
                "{env}{}",
                assembled.interpreter.as_deref().unwrap_or(&python)
            );
            return start_job(r.cx, background, &r.module.name, cmd, assembled.payload).await;
        }
        // Unless the executor waits for the job (`poll` above 0): a module that
        // cannot be piped then runs in the foreground instead.
        if background.poll_s == 0 {
            return failed(format!(
                "{} cannot run in the background (`poll: 0`) under sandball: only modules that can be piped to their interpreter can",
                r.module.name
            )).into();
        }
    }
    let mut warnings = vec![];
    let output = if pipelining && assembled.pipelining {
        let interpreter = assembled.interpreter.as_deref().unwrap_or(&python);
        // The fork server is the session's: the connection user's, or the become
        // user's when the run becomes one (not when becoming is skipped, which
        // would still open a become session).
        let forked = match &assembled.modlib {
            Some(modlib)
                if become_.is_some() == r.become_.is_some()
                    && flag(r.host_vars, FORK_SERVER_VAR, "SANDBALL_FORK_SERVER", true)
                    && plain_program(interpreter) =>
            {
                let env = match env_vars(r.environment) {
                    Ok(vars) => vars.into_iter().collect(),
                    Err(msg) => return failed(msg).into(),
                };
                match fork(
                    r.cx,
                    interpreter.to_string(),
                    env,
                    modlib.clone(),
                    assembled.payload.clone(),
                )
                .await
                {
                    Ok(out) => out,
                    Err(result) => return result.into(),
                }
            }
            _ => None,
        };
        match forked {
            Some(out) => Ok(out),
            None => r#become::exec_command_known(
                conn,
                become_,
                needs_password,
                &format!("{env}{interpreter}"),
                Some(&assembled.payload),
            )
            .await
            .map_err(|e| e.to_string()),
        }
    } else {
        // A become user other than root and the connection user cannot read the
        // connection user's private directory: its files go to a system temporary
        // directory and are handed over (Ansible's rules).
        let base = match unprivileged {
            Some(_) => classic::system_tmp(&remote_tmp),
            None => remote_tmp.as_str(),
        };
        let tmp = match classic::make_tmp(conn, base).await {
            Ok(t) => t,
            Err(msg) => return failed(msg).into(),
        };
        files.tmpdir = Some(&tmp);
        args = internal_args(r, version.as_ref(), &files);
        assembled = match assemble(store, r, &args, &python) {
            Ok(a) => a,
            Err(msg) => return failed(msg).into(),
        };
        let classic_run = classic::Classic {
            become_,
            needs_password,
            unprivileged,
            world_readable: flag(
                r.host_vars,
                WORLD_READABLE_VAR,
                "ANSIBLE_SHELL_ALLOW_WORLD_READABLE_TEMP",
                false,
            ),
            tmp: &tmp,
            env: &env,
            keep,
        };
        classic::run(conn, r.module, &assembled, &classic_run, &mut warnings).await
    };
    let out = match output {
        Ok(o) => o,
        Err(e) => {
            return failed(format!(
                "MODULE FAILURE: cannot run {} on {}: {e}",
                r.module.name, r.host
            ))
            .into();
        }
    };
    let reply = RunReply {
        outcome: Outcome::Exited { code: out.rc },
        stdout: out.stdout,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        denials: vec![],
        denials_omitted: 0,
        warnings: vec![],
    };
    let stderr = reply.stderr.clone();
    // A legacy module has no grant, so there are no denials to explain.
    let mut result = interpret(&r.module.name, reply, &[], &|_| String::new());
    // As Ansible does, the arguments the module echoes back are shown only from -vvv,
    // or (ansible-core 2.21) kept when `INJECT_INVOCATION` asks for them.
    if r.flags.verbosity < 3 && !inject_invocation(r.host_vars) {
        result.remove("invocation");
    }
    if result.contains_key("module_stderr") {
        explain_failure(&mut result, &assembled, &stderr);
    }
    if !warnings.is_empty() {
        let list = result
            .entry("warnings")
            .or_insert_with(|| Value::Array(vec![]));
        if let Value::Array(l) = list {
            l.extend(warnings.into_iter().map(Value::String));
        }
    }
    result
}

fn assemble(
    store: &LegacyStore,
    r: &LegacyRun<'_>,
    args: &Value,
    python: &str,
) -> Result<Assembled, String> {
    // Unpacked Ansiballz payloads live beside the per-task directories.
    let remote_tmp = args
        .get("_ansible_remote_tmp")
        .and_then(Value::as_str)
        .unwrap_or(DEFAULT_REMOTE_TMP);
    let cache_dir = format!("{}/sandball-ansiballz", remote_tmp.trim_end_matches('/'));
    legacy::assemble(
        r.module,
        &AssembleContext {
            args,
            python,
            host_vars: r.host_vars,
            cache_dir: &cache_dir,
            roots: store.roots(),
            cache: &store.zips,
        },
    )
    .map_err(|e| e.to_string())
}

/// Where the run's files go on the node, as internal arguments tell the module.
struct RemoteFiles<'a> {
    remote_tmp: &'a str,
    shell: &'a str,
    keep: bool,
    tmpdir: Option<&'a str>,
}

/// The module's arguments with the internal arguments the shipped ansible-core's
/// `AnsibleModule` accepts (it refuses any other `_ansible_*` key), with this run's
/// values. 2.19 added `_ansible_tracebacks_for` and dropped
/// `_ansible_string_conversion_action`; 2.17 added `_ansible_target_log_info` and
/// `_ansible_ignore_unknown_opts`.
fn internal_args(
    r: &LegacyRun<'_>,
    version: Option<&(u32, u32, String)>,
    files: &RemoteFiles<'_>,
) -> Value {
    let mut args = with_internal_args(r.invoked, r.args, r.flags);
    if let Value::Object(m) = &mut args {
        m.insert("_ansible_remote_tmp".into(), json!(files.remote_tmp));
        m.insert("_ansible_shell_executable".into(), json!(files.shell));
        m.insert("_ansible_keep_remote_files".into(), json!(files.keep));
        m.insert("_ansible_tmpdir".into(), json!(files.tmpdir));
        let (major, minor) = version.map_or((2, 19), |v| (v.0, v.1));
        if let Some(v) = version {
            m.insert("_ansible_version".into(), json!(v.2));
        }
        if (major, minor) >= (2, 19) {
            m.remove("_ansible_string_conversion_action");
            m.insert("_ansible_tracebacks_for".into(), json!([]));
        }
        if (major, minor) >= (2, 21) {
            m.insert(
                "_ansible_inject_invocation".into(),
                json!(inject_invocation(r.host_vars)),
            );
        }
        if (major, minor) < (2, 17) {
            m.remove("_ansible_target_log_info");
            m.remove("_ansible_ignore_unknown_opts");
        }
    }
    args
}

/// Whether ansible-core 2.21's `INJECT_INVOCATION` asks for `invocation` in results
/// (`ansible_inject_invocation`, else `ANSIBLE_INJECT_INVOCATION`; false before 2.21).
pub(crate) fn inject_invocation(vars: &Map<String, Value>) -> bool {
    crate::compat::core().at_least(21)
        && flag(
            vars,
            "ansible_inject_invocation",
            "ANSIBLE_INJECT_INVOCATION",
            false,
        )
}

/// A boolean setting: the host variable, else the environment variable, else `default`.
fn flag(vars: &Map<String, Value>, var: &str, env: &str, default: bool) -> bool {
    match vars.get(var) {
        Some(v) => truthy(Some(v), default).unwrap_or(default),
        None => crate::config::settings().flag(env, default),
    }
}

/// Whether an interpreter setting is one program (a path or a name, no arguments or
/// shell syntax), which the fork server can start without a shell.
fn plain_program(interpreter: &str) -> bool {
    !interpreter.is_empty()
        && interpreter
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c))
}

/// Whether the task's become needs the password (`None`: no become), found out once
/// per host and become settings.
async fn become_needs_password(
    store: &LegacyStore,
    conn: &dyn Connection,
    host: &str,
    become_: Option<&Become>,
) -> Result<Option<bool>, ConnectionError> {
    let Some(b) = become_ else {
        return Ok(None);
    };
    if let Some(known) = store.become_needs_password(host, b) {
        return Ok(Some(known));
    }
    let needs = b.needs_password(conn).await?;
    store.remember_become(host, b, needs);
    Ok(Some(needs))
}

/// The users a become to which needs no handing over of files (Ansible's
/// `admin_users`).
const ADMIN_USERS: &[&str] = &["root", "toor"];

/// The connection user on the node (asked once per host).
async fn connection_user(
    store: &LegacyStore,
    conn: &dyn Connection,
    host: &str,
) -> Result<String, String> {
    if let Some(u) = store.connection_user(host) {
        return Ok(u);
    }
    let me = conn
        .exec_command("id -un", None)
        .await
        .and_then(|o| o.success("id -un"))
        .map_err(|e| format!("cannot tell the connection user on {host}: {e}"))?;
    let user = String::from_utf8_lossy(&me.stdout).trim().to_string();
    store.remember_connection_user(host, &user);
    Ok(user)
}

/// ansible-core's message for output that is no module result because the module's
/// interpreter is missing (the shell says `PROGRAM: not found`).
fn explain_failure(result: &mut TaskResult, a: &Assembled, stderr: &str) {
    let Some(program) = a
        .interpreter
        .as_deref()
        .and_then(|i| i.split_whitespace().next())
    else {
        return;
    };
    if [": not found", ": No such file or directory"]
        .iter()
        .any(|said| stderr.contains(&format!("{program}{said}")))
    {
        result.insert(
            "msg".into(),
            Value::String(format!("The module interpreter '{program}' was not found.")),
        );
        result.error_help = Some(format!(
            "Consider overriding the configured interpreter path for this host. {}",
            super::output::SEE_OUTPUT
        ));
    }
}

/// Starts the piped interpreter command line `cmd`, with the payload on its stdin, as a
/// background job in the shim of the task's session (as its become user), which keeps
/// it: the task's result.
async fn start_job(
    cx: &TaskContext<'_>,
    background: &Background,
    module: &str,
    cmd: String,
    payload: Vec<u8>,
) -> TaskResult {
    let (_, mut guard) = match target_session(cx).await {
        Ok(s) => s,
        Err(r) => return r.into(),
    };
    let Some(session) = guard.as_mut() else {
        return unreachable("the shim session is not open".into()).into();
    };
    let job = Job::Command {
        module: module.to_string(),
        argv: vec!["/bin/sh".into(), "-c".into(), cmd],
    };
    let (r, broke) = jobs::start(cx, session, background, None, job, &payload).await;
    if broke {
        *guard = None;
    }
    r.into()
}

/// Runs a piped Python script (interpreter, environment, payload directory, script) in
/// the fork server of the task's session (the become user's under become): its
/// output, or `None` when the shim declined to run it (the module then runs the usual
/// way). When the session ends while the script was sent, the module may have run and
/// is not run again: `Err` is the task's result (unreachable when the connection was
/// lost, failed naming how the shim ended otherwise).
async fn fork(
    cx: &TaskContext<'_>,
    interpreter: String,
    env: BTreeMap<String, String>,
    modlib: String,
    script: Vec<u8>,
) -> Result<Option<ExecOutput>, Map<String, Value>> {
    let Ok((_, mut guard)) = target_session(cx).await else {
        return Ok(None);
    };
    let Some(session) = guard.as_mut() else {
        return Ok(None);
    };
    match session
        .run_python(&interpreter, env, Some(&modlib), &script)
        .await
    {
        Ok(out) => Ok(Some(out)),
        Err(e) => {
            tracing::debug!(error = %e, "the fork server did not run the module");
            if e.broke_session() {
                *guard = None;
            }
            match e {
                SessionError::Lost { .. } => Err(unreachable(format!(
                    "the connection to {} was lost while the module ran: {e}",
                    cx.host
                ))),
                SessionError::Remote(_) | SessionError::MissingModule { .. } => Ok(None),
                _ => Err(failed(format!(
                    "MODULE FAILURE: the shim session on {} failed while running the module: {e}",
                    cx.host
                ))),
            }
        }
    }
}
