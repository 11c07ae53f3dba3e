//! `service`: the node's service manager module (`systemd`, `sysvinit`…: the module
//! named by `use` or the `service_mgr` fact, gathered when the play has none, when such
//! a module exists; else the generic `service`), as Ansible's service action does; arguments `systemd` has no use for
//! (`pattern`, `runlevel`, `sleep`, `arguments`/`args`) are dropped with a warning.

use super::package::manager;
use super::{Context, ModuleRequest, push_warning};
use crate::plugins::action::TaskResult;
use futures::future::LocalBoxFuture;
use serde_json::{Map, Value};

/// The `service` action (its line in [`super::PLUGINS`] says where it works).
pub fn work<'a>(
    ctx: &'a dyn Context,
    mut args: Map<String, Value>,
) -> LocalBoxFuture<'a, TaskResult> {
    Box::pin(async move {
        let module = match manager(ctx, &mut args, "service_mgr").await {
            Ok(Some(m)) if ctx.has_module(&m) => m,
            Ok(_) => "service".to_string(),
            Err(e) => return e,
        };
        let mut dropped = Vec::new();
        if module == "systemd" {
            for key in NOT_FOR_SYSTEMD {
                if args.remove(*key).is_some() {
                    dropped.push(*key);
                }
            }
        }
        let mut result = ctx
            .execute_module(ModuleRequest {
                name: &module,
                args,
                legacy: false,
                transfers: Vec::new(),
                foreground: false,
            })
            .await;
        if !dropped.is_empty() {
            push_warning(
                &mut result,
                format!(
                    "Ignoring \"{}\" as it is not used in \"systemd\"",
                    dropped.join(", ")
                ),
            );
        }
        result
    })
}

/// Arguments the `systemd` module does not take.
const NOT_FOR_SYSTEMD: &[&str] = &["pattern", "runlevel", "sleep", "arguments", "args"];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::action::testing::FakeContext;
    use serde_json::json;

    #[tokio::test]
    async fn the_manager_module_when_it_exists_else_service() {
        let mut ctx = FakeContext::default();
        ctx.vars
            .set_data("ansible_facts", json!({"service_mgr": "systemd"}));
        let args = json!({"name": "cron", "state": "started", "pattern": "cron"});
        let r = work(&ctx, args.as_object().unwrap().clone()).await;
        assert_eq!(
            r["warnings"],
            json!(["Ignoring \"pattern\" as it is not used in \"systemd\""])
        );
        let args = json!({"name": "cron", "use": "openrc"});
        work(&ctx, args.as_object().unwrap().clone()).await;
        let runs = ctx.modules.borrow().clone();
        assert_eq!(runs[0].name, "systemd");
        assert!(!runs[0].args.contains_key("pattern"));
        assert_eq!(runs[1].name, "service");
    }
}
