//! `virtual`: virtualization type and role, and the guest and host technologies, as
//! ansible-core detects them on Linux (pid 1's cgroups, container and hypervisor
//! markers, DMI, `/proc/cpuinfo`, `/proc/modules`, `/dev/kvm`). Not read: pid 1's
//! environment (`container=`; only root may read it, and the shim does not expose
//! other processes' environments), `/proc/self/status` (VxID) and `dmidecode`.

use crate::util::{present, read};
use sandball_guest_sdk::prelude::*;
use std::collections::BTreeSet;

/// What has been found so far.
#[derive(Default)]
struct Found {
    kind: Option<String>,
    role: Option<String>,
    guest: BTreeSet<String>,
    host: BTreeSet<String>,
    /// Set once a technology decided type and role (ansible-core's `found_virt`).
    done: bool,
}

impl Found {
    /// A guest technology; the first decides type and role.
    fn guest(&mut self, tech: &str, role: Option<&str>) {
        self.guest.insert(tech.to_string());
        if !self.done {
            self.kind = Some(tech.to_string());
            if let Some(r) = role {
                self.role = Some(r.to_string());
            }
            self.done = true;
        }
    }
}

/// Adds the virtualization facts.
pub fn collect(facts: &mut Map<String, Value>) {
    let mut f = Found::default();
    for line in host::table("init/cgroup").unwrap_or_default().lines() {
        if line.contains("/docker/") || docker_scope(line) {
            f.guest("docker", Some("guest"));
        }
        if line.contains("/lxc/") || line.contains("/machine.slice/machine-lxc") {
            f.guest("lxc", Some("guest"));
        }
        if line.contains("/system.slice/containerd.service") {
            f.guest("containerd", Some("guest"));
        }
    }
    if present("/proc/vz") && !present("/proc/lve") {
        f.kind = Some("openvz".into());
        if present("/proc/bc") {
            f.host.insert("openvz".into());
            if !f.done {
                f.role = Some("host".into());
            }
        } else {
            f.guest.insert("openvz".into());
            if !f.done {
                f.role = Some("guest".into());
            }
        }
        f.done = true;
    }
    let systemd_container = read("/run/systemd/container").filter(|s| !s.is_empty());
    if let Some(c) = &systemd_container {
        f.guest(c, Some("guest"));
    }
    if present("/.dockerenv") || present("/.dockerinit") {
        f.guest("docker", Some("guest"));
    }
    if systemd_container.is_some()
        || ["docker", "lxc", "podman", "openvz", "containerd"]
            .iter()
            .any(|t| f.guest.contains(*t))
    {
        f.guest.insert("container".into());
    }
    if present("/proc/xen") {
        let host = read("/proc/xen/capabilities").is_some_and(|c| c.contains("control_d"));
        if host {
            f.host.insert("xen".into());
        }
        if !f.done {
            f.kind = Some("xen".into());
            f.role = Some(if host { "host" } else { "guest" }.into());
        }
        f.done = true;
    }
    if !f.done {
        f.role = Some("guest".into());
    }
    dmi(&mut f);
    if !f.done {
        f.role = None;
    }
    for line in read("/proc/cpuinfo").unwrap_or_default().lines() {
        let tech = if line.starts_with("model name") && line.contains("QEMU Virtual CPU") {
            "kvm"
        } else if line.starts_with("vendor_id") && line.contains("User Mode Linux")
            || line.starts_with("model name") && line.contains("UML")
        {
            "uml"
        } else if line.starts_with("vendor_id") && line.contains("PowerVM Lx86") {
            "powervm_lx86"
        } else {
            continue;
        };
        f.guest(tech, Some("guest"));
    }
    let modules: Vec<String> = read("/proc/modules")
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split(' ').next().map(str::to_string))
        .collect();
    let has = |m: &str| modules.iter().any(|x| x == m);
    if has("kvm") {
        f.host.insert("kvm".into());
        if !f.done {
            f.kind = Some("kvm".into());
            f.role = Some("host".into());
        }
        f.done = true;
    }
    if has("vboxdrv") {
        f.host.insert("virtualbox".into());
        if !f.done {
            f.kind = Some("virtualbox".into());
            f.role = Some("host".into());
            f.done = true;
        }
    }
    if has("virtio") {
        f.host.insert("kvm".into());
        if !f.done {
            f.kind = Some("kvm".into());
            f.role = Some("guest".into());
            f.done = true;
        }
    }
    if present("/dev/kvm") {
        f.host.insert("kvm".into());
        if !f.done {
            f.kind = Some("kvm".into());
            f.role = Some("host".into());
            f.done = true;
        }
    }
    facts.insert(
        "virtualization_type".into(),
        json!(f.kind.as_deref().unwrap_or("NA")),
    );
    facts.insert(
        "virtualization_role".into(),
        json!(f.role.as_deref().unwrap_or("NA")),
    );
    facts.insert("virtualization_tech_guest".into(), json!(f.guest));
    facts.insert("virtualization_tech_host".into(), json!(f.host));
}

/// `/docker-<hex>.scope` in a cgroup line.
fn docker_scope(line: &str) -> bool {
    line.split("/docker-").skip(1).any(|rest| {
        let hex: String = rest.chars().take_while(|c| c.is_ascii_hexdigit()).collect();
        !hex.is_empty() && rest[hex.len()..].starts_with(".scope")
    })
}

/// The hypervisors DMI names.
fn dmi(f: &mut Found) {
    let base = "/sys/devices/virtual/dmi/id";
    let product = read(&format!("{base}/product_name")).unwrap_or_default();
    let vendor = read(&format!("{base}/sys_vendor")).unwrap_or_default();
    let family = read(&format!("{base}/product_family")).unwrap_or_default();
    let bios = read(&format!("{base}/bios_vendor")).unwrap_or_default();
    if [
        "KVM",
        "KVM Server",
        "Bochs",
        "AHV",
        "CloudStack KVM Hypervisor",
    ]
    .contains(&product.as_str())
    {
        f.guest("kvm", None);
    }
    if vendor == "oVirt" {
        f.guest("oVirt", None);
    }
    if vendor == "Red Hat" {
        if family == "RHV" {
            f.guest("RHV", None);
        } else if product == "RHEV Hypervisor" {
            f.guest("RHEV", None);
        }
    }
    if product.starts_with("VMware") {
        f.guest("VMware", None);
    }
    if ["OpenStack Compute", "OpenStack Nova"].contains(&product.as_str()) {
        f.guest("openstack", None);
    }
    if bios == "Xen" {
        f.guest("xen", None);
    }
    if bios == "innotek GmbH" {
        f.guest("virtualbox", None);
    }
    if ["Amazon EC2", "DigitalOcean", "Hetzner", "Linode"].contains(&bios.as_str()) {
        f.guest("kvm", None);
    }
    if [
        "QEMU",
        "Amazon EC2",
        "DigitalOcean",
        "Google",
        "Scaleway",
        "Nutanix",
    ]
    .contains(&vendor.as_str())
    {
        f.guest("kvm", None);
    }
    for (v, tech) in [
        ("KubeVirt", "KubeVirt"),
        ("Microsoft Corporation", "VirtualPC"),
        ("Parallels Software International Inc.", "parallels"),
        ("OpenStack Foundation", "openstack"),
    ] {
        if vendor == v {
            f.guest(tech, None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docker_scopes_are_recognised() {
        assert!(docker_scope("0::/system.slice/docker-0123abc.scope"));
        assert!(!docker_scope("0::/system.slice/docker-.scope"));
        assert!(!docker_scope("0::/"));
    }

    #[test]
    fn the_first_technology_decides() {
        let mut f = Found::default();
        f.guest("docker", Some("guest"));
        f.guest("kvm", None);
        assert_eq!(f.kind.as_deref(), Some("docker"));
        assert_eq!(f.role.as_deref(), Some("guest"));
        assert_eq!(f.guest.len(), 2);
    }
}
