//! The process groups a serving shim has started and not yet seen end: the programs
//! modules run through the host interface, and the Python fork servers of legacy
//! modules (with the module processes they fork). When the controller goes away
//! mid-run (Ctrl-C, SIGTERM, a killed controller, a cut connection), the watchdog ends
//! every one of them before the shim exits, so that nothing a session started
//! outlives it. Background jobs (`async`) are not here: they are meant to outlive
//! their session.

use std::sync::Mutex;

static GROUPS: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// A recorded process group, forgotten when this is dropped: keep it while the group's
/// leader (a child started with `process_group(0)`, whose pid is the group's id) may
/// be running, and drop it once the leader is reaped (its id may then be reused).
#[derive(Debug)]
pub struct Recorded(i32);

impl Recorded {
    /// Records the group whose id is `pgid`.
    pub fn new(pgid: u32) -> Recorded {
        let pgid = i32::try_from(pgid).unwrap_or(0);
        if pgid > 0 {
            GROUPS.lock().unwrap_or_else(|e| e.into_inner()).push(pgid);
        }
        Recorded(pgid)
    }
}

impl Drop for Recorded {
    fn drop(&mut self) {
        let mut groups = GROUPS.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = groups.iter().position(|g| *g == self.0) {
            groups.swap_remove(i);
        }
    }
}

/// Kills every recorded group (SIGKILL: nothing in them is waited for).
pub fn kill_all() {
    let groups = GROUPS.lock().unwrap_or_else(|e| e.into_inner());
    for pgid in groups.iter() {
        if let Some(pid) = rustix::process::Pid::from_raw(*pgid) {
            // A group that has ended already is nothing to kill.
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    #[test]
    fn every_recorded_group_is_killed_with_what_it_started() {
        // A shell that starts a grandchild in its group, as `sh -c 'sleep 60 & wait'`.
        let mut child = std::process::Command::new("/bin/sh")
            .args(["-c", "sleep 60 & wait"])
            .process_group(0)
            .spawn()
            .expect("sh starts");
        let recorded = Recorded::new(child.id());
        std::thread::sleep(std::time::Duration::from_millis(200));
        let pgid = child.id() as i32;
        kill_all();
        let status = child.wait().expect("sh is reaped");
        assert!(!status.success());
        drop(recorded);
        // Nothing of the group is left running: its grandchild was killed too (a
        // zombie waiting for its reaper is not running).
        std::thread::sleep(std::time::Duration::from_millis(100));
        assert_eq!(running_in_group(pgid), Vec::<String>::new());
        assert!(
            !GROUPS
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .contains(&pgid)
        );
    }

    /// The processes of group `pgid` that are not zombies, from `/proc/*/stat`.
    fn running_in_group(pgid: i32) -> Vec<String> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                continue;
            };
            // pid (comm) state ppid pgrp …: comm may hold spaces, the fields after
            // its closing parenthesis do not.
            let Some((_, rest)) = stat.rsplit_once(')') else {
                continue;
            };
            let fields: Vec<&str> = rest.split_whitespace().collect();
            if fields.get(2) == Some(&pgid.to_string().as_str()) && fields.first() != Some(&"Z") {
                out.push(stat);
            }
        }
        out
    }
}
