//! A temporary directory to run playbooks in: files the tests write (playbooks,
//! inventories, data), the shim's cache (so tests never touch `~/.sandball`), and the
//! commands that run `sandball` or `ansible-playbook` there.

use crate::binaries::Binaries;
use crate::output::Output;
use crate::recording::{self, Reference};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use tempfile::TempDir;

/// How long one run may take before the test fails (debug builds compile the modules
/// on first use).
const DEFAULT_LIMIT: Duration = Duration::from_secs(240);

/// A temporary directory, removed when dropped.
pub struct Sandbox {
    dir: TempDir,
    /// How long each run in it may take before it is killed ([`DEFAULT_LIMIT`]).
    limit: Duration,
}

impl Default for Sandbox {
    fn default() -> Self {
        Self::new()
    }
}

impl Sandbox {
    /// A fresh, empty sandbox.
    pub fn new() -> Sandbox {
        let dir = tempfile::Builder::new()
            .prefix("sandball-e2e-")
            .tempdir()
            .unwrap_or_else(|e| panic!("cannot create a temporary directory: {e}"));
        Sandbox {
            dir,
            limit: DEFAULT_LIMIT,
        }
    }

    /// The same sandbox, whose runs may each take up to `limit` before they are killed
    /// (for runs that wait on the machine itself: dpkg, a package mirror).
    pub fn with_limit(mut self, limit: Duration) -> Sandbox {
        self.limit = limit;
        self
    }

    /// The sandbox directory.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// A subdirectory (created if needed).
    pub fn dir(&self, name: &str) -> PathBuf {
        let d = self.path().join(name);
        std::fs::create_dir_all(&d)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", d.display()));
        d
    }

    /// Writes a file (relative to the sandbox) and returns its path.
    pub fn write(&self, name: &str, content: &str) -> PathBuf {
        let p = self.path().join(name);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent)
                .unwrap_or_else(|e| panic!("cannot create {}: {e}", parent.display()));
        }
        std::fs::write(&p, content).unwrap_or_else(|e| panic!("cannot write {}: {e}", p.display()));
        p
    }

    /// Writes `inventory.ini` with these hosts, all on the local connection, in a group
    /// `nodes`.
    pub fn inventory(&self, hosts: &[&str]) -> PathBuf {
        let mut text = String::from("[nodes]\n");
        for h in hosts {
            text.push_str(&format!("{h} ansible_connection=local\n"));
        }
        self.write("inventory.ini", &text)
    }

    /// [`inventory`](Self::inventory) with the Python that has ansible-core as every
    /// host's interpreter (for legacy modules, run the same by both tools).
    pub fn inventory_with_python(&self, hosts: &[&str]) -> PathBuf {
        let python = crate::binaries::ansible_python();
        let mut text = String::from("[nodes]\n");
        for h in hosts {
            text.push_str(&format!(
                "{h} ansible_connection=local ansible_python_interpreter={}\n",
                python.display()
            ));
        }
        self.write("inventory.ini", &text)
    }

    /// Writes a capability policy that refuses legacy modules and returns its path (for
    /// `--policy`): the built-in components alone, with no hand-over of what they do
    /// not carry out to ansible-core's modules.
    pub fn policy_denying_legacy(&self) -> String {
        self.write("deny-legacy.toml", "[policy]\nlegacy = \"deny\"\n")
            .display()
            .to_string()
    }

    /// `sandball playbook -i inventory.ini PLAYBOOK -e work=WORK EXTRA…`: a playbook of
    /// the sandbox against its [`inventory`](Self::inventory), with `work` the directory
    /// the playbook writes in.
    pub fn play(&self, playbook: &Path, work: &Path, extra: &[&str]) -> Invocation {
        self.sandball(self.play_args(playbook, work, extra, true))
    }

    /// [`play`](Self::play) with the test venv's ansible-core on the controller (for
    /// legacy modules, hand-overs and Python plugins).
    pub fn play_with_core(&self, playbook: &Path, work: &Path, extra: &[&str]) -> Invocation {
        self.play(playbook, work, extra)
            .env("SANDBALL_ANSIBLE_PYTHON", crate::binaries::ansible_python())
    }

    /// The same playbook run as [`play`](Self::play), under ansible-playbook (see
    /// [`ansible_playbook`](Self::ansible_playbook) for when it is `None`).
    pub fn ansible_play(&self, playbook: &Path, work: &Path, extra: &[&str]) -> Option<Invocation> {
        self.ansible_playbook(self.play_args(playbook, work, extra, false))
    }

    fn play_args(
        &self,
        playbook: &Path,
        work: &Path,
        extra: &[&str],
        subcommand: bool,
    ) -> Vec<String> {
        let inventory = self.path().join("inventory.ini");
        assert!(
            inventory.is_file(),
            "write the inventory first (Sandbox::inventory)"
        );
        let mut args: Vec<String> = Vec::new();
        if subcommand {
            args.push("playbook".into());
        }
        args.extend([
            "-i".to_string(),
            inventory.display().to_string(),
            playbook.display().to_string(),
            "-e".to_string(),
            format!("work={}", work.display()),
        ]);
        args.extend(extra.iter().map(|s| s.to_string()));
        args
    }

    /// `sandball ARGS…`, run in the sandbox with the shim under test, its cache the one
    /// all tests share ([`shared_shim_cache`](crate::binaries::shared_shim_cache)). Hosts without
    /// an `ansible_python_interpreter` use the ansible-core venv's Python, as under
    /// [`ansible_playbook`](Self::ansible_playbook), rather than one discovered along
    /// the test's `PATH`. sandball follows the semantics of that ansible-core's release
    /// (`SANDBALL_ANSIBLE_CORE_VERSION`; a test of another release removes it).
    pub fn sandball<I, S>(&self, args: I) -> Invocation
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let bins = Binaries::get();
        let mut cmd = Command::new(&bins.sandball);
        cmd.args(args)
            .current_dir(self.path())
            .env("SANDBALL_SHIM", &bins.shim)
            .env(
                "ANSIBLE_PYTHON_INTERPRETER",
                crate::binaries::ansible_python(),
            )
            .env("SANDBALL_CACHE_DIR", crate::binaries::shared_shim_cache())
            .env("NO_COLOR", "1");
        // The semantics of the release compared with, whatever sandball would find.
        if let Some(release) = crate::binaries::reference_core_release() {
            cmd.env("SANDBALL_ANSIBLE_CORE_VERSION", release);
        }
        Invocation {
            cmd,
            limit: self.limit,
            reference: None,
        }
    }

    /// `ansible-playbook ARGS…` from `$ANSIBLE_BIN_DIR`, run in the sandbox with a
    /// configuration of its own (no colour, no retry files, the venv's Python, its
    /// temporary files in the sandbox). `None`, after saying why on stderr, when
    /// `ANSIBLE_BIN_DIR` is unset; panics when it is set but holds no ansible-playbook.
    pub fn ansible_playbook<I, S>(&self, args: I) -> Option<Invocation>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let Some(bin_dir) = std::env::var_os("ANSIBLE_BIN_DIR").map(PathBuf::from) else {
            eprintln!(
                "skipping the comparison with ansible-playbook: ANSIBLE_BIN_DIR is unset \
                 (`make test` installs ansible-core into target/venv and sets it)"
            );
            return None;
        };
        Some(self.ansible_playbook_in(&bin_dir, args))
    }

    /// `ansible-playbook ARGS…` from the ansible-core installed in `bin_dir`, configured
    /// as [`ansible_playbook`](Self::ansible_playbook) configures it.
    pub fn ansible_playbook_in<I, S>(&self, bin_dir: &Path, args: I) -> Invocation
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.ansible_tool_in(bin_dir, "ansible-playbook", args)
    }

    /// Another of ansible-core's commands (`ansible`, `ansible-doc`…) from
    /// `$ANSIBLE_BIN_DIR`, configured as [`ansible_playbook`](Self::ansible_playbook)
    /// configures it; `None` when `ANSIBLE_BIN_DIR` is unset.
    pub fn ansible_tool<I, S>(&self, program: &str, args: I) -> Option<Invocation>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let bin_dir = std::env::var_os("ANSIBLE_BIN_DIR").map(PathBuf::from)?;
        Some(self.ansible_tool_in(&bin_dir, program, args))
    }

    /// One of ansible-core's commands from `bin_dir`, configured for the sandbox.
    fn ansible_tool_in<I, S>(&self, bin_dir: &Path, program: &str, args: I) -> Invocation
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let exe = bin_dir.join(program);
        assert!(
            exe.is_file(),
            "ANSIBLE_BIN_DIR is set but {} does not exist; run `make ansible`",
            exe.display()
        );
        let config = self.write("ansible.cfg", "[defaults]\n");
        let mut cmd = Command::new(exe);
        cmd.args(args)
            .current_dir(self.path())
            .env("ANSIBLE_CONFIG", config)
            .env("ANSIBLE_HOME", self.path().join("ansible-home"))
            .env("ANSIBLE_LOCAL_TEMP", self.path().join("ansible-local"))
            .env("ANSIBLE_REMOTE_TEMP", self.path().join("ansible-remote"))
            .env("ANSIBLE_PYTHON_INTERPRETER", bin_dir.join("python"))
            .env("ANSIBLE_NOCOLOR", "1")
            .env("ANSIBLE_RETRY_FILES_ENABLED", "0")
            .env("ANSIBLE_LOCALHOST_WARNING", "0")
            .env("ANSIBLE_DEPRECATION_WARNINGS", "0");
        Invocation {
            cmd,
            limit: self.limit,
            reference: Some(Reference {
                sandbox: self.path().to_path_buf(),
                bin_dir: bin_dir.to_path_buf(),
            }),
        }
    }
}

/// A command ready to run.
pub struct Invocation {
    cmd: Command,
    limit: Duration,
    /// For a run of ansible-core: what [`recording`](crate::recording) needs to replay
    /// it (none for a run as another user: that depends on the machine's accounts).
    reference: Option<Reference>,
}

impl Invocation {
    /// Sets an environment variable for the run.
    pub fn env(mut self, key: &str, value: impl AsRef<OsStr>) -> Self {
        self.cmd.env(key, value);
        self
    }

    /// Changes the time limit of the run.
    pub fn limit(mut self, limit: Duration) -> Self {
        self.limit = limit;
        self
    }

    /// Leaves an environment variable out of the run.
    pub fn env_remove(mut self, key: &str) -> Self {
        self.cmd.env_remove(key);
        self
    }

    /// Runs it as the user `uid` (group `gid`, no other groups), with `HOME` at `home`.
    pub fn as_user(mut self, uid: u32, gid: u32, home: &Path) -> Self {
        use std::os::unix::process::CommandExt;
        self.cmd.uid(uid).gid(gid).env("HOME", home);
        self.reference = None;
        self
    }

    /// Runs it to the end (a run of ansible-core in a recorded test may be replayed:
    /// [`recording`](crate::recording)).
    pub fn run(self) -> Output {
        match &self.reference {
            Some(reference) => recording::run(self.cmd, self.limit, None, reference),
            None => Output::run(self.cmd, self.limit),
        }
    }

    /// Runs it, and once `ready` says so (asked every 50 ms, within the run's time
    /// limit) sends `signal` (`INT`, `TERM`…) to its process group, as a terminal's
    /// Ctrl-C reaches the foreground group; then waits for it to end. Never replayed
    /// from a recording: a signalled run depends on its timing.
    pub fn run_signalled(self, signal: &str, ready: impl Fn() -> bool) -> Output {
        let limit = self.limit;
        Output::run_started(self.cmd, limit, std::process::Stdio::null(), |child| {
            let start = std::time::Instant::now();
            while !ready() {
                assert!(
                    start.elapsed() < limit,
                    "the run was not ready to be signalled within {limit:?}"
                );
                std::thread::sleep(Duration::from_millis(50));
            }
            let group = format!("-{}", child.id());
            let sent = std::process::Command::new("kill")
                .args([&format!("-{signal}"), "--", &group])
                .status();
            assert!(
                sent.is_ok_and(|s| s.success()),
                "kill -{signal} -- {group} failed"
            );
        })
    }

    /// Runs it to the end with the file `input` as its stdin.
    pub fn run_with_stdin(self, input: &Path) -> Output {
        match &self.reference {
            Some(reference) => recording::run(self.cmd, self.limit, Some(input), reference),
            None => {
                let file = std::fs::File::open(input)
                    .unwrap_or_else(|e| panic!("cannot open {}: {e}", input.display()));
                Output::run_with_input(self.cmd, self.limit, file.into())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inventories_put_every_host_on_the_local_connection() {
        let sb = Sandbox::new();
        let inv = sb.inventory(&["alpha", "beta"]);
        let text = std::fs::read_to_string(inv).unwrap();
        assert_eq!(
            text,
            "[nodes]\nalpha ansible_connection=local\nbeta ansible_connection=local\n"
        );
    }

    #[test]
    fn the_sandbox_disappears_when_dropped() {
        let sb = Sandbox::new();
        let path = sb.path().to_path_buf();
        sb.write("a/b.txt", "x");
        assert!(path.join("a/b.txt").is_file());
        drop(sb);
        assert!(!path.exists());
    }
}
