//! The default callback: output as `ansible-playbook` prints it (PLAY/TASK banners,
//! `ok:`/`changed:`/`fatal:`/`skipping:` lines, `=> {…}` at `-v`, diffs with `-D`,
//! PLAY RECAP), in colour as [`super::color`] decides; `display_ok_hosts`,
//! `display_skipped_hosts` and `callback_result_format` (`json`, `yaml`) as in
//! ansible.cfg's `[defaults]`.

use super::color::{Palette, Role};
use super::error_block::{chain, error_block};
use super::stats::Stats;
use super::text::{dump, render_diff};
use super::{Callback, Report, Status, module_text, printable};
use crate::plugins::action::Failure;
use serde_json::{Map, Value};
use std::io::Write;
use std::sync::Mutex;

const WIDTH: usize = 80;

/// How results are written after `=>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResultFormat {
    /// JSON (one line, or indented from `-vvv`).
    Json,
    /// YAML beneath the line, indented (`callback_result_format = yaml`).
    Yaml,
}

/// What the default callback shows, from ansible.cfg's `[defaults]` settings.
#[derive(Clone, Debug)]
pub struct Display {
    /// `-v` count.
    pub verbosity: u8,
    /// `-D`: show diffs.
    pub diff: bool,
    /// The colours (none when not on a terminal).
    pub palette: Palette,
    /// `display_ok_hosts`: `ok:` lines are shown.
    pub ok_hosts: bool,
    /// `display_skipped_hosts`: `skipping:` lines are shown.
    pub skipped_hosts: bool,
    /// `display_failed_stderr`: failures (their `[ERROR]` block and their `fatal:`
    /// or `failed:` line) go to stderr.
    pub failed_stderr: bool,
    /// `show_task_path_on_failure`: a task's failure is preceded by `task path:` (below
    /// `-vv`, which shows it for every task).
    pub task_path_on_failure: bool,
    /// `callback_result_format`.
    pub format: ResultFormat,
}

impl Display {
    /// What ansible-playbook shows by default, without colours.
    pub fn plain(verbosity: u8, diff: bool) -> Display {
        Display {
            verbosity,
            diff,
            palette: Palette::plain(),
            ok_hosts: true,
            skipped_hosts: true,
            failed_stderr: false,
            task_path_on_failure: false,
            format: ResultFormat::Json,
        }
    }

    /// As the environment (`ANSIBLE_DISPLAY_OK_HOSTS`, `ANSIBLE_DISPLAY_SKIPPED_HOSTS`,
    /// `ANSIBLE_DISPLAY_FAILED_STDERR`, `ANSIBLE_SHOW_TASK_PATH_ON_FAILURE`,
    /// `ANSIBLE_CALLBACK_RESULT_FORMAT`, the colour settings) and ansible.cfg say.
    pub fn from_settings(verbosity: u8, diff: bool) -> Result<Display, String> {
        let format = match crate::config::settings()
            .get("ANSIBLE_CALLBACK_RESULT_FORMAT")
            .unwrap_or_default()
            .trim()
        {
            "" | "json" => ResultFormat::Json,
            "yaml" => ResultFormat::Yaml,
            other => {
                return Err(format!(
                    "Invalid value '{other}' for callback_result_format (ANSIBLE_CALLBACK_RESULT_FORMAT): choose json or yaml"
                ));
            }
        };
        Ok(Display {
            palette: Palette::for_stdout(),
            ok_hosts: crate::config::settings().flag("ANSIBLE_DISPLAY_OK_HOSTS", true),
            skipped_hosts: crate::config::settings().flag("ANSIBLE_DISPLAY_SKIPPED_HOSTS", true),
            failed_stderr: crate::config::settings().flag("ANSIBLE_DISPLAY_FAILED_STDERR", false),
            task_path_on_failure: crate::config::settings()
                .flag("ANSIBLE_SHOW_TASK_PATH_ON_FAILURE", false),
            format,
            ..Display::plain(verbosity, diff)
        })
    }
}

/// Prints a run for people.
pub struct DefaultCallback {
    display: Display,
    out: std::sync::Arc<Mutex<Box<dyn Write + Send>>>,
    /// The live progress line, on a terminal.
    progress: Option<std::sync::Arc<super::progress::Progress>>,
    /// Errors and warnings already shown: Ansible shows each text once.
    shown: Mutex<std::collections::HashSet<String>>,
    /// Where warnings go (stderr).
    err: Mutex<Box<dyn Write + Send>>,
    /// A task banner not shown yet: when some results are not displayed
    /// (`display_ok_hosts`/`display_skipped_hosts` off), a task's banner waits for
    /// its first shown line, as ansible-playbook's does.
    pending: Mutex<Option<String>>,
}

impl DefaultCallback {
    /// Prints to stdout, warnings to stderr; with a live progress line when stdout is
    /// a terminal.
    pub fn stdout(display: Display) -> Self {
        use std::io::IsTerminal;
        let mut callback = Self::new(
            Box::new(std::io::stdout()),
            Box::new(std::io::stderr()),
            display,
        );
        if std::io::stdout().is_terminal() {
            callback.progress = Some(super::progress::Progress::start(callback.out.clone()));
        }
        callback
    }

    /// Prints to any writers (`err` for warnings).
    pub fn new(out: Box<dyn Write + Send>, err: Box<dyn Write + Send>, display: Display) -> Self {
        DefaultCallback {
            display,
            out: std::sync::Arc::new(Mutex::new(out)),
            progress: None,
            shown: Mutex::new(Default::default()),
            err: Mutex::new(err),
            pending: Mutex::new(None),
        }
    }

    /// What failed, and where, as ansible-core 2.19 says it before a result: once for
    /// the same message and place, however many hosts it happened on. A `no_log`
    /// result says only that it is hidden, and shows no source (ansible-core prints the
    /// secret there; sandball never does).
    fn show_error(&self, r: &super::Report<'_>) {
        if let Some(mut origin) = r.origin {
            // A result that did not fail carries an exception the action gave it (an
            // `until` out of retries), never the module's: `failed_when` forgave that.
            origin.module &= r.status == Status::Failed;
            // A `no_log` result's line says how the task failed, not the message
            // (ansible-core 2.19 shows the message, which may hold what no_log hides).
            let censored = r.result.contains_key("censored");
            let msg = if censored {
                Some("")
            } else {
                r.result
                    .get(crate::plugins::action::summaries::ERROR_MESSAGE)
                    .and_then(Value::as_str)
                    .or_else(|| r.result.get("msg").and_then(Value::as_str))
            };
            let how = Failure::of(r.result);
            let help = r.result.error_help.as_deref().filter(|_| !censored);
            let cause = crate::plugins::action::Cause::of(r.result)
                .filter(|_| !censored)
                .map(|cause| chain(origin.location, &cause));
            let block = error_block(&origin, how, msg, help, cause.as_deref(), !censored);
            if self.first_time(&block) {
                let block = self.paint(&block, Role::Error);
                match r.status {
                    Status::Failed | Status::Unreachable => self.emit_failure(&block),
                    _ => self.emit(&block),
                }
            }
        }
    }

    /// Whether `text` is shown for the first time (it is remembered).
    fn first_time(&self, text: &str) -> bool {
        self.shown
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(text.to_string())
    }

    fn emit_err(&self, text: &str) {
        if let Some(p) = &self.progress {
            let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
            let _ = write!(out, "{}", p.clear());
            let _ = out.flush();
        }
        let mut err = self.err.lock().unwrap_or_else(|e| e.into_inner());
        let _ = writeln!(err, "{text}");
        let _ = err.flush();
    }

    /// Where a task is written, as ansible-core's `task path:` line says it.
    fn task_path(&self, at: &crate::yaml::Location) -> String {
        let file = std::path::absolute(&at.file).unwrap_or_else(|_| at.file.clone());
        self.paint(
            &format!("task path: {}:{}", file.display(), at.line),
            Role::Debug,
        )
    }

    /// A failure's text: on stdout, or on stderr with `display_failed_stderr` (after
    /// the banner waiting to be shown, on stdout).
    fn emit_failure(&self, text: &str) {
        if !self.display.failed_stderr {
            return self.emit(text);
        }
        if let Some(banner) = self.take_pending() {
            self.emit(&banner);
        }
        self.emit_err(text);
    }

    /// The banner waiting to be shown with the task's first line, now taken.
    fn take_pending(&self) -> Option<String> {
        self.pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }

    fn emit(&self, text: &str) {
        let pending = self.take_pending();
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        // Output errors (a closed pipe) must not abort the run.
        if let Some(p) = &self.progress {
            let _ = write!(out, "{}", p.clear());
        }
        if let Some(banner) = pending {
            let _ = writeln!(out, "{banner}");
        }
        let _ = writeln!(out, "{text}");
        let _ = out.flush();
    }

    fn paint(&self, text: &str, role: Role) -> String {
        self.display.palette.paint(&printable(text), role)
    }

    /// A banner line: the text, then stars to the 80th column, after a blank line.
    pub fn banner_line(text: &str) -> String {
        // Lines are exactly WIDTH long, as Ansible draws them on an 80-column terminal.
        let stars = WIDTH.saturating_sub(text.chars().count() + 1).max(3);
        format!("\n{} {}", printable(text), "*".repeat(stars))
    }

    /// A result as it follows `=> `: JSON on the line, or YAML beneath it.
    fn rendered(&self, shown: &Map<String, Value>, pretty: bool) -> String {
        if self.display.format == ResultFormat::Yaml {
            let mut shown = shown.clone();
            // The lines' lists repeat the text: YAML output leaves them out.
            for (text, lines) in [("stdout", "stdout_lines"), ("stderr", "stderr_lines")] {
                if shown.contains_key(text) && shown.contains_key(lines) {
                    shown.insert(lines.into(), Value::String("<omitted>".into()));
                }
            }
            if let Ok(yaml) = crate::template::callback_yaml(&Value::Object(shown), 4) {
                return format!("\n{}", yaml.trim_end());
            }
        }
        dump(shown, pretty)
    }

    /// A result as ansible-core's default callback shows it, with its diff first when
    /// `with_diff` (`awx_display` shows the diff as an event of its own).
    fn show_result(&self, r: &Report<'_>, with_diff: bool) {
        if let Some(p) = &self.progress
            && r.is_final()
        {
            p.host_done(matches!(r.status, Status::Failed | Status::Unreachable));
        }
        if !r.shown()
            || (r.status == Status::Ok && !self.display.ok_hosts)
            || (r.status == Status::Skipped && !self.display.skipped_hosts)
        {
            return;
        }
        // A task delegated to another host shows where it ran: `[web1 -> db1]`, with
        // the address when that is not the name (`[web1 -> db1(10.0.0.5)]`).
        let host_label = match &r.result.delegated {
            Some(d) if d.host != r.host => {
                let other = &d.host;
                if d.address != *other {
                    format!("{} -> {other}({})", r.host, d.address)
                } else {
                    format!("{} -> {other}", r.host)
                }
            }
            _ => r.host.to_string(),
        };
        let mut shown = displayed(r.result, self.display.verbosity);
        if r.looped && r.status != Status::Unreachable {
            // Its items were shown (or skipped) one by one; an unreachable loop's
            // result is shown whole, as ansible-core shows it.
            shown.remove("results");
        }
        if sandball_pycompat::fqcn::short_name(r.action) == "debug" {
            // debug shows only what it was asked to print: its `msg`, or the variable,
            // without the loop's own keys (warnings and an exception are shown apart).
            if shown.contains_key("msg") {
                shown.retain(|k, _| k.as_str() == "msg");
            } else {
                for k in [
                    "changed",
                    "failed",
                    "skipped",
                    "invocation",
                    "skip_reason",
                    "ansible_loop_var",
                    "ansible_index_var",
                    "ansible_loop",
                ] {
                    shown.remove(k);
                }
            }
        }
        let verbose_always = r
            .result
            .get("_ansible_verbose_always")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        // An action may keep its result from the verbose output (`gather_facts`).
        let verbose_override = r.result.verbose_override;
        let pretty = verbose_always || self.display.verbosity >= 3;
        let item = r.item.map(|i| format!(" (item={i})")).unwrap_or_default();
        if with_diff {
            self.file_diff(r);
        }
        // Its warnings and deprecations come first, as ansible-core 2.19 shows them
        // (each text without the line breaks that end it), and leave the result shown.
        if let Some(Value::Array(ws)) = r.result.get("warnings") {
            for w in ws.iter().filter_map(Value::as_str) {
                let text = module_text(w.trim_end());
                // On the same line, unless either spans lines, as ansible-core 2.19.
                match r.result.warning_help.get(w) {
                    Some(help) if text.contains('\n') || help.contains('\n') => {
                        self.warning(&format!("{text}\n\n{help}"))
                    }
                    Some(help) => self.warning(&format!("{text} {help}")),
                    None => self.warning(&text),
                }
            }
        }
        for line in &r.result.deprecations_shown {
            self.deprecation(&module_text(line.trim_end()));
        }
        shown.remove("warnings");
        shown.remove("deprecations");
        // A result that carries an exception says so whatever its status (an `until`
        // out of retries that `failed_when` forgave), as ansible-core does; the
        // exception is never part of the result shown.
        if !matches!(r.status, Status::Failed | Status::Unreachable)
            && r.result
                .get("exception")
                .is_some_and(sandball_pycompat::pyops::py_truth)
        {
            self.show_error(r);
        }
        shown.remove("exception");
        let line = match r.status {
            Status::Ok | Status::Changed => {
                let (word, code) = if r.status == Status::Ok {
                    ("ok", Role::Ok)
                } else {
                    ("changed", Role::Changed)
                };
                let mut line = format!("{word}: [{host_label}]");
                if r.item.is_some() {
                    line.push_str(" =>");
                    line.push_str(&item);
                }
                if (verbose_always || self.display.verbosity >= 1) && !verbose_override {
                    line.push_str(" => ");
                    line.push_str(&self.rendered(&shown, pretty));
                }
                self.paint(&line, code)
            }
            Status::Skipped => {
                shown.remove("skipped");
                if sandball_pycompat::fqcn::short_name(r.action) == "debug" {
                    shown.remove("skip_reason");
                }
                let mut line = format!("skipping: [{host_label}]");
                if r.item.is_some() {
                    line.push_str(" =>");
                    line.push_str(&item);
                    // Ansible prints two spaces here.
                    line.push(' ');
                }
                if self.display.verbosity >= 1 && !verbose_override {
                    line.push_str(" => ");
                    line.push_str(&self.rendered(&shown, pretty));
                }
                self.paint(&line, Role::Skip)
            }
            // A loop's items said how each failed: only that it was ignored is left.
            Status::Failed if r.looped && r.ignored && !r.failed_debug_loop() => {
                self.paint("...ignoring", Role::Skip)
            }
            Status::Failed => {
                // ansible-core 2.19 says what failed, and where, before the result
                // (a loop's items said it for each).
                if !r.looped {
                    self.show_error(r);
                }
                // The status line already says it failed; the exception is shown as a
                // traceback at -vvv only, as ansible-core 2.19 shows it.
                shown.remove("failed");
                let head = if r.item.is_some() {
                    format!("failed: [{host_label}]{item} => ")
                } else {
                    if self.display.task_path_on_failure
                        && self.display.verbosity < 2
                        && let Some(origin) = &r.origin
                    {
                        self.emit(&self.task_path(origin.location));
                    }
                    format!("fatal: [{host_label}]: FAILED! => ")
                };
                let mut line = format!("{head}{}", self.rendered(&shown, pretty));
                if let Some(Value::String(exc)) = r.result.get("exception")
                    && self.display.verbosity >= 3
                {
                    line = format!("The full traceback is:\n{exc}\n{line}");
                }
                self.emit_failure(&self.paint(&line, Role::Error));
                if !r.ignored {
                    return;
                }
                self.paint("...ignoring", Role::Skip)
            }
            Status::Unreachable => {
                // ansible-core 2.19 says why, and where, before the result (a loop's
                // items said it for each).
                if !r.looped {
                    self.show_error(r);
                }
                // What the loop adds to its summary, and its items' `failed`, are left
                // out, as ansible-core's callback leaves them.
                if r.looped {
                    shown.remove("skipped");
                    if let Some(Value::Array(items)) = shown.get_mut("results") {
                        for item in items.iter_mut().filter_map(Value::as_object_mut) {
                            item.remove("failed");
                        }
                    }
                }
                self.emit_failure(&self.paint(
                    &format!(
                        "fatal: [{host_label}]: UNREACHABLE! => {}",
                        self.rendered(&shown, pretty)
                    ),
                    Role::Unreachable,
                ));
                if !r.ignored {
                    return;
                }
                self.paint("...ignoring", Role::Skip)
            }
        };
        self.emit(&line);
    }

    /// Whether the result's diff is shown: the task runs in diff mode (`-D`, or its
    /// `diff` keyword) and the result has one.
    pub(super) fn has_diff(&self, r: &Report<'_>) -> bool {
        r.origin.as_ref().map_or(self.display.diff, |o| o.diff) && r.result.contains_key("diff")
    }

    /// The diff of a changed result, as ansible-core's `v2_on_file_diff` shows it.
    pub(super) fn file_diff(&self, r: &Report<'_>) {
        if self.has_diff(r)
            && let Some(d) = r.result.get("diff")
            && r.status == Status::Changed
        {
            let text = render_diff(d);
            if !text.is_empty() {
                // Shown as Ansible's display shows text: a newline is added only
                // when it does not end with one; added, removed and `@@` lines in
                // their `[colors]`.
                let text = text.strip_suffix('\n').unwrap_or(&text);
                let painted: Vec<String> = printable(text)
                    .split('\n')
                    .map(|line| match line.chars().next() {
                        Some('+') => self.paint(line, Role::DiffAdd),
                        Some('-') => self.paint(line, Role::DiffRemove),
                        _ if line.starts_with("@@") => self.paint(line, Role::DiffLines),
                        _ => line.to_string(),
                    })
                    .collect();
                self.emit(&painted.join("\n"));
            }
        }
    }

    /// A result without its diff (shown apart by [`Self::file_diff`]).
    pub(super) fn result_without_diff(&self, r: &Report<'_>) {
        self.show_result(r, false);
    }
}

/// The result as Ansible shows it: without internal keys (at any depth), `invocation`
/// below `-vvv`, and the diff (printed on its own).
fn displayed(result: &Map<String, Value>, verbosity: u8) -> Map<String, Value> {
    let mut shown = crate::plugins::action::without_internal_keys(result);
    shown.retain(|k, _| k.as_str() != "diff" && (verbosity >= 3 || k.as_str() != "invocation"));
    shown
}

impl Drop for DefaultCallback {
    fn drop(&mut self) {
        if let Some(p) = &self.progress {
            p.stop();
        }
    }
}

impl Callback for DefaultCallback {
    fn playbook_start(&self, path: &str, plays: usize) {
        // From -vv, as ansible-playbook's default callback shows it.
        if self.display.verbosity >= 2 {
            let name = std::path::Path::new(path)
                .file_name()
                .map_or_else(|| path.to_string(), |n| n.to_string_lossy().into_owned());
            self.banner(&format!("PLAYBOOK: {name}"));
            self.emit(&format!("{plays} plays in {path}"));
        }
    }

    fn banner(&self, text: &str) {
        // A task banner still waiting for a line to show is passed over.
        self.take_pending();
        self.emit(&Self::banner_line(text));
    }

    fn play_start(&self, name: &str) {
        // Without the whitespace around it (a `|` block's last newline), as
        // ansible-core's default callback shows a play's and a task's name.
        self.banner(&format!("PLAY [{}]", name.trim()));
    }

    fn no_more_hosts(&self) {
        self.banner("NO MORE HOSTS LEFT");
    }

    fn no_hosts_matched(&self) {
        self.emit(&self.paint("skipping: no hosts matched", Role::Skip));
    }

    fn task_start(&self, name: &str, handler: bool) {
        let kind = if handler { "RUNNING HANDLER" } else { "TASK" };
        let line = Self::banner_line(&format!("{kind} [{}]", name.trim()));
        if self.display.ok_hosts && self.display.skipped_hosts {
            self.emit(&line);
        } else {
            *self.pending.lock().unwrap_or_else(|e| e.into_inner()) = Some(line);
        }
    }

    fn task_running(&self, task: &super::Running<'_>) {
        // From -vv, where the task is written, as ansible-playbook shows it.
        if self.display.verbosity >= 2 {
            self.emit(&self.task_path(task.path));
        }
        if let Some(p) = &self.progress {
            p.task(task.hosts);
        }
    }

    fn result(&self, r: &Report<'_>) {
        self.show_result(r, true);
    }

    fn retrying(&self, host: &str, task: &str, retries_left: u64) {
        self.emit(&self.paint(
            &format!("FAILED - RETRYING: [{host}]: {task} ({retries_left} retries left)."),
            Role::Error,
        ));
    }

    fn warning(&self, msg: &str) {
        // On stderr, as Ansible's; each text once per run, as Ansible shows it.
        let text = format!("[WARNING]: {msg}");
        if self.first_time(&text) {
            self.emit_err(&self.paint(&text, Role::Warn));
        }
    }

    fn error(&self, msg: &str) {
        let text = format!("[ERROR]: {msg}");
        if self.first_time(&text) {
            self.emit_err(&self.paint(&text, Role::Error));
        }
    }

    fn verbose(&self, level: u8, host: Option<&str>, msg: &str) {
        if self.display.verbosity < level {
            return;
        }
        let text = match host {
            Some(h) => format!("<{h}> {msg}"),
            None => msg.to_string(),
        };
        self.emit(&self.paint(&text, Role::Verbose));
    }

    fn async_poll(&self, host: &str, jid: &str) {
        self.emit(&self.paint(
            &format!("ASYNC POLL on {host}: jid={jid} started=True finished=False"),
            Role::Skip,
        ));
    }

    fn async_done(&self, host: &str, jid: &str, ok: bool) {
        let (word, code) = if ok {
            ("OK", Role::Ok)
        } else {
            ("FAILED", Role::Error)
        };
        self.emit(&self.paint(&format!("ASYNC {word} on {host}: jid={jid}"), code));
    }

    fn deprecation(&self, msg: &str) {
        // Shown unless `deprecation_warnings` is off, after a word on how to turn
        // them off, as ansible-core shows them.
        if !crate::config::settings().flag("ANSIBLE_DEPRECATION_WARNINGS", true) {
            return;
        }
        self.warning(
            "Deprecation warnings can be disabled by setting `deprecation_warnings=False` in ansible.cfg.",
        );
        let text = format!("[DEPRECATION WARNING]: {msg}");
        if self.first_time(&text) {
            self.emit_err(&self.paint(&text, Role::Deprecate));
        }
    }

    fn recap(&self, stats: &Stats) {
        self.banner("PLAY RECAP");
        for (host, s) in stats.snapshot() {
            let field = |name: &str, n: u32, code: Role| {
                let text = format!("{name}={n:<4}");
                if n > 0 { self.paint(&text, code) } else { text }
            };
            let host_code = if s.failed > 0 || s.unreachable > 0 {
                Role::Error
            } else if s.changed > 0 {
                Role::Changed
            } else {
                Role::Ok
            };
            self.emit(&format!(
                "{} : {} {} {} {} {} {} {}",
                {
                    // Ansible pads the painted name, escapes included: the visible
                    // name is padded to 26 columns.
                    let painted = self.paint(&host, host_code);
                    let width = 26 + painted.len() - host.len();
                    format!("{painted:<width$}")
                },
                field("ok", s.ok, Role::Ok),
                field("changed", s.changed, Role::Changed),
                field("unreachable", s.unreachable, Role::Unreachable),
                field("failed", s.failed, Role::Error),
                field("skipped", s.skipped, Role::Skip),
                field("rescued", s.rescued, Role::Ok),
                field("ignored", s.ignored, Role::Warn),
            ));
        }
        self.emit("");
        // `set_stats` data, when asked for, as ansible-playbook shows it.
        let custom = stats.custom();
        let show = crate::config::settings()
            .get("ANSIBLE_SHOW_CUSTOM_STATS")
            .is_some_and(|v| {
                matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "yes" | "on")
            });
        if show && !custom.is_empty() {
            self.banner("CUSTOM STATS:");
            for (key, data) in custom {
                let name = if key == super::stats::RUN_STATS {
                    self.emit("");
                    "RUN"
                } else {
                    key.as_str()
                };
                self.emit(&format!("\t{name}: {}", one_line_json(&data)));
            }
            self.emit("");
        }
    }
}

/// JSON as Python's `json.dumps(indent=1, sort_keys=True)` with its newlines removed.
fn one_line_json(data: &Map<String, Value>) -> String {
    use serde::Serialize;
    let sorted: std::collections::BTreeMap<&String, &Value> = data.iter().collect();
    let mut out = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(b" ");
    let mut ser = serde_json::Serializer::with_formatter(&mut out, fmt);
    if sorted.serialize(&mut ser).is_err() {
        return String::new();
    }
    String::from_utf8_lossy(&out).replace('\n', "")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::Arc;

    #[derive(Clone, Default)]
    struct Buf(Arc<Mutex<Vec<u8>>>);
    impl Write for Buf {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn text(b: &Buf) -> String {
        String::from_utf8(b.0.lock().unwrap().clone()).unwrap()
    }

    #[test]
    fn lines_look_like_ansible() {
        let buf = Buf::default();
        let cb = DefaultCallback::new(
            Box::new(buf.clone()),
            Box::new(buf.clone()),
            Display::plain(0, false),
        );
        cb.play_start("demo");
        cb.task_start("ping", false);
        let res = json!({"changed": false, "ping": "pong", "_ansible_no_log": false});
        let res = res.as_object().unwrap();
        cb.result(&Report {
            host: "h1",
            action: "ping",
            status: Status::Ok,
            result: &res.clone().into(),
            item: None,
            ignored: false,
            looped: false,
            origin: None,
        });
        let fail = json!({"changed": false, "msg": "boom", "failed": true});
        cb.result(&Report {
            host: "h2",
            action: "fail",
            status: Status::Failed,
            result: &fail.as_object().unwrap().clone().into(),
            item: None,
            ignored: true,
            looped: false,
            origin: None,
        });
        let out = text(&buf);
        assert!(
            out.contains(&format!("\nPLAY [demo] {}\n", "*".repeat(68))),
            "{out}"
        );
        assert!(out.contains("\nok: [h1]\n"), "{out}");
        assert!(
            out.contains(
                "fatal: [h2]: FAILED! => {\"changed\": false, \"msg\": \"boom\"}\n...ignoring"
            ),
            "{out}"
        );
    }

    #[test]
    fn debug_results_are_pretty_and_internal_keys_hidden() {
        let buf = Buf::default();
        let cb = DefaultCallback::new(
            Box::new(buf.clone()),
            Box::new(buf.clone()),
            Display::plain(0, false),
        );
        let res = json!({"msg": "hi", "_ansible_verbose_always": true, "invocation": {}});
        cb.result(&Report {
            host: "h",
            action: "debug",
            status: Status::Ok,
            result: &res.as_object().unwrap().clone().into(),
            item: None,
            ignored: false,
            looped: false,
            origin: None,
        });
        assert_eq!(text(&buf), "ok: [h] => {\n    \"msg\": \"hi\"\n}\n");
    }

    #[test]
    fn the_playbook_and_its_plays_are_named_from_vv() {
        for (verbosity, shown) in [(1, false), (2, true)] {
            let buf = Buf::default();
            let cb = DefaultCallback::new(
                Box::new(buf.clone()),
                Box::new(buf.clone()),
                Display::plain(verbosity, false),
            );
            cb.playbook_start("sub/main.yml", 2);
            let out = text(&buf);
            assert_eq!(out.contains("\nPLAYBOOK: main.yml *"), shown, "{out}");
            assert_eq!(out.contains("\n2 plays in sub/main.yml\n"), shown, "{out}");
        }
    }

    #[test]
    fn verbose_messages_show_from_their_level() {
        for (verbosity, shown) in [(2, false), (3, true)] {
            let buf = Buf::default();
            let cb = DefaultCallback::new(
                Box::new(buf.clone()),
                Box::new(buf.clone()),
                Display::plain(verbosity, false),
            );
            cb.verbose(3, Some("h1"), "Using module file /m/ping.py");
            cb.verbose(3, None, "no host");
            let want = "<h1> Using module file /m/ping.py\nno host\n";
            assert_eq!(text(&buf) == want, shown, "{}", text(&buf));
        }
    }

    #[test]
    fn banners_show_names_without_the_whitespace_around_them() {
        let buf = Buf::default();
        let cb = DefaultCallback::new(
            Box::new(buf.clone()),
            Box::new(buf.clone()),
            Display::plain(0, false),
        );
        cb.play_start(" site\n");
        cb.task_start("\"a | b\"\n", false);
        let shown = text(&buf);
        assert!(shown.contains("PLAY [site] ***"), "{shown}");
        assert!(shown.contains("TASK [\"a | b\"] ***"), "{shown}");
    }

    #[test]
    fn recap_pads_like_ansible() {
        let buf = Buf::default();
        let cb = DefaultCallback::new(
            Box::new(buf.clone()),
            Box::new(buf.clone()),
            Display::plain(0, false),
        );
        let stats = Stats::default();
        stats.record("localhost", Status::Changed, false, true);
        cb.recap(&stats);
        assert!(text(&buf).contains(
            "localhost                  : ok=1    changed=1    unreachable=0    failed=0    skipped=0    rescued=0    ignored=0   \n"
        ));
    }
}
