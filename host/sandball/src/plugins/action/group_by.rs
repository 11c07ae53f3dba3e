//! `group_by`: puts the task's host into a group named by `key` (created when new),
//! under `parents` (default `all`), for the rest of the run, as Ansible's group_by
//! action does; `changed` when the host was not in that group yet.

use super::{Context, failed, ok_with};
use crate::inventory::Change;
use serde_json::{Map, Value, json};

/// Runs `group_by` for the task's host.
pub fn run(ctx: &dyn Context, args: &Map<String, Value>) -> super::TaskResult {
    let text = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_string);
    let Some(key) = args.get("key").map(text) else {
        return failed("the 'key' param is required when using group_by").into();
    };
    // Spaces are not kept in group names.
    let group = key.replace(' ', "-");
    let parents: Vec<String> = match args.get("parents") {
        None | Some(Value::Null) => vec!["all".into()],
        Some(Value::Array(items)) => items.iter().map(|v| text(v).replace(' ', "-")).collect(),
        Some(other) => vec![text(other).replace(' ', "-")],
    };
    let change = Change::GroupBy {
        host: ctx.host().to_string(),
        group: group.clone(),
        parents: parents.clone(),
    };
    match ctx.change_inventory(&change) {
        Ok(changed) => ok_with(json!({
            "changed": changed,
            "add_group": group,
            "parent_groups": parents,
        }))
        .into(),
        Err(e) => failed(e).into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::action::testing::FakeContext;

    #[test]
    fn groups_the_tasks_host() {
        let ctx = FakeContext {
            host: "alpha".into(),
            ..Default::default()
        };
        let r = run(
            &ctx,
            json!({"key": "os Debian", "parents": "linux"})
                .as_object()
                .unwrap(),
        );
        assert_eq!(r["add_group"], "os-Debian");
        assert_eq!(
            ctx.changes.borrow()[0],
            Change::GroupBy {
                host: "alpha".into(),
                group: "os-Debian".into(),
                parents: vec!["linux".into()],
            }
        );
        let r = run(&ctx, json!({}).as_object().unwrap());
        assert_eq!(r["msg"], "the 'key' param is required when using group_by");
    }
}
