//! The `script` plugin: an executable source (with a `#!` line) run with `--list`. Its
//! JSON maps group names to `{hosts, vars, children}` or to a plain list of hosts; host
//! variables come from `_meta.hostvars` when the script gives that key, else from running
//! it with `--host NAME` for each host. A script that fails, runs past its time limit
//! (`SANDBALL_INVENTORY_SCRIPT_TIMEOUT`, seconds, default 60) or prints anything but a JSON
//! object is an error that says so and quotes its stderr; what one that worked wrote to
//! stderr is shown as an error (`ANSIBLE_INVENTORY_PLUGIN_SCRIPT_STDERR`, ansible-core's
//! `always_show_stderr`, on by default). Results may be cached
//! ([`super::cache`]).

use super::data::InventoryData;
use super::error::InventoryError;
use super::plugin::{InventoryPlugin, ParseContext, readable_file};
use serde_json::{Map, Value};
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Executable inventory scripts.
pub struct ScriptPlugin;

impl InventoryPlugin for ScriptPlugin {
    fn name(&self) -> &'static str {
        "script"
    }

    fn verify_file(&self, source: &str) -> bool {
        if !readable_file(source) {
            return false;
        }
        let executable =
            std::fs::metadata(source).is_ok_and(|m| m.permissions().mode() & 0o111 != 0);
        let mut start = [0u8; 2];
        let shebang = std::fs::File::open(source)
            .and_then(|mut f| f.read_exact(&mut start))
            .is_ok()
            && &start == b"#!";
        executable && shebang
    }

    fn parse(
        &self,
        source: &str,
        data: &mut InventoryData,
        context: &ParseContext,
    ) -> Result<(), InventoryError> {
        let cache = &context.options.cache;
        let cached = if context.options.flush_cache {
            None
        } else {
            cache.get(self.name(), source)
        };
        let results = match cached {
            Some(results) => results,
            None => {
                let (results, stderr) = run_script(source)?;
                cache.put(self.name(), source, &results)?;
                // What a script that worked wrote to stderr is shown as an error
                // (ansible-core's `always_show_stderr`, on unless turned off).
                if !stderr.is_empty()
                    && crate::config::settings()
                        .flag("ANSIBLE_INVENTORY_PLUGIN_SCRIPT_STDERR", true)
                {
                    data.error(stderr.trim_end_matches('\n'));
                }
                results
            }
        };
        populate(source, &results, data)
    }
}

/// Runs the script with `--list`, and with `--host` for every host when `_meta.hostvars`
/// is missing; returns `{"list": …, "hosts": {name: vars}}` (the cached form) and what
/// `--list` wrote to stderr.
fn run_script(source: &str) -> Result<(Value, String), InventoryError> {
    let (list, stderr) = run_json(source, &["--list"])?;
    let Value::Object(groups) = &list else {
        return Err(InventoryError::parse(
            source,
            None,
            format!(
                "failed to parse executable inventory script results: expected a JSON object, got {}",
                json_type(&list)
            ),
        ));
    };
    let mut hosts = Map::new();
    if !has_meta_hostvars(source, groups)? {
        for (name, group) in groups {
            for host in group_hosts(name, group) {
                if !hosts.contains_key(&host) {
                    let (vars, _) = run_json(source, &["--host", &host])?;
                    hosts.insert(host, vars);
                }
            }
        }
    }
    let mut results = Map::new();
    results.insert("list".into(), list);
    results.insert("hosts".into(), Value::Object(hosts));
    Ok((Value::Object(results), stderr))
}

/// Whether the `--list` result carries `_meta.hostvars` (then no `--host` calls are made).
/// As in Ansible, a `_meta` that is not a mapping, a `_meta` without a `hostvars` mapping
/// and a `_meta.profile` that is not an inventory profile are errors.
fn has_meta_hostvars(source: &str, groups: &Map<String, Value>) -> Result<bool, InventoryError> {
    let fail = |message: String| Err(InventoryError::parse(source, None, message));
    let Some(meta) = groups.get("_meta") else {
        return Ok(false);
    };
    let Value::Object(meta) = meta else {
        return fail(format!(
            "Value contains '_meta' which is {} instead of an object",
            json_type(meta)
        ));
    };
    match meta.get("profile") {
        None => {}
        Some(Value::String(p)) if p.starts_with("inventory_") => {}
        Some(Value::String(p)) => {
            return fail(format!("Non-inventory profile '{p}' is not allowed"));
        }
        Some(other) => {
            return fail(format!(
                "Value contains '_meta.profile' which is {} instead of a string",
                json_type(other)
            ));
        }
    }
    match meta.get("hostvars") {
        Some(Value::Object(_)) => Ok(true),
        other => fail(format!(
            "Value contains '_meta.hostvars' which is {} instead of an object",
            other.map_or("missing", json_type)
        )),
    }
}

/// What a JSON value is, in words (`a string`, `a list`…), for messages that must not
/// quote it.
pub(crate) fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// The time a script may run.
fn timeout() -> Duration {
    let secs = std::env::var("SANDBALL_INVENTORY_SCRIPT_TIMEOUT")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .unwrap_or(60);
    Duration::from_secs(secs)
}

/// Runs `source ARGS` and parses what it prints as JSON; returns it with what the script
/// wrote to stderr.
fn run_json(source: &str, args: &[&str]) -> Result<(Value, String), InventoryError> {
    let fail = |message: String| InventoryError::parse(source, None, message);
    let command = format!("{source} {}", args.join(" "));
    let spawn = || {
        Command::new(source)
            .envs(crate::config::settings().from_file())
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
    };
    // A script written a moment ago can be "busy" while a process forked elsewhere
    // (another thread of this process) still holds the writer's descriptor: wait a
    // little for it to close.
    let mut attempt = 0;
    let mut child = loop {
        match spawn() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy && attempt < 20 => {
                attempt += 1;
                std::thread::sleep(Duration::from_millis(10));
            }
            other => break other.map_err(|e| fail(format!("problem running {command} ({e})")))?,
        }
    };
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let out = std::thread::spawn(move || read_all(stdout.as_mut()));
    let err = std::thread::spawn(move || read_all(stderr.as_mut()));
    let limit = timeout();
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if start.elapsed() < limit => std::thread::sleep(Duration::from_millis(5)),
            Ok(None) | Err(_) => {
                kill_group(child.id());
                let _ = child.wait();
                break None;
            }
        }
    };
    let stdout = out.join().unwrap_or_default();
    let stderr = String::from_utf8_lossy(&err.join().unwrap_or_default()).into_owned();
    let Some(status) = status else {
        return Err(fail(format!(
            "Inventory script ({command}) did not finish within {} seconds{}",
            limit.as_secs(),
            stderr_note(&stderr)
        )));
    };
    if !status.success() {
        return Err(fail(format!(
            "Inventory script ({command}) had an execution error ({status}){}",
            stderr_note(&stderr)
        )));
    }
    if args.first() == Some(&"--host") && stdout.trim_ascii().is_empty() {
        return Ok((Value::Object(Map::new()), stderr));
    }
    match serde_json::from_slice(&stdout) {
        Ok(value) => Ok((value, stderr)),
        Err(e) => Err(fail(format!(
            "failed to parse executable inventory script results from {command}: {e}{}",
            stderr_note(&stderr)
        ))),
    }
}

/// Kills the script and everything it started (its process group), so that no child keeps
/// its output open.
fn kill_group(pid: u32) {
    if let Ok(pid) = i32::try_from(pid) {
        // SAFETY: kill(2) takes plain integers and touches no memory of ours; the group is
        // the one the script was started in (`process_group(0)` made its id the pid).
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
}

fn read_all(stream: Option<&mut impl Read>) -> Vec<u8> {
    let mut buffer = Vec::new();
    if let Some(s) = stream {
        let _ = s.read_to_end(&mut buffer);
    }
    buffer
}

fn stderr_note(stderr: &str) -> String {
    let stderr = stderr.trim();
    if stderr.is_empty() {
        String::new()
    } else {
        format!("; stderr: {stderr}")
    }
}

/// A group's body as Ansible reads it: a list is its hosts; a mapping without `hosts`,
/// `vars` or `children` is the variables of a host named like the group.
fn normalized(name: &str, group: &Value) -> Map<String, Value> {
    match group {
        Value::Object(body)
            if ["hosts", "vars", "children"]
                .iter()
                .any(|k| body.contains_key(*k)) =>
        {
            body.clone()
        }
        Value::Object(body) => {
            let mut out = Map::new();
            out.insert(
                "hosts".into(),
                Value::Array(vec![Value::String(name.into())]),
            );
            out.insert("vars".into(), Value::Object(body.clone()));
            out
        }
        other => {
            let mut out = Map::new();
            out.insert("hosts".into(), other.clone());
            out
        }
    }
}

/// The host names a group lists (for the `--host` calls).
fn group_hosts(name: &str, group: &Value) -> Vec<String> {
    if name == "_meta" {
        return Vec::new();
    }
    match normalized(name, group).get("hosts") {
        Some(Value::Array(hosts)) => hosts
            .iter()
            .filter_map(|h| h.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    }
}

/// Adds the groups, hosts and variables of a script's results to `data`.
fn populate(source: &str, results: &Value, data: &mut InventoryData) -> Result<(), InventoryError> {
    let fail = |message: String| InventoryError::parse(source, None, message);
    let (Some(Value::Object(groups)), Some(Value::Object(fetched))) =
        (results.get("list"), results.get("hosts"))
    else {
        return Err(fail(
            "cached inventory script results are damaged; use --flush-cache".into(),
        ));
    };
    let hostvars = match has_meta_hostvars(source, groups)? {
        true => groups["_meta"]["hostvars"].as_object().unwrap_or(fetched),
        false => fetched,
    };
    let mut seen = Vec::new();
    for (name, group) in groups.iter().filter(|(n, _)| *n != "_meta") {
        data.add_group(name).map_err(|e| fail(e.0))?;
        let body = normalized(name, group);
        match body.get("hosts") {
            None => {}
            Some(Value::Array(hosts)) => {
                for host in hosts {
                    let Some(host) = host.as_str() else {
                        return Err(fail(format!(
                            "You defined a group '{name}' with bad data for the host list: {host}"
                        )));
                    };
                    data.add_host(host, Some(name), None)
                        .map_err(|e| fail(e.0))?;
                    seen.push(host.to_string());
                }
            }
            Some(other) => {
                return Err(fail(format!(
                    "You defined a group '{name}' with bad data for the host list:\n {other}"
                )));
            }
        }
        match body.get("vars") {
            None => {}
            Some(Value::Object(vars)) => {
                for (k, v) in vars {
                    data.set_variable(name, k, v.clone())
                        .map_err(|e| fail(e.0))?;
                }
            }
            Some(other) => {
                return Err(fail(format!(
                    "You defined a group '{name}' with bad data for variables:\n {other}"
                )));
            }
        }
        // Ansible iterates whatever `children` holds: a list's items, a mapping's keys.
        let children: Vec<&str> = match body.get("children") {
            None => Vec::new(),
            Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).collect(),
            Some(Value::Object(map)) => map.keys().map(String::as_str).collect(),
            Some(other) => {
                return Err(fail(format!(
                    "You defined a group '{name}' with bad data for its children:\n {other}"
                )));
            }
        };
        for child in children {
            data.add_group(child).map_err(|e| fail(e.0))?;
            data.add_child(name, child).map_err(|e| fail(e.0))?;
        }
    }
    for host in seen {
        match hostvars.get(&host) {
            Some(Value::Object(vars)) => {
                for (k, v) in vars {
                    data.set_variable(&host, k, v.clone())
                        .map_err(|e| fail(e.0))?;
                }
            }
            None => {}
            Some(other) => {
                return Err(fail(format!(
                    "Invalid data from --host {host}: expected a JSON object, got {}",
                    json_type(other)
                )));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inventory::data::Notice;
    use crate::inventory::plugin::parse_alone;
    use serde_json::json;

    fn script(dir: &std::path::Path, name: &str, body: &str) -> String {
        let path = dir.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path.display().to_string()
    }

    fn parse(source: &str) -> Result<InventoryData, InventoryError> {
        let mut data = InventoryData::new();
        parse_alone(&ScriptPlugin, source, &mut data)?;
        Ok(data)
    }

    #[test]
    fn only_executables_with_a_shebang() {
        let dir = tempfile::tempdir().unwrap();
        let s = script(dir.path(), "inv.sh", "echo {}\n");
        assert!(ScriptPlugin.verify_file(&s));
        std::fs::set_permissions(&s, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(!ScriptPlugin.verify_file(&s));
        let binary = dir.path().join("bin");
        std::fs::write(&binary, "\x7fELF").unwrap();
        std::fs::set_permissions(&binary, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(!ScriptPlugin.verify_file(&binary.display().to_string()));
    }

    #[test]
    fn meta_hostvars_or_one_call_per_host() {
        let dir = tempfile::tempdir().unwrap();
        let with_meta = script(
            dir.path(),
            "meta.sh",
            r#"echo '{"web": {"hosts": ["w1"], "vars": {"v": 1}, "children": ["api"]}, "api": ["a1"], "_meta": {"hostvars": {"w1": {"x": 2}}}}'"#,
        );
        let data = parse(&with_meta).unwrap();
        let w1 = data.host_at(data.host_index("w1").unwrap());
        assert_eq!(w1.vars()["x"], json!(2));
        assert!(data.host_index("a1").is_some());
        let calls = dir.path().join("calls");
        let per_host = script(
            dir.path(),
            "host.sh",
            &format!(
                "echo \"$@\" >> {}\nif [ \"$1\" = --list ]; then echo '{{\"g\": [\"h1\", \"h2\"]}}'; else echo \"{{\\\"me\\\": \\\"$2\\\"}}\"; fi\n",
                calls.display()
            ),
        );
        let data = parse(&per_host).unwrap();
        let h2 = data.host_at(data.host_index("h2").unwrap());
        assert_eq!(h2.vars()["me"], json!("h2"));
        assert_eq!(
            std::fs::read_to_string(&calls).unwrap(),
            "--list\n--host h1\n--host h2\n"
        );
    }

    #[test]
    fn what_a_working_script_writes_to_stderr_is_an_error_shown() {
        let dir = tempfile::tempdir().unwrap();
        let noisy = script(
            dir.path(),
            "noisy.sh",
            "echo 'this is stderr' >&2\necho '{\"g\": [\"h1\"]}'\n",
        );
        let data = parse(&noisy).unwrap();
        assert!(data.host_index("h1").is_some());
        let said: Vec<_> = data.notices().cloned().collect();
        assert_eq!(said, [Notice::Error("this is stderr".into())]);
        let quiet = script(dir.path(), "quiet.sh", "echo '{\"g\": [\"h1\"]}'\n");
        assert_eq!(parse(&quiet).unwrap().notices().count(), 0);
    }

    #[test]
    fn failures_say_what_and_quote_stderr() {
        let dir = tempfile::tempdir().unwrap();
        let failing = script(dir.path(), "fail.sh", "echo boom >&2\nexit 3\n");
        let e = parse(&failing).unwrap_err().to_string();
        assert!(
            e.contains("had an execution error") && e.contains("stderr: boom"),
            "{e}"
        );
        let bad = script(dir.path(), "bad.sh", "echo not json\n");
        let e = parse(&bad).unwrap_err().to_string();
        assert!(
            e.contains("failed to parse executable inventory script results"),
            "{e}"
        );
        let list = script(dir.path(), "list.sh", "echo '[1]'\n");
        assert!(
            parse(&list)
                .unwrap_err()
                .to_string()
                .contains("expected a JSON object")
        );
    }
}
