//! Connection plugins: how the controller reaches a node.
//!
//! A [`Connection`] is what Ansible's connection plugins are: run a command on the node
//! ([`Connection::exec_command`]), write a file there ([`Connection::put_data`]) or read
//! one ([`Connection::read`]). On top of that it opens the node's shim session
//! ([`Connection::open_session`]): a [`session::Session`] speaking wire frames to one
//! `sandball-shim serve` process that stays up for the whole run. Each plugin is a file
//! here (`local.rs`, `ssh/`) and a row of [`registry::CONNECTIONS`], which reads a
//! host's variables into the plugin's settings; [`pool`] keeps the open connections.
//!
//! Commands are shell command lines (`/bin/sh -c` on the node); quote words with
//! [`sandball_pycompat::shell::quote`].

pub mod channel;
pub mod compress;
pub mod deploy;
pub mod local;
pub mod pool;
pub mod registry;
pub mod session;
pub mod ssh;

pub use session::{JobReply, JobStart, RunReply, Session, SessionError};

use crate::plugins::r#become::Become;
use crate::plugins::r#become::terminal::Terminal;
use futures::future::LocalBoxFuture;
use std::sync::Arc;

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

impl From<VarError> for ConnectError {
    fn from(e: VarError) -> ConnectError {
        ConnectError::Vars(Box::new(e))
    }
}

/// A connection variable of a host (or the keyword or option standing for one) that
/// cannot be used: which one, whose, and why.
#[derive(Debug, thiserror::Error)]
pub enum VarError {
    /// Not of the kind the variable takes.
    #[error("{var} of {host} is not {kind}: {value}")]
    NotOfKind {
        /// The variable (or ssh option) that gave it.
        var: String,
        /// The host.
        host: String,
        /// What it was given.
        value: serde_json::Value,
        /// What it must be.
        kind: VarKind,
    },
    /// An ssh argument or option the connection cannot honour.
    #[error("the ssh {what} is not honoured by sandball's ssh connection ({var} of {host})")]
    NotHonoured {
        /// The argument (`argument '-A'`) or option (`option 'forwardagent'`).
        what: String,
        /// The variable that gave it.
        var: String,
        /// The host.
        host: String,
    },
    /// A `ProxyJump` that names no reachable hop.
    #[error("ProxyJump '{spec}': {reason}")]
    BadJump {
        /// The value as given.
        spec: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The template of a variable or keyword failed.
    #[error("{}: {source}", where_set(name, at.as_deref()))]
    Template {
        /// The variable or keyword.
        name: String,
        /// Where the keyword is set (a variable's place is not known).
        at: Option<Box<crate::yaml::location::Location>>,
        /// Why the template failed.
        #[source]
        source: Box<crate::template::TemplateError>,
    },
}

/// What a connection variable must be.
#[derive(Debug, Clone, Copy)]
pub enum VarKind {
    /// A TCP port (`ansible_port`, the ssh option `Port`).
    Port,
    /// A number (`ansible_ssh_timeout`, `ansible_ssh_retries`).
    Number,
    /// One of Ansible's booleans (`ansible_host_key_checking`).
    Boolean,
}

impl std::fmt::Display for VarKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            VarKind::Port => "a port number",
            VarKind::Number => "a number",
            VarKind::Boolean => "a boolean",
        })
    }
}

/// A variable or keyword named with where it is set, when that is known.
fn where_set(name: &str, at: Option<&crate::yaml::location::Location>) -> String {
    match at {
        Some(at) => format!("{name} (at {at})"),
        None => name.to_string(),
    }
}

/// Errors opening a host's connection or its shim session.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// A connection plugin sandball does not have.
    #[error("{}", registry::unsupported(.0))]
    Unsupported(String),
    /// A connection plugin the ansible-core release followed no longer has
    /// (`paramiko` from 2.21): the task fails, as in ansible-core.
    #[error("the connection plugin '{0}' was not found")]
    NotFound(String),
    /// The connection could not be opened.
    #[error("{0}")]
    Connection(#[from] ConnectionError),
    /// The session could not be opened.
    #[error("{0}")]
    Session(#[from] SessionError),
    /// A host variable is wrong.
    #[error("{0}")]
    Vars(Box<VarError>),
    /// The node is of a system or architecture this controller has no shim for.
    #[error("{0}")]
    NoShim(#[from] deploy::NoShim),
}

/// An open connection to one node: what each connection plugin implements (one file
/// of this folder and one row of [`registry::CONNECTIONS`]).
pub trait Connection: Send + Sync {
    /// Runs a shell command line on the node, feeding it `stdin` (none: empty), and
    /// waits for it to end.
    fn exec_command<'a>(
        &'a self,
        cmd: &'a str,
        stdin: Option<&'a [u8]>,
    ) -> LocalBoxFuture<'a, Result<ExecOutput, ConnectionError>>;

    /// Runs the su command line `line` on a terminal that `terminal` answers (see
    /// [`crate::plugins::r#become::terminal`]), then writes `stdin` to it, and waits
    /// for it to end. Over ssh its stderr is part of its stdout, as on any terminal.
    fn exec_on_terminal<'a>(
        &'a self,
        line: &'a str,
        terminal: &'a Terminal,
        stdin: &'a [u8],
    ) -> LocalBoxFuture<'a, Result<ExecOutput, ConnectionError>>;

    /// Writes `data` to the file `dest` on the node (a `~/` prefix is the connection
    /// user's home).
    fn put_data<'a>(
        &'a self,
        data: &'a [u8],
        dest: &'a str,
    ) -> LocalBoxFuture<'a, Result<(), ConnectionError>>;

    /// Reads the node's file `src` (a `~/` prefix is the connection user's home).
    fn read<'a>(&'a self, src: &'a str) -> LocalBoxFuture<'a, Result<Vec<u8>, ConnectionError>>;

    /// Starts `sandball-shim serve` on the node and opens a session with it, as the
    /// become user when there is one. The shim keeps its cache in `cache_dir` on the
    /// node (default `~/.sandball`; the become user's own `~user/.sandball` under
    /// become).
    fn open_session<'a>(
        &'a self,
        cache_dir: Option<&'a str>,
        become_: Option<&'a Become>,
    ) -> LocalBoxFuture<'a, Result<Session, ConnectError>>;
}

/// A host's settings for one connection plugin, read from its variables by the
/// plugin's row of [`registry::CONNECTIONS`]: what opens a [`Connection`].
pub trait Settings: std::fmt::Debug + Send + Sync {
    /// What tells two ways of reaching a host apart (the pool keeps one connection per
    /// host and way: a task's `connection: local` does not reuse an SSH one).
    fn key(&self) -> String;

    /// Whether the node's login user is root, as the controller knows it without
    /// asking the node.
    fn logs_in_as_root(&self) -> bool;

    /// Whether the node is the controller's own machine.
    fn local(&self) -> bool {
        false
    }

    /// Opens the connection; `password` is the one typed at `-k/--ask-pass`, for a
    /// plugin whose settings name none.
    fn connect<'a>(
        &'a self,
        password: Option<&'a Secret>,
    ) -> LocalBoxFuture<'a, Result<Arc<dyn Connection>, ConnectionError>>;
}

/// `cmd` as the become user (if any): the command line, what its stdin starts with,
/// and the answers of the terminal su runs on.
async fn as_become(
    conn: &dyn Connection,
    become_: Option<&Become>,
    cmd: String,
) -> Result<(String, Vec<u8>, Option<Terminal>), ConnectionError> {
    match become_ {
        Some(b) => b.session_line(conn, &cmd).await,
        None => Ok((cmd, vec![], None)),
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
    async fn local_exec_put_read() {
        let dir = tempfile::tempdir().unwrap();
        let c = local::Local;
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
        assert_eq!(c.read(remote).await.unwrap(), b"payload");

        let missing = c.read("/nonexistent/x").await.unwrap_err();
        assert!(missing.to_string().contains("/nonexistent/x"), "{missing}");
    }
}
