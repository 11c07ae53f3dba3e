//! `unarchive`: unpacks an archive into an existing directory on the node with the
//! `unarchive` module, as Ansible's unarchive action does: an archive on the controller
//! (the role's or the playbook's `files/`, unless `remote_src`) is sent to the node
//! first; `creates` skips it when the path exists; `copy: false` is the old spelling of
//! `remote_src: true`.

use super::{Context, ModuleRequest, Transfer, failed, ok_with};
use crate::playbook::search_path;
use crate::plugins::action::TaskResult;
use crate::plugins::shell::quote_path;
use futures::future::LocalBoxFuture;
use sandball_pycompat::boolean::truthy;
use serde_json::{Map, Value, json};

/// The `unarchive` action (its line in [`super::PLUGINS`] says where it works).
pub fn work<'a>(ctx: &'a dyn Context, args: Map<String, Value>) -> LocalBoxFuture<'a, TaskResult> {
    Box::pin(async move {
        match prepare(ctx, args).await {
            Ok(Prepared::Run(args, transfers)) => {
                ctx.execute_module(ModuleRequest {
                    name: MODULE,
                    args,
                    legacy: false,
                    transfers,
                    foreground: false,
                })
                .await
            }
            Ok(Prepared::Done(r)) | Err(r) => r.into(),
        }
    })
}

/// The module that unpacks.
const MODULE: &str = "unarchive";

/// What the action does once its arguments are read.
enum Prepared {
    /// Runs the module with these arguments and files.
    Run(Map<String, Value>, Vec<Transfer>),
    /// Nothing to run: this is the result.
    Done(Map<String, Value>),
}

async fn prepare(
    ctx: &dyn Context,
    mut args: Map<String, Value>,
) -> Result<Prepared, Map<String, Value>> {
    if let Some(copy) = args.remove("copy") {
        if args.contains_key("remote_src") {
            return Err(super::raised(
                super::Failure::Raised,
                "parameters are mutually exclusive: ('copy', 'remote_src')",
            ));
        }
        let copy = truthy(Some(&copy), true).map_err(failed)?;
        args.insert("remote_src".into(), Value::Bool(!copy));
    }
    let remote_src = truthy(args.get("remote_src"), false).map_err(failed)?;
    let text = |key: &str| args.get(key).and_then(Value::as_str).map(str::to_string);
    let (Some(src), Some(dest)) = (text("src"), text("dest")) else {
        return Err(failed("src (or content) and dest are required"));
    };
    if let Some(creates) = text("creates")
        && test(ctx, "-e", &creates).await?
    {
        return Ok(Prepared::Done(ok_with(json!({
            "skipped": true,
            "msg": format!("skipped, since {creates} exists"),
        }))));
    }
    let mut transfers = Vec::new();
    if !remote_src {
        if src.contains("://") {
            return Err(failed(format!(
                "Unsupported option, an URI src ({src}) is only supported when remote_src is True"
            )));
        }
        let local =
            search_path::find(ctx.vars(), "files", &src).map_err(|e| failed(e.to_string()))?;
        transfers.push(Transfer { arg: "src", local });
    }
    if !test(ctx, "-d", &dest).await? {
        return Err(failed(format!("dest '{dest}' must be an existing dir")));
    }
    args.remove("decrypt");
    Ok(Prepared::Run(args, transfers))
}

/// `test FLAG path` on the node.
async fn test(ctx: &dyn Context, flag: &str, path: &str) -> Result<bool, Map<String, Value>> {
    let out = ctx
        .exec_command(&format!("test {flag} {}", quote_path(path)), None)
        .await?;
    Ok(out.rc == 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::action::testing::FakeContext;

    #[tokio::test]
    async fn a_controller_archive_is_sent_into_an_existing_dir() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("files")).unwrap();
        std::fs::write(dir.path().join("files/a.tgz"), "x").unwrap();
        let mut ctx = FakeContext::default();
        ctx.vars
            .set_data("playbook_dir", json!(dir.path().display().to_string()));
        let dest = dir.path().display().to_string();
        let args = json!({"src": "a.tgz", "dest": dest, "copy": true});
        let r = work(&ctx, args.as_object().unwrap().clone()).await;
        assert_eq!(r["ran"], "unarchive");
        let run = ctx.modules.borrow()[0].clone();
        assert_eq!(run.args["remote_src"], false);
        assert_eq!(run.transfers[0].local, dir.path().join("files/a.tgz"));
        let missing =
            json!({"src": "a.tgz", "dest": dir.path().join("nope").display().to_string()});
        let r = work(&ctx, missing.as_object().unwrap().clone()).await;
        assert!(
            r["msg"]
                .as_str()
                .unwrap()
                .ends_with("must be an existing dir")
        );
        let made = json!({"src": "a.tgz", "dest": dest, "creates": dest});
        let r = work(&ctx, made.as_object().unwrap().clone()).await;
        assert_eq!(r["skipped"], true);
    }
}
