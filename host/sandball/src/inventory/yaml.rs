//! The `yaml` plugin: YAML (or JSON) inventories whose top-level keys are groups, each with
//! optional `hosts:` (host keys may be ranges and carry `:port`), `vars:` and `children:`
//! (groups again, at any depth).

use super::data::InventoryData;
use super::error::InventoryError;
use super::plugin::{
    InventoryPlugin, ParseContext, populate_host_vars, read_source, readable_file,
};
use super::range::expand_hostpattern;
use super::yaml_load::{Node, NodeExt, Yaml, load};
use serde_json::{Map, Value};
use std::path::Path;

/// YAML inventory files.
pub struct YamlPlugin;

const EXTENSIONS: [&str; 3] = ["yaml", "yml", "json"];

impl InventoryPlugin for YamlPlugin {
    fn name(&self) -> &'static str {
        "yaml"
    }

    fn verify_file(&self, source: &str) -> bool {
        if !readable_file(source) {
            return false;
        }
        let path = Path::new(source);
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default();
        match path.extension() {
            None => true,
            // `a.` has the extension "." to Python, which is not a YAML one.
            Some(_) if name.ends_with('.') => false,
            Some(ext) => EXTENSIONS.contains(&ext.to_string_lossy().as_ref()),
        }
    }

    fn parse(
        &self,
        source: &str,
        data: &mut InventoryData,
        _: &ParseContext,
    ) -> Result<(), InventoryError> {
        let bytes = read_source(source)?;
        let text = String::from_utf8(bytes)
            .map_err(|e| InventoryError::parse(source, None, format!("not valid UTF-8: {e}")))?;
        let (root, warnings) = load(&text, source)?;
        for w in warnings {
            data.warn(w);
        }
        let root = match root {
            Some(node) if node.is_truthy() => node,
            _ => {
                return Err(InventoryError::parse(
                    source,
                    None,
                    "Parsed empty YAML file",
                ));
            }
        };
        let Yaml::Map(groups) = &root.value else {
            return Err(InventoryError::parse(
                source,
                root.line(),
                format!(
                    "YAML inventory has invalid structure, it should be a dictionary, got: {}",
                    root.type_name()
                ),
            ));
        };
        if groups
            .iter()
            .any(|(k, v)| k.as_str() == Some("plugin") && v.is_truthy())
        {
            return Err(InventoryError::parse(
                source,
                root.line(),
                "Plugin configuration YAML file, not YAML inventory",
            ));
        }
        let mut parser = Parser { data, path: source };
        for (name, body) in groups {
            parser.group(name, body)?;
        }
        Ok(())
    }
}

struct Parser<'a> {
    data: &'a mut InventoryData,
    path: &'a str,
}

impl Parser<'_> {
    fn error(&self, node: &Node, message: impl Into<String>) -> InventoryError {
        InventoryError::parse(self.path, node.line(), message)
    }

    /// Reads one group definition; returns the group name.
    fn group(&mut self, name_node: &Node, body: &Node) -> Result<String, InventoryError> {
        let Some(name) = name_node.as_str() else {
            return Err(self.error(
                name_node,
                format!(
                    "Unable to add group {}: Invalid group name supplied, expected a string but got {}",
                    name_node.key_text(),
                    name_node.type_name()
                ),
            ));
        };
        let pairs = match &body.value {
            Yaml::Map(pairs) => pairs.as_slice(),
            _ if body.is_null() => &[],
            _ => {
                self.data.warn(format!(
                    "Skipping '{name}' as this is not a valid group definition"
                ));
                return Ok(name.to_string());
            }
        };
        self.data
            .add_group(name)
            .map_err(|e| self.error(name_node, format!("Unable to add group {name}: {e}")))?;
        // A section may be a single name instead of a mapping: `hosts: web1`.
        let sections: Vec<(&Node, Node)> = pairs
            .iter()
            .map(|(key, value)| {
                let value = match (key.as_str(), value.as_str()) {
                    (Some("vars" | "children" | "hosts"), Some(_)) => Node {
                        mark: value.mark,
                        value: Yaml::Map(vec![(
                            value.clone(),
                            Node {
                                mark: value.mark,
                                value: Yaml::Scalar(Value::Null),
                            },
                        )]),
                    },
                    _ => value.clone(),
                };
                (key, value)
            })
            .collect();
        for (key, value) in &sections {
            let section = key.as_str().unwrap_or_default();
            if matches!(section, "vars" | "children" | "hosts")
                && !matches!(value.value, Yaml::Map(_))
                && !value.is_null()
            {
                return Err(self.error(
                    value,
                    format!(
                        "Invalid \"{section}\" entry for \"{name}\" group, requires a dictionary, found {} instead.",
                        value.type_name()
                    ),
                ));
            }
        }
        for (key, value) in &sections {
            let Yaml::Map(entries) = &value.value else {
                if !value.is_null() {
                    self.data.warn(format!(
                        "Skipping key ({}) in group ({name}) as it is not a mapping, it is {}",
                        key.key_text(),
                        value.type_name()
                    ));
                }
                continue;
            };
            match key.as_str() {
                Some("vars") => {
                    for (var, v) in entries {
                        self.data
                            .set_variable(name, &var.key_text(), v.to_json())
                            .map_err(|e| self.error(var, e.0))?;
                    }
                }
                Some("children") => {
                    for (child, child_body) in entries {
                        let child_name = self.group(child, child_body)?;
                        self.data.add_child(name, &child_name).map_err(|e| self.error(child, e.0))?;
                    }
                }
                Some("hosts") => {
                    for (pattern, host_vars) in entries {
                        self.hosts(name, pattern, host_vars)?;
                    }
                }
                _ => self.data.warn(format!(
                    "Skipping unexpected key ({}) in group ({name}), only \"vars\", \"children\" and \"hosts\" are valid",
                    key.key_text()
                )),
            }
        }
        Ok(name.to_string())
    }

    /// One `hosts:` entry: a host key (maybe a range, maybe with a port) and its variables.
    fn hosts(&mut self, group: &str, pattern: &Node, vars: &Node) -> Result<(), InventoryError> {
        let Some(key) = pattern.as_str() else {
            return Err(self.error(
                pattern,
                format!(
                    "Host pattern {} must be a string. Enclose integers/floats in quotation marks.",
                    pattern.key_text()
                ),
            ));
        };
        let (hosts, port) =
            expand_hostpattern(key).map_err(|e| self.error(pattern, e.to_string()))?;
        let vars: Map<String, Value> = if !vars.is_truthy() {
            Map::new()
        } else {
            match vars.to_json() {
                Value::Object(map) => map,
                other => {
                    return Err(self.error(
                        vars,
                        format!("Invalid data from file, expected dictionary and got:\n\n{other}"),
                    ));
                }
            }
        };
        populate_host_vars(
            self.data,
            &hosts,
            &vars,
            group,
            port,
            (self.path, pattern.line()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inventory::plugin::parse_text_alone;
    use serde_json::json;

    fn parse(text: &str) -> Result<InventoryData, InventoryError> {
        parse_text_alone(&YamlPlugin, "hosts.yml", text, InventoryData::new())
    }

    fn group_hosts(data: &InventoryData, g: &str) -> Vec<String> {
        let g = data.group_index(g).unwrap();
        data.direct_hosts_of(g)
            .map(|h| data.host_at(h).name().to_string())
            .collect()
    }

    #[test]
    fn verify_by_extension() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["a.yml", "b.yaml", "c.json", "d", "e.ini", "f.", "g.txt"] {
            std::fs::write(dir.path().join(name), "").unwrap();
        }
        let ok = |n: &str| YamlPlugin.verify_file(&dir.path().join(n).display().to_string());
        assert!(ok("a.yml") && ok("b.yaml") && ok("c.json") && ok("d"));
        assert!(!ok("e.ini") && !ok("f.") && !ok("g.txt") && !ok("missing.yml"));
    }

    #[test]
    fn groups_hosts_vars_children_at_any_depth() {
        let data = parse(
            "all:\n  hosts:\n    solo:\n  vars:\n    ntp: 10.0.0.1\n  children:\n    web:\n      hosts:\n        \
             web[01:02].example.com:2222:\n          role: front\n      children:\n        api:\n          hosts:\n            \
             api1:\n              debug: yes\n          vars:\n            tier: 2\ndb:\n  hosts: db1\n",
        )
        .unwrap();
        assert_eq!(group_hosts(&data, "all"), ["solo"]);
        assert_eq!(
            group_hosts(&data, "web"),
            ["web01.example.com", "web02.example.com"]
        );
        assert_eq!(group_hosts(&data, "db"), ["db1"]);
        let web01 = data.host_at(data.host_index("web01.example.com").unwrap());
        assert_eq!(web01.vars()["ansible_port"], json!(2222));
        assert_eq!(web01.vars()["role"], json!("front"));
        let api1 = data.host_at(data.host_index("api1").unwrap());
        assert_eq!(api1.vars()["debug"], json!(true));
        let api = data.group_index("api").unwrap();
        assert_eq!(data.group_at(api).vars()["tier"], json!(2));
        assert_eq!(data.group_at(0).vars()["ntp"], json!("10.0.0.1"));
        let web = data.group_index("web").unwrap();
        assert_eq!(data.children_of(web).collect::<Vec<_>>(), [api]);
    }

    #[test]
    fn nulls_are_allowed_everywhere() {
        let data =
            parse("ungrouped:\n  hosts:\n    a:\nempty:\nweb:\n  hosts:\n  vars:\n  children:\n")
                .unwrap();
        assert!(data.group_index("empty").is_some());
        assert_eq!(group_hosts(&data, "ungrouped"), ["a"]);
    }

    #[test]
    fn non_mappings_where_mappings_are_needed() {
        let e = parse("web:\n  hosts:\n    - a\n    - b\n")
            .unwrap_err()
            .to_string();
        assert!(e.ends_with("hosts.yml:3: Invalid \"hosts\" entry for \"web\" group, requires a dictionary, found a list instead."), "{e}");
        let e = parse("web:\n  hosts:\n    a: [1]\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("hosts.yml:3: Invalid data from file, expected dictionary and got:"),
            "{e}"
        );
        let e = parse("web:\n  hosts:\n    1:\n").unwrap_err().to_string();
        assert!(
            e.contains("hosts.yml:3: Host pattern 1 must be a string."),
            "{e}"
        );
        let e = parse("- a\n").unwrap_err().to_string();
        assert!(e.contains("it should be a dictionary, got: a list"), "{e}");
        assert!(
            parse("")
                .unwrap_err()
                .to_string()
                .contains("Parsed empty YAML file")
        );
        assert!(
            parse("plugin: constructed\n")
                .unwrap_err()
                .to_string()
                .contains("Plugin configuration")
        );
    }

    #[test]
    fn odd_entries_are_skipped_with_warnings() {
        let data = parse("web: [a]\ndb:\n  host: x\n  other:\n    a: 1\n").unwrap();
        let w: Vec<&str> = data.warnings().collect();
        assert_eq!(
            w,
            [
                "Skipping 'web' as this is not a valid group definition",
                "Skipping key (host) in group (db) as it is not a mapping, it is a string",
                "Skipping unexpected key (other) in group (db), only \"vars\", \"children\" and \"hosts\" are valid",
            ]
        );
        assert!(data.group_index("web").is_none());
    }
}
