//! `fail`: fails the task with a custom message.

use super::failed;
use serde_json::{Map, Value};

/// Runs `fail`.
pub fn run(_ctx: &dyn super::Context, args: &Map<String, Value>) -> super::TaskResult {
    let mut r = failed("");
    r.insert(
        "msg".into(),
        args.get("msg")
            .cloned()
            .unwrap_or_else(|| Value::String("Failed as requested from task".into())),
    );
    r.into()
}
