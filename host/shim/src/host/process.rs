//! `process.run`: runs a granted program to completion without a shell. The
//! program starts with a minimal environment: `PATH`, the variables the grant passes
//! through (with the shim's values) and those the module sets, except the loader,
//! interpreter and configuration variables of [`forbidden_variable`], which neither
//! a module nor a grant can pass. The user's identity ([`identity_variable`]: `HOME`,
//! `USER`, …) a grant passes with the node's values; a module can never set it. It
//! inherits no descriptor but 0–2, runs in a working directory inside a read grant,
//! and in its own process group, which is killed when the program ends (no
//! background process outlives the call). Its output is bounded by the run's output
//! limit and its time by the run's deadline; reaching the deadline kills the group and
//! interrupts the module.

use super::confine::LocateError;
use super::sandball::host::process::{Command, Host, Output};
use super::{HostError, HostState, deny, exec, failure, listing, os_failure};
use sandball_wire::capability::Access;
use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
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
/// How long a pipe may stay silent, once the program has ended, before what it wrote
/// is taken as all of it.
const DRAIN_AFTER_EXIT: Duration = Duration::from_secs(1);

impl Host for HostState {
    fn run(&mut self, cmd: Command) -> wasmtime::Result<Result<Output, HostError>> {
        let Some(argv0) = cmd.argv.first() else {
            return Ok(Err(failure(
                libc::EINVAL,
                "process.run needs a program: argv is empty".to_string(),
            )));
        };
        if let Some((name, _)) = cmd.env.iter().find(|(name, _)| forbidden_variable(name)) {
            // Not a denial: no grant could allow it, so there is nothing to suggest.
            return Ok(Err(failure(
                libc::EPERM,
                format!(
                    "setting {name} for {argv0} refused: loader, interpreter, configuration and identity variables (LD_*, BASH_ENV, PYTHON*, PATH, HOME, USER, …) can never be set by a module"
                ),
            )));
        }
        let cwd = match &cmd.cwd {
            Some(dir) => match self.confinement.locate(dir, true, Access::Read) {
                Ok(located) => located.resolved,
                Err(LocateError::Io(e)) => {
                    return Ok(Err(os_failure(format!("cannot run {argv0} in {dir}"), &e)));
                }
                Err(LocateError::Denied { resolved, allowed }) => {
                    let message = format!(
                        "running {argv0} in {dir} (which resolves to {}) denied: a program's working directory must lie inside a read grant, and {allowed}",
                        resolved.display()
                    );
                    return Ok(Err(deny(
                        &mut self.denials,
                        format!("fs read {}", resolved.display()),
                        message,
                    )));
                }
            },
            None => std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
        };
        // The task's `PATH` finds programs as it would for an Ansible module.
        let path_var = match self.task_env.iter().rev().find(|(k, _)| k == "PATH") {
            Some((_, path)) => Some(OsString::from(path)),
            None => std::env::var_os("PATH"),
        };
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
        let mut env: Vec<(String, String)> = vec![(
            "PATH".to_string(),
            path_var
                .and_then(|p| p.into_string().ok())
                .unwrap_or_else(|| exec::DEFAULT_PATH.to_string()),
        )];
        for name in self.env.iter().filter(|n| grant_passes(n)) {
            if let Some(value) =
                crate::environment::original(name).and_then(|v| v.into_string().ok())
            {
                env.push((name.clone(), value));
            }
        }
        env.extend(self.task_env.iter().cloned());
        env.extend(cmd.env.iter().cloned());
        run_bounded(&program, &cmd, &cwd, &env, self.deadline, self.output_limit)
    }
}

/// The variables that say who the shim's user is, which the login, `sudo` or `su`
/// set from the user's password entry: `HOME`, `USER`, `LOGNAME`, `SHELL`, `MAIL`.
/// Programs need them (git's and ssh's configuration, `pip --user`), and the node's
/// own values point where that user's programs look anyway; a module choosing them
/// could point a program's configuration at a place it wrote.
const IDENTITY: &[&str] = &["HOME", "USER", "LOGNAME", "SHELL", "MAIL"];

/// Whether `name` is one of the [`IDENTITY`] variables (names are case-sensitive:
/// `home` is not `HOME`).
pub fn identity_variable(name: &str) -> bool {
    IDENTITY.contains(&name)
}

/// Whether a grant (`kind: env`) passes `name` on to a program, with the value the
/// shim started with: the user's identity ([`identity_variable`]: the node's own
/// value, not the module's) and every variable a module could set itself; never a
/// loader, interpreter or configuration variable ([`forbidden_variable`]).
pub fn grant_passes(name: &str) -> bool {
    identity_variable(name) || !forbidden_variable(name)
}

/// Names a module may never set for a program, and, but for the [`IDENTITY`]
/// variables, a grant never pass: they make the dynamic loader, a shell, an
/// interpreter or a library load code or configuration from where the module says
/// (`LD_PRELOAD`, `BASH_ENV`, `PYTHONPATH`, `NODE_OPTIONS`, `GCONV_PATH`, …), move a
/// program's configuration, temporary files or program search to a place the module
/// may have written (`HOME`, `XDG_*`, `TMPDIR`, `PATH`), or name another user
/// (`USER`, `LOGNAME`).
pub fn forbidden_variable(name: &str) -> bool {
    const PREFIXES: &[&str] = &[
        "LD_",
        "DYLD_",
        "BASH_FUNC_",
        "PYTHON",
        "PERL",
        "RUBY",
        "NODE_",
        "GEM_",
        "LUA_",
        "JAVA_",
        "_JAVA_",
        "JDK_",
        "GIT_",
        "XDG_",
        "GLIBC_",
        "MALLOC_",
        "OPENSSL_",
        "LESS",
        "TCL",
        "TK_",
        "PHP",
    ];
    const NAMES: &[&str] = &[
        "BASH_ENV",
        "ENV",
        "SHELLOPTS",
        "BASHOPTS",
        "PS4",
        "PROMPT_COMMAND",
        "IFS",
        "CDPATH",
        "GCONV_PATH",
        "LOCPATH",
        "NLSPATH",
        "HOSTALIASES",
        "RES_OPTIONS",
        "LOCALDOMAIN",
        "TMPDIR",
        "TMP",
        "TEMP",
        "HOME",
        "USER",
        "LOGNAME",
        "PATH",
        "SHELL",
        "PAGER",
        "EDITOR",
        "VISUAL",
        "MANPAGER",
        "BROWSER",
        "SSH_ASKPASS",
        "SUDO_ASKPASS",
        "INPUTRC",
        "TERMINFO",
        "TERMINFO_DIRS",
        "TERMCAP",
        "KRB5_CONFIG",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "CURL_HOME",
        "WGETRC",
        "EMACSLOADPATH",
        "VIMINIT",
        "EXINIT",
        "MAIL",
        "ZDOTDIR",
    ];
    let upper = name.to_ascii_uppercase();
    NAMES.contains(&upper.as_str()) || PREFIXES.iter().any(|p| upper.starts_with(p))
}

/// What a reader thread sends: a chunk it read (empty past the limit), or how the
/// stream ended.
enum Piece {
    Bytes(Vec<u8>),
    End(std::io::Result<()>),
}

/// A stream being read by its own thread: what it sends, and a copy of the pipe's
/// descriptor to look at whether anything waits to be read.
struct Capture {
    pieces: mpsc::Receiver<Piece>,
    pipe: OwnedFd,
}

/// Reads a stream to its end, sending what it reads, at most `limit` bytes in all;
/// past the limit it raises `overflow` and keeps draining so the writer is not
/// blocked. It stops, closing its end, once the receiver is gone.
fn capture(
    mut stream: impl Read + AsFd + Send + 'static,
    limit: usize,
    overflow: Arc<AtomicBool>,
) -> std::io::Result<Capture> {
    let pipe = stream.as_fd().try_clone_to_owned()?;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 32 * 1024];
        let mut total = 0usize;
        loop {
            let piece = match stream.read(&mut buf) {
                Ok(0) => Piece::End(Ok(())),
                Ok(n) => {
                    let keep = n.min(limit.saturating_sub(total));
                    total = total.saturating_add(n);
                    if keep < n {
                        overflow.store(true, Ordering::Relaxed);
                    }
                    Piece::Bytes(buf[..keep].to_vec())
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => Piece::End(Err(e)),
            };
            let end = matches!(piece, Piece::End(_));
            if tx.send(piece).is_err() || end {
                break;
            }
        }
    });
    Ok(Capture { pieces: rx, pipe })
}

/// Whether the pipe has something for its reader: bytes, or its end (every writer
/// gone).
fn pending(pipe: &OwnedFd) -> bool {
    let mut fds = [libc::pollfd {
        fd: pipe.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    }];
    // SAFETY: one valid pollfd, owned by this frame; a zero timeout does not block.
    let r = unsafe { libc::poll(fds.as_mut_ptr(), 1, 0) };
    r > 0 && fds[0].revents != 0
}

fn kill_group(child: &Child) {
    if let Some(pid) = rustix::process::Pid::from_raw(child.id() as i32) {
        // The group may be gone already; nothing else to do then.
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

/// Whether the program has ended, leaving it unreaped: its pid (the id of its
/// process group) stays taken until [`Child::wait`], so the group can still be
/// killed without hitting a process that reused the number.
fn ended(child: &Child) -> std::io::Result<bool> {
    // SAFETY: `waitid` only writes `info`, a plain C struct zeroed before the call.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    let flags = libc::WEXITED | libc::WNOHANG | libc::WNOWAIT;
    // SAFETY: as above; the pid is our own child's.
    let r = unsafe { libc::waitid(libc::P_PID, child.id(), &mut info, flags) };
    if r != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `si_pid` is set (non-zero) by waitid when a child was found.
    Ok(unsafe { info.si_pid() } != 0)
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
        if ended(child)? {
            // Whatever it left running in its group goes with it.
            kill_group(child);
            return Ok(Ok(child.wait()?));
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

/// What the program wrote on one stream: everything up to its end, or, when
/// something the program started keeps the pipe open (a daemon it spawned), what came
/// before the pipe stayed empty for [`DRAIN_AFTER_EXIT`] after the program ended, as
/// Ansible's `run_command` takes it. A pipe with bytes or its end waiting is never
/// left (however slowly the reader thread gets to them), but nothing is waited for
/// past `deadline`.
fn collect(capture: &Capture, deadline: Instant, what: &str) -> Result<Vec<u8>, HostError> {
    const STEP: Duration = Duration::from_millis(50);
    let mut bytes = Vec::new();
    let mut empty_since: Option<Instant> = None;
    loop {
        match capture.pieces.recv_timeout(STEP) {
            Ok(Piece::Bytes(b)) => {
                bytes.extend_from_slice(&b);
                empty_since = None;
            }
            Ok(Piece::End(Ok(()))) | Err(mpsc::RecvTimeoutError::Disconnected) => return Ok(bytes),
            Ok(Piece::End(Err(e))) => {
                return Err(os_failure(format!("cannot read the program's {what}"), &e));
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let now = Instant::now();
                if now >= deadline {
                    return Ok(bytes);
                }
                if pending(&capture.pipe) {
                    empty_since = None;
                } else if now.duration_since(*empty_since.get_or_insert(now)) >= DRAIN_AFTER_EXIT {
                    return Ok(bytes);
                }
            }
        }
    }
}

/// Runs `program` for `cmd` in `cwd` with only `env`, and collects its output,
/// within `deadline` and `limit` bytes per stream.
fn run_bounded(
    program: &Path,
    cmd: &Command,
    cwd: &Path,
    env: &[(String, String)],
    deadline: Instant,
    limit: usize,
) -> wasmtime::Result<Result<Output, HostError>> {
    let argv0 = &cmd.argv[0];
    let mut command = std::process::Command::new(program);
    command
        .arg0(argv0)
        .args(&cmd.argv[1..])
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(cwd)
        .stdin(if cmd.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = match command.spawn() {
        Ok(c) => c,
        Err(e) => return Ok(Err(os_failure(format!("cannot run {argv0}"), &e))),
    };
    // Ended with the session if the controller goes away while it runs; every return
    // below comes after the program was reaped.
    let _recorded = crate::groups::Recorded::new(child.id());
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
    let captured = capture(out, limit, Arc::clone(&overflow))
        .and_then(|out| Ok((out, capture(err, limit, Arc::clone(&overflow))?)));
    let (out, err) = match captured {
        Ok(both) => both,
        Err(e) => {
            kill_group(&child);
            let _ = child.wait();
            return Ok(Err(os_failure(
                format!("cannot capture the output of {argv0}"),
                &e,
            )));
        }
    };
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
    let stdout = match collect(&out, deadline, "stdout") {
        Ok(b) => b,
        Err(e) => return Ok(Err(e)),
    };
    let stderr = match collect(&err, deadline, "stderr") {
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

    /// A run granted `exec` programs, the variable `SANDBALL_TEST_GRANTED` and
    /// read on `/tmp`.
    fn state(exec: &[&str], time: Duration, limit: u64) -> HostState {
        HostState::new(
            vec![crate::sandbox::regions::Region {
                dir: PathBuf::from("/tmp"),
                guest: PathBuf::from("/tmp"),
                access: Access::Read,
                grant: "test".into(),
                only_itself: false,
                below: None,
            }],
            exec.iter()
                .map(|s| sandball_wire::capability::ExecGrant {
                    program: s.to_string(),
                    args: None,
                })
                .collect(),
            vec!["SANDBALL_TEST_GRANTED".into(), "LD_PRELOAD".into()],
            crate::paths::Places::at(std::path::Path::new("/")),
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

    /// A private directory under `/tmp` (the tests' read grant), canonical.
    fn scratch() -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir_in("/tmp").unwrap();
        let dir = std::fs::canonicalize(tmp.path()).unwrap();
        (tmp, dir)
    }

    #[test]
    fn programs_get_only_path_and_granted_variables() {
        let mut s = state(&["env"], MINUTE, 1 << 20);
        let out = s.run(cmd(&["env"])).unwrap().unwrap();
        let names: Vec<String> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| l.split('=').next().unwrap().to_string())
            .collect();
        // The test process has HOME, CARGO_* and more; none of it is passed on.
        assert_eq!(names, ["PATH"]);
        let mut c = cmd(&["env"]);
        c.env = vec![("SANDBALL_X".into(), "1".into())];
        let out = s.run(c).unwrap().unwrap();
        assert!(
            String::from_utf8(out.stdout)
                .unwrap()
                .contains("SANDBALL_X=1\n")
        );
    }

    #[test]
    fn identity_passes_by_grant_only_and_loader_variables_never() {
        for name in ["HOME", "USER", "LOGNAME", "SHELL", "MAIL"] {
            assert!(identity_variable(name) && grant_passes(name), "{name}");
            assert!(forbidden_variable(name), "a module may set {name}");
        }
        for name in [
            "LD_PRELOAD",
            "BASH_ENV",
            "PYTHONPATH",
            "PATH",
            "TMPDIR",
            "home",
        ] {
            assert!(!grant_passes(name), "a grant passes {name}");
        }
        for name in ["LANG", "TERM", "SANDBALL_X"] {
            assert!(grant_passes(name) && !forbidden_variable(name), "{name}");
        }
        // A run granted HOME and LD_PRELOAD: the program gets the node's HOME (the
        // value this process started with), never LD_PRELOAD, and the module cannot
        // choose HOME or USER itself.
        let mut s = HostState::new(
            Vec::new(),
            vec![sandball_wire::capability::ExecGrant {
                program: "env".into(),
                args: None,
            }],
            vec!["HOME".into(), "LD_PRELOAD".into()],
            crate::paths::Places::at(std::path::Path::new("/")),
            Instant::now() + MINUTE,
            1 << 20,
        );
        let out = String::from_utf8(s.run(cmd(&["env"])).unwrap().unwrap().stdout).unwrap();
        let home = crate::environment::original("HOME").and_then(|h| h.into_string().ok());
        assert_eq!(
            out.lines().find_map(|l| l.strip_prefix("HOME=")),
            home.as_deref(),
            "{out}"
        );
        assert!(!out.contains("LD_PRELOAD"), "{out}");
        for name in ["HOME", "USER"] {
            let mut c = cmd(&["env"]);
            c.env = vec![(name.into(), "/tmp/planted".into())];
            let e = s.run(c).unwrap().unwrap_err();
            assert!(
                e.errno == libc::EPERM && e.message.contains(name),
                "{}",
                e.message
            );
        }
    }

    #[test]
    fn argument_patterns_from_home_match_the_expanded_argument() {
        let home = std::path::Path::new("/home/someone");
        let mut s = HostState::new(
            Vec::new(),
            vec![sandball_wire::capability::ExecGrant {
                program: "echo".into(),
                args: Some(vec!["~/.ansible_async".into()]),
            }],
            Vec::new(),
            crate::paths::Places::at(home),
            Instant::now() + MINUTE,
            1 << 20,
        );
        let out = s
            .run(cmd(&["echo", "/home/someone/.ansible_async"]))
            .unwrap();
        assert_eq!(out.unwrap().stdout, b"/home/someone/.ansible_async\n");
        assert!(s.run(cmd(&["echo", "/elsewhere"])).unwrap().is_err());
    }

    #[test]
    fn the_task_environment_reaches_programs_and_its_path_finds_them() {
        let (_tmp, dir) = scratch();
        let tool = dir.join("only-in-task-path");
        std::fs::write(&tool, "#!/bin/sh\necho \"$PATH|$MARK\"\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut s = state(&["only-in-task-path"], MINUTE, 1 << 20);
        let path = format!("{}:/usr/bin:/bin", dir.display());
        s.set_task_environment(vec![
            ("PATH".into(), path.clone()),
            ("MARK".into(), "task".into()),
        ]);
        let out = s.run(cmd(&["only-in-task-path"])).unwrap().unwrap();
        assert_eq!(
            String::from_utf8(out.stdout).unwrap(),
            format!("{path}|task\n")
        );
        // The module's own variables come after the task's; PATH stays refused to them.
        let mut c = cmd(&["only-in-task-path"]);
        c.env = vec![("MARK".into(), "module".into())];
        let out = s.run(c).unwrap().unwrap();
        assert!(
            String::from_utf8(out.stdout)
                .unwrap()
                .ends_with("|module\n")
        );
        let mut c = cmd(&["only-in-task-path"]);
        c.env = vec![("PATH".into(), "/tmp".into())];
        assert_eq!(s.run(c).unwrap().unwrap_err().errno, libc::EPERM);
    }

    #[test]
    fn loader_and_interpreter_variables_are_never_set() {
        let (_tmp, dir) = scratch();
        let marker = dir.join("marker");
        let script = dir.join("env.sh");
        std::fs::write(&script, format!("touch {}\n", marker.display())).unwrap();
        let mut s = state(&["bash", "env"], MINUTE, 1 << 20);
        let script = script.to_str().unwrap().to_string();
        let attempts = [
            ("BASH_ENV", script.as_str(), vec!["bash", "-c", "true"]),
            ("ENV", script.as_str(), vec!["bash", "-i", "-c", "true"]),
            ("LD_PRELOAD", "/nonexistent/evil.so", vec!["env"]),
            ("LD_DEBUG_OUTPUT", script.as_str(), vec!["env"]),
            ("PYTHONSTARTUP", script.as_str(), vec!["env"]),
            ("GCONV_PATH", "/tmp", vec!["env"]),
            ("NODE_OPTIONS", "--require x", vec!["env"]),
            ("ld_library_path", "/tmp", vec!["env"]),
            ("PATH", "/tmp", vec!["env"]),
            ("HOME", "/tmp", vec!["env"]),
            (
                "BASH_FUNC_true%%",
                "() { touch x; }",
                vec!["bash", "-c", "true"],
            ),
        ];
        for (name, value, argv) in &attempts {
            let mut c = cmd(argv);
            c.env = vec![(name.to_string(), value.to_string())];
            let e = s.run(c).unwrap().unwrap_err();
            assert!(
                e.errno == libc::EPERM && e.message.contains(name) && e.message.contains("refused"),
                "{name}: {}",
                e.message
            );
        }
        assert!(!marker.exists(), "BASH_ENV ran");
        eprintln!(
            "adversarial: {} attempts tried, {} contained",
            attempts.len(),
            attempts.len()
        );
    }

    #[test]
    fn programs_inherit_no_descriptor_beyond_stdio() {
        let (_tmp, dir) = scratch();
        let result = dir.join("result");
        std::fs::write(&result, b"genuine").unwrap();
        // Opened without close-on-exec, as a descriptor the shim inherits (its
        // session's, from sshd) is; then what the shim does first thing.
        let fd = rustix::fs::open(
            &result,
            rustix::fs::OFlags::WRONLY | rustix::fs::OFlags::APPEND,
            rustix::fs::Mode::empty(),
        )
        .unwrap();
        crate::environment::close_inherited_descriptors();
        let n = std::os::fd::AsRawFd::as_raw_fd(&fd);
        let mut s = state(&["sh"], MINUTE, 1 << 20);
        let out = s
            .run(cmd(&[
                "sh",
                "-c",
                &format!("echo forged >&{n} && echo wrote"),
            ]))
            .unwrap()
            .unwrap();
        assert_ne!(out.rc, 0);
        assert!(!String::from_utf8_lossy(&out.stdout).contains("wrote"));
        assert_eq!(std::fs::read(&result).unwrap(), b"genuine");
        drop(fd);
    }

    #[test]
    fn a_daemon_holding_the_output_open_does_not_fail_the_run() {
        // `setsid` takes the daemon out of the program's group, as a program that
        // daemonizes does (git's background maintenance, an init script's service):
        // what the program wrote is its output once the pipe has been silent a while,
        // as Ansible's run_command takes it.
        let (_tmp, dir) = scratch();
        let ready = dir.join("ready");
        let script = format!(
            "echo hi; setsid sh -c 'touch {r}; exec sleep 4' & \
             while [ ! -e {r} ]; do sleep 0.01; done; echo bye; echo err >&2",
            r = ready.display()
        );
        let mut s = state(&["sh"], MINUTE, 1 << 20);
        let started = Instant::now();
        let out = s.run(cmd(&["sh", "-c", &script])).unwrap().unwrap();
        assert_eq!(out.rc, 0);
        assert_eq!(out.stdout, b"hi\nbye\n");
        assert_eq!(out.stderr, b"err\n");
        assert!(
            started.elapsed() < Duration::from_secs(4),
            "it waited for the daemon"
        );
    }

    #[test]
    fn no_background_process_outlives_the_call() {
        let (_tmp, dir) = scratch();
        let marker = dir.join("late");
        let mut s = state(&["sh"], MINUTE, 1 << 20);
        let script = format!(
            "(sleep 1; touch {}) >/dev/null 2>&1 </dev/null & echo started",
            marker.display()
        );
        let out = s.run(cmd(&["sh", "-c", &script])).unwrap().unwrap();
        assert_eq!(out.stdout, b"started\n");
        std::thread::sleep(Duration::from_millis(2500));
        assert!(!marker.exists(), "a background process outlived the call");
    }

    #[test]
    fn the_working_directory_must_lie_inside_a_read_grant() {
        let (_tmp, dir) = scratch();
        std::os::unix::fs::symlink("/etc", dir.join("etc-link")).unwrap();
        let out_file = dir.join("pwd");
        let mut s = state(&["sh"], MINUTE, 1 << 20);
        let script = format!("pwd > {}", out_file.display());
        for cwd in [
            "/etc",
            "/",
            dir.join("etc-link").to_str().unwrap(),
            "/tmp/../etc",
        ] {
            let mut c = cmd(&["sh", "-c", &script]);
            c.cwd = Some(cwd.to_string());
            let e = s.run(c).unwrap().unwrap_err();
            assert!(
                e.denied
                    && e.message
                        .contains("working directory must lie inside a read grant"),
                "{cwd}: {}",
                e.message
            );
            assert!(!out_file.exists(), "{cwd}: the program ran");
        }
        let mut c = cmd(&["sh", "-c", &script]);
        c.cwd = Some(dir.to_str().unwrap().to_string());
        assert_eq!(s.run(c).unwrap().unwrap().rc, 0);
        assert_eq!(
            std::fs::read_to_string(&out_file).unwrap(),
            format!("{}\n", dir.display())
        );
    }
}
