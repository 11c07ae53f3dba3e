//! The audit log (`sandball playbook --audit-log FILE`): one JSON line per module run
//! — time, host, task, module and its sha256, the grant, the denials, the result
//! status. Argument values marked `no_log` (by the module's spec, or all of them
//! when the task says `no_log: true`) never appear: where a grant holds one, it is
//! masked. Legacy modules are logged too, with `"sandboxed": false` and no grant: they
//! run with the full rights of the connection (or become) user.

use sandball_wire::capability::Grant;
use sandball_wire::manifest::Manifest;
use serde_json::{Map, Value, json};
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::plugins::action::no_log::{mask, secrets};

/// An open audit log.
#[derive(Debug)]
pub struct AuditLog {
    file: Mutex<std::fs::File>,
}

/// One module run, as the log records it.
pub struct Entry<'a> {
    /// The host.
    pub host: &'a str,
    /// The task's name (or action).
    pub task: &'a str,
    /// The module.
    pub module: &'a str,
    /// Its sha256 (of the component, or of the legacy module's file).
    pub sha256: &'a str,
    /// Its manifest (which arguments are `no_log`); legacy modules have none.
    pub manifest: Option<&'a Manifest>,
    /// The task's templated arguments (only used to find secrets to mask).
    pub args: &'a Map<String, Value>,
    /// Whether the task is `no_log`.
    pub no_log: bool,
    /// The grant it ran with; `None` for a legacy module, which runs unsandboxed.
    pub grant: Option<&'a Grant>,
    /// The module's result.
    pub result: &'a Map<String, Value>,
}

impl AuditLog {
    /// Opens `path` for appending (created if missing).
    pub fn open(path: &Path) -> std::io::Result<AuditLog> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(AuditLog {
            file: Mutex::new(file),
        })
    }

    /// Appends one line for `e`.
    pub fn record(&self, e: &Entry<'_>) -> std::io::Result<()> {
        // Nothing the vault decrypted is written down.
        let mut line =
            crate::vault::mask(&serde_json::to_string(&entry_json(e, SystemTime::now()))?)
                .into_owned();
        line.push('\n');
        // One write per line, under the lock: lines from parallel hosts never mix.
        let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        file.write_all(line.as_bytes())
    }
}

fn entry_json(e: &Entry<'_>, now: SystemTime) -> Value {
    let secrets = secrets(e.manifest, e.args, e.no_log);
    let mut grant = e
        .grant
        .and_then(|g| serde_json::to_value(g).ok())
        .unwrap_or(Value::Null);
    mask(&mut grant, &secrets);
    let mut denials = e.result.get("denials").cloned().unwrap_or(json!([]));
    mask(&mut denials, &secrets);
    let status = crate::plugins::callback::Status::of(e.result);
    json!({
        "time": utc_text(now),
        "host": e.host,
        "task": e.task,
        "module": e.module,
        "kind": if e.grant.is_some() { "component" } else { "legacy" },
        "sha256": e.sha256,
        "sandboxed": e.grant.is_some(),
        "grant": grant,
        "denials": denials,
        "status": format!("{status:?}").to_lowercase(),
    })
}

/// `2026-11-21T19:51:25.123Z`.
fn utc_text(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_millis()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use sandball_wire::capability::{Access, FsGrant, FsScope};
    use std::time::Duration;

    #[test]
    fn times_are_utc_rfc3339() {
        assert_eq!(utc_text(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let t = UNIX_EPOCH + Duration::from_millis(1_795_809_085_123);
        assert_eq!(utc_text(t), "2026-11-27T19:51:25.123Z");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(utc_text(leap), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn no_log_values_never_reach_the_line() {
        let manifest: Manifest = serde_json::from_value(json!({
            "name": "m",
            "argument_spec": {"path": {"type": "path"}, "token": {"no_log": true, "aliases": ["secret"]}}
        }))
        .unwrap();
        let args: Map<String, Value> = serde_json::from_value(json!({
            "path": "/srv/hunter2/file", "secret": "hunter2"
        }))
        .unwrap();
        let grant = Grant {
            fs: vec![FsGrant {
                path: "/srv/hunter2/file".into(),
                ops: Access::Read.into(),
                scope: FsScope::Entry,
                create_parents: false,
                create_parents_if: None,
                fallback: None,
            }],
            ..Grant::default()
        };
        let result: Map<String, Value> = serde_json::from_value(json!({
            "failed": true,
            "denials": [{"capability": "fs read /srv/hunter2/x", "reason": "no"}]
        }))
        .unwrap();
        let e = Entry {
            host: "web1",
            task: "t",
            module: "m",
            sha256: "abc",
            manifest: Some(&manifest),
            args: &args,
            no_log: false,
            grant: Some(&grant),
            result: &result,
        };
        let line = serde_json::to_string(&entry_json(&e, UNIX_EPOCH)).unwrap();
        assert!(!line.contains("hunter2"), "{line}");
        assert!(line.contains("/srv/********/file"), "{line}");
        assert!(line.contains(r#""status":"failed""#), "{line}");
        // A no_log task masks every argument value.
        let e = Entry { no_log: true, ..e };
        let line = serde_json::to_string(&entry_json(&e, UNIX_EPOCH)).unwrap();
        assert!(line.contains(r#""path":"********""#), "{line}");
    }

    #[test]
    fn legacy_runs_are_logged_as_unsandboxed() {
        let args: Map<String, Value> =
            serde_json::from_value(json!({"password": "hunter2"})).unwrap();
        let result: Map<String, Value> = serde_json::from_value(json!({"changed": true})).unwrap();
        let e = Entry {
            host: "web1",
            task: "add user",
            module: "user",
            sha256: "def",
            manifest: None,
            args: &args,
            no_log: true,
            grant: None,
            result: &result,
        };
        let line = entry_json(&e, UNIX_EPOCH);
        assert_eq!(line["kind"], "legacy");
        assert_eq!(line["sandboxed"], false);
        assert_eq!(line["grant"], Value::Null);
        assert_eq!(line["status"], "changed");
        assert!(!line.to_string().contains("hunter2"), "{line}");
    }
}
