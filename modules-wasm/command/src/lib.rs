//! The `command` and `shell` modules: run one program on the node, as Ansible's
//! `command` module does, without a shell (`command`: the command line, `_raw_params`
//! or `cmd`, is split like a shell would split it, or `argv` gives the words) or
//! through one (`shell`: `executable -c LINE`, as the module does with `_uses_shell`);
//! `creates` and `removes` skip the run for idempotence; check mode reports what would
//! run. The program runs through the sandball host interface, so only programs the
//! grant allows can run. The two binaries (`src/main.rs`, `src/bin/shell.rs`) differ
//! in their manifests only.

mod delta;
mod glob;

#[cfg(all(test, unix))]
mod module_tests;

use sandball_guest_sdk::civil::{DateTime, since_epoch};
use sandball_guest_sdk::host::FileKind;
use sandball_guest_sdk::prelude::*;
use sandball_pycompat::expand::expand_path;
use sandball_pycompat::pyops::splitlines;
use sandball_pycompat::shell::join as shlex_join;
#[cfg(test)]
use sandball_pycompat::shell::quote;
use sandball_pycompat::shlex;
use std::time::Duration;

#[cfg(test)]
sandball_guest_sdk::manifest!("../manifest.json");

/// The `command` module's body.
pub fn command(m: &mut Module) -> Result<Map<String, Value>, Fail> {
    run(m, false)
}

/// The `shell` module's body: the command line run by `executable` (the shell
/// action plugin sets it: the task's, else `ansible_shell_executable`, else `/bin/sh`).
pub fn shell(m: &mut Module) -> Result<Map<String, Value>, Fail> {
    run(m, true)
}

/// Decide whether to run, run, report.
fn run(m: &mut Module, shell: bool) -> Result<Map<String, Value>, Fail> {
    if !shell && let Some(exe) = m.get_str("executable") {
        // ansible-core's words, which playbooks and its tests look for.
        let warning = format!(
            "As of Ansible 2.4, the parameter 'executable' is no longer supported with the 'command' module. Not using '{exe}'."
        );
        m.warn(warning);
    }
    let mut r = Report::default();
    let (argv, shown) = if shell {
        match shell_words(m) {
            Some(words) => words,
            None => {
                r.rc = json!(256);
                return Err(r.fail("no command given"));
            }
        }
    } else {
        match command_words(m) {
            Ok(argv) => {
                let shown = json!(argv);
                (argv, shown)
            }
            Err(msg) => return Err(r.fail(msg)),
        }
    };
    if argv.is_empty() {
        r.rc = json!(256);
        return Err(r.fail("no command given"));
    }
    r.cmd = shown;

    let chdir = m.get_str("chdir").map(str::to_string);
    if let Some(dir) = &chdir {
        // Asked of the host, which resolves the directory as the program will see it.
        let problem = match host::stat(dir, true) {
            Ok(Some(st)) if st.kind == FileKind::Directory => None,
            Ok(Some(_)) => Some("not a directory".to_string()),
            Ok(None) => Some("no such directory".to_string()),
            Err(e) => Some(e.message),
        };
        if let Some(problem) = problem {
            return Err(r.fail(format!(
                "Unable to change directory before execution: {dir}: {problem}"
            )));
        }
    }

    let creates = m.get_str("creates");
    let removes = m.get_str("removes");
    if let Some(reason) = skip_reason(creates, removes, chdir.as_deref(), m.check_mode()) {
        r.rc = json!(0);
        r.stdout = reason.stdout;
        r.msg = reason.msg;
        return Ok(r.into_map());
    }

    r.changed = true;
    if m.check_mode() {
        r.rc = json!(0);
        r.msg = "Command would have run if not in check mode".to_string();
        if creates.is_none() && removes.is_none() {
            r.skipped = true;
            r.changed = false;
        }
        return Ok(r.into_map());
    }

    let run_argv: Vec<String> = if !shell && m.get_bool("expand_argument_vars") {
        argv.iter()
            .map(|a| expand_path(a, &host::variable))
            .collect()
    } else {
        argv.clone()
    };
    let stdin = m.get_str("stdin").filter(|s| !s.is_empty()).map(|s| {
        let mut bytes = s.as_bytes().to_vec();
        if m.get_bool("stdin_add_newline") {
            bytes.push(b'\n');
        }
        bytes
    });

    let start = since_epoch();
    let outcome = host::run(host::Command {
        argv: run_argv,
        cwd: chdir,
        stdin,
        env: Vec::new(),
    });
    let end = since_epoch();

    let output = match outcome {
        Ok(output) => output,
        Err(e) => {
            // As in ansible-core: a program that could not start changed nothing, and
            // its result has no times.
            r.changed = false;
            r.timed = false;
            r.rc = json!(if e.errno != 0 { e.errno } else { 126 });
            if !shell {
                r.cmd = json!(quote_join(&argv));
            }
            if e.denied {
                return Err(r.fail(format!(
                    "Error executing command: running '{}' was denied by the grant: {}",
                    argv[0], e.message
                )));
            }
            if e.errno == ENOENT {
                // As ansible-core's run_command says it: the error, caused by Python's
                // OSError for the program (its bytes).
                let cause = format!(
                    "[Errno 2] No such file or directory: {}",
                    sandball_pycompat::pyfmt::bytes_repr(argv[0].as_bytes())
                );
                return Err(r
                    .fail(NOT_EXECUTED)
                    .with("exception", error_summary(NOT_EXECUTED, &cause)));
            }
            return Err(r.fail(format!("Error executing command: {}", e.message)));
        }
    };
    r.start = json!(DateTime::from_unix(start).to_string());
    r.end = json!(DateTime::from_unix(end).to_string());
    r.delta = json!(delta::format_delta(
        end.checked_sub(start).unwrap_or(Duration::ZERO)
    ));
    r.rc = json!(output.rc);
    r.stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    r.stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    if m.get_bool("strip_empty_ends") {
        r.stdout
            .truncate(r.stdout.trim_end_matches(['\r', '\n']).len());
        r.stderr
            .truncate(r.stderr.trim_end_matches(['\r', '\n']).len());
    }
    if output.rc != 0 {
        // ansible-core 2.21's module says it in a sentence.
        return Err(r.fail(if m.internal().release_at_least(21) {
            "The command exited with a non-zero return code."
        } else {
            "non-zero return code"
        }));
    }
    Ok(r.into_map())
}

/// The words to run: `_raw_params` or `cmd` split like a shell would, or `argv`.
fn command_words(m: &Module) -> Result<Vec<String>, String> {
    match m.get_str("_raw_params").or_else(|| m.get_str("cmd")) {
        Some(line) => shlex::split(line)
            .map_err(|e| format!("Unable to split the command line {line:?} into words: {e}")),
        None => Ok(m.get_str_list("argv")),
    }
}

/// For `shell`: the words to run (`executable -c LINE`; `argv` words are quoted and
/// joined into the line) and the `cmd` to report (the line, or `argv` as given).
fn shell_words(m: &Module) -> Option<(Vec<String>, Value)> {
    let (line, shown) = match m.get_str("_raw_params").or_else(|| m.get_str("cmd")) {
        Some(line) => (line.to_string(), json!(line)),
        None => {
            let argv = m.get_str_list("argv");
            (quote_join(&argv), json!(argv))
        }
    };
    if line.is_empty() {
        return None;
    }
    let executable = m.get_str("executable").unwrap_or("/bin/sh").to_string();
    Some((vec![executable, "-c".into(), line], shown))
}

/// Why the run is skipped, in the words of Ansible's command module.
struct Skip {
    msg: String,
    stdout: String,
}

/// `creates` matching something or `removes` matching nothing skips the run.
/// Relative patterns are taken relative to `chdir`, where the program would run.
fn skip_reason(
    creates: Option<&str>,
    removes: Option<&str>,
    chdir: Option<&str>,
    check_mode: bool,
) -> Option<Skip> {
    let verb = if check_mode { "Would" } else { "Did" };
    let resolve = |pattern: &str| match chdir {
        Some(dir) if !pattern.starts_with('/') => {
            format!("{}/{pattern}", dir.trim_end_matches('/'))
        }
        _ => pattern.to_string(),
    };
    if let Some(pattern) = creates
        && glob::any_match(&resolve(pattern))
    {
        return Some(Skip {
            msg: format!("{verb} not run command since '{pattern}' exists"),
            stdout: format!("skipped, since {pattern} exists"),
        });
    }
    if let Some(pattern) = removes
        && !glob::any_match(&resolve(pattern))
    {
        return Some(Skip {
            msg: format!("{verb} not run command since '{pattern}' does not exist"),
            stdout: format!("skipped, since {pattern} does not exist"),
        });
    }
    None
}

/// The fields every command result carries, in Ansible's order.
struct Report {
    changed: bool,
    stdout: String,
    stderr: String,
    rc: Value,
    cmd: Value,
    start: Value,
    end: Value,
    delta: Value,
    /// Whether the result has `start`, `end` and `delta` (null until the program ran).
    timed: bool,
    msg: String,
    skipped: bool,
}

impl Default for Report {
    fn default() -> Self {
        Report {
            changed: false,
            stdout: String::new(),
            stderr: String::new(),
            rc: Value::Null,
            cmd: Value::Null,
            start: Value::Null,
            end: Value::Null,
            delta: Value::Null,
            timed: true,
            msg: String::new(),
            skipped: false,
        }
    }
}

impl Report {
    /// The result map, with `stdout_lines`/`stderr_lines` as Ansible's action adds them.
    fn into_map(self) -> Map<String, Value> {
        let mut map = Map::new();
        map.insert("changed".into(), json!(self.changed));
        map.insert("stdout".into(), json!(self.stdout));
        map.insert("stderr".into(), json!(self.stderr));
        map.insert("rc".into(), self.rc);
        map.insert("cmd".into(), self.cmd);
        if self.timed {
            map.insert("start".into(), self.start);
            map.insert("end".into(), self.end);
            map.insert("delta".into(), self.delta);
        }
        map.insert("msg".into(), json!(self.msg));
        if self.skipped {
            map.insert("skipped".into(), json!(true));
        }
        map.insert("stdout_lines".into(), json!(splitlines(&self.stdout)));
        map.insert("stderr_lines".into(), json!(splitlines(&self.stderr)));
        map
    }

    /// A failure carrying every result field, with `msg` as its message.
    fn fail(self, msg: impl Into<String>) -> Fail {
        self.into_map()
            .into_iter()
            .filter(|(k, _)| k != "msg")
            .fold(Fail::new(msg), |fail, (k, v)| fail.with(k, v))
    }
}

/// ansible-core's message for a program that could not be started.
const NOT_EXECUTED: &str = "Error executing command.";

/// `errno` for a program that is not there.
const ENOENT: i32 = 2;

/// ansible-core 2.19's error summary of a failure `msg` caused by an exception whose
/// message is `cause`, as a module returns it.
fn error_summary(msg: &str, cause: &str) -> Value {
    json!({
        "event": {
            "msg": msg,
            "chain": {
                "msg_reason": "<<< caused by >>>",
                "traceback_reason": "The above exception was the direct cause of the following error:",
                "event": {"msg": cause, "__ansible_type": "Event"},
                "follow": true,
                "__ansible_type": "EventChain"
            },
            "__ansible_type": "Event"
        },
        "__ansible_type": "ErrorSummary"
    })
}

/// The words joined into one shell-quoted line, as Ansible reports a command that
/// could not be started.
fn quote_join(words: &[String]) -> String {
    shlex_join(words)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn quotes_words_like_shlex_quote() {
        assert_eq!(quote("plain/path-1.0"), "plain/path-1.0");
        assert_eq!(quote(""), "''");
        assert_eq!(quote("b c"), "'b c'");
        assert_eq!(quote("it's"), "'it'\"'\"'s'");
        assert_eq!(
            quote_join(&["nosuchprog".into(), "a".into(), "b c".into()]),
            "nosuchprog a 'b c'"
        );
    }

    #[test]
    fn creates_and_removes_skip_with_ansible_messages() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_str().unwrap();
        fs::write(dir.path().join("made.txt"), "").unwrap();
        let present = format!("{root}/made.*");
        let absent = format!("{root}/gone");

        let s = skip_reason(Some(&present), None, None, false).unwrap();
        assert_eq!(
            s.msg,
            format!("Did not run command since '{present}' exists")
        );
        assert_eq!(s.stdout, format!("skipped, since {present} exists"));
        let s = skip_reason(None, Some(&absent), None, true).unwrap();
        assert_eq!(
            s.msg,
            format!("Would not run command since '{absent}' does not exist")
        );
        assert!(skip_reason(Some(&absent), Some(&present), None, false).is_none());
        assert!(skip_reason(None, None, None, false).is_none());
    }

    #[test]
    fn relative_patterns_are_taken_from_chdir() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("made.txt"), "").unwrap();
        let root = dir.path().to_str().unwrap();
        let s = skip_reason(Some("made.txt"), None, Some(root), false).unwrap();
        assert_eq!(s.msg, "Did not run command since 'made.txt' exists");
        assert!(skip_reason(Some("made.txt"), None, Some("/nonexistent"), false).is_none());
    }

    #[test]
    fn report_carries_ansible_fields_in_order() {
        let r = Report {
            changed: true,
            stdout: "one\ntwo".into(),
            rc: json!(0),
            cmd: json!(["echo"]),
            ..Report::default()
        };
        let map = r.into_map();
        let keys: Vec<&str> = map.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "changed",
                "stdout",
                "stderr",
                "rc",
                "cmd",
                "start",
                "end",
                "delta",
                "msg",
                "stdout_lines",
                "stderr_lines"
            ]
        );
        assert_eq!(map["stdout_lines"], json!(["one", "two"]));
        assert_eq!(map["stderr_lines"], json!([]));
    }
}
