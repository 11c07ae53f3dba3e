//! The `local` connection: the node is the controller's own machine. Commands run
//! under `/bin/sh -c`; the shim runs as a child process whose stdin/stdout carry the
//! session. A su that asks for a password gets a pseudo-terminal as its stdin (its
//! stdout and stderr stay pipes, as under ansible-core's `local`).

use super::pool::ConnectError;
use super::session::{Session, SessionError};
use super::{ConnectionError, ExecOutput};
use crate::plugins::r#become::terminal::{self, Terminal};
use std::path::PathBuf;
use std::process::Stdio;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::unix::pipe;
use tokio::process::{Child, Command};

/// Where the shim binary is: `$SANDBALL_SHIM`, else `sandball-shim` beside the
/// `sandball` executable.
pub fn shim_path() -> PathBuf {
    if let Some(p) = std::env::var_os("SANDBALL_SHIM") {
        return PathBuf::from(p);
    }
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|d| d.join("sandball-shim")))
        .unwrap_or_else(|| PathBuf::from("sandball-shim"))
}

/// The local connection (it holds nothing: every operation is a process or a file).
pub struct Local;

impl Local {
    /// `/bin/sh -c cmd` with `stdin` fed in.
    pub async fn exec_command(
        &self,
        cmd: &str,
        stdin: Option<&[u8]>,
    ) -> Result<ExecOutput, ConnectionError> {
        let mut child = Command::new("/bin/sh")
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
    pub async fn exec_on_terminal(
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

    /// Writes a file.
    pub async fn put_data(&self, data: &[u8], dest: &str) -> Result<(), ConnectionError> {
        tokio::fs::write(crate::local_files::expand_user(dest), data)
            .await
            .map_err(ConnectionError::io(format!("cannot write {dest}")))
    }

    /// Reads a file.
    pub async fn read(&self, src: &str) -> Result<Vec<u8>, ConnectionError> {
        tokio::fs::read(crate::local_files::expand_user(src))
            .await
            .map_err(ConnectionError::io(format!("cannot read {src}")))
    }

    /// Runs the command line `line` (which ends in `sandball-shim serve`), writes
    /// `stdin` to it, and opens a session with it; on a pseudo-terminal that `terminal`
    /// answers when su runs on one.
    pub async fn open_session(
        &self,
        line: &str,
        stdin: &[u8],
        terminal: Option<&Terminal>,
    ) -> Result<Session, ConnectError> {
        if let Some(terminal) = terminal {
            return self.session_on_terminal(line, terminal).await;
        }
        let mut cmd = Command::new("/bin/sh");
        cmd.arg("-c").arg(line);
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        let mut child = cmd.spawn().map_err(|source| SessionError::Spawn {
            program: shim_path().display().to_string(),
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

    /// [`Local::open_session`] through su on a pseudo-terminal: the frames go through
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
