//! `hardware`: processors (`/proc/cpuinfo`), memory (`/proc/meminfo`), mounts (the
//! mount table and statvfs through the host interface), block devices (`/sys/block`),
//! DMI (`/sys/devices/virtual/dmi/id`) and uptime.

use crate::util::read;
use sandball_guest_sdk::host;
use sandball_guest_sdk::prelude::*;
use std::collections::BTreeMap;

/// Adds the hardware facts.
pub fn collect(facts: &mut Map<String, Value>) {
    let arch = facts
        .get("architecture")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    cpu(facts, &read("/proc/cpuinfo").unwrap_or_default(), &arch);
    memory(facts, &read("/proc/meminfo").unwrap_or_default());
    dmi(facts);
    mounts(facts);
    devices(facts);
    if let Some(up) = read("/proc/uptime").and_then(|t| {
        t.split_whitespace()
            .next()
            .and_then(|s| s.parse::<f64>().ok())
    }) {
        facts.insert("uptime_seconds".into(), json!(up as i64));
    }
    facts.insert("lvm".into(), json!("N/A"));
}

/// The processor facts, as ansible-core reads `/proc/cpuinfo` on Linux.
fn cpu(facts: &mut Map<String, Value>, cpuinfo: &str, arch: &str) {
    let mut processor = Vec::new();
    let (mut vendors, mut models, mut processors) = (0, 0, 0);
    let mut sockets: BTreeMap<String, i64> = BTreeMap::new();
    let mut socket_order: Vec<String> = Vec::new();
    let mut cores: BTreeMap<String, i64> = BTreeMap::new();
    let mut core_order: Vec<String> = Vec::new();
    let (mut physid, mut coreid) = ("0".to_string(), "0".to_string());
    let mut count = 0i64;
    for line in cpuinfo.lines() {
        let (key, val) = match line.split_once(':') {
            Some((k, v)) => (k.trim(), v.trim()),
            None => (line.trim(), ""),
        };
        if key == "flags" {
            facts.insert(
                "flags".into(),
                json!(val.split_whitespace().collect::<Vec<_>>()),
            );
        }
        match key {
            "model name" | "Processor" | "vendor_id" | "cpu" | "Vendor" | "processor" => {
                processor.push(val.to_string());
                match key {
                    "vendor_id" => vendors += 1,
                    "model name" => models += 1,
                    "processor" => processors += 1,
                    _ => {}
                }
                count += 1;
            }
            "physical id" => {
                physid = val.to_string();
                if !sockets.contains_key(&physid) {
                    sockets.insert(physid.clone(), 1);
                    socket_order.push(physid.clone());
                }
            }
            "core id" => {
                coreid = val.to_string();
                // ansible-core checks the sockets here, not the cores.
                if !sockets.contains_key(&coreid) {
                    if !cores.contains_key(&coreid) {
                        core_order.push(coreid.clone());
                    }
                    cores.insert(coreid.clone(), 1);
                }
            }
            "cpu cores" => {
                if !sockets.contains_key(&physid) {
                    socket_order.push(physid.clone());
                }
                sockets.insert(physid.clone(), val.parse().unwrap_or(0));
            }
            "siblings" => {
                if !cores.contains_key(&coreid) {
                    core_order.push(coreid.clone());
                }
                cores.insert(coreid.clone(), val.parse().unwrap_or(0));
            }
            _ => {}
        }
    }
    if vendors > 0 && vendors == models {
        count = vendors;
    }
    if arch.starts_with("armv") || arch.starts_with("aarch") || arch.starts_with("ppc") {
        count = processors;
    }
    let processor_count = if sockets.is_empty() {
        count
    } else {
        sockets.len() as i64
    };
    let first_socket = socket_order.first().and_then(|s| sockets.get(s)).copied();
    let processor_cores = first_socket.filter(|c| *c != 0).unwrap_or(1);
    let threads = match core_order.first().and_then(|c| cores.get(c)) {
        Some(siblings) => (*siblings as f64 / processor_cores as f64).round() as i64,
        None => (1.0 / processor_cores as f64).round() as i64,
    };
    facts.insert("processor".into(), json!(processor));
    facts.insert("processor_count".into(), json!(processor_count));
    facts.insert("processor_cores".into(), json!(processor_cores));
    facts.insert("processor_threads_per_core".into(), json!(threads));
    facts.insert(
        "processor_vcpus".into(),
        json!(threads * processor_count * processor_cores),
    );
    facts.insert("processor_nproc".into(), json!(processors));
}

/// The memory facts, in MiB as ansible-core computes them.
fn memory(facts: &mut Map<String, Value>, meminfo: &str) {
    let mut stats: BTreeMap<&str, i64> = BTreeMap::new();
    for line in meminfo.lines() {
        let Some((key, rest)) = line.split_once(':') else {
            continue;
        };
        let Some(kb) = rest
            .split_whitespace()
            .next()
            .and_then(|v| v.parse::<i64>().ok())
        else {
            continue;
        };
        let mb = kb.div_euclid(1024);
        if let Some(name) = match key {
            "MemTotal" => Some("memtotal_mb"),
            "MemFree" => Some("memfree_mb"),
            "SwapTotal" => Some("swaptotal_mb"),
            "SwapFree" => Some("swapfree_mb"),
            _ => None,
        } {
            facts.insert(name.into(), json!(mb));
        }
        if let Some(name) = [
            "MemTotal",
            "MemFree",
            "SwapTotal",
            "SwapFree",
            "Buffers",
            "Cached",
            "SwapCached",
        ]
        .iter()
        .find(|k| **k == key)
        {
            stats.insert(name, mb);
        }
    }
    let get = |k: &str| stats.get(k).copied();
    let sub = |a: Option<i64>, b: Option<i64>| a.zip(b).map(|(a, b)| a - b);
    let nocache_free = match (get("Cached"), get("MemFree"), get("Buffers")) {
        (Some(c), Some(f), Some(b)) => Some(c + f + b),
        _ => None,
    };
    facts.insert(
        "memory_mb".into(),
        json!({
            "real": {
                "total": get("MemTotal"),
                "used": sub(get("MemTotal"), get("MemFree")),
                "free": get("MemFree"),
            },
            "nocache": {
                "free": nocache_free,
                "used": sub(get("MemTotal"), nocache_free),
            },
            "swap": {
                "total": get("SwapTotal"),
                "free": get("SwapFree"),
                "used": sub(get("SwapTotal"), get("SwapFree")),
                "cached": get("SwapCached"),
            },
        }),
    );
}

/// The DMI facts from sysfs; "NA" for each when the firmware tables are absent
/// (ansible-core would then run `dmidecode`, which the module does not).
fn dmi(facts: &mut Map<String, Value>) {
    const FORM_FACTOR: &[&str] = &[
        "Unknown",
        "Other",
        "Unknown",
        "Desktop",
        "Low Profile Desktop",
        "Pizza Box",
        "Mini Tower",
        "Tower",
        "Portable",
        "Laptop",
        "Notebook",
        "Hand Held",
        "Docking Station",
        "All In One",
        "Sub Notebook",
        "Space-saving",
        "Lunch Box",
        "Main Server Chassis",
        "Expansion Chassis",
        "Sub Chassis",
        "Bus Expansion Chassis",
        "Peripheral Chassis",
        "RAID Chassis",
        "Rack Mount Chassis",
        "Sealed-case PC",
        "Multi-system",
        "CompactPCI",
        "AdvancedTCA",
        "Blade",
        "Blade Enclosure",
        "Tablet",
        "Convertible",
        "Detachable",
        "IoT Gateway",
        "Embedded PC",
        "Mini PC",
        "Stick PC",
    ];
    const FILES: &[(&str, &str)] = &[
        ("bios_date", "bios_date"),
        ("bios_vendor", "bios_vendor"),
        ("bios_version", "bios_version"),
        ("board_asset_tag", "board_asset_tag"),
        ("board_name", "board_name"),
        ("board_serial", "board_serial"),
        ("board_vendor", "board_vendor"),
        ("board_version", "board_version"),
        ("chassis_asset_tag", "chassis_asset_tag"),
        ("chassis_serial", "chassis_serial"),
        ("chassis_vendor", "chassis_vendor"),
        ("chassis_version", "chassis_version"),
        ("form_factor", "chassis_type"),
        ("product_name", "product_name"),
        ("product_serial", "product_serial"),
        ("product_uuid", "product_uuid"),
        ("product_version", "product_version"),
        ("system_vendor", "sys_vendor"),
    ];
    let base = "/sys/devices/virtual/dmi/id";
    let tables = crate::util::exists(&format!("{base}/product_name"));
    for (key, file) in FILES {
        let value = if tables {
            read(&format!("{base}/{file}"))
        } else {
            None
        };
        let value = match (value, *key) {
            (Some(v), "form_factor") => {
                match v.parse::<usize>().ok().and_then(|i| FORM_FACTOR.get(i)) {
                    Some(f) => f.to_string(),
                    None => format!("unknown ({v})"),
                }
            }
            (Some(v), _) => v,
            (None, _) => "NA".to_string(),
        };
        facts.insert(key.to_string(), json!(value));
    }
}

/// `mounts`: the physical mounts of the mount table with their statvfs sizes.
/// `uuid` is "N/A": the UUIDs come from lsblk or udev, which the module does not use.
fn mounts(facts: &mut Map<String, Value>) {
    let table = host::table("mounts").unwrap_or_default();
    let binds = bind_mounts(&host::table("mountinfo").unwrap_or_default());
    let mut out = Vec::new();
    for line in table.lines() {
        let fields: Vec<String> = line.split(' ').map(unescape_octal).collect();
        let [device, mount, fstype, options, dump, passno, ..] = &fields[..] else {
            continue;
        };
        if (!device.starts_with('/') && !device.starts_with('\\') && !device.contains(":/"))
            || fstype == "none"
        {
            continue;
        }
        let mut options = options.clone();
        if binds.contains(mount) && !options.split(',').any(|o| o == "bind") {
            options.push_str(",bind");
        }
        let mut info = json_map!({
            "mount": mount,
            "device": device,
            "fstype": fstype,
            "options": options,
            "dump": dump.parse::<i64>().unwrap_or(0),
            "passno": passno.parse::<i64>().unwrap_or(0),
        });
        if let Ok(st) = host::fs_usage(mount) {
            let used = st.blocks.saturating_sub(st.blocks_available);
            info.extend(json_map!({
                "size_total": st.fragment_size * st.blocks,
                "size_available": st.fragment_size * st.blocks_available,
                "block_size": st.block_size,
                "block_total": st.blocks,
                "block_available": st.blocks_available,
                "block_used": used,
                "inode_total": st.files,
                "inode_available": st.files_available,
                "inode_used": st.files.saturating_sub(st.files_available),
            }));
        }
        info.insert("uuid".into(), json!("N/A"));
        out.push(Value::Object(info));
    }
    facts.insert("mounts".into(), Value::Array(out));
}

/// The mount points that show a subtree of their file system (bind mounts), from
/// mountinfo's root field, as findmnt marks them.
fn bind_mounts(mountinfo: &str) -> Vec<String> {
    mountinfo
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (f.len() > 4 && f[3] != "/").then(|| unescape_octal(f[4]))
        })
        .collect()
}

/// Decodes the `\040`-style escapes of the mount table.
fn unescape_octal(field: &str) -> String {
    let b = field.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = b[i + 1..i + 4]
                .iter()
                .fold(0u32, |a, c| a * 8 + u32::from(c - b'0'));
            out.push(u8::try_from(v).unwrap_or(b'?'));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Bytes in ansible-core's human form: `256.00 GB`.
fn human(bytes: f64) -> String {
    const UNITS: &[(&str, f64)] = &[
        ("YB", 1208925819614629174706176.0),
        ("ZB", 1180591620717411303424.0),
        ("EB", 1152921504606846976.0),
        ("PB", 1125899906842624.0),
        ("TB", 1099511627776.0),
        ("GB", 1073741824.0),
        ("MB", 1048576.0),
        ("KB", 1024.0),
    ];
    for (unit, limit) in UNITS {
        if bytes >= *limit {
            return format!("{:.2} {unit}", bytes / limit);
        }
    }
    format!("{bytes:.2} Bytes")
}

/// `devices`: the block devices of `/sys/block` with their main attributes and
/// partitions (`links` and `host` are left empty: they come from `/dev/disk` and
/// lspci, which the module is not granted).
fn devices(facts: &mut Map<String, Value>) {
    let mut out = Map::new();
    let Ok(entries) = std::fs::read_dir("/sys/block") else {
        facts.insert("devices".into(), Value::Object(out));
        return;
    };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    for name in names {
        let sys = format!("/sys/block/{name}");
        let get = |f: &str| read(&format!("{sys}/{f}"));
        let sectorsize = get("queue/logical_block_size")
            .or_else(|| get("queue/hw_sector_size"))
            .unwrap_or_else(|| "512".into());
        let sectors: u64 = get("size").and_then(|s| s.parse().ok()).unwrap_or(0);
        let unit: f64 = sectorsize.parse().unwrap_or(512.0);
        let scheduler = get("queue/scheduler")
            .and_then(|s| {
                s.split_whitespace()
                    .find(|w| w.starts_with('['))
                    .map(|w| w.trim_matches(['[', ']']).to_string())
                    .or(Some(s))
            })
            .unwrap_or_default();
        let mut partitions = Map::new();
        if let Ok(children) = std::fs::read_dir(&sys) {
            let mut parts: Vec<String> = children
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|c| c.starts_with(name.as_str()))
                .collect();
            parts.sort();
            for part in parts {
                let pget = |f: &str| read(&format!("{sys}/{part}/{f}"));
                let psectors: u64 = pget("size").and_then(|s| s.parse().ok()).unwrap_or(0);
                partitions.insert(
                    part.clone(),
                    json!({
                        "sectors": psectors,
                        "sectorsize": unit as u64,
                        "size": human(psectors as f64 * unit),
                        "start": pget("start").unwrap_or_default(),
                        "uuid": null,
                        "holders": holders(&format!("{sys}/{part}")),
                        "links": {"ids": [], "uuids": [], "labels": [], "masters": []},
                    }),
                );
            }
        }
        let mut dev = json_map!({
            "holders": holders(&sys),
            "host": "",
            "links": {"ids": [], "labels": [], "masters": [], "uuids": []},
            "model": get("device/model"),
            "partitions": partitions,
            "removable": get("removable").unwrap_or_default(),
            "rotational": get("queue/rotational").unwrap_or_default(),
            "sas_address": get("device/sas_address"),
            "sas_device_handle": get("device/sas_device_handle"),
            "scheduler_mode": scheduler,
            "sectors": sectors,
            "sectorsize": sectorsize,
            "size": human(sectors as f64 * unit),
            "virtual": 1,
        });
        if let Some(d) = get("queue/discard_granularity") {
            dev.insert("support_discard".into(), json!(d));
        }
        dev.insert("vendor".into(), json!(get("device/vendor")));
        out.insert(name, Value::Object(dev));
    }
    facts.insert("devices".into(), Value::Object(out));
    facts.insert(
        "device_links".into(),
        json!({"ids": {}, "uuids": {}, "labels": {}, "masters": {}}),
    );
}

/// The names in a sysfs device's `holders` directory.
fn holders(sys: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(format!("{sys}/holders"))
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpuinfo_gives_ansibles_counts() {
        let info = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC\nphysical id\t: 0\nsiblings\t: 2\ncore id\t: 0\ncpu cores\t: 2\nflags\t: fpu vme\n\nprocessor\t: 1\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC\nphysical id\t: 0\nsiblings\t: 2\ncore id\t: 1\ncpu cores\t: 2\nflags\t: fpu vme\n";
        let mut f = Map::new();
        cpu(&mut f, info, "x86_64");
        assert_eq!(
            f["processor"],
            json!([
                "0",
                "AuthenticAMD",
                "AMD EPYC",
                "1",
                "AuthenticAMD",
                "AMD EPYC"
            ])
        );
        assert_eq!(
            (
                &f["processor_count"],
                &f["processor_cores"],
                &f["processor_threads_per_core"],
                &f["processor_vcpus"],
                &f["processor_nproc"]
            ),
            (&json!(1), &json!(2), &json!(1), &json!(2), &json!(2))
        );
        assert_eq!(f["flags"], json!(["fpu", "vme"]));
    }

    #[test]
    fn meminfo_in_mib() {
        let mut f = Map::new();
        memory(
            &mut f,
            "MemTotal: 24683520 kB\nMemFree: 11935744 kB\nBuffers: 1024 kB\nCached: 2048 kB\nSwapCached: 0 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\n",
        );
        assert_eq!(f["memtotal_mb"], json!(24105));
        assert_eq!(f["memory_mb"]["real"]["used"], json!(24105 - 11656));
        assert_eq!(f["memory_mb"]["nocache"]["free"], json!(11656 + 1 + 2));
        assert_eq!(f["memory_mb"]["swap"]["used"], json!(0));
    }

    #[test]
    fn sizes_and_escapes() {
        assert_eq!(human(274_877_906_944.0), "256.00 GB");
        assert_eq!(human(0.0), "0.00 Bytes");
        assert_eq!(unescape_octal(r"/mnt/a\040b"), "/mnt/a b");
        assert_eq!(
            bind_mounts(
                "36 35 98:0 /mnt1 /mnt/bind rw - ext3 /dev/root rw\n37 35 98:0 / /data rw - ext3 /dev/sda rw"
            ),
            vec!["/mnt/bind"]
        );
    }
}
