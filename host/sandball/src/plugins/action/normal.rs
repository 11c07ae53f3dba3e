//! The `normal` action: runs the module of the action's name on the node, through the
//! executor's module runner ([`Context::execute_module`]), which sends it, runs it
//! under its grant and reads its result.

use super::{ActionPlugin, Context, ModuleRequest, Runs, TaskResult};
use futures::future::LocalBoxFuture;
use serde_json::{Map, Value};

/// The `normal` action plugin: the module of the action's name, with the task's
/// arguments.
pub struct Normal;

impl ActionPlugin for Normal {
    fn supports_async(&self, _action: &str) -> bool {
        true
    }

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
        args: Map<String, Value>,
    ) -> LocalBoxFuture<'a, TaskResult> {
        Box::pin(async move {
            let mut r = ctx
                .execute_module(ModuleRequest {
                    name: action,
                    args,
                    legacy: false,
                    transfers: Vec::new(),
                    foreground: false,
                })
                .await;
            // The facts of a `setup` task are not shown with -v, as in ansible-core.
            if sandball_pycompat::fqcn::short_name(action) == "setup" {
                r.verbose_override = true;
            }
            r
        })
    }
}
