//! The `profile_tasks` and `timer` callbacks (`callbacks_enabled = profile_tasks,
//! timer`, as ansible.posix names them): a timestamp under each task's banner with the
//! time the previous task took and the time since the start, a `TASKS RECAP` of the
//! slowest tasks at the end (`PROFILE_TASKS_TASK_OUTPUT_LIMIT`, default 20;
//! `PROFILE_TASKS_SORT_ORDER`: `descending`, `ascending` or `none`); and the whole
//! run's time (`PLAYBOOK RECAP`).

use super::Callback;
use super::default::DefaultCallback;
use super::stats::Stats;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// `H:MM:SS.mmm`, as profile_tasks writes durations.
fn clock(d: Duration) -> String {
    let ms = d.as_millis();
    format!(
        "{}:{:02}:{:02}.{:03}",
        ms / 3_600_000,
        ms / 60_000 % 60,
        ms / 1000 % 60,
        ms % 1000
    )
}

/// A line filled with stars to the 80th column.
fn filled(text: &str) -> String {
    let stars = 80usize.saturating_sub(text.chars().count() + 2).max(3);
    format!("{text} {} ", "*".repeat(stars))
}

struct Profile {
    start: Instant,
    /// When the running task started, and its index in `tasks`.
    current: Option<(Instant, usize)>,
    /// Every task's name and time, in order.
    tasks: Vec<(String, Duration)>,
}

/// Times each task.
pub struct ProfileTasks {
    state: Mutex<Profile>,
}

impl Default for ProfileTasks {
    fn default() -> Self {
        ProfileTasks {
            state: Mutex::new(Profile {
                start: Instant::now(),
                current: None,
                tasks: Vec::new(),
            }),
        }
    }
}

impl ProfileTasks {
    /// The timestamp line, ending the running task's time.
    fn stamp(p: &mut Profile) -> String {
        let now = Instant::now();
        let since = match p.current.take() {
            Some((at, i)) => {
                let took = now - at;
                if let Some(t) = p.tasks.get_mut(i) {
                    t.1 = took;
                }
                took
            }
            None => now - p.start,
        };
        let when = chrono::Local::now().format("%A %d %B %Y  %H:%M:%S %z");
        filled(&format!(
            "{when} ({}){}{}",
            clock(since),
            " ".repeat(7),
            clock(now - p.start)
        ))
    }
}

impl Callback for ProfileTasks {
    fn task_start(&self, name: &str, _handler: bool) {
        let mut p = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let line = Self::stamp(&mut p);
        p.tasks.push((name.to_string(), Duration::ZERO));
        p.current = Some((Instant::now(), p.tasks.len() - 1));
        println!("{line}");
    }

    fn recap(&self, _stats: &Stats) {
        let mut p = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let line = Self::stamp(&mut p);
        println!("{}", DefaultCallback::banner_line("TASKS RECAP"));
        println!("{line}");
        println!("{} ", "=".repeat(79));
        let mut tasks = p.tasks.clone();
        match crate::config::settings().get("PROFILE_TASKS_SORT_ORDER") {
            Some("none") => {}
            Some("ascending") => tasks.sort_by_key(|t| t.1),
            _ => tasks.sort_by_key(|t| std::cmp::Reverse(t.1)),
        }
        let limit = crate::config::settings()
            .get("PROFILE_TASKS_TASK_OUTPUT_LIMIT")
            .and_then(|v| {
                let v = v.trim().to_ascii_lowercase();
                if v == "all" {
                    Some(usize::MAX)
                } else {
                    v.parse().ok()
                }
            })
            .unwrap_or(20);
        for (name, took) in tasks.iter().take(limit) {
            let head = format!("{name} ");
            let tail = format!(" {:.2}s", took.as_secs_f64());
            let dashes = 79usize.saturating_sub(head.chars().count() + tail.len());
            println!("{head}{}{tail}", "-".repeat(dashes));
        }
    }
}

/// Times the whole run.
pub struct Timer {
    start: Instant,
}

impl Default for Timer {
    fn default() -> Self {
        Timer {
            start: Instant::now(),
        }
    }
}

impl Callback for Timer {
    fn recap(&self, _stats: &Stats) {
        let s = self.start.elapsed().as_secs();
        println!("{}", DefaultCallback::banner_line("PLAYBOOK RECAP"));
        println!(
            "Playbook run took {} days, {} hours, {} minutes, {} seconds",
            s / 86400,
            s / 3600 % 24,
            s / 60 % 60,
            s % 60
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_lines_as_profile_tasks_writes_them() {
        assert_eq!(clock(Duration::from_millis(3_723_045)), "1:02:03.045");
        let line =
            filled("Thursday 26 November 2026  15:37:28 +0000 (0:00:00.013)       0:00:00.013");
        assert_eq!(line.len(), 80);
        assert!(line.ends_with(" ***** "), "{line}");
    }
}
