//! Per-host counters for the PLAY RECAP, as Ansible counts them (a changed task also
//! counts as ok).

use super::Status;
use indexmap::IndexMap;
use std::sync::Mutex;

/// Counters of one host.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HostStats {
    /// Tasks that ran (changed or not).
    pub ok: u32,
    /// Tasks that changed something.
    pub changed: u32,
    /// Unreachable events.
    pub unreachable: u32,
    /// Failed tasks (not ignored).
    pub failed: u32,
    /// Skipped tasks.
    pub skipped: u32,
    /// Failures rescued by a block.
    pub rescued: u32,
    /// Failures ignored with `ignore_errors`.
    pub ignored: u32,
}

/// Counters of every host, in first-seen order, and the custom stats `set_stats` sets.
#[derive(Debug, Default)]
pub struct Stats {
    hosts: Mutex<IndexMap<String, HostStats>>,
    /// `set_stats` data: per host, and for the run (`_run`).
    custom: Mutex<std::collections::BTreeMap<String, serde_json::Map<String, serde_json::Value>>>,
}

/// The key of the run's own custom stats.
pub const RUN_STATS: &str = "_run";

/// `value` added to `old` as Ansible aggregates custom stats: numbers and text add up,
/// lists are joined, mappings merged; anything else is replaced.
fn aggregate(old: Option<&serde_json::Value>, value: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match (old, value) {
        (Some(Value::Number(a)), Value::Number(b)) => match (a.as_i64(), b.as_i64()) {
            (Some(x), Some(y)) => Value::from(x + y),
            _ => Value::from(a.as_f64().unwrap_or(0.0) + b.as_f64().unwrap_or(0.0)),
        },
        (Some(Value::String(a)), Value::String(b)) => Value::String(format!("{a}{b}")),
        (Some(Value::Array(a)), Value::Array(b)) => {
            Value::Array(a.iter().cloned().chain(b).collect())
        }
        (Some(Value::Object(a)), Value::Object(b)) => {
            let mut m = a.clone();
            m.extend(b);
            Value::Object(m)
        }
        (_, v) => v,
    }
}

impl Stats {
    /// Records `set_stats` data for a host (`per_host`) or the run, added to what is
    /// there (`aggregate`) or replacing it.
    pub fn set_custom(
        &self,
        key: &str,
        data: &serde_json::Map<String, serde_json::Value>,
        add: bool,
    ) {
        let mut custom = self.custom.lock().unwrap_or_else(|e| e.into_inner());
        let entry = custom.entry(key.to_string()).or_default();
        for (k, v) in data {
            let next = if add {
                aggregate(entry.get(k), v.clone())
            } else {
                v.clone()
            };
            entry.insert(k.clone(), next);
        }
    }

    /// The custom stats, hosts by name then the run's.
    pub fn custom(&self) -> Vec<(String, serde_json::Map<String, serde_json::Value>)> {
        let custom = self.custom.lock().unwrap_or_else(|e| e.into_inner());
        custom
            .iter()
            .filter(|(k, _)| k.as_str() != RUN_STATS)
            .chain(custom.get_key_value(RUN_STATS))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    /// Counts one task result. `changed` matters for failures that were ignored: they
    /// count as ok, and as changed when the result says so.
    pub fn record(&self, host: &str, status: Status, ignored: bool, changed: bool) {
        let mut hosts = self.hosts.lock().unwrap_or_else(|e| e.into_inner());
        let s = hosts.entry(host.to_string()).or_default();
        match status {
            Status::Ok => s.ok += 1,
            Status::Changed => {
                s.ok += 1;
                s.changed += 1
            }
            Status::Skipped => s.skipped += 1,
            // An unreachable host that `ignore_unreachable` keeps counts as Ansible
            // counts it: ok and ignored.
            Status::Unreachable if ignored => {
                s.ok += 1;
                s.ignored += 1;
            }
            Status::Unreachable => s.unreachable += 1,
            Status::Failed if ignored => {
                s.ok += 1;
                s.ignored += 1;
                if changed {
                    s.changed += 1
                }
            }
            Status::Failed => s.failed += 1,
        }
    }

    /// A failure a block's `rescue` took over: it counts as rescued, not failed.
    pub fn rescue(&self, host: &str) {
        let mut hosts = self.hosts.lock().unwrap_or_else(|e| e.into_inner());
        let s = hosts.entry(host.to_string()).or_default();
        s.failed = s.failed.saturating_sub(1);
        s.rescued += 1;
    }

    /// A copy of the counters, sorted by host name as Ansible's recap is.
    pub fn snapshot(&self) -> Vec<(String, HostStats)> {
        let hosts = self.hosts.lock().unwrap_or_else(|e| e.into_inner());
        let mut v: Vec<_> = hosts.iter().map(|(h, s)| (h.clone(), *s)).collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    }

    /// Each host's counters as JSON (`failed_key` names the failures: `failed`, or
    /// `failures` as ansible.posix.json writes them).
    pub fn per_host_json(&self, failed_key: &str) -> serde_json::Map<String, serde_json::Value> {
        self.snapshot()
            .into_iter()
            .map(|(h, s)| {
                let mut m = serde_json::Map::new();
                for (k, v) in [
                    ("ok", s.ok),
                    ("changed", s.changed),
                    ("unreachable", s.unreachable),
                    (failed_key, s.failed),
                    ("skipped", s.skipped),
                    ("rescued", s.rescued),
                    ("ignored", s.ignored),
                ] {
                    m.insert(k.to_string(), serde_json::Value::from(v));
                }
                (h, serde_json::Value::Object(m))
            })
            .collect()
    }

    /// Exit code as `ansible-playbook` gives it: 4 when a host was unreachable, 2 when a
    /// task failed, 0 otherwise.
    pub fn exit_code(&self) -> i32 {
        let snap = self.snapshot();
        if snap.iter().any(|(_, s)| s.unreachable > 0) {
            4
        } else if snap.iter().any(|(_, s)| s.failed > 0) {
            2
        } else {
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changed_counts_as_ok_and_ignored_failures_do_not_fail() {
        let s = Stats::default();
        s.record("b", Status::Changed, false, true);
        s.record("a", Status::Failed, true, true);
        let snap = s.snapshot();
        assert_eq!(snap[0].0, "a");
        assert_eq!(snap[0].1.ignored, 1);
        assert_eq!(snap[0].1.changed, 1);
        assert_eq!(snap[1].1.ok, 1);
        assert_eq!(snap[1].1.changed, 1);
        assert_eq!(s.exit_code(), 0);
        s.record("a", Status::Failed, false, false);
        assert_eq!(s.exit_code(), 2);
        s.record("c", Status::Unreachable, false, false);
        assert_eq!(s.exit_code(), 4);
    }
}
