//! The `raw` action: a command line run over the connection as it is, without the shim
//! or any module (so it works where the shim cannot: another architecture, a `noexec`
//! home, a node being bootstrapped), as the become user when there is one.

use super::{Context, check_args, failed};
use crate::plugins::action::TaskResult;
use crate::plugins::connection::ExecOutput;
use futures::future::LocalBoxFuture;
use sandball_pycompat::shell::quote;
use serde_json::{Map, Value, json};

/// The `raw` action (its line in [`super::PLUGINS`] says where it works).
pub fn work<'a>(ctx: &'a dyn Context, args: Map<String, Value>) -> LocalBoxFuture<'a, TaskResult> {
    Box::pin(async move { TaskResult::from(run(ctx, &args).await) })
}

/// Runs `raw` with its arguments (`_raw_params`, `executable`). Check mode skips it, as
/// Ansible does: a raw command cannot say what it would change.
pub async fn run(ctx: &dyn Context, args: &Map<String, Value>) -> Map<String, Value> {
    if let Err(e) = check_args("raw", args, &["_raw_params", "executable"]) {
        return e;
    }
    let Some(cmd) = args.get("_raw_params").and_then(Value::as_str) else {
        return failed("raw: the command to run is missing");
    };
    if ctx.check_mode() {
        return super::ok_with(
            json!({"changed": false, "skipped": true, "msg": "check mode is not supported by raw"}),
        );
    }
    let line = match args.get("executable").and_then(Value::as_str) {
        Some(exe) if !exe.is_empty() => format!("{} -c {}", quote(exe), quote(cmd)),
        _ => cmd.to_string(),
    };
    match ctx.exec_command(&line, None).await {
        Ok(out) => command_result(&out),
        Err(result) => result,
    }
}

/// The result of a command line run over the connection (`raw`, `script`): `changed`,
/// `rc`, its output as text and lines; a non-zero status fails it.
pub fn command_result(out: &ExecOutput) -> Map<String, Value> {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let lines = |s: &str| -> Vec<Value> {
        sandball_pycompat::pyops::splitlines(s)
            .into_iter()
            .map(|l| Value::String(l.to_string()))
            .collect()
    };
    let mut result = super::ok_with(json!({
        "changed": true,
        "rc": out.rc,
        "stdout": stdout,
        "stdout_lines": lines(&stdout),
        "stderr": stderr,
        "stderr_lines": lines(&stderr),
    }));
    if out.rc != 0 {
        result.insert("failed".into(), Value::Bool(true));
        result.insert("msg".into(), Value::String("non-zero return code".into()));
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::action::testing::{FakeContext, args};

    #[tokio::test]
    async fn runs_as_ansible_reports() {
        let mut ctx = FakeContext::default();
        let r = run(
            &ctx,
            &args(json!({"_raw_params": "echo hi; echo oops >&2"})),
        )
        .await;
        assert_eq!(r["rc"], 0);
        assert_eq!(r["stdout_lines"], json!(["hi"]));
        assert_eq!(r["stderr"], "oops\n");
        assert_eq!(r["changed"], true);
        assert!(r.get("failed").is_none());

        let r = run(&ctx, &args(json!({"_raw_params": "exit 3"}))).await;
        assert_eq!(r["rc"], 3);
        assert_eq!(r["failed"], true);
        assert_eq!(r["msg"], "non-zero return code");

        let r = run(
            &ctx,
            &args(json!({"_raw_params": "echo $0", "executable": "/bin/bash"})),
        )
        .await;
        assert_eq!(r["stdout"], "/bin/bash\n");

        let r = run(&ctx, &args(json!({"_raw_params": "true", "chdir": "/"}))).await;
        assert!(
            r["msg"]
                .as_str()
                .unwrap()
                .contains("Unsupported parameters for (raw)")
        );

        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("marker");
        ctx.check_mode = true;
        let line = format!("touch {}", marker.display());
        let r = run(&ctx, &args(json!({ "_raw_params": line }))).await;
        assert_eq!(r["skipped"], true);
        assert!(!marker.exists(), "check mode ran the command");
    }
}
