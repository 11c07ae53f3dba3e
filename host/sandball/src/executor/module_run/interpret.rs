//! A run's reply read as a task result: the module's output as ansible-core reads it
//! ([`output`]), with its summaries of errors, warnings and deprecations
//! ([`summaries`]); a trap, a time, memory or output limit; the denials the shim
//! reported, explained with how to grant what was denied; a path the grant hides.

use super::output;
use crate::plugins::action::{TaskResult, failed, push_warning, summaries};
use crate::plugins::connection::RunReply;
use sandball_wire::protocol::Outcome;
use serde_json::{Map, Value, json};

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
) -> TaskResult {
    let stdout = String::from_utf8_lossy(&reply.stdout).into_owned();
    let mut result = match &reply.outcome {
        // As ansible-core reads it: the exit status does not fail a module that
        // returned a result (its `rc` may: `executor::task`).
        Outcome::Exited { code } => match output::parse(&reply.stdout) {
            Ok((m, junk)) => {
                // The module boundary: what the module returned becomes a result.
                let mut m = TaskResult::from(m);
                match output::clean(&mut m) {
                    Ok(cleaned) => {
                    summaries::error_summary(&mut m);
                    summaries::warning_summaries(&mut m);
                    let settled = output::settle_warnings(&mut m);
                    for w in junk.into_iter().chain(cleaned).chain(settled) {
                        push_warning(&mut m, w);
                    }
                    summaries::deprecations(&mut m);
                    m
                }
                    Err(raised) => raised.into(),
                }
            }
            Err(why) => output::unreadable(why, &reply.stdout, &reply.stderr, *code),
        },
        Outcome::Trapped { message } => {
            let mut m = failed(format!(
                "MODULE FAILURE: module {module} crashed: {message}"
            ));
            m.insert("module_stdout".into(), Value::String(stdout.clone()));
            m.insert("module_stderr".into(), Value::String(reply.stderr.clone()));
            m.insert("rc".into(), json!(1));
            m.into()
        }
        Outcome::TimedOut { limit_ms } => {
            let mut m = failed(format!(
                "module {module} was stopped: it ran longer than its time limit of {} (limits.wall_time_ms = {limit_ms})",
                human_ms(*limit_ms)
            ));
            m.insert(TIMED_OUT.into(), Value::Bool(true));
            m.into()
        }
        Outcome::OutOfMemory { limit_bytes } => failed(format!(
            "module {module} was stopped: it needed more memory than its limit of {} MiB (limits.memory_bytes = {limit_bytes})",
            limit_bytes >> 20
        ))
        .into(),
        Outcome::OutputLimit { limit_bytes } => failed(format!(
            "module {module} was stopped: it wrote more output than its limit of {} MiB (limits.output_bytes = {limit_bytes})",
            limit_bytes >> 20
        ))
        .into(),
    };
    let failed = result
        .get("failed")
        .is_some_and(sandball_pycompat::pyops::py_truth);
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
            let split = sandball_pycompat::pyops::splitlines(t)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::action::summaries::{ERROR_MESSAGE, brief_message, error_summary};
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
        assert_eq!(json!(r.warning_help), json!({"w2": "Do this."}));
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
}
