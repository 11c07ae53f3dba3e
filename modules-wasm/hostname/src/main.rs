//! The `hostname` module (Linux): sets the node's current and permanent host name
//! with the strategy Ansible's hostname module would use — `hostnamectl` under
//! systemd, else the host name file of the distribution (`/etc/hostname` on Debian
//! and Ubuntu, with `hostname -F` on Alpine, `/etc/HOSTNAME` on SLES) — and returns
//! the host name facts, with a diff when it changes. The files are read with `cat`
//! and rewritten in place with `tee` (as Ansible rewrites them, so a file a container
//! mounts there works): granted for those files only, which keeps the rest of `/etc`
//! out of the module's reach. The other strategies are refused by name.

#[cfg(test)]
mod module_tests;

use sandball_guest_sdk::host::HostError;
use sandball_guest_sdk::prelude::*;
use sandball_guest_sdk::program::run_command;

sandball_guest_sdk::manifest!("../manifest.json");

const HOSTNAMECTL: &str = "/usr/bin/hostnamectl";
const CAT: &str = "/usr/bin/cat";
const TEE: &str = "/usr/bin/tee";
const HOSTNAME: &str = "/usr/bin/hostname";

fn main() {
    sandball_guest_sdk::run(MANIFEST, hostname);
}

/// How the host name is read and set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Strategy {
    /// hostnamectl, transient and static names.
    Systemd,
    /// A file holding the name; with `hostname -F` for the current name (Alpine).
    File { path: &'static str, alpine: bool },
}

impl Strategy {
    /// The strategy `use` names, or the one found on the node.
    fn choose(use_: Option<&str>) -> Result<Strategy, Fail> {
        let debian = Strategy::File {
            path: "/etc/hostname",
            alpine: false,
        };
        match use_ {
            // As in Ansible, `debian` names the systemd strategy.
            Some("systemd" | "debian") => Ok(Strategy::Systemd),
            Some("alpine") => Ok(Strategy::File {
                path: "/etc/hostname",
                alpine: true,
            }),
            Some("sles") => Ok(Strategy::File {
                path: "/etc/HOSTNAME",
                alpine: false,
            }),
            Some(other) => Err(Fail::not_carried_out(format!(
                "use: {other} is not supported by sandball's hostname module (it supports systemd, debian, alpine and sles)"
            ))),
            None if systemd_runs()? => Ok(Strategy::Systemd),
            None => match distribution()?.as_str() {
                "debian" | "ubuntu" | "linuxmint" | "devuan" | "kali" | "raspbian" => Ok(debian),
                "alpine" => Strategy::choose(Some("alpine")),
                "sles" | "sled" | "opensuse-leap" => Strategy::choose(Some("sles")),
                other => Err(Fail::not_carried_out(format!(
                    "sandball's hostname module cannot tell the strategy for this node (distribution {other:?}, not run by systemd): set use"
                ))),
            },
        }
    }

    fn current(self) -> Result<String, Fail> {
        match self {
            Strategy::Systemd => hostnamectl(&["--transient", "status"]),
            Strategy::File { .. } => self.permanent(),
        }
    }

    fn permanent(self) -> Result<String, Fail> {
        match self {
            Strategy::Systemd => hostnamectl(&["--static", "status"]),
            Strategy::File { path, .. } => {
                let ran = run_command(&[CAT.to_string(), path.to_string()], None, &[])?;
                match ran.rc {
                    0 => Ok(ran.stdout.trim().to_string()),
                    _ if ran.stderr.contains("No such file") => Ok(String::new()),
                    _ => Err(Fail::new(format!(
                        "failed to read hostname: {}",
                        ran.stderr.trim_end()
                    ))),
                }
            }
        }
    }

    fn set_current(self, name: &str) -> Result<(), Fail> {
        match self {
            Strategy::Systemd => {
                too_long(name)?;
                hostnamectl(&["--transient", "set-hostname", name]).map(drop)
            }
            Strategy::File { path, alpine: true } => checked(&[HOSTNAME, "-F", path]).map(drop),
            Strategy::File { .. } => Ok(()),
        }
    }

    fn set_permanent(self, name: &str) -> Result<(), Fail> {
        match self {
            Strategy::Systemd => {
                too_long(name)?;
                hostnamectl(&["--pretty", "--static", "set-hostname", name]).map(drop)
            }
            Strategy::File { path, .. } => write_through_tee(path, name)
                .map_err(|e| Fail::new(format!("failed to update hostname: {}", e.msg()))),
        }
    }
}

/// Writes `name` and a newline into `path`, in place, with `tee`.
fn write_through_tee(path: &str, name: &str) -> Result<(), Fail> {
    let out = host::run(host::Command {
        argv: vec![TEE.to_string(), path.to_string()],
        stdin: Some(format!("{name}\n").into_bytes()),
        ..host::Command::default()
    })
    .map_err(|e: HostError| Fail::new(e.message))?;
    if out.rc != 0 {
        return Err(Fail::new(
            String::from_utf8_lossy(&out.stderr).trim_end().to_string(),
        ));
    }
    Ok(())
}

/// systemd refuses names over 64 characters; Ansible says so first.
fn too_long(name: &str) -> Result<(), Fail> {
    if name.chars().count() > 64 {
        return Err(Fail::new(
            "name cannot be longer than 64 characters on systemd servers, try a shorter name",
        ));
    }
    Ok(())
}

/// Runs a program; a non-zero exit fails as Ansible's strategies report it.
fn checked(argv: &[&str]) -> Result<String, Fail> {
    let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
    let ran = run_command(&argv, None, &[])?;
    if ran.rc != 0 {
        return Err(Fail::new(format!(
            "Command failed rc={}, out={}, err={}",
            ran.rc, ran.stdout, ran.stderr
        )));
    }
    Ok(ran.stdout.trim().to_string())
}

fn hostnamectl(args: &[&str]) -> Result<String, Fail> {
    let mut argv = vec![HOSTNAMECTL];
    argv.extend(args);
    checked(&argv)
}

/// Whether systemd runs the node (its program is there, and one of its run markers).
fn systemd_runs() -> Result<bool, Fail> {
    let any = |paths: &[&str]| -> Result<bool, Fail> {
        for p in paths {
            if host::present(p)? {
                return Ok(true);
            }
        }
        Ok(false)
    };
    Ok(any(&["/usr/bin/systemctl", "/bin/systemctl"])?
        && any(&["/run/systemd/system", "/dev/.run/systemd", "/dev/.systemd"])?)
}

/// The `ID` of `/etc/os-release` (empty when there is none).
fn distribution() -> Result<String, Fail> {
    let ran = run_command(&[CAT.to_string(), "/etc/os-release".to_string()], None, &[])?;
    Ok(ran
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("ID="))
        .map(|id| id.trim().trim_matches('"').to_lowercase())
        .unwrap_or_default())
}

/// The module body.
fn hostname(m: &mut Module) -> Result<Map<String, Value>, Fail> {
    let name = m.get_str("name").unwrap_or_default().to_string();
    let strategy = Strategy::choose(m.get_str("use"))?;
    let current = strategy.current()?;
    let permanent = strategy.permanent()?;
    let mut changed = false;
    // systemd: the permanent name first (NetworkManager complains otherwise).
    let steps: [bool; 2] = match strategy {
        Strategy::Systemd => [false, true],
        Strategy::File { .. } => [true, false],
    };
    for is_current in steps {
        let now = if is_current {
            strategy.current()?
        } else {
            strategy.permanent()?
        };
        if now != name {
            if !m.check_mode() {
                if is_current {
                    strategy.set_current(&name)?;
                } else {
                    strategy.set_permanent(&name)?;
                }
            }
            changed = true;
        }
    }
    let before = if name != current { current } else { permanent };
    let fqdn = host::fqdn()?;
    let domain = fqdn.split('.').skip(1).collect::<Vec<_>>().join(".");
    let mut result = json_map!({
        "changed": changed,
        "name": name,
        "ansible_facts": {
            "ansible_hostname": name.split('.').next().unwrap_or_default(),
            "ansible_nodename": name,
            "ansible_fqdn": fqdn,
            "ansible_domain": domain,
        },
    });
    if changed {
        result.insert(
            "diff".into(),
            json!({"after": format!("hostname = {name}\n"), "before": format!("hostname = {before}\n")}),
        );
    }
    Ok(result)
}
