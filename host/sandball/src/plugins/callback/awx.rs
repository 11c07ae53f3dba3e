//! `awx_display`: ansible-runner's event protocol (the engine of AWX and Ansible
//! Automation Platform), spoken by sandball itself since runner's Python plugin cannot
//! be loaded. Each event is written as runner's own plugin writes it: its data to
//! `$AWX_ISOLATED_DATA_DIR/job_events/<uuid>-partial.json` (through a temporary file
//! renamed into place), then on stdout a marker (`ESC[K`, the base64 of `{"uuid": …}`
//! in chunks of 78 each followed by `ESC[<n>D`, `ESC[K`), the event's text as the
//! default callback shows it, and an end marker (the same around `{}`); runner's output
//! filter turns them into `job_events/<counter>-<uuid>.json`. docs/ANSIBLE-RUNNER.md
//! says which events and fields sandball gives and which it does not yet.

use super::default::{DefaultCallback, Display, ResultFormat};
use super::{Callback, Report, Running, Status, stats};
use base64::Engine;
use serde_json::{Map, Value, json};
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// The text the inner callback writes, gathered for the event it belongs to.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Captured {
    fn take(&self) -> Vec<u8> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The run's place, which every event carries: its playbook, play and task.
#[derive(Default)]
struct Context {
    playbook: String,
    playbook_uuid: String,
    /// The host pattern of the play about to start (`play_pattern` comes first).
    pattern: String,
    play: Option<Map<String, Value>>,
    task: Option<Map<String, Value>>,
    /// The task's start on each host, for its results' `start`, `end` and `duration`.
    host_start: std::collections::HashMap<String, chrono::DateTime<chrono::Utc>>,
}

/// The `awx_display` stdout callback.
pub struct AwxDisplay {
    /// The default callback, writing into `text`.
    inner: DefaultCallback,
    text: Captured,
    /// `$AWX_ISOLATED_DATA_DIR/job_events`, where the partial event files go.
    partials: Option<PathBuf>,
    /// `$JOB_ID`, which every event then carries.
    job_id: Option<i64>,
    /// Held for a whole event, so that its text is its own.
    context: Mutex<Context>,
}

impl AwxDisplay {
    /// As ansible-runner sets it up: `AWX_ISOLATED_DATA_DIR`, `JOB_ID`, and
    /// `ORIGINAL_STDOUT_CALLBACK` for the callback whose text the events carry (`default`
    /// or `yaml`; the default one when unset).
    pub fn from_env(verbosity: u8, diff: bool) -> Result<AwxDisplay, String> {
        let format = match std::env::var("ORIGINAL_STDOUT_CALLBACK").as_deref() {
            Err(_) | Ok("" | "default" | "ansible.builtin.default") => None,
            Ok("yaml" | "ansible.builtin.yaml" | "community.general.yaml") => {
                Some(ResultFormat::Yaml)
            }
            Ok(other) => {
                return Err(format!(
                    "awx_display shows its events with the default or yaml callback, not {other} (ORIGINAL_STDOUT_CALLBACK)"
                ));
            }
        };
        let job_id = match std::env::var("JOB_ID") {
            Err(_) => None,
            Ok(id) if id.is_empty() => None,
            Ok(id) => Some(
                id.trim()
                    .parse()
                    .map_err(|_| format!("JOB_ID is not a number: {id:?}"))?,
            ),
        };
        let mut display = Display::from_settings(verbosity, diff)?;
        if let Some(format) = format {
            display.format = format;
        }
        let text = Captured::default();
        Ok(AwxDisplay {
            inner: DefaultCallback::new(Box::new(text.clone()), Box::new(text.clone()), display),
            text,
            partials: std::env::var_os("AWX_ISOLATED_DATA_DIR")
                .map(|d| PathBuf::from(d).join("job_events")),
            job_id,
            context: Mutex::new(Context {
                playbook_uuid: new_uuid(),
                ..Context::default()
            }),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Context> {
        self.context.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// One event: its partial file, then its text between the markers. `data` is the
    /// event's own data (`uuid` among it when the event has a set one).
    fn event(
        &self,
        context: &Context,
        event: &str,
        data: Map<String, Value>,
        show: impl FnOnce(&DefaultCallback),
    ) {
        show(&self.inner);
        let text = self.text.take();
        self.write_event(context, event, data, &text);
    }

    /// Writes an event whose text the inner callback has shown.
    fn write_event(
        &self,
        context: &Context,
        event: &str,
        mut data: Map<String, Value>,
        text: &[u8],
    ) {
        let uuid = match data.get("uuid").and_then(Value::as_str) {
            Some(u) => u.to_string(),
            None => new_uuid(),
        };
        data.insert("uuid".into(), Value::String(uuid.clone()));
        let mut event_data = Map::new();
        event_data.insert("playbook".into(), context.playbook.clone().into());
        event_data.insert("playbook_uuid".into(), context.playbook_uuid.clone().into());
        // The play and the task in progress, as runner's plugin keeps them: none before
        // the first play and at the recap, no task at a play's start.
        if let Some(play) = &context.play {
            event_data.extend(play.clone());
        }
        if let Some(task) = &context.task {
            event_data.extend(task.clone());
        }
        let verbosity = data.remove("verbosity");
        event_data.extend(data);
        let parent = ["task_uuid", "play_uuid", "playbook_uuid"]
            .iter()
            .filter_map(|k| event_data.get(*k).and_then(Value::as_str))
            .find(|p| *p != uuid)
            .map(str::to_string);
        let mut begin = Map::new();
        begin.insert("event".into(), event.into());
        if let Some(id) = self.job_id {
            begin.insert("job_id".into(), id.into());
        }
        begin.insert("pid".into(), std::process::id().into());
        begin.insert("uuid".into(), uuid.clone().into());
        begin.insert("created".into(), timestamp(chrono::Utc::now()).into());
        if let Some(parent) = parent {
            begin.insert("parent_uuid".into(), parent.into());
        }
        if let Some(v) = verbosity {
            begin.insert("verbosity".into(), v);
        }
        begin.insert("event_data".into(), Value::Object(event_data));
        if let Some(dir) = &self.partials {
            let file = dir.join(format!("{uuid}-partial.json"));
            if let Err(e) = write_partial(&file, &Value::Object(begin)) {
                tracing::warn!(file = %file.display(), "cannot write the event's data: {e}");
            }
        }
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(&marker(&json!({ "uuid": uuid })));
        let _ = out.write_all(text);
        let _ = out.write_all(&marker(&json!({})));
        let _ = out.flush();
    }

    /// What the inner callback shows outside any event (runner makes each of its lines
    /// a `verbose` event).
    fn plain(&self, show: impl FnOnce(&DefaultCallback)) {
        let _context = self.lock();
        show(&self.inner);
        let text = self.text.take();
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(&text);
        let _ = out.flush();
    }

    /// A display event (`warning`, `deprecated`, `error`, `verbose`): runner's plugin
    /// names it after the display method, flagged in its data. Like ansible-core's, it
    /// is one only when something is shown (a `-vvv` message below `-vvv` is not).
    fn display(&self, kind: &str, extra: Map<String, Value>, show: impl FnOnce(&DefaultCallback)) {
        let context = self.lock();
        show(&self.inner);
        let text = self.text.take();
        if text.is_empty() {
            return;
        }
        let mut data = extra;
        data.insert(kind.into(), Value::Bool(true));
        self.write_event(&context, kind, data, &text);
    }
}

/// A version 4 UUID, as Python's `uuid.uuid4()` writes it.
fn new_uuid() -> String {
    let mut b: [u8; 16] = rand::random();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h = hex::encode(b);
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )
}

/// A time as Python's `datetime.isoformat()` writes an aware UTC one.
fn timestamp(t: chrono::DateTime<chrono::Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%S%.6f+00:00").to_string()
}

/// The marker runner's output filter looks for around `data`.
fn marker(data: &Value) -> Vec<u8> {
    let b64 = base64::engine::general_purpose::STANDARD.encode(data.to_string());
    let mut out = b"\x1b[K".to_vec();
    for chunk in b64.as_bytes().chunks(78) {
        out.extend_from_slice(chunk);
        out.extend_from_slice(format!("\x1b[{}D", chunk.len()).as_bytes());
    }
    out.extend_from_slice(b"\x1b[K");
    out
}

/// An event's data for runner to pick up, readable by its user alone (0600), in a
/// directory only it may enter (0700), as runner's plugin makes them.
fn write_partial(file: &std::path::Path, data: &Value) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    if let Some(dir) = file.parent().filter(|d| !d.exists()) {
        std::fs::DirBuilder::new().mode(0o700).create(dir)?;
    }
    let temp = file.with_extension("json.tmp");
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&temp)?;
    f.write_all(data.to_string().as_bytes())?;
    f.flush()?;
    drop(f);
    std::fs::rename(&temp, file)
}

/// A result as an event carries it: a `no_log` one, or item, only says it is hidden
/// (`censored`, which the executor's masking put there).
fn event_res(result: &Map<String, Value>) -> Value {
    if let Some(censored) = result.get("censored") {
        return json!({ "censored": censored });
    }
    let mut res = result.clone();
    if let Some(Value::Array(items)) = res.get_mut("results") {
        for item in items.iter_mut() {
            if let Some(censored) = item.get("censored").cloned() {
                *item = json!({ "censored": censored });
            }
        }
    }
    Value::Object(res)
}

impl Callback for AwxDisplay {
    fn playbook_start(&self, path: &str, plays: usize) {
        let mut context = self.lock();
        context.playbook = path.to_string();
        context.play = None;
        context.task = None;
        let data = [("uuid".to_string(), context.playbook_uuid.clone().into())];
        self.event(
            &context,
            "playbook_on_start",
            data.into_iter().collect(),
            |c| c.playbook_start(path, plays),
        );
    }

    fn play_pattern(&self, pattern: &str) {
        self.lock().pattern = pattern.to_string();
    }

    fn play_start(&self, name: &str) {
        let mut context = self.lock();
        let uuid = new_uuid();
        let pattern = std::mem::take(&mut context.pattern);
        let mut play = Map::new();
        play.insert("play".into(), name.into());
        play.insert("play_uuid".into(), uuid.clone().into());
        play.insert("play_pattern".into(), pattern.clone().into());
        context.play = Some(play);
        context.task = None;
        let mut data = Map::new();
        data.insert("name".into(), name.into());
        data.insert("pattern".into(), pattern.into());
        data.insert("uuid".into(), uuid.into());
        self.event(&context, "playbook_on_play_start", data, |c| {
            c.play_start(name);
        });
    }

    fn play_location(&self, at: &crate::yaml::Location) {
        self.plain(|c| c.play_location(at));
    }

    fn task_start(&self, name: &str, handler: bool) {
        let mut context = self.lock();
        let uuid = new_uuid();
        let mut task = Map::new();
        task.insert("task".into(), name.into());
        task.insert("task_uuid".into(), uuid.clone().into());
        task.insert("task_action".into(), "".into());
        task.insert("task_args".into(), "".into());
        task.insert("task_path".into(), "".into());
        context.task = Some(task);
        context.host_start.clear();
        let mut data = Map::new();
        data.insert("name".into(), name.into());
        data.insert("is_conditional".into(), handler.into());
        data.insert("uuid".into(), uuid.into());
        self.event(&context, "playbook_on_task_start", data, |c| {
            c.task_start(name, handler);
        });
    }

    fn task_running(&self, task: &Running<'_>) {
        {
            let mut context = self.lock();
            if let Some(t) = context.task.as_mut() {
                t.insert("task_action".into(), task.action.into());
                let path = crate::local_files::normalized(
                    &std::env::current_dir()
                        .map(|d| d.join(&task.path.file))
                        .unwrap_or_else(|_| task.path.file.clone()),
                );
                t.insert(
                    "task_path".into(),
                    format!("{}:{}", path.display(), task.path.line).into(),
                );
            }
        }
        self.plain(|c| c.task_running(task));
    }

    fn host_start(&self, host: &str) {
        let mut context = self.lock();
        context
            .host_start
            .insert(host.to_string(), chrono::Utc::now());
        let mut data = Map::new();
        data.insert("host".into(), host.into());
        self.event(&context, "runner_on_start", data, |_| {});
    }

    fn notify(&self, handler: &str, host: &str) {
        let context = self.lock();
        let mut data = Map::new();
        data.insert("host".into(), host.into());
        data.insert("handler".into(), handler.into());
        self.event(&context, "playbook_on_notify", data, |_| {});
    }

    fn no_more_hosts(&self) {
        let context = self.lock();
        self.event(
            &context,
            "playbook_on_no_hosts_remaining",
            Map::new(),
            |c| {
                c.no_more_hosts();
            },
        );
    }

    fn no_hosts_matched(&self) {
        let context = self.lock();
        self.event(&context, "playbook_on_no_hosts_matched", Map::new(), |c| {
            c.no_hosts_matched();
        });
    }

    fn result(&self, report: &Report<'_>) {
        let context = self.lock();
        let item = report.item.is_some();
        let event = match (report.status, item) {
            (Status::Ok | Status::Changed, false) => "runner_on_ok",
            (Status::Ok | Status::Changed, true) => "runner_item_on_ok",
            (Status::Failed, false) => "runner_on_failed",
            (Status::Failed | Status::Unreachable, true) => "runner_item_on_failed",
            (Status::Skipped, false) => "runner_on_skipped",
            (Status::Skipped, true) => "runner_item_on_skipped",
            (Status::Unreachable, false) => "runner_on_unreachable",
        };
        let mut data = Map::new();
        data.insert("host".into(), report.host.into());
        if !item {
            data.insert("remote_addr".into(), report.host.into());
        }
        if event != "runner_on_skipped" {
            data.insert("res".into(), event_res(&report.result.shown()));
        }
        if !item {
            let start = context.host_start.get(report.host).copied();
            let end = chrono::Utc::now();
            data.insert("start".into(), start.map(timestamp).into());
            data.insert("end".into(), start.map(|_| timestamp(end)).into());
            data.insert(
                "duration".into(),
                start
                    .map(|s| (end - s).num_microseconds().unwrap_or_default() as f64 / 1e6)
                    .into(),
            );
            if event == "runner_on_failed" {
                data.insert("ignore_errors".into(), report.ignored.into());
            }
            if event != "runner_on_unreachable" {
                data.insert("event_loop".into(), Value::Null);
            }
        }
        // A result with a diff in diff mode: the diff first, an event of its own, as
        // ansible-core's `v2_on_file_diff` (text only when changed).
        let file_diff = event == "runner_on_ok" && self.inner.has_diff(report);
        if file_diff {
            let mut diff = Map::new();
            diff.insert("host".into(), report.host.into());
            diff.insert(
                "diff".into(),
                report.result.get("diff").cloned().unwrap_or_default(),
            );
            self.event(&context, "runner_on_file_diff", diff, |c| {
                c.file_diff(report)
            });
        }
        self.event(&context, event, data, |c| {
            if file_diff {
                c.result_without_diff(report);
            } else {
                c.result(report);
            }
        });
    }

    fn retrying(&self, host: &str, task: &str, retries_left: u64) {
        let context = self.lock();
        let mut data = Map::new();
        data.insert("host".into(), host.into());
        data.insert("res".into(), json!({ "retries_left": retries_left }));
        self.event(&context, "runner_retry", data, |c| {
            c.retrying(host, task, retries_left);
        });
    }

    fn warning(&self, msg: &str) {
        self.display("warning", Map::new(), |c| c.warning(msg));
    }

    fn error(&self, msg: &str) {
        self.display("error", Map::new(), |c| c.error(msg));
    }

    fn banner(&self, text: &str) {
        self.plain(|c| c.banner(text));
    }

    fn verbose(&self, level: u8, host: Option<&str>, msg: &str) {
        let mut data = Map::new();
        data.insert("verbosity".into(), (level + 1).into());
        if let Some(h) = host {
            data.insert("remote_addr".into(), h.into());
        }
        self.display("verbose", data, |c| c.verbose(level, host, msg));
    }

    fn async_poll(&self, host: &str, jid: &str) {
        let context = self.lock();
        let mut data = Map::new();
        data.insert("host".into(), host.into());
        data.insert("jid".into(), jid.into());
        self.event(&context, "runner_on_async_poll", data, |c| {
            c.async_poll(host, jid);
        });
    }

    fn async_done(&self, host: &str, jid: &str, ok: bool) {
        let context = self.lock();
        let mut data = Map::new();
        data.insert("host".into(), host.into());
        data.insert("jid".into(), jid.into());
        let event = if ok {
            "runner_on_async_ok"
        } else {
            "runner_on_async_failed"
        };
        self.event(&context, event, data, |c| c.async_done(host, jid, ok));
    }

    fn deprecation(&self, msg: &str) {
        self.display("deprecated", Map::new(), |c| c.deprecation(msg));
    }

    fn recap(&self, stats: &stats::Stats) {
        let mut context = self.lock();
        context.play = None;
        context.task = None;
        let mut counts: [(&str, Map<String, Value>); 8] = [
            ("changed", Map::new()),
            ("dark", Map::new()),
            ("failures", Map::new()),
            ("ignored", Map::new()),
            ("ok", Map::new()),
            ("processed", Map::new()),
            ("rescued", Map::new()),
            ("skipped", Map::new()),
        ];
        for (host, s) in stats.snapshot() {
            let values = [
                s.changed,
                s.unreachable,
                s.failed,
                s.ignored,
                s.ok,
                1,
                s.rescued,
                s.skipped,
            ];
            for ((_, map), n) in counts.iter_mut().zip(values) {
                if n > 0 {
                    map.insert(host.clone(), n.into());
                }
            }
        }
        let mut data: Map<String, Value> = counts
            .into_iter()
            .map(|(k, m)| (k.to_string(), Value::Object(m)))
            .collect();
        let run = stats
            .custom()
            .into_iter()
            .find(|(k, _)| k == stats::RUN_STATS)
            .map(|(_, v)| v)
            .unwrap_or_default();
        data.insert("artifact_data".into(), Value::Object(run));
        self.event(&context, "playbook_on_stats", data, |c| c.recap(stats));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// runner's `OutputEventFilter.EVENT_DATA_RE`, and its decoding of a match.
    fn decoded(stream: &str) -> Vec<Value> {
        let re = regex::Regex::new(r"\x1b\[K((?:[A-Za-z0-9+/=]+\x1b\[\d+D)+)\x1b\[K").unwrap();
        let steps = regex::Regex::new(r"\x1b\[\d+D").unwrap();
        re.captures_iter(stream)
            .map(|c| {
                let b64 = steps.replace_all(&c[1], "");
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(b64.as_bytes())
                    .unwrap();
                serde_json::from_slice(&bytes).unwrap()
            })
            .collect()
    }

    #[test]
    fn markers_are_what_runners_filter_reads_back() {
        let uuid = new_uuid();
        let long = json!({ "uuid": uuid, "padding": "x".repeat(200) });
        let stream = [marker(&long), b"text\n".to_vec(), marker(&json!({}))].concat();
        let stream = String::from_utf8(stream).unwrap();
        assert_eq!(decoded(&stream), [long, json!({})]);
        // Chunks of 78 characters, each followed by the step back over it.
        assert!(stream.contains("\x1b[78D"), "{stream:?}");
    }

    #[test]
    fn uuids_are_version_4_in_pythons_form() {
        let u = new_uuid();
        let re = regex::Regex::new(
            "^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$",
        )
        .unwrap();
        assert!(re.is_match(&u), "{u}");
        assert_ne!(u, new_uuid());
    }

    #[test]
    fn hidden_results_and_items_say_only_that() {
        let hidden = json!({"censored": "hidden", "changed": true});
        assert_eq!(
            event_res(hidden.as_object().unwrap()),
            json!({ "censored": "hidden" })
        );
        let looped =
            json!({"changed": false, "results": [{"censored": "x", "item": 0}, {"item": 1}]});
        assert_eq!(
            event_res(looped.as_object().unwrap())["results"],
            json!([{ "censored": "x" }, {"item": 1}])
        );
    }
}
