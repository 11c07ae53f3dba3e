//! The `auto` plugin: a YAML file whose `plugin:` key names an inventory plugin that reads
//! config files (`constructed`, …) is handed to that plugin, whether or not the plugin is
//! enabled. A file without the key, or naming a plugin sandball does not have, is an
//! error that says so (other plugins may still read the file).

use super::data::InventoryData;
use super::error::InventoryError;
use super::plugin::{InventoryPlugin, ParseContext, plugin_named, read_source, readable_file};
use super::yaml_load::{NodeExt, load};
use serde_json::{Map, Value};

/// Plugin configuration files.
pub struct AutoPlugin;

impl InventoryPlugin for AutoPlugin {
    fn name(&self) -> &'static str {
        "auto"
    }

    fn verify_file(&self, source: &str) -> bool {
        (source.ends_with(".yml") || source.ends_with(".yaml")) && readable_file(source)
    }

    fn parse(
        &self,
        source: &str,
        data: &mut InventoryData,
        context: &ParseContext,
    ) -> Result<(), InventoryError> {
        let config = read_config(source)?;
        let Some(name) = config.get("plugin").and_then(Value::as_str) else {
            return Err(InventoryError::parse(
                source,
                None,
                format!(
                    "no root 'plugin' key found, '{source}' is not a valid YAML inventory plugin config file"
                ),
            ));
        };
        let plugin = plugin_named(name)
            .filter(|p| p.takes_config_file())
            .ok_or_else(|| {
                InventoryError::parse(
                    source,
                    None,
                    format!("inventory config '{source}' specifies unknown plugin '{name}'"),
                )
            })?;
        if !plugin.verify_file(source) {
            return Err(InventoryError::parse(
                source,
                None,
                format!(
                    "inventory source '{source}' could not be verified by inventory plugin '{name}'"
                ),
            ));
        }
        plugin.parse(source, data, context)
    }
}

/// A plugin configuration file: a YAML mapping.
pub fn read_config(source: &str) -> Result<Map<String, Value>, InventoryError> {
    let bytes = read_source(source)?;
    let text = String::from_utf8(bytes)
        .map_err(|e| InventoryError::parse(source, None, format!("not valid UTF-8: {e}")))?;
    let (root, _) = load(&text, source)?;
    match root {
        Some(node) => match node.to_json() {
            Value::Object(map) => Ok(map),
            _ => Err(InventoryError::parse(
                source,
                node.line(),
                format!(
                    "plugin config file must be a dictionary, got {}",
                    node.type_name()
                ),
            )),
        },
        None => Err(InventoryError::parse(
            source,
            None,
            "plugin config file is empty",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inventory::plugin::parse_text_alone;

    fn parse(text: &str) -> Result<InventoryData, InventoryError> {
        let mut data = InventoryData::new();
        data.add_host("h", Some("ungrouped"), None).unwrap();
        parse_text_alone(&AutoPlugin, "inv.yml", text, data)
    }

    #[test]
    fn dispatches_on_the_plugin_key() {
        let data = parse("plugin: ansible.builtin.constructed\ngroups:\n  every: true\n").unwrap();
        assert!(data.group_index("every").is_some());
    }

    #[test]
    fn missing_or_unknown_plugins_are_errors() {
        let e = parse("all:\n  hosts:\n    a:\n").unwrap_err().to_string();
        assert!(e.contains("no root 'plugin' key found"), "{e}");
        let e = parse("plugin: aws_ec2\n").unwrap_err().to_string();
        assert!(e.contains("specifies unknown plugin 'aws_ec2'"), "{e}");
        let e = parse("plugin: ini\n").unwrap_err().to_string();
        assert!(e.contains("specifies unknown plugin 'ini'"), "{e}");
    }
}
