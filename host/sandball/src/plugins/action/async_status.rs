//! `async_status`: where a background job (`async` with `poll: 0`) stands on the task's
//! host, asked of the shim that keeps it — `finished` and, once it has, the job's own
//! result — or (`mode: cleanup`) its record removed, as Ansible's async_status does.

use super::{Context, check_args};
use crate::plugins::action::TaskResult;
use futures::future::LocalBoxFuture;
use serde_json::{Map, Value};

/// The `async_status` action (its line in [`super::PLUGINS`] says where it works).
pub fn work<'a>(ctx: &'a dyn Context, args: Map<String, Value>) -> LocalBoxFuture<'a, TaskResult> {
    Box::pin(async move {
        if let Err(e) = check_args("async_status", &args, &["jid", "mode"]) {
            return TaskResult::from(e);
        }
        let jid = match args.get("jid") {
            Some(Value::String(j)) if !j.is_empty() => j.clone(),
            Some(Value::Number(n)) => n.to_string(),
            _ => {
                return super::raised(super::Failure::Raised, "missing required arguments: jid")
                    .into();
            }
        };
        let cleanup = match args.get("mode").and_then(Value::as_str) {
            None | Some("status") => false,
            Some("cleanup") => true,
            Some(other) => {
                return super::raised(
                    super::Failure::Raised,
                    format!("value of mode must be one of: status, cleanup, got: {other}"),
                )
                .into();
            }
        };
        ctx.job_status(&jid, cleanup).await
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::action::testing::{FakeContext, args};
    use serde_json::json;

    #[tokio::test]
    async fn bad_arguments_are_refused_before_the_node_is_asked() {
        let ctx = FakeContext::default();
        let r = work(&ctx, args(json!({}))).await;
        assert_eq!(r["msg"], "missing required arguments: jid");
        let r = work(&ctx, args(json!({"jid": "j1", "mode": "wait"}))).await;
        assert_eq!(
            r["msg"],
            "value of mode must be one of: status, cleanup, got: wait"
        );
        assert!(ctx.jobs.borrow().is_empty());
        let _ = work(&ctx, args(json!({"jid": "j1", "mode": "cleanup"}))).await;
        assert_eq!(*ctx.jobs.borrow(), vec![("j1".to_string(), true)]);
    }
}
