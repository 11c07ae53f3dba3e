//! Python plugins: the filter, test, lookup and action plugins sandball does not carry
//! itself (a playbook's or role's `filter_plugins/`, `test_plugins/`, `lookup_plugins/`,
//! `action_plugins/`, a collection's `ns.coll.name`, and ansible-core's own filters,
//! tests and lookups that sandball lacks), run by ansible-core on the controller, as
//! ansible-playbook runs them.
//!
//! A worker process (`worker.py`, on the Python that has ansible-core) answers one JSON
//! line with one line back. ansible-core's plugin loader finds the plugin in the
//! directories [`configure`] gives (ansible-core's search order: the playbook's and
//! roles' plugin directories, the configured paths, collections) and its Templar
//! evaluates the call. Values cross as JSON data: a string a plugin gets or gives is
//! never a template. One worker serves the templates of the whole run, started the
//! first time a template names such a plugin. An action plugin runs in a worker of its
//! own for the time of the task ([`run_action`]; idle ones are kept for the next), since
//! it calls back — each module it runs and each command it sends is a line to the
//! controller, which runs it on the task's target and answers — and other hosts'
//! templates must not wait for it.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use futures::future::LocalBoxFuture;
use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

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
    /// A task's action.
    Action,
}

impl Kind {
    /// The kind as ansible-core names it.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Filter => "filter",
            Kind::Test => "test",
            Kind::Lookup => "lookup",
            Kind::Action => "action",
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

/// The loader's state: its configuration, its worker for templates, and which action
/// plugin each action name found.
struct Loader {
    config: Config,
    worker: Option<Result<Worker, String>>,
    /// The action plugin of each action name asked about, with the number of
    /// directories known when it was asked (a role loaded later may bring one).
    actions: BTreeMap<String, (usize, Option<String>)>,
    /// What each action plugin asked about says of itself.
    traits: BTreeMap<String, ActionTraits>,
    /// The `module_defaults` name of each action name asked about (keyed by the name
    /// and whether it was an entry's), with the number of directories known then.
    defaults_names: BTreeMap<(String, DefaultsRole), (usize, Option<String>)>,
}

/// The short names of the filters and tests that plugin files outside ansible-core
/// define (see [`defined_locally`]).
#[derive(Default)]
struct LocalNames {
    filters: BTreeSet<String>,
    tests: BTreeSet<String>,
}

static LOADER: Mutex<Loader> = Mutex::new(Loader {
    config: Config {
        dirs: Vec::new(),
        collections: Vec::new(),
    },
    worker: None,
    actions: BTreeMap::new(),
    traits: BTreeMap::new(),
    defaults_names: BTreeMap::new(),
});

/// How many directories [`configure`] has given, read without the loader's lock (which
/// a Python plugin's call holds for its time).
static DIRS_KNOWN: AtomicUsize = AtomicUsize::new(0);

/// The filter and test names the plugin files outside ansible-core define, with the
/// number of directories known when they were asked for.
static LOCAL_NAMES: Mutex<Option<(usize, LocalNames)>> = Mutex::new(None);

/// Whether each lookup asked about has a plugin file of its own, with the number of
/// directories known when it was asked.
static LOCAL_LOOKUPS: Mutex<BTreeMap<String, (usize, bool)>> = Mutex::new(BTreeMap::new());

/// Idle workers for action plugins.
static ACTION_WORKERS: Mutex<Vec<ActionWorker>> = Mutex::new(Vec::new());

/// A worker running one action plugin at a time, read without blocking the run.
struct ActionWorker {
    _child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    stdout: tokio::io::BufReader<tokio::process::ChildStdout>,
    dirs_sent: usize,
}

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
    DIRS_KNOWN.store(loader.config.dirs.len(), Ordering::Release);
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

/// Whether a filter (or test) plugin file outside ansible-core — in a playbook's or
/// role's `filter_plugins/` (`test_plugins/`), or a configured directory
/// (`ANSIBLE_FILTER_PLUGINS`, `ANSIBLE_TEST_PLUGINS`, ansible-core's defaults) —
/// defines the short name `name`: ansible-core then runs that plugin in place of its
/// own of that name, and so does sandball. The worker is asked once (again only when
/// more directories are known), and only when one of those directories holds a Python
/// file.
pub fn defined_locally(kind: Kind, name: &str) -> bool {
    let known = DIRS_KNOWN.load(Ordering::Acquire);
    let mut local = LOCAL_NAMES.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((asked, names)) = &*local
        && *asked == known
    {
        return names_of(names, kind).contains(name);
    }
    let dirs = configured_dirs();
    let mut names = LocalNames::default();
    if [Kind::Filter, Kind::Test]
        .iter()
        .flat_map(|kind| plugin_dirs(&dirs, *kind))
        .any(|d| holds_python(&d))
    {
        let answer = ask_ok(&json!({"kind": "local_names", "name": ""}));
        let listed = |key: &str| -> BTreeSet<String> {
            answer
                .as_ref()
                .and_then(|a| a.get(key))
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|n| n.as_str().map(str::to_string))
                .collect()
        };
        names.filters = listed("filter");
        names.tests = listed("test");
        tracing::debug!(filters = ?names.filters, tests = ?names.tests, "local Jinja plugins");
    }
    let found = names_of(&names, kind).contains(name);
    *local = Some((dirs.len(), names));
    found
}

/// The directories [`configure`] has given so far.
fn configured_dirs() -> Vec<PathBuf> {
    LOADER
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .config
        .dirs
        .clone()
}

/// The names of one kind.
fn names_of(names: &LocalNames, kind: Kind) -> &BTreeSet<String> {
    match kind {
        Kind::Test => &names.tests,
        _ => &names.filters,
    }
}

/// The directories ansible-core looks for plugins of a kind in besides its own: the
/// playbooks' and roles' `<kind>_plugins/`, then the configured paths
/// (`ANSIBLE_<KIND>_PLUGINS`, ansible-core's defaults when unset).
fn plugin_dirs(dirs: &[PathBuf], kind: Kind) -> Vec<PathBuf> {
    let kind = kind.as_str();
    let mut found: Vec<PathBuf> = dirs
        .iter()
        .map(|d| d.join(format!("{kind}_plugins")))
        .collect();
    let variable = format!("ANSIBLE_{}_PLUGINS", kind.to_ascii_uppercase());
    match crate::config::settings().get(&variable) {
        Some(paths) => found.extend(
            paths
                .split(':')
                .filter(|p| !p.is_empty())
                .map(PathBuf::from),
        ),
        None => {
            found.push(crate::config::ansible_home().join("plugins").join(kind));
            found.push(PathBuf::from("/usr/share/ansible/plugins").join(kind));
        }
    }
    found
}

/// Whether the plugin file of a short or `ansible.legacy.` name (`<short>.py`) is in
/// one of the directories of [`plugin_dirs`]: ansible-core then runs it in place of its
/// own plugin of that name (and sandball does in place of its own).
fn local_plugin_file(dirs: &[PathBuf], kind: Kind, name: &str) -> bool {
    let short = name.strip_prefix("ansible.legacy.").unwrap_or(name);
    if short.contains('.') {
        return false;
    }
    let file = format!("{short}.py");
    plugin_dirs(dirs, kind)
        .iter()
        .any(|d| d.join(&file).is_file())
}

/// Whether a lookup of a short or `ansible.legacy.` name has a plugin file of its own
/// ([`local_plugin_file`]), which takes the place of sandball's lookup of that name;
/// asked once per name (again when more directories are known).
pub fn local_lookup(name: &str) -> bool {
    let known = DIRS_KNOWN.load(Ordering::Acquire);
    if let Some((asked, found)) = LOCAL_LOOKUPS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(name)
        && *asked == known
    {
        return *found;
    }
    let dirs = configured_dirs();
    let found = local_plugin_file(&dirs, Kind::Lookup, name);
    LOCAL_LOOKUPS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(name.to_string(), (dirs.len(), found));
    found
}

/// Whether a directory holds a Python file (a plugin file ansible-core would load).
fn holds_python(dir: &std::path::Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries
            .flatten()
            .any(|e| e.path().extension().is_some_and(|x| x == "py"))
    })
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
    match lookup_marked(name, terms, &[], options, variables)?.0 {
        Value::Array(results) => Ok(results),
        other => Ok(vec![other]),
    }
}

/// [`lookup`] given undefined terms: `undefined` holds their places in `terms` (each
/// `{"path": [index, key…], "name": variable}`, null in `terms`), which the plugin gets
/// as ansible-core's undefined markers (or, if it does not accept them, gives back).
/// The results, and the paths of the undefined values in them (null there; an empty
/// path when the result is undefined as a whole).
pub fn lookup_marked(
    name: &str,
    terms: &[Value],
    undefined: &[Value],
    options: &Map<String, Value>,
    variables: Map<String, Value>,
) -> Result<(Value, Vec<Value>), PluginError> {
    tracing::debug!(name, "Python lookup plugin");
    let mut request = json!({
        "kind": "lookup", "name": name, "args": terms, "kwargs": options, "variables": variables,
    });
    if !undefined.is_empty() {
        request["undefined"] = Value::Array(undefined.to_vec());
    }
    let mut answer = ask(&request);
    let paths = match &mut answer {
        Ok(a) => match a.get_mut("undefined").map(Value::take) {
            Some(Value::Array(paths)) => paths,
            _ => Vec::new(),
        },
        Err(_) => Vec::new(),
    };
    Ok((answer_of(Kind::Lookup, name, answer)?, paths))
}

/// The Python action plugin ansible-core runs for a task whose action is `action`, if
/// any: for a short or `ansible.legacy.` name, a file of that name in an
/// `action_plugins/` directory (the playbooks', the roles', `ANSIBLE_ACTION_PLUGINS`),
/// which overrides sandball's own action of that name as it overrides ansible-core's;
/// for a collection's name, what ansible-core's loader finds (the module's routing to
/// an action, or an action of that name). `ansible.builtin.` names never have one.
pub fn action_plugin(action: &str) -> Option<String> {
    let (namespace, short) = match action.rsplit_once('.') {
        Some((ns, short)) => (ns, short),
        None => ("ansible.legacy", action),
    };
    if namespace == "ansible.builtin" {
        return None;
    }
    let mut loader = LOADER.lock().unwrap_or_else(PoisonError::into_inner);
    let known = loader.config.dirs.len();
    if let Some(found) = still_stands(loader.actions.get(action), known) {
        return found;
    }
    let found = if namespace == "ansible.legacy" {
        local_plugin_file(&loader.config.dirs, Kind::Action, short).then(|| action.to_string())
    } else {
        drop(loader);
        let answer = ask_name(&json!({"kind": "action_for", "name": action}));
        loader = LOADER.lock().unwrap_or_else(PoisonError::into_inner);
        answer
    };
    loader
        .actions
        .insert(action.to_string(), (known, found.clone()));
    found
}

/// What a name given to [`defaults_name`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum DefaultsRole {
    /// An entry of `module_defaults` (ansible-core shows its deprecation).
    Entry,
    /// A member of an action group.
    Member,
    /// A task's action.
    Action,
}

/// The full name under which ansible-core's `module_defaults` know action `name`, its
/// collections' routing followed: for an entry of `module_defaults` or an action
/// group, its module's name unless that module names no action plugin and an action
/// of the name exists; for a task's action, its module's name when that module names
/// its action plugin (`action_plugin` in `meta/runtime.yml`), else its action's, else
/// its module's. `None` when ansible-core finds neither (or is not there).
pub fn defaults_name(name: &str, role: DefaultsRole) -> Option<String> {
    let key = (name.to_string(), role);
    let known = DIRS_KNOWN.load(Ordering::Acquire);
    let remembered = LOADER
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .defaults_names
        .get(&key)
        .cloned();
    if let Some(found) = still_stands(remembered.as_ref(), known) {
        return found;
    }
    let role_name = match role {
        DefaultsRole::Entry => "entry",
        DefaultsRole::Member => "member",
        DefaultsRole::Action => "action",
    };
    let found = ask_name(&json!({"kind": "defaults_name", "name": name, "as": role_name}));
    LOADER
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .defaults_names
        .insert(key, (known, found.clone()));
    found
}

/// What a Python action plugin's class says of itself, as ansible-core reads it.
#[derive(Clone, Copy, Default)]
pub struct ActionTraits {
    /// It takes words that are not `key=value` arguments (`supports_raw_params`).
    pub raw_params: bool,
    /// It can run in the background, `async` (`_supports_async`).
    pub supports_async: bool,
}

/// What the Python action plugin of `action` says of itself (nothing, if it has none),
/// asked of the worker once per plugin.
pub fn action_traits(action: &str) -> ActionTraits {
    let Some(handler) = action_plugin(action) else {
        return ActionTraits::default();
    };
    let cached = LOADER
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .traits
        .get(&handler)
        .copied();
    if let Some(traits) = cached {
        return traits;
    }
    let answer = ask_ok(&json!({"kind": "action_traits", "name": handler})).unwrap_or(Value::Null);
    let flag = |name: &str| answer.get(name).and_then(Value::as_bool).unwrap_or(false);
    let traits = ActionTraits {
        raw_params: flag("raw_params"),
        supports_async: flag("async"),
    };
    LOADER
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .traits
        .insert(handler, traits);
    traits
}

/// What an action plugin asks of the controller while it runs: a module run
/// (`{"call": "module", "name", "args"}`, answered with `{"result": {...}}`) or a command
/// over the task's connection (`{"call": "exec", "cmd", "stdin"}` with base64 data,
/// answered with `rc`, base64 `stdout` and `stderr`, or an `error`).
pub trait ActionCalls {
    /// The answer to one call.
    fn answer<'a>(&'a self, call: Value) -> LocalBoxFuture<'a, Value>;
}

/// Runs Python action plugin `handler` for a task of action `action`: its result, or
/// why it could not run. `task` holds the task's settings the plugin sees (`check_mode`,
/// `diff`, `async_val`, `poll`). Words not `key=value` reach it only if it takes them (the executor asks
/// [`action_traits`] first).
pub async fn run_action(
    handler: &str,
    action: &str,
    args: &Map<String, Value>,
    task: Value,
    variables: Map<String, Value>,
    calls: &dyn ActionCalls,
) -> Result<Map<String, Value>, PluginError> {
    tracing::debug!(handler, action, "Python action plugin");
    let failed = |e: String| PluginError::Failed(format!("the action plugin '{handler}': {e}"));
    let idle = ACTION_WORKERS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .pop();
    let mut worker = match idle {
        Some(w) => w,
        None => start_action_worker().map_err(|e| PluginError::Missing {
            kind: "action",
            name: handler.to_string(),
            why: format!(" ({e})"),
        })?,
    };
    let mut request = json!({
        "kind": "action", "name": action, "handler": handler, "args": args,
        "task": task, "variables": variables,
    });
    worker.dirs_sent = with_new_dirs(
        &LOADER.lock().unwrap_or_else(PoisonError::into_inner).config,
        &mut request,
        worker.dirs_sent,
    );
    let mut line = request.to_string();
    let answer = loop {
        line.push('\n');
        let broke = |e: std::io::Error| failed(format!("the plugin worker broke off: {e}"));
        worker
            .stdin
            .write_all(line.as_bytes())
            .await
            .map_err(broke)?;
        worker.stdin.flush().await.map_err(broke)?;
        let mut reply = String::new();
        if worker.stdout.read_line(&mut reply).await.map_err(broke)? == 0 {
            return Err(failed("the plugin worker exited".into()));
        }
        let reply: Value = serde_json::from_str(&reply)
            .map_err(|e| failed(format!("the plugin worker answered badly: {e}")))?;
        if reply.get("call").is_none() {
            break reply;
        }
        line = calls.answer(reply).await.to_string();
    };
    ACTION_WORKERS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(worker);
    match answer_of(Kind::Action, handler, Ok(answer))? {
        Value::Object(result) => Ok(result),
        other => Err(failed(format!("it returned {other}, not a mapping"))),
    }
}

/// Adds to `request` the configured directories a worker has not been given yet (it
/// has `sent` of them); how many it has then.
fn with_new_dirs(config: &Config, request: &mut Value, sent: usize) -> usize {
    let dirs: Vec<String> = config.dirs[sent.min(config.dirs.len())..]
        .iter()
        .map(|d| d.display().to_string())
        .collect();
    if let Some(map) = request.as_object_mut() {
        map.insert("dirs".into(), json!(dirs));
    }
    config.dirs.len()
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

/// The value of the worker's `ok` answer to `request`; `None` when it gave another
/// answer or there is no worker.
fn ask_ok(request: &Value) -> Option<Value> {
    ask(request)
        .ok()
        .and_then(|mut a| a.get_mut("ok").map(Value::take))
}

/// A name the worker's `ok` answer to `request` gives (`None`: no name).
fn ask_name(request: &Value) -> Option<String> {
    ask_ok(request).and_then(|v| v.as_str().map(str::to_string))
}

/// A remembered answer that still stands: one that found something, or one asked
/// when as many directories were known as now (a role loaded later may bring one).
fn still_stands(
    remembered: Option<&(usize, Option<String>)>,
    known: usize,
) -> Option<Option<String>> {
    remembered
        .filter(|(asked, found)| *asked == known || found.is_some())
        .map(|(_, found)| found.clone())
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
    let sent = with_new_dirs(&loader.config, &mut request, worker.dirs_sent);
    let exchanged = exchange(worker, &request);
    match exchanged {
        Ok(answer) => {
            worker.dirs_sent = sent;
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

/// The command that starts a worker on the controller's Python, and that Python.
fn worker_command(config: &Config) -> Result<(Command, String), String> {
    let python = crate::assemble::finder::controller_python()
        .ok_or("no Python with ansible-core on the controller")?;
    let collections: Vec<String> = config
        .collections
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let mut command = Command::new(&python);
    command
        .envs(crate::config::settings().from_file())
        .arg("-c")
        .arg(WORKER)
        .arg(json!(collections).to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    Ok((command, python))
}

/// Starts a worker for action plugins.
fn start_action_worker() -> Result<ActionWorker, String> {
    let (command, python) =
        worker_command(&LOADER.lock().unwrap_or_else(PoisonError::into_inner).config)?;
    let mut child = tokio::process::Command::from(command)
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot start {python}: {e}"))?;
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err("the plugin worker has no pipes".into());
    };
    tracing::debug!(python, "started a Python action plugin worker");
    Ok(ActionWorker {
        _child: child,
        stdin,
        stdout: tokio::io::BufReader::new(stdout),
        dirs_sent: 0,
    })
}

/// Starts the worker on the controller's Python.
fn start(config: &Config) -> Result<Worker, String> {
    let (mut command, python) = worker_command(config)?;
    let mut child = command
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
