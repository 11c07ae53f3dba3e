//! Assembling a legacy module for one run: its type decides the assembler, then the
//! interpreter is settled, as module_common does it.
//!
//! New-style Python (and `#<<INCLUDE_ANSIBLE_MODULE_COMMON>>` after its substitution)
//! becomes an Ansiballz script that can be piped to Python. JSONARGS and PowerShell go
//! through the Module Replacer. WANT_JSON, binary and old-style modules are shipped
//! unchanged with an args file. Last, a script's shebang is replaced with the host's
//! `ansible_<name>_interpreter` when one is set (for `python`: the discovered or
//! configured Python).

use super::ansiballz::{self, AnsiballzError, ZipCache};
use super::args_file;
use super::finder::LegacyModule;
use super::finder::{FindError, FinderConfig, LegacyFinder};
use super::interpreter::{self, Shebang};
use super::module_type::{self, ModuleType};
use super::module_utils::CodeRoots;
use super::powershell::{self, PowerShellError};
use super::replacer::{self, Substitutions};
use crate::plugins::r#become::Become;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// The legacy modules of a run: the finder, the modules found (read once) and the
/// Ansiballz zips built.
#[derive(Debug)]
pub struct LegacyStore {
    finder: LegacyFinder,
    roots: OnceLock<CodeRoots>,
    found: Mutex<HashMap<String, Arc<LegacyModule>>>,
    /// Zips built in this run.
    pub zips: ZipCache,
    /// Whether a become needs the password, by host and become settings.
    become_passwords: Mutex<HashMap<String, bool>>,
    /// The connection user, by host.
    users: Mutex<HashMap<String, String>>,
    prefer: Vec<String>,
    /// Whether a library module answers to a short name, by name.
    in_library: Mutex<HashMap<String, bool>>,
    warned: Mutex<std::collections::HashSet<String>>,
    /// Whether where ansible-core was found has been said.
    noted: std::sync::atomic::AtomicBool,
}

impl LegacyStore {
    /// A store searching as `config` says.
    pub fn new(config: FinderConfig) -> Self {
        LegacyStore {
            finder: LegacyFinder::new(config),
            roots: OnceLock::new(),
            found: Mutex::new(HashMap::new()),
            zips: ZipCache::default(),
            become_passwords: Mutex::new(HashMap::new()),
            users: Mutex::new(HashMap::new()),
            prefer: config_prefer(),
            in_library: Mutex::new(HashMap::new()),
            warned: Mutex::new(std::collections::HashSet::new()),
            noted: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Adds the `library/` and `module_utils/` directories beside roles and imported
    /// playbooks (searched after the configured and the playbook's), before anything
    /// is looked up.
    pub fn add_plugin_dirs(&mut self, roles: &[&std::path::Path]) {
        self.finder.add_plugin_dirs(roles);
    }

    /// Whether a task asks for the legacy module even though a built-in component of
    /// that name exists: `task_list` is the task's `sandball_legacy_modules` (a list of
    /// names, a comma-separated string or `all`); without it, `SANDBALL_LEGACY_MODULES`.
    pub fn prefers_legacy(&self, short: &str, task_list: Option<&Value>) -> bool {
        let names: Vec<String> = match task_list {
            Some(v) => names(v),
            None => self.prefer.clone(),
        };
        names.iter().any(|n| n == "all" || n == short)
    }

    /// Whether a library module (`library/` beside the playbook or a role, `-M`,
    /// `ANSIBLE_LIBRARY`) answers to `action` — a short name or
    /// `ansible.legacy.<name>` — and so overrides the built-in component of that name,
    /// as a library module overrides ansible-core's own in Ansible.
    pub fn in_library(&self, action: &str) -> bool {
        let short = match action.strip_prefix("ansible.legacy.") {
            Some(short) => short,
            None if !action.contains('.') => action,
            None => return false,
        };
        if let Some(&found) = lock(&self.in_library).get(short) {
            return found;
        }
        let found = self.finder.library_has(short);
        lock(&self.in_library).insert(short.to_string(), found);
        found
    }

    /// The module a task's action names (read once per run).
    pub fn get(&self, action: &str) -> Result<Arc<LegacyModule>, FindError> {
        if let Some(m) = lock(&self.found).get(action) {
            return Ok(m.clone());
        }
        let m = Arc::new(self.finder.find(action)?);
        lock(&self.found).insert(action.to_string(), m.clone());
        Ok(m)
    }

    /// Where ansible-core was found and how (see [`LegacyFinder::ansible_core`]), the
    /// first time it is asked for; `None` afterwards.
    pub fn ansible_core_note_once(&self) -> Option<String> {
        (!self.noted.swap(true, std::sync::atomic::Ordering::Relaxed))
            .then(|| self.finder.ansible_core_note())
    }

    /// Where module_utils come from (ansible-core is located once).
    pub fn roots(&self) -> &CodeRoots {
        self.roots.get_or_init(|| self.finder.code_roots())
    }

    /// The version of the ansible-core whose module_utils are shipped, as (major,
    /// minor, full text); `None` without one.
    pub fn ansible_version(&self) -> Option<(u32, u32, String)> {
        self.roots()
            .ansible
            .as_deref()
            .and_then(super::module_utils::ansible_version)
    }

    /// Whether this is the first warning about `module` in the run (policy warns about
    /// each legacy module once, not on every task and host).
    pub fn first_warning(&self, module: &str) -> bool {
        lock(&self.warned).insert(module.to_string())
    }

    /// The legacy modules warned about so far, sorted; the list starts again empty.
    pub fn take_warned(&self) -> Vec<String> {
        let mut names: Vec<String> = lock(&self.warned).drain().collect();
        names.sort();
        names
    }

    /// The connection user on `host`, when a run already asked.
    pub fn connection_user(&self, host: &str) -> Option<String> {
        lock(&self.users).get(host).cloned()
    }

    /// Remembers the connection user on `host`.
    pub fn remember_connection_user(&self, host: &str, user: &str) {
        lock(&self.users).insert(host.to_string(), user.to_string());
    }

    /// Whether `become_` on `host` needs the password, when a run already found out.
    pub fn become_needs_password(&self, host: &str, become_: &Become) -> Option<bool> {
        lock(&self.become_passwords)
            .get(&become_key(host, become_))
            .copied()
    }

    /// Remembers whether `become_` on `host` needs the password.
    pub fn remember_become(&self, host: &str, become_: &Become, needs_password: bool) {
        lock(&self.become_passwords).insert(become_key(host, become_), needs_password);
    }
}

/// The host and the become settings (the password shows as hidden in `Debug`; whether
/// one is needed does not depend on it).
fn become_key(host: &str, become_: &Become) -> String {
    format!("{host}\0{become_:?}")
}

fn config_prefer() -> Vec<String> {
    std::env::var("SANDBALL_LEGACY_MODULES")
        .map(|v| names(&Value::String(v)))
        .unwrap_or_default()
}

fn names(v: &Value) -> Vec<String> {
    match v {
        Value::String(s) => s
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect(),
        Value::Array(a) => a
            .iter()
            .filter_map(Value::as_str)
            .map(|s| sandball_pycompat::fqcn::short_name(s).to_string())
            .collect(),
        _ => Vec::new(),
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A poisoned lock only means another thread panicked mid-insert: the map is
    // still a valid cache.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Errors assembling a legacy module.
#[derive(Debug, thiserror::Error)]
pub enum AssembleError {
    /// Ansiballz failed.
    #[error("{module}: {source}")]
    Ansiballz {
        /// The module.
        module: String,
        /// Why.
        source: AnsiballzError,
    },
    /// PowerShell assembly failed.
    #[error("{module}: {source}")]
    PowerShell {
        /// The module.
        module: String,
        /// Why.
        source: PowerShellError,
    },
    /// A Python module whose name cannot be a Python module name.
    #[error(
        "module {0}: its name is not a valid Python module name, so Ansiballz cannot import it"
    )]
    BadName(String),
}

/// What the assemblers need besides the module.
pub struct AssembleContext<'a> {
    /// The arguments, internal ones included.
    pub args: &'a Value,
    /// The host's Python (configured or discovered).
    pub python: &'a str,
    /// The host's variables (for `ansible_<name>_interpreter`).
    pub host_vars: &'a Map<String, Value>,
    /// Where Ansiballz keeps unpacked payloads on the node.
    pub cache_dir: &'a str,
    /// Where module_utils come from.
    pub roots: &'a CodeRoots,
    /// Zips built in this run.
    pub cache: &'a ZipCache,
}

/// A module ready to ship.
#[derive(Debug)]
pub struct Assembled {
    /// Its type.
    pub kind: ModuleType,
    /// The file to put on the node (or to pipe to the interpreter).
    pub payload: Vec<u8>,
    /// The args file, for types that take one.
    pub args_file: Option<Vec<u8>>,
    /// The command that runs the payload file (`None`: the file runs itself).
    pub interpreter: Option<String>,
    /// Whether the payload may be piped to the interpreter's stdin.
    pub pipelining: bool,
    /// File name suffix on the node (`.py`, `.ps1`, or none).
    pub suffix: &'static str,
    /// Where an Ansiballz payload is unpacked on the node (`~` is the node user's
    /// home): the directory its `ansible.module_utils` come from.
    pub modlib: Option<String>,
}

/// Whether running `module` needs the host's Python (so it must be known or
/// discovered first): new-style Python, and scripts whose shebang names `python`.
pub fn needs_python(module: &LegacyModule) -> bool {
    match module_type::detect(&module.bytes) {
        ModuleType::NewStylePython | ModuleType::ModuleCommon => true,
        ModuleType::Binary | ModuleType::PowerShell => false,
        _ => interpreter::shebang(&module.bytes).is_some_and(|s| s.name() == "python"),
    }
}

/// Assembles `module` for one run.
pub fn assemble(
    module: &LegacyModule,
    ctx: &AssembleContext<'_>,
) -> Result<Assembled, AssembleError> {
    let kind = module_type::detect(&module.bytes);
    let subs = substitutions(ctx);
    match kind {
        ModuleType::NewStylePython | ModuleType::ModuleCommon => {
            if !module
                .fqn
                .split('.')
                .all(|p| !p.is_empty() && p.chars().all(|c| c.is_alphanumeric() || c == '_'))
            {
                return Err(AssembleError::BadName(module.name.clone()));
            }
            let source = if kind == ModuleType::ModuleCommon {
                replacer::substitute(&String::from_utf8_lossy(&module.bytes), &subs).into_bytes()
            } else {
                module.bytes.to_vec()
            };
            let zip = ctx
                .cache
                .zip(ctx.roots, &module.fqn, &source)
                .map_err(|source| AssembleError::Ansiballz {
                    module: module.name.clone(),
                    source,
                })?;
            Ok(Assembled {
                kind,
                payload: ansiballz::script(ctx.python, &module.fqn, &zip, ctx.args, ctx.cache_dir),
                args_file: None,
                interpreter: Some(ctx.python.to_string()),
                pipelining: true,
                suffix: ".py",
                modlib: Some(format!(
                    "{}/{}",
                    ctx.cache_dir.trim_end_matches('/'),
                    zip.sha256
                )),
            })
        }
        ModuleType::PowerShell => {
            let text = replacer::substitute(&String::from_utf8_lossy(&module.bytes), &subs);
            let payload =
                powershell::assemble(&module.name, &text, &ctx.args.to_string(), ctx.roots)
                    .map_err(|source| AssembleError::PowerShell {
                        module: module.name.clone(),
                        source,
                    })?;
            let interpreter = ctx
                .host_vars
                .get("ansible_powershell_interpreter")
                .and_then(Value::as_str)
                .unwrap_or("pwsh -NoProfile -NonInteractive -File")
                .to_string();
            Ok(Assembled {
                kind,
                payload: payload.into_bytes(),
                args_file: None,
                interpreter: Some(interpreter),
                pipelining: false,
                suffix: ".ps1",
                modlib: None,
            })
        }
        ModuleType::JsonArgs => {
            let text = replacer::substitute(&String::from_utf8_lossy(&module.bytes), &subs);
            Ok(script(kind, text.into_bytes(), None, ctx))
        }
        ModuleType::WantJson => Ok(script(
            kind,
            module.bytes.to_vec(),
            Some(args_file::json(ctx.args)),
            ctx,
        )),
        ModuleType::OldStyle => Ok(script(
            kind,
            module.bytes.to_vec(),
            Some(args_file::old_style(ctx.args)),
            ctx,
        )),
        ModuleType::Binary => Ok(Assembled {
            kind,
            payload: module.bytes.to_vec(),
            args_file: Some(args_file::json(ctx.args)),
            interpreter: None,
            pipelining: false,
            suffix: "",
            modlib: None,
        }),
    }
}

fn substitutions<'a>(ctx: &'a AssembleContext<'_>) -> Substitutions<'a> {
    Substitutions {
        args: ctx.args,
        version: ctx
            .args
            .get("_ansible_version")
            .and_then(Value::as_str)
            .unwrap_or(crate::compat::core().version()),
        selinux_special_fs: &[],
        syslog_facility: ctx
            .args
            .get("_ansible_syslog_facility")
            .and_then(Value::as_str)
            .unwrap_or("LOG_USER"),
    }
}

/// A script module: its shebang settles the interpreter.
fn script(
    kind: ModuleType,
    payload: Vec<u8>,
    args_file: Option<Vec<u8>>,
    ctx: &AssembleContext<'_>,
) -> Assembled {
    let (payload, interpreter) = match interpreter::shebang(&payload) {
        Some(sb) => settle(&payload, &sb, ctx),
        None => (payload, None),
    };
    Assembled {
        kind,
        payload,
        args_file,
        interpreter,
        pipelining: false,
        suffix: "",
        modlib: None,
    }
}

/// The payload with its shebang replaced when the host sets the interpreter, and the
/// command line that runs it.
fn settle(payload: &[u8], sb: &Shebang, ctx: &AssembleContext<'_>) -> (Vec<u8>, Option<String>) {
    // Python's is the executor's, `ansible_python_interpreter` settled (`auto*`
    // discovered): the variable itself may say `auto_silent`.
    let python = (sb.name() == "python" && !ctx.python.is_empty()).then(|| ctx.python.to_string());
    let configured = python.or_else(|| {
        ctx.host_vars
            .get(&sb.variable())
            .and_then(Value::as_str)
            .map(str::to_string)
    });
    match configured {
        Some(interp) => (
            interpreter::replace_shebang(payload, sb, &interp),
            Some(interp),
        ),
        None => {
            let mut cmd = sb.interpreter.clone();
            for a in &sb.args {
                cmd.push(' ');
                cmd.push_str(a);
            }
            (payload.to_vec(), Some(cmd))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assemble::finder::Origin;
    use serde_json::json;
    use std::path::PathBuf;
    use std::sync::Arc;

    fn module(name: &str, src: &[u8]) -> LegacyModule {
        LegacyModule {
            name: name.into(),
            fqn: format!("ansible.legacy.{name}"),
            path: PathBuf::from(name),
            bytes: Arc::new(src.to_vec()),
            origin: Origin::Library,
        }
    }

    fn run(m: &LegacyModule, host_vars: Value) -> Result<Assembled, AssembleError> {
        let args = json!({"a": "b", "_ansible_version": "2.19.0"});
        let roots = CodeRoots::default();
        let cache = ZipCache::default();
        let hv = host_vars.as_object().unwrap().clone();
        assemble(
            m,
            &AssembleContext {
                args: &args,
                python: "/usr/bin/python3",
                host_vars: &hv,
                cache_dir: "~/.ansible/tmp/sandball-ansiballz",
                roots: &roots,
                cache: &cache,
            },
        )
    }

    #[test]
    fn want_json_and_old_style_get_args_files_and_interpreters() {
        let ruby = module("r", b"#!/usr/bin/ruby\n# WANT_JSON\n");
        let a = run(&ruby, json!({"ansible_ruby_interpreter": "/opt/ruby"})).unwrap();
        assert_eq!(a.kind, ModuleType::WantJson);
        assert_eq!(a.payload, b"#!/opt/ruby\n# WANT_JSON\n");
        assert_eq!(a.interpreter.as_deref(), Some("/opt/ruby"));
        assert_eq!(
            serde_json::from_slice::<Value>(a.args_file.as_ref().unwrap()).unwrap()["a"],
            "b"
        );
        let a = run(&ruby, json!({})).unwrap();
        assert_eq!(a.interpreter.as_deref(), Some("/usr/bin/ruby"));

        let sh = module("s", b"#!/bin/sh\necho\n");
        let a = run(&sh, json!({})).unwrap();
        assert_eq!(a.kind, ModuleType::OldStyle);
        assert!(String::from_utf8_lossy(a.args_file.as_ref().unwrap()).contains("a=b"));
        // `python` in a shebang is the host's Python.
        let py = module("p", b"#!/usr/bin/python\n# WANT_JSON\n");
        let a = run(&py, json!({})).unwrap();
        assert_eq!(a.payload, b"#!/usr/bin/python3\n# WANT_JSON\n");
    }

    #[test]
    fn json_args_are_substituted() {
        let m = module(
            "j",
            b"#!/usr/bin/python\nARGS = '''<<INCLUDE_ANSIBLE_MODULE_JSON_ARGS>>'''\n",
        );
        let a = run(&m, json!({})).unwrap();
        assert_eq!(a.kind, ModuleType::JsonArgs);
        assert!(a.args_file.is_none());
        let text = String::from_utf8(a.payload).unwrap();
        assert!(
            text.contains(r#"ARGS = '''{"a":"b","_ansible_version":"2.19.0"}'''"#),
            "{text}"
        );
    }

    #[test]
    fn binaries_run_themselves() {
        let m = module("b", b"\x7fELF\x02\x01\x01\0");
        let a = run(&m, json!({})).unwrap();
        assert_eq!(a.kind, ModuleType::Binary);
        assert!(a.interpreter.is_none() && a.args_file.is_some());
    }
}
