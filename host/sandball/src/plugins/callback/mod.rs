//! Callback plugins: what the user (or a machine) sees of a run.
//!
//! The executor reports events through [`Callback`]; [`default::DefaultCallback`] prints
//! them as `ansible-playbook` does, and [`stats::Stats`] counts them for the recap.

pub mod default;
pub mod jsonl;
pub mod minimal;
pub mod prompt;
pub mod stats;

use serde_json::{Map, Value};
use std::borrow::Cow;

/// Text safe to print on a terminal: control characters other than newline and tab
/// (escape sequences that move the cursor, rewrite lines or write to the clipboard)
/// are shown escaped (`\x1b`), so what a module returns cannot take over the terminal.
pub fn printable(text: &str) -> Cow<'_, str> {
    let unsafe_char = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if unsafe_char(c) {
            let code = c as u32;
            if code < 0x100 {
                out.push_str(&format!("\\x{code:02x}"));
            } else {
                out.push_str(&format!("\\u{code:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A warning or deprecation a module returned, made [`printable`], its later lines
/// indented so they cannot pass for lines of sandball's own (`ok: [host]`).
pub fn module_text(text: &str) -> String {
    printable(text).replace('\n', "\n  ")
}

/// How a task (or one loop item) ended on a host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Ran, changed nothing.
    Ok,
    /// Ran and changed something.
    Changed,
    /// Failed.
    Failed,
    /// Skipped (`when` false, or check mode unsupported).
    Skipped,
    /// The host could not be reached.
    Unreachable,
}

impl Status {
    /// The status a result map describes. Each flag counts by Python's truth value, as
    /// Ansible reads it: `failed: "false"` or `failed: {...}` is a failure.
    pub fn of(result: &Map<String, Value>) -> Status {
        let flag = |k| result.get(k).is_some_and(sandball_wire::python::py_truth);
        if flag("unreachable") {
            Status::Unreachable
        } else if flag("failed") {
            Status::Failed
        } else if flag("skipped") {
            Status::Skipped
        } else if flag("changed") {
            Status::Changed
        } else {
            Status::Ok
        }
    }
}

/// One reported result.
#[derive(Debug)]
pub struct Report<'a> {
    /// The host.
    pub host: &'a str,
    /// The task's action (e.g. `debug`), for action-specific display.
    pub action: &'a str,
    /// How it ended.
    pub status: Status,
    /// The result, already cleaned of secrets (`no_log`).
    pub result: &'a Map<String, Value>,
    /// The loop item label, for loop items.
    pub item: Option<&'a str>,
    /// A failure that `ignore_errors` let through.
    pub ignored: bool,
    /// The summary of a loop whose items were reported one by one.
    pub looped: bool,
    /// The task that failed, for ansible-core 2.19's `[ERROR]: Task failed` block
    /// (`None` where no task stands behind the result).
    pub origin: Option<Origin<'a>>,
}

/// Where a failed task is written, and what failed in it.
#[derive(Clone, Copy, Debug)]
pub struct Origin<'a> {
    /// The task's position in its file.
    pub location: &'a crate::playbook::Location,
    /// Whether its work is a module's (`Module failed`) rather than the action's on the
    /// controller (`Action failed`).
    pub module: bool,
}

/// Receives the events of a run.
pub trait Callback: Send + Sync {
    /// A playbook starts: its path as given and how many plays it has (imports
    /// included).
    fn playbook_start(&self, path: &str, plays: usize) {
        let _ = (path, plays);
    }
    /// A play starts.
    fn play_start(&self, name: &str);
    /// A task starts (`handler` for handlers).
    fn task_start(&self, name: &str, handler: bool);
    /// A play stops for every host (`max_fail_percentage` passed).
    fn no_more_hosts(&self);
    /// A task finished on a host, or a loop item did.
    fn result(&self, report: &Report<'_>);
    /// An `until` condition was not met; the task runs again.
    fn retrying(&self, host: &str, task: &str, retries_left: u64);
    /// A warning for the user.
    fn warning(&self, msg: &str);
    /// A message for verbosity `level` and up (`-vvv` is 3), about `host` when there is
    /// one, as Ansible's `display.vvv` shows it (`<host> msg`). Callbacks without a
    /// verbose view ignore it.
    fn verbose(&self, level: u8, host: Option<&str>, msg: &str) {
        let _ = (level, host, msg);
    }
    /// An `async` task is still running on a host (checked every `poll` seconds).
    fn async_poll(&self, host: &str, jid: &str) {
        let _ = (host, jid);
    }
    /// An `async` task ended on a host, well or not.
    fn async_done(&self, host: &str, jid: &str, ok: bool) {
        let _ = (host, jid, ok);
    }
    /// A deprecation notice.
    fn deprecation(&self, msg: &str);
    /// The run ended.
    fn recap(&self, stats: &stats::Stats);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_never_reach_the_terminal() {
        assert_eq!(printable("plain\ttext\n"), "plain\ttext\n");
        assert_eq!(
            printable("\u{1b}]52;c;cHduZWQ=\u{7}x\r\u{9b}2J"),
            "\\x1b]52;c;cHduZWQ=\\x07x\\x0d\\x9b2J"
        );
        assert_eq!(module_text("a\nok: [web1]"), "a\n  ok: [web1]");
    }
}
