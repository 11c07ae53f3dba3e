//! The node's cache and the shim's own state, attacked: compiled native code swapped
//! for another module's, a cache directory others can write, a stored module
//! corrupted, the controller's secrets looked for in the shim's environment and in
//! the files staged for `copy src=`, denials by the hundred thousand, a shim killed in
//! the middle of a run. Each test uses a cache of its own (never the shared one) and
//! checks the real effect: the file the swapped code would write is unchanged, the
//! secret appears in no output and no cached file, the audit log has the line.

use sandball_e2e::{Binaries, Output, Sandbox};
use sha2::{Digest, Sha256};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// A sandbox with one local host, a work directory and a cache of its own.
struct Node {
    sb: Sandbox,
    work: PathBuf,
    cache: PathBuf,
}

impl Node {
    fn new() -> Node {
        let sb = Sandbox::new();
        sb.inventory(&["alpha"]);
        let work = sb.dir("work");
        let cache = sb.path().join("cache");
        Node { sb, work, cache }
    }

    /// Runs `yaml` as a playbook with the fixtures on the module path, the cache
    /// `cache`, and `env` added to the controller's environment.
    fn play_with(&self, yaml: &str, cache: &Path, env: &[(&str, &str)], extra: &[&str]) -> Output {
        let pb = self.sb.write("play.yml", yaml);
        let mut run = self
            .sb
            .play(&pb, &self.work, extra)
            .env("SANDBALL_MODULE_PATH", Binaries::fixtures())
            .env("SANDBALL_CACHE_DIR", cache);
        for (k, v) in env {
            run = run.env(k, v);
        }
        let out = run.run();
        out.assert_no_panic();
        out
    }

    fn play(&self, yaml: &str) -> Output {
        self.play_with(yaml, &self.cache, &[], &[])
    }
}

fn sha256_file(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    hex::encode(Sha256::digest(bytes))
}

/// The compiled code of the module with this sha256 in `cache`.
fn compiled(cache: &Path, sha: &str) -> PathBuf {
    let dir = cache.join("compiled");
    std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            name.starts_with(sha) && name.ends_with(".cwasm")
        })
        .unwrap_or_else(|| panic!("no compiled code of {sha} in {}", dir.display()))
}

/// Every regular file under `dir`, with its content.
fn files_under(dir: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            files_under(&path, out);
        } else if meta.is_file()
            && let Ok(bytes) = std::fs::read(&path)
        {
            out.push((path, bytes));
        }
    }
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

const READER_GRANT: &str =
    "[{kind: fs, path: '{{ work }}/granted', access: read-write, scope: tree}]";

#[test]
fn compiled_code_swapped_for_another_modules_is_never_run() {
    let node = Node::new();
    let granted = node.work.join("granted");
    std::fs::create_dir(&granted).unwrap();
    let target = granted.join("target.txt");
    std::fs::write(&target, "original\n").unwrap();
    // Both modules compiled into the node's cache.
    let prime = format!(
        "- hosts: all\n  gather_facts: false\n  tasks:\n\
         \x20   - {{name: read, denied_reader: {{path: '{{{{ work }}}}/granted/target.txt'}}, capabilities: {READER_GRANT}}}\n\
         \x20   - {{name: write, marker_writer: {{path: '{{{{ work }}}}/granted/scratch.txt'}}, capabilities: {READER_GRANT}}}\n"
    );
    let out = node.play(&prime);
    out.assert_code(0);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "original\n");
    let fixtures = Binaries::fixtures();
    let reader = compiled(
        &node.cache,
        &sha256_file(&fixtures.join("denied_reader.wasm")),
    );
    let writer = compiled(
        &node.cache,
        &sha256_file(&fixtures.join("marker_writer.wasm")),
    );

    // Valid native code, but the writer's, where the reader's was: loaded blindly, the
    // reader's next task writes into the file it was only meant to read.
    std::fs::copy(&writer, &reader).unwrap();
    let attack = format!(
        "- hosts: all\n  gather_facts: false\n  tasks:\n\
         \x20   - {{name: read, denied_reader: {{path: '{{{{ work }}}}/granted/target.txt'}}, capabilities: {READER_GRANT}, register: got}}\n\
         \x20   - {{name: show, debug: {{msg: 'content={{{{ got.content | trim }}}}'}}}}\n"
    );
    let out = node.play(&attack);
    out.assert_code(0);
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "original\n",
        "the swapped code ran:\n{out}"
    );
    assert!(out.stdout.contains("content=original"), "{out}");
    let said = format!("{}{}", out.stdout, out.stderr);
    assert!(
        said.contains("was not loaded") && said.contains("recorded when it was compiled"),
        "no warning about the compiled code:\n{out}"
    );
    // Compiled again from the module: the reader's own code is back.
    assert_ne!(sha256_file(&reader), sha256_file(&writer));
    eprintln!("adversarial: 1 attempts tried, 1 contained (swapped compiled code)");
}

#[test]
fn a_cache_directory_others_can_change_is_refused() {
    let node = Node::new();
    let ping = "- hosts: all\n  gather_facts: false\n  tasks:\n    - ping:\n";
    let mut tried = 0;
    let mut contained = 0;
    let mut attempt = |cache: &Path, shown: &Path, problem: &str| {
        tried += 1;
        let out = node.play_with(ping, cache, &[], &[]);
        let said = format!("{}{}", out.stdout, out.stderr);
        assert_ne!(
            out.code,
            0,
            "the cache {} was used:\n{out}",
            cache.display()
        );
        assert!(
            said.contains(&format!("refusing to use {}: {problem}", shown.display())),
            "the error does not name {} and {problem:?}:\n{out}",
            shown.display()
        );
        assert!(
            !cache.join("modules").exists(),
            "modules were stored in {}",
            cache.display()
        );
        contained += 1;
    };
    // A directory above the cache that anyone may write (SANDBALL_CACHE_DIR pointing
    // into it).
    let open = node.sb.dir("open");
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    attempt(
        &open.join("cache"),
        &open,
        "it is writable by group and others (mode 0777)",
    );
    // The cache directory itself, writable by its group.
    let shared = node.sb.dir("shared-cache");
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o770)).unwrap();
    attempt(&shared, &shared, "it is writable by group (mode 0770)");
    // A cache directory that belongs to another user (only root can hand one over).
    let theirs = node.sb.dir("their-cache");
    if std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).is_ok() {
        attempt(&theirs, &theirs, "it is owned by uid 65534");
    } else {
        eprintln!("not root: the cache owned by another user is not tried");
    }
    assert_eq!(tried, contained);
    eprintln!("adversarial: {tried} attempts tried, {contained} contained (untrusted cache)");
}

#[test]
fn a_corrupt_stored_module_is_sent_again() {
    let node = Node::new();
    let ping =
        "- hosts: all\n  gather_facts: false\n  tasks:\n    - {name: p, ping: {data: sent}}\n";
    node.play(ping).assert_code(0);
    let sha = sha256_file(&Binaries::get().modules.join("ping.wasm"));
    let stored = node.cache.join(format!("modules/{sha}.wasm"));
    assert_eq!(sha256_file(&stored), sha);
    // The stored copy damaged, and no compiled code to fall back on.
    let mut bytes = std::fs::read(&stored).unwrap();
    bytes.truncate(bytes.len() / 2);
    std::fs::write(&stored, bytes).unwrap();
    let code = compiled(&node.cache, &sha);
    std::fs::remove_file(&code).unwrap();
    let out = node.play(ping);
    out.assert_code(0);
    assert!(out.stdout.contains("ok: [alpha]"), "{out}");
    assert_eq!(sha256_file(&stored), sha, "the module was not sent again");
    eprintln!("adversarial: 1 attempts tried, 1 contained (corrupt stored module)");
}

const ENV_SECRET: &str = "sandball-controller-secret-8813";

#[test]
fn nothing_of_the_controllers_environment_is_readable_in_the_shim() {
    let node = Node::new();
    let play = "- hosts: all\n  gather_facts: false\n  tasks:\n\
        \x20   - name: read the shim's environment\n\
        \x20     adversary: {attack: read, path: /proc/self/environ}\n\
        \x20     capabilities: [{kind: fs, path: /proc/self/environ, access: read}]\n\
        \x20     register: leak\n\
        \x20     ignore_errors: true\n\
        \x20   - {name: show, debug: {var: leak}}\n\
        \x20   - name: a granted variable\n\
        \x20     adversary: {attack: env, name: SANDBALL_GRANTED_VALUE}\n\
        \x20     capabilities: [{kind: env, name: SANDBALL_GRANTED_VALUE}]\n\
        \x20     register: granted\n\
        \x20   - {name: value, debug: {msg: 'granted={{ granted.value }}'}}\n";
    let out = node.play_with(
        play,
        &node.cache,
        &[
            ("SANDBALL_CONTROLLER_SECRET", ENV_SECRET),
            ("SANDBALL_GRANTED_VALUE", "passed-on"),
        ],
        &["-v"],
    );
    out.assert_code(0);
    assert!(
        !out.stdout.contains(ENV_SECRET) && !out.stderr.contains(ENV_SECRET),
        "the controller's environment leaked:\n{out}"
    );
    assert!(
        !out.stdout.contains("SANDBALL_CONTROLLER_SECRET"),
        "the controller's environment leaked:\n{out}"
    );
    // An env grant still passes the variable it names.
    assert!(out.stdout.contains("granted=passed-on"), "{out}");
    eprintln!("adversarial: 1 attempts tried, 1 contained (/proc/self/environ)");
}

const FILE_SECRET: &str = "sandball-staged-secret-2291";

#[test]
fn files_staged_for_copy_do_not_outlive_the_run() {
    let node = Node::new();
    node.sb
        .write("work/src-plain.txt", &format!("{FILE_SECRET} plain\n"));
    node.sb
        .write("work/src-no-log.txt", &format!("{FILE_SECRET} no_log\n"));
    node.sb.dir("work/dest");
    let play = "- hosts: all\n  gather_facts: false\n  tasks:\n\
        \x20   - copy: {src: '{{ work }}/src-plain.txt', dest: '{{ work }}/dest/plain.txt'}\n\
        \x20   - copy: {src: '{{ work }}/src-no-log.txt', dest: '{{ work }}/dest/no-log.txt'}\n\
        \x20     no_log: true\n";
    let out = node.play(play);
    out.assert_code(0);
    // The copies were made…
    for (name, kind) in [("plain.txt", "plain"), ("no-log.txt", "no_log")] {
        let got = std::fs::read_to_string(node.work.join("dest").join(name)).unwrap();
        assert_eq!(got, format!("{FILE_SECRET} {kind}\n"));
    }
    // …and nothing of them is left in the node's cache.
    let mut cached = Vec::new();
    files_under(&node.cache, &mut cached);
    assert!(!cached.is_empty(), "the cache is empty: was it used?");
    let mut tried = 0;
    for (path, bytes) in &cached {
        tried += 1;
        assert!(
            !contains(bytes, FILE_SECRET),
            "{} still holds the staged file",
            path.display()
        );
    }
    let staged = node.cache.join("files");
    let left: Vec<_> = std::fs::read_dir(&staged)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "left in {}: {left:?}", staged.display());
    eprintln!(
        "adversarial: 2 attempts tried, 2 contained (staged copy sources; {tried} cached files checked)"
    );
}

#[test]
fn floods_of_denials_stay_bounded_and_the_session_lives() {
    let node = Node::new();
    let play = "- hosts: all\n  gather_facts: false\n  tasks:\n\
        \x20   - name: many denials\n\
        \x20     denial_flood: {count: 200000, size: 16}\n\
        \x20     ignore_errors: true\n\
        \x20   - name: large denials\n\
        \x20     denial_flood: {count: 600, size: 1048576}\n\
        \x20     ignore_errors: true\n\
        \x20   - {name: still here, ping: {}}\n";
    let pb = node.sb.write("play.yml", play);
    let out = node
        .sb
        .play(&pb, &node.work, &["--output", "jsonl"])
        .env("SANDBALL_MODULE_PATH", Binaries::fixtures())
        .env("SANDBALL_CACHE_DIR", &node.cache)
        .run();
    out.assert_no_panic().assert_code(0);
    // The result events of each task (jsonl: a task_start, then its results).
    let mut task = String::new();
    let mut results: Vec<(String, serde_json::Value)> = Vec::new();
    let mut recap = serde_json::Value::Null;
    for v in out
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
    {
        match v["event"].as_str() {
            Some("task_start") => task = v["task"].as_str().unwrap_or_default().to_string(),
            Some("result") => results.push((task.clone(), v)),
            Some("recap") => recap = v,
            _ => {}
        }
    }
    let result_of = |name: &str| {
        results
            .iter()
            .find(|(t, _)| t == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| panic!("no result of {name:?}:\n{out}"))
    };
    let mut tried = 0;
    let mut contained = 0;
    for (task, count) in [("many denials", 200_000u64), ("large denials", 600)] {
        tried += 1;
        let event = result_of(task);
        let result = &event["result"];
        let msg = result["msg"].as_str().unwrap_or_default();
        assert!(
            msg.contains("was denied fs read") && !msg.contains("session"),
            "{task}: {msg}"
        );
        let kept = result["denials"].as_array().map_or(0, Vec::len) as u64;
        let omitted = result["denials_omitted"].as_u64().unwrap_or(0);
        assert!(kept > 0 && kept <= 64, "{task}: {kept} denials kept");
        assert_eq!(kept + omitted, count, "{task}");
        let size = result.to_string().len();
        assert!(size < 256 << 10, "{task}: a result of {size} bytes");
        let warned = result["warnings"].to_string();
        assert!(
            warned.contains(&format!("{omitted} more denials not shown")),
            "{task}: {warned}"
        );
        contained += 1;
    }
    assert_eq!(result_of("still here")["status"], "ok", "{out}");
    assert_eq!(recap["hosts"]["alpha"]["failed"], 0, "{out}");
    eprintln!("adversarial: {tried} attempts tried, {contained} contained (denial floods)");
}

#[test]
fn a_run_that_ends_its_session_is_still_audited() {
    let node = Node::new();
    let log = node.sb.path().join("audit.jsonl");
    let play = "- hosts: all\n  gather_facts: false\n  tasks:\n\
        \x20   - name: kill the shim\n\
        \x20     adversary: {attack: exec, argv: [/bin/sh, -c, 'kill -9 $PPID']}\n\
        \x20     capabilities: [{kind: exec, program: /bin/sh}]\n\
        \x20     ignore_errors: true\n\
        \x20   - {name: afterwards, ping: {}}\n";
    let out = node.play_with(
        play,
        &node.cache,
        &[],
        &["--audit-log", log.to_str().unwrap()],
    );
    out.assert_code(0);
    assert!(
        out.stdout.contains("shim session on alpha failed"),
        "the shim was not killed:\n{out}"
    );
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let killed = lines
        .iter()
        .find(|l| l["task"] == "kill the shim")
        .unwrap_or_else(|| panic!("no audit line for the run that killed the shim:\n{text}"));
    assert_eq!(killed["status"], "failed", "{killed}");
    assert_eq!(killed["module"], "adversary", "{killed}");
    assert!(
        lines.iter().any(|l| l["task"] == "afterwards"),
        "no audit line for the next run:\n{text}"
    );
    eprintln!("adversarial: 1 attempts tried, 1 contained (audit of a killed session)");
}
