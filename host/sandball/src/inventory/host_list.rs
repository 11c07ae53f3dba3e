//! The `host_list` plugin: a source that is not an existing path and has a comma is a list
//! of hosts (`a,b:2200,[::1]:22`), each added to `ungrouped` unless already known. The
//! `advanced_host_list` plugin (not enabled by default, as in Ansible) also expands ranges
//! (`web[01:10],`); a range ansible-core refuses in its own words (`web[1:]`) leaves the
//! name as written (saying why at `-vvv`), one it cannot read (`web[1:x]`) fails the
//! source.

use super::address::parse_address;
use super::data::InventoryData;
use super::error::InventoryError;
use super::plugin::{InventoryPlugin, ParseContext};
use super::range::{RangeError, expand_hostpattern};
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

    fn parse(
        &self,
        source: &str,
        data: &mut InventoryData,
        _: &ParseContext,
    ) -> Result<(), InventoryError> {
        add_listed_hosts(source, data, |item| {
            let (host, port) =
                parse_address(item, false).unwrap_or_else(|_| (item.to_string(), None));
            Ok((vec![host], port))
        })
    }
}

/// Comma-separated host lists whose names may hold ranges.
pub struct AdvancedHostListPlugin;

impl InventoryPlugin for AdvancedHostListPlugin {
    fn name(&self) -> &'static str {
        "advanced_host_list"
    }

    fn verify_file(&self, source: &str) -> bool {
        HostListPlugin.verify_file(source)
    }

    fn parse(
        &self,
        source: &str,
        data: &mut InventoryData,
        _: &ParseContext,
    ) -> Result<(), InventoryError> {
        add_listed_hosts(source, data, expand_hostpattern)
    }
}

/// Adds each item of the list, as `expand` reads it, to `ungrouped` unless already known.
fn add_listed_hosts(
    source: &str,
    data: &mut InventoryData,
    expand: impl Fn(&str) -> Result<(Vec<String>, Option<u64>), RangeError>,
) -> Result<(), InventoryError> {
    let fail = |e: String| {
        InventoryError::parse(
            source,
            None,
            format!("Invalid data from string, could not parse: {e}"),
        )
    };
    for item in source.split(',').map(str::trim).filter(|h| !h.is_empty()) {
        let (hosts, port) = match expand(item) {
            Ok(found) => found,
            Err(RangeError::Refused(e)) => {
                data.verbose(
                    3,
                    format!("Unable to parse address from hostname, leaving unchanged: {e}"),
                );
                (vec![item.to_string()], None)
            }
            Err(RangeError::Unreadable(e)) => return Err(fail(e)),
        };
        for host in hosts {
            if data.host_index(&host).is_none() {
                data.add_host(&host, Some("ungrouped"), port)
                    .map_err(|e| fail(e.0))?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inventory::data::Notice;
    use crate::inventory::plugin::parse_alone;
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
        parse_alone(
            &HostListPlugin,
            " a , b:2200,[::1]:22,::1,[::2],a,,web[1:2]",
            &mut data,
        )
        .unwrap();
        let names: Vec<&str> = data.hosts().map(|h| h.name()).collect();
        assert_eq!(names, ["a", "b", "::1", "[::2]", "web[1:2]"]);
        let b = data.host_at(data.host_index("b").unwrap());
        assert_eq!(b.vars()["ansible_port"], json!(2200));
        let v6 = data.host_at(data.host_index("::1").unwrap());
        assert_eq!(v6.vars()["ansible_port"], json!(22));
        assert_eq!(data.direct_hosts_of(1).count(), 5);
        let mut data = InventoryData::new();
        parse_alone(&AdvancedHostListPlugin, "web[1:3]:22,db", &mut data).unwrap();
        let names: Vec<&str> = data.hosts().map(|h| h.name()).collect();
        assert_eq!(names, ["web1", "web2", "web3", "db"]);
    }

    #[test]
    fn a_refused_range_keeps_its_name_an_unreadable_one_fails() {
        let mut data = InventoryData::new();
        parse_alone(&AdvancedHostListPlugin, "local[1:],web[1:2]", &mut data).unwrap();
        let names: Vec<&str> = data.hosts().map(|h| h.name()).collect();
        assert_eq!(names, ["local[1:]", "web1", "web2"]);
        let said: Vec<_> = data.notices().cloned().collect();
        assert_eq!(
            said,
            [Notice::Verbose(
                3,
                "Unable to parse address from hostname, leaving unchanged: host range must specify end value".into()
            )]
        );
        let mut data = InventoryData::new();
        let e = parse_alone(&AdvancedHostListPlugin, "local[1:j],", &mut data).unwrap_err();
        assert!(
            e.to_string().contains("invalid host range bound: 'j'"),
            "{e}"
        );
    }
}
