//! `shell`: the `command` module with the command line run by the shell, as Ansible's
//! shell action has it (`_uses_shell`). It runs ansible-core's `command` module: the
//! `command` component runs programs directly and has no shell to give.

use super::{Context, ModuleRequest};
use futures::future::LocalBoxFuture;
use serde_json::{Map, Value};

/// The `shell` action (its line in [`super::PLUGINS`] says where it works).
pub fn work<'a>(
    ctx: &'a dyn Context,
    mut args: Map<String, Value>,
) -> LocalBoxFuture<'a, Map<String, Value>> {
    args.insert("_uses_shell".into(), Value::Bool(true));
    ctx.execute_module(ModuleRequest {
        name: MODULE,
        args,
        legacy: true,
        transfers: Vec::new(),
    })
}

/// The module `shell` runs.
const MODULE: &str = "command";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::action::testing::FakeContext;
    use serde_json::json;

    #[tokio::test]
    async fn runs_the_legacy_command_module_through_the_shell() {
        let ctx = FakeContext::default();
        let args = json!({"_raw_params": "echo $HOME"});
        work(&ctx, args.as_object().unwrap().clone()).await;
        let runs = ctx.modules.borrow();
        assert_eq!(runs[0].name, "command");
        assert!(runs[0].legacy);
        assert_eq!(runs[0].args["_uses_shell"], true);
        assert_eq!(runs[0].args["_raw_params"], "echo $HOME");
    }
}
