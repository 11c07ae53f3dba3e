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

/// Counters of every host, in first-seen order.
#[derive(Debug, Default)]
pub struct Stats {
    hosts: Mutex<IndexMap<String, HostStats>>,
}

impl Stats {
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

    /// Makes sure a host appears in the recap even with no results.
    pub fn touch(&self, host: &str) {
        let mut hosts = self.hosts.lock().unwrap_or_else(|e| e.into_inner());
        hosts.entry(host.to_string()).or_default();
    }

    /// A copy of the counters, sorted by host name as Ansible's recap is.
    pub fn snapshot(&self) -> Vec<(String, HostStats)> {
        let hosts = self.hosts.lock().unwrap_or_else(|e| e.into_inner());
        let mut v: Vec<_> = hosts.iter().map(|(h, s)| (h.clone(), *s)).collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
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
