//! The `local` connection: the node is the controller's own machine. Commands run
//! under `/bin/sh -c`; the shim runs as a child process whose stdin/stdout carry the
//! session. A su that asks for a password gets a pseudo-terminal as its stdin (its
//! stdout and stderr stay pipes, as under ansible-core's `local`).

use super::deploy::Shims;
use super::session::{Session, SessionError};
use super::{
    ConnectError, Connection, ConnectionError, ExecOutput, Secret, Settings, as_become, started,
};
use crate::plugins::r#become::Become;
use crate::plugins::r#become::terminal::{self, Terminal};
use crate::plugins::shell;
use futures::future::LocalBoxFuture;
use serde_json::{Map, Value};
use std::process::Stdio;
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::unix::pipe;
use tokio::process::{Child, Command};

/// The local connection (it holds nothing: every operation is a process or a file),
/// which is also its settings.
#[derive(Debug)]
pub struct Local;

/// The `local` row's settings: nothing to read.
pub fn settings(
    _host: &str,
    _vars: &Map<String, Value>,
) -> Result<Arc<dyn Settings>, super::VarError> {
    Ok(Arc::new(Local))
}

impl Settings for Local {
    fn key(&self) -> String {
        "local".to_string()
    }

    /// The controller runs as root.
    fn logs_in_as_root(&self) -> bool {
        rustix::process::geteuid().is_root()
    }

    fn local(&self) -> bool {
        true
    }

    fn connect<'a>(
        &'a self,
        _password: Option<&'a Secret>,
    ) -> LocalBoxFuture<'a, Result<Arc<dyn Connection>, ConnectionError>> {
        Box::pin(async { Ok(Arc::new(Local) as Arc<dyn Connection>) })
    }
}

impl Connection for Local {
    fn exec_command<'a>(
        &'a self,
        cmd: &'a str,
        stdin: Option<&'a [u8]>,
    ) -> LocalBoxFuture<'a, Result<ExecOutput, ConnectionError>> {
        Box::pin(self.exec(cmd, stdin))
    }

    fn exec_on_terminal<'a>(
        &'a self,
        line: &'a str,
        terminal: &'a Terminal,
        stdin: &'a [u8],
    ) -> LocalBoxFuture<'a, Result<ExecOutput, ConnectionError>> {
        Box::pin(self.exec_with_terminal(line, terminal, stdin))
    }

    fn put_data<'a>(
        &'a self,
        data: &'a [u8],
        dest: &'a str,
    ) -> LocalBoxFuture<'a, Result<(), ConnectionError>> {
        Box::pin(async move {
            tokio::fs::write(crate::local_files::expand_user(dest), data)
                .await
                .map_err(ConnectionError::io(format!("cannot write {dest}")))
        })
    }

    fn read<'a>(&'a self, src: &'a str) -> LocalBoxFuture<'a, Result<Vec<u8>, ConnectionError>> {
        Box::pin(async move {
            tokio::fs::read(crate::local_files::expand_user(src))
                .await
                .map_err(ConnectionError::io(format!("cannot read {src}")))
        })
    }

    /// The shim for the controller's own machine (see [`Shims::for_controller`]), as
    /// the become user when there is one.
    fn open_session<'a>(
        &'a self,
        cache_dir: Option<&'a str>,
        become_: Option<&'a Become>,
    ) -> LocalBoxFuture<'a, Result<Session, ConnectError>> {
        Box::pin(async move {
            let cache = match become_ {
                // The user name is checked to be a plain word, so `~user` expands.
                Some(b) => Some(format!("~{}/.sandball", b.user)),
                None => cache_dir.map(shell::quote_path),
            };
            let shim = Shims::get().for_controller()?.path.display().to_string();
            let mut cmd = format!("exec {} serve", shell::quote_path(&shim));
            if let Some(cache) = cache {
                cmd = format!("{cmd} --cache-dir {cache}");
            }
            let (line, stdin, tty) = as_become(self, become_, cmd).await?;
            Ok(started(
                self.start_session(&line, &stdin, tty.as_ref()).await?,
                line,
            ))
        })
    }
}

impl Local {
    /// `/bin/sh -c cmd` with `stdin` fed in.
    async fn exec(&self, cmd: &str, stdin: Option<&[u8]>) -> Result<ExecOutput, ConnectionError> {
        let mut child = Command::new("/bin/sh")
            .envs(crate::config::settings().from_file())
            .arg("-c")
            .arg(cmd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(ConnectionError::io("cannot run /bin/sh"))?;
        let input = stdin.unwrap_or_default().to_vec();
        let mut pipe = child.stdin.take();
        let feed = async move {
            if let Some(p) = pipe.as_mut() {
                // A command that does not read its input closes the pipe early.
                let _ = p.write_all(&input).await;
            }
            drop(pipe);
        };
        let (_, out) = tokio::join!(feed, child.wait_with_output());
        let out = out.map_err(ConnectionError::io("cannot run /bin/sh"))?;
        Ok(ExecOutput {
            rc: out.status.code().unwrap_or(-1),
            stdout: out.stdout,
            stderr: out.stderr,
        })
    }

    /// Runs the su line `line` with a pseudo-terminal as its stdin, answers su there,
    /// then writes `stdin` to the terminal.
    async fn exec_with_terminal(
        &self,
        line: &str,
        terminal: &Terminal,
        stdin: &[u8],
    ) -> Result<ExecOutput, ConnectionError> {
        let (mut child, mut tty) = spawn_on_terminal(line)?;
        let (Some(mut out), Some(mut err)) = (child.stdout.take(), child.stderr.take()) else {
            return Err(ConnectionError::Remote("su's pipes were not set up".into()));
        };
        let mut answered = terminal
            .answer("local", &mut out, Some(&mut err), &mut tty)
            .await?;
        let read = async {
            let (o, e) = tokio::join!(
                out.read_to_end(&mut answered.stdout),
                err.read_to_end(&mut answered.stderr)
            );
            o.and(e)
        };
        terminal::feed_while(&mut tty, stdin, read)
            .await
            .map_err(ConnectionError::io("cannot read su's output"))?;
        let status = child
            .wait()
            .await
            .map_err(ConnectionError::io("cannot run su"))?;
        drop(tty);
        Ok(ExecOutput {
            rc: status.code().unwrap_or(-1),
            stdout: answered.stdout,
            stderr: answered.stderr,
        })
    }

    /// Runs the command line `line` (which ends in `sandball-shim serve`), writes
    /// `stdin` to it, and opens a session with it; on a pseudo-terminal that `terminal`
    /// answers when su runs on one.
    async fn start_session(
        &self,
        line: &str,
        stdin: &[u8],
        terminal: Option<&Terminal>,
    ) -> Result<Session, ConnectError> {
        if let Some(terminal) = terminal {
            return self.session_on_terminal(line, terminal).await;
        }
        let mut cmd = Command::new("/bin/sh");
        cmd.arg("-c")
            .arg(line)
            .envs(crate::config::settings().from_file());
        // A process group of its own: a Ctrl-C at the terminal reaches the controller
        // alone, which then closes the session, and the shim ends what it started
        // rather than dying under it.
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .process_group(0)
            .kill_on_drop(true);
        let mut child = cmd.spawn().map_err(|source| SessionError::Spawn {
            program: line.to_string(),
            source,
        })?;
        let (Some(mut input), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(SessionError::Broken {
                detail: "the shim's pipes were not set up".into(),
            }
            .into());
        };
        input
            .write_all(stdin)
            .await
            .map_err(|e| SessionError::Broken {
                detail: e.to_string(),
            })?;
        // The child is killed when the session (which owns it) drops.
        Ok(Session::open(Box::new(stdout), Box::new(input), Box::new(child), None).await?)
    }

    /// [`Local::start_session`] through su on a pseudo-terminal: the frames go through
    /// the terminal (raw by then) and come back on the stdout pipe.
    async fn session_on_terminal(
        &self,
        line: &str,
        terminal: &Terminal,
    ) -> Result<Session, ConnectError> {
        let (mut child, mut tty) = spawn_on_terminal(line)?;
        let (Some(mut out), Some(mut err)) = (child.stdout.take(), child.stderr.take()) else {
            return Err(SessionError::Broken {
                detail: "the shim's pipes were not set up".into(),
            }
            .into());
        };
        let answered = terminal
            .answer("local", &mut out, Some(&mut err), &mut tty)
            .await?;
        let reader = std::io::Cursor::new(answered.stdout).chain(out);
        // su's stderr stays open (the shim's own goes nowhere) while the child lives.
        let transport = Box::new((child, err));
        Ok(Session::open(Box::new(reader), Box::new(tty), transport, None).await?)
    }
}

/// `/bin/sh -c line` with a new pseudo-terminal as its stdin, stdout and stderr piped;
/// the child and the terminal's controlling side (non-blocking: a write the command
/// does not read can be given up).
fn spawn_on_terminal(line: &str) -> Result<(Child, pipe::Sender), ConnectionError> {
    use rustix::pty::{OpenptFlags, grantpt, ioctl_tiocgptpeer, openpt, unlockpt};
    let opened =
        openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC).and_then(|main| {
            grantpt(&main)?;
            unlockpt(&main)?;
            let user = ioctl_tiocgptpeer(&main, OpenptFlags::RDWR | OpenptFlags::NOCTTY)?;
            rustix::io::ioctl_fionbio(&main, true)?;
            Ok((main, user))
        });
    let (main, user) = opened
        .map_err(|e| std::io::Error::from_raw_os_error(e.raw_os_error()))
        .map_err(ConnectionError::io("cannot open a pseudo-terminal for su"))?;
    let child = Command::new("/bin/sh")
        .envs(crate::config::settings().from_file())
        .arg("-c")
        .arg(line)
        .stdin(Stdio::from(user))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(ConnectionError::io("cannot run /bin/sh"))?;
    let main = pipe::Sender::from_owned_fd_unchecked(main)
        .map_err(ConnectionError::io("cannot watch a pseudo-terminal"))?;
    Ok((child, main))
}
