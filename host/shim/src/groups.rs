//! The process groups a serving shim has started and not yet seen end: the programs
//! modules run through the host interface, and the Python fork servers of legacy
//! modules (with the module processes they fork). When the controller goes away
//! mid-run (Ctrl-C, SIGTERM, a killed controller, a cut connection), the watchdog ends
//! every one of them before the shim exits, so that nothing a session started
//! outlives it. Background jobs (`async`) are not here: they are meant to outlive
//! their session.
//!
//! A shim that is killed itself (SIGKILL, the OOM killer) runs no watchdog, so each
//! group is also told, as it is recorded and forgotten, to a guard: a process of its
//! own (`sandball-shim guard`, started with the first group) reading a pipe the shim
//! alone holds. When the shim ends, however it ends, the pipe closes and the guard
//! kills the groups still recorded, at once, then exits.

use std::io::{BufRead, Write};
use std::process::ChildStdin;
use std::sync::Mutex;

/// The recorded groups, and the pipe to the guard that mirrors them.
struct Groups {
    ids: Vec<i32>,
    guard: Guard,
}

enum Guard {
    /// No group recorded yet.
    Unstarted,
    Running(ChildStdin),
    /// It could not be started, or its pipe broke: the watchdog alone ends groups.
    Gone,
}

static GROUPS: Mutex<Groups> = Mutex::new(Groups {
    ids: Vec::new(),
    guard: Guard::Unstarted,
});

impl Groups {
    /// Tells the guard that group `pgid` was recorded (`+`) or forgotten (`-`),
    /// starting it with the first group.
    fn tell(&mut self, sign: char, pgid: i32) {
        if matches!(self.guard, Guard::Unstarted) {
            self.guard = start_guard().map_or(Guard::Gone, Guard::Running);
        }
        if let Guard::Running(pipe) = &mut self.guard
            && writeln!(pipe, "{sign}{pgid}").is_err()
        {
            self.guard = Guard::Gone;
        }
    }
}

/// Starts the guard: this very executable (`/proc/self/exe` runs it even when its file
/// was replaced since), in a process group of its own so that a signal to the shim's
/// group does not reach it, holding nothing of the session's channel.
#[cfg(not(test))]
fn start_guard() -> Option<ChildStdin> {
    use std::os::unix::process::CommandExt;
    use std::process::Stdio;
    std::process::Command::new("/proc/self/exe")
        .arg("guard")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .ok()?
        .stdin
        .take()
}

/// Unit tests run in the test harness, which is no shim: their groups have no guard.
#[cfg(test)]
fn start_guard() -> Option<ChildStdin> {
    None
}

fn lock() -> std::sync::MutexGuard<'static, Groups> {
    GROUPS.lock().unwrap_or_else(|e| e.into_inner())
}

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
            let mut groups = lock();
            groups.ids.push(pgid);
            groups.tell('+', pgid);
        }
        Recorded(pgid)
    }
}

impl Drop for Recorded {
    fn drop(&mut self) {
        let mut groups = lock();
        if let Some(i) = groups.ids.iter().position(|g| *g == self.0) {
            groups.ids.swap_remove(i);
            groups.tell('-', self.0);
        }
    }
}

/// Kills every recorded group (SIGKILL: nothing in them is waited for).
pub fn kill_all() {
    kill(&lock().ids);
}

fn kill(groups: &[i32]) {
    for pgid in groups {
        if let Some(pid) = rustix::process::Pid::from_raw(*pgid) {
            // A group that has ended already is nothing to kill.
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
    }
}

/// The guard (`sandball-shim guard`): follows the `+pgid`/`-pgid` lines a shim writes
/// to `input` and, when the input ends (the shim is gone), kills the groups it
/// recorded and did not forget. A group forgotten was reaped by the shim, so no id
/// killed here belongs to another process but in the instant between a reap and its
/// line.
pub fn guard(input: impl BufRead) {
    let mut ids: Vec<i32> = Vec::new();
    for line in input.lines() {
        let Ok(line) = line else { break };
        let (sign, id) = line.split_at(line.len().min(1));
        match (sign, id.parse::<i32>()) {
            ("+", Ok(id)) => ids.push(id),
            ("-", Ok(id)) => ids.retain(|g| *g != id),
            _ => {}
        }
    }
    kill(&ids);
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
        assert!(!lock().ids.contains(&pgid));
    }

    #[test]
    fn the_guard_kills_the_groups_left_when_its_input_ends() {
        let start = || {
            std::process::Command::new("/bin/sh")
                .args(["-c", "sleep 60 & wait"])
                .process_group(0)
                .spawn()
                .expect("sh starts")
        };
        let (mut left, mut forgotten) = (start(), start());
        std::thread::sleep(std::time::Duration::from_millis(200));
        let lines = format!(
            "+{l}\n+{f}\n-{f}\nnot a line\n",
            l = left.id(),
            f = forgotten.id()
        );
        guard(lines.as_bytes());
        assert!(!left.wait().expect("sh is reaped").success());
        std::thread::sleep(std::time::Duration::from_millis(100));
        assert_eq!(running_in_group(left.id() as i32), Vec::<String>::new());
        // The group the shim forgot is not the guard's to kill.
        assert_eq!(forgotten.try_wait().expect("sh is there"), None);
        let _ = forgotten.kill();
        let _ = forgotten.wait();
        kill(&[forgotten.id() as i32]);
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
