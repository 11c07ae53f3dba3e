//! `gather_facts`: the facts module of a POSIX host, `setup` (sandball's component,
//! or ansible-core's when the host asks for legacy modules), with the task's arguments,
//! as Ansible's gather_facts action runs it.

use super::{Context, ModuleRequest};
use futures::future::LocalBoxFuture;
use serde_json::{Map, Value};

/// The `gather_facts` action (its line in [`super::PLUGINS`] says where it works).
pub fn work<'a>(
    ctx: &'a dyn Context,
    args: Map<String, Value>,
) -> LocalBoxFuture<'a, Map<String, Value>> {
    ctx.execute_module(ModuleRequest {
        name: MODULE,
        args,
        legacy: false,
        transfers: Vec::new(),
    })
}

/// The module that gathers.
const MODULE: &str = "setup";
