//! The `minimal` callback, which ad-hoc runs (`sandball run`) use as `ansible` does:
//! `host | SUCCESS => {…}`, and `host | CHANGED | rc=0 >>` with the output for commands;
//! and `oneline` (`-o`): the same on one line per host.

use super::stats::Stats;
use super::text::dump;
use super::{Callback, Report, Status};
use serde_json::Value;
use std::io::Write;
use std::sync::Mutex;

/// Prints one block per host result.
pub struct MinimalCallback {
    out: Mutex<Box<dyn Write + Send>>,
    /// One line per result (`oneline`).
    oneline: bool,
    /// The run's verbosity (`-v` is 1): verbose lines up to it are shown.
    verbosity: u8,
}

impl MinimalCallback {
    /// Prints to stdout (`oneline`: one line per result), with verbose lines up to
    /// `verbosity`.
    pub fn stdout(oneline: bool, verbosity: u8) -> Self {
        MinimalCallback {
            out: Mutex::new(Box::new(std::io::stdout())),
            oneline,
            verbosity,
        }
    }

    fn emit(&self, text: &str) {
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        let _ = writeln!(out, "{}", super::printable(text));
        let _ = out.flush();
    }
}

/// The block `ansible` prints for a result; on one line for `oneline` (JSON without
/// line breaks, a command's output with its line breaks escaped).
pub fn render(
    host: &str,
    status: Status,
    result: &serde_json::Map<String, Value>,
    oneline: bool,
) -> String {
    let word = match status {
        Status::Ok => "SUCCESS",
        Status::Changed => "CHANGED",
        Status::Failed => "FAILED",
        Status::Skipped => "SKIPPED",
        Status::Unreachable => "UNREACHABLE!",
    };
    let shown: serde_json::Map<String, Value> = result
        .iter()
        .filter(|(k, _)| !k.starts_with("_ansible_") && k.as_str() != "invocation")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if status == Status::Skipped {
        return format!("{host} | SKIPPED");
    }
    if let (Some(rc), Some(stdout)) = (
        result.get("rc"),
        result.get("stdout").and_then(Value::as_str),
    ) && status != Status::Unreachable
    {
        if oneline {
            let flat = |t: &str| t.replace('\n', "\\n").replace('\r', "\\r");
            let mut text = format!("{host} | {word} | rc={rc} | (stdout) {}", flat(stdout));
            if let Some(stderr) = result.get("stderr").and_then(Value::as_str)
                && !stderr.is_empty()
            {
                text.push_str(&format!(" (stderr) {}", flat(stderr)));
            }
            return text;
        }
        let mut text = format!("{host} | {word} | rc={rc} >>\n{stdout}");
        if let Some(stderr) = result.get("stderr").and_then(Value::as_str)
            && !stderr.is_empty()
        {
            text.push('\n');
            text.push_str(stderr);
        }
        return text;
    }
    let word = if status == Status::Failed {
        "FAILED!"
    } else {
        word
    };
    let body = if oneline {
        // Python's json.dumps(indent=0) with its line breaks taken out.
        dump(&shown, true)
            .lines()
            .map(str::trim_start)
            .collect::<String>()
    } else {
        dump(&shown, true)
    };
    format!("{host} | {word} => {body}")
}

impl Callback for MinimalCallback {
    fn play_start(&self, _name: &str) {}
    fn no_more_hosts(&self) {}

    fn task_start(&self, _name: &str, _handler: bool) {}

    fn result(&self, r: &Report<'_>) {
        if !r.shown() {
            return;
        }
        self.emit(&render(r.host, r.status, r.result, self.oneline));
    }

    fn retrying(&self, host: &str, task: &str, retries_left: u64) {
        self.emit(&format!(
            "FAILED - RETRYING: [{host}]: {task} ({retries_left} retries left)."
        ));
    }

    fn warning(&self, msg: &str) {
        eprintln!("[WARNING]: {}", super::printable(msg));
    }

    fn error(&self, msg: &str) {
        eprintln!("[ERROR]: {}", super::printable(msg));
    }

    fn deprecation(&self, msg: &str) {
        eprintln!("[DEPRECATION WARNING]: {}", super::printable(msg));
    }

    /// As ansible-core's display shows them whatever the callback.
    fn verbose(&self, level: u8, host: Option<&str>, msg: &str) {
        if self.verbosity >= level {
            self.emit(&match host {
                Some(h) => format!("<{h}> {msg}"),
                None => msg.to_string(),
            });
        }
    }

    fn recap(&self, _stats: &Stats) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn blocks_look_like_ansible_ad_hoc() {
        let ping = json!({"changed": false, "ping": "pong"});
        assert_eq!(
            render("localhost", Status::Ok, ping.as_object().unwrap(), false),
            "localhost | SUCCESS => {\n    \"changed\": false,\n    \"ping\": \"pong\"\n}"
        );
        let cmd = json!({"changed": true, "rc": 0, "stdout": "hi", "stderr": ""});
        assert_eq!(
            render("h", Status::Changed, cmd.as_object().unwrap(), false),
            "h | CHANGED | rc=0 >>\nhi"
        );
        assert_eq!(
            render("localhost", Status::Ok, ping.as_object().unwrap(), true),
            "localhost | SUCCESS => {\"changed\": false,\"ping\": \"pong\"}"
        );
        let two = json!({"changed": true, "rc": 0, "stdout": "a\nb", "stderr": "e"});
        assert_eq!(
            render("h", Status::Changed, two.as_object().unwrap(), true),
            "h | CHANGED | rc=0 | (stdout) a\\nb (stderr) e"
        );
    }
}
