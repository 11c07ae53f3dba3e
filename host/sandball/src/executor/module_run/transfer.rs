//! Controller files a module reads on the node, sent before it runs: to the task's shim
//! session for a component (content-addressed by sha256: nothing is sent when the node
//! already holds the same content; staged files belong to their session), or to a
//! private temporary directory of the user a legacy module runs as.

use crate::plugins::action::Transfer;
use crate::plugins::r#become::Become;
use crate::plugins::connection::{Connection, Session, SessionError};
use sha2::{Digest, Sha256};
use std::path::Path;

/// Why a file could not be sent.
#[derive(Debug, thiserror::Error)]
pub enum SendError {
    /// The controller's file could not be read.
    #[error("Could not read the source file {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The session failed (it is unusable afterwards).
    #[error("sending {path} to the node failed: {source}")]
    Session {
        /// The file.
        path: String,
        /// Why.
        source: SessionError,
    },
}

impl SendError {
    /// Whether the session broke (the next task must open a fresh one).
    pub fn broke_session(&self) -> bool {
        matches!(self, SendError::Session { .. })
    }
}

/// Sends the controller's file to the node (if the node does not hold it yet) and
/// returns its path on the node.
pub(super) async fn send(session: &mut Session, local: &Path) -> Result<String, SendError> {
    let shown = local.display().to_string();
    let sha256 = file_sha256(local).await.map_err(|source| SendError::Read {
        path: shown.clone(),
        source,
    })?;
    session
        .ensure_file(&sha256, local)
        .await
        .map_err(|source| SendError::Session {
            path: shown,
            source,
        })
}

async fn file_sha256(path: &Path) -> std::io::Result<String> {
    use tokio::io::AsyncReadExt;
    let mut file = tokio::fs::File::open(path).await?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        match file.read(&mut buf).await? {
            0 => break,
            n => hasher.update(&buf[..n]),
        }
    }
    Ok(hex::encode(hasher.finalize()))
}

/// Sends controller files for a legacy module to a private temporary directory (umask
/// 77) made by the user the module runs as; the directory and each file's path there,
/// `None` when there are none.
pub(super) async fn send_files(
    conn: &dyn Connection,
    become_: Option<&Become>,
    transfers: &[Transfer],
) -> Result<Option<(String, Vec<String>)>, String> {
    if transfers.is_empty() {
        return Ok(None);
    }
    let exec = |line: String, data: Option<Vec<u8>>| async move {
        crate::plugins::r#become::exec_command(conn, become_, &line, data.as_deref())
            .await
            .map_err(|e| e.to_string())
            .and_then(|out| {
                if out.rc == 0 {
                    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
                } else {
                    Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
                }
            })
    };
    let dir = exec("umask 77 && mktemp -d".into(), None)
        .await
        .map_err(|e| format!("cannot make a temporary directory on the node: {e}"))?;
    let mut paths = Vec::new();
    for (i, t) in transfers.iter().enumerate() {
        let data = std::fs::read(&t.local)
            .map_err(|e| format!("Could not read {}: {e}", t.local.display()))?;
        let name = t
            .local
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| format!("source{i}"));
        let path = format!("{dir}/{name}");
        exec(
            format!(
                "umask 77 && cat > {}",
                sandball_pycompat::shell::quote(&path)
            ),
            Some(data),
        )
        .await
        .map_err(|e| format!("cannot send {} to the node: {e}", t.local.display()))?;
        paths.push(path);
    }
    Ok(Some((dir, paths)))
}
