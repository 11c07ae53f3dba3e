//! Python plugins: the filter, test and lookup plugins sandball does not carry itself
//! (a playbook's or role's `filter_plugins/`, `test_plugins/`, `lookup_plugins/`,
//! a collection's `ns.coll.name`, and ansible-core's own that sandball lacks), run by
//! ansible-core on the controller, as ansible-playbook runs them.
//!
//! One worker process (`worker.py`, on the Python that has ansible-core) serves the
//! whole run: it is started the first time a template names such a plugin, and every
//! call is one JSON line to it and one back. ansible-core's plugin loader finds the
//! plugin in the directories [`configure`] gives (ansible-core's search order: the
//! playbook's and roles' plugin directories, the configured paths, collections) and
//! its Templar evaluates the call. Values cross as JSON data: a string a plugin gets
//! or gives is never a template.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Mutex, PoisonError};

use serde_json::{Map, Value, json};

/// The worker's source, run with `python -c`.
const WORKER: &str = include_str!("worker.py");

/// The kinds of Python plugin a template can call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `value | name(args)`.
    Filter,
    /// `value is name(args)`.
    Test,
    /// `lookup('name', terms)`, `query`, `with_<name>`.
    Lookup,
}

impl Kind {
    /// The kind as ansible-core names it.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Filter => "filter",
            Kind::Test => "test",
            Kind::Lookup => "lookup",
        }
    }
}

/// Why a Python plugin gave no value.
#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    /// No plugin of that kind and name (or no ansible-core to look in).
    #[error("no {kind} plugin named '{name}'{why}")]
    Missing {
        /// What was asked for.
        kind: &'static str,
        /// The name as the template wrote it.
        name: String,
        /// Why none could be looked for, when that is the reason.
        why: String,
    },
    /// The plugin ran and failed (ansible-core's message).
    #[error("{0}")]
    Failed(String),
}

/// Where the worker looks for plugins.
#[derive(Default)]
struct Config {
    /// Directories whose `*_plugins/` subdirectories hold plugins (the playbooks' and
    /// roles' directories), in ansible-core's order.
    dirs: Vec<PathBuf>,
    /// Collection paths searched before the configured ones (the playbook's
    /// `collections/`).
    collections: Vec<PathBuf>,
}

/// The worker, once started (or why it could not be).
struct Worker {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    /// How many of the configured directories it has been given.
    dirs_sent: usize,
}

/// The loader's state: its configuration and its worker.
struct Loader {
    config: Config,
    worker: Option<Result<Worker, String>>,
}

static LOADER: Mutex<Loader> = Mutex::new(Loader {
    config: Config {
        dirs: Vec::new(),
        collections: Vec::new(),
    },
    worker: None,
});

/// Adds directories whose `filter_plugins/`, `test_plugins/` and `lookup_plugins/`
/// hold plugins (playbook and role directories, in the order ansible-core adds them),
/// and collection paths to search first.
pub fn configure(dirs: &[&std::path::Path], collections: &[PathBuf]) {
    // The worker has a directory of its own to resolve relative paths against; ""
    // is the current directory.
    let absolute = |p: &std::path::Path| {
        let p = if p.as_os_str().is_empty() {
            std::path::Path::new(".")
        } else {
            p
        };
        std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
    };
    let mut loader = LOADER.lock().unwrap_or_else(PoisonError::into_inner);
    for dir in dirs.iter().map(|d| absolute(d)) {
        if !loader.config.dirs.contains(&dir) {
            loader.config.dirs.push(dir);
        }
    }
    for path in collections.iter().map(|p| absolute(p)) {
        if !loader.config.collections.contains(&path) {
            loader.config.collections.push(path);
        }
    }
}

/// Whether there is a plugin of this kind and name; an error when there is no
/// ansible-core to ask.
pub fn has(kind: Kind, name: &str) -> Result<bool, PluginError> {
    let answer = ask(&json!({"kind": "has", "plugin": kind.as_str(), "name": name}));
    Ok(answer_of(kind, name, answer)?.as_bool().unwrap_or(false))
}

/// Runs filter (or test) `name` on `value` with these arguments; a test's answer is a
/// bool.
pub fn call(
    kind: Kind,
    name: &str,
    value: &Value,
    args: &[Value],
    kwargs: &Map<String, Value>,
) -> Result<Value, PluginError> {
    tracing::debug!(kind = kind.as_str(), name, "Python plugin");
    let answer = ask(&json!({
        "kind": kind.as_str(), "name": name, "value": value, "args": args, "kwargs": kwargs,
    }));
    answer_of(kind, name, answer)
}

/// Runs lookup `name` on `terms` with its options and the task's variables; its
/// results, always a list.
pub fn lookup(
    name: &str,
    terms: &[Value],
    options: &Map<String, Value>,
    variables: Map<String, Value>,
) -> Result<Vec<Value>, PluginError> {
    tracing::debug!(name, "Python lookup plugin");
    let answer = ask(&json!({
        "kind": "lookup", "name": name, "args": terms, "kwargs": options, "variables": variables,
    }));
    match answer_of(Kind::Lookup, name, answer)? {
        Value::Array(results) => Ok(results),
        other => Ok(vec![other]),
    }
}

/// The worker's answer as a value or an error.
fn answer_of(kind: Kind, name: &str, answer: Result<Value, String>) -> Result<Value, PluginError> {
    let missing = |why: String| PluginError::Missing {
        kind: kind.as_str(),
        name: name.to_string(),
        why,
    };
    let mut answer = answer.map_err(|e| missing(format!(" ({e})")))?;
    if let Some(ok) = answer.get_mut("ok") {
        return Ok(ok.take());
    }
    if answer.get("missing").is_some() {
        return Err(missing(String::new()));
    }
    if let Some(why) = answer.get("unavailable").and_then(Value::as_str) {
        return Err(missing(format!(" ({why})")));
    }
    Err(PluginError::Failed(
        answer
            .get("error")
            .and_then(Value::as_str)
            .unwrap_or("the plugin failed")
            .to_string(),
    ))
}

/// Sends one request to the worker (started first if need be) and reads its answer;
/// an error when there is no worker or it broke off (the next request starts a new
/// one).
fn ask(request: &Value) -> Result<Value, String> {
    let mut loader = LOADER.lock().unwrap_or_else(PoisonError::into_inner);
    let loader = &mut *loader;
    if loader.worker.is_none() {
        loader.worker = Some(start(&loader.config));
    }
    let worker = match loader.worker.as_mut() {
        Some(Ok(worker)) => worker,
        Some(Err(e)) => return Err(e.clone()),
        None => return Err("no worker".into()),
    };
    let mut request = request.clone();
    let dirs: Vec<String> = loader.config.dirs[worker.dirs_sent..]
        .iter()
        .map(|d| d.display().to_string())
        .collect();
    if let Some(map) = request.as_object_mut() {
        map.insert("dirs".into(), json!(dirs));
    }
    let exchanged = exchange(worker, &request);
    match exchanged {
        Ok(answer) => {
            worker.dirs_sent = loader.config.dirs.len();
            Ok(answer)
        }
        Err(e) => {
            if let Some(Ok(mut broken)) = loader.worker.take() {
                let _ = broken.child.kill();
                let _ = broken.child.wait();
            }
            Err(e)
        }
    }
}

/// One line out, one line back.
fn exchange(worker: &mut Worker, request: &Value) -> Result<Value, String> {
    let broke = |e: std::io::Error| format!("the plugin worker broke off: {e}");
    let mut line = request.to_string();
    line.push('\n');
    worker.stdin.write_all(line.as_bytes()).map_err(broke)?;
    worker.stdin.flush().map_err(broke)?;
    let mut answer = String::new();
    if worker.stdout.read_line(&mut answer).map_err(broke)? == 0 {
        return Err("the plugin worker exited".into());
    }
    serde_json::from_str(&answer).map_err(|e| format!("the plugin worker answered badly: {e}"))
}

/// Starts the worker on the controller's Python.
fn start(config: &Config) -> Result<Worker, String> {
    let python = crate::assemble::finder::controller_python()
        .ok_or("no Python with ansible-core on the controller")?;
    let collections: Vec<String> = config
        .collections
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let mut child = Command::new(&python)
        .arg("-c")
        .arg(WORKER)
        .arg(json!(collections).to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("cannot start {python}: {e}"))?;
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        let _ = child.kill();
        return Err("the plugin worker has no pipes".into());
    };
    tracing::debug!(python, "started the Python plugin worker");
    Ok(Worker {
        child,
        stdin,
        stdout: BufReader::new(stdout),
        dirs_sent: 0,
    })
}
