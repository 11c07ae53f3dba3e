//! Running a command with a time limit, and what it printed.

use crate::recap::{HostRecap, parse_recap};
use std::collections::BTreeMap;
use std::fmt;
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

/// Why [`Output::run_bounded`] killed a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overrun {
    /// It ran longer than its limit.
    TimedOut,
    /// It exited, but processes it started kept its output open.
    Lingering,
}

/// How a finished command ended and what it printed.
#[derive(Clone, Debug)]
pub struct Output {
    /// The command line, for messages.
    pub command: String,
    /// Exit code; `-N` when killed by signal N.
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
    /// Wall time.
    pub elapsed: Duration,
}

impl Output {
    /// Runs `cmd` (stdin closed, in a process group of its own) and waits for it.
    /// Panics, with what it printed so far, when it runs longer than `limit`, or when
    /// it exits but leaves processes behind that keep its output open; the whole
    /// process group is killed first.
    pub fn run(cmd: Command, limit: Duration) -> Output {
        Output::run_with_input(cmd, limit, Stdio::null())
    }

    /// As [`run`](Self::run), with `input` as the command's stdin.
    pub fn run_with_input(cmd: Command, limit: Duration, input: Stdio) -> Output {
        Output::run_started(cmd, limit, input, |_| {})
    }

    /// As [`run`](Self::run), with `started` called once the command runs (given its
    /// process, which leads its process group); `limit` counts from the start.
    pub fn run_started(
        cmd: Command,
        limit: Duration,
        input: Stdio,
        started: impl FnOnce(&Child),
    ) -> Output {
        match Output::run_bounded(cmd, limit, input, started) {
            Ok(out) => out,
            Err((Overrun::TimedOut, out)) => {
                panic!("still running after {limit:?}, killed:\n{out}")
            }
            Err((Overrun::Lingering, out)) => {
                panic!("exited but left processes holding its output open (killed them):\n{out}")
            }
        }
    }

    /// As [`run_started`](Self::run_started), without panicking: a run over `limit`
    /// or one that leaves processes holding its output open is killed (its process
    /// group) and returned as the error, with what it printed and its exit code (`-9`
    /// when it was still running).
    pub fn run_bounded(
        mut cmd: Command,
        limit: Duration,
        input: Stdio,
        started: impl FnOnce(&Child),
    ) -> Result<Output, (Overrun, Output)> {
        let command = format!("{cmd:?}");
        let start = Instant::now();
        let mut child = cmd
            .stdin(input)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {command}: {e}"));
        let stdout = drain(child.stdout.take());
        let stderr = drain(child.stderr.take());
        started(&child);
        let status = wait_for(&mut child, limit.saturating_sub(start.elapsed()));
        // Output still open after the exit means a child outlived the command.
        let grace = Instant::now() + Duration::from_secs(if status.is_some() { 3 } else { 0 });
        let left = || grace.saturating_duration_since(Instant::now());
        let (out, err) = (stdout.recv_timeout(left()), stderr.recv_timeout(left()));
        let lingering = out.is_err() || err.is_err();
        if lingering || status.is_none() {
            kill_group(&mut child);
        }
        let out = Output {
            command,
            code: status.map(exit_code).unwrap_or(-9),
            // After the kill, whatever was captured arrives at once.
            stdout: out.unwrap_or_else(|_| {
                stdout
                    .recv_timeout(Duration::from_secs(1))
                    .unwrap_or_default()
            }),
            stderr: err.unwrap_or_else(|_| {
                stderr
                    .recv_timeout(Duration::from_secs(1))
                    .unwrap_or_default()
            }),
            elapsed: start.elapsed(),
        };
        match (status, lingering) {
            (None, _) => Err((Overrun::TimedOut, out)),
            (Some(_), true) => Err((Overrun::Lingering, out)),
            (Some(_), false) => Ok(out),
        }
    }

    /// The PLAY RECAP counters per host.
    pub fn recap(&self) -> BTreeMap<String, HostRecap> {
        parse_recap(&self.stdout)
    }

    /// The PLAY RECAP counters of one host; panics (showing the output) without them.
    pub fn host(&self, host: &str) -> HostRecap {
        match self.recap().get(host) {
            Some(r) => *r,
            None => panic!("no PLAY RECAP line for {host}:\n{self}"),
        }
    }

    /// Asserts that this run's PLAY RECAP equals `reference`'s (the same playbook under
    /// ansible-playbook), host by host.
    pub fn assert_same_recap_as(&self, reference: &Output) -> &Self {
        let (ours, theirs) = (self.recap(), reference.recap());
        assert!(
            !theirs.is_empty(),
            "the reference run printed no recap:\n{reference}"
        );
        assert_eq!(
            ours, theirs,
            "recaps differ from ansible-playbook's (left: sandball, right: ansible)\n\
             === sandball ===\n{self}\n=== ansible-playbook ===\n{reference}"
        );
        self
    }

    /// Asserts that each of `tasks` reported the same result lines as in `reference`
    /// (the same playbook under ansible-playbook).
    pub fn assert_same_results_as(&self, reference: &Output, tasks: &[&str]) -> &Self {
        for task in tasks {
            assert_eq!(
                self.result_lines(task),
                reference.result_lines(task),
                "{task}:\n{reference}\n{self}"
            );
        }
        self
    }

    /// Asserts that each of `tasks` printed the same lines (results, retries, the
    /// errors said before them) as in `reference` (the same playbook under
    /// ansible-playbook).
    pub fn assert_same_task_lines_as(&self, reference: &Output, tasks: &[&str]) -> &Self {
        for task in tasks {
            assert_eq!(
                self.task_lines(task),
                reference.task_lines(task),
                "{task}:\n{reference}\n{self}"
            );
        }
        self
    }

    /// Asserts the exit code, showing the whole output when it differs.
    pub fn assert_code(&self, code: i32) -> &Self {
        assert_eq!(self.code, code, "unexpected exit code:\n{self}");
        self
    }

    /// Asserts that nothing panicked: a bad input must give an error, not a crash.
    pub fn assert_no_panic(&self) -> &Self {
        assert!(
            !self.stderr.contains("panicked") && !self.stdout.contains("panicked"),
            "sandball panicked:\n{self}"
        );
        assert!(self.code >= 0, "killed by signal {}:\n{self}", -self.code);
        self
    }

    /// Asserts that stdout is line for line the same as `reference`'s (the same
    /// playbook under ansible-playbook), warnings aside.
    pub fn assert_same_stdout_as(&self, reference: &Output) -> &Self {
        let shown = |o: &Output| -> Vec<String> {
            o.stdout
                .lines()
                .filter(|l| !l.starts_with("[WARNING]"))
                .map(str::to_string)
                .collect()
        };
        assert_eq!(shown(self), shown(reference), "{reference}\n{self}");
        self
    }

    /// Asserts that stdout contains `text`.
    pub fn assert_stdout_has(&self, text: &str) -> &Self {
        assert!(self.stdout.contains(text), "stdout lacks {text:?}:\n{self}");
        self
    }

    /// Asserts that stderr contains `text`.
    pub fn assert_stderr_has(&self, text: &str) -> &Self {
        assert!(self.stderr.contains(text), "stderr lacks {text:?}:\n{self}");
        self
    }

    /// The lines of stdout between the banner of the task named `task` and the next
    /// banner (or the end).
    pub fn task_lines(&self, task: &str) -> Vec<&str> {
        let banner = format!("TASK [{task}]");
        let mut lines = self.stdout.lines().skip_while(|l| !l.starts_with(&banner));
        if lines.next().is_none() {
            panic!("no task banner {banner:?}:\n{self}");
        }
        lines
            .take_while(|l| !is_banner(l))
            .filter(|l| !l.is_empty())
            .collect()
    }

    /// [`task_lines`](Self::task_lines) without the `[ERROR]: Task failed` block (and
    /// its `Origin:` excerpt) printed before each failure, as ansible-core 2.19 prints
    /// it: the results themselves.
    pub fn result_lines(&self, task: &str) -> Vec<&str> {
        let mut out = Vec::new();
        let mut in_error = false;
        for l in self.task_lines(task) {
            if l.starts_with("[ERROR]: Task failed") {
                in_error = true;
                continue;
            }
            if in_error && (l.starts_with("failed: ") || l.starts_with("fatal: ")) {
                in_error = false;
            }
            if !in_error {
                out.push(l);
            }
        }
        out
    }

    /// [`task_lines`](Self::task_lines) as one block per host result (a status line
    /// and the lines of its result), in sorted order: hosts report in the order they
    /// finish, which varies between runs of ansible-playbook.
    pub fn task_results(&self, task: &str) -> Vec<String> {
        const STATUS: &[&str] = &[
            "ok: ",
            "changed: ",
            "fatal: ",
            "failed: ",
            "skipping: ",
            "included: ",
        ];
        let mut blocks: Vec<String> = Vec::new();
        for line in self.task_lines(task) {
            match blocks.last_mut() {
                Some(block) if !STATUS.iter().any(|s| line.starts_with(s)) => {
                    block.push('\n');
                    block.push_str(line);
                }
                _ => blocks.push(line.to_string()),
            }
        }
        blocks.sort();
        blocks
    }
}

/// A `PLAY [..]`, `TASK [..]`, `RUNNING HANDLER [..]` or `PLAY RECAP` banner line.
fn is_banner(line: &str) -> bool {
    ["PLAY [", "TASK [", "RUNNING HANDLER [", "PLAY RECAP"]
        .iter()
        .any(|p| line.starts_with(p))
        && line.ends_with("***")
}

impl fmt::Display for Output {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "$ {}", self.command)?;
        writeln!(f, "exit code {} after {:?}", self.code, self.elapsed)?;
        writeln!(f, "--- stdout ---\n{}", self.stdout)?;
        write!(f, "--- stderr ---\n{}", self.stderr)
    }
}

fn exit_code(status: ExitStatus) -> i32 {
    status
        .code()
        .unwrap_or_else(|| -status.signal().unwrap_or(0))
}

/// Reads a pipe to its end on a thread; the text arrives on the returned channel.
fn drain<R: Read + Send + 'static>(pipe: Option<R>) -> Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(mut p) = pipe {
            // A read error just ends the capture; the exit code still tells.
            let _ = p.read_to_end(&mut buf);
        }
        let _ = tx.send(String::from_utf8_lossy(&buf).into_owned());
    });
    rx
}

fn wait_for(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            Ok(None) | Err(_) => return None,
        }
    }
}

/// Kills the child's whole process group (it leads one, see [`Output::run`]).
fn kill_group(child: &mut Child) {
    let group = format!("-{}", child.id());
    // Best effort: the test fails anyway, this only avoids leaving processes behind.
    let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
    let _ = child.wait();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut c = Command::new("/bin/sh");
        c.args(["-c", script]);
        c
    }

    #[test]
    fn captures_both_streams_and_the_exit_code() {
        let out = Output::run(
            sh("echo out; echo err >&2; exit 3"),
            Duration::from_secs(10),
        );
        assert_eq!(
            (out.code, out.stdout.as_str(), out.stderr.as_str()),
            (3, "out\n", "err\n")
        );
    }

    #[test]
    #[should_panic(expected = "still running after")]
    fn a_command_over_its_limit_is_killed_with_its_children() {
        Output::run(sh("sleep 30; echo"), Duration::from_millis(200));
    }

    #[test]
    fn a_bounded_run_over_its_limit_is_returned_killed() {
        let ran = Output::run_bounded(
            sh("echo before; sleep 30"),
            Duration::from_millis(500),
            Stdio::null(),
            |_| {},
        );
        let Err((Overrun::TimedOut, out)) = ran else {
            panic!("not a time-out: {ran:?}");
        };
        assert_eq!((out.code, out.stdout.as_str()), (-9, "before\n"));
    }

    #[test]
    #[should_panic(expected = "left processes holding its output open")]
    fn children_that_outlive_the_command_are_an_error() {
        Output::run(sh("sleep 30 & echo started"), Duration::from_secs(5));
    }

    #[test]
    fn task_lines_stop_at_the_next_banner() {
        let out = Output {
            command: String::new(),
            code: 0,
            stdout: "\nTASK [a] ****\nok: [h]\n\nTASK [b] ****\nchanged: [h]\n\nPLAY RECAP ****\n"
                .into(),
            stderr: String::new(),
            elapsed: Duration::ZERO,
        };
        assert_eq!(out.task_lines("a"), vec!["ok: [h]"]);
        assert_eq!(out.task_lines("b"), vec!["changed: [h]"]);
    }
}
