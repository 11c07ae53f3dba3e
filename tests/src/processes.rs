//! Processes of this machine as the fault tests see them: whether one is running, and
//! a bounded wait for some to end (those still running when it gives up are killed, so
//! that a failing test leaves none behind).

use std::time::{Duration, Instant};

/// Whether process `pid` is running (present and not a zombie).
pub fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z")
    })
}

/// Waits up to `within` for none of `pids` to be running: how long it took, or those
/// still running then (killed now).
pub fn ended_within(pids: &[u32], within: Duration) -> Result<Duration, Vec<u32>> {
    let start = Instant::now();
    loop {
        let left: Vec<u32> = pids.iter().copied().filter(|p| running(*p)).collect();
        if left.is_empty() {
            return Ok(start.elapsed());
        }
        if start.elapsed() > within {
            for p in &left {
                let _ = std::process::Command::new("kill")
                    .args(["-KILL", &p.to_string()])
                    .status();
            }
            return Err(left);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The running processes whose environment holds the entry `entry` (`NAME=value`):
/// those a test started under a marker of its own, wherever they were started from.
pub fn with_env(entry: &str) -> Vec<u32> {
    let mut pids = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(environ) = std::fs::read(e.path().join("environ")) else {
            continue;
        };
        if environ.split(|b| *b == 0).any(|v| v == entry.as_bytes()) && running(pid) {
            pids.push(pid);
        }
    }
    pids
}
