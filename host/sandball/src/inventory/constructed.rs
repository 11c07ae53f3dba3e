//! The `constructed` plugin: groups and variables made from the hosts the earlier sources
//! defined, with Jinja expressions over each host's inventory variables (its groups' and
//! its own, plus `group_vars/`/`host_vars/` with `use_vars_plugins`, plus
//! `inventory_hostname` and `group_names`):
//!
//! - `compose`: variable name → expression; the result is set on the host;
//! - `groups`: group name → conditional; the host joins the group when it holds;
//! - `keyed_groups`: groups named after a value (`prefix` + `separator` + value; lists give
//!   one group per item, mappings one per `key` + `separator` + `value`), with
//!   `default_value` for empty values, `trailing_separator: false` to drop the separator
//!   before an empty value, `parent_group` to nest them, `leading_separator: false` to
//!   drop the separator when there is no prefix.
//!
//! With `use_extra_vars` (or `ANSIBLE_INVENTORY_USE_EXTRA_VARS`) the extra vars (`-e`)
//! lie over the host's variables in `compose` and `keyed_groups` keys, as ansible-core
//! merges them there (not in `groups` conditionals).
//!
//! Expressions that fail (an undefined variable, say) are skipped unless `strict: true`.
//! Group names are made safe (invalid characters become `_`) as Ansible does here.

use super::auto::read_config;
use super::data::{InventoryData, safe_group_name};
use super::error::InventoryError;
use super::plugin::{InventoryPlugin, ParseContext, readable_file};
use super::vars::{self, HostRef};
use super::vars_files::VarsFiles;
use crate::template::{Templar, Vars};
use serde_json::{Map, Value};

/// `constructed` config files.
pub struct ConstructedPlugin;

impl InventoryPlugin for ConstructedPlugin {
    fn name(&self) -> &'static str {
        "constructed"
    }

    fn verify_file(&self, source: &str) -> bool {
        let ext = std::path::Path::new(source)
            .extension()
            .map(|e| e.to_string_lossy().into_owned());
        readable_file(source) && matches!(ext.as_deref(), None | Some("config" | "yml" | "yaml"))
    }

    fn takes_config_file(&self) -> bool {
        true
    }

    fn parse(
        &self,
        source: &str,
        data: &mut InventoryData,
        context: &ParseContext,
    ) -> Result<(), InventoryError> {
        let config = read_config(source)?;
        let fail = |message: String| InventoryError::parse(source, None, message);
        let flag = |key: &str, default: bool| match config.get(key) {
            Some(Value::Bool(b)) => Ok(*b),
            None | Some(Value::Null) => Ok(default),
            Some(other) => Err(fail(format!("option {key} must be a boolean, got {other}"))),
        };
        let mapping = |key: &str| match config.get(key) {
            Some(Value::Object(map)) => Ok(map.clone()),
            None | Some(Value::Null) => Ok(Map::new()),
            Some(other) => Err(fail(format!(
                "option {key} must be a dictionary, got {other}"
            ))),
        };
        let constructor = Constructor {
            templar: Templar::new(),
            strict: flag("strict", false)?,
            leading_separator: flag("leading_separator", true)?,
            source,
        };
        let compose = mapping("compose")?;
        let groups = mapping("groups")?;
        let keyed = match config.get("keyed_groups") {
            Some(Value::Array(items)) => items.clone(),
            None | Some(Value::Null) => Vec::new(),
            Some(other) => {
                return Err(fail(format!(
                    "option keyed_groups must be a list, got {other}"
                )));
            }
        };
        let use_extra_vars = flag(
            "use_extra_vars",
            crate::config::settings().flag("ANSIBLE_INVENTORY_USE_EXTRA_VARS", false),
        )?;
        let none = Map::new();
        let extra = if use_extra_vars {
            &context.options.extra_vars
        } else {
            &none
        };
        let files = if flag("use_vars_plugins", false)? {
            VarsFiles::load(context.processed, None, data)?.0
        } else {
            VarsFiles::default()
        };
        let hosts: Vec<String> = data.hosts().map(|h| h.name().to_string()).collect();
        for host in hosts {
            let vars = host_variables(data, &files, &host, extra);
            for (name, expr) in &compose {
                if let Some(value) = constructor.value(expr, &vars)? {
                    data.set_variable(&host, name, value)
                        .map_err(|e| fail(e.0))?;
                }
            }
            let vars = host_variables(data, &files, &host, &Map::new());
            for (name, cond) in &groups {
                if constructor.holds(cond, &vars)? {
                    let group = safe_group_name(name);
                    data.add_group(&group).map_err(|e| fail(e.0))?;
                    data.add_child(&group, &host).map_err(|e| fail(e.0))?;
                }
            }
            let vars = host_variables(data, &files, &host, extra);
            for entry in &keyed {
                constructor.keyed_group(entry, &vars, &host, data)?;
            }
        }
        Ok(())
    }
}

/// The variables expressions see for `host`, with `extra` over them.
fn host_variables(
    data: &InventoryData,
    files: &VarsFiles,
    host: &str,
    extra: &Map<String, Value>,
) -> Vars {
    let mut out = Vars::new();
    let Some(h) = data.host_index(host) else {
        return out;
    };
    let depths = data.group_depths();
    let mut all = vars::host_vars(data, files, &depths, HostRef::Inventory(h));
    all.extend(vars::magic_vars(data, HostRef::Inventory(h)));
    for (k, v) in all.into_iter().chain(extra.clone()) {
        out.set_trusted(&k, v);
    }
    out
}

struct Constructor<'a> {
    templar: Templar,
    strict: bool,
    leading_separator: bool,
    source: &'a str,
}

impl Constructor<'_> {
    fn fail(&self, message: String) -> InventoryError {
        InventoryError::parse(self.source, None, message)
    }

    /// The value of a `compose` entry: an expression's result, or a non-string as it is;
    /// `None` when it fails and failures are skipped.
    fn value(&self, expr: &Value, vars: &Vars) -> Result<Option<Value>, InventoryError> {
        let Value::String(text) = expr else {
            return Ok(Some(expr.clone()));
        };
        match self.templar.evaluate(text, vars) {
            Ok(value) => Ok(Some(value)),
            Err(e) if self.strict => Err(self.fail(format!("Could not set {text}: {e}"))),
            Err(_) => Ok(None),
        }
    }

    /// Whether a `groups` conditional holds (a failure does not, unless strict).
    fn holds(&self, cond: &Value, vars: &Vars) -> Result<bool, InventoryError> {
        match self.templar.conditional(cond, vars) {
            Ok(held) => Ok(held),
            Err(e) if self.strict => Err(self.fail(format!("Could not add host to group: {e}"))),
            Err(_) => Ok(false),
        }
    }

    /// Adds `host` to the groups one `keyed_groups` entry names for it.
    fn keyed_group(
        &self,
        entry: &Value,
        vars: &Vars,
        host: &str,
        data: &mut InventoryData,
    ) -> Result<(), InventoryError> {
        let Value::Object(entry) = entry else {
            return Err(self.fail(format!(
                "Invalid keyed group entry, it must be a dictionary: {entry}"
            )));
        };
        let text = |key: &str| match entry.get(key) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => Some(py_text(other)),
        };
        let Some(key_expr) = entry.get("key").filter(|k| !k.is_null()) else {
            if self.strict {
                return Err(self.fail(format!(
                    "No key or key resulted empty for {} in host {host}, invalid entry",
                    Value::Object(entry.clone())
                )));
            }
            return Ok(());
        };
        let Some(key) = self.value(key_expr, vars)? else {
            return Ok(());
        };
        let prefix = text("prefix").unwrap_or_default();
        let mut separator = text("separator").unwrap_or_else(|| "_".into());
        let default_value = text("default_value");
        let trailing_separator = entry.get("trailing_separator").and_then(Value::as_bool);
        if default_value.is_some()
            && entry
                .get("trailing_separator")
                .is_some_and(|t| !t.is_null())
        {
            return Err(self.fail(
                "parameters are mutually exclusive for keyed groups: default_value|trailing_separator".into(),
            ));
        }
        // A host is grouped by a key that is true (Python's truth), or by a null or
        // empty text with a `default_value`; any other key is no entry, an error when
        // strict unless it is an empty list or mapping (nothing to group by).
        let truthy = match &key {
            Value::Null => false,
            Value::Bool(b) => *b,
            Value::Number(n) => n.as_f64() != Some(0.0),
            Value::String(s) => !s.is_empty(),
            Value::Array(items) => !items.is_empty(),
            Value::Object(map) => !map.is_empty(),
        };
        let use_default = (key.is_null() || key.as_str() == Some("")) && default_value.is_some();
        if !truthy && !use_default {
            if self.strict && !key.is_array() && !key.is_object() {
                return Err(self.fail(format!(
                    "No key or key resulted empty for {} in host {host}, invalid entry",
                    py_text(key_expr)
                )));
            }
            return Ok(());
        }
        // An empty text and a null are empty values, as in ansible-core.
        let empty = |v: &Value| v.is_null() || v.as_str() == Some("");
        let mut names = Vec::new();
        match &key {
            key if empty(key) => names.extend(default_value.clone()),
            Value::String(s) => names.push(s.clone()),
            Value::Array(items) => {
                for item in items {
                    match (item, &default_value) {
                        (item, Some(d)) if empty(item) => names.push(d.clone()),
                        (item, _) => names.push(py_text(item)),
                    }
                }
            }
            Value::Object(map) => {
                for (name, value) in map {
                    let text = py_text(value);
                    names.push(match (&default_value, trailing_separator) {
                        (Some(d), _) if empty(value) => format!("{name}{separator}{d}"),
                        (None, Some(false)) if empty(value) => name.clone(),
                        _ => format!("{name}{separator}{text}"),
                    });
                }
            }
            other => {
                return Err(self.fail(format!(
                    "Invalid group name format, expected a string or a list of them or dictionary, got: {}",
                    sandball_pycompat::pyfmt::type_name(other)
                )));
            }
        }
        let parent = match text("parent_group") {
            Some(raw) => match self.templar.render(&raw, vars) {
                Ok(name) => Some(safe_group_name(&name)),
                Err(e) if self.strict => {
                    return Err(self.fail(format!("Could not generate parent group {raw}: {e}")));
                }
                Err(_) => return Ok(()),
            },
            None => None,
        };
        if prefix.is_empty() && !self.leading_separator {
            separator.clear();
        }
        let fail = |e: super::data::DataError| self.fail(e.0);
        for name in names {
            let group = safe_group_name(&format!("{prefix}{separator}{name}"));
            data.add_group(&group).map_err(fail)?;
            data.add_host(host, Some(&group), None).map_err(fail)?;
            if let Some(parent) = &parent {
                data.add_group(parent).map_err(fail)?;
                data.add_child(parent, &group).map_err(fail)?;
            }
        }
        Ok(())
    }
}

/// Python's `str()` of a value, as group names are built from it.
fn py_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => crate::template::python_str(other).unwrap_or_else(|_| other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inventory::plugin::parse_text_alone;
    use serde_json::json;

    fn construct(config: &str) -> Result<InventoryData, InventoryError> {
        let mut data = InventoryData::new();
        data.add_group("web").unwrap();
        for (h, arch, env) in [("w1", "x86_64", "prod"), ("w2", "arm", "")] {
            data.add_host(h, Some("web"), None).unwrap();
            data.set_variable(h, "arch", json!(arch)).unwrap();
            data.set_variable(h, "env", json!(env)).unwrap();
        }
        data.set_variable("w1", "labels", json!({"tier": "gold", "zone": ""}))
            .unwrap();
        parse_text_alone(&ConstructedPlugin, "c.yml", config, data)
    }

    fn members(data: &InventoryData, g: &str) -> Vec<String> {
        let Some(g) = data.group_index(g) else {
            return vec!["<no group>".into()];
        };
        data.direct_hosts_of(g)
            .map(|h| data.host_at(h).name().to_string())
            .collect()
    }

    #[test]
    fn extra_vars_reach_compose_and_keys_with_use_extra_vars() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("c.yml");
        let run = |use_extra: bool| {
            std::fs::write(
                &config,
                format!(
                    "plugin: constructed\nuse_extra_vars: {use_extra}\ncompose:\n  greeting: \"'hello' + from_extras\"\n\
                     keyed_groups:\n  - key: from_extras\n    prefix: k\ngroups:\n  extra: from_extras is defined\n"
                ),
            )
            .unwrap();
            let mut data = InventoryData::new();
            data.add_host("h", None, None).unwrap();
            let options = crate::inventory::LoadOptions {
                extra_vars: [("from_extras".to_string(), json!("hey"))]
                    .into_iter()
                    .collect(),
                ..Default::default()
            };
            let context = ParseContext {
                options: &options,
                processed: &[],
            };
            ConstructedPlugin
                .parse(&config.display().to_string(), &mut data, &context)
                .unwrap();
            data
        };
        let with = run(true);
        let h = with.host_at(with.host_index("h").unwrap());
        assert_eq!(h.vars()["greeting"], json!("hellohey"));
        assert_eq!(members(&with, "k_hey"), ["h"]);
        // Not in `groups` conditionals, as in ansible-core.
        assert_eq!(members(&with, "extra"), ["<no group>"]);
        let without = run(false);
        let h = without.host_at(without.host_index("h").unwrap());
        assert!(!h.vars().contains_key("greeting"));
    }

    #[test]
    fn compose_and_conditional_groups() {
        let data = construct(
            "plugin: constructed\ncompose:\n  fqdn: inventory_hostname ~ '.example.com'\n  skipped: nope.x\n\
             groups:\n  is-arm: arch == 'arm'\n  webby: \"'web' in group_names\"\n  bad: nope > 1\n",
        )
        .unwrap();
        let w1 = data.host_at(data.host_index("w1").unwrap());
        assert_eq!(w1.vars()["fqdn"], json!("w1.example.com"));
        assert!(!w1.vars().contains_key("skipped"));
        assert_eq!(members(&data, "is_arm"), ["w2"]);
        assert_eq!(members(&data, "webby"), ["w1", "w2"]);
        assert!(data.group_index("bad").is_none());
    }

    #[test]
    fn keyed_groups_with_every_option() {
        let data = construct(
            "plugin: constructed
keyed_groups:
  - key: arch
  - {key: env, prefix: env, default_value: none}
  - {key: env, prefix: e2, trailing_separator: false}
  - {key: labels, prefix: l, separator: '-'}
  - {key: arch, prefix: '', parent_group: arches}
",
        )
        .unwrap();
        assert_eq!(members(&data, "_x86_64"), ["w1"]);
        assert_eq!(members(&data, "env_prod"), ["w1"]);
        assert_eq!(members(&data, "env_none"), ["w2"]);
        assert_eq!(members(&data, "e2_prod"), ["w1"]);
        assert!(data.group_index("e2").is_none());
        assert_eq!(members(&data, "l_tier_gold"), ["w1"]);
        assert_eq!(members(&data, "l_zone_"), ["w1"]);
        let arches = data.group_index("arches").unwrap();
        let kids: Vec<&str> = data
            .children_of(arches)
            .map(|g| data.group_at(g).name())
            .collect();
        assert_eq!(kids, ["_x86_64", "_arm"]);
    }

    #[test]
    fn a_null_value_is_empty_as_in_ansible_core() {
        let data = construct(
            "plugin: constructed
compose:
  nothing: None
  tags: \"{'kind': None, 'name': inventory_hostname}\"
  roles: \"['db', None]\"
keyed_groups:
  - {key: nothing, prefix: n, default_value: unset}
  - {key: nothing, prefix: skipped}
  - {key: tags, prefix: t, default_value: unknown}
  - {key: tags, prefix: u, trailing_separator: false}
  - {key: roles, prefix: r, default_value: norole}
",
        )
        .unwrap();
        assert_eq!(members(&data, "n_unset"), ["w1", "w2"]);
        assert!(data.group_index("skipped_None").is_none());
        assert_eq!(members(&data, "t_kind_unknown"), ["w1", "w2"]);
        assert_eq!(members(&data, "u_kind"), ["w1", "w2"]);
        assert!(data.group_index("t_kind_None").is_none());
        assert_eq!(members(&data, "r_norole"), ["w1", "w2"]);
    }

    #[test]
    fn strict_makes_failures_errors() {
        let e = construct("plugin: constructed\nstrict: true\ncompose:\n  x: nope.y\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("Could not set nope.y"), "{e}");
        let e = construct("plugin: constructed\nkeyed_groups:\n  - key: env\n    default_value: a\n    trailing_separator: true\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("mutually exclusive"), "{e}");
        let strict_keyed = |key: &str| {
            construct(&format!(
                "plugin: constructed\nstrict: true\ncompose:\n  k: \"{key}\"\nkeyed_groups:\n  - key: k\n    prefix: p\n"
            ))
        };
        let e = strict_keyed("None").unwrap_err().to_string();
        assert!(
            e.contains("No key or key resulted empty for k in host"),
            "{e}"
        );
        assert!(strict_keyed("0").is_err());
        assert!(strict_keyed("[]").is_ok());
        assert!(strict_keyed("{}").is_ok());
    }
}
