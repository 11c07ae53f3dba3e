//! The `host_list` plugin: a source that is not an existing path and has a comma is a list
//! of hosts (`a,b:2200,[::1]:22`), each added to `ungrouped` unless already known.

use super::address::parse_address;
use super::data::InventoryData;
use super::error::InventoryError;
use super::plugin::InventoryPlugin;
use std::path::Path;

/// Comma-separated host lists.
pub struct HostListPlugin;

impl InventoryPlugin for HostListPlugin {
    fn name(&self) -> &'static str {
        "host_list"
    }

    fn verify_file(&self, source: &str) -> bool {
        !Path::new(source).exists() && source.contains(',')
    }

    fn parse(&self, source: &str, data: &mut InventoryData) -> Result<(), InventoryError> {
        for item in source.split(',').map(str::trim).filter(|h| !h.is_empty()) {
            let (host, port) =
                parse_address(item, false).unwrap_or_else(|_| (item.to_string(), None));
            if data.host_index(&host).is_none() {
                data.add_host(&host, Some("ungrouped"), port).map_err(|e| {
                    InventoryError::parse(
                        source,
                        None,
                        format!("Invalid data from string, could not parse: {e}"),
                    )
                })?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_strings_with_commas_that_are_not_paths() {
        assert!(HostListPlugin.verify_file("a,b"));
        assert!(HostListPlugin.verify_file("localhost,"));
        assert!(!HostListPlugin.verify_file("hosts"));
        let dir = tempfile::tempdir().unwrap();
        let odd = dir.path().join("x,y");
        std::fs::write(&odd, "").unwrap();
        assert!(!HostListPlugin.verify_file(&odd.display().to_string()));
    }

    #[test]
    fn hosts_ports_and_ipv6() {
        let mut data = InventoryData::new();
        HostListPlugin
            .parse(" a , b:2200,[::1]:22,::1,[::2],a,,web[1:2]", &mut data)
            .unwrap();
        let names: Vec<&str> = data.hosts().map(|h| h.name()).collect();
        assert_eq!(names, ["a", "b", "::1", "[::2]", "web[1:2]"]);
        let b = data.host_at(data.host_index("b").unwrap());
        assert_eq!(b.vars()["ansible_port"], json!(2200));
        let v6 = data.host_at(data.host_index("::1").unwrap());
        assert_eq!(v6.vars()["ansible_port"], json!(22));
        assert_eq!(data.direct_hosts_of(1).count(), 5);
    }
}
