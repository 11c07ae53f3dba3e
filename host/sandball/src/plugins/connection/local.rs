//! The `local` connection: the node is the controller's own machine. Commands run
//! under `/bin/sh -c`; the shim runs as a child process whose stdin/stdout carry the
//! session.

use super::session::{Session, SessionError};
use super::{ConnectionError, ExecOutput};
use std::path::PathBuf;
use std::process::Stdio;
use tokio::io::AsyncWriteExt;
use tokio::process::Command;

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
    /// `stdin` to it, and opens a session with it.
    pub async fn open_session(&self, line: &str, stdin: &[u8]) -> Result<Session, SessionError> {
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
            });
        };
        input
            .write_all(stdin)
            .await
            .map_err(|e| SessionError::Broken {
                detail: e.to_string(),
            })?;
        // The child is killed when the session (which owns it) drops.
        Session::open(Box::new(stdout), Box::new(input), Box::new(child), None).await
    }
}
