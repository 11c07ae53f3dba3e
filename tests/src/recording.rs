//! Recorded runs of ansible-core, for the tests whose reference runs depend on nothing
//! but their inputs (`tests/recordings/tests.txt` names them; every other test runs
//! ansible-core live, always).
//!
//! A run of ansible-playbook (or `ansible`, `ansible-inventory`…) by one of those tests
//! is looked up by a key: a hash of the program, its arguments, the environment the
//! harness gives it (and the `ANSIBLE_*` and locale variables it inherits), the user
//! and group the tests run as, its stdin,
//! every file of the sandbox (paths relative to it, modes, contents), the files of the
//! workspace that an argument or a sandbox file names, and the versions of the venv's
//! Python and packages. Paths of the run — the sandbox, the venv, the workspace — are
//! written as placeholders, in the key and in the recording, so that a temporary
//! directory's name does not matter; they are put back on replay.
//!
//! The recording holds the exit code, stdout, stderr, and what the run changed in the
//! sandbox (files written, removed); a replay gives the same [`Output`] and makes the
//! same changes, so the test sees what a live run would have shown it. A key with no
//! recording (a test edited, a new one, another ansible-core) runs ansible-core live and
//! says so, naming the test and `make test-recordings`.
//!
//! `E2E_REFERENCE` chooses: unset or `replay` (the above), `live` (never replay),
//! `verify` (run live and fail unless the run is what was recorded: `make
//! test-recordings-verify`), `record` (run live and record: `make test-recordings`).

use crate::binaries::workspace_root;
use crate::output::Output;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ffi::OsStr;
use std::fmt::Write as _;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// The recordings, relative to the workspace: `tests.txt` (which tests are recorded),
/// `versions.txt` (what recorded them), a file per test.
pub const DIR: &str = "tests/recordings";

/// How the reference runs of recorded tests are made (`$E2E_REFERENCE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// A recorded reply when there is one for the very same inputs, else a live run.
    Replay,
    /// Always live.
    Live,
    /// Live, and the test fails unless the run is the recorded one.
    Verify,
    /// Live, and the run is recorded.
    Record,
}

/// The mode `$E2E_REFERENCE` asks for.
pub fn mode() -> Mode {
    match std::env::var("E2E_REFERENCE").as_deref() {
        Err(_) | Ok("") | Ok("replay") => Mode::Replay,
        Ok("live") => Mode::Live,
        Ok("verify") => Mode::Verify,
        Ok("record") => Mode::Record,
        Ok(other) => panic!("E2E_REFERENCE={other}: expected replay, live, verify or record"),
    }
}

/// What a reference run needs to be keyed and replayed: the sandbox it runs in and the
/// bin directory of the ansible-core it runs.
#[derive(Clone, Debug)]
pub struct Reference {
    pub sandbox: PathBuf,
    pub bin_dir: PathBuf,
}

/// The name of the running test (`module::test`): the test thread's name, or under
/// cargo-nextest (one test a process) the test named on the command line.
pub fn test_name() -> Option<String> {
    if let Some(name) = std::thread::current().name()
        && name != "main"
    {
        return Some(name.to_string());
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    args.iter().any(|a| a == "--exact").then_some(())?;
    args.into_iter().find(|a| !a.starts_with('-'))
}

/// Whether the test is listed in `tests.txt`: a line is a test's full name, or a
/// module's name followed by `::` for all its tests; a line `-name` takes a test (or a
/// module's tests) out again.
pub fn is_recorded(test: &str) -> bool {
    listed(
        &std::fs::read_to_string(workspace_root().join(DIR).join("tests.txt")).unwrap_or_default(),
        test,
    )
}

fn listed(list: &str, test: &str) -> bool {
    let names = |entry: &str| {
        if entry.ends_with("::") {
            test.starts_with(entry)
        } else {
            test == entry
        }
    };
    let entries: Vec<&str> = list
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .collect();
    let out = entries
        .iter()
        .filter_map(|e| e.strip_prefix('-'))
        .any(|e| names(e.trim()));
    !out && entries.iter().any(|e| !e.starts_with('-') && names(e))
}

/// The file a test's recordings are in: `tests/recordings/MODULE/TEST.txt`.
fn file_of(test: &str) -> PathBuf {
    let mut path = workspace_root().join(DIR);
    for part in test.split("::") {
        path.push(part);
    }
    path.set_extension("txt");
    path
}

/// What the venv of `bin_dir` holds: ansible-core's version, Python's, and every
/// package's (pip's and setuptools' aside), one a line. Recordings are used only with
/// the venv that made them.
pub fn versions(bin_dir: &Path) -> String {
    let venv = bin_dir.parent().unwrap_or(bin_dir);
    let python = std::fs::read_to_string(venv.join("pyvenv.cfg"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once('=')?;
            (k.trim() == "version" || k.trim() == "version_info").then(|| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into());
    let mut packages = Vec::new();
    for lib in read_dir_sorted(&venv.join("lib")) {
        for entry in read_dir_sorted(&lib.join("site-packages")) {
            let name = entry
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .to_lowercase();
            if let Some(dist) = name.strip_suffix(".dist-info")
                && !["pip-", "setuptools-", "wheel-"]
                    .iter()
                    .any(|p| dist.starts_with(p))
            {
                packages.push(dist.replace('-', " "));
            }
        }
    }
    packages.sort();
    let core = packages
        .iter()
        .find_map(|p| p.strip_prefix("ansible_core "))
        .unwrap_or("none")
        .to_string();
    let mut text = format!("ansible-core {core}\npython {python}\n");
    for p in &packages {
        let _ = writeln!(text, "package {p}");
    }
    text
}

fn read_dir_sorted(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    v.sort();
    v
}

/// The versions `tests/recordings/versions.txt` says the recordings were made with,
/// comments aside.
fn recorded_versions() -> String {
    std::fs::read_to_string(workspace_root().join(DIR).join("versions.txt"))
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| format!("{l}\n"))
        .collect()
}

/// Writes `tests/recordings/versions.txt` (whole: tests record side by side).
fn write_versions(versions: &str) {
    let dir = workspace_root().join(DIR);
    let file = dir.join("versions.txt");
    let tmp = dir.join(format!("versions.txt.{}", std::process::id()));
    let text = format!(
        "# The venv that recorded the runs in this directory (`make test-recordings`): a run\n\
         # is replayed only under the very same versions.\n{versions}"
    );
    std::fs::create_dir_all(&dir)
        .and_then(|()| std::fs::write(&tmp, text))
        .and_then(|()| std::fs::rename(&tmp, &file))
        .unwrap_or_else(|e| panic!("cannot write {}: {e}", file.display()));
}

/// The test and mode a reference run of the ansible-core in `bin_dir` is recorded or
/// replayed under, with the venv's versions; `None` when it runs live as any other
/// (the test is not listed, the ansible-core is not `$ANSIBLE_BIN_DIR`'s, `live` mode,
/// or the recordings are of other versions).
/// A recorded test's reference run: the test, the mode, the venv's versions.
struct Recorded {
    test: String,
    mode: Mode,
    versions: String,
}

fn recorded_test(bin_dir: &Path) -> Option<Recorded> {
    let mode = mode();
    let test = test_name().filter(|t| is_recorded(t))?;
    let pinned = std::env::var_os("ANSIBLE_BIN_DIR").map(PathBuf::from)?;
    if pinned != bin_dir || mode == Mode::Live {
        return None;
    }
    let versions = versions(bin_dir);
    if mode == Mode::Record && versions != recorded_versions() {
        write_versions(&versions);
    }
    if mode != Mode::Record && versions != recorded_versions() {
        static SAID: OnceLock<()> = OnceLock::new();
        SAID.get_or_init(|| {
            eprintln!(
                "{test}: {DIR} was recorded with\n{}but the venv holds\n{versions}so ansible-core runs live \
                 (`make test-recordings` records them with this venv)",
                recorded_versions()
            )
        });
        return None;
    }
    Some(Recorded {
        test,
        mode,
        versions,
    })
}

/// Runs `cmd`, a reference run of ansible-core in `reference`'s sandbox — replayed from
/// the recordings when the test is recorded and the same inputs were (see the module's
/// doc).
pub fn run(cmd: Command, limit: Duration, input: Option<&Path>, reference: &Reference) -> Output {
    let Some(rec) = recorded_test(&reference.bin_dir) else {
        return live(cmd, limit, input);
    };
    let paths = Paths::new(Some(&reference.sandbox), &reference.bin_dir);
    let before = snapshot(&reference.sandbox);
    let stdin = input
        .map(|p| std::fs::read(p).unwrap_or_else(|e| panic!("cannot read {}: {e}", p.display())));
    let key = key(&cmd, stdin.as_deref(), &before, &paths, &rec.versions);
    let summary = summary(&cmd, &paths);
    let command = format!("{cmd:?}");
    let sandbox = &reference.sandbox;
    let entry = replay_or_run(
        &rec,
        summary,
        key,
        &paths,
        false,
        |entry| entry.apply(sandbox, &paths),
        || {
            let out = live(cmd, limit, input);
            let after = snapshot(sandbox);
            let changes = changes(&before, &after, &paths);
            (out.code, out.stdout, out.stderr, changes, out.elapsed)
        },
    );
    Output {
        command: match entry.1 {
            Some(file) => format!("{command} (replayed from {file})"),
            None => command,
        },
        code: entry.0.code,
        stdout: paths.restore(&entry.0.stdout),
        stderr: paths.restore(&entry.0.stderr),
        elapsed: entry.2,
    }
}

/// An answer of ansible-core that the test gets some other way than through a
/// [`Sandbox`](crate::Sandbox) command (the inventory test asks a Python process that
/// imported ansible-core once), recorded and replayed as a run is: `inputs` are all
/// that goes into it, as the caller names them (paths of the workspace and the venv
/// become placeholders; a file's content must be among them, by a [`tree_digest`]
/// say), `summary` the line shown above it, `ask` makes it live. Exit code, stdout,
/// stderr.
pub fn answer(
    bin_dir: &Path,
    summary: &str,
    inputs: &[String],
    ask: impl FnOnce() -> (i32, String, String),
) -> (i32, String, String) {
    let Some(rec) = recorded_test(bin_dir) else {
        return ask();
    };
    let paths = Paths::new(None, bin_dir);
    let mut h = Sha256::new();
    for part in ["sandball-e2e reference answer 1", &rec.versions, &user()]
        .into_iter()
        .map(str::to_string)
        .chain(inputs.iter().map(|i| paths.normalize(i)))
    {
        h.update(part.as_bytes());
        h.update(b"\n");
    }
    let key = hex::encode(&h.finalize()[..16]);
    let (entry, _, _) = replay_or_run(
        &rec,
        paths.normalize(summary),
        key,
        &paths,
        true,
        |_| {},
        || {
            let (code, out, err) = ask();
            (code, out, err, Vec::new(), Duration::ZERO)
        },
    );
    (
        entry.code,
        paths.restore(&entry.stdout),
        paths.restore(&entry.stderr),
    )
}

/// A digest of every file under `dir` (names, contents with the workspace's and the
/// venv of `bin_dir`'s paths as placeholders, which are executable), for [`answer`]'s
/// inputs.
pub fn tree_digest(dir: &Path, bin_dir: &Path) -> String {
    let paths = Paths::new(None, bin_dir);
    let mut h = Sha256::new();
    for (path, node) in snapshot(dir) {
        let line = match node {
            Node::Dir(_) => format!("dir {path}"),
            Node::File(mode, content) => format!(
                "file {path} {:o} {}",
                mode & 0o111,
                digest(&paths.normalize_bytes(&content))
            ),
            Node::Link(target) => format!(
                "link {path} {}",
                paths.normalize(&target.display().to_string())
            ),
        };
        h.update(line.as_bytes());
        h.update(b"\n");
    }
    hex::encode(&h.finalize()[..16])
}

/// The user and group the tests run as (`Uid:`, `Gid:` of /proc/self/status): files'
/// owners in results are theirs.
fn user() -> String {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .filter(|l| l.starts_with("Uid:") || l.starts_with("Gid:"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// What live runs return: exit code, stdout, stderr, the changes to the sandbox, time.
type Live = (i32, String, String, Vec<Change>, Duration);

/// The recorded entry for `key` (replayed: `apply` makes its changes), or the live run
/// (recorded, or checked against the recording); with the file replayed from and the
/// time taken.
fn replay_or_run(
    rec: &Recorded,
    summary: String,
    key: String,
    paths: &Paths,
    sorted: bool,
    apply: impl FnOnce(&Entry),
    run: impl FnOnce() -> Live,
) -> (Entry, Option<String>, Duration) {
    let (test, mode) = (&rec.test, rec.mode);
    let file = file_of(test);
    let recorded = match mode {
        Mode::Replay | Mode::Verify => take_recorded(&file, &key),
        _ => None,
    };
    if mode == Mode::Replay {
        if let Some(entry) = recorded {
            apply(&entry);
            return (entry, Some(relative(&file)), Duration::ZERO);
        }
        eprintln!(
            "{test}: no recording of this run of {} with these inputs in {}: it runs live \
             (`make test-recordings` records it)",
            program_name(&summary),
            relative(&file)
        );
    } else if mode == Mode::Verify && recorded.is_none() {
        panic!(
            "{test}: no recording of this run of {} with these inputs in {} (`make test-recordings`)",
            program_name(&summary),
            relative(&file)
        );
    }
    let (code, stdout, stderr, changes, elapsed) = run();
    let entry = Entry {
        summary,
        key,
        code,
        stdout: paths.normalize(&stdout),
        stderr: paths.normalize(&stderr),
        changes,
    };
    match (mode, recorded) {
        (Mode::Verify, Some(recorded)) => {
            let (was, is) = (masked(&recorded.to_text()), masked(&entry.to_text()));
            // Hosts report in the order they finish, which varies from run to run (the
            // tests allow for it): the same lines in another order agree.
            let sorted = |t: &str| {
                let mut v: Vec<&str> = t.lines().collect();
                v.sort_unstable();
                v.join("\n")
            };
            assert!(
                was == is || sorted(&was) == sorted(&is),
                "{test}: the live run of {} differs from its recording in {}:\n{}",
                program_name(&entry.summary),
                relative(&file),
                first_difference(&was, &is)
            );
        }
        (Mode::Record, _) => append(&file, &entry, sorted),
        _ => {}
    }
    // The live output as it was, not normalised and restored.
    let entry = Entry {
        stdout,
        stderr,
        ..entry
    };
    (entry, None, elapsed)
}

fn live(cmd: Command, limit: Duration, input: Option<&Path>) -> Output {
    match input {
        None => Output::run(cmd, limit),
        Some(p) => {
            let file = std::fs::File::open(p)
                .unwrap_or_else(|e| panic!("cannot open {}: {e}", p.display()));
            Output::run_with_input(cmd, limit, Stdio::from(file))
        }
    }
}

fn relative(file: &Path) -> String {
    file.strip_prefix(workspace_root())
        .unwrap_or(file)
        .display()
        .to_string()
}

fn program(cmd: &Command) -> String {
    Path::new(cmd.get_program())
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned()
}

fn program_name(summary: &str) -> &str {
    summary.split_whitespace().next().unwrap_or(summary)
}

/// The command line, placeholders for paths: the line above each recording.
fn summary(cmd: &Command, paths: &Paths) -> String {
    let mut s = program(cmd);
    for a in cmd.get_args() {
        s.push(' ');
        s.push_str(&paths.normalize(&a.to_string_lossy()).replace('\n', "\\n"));
    }
    s
}

/// A recording with what differs between any two live runs of the same inputs, and no
/// test can compare, masked: a command's times (`delta`, `start`, `end`) and the names
/// of ansible-core's and Python's temporary directories and files. Only [`Mode::Verify`] masks: a recording
/// keeps what the run printed.
fn masked(text: &str) -> String {
    static MASKS: OnceLock<Vec<(regex::Regex, &'static str)>> = OnceLock::new();
    let masks = MASKS.get_or_init(|| {
        [
            (r#""(delta|start|end)": "[^"]*""#, r#""$1": "…""#),
            (r"(?m)^(\s*(delta|start|end): ).*$", "$1…"),
            (r"ansible-tmp-[0-9.]+-[0-9]+-[0-9]+", "ansible-tmp-…"),
            (r"ansible-local-[0-9]+[A-Za-z0-9_]*", "ansible-local-…"),
            // Python's temporary files (a diff names the one a template was made in).
            (r"/tmp[a-z0-9_]{8}\b", "/tmp…"),
        ]
        .into_iter()
        .map(|(re, to)| (regex::Regex::new(re).expect("a valid mask"), to))
        .collect()
    });
    let mut t = text.to_string();
    for (re, to) in masks {
        t = re.replace_all(&t, *to).into_owned();
    }
    t
}

/// The first line where two recordings differ, with a few lines around it.
fn first_difference(was: &str, is: &str) -> String {
    let (a, b): (Vec<&str>, Vec<&str>) = (was.lines().collect(), is.lines().collect());
    let i = a
        .iter()
        .zip(&b)
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()));
    let from = i.saturating_sub(3);
    format!(
        "--- recorded (line {})\n{}\n--- live\n{}",
        i + 1,
        a[from..a.len().min(i + 4)].join("\n"),
        b[from..b.len().min(i + 4)].join("\n")
    )
}

/// The paths of one run and the placeholders they are written as.
struct Paths {
    /// Each path (as given, and resolved) with its placeholder, longest first, so that
    /// a path inside another is replaced first.
    pairs: Vec<(String, &'static str)>,
    /// Each placeholder with the path as the harness gave it, for replays.
    given: Vec<(&'static str, String)>,
}

impl Paths {
    fn new(sandbox: Option<&Path>, bin_dir: &Path) -> Paths {
        let venv = bin_dir.parent().unwrap_or(bin_dir);
        let mut pairs = Vec::new();
        let mut given = Vec::new();
        let all = [
            sandbox.map(|s| (s.to_path_buf(), "@SANDBOX@")),
            Some((venv.to_path_buf(), "@VENV@")),
            Some((workspace_root(), "@WORKSPACE@")),
        ];
        for (path, placeholder) in all.into_iter().flatten() {
            given.push((placeholder, path.display().to_string()));
            let real = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
            for p in [path, real] {
                let s = p.display().to_string();
                if s.len() > 1 && !pairs.iter().any(|(q, _)| *q == s) {
                    pairs.push((s, placeholder));
                }
            }
        }
        pairs.sort_by_key(|(s, _)| std::cmp::Reverse(s.len()));
        Paths { pairs, given }
    }

    fn normalize(&self, text: &str) -> String {
        let mut t = text.to_string();
        for (path, placeholder) in &self.pairs {
            t = t.replace(path.as_str(), placeholder);
        }
        t
    }

    fn normalize_bytes(&self, bytes: &[u8]) -> Vec<u8> {
        match std::str::from_utf8(bytes) {
            Ok(text) => self.normalize(text).into_bytes(),
            Err(_) => {
                let mut b = bytes.to_vec();
                for (path, placeholder) in &self.pairs {
                    b = replace_bytes(&b, path.as_bytes(), placeholder.as_bytes());
                }
                b
            }
        }
    }

    /// Placeholders back to this run's paths.
    fn restore(&self, text: &str) -> String {
        let mut t = text.to_string();
        for (placeholder, path) in &self.given {
            t = t.replace(placeholder, path);
        }
        t
    }

    fn restore_bytes(&self, bytes: &[u8]) -> Vec<u8> {
        match std::str::from_utf8(bytes) {
            Ok(text) => self.restore(text).into_bytes(),
            Err(_) => {
                let mut b = bytes.to_vec();
                for (placeholder, path) in &self.given {
                    b = replace_bytes(&b, placeholder.as_bytes(), path.as_bytes());
                }
                b
            }
        }
    }
}

fn replace_bytes(hay: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    if from.is_empty() {
        return hay.to_vec();
    }
    let mut out = Vec::with_capacity(hay.len());
    let mut i = 0;
    while i < hay.len() {
        if hay[i..].starts_with(from) {
            out.extend_from_slice(to);
            i += from.len();
        } else {
            out.push(hay[i]);
            i += 1;
        }
    }
    out
}

/// One entry of a directory tree.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Node {
    Dir(u32),
    File(u32, Vec<u8>),
    Link(PathBuf),
}

/// The sandbox's tree, by path relative to it (Python's byte-code caches aside).
fn snapshot(root: &Path) -> BTreeMap<String, Node> {
    let mut tree = BTreeMap::new();
    walk(root, root, &mut tree);
    tree
}

fn walk(root: &Path, dir: &Path, tree: &mut BTreeMap<String, Node>) {
    for path in read_dir_sorted(dir) {
        if path.file_name() == Some(OsStr::new("__pycache__")) {
            continue;
        }
        let rel = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .to_string_lossy()
            .into_owned();
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        let mode = meta.permissions().mode() & 0o7777;
        if meta.file_type().is_symlink() {
            let target = std::fs::read_link(&path).unwrap_or_default();
            tree.insert(rel, Node::Link(target));
        } else if meta.is_dir() {
            tree.insert(rel, Node::Dir(mode));
            walk(root, &path, tree);
        } else if meta.is_file() {
            let content = std::fs::read(&path)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
            tree.insert(rel, Node::File(mode, content));
        }
    }
}

/// The key of a run: see the module's doc.
fn key(
    cmd: &Command,
    stdin: Option<&[u8]>,
    tree: &BTreeMap<String, Node>,
    paths: &Paths,
    versions: &str,
) -> String {
    let mut h = Sha256::new();
    let mut line = |s: &str| {
        h.update(s.as_bytes());
        h.update(b"\n");
    };
    let mut named = BTreeSet::new();
    line("sandball-e2e reference run 1");
    line(versions);
    line(&program(cmd));
    // The user the tests run as: files' owners and modes in results are theirs.
    let ids = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    for l in ids
        .lines()
        .filter(|l| l.starts_with("Uid:") || l.starts_with("Gid:"))
    {
        line(l);
    }
    for a in cmd.get_args() {
        let a = paths.normalize(&a.to_string_lossy());
        workspace_paths(&a, &mut named);
        line(&format!("arg {a}"));
    }
    let cwd = cmd
        .get_current_dir()
        .map(|d| paths.normalize(&d.display().to_string()));
    line(&format!("cwd {cwd:?}"));
    let mut set: BTreeMap<String, Option<String>> = BTreeMap::new();
    for (k, v) in cmd.get_envs() {
        set.insert(
            k.to_string_lossy().into_owned(),
            v.map(|v| paths.normalize(&v.to_string_lossy())),
        );
    }
    for (k, v) in std::env::vars() {
        let inherited = (k.starts_with("ANSIBLE_") && !k.ends_with("_BIN_DIR"))
            || k == "LANG"
            || k.starts_with("LC_");
        if inherited && !set.contains_key(&k) {
            set.insert(k, Some(paths.normalize(&v)));
        }
    }
    for (k, v) in &set {
        if let Some(v) = v {
            workspace_paths(v, &mut named);
        }
        line(&format!("env {k}={v:?}"));
    }
    if let Some(input) = stdin {
        let input = paths.normalize_bytes(input);
        workspace_paths(&String::from_utf8_lossy(&input), &mut named);
        line(&format!("stdin {}", digest(&input)));
    }
    for (path, node) in tree {
        match node {
            Node::Dir(mode) => line(&format!("dir {path} {mode:o}")),
            Node::File(mode, content) => {
                let content = paths.normalize_bytes(content);
                workspace_paths(&String::from_utf8_lossy(&content), &mut named);
                line(&format!("file {path} {mode:o} {}", digest(&content)));
            }
            Node::Link(target) => line(&format!(
                "link {path} {}",
                paths.normalize(&target.display().to_string())
            )),
        }
    }
    // The workspace's files that the run was pointed at (fixtures, inventories).
    let root = workspace_root();
    for rel in named {
        let path = root.join(&rel);
        if path.is_dir() {
            for (p, node) in snapshot(&path) {
                if let Node::File(_, content) = node {
                    line(&format!(
                        "workspace {rel}/{p} {}",
                        digest(&paths.normalize_bytes(&content))
                    ));
                }
            }
        } else if let Ok(content) = std::fs::read(&path) {
            line(&format!(
                "workspace {rel} {}",
                digest(&paths.normalize_bytes(&content))
            ));
        }
    }
    let full = h.finalize();
    hex::encode(&full[..16])
}

/// Paths in the workspace that `text` names (`@WORKSPACE@/…`), build output aside.
fn workspace_paths(text: &str, found: &mut BTreeSet<String>) {
    for (i, _) in text.match_indices("@WORKSPACE@/") {
        let rest = &text[i + "@WORKSPACE@/".len()..];
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || "._-/".contains(c)))
            .unwrap_or(rest.len());
        let rel = rest[..end].trim_end_matches(['/', '.']);
        if !rel.is_empty() && !rel.starts_with("target") && !rel.contains("..") {
            found.insert(rel.to_string());
        }
    }
}

fn digest(bytes: &[u8]) -> String {
    hex::encode(&Sha256::digest(bytes)[..16])
}

/// What a run changed in the sandbox, in the order a replay makes the changes.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Change {
    Removed(String),
    Made(String, Node),
}

fn changes(
    before: &BTreeMap<String, Node>,
    after: &BTreeMap<String, Node>,
    paths: &Paths,
) -> Vec<Change> {
    let mut removed: Vec<String> = Vec::new();
    for (path, node) in before {
        let gone = match after.get(path) {
            None => true,
            Some(now) => std::mem::discriminant(now) != std::mem::discriminant(node),
        };
        // A removed directory's contents go with it.
        if gone && !removed.iter().any(|r| path.starts_with(&format!("{r}/"))) {
            removed.push(path.clone());
        }
    }
    let mut out: Vec<Change> = removed.into_iter().map(Change::Removed).collect();
    for (path, node) in after {
        if before.get(path) != Some(node) {
            let node = match node {
                Node::File(mode, content) => Node::File(*mode, paths.normalize_bytes(content)),
                Node::Link(target) => Node::Link(PathBuf::from(
                    paths.normalize(&target.display().to_string()),
                )),
                dir => dir.clone(),
            };
            out.push(Change::Made(path.clone(), node));
        }
    }
    out
}

/// One recorded run.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Entry {
    summary: String,
    key: String,
    code: i32,
    stdout: String,
    stderr: String,
    changes: Vec<Change>,
}

impl Entry {
    /// Makes the recorded changes in `sandbox`.
    fn apply(&self, sandbox: &Path, paths: &Paths) {
        for change in &self.changes {
            match change {
                Change::Removed(rel) => {
                    let p = sandbox.join(rel);
                    let _ = std::fs::remove_dir_all(&p).or_else(|_| std::fs::remove_file(&p));
                }
                Change::Made(rel, node) => {
                    let p = sandbox.join(rel);
                    let fail =
                        |e: std::io::Error| panic!("replay: cannot make {}: {e}", p.display());
                    match node {
                        Node::Dir(mode) => {
                            std::fs::create_dir_all(&p).unwrap_or_else(fail);
                            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(*mode))
                                .unwrap_or_else(fail);
                        }
                        Node::File(mode, content) => {
                            if let Some(parent) = p.parent() {
                                std::fs::create_dir_all(parent).unwrap_or_else(fail);
                            }
                            std::fs::write(&p, paths.restore_bytes(content)).unwrap_or_else(fail);
                            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(*mode))
                                .unwrap_or_else(fail);
                        }
                        Node::Link(target) => {
                            let _ = std::fs::remove_file(&p);
                            let target = paths.restore(&target.display().to_string());
                            std::os::unix::fs::symlink(target, &p).unwrap_or_else(fail);
                        }
                    }
                }
            }
        }
    }

    /// The entry as written in a recordings file.
    fn to_text(&self) -> String {
        let mut t = String::new();
        let _ = writeln!(t, "=== {}", self.summary);
        let _ = writeln!(t, "key {}", self.key);
        let _ = writeln!(t, "exit {}", self.code);
        block(&mut t, "stdout", self.stdout.as_bytes());
        block(&mut t, "stderr", self.stderr.as_bytes());
        for change in &self.changes {
            match change {
                Change::Removed(p) => {
                    let _ = writeln!(t, "removed {p}");
                }
                Change::Made(p, Node::Dir(mode)) => {
                    let _ = writeln!(t, "dir {mode:o} {p}");
                }
                Change::Made(p, Node::Link(target)) => {
                    let _ = writeln!(t, "link {p}\t{}", target.display());
                }
                Change::Made(p, Node::File(mode, content)) => {
                    block(&mut t, &format!("file {mode:o} {p}"), content);
                }
            }
        }
        t.push_str("end\n");
        t
    }
}

/// `NAME N` and N lines (`NAME N noeol` when the last has no newline; `NAME hex` and one
/// line of hexadecimal for bytes that are not UTF-8).
fn block(t: &mut String, name: &str, bytes: &[u8]) {
    match std::str::from_utf8(bytes) {
        Ok(text) => {
            let n = text.lines().count();
            let noeol = !text.is_empty() && !text.ends_with('\n');
            let _ = writeln!(t, "{name} {n}{}", if noeol { " noeol" } else { "" });
            for l in text.lines() {
                t.push_str(l);
                t.push('\n');
            }
        }
        Err(_) => {
            let _ = writeln!(t, "{name} hex");
            t.push_str(&hex::encode(bytes));
            t.push('\n');
        }
    }
}

/// Parses a recordings file: its entries, in order.
fn parse(text: &str, file: &Path) -> Vec<Entry> {
    let bad = |n: usize, why: &str| -> ! {
        panic!(
            "{}:{}: {why} (`make test-recordings` writes these files anew)",
            file.display(),
            n + 1
        )
    };
    let lines: Vec<&str> = text.split('\n').collect();
    let mut i = 0;
    let mut entries = Vec::new();
    // Reads a block whose header (without the name) is `spec`.
    let read_block = |i: &mut usize, spec: &str| -> Vec<u8> {
        if spec == "hex" {
            let bytes = hex::decode(lines.get(*i).copied().unwrap_or(""))
                .unwrap_or_else(|_| bad(*i, "not hexadecimal"));
            *i += 1;
            return bytes;
        }
        let (n, noeol) = match spec.strip_suffix(" noeol") {
            Some(n) => (n, true),
            None => (spec, false),
        };
        let n: usize = n.parse().unwrap_or_else(|_| bad(*i, "not a line count"));
        if *i + n > lines.len() {
            bad(*i, "the file ends inside a block");
        }
        let mut text = lines[*i..*i + n].join("\n");
        if n > 0 && !noeol {
            text.push('\n');
        }
        *i += n;
        text.into_bytes()
    };
    while i < lines.len() {
        let l = lines[i];
        if l.is_empty() || l.starts_with('#') {
            i += 1;
            continue;
        }
        let Some(summary) = l.strip_prefix("=== ") else {
            bad(i, "expected `=== command`");
        };
        i += 1;
        let field = |i: &mut usize, name: &str| -> String {
            let v = lines
                .get(*i)
                .and_then(|l| l.strip_prefix(name))
                .and_then(|l| l.strip_prefix(' '))
                .unwrap_or_else(|| bad(*i, &format!("expected `{name}`")));
            *i += 1;
            v.to_string()
        };
        let key = field(&mut i, "key");
        let code = field(&mut i, "exit")
            .parse()
            .unwrap_or_else(|_| bad(i - 1, "not an exit code"));
        let spec = field(&mut i, "stdout");
        let stdout = String::from_utf8_lossy(&read_block(&mut i, &spec)).into_owned();
        let spec = field(&mut i, "stderr");
        let stderr = String::from_utf8_lossy(&read_block(&mut i, &spec)).into_owned();
        let mut changes = Vec::new();
        loop {
            let l = lines
                .get(i)
                .copied()
                .unwrap_or_else(|| bad(i, "expected `end`"));
            i += 1;
            if l == "end" {
                break;
            } else if let Some(p) = l.strip_prefix("removed ") {
                changes.push(Change::Removed(p.to_string()));
            } else if let Some(rest) = l.strip_prefix("dir ") {
                let (mode, p) = rest
                    .split_once(' ')
                    .unwrap_or_else(|| bad(i - 1, "dir MODE PATH"));
                let mode = u32::from_str_radix(mode, 8).unwrap_or_else(|_| bad(i - 1, "mode"));
                changes.push(Change::Made(p.to_string(), Node::Dir(mode)));
            } else if let Some(rest) = l.strip_prefix("link ") {
                let (p, target) = rest
                    .split_once('\t')
                    .unwrap_or_else(|| bad(i - 1, "link PATH\\tTARGET"));
                changes.push(Change::Made(
                    p.to_string(),
                    Node::Link(PathBuf::from(target)),
                ));
            } else if let Some(rest) = l.strip_prefix("file ") {
                let (mode, rest) = rest
                    .split_once(' ')
                    .unwrap_or_else(|| bad(i - 1, "file MODE PATH N"));
                let mode = u32::from_str_radix(mode, 8).unwrap_or_else(|_| bad(i - 1, "mode"));
                // The path may hold spaces: the count (and `noeol`/`hex`) ends the line.
                let (p, spec) = match rest.strip_suffix(" noeol") {
                    Some(r) => {
                        let (p, n) = r
                            .rsplit_once(' ')
                            .unwrap_or_else(|| bad(i - 1, "file count"));
                        (p, format!("{n} noeol"))
                    }
                    None => {
                        let (p, n) = rest
                            .rsplit_once(' ')
                            .unwrap_or_else(|| bad(i - 1, "file count"));
                        (p, n.to_string())
                    }
                };
                let content = read_block(&mut i, &spec);
                changes.push(Change::Made(p.to_string(), Node::File(mode, content)));
            } else {
                bad(i - 1, "expected a change or `end`");
            }
        }
        entries.push(Entry {
            summary: summary.to_string(),
            key,
            code,
            stdout,
            stderr,
            changes,
        });
    }
    entries
}

/// The recorded entry for `key` in `file`: the first one not yet replayed in this
/// process (a test that runs the very same command twice replays both in order).
fn take_recorded(file: &Path, key: &str) -> Option<Entry> {
    static LOADED: Mutex<BTreeMap<PathBuf, Vec<Entry>>> = Mutex::new(BTreeMap::new());
    static USED: OnceLock<Mutex<HashMap<(PathBuf, String), usize>>> = OnceLock::new();
    let mut loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
    let entries = loaded.entry(file.to_path_buf()).or_insert_with(|| {
        std::fs::read_to_string(file)
            .map(|text| parse(&text, file))
            .unwrap_or_default()
    });
    let matching: Vec<&Entry> = entries.iter().filter(|e| e.key == key).collect();
    let mut used = USED
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let n = used
        .entry((file.to_path_buf(), key.to_string()))
        .or_insert(0);
    let entry = matching.get(*n).or(matching.last()).map(|e| (*e).clone());
    *n += 1;
    entry
}

/// Adds an entry to a test's recordings file, which holds what this process recorded.
fn append(file: &Path, entry: &Entry, sorted: bool) {
    static WRITTEN: Mutex<BTreeMap<PathBuf, Vec<Entry>>> = Mutex::new(BTreeMap::new());
    let mut written = WRITTEN.lock().unwrap_or_else(|e| e.into_inner());
    let entries = written.entry(file.to_path_buf()).or_default();
    entries.push(entry.clone());
    // Answers asked from several threads are kept in an order of their own, so that
    // recording again changes only what changed.
    if sorted {
        entries.sort_by(|a, b| a.summary.cmp(&b.summary).then(a.key.cmp(&b.key)));
    }
    if let Some(parent) = file.parent() {
        std::fs::create_dir_all(parent)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", parent.display()));
    }
    let mut text = format!(
        "# ansible-core's runs in this test, recorded by `make test-recordings` ({DIR}/versions.txt)\n"
    );
    for e in entries.iter() {
        text.push_str(&e.to_text());
    }
    std::fs::write(file, text).unwrap_or_else(|e| panic!("cannot write {}: {e}", file.display()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_running_test_is_named() {
        assert_eq!(
            test_name().as_deref(),
            Some("recording::tests::the_running_test_is_named")
        );
    }

    #[test]
    fn a_commands_times_and_temporary_names_are_masked() {
        let live = r#"ok: [h] => {"delta": "0:00:00.01", "end": "2026-01-01 10:00:00.1", "rc": 0}"#;
        assert_eq!(
            masked(live),
            r#"ok: [h] => {"delta": "…", "end": "…", "rc": 0}"#
        );
        assert_eq!(masked("  start: 2026-01-01 x\n"), "  start: …\n");
        assert_eq!(
            masked("+++ after: /s/ansible-local/ansible-local-12ab_c/tmpy4y650vz/t.j2"),
            "+++ after: /s/ansible-local/ansible-local-…/tmp…/t.j2"
        );
    }

    #[test]
    fn a_listed_module_covers_its_tests_and_a_name_only_itself() {
        let list = "# comment\nfind::\nmeta::one # why\n-find::b # not that one\n";
        assert!(listed(list, "find::a"));
        assert!(!listed(list, "find::b"));
        assert!(listed(list, "meta::one"));
        assert!(!listed(list, "meta::one_more"));
        assert!(!listed(list, "finder::a"));
    }

    #[test]
    fn entries_read_back_as_written() {
        let entry = Entry {
            summary: "ansible-playbook -i @SANDBOX@/inventory.ini".into(),
            key: "00ff".into(),
            code: 2,
            stdout: "a\n\nb\n".into(),
            stderr: "no newline".into(),
            changes: vec![
                Change::Removed("old".into()),
                Change::Made("work".into(), Node::Dir(0o755)),
                Change::Made("work/a b.txt".into(), Node::File(0o644, b"x\ny".to_vec())),
                Change::Made("work/empty".into(), Node::File(0o600, Vec::new())),
                Change::Made("work/bin".into(), Node::File(0o600, vec![0xff, 0])),
                Change::Made("work/l".into(), Node::Link("@SANDBOX@/x".into())),
            ],
        };
        let text = format!("# c\n{}{}", entry.to_text(), entry.to_text());
        let back = parse(&text, Path::new("t.txt"));
        assert_eq!(back, vec![entry.clone(), entry]);
    }

    #[test]
    fn changes_name_what_a_run_made_and_removed() {
        let paths = Paths {
            pairs: vec![("/s".into(), "@SANDBOX@")],
            given: vec![("@SANDBOX@", "/s".into())],
        };
        let before = BTreeMap::from([
            ("a".to_string(), Node::Dir(0o755)),
            ("a/x".to_string(), Node::File(0o644, b"1".to_vec())),
            ("b".to_string(), Node::File(0o644, b"/s/b".to_vec())),
        ]);
        let after = BTreeMap::from([
            ("b".to_string(), Node::File(0o644, b"/s/c".to_vec())),
            ("c".to_string(), Node::Dir(0o700)),
        ]);
        assert_eq!(
            changes(&before, &after, &paths),
            vec![
                Change::Removed("a".into()),
                Change::Made("b".into(), Node::File(0o644, b"@SANDBOX@/c".to_vec())),
                Change::Made("c".into(), Node::Dir(0o700)),
            ]
        );
    }
}
