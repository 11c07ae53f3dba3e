//! One connection and one shim session per host for the whole run, opened on first use;
//! a session is reopened after it breaks (a crashed shim fails one task, not the rest
//! of the run).

use super::session::{Session, SessionError};
use super::{Connection, ConnectionError};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// How to reach a host, from its variables.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Transport {
    /// `ansible_connection: local`.
    Local,
}

/// Errors choosing a transport.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// A connection plugin sandball does not have.
    #[error("the '{0}' connection is not supported yet (supported: local)")]
    Unsupported(String),
    /// The connection could not be opened.
    #[error("{0}")]
    Connection(#[from] ConnectionError),
    /// The session could not be opened.
    #[error("{0}")]
    Session(#[from] SessionError),
}

/// The transport a host's variables ask for. Ansible's implicit localhost and
/// `ansible_connection: local` are local; everything else defaults to ssh.
pub fn transport_for(host: &str, vars: &Map<String, Value>) -> Result<Transport, ConnectError> {
    let conn = vars
        .get("ansible_connection")
        .and_then(Value::as_str)
        .unwrap_or(if host == "localhost" { "local" } else { "ssh" });
    match conn {
        "local" | "ansible.builtin.local" => Ok(Transport::Local),
        other => Err(ConnectError::Unsupported(other.to_string())),
    }
}

type Slot = Arc<tokio::sync::Mutex<Option<Session>>>;
type ConnectionSlot = Arc<tokio::sync::Mutex<Option<Arc<Connection>>>>;

/// The connections and sessions of a run, one of each per host.
#[derive(Default)]
pub struct SessionPool {
    cache_dir: Option<String>,
    slots: Mutex<HashMap<String, Slot>>,
    connections: Mutex<HashMap<String, ConnectionSlot>>,
}

impl SessionPool {
    /// A pool whose shims keep their cache in `cache_dir` (default `~/.sandball`).
    pub fn new(cache_dir: Option<String>) -> Self {
        SessionPool {
            cache_dir,
            slots: Mutex::new(HashMap::new()),
            connections: Mutex::new(HashMap::new()),
        }
    }

    /// The host's connection, opened on first use and shared by every task after.
    pub async fn connection(
        &self,
        host: &str,
        transport: &Transport,
    ) -> Result<Arc<Connection>, ConnectError> {
        let slot = {
            let mut map = self.connections.lock().unwrap_or_else(|e| e.into_inner());
            map.entry(host.to_string()).or_default().clone()
        };
        let mut guard = slot.lock().await;
        if let Some(c) = guard.as_ref() {
            return Ok(c.clone());
        }
        let conn = Arc::new(match transport {
            Transport::Local => Connection::Local(super::local::Local),
        });
        *guard = Some(conn.clone());
        Ok(conn)
    }

    /// The host's session slot; the caller holds its lock while it uses the session.
    pub fn slot(&self, host: &str) -> Slot {
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        slots.entry(host.to_string()).or_default().clone()
    }

    /// Opens a session for the host if the slot has none.
    pub async fn ensure_open(
        &self,
        slot: &mut Option<Session>,
        host: &str,
        transport: &Transport,
    ) -> Result<(), ConnectError> {
        if slot.is_none() {
            let conn = self.connection(host, transport).await?;
            *slot = Some(conn.open_session(self.cache_dir.as_deref()).await?);
        }
        Ok(())
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
        assert_eq!(transport_for("localhost", &none).unwrap(), Transport::Local);
        assert!(
            matches!(transport_for("web1", &none), Err(ConnectError::Unsupported(c)) if c == "ssh")
        );
        let local = json!({"ansible_connection": "local"});
        assert_eq!(
            transport_for("web1", local.as_object().unwrap()).unwrap(),
            Transport::Local
        );
    }
}
