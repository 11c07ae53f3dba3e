//! The `toml` plugin: TOML inventories (`.toml` files only). Each top-level table is a
//! group with optional `hosts` (a table of host keys, which may be ranges and carry
//! `:port`, to tables of variables), `vars` (a table) and `children` (a list of group
//! names); other keys are skipped with a warning, as Ansible's `toml` plugin does. Values
//! keep their TOML types; dates and times become the text Python's `isoformat()` gives.

use super::data::InventoryData;
use super::error::InventoryError;
use super::plugin::{
    InventoryPlugin, ParseContext, populate_host_vars, read_source, readable_file,
};
use super::range::expand_hostpattern;
use serde_json::{Map, Value};
use std::path::Path;

/// TOML inventory files.
pub struct TomlPlugin;

impl InventoryPlugin for TomlPlugin {
    fn name(&self) -> &'static str {
        "toml"
    }

    fn verify_file(&self, source: &str) -> bool {
        readable_file(source) && Path::new(source).extension().is_some_and(|e| e == "toml")
    }

    fn parse(
        &self,
        source: &str,
        data: &mut InventoryData,
        _: &ParseContext,
    ) -> Result<(), InventoryError> {
        let fail = |line, message: String| InventoryError::parse(source, line, message);
        let bytes = read_source(source)?;
        let text =
            String::from_utf8(bytes).map_err(|e| fail(None, format!("not valid UTF-8: {e}")))?;
        let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
            let line = e.span().map(|s| line_of(&text, s.start));
            fail(
                line,
                format!("TOML file is invalid: {}", e.message().trim_end()),
            )
        })?;
        if table.is_empty() {
            return Err(fail(None, "Parsed empty TOML file".into()));
        }
        if table
            .get("plugin")
            .is_some_and(|v| sandball_pycompat::pyops::py_truth(&to_json(v)))
        {
            return Err(fail(
                None,
                "Plugin configuration TOML file, not TOML inventory".into(),
            ));
        }
        for (name, body) in &table {
            group(data, source, name, Some(body))?;
        }
        Ok(())
    }
}

/// The 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// The Python type name Ansible's messages show for a TOML value.
fn type_name(value: &toml::Value) -> &'static str {
    match value {
        toml::Value::String(_) => "<class 'str'>",
        toml::Value::Integer(_) => "<class 'int'>",
        toml::Value::Float(_) => "<class 'float'>",
        toml::Value::Boolean(_) => "<class 'bool'>",
        toml::Value::Datetime(_) => "<class 'datetime.datetime'>",
        toml::Value::Array(_) => "<class 'list'>",
        toml::Value::Table(_) => "<class 'dict'>",
    }
}

/// Reads one group (`body` is `None` for a group named only in a `children` list).
fn group(
    data: &mut InventoryData,
    source: &str,
    name: &str,
    body: Option<&toml::Value>,
) -> Result<(), InventoryError> {
    let fail = |message: String| InventoryError::parse(source, None, message);
    let sections = match body {
        None => None,
        Some(toml::Value::Table(t)) => Some(t),
        Some(_) => {
            data.warn(format!(
                "Skipping '{name}' as this is not a valid group definition"
            ));
            return Ok(());
        }
    };
    data.add_group(name)
        .map_err(|e| fail(format!("Unable to add group {name}: {e}")))?;
    let Some(sections) = sections else {
        return Ok(());
    };
    let invalid = |section: &str, requires: &str, found: &toml::Value| {
        fail(format!(
            "Invalid \"{section}\" entry for \"{name}\" group, requires a {requires}, found \"{}\" instead.",
            type_name(found)
        ))
    };
    for (key, value) in sections {
        match key.as_str() {
            "vars" => {
                let toml::Value::Table(vars) = value else {
                    return Err(invalid("vars", "dict", value));
                };
                for (var, v) in vars {
                    data.set_variable(name, var, to_json(v))
                        .map_err(|e| fail(e.0))?;
                }
            }
            "children" => {
                let toml::Value::Array(children) = value else {
                    return Err(invalid("children", "list", value));
                };
                for child in children {
                    let toml::Value::String(child) = child else {
                        return Err(fail(format!(
                            "Unable to add group {child}: Invalid group name supplied, expected a string but got {}",
                            type_name(child)
                        )));
                    };
                    group(data, source, child, None)?;
                    data.add_child(name, child).map_err(|e| fail(e.0))?;
                }
            }
            "hosts" => {
                let toml::Value::Table(hosts) = value else {
                    return Err(invalid("hosts", "dict", value));
                };
                for (pattern, vars) in hosts {
                    let (names, port) = expand_hostpattern(pattern).map_err(|e| fail(e.to_string()))?;
                    let Value::Object(vars) = to_json(vars) else {
                        return Err(fail(format!(
                            "Invalid variables for host {pattern} in group {name}: expected a table, got {}",
                            type_name(vars)
                        )));
                    };
                    populate_host_vars(data, &names, &vars, name, port, (source, None))?;
                }
            }
            _ => data.warn(format!(
                "Skipping unexpected key \"{key}\" in group \"{name}\", only \"vars\", \"children\" and \"hosts\" are valid"
            )),
        }
    }
    Ok(())
}

/// A TOML value as JSON, dates and times as Python's `isoformat()` writes them.
fn to_json(value: &toml::Value) -> Value {
    match value {
        toml::Value::String(s) => Value::String(s.clone()),
        toml::Value::Integer(i) => Value::from(*i),
        toml::Value::Float(f) => serde_json::Number::from_f64(*f)
            .map(Value::Number)
            .unwrap_or_else(|| Value::String(f.to_string())),
        toml::Value::Boolean(b) => Value::Bool(*b),
        toml::Value::Datetime(d) => Value::String(isoformat(d)),
        toml::Value::Array(items) => Value::Array(items.iter().map(to_json).collect()),
        toml::Value::Table(t) => Value::Object(
            t.iter()
                .map(|(k, v)| (k.clone(), to_json(v)))
                .collect::<Map<String, Value>>(),
        ),
    }
}

/// `datetime.isoformat()` of what Python's `tomllib` builds: `T` between date and time,
/// microseconds only when not zero (TOML's finer digits are cut, as tomllib does), and the
/// offset as `+HH:MM` (`Z` is `+00:00`).
fn isoformat(d: &toml::value::Datetime) -> String {
    let mut out = String::new();
    if let Some(date) = &d.date {
        out.push_str(&format!(
            "{:04}-{:02}-{:02}",
            date.year, date.month, date.day
        ));
    }
    if let Some(time) = &d.time {
        if d.date.is_some() {
            out.push('T');
        }
        out.push_str(&format!(
            "{:02}:{:02}:{:02}",
            time.hour, time.minute, time.second
        ));
        let micros = time.nanosecond / 1000;
        if micros != 0 {
            out.push_str(&format!(".{micros:06}"));
        }
    }
    match d.offset {
        None => {}
        Some(toml::value::Offset::Z) => out.push_str("+00:00"),
        Some(toml::value::Offset::Custom { minutes }) => {
            let sign = if minutes < 0 { '-' } else { '+' };
            let m = minutes.unsigned_abs();
            out.push_str(&format!("{sign}{:02}:{:02}", m / 60, m % 60));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inventory::plugin::parse_text_alone;
    use serde_json::json;

    fn parse(text: &str) -> Result<InventoryData, InventoryError> {
        parse_text_alone(&TomlPlugin, "hosts.toml", text, InventoryData::new())
    }

    #[test]
    fn verify_takes_only_toml_files() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["a.toml", "b.ini", "c"] {
            std::fs::write(dir.path().join(name), "").unwrap();
        }
        let ok = |n: &str| TomlPlugin.verify_file(&dir.path().join(n).display().to_string());
        assert!(ok("a.toml"));
        assert!(!ok("b.ini") && !ok("c") && !ok("missing.toml"));
    }

    #[test]
    fn groups_hosts_vars_children_in_document_order() {
        let data = parse(
            "[web]\nchildren = [\"nginx\", \"apache\"]\nvars = { port = 8080, on = true }\n\
             [web.hosts]\n\"w[1:2]:2222\" = { x = 1.5 }\n\
             [apache.hosts]\na1 = {}\n[nginx]\nhosts = { n1 = { when = 1979-05-27T07:32:00Z } }\n",
        )
        .unwrap();
        let groups: Vec<&str> = data.groups().map(|g| g.name()).collect();
        assert_eq!(groups, ["all", "ungrouped", "web", "nginx", "apache"]);
        let w2 = data.host_at(data.host_index("w2").unwrap());
        assert_eq!(
            Value::Object(w2.vars().clone()),
            json!({"ansible_port": 2222, "x": 1.5})
        );
        let web = data.group_at(data.group_index("web").unwrap());
        assert_eq!(
            Value::Object(web.vars().clone()),
            json!({"port": 8080, "on": true})
        );
        let n1 = data.host_at(data.host_index("n1").unwrap());
        assert_eq!(n1.vars()["when"], json!("1979-05-27T07:32:00+00:00"));
    }

    #[test]
    fn bad_sections_are_errors_and_odd_entries_warnings() {
        let e = parse("[web]\nvars = [1]\n").unwrap_err().to_string();
        assert!(
            e.contains("Invalid \"vars\" entry for \"web\" group"),
            "{e}"
        );
        let e = parse("[web]\nchildren = \"db\"\n").unwrap_err().to_string();
        assert!(e.contains("requires a list"), "{e}");
        let e = parse("a = 1\n[web\n").unwrap_err().to_string();
        assert!(e.contains("hosts.toml:2"), "{e}");
        assert!(
            parse("")
                .unwrap_err()
                .to_string()
                .contains("Parsed empty TOML file")
        );
        let data = parse("odd = 1\n[web]\nother = 2\n").unwrap();
        let w: Vec<&str> = data.warnings().collect();
        assert_eq!(
            w,
            [
                "Skipping 'odd' as this is not a valid group definition",
                "Skipping unexpected key \"other\" in group \"web\", only \"vars\", \"children\" and \"hosts\" are valid"
            ]
        );
    }

    #[test]
    fn times_as_python_writes_them() {
        let t = |s: &str| {
            let v: toml::Table = format!("v = {s}").parse().unwrap();
            to_json(&v["v"])
        };
        assert_eq!(t("1979-05-27"), json!("1979-05-27"));
        assert_eq!(t("07:32:00.5"), json!("07:32:00.500000"));
        assert_eq!(
            t("1979-05-27T00:32:00-07:30"),
            json!("1979-05-27T00:32:00-07:30")
        );
        assert_eq!(t("1979-05-27 07:32:00"), json!("1979-05-27T07:32:00"));
    }
}
