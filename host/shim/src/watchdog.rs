//! The watchdog of a serving shim: the wall-time limit interrupts a module only while
//! it runs WebAssembly code (epoch interruption), not while it is blocked in a host
//! call (a sleep, a poll). When a run overstays its deadline by [`GRACE`], the
//! watchdog answers the run itself with a `timed-out` result and ends the process;
//! the controller opens a fresh session for the next task.
//!
//! It also watches the session's input: when the controller goes away mid-run (Ctrl-C,
//! SIGTERM, a controller killed, a connection cut), the stream ends while a module may
//! still be running, blocked in a program it started. Within a tick ([`TICK`]) the
//! watchdog ends every process group the session started ([`crate::groups`]),
//! removes the files it staged and ends the shim: nothing a session started outlives
//! its controller.

use sandball_wire::frame;
use sandball_wire::protocol::{Outcome, Response, RunResult};
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long past its deadline a run may stay blocked in a host call.
pub const GRACE: Duration = Duration::from_secs(1);

/// Exit code of a shim ended by its watchdog.
pub const EXIT_CODE: i32 = 4;

/// Exit code of a shim whose controller went away.
pub const ORPHANED_EXIT_CODE: i32 = 5;

/// How often the watchdog looks.
pub const TICK: Duration = Duration::from_millis(50);

#[derive(Debug)]
struct Armed {
    id: u64,
    limit_ms: u64,
    at: Instant,
}

/// Watches one run at a time.
#[derive(Clone, Debug, Default)]
pub struct Watchdog {
    armed: Arc<Mutex<Option<Armed>>>,
}

impl Watchdog {
    /// Starts the watchdog thread, which writes its frame to `out` (a handle on the
    /// session's frame stream) and removes the files the session staged in `cache`
    /// before it ends the process.
    pub fn start(mut out: std::fs::File, cache: crate::cache::Cache) -> Watchdog {
        let dog = Watchdog::default();
        let armed = dog.armed.clone();
        std::thread::spawn(move || {
            loop {
                std::thread::sleep(TICK);
                if controller_gone() {
                    crate::groups::kill_all();
                    let _ = cache.clear_staged();
                    std::process::exit(ORPHANED_EXIT_CODE);
                }
                let guard = armed.lock().unwrap_or_else(|e| e.into_inner());
                let Some(a) = guard.as_ref() else { continue };
                if Instant::now() < a.at {
                    continue;
                }
                // The lock is held to the end: the session thread cannot answer the
                // same run at the same time. Staged files go first: once answered, the
                // controller may kill the shim.
                let _ = cache.clear_staged();
                let result = RunResult {
                    id: a.id,
                    outcome: Outcome::TimedOut {
                        limit_ms: a.limit_ms,
                    },
                    stderr:
                        "the module was blocked in a host call past its time limit; the shim ended"
                            .into(),
                    denials: vec![],
                    denials_omitted: 0,
                    warnings: vec![],
                    elapsed_us: a
                        .limit_ms
                        .saturating_add(GRACE.as_millis() as u64)
                        .saturating_mul(1000),
                };
                if let Ok(bytes) = frame::encode(&Response::RunResult(result), &[]) {
                    let _ = out.write_all(&bytes);
                    let _ = out.flush();
                }
                std::process::exit(EXIT_CODE);
            }
        });
        dog
    }

    /// Watches run `id`, which may last `limit_ms`.
    pub fn arm(&self, id: u64, limit_ms: u64) {
        let now = Instant::now();
        let at = crate::limits::deadline(now, limit_ms.saturating_add(GRACE.as_millis() as u64));
        *self.armed.lock().unwrap_or_else(|e| e.into_inner()) = Some(Armed { id, limit_ms, at });
    }

    /// The run ended on its own.
    pub fn disarm(&self) {
        *self.armed.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

/// Whether the session's input (the shim's stdin) has ended: its writer closed (the
/// controller, or the sshd between them, went away). Unread requests do not count.
fn controller_gone() -> bool {
    let mut fds = [libc::pollfd {
        fd: libc::STDIN_FILENO,
        events: libc::POLLRDHUP,
        revents: 0,
    }];
    // SAFETY: one valid pollfd, owned by this frame; a zero timeout does not block.
    let r = unsafe { libc::poll(fds.as_mut_ptr(), 1, 0) };
    r > 0 && fds[0].revents & (libc::POLLHUP | libc::POLLRDHUP | libc::POLLERR) != 0
}
