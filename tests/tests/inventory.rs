//! Differential tests of `sandball inventory` against `ansible-inventory`: every case of
//! the corpus in `tests/inventories/` (see its README) is read by both, and what they print
//! must be the same data: `--list`, `--list --export`, `--graph --vars`, `--host` for the
//! case's hosts, `--list --yaml` when asked, and for each pattern the hosts
//! `ansible PATTERN --list-hosts` prints. JSON is compared parsed, without `_meta.profile`
//! and with Ansible's `__ansible_unsafe` wrappers removed; a command that fails must fail
//! in both with the same exit code (errors are compared by kind, not wording).
//!
//! ansible-inventory takes about a second a call, so the calls run on a few threads, and
//! its answers are recorded in `tests/recordings/inventory/` (`make test-recordings`),
//! keyed by the case's files, the command and ansible-core's version, so a run asks
//! again only what changed.

use sandball_e2e::binaries::{target_dir, workspace_root};
use sandball_e2e::{Binaries, Output, recording};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

/// The `warns` texts ansible printed, by case: each must be seen at least once.
static WARNED: Mutex<std::collections::BTreeSet<(String, String)>> =
    Mutex::new(std::collections::BTreeSet::new());

/// One case: a directory and what its `case.txt` file asks for.
#[derive(Debug, Default, Clone)]
struct Case {
    name: String,
    dir: PathBuf,
    sources: Vec<String>,
    hosts: Vec<String>,
    patterns: Vec<String>,
    /// Patterns listed under a `--limit`: (pattern, limit).
    limited: Vec<(String, String)>,
    limits: Vec<String>,
    env: Vec<(String, String)>,
    extra: Vec<String>,
    yaml: bool,
    /// Text both tools must print on stderr (a warning's stable part).
    warns: Vec<String>,
    /// Whether both must fail to load.
    fails: bool,
}

/// Reads `dir/case.txt` (a `.txt` file, which inventory directories skip): `key: value` lines (`source`, `host`, `pattern`, `pattern-limit`, `limit`, `env`,
/// `arg`, `warns`, `yaml: true`, `fails: true`); `#` starts a comment line.
fn read_case(dir: &Path) -> Case {
    let spec = std::fs::read_to_string(dir.join("case.txt")).unwrap();
    let mut case = Case {
        name: dir.file_name().unwrap().to_string_lossy().into_owned(),
        dir: dir.to_path_buf(),
        ..Case::default()
    };
    for line in spec.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (key, value) = line
            .split_once(':')
            .unwrap_or_else(|| panic!("{}: bad line {line:?}", case.name));
        let value = value.trim().to_string();
        match key.trim() {
            "source" => case.sources.push(value),
            "host" => case.hosts.push(value),
            "pattern" => case.patterns.push(value),
            "pattern-limit" => {
                let (p, l) = value
                    .split_once(char::is_whitespace)
                    .unwrap_or_else(|| panic!("{}: pattern-limit needs two words", case.name));
                case.limited.push((p.to_string(), l.trim().to_string()));
            }
            "limit" => case.limits.push(value),
            "arg" => case.extra.push(value),
            "warns" => case.warns.push(value),
            "env" => {
                let (k, v) = value.split_once('=').unwrap();
                case.env.push((k.to_string(), v.to_string()));
            }
            "yaml" => case.yaml = value == "true",
            "fails" => case.fails = value == "true",
            other => panic!("{}: unknown key {other}", case.name),
        }
    }
    assert!(!case.sources.is_empty(), "{}: no source", case.name);
    case
}

/// Where ansible-core is, if the tests may compare with it.
fn ansible_bin_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("ANSIBLE_BIN_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| target_dir().join("venv/bin"));
    if dir.join("ansible-inventory").is_file() {
        return Some(dir);
    }
    assert!(
        std::env::var_os("ANSIBLE_BIN_DIR").is_none(),
        "ANSIBLE_BIN_DIR is set but holds no ansible-inventory; run `make ansible`"
    );
    eprintln!(
        "skipping the comparison with ansible-inventory: no target/venv and ANSIBLE_BIN_DIR \
         is unset (`make test` installs ansible-core and sets it)"
    );
    None
}

/// One command to run the same way with both tools.
#[derive(Clone, Debug)]
struct Query {
    /// What is compared and how.
    kind: Kind,
    /// Arguments after the sources.
    args: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Json,
    Yaml,
    Text,
    ListHosts,
}

fn queries(case: &Case) -> Vec<Query> {
    let q = |kind, args: &[&str]| Query {
        kind,
        args: args.iter().map(|a| a.to_string()).collect(),
    };
    let mut out = vec![
        q(Kind::Json, &["--list"]),
        q(Kind::Json, &["--list", "--export"]),
        q(Kind::Text, &["--graph", "--vars"]),
    ];
    if case.fails {
        out.truncate(1);
    }
    if case.yaml {
        out.push(q(Kind::Yaml, &["--list", "--yaml"]));
    }
    for h in &case.hosts {
        out.push(q(Kind::Json, &["--host", h]));
    }
    for l in &case.limits {
        out.push(q(Kind::Json, &["--list", "--limit", l]));
    }
    for p in &case.patterns {
        out.push(q(Kind::ListHosts, &[p]));
    }
    for (p, l) in &case.limited {
        out.push(q(Kind::ListHosts, &[p, "--limit", l]));
    }
    out
}

/// The oracle's answer: exit code, stdout, stderr — recorded in
/// `tests/recordings/inventory/` and replayed while the case's files, the command and
/// ansible-core are the same (`sandball_e2e::recording::answer`). Cases without
/// environment of their own are answered by `server` (one Python process that imported
/// ansible-core once and forks for each query); the others by a fresh process, because
/// ansible-core reads its environment when it is imported.
fn oracle(
    bin: &Path,
    case: &Case,
    query: &Query,
    server: &mut Option<ForkServer>,
) -> (i32, String, String) {
    let (tool, args) = oracle_command(case, query);
    let program = bin.join(tool);
    let inputs = [
        format!("tool {tool}"),
        format!("args {args:?}"),
        format!("env {:?}", case.env),
        format!("dir {}", case.dir.display()),
        format!("files {}", recording::tree_digest(&case.dir, bin)),
    ];
    let summary = format!(
        "{tool} {} (in tests/inventories/{})",
        args.join(" "),
        case.name
    );
    recording::answer(bin, &summary, &inputs, || {
        if case.env.is_empty() {
            server
                .get_or_insert_with(|| ForkServer::start(bin))
                .ask(tool, &args, &case.dir)
        } else {
            let home = tempfile::tempdir().unwrap();
            let mut cmd = Command::new(&program);
            cmd.args(&args).current_dir(&case.dir);
            oracle_env(&mut cmd, home.path());
            for (k, v) in &case.env {
                cmd.env(k, v);
            }
            let out = Output::run(cmd, Duration::from_secs(120));
            (out.code, out.stdout, out.stderr)
        }
    })
}

/// The ansible tool and its arguments for `query` on `case`.
fn oracle_command(case: &Case, query: &Query) -> (&'static str, Vec<String>) {
    let mut args = Vec::new();
    let tool = if query.kind == Kind::ListHosts {
        args.push(query.args[0].clone());
        args.push("--list-hosts".to_string());
        for s in &case.sources {
            args.extend(["-i".to_string(), s.clone()]);
        }
        args.extend(query.args[1..].iter().cloned());
        "ansible"
    } else {
        for s in &case.sources {
            args.extend(["-i".to_string(), s.clone()]);
        }
        args.extend(query.args.iter().cloned());
        "ansible-inventory"
    };
    args.extend(case.extra.iter().cloned());
    (tool, args)
}

/// The environment every oracle call gets: an empty configuration and a private home.
fn oracle_env(cmd: &mut Command, home: &Path) {
    let config = home.join("ansible.cfg");
    std::fs::write(&config, "[defaults]\n").unwrap();
    cmd.env("ANSIBLE_CONFIG", &config)
        .env("ANSIBLE_HOME", home)
        .env("ANSIBLE_LOCAL_TEMP", home.join("tmp"))
        .env("ANSIBLE_NOCOLOR", "1")
        .env("ANSIBLE_DEPRECATION_WARNINGS", "0");
}

/// What the fork server runs: it imports ansible's command-line classes once, then for
/// each request line (JSON: tool, arguments, directory, output files) forks a child that
/// runs the command as the tool's own script would, and answers with the exit code.
const FORK_SERVER: &str = r#"
import json, os, signal, sys
from ansible.cli.adhoc import AdHocCLI
from ansible.cli.inventory import InventoryCLI
tools = {"ansible": AdHocCLI, "ansible-inventory": InventoryCLI}
for line in sys.stdin:
    req = json.loads(line)
    pid = os.fork()
    if pid == 0:
        code = 250
        try:
            signal.alarm(120)
            os.chdir(req["dir"])
            null = os.open(os.devnull, os.O_RDONLY)
            out = os.open(req["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            err = os.open(req["err"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(null, 0); os.dup2(out, 1); os.dup2(err, 2)
            sys.argv = [req["tool"]] + req["args"]
            tools[req["tool"]].cli_executor(sys.argv)
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        finally:
            try:
                sys.stdout.flush(); sys.stderr.flush()
            finally:
                os._exit(code)
    _, status = os.waitpid(pid, 0)
    print(os.waitstatus_to_exitcode(status), flush=True)
"#;

/// A Python process with ansible-core imported that answers oracle queries (about a
/// second saved on each: most of an ansible command's time is importing ansible).
struct ForkServer {
    child: std::process::Child,
    requests: std::process::ChildStdin,
    answers: std::io::BufReader<std::process::ChildStdout>,
    home: tempfile::TempDir,
}

impl ForkServer {
    fn start(bin: &Path) -> ForkServer {
        let home = tempfile::tempdir().unwrap();
        // The interpreter the tools' scripts name, so that the implicit localhost's
        // `ansible_python_interpreter` is the one `normalize` expects.
        let mut cmd = Command::new(oracle_python(bin));
        cmd.args(["-c", FORK_SERVER])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped());
        oracle_env(&mut cmd, home.path());
        let mut child = cmd.spawn().unwrap();
        ForkServer {
            requests: child.stdin.take().unwrap(),
            answers: std::io::BufReader::new(child.stdout.take().unwrap()),
            child,
            home,
        }
    }

    fn ask(&mut self, tool: &str, args: &[String], dir: &Path) -> (i32, String, String) {
        use std::io::{BufRead, Write};
        let out = self.home.path().join("stdout");
        let err = self.home.path().join("stderr");
        let request = serde_json::json!({
            "tool": tool, "args": args, "dir": dir, "out": out, "err": err,
        });
        writeln!(self.requests, "{request}").unwrap();
        self.requests.flush().unwrap();
        let mut line = String::new();
        self.answers.read_line(&mut line).unwrap();
        let code: i32 = line
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("the ansible fork server died ({line:?})"));
        let read = |p: &Path| String::from_utf8_lossy(&std::fs::read(p).unwrap()).into_owned();
        (code, read(&out), read(&err))
    }
}

impl Drop for ForkServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The Python the oracle's scripts run: the implicit localhost's interpreter.
fn oracle_python(bin: &Path) -> String {
    let real = std::fs::canonicalize(bin).unwrap_or_else(|_| bin.to_path_buf());
    real.join("python3").display().to_string()
}

/// `sandball inventory` for a case, its controller's Python the oracle's (the implicit
/// localhost's interpreter is the controller's, in both).
fn sandball(case: &Case, query: &Query, python: &str) -> Output {
    let mut cmd = Command::new(&Binaries::get().sandball);
    cmd.arg("inventory").env("SANDBALL_ANSIBLE_PYTHON", python);
    for s in &case.sources {
        cmd.arg("-i").arg(s);
    }
    if query.kind == Kind::ListHosts {
        cmd.arg("--list-hosts").args(&query.args);
    } else {
        cmd.args(&query.args);
    }
    cmd.args(&case.extra).current_dir(&case.dir);
    for (k, v) in &case.env {
        cmd.env(k, v);
    }
    Output::run(cmd, Duration::from_secs(60))
}

/// JSON without what the comparison ignores.
fn normalize(value: Value, python: &str) -> Value {
    match value {
        Value::Object(mut map) => {
            if map.len() == 1
                && let Some(inner) = map.remove("__ansible_unsafe")
            {
                return normalize(inner, python);
            }
            if let Some(Value::Object(meta)) = map.get_mut("_meta") {
                meta.remove("profile");
            }
            // The implicit localhost's interpreter is the Python running ansible itself.
            if map
                .get("ansible_python_interpreter")
                .and_then(Value::as_str)
                == Some(python)
            {
                map.remove("ansible_python_interpreter");
            }
            Value::Object(
                map.into_iter()
                    .map(|(k, v)| (k, normalize(v, python)))
                    .collect(),
            )
        }
        Value::Array(items) => {
            Value::Array(items.into_iter().map(|v| normalize(v, python)).collect())
        }
        other => other,
    }
}

fn parse(kind: Kind, text: &str, bin: &Path, what: &str) -> Result<Value, String> {
    let python = oracle_python(bin);
    Ok(match kind {
        Kind::Json => normalize(
            serde_json::from_str(text).map_err(|e| format!("{what}: not JSON ({e}):\n{text}"))?,
            &python,
        ),
        Kind::Yaml => {
            let mut child = Command::new(bin.join("python"))
                .args([
                    "-c",
                    "import sys, json, yaml; print(json.dumps(yaml.safe_load(sys.stdin), default=lambda o: o.isoformat()))",
                ])
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            std::io::Write::write_all(child.stdin.as_mut().unwrap(), text.as_bytes()).unwrap();
            drop(child.stdin.take());
            let out = child.wait_with_output().unwrap();
            if !out.status.success() {
                return Err(format!("{what}: not YAML:\n{text}"));
            }
            normalize(
                serde_json::from_slice(&out.stdout)
                    .map_err(|e| format!("{what}: YAML not JSON-compatible ({e}):\n{text}"))?,
                &python,
            )
        }
        Kind::Text | Kind::ListHosts => Value::String(text.trim_end().to_string()),
    })
}

/// Compares one query; returns a description of the difference, if any.
fn compare(
    bin: &Path,
    case: &Case,
    query: &Query,
    server: &mut Option<ForkServer>,
) -> Option<String> {
    let (code, out, err) = oracle(bin, case, query, server);
    let ours = sandball(case, query, &oracle_python(bin));
    let what = format!("case {} `{}`", case.name, query.args.join(" "));
    if ours.stderr.contains("panicked") {
        return Some(format!("{what}: sandball panicked:\n{}", ours.stderr));
    }
    if (code == 0) != (ours.code == 0) {
        return Some(format!(
            "{what}: ansible exited {code}, sandball {}\nansible stderr:\n{err}\nsandball stderr:\n{}\nsandball stdout:\n{}",
            ours.code, ours.stderr, ours.stdout
        ));
    }
    if case.fails && code == 0 {
        return Some(format!(
            "{what}: the case should fail but ansible accepted it"
        ));
    }
    if code != 0 {
        // Errors are compared by kind: Ansible's exit code says which (1 an error, 4 a
        // parser error, 5 an option error).
        return (code != ours.code).then(|| {
            format!(
                "{what}: ansible exited {code}, sandball {}\nansible stderr:\n{err}\nsandball stderr:\n{}",
                ours.code, ours.stderr
            )
        });
    }
    for w in &case.warns {
        if err.contains(w.as_str()) {
            WARNED
                .lock()
                .unwrap()
                .insert((case.name.clone(), w.clone()));
            if !ours.stderr.contains(w.as_str()) {
                return Some(format!(
                    "{what}: ansible warns {w:?}, sandball does not\nansible stderr:\n{err}\nsandball stderr:\n{}",
                    ours.stderr
                ));
            }
        }
    }
    let theirs = match parse(query.kind, &out, bin, &format!("{what} (ansible)")) {
        Ok(v) => v,
        Err(e) => return Some(e),
    };
    let mine = match parse(query.kind, &ours.stdout, bin, &format!("{what} (sandball)")) {
        Ok(v) => v,
        Err(e) => return Some(e),
    };
    (theirs != mine).then(|| {
        let show = |v: &Value| match v {
            Value::String(s) => s.clone(),
            v => serde_json::to_string_pretty(v).unwrap(),
        };
        format!(
            "{what}: outputs differ\n--- ansible\n{}\n--- sandball\n{}\nsandball stderr:\n{}",
            show(&theirs),
            show(&mine),
            ours.stderr
        )
    })
}

#[test]
fn sandball_inventory_prints_what_ansible_inventory_prints() {
    let Some(bin) = ansible_bin_dir() else {
        return;
    };
    let root = workspace_root().join("tests/inventories");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("case.txt").is_file())
        .collect();
    dirs.sort();
    let only = std::env::var("INVENTORY_CASE").ok();
    let work: Vec<(Case, Query)> = dirs
        .iter()
        .map(|d| read_case(d))
        .filter(|c| only.as_deref().is_none_or(|o| c.name == o))
        .flat_map(|c| queries(&c).into_iter().map(move |q| (c.clone(), q)))
        .collect();
    assert!(
        !work.is_empty(),
        "no inventory cases under {}",
        root.display()
    );
    let queue = Mutex::new(work.into_iter());
    let failures = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(2, 4);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                let mut server = None;
                loop {
                    let next = queue.lock().unwrap().next();
                    let Some((case, query)) = next else { break };
                    if let Some(f) = compare(&bin, &case, &query, &mut server) {
                        failures.lock().unwrap().push(f);
                    }
                }
            });
        }
    });
    let mut failures = failures.into_inner().unwrap();
    let warned = WARNED.lock().unwrap();
    for case in dirs.iter().map(|d| read_case(d)) {
        if only.as_deref().is_some_and(|o| case.name != o) {
            continue;
        }
        for w in &case.warns {
            if !warned.contains(&(case.name.clone(), w.clone())) {
                failures.push(format!(
                    "case {}: ansible never warned {w:?}; the case does not test what it says",
                    case.name
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} difference(s):\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// Writes an executable shell script.
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn sandball_inventory(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(&Binaries::get().sandball);
    cmd.arg("inventory").args(args).current_dir(dir);
    for (k, v) in env {
        cmd.env(k, v);
    }
    Output::run(cmd, Duration::from_secs(60))
}

#[test]
fn script_results_are_cached_when_asked_and_refreshed_by_flush_cache() {
    let dir = tempfile::tempdir().unwrap();
    let calls = dir.path().join("calls");
    script(
        dir.path(),
        "inv.sh",
        &format!(
            "echo \"$1\" >> {}\necho '{{\"web\": [\"w1\"], \"_meta\": {{\"hostvars\": {{}}}}}}'\n",
            calls.display()
        ),
    );
    let cache = dir.path().join("cache");
    let cache = cache.to_str().unwrap();
    let count = || {
        std::fs::read_to_string(&calls)
            .unwrap_or_default()
            .lines()
            .count()
    };
    let list = ["-i", "inv.sh", "--list"];
    let on = [
        ("ANSIBLE_INVENTORY_CACHE", "true"),
        ("ANSIBLE_INVENTORY_CACHE_CONNECTION", cache),
    ];
    sandball_inventory(dir.path(), &list, &[]).assert_code(0);
    sandball_inventory(dir.path(), &list, &[]).assert_code(0);
    assert_eq!(count(), 2, "without the cache every run asks the script");
    let first = sandball_inventory(dir.path(), &list, &on);
    first.assert_code(0).assert_stdout_has("\"w1\"");
    assert_eq!(count(), 3);
    let cached = sandball_inventory(dir.path(), &list, &on);
    assert_eq!(count(), 3, "a fresh cache entry is used");
    assert_eq!(cached.stdout, first.stdout);
    sandball_inventory(
        dir.path(),
        &["-i", "inv.sh", "--list", "--flush-cache"],
        &on,
    )
    .assert_code(0);
    assert_eq!(count(), 4, "--flush-cache asks again");
    let expired = [
        ("ANSIBLE_INVENTORY_CACHE", "true"),
        ("ANSIBLE_INVENTORY_CACHE_CONNECTION", cache),
        ("ANSIBLE_INVENTORY_CACHE_TIMEOUT", "1"),
    ];
    std::thread::sleep(Duration::from_millis(2100));
    sandball_inventory(dir.path(), &list, &expired).assert_code(0);
    assert_eq!(count(), 5, "an expired entry is not used");
}

#[test]
fn a_script_that_hangs_is_stopped_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    script(
        dir.path(),
        "slow.sh",
        "echo 'still thinking' >&2\nsleep 30\n",
    );
    let out = sandball_inventory(
        dir.path(),
        &["-i", "slow.sh", "--list", "--strict"],
        &[("SANDBALL_INVENTORY_SCRIPT_TIMEOUT", "1")],
    );
    out.assert_code(1)
        .assert_stderr_has("did not finish within 1 seconds")
        .assert_stderr_has("still thinking");
    assert!(out.elapsed < Duration::from_secs(20), "{:?}", out.elapsed);
}

#[test]
fn meta_refresh_inventory_reads_the_sources_again() {
    let sb = sandball_e2e::Sandbox::new();
    let count = sb.path().join("count");
    script(
        sb.path(),
        "inv.sh",
        &format!(
            "n=$(cat {c} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {c}\n\
             echo \"{{\\\"nodes\\\": {{\\\"hosts\\\": [\\\"h1\\\"], \\\"vars\\\": {{\\\"ansible_connection\\\": \\\"local\\\", \\\"version\\\": $n}}}}, \\\"_meta\\\": {{\\\"hostvars\\\": {{}}}}}}\"\n",
            c = count.display()
        ),
    );
    let play = sb.write(
        "play.yml",
        "- hosts: all\n  gather_facts: false\n  tasks:\n    - debug:\n        var: version\n    - meta: refresh_inventory\n    - debug:\n        var: version\n",
    );
    let out = sb
        .sandball(["playbook", "-i", "inv.sh", play.to_str().unwrap()])
        .run();
    out.assert_no_panic().assert_code(0);
    let first = out
        .stdout
        .find("\"version\": 1")
        .unwrap_or_else(|| panic!("{out}"));
    let second = out
        .stdout
        .find("\"version\": 2")
        .unwrap_or_else(|| panic!("{out}"));
    assert!(first < second, "{out}");
    if let Some(theirs) = sb.ansible_playbook(["-i", "inv.sh", play.to_str().unwrap()]) {
        std::fs::remove_file(&count).unwrap();
        let theirs = theirs.run();
        theirs.assert_code(0);
        assert!(theirs.stdout.contains("\"version\": 2"), "{theirs}");
    }
}

#[test]
fn unsafe_values_reach_templates_as_plain_text_and_never_run() {
    let sb = sandball_e2e::Sandbox::new();
    let touched = sb.path().join("touched");
    let lookup = format!("{{{{ lookup('pipe', 'touch {}') }}}}", touched.display());
    sb.write(
        "inv.yml",
        &format!(
            "all:\n  hosts:\n    h1:\n      ansible_connection: local\n      from_inv: !unsafe \"{lookup}\"\n"
        ),
    );
    let play = sb.write(
        "play.yml",
        &format!(
            "- hosts: all\n  gather_facts: false\n  vars:\n    from_play: !unsafe \"{lookup}\"\n    \
             nested: {{list: [!unsafe \"{{{{ 1 + 1 }}}}\"]}}\n    via: \"{{{{ from_play }}}}\"\n  tasks:\n    \
             - debug:\n        var: from_inv\n    - debug:\n        msg: \"{{{{ from_inv }}}}\"\n    \
             - debug:\n        var: from_play\n    - debug:\n        msg: \"inv={{{{ from_inv }}}} via={{{{ via }}}}\"\n    \
             - debug:\n        msg: \"{{{{ nested.list[0] }}}} {{{{ from_play | length }}}}\"\n"
        ),
    );
    let check = |out: &Output, tool: &str| {
        out.assert_code(0);
        let quoted = serde_json::to_string(&lookup).unwrap();
        for expected in [
            format!("\"from_inv\": {quoted}"),
            format!("\"msg\": {quoted}"),
            format!("\"from_play\": {quoted}"),
            format!(
                "\"msg\": \"inv={} via={}\"",
                &quoted[1..quoted.len() - 1],
                &quoted[1..quoted.len() - 1]
            ),
            format!("\"msg\": \"{{{{ 1 + 1 }}}} {}\"", lookup.chars().count()),
        ] {
            assert!(
                out.stdout.contains(&expected),
                "{tool}: no {expected}\n{out}"
            );
        }
        assert!(
            !touched.exists(),
            "{tool} ran the lookup of an unsafe value"
        );
    };
    let ours = sb
        .sandball(["playbook", "-i", "inv.yml", play.to_str().unwrap()])
        .run();
    ours.assert_no_panic();
    check(&ours, "sandball");
    // The inventory still prints the mark as ansible-inventory does.
    let inv = sandball_inventory(sb.path(), &["-i", "inv.yml", "--host", "h1"], &[]);
    inv.assert_code(0).assert_stdout_has("\"__ansible_unsafe\"");
    if let Some(theirs) = sb.ansible_playbook(["-i", "inv.yml", play.to_str().unwrap()]) {
        check(&theirs.run(), "ansible-playbook");
    }
}
