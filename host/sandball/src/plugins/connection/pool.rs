//! One connection and one shim session per host for the whole run, opened on first use;
//! a session is reopened after it breaks (a crashed shim fails one task, not the rest
//! of the run).

use super::registry::Transport;
use super::session::Session;
use super::{ConnectError, Connection, Secret};
use crate::plugins::r#become::Become;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

/// How long [`SessionPool::close_user`] waits for each of a user's shims to have exited.
const USER_CLOSE_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// The controller's own cache directory: `$SANDBALL_CACHE_DIR` when set (`None`: the
/// local shim's default, [`super::deploy::DEFAULT_CACHE`]).
pub fn controller_cache() -> Option<String> {
    std::env::var("SANDBALL_CACHE_DIR").ok()
}

type Slot = Arc<tokio::sync::Mutex<Option<Session>>>;
type ConnectionSlot = Arc<tokio::sync::Mutex<Option<Arc<dyn Connection>>>>;

/// The connections and sessions of a run, one of each per host.
#[derive(Default)]
pub struct SessionPool {
    cache_dir: Option<String>,
    /// The connection password typed at `-k/--ask-pass`, for hosts without
    /// `ansible_password`.
    password: Option<Secret>,
    slots: Mutex<HashMap<String, Slot>>,
    connections: Mutex<HashMap<String, ConnectionSlot>>,
    /// The hosts already warned about having no shim.
    shimless: Mutex<HashSet<String>>,
}

impl SessionPool {
    /// A pool whose shims keep their cache in `cache_dir` (default `~/.sandball`).
    pub fn new(cache_dir: Option<String>) -> Self {
        SessionPool {
            cache_dir,
            password: None,
            slots: Mutex::new(HashMap::new()),
            connections: Mutex::new(HashMap::new()),
            shimless: Mutex::default(),
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
    ) -> Result<Arc<dyn Connection>, ConnectError> {
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
        let conn = transport.settings.connect(self.password.as_ref()).await?;
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

    /// Whether `host` is found to have no shim for the first time in this run (to be
    /// warned about once).
    pub fn first_shimless(&self, host: &str) -> bool {
        self.shimless
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(host.to_string())
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
            // The controller's own cache (`SANDBALL_CACHE_DIR`) is for the controller's
            // own machine.
            let cache_dir = match transport.local() {
                true => transport.cache_dir.as_deref().or(self.cache_dir.as_deref()),
                false => transport.cache_dir.as_deref(),
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

    /// Closes the host's sessions that run as the become user `user`, however the host
    /// is reached: the account is about to be removed, and a shim still running as it
    /// would make `userdel` refuse. A later task as that user opens a new one.
    pub async fn close_user(&self, host: &str, user: &str) {
        let slots: Vec<Slot> = {
            let mut map = self.slots.lock().unwrap_or_else(|e| e.into_inner());
            let keys: Vec<String> = map
                .keys()
                .filter(|k| {
                    let parts: Vec<&str> = k.split('\u{0}').collect();
                    matches!(parts[..], [h, _, u] if h == host && u == user)
                })
                .cloned()
                .collect();
            keys.iter().filter_map(|k| map.remove(k)).collect()
        };
        for slot in slots {
            if let Some(s) = slot.lock().await.take() {
                // Until its output ends: a shim that has answered is still ending (its
                // epoch ticker sleeps up to 10 ms), and userdel must not find it there.
                s.close(USER_CLOSE_WAIT).await;
            }
        }
    }

    /// Ends every session at once, each given up to `wait` for its shim to end what it
    /// started (see [`Session::close`]): the run was interrupted.
    pub async fn close_all(&self, wait: std::time::Duration) {
        let slots: Vec<Slot> = {
            let mut map = self.slots.lock().unwrap_or_else(|e| e.into_inner());
            map.drain().map(|(_, s)| s).collect()
        };
        futures::future::join_all(slots.into_iter().map(|slot| async move {
            if let Some(s) = slot.lock().await.take() {
                s.close(wait).await;
            }
        }))
        .await;
        self.connections
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }

    /// Ends the sessions a task's `timeout` abandoned in the middle of a request, each
    /// given up to `wait` (see [`Session::close`]): their shims end what the request
    /// started (a program, a module that sleeps) at once, not when the host's next task
    /// replaces the session or the run ends. Sessions in use are left alone.
    pub async fn close_abandoned(&self, wait: std::time::Duration) {
        let slots: Vec<Slot> = {
            let map = self.slots.lock().unwrap_or_else(|e| e.into_inner());
            map.values().cloned().collect()
        };
        for slot in slots {
            let Ok(mut held) = slot.try_lock() else {
                continue;
            };
            if held.as_ref().is_some_and(Session::abandoned)
                && let Some(s) = held.take()
            {
                drop(held);
                s.close(wait).await;
            }
        }
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
