//! The system collectors: platform, distribution, lsb, selinux, apparmor, fips,
//! pkg_mgr, service_mgr, cmdline, env, loadavg, ssh_pub_keys, user and dns.

use crate::util::{basename, present, read, read_raw};
use sandball_guest_sdk::host;
use sandball_guest_sdk::prelude::*;
use std::collections::BTreeMap;

/// `platform`: system, kernel, machine, architecture, host names, machine id.
pub fn platform(facts: &mut Map<String, Value>) {
    let u = host::uname();
    // The module runs as WebAssembly: the node's userspace is taken to be the
    // machine's native width.
    let bits = match u.machine.as_str() {
        "i386" | "i486" | "i586" | "i686" | "armv7l" | "armv6l" => "32",
        _ => "64",
    };
    let fqdn = host::fqdn().unwrap_or_else(|_| u.nodename.clone());
    let domain = fqdn.split('.').skip(1).collect::<Vec<_>>().join(".");
    facts.insert("system".into(), json!(u.sysname));
    facts.insert("kernel".into(), json!(u.release));
    facts.insert("kernel_version".into(), json!(u.version));
    facts.insert("machine".into(), json!(u.machine));
    facts.insert("fqdn".into(), json!(fqdn));
    facts.insert(
        "hostname".into(),
        json!(u.nodename.split('.').next().unwrap_or_default()),
    );
    facts.insert("nodename".into(), json!(u.nodename));
    facts.insert("domain".into(), json!(domain));
    facts.insert("userspace_bits".into(), json!(bits));
    let arch = if u.machine == "x86_64" && bits == "32" {
        "i386".to_string()
    } else {
        u.machine.clone()
    };
    facts.insert("architecture".into(), json!(arch));
    if u.machine == "x86_64" {
        facts.insert("userspace_architecture".into(), json!(arch));
    }
    if let Some(id) = read("/etc/machine-id").filter(|s| !s.is_empty()) {
        facts.insert("machine_id".into(), json!(id));
    }
}

/// `KEY=value` lines of os-release style files, quotes removed.
fn key_values(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| l.trim().split_once('='))
        .map(|(k, v)| {
            let v = v.trim();
            let v = v
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .or_else(|| v.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
                .unwrap_or(v);
            (k.trim().to_string(), v.replace("\\\"", "\""))
        })
        .collect()
}

/// The node's os-release fields.
fn os_release() -> BTreeMap<String, String> {
    let text = read("/etc/os-release")
        .or_else(|| read("/usr/lib/os-release"))
        .unwrap_or_default();
    key_values(&text)
}

/// Python's `str.capitalize`.
fn capitalize(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => first
            .to_uppercase()
            .chain(chars.flat_map(char::to_lowercase))
            .collect(),
        None => String::new(),
    }
}

/// The os_family of a distribution name, as ansible-core maps them.
fn os_family(distribution: &str) -> String {
    const FAMILIES: &[(&str, &[&str])] = &[
        (
            "RedHat",
            &[
                "RedHat",
                "RHEL",
                "Fedora",
                "CentOS",
                "Scientific",
                "SLC",
                "Ascendos",
                "CloudLinux",
                "PSBM",
                "OracleLinux",
                "OVS",
                "OEL",
                "Amazon",
                "Amzn",
                "Virtuozzo",
                "XenServer",
                "Alibaba",
                "EulerOS",
                "openEuler",
                "AlmaLinux",
                "Rocky",
                "TencentOS",
                "EuroLinux",
                "Kylin Linux Advanced Server",
                "MIRACLE",
            ],
        ),
        (
            "Debian",
            &[
                "Debian",
                "Ubuntu",
                "Raspbian",
                "Neon",
                "KDE neon",
                "Linux Mint",
                "SteamOS",
                "Devuan",
                "Kali",
                "Cumulus Linux",
                "Pop!_OS",
                "Parrot",
                "Pardus GNU/Linux",
                "Uos",
                "Deepin",
                "OSMC",
                "Linux Mint Debian Edition",
            ],
        ),
        (
            "Suse",
            &[
                "SuSE",
                "SLES",
                "SLED",
                "openSUSE",
                "openSUSE Tumbleweed",
                "SLES_SAP",
                "SUSE_LINUX",
                "openSUSE Leap",
                "ALP-Dolomite",
                "SL-Micro",
                "openSUSE MicroOS",
            ],
        ),
        ("Archlinux", &["Archlinux", "Antergos", "Manjaro"]),
        ("Mandrake", &["Mandrake", "Mandriva"]),
        ("Slackware", &["Slackware"]),
        ("Altlinux", &["Altlinux"]),
        ("SMGL", &["SMGL"]),
        ("Gentoo", &["Gentoo", "Funtoo"]),
        ("Alpine", &["Alpine"]),
        ("ClearLinux", &["Clear Linux OS", "Clear Linux Mix"]),
    ];
    FAMILIES
        .iter()
        .find(|(_, names)| names.contains(&distribution))
        .map(|(family, _)| family.to_string())
        .unwrap_or_else(|| distribution.to_string())
}

/// `distribution`: name, version, major/minor version, release, os_family, and the
/// distribution file it was read from.
pub fn distribution(facts: &mut Map<String, Value>) {
    let os = os_release();
    let id = os.get("ID").cloned().unwrap_or_default();
    let mut name = match capitalize(&id).as_str() {
        "" => "OtherLinux".to_string(),
        "Amzn" => "Amazon".to_string(),
        "Rhel" => "RedHat".to_string(),
        other => other.to_string(),
    };
    let mut version = os.get("VERSION_ID").cloned().unwrap_or_default();
    if id == "debian"
        && let Some(best) = read("/etc/debian_version")
        && best.chars().next().is_some_and(|c| c.is_ascii_digit())
    {
        version = best;
    }
    if id == "centos" {
        version = version.split('.').take(2).collect::<Vec<_>>().join(".");
    }
    let release = os
        .get("VERSION_CODENAME")
        .or_else(|| os.get("UBUNTU_CODENAME"))
        .filter(|c| !c.is_empty())
        .cloned()
        .unwrap_or_else(|| "NA".to_string());
    let family = os_family(&name);
    let file = if family == "Debian" {
        Some(("/etc/os-release", "Debian"))
    } else if family == "RedHat" && read("/etc/redhat-release").is_some() {
        name = if name == "Redhat" {
            "RedHat".into()
        } else {
            name
        };
        Some(("/etc/redhat-release", "RedHat"))
    } else {
        None
    };
    let mut parts = version.split('.');
    let major = parts.next().unwrap_or_default().to_string();
    facts.insert("distribution".into(), json!(name));
    facts.insert("distribution_version".into(), json!(version));
    facts.insert("distribution_release".into(), json!(release));
    facts.insert("distribution_major_version".into(), json!(major));
    if let Some(minor) = parts.next() {
        facts.insert("distribution_minor_version".into(), json!(minor));
    }
    facts.insert("os_family".into(), json!(os_family(&name)));
    if let Some((path, variety)) = file {
        facts.insert("distribution_file_path".into(), json!(path));
        facts.insert("distribution_file_variety".into(), json!(variety));
        facts.insert("distribution_file_parsed".into(), json!(true));
    }
}

/// `lsb`: what `lsb_release -a` prints when it is installed (it reads os-release),
/// else the fields of `/etc/lsb-release`.
pub fn lsb(facts: &mut Map<String, Value>) {
    let mut lsb = Map::new();
    if present("/usr/bin/lsb_release") {
        let os = os_release();
        let get = |k: &str| os.get(k).cloned().unwrap_or_default();
        lsb.insert("id".into(), json!(capitalize(&get("ID"))));
        lsb.insert("description".into(), json!(get("PRETTY_NAME")));
        lsb.insert("release".into(), json!(get("VERSION_ID")));
        lsb.insert("codename".into(), json!(get("VERSION_CODENAME")));
    } else if let Some(text) = read("/etc/lsb-release") {
        let kv = key_values(&text);
        for (key, name) in [
            ("DISTRIB_ID", "id"),
            ("DISTRIB_RELEASE", "release"),
            ("DISTRIB_DESCRIPTION", "description"),
            ("DISTRIB_CODENAME", "codename"),
        ] {
            if let Some(v) = kv.get(key) {
                lsb.insert(name.into(), json!(v));
            }
        }
    }
    if let Some(release) = lsb.get("release").and_then(Value::as_str) {
        let major = release.split('.').next().unwrap_or_default().to_string();
        lsb.insert("major_release".into(), json!(major));
    }
    facts.insert("lsb".into(), Value::Object(lsb));
}

/// `selinux`: read from selinuxfs and `/etc/selinux/config` (no Python library is
/// needed, so `selinux_python_present` is true).
pub fn selinux(facts: &mut Map<String, Value>) {
    facts.insert("selinux_python_present".into(), json!(true));
    if !present("/sys/fs/selinux") || read("/sys/fs/selinux/enforce").is_none() {
        facts.insert("selinux".into(), json!({"status": "disabled"}));
        return;
    }
    let config = key_values(&read_raw("/etc/selinux/config"));
    let mode = match read("/sys/fs/selinux/enforce").as_deref() {
        Some("1") => "enforcing",
        _ => "permissive",
    };
    let policyvers = read("/sys/fs/selinux/policyvers")
        .and_then(|v| v.parse::<u64>().ok())
        .map(Value::from)
        .unwrap_or_else(|| json!("unknown"));
    facts.insert(
        "selinux".into(),
        json!({
            "status": "enabled",
            "policyvers": policyvers,
            "config_mode": config.get("SELINUX").cloned().unwrap_or_else(|| "unknown".into()),
            "mode": mode,
            "type": config.get("SELINUXTYPE").cloned().unwrap_or_else(|| "unknown".into()),
        }),
    );
}

/// `apparmor`: whether the AppArmor security file system is there.
pub fn apparmor(facts: &mut Map<String, Value>) {
    let status = if present("/sys/kernel/security/apparmor") {
        "enabled"
    } else {
        "disabled"
    };
    facts.insert("apparmor".into(), json!({"status": status}));
}

/// `fips`: whether the kernel runs in FIPS mode.
pub fn fips(facts: &mut Map<String, Value>) {
    let on = read("/proc/sys/crypto/fips_enabled").as_deref() == Some("1");
    facts.insert("fips".into(), json!(on));
}

/// `pkg_mgr`: the package manager, from well-known program paths and the family.
pub fn pkg_mgr(facts: &mut Map<String, Value>) {
    const MANAGERS: &[(&str, &str)] = &[
        ("/usr/bin/rpm-ostree", "atomic_container"),
        ("/usr/bin/yum", "dnf"),
        ("/usr/bin/dnf-3", "dnf"),
        ("/usr/bin/dnf5", "dnf5"),
        ("/usr/bin/apt-get", "apt"),
        ("/usr/bin/zypper", "zypper"),
        ("/usr/sbin/urpmi", "urpmi"),
        ("/usr/bin/pacman", "pacman"),
        ("/bin/opkg", "opkg"),
        ("/usr/pkg/bin/pkgin", "pkgin"),
        ("/opt/local/bin/pkgin", "pkgin"),
        ("/opt/tools/bin/pkgin", "pkgin"),
        ("/opt/local/bin/port", "macports"),
        ("/usr/local/bin/brew", "homebrew"),
        ("/opt/homebrew/bin/brew", "homebrew"),
        ("/sbin/apk", "apk"),
        ("/usr/sbin/pkg", "pkgng"),
        ("/usr/sbin/swlist", "swdepot"),
        ("/usr/bin/emerge", "portage"),
        ("/usr/sbin/pkgadd", "svr4pkg"),
        ("/usr/bin/pkg", "pkg5"),
        ("/usr/bin/xbps-install", "xbps"),
        ("/usr/local/sbin/pkg", "pkgng"),
        ("/usr/bin/swupd", "swupd"),
        ("/usr/sbin/sorcery", "sorcery"),
        ("/usr/bin/installp", "installp"),
    ];
    let family = facts
        .get("os_family")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let mut name = "unknown";
    for (path, manager) in MANAGERS {
        if family == "Altlinux" && *path == "/usr/bin/pkg" {
            continue;
        }
        if present(path) {
            name = manager;
        }
    }
    match family.as_str() {
        "RedHat" => {
            name = if present("/run/ostree-booted") {
                "atomic_container"
            } else if present("/usr/bin/dnf") || present("/usr/bin/microdnf") {
                "dnf"
            } else {
                "unknown"
            }
        }
        "Debian" => name = "apt",
        "Altlinux" if name == "apt" => name = "apt_rpm",
        _ => {}
    }
    // apt on an rpm-based system is apt-rpm; telling needs `rpm -q`, which the module
    // does not run: apt is reported.
    facts.insert("pkg_mgr".into(), json!(name));
}

/// `service_mgr`: pid 1's name, or what the init system's markers say.
pub fn service_mgr(facts: &mut Map<String, Value>) {
    let mut proc_1 = host::table("init/comm").ok();
    if proc_1.is_none() && present("/sbin/init") {
        proc_1 = host::readlink("/sbin/init").ok();
    }
    let proc_1 = proc_1
        .map(|p| basename(&p).trim().to_string())
        .filter(|p| p != "init" && !p.ends_with("sh"));
    let systemctl = present("/usr/bin/systemctl") || present("/bin/systemctl");
    let name = match proc_1.as_deref() {
        Some("procd") => "openwrt_init".to_string(),
        Some("runit-init") => "runit".to_string(),
        Some("svscan") => "svc".to_string(),
        Some("openrc-init") => "openrc".to_string(),
        Some(other) => other.to_string(),
        None if systemctl
            && ["/run/systemd/system", "/dev/.run/systemd", "/dev/.systemd"]
                .iter()
                .any(|p| present(p)) =>
        {
            "systemd".to_string()
        }
        None if present("/sbin/initctl") && present("/etc/init") => "upstart".to_string(),
        None if present("/sbin/openrc") => "openrc".to_string(),
        None if systemctl
            && host::readlink("/sbin/init").is_ok_and(|t| basename(&t) == "systemd") =>
        {
            "systemd".to_string()
        }
        None if present("/etc/init.d") => "sysvinit".to_string(),
        None if present("/etc/dinit.d") => "dinit".to_string(),
        None => "service".to_string(),
    };
    facts.insert("service_mgr".into(), json!(name));
}

/// Python's `shlex.split(data, posix=False)`: words split on whitespace, quoted
/// parts kept whole with their quotes.
fn split_non_posix(data: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    for c in data.chars() {
        match quote {
            Some(q) => {
                word.push(c);
                if c == q {
                    quote = None;
                }
            }
            None if c.is_whitespace() => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            None => {
                if c == '"' || c == '\'' {
                    quote = Some(c);
                }
                word.push(c);
            }
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// `cmdline` (last value of a repeated key wins) and `proc_cmdline` (repeated keys
/// become lists).
pub fn cmdline(facts: &mut Map<String, Value>) {
    let data = read("/proc/cmdline").unwrap_or_default();
    if data.is_empty() {
        return;
    }
    let mut flat = Map::new();
    let mut lists = Map::new();
    for piece in split_non_posix(&data) {
        match piece.split_once('=') {
            None => {
                flat.insert(piece.clone(), json!(true));
                lists.insert(piece, json!(true));
            }
            Some((k, v)) => {
                flat.insert(k.to_string(), json!(v));
                match lists.get_mut(k) {
                    Some(Value::Array(items)) => items.push(json!(v)),
                    Some(old) => *old = json!([old.clone(), v]),
                    None => {
                        lists.insert(k.to_string(), json!(v));
                    }
                }
            }
        }
    }
    facts.insert("cmdline".into(), Value::Object(flat));
    facts.insert("proc_cmdline".into(), Value::Object(lists));
}

/// `env`: the environment the module sees, which is only the variables its grant
/// passes through (not the whole environment, as with ansible-core), and the task's
/// `environment`.
pub fn env(facts: &mut Map<String, Value>) {
    facts.insert("env".into(), json!(host::environment()));
}

/// `loadavg`: the 1, 5 and 15 minute load averages.
pub fn loadavg(facts: &mut Map<String, Value>) {
    let text = read("/proc/loadavg").unwrap_or_default();
    let v: Vec<f64> = text
        .split_whitespace()
        .take(3)
        .filter_map(|s| s.parse().ok())
        .collect();
    if let [one, five, fifteen] = v[..] {
        facts.insert(
            "loadavg".into(),
            json!({"1m": one, "5m": five, "15m": fifteen}),
        );
    }
}

/// `ssh_pub_keys`: the host's public keys, from the first of `/etc/ssh`,
/// `/etc/openssh` and `/etc` that holds any.
pub fn ssh_pub_keys(facts: &mut Map<String, Value>) {
    for dir in ["/etc/ssh", "/etc/openssh", "/etc"] {
        let mut found = false;
        for algo in ["dsa", "rsa", "ecdsa", "ed25519"] {
            let Some(text) = read(&format!("{dir}/ssh_host_{algo}_key.pub")) else {
                continue;
            };
            let mut fields = text.split_whitespace();
            let (Some(keytype), Some(key)) = (fields.next(), fields.next()) else {
                continue;
            };
            found = true;
            facts.insert(format!("ssh_host_key_{algo}_public"), json!(key));
            facts.insert(
                format!("ssh_host_key_{algo}_public_keytype"),
                json!(keytype),
            );
        }
        if found {
            return;
        }
    }
}

/// `user`: who the module runs as (the user name from `LOGNAME`, `USER`, `LNAME` or
/// `USERNAME` when granted, as Python's getpass.getuser(), else the password
/// database), and that user's entry.
pub fn user(facts: &mut Map<String, Value>) {
    let ids = host::identity();
    let from_env = ["LOGNAME", "USER", "LNAME", "USERNAME"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|s| !s.is_empty()));
    let by_uid = host::user_entry(ids.uid);
    let user_id = from_env
        .clone()
        .or_else(|| by_uid.as_ref().map(|p| p.name.clone()))
        .unwrap_or_default();
    let entry = from_env
        .and_then(|name| host::user_id(&name))
        .and_then(host::user_entry)
        .or(by_uid);
    facts.insert("user_id".into(), json!(user_id));
    if let Some(p) = entry {
        facts.insert("user_uid".into(), json!(p.uid));
        facts.insert("user_gid".into(), json!(p.gid));
        facts.insert("user_gecos".into(), json!(p.gecos));
        facts.insert("user_dir".into(), json!(p.dir));
        facts.insert("user_shell".into(), json!(p.shell));
    }
    facts.insert("real_user_id".into(), json!(ids.uid));
    facts.insert("effective_user_id".into(), json!(ids.euid));
    facts.insert("real_group_id".into(), json!(ids.gid));
    // ansible-core reports the real group id here too.
    facts.insert("effective_group_id".into(), json!(ids.gid));
}

/// `dns`: nameservers, domain, search, sortlist and options of resolv.conf.
pub fn dns(facts: &mut Map<String, Value>) {
    let mut dns = Map::new();
    for line in read_raw("/etc/resolv.conf").lines() {
        if line.starts_with('#') || line.starts_with(';') || line.trim().is_empty() {
            continue;
        }
        let tokens: Vec<&str> = line.split_whitespace().collect();
        let rest = || json!(tokens[1..]);
        match tokens[0] {
            "nameserver" => {
                let list = dns.entry("nameservers").or_insert_with(|| json!([]));
                if let Value::Array(items) = list {
                    items.extend(tokens[1..].iter().map(|t| json!(t)));
                }
            }
            "domain" if tokens.len() > 1 => {
                dns.insert("domain".into(), json!(tokens[1]));
            }
            "search" => {
                dns.insert("search".into(), rest());
            }
            "sortlist" => {
                dns.insert("sortlist".into(), rest());
            }
            "options" => {
                let mut options = Map::new();
                for option in &tokens[1..] {
                    match option.split_once(':') {
                        Some((k, v)) if !v.is_empty() => options.insert(k.into(), json!(v)),
                        Some((k, _)) => options.insert(k.into(), json!(true)),
                        None => options.insert(option.to_string(), json!(true)),
                    };
                }
                dns.insert("options".into(), Value::Object(options));
            }
            _ => {}
        }
    }
    facts.insert("dns".into(), Value::Object(dns));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn os_release_values_lose_their_quotes() {
        let kv = key_values("NAME=\"Debian GNU/Linux\"\nVERSION_ID='12'\nID=debian\n# c\n");
        assert_eq!(kv["NAME"], "Debian GNU/Linux");
        assert_eq!(kv["VERSION_ID"], "12");
        assert_eq!(kv["ID"], "debian");
        assert_eq!(capitalize("debian"), "Debian");
        assert_eq!(capitalize("openSUSE"), "Opensuse");
        assert_eq!(os_family("Ubuntu"), "Debian");
        assert_eq!(os_family("Nothing"), "Nothing");
    }

    #[test]
    fn kernel_command_lines_split_as_python_does() {
        assert_eq!(
            split_non_posix("ro quiet root=\"a b\" x=1"),
            vec!["ro", "quiet", "root=\"a b\"", "x=1"]
        );
    }

    #[test]
    fn the_facts_of_this_node_are_consistent() {
        let mut facts = Map::new();
        platform(&mut facts);
        distribution(&mut facts);
        user(&mut facts);
        assert_eq!(facts["system"], json!("Linux"));
        assert_eq!(facts["machine"], json!(std::env::consts::ARCH));
        assert!(facts["hostname"].as_str().is_some_and(|h| !h.contains('.')));
        assert_eq!(facts["user_uid"], json!(host::identity().uid), "{facts:?}");
        assert!(facts.contains_key("os_family"));
    }
}
