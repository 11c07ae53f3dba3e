//! `set_stats`: data for the run's custom stats, per host or for the run, added up
//! (`aggregate`, the default) or replaced; shown after the recap when
//! `ANSIBLE_SHOW_CUSTOM_STATS` (ansible.cfg `show_custom_stats`) asks for it, as
//! ansible-playbook shows it.

use super::{Context, failed, ok_with};
use sandball_pycompat::boolean::truthy;
use serde_json::{Map, Value, json};

/// Runs `set_stats`; the executor records `ansible_stats`.
pub fn run(_ctx: &dyn Context, args: &Map<String, Value>) -> super::TaskResult {
    let Some(Value::Object(data)) = args.get("data") else {
        return failed("The 'data' option needs to be a dictionary/hash").into();
    };
    if let Some(Err(e)) = data
        .keys()
        .map(|k| super::set_fact::variable_name(&Value::String(k.clone())))
        .find(Result::is_err)
    {
        return failed(e).into();
    }
    // Read leniently, as ansible-core reads them: what is not a true value is false.
    let flag = |key: &str, default: bool| match args.get(key) {
        None | Some(Value::Null) => default,
        v => truthy(v, false).unwrap_or(false),
    };
    ok_with(json!({
        "ansible_stats": {
            "data": data,
            "per_host": flag("per_host", false),
            "aggregate": flag("aggregate", true),
        },
    }))
    .into()
}
