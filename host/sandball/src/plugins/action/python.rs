//! Python action plugins: a task whose action has one in an `action_plugins/`
//! directory (the playbook's, a role's, `ANSIBLE_ACTION_PLUGINS`) or in a collection
//! runs it in ansible-core on the controller, as ansible-playbook does
//! (`plugins/loader` finds and runs it). What the plugin does through the node comes
//! back here: each module it runs is run as any task's module (a sandball component
//! under the policy's grant, or a legacy module), each command it sends runs over the
//! task's connection as the task's become user.

use super::{ActionPlugin, Context, ModuleRequest, Runs, failed};
use crate::plugins::action::TaskResult;
use crate::plugins::loader::{self, ActionCalls, PluginError};
use base64::Engine;
use futures::future::LocalBoxFuture;
use serde_json::{Map, Value, json};

/// The action plugin that runs a Python one.
pub struct Python;

impl ActionPlugin for Python {
    /// What it does on the node is known only when it runs.
    fn runs<'a>(&self, _action: &'a str) -> Runs<'a> {
        Runs::Chosen
    }

    /// Whether it can run in the background is the plugin's class's to say
    /// (`_supports_async`), as in ansible-core.
    fn supports_async(&self, action: &str) -> bool {
        loader::action_traits(action).supports_async
    }

    fn run<'a>(
        &'a self,
        ctx: &'a dyn Context,
        action: &'a str,
        args: Map<String, Value>,
    ) -> LocalBoxFuture<'a, TaskResult> {
        Box::pin(async move {
            let Some(handler) = loader::action_plugin(action) else {
                return TaskResult::from(failed(format!(
                    "the action plugin of '{action}' is gone"
                )));
            };
            let lookup = crate::template::lookups::TaskLookup {
                templar: ctx.templar(),
                vars: ctx.vars(),
                loop_action: None,
            };
            let variables = crate::template::lookups::plain_variables(&lookup);
            let (async_val, poll) = ctx.background().unwrap_or_default();
            let task = json!({
                "check_mode": ctx.check_mode(),
                "diff": ctx.diff(),
                "async_val": async_val,
                "poll": poll,
            });
            let calls = Calls { ctx };
            match loader::run_action(&handler, action, &args, task, variables, &calls).await {
                Ok(mut result) => {
                    // A plugin may ask for its result to be hidden, as under ansible-core.
                    if let Some(hide) = result.remove("_ansible_no_log")
                        && sandball_pycompat::pyops::py_truth(&hide)
                    {
                        result.insert("_ansible_no_log".into(), Value::Bool(true));
                    }
                    TaskResult::from_wire(result)
                }
                Err(PluginError::Missing { why, .. }) => {
                    failed(format!("The action plugin '{handler}' cannot run{why}.")).into()
                }
                Err(PluginError::Failed(msg)) => failed(msg).into(),
            }
        })
    }
}

/// The plugin's calls back, answered through the task's context.
struct Calls<'a> {
    ctx: &'a dyn Context,
}

impl ActionCalls for Calls<'_> {
    fn answer<'a>(&'a self, call: Value) -> LocalBoxFuture<'a, Value> {
        Box::pin(async move {
            let b64 = base64::engine::general_purpose::STANDARD;
            match call.get("call").and_then(Value::as_str) {
                Some("module") => {
                    let name = call.get("name").and_then(Value::as_str).unwrap_or_default();
                    let args = call.get("args").cloned().unwrap_or(Value::Null);
                    let mut request = ModuleRequest::new(name, args);
                    // In an `async` task, only a run the plugin asks to wrap is a job.
                    request.foreground = !call
                        .get("wrap_async")
                        .and_then(Value::as_bool)
                        .unwrap_or(false);
                    let result = self.ctx.execute_module(request).await;
                    json!({ "result": result.to_wire() })
                }
                Some("exec") => {
                    let cmd = call.get("cmd").and_then(Value::as_str).unwrap_or_default();
                    let stdin = match call.get("stdin").and_then(Value::as_str) {
                        Some(data) => match b64.decode(data) {
                            Ok(bytes) => Some(bytes),
                            Err(e) => return json!({"error": format!("bad stdin: {e}")}),
                        },
                        None => None,
                    };
                    match self.ctx.exec_command(cmd, stdin.as_deref()).await {
                        Ok(out) => json!({
                            "rc": out.rc,
                            "stdout": b64.encode(&out.stdout),
                            "stderr": b64.encode(&out.stderr),
                        }),
                        Err(result) => json!({
                            "error": result.get("msg").and_then(Value::as_str).unwrap_or("the command failed"),
                        }),
                    }
                }
                other => json!({"error": format!("unknown call {other:?}")}),
            }
        })
    }
}
