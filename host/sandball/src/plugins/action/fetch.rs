//! `fetch`: copies a file from the node to the controller, as Ansible's fetch action
//! does. The node reads it with the `slurp` component (granted read on `src` only); the
//! controller writes it under `dest/<host>/<src>` (or at `dest` itself with `flat`),
//! atomically, only when its checksum differs, and checks the written copy against the
//! node's checksum (`validate_checksum`). A missing file fails the task, or with
//! `fail_on_missing: false` is reported and ignored. Check mode skips it, as Ansible's
//! does.

use super::summaries::ERROR_MESSAGE;
use super::{Context, Failure, ModuleRequest, failed, ok_with, raised};
use crate::plugins::action::TaskResult;
use base64::Engine;
use futures::future::LocalBoxFuture;
use sandball_pycompat::boolean::truthy;
use serde_json::{Map, Value, json};
use sha1::{Digest, Sha1};
use std::path::{Path, PathBuf};

/// The `fetch` action (its line in [`super::PLUGINS`] says where it works).
pub fn work<'a>(ctx: &'a dyn Context, args: Map<String, Value>) -> LocalBoxFuture<'a, TaskResult> {
    Box::pin(async move {
        // Errors are the action's refusals, raised as ansible-core's fetch raises them.
        match fetch(ctx, &args).await {
            Ok(r) => r,
            Err(msg) => raised(Failure::Raised, msg).into(),
        }
    })
}

/// The module that reads the file on the node.
const MODULE: &str = "slurp";

async fn fetch(ctx: &dyn Context, args: &Map<String, Value>) -> Result<TaskResult, String> {
    if ctx.check_mode() {
        return Ok(ok_with(json!({
            "skipped": true,
            "msg": "check mode not (yet) supported for this module",
        }))
        .into());
    }
    let (src, dest) = match (args.get("src"), args.get("dest")) {
        (Some(Value::String(s)), Some(Value::String(d))) => (s.clone(), d.clone()),
        (None, _) | (_, None) => return Err("src and dest are required".into()),
        (Some(Value::String(_)), Some(_)) => {
            return Err("Invalid type supplied for dest option, it must be a string".into());
        }
        _ => return Err("Invalid type supplied for source option, it must be a string".into()),
    };
    let flat = truthy(args.get("flat"), false)?;
    let fail_on_missing = truthy(args.get("fail_on_missing"), true)?;
    let validate = truthy(args.get("validate_checksum"), true)?;

    let read = ctx
        .execute_module(ModuleRequest::new(MODULE, json!({ "src": src })))
        .await;
    if read
        .get("unreachable")
        .is_some_and(sandball_pycompat::pyops::py_truth)
    {
        return Ok(read);
    }
    if read
        .get("failed")
        .is_some_and(sandball_pycompat::pyops::py_truth)
    {
        let said = read.get("msg").and_then(Value::as_str).unwrap_or_default();
        // A directory is the action's own finding (ansible-core's learns it from stat).
        if said.to_lowercase().starts_with("source is a directory") {
            let msg = "remote file is a directory, fetch cannot work on directories";
            return Ok(if fail_on_missing {
                raised(Failure::Action, msg).into()
            } else {
                ok_with(json!({ "msg": format!("{msg}, not transferring, ignored") })).into()
            });
        }
        let mut result = if fail_on_missing {
            // The module's failure, under the action's message; the error shown before
            // it is still the module's.
            let mut r = read.clone();
            r.insert(ERROR_MESSAGE.into(), Value::from(said));
            r
        } else {
            ok_with(json!({ "file": src })).into()
        };
        if said.contains("not found") {
            result.insert(
                "msg".into(),
                Value::from("the remote file does not exist, not transferring, ignored"),
            );
        }
        return Ok(result);
    }
    let data = read
        .get("content")
        .and_then(Value::as_str)
        .map(|c| base64::engine::general_purpose::STANDARD.decode(c))
        .transpose()
        .map_err(|e| format!("the node sent the file in a form that cannot be read: {e}"))?
        .unwrap_or_default();
    let remote_checksum = sha1_hex(&data);

    let base = |p: &str| -> PathBuf {
        let path = PathBuf::from(p);
        if path.is_absolute() {
            path
        } else {
            playbook_dir(ctx).join(path)
        }
    };
    let dest = if flat {
        let mut d = dest.clone();
        if Path::new(&d).is_dir() && !d.ends_with('/') {
            return Err(
                "dest is an existing directory, use a trailing slash if you want to fetch src into that directory".into(),
            );
        }
        if d.ends_with('/') {
            d.push_str(
                Path::new(&src)
                    .file_name()
                    .map(|n| n.to_string_lossy())
                    .unwrap_or_default()
                    .as_ref(),
            );
            if Path::new(&d).is_dir() {
                return Err(format!(
                    "calculated dest '{d}' is an existing directory, use another path that does not point to an existing directory"
                ));
            }
        }
        crate::local_files::normalized(&base(&d))
    } else {
        crate::local_files::normalized(&base(&format!("{dest}/{}/{src}", ctx.host())))
    };
    let root = if flat {
        dest_root(&dest_arg(args))
    } else {
        dest_arg(args)
    };
    if !dest.starts_with(crate::local_files::normalized(&base(&root))) {
        return Err(format!(
            "Detected directory traversal, expected to be contained in '{}' but got '{}'",
            dest_arg(args),
            dest.display()
        ));
    }
    let shown = dest.display().to_string();
    let local = std::fs::read(&dest).ok().filter(|_| dest.is_file());
    let md5 = |bytes: &[u8]| hex::encode(md5::Md5::digest(bytes));
    if let Some(existing) = local
        && sha1_hex(&existing) == remote_checksum
    {
        return Ok(ok_with(json!({
            "changed": false,
            "md5sum": md5(&existing),
            "file": src,
            "dest": shown,
            "checksum": remote_checksum,
        }))
        .into());
    }
    crate::local_files::write_atomically(&dest, &data)
        .map_err(|e| format!("Failed to fetch the file: {e}"))?;
    let written = std::fs::read(&dest).map_err(|e| format!("Failed to fetch the file: {e}"))?;
    let new_checksum = sha1_hex(&written);
    if validate && new_checksum != remote_checksum {
        let mut r = failed("checksum mismatch");
        r.extend(
            json!({"md5sum": md5(&written), "file": src, "dest": shown, "remote_md5sum": null,
                   "checksum": new_checksum, "remote_checksum": remote_checksum})
            .as_object()
            .cloned()
            .unwrap_or_default(),
        );
        return Ok(r.into());
    }
    Ok(ok_with(json!({
        "changed": true,
        "md5sum": md5(&written),
        "dest": shown,
        "remote_md5sum": null,
        "checksum": new_checksum,
        "remote_checksum": remote_checksum,
    }))
    .into())
}

/// The `dest` argument as written.
fn dest_arg(args: &Map<String, Value>) -> String {
    args.get("dest")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// The directory a `dest` must stay within: itself, or its parent when it names a file.
fn dest_root(dest: &str) -> String {
    if dest.ends_with('/') || Path::new(dest).is_dir() {
        dest.to_string()
    } else {
        Path::new(dest)
            .parent()
            .map(|p| p.display().to_string())
            .unwrap_or_default()
    }
}

/// `playbook_dir`, where relative destinations are.
fn playbook_dir(ctx: &dyn Context) -> PathBuf {
    match ctx.vars().get("playbook_dir") {
        Some(crate::template::Var::Trusted(Value::String(s)))
        | Some(crate::template::Var::Data(Value::String(s))) => PathBuf::from(s),
        _ => PathBuf::from("."),
    }
}

fn sha1_hex(bytes: &[u8]) -> String {
    hex::encode(Sha1::digest(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_normalized_in_their_text() {
        assert_eq!(
            crate::local_files::normalized(Path::new("/a/b//c/../d/./e")),
            PathBuf::from("/a/b/d/e")
        );
        assert_eq!(dest_root("out/"), "out/");
        assert_eq!(dest_root("/x/y.txt"), "/x");
    }
}
