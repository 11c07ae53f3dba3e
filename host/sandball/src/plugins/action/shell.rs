//! `shell`: the command line run by a shell, as Ansible's shell action has it. The
//! `shell` component runs it (`executable -c LINE`, the shell granted as a program:
//! the task's `executable`, else `ansible_shell_executable`, else the component's
//! default `/bin/sh`, as ansible-core's command module picks it); where there is no
//! such component, or `sandball_legacy_modules` asks for it, or the component does not
//! carry the task out (an argument it does not know), ansible-core's `command` module
//! runs it with `_uses_shell` (the module runner's legacy stand-in for `shell`).

use super::{Context, ModuleRequest};
use crate::plugins::action::TaskResult;
use futures::future::LocalBoxFuture;
use serde_json::{Map, Value};

/// The `shell` action (its line in [`super::PLUGINS`] says where it works).
pub fn work<'a>(
    ctx: &'a dyn Context,
    mut args: Map<String, Value>,
) -> LocalBoxFuture<'a, TaskResult> {
    // The shell expands the line itself; ansible-core's shell action refuses it.
    if args.contains_key("expand_argument_vars") {
        let msg = "Unsupported parameters for (shell) module: expand_argument_vars";
        return Box::pin(async move { TaskResult::from(super::failed(msg)) });
    }
    if ctx.runs_legacy(COMPONENT) {
        return ctx.execute_module(ModuleRequest {
            legacy: true,
            ..ModuleRequest::new(COMPONENT, Value::Object(args))
        });
    }
    if !matches!(args.get("executable"), Some(Value::String(s)) if !s.is_empty())
        && let Some(shell) = shell_executable(ctx)
    {
        args.insert("executable".into(), Value::String(shell));
    }
    ctx.execute_module(ModuleRequest {
        name: COMPONENT,
        args,
        legacy: false,
        transfers: Vec::new(),
        foreground: false,
    })
}

/// `ansible_shell_executable` (templated), when set (the component's default is
/// `/bin/sh`).
fn shell_executable(ctx: &dyn Context) -> Option<String> {
    let value = match ctx.vars().get("ansible_shell_executable") {
        Some(crate::template::Var::Trusted(v)) => ctx.templar().template(v, ctx.vars()).ok(),
        Some(crate::template::Var::Data(v)) => Some(v.clone()),
        _ => None,
    };
    match value {
        Some(Value::String(s)) if !s.is_empty() => Some(s),
        _ => None,
    }
}

/// The component that runs a shell line.
const COMPONENT: &str = "shell";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::action::testing::FakeContext;
    use serde_json::json;

    #[tokio::test]
    async fn runs_the_shell_component_with_the_shell_to_use() {
        let mut ctx = FakeContext::default();
        let args = json!({"_raw_params": "echo $HOME"});
        work(&ctx, args.as_object().unwrap().clone()).await;
        ctx.vars
            .set_data("ansible_shell_executable", json!("/bin/bash"));
        work(&ctx, args.as_object().unwrap().clone()).await;
        let mine = json!({"_raw_params": "echo", "executable": "/bin/dash"});
        work(&ctx, mine.as_object().unwrap().clone()).await;
        let runs = ctx.modules.borrow();
        assert_eq!(runs[0].name, "shell");
        assert!(!runs[0].legacy);
        assert!(!runs[0].args.contains_key("executable"));
        assert_eq!(runs[1].args["executable"], "/bin/bash");
        assert_eq!(runs[2].args["executable"], "/bin/dash");
        assert!(!runs[0].args.contains_key("_uses_shell"));
    }

    #[tokio::test]
    async fn runs_the_legacy_shell_when_there_is_no_component() {
        let ctx = FakeContext {
            legacy: vec!["shell".into()],
            ..Default::default()
        };
        let args = json!({"_raw_params": "echo $HOME"});
        work(&ctx, args.as_object().unwrap().clone()).await;
        let runs = ctx.modules.borrow();
        assert_eq!(runs[0].name, "shell");
        assert!(runs[0].legacy);
        assert!(!runs[0].args.contains_key("executable"));
        assert_eq!(runs[0].args["_raw_params"], "echo $HOME");
    }

    #[tokio::test]
    async fn refuses_expand_argument_vars_before_running_anything() {
        let ctx = FakeContext::default();
        let args = json!({"_raw_params": "echo $HOME", "expand_argument_vars": false});
        let r = work(&ctx, args.as_object().unwrap().clone()).await;
        assert_eq!(
            r["msg"],
            "Unsupported parameters for (shell) module: expand_argument_vars"
        );
        assert!(ctx.modules.borrow().is_empty());
    }
}
