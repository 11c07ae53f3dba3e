//! One connection and one shim session per host for the whole run, opened on first use;
//! a session is reopened after it breaks (a crashed shim fails one task, not the rest
//! of the run).

use super::session::{Session, SessionError};
use super::ssh::{Ssh, SshParams};
use super::{Connection, ConnectionError, Secret};
use crate::plugins::r#become::Become;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// How to reach a host, from its variables. `cache_dir` is the node's shim cache
/// (`sandball_cache_dir`; default `~/.sandball` on the node).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Transport {
    /// `ansible_connection: local`.
    Local {
        /// The shim's cache.
        cache_dir: Option<String>,
    },
    /// `ansible_connection: ssh` (the default for hosts other than localhost).
    Ssh {
        /// Where and how to connect.
        params: Box<SshParams>,
        /// The shim's cache.
        cache_dir: Option<String>,
    },
}

/// Errors choosing a transport.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// A connection plugin sandball does not have.
    #[error("the '{0}' connection is not supported yet (supported: local, ssh)")]
    Unsupported(String),
    /// The connection could not be opened.
    #[error("{0}")]
    Connection(#[from] ConnectionError),
    /// The session could not be opened.
    #[error("{0}")]
    Session(#[from] SessionError),
    /// A host variable is wrong.
    #[error("{0}")]
    Vars(String),
}

/// Every variable [`transport_for`] reads (with [`SshParams::from_vars`]): the
/// connection settings a task takes from its variables, wherever they were set.
pub const TRANSPORT_VARS: &[&str] = &[
    "ansible_connection",
    "sandball_cache_dir",
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

/// The transport a host's variables ask for. Ansible's implicit localhost and
/// `ansible_connection: local` are local; everything else defaults to ssh.
pub fn transport_for(host: &str, vars: &Map<String, Value>) -> Result<Transport, ConnectError> {
    let conn = vars
        .get("ansible_connection")
        .and_then(Value::as_str)
        .unwrap_or(if host == "localhost" { "local" } else { "ssh" });
    let cache_dir = vars
        .get("sandball_cache_dir")
        .and_then(Value::as_str)
        .map(str::to_string);
    match conn {
        "local" | "ansible.builtin.local" => Ok(Transport::Local { cache_dir }),
        "ssh" | "ansible.builtin.ssh" | "paramiko" | "paramiko_ssh" => Ok(Transport::Ssh {
            params: Box::new(SshParams::from_vars(host, vars).map_err(ConnectError::Vars)?),
            cache_dir,
        }),
        other => Err(ConnectError::Unsupported(other.to_string())),
    }
}

impl Transport {
    /// Whether the node's login user is root, as the controller knows it without
    /// asking the node: a local connection of a controller running as root, or an
    /// SSH login as `root`.
    pub fn logs_in_as_root(&self) -> bool {
        match self {
            Transport::Local { .. } => rustix::process::geteuid().is_root(),
            Transport::Ssh { params, .. } => params.user == "root",
        }
    }

    /// What tells two ways of reaching a host apart (the pool keeps one connection
    /// per host and way: a task's `connection: local` does not reuse an SSH one).
    fn key(&self) -> String {
        match self {
            Transport::Local { .. } => "local".to_string(),
            Transport::Ssh { params, .. } => {
                format!("ssh {}@{}:{}", params.user, params.host, params.port)
            }
        }
    }
}

type Slot = Arc<tokio::sync::Mutex<Option<Session>>>;
type ConnectionSlot = Arc<tokio::sync::Mutex<Option<Arc<Connection>>>>;

/// The connections and sessions of a run, one of each per host.
#[derive(Default)]
pub struct SessionPool {
    cache_dir: Option<String>,
    /// The connection password typed at `-k/--ask-pass`, for hosts without
    /// `ansible_password`.
    password: Option<Secret>,
    slots: Mutex<HashMap<String, Slot>>,
    connections: Mutex<HashMap<String, ConnectionSlot>>,
}

impl SessionPool {
    /// A pool whose shims keep their cache in `cache_dir` (default `~/.sandball`).
    pub fn new(cache_dir: Option<String>) -> Self {
        SessionPool {
            cache_dir,
            password: None,
            slots: Mutex::new(HashMap::new()),
            connections: Mutex::new(HashMap::new()),
        }
    }

    /// Uses `password` (from `-k/--ask-pass`) for SSH hosts that set no password.
    pub fn with_password(mut self, password: Option<Secret>) -> Self {
        self.password = password;
        self
    }

    /// The host's connection, opened on first use and shared by every task after.
    pub async fn connection(
        &self,
        host: &str,
        transport: &Transport,
    ) -> Result<Arc<Connection>, ConnectError> {
        let slot = {
            let mut map = self.connections.lock().unwrap_or_else(|e| e.into_inner());
            map.entry(format!("{host}\u{0}{}", transport.key()))
                .or_default()
                .clone()
        };
        let mut guard = slot.lock().await;
        if let Some(c) = guard.as_ref() {
            return Ok(c.clone());
        }
        let conn = Arc::new(match transport {
            Transport::Local { .. } => Connection::Local(super::local::Local),
            Transport::Ssh { params, .. } => {
                let mut params = (**params).clone();
                if params.password.is_none() {
                    params.password = self.password.clone();
                }
                Connection::Ssh(Ssh::connect(params).await?)
            }
        });
        *guard = Some(conn.clone());
        Ok(conn)
    }

    /// The session slot of a host, way of reaching it and become user (one session
    /// each); the caller holds its lock while it uses the session.
    pub fn slot(&self, host: &str, transport: &Transport, become_: Option<&Become>) -> Slot {
        let key = match become_ {
            None => format!("{host}\u{0}{}", transport.key()),
            Some(b) => format!("{host}\u{0}{}\u{0}{}", transport.key(), b.user),
        };
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        slots.entry(key).or_default().clone()
    }

    /// Opens a session for the host (as the become user, if any) if the slot has none.
    pub async fn ensure_open(
        &self,
        slot: &mut Option<Session>,
        host: &str,
        transport: &Transport,
        become_: Option<&Become>,
    ) -> Result<(), ConnectError> {
        if slot.as_ref().is_some_and(Session::abandoned) {
            // A task timed out in the middle of a request: start afresh.
            *slot = None;
        }
        if slot.is_none() {
            let conn = self.connection(host, transport).await?;
            let cache_dir = match transport {
                Transport::Local { cache_dir } => {
                    cache_dir.as_deref().or(self.cache_dir.as_deref())
                }
                Transport::Ssh { cache_dir, .. } => cache_dir.as_deref(),
            };
            *slot = Some(conn.open_session(cache_dir, become_).await?);
        }
        Ok(())
    }

    /// Closes a host's connection and its sessions (`meta: reset_connection`); the next
    /// task opens them again.
    pub async fn reset(&self, host: &str) {
        let prefix = format!("{host}\u{0}");
        let slots: Vec<Slot> = {
            let mut map = self.slots.lock().unwrap_or_else(|e| e.into_inner());
            let keys: Vec<String> = map
                .keys()
                .filter(|k| k.starts_with(&prefix))
                .cloned()
                .collect();
            keys.iter().filter_map(|k| map.remove(k)).collect()
        };
        for slot in slots {
            if let Some(s) = slot.lock().await.take() {
                s.shutdown().await;
            }
        }
        self.connections
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|k, _| !k.starts_with(&prefix));
    }

    /// Closes every session.
    pub async fn shutdown(&self) {
        let slots: Vec<Slot> = {
            let mut map = self.slots.lock().unwrap_or_else(|e| e.into_inner());
            map.drain().map(|(_, s)| s).collect()
        };
        for slot in slots {
            if let Some(s) = slot.lock().await.take() {
                s.shutdown().await;
            }
        }
        self.connections
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn localhost_defaults_to_local_and_others_to_ssh() {
        let none = Map::new();
        let local = Transport::Local { cache_dir: None };
        assert_eq!(transport_for("localhost", &none).unwrap(), local);
        assert!(
            matches!(transport_for("web1", &none), Ok(Transport::Ssh { params, .. }) if params.host == "web1")
        );
        let vars = json!({"ansible_connection": "local"});
        assert_eq!(
            transport_for("web1", vars.as_object().unwrap()).unwrap(),
            local
        );
        let vars = json!({"ansible_connection": "winrm"});
        assert!(
            matches!(transport_for("w", vars.as_object().unwrap()), Err(ConnectError::Unsupported(c)) if c == "winrm")
        );
    }
}
