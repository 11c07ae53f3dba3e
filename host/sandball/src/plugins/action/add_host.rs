//! `add_host`: puts a host (new or known) into the inventory for the rest of the run,
//! in the groups it names, with the other arguments as its variables, as Ansible's
//! add_host action does. It runs once, for the play's first host (with a loop, once per
//! item); it is `changed` when the inventory changed.

use super::{Context, Failure, failed, ok_with, raised};
use crate::inventory::Change;
use serde_json::{Map, Value, json};

/// The arguments that name the host and its groups; every other one is a variable.
const NAME_KEYS: &[&str] = &["name", "hostname", "host"];
const GROUP_KEYS: &[&str] = &["groups", "group", "groupname"];

/// Runs `add_host`.
pub fn run(ctx: &dyn Context, args: &Map<String, Value>) -> super::TaskResult {
    // `add_host: "{{ a_dict }}"`: the mapping gives the arguments, those written beside
    // it win.
    let mut merged;
    let args = match args.get("_raw_params") {
        Some(Value::Object(given)) => {
            merged = given.clone();
            merged.extend(
                args.iter()
                    .filter(|(k, _)| k.as_str() != "_raw_params")
                    .map(|(k, v)| (k.clone(), v.clone())),
            );
            &merged
        }
        _ => args,
    };
    let Some(written) = NAME_KEYS
        .iter()
        .find_map(|k| args.get(*k))
        .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
    else {
        return raised(
            Failure::Raised,
            "name, host or hostname needs to be provided",
        )
        .into();
    };
    let (name, port) = split_port(&written);
    let groups: Vec<String> = match GROUP_KEYS.iter().find_map(|k| args.get(*k)) {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(s)) => s
            .split(',')
            .map(str::trim)
            .filter(|g| !g.is_empty())
            .map(str::to_string)
            .collect(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
            .collect(),
        Some(other) => {
            return failed(format!("groups must be a list or a string, got {other}")).into();
        }
    };
    let mut vars: Map<String, Value> = args
        .iter()
        .filter(|(k, _)| !NAME_KEYS.contains(&k.as_str()) && !GROUP_KEYS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if let Some(p) = port {
        vars.insert("ansible_ssh_port".into(), json!(p));
    }
    let change = Change::AddHost {
        name: name.clone(),
        port: None,
        groups: groups.clone(),
        vars: vars.clone(),
    };
    match ctx.change_inventory(&change) {
        Ok(changed) => ok_with(json!({
            "changed": changed,
            "add_host": {"host_name": name, "groups": groups, "host_vars": vars},
        }))
        .into(),
        Err(e) => failed(e).into(),
    }
}

/// `host:port` (or `[v6]:port`) split as Ansible reads an address; a plain name (or
/// a bare IPv6 address) has no port.
fn split_port(written: &str) -> (String, Option<u64>) {
    if let Some(rest) = written.strip_prefix('[')
        && let Some((host, port)) = rest.split_once("]:")
        && let Ok(p) = port.parse()
    {
        return (host.to_string(), Some(p));
    }
    match written.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') => match port.parse() {
            Ok(p) => (host.to_string(), Some(p)),
            Err(_) => (written.to_string(), None),
        },
        _ => (written.to_string(), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::action::testing::FakeContext;

    #[test]
    fn names_groups_and_variables() {
        let ctx = FakeContext::default();
        let args = json!({"name": "web9:2222", "groups": "web, new", "role": "x"});
        let r = run(&ctx, args.as_object().unwrap());
        assert_eq!(r["changed"], true);
        assert_eq!(
            ctx.changes.borrow()[0],
            Change::AddHost {
                name: "web9".into(),
                port: None,
                groups: vec!["web".into(), "new".into()],
                vars: json!({"role": "x", "ansible_ssh_port": 2222})
                    .as_object()
                    .unwrap()
                    .clone(),
            }
        );
        // The same again changes nothing.
        let r = run(&ctx, args.as_object().unwrap());
        assert_eq!(r["changed"], false);
        let r = run(&ctx, json!({"groups": "x"}).as_object().unwrap());
        assert_eq!(r["msg"], "name, host or hostname needs to be provided");
        assert_eq!(split_port("fe80::1"), ("fe80::1".into(), None));
        assert_eq!(split_port("[fe80::1]:22"), ("fe80::1".into(), Some(22)));
    }
}
