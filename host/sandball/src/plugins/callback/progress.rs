//! The live progress line the default callback draws on a terminal while a task waits
//! on its hosts: `[3/10 hosts done, 1 failed, 12s]`, redrawn in place, cleared before
//! any other output; drawn only after a second, and never when stdout is not a
//! terminal.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How far the running task is.
#[derive(Debug, Default)]
struct State {
    total: usize,
    done: usize,
    failed: usize,
    started: Option<Instant>,
    /// Whether a line is on the screen now.
    drawn: bool,
    /// The line drawn last (not drawn again while it says the same).
    last: String,
}

/// What the line says, or `None` when there is nothing to show: no task waiting on
/// several hosts, or not for a second yet.
fn line(total: usize, done: usize, failed: usize, elapsed: Duration) -> Option<String> {
    if total < 2 || done >= total || elapsed < Duration::from_secs(1) {
        return None;
    }
    let failures = if failed > 0 {
        format!(", {failed} failed")
    } else {
        String::new()
    };
    Some(format!(
        "[{done}/{total} hosts done{failures}, {}s]",
        elapsed.as_secs()
    ))
}

/// The progress of the running task, shared with the thread that redraws it.
#[derive(Debug, Default)]
pub struct Progress {
    state: Mutex<State>,
    stop: AtomicBool,
}

impl Progress {
    /// Starts redrawing the line on `out` (every quarter second) until the progress
    /// is dropped by its callback ([`Progress::stop`]).
    pub fn start(out: Arc<Mutex<Box<dyn Write + Send>>>) -> Arc<Progress> {
        let progress = Arc::new(Progress::default());
        let shared = progress.clone();
        std::thread::spawn(move || {
            while !shared.stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(250));
                let mut state = shared.state.lock().unwrap_or_else(|e| e.into_inner());
                let Some(text) = state
                    .started
                    .and_then(|at| line(state.total, state.done, state.failed, at.elapsed()))
                else {
                    continue;
                };
                if state.drawn && state.last == text {
                    continue;
                }
                let mut out = out.lock().unwrap_or_else(|e| e.into_inner());
                let _ = write!(out, "\r\x1b[K{text}");
                let _ = out.flush();
                state.drawn = true;
                state.last = text;
            }
        });
        progress
    }

    /// Ends the redrawing thread.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// A task starts on `total` hosts.
    pub fn task(&self, total: usize) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        *s = State {
            total,
            started: Some(Instant::now()),
            drawn: s.drawn,
            ..State::default()
        };
    }

    /// A host is done with the task.
    pub fn host_done(&self, failed: bool) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.done += 1;
        s.failed += usize::from(failed);
    }

    /// The text that takes a drawn line off the screen (before other output), if one
    /// is drawn.
    pub fn clear(&self) -> &'static str {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if std::mem::take(&mut s.drawn) {
            "\r\x1b[K"
        } else {
            ""
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_shows_after_a_second_on_several_hosts() {
        let s = Duration::from_secs;
        assert_eq!(
            line(10, 3, 0, s(2)).as_deref(),
            Some("[3/10 hosts done, 2s]")
        );
        assert_eq!(
            line(10, 3, 1, s(12)).as_deref(),
            Some("[3/10 hosts done, 1 failed, 12s]")
        );
        assert_eq!(line(10, 3, 0, Duration::from_millis(500)), None);
        assert_eq!(line(1, 0, 0, s(5)), None);
        assert_eq!(line(4, 4, 0, s(5)), None);
        let p = Progress::default();
        assert_eq!(p.clear(), "");
        p.state.lock().unwrap().drawn = true;
        assert_eq!(p.clear(), "\r\x1b[K");
        assert_eq!(p.clear(), "");
    }
}
