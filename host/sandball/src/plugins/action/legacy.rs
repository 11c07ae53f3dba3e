//! The `normal` action for legacy modules: what Ansible's normal action plugin does
//! with a module that is not a sandball component.
//!
//! The host's Python is the executor's (configured, or discovered for the host's
//! first module: `executor::context`). The module is assembled ([`crate::assemble::legacy`]) with the internal
//! `_ansible_*` arguments, then run over the host's connection: new-style Python is
//! piped to the interpreter's stdin (pipelining, on by default); everything else takes
//! the classic flow — a private temporary directory (umask 77), the module and its
//! args file put there, `chmod u+x`, the run with the task's `environment`, and the
//! directory removed in the same command unless remote files are kept. Under `become`
//! the run (not the temporary directory) is wrapped by the become plugin; a become user
//! other than root and the connection user gets read access to the files as Ansible
//! gives it (see [`grant_access`]). The output is
//! parsed as component output is ([`super::normal::interpret`], as ansible-core reads
//! it: [`super::module_output`]).
//! What comes back is data: the executor stores results as values that are never
//! templated again.

use super::failed;
use super::normal::{self, ModuleFlags};
use crate::assemble::finder::LegacyModule;
use crate::assemble::legacy::{self, AssembleContext, Assembled, LegacyStore};
use crate::plugins::r#become::{self, Become};
use crate::plugins::connection::{Connection, ConnectionError, ExecOutput, RunReply};
use crate::plugins::shell::{quote, quote_path};
use futures::future::LocalBoxFuture;
use sandball_wire::protocol::Outcome;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// One legacy module run on one host.
pub struct LegacyRun<'a> {
    /// The module.
    pub module: &'a LegacyModule,
    /// The name it runs under (`_ansible_module_name`).
    pub invoked: &'a str,
    /// The task's templated arguments (internal ones are added here).
    pub args: &'a Map<String, Value>,
    /// Check mode, diff, no_log, verbosity.
    pub flags: ModuleFlags,
    /// The host's name.
    pub host: &'a str,
    /// The host's Python (`ansible_python_interpreter`, or the one discovered there),
    /// for a module that needs one.
    pub python: &'a str,
    /// The connection-related variables of the host (`ansible_*_interpreter`,
    /// `ansible_pipelining`, `ansible_remote_tmp`, `ansible_shell_executable`,
    /// `ansible_keep_remote_files`), templated.
    pub host_vars: &'a Map<String, Value>,
    /// The task's `environment`, templated.
    pub environment: &'a Map<String, Value>,
    /// The task's become settings, when it becomes another user.
    pub become_: Option<&'a Become>,
    /// Set when the task starts a background job (`async`): starts the piped
    /// interpreter command line with the payload on its stdin, returning the task's
    /// result.
    pub background: Option<&'a StartJob<'a>>,
    /// Whether the executor waits for that job (`poll` above 0): a module that cannot
    /// be piped then runs in the foreground instead.
    pub job_waited_for: bool,
    /// Set when the run may go to the Python fork server of the task's session (as
    /// the connection user, or the become user): runs a piped script there, `None`
    /// when it could not.
    pub forked: Option<&'a Forked<'a>>,
}

/// Runs a piped Python script (interpreter, environment, payload directory, script) in
/// the fork server of the host's session: its output, or `None` when the server could
/// not run it (the module then runs the usual way).
pub type Forked<'a> = dyn Fn(String, BTreeMap<String, String>, String, Vec<u8>) -> LocalBoxFuture<'a, Option<ExecOutput>>
    + 'a;

/// The variable (and `SANDBALL_FORK_SERVER` the setting) that turns the Python fork
/// server off for a host: its piped modules then start an interpreter each.
pub const FORK_SERVER_VAR: &str = "sandball_fork_server";

/// Starts a background job running a command line with a payload on its stdin.
pub type StartJob<'a> = dyn Fn(String, Vec<u8>) -> LocalBoxFuture<'a, Map<String, Value>> + 'a;

/// The default remote temporary directory, as Ansible's `sh` shell plugin has it.
const DEFAULT_REMOTE_TMP: &str = "~/.ansible/tmp";

/// Runs a legacy module; the result is a task result (failures included).
pub async fn run(
    store: &LegacyStore,
    conn: &dyn Connection,
    r: &LegacyRun<'_>,
) -> Map<String, Value> {
    // As Ansible does, becoming the connection user is skipped (unless
    // ANSIBLE_BECOME_ALLOW_SAME_USER), and only a user other than root and the
    // connection user needs the files handed over.
    let (become_, unprivileged) = match r.become_ {
        None => (None, None),
        Some(b) => match connection_user(store, conn, r.host).await {
            Err(e) => return failed(format!("MODULE FAILURE: {e}")),
            Ok(me) if me == b.user => {
                let same = super::env_flag("ANSIBLE_BECOME_ALLOW_SAME_USER", false);
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
        Err(msg) => return failed(msg),
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
        .or_else(|| std::env::var("ANSIBLE_REMOTE_TEMP").ok())
        .or_else(|| std::env::var("ANSIBLE_REMOTE_TMP").ok())
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
        Err(msg) => return failed(msg),
    };
    let needs_password = match become_needs_password(store, conn, r.host, become_).await {
        Ok(n) => n,
        Err(e) => {
            return failed(format!(
                "MODULE FAILURE: cannot run {} on {}: {e}",
                r.module.name, r.host
            ));
        }
    };
    if let Some(start) = r.background {
        // The shim keeps the job, so it runs piped, whatever `ansible_pipelining` says.
        if assembled.pipelining {
            let cmd = format!(
                "{env}{}",
                assembled.interpreter.as_deref().unwrap_or(&python)
            );
            return start(cmd, assembled.payload).await;
        }
        if !r.job_waited_for {
            return failed(format!(
                "{} cannot run in the background (`poll: 0`) under sandball: only modules that can be piped to their interpreter can",
                r.module.name
            ));
        }
    }
    let mut warnings = vec![];
    let output = if pipelining && assembled.pipelining {
        let interpreter = assembled.interpreter.as_deref().unwrap_or(&python);
        // The fork server is the session's: the connection user's, or the become
        // user's when the run becomes one (not when becoming is skipped, which
        // would still open a become session).
        let forked = match (r.forked, &assembled.modlib) {
            (Some(fork), Some(modlib))
                if become_.is_some() == r.become_.is_some()
                    && flag(r.host_vars, FORK_SERVER_VAR, "SANDBALL_FORK_SERVER", true)
                    && plain_program(interpreter) =>
            {
                let env = match env_vars(r.environment) {
                    Ok(vars) => vars.into_iter().collect(),
                    Err(msg) => return failed(msg),
                };
                fork(
                    interpreter.to_string(),
                    env,
                    modlib.clone(),
                    assembled.payload.clone(),
                )
                .await
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
            Some(_) => system_tmp(&remote_tmp),
            None => remote_tmp.as_str(),
        };
        let tmp = match make_tmp(conn, base).await {
            Ok(t) => t,
            Err(msg) => return failed(msg),
        };
        files.tmpdir = Some(&tmp);
        args = internal_args(r, version.as_ref(), &files);
        assembled = match assemble(store, r, &args, &python) {
            Ok(a) => a,
            Err(msg) => return failed(msg),
        };
        let classic_run = Classic {
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
        classic(conn, r.module, &assembled, &classic_run, &mut warnings).await
    };
    let out = match output {
        Ok(o) => o,
        Err(e) => {
            return failed(format!(
                "MODULE FAILURE: cannot run {} on {}: {e}",
                r.module.name, r.host
            ));
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
    let mut result = normal::interpret(&r.module.name, reply, &[], &|_| String::new());
    // As Ansible does, the arguments the module echoes back are shown only from -vvv.
    if r.flags.verbosity < 3 {
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
    let mut args = normal::with_internal_args(r.invoked, r.args, r.flags);
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
        if (major, minor) < (2, 17) {
            m.remove("_ansible_target_log_info");
            m.remove("_ansible_ignore_unknown_opts");
        }
    }
    args
}

/// A boolean setting: the host variable, else the environment variable, else `default`.
fn flag(vars: &Map<String, Value>, var: &str, env: &str, default: bool) -> bool {
    match vars.get(var) {
        Some(v) => super::truthy(Some(v), default).unwrap_or(default),
        None => super::env_flag(env, default),
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

/// `K=V ` words for the task's environment (keys must be shell names).
pub(crate) fn env_prefix(env: &Map<String, Value>) -> Result<String, String> {
    Ok(env_vars(env)?
        .into_iter()
        .map(|(k, v)| format!("{k}={} ", quote(&v)))
        .collect())
}

/// The task's environment as text (keys must be shell names).
fn env_vars(env: &Map<String, Value>) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for (k, v) in env {
        let valid = k
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(format!(
                "environment: '{k}' is not a valid environment variable name"
            ));
        }
        // As ansible-core writes them: `True`, `None`.
        out.push((k.clone(), sandball_wire::python::py_str(v)));
    }
    Ok(out)
}

/// Makes a private temporary directory under `base` (umask 77) and returns its path.
async fn make_tmp(conn: &dyn Connection, base: &str) -> Result<String, String> {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros())
        .unwrap_or_default();
    let name = format!(
        "ansible-tmp-{stamp}-{}-{}",
        std::process::id(),
        rand_suffix()
    );
    let dir = format!("{}/{name}", base.trim_end_matches('/'));
    let cmd = format!(
        "( umask 77 && mkdir -p {base} && mkdir {dir} && cd {dir} && echo \"SANDBALL_TMP=$(pwd)\" )",
        base = quote_path(base),
        dir = quote_path(&dir)
    );
    let out = conn
        .exec_command(&cmd, None)
        .await
        .map_err(|e| format!("cannot create a temporary directory in {base}: {e}"))?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("SANDBALL_TMP="))
        .map(str::to_string)
        .ok_or_else(|| {
            format!(
                "Failed to create temporary directory in {base} (rc {}): {}. Set remote_tmp (ansible_remote_tmp) to a path that exists and is writable.",
                out.rc,
                String::from_utf8_lossy(&out.stderr).trim()
            )
        })
}

/// A few random characters for temporary names, from the OS's hash seed.
fn rand_suffix() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default(),
    );
    format!("{:012x}", h.finish() & 0xffff_ffff_ffff)
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

/// Where files for an unprivileged become user go (Ansible's `system_tmpdirs`).
const SYSTEM_TMPDIRS: &[&str] = &["/var/tmp", "/tmp"];

/// The variable that allows world-readable temporary files when nothing safer works.
pub(crate) const WORLD_READABLE_VAR: &str = "ansible_shell_allow_world_readable_temp";

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

/// The system temporary directory for an unprivileged become user: `remote_tmp` when it
/// is inside one, else the first.
fn system_tmp(remote_tmp: &str) -> &str {
    if SYSTEM_TMPDIRS
        .iter()
        .any(|d| remote_tmp == *d || remote_tmp.starts_with(&format!("{d}/")))
    {
        remote_tmp
    } else {
        SYSTEM_TMPDIRS[0]
    }
}

/// How one classic run goes.
struct Classic<'a> {
    become_: Option<&'a Become>,
    /// Whether the become needs the password.
    needs_password: Option<bool>,
    /// The become user the files are handed over to, when it is unprivileged.
    unprivileged: Option<&'a str>,
    /// Whether world-readable files are allowed when nothing safer works.
    world_readable: bool,
    tmp: &'a str,
    env: &'a str,
    keep: bool,
}

/// The classic flow: put the module (and its args file), make it executable, run it
/// (as the become user when there is one) and remove the directory, in as few round
/// trips as the connection allows.
async fn classic(
    conn: &dyn Connection,
    module: &LegacyModule,
    a: &Assembled,
    c: &Classic<'_>,
    warnings: &mut Vec<String>,
) -> Result<ExecOutput, String> {
    let tmp = c.tmp;
    let file = format!("{tmp}/AnsiballZ_{}{}", module.name, a.suffix);
    conn.put_data(&a.payload, &file)
        .await
        .map_err(|e| e.to_string())?;
    let mut paths = vec![tmp.to_string(), file.clone()];
    let mut run = c.env.to_string();
    if let Some(interp) = &a.interpreter {
        run.push_str(interp);
        run.push(' ');
    }
    run.push_str(&quote(&file));
    if let Some(args) = &a.args_file {
        let args_path = format!("{tmp}/args");
        conn.put_data(args, &args_path)
            .await
            .map_err(|e| e.to_string())?;
        run.push(' ');
        run.push_str(&quote(&args_path));
        paths.push(args_path);
    }
    match c.unprivileged {
        Some(user) => {
            if let Some(w) = grant_access(conn, user, &paths, c.world_readable).await? {
                warnings.push(w);
            }
        }
        None => run = format!("chmod u+x {} {} && {run}", quote(tmp), quote(&file)),
    }
    // The become user removes the directory in the same command when it can (it is
    // the connection user or an admin); else the connection user does it afterwards.
    let remove = format!("rm -f -r {} > /dev/null 2>&1", quote(tmp));
    if !c.keep && c.unprivileged.is_none() {
        run = format!("{run}; rc=$?; {remove}; exit $rc");
    }
    let out = r#become::exec_command_known(conn, c.become_, c.needs_password, &run, None).await;
    if !c.keep && c.unprivileged.is_some() {
        let cleanup = conn.exec_command(&remove, None).await;
        if let Err(e) = cleanup.and_then(|o| o.success("rm")) {
            warnings.push(format!("cannot remove the temporary directory {tmp}: {e}"));
        }
    }
    out.map_err(|e: ConnectionError| e.to_string())
}

/// Gives the unprivileged become user `user` read and execute access to `paths` (the
/// temporary directory and its files), as the connection user and in Ansible's order:
/// a POSIX ACL (`setfacl`), else ownership (`chown`, which needs root), else — only
/// when `world_readable` allows it, with a warning — world-readable files. Anything
/// else is an error that says what was tried and what to do.
async fn grant_access(
    conn: &dyn Connection,
    user: &str,
    paths: &[String],
    world_readable: bool,
) -> Result<Option<String>, String> {
    let list: Vec<String> = paths.iter().map(|p| quote(p)).collect();
    let list = list.join(" ");
    // The user name is a plain word (checked when become was resolved).
    let mut cmd = format!(
        "if setfacl -m u:{user}:r-x {list}; then echo SANDBALL_ACCESS=acl; \
         elif chmod u+x {list} && chown {user} {list}; then echo SANDBALL_ACCESS=chown; "
    );
    if world_readable {
        cmd.push_str(&format!(
            "elif chmod a+rx {list}; then echo SANDBALL_ACCESS=world; "
        ));
    }
    cmd.push_str("else exit 1; fi");
    let out = conn
        .exec_command(&cmd, None)
        .await
        .map_err(|e| e.to_string())?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    match stdout
        .lines()
        .find_map(|l| l.strip_prefix("SANDBALL_ACCESS="))
    {
        Some("world") => Ok(Some(format!(
            "Using world-readable permissions for the temporary files of a module run as the unprivileged become user {user}: anyone on the node can read them (and the module's arguments) while it runs."
        ))),
        Some(_) if out.rc == 0 => Ok(None),
        _ => Err(format!(
            "Failed to set permissions on the temporary files for the unprivileged become user {user}: {} (rc={}). The connection user needs setfacl (the acl package) or root to chown them; or become root, connect as {user}, or — less safe, anyone on the node could read the module's arguments — set {WORLD_READABLE_VAR}=true",
            String::from_utf8_lossy(&out.stderr).trim(),
            out.rc
        )),
    }
}

/// ansible-core's message for output that is no module result because the module's
/// interpreter is missing (the shell says `PROGRAM: not found`).
fn explain_failure(result: &mut Map<String, Value>, a: &Assembled, stderr: &str) {
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
        result.insert(
            super::ERROR_HELP.into(),
            Value::String(format!(
                "Consider overriding the configured interpreter path for this host. {}",
                super::module_output::SEE_OUTPUT
            )),
        );
    }
}

/// The message for a module that died of a Python exception (a traceback on stderr):
/// the exception, the traceback being in `module_stderr`.
pub fn python_exception(stderr: &str) -> Option<String> {
    stderr
        .contains("Traceback (most recent call last)")
        .then(|| {
            let last = stderr.trim().lines().last().unwrap_or_default();
            format!(
                "MODULE FAILURE: the module raised a Python exception: {last}\nSee module_stderr for the traceback"
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::connection::local::Local;

    #[tokio::test]
    async fn files_are_handed_over_safely_or_not_at_all() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join("AnsiballZ_x.py");
        std::fs::write(&file, "x").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        let paths = vec![file.display().to_string()];
        let conn = Local;
        // No ACL, no chown to a user that does not exist: an error saying what to do,
        // and the file stays private.
        let e = grant_access(&conn, "sandball-no-such-user", &paths, false)
            .await
            .unwrap_err();
        assert!(
            e.contains("sandball-no-such-user") && e.contains(WORLD_READABLE_VAR),
            "{e}"
        );
        let mode = || std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(), 0o700);
        // Allowed: world-readable, with a warning.
        let w = grant_access(&conn, "sandball-no-such-user", &paths, true)
            .await
            .unwrap();
        assert!(w.is_some_and(|w| w.contains("world-readable")));
        assert_eq!(mode(), 0o755);
    }

    #[test]
    fn unprivileged_users_get_a_system_temporary_directory() {
        assert_eq!(system_tmp("~/.ansible/tmp"), "/var/tmp");
        assert_eq!(system_tmp("/tmp/mine"), "/tmp/mine");
        assert_eq!(system_tmp("/tmpfoo"), "/var/tmp");
    }

    #[test]
    fn environment_becomes_quoted_assignments() {
        let env = json!({"A": "x y", "B_2": 3, "C": true, "D": null});
        assert_eq!(
            env_prefix(env.as_object().unwrap()).unwrap(),
            "A='x y' B_2=3 C=True D=None "
        );
        let bad = json!({"A;rm": "x"});
        assert!(
            env_prefix(bad.as_object().unwrap())
                .unwrap_err()
                .contains("A;rm")
        );
    }
}
