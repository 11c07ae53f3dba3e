//! The legacy module finder: where a task's module name leads when it is not a
//! built-in component.
//!
//! Searched as Ansible searches: a short name or `ansible.legacy.<name>` looks in the
//! library directories (`-M/--module-path`, `ANSIBLE_LIBRARY`, `library/` beside the
//! playbook), then in the installed ansible-core's `ansible/modules`;
//! `ansible.builtin.<name>` only in ansible-core; `<ns>.<coll>.<name>` in the collections
//! paths (`ansible_collections/<ns>/<coll>/plugins/modules`), a name without a file
//! routed as the collection's `meta/runtime.yml` says. ansible-core is found
//! as a user expects ([`LegacyFinder::ansible_core`]): a configured directory or
//! Python, the Python behind `ansible-playbook`/`ansible` on `PATH` (a venv, pipx), the
//! venv sandball itself is installed in, a library directory that is ansible-core's own
//! `ansible/modules`, then `python3`.

use super::module_utils::{self, CodeRoots};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// Where legacy modules and their code come from.
#[derive(Clone, Debug, Default)]
pub struct FinderConfig {
    /// Library directories, in search order.
    pub library: Vec<PathBuf>,
    /// How many of `library`'s first directories are beside the playbook or a role:
    /// Ansible searches those before the configured ones (`-M`, `ANSIBLE_LIBRARY`).
    pub adjacent: usize,
    /// Directories holding `ansible_collections/`.
    pub collections: Vec<PathBuf>,
    /// Extra module_utils directories (`module_utils/` beside the playbook,
    /// `ANSIBLE_MODULE_UTILS`).
    pub module_utils: Vec<PathBuf>,
    /// ansible-core's `ansible` package (or the site-packages holding it), if configured.
    pub ansible_core: Option<PathBuf>,
    /// The controller Python to ask for ansible-core when it is not configured.
    pub python: Option<String>,
}

impl FinderConfig {
    /// The configuration from the environment and the playbook's directory:
    /// `ANSIBLE_LIBRARY`, `ANSIBLE_COLLECTIONS_PATH`, `ANSIBLE_MODULE_UTILS`,
    /// `SANDBALL_ANSIBLE_CORE` (ansible-core's directory) and `SANDBALL_ANSIBLE_PYTHON`
    /// (the Python whose ansible-core to use; default `python3`). The playbook's
    /// `library/` comes first, then `module_path` (from `-M`), then `ANSIBLE_LIBRARY`.
    pub fn from_settings(module_path: &[PathBuf], playbook_dir: Option<&Path>) -> Self {
        let settings = crate::config::settings();
        let paths = |var: &str| settings.paths(var);
        let mut library = Vec::new();
        let mut module_utils = paths("ANSIBLE_MODULE_UTILS");
        let mut collections = paths("ANSIBLE_COLLECTIONS_PATH");
        collections.extend(paths("ANSIBLE_COLLECTIONS_PATHS"));
        // A path may name the `ansible_collections` directory itself, as ansible-core
        // accepts.
        for path in &mut collections {
            if path.file_name().is_some_and(|n| n == "ansible_collections")
                && let Some(parent) = path.parent()
            {
                *path = parent.to_path_buf();
            }
        }
        // Unset, Ansible's default: `$ANSIBLE_HOME/collections`, then the system's.
        if collections.is_empty() {
            collections.push(crate::config::ansible_home().join("collections"));
            collections.push(PathBuf::from("/usr/share/ansible/collections"));
        }
        if let Some(dir) = playbook_dir {
            library.push(dir.join("library"));
            module_utils.push(dir.join("module_utils"));
            collections.insert(0, dir.join("collections"));
        }
        let adjacent = library.len();
        library.extend(module_path.iter().cloned());
        library.extend(paths("ANSIBLE_LIBRARY"));
        FinderConfig {
            library,
            adjacent,
            collections,
            module_utils,
            ansible_core: std::env::var_os("SANDBALL_ANSIBLE_CORE").map(PathBuf::from),
            python: std::env::var("SANDBALL_ANSIBLE_PYTHON").ok(),
        }
    }
}

/// Where a legacy module was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A library directory.
    Library,
    /// ansible-core's own modules.
    AnsibleCore,
    /// A collection.
    Collection,
}

/// A legacy module's source, found.
#[derive(Debug)]
pub struct LegacyModule {
    /// The short name (`ping`).
    pub name: String,
    /// The Python module name it runs as (`ansible.modules.ping`,
    /// `ansible_collections.ns.coll.plugins.modules.x`, `ansible.legacy.x`).
    pub fqn: String,
    /// The file.
    pub path: PathBuf,
    /// Its bytes.
    pub bytes: Arc<Vec<u8>>,
    /// Where it came from.
    pub origin: Origin,
}

/// Errors finding a legacy module.
#[derive(Debug, thiserror::Error)]
pub enum FindError {
    /// Nothing of that name anywhere.
    #[error(
        "couldn't resolve module/action '{name}'. This often indicates a misspelling, missing collection, or incorrect module path. Looked in: {searched}"
    )]
    NotFound {
        /// The name as the task wrote it.
        name: String,
        /// Every directory searched.
        searched: String,
    },
    /// The file could not be read.
    #[error("cannot read module {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// Finds legacy modules; ansible-core is located once, on first need.
#[derive(Debug)]
pub struct LegacyFinder {
    config: FinderConfig,
    /// ansible-core's `ansible` package, and how it was found.
    ansible: OnceLock<Option<(PathBuf, String)>>,
}

/// Where a collection's routing (`runtime`: its `meta/runtime.yml`, or ansible-core's
/// `config/ansible_builtin_runtime.yml` for `ansible.builtin`) redirects its module or
/// action `short`: to another of its own (`yum` to `ansible.builtin.dnf`) or to
/// another collection's (`authorized_key` to `ansible.posix.authorized_key`).
pub(crate) fn redirect(runtime: &Path, collection: &str, short: &str) -> Option<String> {
    use saphyr::{LoadableYamlNode, Yaml};
    let text = std::fs::read_to_string(runtime).ok()?;
    let documents = Yaml::load_from_str(&text).ok()?;
    let routing = documents.first()?.as_mapping_get("plugin_routing")?;
    ["modules", "action"].iter().find_map(|kind| {
        let target = routing
            .as_mapping_get(kind)?
            .as_mapping_get(short)?
            .as_mapping_get("redirect")?
            .as_str()?;
        (target
            .strip_prefix(collection)
            .and_then(|t| t.strip_prefix('.'))
            != Some(short))
        .then(|| target.to_string())
    })
}

/// How many redirects a name may go through (ansible-core refuses a loop).
pub(crate) const MAX_REDIRECTS: usize = 10;

/// File extensions that are never a legacy module (documentation, compiled Python, a
/// WebAssembly component: sandball's kind, found as a component).
const NOT_MODULES: &[&str] = &["pyc", "pyo", "md", "rst", "yml", "yaml", "txt", "wasm"];

impl LegacyFinder {
    /// A finder with this configuration.
    pub fn new(config: FinderConfig) -> Self {
        LegacyFinder {
            config,
            ansible: OnceLock::new(),
        }
    }

    /// Adds the `library/` and `module_utils/` directories in these (roles, the
    /// directories of imported playbooks) to the search, their libraries in this order
    /// after the playbook's and before the configured ones, as Ansible searches them.
    pub fn add_plugin_dirs(&mut self, roles: &[&Path]) {
        for role in roles {
            let (library, utils) = (role.join("library"), role.join("module_utils"));
            if !self.config.library.contains(&library) {
                // After the playbook's and earlier roles', before the configured ones.
                self.config.library.insert(self.config.adjacent, library);
                self.config.adjacent += 1;
            }
            if !self.config.module_utils.contains(&utils) {
                self.config.module_utils.push(utils);
            }
        }
    }

    /// ansible-core's `ansible` package directory, if there is one: from
    /// `SANDBALL_ANSIBLE_CORE`, else the Python of `SANDBALL_ANSIBLE_PYTHON`, else the
    /// Python behind `ansible-playbook` or `ansible` on `PATH` (its `#!` line: a venv or
    /// a pipx install), else the Python of the venv sandball is installed in, else a
    /// library directory that is ansible-core's `ansible/modules` (`ANSIBLE_LIBRARY`,
    /// `library` in ansible.cfg), else `python3`'s.
    pub fn ansible_core(&self) -> Option<&Path> {
        self.ansible_core_found().map(|(dir, _)| dir)
    }

    /// ansible-core's `ansible` package directory and how it was found, if it was.
    pub fn ansible_core_found(&self) -> Option<(&Path, &str)> {
        self.ansible
            .get_or_init(|| self.locate_ansible_core())
            .as_ref()
            .map(|(dir, how)| (dir.as_path(), how.as_str()))
    }

    /// Where ansible-core was found and how, for `-v`.
    pub fn ansible_core_note(&self) -> String {
        match self.ansible_core_found() {
            Some((dir, how)) => {
                format!("ansible-core for legacy modules: {} ({how})", dir.display())
            }
            None => format!("ansible-core for legacy modules: {NOT_FOUND}"),
        }
    }

    fn locate_ansible_core(&self) -> Option<(PathBuf, String)> {
        if let Some(dir) = &self.config.ansible_core {
            return module_utils::ansible_package(dir)
                .map(|d| (d, "SANDBALL_ANSIBLE_CORE".to_string()));
        }
        if let Some(python) = &self.config.python {
            return ask_python(python).map(|d| {
                (
                    d,
                    format!("the Python of SANDBALL_ANSIBLE_PYTHON, {python}"),
                )
            });
        }
        for program in ["ansible-playbook", "ansible"] {
            if let Some((script, python)) = python_behind(program)
                && let Some(dir) = ask_python(&python)
            {
                return Some((dir, format!("the Python of {}, {python}", script.display())));
            }
        }
        if let Some(python) = venv_python()
            && let Some(dir) = ask_python(&python)
        {
            return Some((
                dir,
                format!("the Python of the venv sandball is in, {python}"),
            ));
        }
        for lib in &self.config.library {
            if lib.ends_with("ansible/modules")
                && let Some(dir) = lib.parent().and_then(module_utils::ansible_package)
            {
                return Some((dir, format!("the library directory {}", lib.display())));
            }
        }
        ask_python("python3").map(|d| (d, "python3 on PATH".to_string()))
    }

    /// Where module_utils code comes from.
    pub fn code_roots(&self) -> CodeRoots {
        let ansible = self.ansible_core().map(Path::to_path_buf);
        let mut collections = self.config.collections.clone();
        // Collections installed beside ansible-core (the `ansible` package from PyPI).
        if let Some(site) = ansible.as_deref().and_then(Path::parent) {
            collections.push(site.to_path_buf());
        }
        CodeRoots {
            ansible,
            module_utils: self.config.module_utils.clone(),
            collections,
        }
    }

    /// Whether a library directory (`-M`, `ANSIBLE_LIBRARY`, `library/` beside the
    /// playbook or a role) holds a legacy module named `short`; one that holds a
    /// component of that name (`short.wasm`) offers the component.
    pub fn library_has(&self, short: &str) -> bool {
        self.config.library.iter().any(|dir| {
            module_file(dir, short).is_some() && !dir.join(format!("{short}.wasm")).is_file()
        })
    }

    /// Finds the module a task's action names.
    pub fn find(&self, action: &str) -> Result<LegacyModule, FindError> {
        self.find_routed(action, 0)
    }

    /// Finds the module `action` names, `hops` redirects away from the task's name.
    fn find_routed(&self, action: &str, hops: usize) -> Result<LegacyModule, FindError> {
        let mut searched: Vec<PathBuf> = Vec::new();
        let parts: Vec<&str> = action.split('.').collect();
        let (short, scopes): (&str, &[Origin]) = match parts.as_slice() {
            [name] => (name, &[Origin::Library, Origin::AnsibleCore]),
            ["ansible", "legacy", name] => (name, &[Origin::Library, Origin::AnsibleCore]),
            ["ansible", "builtin", name] => (name, &[Origin::AnsibleCore]),
            [_, _, name] => (name, &[Origin::Collection]),
            _ => {
                return Err(FindError::NotFound {
                    name: action.into(),
                    searched: "nowhere: the name is neither short nor namespace.collection.module"
                        .into(),
                });
            }
        };
        for origin in scopes {
            let dirs: Vec<PathBuf> = match origin {
                Origin::Library => self.config.library.clone(),
                Origin::AnsibleCore => self
                    .ansible_core()
                    .map(|a| vec![a.join("modules")])
                    .unwrap_or_default(),
                Origin::Collection => self
                    .code_roots()
                    .collections
                    .iter()
                    .map(|c| {
                        c.join("ansible_collections")
                            .join(parts[0])
                            .join(parts[1])
                            .join("plugins/modules")
                    })
                    .collect(),
            };
            // ansible-core's own routing sends some builtin names elsewhere (`yum` runs
            // `dnf`, `authorized_key` the ansible.posix collection's), for those with no
            // file of their own.
            // A collection's own routing likewise.
            let missing = || dirs.iter().all(|d| module_file(d, short).is_none());
            let routed = match origin {
                Origin::AnsibleCore if missing() => self.ansible_core().and_then(|a| {
                    redirect(
                        &a.join("config/ansible_builtin_runtime.yml"),
                        "ansible.builtin",
                        short,
                    )
                }),
                Origin::Collection if missing() && hops < MAX_REDIRECTS => {
                    let collection = format!("{}.{}", parts[0], parts[1]);
                    self.code_roots().collections.iter().find_map(|root| {
                        let dir = root
                            .join("ansible_collections")
                            .join(parts[0])
                            .join(parts[1]);
                        dir.is_dir()
                            .then(|| redirect(&dir.join("meta/runtime.yml"), &collection, short))
                            .flatten()
                    })
                }
                _ => None,
            };
            let short = match routed.as_deref().map(|r| {
                (
                    r,
                    r.strip_prefix("ansible.builtin.")
                        .filter(|_| *origin == Origin::AnsibleCore),
                )
            }) {
                Some((_, Some(builtin))) => builtin,
                Some((collection, None)) => {
                    return self.find_routed(collection, hops + 1).map_err(|e| match e {
                        FindError::NotFound { searched, .. } => FindError::NotFound {
                            name: action.into(),
                            searched: format!(
                                "{searched} (ansible-core routes it to {collection})"
                            ),
                        },
                        other => other,
                    });
                }
                None => short,
            };
            for dir in dirs {
                if let Some(path) = module_file(&dir, short) {
                    let bytes = std::fs::read(&path).map_err(|source| FindError::Read {
                        path: path.clone(),
                        source,
                    })?;
                    let fqn = match origin {
                        Origin::Library => format!("ansible.legacy.{short}"),
                        Origin::AnsibleCore => format!("ansible.modules.{short}"),
                        Origin::Collection => format!(
                            "ansible_collections.{}.{}.plugins.modules.{short}",
                            parts[0], parts[1]
                        ),
                    };
                    tracing::debug!(module = action, path = %path.display(), "found a legacy module");
                    return Ok(LegacyModule {
                        name: short.to_string(),
                        fqn,
                        path,
                        bytes: Arc::new(bytes),
                        origin: *origin,
                    });
                }
                searched.push(dir);
            }
            if *origin == Origin::AnsibleCore && self.ansible_core().is_none() {
                searched.push(PathBuf::from(format!(
                    "(no ansible-core found: no ansible-playbook on PATH, and {} has not got it; set SANDBALL_ANSIBLE_CORE, or SANDBALL_ANSIBLE_PYTHON to a Python that has it)",
                    self.config.python.as_deref().unwrap_or("python3")
                )));
            }
        }
        Err(FindError::NotFound {
            name: action.into(),
            searched: searched
                .iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
        })
    }
}

/// The module file for `name` in `dir`: `name` itself, else `name.py`, else
/// `name.ps1`, else `name.<ext>` (first in name order), skipping documentation and
/// compiled Python; else the same for `_name`, as ansible-core finds a deprecated
/// module.
fn module_file(dir: &Path, name: &str) -> Option<PathBuf> {
    let exact = dir.join(name);
    if exact.is_file() {
        return Some(exact);
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_stem().and_then(|s| s.to_str()) == Some(name)
                && p.extension()
                    .and_then(|e| e.to_str())
                    .is_some_and(|e| !NOT_MODULES.contains(&e))
                && p.is_file()
        })
        .collect();
    found.sort_by_key(|p| {
        let ext = p.extension().and_then(|e| e.to_str()).unwrap_or_default();
        (ext != "py", ext != "ps1", p.clone())
    });
    // A deprecated module keeps its name behind a leading underscore (`_name.py`).
    found.into_iter().next().or_else(|| {
        (!name.starts_with('_'))
            .then(|| module_file(dir, &format!("_{name}")))
            .flatten()
    })
}

/// The first `program` on `PATH` that is an executable file.
fn on_path(program: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// The first `program` on `PATH` that is a Python script, and its Python (a program
/// of that name that is no script, such as a link to sandball itself, is passed over).
fn python_behind(program: &str) -> Option<(PathBuf, String)> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).find_map(|dir| {
        let script = dir.join(program);
        let python = shebang_python(&script)?;
        Some((script, python))
    })
}

/// What [`LegacyFinder::ansible_core_note`] says when there is no ansible-core.
pub const NOT_FOUND: &str =
    "none found (set SANDBALL_ANSIBLE_CORE, or SANDBALL_ANSIBLE_PYTHON to a Python that has it)";

/// The Python of the venv `sandball` is installed in (a wheel installed with pip or
/// pipx: `<venv>/bin/python3` beside it, `<venv>/pyvenv.cfg` above), when it is in one.
fn venv_python() -> Option<String> {
    let bin = crate::layout::exe_dir()?;
    let python = bin.join("python3");
    (bin.parent()?.join("pyvenv.cfg").is_file() && python.is_file())
        .then(|| python.display().to_string())
}

/// The controller's Python, as `ansible_playbook_python` names it: the Python of
/// `SANDBALL_ANSIBLE_PYTHON`, else the one behind `ansible-playbook` (or `ansible`) on
/// `PATH`, else that of the venv sandball is installed in, else `python3` on `PATH`; an
/// absolute path, or none when there is none.
pub fn controller_python() -> Option<String> {
    let named = std::env::var("SANDBALL_ANSIBLE_PYTHON")
        .ok()
        .or_else(|| {
            ["ansible-playbook", "ansible"]
                .iter()
                .find_map(|program| python_behind(program).map(|(_, python)| python))
        })
        .or_else(venv_python)
        .unwrap_or_else(|| "python3".to_string());
    if named.contains('/') {
        Some(named)
    } else {
        on_path(&named).map(|p| p.display().to_string())
    }
}

/// The Python a script's `#!` line names (`#!/venv/bin/python3`, `#!/usr/bin/env
/// python3`), when it names one.
fn shebang_python(script: &Path) -> Option<String> {
    use std::io::Read;
    let mut head = [0u8; 256];
    let n = std::fs::File::open(script).ok()?.read(&mut head).ok()?;
    let text = std::str::from_utf8(&head[..n]).ok()?;
    let line = text.strip_prefix("#!")?.lines().next()?.trim();
    let mut words = line.split_whitespace();
    let first = words.next()?;
    let python = if first.ends_with("/env") {
        words.find(|w| !w.starts_with('-'))?
    } else {
        first
    };
    python
        .rsplit('/')
        .next()
        .is_some_and(|name| name.starts_with("python"))
        .then(|| python.to_string())
}

/// The version of the ansible-core a run finds for its legacy modules (as
/// [`LegacyFinder::ansible_core`] finds it, before any playbook's library is known), as
/// (major, minor, full text); `None` without one.
pub fn installed_core_version() -> Option<(u32, u32, String)> {
    let finder = LegacyFinder::new(FinderConfig::from_settings(&[], None));
    finder
        .ansible_core()
        .and_then(module_utils::ansible_version)
}

/// The `ansible` package in the `site-packages` beside a Python given by its path (a
/// venv's `bin/python3`: `lib/python3.X/site-packages/ansible`), found without running
/// it.
fn beside_python(python: &str) -> Option<PathBuf> {
    let prefix = Path::new(python).parent()?.parent()?;
    let lib = std::fs::read_dir(prefix.join("lib")).ok()?;
    lib.filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with("python3"))
        .find_map(|e| module_utils::ansible_package(&e.path().join("site-packages/ansible")))
}

/// Asks a Python where its `ansible` package is: the `site-packages` beside it when
/// that has one, else the Python itself.
fn ask_python(python: &str) -> Option<PathBuf> {
    if python.contains('/')
        && let Some(dir) = beside_python(python)
    {
        return Some(dir);
    }
    let out = std::process::Command::new(python)
        .envs(crate::config::settings().from_file())
        .args([
            "-c",
            "import os, ansible; print(os.path.dirname(ansible.__file__))",
        ])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        tracing::debug!(python, "no ansible-core in this Python");
        return None;
    }
    let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    module_utils::ansible_package(&dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(p: &Path, text: &str) {
        crate::assemble::test_write(p, "", text);
    }

    fn setup() -> (tempfile::TempDir, LegacyFinder) {
        let d = tempfile::tempdir().unwrap();
        let core = d.path().join("site/ansible");
        write(&core.join("module_utils/basic.py"), "");
        write(&core.join("modules/ping.py"), "# core ping\n");
        write(&core.join("modules/stat.py"), "# core stat\n");
        write(&d.path().join("lib/ping.sh"), "# library ping\n");
        write(&d.path().join("lib/ping.md"), "docs\n");
        write(
            &d.path()
                .join("colls/ansible_collections/ns/coll/plugins/modules/thing.py"),
            "# thing\n",
        );
        let finder = LegacyFinder::new(FinderConfig {
            library: vec![d.path().join("lib")],
            adjacent: 1,
            collections: vec![d.path().join("colls")],
            module_utils: vec![],
            ansible_core: Some(d.path().join("site")),
            python: None,
        });
        (d, finder)
    }

    #[test]
    fn short_and_legacy_names_prefer_the_library() {
        let (_d, f) = setup();
        for name in ["ping", "ansible.legacy.ping"] {
            let m = f.find(name).unwrap();
            assert_eq!(m.origin, Origin::Library, "{name}");
            assert_eq!(m.fqn, "ansible.legacy.ping");
            assert_eq!(m.bytes.as_slice(), b"# library ping\n");
        }
        let m = f.find("stat").unwrap();
        assert_eq!(m.origin, Origin::AnsibleCore);
        assert_eq!(m.fqn, "ansible.modules.stat");
    }

    #[test]
    fn a_deprecated_module_is_found_behind_its_underscore() {
        let (d, f) = setup();
        write(&d.path().join("lib/_old.py"), "# deprecated\n");
        let m = f.find("old").unwrap();
        assert_eq!(m.bytes.as_slice(), b"# deprecated\n");
        assert!(f.find("_old").is_ok());
        assert!(f.find("older").is_err());
    }

    #[test]
    fn builtin_means_ansible_core_only() {
        let (_d, f) = setup();
        let m = f.find("ansible.builtin.ping").unwrap();
        assert_eq!(m.origin, Origin::AnsibleCore);
        assert_eq!(m.bytes.as_slice(), b"# core ping\n");
    }

    #[test]
    fn ansible_cores_routing_sends_a_builtin_name_to_another() {
        let (d, f) = setup();
        write(
            &d.path()
                .join("site/ansible/config/ansible_builtin_runtime.yml"),
            "plugin_routing:\n  action:\n    yum:\n      redirect: ansible.builtin.stat\n    gone:\n      redirect: some.coll.gone\n",
        );
        for name in ["yum", "ansible.builtin.yum", "ansible.legacy.yum"] {
            let m = f.find(name).unwrap();
            assert_eq!(
                (m.name.as_str(), m.fqn.as_str()),
                ("stat", "ansible.modules.stat")
            );
            assert_eq!(m.bytes.as_slice(), b"# core stat\n");
        }
        // Only to another builtin: a collection's is not here.
        assert!(f.find("gone").is_err());
    }

    #[test]
    fn collections_by_fqcn() {
        let (_d, f) = setup();
        let m = f.find("ns.coll.thing").unwrap();
        assert_eq!(m.origin, Origin::Collection);
        assert_eq!(m.fqn, "ansible_collections.ns.coll.plugins.modules.thing");
        assert!(f.find("thing").is_err());
    }

    #[test]
    fn a_missing_module_lists_where_it_looked() {
        let (d, f) = setup();
        let err = f.find("nosuch").unwrap_err().to_string();
        assert!(
            err.contains("couldn't resolve module/action 'nosuch'"),
            "{err}"
        );
        assert!(
            err.contains(&d.path().join("lib").display().to_string()),
            "{err}"
        );
        assert!(err.contains("site/ansible/modules"), "{err}");
        let err = f.find("ns.other.x").unwrap_err().to_string();
        assert!(
            err.contains("ansible_collections/ns/other/plugins/modules"),
            "{err}"
        );
    }

    #[test]
    fn ansible_core_is_found_from_a_python() {
        // Without ansible-core in the given Python, the error says how to configure it.
        let f = LegacyFinder::new(FinderConfig {
            python: Some("/nonexistent/python".into()),
            ..Default::default()
        });
        let err = f.find("ansible.builtin.ping").unwrap_err().to_string();
        assert!(err.contains("SANDBALL_ANSIBLE_CORE"), "{err}");
    }

    #[test]
    fn the_python_of_a_script_is_read_from_its_first_line() {
        let d = tempfile::tempdir().unwrap();
        let cases = [
            (
                "#!/venv/bin/python3.12\nimport x\n",
                Some("/venv/bin/python3.12"),
            ),
            ("#!/usr/bin/env python3\n", Some("python3")),
            ("#!/usr/bin/env -S python3 -E\n", Some("python3")),
            ("#!/bin/sh\nexec python3 \"$@\"\n", None),
            ("no line\n", None),
        ];
        for (i, (text, expected)) in cases.into_iter().enumerate() {
            let script = d.path().join(format!("s{i}"));
            std::fs::write(&script, text).unwrap();
            assert_eq!(shebang_python(&script).as_deref(), expected, "{text}");
        }
    }

    #[test]
    fn a_library_directory_that_is_ansible_cores_modules_finds_ansible_core() {
        let d = tempfile::tempdir().unwrap();
        let core = d.path().join("site/ansible");
        write(&core.join("module_utils/basic.py"), "");
        write(&core.join("modules/tempfile.py"), "# core tempfile\n");
        let f = LegacyFinder::new(FinderConfig {
            library: vec![core.join("modules")],
            ..Default::default()
        });
        // An ansible-playbook on PATH would be asked first (the end-to-end tests
        // cover that order); CI has none there.
        if on_path("ansible-playbook").is_none() && on_path("ansible").is_none() {
            assert_eq!(f.ansible_core(), Some(core.as_path()));
            assert!(f.ansible_core_note().contains("the library directory"));
            let m = f.find("ansible.builtin.tempfile").unwrap();
            assert_eq!(m.bytes.as_slice(), b"# core tempfile\n");
        }
    }
}
