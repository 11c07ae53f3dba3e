//! What `ansible-inventory` prints, built from a loaded [`Inventory`]: the `--list`
//! document (groups with `hosts`, `children` and, with `--export`, `vars`, plus
//! `_meta.hostvars`), its `--yaml` form (the YAML inventory tree, host variables under the
//! first group that lists each host), and the `--graph` tree.
//!
//! Groups that end up with nothing to say are left out of `--list`, but still named in
//! their parents' `children`; hosts outside the `--limit` subset are left out everywhere.

use super::Inventory;
use super::data::{ALL, InventoryData};
use super::vars::{reserved_name_warning, reserved_names};
use indexmap::IndexSet;
use serde_json::{Map, Value};
use std::cell::RefCell;
use std::collections::HashSet;

/// The hosts `ansible-inventory` reports on, and how it reports their variables.
pub struct Listing<'a> {
    inventory: &'a Inventory,
    /// `--export`: each host's and group's own variables instead of the merged ones.
    export: bool,
    /// Indices of the hosts in the subset (all hosts unless `--limit` narrowed them).
    available: HashSet<usize>,
    /// The same hosts in the order `all` lists them.
    ordered: Vec<usize>,
    /// Reserved variable names met in the merged variables shown, each once.
    reserved: RefCell<IndexSet<String>>,
}

impl<'a> Listing<'a> {
    /// A listing of `hosts` (names of inventory hosts; others are ignored).
    pub fn new(inventory: &'a Inventory, hosts: &[String], export: bool) -> Self {
        let data = inventory.data();
        let ordered: Vec<usize> = hosts.iter().filter_map(|h| data.host_index(h)).collect();
        Listing {
            inventory,
            export,
            available: ordered.iter().copied().collect(),
            ordered,
            reserved: RefCell::default(),
        }
    }

    fn data(&self) -> &InventoryData {
        self.inventory.data()
    }

    /// The variables shown for host `h`. Merged variables with reserved names are noted
    /// for [`Self::warnings`].
    fn host_vars(&self, h: usize) -> Map<String, Value> {
        let name = self.data().host_at(h).name();
        if self.export {
            return self.inventory.host_own_vars(name);
        }
        let vars = self.inventory.listed_vars(name);
        let mut reserved = self.reserved.borrow_mut();
        for r in reserved_names(&vars) {
            if !reserved.contains(r) {
                reserved.insert(r.to_string());
            }
        }
        vars
    }

    /// The warnings about what was shown so far (variables with reserved names), as
    /// Ansible gives them while merging host variables.
    pub fn warnings(&self) -> Vec<String> {
        self.reserved
            .borrow()
            .iter()
            .map(|r| reserved_name_warning(r))
            .collect()
    }

    /// The `--list` document (keys in insertion order; callers sort when printing).
    pub fn json(&self) -> Value {
        let mut out = Map::new();
        let mut seen = HashSet::new();
        self.json_group(ALL, &mut seen, &mut out);
        let mut hostvars = Map::new();
        for h in &self.ordered {
            let vars = self.host_vars(*h);
            if !vars.is_empty() {
                hostvars.insert(
                    self.data().host_at(*h).name().to_string(),
                    Value::Object(vars),
                );
            }
        }
        let mut meta = Map::new();
        meta.insert("hostvars".into(), Value::Object(hostvars));
        // The format's name as ansible-core 2.19 reports it, so that the two outputs diff clean.
        meta.insert("profile".into(), Value::String("inventory_legacy".into()));
        out.insert("_meta".into(), Value::Object(meta));
        Value::Object(out)
    }

    fn json_group(&self, g: usize, seen: &mut HashSet<usize>, out: &mut Map<String, Value>) {
        let data = self.data();
        let mut body = Map::new();
        if g != ALL {
            let hosts: Vec<Value> = data
                .direct_hosts_of(g)
                .filter(|h| self.available.contains(h))
                .map(|h| Value::String(data.host_at(h).name().to_string()))
                .collect();
            if !hosts.is_empty() {
                body.insert("hosts".into(), Value::Array(hosts));
            }
        }
        let mut children = Vec::new();
        for c in data.children_of(g) {
            children.push(Value::String(data.group_at(c).name().to_string()));
            if seen.insert(c) {
                self.json_group(c, seen, out);
            }
        }
        if !children.is_empty() {
            body.insert("children".into(), Value::Array(children));
        }
        if self.export {
            let vars = self.inventory.group_own_vars(g);
            if !vars.is_empty() {
                body.insert("vars".into(), Value::Object(vars));
            }
        }
        if !body.is_empty() {
            out.insert(data.group_at(g).name().to_string(), Value::Object(body));
        }
    }

    /// The `--list --toml` document: one table per group (`all` only for its
    /// `vars`), with its `children` (names), its own `hosts` (each with the variables
    /// `--list` gives it) and, with `--export`, `vars`.
    pub fn toml_tree(&self) -> Value {
        let list = self.json();
        let hostvars = list
            .pointer("/_meta/hostvars")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let mut out = Map::new();
        for (name, group) in list.as_object().into_iter().flatten() {
            if name == "_meta" {
                continue;
            }
            let mut table = Map::new();
            if name != "all"
                && let Some(children) = group
                    .get("children")
                    .filter(|c| c.as_array().is_some_and(|a| !a.is_empty()))
            {
                table.insert("children".into(), children.clone());
            }
            if let Some(Value::Array(hosts)) = group.get("hosts") {
                let hosts: Map<String, Value> = hosts
                    .iter()
                    .filter_map(Value::as_str)
                    .map(|h| {
                        let vars = hostvars
                            .get(h)
                            .cloned()
                            .unwrap_or_else(|| Value::Object(Map::new()));
                        (h.to_string(), vars)
                    })
                    .collect();
                if !hosts.is_empty() {
                    table.insert("hosts".into(), Value::Object(hosts));
                }
            }
            if let Some(vars) = group
                .get("vars")
                .filter(|v| v.as_object().is_some_and(|m| !m.is_empty()))
            {
                table.insert("vars".into(), vars.clone());
            }
            if !table.is_empty() {
                out.insert(name.clone(), Value::Object(table));
            }
        }
        Value::Object(out)
    }

    /// The `--list --yaml` document: `all` with nested `children`, `hosts` (each host's
    /// variables under the first group that lists it, an empty mapping elsewhere) and, with
    /// `--export`, `vars`.
    pub fn yaml_tree(&self) -> Value {
        let mut seen_groups = HashSet::new();
        let mut seen_hosts = HashSet::new();
        let mut out = Map::new();
        if let Some((name, body)) = self.yaml_group(ALL, &mut seen_groups, &mut seen_hosts) {
            out.insert(name, body);
        }
        Value::Object(out)
    }

    fn yaml_group(
        &self,
        g: usize,
        seen_groups: &mut HashSet<usize>,
        seen_hosts: &mut HashSet<usize>,
    ) -> Option<(String, Value)> {
        let data = self.data();
        let mut children = Map::new();
        for c in data.children_of(g) {
            if c == ALL {
                continue;
            }
            if seen_groups.insert(c) {
                if let Some((name, body)) = self.yaml_group(c, seen_groups, seen_hosts) {
                    children.insert(name, body);
                }
            } else {
                children.insert(
                    data.group_at(c).name().to_string(),
                    Value::Object(Map::new()),
                );
            }
        }
        let mut hosts = Map::new();
        if g != ALL {
            for h in data.direct_hosts_of(g) {
                if !self.available.contains(&h) {
                    continue;
                }
                let vars = if seen_hosts.insert(h) {
                    self.host_vars(h)
                } else {
                    Map::new()
                };
                hosts.insert(data.host_at(h).name().to_string(), Value::Object(vars));
            }
        }
        let mut body = Map::new();
        if !children.is_empty() {
            body.insert("children".into(), Value::Object(children));
        }
        if !hosts.is_empty() {
            body.insert("hosts".into(), Value::Object(hosts));
        }
        if self.export {
            let vars = self.inventory.group_own_vars(g);
            if !vars.is_empty() {
                body.insert("vars".into(), Value::Object(vars));
            }
        }
        (!body.is_empty()).then(|| (data.group_at(g).name().to_string(), Value::Object(body)))
    }

    /// The `--graph` tree from group `g`: `@group:` lines, child groups first, then the
    /// group's own hosts, each level indented by `  |`; with `vars`, each host's and
    /// group's variables as `{name = value}` lines.
    pub fn graph(&self, g: usize, vars: bool) -> String {
        let mut lines = Vec::new();
        self.graph_group(g, 0, vars, &mut lines);
        lines.join("\n")
    }

    fn graph_group(&self, g: usize, depth: usize, vars: bool, lines: &mut Vec<String>) {
        let data = self.data();
        lines.push(graph_line(&format!("@{}:", data.group_at(g).name()), depth));
        for c in data.children_of(g) {
            self.graph_group(c, depth + 1, vars, lines);
        }
        if g != ALL {
            for h in data.direct_hosts_of(g) {
                if !self.available.contains(&h) {
                    continue;
                }
                lines.push(graph_line(data.host_at(h).name(), depth + 1));
                if vars {
                    graph_vars(&self.host_vars(h), depth + 2, lines);
                }
            }
        }
        if vars {
            graph_vars(&self.inventory.group_own_vars(g), depth + 1, lines);
        }
    }
}

fn graph_line(text: &str, depth: usize) -> String {
    if depth == 0 {
        text.to_string()
    } else {
        format!("{}--{text}", "  |".repeat(depth))
    }
}

fn graph_vars(vars: &Map<String, Value>, depth: usize, lines: &mut Vec<String>) {
    let mut names: Vec<&String> = vars.keys().collect();
    names.sort();
    for name in names {
        let value = crate::template::without_unsafe_marks(&vars[name]);
        let text = crate::template::python_str(&value).unwrap_or_else(|_| value.to_string());
        lines.push(graph_line(&format!("{{{name} = {text}}}"), depth));
    }
}

/// A JSON value that serializes with every mapping's keys sorted, as
/// `json.dumps(sort_keys=True)` writes them, without copying the value.
struct Sorted<'a>(&'a Value);

impl serde::Serialize for Sorted<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self.0 {
            Value::Object(map) => {
                let mut entries: Vec<(&String, &Value)> = map.iter().collect();
                entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
                let mut out = serializer.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    out.serialize_entry(k, &Sorted(v))?;
                }
                out.end()
            }
            Value::Array(items) => {
                let mut out = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    out.serialize_element(&Sorted(item))?;
                }
                out.end()
            }
            other => serde::Serialize::serialize(other, serializer),
        }
    }
}

/// `value` as `ansible-inventory` prints JSON: keys sorted, indented by four spaces.
pub fn to_json_text(value: &Value) -> String {
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
    // Writing a `Value` to memory cannot fail.
    let _ = serde::Serialize::serialize(&Sorted(value), &mut serializer);
    String::from_utf8(out).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn inventory(ini: &str) -> (tempfile::TempDir, Inventory) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hosts");
        std::fs::write(&path, ini).unwrap();
        let inv = Inventory::load(&[path.display().to_string()]).unwrap();
        (dir, inv)
    }

    const INI: &str =
        "a\n[empty]\n[web]\nw1 x=1\nw2\n[p:children]\nweb\nempty\n[p:vars]\ny=[1,'b']\n";

    #[test]
    fn list_leaves_out_empty_groups_but_names_them_as_children() {
        let (_d, inv) = inventory(INI);
        let all = inv.select("all").unwrap().hosts;
        let list = Listing::new(&inv, &all, false).json();
        assert_eq!(
            list,
            json!({
                "all": {"children": ["ungrouped", "p"]},
                "ungrouped": {"hosts": ["a"]},
                "p": {"children": ["web", "empty"]},
                "web": {"hosts": ["w1", "w2"]},
                "_meta": {"hostvars": {"w1": {"y": [1, "b"], "x": 1}, "w2": {"y": [1, "b"]}},
                          "profile": "inventory_legacy"},
            })
        );
        let export = Listing::new(&inv, &all, true).json();
        assert_eq!(export["p"]["vars"], json!({"y": [1, "b"]}));
        assert_eq!(export["_meta"]["hostvars"], json!({"w1": {"x": 1}}));
    }

    #[test]
    fn a_subset_narrows_hosts_and_drops_groups_left_empty() {
        let (_d, inv) = inventory(INI);
        let list = Listing::new(&inv, &["w2".to_string()], false).json();
        assert!(list.get("ungrouped").is_none());
        assert_eq!(list["web"], json!({"hosts": ["w2"]}));
        assert_eq!(list["_meta"]["hostvars"].as_object().unwrap().len(), 1);
    }

    #[test]
    fn yaml_tree_gives_host_vars_once() {
        let (_d, inv) = inventory("[a]\nh v=1\n[b]\nh\n");
        let all = inv.select("all").unwrap().hosts;
        let tree = Listing::new(&inv, &all, false).yaml_tree();
        assert_eq!(
            tree,
            json!({"all": {"children": {"a": {"hosts": {"h": {"v": 1}}}, "b": {"hosts": {"h": {}}}}}})
        );
    }

    #[test]
    fn graph_with_vars() {
        let (_d, inv) = inventory(INI);
        let all = inv.select("all").unwrap().hosts;
        let listing = Listing::new(&inv, &all, false);
        let p = inv.data().group_index("p").unwrap();
        assert_eq!(
            listing.graph(p, true),
            "@p:\n  |--@web:\n  |  |--w1\n  |  |  |--{x = 1}\n  |  |  |--{y = [1, 'b']}\n  |  |--w2\n  |  |  |--{y = [1, 'b']}\n  |--@empty:\n  |--{y = [1, 'b']}"
        );
    }

    #[test]
    fn json_text_is_sorted_and_indented_by_four() {
        assert_eq!(
            to_json_text(&json!({"b": 1, "a": {"d": [true], "c": "é"}})),
            "{\n    \"a\": {\n        \"c\": \"é\",\n        \"d\": [\n            true\n        ]\n    },\n    \"b\": 1\n}"
        );
    }
}
