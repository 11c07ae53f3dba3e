//! The connection plugins sandball has, one row each: the names a host's
//! `ansible_connection` may give it, the variables it reads, and how it reads them into
//! its [`Settings`] (a plugin's file implements that and [`super::Connection`]). [`transport_for`] picks a host's row; the [`Transport`] it gives
//! is what the session pool opens connections from.

use super::{ConnectError, Settings, VarError};
use serde_json::{Map, Value};
use std::sync::Arc;

/// Reads a host's settings for a plugin from its inventory name and variables; the
/// error is a variable's.
pub type ReadSettings = fn(&str, &Map<String, Value>) -> Result<Arc<dyn Settings>, VarError>;

/// One connection plugin.
pub struct Row {
    /// Its names, as `ansible_connection` (or `connection:`, `-c`) writes them; the
    /// first is the one error messages give.
    pub names: &'static [&'static str],
    /// The variables it reads, beyond `ansible_connection` and `sandball_cache_dir`.
    pub vars: &'static [&'static str],
    /// How it reads them.
    pub settings: ReadSettings,
    /// The ansible-core release (2.`minor`) that removed it: a run following that
    /// release or a later one finds no plugin of these names, as ansible-core does.
    pub removed_in: Option<u32>,
}

/// Every connection plugin.
pub const CONNECTIONS: &[Row] = &[
    Row {
        names: &["local", "ansible.builtin.local"],
        vars: &[],
        settings: super::local::settings,
        removed_in: None,
    },
    Row {
        names: &["ssh", "ansible.builtin.ssh"],
        vars: super::ssh::VARS,
        settings: super::ssh::settings,
        removed_in: None,
    },
    // paramiko, which sandball serves with its SSH connection; ansible-core 2.21
    // removed it.
    Row {
        names: &[
            "paramiko",
            "paramiko_ssh",
            "ansible.builtin.paramiko",
            "ansible.builtin.paramiko_ssh",
        ],
        vars: super::ssh::VARS,
        settings: super::ssh::settings,
        removed_in: Some(21),
    },
];

/// The error for a connection sandball does not have, naming those it has.
pub(super) fn unsupported(name: &str) -> String {
    let names: Vec<&str> = CONNECTIONS
        .iter()
        .filter(|row| row.removed_in.is_none())
        .map(|row| row.names[0])
        .collect();
    format!(
        "the '{name}' connection is not supported yet (supported: {})",
        names.join(", ")
    )
}

/// Every variable [`transport_for`] reads: the connection settings a task takes from
/// its variables, wherever they were set.
pub fn transport_vars() -> impl Iterator<Item = &'static str> {
    ["ansible_connection", "sandball_cache_dir"]
        .into_iter()
        .chain(CONNECTIONS.iter().flat_map(|row| row.vars.iter().copied()))
}

/// How to reach a host, from its variables: the connection plugin's settings and the
/// node's shim cache (`sandball_cache_dir`; default `~/.sandball` on the node).
#[derive(Clone, Debug)]
pub struct Transport {
    /// The shim's cache.
    pub cache_dir: Option<String>,
    /// The plugin's settings.
    pub settings: Arc<dyn Settings>,
}

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
    let Some(row) = CONNECTIONS.iter().find(|row| row.names.contains(&conn)) else {
        return Err(ConnectError::Unsupported(conn.to_string()));
    };
    if row
        .removed_in
        .is_some_and(|minor| crate::compat::core().at_least(minor))
    {
        return Err(ConnectError::NotFound(conn.to_string()));
    }
    Ok(Transport {
        cache_dir,
        settings: (row.settings)(host, vars).map_err(ConnectError::from)?,
    })
}

impl Transport {
    /// Whether the node's login user is root, as the controller knows it without
    /// asking the node: a local connection of a controller running as root, or an
    /// SSH login as `root`.
    pub fn logs_in_as_root(&self) -> bool {
        self.settings.logs_in_as_root()
    }

    /// Whether the node is the controller's own machine.
    pub fn local(&self) -> bool {
        self.settings.local()
    }

    /// What tells two ways of reaching a host apart.
    pub(super) fn key(&self) -> String {
        self.settings.key()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn localhost_defaults_to_local_and_others_to_ssh() {
        let none = Map::new();
        let local = transport_for("localhost", &none).unwrap();
        assert!(local.local() && local.cache_dir.is_none());
        assert!(
            matches!(transport_for("web1", &none), Ok(t) if t.key().starts_with("ssh ") && t.key().ends_with("@web1:22"))
        );
        let vars = json!({"ansible_connection": "local"});
        assert!(
            transport_for("web1", vars.as_object().unwrap())
                .unwrap()
                .local()
        );
        let vars = json!({"ansible_connection": "winrm"});
        assert!(
            matches!(transport_for("w", vars.as_object().unwrap()), Err(ConnectError::Unsupported(c)) if c == "winrm")
        );
        let e = transport_for("w", vars.as_object().unwrap()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the 'winrm' connection is not supported yet (supported: local, ssh)"
        );
    }
}
