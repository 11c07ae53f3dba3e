//! The `copy` action: a `src` on the controller (not `remote_src`) is sent to the node
//! over the host's shim session, in raw chunks, content-addressed by sha256 (nothing is
//! sent when the node already holds the same content), and the `copy` module then
//! copies it from the node's copy. `content` and `remote_src` need no transfer.

use super::{ActionPlugin, Context, ModuleRequest, Runs, Transfer, failed, ok_with};
use crate::plugins::connection::{Session, SessionError};
use crate::template::Vars;
use futures::future::LocalBoxFuture;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

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

/// The `copy` action plugin.
pub struct Copy;

impl ActionPlugin for Copy {
    fn runs<'a>(&self, action: &'a str) -> Runs<'a> {
        Runs::Module {
            name: action,
            legacy: false,
        }
    }

    fn run<'a>(
        &'a self,
        ctx: &'a dyn Context,
        action: &'a str,
        mut args: Map<String, Value>,
    ) -> LocalBoxFuture<'a, Map<String, Value>> {
        Box::pin(async move {
            let transfers = match controller_source(&args, ctx.vars()) {
                Ok(None) => Vec::new(),
                Ok(Some(local)) => {
                    // Once sent, the source is on the node, under its content's name:
                    // a directory `dest` gets the file under the source's own name.
                    args.insert("remote_src".into(), Value::Bool(true));
                    if let Some(name) = local.file_name() {
                        args.insert(
                            "_original_basename".into(),
                            Value::String(name.to_string_lossy().into_owned()),
                        );
                    }
                    vec![Transfer { arg: "src", local }]
                }
                Err(e) => return failed(e),
            };
            let remote = transfers.is_empty() && !args.contains_key("content");
            if !remote {
                let mut dest = args
                    .get("dest")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                // Into a directory: the file of the source's name.
                if dest.ends_with('/')
                    && let Some(name) = transfers.first().and_then(|t| t.local.file_name())
                {
                    dest.push_str(&name.to_string_lossy());
                }
                let after = match (transfers.first(), args.get("content")) {
                    (Some(t), _) => std::fs::read(&t.local).ok(),
                    (None, Some(Value::String(c))) => Some(c.clone().into_bytes()),
                    _ => None,
                };
                let header = transfers
                    .first()
                    .map(|t| t.local.display().to_string())
                    .unwrap_or_else(|| dest.to_string());
                if let Some(r) =
                    dry_run_into_missing_dir(ctx, &dest, after.as_deref(), &header).await
                {
                    return r;
                }
            }
            ctx.execute_module(ModuleRequest {
                name: action,
                args,
                legacy: false,
                transfers,
            })
            .await
        })
    }
}

/// A dry run of a copy from the controller into a directory the node does not have
/// yet (an earlier task of a real run would make it): `changed`, with the diff of a new
/// file, as Ansible's copy action reports it without running the module. `None` when
/// not in check mode or when the directory exists.
pub async fn dry_run_into_missing_dir(
    ctx: &dyn Context,
    dest: &str,
    after: Option<&[u8]>,
    after_header: &str,
) -> Option<Map<String, Value>> {
    if !ctx.check_mode() || dest.is_empty() {
        return None;
    }
    let dir = if dest.ends_with('/') {
        dest.trim_end_matches('/').to_string()
    } else {
        Path::new(dest).parent()?.display().to_string()
    };
    if dir.is_empty() {
        return None;
    }
    let stat = ctx
        .execute_module(ModuleRequest::new(
            "stat",
            json!({"path": dir, "get_checksum": false}),
        ))
        .await;
    if stat.get("stat").and_then(|s| s.get("exists")) != Some(&Value::Bool(false)) {
        return None;
    }
    let mut result = ok_with(json!({"changed": true}));
    if ctx.diff() {
        let text = after
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .unwrap_or_default();
        result.insert(
            "diff".into(),
            json!([{"before": "", "after": text, "after_header": after_header}]),
        );
    }
    Some(result)
}

/// The controller file a `copy` task sends, `None` when it sends none (`content`,
/// `remote_src`). A relative `src` is looked up as Ansible does: the role's `files/`
/// and directory, then the playbook's ([`crate::playbook::search_path`]).
pub fn controller_source(
    args: &Map<String, Value>,
    vars: &Vars,
) -> Result<Option<PathBuf>, String> {
    let Some(src) = args.get("src").and_then(Value::as_str) else {
        return Ok(None);
    };
    if super::truthy(args.get("remote_src"), false)? {
        return Ok(None);
    }
    let found = crate::playbook::search_path::find(vars, "files", src).map_err(|e| {
        format!("{e}\nIf you are using a module and expect the file to exist on the remote, see the remote_src option")
    })?;
    if found.is_dir() {
        return Err(format!(
            "copy: src '{src}' is a directory on the controller; copying directories from the controller is not supported yet (use remote_src for a directory on the node)"
        ));
    }
    Ok(Some(found))
}

/// Sends the controller's file to the node (if the node does not hold it yet) and
/// returns its path on the node.
pub async fn send(session: &mut Session, local: &Path) -> Result<String, SendError> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::action::testing::{FakeContext, args};
    use serde_json::json;

    #[test]
    fn only_a_controller_source_is_sent() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("files")).unwrap();
        std::fs::write(dir.path().join("files/a.txt"), "a").unwrap();
        let mut vars = Vars::new();
        vars.set_trusted("playbook_dir", json!(dir.path().display().to_string()));
        let found = controller_source(&args(json!({"src": "a.txt"})), &vars);
        assert_eq!(found.unwrap(), Some(dir.path().join("files/a.txt")));
        let remote = args(json!({"src": "a.txt", "remote_src": true}));
        assert_eq!(controller_source(&remote, &vars).unwrap(), None);
        let content = args(json!({"content": "x"}));
        assert_eq!(controller_source(&content, &vars).unwrap(), None);
        let missing = controller_source(&args(json!({"src": "nope"})), &vars);
        assert!(
            missing
                .unwrap_err()
                .contains("Could not find or access 'nope'")
        );
        let d = controller_source(&args(json!({"src": "files"})), &vars);
        assert!(d.unwrap_err().contains("is a directory"));
    }

    #[tokio::test]
    async fn the_module_copies_the_sent_file_on_the_node() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "a").unwrap();
        let mut ctx = FakeContext::default();
        ctx.vars
            .set_trusted("playbook_dir", json!(dir.path().display().to_string()));
        let r = Copy
            .run(
                &ctx,
                "ansible.builtin.copy",
                args(json!({"src": "a.txt", "dest": "/tmp/x"})),
            )
            .await;
        assert_eq!(r["ran"], "ansible.builtin.copy");
        let first = ctx.modules.borrow()[0].clone();
        assert_eq!(first.args["remote_src"], true);
        assert_eq!(
            first.transfers,
            vec![Transfer {
                arg: "src",
                local: dir.path().join("a.txt")
            }]
        );
        // A source that is missing fails before any module runs.
        let r = Copy
            .run(&ctx, "copy", args(json!({"src": "nope", "dest": "/tmp/x"})))
            .await;
        assert_eq!(r["failed"], true);
        assert_eq!(ctx.modules.borrow().len(), 1);
    }
}
