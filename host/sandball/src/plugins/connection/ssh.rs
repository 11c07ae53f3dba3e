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

use super::channel::ChannelReader;
use super::pool::ConnectError;
use super::session::{Session, SessionError};
use super::{ConnectionError, ExecOutput, Secret};
use crate::plugins::r#become::terminal::{self, Terminal};
use russh::keys::{HashAlg, PrivateKeyWithHashAlg, PublicKey, PublicKeyOrCertificate};
use russh::{ChannelMsg, client};
use serde_json::{Map, Value};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::AsyncReadExt;

/// How to reach one host over SSH.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SshParams {
    /// Address or name to connect to (`ansible_host`, else the inventory name).
    pub host: String,
    /// `ansible_port` (22).
    pub port: u16,
    /// `ansible_user` (else the controller's user).
    pub user: String,
    /// `ansible_ssh_private_key_file`.
    pub key_files: Vec<PathBuf>,
    /// `ansible_password`.
    pub password: Option<Secret>,
    /// Whether host keys are verified (`host_key_checking`, default true).
    pub host_key_checking: bool,
    /// Where known host keys are recorded.
    pub known_hosts: Vec<PathBuf>,
    /// Connect timeout, per attempt.
    pub timeout: Duration,
    /// Extra attempts after a failed connection (`ansible_ssh_retries`, default 0).
    pub retries: u32,
    /// What the connection goes through (`ProxyJump`, `ProxyCommand`), if anything.
    pub proxy: Option<Proxy>,
}

/// What an SSH connection goes through to reach its host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Proxy {
    /// A jump host (`ProxyJump`), itself reached through its own proxy if it has one.
    Jump(Box<SshParams>),
    /// A command whose stdin and stdout carry the connection (`ProxyCommand`), its
    /// `%h`, `%p`, `%r` and `%%` already replaced.
    Command(String),
}

/// ssh options sandball carries out (the first value of each counts, as in ssh).
const HONOURED_OPTIONS: &[&str] = &[
    "identityfile",
    "port",
    "proxycommand",
    "proxyjump",
    "stricthostkeychecking",
    "user",
    "userknownhostsfile",
];

/// ssh options that only tune how OpenSSH handles its own connection (multiplexing,
/// keepalives, compression, logging, which methods it tries): sandball keeps one
/// connection per host and tries keys and passwords itself, so it passes them over.
const TUNING_OPTIONS: &[&str] = &[
    "addkeystoagent",
    "batchmode",
    "checkhostip",
    "compression",
    "connectionattempts",
    "connecttimeout",
    "controlmaster",
    "controlpath",
    "controlpersist",
    "gssapiauthentication",
    "gssapidelegatecredentials",
    "hashknownhosts",
    "identitiesonly",
    "ipqos",
    "kbdinteractiveauthentication",
    "loglevel",
    "numberofpasswordprompts",
    "passwordauthentication",
    "preferredauthentications",
    "pubkeyauthentication",
    "serveralivecountmax",
    "serveraliveinterval",
    "tcpkeepalive",
    "updatehostkeys",
    "verifyhostkeydns",
    "visualhostkey",
];

/// ssh flags without a value that only tune OpenSSH's output or its terminal.
const TUNING_FLAGS: &[&str] = &[
    "-C", "-q", "-T", "-t", "-tt", "-v", "-vv", "-vvv", "-n", "-x",
];

fn var<'a>(vars: &'a Map<String, Value>, names: &[&str]) -> Option<&'a Value> {
    names
        .iter()
        .find_map(|n| vars.get(*n).filter(|v| !v.is_null()))
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn boolean(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        other => match text(other).to_ascii_lowercase().as_str() {
            "yes" | "true" | "on" | "1" | "y" | "t" => Some(true),
            "no" | "false" | "off" | "0" | "n" | "f" => Some(false),
            _ => None,
        },
    }
}

fn home() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/"))
}

fn expand(path: &str) -> PathBuf {
    match path.strip_prefix("~/") {
        Some(rest) => home().join(rest),
        None => PathBuf::from(path),
    }
}

/// The `-o Key=Value` options in ssh arguments, keys lowercased, with `-J x` as
/// `proxyjump`; a flag sandball cannot honour is an error naming it.
fn ssh_options(args: &str) -> Result<Vec<(String, String)>, String> {
    let words = shell_words(args);
    let mut out = vec![];
    let mut it = words.iter();
    while let Some(w) = it.next() {
        let opt = match w.as_str() {
            "-o" => it.next().cloned(),
            "-J" => it.next().map(|j| format!("ProxyJump={j}")),
            "-i" => it.next().map(|f| format!("IdentityFile={f}")),
            "-l" => it.next().map(|u| format!("User={u}")),
            "-p" => it.next().map(|p| format!("Port={p}")),
            w if w.starts_with("-o") => w.strip_prefix("-o").map(str::to_string),
            w if w.starts_with("-J") => w.strip_prefix("-J").map(|j| format!("ProxyJump={j}")),
            w if TUNING_FLAGS.contains(&w) => None,
            other => {
                return Err(format!(
                    "the ssh argument '{other}' is not honoured by sandball's ssh connection"
                ));
            }
        };
        if let Some((k, v)) = opt.as_deref().and_then(|o| o.split_once(['=', ' '])) {
            out.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    Ok(out)
}

/// The jump hosts of a `ProxyJump` value (`[user@]host[:port]`, comma-separated, the
/// first reached first), each as the next one's proxy.
fn jump_chain(spec: &str, target: &SshParams) -> Result<Option<Proxy>, String> {
    if spec.eq_ignore_ascii_case("none") {
        return Ok(None);
    }
    let mut proxy = None;
    for hop in spec.split(',').map(str::trim) {
        let hop = hop.strip_prefix("ssh://").unwrap_or(hop);
        let (user, rest) = match hop.rsplit_once('@') {
            Some((u, r)) => (u.to_string(), r),
            None => (local_user(), hop),
        };
        let (host, port) = match rest.strip_prefix('[').and_then(|r| r.split_once(']')) {
            Some((h, p)) => (h, p.strip_prefix(':')),
            None => match rest.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (rest, None),
            },
        };
        let port = match port {
            None => 22,
            Some(p) => p
                .parse::<u16>()
                .map_err(|_| format!("ProxyJump '{spec}': '{p}' is not a port number"))?,
        };
        if host.is_empty() {
            return Err(format!("ProxyJump '{spec}' names no host"));
        }
        proxy = Some(Proxy::Jump(Box::new(SshParams {
            host: host.to_string(),
            port,
            user,
            key_files: target.key_files.clone(),
            password: None,
            host_key_checking: target.host_key_checking,
            known_hosts: target.known_hosts.clone(),
            timeout: target.timeout,
            retries: 0,
            proxy,
        })));
    }
    Ok(proxy)
}

/// The controller's user, whom ssh logs in as unless told otherwise.
fn local_user() -> String {
    std::env::var("USER").unwrap_or_else(|_| "root".into())
}

fn shell_words(s: &str) -> Vec<String> {
    crate::inventory::shell_split::shell_split(s)
        .unwrap_or_else(|_| s.split_whitespace().map(str::to_string).collect::<Vec<_>>())
}

impl SshParams {
    /// The parameters a host's variables give.
    pub fn from_vars(host: &str, vars: &Map<String, Value>) -> Result<SshParams, String> {
        let address = var(vars, &["ansible_host", "ansible_ssh_host"])
            .map(text)
            .unwrap_or_else(|| host.to_string());
        let port_of = |v: &Value, what: &str| {
            text(v)
                .parse::<u16>()
                .map_err(|_| format!("{what} of {host} is not a port number: {v}"))
        };
        let mut port = match var(vars, &["ansible_port", "ansible_ssh_port"]) {
            None => None,
            Some(v) => Some(port_of(v, "ansible_port")?),
        };
        let user = var(vars, &["ansible_user", "ansible_ssh_user"]).map(text);
        let mut key_files = var(
            vars,
            &["ansible_ssh_private_key_file", "ansible_private_key_file"],
        )
        .map(|v| vec![expand(&text(v))])
        .unwrap_or_default();
        let password = var(
            vars,
            &[
                "ansible_password",
                "ansible_ssh_pass",
                "ansible_ssh_password",
            ],
        )
        .map(|v| Secret(text(v)));
        let seconds = |names: &[&str], default: f64| -> Result<f64, String> {
            match var(vars, names) {
                None => Ok(default),
                Some(v) => text(v)
                    .parse::<f64>()
                    .map_err(|_| format!("{} of {host} is not a number: {v}", names[0])),
            }
        };
        let timeout = seconds(&["ansible_ssh_timeout", "ansible_timeout"], 10.0)?;
        let retries = seconds(&["ansible_ssh_retries"], 0.0)? as u32;
        let mut host_key_checking = match var(
            vars,
            &["ansible_host_key_checking", "ansible_ssh_host_key_checking"],
        ) {
            Some(v) => boolean(v).ok_or_else(|| {
                format!("ansible_host_key_checking of {host} is not a boolean: {v}")
            })?,
            None => std::env::var("ANSIBLE_HOST_KEY_CHECKING")
                .ok()
                .and_then(|s| boolean(&Value::String(s)))
                .unwrap_or(true),
        };
        // The options the ssh arguments give, then ~/.ssh/config's: ssh's order, in which
        // the first value of each setting counts (every `IdentityFile` adds a key).
        let mut options = vec![];
        for name in [
            "ansible_ssh_common_args",
            "ansible_ssh_extra_args",
            "ansible_ssh_args",
        ] {
            let Some(args) = vars.get(name).filter(|v| !v.is_null()).map(text) else {
                continue;
            };
            let refused = |why: String| format!("{why} ({name} of {host})");
            for (k, v) in ssh_options(&args).map_err(refused)? {
                if !HONOURED_OPTIONS.contains(&k.as_str()) && !TUNING_OPTIONS.contains(&k.as_str())
                {
                    return Err(refused(format!(
                        "the ssh option '{k}' is not honoured by sandball's ssh connection"
                    )));
                }
                options.push((k, v));
            }
        }
        let config = ssh_config_for(&address);
        let first = |key: &str| {
            options
                .iter()
                .chain(&config)
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.as_str())
        };
        // The host's own settings come first on ssh's command line, as ansible-core
        // puts them.
        if port.is_none()
            && let Some(p) = first("port")
        {
            port = Some(port_of(&Value::String(p.into()), "the ssh option Port")?);
        }
        let user = user.or_else(|| first("user").map(str::to_string));
        key_files.extend(
            options
                .iter()
                .chain(&config)
                .filter(|(k, _)| k == "identityfile")
                .map(|(_, v)| expand(v)),
        );
        // Each UserKnownHostsFile of the arguments, else the config's, else ssh's own.
        let files = |settings: &[(String, String)]| -> Vec<PathBuf> {
            settings
                .iter()
                .filter(|(k, _)| k == "userknownhostsfile")
                .flat_map(|(_, v)| shell_words(v))
                .map(|p| expand(&p))
                .collect()
        };
        let mut known_hosts = files(&options);
        if known_hosts.is_empty() {
            known_hosts = files(&config);
        }
        if known_hosts.is_empty() {
            known_hosts.push(home().join(".ssh/known_hosts"));
        }
        if first("stricthostkeychecking")
            .is_some_and(|v| matches!(v.to_ascii_lowercase().as_str(), "no" | "off"))
        {
            host_key_checking = false;
        }
        let address = match first("hostname") {
            Some(name) => name.replace("%h", &address),
            None => address,
        };
        let (jump, command) = (
            first("proxyjump").map(str::to_string),
            first("proxycommand").map(str::to_string),
        );
        let mut params = SshParams {
            host: address,
            port: port.unwrap_or(22),
            user: user.unwrap_or_else(local_user),
            key_files,
            password,
            host_key_checking,
            known_hosts,
            timeout: Duration::from_secs_f64(timeout.max(0.1)),
            retries,
            proxy: None,
        };
        params.proxy = match (jump, command) {
            (Some(spec), _) => jump_chain(&spec, &params)?,
            (None, Some(cmd)) if !cmd.eq_ignore_ascii_case("none") => {
                Some(Proxy::Command(proxy_command(&cmd, &params)))
            }
            _ => None,
        };
        Ok(params)
    }

    fn target(&self) -> String {
        format!("{}@{}:{}", self.user, self.host, self.port)
    }
}

/// A `ProxyCommand` with OpenSSH's `%h`, `%p`, `%r` and `%%` replaced.
fn proxy_command(cmd: &str, params: &SshParams) -> String {
    let mut out = String::new();
    let mut chars = cmd.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('h') => out.push_str(&params.host),
            Some('p') => out.push_str(&params.port.to_string()),
            Some('r') => out.push_str(&params.user),
            Some('%') => out.push('%'),
            Some(other) => {
                out.push('%');
                out.push(other);
            }
            None => out.push('%'),
        }
    }
    out
}

/// The settings `~/.ssh/config` gives host `dest` (as ssh is asked to reach it), keys
/// lowercased: for each key the first value that applies, as OpenSSH takes it (every
/// `IdentityFile` that applies, in order). Settings outside any section apply to every
/// host, `Host` sections to the hosts their patterns match (`*`, `?`, `!`); `Match`
/// sections are not read. The file is read once per run (every task asks again for its
/// host's connection).
fn ssh_config_for(dest: &str) -> Vec<(String, String)> {
    static CONFIG: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let config = CONFIG
        .get_or_init(|| std::fs::read_to_string(home().join(".ssh/config")).unwrap_or_default());
    ssh_config_settings(config, dest)
}

/// [`ssh_config_for`] on the text of a config file.
fn ssh_config_settings(config: &str, dest: &str) -> Vec<(String, String)> {
    let mut applies = true;
    let mut out: Vec<(String, String)> = vec![];
    for line in config.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((k, v)) = line.split_once(['=', ' ', '\t']) else {
            continue;
        };
        let (k, v) = (
            k.trim().to_ascii_lowercase(),
            v.trim().trim_start_matches('=').trim().to_string(),
        );
        match k.as_str() {
            "host" => applies = host_patterns_match(&v, dest),
            "match" => applies = false,
            _ if !applies => {}
            "identityfile" => out.push((k, v)),
            _ if out.iter().any(|(seen, _)| *seen == k) => {}
            _ => out.push((k, v)),
        }
    }
    out
}

/// Whether `dest` matches a `Host` line's patterns: one of them matches and no negated
/// one does.
fn host_patterns_match(patterns: &str, dest: &str) -> bool {
    let dest = dest.to_lowercase();
    let glob_match = |p: &str, d: &str| sandball_wire::ssh::pattern_match(&p.to_lowercase(), d);
    let mut matched = false;
    for pattern in patterns.split_whitespace() {
        match pattern.strip_prefix('!') {
            Some(negated) if glob_match(negated, &dest) => return false,
            Some(_) => {}
            None => matched |= glob_match(pattern, &dest),
        }
    }
    matched
}

/// Checks server keys and remembers why one was refused.
struct Verifier {
    params: Arc<SshParams>,
    refusal: Arc<Mutex<Option<String>>>,
}

impl Verifier {
    fn verdict(&self, key: &PublicKey) -> Result<(), String> {
        if !self.params.host_key_checking {
            return Ok(());
        }
        let (host, port) = (&self.params.host, self.params.port);
        let fingerprint = key.fingerprint(HashAlg::Sha256);
        for file in &self.params.known_hosts {
            match russh::keys::check_known_hosts_path(host, port, key, file) {
                Ok(true) => return Ok(()),
                Ok(false) => {}
                Err(russh::keys::Error::KeyChanged { line }) => {
                    return Err(format!(
                        "host key verification failed: REMOTE HOST IDENTIFICATION HAS CHANGED for {host} port {port}: it offered {} {fingerprint}, which does not match the key recorded in {}:{line}. Someone could be eavesdropping (man-in-the-middle), or the host key has just been changed; refusing to connect",
                        key.algorithm(),
                        file.display()
                    ));
                }
                Err(e) => {
                    return Err(format!(
                        "host key verification failed: cannot read {}: {e}",
                        file.display()
                    ));
                }
            }
        }
        let files: Vec<String> = self
            .params
            .known_hosts
            .iter()
            .map(|f| f.display().to_string())
            .collect();
        Err(format!(
            "host key verification failed: the {} key of {host} port {port} ({fingerprint}) is not known (looked in {}). Check it and add it (ssh-keyscan -p {port} {host} >> ~/.ssh/known_hosts), or set host_key_checking = false (ANSIBLE_HOST_KEY_CHECKING=False) to skip the check",
            key.algorithm(),
            files.join(", ")
        ))
    }
}

impl client::Handler for Verifier {
    type Error = russh::Error;

    async fn check_server_key(
        &mut self,
        server_key: &PublicKeyOrCertificate,
    ) -> Result<bool, Self::Error> {
        let key = match server_key {
            PublicKeyOrCertificate::PublicKey { key, .. } => key.clone(),
            PublicKeyOrCertificate::Certificate(c) => PublicKey::new(c.public_key().clone(), ""),
        };
        match self.verdict(&key) {
            Ok(()) => Ok(true),
            Err(why) => {
                *self.refusal.lock().unwrap_or_else(|e| e.into_inner()) = Some(why);
                Ok(false)
            }
        }
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

impl Ssh {
    /// Connects, verifies the host key and authenticates, with `retries` more attempts
    /// when the network fails (never after a refused key or failed authentication).
    pub async fn connect(params: SshParams) -> Result<Ssh, ConnectionError> {
        // The shim is hashed while the connection is set up.
        super::deploy::prefetch();
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
                    tracing::debug!(target = %params.target(), attempt, "ssh retry after: {e}");
                    tokio::time::sleep(Duration::from_millis(500 * u64::from(attempt))).await;
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
            Ok(Err(e)) => Err((e, false)),
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
    pub async fn exec_command(
        &self,
        cmd: &str,
        stdin: Option<&[u8]>,
    ) -> Result<ExecOutput, ConnectionError> {
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
    pub async fn exec_on_terminal(
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

    /// Writes a file on the node (`cat > dest`).
    pub async fn put_data(&self, data: &[u8], dest: &str) -> Result<(), ConnectionError> {
        let cmd = format!("cat > {}", crate::plugins::shell::quote_path(dest));
        let out = self.exec_command(&cmd, Some(data)).await?;
        out.success(&format!("cannot write {dest}")).map(drop)
    }

    /// Reads a file on the node (`cat src`).
    pub async fn read(&self, src: &str) -> Result<Vec<u8>, ConnectionError> {
        let cmd = format!("cat {}", crate::plugins::shell::quote_path(src));
        let out = self.exec_command(&cmd, None).await?;
        out.success(&format!("cannot read {src}")).map(|o| o.stdout)
    }

    /// Starts `cmd` (which must end in `sandball-shim serve`) in a channel, writes
    /// `stdin` to it, and opens a session over it. The shim's stderr and exit status are
    /// kept for the error of a session that ends; a command that exits with
    /// [`NOT_DEPLOYED`](super::session::NOT_DEPLOYED) before the hello is
    /// [`SessionError::NotDeployed`], with the node's `uname -sm` when its stderr
    /// told it (after [`NODE_LINE`](super::session::NODE_LINE)). With `terminal`, the
    /// channel has a pseudo-terminal, where su is answered before the session starts.
    pub async fn open_session(
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
                Err(SessionError::NotDeployed {
                    node: ending.line_after(super::session::NODE_LINE),
                }
                .into())
            }
            other => Ok(other?),
        }
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

/// Key files, agent identities, default keys, password: the first the server takes.
async fn authenticate(handle: &mut Handle, params: &SshParams) -> Result<(), String> {
    let user = params.user.as_str();
    let rsa_hash = handle
        .best_supported_rsa_hash()
        .await
        .ok()
        .flatten()
        .flatten();
    let mut notes = vec![];
    let try_key = async |handle: &mut Handle, path: &PathBuf, notes: &mut Vec<String>| {
        match russh::keys::load_secret_key(path, None) {
            Ok(key) => {
                let key = PrivateKeyWithHashAlg::new(Arc::new(key), rsa_hash);
                matches!(handle.authenticate_publickey(user, key).await, Ok(r) if r.success())
            }
            Err(e) => {
                notes.push(format!("cannot use key {}: {e}", path.display()));
                false
            }
        }
    };
    for path in &params.key_files {
        if try_key(handle, path, &mut notes).await {
            return Ok(());
        }
    }
    if std::env::var_os("SSH_AUTH_SOCK").is_some_and(|s| !s.is_empty()) {
        match russh::keys::agent::client::AgentClient::connect_env().await {
            Ok(mut agent) => {
                let identities = agent.request_identities().await.unwrap_or_default();
                for id in identities {
                    let key = id.public_key().into_owned();
                    let ok = handle
                        .authenticate_publickey_with(user, key, rsa_hash, &mut agent)
                        .await;
                    if matches!(ok, Ok(r) if r.success()) {
                        return Ok(());
                    }
                }
            }
            Err(e) => notes.push(format!("ssh-agent: {e}")),
        }
    }
    for name in ["id_ed25519", "id_ecdsa", "id_rsa"] {
        let path = home().join(".ssh").join(name);
        if path.exists()
            && !params.key_files.contains(&path)
            && try_key(handle, &path, &mut notes).await
        {
            return Ok(());
        }
    }
    if let Some(password) = &params.password
        && matches!(handle.authenticate_password(user, password.0.as_str()).await, Ok(r) if r.success())
    {
        return Ok(());
    }
    let mut msg = format!(
        "{}@{}: Permission denied (no key{} accepted)",
        params.user,
        params.host,
        if params.password.is_some() {
            " or password"
        } else {
            ""
        }
    );
    for n in notes {
        msg.push_str("; ");
        msg.push_str(&n);
    }
    Err(msg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn variables_as_ansible_reads_them() {
        let vars = json!({
            "ansible_host": "127.0.0.1", "ansible_port": "2222", "ansible_user": "deploy",
            "ansible_ssh_private_key_file": "/k/id", "ansible_password": "pw",
            "ansible_ssh_common_args": "-o UserKnownHostsFile=/tmp/kh -o StrictHostKeyChecking=no",
            "ansible_ssh_retries": 2, "ansible_ssh_timeout": 3
        });
        let p = SshParams::from_vars("web1", vars.as_object().unwrap()).unwrap();
        assert_eq!(p.host, "127.0.0.1");
        assert_eq!(p.port, 2222);
        assert_eq!(p.user, "deploy");
        assert_eq!(p.key_files, vec![PathBuf::from("/k/id")]);
        assert_eq!(p.password, Some(Secret("pw".into())));
        assert_eq!(p.known_hosts, vec![PathBuf::from("/tmp/kh")]);
        assert!(!p.host_key_checking);
        assert_eq!(p.retries, 2);
        assert_eq!(p.timeout, Duration::from_secs(3));
        assert!(!format!("{p:?}").contains("pw\""), "{p:?}");

        let bad = json!({"ansible_port": "ssh"});
        let e = SshParams::from_vars("web1", bad.as_object().unwrap()).unwrap_err();
        assert!(e.contains("ansible_port of web1"), "{e}");
    }

    #[test]
    fn jumps_and_proxy_commands_and_refused_options() {
        let vars = json!({
            "ansible_host": "10.0.0.5", "ansible_user": "deploy",
            "ansible_ssh_common_args": "-C -o ControlPersist=60s -J alice@bastion:2200,[fe80::1]:23"
        });
        let p = SshParams::from_vars("web1", vars.as_object().unwrap()).unwrap();
        // The last hop is the target's proxy; the first is reached first.
        let Some(Proxy::Jump(last)) = &p.proxy else {
            panic!("{p:?}")
        };
        assert_eq!((last.host.as_str(), last.port), ("fe80::1", 23));
        let Some(Proxy::Jump(first)) = &last.proxy else {
            panic!("{p:?}")
        };
        assert_eq!(
            (first.user.as_str(), first.host.as_str(), first.port),
            ("alice", "bastion", 2200)
        );
        assert!(first.proxy.is_none());

        let vars = json!({"ansible_ssh_extra_args": "-o 'ProxyCommand=nc -X 5 %h %p %r %%'"});
        let p = SshParams::from_vars("db", vars.as_object().unwrap()).unwrap();
        assert_eq!(
            p.proxy,
            Some(Proxy::Command(format!("nc -X 5 db 22 {} %", p.user)))
        );

        // -i, -l and -p count after the host's own settings.
        let vars = json!({
            "ansible_user": "deploy", "ansible_ssh_private_key_file": "/k/one",
            "ansible_ssh_common_args": "-i /k/two -l bob -p 2200 -o Port=2300"
        });
        let p = SshParams::from_vars("h", vars.as_object().unwrap()).unwrap();
        assert_eq!(
            p.key_files,
            [PathBuf::from("/k/one"), PathBuf::from("/k/two")]
        );
        assert_eq!((p.user.as_str(), p.port), ("deploy", 2200));
        let vars = json!({"ansible_port": 22, "ansible_ssh_extra_args": "-o User=carol -p 2200"});
        let p = SshParams::from_vars("h", vars.as_object().unwrap()).unwrap();
        assert_eq!((p.user.as_str(), p.port), ("carol", 22));

        for (args, named) in [("-o ForwardAgent=yes", "'forwardagent'"), ("-A", "'-A'")] {
            let vars = json!({"ansible_ssh_common_args": args});
            let e = SshParams::from_vars("h", vars.as_object().unwrap()).unwrap_err();
            assert!(
                e.contains(named) && e.contains("ansible_ssh_common_args of h"),
                "{e}"
            );
        }
    }

    #[test]
    fn ssh_config_sections_apply_as_in_openssh() {
        let config = "User everyone\n\
            Host bastion\n  HostName 10.0.0.1\n  Port 2200\n\
            Host *.internal !db.internal\n  ProxyJump bastion\n  IdentityFile ~/.ssh/internal\n  User deploy\n\
            Match host web1.internal\n  User matched\n\
            Host *\n  IdentityFile ~/.ssh/default\n  Port 2222\n";
        let get = |dest: &str| ssh_config_settings(config, dest);
        assert_eq!(
            get("web1.internal"),
            [
                ("user".into(), "everyone".into()),
                ("proxyjump".into(), "bastion".into()),
                ("identityfile".into(), "~/.ssh/internal".into()),
                ("identityfile".into(), "~/.ssh/default".into()),
                ("port".into(), "2222".into()),
            ]
        );
        assert!(!get("db.internal").iter().any(|(k, _)| k == "proxyjump"));
        assert!(get("BASTION").contains(&("hostname".into(), "10.0.0.1".into())));
    }

    #[test]
    fn host_key_checking_opt_out() {
        let vars = json!({"ansible_host_key_checking": "False"});
        let p = SshParams::from_vars("h", vars.as_object().unwrap()).unwrap();
        assert!(!p.host_key_checking);
        let p = SshParams::from_vars("h", &Map::new()).unwrap();
        assert_eq!(p.host, "h");
        assert_eq!(p.port, 22);
    }
}
