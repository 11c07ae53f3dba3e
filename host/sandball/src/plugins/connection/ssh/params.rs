//! The `ssh` connection's settings, read from a host's variables as Ansible reads them,
//! then from the ssh arguments they hold and `~/.ssh/config`: address, port, user,
//! keys, password, host key checking, timeouts, retries, and the jump hosts or proxy
//! command the connection goes through.

use crate::plugins::connection::{Secret, VarError, VarKind};
use serde_json::{Map, Value};
use std::path::PathBuf;
use std::time::Duration;

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
        other => sandball_pycompat::boolean::word(&text(other)),
    }
}

/// The controller user's home directory.
pub(super) fn home() -> PathBuf {
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
/// `proxyjump`; a flag sandball cannot honour is an error naming it (`argument '-A'`).
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
                return Err(format!("argument '{other}'"));
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
fn jump_chain(spec: &str, target: &SshParams) -> Result<Option<Proxy>, VarError> {
    if spec.eq_ignore_ascii_case("none") {
        return Ok(None);
    }
    let bad_jump = |reason: String| VarError::BadJump {
        spec: spec.to_string(),
        reason,
    };
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
                .map_err(|_| bad_jump(format!("'{p}' is not a port number")))?,
        };
        if host.is_empty() {
            return Err(bad_jump("a hop names no host".into()));
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
    sandball_pycompat::shlex::split_comments(s)
        .unwrap_or_else(|_| s.split_whitespace().map(str::to_string).collect::<Vec<_>>())
}

impl SshParams {
    /// The parameters a host's variables give.
    pub fn from_vars(host: &str, vars: &Map<String, Value>) -> Result<SshParams, VarError> {
        let address = var(vars, &["ansible_host", "ansible_ssh_host"])
            .map(text)
            .unwrap_or_else(|| host.to_string());
        let not_of_kind = |var: &str, value: &Value, kind| VarError::NotOfKind {
            var: var.to_string(),
            host: host.to_string(),
            value: value.clone(),
            kind,
        };
        let port_of = |v: &Value, what: &str| {
            text(v)
                .parse::<u16>()
                .map_err(|_| not_of_kind(what, v, VarKind::Port))
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
        let seconds = |names: &[&str], default: f64| match var(vars, names) {
            None => Ok(default),
            Some(v) => text(v)
                .parse::<f64>()
                .map_err(|_| not_of_kind(names[0], v, VarKind::Number)),
        };
        let timeout = seconds(&["ansible_ssh_timeout", "ansible_timeout"], 10.0)?;
        let retries = seconds(&["ansible_ssh_retries"], 0.0)? as u32;
        let mut host_key_checking = match var(
            vars,
            &["ansible_host_key_checking", "ansible_ssh_host_key_checking"],
        ) {
            Some(v) => boolean(v)
                .ok_or_else(|| not_of_kind("ansible_host_key_checking", v, VarKind::Boolean))?,
            None => crate::config::settings()
                .get("ANSIBLE_HOST_KEY_CHECKING")
                .and_then(|s| boolean(&Value::String(s.to_string())))
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
            let refused = |what: String| VarError::NotHonoured {
                what,
                var: name.to_string(),
                host: host.to_string(),
            };
            for (k, v) in ssh_options(&args).map_err(refused)? {
                if !HONOURED_OPTIONS.contains(&k.as_str()) && !TUNING_OPTIONS.contains(&k.as_str())
                {
                    return Err(refused(format!("option '{k}'")));
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

    pub(super) fn target(&self) -> String {
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
        let e = e.to_string();
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
            let e = SshParams::from_vars("h", vars.as_object().unwrap())
                .unwrap_err()
                .to_string();
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
