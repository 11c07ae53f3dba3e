//! Who the `ssh` connection talks to and as whom: the server's host key checked
//! against the known hosts files, then the user authenticated with key files, the
//! agent's identities, the default keys or the password.

use super::Handle;
use super::params::{SshParams, home};
use russh::client;
use russh::keys::{HashAlg, PrivateKeyWithHashAlg, PublicKey, PublicKeyOrCertificate};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// Checks server keys and remembers why one was refused.
pub(super) struct Verifier {
    pub(super) params: Arc<SshParams>,
    pub(super) refusal: Arc<Mutex<Option<String>>>,
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

/// Why authentication ended without a session.
#[derive(Debug)]
pub(super) enum AuthFailure {
    /// The server took none of the credentials: trying again cannot help.
    Refused(String),
    /// The connection failed during the exchange (closed, reset): another attempt may
    /// succeed, as for any network failure.
    Lost(String),
}

/// The connection failed during the exchange: `e` says how.
fn lost(params: &SshParams, e: impl std::fmt::Display) -> AuthFailure {
    AuthFailure::Lost(format!(
        "ssh: connection to {} lost during authentication: {e}",
        params.target()
    ))
}

/// Whether the server took a credential; a transport error ends the exchange as
/// [`AuthFailure::Lost`], never as a refusal.
fn accepted(
    params: &SshParams,
    answer: Result<client::AuthResult, russh::Error>,
) -> Result<bool, AuthFailure> {
    answer.map(|r| r.success()).map_err(|e| lost(params, e))
}

/// Key files, agent identities, default keys, password: the first the server takes.
pub(super) async fn authenticate(
    handle: &mut Handle,
    params: &SshParams,
) -> Result<(), AuthFailure> {
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
                accepted(params, handle.authenticate_publickey(user, key).await)
            }
            Err(e) => {
                notes.push(format!("cannot use key {}: {e}", path.display()));
                Ok(false)
            }
        }
    };
    for path in &params.key_files {
        if try_key(handle, path, &mut notes).await? {
            return Ok(());
        }
    }
    if std::env::var_os("SSH_AUTH_SOCK").is_some_and(|s| !s.is_empty()) {
        match russh::keys::agent::client::AgentClient::connect_env().await {
            Ok(mut agent) => {
                let identities = agent.request_identities().await.unwrap_or_default();
                for id in identities {
                    let key = id.public_key().into_owned();
                    let answer = handle
                        .authenticate_publickey_with(user, key, rsa_hash, &mut agent)
                        .await;
                    // The agent's own failure (it cannot sign) refuses this identity
                    // alone; the connection's ends the exchange.
                    match answer {
                        Ok(r) if r.success() => return Ok(()),
                        Err(russh::AgentAuthError::Send(e)) => return Err(lost(params, e)),
                        _ => {}
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
            && try_key(handle, &path, &mut notes).await?
        {
            return Ok(());
        }
    }
    if let Some(password) = &params.password
        && accepted(
            params,
            handle
                .authenticate_password(user, password.0.as_str())
                .await,
        )?
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
    Err(AuthFailure::Refused(msg))
}
