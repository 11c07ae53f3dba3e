//! Connection plugins: how the controller reaches a node.
//!
//! A [`Connection`] is what Ansible's connection plugins are: run a command on the node
//! ([`Connection::exec_command`]), copy a file to it ([`Connection::put_file`]) or from
//! it ([`Connection::fetch_file`]). On top of that it opens the node's shim session
//! ([`Connection::open_session`]): a [`session::Session`] speaking wire frames to one
//! `sandball-shim serve` process that stays up for the whole run.
//!
//! Commands are shell command lines (`/bin/sh -c` on the node); quote words with
//! [`crate::plugins::shell::quote`].

pub mod channel;
pub mod deploy;
pub mod local;
pub mod pool;
pub mod session;
pub mod ssh;

pub use session::{JobReply, JobStart, RunReply, Session, SessionError};

use crate::plugins::r#become::Become;
use crate::plugins::r#become::terminal::Terminal;
use crate::plugins::shell;
use pool::ConnectError;
use std::path::Path;

/// A password: compared and used, never printed (its `Debug` hides it).
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(pub String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(<hidden>)")
    }
}

/// What a command run on the node gave back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecOutput {
    /// Exit status (-1 when the command was killed by a signal).
    pub rc: i32,
    /// Its standard output.
    pub stdout: Vec<u8>,
    /// Its standard error.
    pub stderr: Vec<u8>,
}

impl ExecOutput {
    /// The output of a command that had to succeed; else an error saying `what` failed,
    /// with the command's stderr and exit status.
    pub fn success(self, what: &str) -> Result<ExecOutput, ConnectionError> {
        if self.rc == 0 {
            return Ok(self);
        }
        Err(ConnectionError::Remote(format!(
            "{what}: {} (rc={})",
            String::from_utf8_lossy(&self.stderr).trim(),
            self.rc
        )))
    }
}

/// Errors of a connection.
#[derive(Debug, thiserror::Error)]
pub enum ConnectionError {
    /// The node cannot be reached or authenticated: the host is UNREACHABLE.
    #[error("Failed to connect to the host via {plugin}: {detail}")]
    Unreachable {
        /// The connection plugin (`ssh`, `local`).
        plugin: &'static str,
        /// What went wrong.
        detail: String,
    },
    /// A local operation failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// Why it failed.
        source: std::io::Error,
    },
    /// The node refused or broke an operation.
    #[error("{0}")]
    Remote(String),
    /// Becoming the other user failed (su refused the password): the task fails, in
    /// ansible-core's words.
    #[error("Task failed: {0}")]
    Become(String),
}

impl ConnectionError {
    fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> ConnectionError {
        let what = what.into();
        move |source| ConnectionError::Io { what, source }
    }
}

/// An open connection to one node.
pub enum Connection {
    /// The controller's own machine.
    Local(local::Local),
    /// A node reached over SSH.
    Ssh(ssh::Ssh),
}

impl Connection {
    /// The plugin's name as Ansible spells it.
    pub fn plugin(&self) -> &'static str {
        match self {
            Connection::Local(_) => "local",
            Connection::Ssh(_) => "ssh",
        }
    }

    /// Runs a shell command line on the node, feeding it `stdin` (none: empty), and
    /// waits for it to end.
    pub async fn exec_command(
        &self,
        cmd: &str,
        stdin: Option<&[u8]>,
    ) -> Result<ExecOutput, ConnectionError> {
        match self {
            Connection::Local(c) => c.exec_command(cmd, stdin).await,
            Connection::Ssh(c) => c.exec_command(cmd, stdin).await,
        }
    }

    /// Runs the su command line `line` on a terminal that `terminal` answers (see
    /// [`crate::plugins::r#become::terminal`]), then writes `stdin` to it, and waits
    /// for it to end. Over ssh its stderr is part of its stdout, as on any terminal.
    pub async fn exec_on_terminal(
        &self,
        line: &str,
        terminal: &Terminal,
        stdin: &[u8],
    ) -> Result<ExecOutput, ConnectionError> {
        match self {
            Connection::Local(c) => c.exec_on_terminal(line, terminal, stdin).await,
            Connection::Ssh(c) => c.exec_on_terminal(line, terminal, stdin).await,
        }
    }

    /// Copies the controller's file `src` to `dest` on the node (a `~/` prefix is the
    /// connection user's home).
    pub async fn put_file(&self, src: &Path, dest: &str) -> Result<(), ConnectionError> {
        let data = tokio::fs::read(src)
            .await
            .map_err(ConnectionError::io(format!(
                "cannot read {}",
                src.display()
            )))?;
        self.put_data(&data, dest).await
    }

    /// Writes `data` to the file `dest` on the node (a `~/` prefix is the connection
    /// user's home).
    pub async fn put_data(&self, data: &[u8], dest: &str) -> Result<(), ConnectionError> {
        match self {
            Connection::Local(c) => c.put_data(data, dest).await,
            Connection::Ssh(c) => c.put_data(data, dest).await,
        }
    }

    /// Copies the node's file `src` to `dest` on the controller.
    pub async fn fetch_file(&self, src: &str, dest: &Path) -> Result<(), ConnectionError> {
        let data = match self {
            Connection::Local(c) => c.read(src).await?,
            Connection::Ssh(c) => c.read(src).await?,
        };
        tokio::fs::write(dest, data)
            .await
            .map_err(ConnectionError::io(format!(
                "cannot write {}",
                dest.display()
            )))
    }

    /// Starts `sandball-shim serve` on the node and opens a session with it, as the
    /// become user when there is one. The shim keeps its cache in `cache_dir` on the
    /// node (default `~/.sandball`; the become user's own `~user/.sandball` under
    /// become). Over SSH the shim is started straight away when the node holds it (no
    /// probe: a warm node costs one channel); only when it does not is it deployed to
    /// that cache (see [`deploy`]), as the user who runs it, and started again.
    pub async fn open_session(
        &self,
        cache_dir: Option<&str>,
        become_: Option<&Become>,
    ) -> Result<Session, ConnectError> {
        let c = match self {
            Connection::Local(c) => {
                let cache = match become_ {
                    // The user name is checked to be a plain word, so `~user` expands.
                    Some(b) => Some(format!("~{}/.sandball", b.user)),
                    None => cache_dir.map(shell::quote_path),
                };
                let shim = local::shim_path().display().to_string();
                let mut cmd = format!("exec {} serve", shell::quote_path(&shim));
                if let Some(cache) = cache {
                    cmd = format!("{cmd} --cache-dir {cache}");
                }
                let (line, stdin, tty) = self.as_become(become_, cmd).await?;
                return Ok(started(
                    c.open_session(&line, &stdin, tty.as_ref()).await?,
                    line,
                ));
            }
            Connection::Ssh(c) => c,
        };
        let cache = match become_ {
            Some(b) => format!("~{}/.sandball", b.user),
            None => cache_dir.unwrap_or(deploy::DEFAULT_CACHE).to_string(),
        };
        let shim = deploy::shim_binary().await?;
        let path = shell::quote_path(&deploy::shim_path(&cache, &shim.sha256));
        let serve = format!(
            "exec {path} serve --cache-dir {}",
            shell::quote_path(&cache)
        );
        // A node without the shim says what it is in the same breath, so deploying
        // needs no probe of its own.
        let guarded = format!(
            "[ -x {path} ] || {{ echo 'sandball-shim is not deployed here' >&2; echo \"{}$(uname -sm)\" >&2; exit {}; }}; {serve}",
            session::NODE_LINE,
            session::NOT_DEPLOYED
        );
        let (line, stdin, tty) = self.as_become(become_, guarded).await?;
        let node = match c.open_session(&line, &stdin, tty.as_ref()).await {
            Err(ConnectError::Session(SessionError::NotDeployed { node })) => node,
            other => return Ok(started(other?, line)),
        };
        let target = c.target();
        let user = become_.map(|b| b.user.as_str());
        deploy::once_per_node(&target, user, &cache, || {
            deploy::ensure_shim(self, become_, &target, &cache, node.as_deref())
        })
        .await?;
        let (line, stdin, tty) = self.as_become(become_, serve).await?;
        Ok(started(
            c.open_session(&line, &stdin, tty.as_ref()).await?,
            line,
        ))
    }

    /// `cmd` as the become user (if any): the command line, what its stdin starts
    /// with, and the answers of the terminal su runs on.
    async fn as_become(
        &self,
        become_: Option<&Become>,
        cmd: String,
    ) -> Result<(String, Vec<u8>, Option<Terminal>), ConnectionError> {
        match become_ {
            Some(b) => b.session_line(self, &cmd).await,
            None => Ok((cmd, vec![], None)),
        }
    }
}

/// A session that `line` started.
fn started(mut session: Session, line: String) -> Session {
    session.command = line;
    session
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn local_exec_put_fetch() {
        let dir = tempfile::tempdir().unwrap();
        let c = Connection::Local(local::Local);
        let out = c
            .exec_command(
                "read x; echo \"got $x\"; echo err >&2; exit 3",
                Some(b"hi\n"),
            )
            .await
            .unwrap();
        assert_eq!(out.rc, 3);
        assert_eq!(out.stdout, b"got hi\n");
        assert_eq!(out.stderr, b"err\n");

        let remote = dir.path().join("remote.txt");
        let remote = remote.to_str().unwrap();
        c.put_data(b"payload", remote).await.unwrap();
        let back = dir.path().join("back.txt");
        c.fetch_file(remote, &back).await.unwrap();
        assert_eq!(std::fs::read(&back).unwrap(), b"payload");

        let missing = c.fetch_file("/nonexistent/x", &back).await.unwrap_err();
        assert!(missing.to_string().contains("/nonexistent/x"), "{missing}");
    }
}
