//! Background jobs (`async` with `poll: 0`). A session starts a job by writing its
//! spec beside the job's file in the async directory (`~/.ansible_async`, as
//! Ansible's) and starting `sandball-shim job JID` in a process group of its own,
//! detached from the session, so the job outlives it. That process runs the module
//! (or, for a legacy module, its interpreter), stops it at the job's time limit, and
//! replaces the job's file (atomically) with how it ended; `async_status` reads the
//! file back through a later session.

use crate::cache::{Cache, write_atomic};
use crate::error::ShimError;
use crate::runtime::Runtime;
use sandball_wire::protocol::{Job, JobState, Outcome, RunResult};
use serde::{Deserialize, Serialize};
use std::io::Read;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// The async directory when the controller names none.
pub const DEFAULT_DIR: &str = "~/.ansible_async";

/// What the job process reads from its spec file.
#[derive(Debug, Serialize, Deserialize)]
struct Spec {
    limit_s: u64,
    cache_dir: PathBuf,
    job: Job,
}

/// The job file's content.
#[derive(Debug, Serialize, Deserialize)]
struct Record {
    ansible_job_id: String,
    #[serde(flatten)]
    state: JobState,
}

/// A job id names files: letters, digits, `.`, `_` and `-`, not starting with a dot.
pub fn check_jid(jid: &str) -> Result<(), ShimError> {
    let ok = !jid.is_empty()
        && jid.len() <= 128
        && !jid.starts_with('.')
        && jid
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(ShimError::Job(format!(
            "invalid job id {jid:?}: a job id has only letters, digits, '.', '_' and '-'"
        )))
    }
}

/// The async directory, absolute.
pub fn async_dir(given: Option<&str>) -> PathBuf {
    crate::paths::absolute(given.unwrap_or(DEFAULT_DIR), &crate::paths::home_dir())
}

fn results_file(dir: &Path, jid: &str) -> PathBuf {
    dir.join(jid)
}

fn spec_file(dir: &Path, jid: &str) -> PathBuf {
    dir.join(format!(".{jid}.spec"))
}

fn stdin_file(dir: &Path, jid: &str) -> PathBuf {
    dir.join(format!(".{jid}.stdin"))
}

fn write_private(path: &Path, bytes: &[u8]) -> Result<(), ShimError> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| ShimError::io("create", path, e))?;
    std::io::Write::write_all(&mut f, bytes).map_err(|e| ShimError::io("write", path, e))
}

fn record(dir: &Path, jid: &str, state: JobState) -> Result<(), ShimError> {
    let record = Record {
        ansible_job_id: jid.to_string(),
        state,
    };
    let text = serde_json::to_vec(&record)
        .map_err(|e| ShimError::Job(format!("cannot encode job {jid}: {e}")))?;
    write_atomic(&results_file(dir, jid), &text)
}

/// Starts job `jid`: records it as running and starts the detached job process. The
/// returned path is the job's file.
pub fn start(
    cache: &Cache,
    jid: &str,
    dir: &Path,
    limit_s: u64,
    job: Job,
    stdin: &[u8],
) -> Result<PathBuf, ShimError> {
    check_jid(jid)?;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| ShimError::io("create", dir, e))?;
    let file = results_file(dir, jid);
    if file.exists() {
        return Err(ShimError::Job(format!(
            "job {jid} exists already ({})",
            file.display()
        )));
    }
    let spec = Spec {
        limit_s,
        cache_dir: cache.root().to_path_buf(),
        job,
    };
    let text = serde_json::to_vec(&spec)
        .map_err(|e| ShimError::Job(format!("cannot encode job {jid}: {e}")))?;
    write_private(&spec_file(dir, jid), &text)?;
    write_private(&stdin_file(dir, jid), stdin)?;
    record(dir, jid, JobState::Running)?;
    let exe = std::env::current_exe().map_err(|e| ShimError::io("find", "the shim", e))?;
    Command::new(exe)
        .arg("job")
        .arg(jid)
        .arg("--async-dir")
        .arg(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .map_err(|e| ShimError::io("start the job process for", &file, e))?;
    Ok(file)
}

/// Reads job `jid`'s state; `cleanup` removes its file instead.
pub fn status(jid: &str, dir: &Path, cleanup: bool) -> Result<(PathBuf, JobState), ShimError> {
    check_jid(jid)?;
    let file = results_file(dir, jid);
    if cleanup {
        return match std::fs::remove_file(&file) {
            Ok(()) => Ok((file, JobState::Erased)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok((file, JobState::Missing)),
            Err(e) => Err(ShimError::io("remove", &file, e)),
        };
    }
    let text = match std::fs::read(&file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((file, JobState::Missing)),
        Err(e) => return Err(ShimError::io("read", &file, e)),
    };
    let record: Record = serde_json::from_slice(&text)
        .map_err(|e| ShimError::Job(format!("job file {} is not a job: {e}", file.display())))?;
    Ok((file, record.state))
}

/// The detached job process (`sandball-shim job JID --async-dir DIR`): runs the job
/// and records how it ended.
pub fn run(jid: &str, dir: &Path) -> Result<(), ShimError> {
    check_jid(jid)?;
    let spec_path = spec_file(dir, jid);
    let spec: Spec = std::fs::read(&spec_path)
        .map_err(|e| ShimError::io("read", &spec_path, e))
        .and_then(|t| {
            serde_json::from_slice(&t)
                .map_err(|e| ShimError::Job(format!("bad job spec {}: {e}", spec_path.display())))
        })?;
    let stdin_path = stdin_file(dir, jid);
    let stdin = std::fs::read(&stdin_path).map_err(|e| ShimError::io("read", &stdin_path, e))?;
    // The spec holds the job's arguments (secrets among them): gone once read.
    let _ = std::fs::remove_file(&spec_path);
    let _ = std::fs::remove_file(&stdin_path);
    let limit = Duration::from_secs(spec.limit_s.max(1));
    let name = spec.job.module().to_string();
    let state = match spec.job {
        Job::Module {
            sha256,
            module,
            args,
            mut grant,
        } => {
            // The module's own wall-time limit is the job's; a module stuck in a host
            // call past it is left behind when this process exits below.
            let limit_ms = u64::try_from(limit.as_millis()).unwrap_or(u64::MAX);
            grant.limits.wall_time_ms = limit_ms;
            let (tx, rx) = std::sync::mpsc::channel();
            let cache_dir = spec.cache_dir;
            std::thread::spawn(move || {
                let ran = Cache::open(&cache_dir)
                    .and_then(Runtime::new)
                    .and_then(|mut rt| rt.run(0, &sha256, &module, &args, &grant));
                let _ = tx.send(ran);
            });
            match rx.recv_timeout(limit + Duration::from_secs(5)) {
                Ok(Ok(out)) => JobState::Finished {
                    module: name,
                    result: out.result,
                    stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
                },
                Ok(Err(e)) => finished_with_error(name, &e.to_string()),
                Err(_) => JobState::TimedOut {
                    module: name,
                    pid: std::process::id(),
                },
            }
        }
        Job::Command { argv, .. } => run_command(name, &argv, stdin, limit),
    };
    record(dir, jid, state)
}

fn finished_with_error(module: String, message: &str) -> JobState {
    JobState::Finished {
        module,
        result: RunResult {
            id: 0,
            outcome: Outcome::Exited { code: 1 },
            stderr: message.to_string(),
            denials: vec![],
            denials_omitted: 0,
            warnings: vec![],
            elapsed_us: 0,
        },
        stdout: String::new(),
    }
}

/// Runs a program with `stdin`, in the environment the shim started with, until it
/// ends or `limit` passes (then it and its process group are killed).
fn run_command(module: String, argv: &[String], stdin: Vec<u8>, limit: Duration) -> JobState {
    let Some((program, args)) = argv.split_first() else {
        return finished_with_error(module, "the job has no program to run");
    };
    let started = std::time::Instant::now();
    let mut child = match Command::new(program)
        .args(args)
        .env_clear()
        .envs(crate::environment::all_original())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
    {
        Ok(c) => c,
        Err(e) => return finished_with_error(module, &format!("cannot run {program}: {e}")),
    };
    let pid = child.id();
    let feeder = child.stdin.take().map(|mut input| {
        std::thread::spawn(move || {
            let _ = std::io::Write::write_all(&mut input, &stdin);
        })
    });
    let reader = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let out = reader(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = reader(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let code = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status.code().unwrap_or(1),
            Ok(None) if started.elapsed() < limit => std::thread::sleep(Duration::from_millis(50)),
            Ok(None) => {
                if let Ok(pgid) = i32::try_from(pid) {
                    // The whole group: the interpreter and what it started.
                    let _ = rustix::process::kill_process_group(
                        rustix::process::Pid::from_raw(pgid).unwrap_or(rustix::process::Pid::INIT),
                        rustix::process::Signal::KILL,
                    );
                }
                let _ = child.wait();
                return JobState::TimedOut { module, pid };
            }
            Err(e) => {
                return finished_with_error(module, &format!("cannot wait for {program}: {e}"));
            }
        }
    };
    if let Some(f) = feeder {
        let _ = f.join();
    }
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    JobState::Finished {
        module,
        result: RunResult {
            id: 0,
            outcome: Outcome::Exited { code },
            stderr: String::from_utf8_lossy(&stderr).into_owned(),
            denials: vec![],
            denials_omitted: 0,
            warnings: vec![],
            elapsed_us: u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
        },
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_ids_cannot_leave_the_async_directory() {
        for bad in ["", "../x", ".hidden", "a/b", "j1 2", &"j".repeat(200)] {
            assert!(check_jid(bad).is_err(), "{bad:?}");
        }
        for good in ["j123.456", "job_1-a"] {
            check_jid(good).unwrap();
        }
    }

    #[test]
    fn a_command_job_records_its_output_and_a_stuck_one_is_stopped() {
        let done = run_command(
            "sh".into(),
            &[
                "/bin/sh".into(),
                "-c".into(),
                "cat; echo err >&2; exit 3".into(),
            ],
            b"in".to_vec(),
            Duration::from_secs(10),
        );
        match done {
            JobState::Finished { result, stdout, .. } => {
                assert_eq!(stdout, "in");
                assert_eq!(result.stderr, "err\n");
                assert_eq!(result.outcome, Outcome::Exited { code: 3 });
            }
            other => panic!("{other:?}"),
        }
        let started = std::time::Instant::now();
        let stuck = run_command(
            "sh".into(),
            &["/bin/sh".into(), "-c".into(), "sleep 30".into()],
            vec![],
            Duration::from_millis(300),
        );
        assert!(matches!(stuck, JobState::TimedOut { .. }), "{stuck:?}");
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn status_reads_missing_running_and_erased_jobs() {
        let dir = tempfile::tempdir().unwrap();
        let (file, state) = status("j1", dir.path(), false).unwrap();
        assert_eq!(file, dir.path().join("j1"));
        assert_eq!(state, JobState::Missing);
        record(dir.path(), "j1", JobState::Running).unwrap();
        assert_eq!(
            status("j1", dir.path(), false).unwrap().1,
            JobState::Running
        );
        assert_eq!(status("j1", dir.path(), true).unwrap().1, JobState::Erased);
        assert_eq!(
            status("j1", dir.path(), false).unwrap().1,
            JobState::Missing
        );
        assert!(status("../j1", dir.path(), false).is_err());
    }
}
