//! The `json` stdout callback (`ansible.posix.json`): nothing while the run goes, then
//! one JSON document: each play with its tasks, each task with every host's whole
//! result (its `action` added), start and end times, the recap's counters per host and
//! the `set_stats` data when `show_custom_stats` is on.

use super::stats::{RUN_STATS, Stats};
use super::{Callback, Report, sorted_keys};
use serde_json::{Map, Value, json};
use std::sync::Mutex;

/// The current time as the json callback writes it (UTC, ISO 8601, `Z`).
fn now() -> String {
    chrono::Utc::now()
        .format("%Y-%m-%dT%H:%M:%S%.6fZ")
        .to_string()
}

#[derive(Default)]
struct Document {
    plays: Vec<Map<String, Value>>,
    /// Plays and tasks so far: the ids count them.
    count: u64,
}

/// A UUID-shaped id, as Ansible gives plays and tasks: random for the run, then a
/// count.
fn id(count: u64) -> String {
    static RUN: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    let run = *RUN.get_or_init(rand::random::<u64>);
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{count:012x}",
        run >> 32,
        (run >> 16) & 0xffff,
        run & 0xffff,
        count >> 48
    )
}

/// Gathers the run, prints it at the end.
#[derive(Default)]
pub struct JsonCallback {
    doc: Mutex<Document>,
}

impl Document {
    /// The play running (one is made when a task comes before any play).
    fn play(&mut self) -> &mut Map<String, Value> {
        if self.plays.is_empty() {
            self.start_play("");
        }
        let n = self.plays.len();
        &mut self.plays[n - 1]
    }

    fn start_play(&mut self, name: &str) {
        self.count += 1;
        let id = id(self.count);
        let mut play = Map::new();
        play.insert(
            "play".into(),
            json!({"name": name, "id": id, "duration": {"start": now()}}),
        );
        play.insert("tasks".into(), json!([]));
        self.plays.push(play);
    }
}

impl Callback for JsonCallback {
    fn warning(&self, msg: &str) {
        // Beside the document, never in it, as Ansible's warnings go.
        eprintln!("[WARNING]: {msg}");
    }

    fn error(&self, msg: &str) {
        eprintln!("[ERROR]: {msg}");
    }

    fn deprecation(&self, msg: &str) {
        eprintln!("[DEPRECATION WARNING]: {msg}");
    }

    fn play_start(&self, name: &str) {
        self.doc
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .start_play(name);
    }

    fn play_location(&self, at: &crate::yaml::Location) {
        let mut doc = self.doc.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(play) = doc.play().get_mut("play") {
            play["path"] = Value::String(format!("{}:{}", at.file.display(), at.line));
        }
    }

    fn task_start(&self, name: &str, _handler: bool) {
        let mut doc = self.doc.lock().unwrap_or_else(|e| e.into_inner());
        doc.count += 1;
        let id = id(doc.count);
        if let Some(Value::Array(tasks)) = doc.play().get_mut("tasks") {
            tasks.push(json!({
                "task": {"name": name, "id": id, "duration": {"start": now()}},
                "hosts": {},
            }));
        }
    }

    fn result(&self, r: &Report<'_>) {
        if !r.is_final() {
            return;
        }
        let mut result = r.result.shown();
        result.insert("action".into(), Value::String(r.action.to_string()));
        let end = now();
        let mut doc = self.doc.lock().unwrap_or_else(|e| e.into_inner());
        let play = doc.play();
        if let Some(d) = play.get_mut("play").and_then(|p| p.get_mut("duration")) {
            d["end"] = Value::String(end.clone());
        }
        let Some(Value::Array(tasks)) = play.get_mut("tasks") else {
            return;
        };
        if tasks.is_empty() {
            tasks
                .push(json!({"task": {"name": r.action, "duration": {"start": end}}, "hosts": {}}));
        }
        let Some(task) = tasks.last_mut() else { return };
        task["hosts"][r.host] = Value::Object(result);
        task["task"]["duration"]["end"] = Value::String(end);
        if let Some(origin) = &r.origin {
            let at = origin.location;
            task["task"]["path"] = Value::String(format!("{}:{}", at.file.display(), at.line));
        }
    }

    fn recap(&self, stats: &Stats) {
        let doc = self.doc.lock().unwrap_or_else(|e| e.into_inner());
        let counters = stats.per_host_json("failures");
        let mut custom = Map::new();
        let mut global = Map::new();
        if crate::config::settings().flag("ANSIBLE_SHOW_CUSTOM_STATS", false) {
            for (key, data) in stats.custom() {
                if key == RUN_STATS {
                    global = data;
                } else {
                    custom.insert(key, Value::Object(data));
                }
            }
        }
        let out = json!({
            "plays": doc.plays,
            "stats": counters,
            "custom_stats": custom,
            "global_custom_stats": global,
        });
        println!("{}", super::text::pretty_json(&sorted_keys(&out)));
    }
}
