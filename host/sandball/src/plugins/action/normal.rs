//! The `normal` action: runs a module on the node. [`Normal`] asks the executor for
//! the run; for a sandball component the executor comes back here: [`run`] adds the
//! internal `_ansible_*` arguments, makes sure the node holds the module, runs it with
//! the grant policy gave, and turns what came back (output read as ansible-core reads
//! it: [`module_output`]; a trap, a timeout, a denial) into a task result.

use super::{ActionPlugin, Context, ModuleRequest, Runs, failed, module_output, push_warning};
use crate::assemble::Component;
use crate::plugins::connection::{RunReply, SessionError};
use futures::future::LocalBoxFuture;
use sandball_wire::capability::Grant;
use sandball_wire::protocol::Outcome;
use serde_json::{Map, Value, json};

/// The `normal` action plugin: the module of the action's name, with the task's
/// arguments.
pub struct Normal;

impl ActionPlugin for Normal {
    fn supports_async(&self, _action: &str) -> bool {
        true
    }

    fn runs<'a>(&self, action: &'a str) -> Runs<'a> {
        Runs::Module {
            name: action,
            legacy: false,
        }
    }

    fn run<'a>(
        &'a self,
        ctx: &'a dyn Context,
        action: &'a str,
        args: Map<String, Value>,
    ) -> LocalBoxFuture<'a, Map<String, Value>> {
        Box::pin(async move {
            let mut r = ctx
                .execute_module(ModuleRequest {
                    name: action,
                    args,
                    legacy: false,
                    transfers: Vec::new(),
                    foreground: false,
                })
                .await;
            // The facts of a `setup` task are not shown with -v, as in ansible-core.
            if crate::assemble::component::short_name(action) == "setup" {
                r.insert("_ansible_verbose_override".into(), Value::Bool(true));
            }
            r
        })
    }
}

/// Settings that become internal arguments.
#[derive(Clone, Copy, Debug, Default)]
pub struct ModuleFlags {
    /// `_ansible_check_mode`.
    pub check_mode: bool,
    /// `_ansible_diff`.
    pub diff: bool,
    /// `_ansible_no_log`.
    pub no_log: bool,
    /// `_ansible_verbosity`.
    pub verbosity: u8,
}

/// The module's arguments plus the internal arguments every module receives.
pub fn with_internal_args(module: &str, args: &Map<String, Value>, flags: ModuleFlags) -> Value {
    let mut all = args.clone();
    let internal = json!({
        "_ansible_check_mode": flags.check_mode,
        "_ansible_no_log": flags.no_log,
        "_ansible_debug": false,
        "_ansible_diff": flags.diff,
        "_ansible_verbosity": flags.verbosity,
        "_ansible_version": crate::ANSIBLE_COMPAT_VERSION,
        "_ansible_module_name": module,
        "_ansible_syslog_facility": "LOG_USER",
        "_ansible_selinux_special_fs": ["fuse", "nfs", "vboxsf", "ramfs", "9p", "vfat"],
        "_ansible_string_conversion_action": "warn",
        "_ansible_socket": null,
        "_ansible_shell_executable": "/bin/sh",
        "_ansible_keep_remote_files": false,
        "_ansible_tmpdir": null,
        "_ansible_remote_tmp": "~/.ansible/tmp",
        "_ansible_target_log_info": null,
        "_ansible_ignore_unknown_opts": false,
    });
    if let Value::Object(m) = internal {
        all.extend(m);
    }
    Value::Object(all)
}

/// Runs a component module, under the name `invoked`, with templated `args` and
/// `grant`; `send` delivers it to the host's session; `hint` says how a denied
/// capability can be granted. A session error is returned as such: the session is
/// then unusable.
pub async fn run<F, Fut>(
    component: &Component,
    invoked: &str,
    args: &Map<String, Value>,
    grant: Grant,
    hint: &dyn Fn(&str) -> String,
    flags: ModuleFlags,
    send: F,
) -> Result<Map<String, Value>, SessionError>
where
    F: FnOnce(Value, Grant) -> Fut,
    Fut: std::future::Future<Output = Result<RunReply, SessionError>>,
{
    let granted_fs: Vec<String> = grant.fs.iter().map(ToString::to_string).collect();
    let reply = send(with_internal_args(invoked, args, flags), grant).await?;
    let mut result = interpret(&component.name, reply, &granted_fs, hint);
    // A component that crashed (it reports the exception, as ping's `data: crash`
    // does): ansible-core 2.19 reports a module's unhandled exception this way. A
    // legacy module's own `fail_json(exception=…)` keeps its message.
    if result.contains_key("exception")
        && !result.contains_key(ERROR_MESSAGE)
        && result
            .get("failed")
            .is_some_and(sandball_wire::python::py_truth)
        && let Some(Value::String(msg)) = result.get_mut("msg")
    {
        *msg = format!("Task failed: Module failed: {msg}");
    }
    // What the module's spec marks no_log never reaches an output, even quoted back by
    // the module or by a denial (a refused command line). The diff is left as it is:
    // it shows the content the task writes, which `--diff` asks to see (Ansible's copy
    // shows it too: its action plugin hands the module a file, not the no_log text).
    let secrets = super::no_log::secrets(Some(&component.manifest), args, false);
    let diff = result.remove("diff");
    super::no_log::mask_map(&mut result, &secrets);
    if let Some(diff) = diff {
        result.insert("diff".into(), diff);
    }
    Ok(result)
}

/// Whether a result shows the session should not be used again: a module stopped at
/// its time limit may have been stuck in a host call, and then the shim ends itself.
pub fn retires_session(result: &Map<String, Value>) -> bool {
    result.get(TIMED_OUT).and_then(Value::as_bool) == Some(true)
}

/// Result key set on runs stopped at their time limit.
pub const TIMED_OUT: &str = "timed_out";

/// Turns a run reply into a task result.
pub fn interpret(
    module: &str,
    reply: RunReply,
    granted_fs: &[String],
    hint: &dyn Fn(&str) -> String,
) -> Map<String, Value> {
    let stdout = String::from_utf8_lossy(&reply.stdout).into_owned();
    let mut result = match &reply.outcome {
        // As ansible-core reads it: the exit status does not fail a module that
        // returned a result (its `rc` may: `executor::task`).
        Outcome::Exited { code } => match module_output::parse(&reply.stdout) {
            Ok((mut m, junk)) => match module_output::clean(&mut m) {
                Ok(cleaned) => {
                    error_summary(&mut m);
                    warning_summaries(&mut m);
                    let settled = module_output::settle_warnings(&mut m);
                    for w in junk.into_iter().chain(cleaned).chain(settled) {
                        push_warning(&mut m, w);
                    }
                    deprecations(&mut m);
                    m
                }
                Err(raised) => raised,
            },
            Err(why) => module_output::unreadable(why, &reply.stdout, &reply.stderr, *code),
        },
        Outcome::Trapped { message } => {
            let mut m = failed(format!(
                "MODULE FAILURE: module {module} crashed: {message}"
            ));
            m.insert("module_stdout".into(), Value::String(stdout.clone()));
            m.insert("module_stderr".into(), Value::String(reply.stderr.clone()));
            m.insert("rc".into(), json!(1));
            m
        }
        Outcome::TimedOut { limit_ms } => {
            let mut m = failed(format!(
                "module {module} was stopped: it ran longer than its time limit of {} (limits.wall_time_ms = {limit_ms})",
                human_ms(*limit_ms)
            ));
            m.insert(TIMED_OUT.into(), Value::Bool(true));
            m
        }
        Outcome::OutOfMemory { limit_bytes } => failed(format!(
            "module {module} was stopped: it needed more memory than its limit of {} MiB (limits.memory_bytes = {limit_bytes})",
            limit_bytes >> 20
        )),
        Outcome::OutputLimit { limit_bytes } => failed(format!(
            "module {module} was stopped: it wrote more output than its limit of {} MiB (limits.output_bytes = {limit_bytes})",
            limit_bytes >> 20
        )),
    };
    let failed = result
        .get("failed")
        .is_some_and(sandball_wire::python::py_truth);
    if !reply.denials.is_empty() {
        let list: Vec<Value> = reply
            .denials
            .iter()
            .map(|d| json!({"capability": d.capability, "reason": d.reason}))
            .collect();
        result.insert("denials".into(), Value::Array(list));
        // A denial fails the task even when the module carried on without it.
        result.insert("failed".into(), Value::Bool(true));
        let first = &reply.denials[0];
        let hint = hint(&first.capability);
        let msg = result
            .get("msg")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        // The module usually quotes the shim's reason already; say it once.
        let said = if msg.contains(&first.reason) {
            msg
        } else if msg.is_empty() {
            first.reason.clone()
        } else {
            format!("{msg}: {}", first.reason)
        };
        result.insert(
            "msg".into(),
            Value::String(format!(
                "{said} (module {module} was denied {}; to grant it, {hint})",
                first.capability
            )),
        );
    } else if failed && wasi_path_error(&result) {
        explain_path_error(module, granted_fs, hint, &mut result);
    }
    if reply.denials_omitted > 0 {
        result.insert(DENIALS_OMITTED.into(), json!(reply.denials_omitted));
        push_warning(
            &mut result,
            format!("{} more denials not shown", reply.denials_omitted),
        );
    }
    for w in reply.warnings {
        push_warning(&mut result, format!("sandball-shim: {w}"));
    }
    result.entry("changed").or_insert(Value::Bool(false));
    // Output split into lines, as Ansible's action plugins add it to every module's
    // result.
    for (text, lines) in [("stdout", "stdout_lines"), ("stderr", "stderr_lines")] {
        if !result.contains_key(lines)
            && let Some(Value::String(t)) = result.get(text)
        {
            let split = sandball_wire::python::splitlines(t)
                .into_iter()
                .map(|l| Value::String(l.to_string()))
                .collect();
            result.insert(lines.into(), Value::Array(split));
        }
    }
    result
}

/// Result key with the number of denials the shim did not keep (only the first ones
/// are kept, of bounded size).
pub const DENIALS_OMITTED: &str = "denials_omitted";

/// Whether a failure reads like WASI refusing or not finding a path: outside every
/// granted directory a path does not exist for the module (ENOENT, 44), and `..` or
/// an absolute symlink out of a granted directory is refused (EPERM, 63; ENOTCAPABLE, 76).
fn wasi_path_error(result: &Map<String, Value>) -> bool {
    let msg = result
        .get("msg")
        .and_then(Value::as_str)
        .unwrap_or_default();
    ["(os error 44)", "(os error 63)", "(os error 76)"]
        .iter()
        .any(|code| msg.contains(code))
}

/// Adds what the module was granted and how to grant a path, naming the first
/// absolute path the message mentions.
fn explain_path_error(
    module: &str,
    granted_fs: &[String],
    hint: &dyn Fn(&str) -> String,
    result: &mut Map<String, Value>,
) {
    let msg = result
        .get("msg")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let path = msg
        .split_whitespace()
        .find(|w| w.starts_with('/'))
        .map(|w| w.trim_end_matches([':', ',', ';', '.', ')', '\'']))
        .unwrap_or("PATH");
    let granted = if granted_fs.is_empty() {
        "no filesystem access".to_string()
    } else {
        granted_fs.join(", ")
    };
    result.insert(
        "msg".into(),
        Value::String(format!(
            "{msg} (module {module} can only see the paths its grant covers: {granted}; if {path} exists on the node, {})",
            hint(&format!("fs read {path}"))
        )),
    );
}

fn human_ms(ms: u64) -> String {
    if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        format!("{ms} ms")
    }
}

/// Where a result keeps the error that the error shown before it says: an ansible-core
/// 2.19 module's `msg` and the causes its `exception` chains to it (a module's own
/// failure, not a crash).
pub const ERROR_MESSAGE: &str = "_ansible_error_message";

/// An ansible-core 2.19 module's `fail_json(exception=…)`: its `exception` is an error
/// summary, the message and the chain of its causes. As ansible-core keeps it, the
/// result's `exception` becomes the traceback (when the module captured one), and the
/// error shown before the result says the chain, each cause after its effect
/// (`Error executing command: [Errno 2] No such file or directory: …`).
fn error_summary(m: &mut Map<String, Value>) {
    let Some(Value::Object(summary)) = m.get("exception") else {
        return;
    };
    if summary.get("__ansible_type").and_then(Value::as_str) != Some("ErrorSummary") {
        return;
    }
    let Some(event) = summary.get("event") else {
        return;
    };
    let message = brief_message(event);
    let traceback = event
        .get("formatted_traceback")
        .and_then(Value::as_str)
        .unwrap_or("(traceback unavailable)")
        .to_string();
    m.insert("exception".into(), Value::String(traceback));
    // A summary alone (an exception the module did not handle, reported by
    // ansible-core 2.19's loader) is the module's failure, said as its message.
    if !m.contains_key("msg") {
        m.insert(
            "msg".into(),
            Value::String(format!("Task failed: Module failed: {message}")),
        );
    }
    m.insert(ERROR_MESSAGE.into(), Value::String(message));
}

/// An ansible-core 2.19 module's `warnings` are summaries (an event, with its help
/// text): each becomes its text, as ansible-core registers it, the help text kept for
/// the default callback to show after it.
fn warning_summaries(m: &mut Map<String, Value>) {
    let mut help = Vec::new();
    if let Some(Value::Array(warnings)) = m.get_mut("warnings") {
        for w in warnings.iter_mut() {
            if w.get("__ansible_type").and_then(Value::as_str) != Some("WarningSummary") {
                continue;
            }
            let Some(event) = w.get("event") else {
                continue;
            };
            let text = brief_message(event);
            if let Some(h) = event.get("help_text").and_then(Value::as_str) {
                help.push((text.clone(), h.to_string()));
            }
            *w = Value::String(text);
        }
    }
    for (text, h) in help {
        super::warning_help(m, &text, &h);
    }
}

/// A module's `deprecations` as ansible-core 2.19 registers them, whether the module
/// sent ansible-core 2.19 summaries (an event, its deprecator, `version` or `date`) or
/// the older `{msg, version|date, collection_name}`: each `{msg, collection_name,
/// deprecator: {resolved_name, type} | null}` and its `date`, else its `version` (null
/// when it has neither); the line the default callback shows for each is kept beside
/// them ([`super::DEPRECATIONS_SHOWN`]). An item that is neither is dropped with a
/// warning, as ansible-core drops it.
fn deprecations(m: &mut Map<String, Value>) {
    let Some(Value::Array(items)) = m.remove("deprecations") else {
        return;
    };
    let mut registered = Vec::new();
    let mut shown = Vec::new();
    let mut invalid = Vec::new();
    for item in items {
        match deprecation(&item) {
            Some((entry, line)) => {
                registered.push(entry);
                shown.push(Value::String(line));
            }
            None => invalid.push(item),
        }
    }
    m.insert("deprecations".into(), Value::Array(registered));
    m.insert(super::DEPRECATIONS_SHOWN.into(), Value::Array(shown));
    // Why, as Python's error says it.
    for item in invalid {
        let why = match &item {
            Value::Object(_) => "'msg'".to_string(),
            Value::Null => "'NoneType' object has no attribute 'pop'".to_string(),
            other => format!(
                "'{}' object has no attribute 'pop'",
                sandball_wire::python::short_type_name(other)
            ),
        };
        push_warning(
            m,
            format!("Task result `deprecations` contained an invalid item: {why}"),
        );
    }
}

/// A deprecation of ansible-core's own that reading or templating the playbook gave,
/// registered and shown as a module's of the same words is, its detail (where, and
/// what instead) after the line.
pub(crate) fn core_deprecation(d: &crate::template::Deprecation) -> Option<(Value, String)> {
    let item = json!({"msg": d.msg, "version": d.version, "collection_name": "ansible.builtin"});
    deprecation(&item).map(|(entry, line)| (entry, line + &d.detail))
}

/// Adds ansible-core's `deprecations` to a result's own, as ansible-core registers them.
pub(crate) fn register_deprecations(
    result: &mut Map<String, Value>,
    deprecations: &[crate::template::Deprecation],
) {
    let entries: Vec<Value> = deprecations
        .iter()
        .filter_map(|d| core_deprecation(d).map(|(entry, _)| entry))
        .collect();
    if entries.is_empty() {
        return;
    }
    match result.get_mut("deprecations") {
        Some(Value::Array(own)) => own.extend(entries),
        _ => {
            result.insert("deprecations".into(), Value::Array(entries));
        }
    }
}

/// One deprecation, registered and as shown; none when it is not one.
fn deprecation(item: &Value) -> Option<(Value, String)> {
    let summary = item.get("__ansible_type").and_then(Value::as_str) == Some("DeprecationSummary");
    let (event, deprecator) = if summary {
        let deprecator = item.get("deprecator").filter(|d| !d.is_null()).map(|d| {
            let name = d.get("resolved_name").cloned().unwrap_or(Value::Null);
            let kind = d.get("type").map(|t| t.get("value").unwrap_or(t).clone());
            json!({"resolved_name": name, "type": kind.unwrap_or(Value::Null)})
        });
        (item.get("event")?.clone(), deprecator)
    } else {
        let deprecator = item
            .get("collection_name")
            .and_then(Value::as_str)
            .map(|c| json!({"resolved_name": c, "type": null}));
        (json!({"msg": item.get("msg")?.as_str()?}), deprecator)
    };
    let head = event.get("msg")?.as_str()?;
    let msg = brief_message(&event);
    let text = |k: &str| item.get(k).and_then(Value::as_str);
    let (version, date) = (text("version"), text("date"));
    let collection = deprecator.as_ref().and_then(|d| {
        let name = d.get("resolved_name")?.as_str()?;
        let mut parts = name.splitn(3, '.');
        Some(format!("{}.{}", parts.next()?, parts.next()?))
    });
    let mut entry = json!({"msg": msg, "collection_name": collection, "deprecator": deprecator});
    match date {
        Some(d) => entry["date"] = json!(d),
        None => entry["version"] = json!(version),
    }
    // The line: the message, when and from what the feature goes, then the causes the
    // message chains to and its help text.
    let head = head.trim_end_matches('.');
    let mut line = format!("{head}. This feature will be removed");
    match &deprecator {
        None => line.push_str(" in the future"),
        Some(d) => {
            let name = d["resolved_name"].as_str().unwrap_or_default();
            let collection = collection.as_deref().unwrap_or(name);
            let from = if collection == "ansible.builtin" {
                "ansible-core".to_string()
            } else {
                format!("collection '{collection}'")
            };
            match d["type"].as_str() {
                Some(kind) => {
                    let short = name.rsplit('.').next().unwrap_or(name);
                    let kind = if kind == "module" {
                        kind.to_string()
                    } else {
                        format!("{kind} plugin")
                    };
                    line.push_str(&format!(" from {kind} '{short}' in {from}"));
                }
                None => line.push_str(&format!(" from {from}")),
            }
            match (version, date) {
                (_, Some(d)) => line.push_str(&format!(" in a release after {d}")),
                (Some(v), None) => line.push_str(&format!(" version {v}")),
                (None, None) => line.push_str(" in a future release"),
            }
        }
    }
    match msg.strip_prefix(head).filter(|causes| !causes.is_empty()) {
        Some(causes) => line.push_str(causes),
        None => line.push('.'),
    }
    if let Some(help) = event.get("help_text").and_then(Value::as_str) {
        line.push(' ');
        line.push_str(help);
    }
    Some((entry, line))
}

/// An event's message followed by those of the causes it chains to (while the chain
/// says to follow it), a cause already quoted at the end of its effect said once, as
/// ansible-core 2.19 writes an error briefly.
fn brief_message(event: &Value) -> String {
    let mut parts = Vec::new();
    let mut next = Some(event);
    while let Some(e) = next {
        parts.push(e.get("msg").and_then(Value::as_str).unwrap_or_default());
        next = e
            .get("chain")
            .filter(|c| c.get("follow").and_then(Value::as_bool) == Some(true))
            .and_then(|c| c.get("event"));
    }
    let mut parts = parts.into_iter().rev();
    let mut message = parts.next().unwrap_or_default().to_string();
    for part in parts {
        message = if part.ends_with(&message) {
            part.to_string()
        } else {
            format!("{}: {message}", part.trim_end_matches(['.', ' ']))
        };
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{self, Policy, Subject};

    fn hint(capability: &str) -> String {
        let s = Subject {
            module: "reader",
            sha256: None,
            builtin: false,
            host: None,
        };
        policy::how_to_grant(&Policy::default(), &s, capability)
    }

    /// The reply of a module that exited with `code`, having printed `stdout`.
    fn exited(code: i32, stdout: impl AsRef<[u8]>) -> RunReply {
        RunReply {
            outcome: Outcome::Exited { code },
            stdout: stdout.as_ref().to_vec(),
            stderr: String::new(),
            denials: vec![],
            denials_omitted: 0,
            warnings: vec![],
        }
    }

    /// What ansible-core 2.19's `fail_json(msg=…, exception=OSError(…))` prints.
    const ERROR_SUMMARY: &str = r#"{"rc": 2, "failed": true, "msg": "Error executing command.", "exception": {"event": {"msg": "Error executing command.", "chain": {"msg_reason": "<<< caused by >>>", "traceback_reason": "The above exception was the direct cause of the following error:", "event": {"msg": "[Errno 2] No such file or directory: '/x'", "__ansible_type": "Event"}, "follow": true, "__ansible_type": "EventChain"}, "__ansible_type": "Event"}, "__ansible_type": "ErrorSummary"}}"#;

    #[test]
    fn an_error_summary_says_its_causes_and_keeps_no_traceback() {
        let reply = exited(1, ERROR_SUMMARY);
        let r = interpret("x", reply, &[], &hint);
        assert_eq!(r["msg"], "Error executing command.");
        assert_eq!(r["exception"], "(traceback unavailable)");
        assert_eq!(
            r[ERROR_MESSAGE],
            "Error executing command: [Errno 2] No such file or directory: '/x'"
        );
        // A cause its effect already quotes is said once; an unfollowed chain is not
        // said; a message alone needs nothing more.
        let quoted =
            json!({"msg": "failed: boom", "chain": {"follow": true, "event": {"msg": "boom"}}});
        assert_eq!(brief_message(&quoted), "failed: boom");
        let unfollowed = json!({"msg": "a.", "chain": {"follow": false, "event": {"msg": "b"}}});
        assert_eq!(brief_message(&unfollowed), "a.");
        let summaries = r#"{"changed": false, "warnings": ["old", {"event": {"msg": "w1", "__ansible_type": "Event"}, "__ansible_type": "WarningSummary"}, {"event": {"msg": "w2", "help_text": "Do this.", "__ansible_type": "Event"}, "__ansible_type": "WarningSummary"}]}"#;
        let reply = exited(0, summaries);
        let r = interpret("x", reply, &[], &hint);
        assert_eq!(r["warnings"], json!(["old", "w1", "w2"]));
        assert_eq!(r[super::super::WARNING_HELP], json!({"w2": "Do this."}));
        let mut alone = json!({"msg": "m", "exception": {"__ansible_type": "ErrorSummary", "event": {"msg": "m", "formatted_traceback": "Traceback…"}}});
        error_summary(alone.as_object_mut().unwrap());
        assert_eq!(
            alone,
            json!({"msg": "m", "exception": "Traceback…", ERROR_MESSAGE: "m"})
        );
        let mut unhandled = json!({"failed": true, "exception": {"__ansible_type": "ErrorSummary", "event": {"msg": "one", "chain": {"follow": true, "event": {"msg": "two"}}}}});
        error_summary(unhandled.as_object_mut().unwrap());
        assert_eq!(unhandled["msg"], "Task failed: Module failed: one: two");
    }

    #[test]
    fn modules_cannot_forge_internal_keys() {
        let reply = exited(
            0,
            br#"{"changed": true, "_ansible_no_log": false, "_ansible_verbose_always": true}"#,
        );
        let r = interpret("x", reply, &[], &hint);
        assert_eq!(r.get("_ansible_no_log"), None);
        assert_eq!(r["changed"], true);
    }

    #[test]
    fn path_errors_say_what_was_granted_and_how_to_grant_more() {
        let reply = exited(1, br#"{"failed": true, "msg": "cannot read /etc/hostname: No such file or directory (os error 44)"}"#);
        let r = interpret(
            "reader",
            reply,
            &["fs read on /tmp (its directory)".into()],
            &hint,
        );
        let msg = r["msg"].as_str().unwrap();
        assert!(
            msg.contains("module reader can only see the paths its grant covers: fs read on /tmp"),
            "{msg}"
        );
        assert!(
            msg.contains("{kind: fs, path: /etc/hostname, access: read}"),
            "{msg}"
        );
    }

    #[test]
    fn internal_args_are_added() {
        let a = with_internal_args(
            "ping",
            &Map::new(),
            ModuleFlags {
                check_mode: true,
                ..Default::default()
            },
        );
        assert_eq!(a["_ansible_check_mode"], true);
        assert_eq!(a["_ansible_module_name"], "ping");
    }

    /// Deprecations of both forms are registered and shown as ansible-core 2.19
    /// registers and shows them (the lines ansible-playbook printed for these items).
    #[test]
    fn deprecations_are_registered_and_shown_as_ansible_core_does() {
        let summary = |deprecator: Value, event: Value, when: Value| {
            let mut d = json!({"__ansible_type": "DeprecationSummary", "deprecator": deprecator, "event": event});
            d.as_object_mut()
                .unwrap()
                .extend(when.as_object().unwrap().clone());
            d
        };
        let plugin = |name: &str, kind: Option<&str>| {
            json!({"__ansible_type": "PluginInfo", "resolved_name": name,
                   "type": kind.map(|k| json!({"__ansible_type": "PluginType", "value": k}))})
        };
        let event = |msg: &str| json!({"__ansible_type": "Event", "msg": msg});
        let mut m = json!({"deprecations": [
            summary(plugin("ns.col", None), event("this thing is old"), json!({"version": "2.0.0"})),
            summary(plugin("ansible.legacy.depmod", Some("module")), event("d only"), json!({"date": "2027-01-01"})),
            summary(plugin("ansible.builtin", None), event("builtin v"), json!({"version": "2.21"})),
            summary(plugin("ansible.builtin.copy", Some("module")), event("bm"), json!({"version": "2.22"})),
            summary(plugin("community.general.thing", Some("lookup")), event("cl"), json!({})),
            summary(Value::Null, json!({"msg": "nodep", "help_text": "Use x."}), json!({"version": "3.0"})),
            summary(Value::Null, json!({"msg": "chained", "chain": {"follow": true, "event": event("inner")}}), json!({})),
            {"msg": "ends with dot.", "version": "1.0", "collection_name": "ns.col"},
            {"msg": "old date", "date": "2027-02-02"},
            "a string",
        ]});
        deprecations(m.as_object_mut().unwrap());
        let shown = &m[super::super::DEPRECATIONS_SHOWN];
        assert_eq!(
            shown,
            &json!([
                "this thing is old. This feature will be removed from collection 'ns.col' version 2.0.0.",
                "d only. This feature will be removed from module 'depmod' in collection 'ansible.legacy' in a release after 2027-01-01.",
                "builtin v. This feature will be removed from ansible-core version 2.21.",
                "bm. This feature will be removed from module 'copy' in ansible-core version 2.22.",
                "cl. This feature will be removed from lookup plugin 'thing' in collection 'community.general' in a future release.",
                "nodep. This feature will be removed in the future. Use x.",
                "chained. This feature will be removed in the future: inner",
                "ends with dot. This feature will be removed from collection 'ns.col' version 1.0.",
                "old date. This feature will be removed in the future.",
            ])
        );
        let registered = &m["deprecations"];
        assert_eq!(
            registered[1],
            json!({"collection_name": "ansible.legacy", "date": "2027-01-01", "msg": "d only",
                   "deprecator": {"resolved_name": "ansible.legacy.depmod", "type": "module"}})
        );
        assert_eq!(
            registered[4],
            json!({"collection_name": "community.general", "version": null, "msg": "cl",
                   "deprecator": {"resolved_name": "community.general.thing", "type": "lookup"}})
        );
        assert_eq!(
            registered[6],
            json!({"collection_name": null, "deprecator": null, "msg": "chained: inner", "version": null})
        );
        assert_eq!(
            registered[7],
            json!({"collection_name": "ns.col", "version": "1.0", "msg": "ends with dot.",
                   "deprecator": {"resolved_name": "ns.col", "type": null}})
        );
        assert_eq!(registered.as_array().unwrap().len(), 9);
        assert_eq!(
            m["warnings"],
            json!([
                "Task result `deprecations` contained an invalid item: 'str' object has no attribute 'pop'"
            ])
        );
    }
}
