//! `process.run`: runs a granted program to completion without a shell, with the
//! shim's environment plus the given variables. Its output is bounded by the run's
//! output limit and its time by the run's deadline; reaching the deadline kills the
//! program (and its process group) and interrupts the module.

use super::sandball::host::process::{Command, Host, Output};
use super::{HostError, HostState, deny, exec, failure, listing, os_failure};
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use wasmtime::Trap;

/// Longest pause between two looks at a running program.
const MAX_POLL: Duration = Duration::from_millis(5);
/// How long to wait, once a program has ended, for its pipes to close.
const DRAIN_AFTER_EXIT: Duration = Duration::from_secs(1);

impl Host for HostState {
    fn run(&mut self, cmd: Command) -> wasmtime::Result<Result<Output, HostError>> {
        let Some(argv0) = cmd.argv.first() else {
            return Ok(Err(failure(
                libc::EINVAL,
                "process.run needs a program: argv is empty".to_string(),
            )));
        };
        let cwd = match &cmd.cwd {
            Some(dir) => PathBuf::from(dir),
            None => std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
        };
        let path_var = std::env::var_os("PATH");
        let program = match exec::check(&cmd.argv, &self.exec, &cwd, path_var.as_deref()) {
            exec::Check::Allowed(p) => p,
            exec::Check::NotFound => {
                return Ok(Err(failure(
                    libc::ENOENT,
                    format!("cannot run {argv0}: no such program (searched PATH)"),
                )));
            }
            exec::Check::Denied => {
                let message = format!(
                    "exec of {argv0} denied: the grant allows exec of {}",
                    listing(self.exec.iter().map(|g| g.program.as_str()))
                );
                return Ok(Err(deny(
                    &mut self.denials,
                    format!("exec {argv0}"),
                    message,
                )));
            }
            exec::Check::ArgumentsDenied => {
                let granted: Vec<String> = self.exec.iter().map(ToString::to_string).collect();
                let message = format!(
                    "exec of {argv0} with arguments [{}] denied: the grant allows {}",
                    cmd.argv[1..].join(", "),
                    listing(granted.iter().map(String::as_str))
                );
                return Ok(Err(deny(
                    &mut self.denials,
                    format!("exec {}", cmd.argv.join(" ")),
                    message,
                )));
            }
        };
        run_bounded(&program, &cmd, self.deadline, self.output_limit)
    }
}

/// What a reader thread brings back: the bytes kept, and whether there were more.
type Captured = std::io::Result<(Vec<u8>, bool)>;

/// Reads a stream to its end, keeping at most `limit` bytes; past the limit it
/// raises `overflow` and keeps draining so the writer is not blocked.
fn capture(
    mut stream: impl Read + Send + 'static,
    limit: usize,
    overflow: Arc<AtomicBool>,
) -> mpsc::Receiver<Captured> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let r = (&mut stream)
            .take((limit as u64).saturating_add(1))
            .read_to_end(&mut kept)
            .and_then(|_| {
                let over = kept.len() > limit;
                if over {
                    kept.truncate(limit);
                    overflow.store(true, Ordering::Relaxed);
                    std::io::copy(&mut stream, &mut std::io::sink())?;
                }
                Ok((kept, over))
            });
        // The receiver may be gone when the run gave up on this program.
        let _ = tx.send(r);
    });
    rx
}

fn kill_group(child: &Child) {
    if let Some(pid) = rustix::process::Pid::from_raw(child.id() as i32) {
        // The group may be gone already; nothing else to do then.
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

/// Why a program was stopped early.
enum Stop {
    Deadline,
    Output,
}

/// Waits for the program, polling with growing pauses, until it exits, the deadline
/// passes or its output overflows.
fn wait(
    child: &mut Child,
    deadline: Instant,
    overflow: &AtomicBool,
) -> std::io::Result<Result<ExitStatus, Stop>> {
    let mut pause = Duration::from_micros(50);
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Ok(status));
        }
        if overflow.load(Ordering::Relaxed) {
            return Ok(Err(Stop::Output));
        }
        let now = Instant::now();
        if now >= deadline {
            return Ok(Err(Stop::Deadline));
        }
        std::thread::sleep(pause.min(deadline - now));
        pause = (pause * 2).min(MAX_POLL);
    }
}

fn collect(
    rx: &mpsc::Receiver<Captured>,
    until: Instant,
    what: &str,
) -> Result<Vec<u8>, HostError> {
    let left = until.saturating_duration_since(Instant::now());
    match rx.recv_timeout(left) {
        Ok(Ok((bytes, _))) => Ok(bytes),
        Ok(Err(e)) => Err(os_failure(format!("cannot read the program's {what}"), &e)),
        Err(_) => Err(failure(
            0,
            format!(
                "the program's {what} stayed open after it ended (a background process holds it)"
            ),
        )),
    }
}

/// Runs `program` for `cmd` and collects its output, within `deadline` and
/// `limit` bytes per stream.
fn run_bounded(
    program: &Path,
    cmd: &Command,
    deadline: Instant,
    limit: usize,
) -> wasmtime::Result<Result<Output, HostError>> {
    let argv0 = &cmd.argv[0];
    let mut command = std::process::Command::new(program);
    command
        .arg0(argv0)
        .args(&cmd.argv[1..])
        .envs(cmd.env.iter().map(|(k, v)| (k, v)))
        .stdin(if cmd.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    if let Some(dir) = &cmd.cwd {
        command.current_dir(dir);
    }
    let mut child = match command.spawn() {
        Ok(c) => c,
        Err(e) => return Ok(Err(os_failure(format!("cannot run {argv0}"), &e))),
    };
    if let (Some(mut pipe), Some(bytes)) = (child.stdin.take(), cmd.stdin.clone()) {
        std::thread::spawn(move || {
            // A program that does not read all its input closes the pipe early.
            let _ = pipe.write_all(&bytes);
        });
    }
    let overflow = Arc::new(AtomicBool::new(false));
    let (Some(out), Some(err)) = (child.stdout.take(), child.stderr.take()) else {
        kill_group(&child);
        let _ = child.wait();
        return Ok(Err(failure(
            0,
            format!("cannot capture the output of {argv0}"),
        )));
    };
    let out = capture(out, limit, Arc::clone(&overflow));
    let err = capture(err, limit, Arc::clone(&overflow));
    let status = match wait(&mut child, deadline, &overflow) {
        Ok(Ok(status)) => status,
        Ok(Err(stop)) => {
            kill_group(&child);
            let _ = child.wait();
            return match stop {
                Stop::Deadline => Err(Trap::Interrupt.into()),
                Stop::Output => Ok(Err(failure(
                    0,
                    format!(
                        "{argv0} wrote more than the output limit of {limit} bytes; it was killed"
                    ),
                ))),
            };
        }
        Err(e) => {
            kill_group(&child);
            let _ = child.wait();
            return Ok(Err(os_failure(format!("cannot wait for {argv0}"), &e)));
        }
    };
    // Pipes close when the program ends, unless something it started keeps them.
    let until = Instant::now() + DRAIN_AFTER_EXIT;
    let stdout = match collect(&out, until, "stdout") {
        Ok(b) => b,
        Err(e) => return Ok(Err(e)),
    };
    let stderr = match collect(&err, until, "stderr") {
        Ok(b) => b,
        Err(e) => return Ok(Err(e)),
    };
    if overflow.load(Ordering::Relaxed) {
        return Ok(Err(failure(
            0,
            format!("{argv0} wrote more than the output limit of {limit} bytes"),
        )));
    }
    Ok(Ok(Output {
        rc: status.code().unwrap_or(-1),
        stdout,
        stderr,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(exec: &[&str], time: Duration, limit: u64) -> HostState {
        HostState::new(
            Vec::new(),
            exec.iter()
                .map(|s| sandball_wire::capability::ExecGrant {
                    program: s.to_string(),
                    args: None,
                })
                .collect(),
            PathBuf::from("/"),
            Instant::now() + time,
            limit,
        )
    }

    fn cmd(argv: &[&str]) -> Command {
        Command {
            argv: argv.iter().map(|s| s.to_string()).collect(),
            cwd: None,
            stdin: None,
            env: Vec::new(),
        }
    }

    const MINUTE: Duration = Duration::from_secs(60);

    #[test]
    fn granted_programs_run_with_stdin_env_and_cwd() {
        let mut s = state(&["sh"], MINUTE, 1 << 20);
        let mut c = cmd(&["sh", "-c", "cat; echo \"$SANDBALL_X\"; pwd; echo err >&2"]);
        c.stdin = Some(b"input\n".to_vec());
        c.env = vec![("SANDBALL_X".into(), "forty-two".into())];
        c.cwd = Some("/tmp".into());
        let out = s.run(c).unwrap().unwrap();
        assert_eq!(out.rc, 0);
        assert_eq!(
            String::from_utf8(out.stdout).unwrap(),
            "input\nforty-two\n/tmp\n"
        );
        assert_eq!(out.stderr, b"err\n");
        assert!(s.take_denials().is_empty());
    }

    #[test]
    fn exit_codes_and_signals_are_reported() {
        let mut s = state(&["sh"], MINUTE, 1 << 20);
        assert_eq!(s.run(cmd(&["sh", "-c", "exit 3"])).unwrap().unwrap().rc, 3);
        assert_eq!(
            s.run(cmd(&["sh", "-c", "kill -9 $$"])).unwrap().unwrap().rc,
            -1
        );
    }

    #[test]
    fn other_programs_are_denied_and_recorded() {
        let mut s = state(&["ls"], MINUTE, 1 << 20);
        let e = s.run(cmd(&["sh", "-c", "true"])).unwrap().unwrap_err();
        assert!(e.denied);
        assert_eq!(
            e.message,
            "exec of sh denied: the grant allows exec of [ls]"
        );
        let denials = s.take_denials();
        assert_eq!(denials.len(), 1);
        assert_eq!(denials[0].capability, "exec sh");
        let e = s.run(cmd(&[])).unwrap().unwrap_err();
        assert_eq!((e.denied, e.errno), (false, libc::EINVAL));
    }

    #[test]
    fn the_deadline_kills_the_program_and_interrupts_the_module() {
        let mut s = state(&["sh"], Duration::from_millis(100), 1 << 20);
        let started = Instant::now();
        let e = s.run(cmd(&["sh", "-c", "sleep 30"])).unwrap_err();
        assert!(
            matches!(e.downcast_ref::<Trap>(), Some(Trap::Interrupt)),
            "{e:?}"
        );
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn output_beyond_the_limit_kills_the_program() {
        let mut s = state(&["sh"], MINUTE, 1000);
        let e = s
            .run(cmd(&["sh", "-c", "while :; do echo xxxxxxxxxx; done"]))
            .unwrap()
            .unwrap_err();
        assert!(!e.denied);
        assert!(
            e.message
                .contains("more than the output limit of 1000 bytes"),
            "{}",
            e.message
        );
    }
}
