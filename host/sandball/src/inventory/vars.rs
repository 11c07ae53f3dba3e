//! How inventory variables merge for one host, lowest precedence first, as Ansible's
//! variable manager layers them: the `all` group, the host's other groups (by depth, then
//! `ansible_group_priority`, then name; so children override parents), `group_vars/all`,
//! `group_vars/<group>` in the same group order, the host's own variables, then
//! `host_vars/<host>` (mappings merged with `hash_behaviour = merge`). Also the per-host
//! magic variables inventory provides.

use super::address::is_ip_address;
use super::data::{ALL, InventoryData};
use super::vars_files::VarsFiles;
use serde_json::{Map, Value};
use std::sync::LazyLock;

/// A host for variable purposes: one from the inventory, or the implicit localhost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostRef<'a> {
    /// The inventory host at this index.
    Inventory(usize),
    /// The implicit localhost, under this name.
    Implicit(&'a str),
}

/// The merged inventory variables of `host`.
pub fn host_vars(
    data: &InventoryData,
    files: &VarsFiles,
    depths: &[usize],
    host: HostRef,
) -> Map<String, Value> {
    let mut merged = Map::new();
    for layer in layers(data, files, depths, host) {
        for (k, v) in layer {
            match merged.get_mut(k) {
                Some(slot) if crate::config::merge_hashes() => {
                    *slot = sandball_pycompat::merge::merge_values(Some(slot), v.clone());
                }
                Some(slot) => *slot = v.clone(),
                None => {
                    merged.insert(k.clone(), v.clone());
                }
            }
        }
    }
    merged
}

/// What the implicit localhost has on top of `all`'s variables: the local connection
/// and, as ansible-core gives it, the controller's Python as its interpreter.
static IMPLICIT_LOCALHOST: LazyLock<Map<String, Value>> = LazyLock::new(|| {
    let mut vars = Map::new();
    vars.insert("ansible_connection".into(), Value::String("local".into()));
    if let Some(python) = crate::assemble::finder::controller_python() {
        vars.insert("ansible_python_interpreter".into(), Value::String(python));
    }
    vars
});

/// The variable layers of `host`, lowest precedence first (see the module comment).
fn layers<'a>(
    data: &'a InventoryData,
    files: &'a VarsFiles,
    depths: &[usize],
    host: HostRef<'a>,
) -> Vec<&'a Map<String, Value>> {
    let groups = sorted_groups(data, depths, host);
    let mut layers = vec![data.group_at(ALL).vars()];
    layers.extend(groups.iter().map(|g| data.group_at(*g).vars()));
    layers.extend(files.group("all"));
    for g in &groups {
        layers.extend(files.group(data.group_at(*g).name()));
    }
    let name = match host {
        HostRef::Inventory(h) => {
            layers.push(data.host_at(h).vars());
            data.host_at(h).name()
        }
        HostRef::Implicit(name) => {
            layers.push(&IMPLICIT_LOCALHOST);
            name
        }
    };
    layers.extend(files.host(name));
    layers
}

/// Variable names Ansible reserves (the attributes of plays, blocks, roles and tasks, and
/// a few template globals), sorted; a host variable with one of these names draws a
/// warning when the host's variables are merged.
const RESERVED_NAMES: [&str; 74] = [
    "action",
    "always",
    "any_errors_fatal",
    "args",
    "async",
    "async_val",
    "become",
    "become_exe",
    "become_flags",
    "become_method",
    "become_user",
    "block",
    "changed_when",
    "check_mode",
    "collections",
    "connection",
    "cycler",
    "debugger",
    "delay",
    "delegate_facts",
    "delegate_to",
    "dict",
    "diff",
    "environment",
    "fact_path",
    "failed_when",
    "force_handlers",
    "gather_facts",
    "gather_timeout",
    "handlers",
    "hosts",
    "ignore_errors",
    "ignore_unreachable",
    "joiner",
    "lipsum",
    "local_action",
    "lookup",
    "loop",
    "loop_control",
    "loop_with",
    "max_fail_percentage",
    "module_defaults",
    "name",
    "namespace",
    "no_log",
    "notify",
    "now",
    "omit",
    "order",
    "poll",
    "port",
    "post_tasks",
    "pre_tasks",
    "q",
    "query",
    "range",
    "register",
    "remote_user",
    "rescue",
    "retries",
    "roles",
    "run_once",
    "serial",
    "strategy",
    "tags",
    "tasks",
    "throttle",
    "timeout",
    "undef",
    "until",
    "vars_files",
    "vars_prompt",
    "when",
    "with_",
];

/// The reserved names among the keys of `vars` (`vars` itself is allowed, as in Ansible).
pub fn reserved_names(vars: &Map<String, Value>) -> impl Iterator<Item = &str> {
    vars.keys()
        .map(String::as_str)
        .filter(|k| is_reserved_name(k))
}

/// Whether Ansible reserves the variable name `name`.
pub fn is_reserved_name(name: &str) -> bool {
    RESERVED_NAMES.binary_search(&name).is_ok()
}

/// The warning for a variable with a reserved name.
pub fn reserved_name_warning(name: &str) -> String {
    format!("Found variable using reserved name '{name}'.")
}

/// The variables of `host` itself: its source's, then its `host_vars/` files'.
pub fn own_host_vars(data: &InventoryData, files: &VarsFiles, host: HostRef) -> Map<String, Value> {
    let (mut vars, name) = match host {
        HostRef::Inventory(h) => (data.host_at(h).vars().clone(), data.host_at(h).name()),
        HostRef::Implicit(name) => (Map::new(), name),
    };
    for layer in files.host(name) {
        vars.extend(layer.clone());
    }
    vars
}

/// The variables of group `g` itself: its sources', then its `group_vars/` files', and
/// `ansible_group_priority` when it is not 1.
pub fn own_group_vars(data: &InventoryData, files: &VarsFiles, g: usize) -> Map<String, Value> {
    let group = data.group_at(g);
    let mut vars = group.vars().clone();
    for layer in files.group(group.name()) {
        vars.extend(layer.clone());
    }
    if group.priority() != 1 {
        vars.insert(
            "ansible_group_priority".into(),
            Value::from(group.priority()),
        );
    }
    vars
}

/// The groups of `host` with their ancestors (the implicit localhost's are those
/// `group_by` put it in).
fn host_groups(data: &InventoryData, host: HostRef) -> indexmap::IndexSet<usize> {
    match host {
        HostRef::Inventory(h) => data.host_groups(h),
        HostRef::Implicit(_) => data.implicit_groups(),
    }
}

/// The host's groups other than `all`, in merge order.
fn sorted_groups(data: &InventoryData, depths: &[usize], host: HostRef) -> Vec<usize> {
    let mut groups: Vec<usize> = host_groups(data, host)
        .into_iter()
        .filter(|g| *g != ALL)
        .collect();
    groups.sort_by(|a, b| {
        let key = |g: usize| {
            (
                depths[g],
                data.group_at(g).priority(),
                data.group_at(g).name(),
            )
        };
        key(*a).cmp(&key(*b))
    });
    groups
}

/// `inventory_hostname`, `inventory_hostname_short` (the name up to the first dot, or the
/// whole of an IP address), `group_names` (sorted, without `all`; `ungrouped` included as
/// Ansible does) and, for inventory hosts, `inventory_file` and `inventory_dir`.
pub fn magic_vars(data: &InventoryData, host: HostRef) -> Map<String, Value> {
    let name = match host {
        HostRef::Inventory(h) => data.host_at(h).name(),
        HostRef::Implicit(name) => name,
    };
    let short = if is_ip_address(name) {
        name
    } else {
        name.split('.').next().unwrap_or(name)
    };
    let mut group_names: Vec<&str> = host_groups(data, host)
        .into_iter()
        .filter(|g| *g != ALL)
        .map(|g| data.group_at(g).name())
        .collect();
    group_names.sort_unstable();
    let mut vars = Map::new();
    vars.insert("inventory_hostname".into(), Value::String(name.to_string()));
    vars.insert(
        "inventory_hostname_short".into(),
        Value::String(short.to_string()),
    );
    vars.insert(
        "group_names".into(),
        Value::Array(
            group_names
                .into_iter()
                .map(|g| Value::String(g.to_string()))
                .collect(),
        ),
    );
    if let HostRef::Inventory(h) = host {
        let text = |s: Option<&str>| s.map_or(Value::Null, |s| Value::String(s.to_string()));
        vars.insert(
            "inventory_file".into(),
            text(data.host_at(h).inventory_file()),
        );
        vars.insert(
            "inventory_dir".into(),
            text(data.host_at(h).inventory_dir()),
        );
    }
    vars
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// all > parent > child, plus a sibling `other` at depth 1 with high priority and
    /// `zeta` at depth 1 that sorts after `other` by name.
    fn sample() -> (InventoryData, usize) {
        let mut data = InventoryData::new();
        for g in ["parent", "child", "other", "zeta"] {
            data.add_group(g).unwrap();
        }
        data.add_child("parent", "child").unwrap();
        let h = data
            .add_host("web1.example.com", Some("child"), Some(2222))
            .unwrap();
        data.add_host("web1.example.com", Some("other"), None)
            .unwrap();
        data.add_host("web1.example.com", Some("zeta"), None)
            .unwrap();
        data.set_variable("all", "v", json!("all")).unwrap();
        data.set_variable("all", "only_all", json!(1)).unwrap();
        data.set_variable("parent", "v", json!("parent")).unwrap();
        data.set_variable("child", "v", json!("child")).unwrap();
        data.set_variable("other", "v", json!("other")).unwrap();
        data.set_variable("other", "o", json!("other")).unwrap();
        data.set_variable("zeta", "o", json!("zeta")).unwrap();
        data.reconcile().unwrap();
        (data, h)
    }

    #[test]
    fn reserved_names_are_found_by_binary_search() {
        assert!(RESERVED_NAMES.windows(2).all(|w| w[0] < w[1]));
        let vars = json!({"port": 80, "vars": {}, "ansible_port": 22, "when": 1, "x": 2});
        let found: Vec<&str> = reserved_names(vars.as_object().unwrap()).collect();
        assert_eq!(found, ["port", "when"]);
    }

    #[test]
    fn deeper_groups_override_and_names_break_ties() {
        let (data, h) = sample();
        let vars = host_vars(
            &data,
            &VarsFiles::default(),
            &data.group_depths(),
            HostRef::Inventory(h),
        );
        assert_eq!(vars["v"], json!("child"));
        assert_eq!(vars["o"], json!("zeta"));
        assert_eq!(vars["only_all"], json!(1));
        assert_eq!(vars["ansible_port"], json!(2222));
    }

    #[test]
    fn priority_beats_name_within_a_depth() {
        let (mut data, h) = sample();
        data.set_variable("other", "ansible_group_priority", json!(5))
            .unwrap();
        let vars = host_vars(
            &data,
            &VarsFiles::default(),
            &data.group_depths(),
            HostRef::Inventory(h),
        );
        assert_eq!(vars["o"], json!("other"));
        assert!(!vars.contains_key("ansible_group_priority"));
    }

    #[test]
    fn host_vars_override_group_vars() {
        let (mut data, h) = sample();
        data.set_variable("web1.example.com", "v", json!("host"))
            .unwrap();
        let vars = host_vars(
            &data,
            &VarsFiles::default(),
            &data.group_depths(),
            HostRef::Inventory(h),
        );
        assert_eq!(vars["v"], json!("host"));
    }

    #[test]
    fn implicit_localhost_gets_all_vars_and_a_local_connection() {
        let (data, _) = sample();
        let vars = host_vars(
            &data,
            &VarsFiles::default(),
            &data.group_depths(),
            HostRef::Implicit("localhost"),
        );
        assert_eq!(vars["v"], json!("all"));
        assert_eq!(vars["ansible_connection"], json!("local"));
        assert_eq!(
            vars.get("ansible_python_interpreter"),
            crate::assemble::finder::controller_python()
                .map(Value::String)
                .as_ref()
        );
        let magic = magic_vars(&data, HostRef::Implicit("localhost"));
        assert_eq!(magic["group_names"], json!([]));
        assert!(!magic.contains_key("inventory_file"));
    }

    #[test]
    fn magic_variables() {
        let (data, h) = sample();
        let magic = magic_vars(&data, HostRef::Inventory(h));
        assert_eq!(magic["inventory_hostname"], json!("web1.example.com"));
        assert_eq!(magic["inventory_hostname_short"], json!("web1"));
        assert_eq!(
            magic["group_names"],
            json!(["child", "other", "parent", "zeta"])
        );
        let mut data = InventoryData::new();
        let ip = data.add_host("10.0.0.1", Some("ungrouped"), None).unwrap();
        let magic = magic_vars(&data, HostRef::Inventory(ip));
        assert_eq!(magic["inventory_hostname_short"], json!("10.0.0.1"));
        assert_eq!(magic["group_names"], json!(["ungrouped"]));
    }
}
