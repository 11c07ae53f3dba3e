//! The `group` module (Linux): makes sure a group exists, with the gid asked for, or
//! does not, through the node's `groupadd`, `groupmod` and `groupdel`, with the
//! results, check mode and messages of Ansible's group module. It reads the group
//! with `getent group NAME`, and may run those three programs only with the task's
//! group name as their last argument (`groupmod` only to set the task's gid).
//! `local` (libuser's lgroupadd) is refused.

#[cfg(test)]
mod module_tests;

use sandball_guest_sdk::accounts;
use sandball_guest_sdk::prelude::*;
use sandball_guest_sdk::program::{Ran, run_command};

sandball_guest_sdk::manifest!("../manifest.json");

const GROUPADD: &str = "/usr/sbin/groupadd";
const GROUPMOD: &str = "/usr/sbin/groupmod";
const GROUPDEL: &str = "/usr/sbin/groupdel";

fn main() {
    sandball_guest_sdk::run(MANIFEST, group);
}

/// The gid of an existing group, looked up through the node's name services.
fn existing_gid(name: &str) -> Result<Option<u32>, Fail> {
    Ok(accounts::group(name)?.map(|g| g.gid))
}

/// `groupadd`'s arguments for the task: gid (and `-o`), `-r`, the id range, the name.
fn add_args(m: &Module, name: &str) -> Vec<String> {
    let mut argv = vec![GROUPADD.to_string()];
    if let Some(gid) = m.get_int("gid") {
        argv.extend(["-g".to_string(), gid.to_string()]);
        if m.get_bool("non_unique") {
            argv.push("-o".into());
        }
    }
    if m.get_bool("system") {
        argv.push("-r".into());
    }
    for (option, key) in [("gid_min", "GID_MIN"), ("gid_max", "GID_MAX")] {
        if let Some(n) = m.get_int(option) {
            argv.extend(["-K".to_string(), format!("{key}={n}")]);
        }
    }
    argv.push(name.to_string());
    argv
}

/// The module body.
fn group(m: &mut Module) -> Result<Map<String, Value>, Fail> {
    let name = m.get_str("name").unwrap_or_default().to_string();
    let state = m.get_str("state").unwrap_or("present").to_string();
    if m.get_bool("local") {
        if m.get_bool("force") {
            return Err(Fail::new(
                "force is not a valid option for local, force=True and local=True are mutually exclusive",
            ));
        }
        for option in ["gid_min", "gid_max"] {
            if m.get_int(option).is_some() {
                return Err(Fail::new(format!(
                    "'{option}' can not be used with 'local'"
                )));
            }
        }
        return Err(Fail::not_carried_out(
            "local: true is not supported by sandball's group module (it needs libuser's lgroupadd, lgroupmod and lgroupdel); manage the group without local",
        ));
    }
    let mut result = json_map!({"name": name, "state": state});
    let ran: Option<Ran> = match (state.as_str(), existing_gid(&name)?) {
        ("absent", Some(_)) => {
            if m.check_mode() {
                return Ok(json_map!({"changed": true}));
            }
            let mut argv = vec![GROUPDEL.to_string()];
            if m.get_bool("force") {
                argv.push("-f".into());
            }
            argv.push(name.clone());
            Some(run_command(&argv, None, &[])?)
        }
        ("absent", None) => None,
        (_, None) => {
            if m.check_mode() {
                return Ok(json_map!({"changed": true}));
            }
            Some(run_command(&add_args(m, &name), None, &[])?)
        }
        (_, Some(current)) => match m.get_int("gid") {
            Some(gid) if i64::from(current) != gid => {
                if m.check_mode() {
                    Some(Ran::default())
                } else {
                    let mut argv = vec![GROUPMOD.to_string(), "-g".into(), gid.to_string()];
                    if m.get_bool("non_unique") {
                        argv.push("-o".into());
                    }
                    argv.push(name.clone());
                    Some(run_command(&argv, None, &[])?)
                }
            }
            _ => None,
        },
    };
    if let Some(ran) = &ran {
        if ran.rc != 0 {
            return Err(Fail::new(ran.stderr.clone()).with("name", name));
        }
        if !ran.stdout.is_empty() {
            result.insert("stdout".into(), json!(ran.stdout));
        }
        if !ran.stderr.is_empty() {
            result.insert("stderr".into(), json!(ran.stderr));
        }
    }
    result.insert("changed".into(), json!(ran.is_some()));
    if let Some(gid) = existing_gid(&name)? {
        result.insert("system".into(), json!(m.get_bool("system")));
        result.insert("gid".into(), json!(gid));
    }
    Ok(result)
}
