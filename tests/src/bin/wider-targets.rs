//! `wider-targets`: every self-contained POSIX target of ansible-core's integration
//! targets (the sdist's `test/integration/targets`, `make ansible-targets`), not only
//! those `make test` runs, each under ansible-playbook and sandball as
//! `tests/tests/integration_targets.rs` runs them ([`sandball_e2e::targets`]), with a
//! time limit per target and tool. Which targets are self-contained, and why the
//! others are not: [`targets::not_self_contained`].
//!
//! Writes a table (target, ansible-playbook's result, sandball's, the same recaps?) and
//! a count to `target/wider-targets.md` (again after each target: a run cut short
//! leaves what it found), the skipped targets with the reason, and the
//! output of both tools for each target that does not pass under both to
//! `target/wider-targets/<target>.log`; prints the count. `make wider-targets` runs it
//! (docs/COMPATIBILITY.md). Environment: `WIDER_TARGETS_LIMIT` (seconds per target and
//! tool, default 300), `WIDER_TARGETS_JOBS` (targets run at once, default 2),
//! `ANSIBLE_TARGETS=a,b` (those targets alone), and the harness's own
//! (`ANSIBLE_BIN_DIR`, `ANSIBLE_TARGETS_DIR`, `SANDBALL_BIN`, `SANDBALL_SHIM`).

use sandball_e2e::binaries::target_dir;
use sandball_e2e::output::Overrun;
use sandball_e2e::targets::{self, Comparison, Layout, Reference};
use sandball_e2e::{Output, Sandbox};
use std::fmt::Write as _;
use std::process::{ExitCode, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// How one target ended under both tools.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Verdict {
    PassBoth,
    /// ansible-playbook passes, sandball does not.
    SandballFails,
    BothFail,
    /// sandball exits 0 where ansible-playbook fails.
    AnsibleFails,
    /// ansible-playbook passes, and the target started none of sandball's commands
    /// (`ansible-playbook`, `ansible`, `ansible-inventory`): it tests another of
    /// ansible-core's (`ansible-console`, `ansible-vault`…) or none.
    NoSandball,
}

impl Verdict {
    fn of(ran: &Comparison) -> Verdict {
        if !ran.sandball_ran && ran.our_recaps().is_empty() && ran.reference_passed() {
            return Verdict::NoSandball;
        }
        match (ran.reference_passed(), ran.passed(), ran.mine.code == 0) {
            (true, true, _) => Verdict::PassBoth,
            (true, false, _) => Verdict::SandballFails,
            (false, _, false) => Verdict::BothFail,
            (false, _, true) => Verdict::AnsibleFails,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Verdict::PassBoth => "pass under both",
            Verdict::SandballFails => "fails under sandball only",
            Verdict::BothFail => "fails under both",
            Verdict::AnsibleFails => "fails under ansible-playbook only",
            Verdict::NoSandball => "runs no sandball command",
        }
    }
}

/// A run's result for the table: `pass` (exit 0), `exit N`, `timed out`, or `left
/// processes` (exit 0, but processes it started kept its output open; killed).
fn result(out: &Output, overrun: Option<Overrun>) -> String {
    match overrun {
        Some(Overrun::TimedOut) => format!("timed out ({} s)", out.elapsed.as_secs()),
        Some(Overrun::Lingering) => format!("exit {}, left processes", out.code),
        None if out.code == 0 => "pass".to_string(),
        None => format!("exit {}", out.code),
    }
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() -> ExitCode {
    let limit = Duration::from_secs(env_number("WIDER_TARGETS_LIMIT", 300));
    let jobs = env_number("WIDER_TARGETS_JOBS", 2).max(1) as usize;
    let reference = Reference::pinned();
    let chosen = std::env::var("ANSIBLE_TARGETS").ok();
    let mut names: Vec<String> = match std::fs::read_dir(&reference.targets) {
        Ok(entries) => entries
            .filter_map(Result::ok)
            .filter(|e| e.path().is_dir())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| {
                chosen
                    .as_ref()
                    .is_none_or(|c| c.split(',').any(|t| t.trim() == n))
            })
            .collect(),
        Err(e) => {
            eprintln!("wider-targets: {}: {e}", reference.targets.display());
            return ExitCode::FAILURE;
        }
    };
    names.sort();
    let (mut run, mut skipped) = (Vec::new(), Vec::new());
    for name in names {
        let aliases = targets::aliases(&reference.targets.join(&name));
        match targets::not_self_contained(&name, aliases.as_deref()) {
            Some(why) => skipped.push((name, why)),
            None => run.push(name),
        }
    }
    let version = reference.version();
    let sb = Sandbox::new();
    let ours = Layout::new(&sb, "sandball", &reference, false, None);
    let theirs = Layout::new(&sb, "ansible", &reference, true, None);
    // Targets that make the test user run one at a time (they would make the same
    // user), and last: the others run two or more at once until then.
    run.sort_by_key(|t| ours.makes_users(t));
    let recorded = targets::recorded(&version, reference.recorded);
    let logs = target_dir().join("wider-targets");
    // Logs of an earlier run would be mistaken for this one's.
    let _ = std::fs::remove_dir_all(&logs);
    if let Err(e) = std::fs::create_dir_all(&logs) {
        eprintln!("wider-targets: {}: {e}", logs.display());
        return ExitCode::FAILURE;
    }
    eprintln!(
        "{} self-contained POSIX targets of ansible-core {version} ({} skipped), {jobs} at once, {} s each per tool",
        run.len(),
        skipped.len(),
        limit.as_secs()
    );

    let report = Report {
        version,
        limit,
        targets: run.len(),
        skipped,
    };
    // Targets that make the test user run one at a time: they would make the same user.
    let users = Mutex::new(());
    let next = AtomicUsize::new(0);
    let rows: Mutex<Vec<Row>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| {
                while let Some(target) = run.get(next.fetch_add(1, Ordering::SeqCst)) {
                    let _one = ours
                        .makes_users(target)
                        .then(|| users.lock().unwrap_or_else(|e| e.into_inner()));
                    // The overrun of each run, by its command line (the one started).
                    let overruns = Mutex::new(Vec::new());
                    let ran = targets::compare(&ours, &theirs, target, recorded.get(target.as_str()), |cmd| {
                        match Output::run_bounded(cmd, limit, Stdio::null(), |_| {}) {
                            Ok(out) => out,
                            Err((why, out)) => {
                                overruns.lock().unwrap_or_else(|e| e.into_inner()).push((out.command.clone(), why));
                                out
                            }
                        }
                    });
                    let overruns = overruns.into_inner().unwrap_or_else(|e| e.into_inner());
                    let overrun = |out: &Output| overruns.iter().find(|(c, _)| *c == out.command).map(|(_, w)| *w);
                    let verdict = Verdict::of(&ran);
                    let theirs_result = match &ran.reference {
                        Some(out) => result(out, overrun(out)),
                        None => "pass (recorded)".to_string(),
                    };
                    let ours_result = result(&ran.mine, overrun(&ran.mine));
                    let same = match (&ran.reference, ran.our_recaps().is_empty() && ran.their_recaps().is_empty()) {
                        (None, _) => "yes (recorded)",
                        (Some(_), true) => "no recaps",
                        (Some(_), false) if ran.same_recaps() => "yes",
                        (Some(_), false) => "no",
                    };
                    eprintln!(
                        "{target:40} {:32} ansible-playbook {theirs_result}, sandball {ours_result} in {:.0} s",
                        verdict.name(),
                        ran.mine.elapsed.as_secs_f64()
                    );
                    if verdict != Verdict::PassBoth {
                        let mut log = format!("=== sandball\n{}\n", ran.mine);
                        if let Some(out) = &ran.reference {
                            let _ = write!(log, "\n=== ansible-playbook\n{out}\n");
                        }
                        if let Err(e) = std::fs::write(logs.join(format!("{target}.log")), log) {
                            eprintln!("wider-targets: cannot write {target}'s log: {e}");
                        }
                    }
                    let mut rows = rows.lock().unwrap_or_else(|e| e.into_inner());
                    rows.push((
                        target.clone(),
                        verdict,
                        format!("| {target} | {theirs_result} | {ours_result} | {same} | {} |\n", verdict.name()),
                    ));
                    if let Err(e) = write_table(&report, &rows) {
                        eprintln!("wider-targets: cannot write the table: {e}");
                    }
                }
            });
        }
    });
    let rows = rows.into_inner().unwrap_or_else(|e| e.into_inner());
    let table = target_dir().join("wider-targets.md");
    match write_table(&report, &rows) {
        Ok(summary) => {
            println!("{summary} ({})", table.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("wider-targets: {}: {e}", table.display());
            ExitCode::FAILURE
        }
    }
}

/// What the table says besides its rows.
struct Report {
    version: String,
    limit: Duration,
    /// How many targets are to run.
    targets: usize,
    skipped: Vec<(String, &'static str)>,
}

/// A row of the table: the target, its verdict, the row's text.
type Row = (String, Verdict, String);

/// Writes the table of `rows` (those run so far: it is written again after each
/// target, so that a run cut short leaves what it found) to
/// `target/wider-targets.md`; returns its count line.
fn write_table(report: &Report, rows: &[Row]) -> std::io::Result<String> {
    let mut rows: Vec<&Row> = rows.iter().collect();
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    let count = |v: Verdict| rows.iter().filter(|r| r.1 == v).count();
    let mut summary = format!(
        "{} self-contained POSIX targets of ansible-core {}: {} pass under both, {} fail under sandball only, {} fail under both, {} fail under ansible-playbook only, {} run no sandball command; {} targets skipped",
        report.targets,
        report.version,
        count(Verdict::PassBoth),
        count(Verdict::SandballFails),
        count(Verdict::BothFail),
        count(Verdict::AnsibleFails),
        count(Verdict::NoSandball),
        report.skipped.len()
    );
    if rows.len() < report.targets {
        let _ = write!(
            summary,
            " (so far: {} of {} run)",
            rows.len(),
            report.targets
        );
    }
    let mut md = format!(
        "# ansible-core's self-contained POSIX targets under both tools\n\n{summary}.\n\n\
         Each target at most {} s per tool; logs of those that do not pass under both in \
         target/wider-targets/.\n\n\
         | target | ansible-playbook | sandball | same recaps | verdict |\n|---|---|---|---|---|\n",
        report.limit.as_secs()
    );
    for (_, _, row) in &rows {
        md.push_str(row);
    }
    md.push_str("\n## Skipped\n\n| target | why |\n|---|---|\n");
    for (name, why) in &report.skipped {
        let _ = writeln!(md, "| {name} | {why} |");
    }
    std::fs::write(target_dir().join("wider-targets.md"), md)?;
    Ok(summary)
}
