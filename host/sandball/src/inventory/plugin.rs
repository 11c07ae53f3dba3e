//! The inventory source plugin interface and the plugins enabled by default, tried in
//! Ansible's order for every source: each says whether it wants the source
//! (`verify_file`), and the first that parses it wins.

use super::data::InventoryData;
use super::error::InventoryError;
use super::host_list::HostListPlugin;
use super::ini::IniPlugin;
use super::yaml::YamlPlugin;
use serde_json::{Map, Value};
use std::path::Path;

/// One kind of inventory source.
pub trait InventoryPlugin {
    /// The plugin name, as messages show it.
    fn name(&self) -> &'static str;

    /// Whether the plugin wants to try `source` (a path or a host-list string).
    fn verify_file(&self, source: &str) -> bool;

    /// Adds what `source` defines to `data`. A failure may leave part of it added, as in
    /// Ansible.
    fn parse(&self, source: &str, data: &mut InventoryData) -> Result<(), InventoryError>;
}

/// The enabled plugins, in the order they are tried.
pub fn enabled_plugins() -> [&'static dyn InventoryPlugin; 3] {
    [&HostListPlugin, &YamlPlugin, &IniPlugin]
}

/// Whether `path` is an existing file this process can read.
pub fn readable_file(path: &str) -> bool {
    std::fs::File::open(path).is_ok() && Path::new(path).is_file()
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
