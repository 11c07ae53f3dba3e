//! The `systemd_service` module (also `systemd`): starts, stops, restarts, reloads,
//! enables, disables, masks and unmasks a systemd unit through `systemctl` (a granted
//! program), as ansible-core 2.19's module does: the same checks in the same order,
//! the same results (`name`, `status` from `systemctl show`, `enabled`, `state`),
//! check mode and messages. The module reads `/etc/init.d` and `/etc/rc?.d` for
//! SysV scripts. `scope: user` is refused: systemctl would need `XDG_RUNTIME_DIR`,
//! which no grant can pass to a program.

#[cfg(all(test, unix))]
mod module_tests;
mod show;

use sandball_guest_sdk::prelude::*;
use sandball_guest_sdk::program::{Ran, run_checked, run_command};
use show::parse_systemctl_show;
use std::path::Path;

#[cfg(test)]
sandball_guest_sdk::manifest!("../manifest.json");

/// What `systemctl is-enabled` may print for a unit systemd knows (systemctl(1)).
const KNOWN_STATES: &[&str] = &[
    "enabled",
    "enabled-runtime",
    "linked",
    "linked-runtime",
    "masked",
    "masked-runtime",
    "static",
    "indirect",
    "disabled",
    "generated",
    "transient",
];

/// The module's body.
pub fn systemd_service(m: &mut Module) -> Result<Map<String, Value>, Fail> {
    let unit = m.get_str("name").map(str::to_string);
    if let Some(unit) = &unit
        && let Some(glob) = ["*", "?", "["].iter().find(|g| unit.contains(**g))
    {
        return Err(Fail::new(format!(
            "This module does not currently support using glob patterns, found '{glob}' in service name: {unit}"
        )));
    }
    let scope = m.get_str("scope").unwrap_or("system").to_string();
    if scope == "user" {
        return Err(Fail::not_carried_out(
            "The systemd_service module does not support scope=user in sandball yet: systemctl --user needs XDG_RUNTIME_DIR, which no grant can pass to a program.",
        ));
    }
    let mut systemctl = vec!["systemctl".to_string()];
    if scope != "system" {
        systemctl.push(format!("--{scope}"));
    }
    if m.get_bool("no_block") {
        systemctl.push("--no-block".into());
    }
    if m.get_bool("force") {
        systemctl.push("--force".into());
    }
    let ctl = Systemctl { base: systemctl };
    let check = m.check_mode();
    let offline = is_chroot() || std::env::var("SYSTEMD_OFFLINE").is_ok_and(|v| v == "1");

    let mut result = Map::new();
    result.insert("name".into(), json!(unit));
    result.insert("changed".into(), json!(false));
    result.insert("status".into(), json!({}));

    for (option, verb) in [
        ("daemon_reload", "daemon-reload"),
        ("daemon_reexec", "daemon-reexec"),
    ] {
        if m.get_bool(option) && !check {
            let ran = ctl.run(&[verb])?;
            if ran.rc != 0 {
                if offline {
                    m.warn(format!(
                        "{verb} failed, but target is a chroot or systemd is offline. Continuing. Error was: {} / {}",
                        ran.rc, ran.stderr
                    ));
                } else {
                    return Err(Fail::new(format!(
                        "failure {} during {verb}: {}",
                        ran.rc, ran.stderr
                    )));
                }
            }
        }
    }

    let Some(unit) = unit else {
        return Ok(result);
    };
    let unit = unit.as_str();
    let is_initd = sysv_exists(unit);
    let mut is_systemd = false;
    let mut status = Map::new();
    let shown = ctl.run(&["show", unit])?;
    if shown.rc == 0 && !(request_was_ignored(&shown.stdout) || request_was_ignored(&shown.stderr))
    {
        if !shown.stdout.is_empty() {
            status = parse_systemctl_show(&shown.stdout);
            let load_state = status.get("LoadState").and_then(Value::as_str);
            is_systemd = load_state.is_some_and(|s| s != "not-found");
            let is_masked = load_state == Some("masked");
            if is_systemd
                && !is_masked
                && let Some(error) = status.get("LoadError").and_then(Value::as_str)
            {
                return Err(Fail::new(format!(
                    "Error loading unit file '{unit}': {error}"
                )));
            }
        }
    } else if shown.rc == 1 && shown.stderr.contains("Failed to parse bus message") {
        // Older systemd cannot show some units over the bus: ask otherwise.
        status = parse_systemctl_show(&shown.stdout);
        let (base, sep, _) = match unit.split_once('@') {
            Some((base, rest)) => (base, "@", rest),
            None => (unit, "", ""),
        };
        let search = format!("{base}{sep}");
        let listed = ctl.run(&["list-unit-files", &format!("{search}*")])?;
        is_systemd = listed.stdout.contains(&search);
        let active = ctl.run(&["is-active", unit])?;
        status.insert(
            "ActiveState".into(),
            json!(active.stdout.trim_end_matches('\n')),
        );
    } else {
        let state = ctl.run(&["is-enabled", unit])?;
        // Known to is-enabled, else (a chroot) to list-unit-files.
        is_systemd = KNOWN_STATES.contains(&state.stdout.trim())
            || ctl.run(&["list-unit-files", unit])?.rc == 0;
        if !is_systemd {
            // Is systemctl usable at all? Fails with its own words when not.
            run_checked(&ctl.base, None, &[])?;
        }
    }
    result.insert("status".into(), Value::Object(status.clone()));

    let found = is_systemd || is_initd;
    if is_initd && !is_systemd {
        m.warn(format!(
            "The service ({unit}) is actually an init script but the system is managed by systemd"
        ));
    }
    let missing = || Fail::new(format!("Could not find the requested service {unit}: host"));

    if let Some(want) = m.get("masked").and_then(Value::as_bool) {
        let masked = ctl.run(&["is-enabled", unit])?.stdout.trim() == "masked";
        if masked != want {
            result.insert("changed".into(), json!(true));
            let action = if want { "mask" } else { "unmask" };
            if !check {
                let ran = ctl.run(&[action, unit])?;
                if ran.rc != 0 {
                    if !found {
                        return Err(missing());
                    }
                    return Err(Fail::new(format!(
                        "Failed to {action} the service ({unit}): {}",
                        ran.stderr.trim()
                    )));
                }
            }
        }
    }

    if let Some(want) = m.get("enabled").and_then(Value::as_bool) {
        let action = if want { "enable" } else { "disable" };
        if !found {
            return Err(missing());
        }
        let state = ctl.run(&["is-enabled", unit, "-l"])?;
        let enabled = match state.rc {
            0 => !["enabled-runtime", "indirect", "alias"].contains(&state.stdout.trim_end()),
            1 => {
                scope == "system"
                    && is_initd
                    && !state.stdout.trim().ends_with("disabled")
                    && sysv_is_enabled(unit)
            }
            _ => false,
        };
        result.insert("enabled".into(), json!(enabled));
        if enabled != want {
            result.insert("changed".into(), json!(true));
            if !check {
                let ran = ctl.run(&[action, unit])?;
                if ran.rc != 0 {
                    return Err(Fail::new(format!(
                        "Unable to {action} service {unit}: {}{}",
                        ran.stdout, ran.stderr
                    )));
                }
            }
            result.insert("enabled".into(), json!(!enabled));
        }
    }

    if let Some(want) = m.get_str("state").map(str::to_string) {
        if !found {
            return Err(missing());
        }
        result.insert("state".into(), json!(want));
        if let Some(active) = status.get("ActiveState").and_then(Value::as_str) {
            let running = matches!(active, "active" | "activating");
            let action = match want.as_str() {
                "started" => (!running).then_some("start"),
                "stopped" => (running || active == "deactivating").then_some("stop"),
                _ => {
                    result.insert("state".into(), json!("started"));
                    Some(match (running, want.as_str()) {
                        (false, _) => "start",
                        (true, "reloaded") => "reload",
                        (true, _) => "restart",
                    })
                }
            };
            if let Some(action) = action {
                result.insert("changed".into(), json!(true));
                if !check {
                    let ran = ctl.run(&[action, unit])?;
                    if ran.rc != 0 {
                        return Err(Fail::new(format!(
                            "Unable to {action} service {unit}: {}",
                            ran.stderr
                        )));
                    }
                }
            }
        } else if offline {
            m.warn("Target is a chroot or systemd is offline. This can lead to false positives or prevent the init system tools from working.");
        } else {
            return Err(
                Fail::new("Service is in unknown state").with("status", Value::Object(status))
            );
        }
    }
    Ok(result)
}

/// `systemctl` with the task's options.
struct Systemctl {
    base: Vec<String>,
}

impl Systemctl {
    fn run(&self, words: &[&str]) -> Result<Ran, Fail> {
        let mut argv = self.base.clone();
        argv.extend(words.iter().map(|w| w.to_string()));
        run_command(&argv, None, &[])
    }
}

/// Whether systemctl said it ignored the request (it does so in some containers).
fn request_was_ignored(out: &str) -> bool {
    !out.contains('=') && (out.contains("ignoring request") || out.contains("ignoring command"))
}

/// Whether the node says it is a chroot: only `debian_chroot` can tell here (the
/// root of process 1 is outside any grant), so a chroot without it reads as none.
fn is_chroot() -> bool {
    std::env::var("debian_chroot").is_ok_and(|v| !v.is_empty())
}

/// Whether a SysV init script of that name (or path) exists.
fn sysv_exists(name: &str) -> bool {
    let script = if name.starts_with('/') {
        name.to_string()
    } else {
        format!("/etc/init.d/{name}")
    };
    Path::new(&script).exists()
}

/// Whether a SysV start link (`S??NAME`) exists in a runlevel directory.
fn sysv_is_enabled(name: &str) -> bool {
    let root = if Path::new("/etc/rc0.d").is_dir() {
        "/etc"
    } else {
        "/etc/init.d"
    };
    "0123456S".chars().any(|level| {
        std::fs::read_dir(format!("{root}/rc{level}.d"))
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .any(|entry| {
                let file = entry.file_name();
                let file = file.to_string_lossy();
                file.len() == 3 + name.len()
                    && file.starts_with('S')
                    && file.is_char_boundary(3)
                    && file[3..] == *name
            })
    })
}
