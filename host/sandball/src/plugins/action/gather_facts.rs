//! `gather_facts`: the facts module of a POSIX host, `setup` (sandball's component,
//! or ansible-core's when the host asks for legacy modules), with the task's arguments,
//! as Ansible's gather_facts action runs it.

use super::{ActionPlugin, Context, ModuleRequest, Runs};
use futures::future::LocalBoxFuture;
use serde_json::{Map, Value};

/// The `gather_facts` action plugin.
pub struct GatherFacts;

/// The module that gathers.
const MODULE: &str = "setup";

impl ActionPlugin for GatherFacts {
    fn runs<'a>(&self, _action: &'a str) -> Runs<'a> {
        Runs::Module {
            name: MODULE,
            legacy: false,
        }
    }

    fn run<'a>(
        &'a self,
        ctx: &'a dyn Context,
        _action: &'a str,
        args: Map<String, Value>,
    ) -> LocalBoxFuture<'a, Map<String, Value>> {
        ctx.execute_module(ModuleRequest {
            name: MODULE,
            args,
            legacy: false,
            transfers: Vec::new(),
        })
    }
}
