//! The `ssh` connection, on russh: one SSH connection per host for the whole run;
//! every command and the shim session are channels of it.
//!
//! Variables, as Ansible reads them: `ansible_host`, `ansible_port`, `ansible_user`,
//! `ansible_ssh_private_key_file`, `ansible_password` (`ansible_ssh_pass`),
//! `ansible_ssh_timeout` (`ansible_timeout`, default 10 s), `ansible_ssh_retries`,
//! `ansible_host_key_checking` (`ANSIBLE_HOST_KEY_CHECKING`), and in
//! `ansible_ssh_common_args` / `ansible_ssh_extra_args` / `ansible_ssh_args`: `-o
//! UserKnownHostsFile=…`, `-o StrictHostKeyChecking=no`, `-o ProxyJump=…` (`-J`: the
//! connection goes through each jump host in turn, each checked and authenticated as
//! the target is), `-o ProxyCommand=…` (the command's stdin and stdout carry the
//! connection), and `-i`/`IdentityFile`, `-l`/`User`, `-p`/`Port` (after the host's own
//! settings, as ansible-core orders them). `~/.ssh/config` comes last, as for ssh: its
//! `Host` sections and global settings give `HostName`, `User`, `Port`, `IdentityFile`,
//! `ProxyJump`, `ProxyCommand`, `UserKnownHostsFile` and `StrictHostKeyChecking` where
//! nothing before did. Options that only tune OpenSSH's own connection handling are passed
//! over; any other option or flag is refused, naming it, rather than ignored. Keys are
//! tried in OpenSSH's order: the given key files, the
//! agent's identities (`SSH_AUTH_SOCK`), the default `~/.ssh/id_*` files, then the
//! password. Host keys are checked against `~/.ssh/known_hosts` (or the configured
//! files); an unknown or changed key is refused. Commands that su runs with a password
//! get a pseudo-terminal on their channel.

mod auth;
mod params;

use super::channel::ChannelReader;
use super::session::{Session, SessionError};
use super::{
    ConnectError, Connection, ConnectionError, ExecOutput, Secret, Settings, as_become, deploy,
    started,
};
use crate::plugins::r#become::Become;
use crate::plugins::r#become::terminal::{self, Terminal};
use crate::plugins::shell::quote_path;
use auth::{AuthFailure, Verifier, authenticate};
use futures::future::LocalBoxFuture;
use params::{Proxy, SshParams};
use russh::{ChannelMsg, client};
use serde_json::{Map, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::AsyncReadExt;

/// Every variable the `ssh` row reads (see [`SshParams::from_vars`]).
pub const VARS: &[&str] = &[
    "ansible_host",
    "ansible_ssh_host",
    "ansible_port",
    "ansible_ssh_port",
    "ansible_user",
    "ansible_ssh_user",
    "ansible_ssh_private_key_file",
    "ansible_private_key_file",
    "ansible_password",
    "ansible_ssh_pass",
    "ansible_ssh_password",
    "ansible_ssh_timeout",
    "ansible_timeout",
    "ansible_ssh_retries",
    "ansible_host_key_checking",
    "ansible_ssh_host_key_checking",
    "ansible_ssh_common_args",
    "ansible_ssh_extra_args",
    "ansible_ssh_args",
];

/// The `ssh` row's settings: the host's [`SshParams`].
pub fn settings(
    host: &str,
    vars: &Map<String, Value>,
) -> Result<Arc<dyn Settings>, super::VarError> {
    Ok(Arc::new(SshParams::from_vars(host, vars)?))
}

impl Settings for SshParams {
    fn key(&self) -> String {
        format!("ssh {}@{}:{}", self.user, self.host, self.port)
    }

    /// An SSH login as `root`.
    fn logs_in_as_root(&self) -> bool {
        self.user == "root"
    }

    fn connect<'a>(
        &'a self,
        password: Option<&'a Secret>,
    ) -> LocalBoxFuture<'a, Result<Arc<dyn Connection>, ConnectionError>> {
        Box::pin(async move {
            let mut params = self.clone();
            if params.password.is_none() {
                params.password = password.cloned();
            }
            Ok(Arc::new(Ssh::connect(params).await?) as Arc<dyn Connection>)
        })
    }
}

type Handle = client::Handle<Verifier>;

/// An authenticated SSH connection.
pub struct Ssh {
    handle: Arc<Handle>,
    params: Arc<SshParams>,
    /// What carries the connection, kept open as long as it is.
    _via: Option<Box<Via>>,
}

/// What carries a proxied connection: the jump host's connection, or the proxy
/// command (killed when the connection is dropped).
enum Via {
    Jump { _connection: Ssh },
    Command { _child: tokio::process::Child },
}

/// A connection attempt in progress.
type Connecting =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<Handle, russh::Error>> + Send>>;

fn unreachable(detail: String) -> ConnectionError {
    ConnectionError::Unreachable {
        plugin: "ssh",
        detail,
    }
}

/// The pause before retry `attempt` (1, 2, …) of a connection: doubling from 250 ms up
/// to 8 s, each drawn at random between half and all of that, so that hosts refused in
/// one burst (sshd's `MaxStartups`) do not come back together.
fn retry_pause(attempt: u32) -> Duration {
    let ceiling = 250u64 << attempt.saturating_sub(1).min(5);
    Duration::from_millis(rand::random_range(ceiling / 2..=ceiling))
}

impl Ssh {
    /// Connects, verifies the host key and authenticates, with `retries` more attempts
    /// when the network fails (never after a refused key or failed authentication),
    /// each after a [`retry_pause`].
    pub async fn connect(params: SshParams) -> Result<Ssh, ConnectionError> {
        // The shim is hashed while the connection is set up.
        deploy::prefetch();
        let params = Arc::new(params);
        let mut attempt = 0;
        loop {
            match Self::attempt(&params).await {
                Ok((handle, via)) => {
                    return Ok(Ssh {
                        handle: Arc::new(handle),
                        params,
                        _via: via,
                    });
                }
                Err((e, retry)) => {
                    if !retry || attempt >= params.retries {
                        return Err(unreachable(e));
                    }
                    attempt += 1;
                    let pause = retry_pause(attempt);
                    tracing::debug!(target = %params.target(), attempt, ?pause, "ssh retry after: {e}");
                    tokio::time::sleep(pause).await;
                }
            }
        }
    }

    /// One attempt; the error says whether another attempt may help.
    async fn attempt(
        params: &Arc<SshParams>,
    ) -> Result<(Handle, Option<Box<Via>>), (String, bool)> {
        let refusal = Arc::new(Mutex::new(None));
        let verifier = Verifier {
            params: params.clone(),
            refusal: refusal.clone(),
        };
        let config = Arc::new(client::Config {
            inactivity_timeout: None,
            keepalive_interval: Some(Duration::from_secs(30)),
            nodelay: true,
            ..Default::default()
        });
        let (host, port) = (params.host.as_str(), params.port);
        let (connect, via): (Connecting, Option<Box<Via>>) = match &params.proxy {
            None => (
                Box::pin(client::connect(config, (host.to_string(), port), verifier)),
                None,
            ),
            Some(Proxy::Jump(jump)) => {
                let through = Box::pin(Ssh::connect((**jump).clone()))
                    .await
                    .map_err(|e| {
                        (
                            format!("through the jump host {}: {e}", jump.target()),
                            false,
                        )
                    })?;
                let channel = through
                    .handle
                    .channel_open_direct_tcpip(host, u32::from(port), "127.0.0.1", 0)
                    .await
                    .map_err(|e| {
                        (
                            format!(
                                "ssh: connect to host {host} port {port} through the jump host {}: {e}",
                                jump.target()
                            ),
                            true,
                        )
                    })?;
                (
                    Box::pin(client::connect_stream(
                        config,
                        channel.into_stream(),
                        verifier,
                    )),
                    Some(Box::new(Via::Jump {
                        _connection: through,
                    })),
                )
            }
            Some(Proxy::Command(cmd)) => {
                let mut child = tokio::process::Command::new("/bin/sh")
                    .envs(crate::config::settings().from_file())
                    .arg("-c")
                    .arg(cmd)
                    .stdin(std::process::Stdio::piped())
                    .stdout(std::process::Stdio::piped())
                    .kill_on_drop(true)
                    .spawn()
                    .map_err(|e| (format!("ProxyCommand '{cmd}' cannot start: {e}"), false))?;
                let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
                    return Err((format!("ProxyCommand '{cmd}' has no pipes"), false));
                };
                (
                    Box::pin(client::connect_stream(
                        config,
                        tokio::io::join(stdout, stdin),
                        verifier,
                    )),
                    Some(Box::new(Via::Command { _child: child })),
                )
            }
        };
        let mut handle = match tokio::time::timeout(params.timeout, connect).await {
            Err(_) => {
                return Err((
                    format!(
                        "ssh: connect to host {host} port {port}: Connection timed out after {:?}",
                        params.timeout
                    ),
                    true,
                ));
            }
            Ok(Err(e)) => {
                if let Some(why) = refusal.lock().unwrap_or_else(|e| e.into_inner()).take() {
                    return Err((why, false));
                }
                // The system's words for it, as ssh gives them ("Connection refused").
                let why = match e {
                    russh::Error::IO(io) => {
                        let text = io.to_string();
                        match io.raw_os_error() {
                            Some(code) => text
                                .strip_suffix(&format!(" (os error {code})"))
                                .unwrap_or(&text)
                                .to_string(),
                            None => text,
                        }
                    }
                    other => other.to_string(),
                };
                return Err((
                    format!("ssh: connect to host {host} port {port}: {why}"),
                    true,
                ));
            }
            Ok(Ok(h)) => h,
        };
        match tokio::time::timeout(params.timeout, authenticate(&mut handle, params)).await {
            Err(_) => Err((
                format!("{}: authentication timed out", params.target()),
                true,
            )),
            Ok(Err(AuthFailure::Refused(e))) => Err((e, false)),
            Ok(Err(AuthFailure::Lost(e))) => Err((e, true)),
            Ok(Ok(())) => Ok((handle, via)),
        }
    }

    /// `user@host:port`, for messages.
    pub fn target(&self) -> String {
        self.params.target()
    }

    /// A fresh channel running `cmd`, on a pseudo-terminal when `terminal` says so.
    async fn channel_running(
        &self,
        cmd: &str,
        terminal: bool,
    ) -> Result<russh::Channel<client::Msg>, ConnectionError> {
        let broken = |e: russh::Error| {
            ConnectionError::Remote(format!(
                "ssh channel to {} failed: {e}",
                self.params.target()
            ))
        };
        let channel = self.handle.channel_open_session().await.map_err(broken)?;
        if terminal {
            request_terminal(&channel).await.map_err(broken)?;
        }
        channel.exec(true, cmd).await.map_err(broken)?;
        Ok(channel)
    }

    /// Runs a command line in a fresh channel.
    async fn exec(&self, cmd: &str, stdin: Option<&[u8]>) -> Result<ExecOutput, ConnectionError> {
        let (mut rx, tx) = self.channel_running(cmd, false).await?.split();
        // Input is written while output is read: a command that exits without reading
        // all of its input (a failed upload) closes the channel, and must not leave the
        // writer waiting for window space that will never come.
        let input = stdin.unwrap_or_default();
        let write = async {
            if !input.is_empty() {
                tx.data(input).await?;
            }
            tx.eof().await
        };
        let read = async {
            let mut out = ExecOutput {
                rc: -1,
                stdout: vec![],
                stderr: vec![],
            };
            while let Some(msg) = rx.wait().await {
                match msg {
                    ChannelMsg::Data { data } => out.stdout.extend_from_slice(&data),
                    ChannelMsg::ExtendedData { data, ext: 1 } => {
                        out.stderr.extend_from_slice(&data)
                    }
                    ChannelMsg::ExitStatus { exit_status } => {
                        out.rc = i32::try_from(exit_status).unwrap_or(-1);
                    }
                    _ => {}
                }
            }
            out
        };
        tokio::pin!(write, read);
        let mut writing = true;
        let out = loop {
            tokio::select! {
                done = &mut write, if writing => {
                    writing = false;
                    if let Err(e) = done {
                        tracing::debug!(target = %self.params.target(), "stdin not fully written: {e}");
                    }
                }
                out = &mut read => break out,
            }
        };
        Ok(out)
    }

    /// Runs the su line `line` in a fresh channel on a pseudo-terminal (its stdout and
    /// stderr are one stream then, as under ansible-core's `ssh -tt`), answers su
    /// there, then writes `stdin` to it.
    async fn exec_with_terminal(
        &self,
        line: &str,
        terminal: &Terminal,
        stdin: &[u8],
    ) -> Result<ExecOutput, ConnectionError> {
        let (rx, tx) = self.channel_running(line, true).await?.split();
        let (mut reader, ending) = ChannelReader::new(rx);
        let mut writer = tx.make_writer();
        let mut answered = terminal
            .answer("ssh", &mut reader, None::<&mut ChannelReader>, &mut writer)
            .await?;
        let read = reader.read_to_end(&mut answered.stdout);
        terminal::feed_while(&mut writer, stdin, read)
            .await
            .map_err(|e| {
                ConnectionError::Remote(format!("ssh channel to {}: {e}", self.target()))
            })?;
        let rc = ending.lock().unwrap_or_else(|e| e.into_inner()).code();
        Ok(ExecOutput {
            rc: rc.and_then(|c| i32::try_from(c).ok()).unwrap_or(-1),
            stdout: answered.stdout,
            stderr: vec![],
        })
    }

    /// Starts `cmd` (which must end in `sandball-shim serve`) in a channel, writes
    /// `stdin` to it, and opens a session over it. The shim's stderr and exit status are
    /// kept for the error of a session that ends; a command that exits with
    /// [`NOT_DEPLOYED`](super::session::NOT_DEPLOYED) before the hello is
    /// [`SessionError::NotDeployed`], with the node's `uname -sm` and what it can
    /// decompress the shim with when its stderr told them (after [`NODE_LINE`](super::session::NODE_LINE)
    /// and [`DECODER_LINE`](super::session::DECODER_LINE)). With `terminal`, the
    /// channel has a pseudo-terminal, where su is answered before the session starts.
    async fn start_session(
        &self,
        cmd: &str,
        stdin: &[u8],
        terminal: Option<&Terminal>,
    ) -> Result<Session, ConnectError> {
        let broken = |e: russh::Error| SessionError::Broken {
            detail: format!("ssh channel to {}: {e}", self.params.target()),
        };
        let channel = self.handle.channel_open_session().await.map_err(broken)?;
        if terminal.is_some() {
            request_terminal(&channel).await.map_err(broken)?;
        }
        channel.exec(true, cmd).await.map_err(broken)?;
        if !stdin.is_empty() {
            channel.data(stdin).await.map_err(broken)?;
        }
        let (rx, tx) = channel.split();
        let (mut reader, ending) = ChannelReader::new(rx);
        let mut writer = tx.make_writer();
        let mut already = vec![];
        if let Some(t) = terminal {
            let none = None::<&mut ChannelReader>;
            already = t
                .answer("ssh", &mut reader, none, &mut writer)
                .await?
                .stdout;
        }
        let reader = std::io::Cursor::new(already).chain(reader);
        let words = ending.clone();
        let last_words =
            Box::new(move || words.lock().unwrap_or_else(|e| e.into_inner()).describe());
        let opened = Session::open(
            Box::new(reader),
            Box::new(writer),
            Box::new(CloseOnDrop {
                channel: Some(tx),
                _connection: self.handle.clone(),
            }),
            Some(last_words),
        )
        .await;
        let ending = ending.lock().unwrap_or_else(|e| e.into_inner());
        match opened {
            Err(SessionError::Broken { .. })
                if ending.code() == Some(super::session::NOT_DEPLOYED) =>
            {
                let node =
                    ending
                        .line_after(super::session::NODE_LINE)
                        .map(|uname| deploy::NodeSaid {
                            uname,
                            decoder: ending
                                .line_after(super::session::DECODER_LINE)
                                .and_then(|d| deploy::decoder_named(&d)),
                        });
                Err(SessionError::NotDeployed { node }.into())
            }
            other => {
                let handle = self.handle.clone();
                Ok(other?.watching(move || handle.is_closed()).compressing())
            }
        }
    }
}

impl Connection for Ssh {
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

    /// `cat > dest`.
    fn put_data<'a>(
        &'a self,
        data: &'a [u8],
        dest: &'a str,
    ) -> LocalBoxFuture<'a, Result<(), ConnectionError>> {
        Box::pin(async move {
            let cmd = format!("cat > {}", quote_path(dest));
            let out = self.exec(&cmd, Some(data)).await?;
            out.success(&format!("cannot write {dest}")).map(drop)
        })
    }

    /// `cat src`.
    fn read<'a>(&'a self, src: &'a str) -> LocalBoxFuture<'a, Result<Vec<u8>, ConnectionError>> {
        Box::pin(async move {
            let cmd = format!("cat {}", quote_path(src));
            let out = self.exec(&cmd, None).await?;
            out.success(&format!("cannot read {src}")).map(|o| o.stdout)
        })
    }

    /// The node's shim is started straight away when the node holds it (no probe: a
    /// warm node costs one channel); only when it does not is it deployed to that
    /// cache (see [`deploy`]), as the user who runs it, and started again. A node
    /// known to have no shim is told so at once.
    fn open_session<'a>(
        &'a self,
        cache_dir: Option<&'a str>,
        become_: Option<&'a Become>,
    ) -> LocalBoxFuture<'a, Result<Session, ConnectError>> {
        Box::pin(async move {
            let cache = match become_ {
                Some(b) => format!("~{}/.sandball", b.user),
                None => cache_dir.unwrap_or(deploy::DEFAULT_CACHE).to_string(),
            };
            let target = self.target();
            if let Some(none) = deploy::known_shimless(&target) {
                return Err(none.into());
            }
            // A node without the shim says what it is in the same breath, so deploying
            // needs no probe of its own.
            let guarded = deploy::start_command(&cache).await?;
            let (line, stdin, tty) = as_become(self, become_, guarded).await?;
            let node = match self.start_session(&line, &stdin, tty.as_ref()).await {
                Err(ConnectError::Session(SessionError::NotDeployed { node })) => node,
                other => return Ok(started(other?, line)),
            };
            let user = become_.map(|b| b.user.as_str());
            let path = deploy::once_per_node(&target, user, &cache, || {
                deploy::ensure_shim(self, become_, &target, &cache, node)
            })
            .await?;
            let serve = format!(
                "exec {} serve --cache-dir {}",
                quote_path(&path),
                quote_path(&cache)
            );
            let (line, stdin, tty) = as_become(self, become_, serve).await?;
            Ok(started(
                self.start_session(&line, &stdin, tty.as_ref()).await?,
                line,
            ))
        })
    }
}

/// Asks for a pseudo-terminal on `channel` (before its command), for su to ask for its
/// password on.
async fn request_terminal(channel: &russh::Channel<client::Msg>) -> Result<(), russh::Error> {
    channel.request_pty(false, "dumb", 80, 24, 0, 0, &[]).await
}

/// Closes the session's channel when the session is dropped (a shim that is still
/// running then sees the end of its input and exits), and keeps the connection open
/// while the session lives.
struct CloseOnDrop {
    channel: Option<russh::ChannelWriteHalf<client::Msg>>,
    _connection: Arc<Handle>,
}

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        if let (Some(tx), Ok(rt)) = (self.channel.take(), tokio::runtime::Handle::try_current()) {
            rt.spawn(async move {
                let _ = tx.close().await;
            });
        }
    }
}
