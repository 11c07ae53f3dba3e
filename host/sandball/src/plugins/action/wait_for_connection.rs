//! `wait_for_connection`: waits until the host answers a `ping` module run (through
//! its connection and shim session), after `delay`, trying every `sleep` seconds until
//! `timeout`, as Ansible's wait_for_connection action does; skipped in check mode.

use super::{Context, ModuleRequest, failed, ok_with};
use crate::plugins::action::TaskResult;
use futures::future::LocalBoxFuture;
use serde_json::{Map, Value, json};
use std::time::{Duration, Instant};

/// The `wait_for_connection` action (its line in [`super::PLUGINS`] says where it works).
pub fn work<'a>(ctx: &'a dyn Context, args: Map<String, Value>) -> LocalBoxFuture<'a, TaskResult> {
    Box::pin(async move { TaskResult::from(run(ctx, &args).await) })
}

async fn run(ctx: &dyn Context, args: &Map<String, Value>) -> Map<String, Value> {
    let seconds = |key: &str, default: u64| super::args::seconds(args, key, default);
    let (delay, sleep, timeout) = match (
        seconds("delay", 0),
        seconds("sleep", 1),
        seconds("timeout", 600),
    ) {
        (Ok(d), Ok(s), Ok(t)) => (d, s, t),
        (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => return failed(e.to_string()),
    };
    if let Err(e) = seconds("connect_timeout", 5) {
        return failed(e.to_string());
    }
    if ctx.check_mode() {
        return ok_with(json!({"skipped": true}));
    }
    let start = Instant::now();
    tokio::time::sleep(Duration::from_secs(delay)).await;
    let deadline = Instant::now() + Duration::from_secs(timeout);
    let mut last = String::from("no attempt was made");
    while Instant::now() < deadline {
        let r = ctx
            .execute_module(ModuleRequest {
                name: "ping",
                args: Map::new(),
                legacy: false,
                transfers: Vec::new(),
                foreground: false,
            })
            .await;
        if r.get("ping").and_then(Value::as_str) == Some("pong") {
            return ok_with(json!({"elapsed": start.elapsed().as_secs()}));
        }
        last = r
            .get("msg")
            .and_then(Value::as_str)
            .unwrap_or("ping test failed")
            .to_string();
        tokio::time::sleep(Duration::from_secs(sleep)).await;
    }
    let mut r = failed(format!("timed out waiting for ping module test: {last}"));
    r.insert("elapsed".into(), json!(start.elapsed().as_secs()));
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::action::testing::FakeContext;

    #[tokio::test]
    async fn gives_up_after_the_timeout_with_the_last_error() {
        // The fake node never answers `pong`.
        let ctx = FakeContext::default();
        let r = run(&ctx, json!({"timeout": 1, "sleep": 1}).as_object().unwrap()).await;
        assert_eq!(r["failed"], true);
        assert!(
            r["msg"]
                .as_str()
                .unwrap()
                .starts_with("timed out waiting for ping module test")
        );
        assert!(!ctx.modules.borrow().is_empty());
        let ctx = FakeContext {
            check_mode: true,
            ..Default::default()
        };
        let r = run(&ctx, &Map::new()).await;
        assert_eq!(r["skipped"], true);
        assert!(ctx.modules.borrow().is_empty());
    }
}
