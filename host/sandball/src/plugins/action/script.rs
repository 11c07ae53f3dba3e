//! `script`: a script from the controller (the role's or the playbook's `files/`) run on
//! the node through its shell, with its arguments, as Ansible's script action does:
//! `creates`/`removes` skip it, `chdir` and `executable` apply, check mode skips it
//! (or reports `changed` when `creates`/`removes` is given). The script runs outside the
//! sandbox with the connection (or become) user's rights, so policy must allow it as it
//! allows legacy modules. It is written to a private temporary directory made in the
//! same command that runs and removes it, as the user that runs it.

use super::raw::command_result;
use super::{Context, check_args, failed, ok_with};
use crate::playbook::search_path;
use crate::plugins::action::TaskResult;
use futures::future::LocalBoxFuture;
use sandball_pycompat::shell::quote;
use serde_json::{Map, Value, json};

/// The `script` action (its line in [`super::PLUGINS`] says where it works).
pub fn work<'a>(ctx: &'a dyn Context, args: Map<String, Value>) -> LocalBoxFuture<'a, TaskResult> {
    Box::pin(async move {
        TaskResult::from(match run(ctx, &args).await {
            Ok(r) | Err(r) => r,
        })
    })
}

async fn run(
    ctx: &dyn Context,
    args: &Map<String, Value>,
) -> Result<Map<String, Value>, Map<String, Value>> {
    check_args(
        "script",
        args,
        &[
            "_raw_params",
            "cmd",
            "creates",
            "removes",
            "chdir",
            "executable",
            "decrypt",
        ],
    )?;
    let text = |key: &str| {
        args.get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    let command = match (text("_raw_params"), text("cmd")) {
        (Some(_), Some(_)) => {
            return Err(super::raised(
                super::Failure::Raised,
                "parameters are mutually exclusive: _raw_params|cmd",
            ));
        }
        (Some(c), None) | (None, Some(c)) => c.trim(),
        (None, None) => return Err(failed("one of the following is required: _raw_params, cmd")),
    };
    if let Some(path) = text("creates")
        && exists(ctx, path).await?
    {
        return Ok(skipped(format!("{path} exists, matching creates option")));
    }
    if let Some(path) = text("removes")
        && !exists(ctx, path).await?
    {
        return Ok(skipped(format!(
            "{path} does not exist, matching removes option"
        )));
    }
    let chdir = text("chdir");
    if let Some(dir) = chdir
        && !dir.starts_with('/')
    {
        return Err(failed(format!(
            "chdir {dir} must be an absolute path for a Unix-aware remote node"
        )));
    }
    // The script and its arguments as Ansible splits them: the arguments stay as
    // written (quotes and all), the script's name is unquoted.
    let words = crate::playbook::splitter::split_args(command)
        .ok()
        .filter(|w| !w.is_empty())
        .ok_or_else(|| failed(format!("cannot read the script's command line: {command}")))?;
    let name = crate::playbook::splitter::unquote(&words[0]).to_string();
    let args = words[1..].join(" ");
    let source =
        search_path::find(ctx.vars(), "files", &name).map_err(|e| failed(e.to_string()))?;
    let script = std::fs::read(&source).map_err(|e| {
        failed(format!(
            "Could not read the script {}: {e}",
            source.display()
        ))
    })?;
    if ctx.check_mode() {
        if text("creates").is_some() || text("removes").is_some() {
            return Ok(ok_with(json!({"changed": true})));
        }
        return Ok(skipped("Check mode is not supported for this task.".into()));
    }
    ctx.allow_unsandboxed("script")?;
    let base = source
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "script".into());
    // The copy of the script, then the arguments as written.
    let target = format!("\"$d\"/{} {args}", quote(&base));
    let exe = text("executable")
        .map(|e| format!("{e} "))
        .unwrap_or_default();
    let cd = chdir
        .map(|d| format!("cd {} && ", quote(d)))
        .unwrap_or_default();
    // The task's `environment`, as Ansible puts it before the script's command line.
    let env = ctx
        .environment()
        .and_then(|env| crate::plugins::shell::env_prefix(&env))
        .map_err(failed)?;
    let line = format!(
        "umask 77 && d=$(mktemp -d) && cat > \"$d\"/{name} && chmod u+x \"$d\"/{name} && ( {cd}{env}{exe}{target} ); rc=$?; rm -rf \"$d\"; exit $rc",
        name = quote(&base),
    );
    let out = ctx.exec_command(&line, Some(&script)).await?;
    Ok(command_result(&out))
}

/// Whether a path exists on the node.
async fn exists(ctx: &dyn Context, path: &str) -> Result<bool, Map<String, Value>> {
    let out = ctx
        .exec_command(&format!("test -e {}", quote(path)), None)
        .await?;
    Ok(out.rc == 0)
}

fn skipped(msg: String) -> Map<String, Value> {
    ok_with(json!({"skipped": true, "msg": msg}))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::action::testing::FakeContext;

    fn project(script: &str) -> (tempfile::TempDir, FakeContext) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("files")).unwrap();
        std::fs::write(dir.path().join("files/s.sh"), script).unwrap();
        let mut ctx = FakeContext::default();
        ctx.vars
            .set_data("playbook_dir", json!(dir.path().display().to_string()));
        (dir, ctx)
    }

    #[tokio::test]
    async fn runs_the_script_with_its_arguments() {
        let (dir, ctx) = project("#!/bin/sh\necho \"args: $*\"; pwd\nexit 3\n");
        let args = json!({"_raw_params": "s.sh 'a b' c", "chdir": "/"});
        let r = run(&ctx, args.as_object().unwrap()).await.unwrap();
        assert_eq!(r["stdout_lines"], json!(["args: a b c", "/"]));
        assert_eq!(r["rc"], 3);
        assert_eq!(r["failed"], true);
        let marker = dir.path().join("made");
        let args = json!({"cmd": "s.sh", "creates": marker.display().to_string()});
        std::fs::write(&marker, "").unwrap();
        let r = run(&ctx, args.as_object().unwrap()).await.unwrap();
        assert_eq!(r["skipped"], true);
    }

    #[tokio::test]
    async fn the_task_environment_reaches_the_script() {
        let (_dir, mut ctx) = project("#!/bin/sh\necho \"$option|$other\"\n");
        ctx.environment = json!({"option": "Zażółć gęślą", "other": "it's"})
            .as_object()
            .unwrap()
            .clone();
        let r = run(&ctx, json!({"_raw_params": "s.sh"}).as_object().unwrap())
            .await
            .unwrap();
        assert_eq!(r["stdout_lines"], json!(["Zażółć gęślą|it's"]));
        ctx.environment = json!({"not a name": "x"}).as_object().unwrap().clone();
        let r = run(&ctx, json!({"_raw_params": "s.sh"}).as_object().unwrap()).await;
        assert!(
            r.unwrap_err()["msg"]
                .as_str()
                .unwrap()
                .contains("'not a name' is not a valid environment variable name")
        );
    }

    #[tokio::test]
    async fn check_mode_does_not_run_it() {
        let (dir, mut ctx) = project("#!/bin/sh\ntouch \"$1\"\n");
        ctx.check_mode = true;
        let marker = dir.path().join("touched");
        let line = format!("s.sh {}", marker.display());
        let r = run(&ctx, json!({ "_raw_params": line }).as_object().unwrap())
            .await
            .unwrap();
        assert_eq!(r["skipped"], true);
        assert!(!marker.exists());
    }
}
