//! The inventory source plugin interface and the enabled plugins, tried in Ansible's
//! order for every source: each says whether it wants the source (`verify_file`), and the
//! first that parses it wins. `ANSIBLE_INVENTORY_ENABLED` chooses them as in Ansible
//! (default: `host_list`, `script`, `auto`, `yaml`, `ini`, `toml`); `auto` hands a YAML file with a
//! `plugin:` key to the plugin it names, enabled or not.

use super::auto::AutoPlugin;
use super::constructed::ConstructedPlugin;
use super::data::InventoryData;
use super::error::InventoryError;
use super::host_list::{AdvancedHostListPlugin, HostListPlugin};
use super::ini::IniPlugin;
use super::script::ScriptPlugin;
use super::sources::LoadOptions;
use super::toml::TomlPlugin;
use super::yaml::YamlPlugin;
use serde_json::{Map, Value};
use std::path::Path;

/// What a plugin may need besides the source: the load options (cache, strictness) and the
/// sources parsed before this one (whose `group_vars/` and `host_vars/` vars plugins read).
pub struct ParseContext<'a> {
    /// How the inventory is being loaded.
    pub options: &'a LoadOptions,
    /// The files and host lists parsed so far, in order.
    pub processed: &'a [String],
}

/// One kind of inventory source.
pub trait InventoryPlugin {
    /// The plugin name, as messages show it.
    fn name(&self) -> &'static str;

    /// Whether the plugin wants to try `source` (a path or a host-list string).
    fn verify_file(&self, source: &str) -> bool;

    /// Adds what `source` defines to `data`. A failure may leave part of it added, as in
    /// Ansible.
    fn parse(
        &self,
        source: &str,
        data: &mut InventoryData,
        context: &ParseContext,
    ) -> Result<(), InventoryError>;

    /// Whether the plugin reads a YAML configuration file naming it (`plugin: NAME`), so
    /// that `auto` may hand such files to it.
    fn takes_config_file(&self) -> bool {
        false
    }
}

/// Every plugin, by name.
const PLUGINS: [&dyn InventoryPlugin; 8] = [
    &HostListPlugin,
    &AdvancedHostListPlugin,
    &ScriptPlugin,
    &AutoPlugin,
    &YamlPlugin,
    &IniPlugin,
    &TomlPlugin,
    &ConstructedPlugin,
];

/// The plugins enabled when `ANSIBLE_INVENTORY_ENABLED` is unset, in order.
const DEFAULT_ENABLED: [&str; 6] = ["host_list", "script", "auto", "yaml", "ini", "toml"];

/// The plugin called `name` (with or without the `ansible.builtin.` prefix).
pub fn plugin_named(name: &str) -> Option<&'static dyn InventoryPlugin> {
    let short = name.strip_prefix("ansible.builtin.").unwrap_or(name);
    PLUGINS.into_iter().find(|p| p.name() == short)
}

/// The enabled plugins, in the order they are tried, and a warning for each name in
/// `ANSIBLE_INVENTORY_ENABLED` that is no plugin sandball has.
pub fn enabled_plugins() -> (Vec<&'static dyn InventoryPlugin>, Vec<String>) {
    let names: Vec<String> = match crate::config::settings().get("ANSIBLE_INVENTORY_ENABLED") {
        Some(list) if !list.trim().is_empty() => crate::config::list(list),
        _ => DEFAULT_ENABLED.iter().map(|n| n.to_string()).collect(),
    };
    let mut plugins = Vec::new();
    let mut warnings = Vec::new();
    for name in names {
        match plugin_named(&name) {
            Some(p) => plugins.push(p),
            None => warnings.push(format!("Failed to load inventory plugin, skipping {name}")),
        }
    }
    (plugins, warnings)
}

/// Parses `source` with `plugin` alone, with default options (for tests).
#[cfg(test)]
pub(crate) fn parse_alone(
    plugin: &dyn InventoryPlugin,
    source: &str,
    data: &mut InventoryData,
) -> Result<(), InventoryError> {
    let options = LoadOptions::default();
    let context = ParseContext {
        options: &options,
        processed: &[],
    };
    plugin.parse(source, data, &context)
}

/// Writes `text` to a file called `name` in a temporary directory and parses it with
/// `plugin` alone into `data` (for tests).
#[cfg(test)]
pub(crate) fn parse_text_alone(
    plugin: &dyn InventoryPlugin,
    name: &str,
    text: &str,
    mut data: InventoryData,
) -> Result<InventoryData, InventoryError> {
    let dir = tempfile::tempdir().map_err(|error| InventoryError::Io {
        path: name.to_string(),
        error,
    })?;
    let path = dir.path().join(name);
    std::fs::write(&path, text).map_err(|error| InventoryError::Io {
        path: name.to_string(),
        error,
    })?;
    parse_alone(plugin, &path.display().to_string(), &mut data)?;
    Ok(data)
}

/// Whether `path` is something other than a directory that this process can read (a
/// device such as `/dev/null` too, as ansible-core's file plugins take it).
pub fn readable_file(path: &str) -> bool {
    std::fs::File::open(path).is_ok() && !Path::new(path).is_dir()
}

/// Reads a source file.
pub fn read_source(path: &str) -> Result<Vec<u8>, InventoryError> {
    std::fs::read(path).map_err(|error| InventoryError::Io {
        path: path.to_string(),
        error,
    })
}

/// Adds `hosts` (to `group`, with `port`) and sets `vars` on each, as Ansible's
/// `_populate_host_vars` does; errors are reported at `path`:`line`.
pub fn populate_host_vars(
    data: &mut InventoryData,
    hosts: &[String],
    vars: &Map<String, Value>,
    group: &str,
    port: Option<u64>,
    (path, line): (&str, Option<usize>),
) -> Result<(), InventoryError> {
    let fail = |e: super::data::DataError| InventoryError::parse(path, line, e.0);
    for host in hosts {
        data.add_host(host, Some(group), port).map_err(fail)?;
        for (k, v) in vars {
            data.set_variable(host, k, v.clone()).map_err(fail)?;
        }
    }
    Ok(())
}
