//! `gather_facts`: the facts module of a POSIX host, `setup` (sandball's component,
//! or ansible-core's when the host asks for legacy modules), with the task's arguments,
//! as Ansible's gather_facts action runs it. `parallel` is the action's own (with one
//! facts module there is nothing to run in parallel): it is not passed on.

use super::{Context, ModuleRequest};
use futures::future::LocalBoxFuture;
use serde_json::{Map, Value};

/// The `gather_facts` action (its line in [`super::PLUGINS`] says where it works).
pub fn work<'a>(
    ctx: &'a dyn Context,
    mut args: Map<String, Value>,
) -> LocalBoxFuture<'a, Map<String, Value>> {
    args.remove("parallel");
    ctx.execute_module(ModuleRequest {
        name: MODULE,
        args,
        legacy: false,
        transfers: Vec::new(),
    })
}

/// The module that gathers.
const MODULE: &str = "setup";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::action::testing::{FakeContext, args};
    use serde_json::json;

    #[tokio::test]
    async fn runs_setup_without_the_actions_own_arguments() {
        let ctx = FakeContext::default();
        work(
            &ctx,
            args(json!({"parallel": true, "gather_subset": ["min"]})),
        )
        .await;
        let run = ctx.modules.borrow()[0].clone();
        assert_eq!(run.name, "setup");
        assert_eq!(run.args, args(json!({"gather_subset": ["min"]})));
    }
}
