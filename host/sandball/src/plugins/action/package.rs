//! `package`: the node's package manager module (`apt`, `dnf`, `yum`, `apk`…), chosen
//! by `use` or, by default, by the `pkg_mgr` fact (gathered for the purpose when the
//! play has none), and run with the task's other arguments, as Ansible's package action
//! does. [`manager`] serves `service` too.

use super::{Context, ModuleRequest, failed};
use crate::plugins::action::TaskResult;
use futures::future::LocalBoxFuture;
use serde_json::{Map, Value, json};

/// The `package` action (its line in [`super::PLUGINS`] says where it works).
pub fn work<'a>(
    ctx: &'a dyn Context,
    mut args: Map<String, Value>,
) -> LocalBoxFuture<'a, TaskResult> {
    Box::pin(async move {
        let module = match manager(ctx, &mut args, "pkg_mgr").await {
            Ok(Some(m)) => m,
            Ok(None) => {
                return TaskResult::from(failed(
                    "Could not detect which package manager to use. Try gathering facts or setting the \"use\" option.",
                ));
            }
            Err(e) => return e,
        };
        ctx.execute_module(ModuleRequest {
            name: &module,
            args,
            legacy: false,
            transfers: Vec::new(),
            foreground: false,
        })
        .await
    })
}

/// The manager a task asks for: its `use` argument (taken out of `args`) unless that is
/// `auto`, else the host's fact `fact` (`pkg_mgr`, `service_mgr`), else that fact
/// gathered now; `None` when the node's manager is unknown. `Err` is the failed result
/// of gathering.
pub async fn manager(
    ctx: &dyn Context,
    args: &mut Map<String, Value>,
    fact: &str,
) -> Result<Option<String>, TaskResult> {
    let known = |name: &str| {
        (!name.is_empty() && name != "auto" && name != "unknown").then(|| name.to_string())
    };
    if let Some(chosen) = args.remove("use").and_then(|v| v.as_str().and_then(known)) {
        return Ok(Some(chosen));
    }
    if let Some(found) = ctx
        .templar()
        .evaluate(&format!("ansible_facts['{fact}']"), ctx.vars())
        .ok()
        .and_then(|v| v.as_str().and_then(known))
    {
        return Ok(Some(found));
    }
    let gathered = ctx
        .execute_module(ModuleRequest::new(
            "setup",
            json!({"gather_subset": ["!all"], "filter": format!("ansible_{fact}")}),
        ))
        .await;
    if gathered
        .get("failed")
        .is_some_and(sandball_pycompat::pyops::py_truth)
    {
        return Err(gathered);
    }
    Ok(gathered
        .get("ansible_facts")
        .and_then(|f| f.get(format!("ansible_{fact}")))
        .and_then(|v| v.as_str().and_then(known)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::action::testing::FakeContext;

    #[tokio::test]
    async fn the_fact_or_use_picks_the_module() {
        let mut ctx = FakeContext::default();
        ctx.vars
            .set_data("ansible_facts", json!({"pkg_mgr": "apt"}));
        let args = json!({"name": "curl", "state": "present"});
        work(&ctx, args.as_object().unwrap().clone()).await;
        let args = json!({"name": "curl", "use": "dnf"});
        work(&ctx, args.as_object().unwrap().clone()).await;
        let runs = ctx.modules.borrow().clone();
        assert_eq!(runs[0].name, "apt");
        assert_eq!(
            runs[0].args,
            json!({"name": "curl", "state": "present"})
                .as_object()
                .unwrap()
                .clone()
        );
        assert_eq!(runs[1].name, "dnf");
        assert!(!runs[1].args.contains_key("use"));
    }

    #[tokio::test]
    async fn without_the_fact_it_is_gathered() {
        let ctx = FakeContext::default();
        let args = json!({"name": "curl"});
        let r = work(&ctx, args.as_object().unwrap().clone()).await;
        let runs = ctx.modules.borrow().clone();
        assert_eq!(runs[0].name, "setup");
        assert_eq!(runs[0].args["filter"], "ansible_pkg_mgr");
        // The fake node has no package manager to report.
        assert_eq!(runs.len(), 1);
        assert!(
            r["msg"]
                .as_str()
                .unwrap()
                .contains("Could not detect which package manager")
        );
    }
}
