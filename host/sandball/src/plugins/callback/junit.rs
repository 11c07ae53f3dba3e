//! The `junit` callback (`callbacks_enabled = junit`): at the end of a run, a JUnit XML
//! report for CI, one test case per task and host, written (atomically) to
//! `JUNIT_OUTPUT_DIR` (default `~/.ansible.log`) as `PLAYBOOK-TIME.xml`, as
//! ansible-core 2.19's junit callback writes it. A failure is an `<error>` (in 2.19
//! every failed result carries an exception), one that `failed_when` decided a
//! `<failure>`; skipped tasks are `<skipped>`; `JUNIT_FAIL_ON_IGNORE` counts ignored
//! failures, `JUNIT_FAIL_ON_CHANGE` a change; `JUNIT_INCLUDE_SETUP_TASKS_IN_REPORT`
//! (default true) keeps fact gathering. A test case's name is `[host] play: task`
//! and the task's arguments as written (`msg=hi`), unless `JUNIT_HIDE_TASK_ARGUMENTS`
//! or `no_log` hides them (under the `free` strategy they are not known: not shown).

use super::stats::Stats;
use super::text::dump;
use super::{Callback, Report, Status};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Instant;

/// How a test case ended.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Passed,
    Failed,
    Error,
    Skipped,
}

struct Case {
    name: String,
    class: String,
    seconds: f64,
    outcome: Outcome,
    message: String,
    output: String,
}

struct State {
    playbook: String,
    play: String,
    task: String,
    task_started: Instant,
    started: Instant,
    cases: Vec<Case>,
}

/// Gathers test cases, writes the report at the end.
pub struct JunitCallback {
    dir: PathBuf,
    state: Mutex<State>,
}

impl JunitCallback {
    /// Writes to `JUNIT_OUTPUT_DIR`, else `~/.ansible.log`.
    pub fn from_settings() -> JunitCallback {
        let dir = crate::config::settings()
            .get_os("JUNIT_OUTPUT_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".ansible.log")
            });
        JunitCallback {
            dir,
            state: Mutex::new(State {
                playbook: "playbook".into(),
                play: String::new(),
                task: String::new(),
                task_started: Instant::now(),
                started: Instant::now(),
                cases: Vec::new(),
            }),
        }
    }
}

/// Text safe in XML attribute values and content.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\n' | '\t' | '\r' => out.push(c),
            c if (c as u32) < 0x20 => {}
            c => out.push(c),
        }
    }
    out
}

/// The report's XML.
fn render(playbook: &str, seconds: f64, cases: &[Case]) -> String {
    let count = |o: Outcome| cases.iter().filter(|c| c.outcome == o).count();
    let (failures, errors, skipped) = (
        count(Outcome::Failed),
        count(Outcome::Error),
        count(Outcome::Skipped),
    );
    let mut out = String::from("<?xml version=\"1.0\" ?>\n");
    out.push_str(&format!(
        "<testsuites disabled=\"0\" errors=\"{errors}\" failures=\"{failures}\" tests=\"{}\" time=\"{seconds}\">\n",
        cases.len()
    ));
    out.push_str(&format!(
        "\t<testsuite disabled=\"0\" errors=\"{errors}\" failures=\"{failures}\" name=\"{}\" skipped=\"{skipped}\" tests=\"{}\" time=\"{seconds}\">\n",
        escape(playbook),
        cases.len()
    ));
    for c in cases {
        out.push_str(&format!(
            "\t\t<testcase classname=\"{}\" name=\"{}\" time=\"{}\">\n",
            escape(&c.class),
            escape(&c.name),
            c.seconds
        ));
        let body = match c.outcome {
            Outcome::Passed => format!("<system-out>{}</system-out>", escape(&c.output)),
            Outcome::Skipped => format!("<skipped>{}</skipped>", escape(&c.message)),
            Outcome::Failed | Outcome::Error => {
                let tag = if c.outcome == Outcome::Failed {
                    "failure"
                } else {
                    "error"
                };
                format!(
                    "<{tag} message=\"{}\" type=\"{tag}\">{}</{tag}>",
                    escape(&c.message),
                    escape(&c.output)
                )
            }
        };
        out.push_str(&format!("\t\t\t{body}\n\t\t</testcase>\n"));
    }
    out.push_str("\t</testsuite>\n</testsuites>\n");
    out
}

impl Callback for JunitCallback {
    fn playbook_start(&self, path: &str, _plays: usize) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.playbook = std::path::Path::new(path)
            .file_stem()
            .map_or_else(|| path.to_string(), |n| n.to_string_lossy().into_owned());
    }

    fn play_start(&self, name: &str) {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).play = name.to_string();
    }

    fn task_start(&self, name: &str, _handler: bool) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.task = name.to_string();
        s.task_started = Instant::now();
    }

    fn task_running(&self, task: &super::Running<'_>) {
        // The task's arguments follow its name (`msg=hi`), unless hidden or `no_log`.
        let Some(args) = task.args else { return };
        if crate::config::settings().flag("JUNIT_HIDE_TASK_ARGUMENTS", false) || args.is_empty() {
            return;
        }
        let shown: Vec<String> = args
            .iter()
            .map(|(k, v)| {
                let text = crate::template::python_str(v).unwrap_or_else(|_| v.to_string());
                format!("{k}={text}")
            })
            .collect();
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.task = format!("{} {}", s.task, shown.join(", "));
    }

    fn result(&self, r: &Report<'_>) {
        if !r.is_final() {
            return;
        }
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if s.task.starts_with("Gathering Facts")
            && !crate::config::settings().flag("JUNIT_INCLUDE_SETUP_TASKS_IN_REPORT", true)
        {
            return;
        }
        let msg = |key: &str| {
            r.result
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
        };
        let (outcome, message) = match r.status {
            Status::Failed
                if !r.ignored || crate::config::settings().flag("JUNIT_FAIL_ON_IGNORE", false) =>
            {
                let outcome = if r.result.contains_key("failed_when_result") {
                    Outcome::Failed
                } else {
                    Outcome::Error
                };
                (outcome, msg("msg").to_string())
            }
            Status::Unreachable => (Outcome::Failed, msg("msg").to_string()),
            Status::Skipped => (Outcome::Skipped, msg("skip_reason").to_string()),
            Status::Changed if crate::config::settings().flag("JUNIT_FAIL_ON_CHANGE", false) => {
                (Outcome::Failed, "Task changed".to_string())
            }
            _ => (Outcome::Passed, String::new()),
        };
        let shown: serde_json::Map<String, Value> = r
            .result
            .iter()
            .filter(|(k, _)| !k.starts_with("_ansible_") && k.as_str() != "invocation")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let class = r.origin.map_or_else(String::new, |o| {
            format!("{}:{}", o.location.file.display(), o.location.line)
        });
        let case = Case {
            name: format!("[{}] {}: {}", r.host, s.play, s.task),
            class,
            seconds: s.task_started.elapsed().as_secs_f64(),
            outcome,
            message,
            output: dump(&shown, true),
        };
        s.cases.push(case);
    }

    fn recap(&self, _stats: &Stats) {
        let s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let xml = render(&s.playbook, s.started.elapsed().as_secs_f64(), &s.cases);
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or_default();
        let path = self.dir.join(format!("{}-{stamp}.xml", s.playbook));
        if let Err(e) = crate::local_files::write_atomically(&path, xml.as_bytes()) {
            eprintln!("[WARNING]: junit: cannot write {}: {e}", path.display());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases_become_junit_xml() {
        let cases = [
            Case {
                name: "[h] p: ok <1>".into(),
                class: "site.yml:4".into(),
                seconds: 0.5,
                outcome: Outcome::Passed,
                message: String::new(),
                output: "{\"a\": 1}".into(),
            },
            Case {
                name: "[h] p: bad".into(),
                class: "site.yml:6".into(),
                seconds: 0.25,
                outcome: Outcome::Failed,
                message: "it \"broke\"".into(),
                output: "x".into(),
            },
        ];
        let xml = render("site", 1.0, &cases);
        assert!(
            xml.contains(
                "<testsuites disabled=\"0\" errors=\"0\" failures=\"1\" tests=\"2\" time=\"1\">"
            ),
            "{xml}"
        );
        assert!(xml.contains("name=\"[h] p: ok &lt;1&gt;\""), "{xml}");
        assert!(
            xml.contains("<system-out>{&quot;a&quot;: 1}</system-out>"),
            "{xml}"
        );
        assert!(
            xml.contains("<failure message=\"it &quot;broke&quot;\" type=\"failure\">x</failure>"),
            "{xml}"
        );
    }
}
