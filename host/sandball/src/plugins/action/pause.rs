//! `pause`: waits `seconds` or `minutes`, or for the user to press enter after a
//! `prompt` (the answer is `user_input`), once for the play, as Ansible's pause action
//! does. Without a terminal a timed pause still waits and a prompt is not waited for
//! (a warning says so), as ansible-playbook behaves.

use super::{Context, failed, ok_with};
use crate::plugins::action::TaskResult;
use futures::future::LocalBoxFuture;
use sandball_pycompat::boolean::truthy;
use serde_json::{Map, Value, json};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// The `pause` action (its line in [`super::PLUGINS`] says where it works).
pub fn work<'a>(ctx: &'a dyn Context, args: Map<String, Value>) -> LocalBoxFuture<'a, TaskResult> {
    Box::pin(async move { TaskResult::from(run(ctx, &args).await) })
}

/// Runs `pause`.
pub async fn run(ctx: &dyn Context, args: &Map<String, Value>) -> Map<String, Value> {
    if let Err(e) = super::check_args("pause", args, &["seconds", "minutes", "prompt", "echo"]) {
        return e;
    }
    if args.contains_key("seconds") && args.contains_key("minutes") {
        return super::raised(
            super::Failure::Raised,
            "parameters are mutually exclusive: minutes|seconds",
        );
    }
    let echo = match truthy(args.get("echo"), true) {
        Ok(b) => b,
        Err(e) => return failed(e),
    };
    let whole = |key: &str| -> Result<Option<u64>, String> {
        match args.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_f64()
                .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
                .map(|n| Some(n.max(0.0) as u64))
                .ok_or_else(|| {
                    // Python's reason, for text.
                    let why = v.as_str().map_or_else(String::new, |s| {
                        format!(
                            ": invalid literal for int() with base 10: {}",
                            sandball_pycompat::pyfmt::py_repr(&Value::from(s))
                        )
                    });
                    format!(
                        "argument '{key}' is of type {} and we were unable to convert to int{why}",
                        sandball_pycompat::pyfmt::short_type_name(v)
                    )
                }),
        }
    };
    let (seconds, unit) = match (whole("minutes"), whole("seconds")) {
        (Err(e), _) | (_, Err(e)) => return super::raised(super::Failure::Raised, e),
        (Ok(Some(m)), _) => (Some(m * 60), "minutes"),
        (_, Ok(Some(s))) => (Some(s), "seconds"),
        _ => (None, "minutes"),
    };
    let hidden = if echo { "" } else { " (output is hidden)" };
    let prompt = args.get("prompt").and_then(Value::as_str);
    let start = Instant::now();
    let started = now();
    let mut result = ok_with(json!({
        "rc": 0, "stderr": "", "stdout": "", "echo": echo, "start": started,
    }));
    let mut user_input = String::new();
    match seconds {
        Some(s) => {
            let s = s.max(1);
            ctx.display(&format!("Pausing for {s} seconds{hidden}"));
            if prompt.is_some() {
                ctx.display("(ctrl+C then 'C' = continue early, ctrl+C then 'A' = abort)");
            }
            tokio::time::sleep(Duration::from_secs(s)).await;
        }
        None if !std::io::stdin().is_terminal() => {
            ctx.warning("Not waiting for response to prompt as stdin is not interactive");
        }
        None => {
            let text = format!(
                "[{}]\n{}{hidden}:",
                ctx.task_name().trim(),
                prompt.unwrap_or("Press enter to continue, Ctrl+C to interrupt")
            );
            match tokio::task::spawn_blocking(move || {
                crate::plugins::callback::prompt::ask(&text, !echo)
            })
            .await
            {
                Ok(Ok(answer)) => user_input = answer,
                Ok(Err(e)) => return failed(e),
                Err(e) => return failed(format!("the prompt was interrupted: {e}")),
            }
        }
    }
    let elapsed = start.elapsed().as_secs_f64();
    let shown = if unit == "minutes" {
        elapsed / 60.0
    } else {
        elapsed
    };
    result.insert("stop".into(), Value::String(now()));
    result.insert("delta".into(), json!(elapsed as u64));
    result.insert(
        "stdout".into(),
        Value::String(format!(
            "Paused for {} {unit}",
            python_float((shown * 100.0).round() / 100.0)
        )),
    );
    result.insert("user_input".into(), Value::String(user_input));
    result
}

/// The time as Python prints `datetime.now()`.
fn now() -> String {
    chrono::Local::now()
        .format("%Y-%m-%d %H:%M:%S%.6f")
        .to_string()
}

/// A float as Python prints it (`1.0`, `0.02`).
fn python_float(f: f64) -> String {
    if f.fract() == 0.0 {
        format!("{f:.1}")
    } else {
        format!("{f}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::action::testing::FakeContext;

    #[tokio::test]
    async fn waits_and_says_how_long() {
        let ctx = FakeContext::default();
        let before = Instant::now();
        let r = run(&ctx, json!({"seconds": 1}).as_object().unwrap()).await;
        assert!(before.elapsed() >= Duration::from_secs(1));
        // The time actually paused, to the hundredth (more on a loaded machine).
        let said = r["stdout"].as_str().unwrap();
        let shown: f64 = said
            .strip_prefix("Paused for ")
            .and_then(|s| s.strip_suffix(" seconds"))
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{said}"));
        assert!((1.0..1.5).contains(&shown), "{said}");
        assert_eq!(r["changed"], false);
        let r = run(
            &ctx,
            json!({"seconds": 1, "minutes": 1}).as_object().unwrap(),
        )
        .await;
        assert_eq!(
            r["msg"],
            "parameters are mutually exclusive: minutes|seconds"
        );
        assert_eq!(python_float(0.02), "0.02");
    }
}
