//! `set_stats`: data for the run's custom stats, per host or for the run, added up
//! (`aggregate`, the default) or replaced; shown after the recap when
//! `ANSIBLE_SHOW_CUSTOM_STATS` (ansible.cfg `show_custom_stats`) asks for it, as
//! ansible-playbook shows it.

use super::{Context, check_args, failed, ok_with, truthy};
use serde_json::{Map, Value, json};

/// Runs `set_stats`; the executor records `ansible_stats`.
pub fn run(_ctx: &dyn Context, args: &Map<String, Value>) -> Map<String, Value> {
    if let Err(e) = check_args("set_stats", args, &["data", "per_host", "aggregate"]) {
        return e;
    }
    let Some(Value::Object(data)) = args.get("data") else {
        return failed("The 'data' option needs to be a dictionary/hash");
    };
    let flag = |key: &str, default: bool| truthy(args.get(key), default);
    match (flag("per_host", false), flag("aggregate", true)) {
        (Ok(per_host), Ok(aggregate)) => ok_with(json!({
            "ansible_stats": {"data": data, "per_host": per_host, "aggregate": aggregate},
        })),
        (Err(e), _) | (_, Err(e)) => failed(e),
    }
}
