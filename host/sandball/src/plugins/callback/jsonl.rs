//! The `jsonl` callback: one JSON object per line for every event, for machines
//! (`--output jsonl`, or `ANSIBLE_STDOUT_CALLBACK=jsonl`). Results are already cleaned
//! of `no_log` secrets when they get here.

use super::stats::Stats;
use super::{Callback, Report, Status};
use serde_json::{Value, json};
use std::io::Write;
use std::sync::Mutex;

/// Writes events as JSON lines.
pub struct JsonlCallback {
    out: Mutex<Box<dyn Write + Send>>,
}

impl JsonlCallback {
    /// Writes to stdout.
    pub fn stdout() -> Self {
        Self::new(Box::new(std::io::stdout()))
    }

    /// Writes to any writer.
    pub fn new(out: Box<dyn Write + Send>) -> Self {
        JsonlCallback {
            out: Mutex::new(out),
        }
    }

    fn emit(&self, event: Value) {
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        let _ = writeln!(out, "{event}");
        let _ = out.flush();
    }
}

/// The status word used in events.
pub fn status_word(s: Status) -> &'static str {
    match s {
        Status::Ok => "ok",
        Status::Changed => "changed",
        Status::Failed => "failed",
        Status::Skipped => "skipped",
        Status::Unreachable => "unreachable",
    }
}

impl Callback for JsonlCallback {
    fn play_start(&self, name: &str) {
        self.emit(json!({"event": "play_start", "play": name}));
    }

    fn no_more_hosts(&self) {
        self.emit(json!({"event": "no_more_hosts"}));
    }

    fn task_start(&self, name: &str, handler: bool) {
        self.emit(json!({"event": "task_start", "task": name, "handler": handler}));
    }

    fn result(&self, r: &Report<'_>) {
        if !r.shown() {
            return;
        }
        let result: serde_json::Map<String, Value> = r
            .result
            .iter()
            .filter(|(k, _)| !(k.starts_with("_ansible_") || r.looped && k.as_str() == "results"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        self.emit(json!({
            "event": if r.item.is_some() { "item_result" } else { "result" },
            "host": r.host,
            "action": r.action,
            "status": status_word(r.status),
            "item": r.item,
            "ignored": r.ignored,
            "result": result,
        }));
    }

    fn retrying(&self, host: &str, task: &str, retries_left: u64) {
        self.emit(
            json!({"event": "retrying", "host": host, "task": task, "retries_left": retries_left}),
        );
    }

    fn warning(&self, msg: &str) {
        self.emit(json!({"event": "warning", "msg": msg}));
    }

    fn error(&self, msg: &str) {
        self.emit(json!({"event": "error", "msg": msg}));
    }

    fn deprecation(&self, msg: &str) {
        self.emit(json!({"event": "deprecation", "msg": msg}));
    }

    fn recap(&self, stats: &Stats) {
        let hosts = stats.per_host_json("failed");
        self.emit(json!({"event": "recap", "hosts": hosts, "exit_code": stats.exit_code()}));
    }
}
