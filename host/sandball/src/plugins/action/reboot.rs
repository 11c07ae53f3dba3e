//! `reboot`: reboots the host and waits until it is back, as Ansible's reboot action
//! does. It reads the boot id (`boot_time_command`), runs the reboot command
//! (`reboot_command`, else the node's `shutdown` found in `search_paths`, with
//! `pre_reboot_delay` and `msg`), then, with the connection reset, waits until the boot
//! id changes and `test_command` succeeds, within `reboot_timeout` (each attempt
//! within `connect_timeout`, when given), and sleeps `post_reboot_delay`. It refuses to run on the local connection (that would reboot
//! the controller) and changes nothing in check mode.

use super::args::{paths, signed_seconds};
use super::{ArgError, Context, failed, ok_with};
use crate::plugins::action::TaskResult;
use futures::future::LocalBoxFuture;
use sandball_pycompat::shell::quote;
use serde_json::{Map, Value, json};
use std::time::{Duration, Instant};

/// The arguments `reboot` takes.
pub const VALID_ARGS: &[&str] = &[
    "boot_time_command",
    "connect_timeout",
    "msg",
    "post_reboot_delay",
    "pre_reboot_delay",
    "reboot_command",
    "reboot_timeout",
    "search_paths",
    "test_command",
];

/// The `reboot` action (its line in [`super::PLUGINS`] says where it works).
pub fn work<'a>(ctx: &'a dyn Context, args: Map<String, Value>) -> LocalBoxFuture<'a, TaskResult> {
    Box::pin(async move {
        let start = Instant::now();
        let mut r = match Settings::of(&args) {
            Ok(settings) => run(ctx, &settings, start).await,
            Err(e) => failed(e.to_string()),
        };
        r.entry("elapsed")
            .or_insert_with(|| json!(start.elapsed().as_secs()));
        TaskResult::from(r)
    })
}

/// The action's arguments.
struct Settings {
    pre_delay: u64,
    post_delay: u64,
    timeout: Duration,
    connect_timeout: Option<Duration>,
    test_command: String,
    msg: String,
    search_paths: Vec<String>,
    boot_time_command: String,
    reboot_command: Option<String>,
}

impl Settings {
    fn of(args: &Map<String, Value>) -> Result<Settings, ArgError> {
        // A negative delay or timeout is zero, as ansible-core's reboot takes it.
        let seconds = |option: &str, default: i64| {
            signed_seconds(args, option, default).map(|n| u64::try_from(n).unwrap_or(0))
        };
        let text = |key: &str, default: &str| {
            args.get(key)
                .and_then(Value::as_str)
                .filter(|s| !s.trim().is_empty())
                .unwrap_or(default)
                .to_string()
        };
        let search_paths = paths(args, "search_paths")?.unwrap_or_else(|| {
            ["/sbin", "/bin", "/usr/sbin", "/usr/bin", "/usr/local/sbin"]
                .map(String::from)
                .to_vec()
        });
        let connect_timeout = match args.get("connect_timeout") {
            None | Some(Value::Null) => None,
            Some(_) => Some(Duration::from_secs(seconds("connect_timeout", 0)?)),
        };
        Ok(Settings {
            connect_timeout,
            pre_delay: seconds("pre_reboot_delay", 0)?,
            post_delay: seconds("post_reboot_delay", 0)?,
            timeout: Duration::from_secs(seconds("reboot_timeout", 600)?),
            test_command: text("test_command", "whoami"),
            msg: text("msg", "Reboot initiated by Ansible"),
            search_paths,
            boot_time_command: text("boot_time_command", "cat /proc/sys/kernel/random/boot_id"),
            reboot_command: args
                .get("reboot_command")
                .and_then(Value::as_str)
                .filter(|s| !s.trim().is_empty())
                .map(String::from),
        })
    }
}

/// `line` over the connection, given up after `connect_timeout` when one is set (a
/// host still rebooting may not answer at all).
async fn exec_within(
    ctx: &dyn Context,
    s: &Settings,
    line: &str,
) -> Result<crate::plugins::connection::ExecOutput, String> {
    let exec = ctx.exec_command(line, None);
    let done = match s.connect_timeout {
        Some(limit) => tokio::time::timeout(limit, exec)
            .await
            .map_err(|_| format!("no answer within {} s", limit.as_secs()))?,
        None => exec.await,
    };
    done.map_err(|r| r["msg"].as_str().unwrap_or_default().to_string())
}

async fn run(ctx: &dyn Context, s: &Settings, start: Instant) -> Map<String, Value> {
    if ctx.local_connection() {
        let mut r = failed(format!(
            "Running {} with local connection would reboot the control node.",
            ctx.action()
        ));
        r.insert("rebooted".into(), json!(false));
        return r;
    }
    if ctx.check_mode() {
        return ok_with(json!({"changed": true, "rebooted": true}));
    }
    let before = match boot_id(ctx, s).await {
        Ok(id) => id,
        Err(e) => return with_rebooted(failed(e), false),
    };
    let command = match &s.reboot_command {
        Some(c) => c.clone(),
        None => match shutdown(ctx, s).await {
            Ok(c) => c,
            Err(e) => return with_rebooted(failed(e), false),
        },
    };
    // The connection may drop under the command: only an answer that says it failed is
    // a failure.
    if let Ok(out) = ctx.exec_command(&command, None).await
        && out.rc != 0
    {
        return with_rebooted(
            failed(format!(
                "Reboot command failed. Error was: '{}, {}'",
                String::from_utf8_lossy(&out.stdout).trim(),
                String::from_utf8_lossy(&out.stderr).trim()
            )),
            false,
        );
    }
    let deadline = start + Duration::from_secs(s.pre_delay) + s.timeout;
    let timeout = s.timeout.as_secs();
    let back = until(deadline, || async {
        ctx.reset_connection().await;
        match boot_id(ctx, s).await {
            Ok(id) if id != before => Ok(()),
            Ok(_) => Err("the boot id has not changed yet".to_string()),
            Err(e) => Err(e),
        }
    })
    .await;
    if let Err(last) = back {
        return with_rebooted(
            failed(format!(
                "Timed out waiting for last boot time check (timeout={timeout}): {last}"
            )),
            true,
        );
    }
    let tested = until(deadline, || async {
        match exec_within(ctx, s, &s.test_command).await {
            Ok(out) if out.rc == 0 => Ok(()),
            Ok(out) => Err(format!(
                "Test command failed: {} {}",
                String::from_utf8_lossy(&out.stderr).trim(),
                String::from_utf8_lossy(&out.stdout).trim()
            )),
            Err(e) => Err(e),
        }
    })
    .await;
    if let Err(last) = tested {
        return with_rebooted(
            failed(format!(
                "Timed out waiting for post-reboot test command (timeout={timeout}): {last}"
            )),
            true,
        );
    }
    tokio::time::sleep(Duration::from_secs(s.post_delay)).await;
    ok_with(json!({"changed": true, "rebooted": true}))
}

fn with_rebooted(mut r: Map<String, Value>, rebooted: bool) -> Map<String, Value> {
    r.insert("rebooted".into(), json!(rebooted));
    r
}

/// The node's boot id (the output of `boot_time_command`).
async fn boot_id(ctx: &dyn Context, s: &Settings) -> Result<String, String> {
    match exec_within(ctx, s, &s.boot_time_command).await {
        Ok(out) if out.rc == 0 => Ok(String::from_utf8_lossy(&out.stdout).trim().to_string()),
        Ok(out) => Err(format!(
            "Failed to get last boot time information: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )),
        Err(e) => Err(format!("Failed to get last boot time information: {e}")),
    }
}

/// The node's `shutdown` (the first in `search_paths`) with Linux's arguments.
async fn shutdown(ctx: &dyn Context, s: &Settings) -> Result<String, String> {
    let candidates: Vec<String> = s
        .search_paths
        .iter()
        .map(|d| quote(&format!("{}/shutdown", d.trim_end_matches('/'))))
        .collect();
    let line = format!(
        "for f in {}; do if [ -x \"$f\" ]; then echo \"$f\"; break; fi; done",
        candidates.join(" ")
    );
    let out = ctx
        .exec_command(&line, None)
        .await
        .map_err(|r| r["msg"].as_str().unwrap_or_default().to_string())?;
    let found = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if found.is_empty() {
        return Err(format!(
            "Unable to find command \"shutdown\" in search paths: {:?}",
            s.search_paths
        ));
    }
    Ok(format!(
        "{} -r {} {}",
        quote(&found),
        if s.pre_delay < 60 {
            "now".to_string()
        } else {
            format!("+{}", s.pre_delay / 60)
        },
        quote(&s.msg)
    ))
}

/// Tries `attempt` until it succeeds or `deadline` passes (waiting longer between
/// attempts, up to 10 s); the last error when it never did.
async fn until<F, Fut>(deadline: Instant, attempt: F) -> Result<(), String>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<(), String>>,
{
    let mut wait = Duration::from_millis(500);
    loop {
        let last = match attempt().await {
            Ok(()) => return Ok(()),
            Err(e) => e,
        };
        if Instant::now() + wait > deadline {
            return Err(last);
        }
        tokio::time::sleep(wait).await;
        wait = (wait * 2).min(Duration::from_secs(10));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::action::testing::{FakeContext, args};

    #[tokio::test]
    async fn refuses_the_local_connection_and_changes_nothing_in_check_mode() {
        let ctx = FakeContext {
            local: true,
            action: "ansible.builtin.reboot",
            ..Default::default()
        };
        let r = work(&ctx, Map::new()).await;
        assert_eq!(r["failed"], true);
        assert_eq!(
            r["msg"],
            "Running ansible.builtin.reboot with local connection would reboot the control node."
        );
        assert_eq!(r["rebooted"], false);
        let ctx = FakeContext {
            check_mode: true,
            ..Default::default()
        };
        let r = work(&ctx, Map::new()).await;
        assert_eq!(
            (r["changed"].clone(), r["rebooted"].clone()),
            (json!(true), json!(true))
        );
        assert_eq!(ctx.resets.get(), 0);
    }

    #[tokio::test]
    async fn waits_for_a_new_boot_id_and_the_test_command() {
        // A stand-in node: the "reboot" writes a new boot id, a moment later.
        let dir = tempfile::tempdir().unwrap();
        let id = dir.path().join("boot_id");
        std::fs::write(&id, "first\n").unwrap();
        let ctx = FakeContext::default();
        let r = work(
            &ctx,
            args(json!({
                "boot_time_command": format!("cat {}", id.display()),
                "reboot_command": format!("(sleep 1; echo second > {}) >/dev/null 2>&1 &", id.display()),
                "test_command": "true",
                "reboot_timeout": 30,
            })),
        )
        .await;
        assert_eq!(r.get("failed"), None, "{r:?}");
        assert_eq!(
            (r["changed"].clone(), r["rebooted"].clone()),
            (json!(true), json!(true))
        );
        assert!(
            ctx.resets.get() >= 2,
            "the connection is reset while waiting"
        );
        // A host that never comes back: the last boot time check times out.
        let r = work(
            &ctx,
            args(json!({
                "boot_time_command": format!("cat {}", id.display()),
                "reboot_command": "true",
                "reboot_timeout": 1,
            })),
        )
        .await;
        assert!(
            r["msg"]
                .as_str()
                .unwrap()
                .starts_with("Timed out waiting for last boot time check (timeout=1)"),
            "{r:?}"
        );
        let r = work(
            &ctx,
            args(json!({"reboot_command": "exit 3", "boot_time_command": "echo x"})),
        )
        .await;
        assert!(
            r["msg"]
                .as_str()
                .unwrap()
                .starts_with("Reboot command failed")
        );
    }

    #[tokio::test]
    async fn a_host_that_does_not_answer_is_given_connect_timeout() {
        let ctx = FakeContext::default();
        let started = Instant::now();
        let r = work(
            &ctx,
            args(json!({"boot_time_command": "sleep 10", "connect_timeout": 1})),
        )
        .await;
        assert_eq!(
            r["msg"],
            "Failed to get last boot time information: no answer within 1 s"
        );
        assert!(
            started.elapsed() < Duration::from_secs(8),
            "connect_timeout was not honoured"
        );
    }
}
