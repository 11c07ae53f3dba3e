//! Callback plugins: what the user (or a machine) sees of a run.
//!
//! The executor reports events through [`Callback`]; [`default::DefaultCallback`] prints
//! them as `ansible-playbook` does, and [`stats::Stats`] counts them for the recap.

pub mod awx;
pub mod color;
pub mod default;
mod error_block;
pub mod json;
pub mod jsonl;
pub mod junit;
pub mod minimal;
pub mod profile_tasks;
pub mod progress;
pub mod prompt;
pub mod stats;
pub mod text;
pub mod tree;
pub mod unified;

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
/// indented so they cannot pass for lines of sandball's own (`ok: [host]`). A line
/// ending `\r\n` ends in `\n`, as ansible-core shows it.
pub fn module_text(text: &str) -> String {
    printable(&text.replace("\r\n", "\n")).replace('\n', "\n  ")
}

/// `value` with the keys of every mapping in it sorted, as `json.dumps(sort_keys=True)`
/// writes them.
pub fn sorted_keys(value: &Value) -> Value {
    match value {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), sorted_keys(&m[k])))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted_keys).collect()),
        other => other.clone(),
    }
}

/// A stdout callback: its short name and how it is made for a run's verbosity and
/// `--diff`.
struct Stdout {
    name: &'static str,
    make: fn(u8, bool) -> Result<Box<dyn Callback>, String>,
}

/// The stdout callbacks sandball has.
const STDOUT: &[Stdout] = &[
    Stdout {
        name: "default",
        make: |verbosity, diff| {
            let display = default::Display::from_settings(verbosity, diff)?;
            Ok(Box::new(default::DefaultCallback::stdout(display)))
        },
    },
    Stdout {
        name: "yaml",
        make: |verbosity, diff| {
            let display = default::Display {
                format: default::ResultFormat::Yaml,
                ..default::Display::from_settings(verbosity, diff)?
            };
            Ok(Box::new(default::DefaultCallback::stdout(display)))
        },
    },
    Stdout {
        name: "minimal",
        make: |verbosity, _| Ok(Box::new(minimal::MinimalCallback::stdout(false, verbosity))),
    },
    Stdout {
        name: "oneline",
        make: |verbosity, _| Ok(Box::new(minimal::MinimalCallback::stdout(true, verbosity))),
    },
    Stdout {
        name: "json",
        make: |_, _| Ok(Box::new(json::JsonCallback::default())),
    },
    Stdout {
        name: "jsonl",
        make: |_, _| Ok(Box::new(jsonl::JsonlCallback::stdout())),
    },
    Stdout {
        name: "awx_display",
        make: |verbosity, diff| Ok(Box::new(awx::AwxDisplay::from_env(verbosity, diff)?)),
    },
];

/// A callback `callbacks_enabled` may name: the names it may be written as, and how it
/// is made (`Err`: the warning it is skipped with).
struct Enabled {
    names: &'static [&'static str],
    make: fn() -> Result<Box<dyn Callback>, String>,
}

/// The callbacks sandball has besides the stdout ones.
const ENABLED: &[Enabled] = &[
    Enabled {
        names: &["profile_tasks", "ansible.posix.profile_tasks"],
        make: || Ok(Box::new(profile_tasks::ProfileTasks::default())),
    },
    Enabled {
        names: &["timer", "ansible.posix.timer"],
        make: || Ok(Box::new(profile_tasks::Timer::default())),
    },
    Enabled {
        names: &["junit", "ansible.builtin.junit", "community.general.junit"],
        make: || Ok(Box::new(junit::JunitCallback::from_settings())),
    },
    Enabled {
        names: &["tree", "ansible.builtin.tree"],
        make: || {
            match crate::config::settings().get_os("ANSIBLE_CALLBACK_TREE_DIR") {
            Some(dir) => Ok(Box::new(tree::TreeCallback::new(dir.into()))),
            None => Err("The tree callback is enabled but no directory is set (ANSIBLE_CALLBACK_TREE_DIR, [callback_tree] directory): it is skipped".to_string()),
        }
        },
    },
];

/// The stdout callback a name stands for (`stdout_callback` in ansible.cfg,
/// `ANSIBLE_STDOUT_CALLBACK`, `--output`), then those `callbacks_enabled` names
/// (`ANSIBLE_CALLBACKS_ENABLED`, formerly `callback_whitelist`) after it; the warnings
/// for enabled names sandball does not have, as ansible-playbook skips them.
pub fn for_run(
    stdout: &str,
    verbosity: u8,
    diff: bool,
) -> Result<(Box<dyn Callback>, Vec<String>), String> {
    let short = stdout
        .strip_prefix("ansible.builtin.")
        .or_else(|| stdout.strip_prefix("ansible.posix."))
        .or_else(|| stdout.strip_prefix("community.general."))
        .unwrap_or(stdout);
    let Some(row) = STDOUT.iter().find(|row| row.name == short) else {
        let names: Vec<&str> = STDOUT.iter().map(|row| row.name).collect();
        let (last, others) = names.split_last().unwrap_or((&"", &[]));
        return Err(format!(
            "Invalid callback for stdout specified: {short} (sandball has {} and {last})",
            others.join(", ")
        ));
    };
    let first = (row.make)(verbosity, diff)?;
    let mut all = vec![first];
    let mut warnings = Vec::new();
    let settings = crate::config::settings();
    let enabled = settings
        .list("ANSIBLE_CALLBACKS_ENABLED")
        .or_else(|| settings.list("ANSIBLE_CALLBACK_WHITELIST"))
        .unwrap_or_default();
    for name in enabled.iter().map(String::as_str) {
        let short = name.rsplit('.').next().unwrap_or(name);
        // A stdout callback enabled as another is passed over, as ansible-core does:
        // only `stdout_callback` prints the run.
        if STDOUT.iter().any(|row| row.name == short) {
            continue;
        }
        match ENABLED.iter().find(|row| row.names.contains(&name)) {
            Some(row) => match (row.make)() {
                Ok(callback) => all.push(callback),
                Err(warning) => warnings.push(warning),
            },
            None => warnings.push(format!("Skipping callback plugin '{name}', unable to load")),
        }
    }
    let callback: Box<dyn Callback> = if all.len() == 1 {
        all.remove(0)
    } else {
        Box::new(Many(all))
    };
    Ok((callback, warnings))
}

/// `value` with every text in it (keys too) masked with [`crate::vault::mask`].
fn masked_value(value: &Value) -> Value {
    match value {
        Value::String(s) => Value::String(crate::vault::mask(s).into_owned()),
        Value::Array(items) => Value::Array(items.iter().map(masked_value).collect()),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| (crate::vault::mask(k).into_owned(), masked_value(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// What the vault decrypted in this run never reaches a callback: every text of every
/// event is masked first (`********`), as `no_log` values are kept from the output.
/// Results reach callbacks without the `!unsafe` marks that keep their facts' trust.
pub struct Masked(pub Box<dyn Callback>);

impl Callback for Masked {
    fn playbook_start(&self, path: &str, plays: usize) {
        self.0.playbook_start(&crate::vault::mask(path), plays);
    }
    fn play_start(&self, name: &str) {
        self.0.play_start(&crate::vault::mask(name));
    }
    fn play_location(&self, at: &crate::yaml::Location) {
        self.0.play_location(at);
    }
    fn play_pattern(&self, pattern: &str) {
        self.0.play_pattern(&crate::vault::mask(pattern));
    }
    fn host_start(&self, host: &str) {
        self.0.host_start(&crate::vault::mask(host));
    }
    fn notify(&self, handler: &str, host: &str) {
        self.0
            .notify(&crate::vault::mask(handler), &crate::vault::mask(host));
    }
    fn task_start(&self, name: &str, handler: bool) {
        self.0.task_start(&crate::vault::mask(name), handler);
    }
    fn task_running(&self, task: &Running<'_>) {
        if !crate::vault::any_decrypted() {
            return self.0.task_running(task);
        }
        let args = task
            .args
            .map(|a| match masked_value(&Value::Object(a.clone())) {
                Value::Object(m) => m,
                _ => Map::new(),
            });
        self.0.task_running(&Running {
            args: args.as_ref(),
            ..*task
        });
    }
    fn no_more_hosts(&self) {
        self.0.no_more_hosts();
    }
    fn no_hosts_matched(&self) {
        self.0.no_hosts_matched();
    }
    fn result(&self, r: &Report<'_>) {
        // A result keeps the trust of its facts as `!unsafe` marks: shown, they are text.
        let marked = r.result.values().any(crate::template::has_unsafe_marks);
        if !crate::vault::any_decrypted() && !marked {
            return self.0.result(r);
        }
        let mut fields = Value::Object(r.result.fields.clone());
        if marked {
            fields = crate::template::without_unsafe_marks(&fields);
        }
        let decrypted = crate::vault::any_decrypted();
        if decrypted {
            fields = masked_value(&fields);
        }
        let Value::Object(fields) = fields else {
            return;
        };
        let result = r.result.with_fields(fields, |text| {
            if decrypted {
                crate::vault::mask(text).into_owned()
            } else {
                text.to_string()
            }
        });
        let item = r.item.map(|i| crate::vault::mask(i).into_owned());
        self.0.result(&Report {
            host: r.host,
            action: r.action,
            status: r.status,
            result: &result,
            item: item.as_deref(),
            ignored: r.ignored,
            looped: r.looped,
            origin: r.origin,
        });
    }
    fn retrying(&self, host: &str, task: &str, retries_left: u64) {
        self.0
            .retrying(host, &crate::vault::mask(task), retries_left);
    }
    fn warning(&self, msg: &str) {
        self.0.warning(&crate::vault::mask(msg));
    }
    fn error(&self, msg: &str) {
        self.0.error(&crate::vault::mask(msg));
    }
    fn banner(&self, text: &str) {
        self.0.banner(&crate::vault::mask(text));
    }
    fn verbose(&self, level: u8, host: Option<&str>, msg: &str) {
        self.0.verbose(level, host, &crate::vault::mask(msg));
    }
    fn async_poll(&self, host: &str, jid: &str) {
        self.0.async_poll(host, jid);
    }
    fn async_done(&self, host: &str, jid: &str, ok: bool) {
        self.0.async_done(host, jid, ok);
    }
    fn deprecation(&self, msg: &str) {
        self.0.deprecation(&crate::vault::mask(msg));
    }
    fn recap(&self, stats: &stats::Stats) {
        self.0.recap(stats);
    }
}

/// Several callbacks, each told every event in turn (the stdout one first).
pub struct Many(pub Vec<Box<dyn Callback>>);

impl Callback for Many {
    fn playbook_start(&self, path: &str, plays: usize) {
        self.0.iter().for_each(|c| c.playbook_start(path, plays));
    }
    fn play_start(&self, name: &str) {
        self.0.iter().for_each(|c| c.play_start(name));
    }
    fn play_location(&self, at: &crate::yaml::Location) {
        self.0.iter().for_each(|c| c.play_location(at));
    }
    fn play_pattern(&self, pattern: &str) {
        self.0.iter().for_each(|c| c.play_pattern(pattern));
    }
    fn host_start(&self, host: &str) {
        self.0.iter().for_each(|c| c.host_start(host));
    }
    fn notify(&self, handler: &str, host: &str) {
        self.0.iter().for_each(|c| c.notify(handler, host));
    }
    fn task_start(&self, name: &str, handler: bool) {
        self.0.iter().for_each(|c| c.task_start(name, handler));
    }
    fn task_running(&self, task: &Running<'_>) {
        self.0.iter().for_each(|c| c.task_running(task));
    }
    fn no_more_hosts(&self) {
        self.0.iter().for_each(|c| c.no_more_hosts());
    }
    fn no_hosts_matched(&self) {
        self.0.iter().for_each(|c| c.no_hosts_matched());
    }
    fn result(&self, report: &Report<'_>) {
        self.0.iter().for_each(|c| c.result(report));
    }
    fn retrying(&self, host: &str, task: &str, retries_left: u64) {
        self.0
            .iter()
            .for_each(|c| c.retrying(host, task, retries_left));
    }
    fn warning(&self, msg: &str) {
        self.0.iter().for_each(|c| c.warning(msg));
    }
    fn error(&self, msg: &str) {
        self.0.iter().for_each(|c| c.error(msg));
    }
    fn banner(&self, text: &str) {
        self.0.iter().for_each(|c| c.banner(text));
    }
    fn verbose(&self, level: u8, host: Option<&str>, msg: &str) {
        self.0.iter().for_each(|c| c.verbose(level, host, msg));
    }
    fn async_poll(&self, host: &str, jid: &str) {
        self.0.iter().for_each(|c| c.async_poll(host, jid));
    }
    fn async_done(&self, host: &str, jid: &str, ok: bool) {
        self.0.iter().for_each(|c| c.async_done(host, jid, ok));
    }
    fn deprecation(&self, msg: &str) {
        self.0.iter().for_each(|c| c.deprecation(msg));
    }
    fn recap(&self, stats: &stats::Stats) {
        self.0.iter().for_each(|c| c.recap(stats));
    }
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
    /// Ansible reads it: `failed: "false"` or `failed: {...}` is a failure. Where
    /// `failed_when` was evaluated (on the result or on one of its loop items), its
    /// verdict decides, as ansible-core decides: a task whose `until` ran out of retries
    /// is not failed when its `failed_when` says so.
    pub fn of(result: &Map<String, Value>) -> Status {
        use sandball_pycompat::pyops::py_truth;
        let flag = |k| result.get(k).is_some_and(py_truth);
        const VERDICT: &str = "failed_when_result";
        let items = || {
            result
                .get("results")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_object)
        };
        let failed = if result.contains_key(VERDICT) {
            flag(VERDICT)
        } else if items().any(|i| i.contains_key(VERDICT)) {
            items().any(|i| i.get(VERDICT).is_some_and(py_truth))
        } else {
            flag("failed")
        };
        if flag("unreachable") {
            Status::Unreachable
        } else if failed {
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
    pub result: &'a crate::plugins::action::TaskResult,
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

impl Report<'_> {
    /// Whether a stdout callback shows this report: every one but the summary of a loop
    /// whose items were shown one by one, unless that summary says the failure was
    /// ignored, the task skipped or the host unreachable. Callbacks that keep whole
    /// results (`json`, `junit`) take the summaries too.
    pub fn shown(&self) -> bool {
        !self.looped
            || self.ignored
            || matches!(self.status, Status::Skipped | Status::Unreachable)
            || self.failed_debug_loop()
    }

    /// Whether this is the failed summary of a `debug` loop, which ansible-core's
    /// default callback shows as a task's failure (`fatal: … "One or more items
    /// failed"`): it keeps a `debug` result's `msg` alone, so the items are gone.
    pub fn failed_debug_loop(&self) -> bool {
        self.looped
            && self.status == Status::Failed
            && sandball_pycompat::fqcn::short_name(self.action) == "debug"
            && self.result.contains_key("msg")
    }

    /// Whether this is a host's whole result for a task (a loop's summary, not one
    /// of its items).
    pub fn is_final(&self) -> bool {
        self.item.is_none()
    }
}

/// A task as it starts running.
#[derive(Clone, Copy, Debug)]
pub struct Running<'a> {
    /// How many hosts it runs on.
    pub hosts: usize,
    /// Its action, as written (`debug`, `ansible.builtin.copy`).
    pub action: &'a str,
    /// Where it is written.
    pub path: &'a crate::yaml::Location,
    /// Its arguments as written, untemplated; `None` when `no_log` is set on it or
    /// around it (they may hold secrets).
    pub args: Option<&'a Map<String, Value>>,
}

/// Where a failed task is written, and what failed in it.
#[derive(Clone, Copy, Debug)]
pub struct Origin<'a> {
    /// The task's position in its file.
    pub location: &'a crate::yaml::Location,
    /// Whether its work is a module's (`Module failed`) rather than the action's on the
    /// controller (`Action failed`).
    pub module: bool,
    /// Whether the task runs in diff mode (`-D`, or its `diff` keyword): its diff is
    /// shown.
    pub diff: bool,
}

/// A debug message, shown as ansible-core's `display.debug` shows one when
/// `ANSIBLE_DEBUG` is true (`PID TIME: msg` on stdout), else nothing. sandball's are
/// those of the strategy about the meta actions it adds itself.
pub fn debug(msg: &str) {
    if crate::config::settings().flag("ANSIBLE_DEBUG", false) {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or_default();
        println!("{:6} {now:.5}: {msg}", std::process::id());
    }
}

/// Shows what loading the inventory gave: its warnings, errors and verbose lines.
pub fn inventory_notices(callback: &dyn Callback, notices: &[crate::inventory::Notice]) {
    use crate::inventory::Notice;
    for n in notices {
        match n {
            Notice::Warning(w) => callback.warning(w),
            Notice::Error(e) => callback.error(e),
            Notice::Verbose(level, line) => callback.verbose(*level, None, line),
        }
    }
}

/// Receives the events of a run.
pub trait Callback: Send + Sync {
    /// A playbook starts: its path as given and how many plays it has (imports
    /// included).
    fn playbook_start(&self, path: &str, plays: usize) {
        let _ = (path, plays);
    }
    /// A play starts.
    fn play_start(&self, name: &str) {
        let _ = name;
    }
    /// Where the play that just started is written.
    fn play_location(&self, at: &crate::yaml::Location) {
        let _ = at;
    }
    /// The host pattern of the play about to start, as written (`hosts:`); its
    /// `play_start` follows.
    fn play_pattern(&self, pattern: &str) {
        let _ = pattern;
    }
    /// A task starts (`handler` for handlers).
    fn task_start(&self, name: &str, handler: bool) {
        let _ = (name, handler);
    }
    /// The task whose banner was shown last starts running (linear strategy).
    fn task_running(&self, task: &Running<'_>) {
        let _ = task;
    }
    /// The task whose banner was shown last starts on a host (its result follows).
    fn host_start(&self, host: &str) {
        let _ = host;
    }
    /// A handler was notified on a host (told when the handlers are about to run).
    fn notify(&self, handler: &str, host: &str) {
        let _ = (handler, host);
    }
    /// A play stops for every host (`max_fail_percentage` passed).
    fn no_more_hosts(&self) {}
    /// The play that just started selects no host at all.
    fn no_hosts_matched(&self) {}
    /// A task finished on a host, or a loop item did, or a loop did (`looped`: see
    /// [`Report::shown`]).
    fn result(&self, report: &Report<'_>) {
        let _ = report;
    }
    /// An `until` condition was not met; the task runs again.
    fn retrying(&self, host: &str, task: &str, retries_left: u64) {
        let _ = (host, task, retries_left);
    }
    /// A warning for the user.
    fn warning(&self, msg: &str) {
        let _ = msg;
    }
    /// An error that stops a host or the run, outside a task's result.
    fn error(&self, msg: &str) {
        let _ = msg;
    }
    /// A banner of the run's own (`--step`'s question, as ansible-playbook repeats it).
    fn banner(&self, text: &str) {
        let _ = text;
    }
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
    fn deprecation(&self, msg: &str) {
        let _ = msg;
    }
    /// The run ended.
    fn recap(&self, stats: &stats::Stats) {
        let _ = stats;
    }
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
        assert_eq!(module_text("a\r\nb\rc"), "a\n  b\\x0dc");
    }
}
