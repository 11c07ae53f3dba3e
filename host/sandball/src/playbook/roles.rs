//! Roles, loaded as ansible-core loads them when it reads a play: each entry of
//! `roles:` is found on the roles path (`roles/` beside the playbook,
//! `ANSIBLE_ROLES_PATH`, the playbook's directory, Ansible's default directories, or a
//! path), its `meta/main` dependencies loaded first, and its `tasks/main` and
//! `handlers/main` become blocks of the play (before the play's own tasks and
//! handlers), marked with the [`Role`] whose `defaults/main`, `vars/main` and parameters
//! are variable layers of their own. Every entry and dependency is loaded; the executor
//! runs a role's tasks once per host and parameters (unless its meta says
//! `allow_duplicates`), as Ansible does. The role entry's keywords (`when`, `tags`, `become`, `vars`…) apply to its dependencies and
//! its tasks. A role named without a collection is looked for first in the
//! collections of the `collections` search list of what names it; a role's own list
//! (its collection, its meta's `collections`) is what its tasks search.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::playbook::block::{Block, TaskItem, task_items};
use crate::playbook::inheritance::Keywords;
use crate::playbook::play::Play;
use crate::playbook::role::{RoleRef, role};
use crate::yaml;
use crate::yaml::error::PlaybookError;
use crate::yaml::location::Location;
use crate::yaml::source::SourceFile;

/// One role of a play, as its tasks and handlers see it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Role {
    /// Which role with which parameters: a role runs once per host and key, unless
    /// `allow_duplicates`.
    pub key: String,
    /// `allow_duplicates` from its meta.
    pub allow_duplicates: bool,
    /// Its name as written where it is called (in a collection: its name there),
    /// `role_name`.
    pub name: String,
    /// `namespace.collection.name` for a role of a collection: how its tasks and
    /// handlers are shown, and a second name to notify its handlers by.
    pub fqcn: Option<String>,
    /// Its directory (`role_path`).
    pub path: PathBuf,
    /// `defaults/main`: the lowest variable layer.
    pub defaults: Map<String, Value>,
    /// `vars/main`: above the play's `vars_files`.
    pub vars: Map<String, Value>,
    /// The `vars/main` of its dependencies (theirs first, recursively): for its own
    /// tasks, above the vars of the roles that depend on it and below its own, as in
    /// Ansible.
    pub dependency_vars: Map<String, Value>,
    /// The `defaults/main` of its dependencies (theirs first, recursively): beneath its
    /// own defaults and those of the roles above it.
    pub dependency_defaults: Map<String, Value>,
    /// The role entry's parameters, over those of the roles above it: above
    /// `set_fact`.
    pub params: Map<String, Value>,
    /// The defaults and vars of the roles above it (Ansible's dependency chain).
    pub inherited: Inherited,
    /// Whether its defaults and vars are the play's (see [`RoleOptions::public`]); a
    /// private role's are its own tasks' alone.
    pub public: bool,
    /// The collections its tasks search for unqualified actions and roles: its own
    /// collection first (a role of a collection), then its `meta/main`'s
    /// `collections`, then `ansible.builtin` (a collection's role) or `ansible.legacy`
    /// when the list names neither; empty for a role outside collections without any.
    pub collections: Vec<String>,
}

/// What a role takes from the roles above it — those that depend on it, include it or
/// import it, Ansible's dependency chain — each merged outermost first, a nearer
/// role's values winning. Its tasks see the defaults above its dependencies' defaults
/// and below its own, the vars below its dependencies' and its own vars.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Inherited {
    /// The parameters of the roles above.
    pub params: Map<String, Value>,
    /// Their `defaults/main`.
    pub defaults: Map<String, Value>,
    /// Their `vars/main`.
    pub vars: Map<String, Value>,
}

impl Inherited {
    /// What the roles beneath `role` (its dependencies, the roles its tasks include or
    /// import) inherit: what it inherits, with its own values over it.
    pub fn from_role(role: &Role) -> Inherited {
        Inherited::beneath(&role.inherited, &role.params, &role.defaults, &role.vars)
    }

    /// `above` with a role's own parameters, defaults and vars over it.
    fn beneath(
        above: &Inherited,
        params: &Map<String, Value>,
        defaults: &Map<String, Value>,
        vars: &Map<String, Value>,
    ) -> Inherited {
        let over = |a: &Map<String, Value>, b: &Map<String, Value>| {
            let mut m = a.clone();
            m.extend(b.clone());
            m
        };
        Inherited {
            params: over(&above.params, params),
            defaults: over(&above.defaults, defaults),
            vars: over(&above.vars, vars),
        }
    }
}

/// Where roles are looked for, in order, for a playbook in `base`, as ansible-core
/// searches: `roles/` beside the playbook, the configured `roles_path`
/// (`ANSIBLE_ROLES_PATH`, `roles_path` in ansible.cfg; by default
/// `$ANSIBLE_HOME/roles:/usr/share/ansible/roles:/etc/ansible/roles`, `ANSIBLE_HOME`
/// being `~/.ansible` unless set), then the
/// playbook's directory itself.
pub fn roles_path(base: &Path) -> Vec<PathBuf> {
    // A playbook named without a directory is in the current one.
    let base = match base.as_os_str().is_empty() {
        true => std::env::current_dir().unwrap_or_default(),
        false => std::path::absolute(base).unwrap_or_else(|_| base.to_path_buf()),
    };
    let configured = crate::config::settings()
        .get("ANSIBLE_ROLES_PATH")
        .map_or_else(
            || {
                format!(
                    "{}/roles:/usr/share/ansible/roles:/etc/ansible/roles",
                    crate::config::ansible_home().display()
                )
            },
            str::to_string,
        );
    let mut dirs = vec![base.join("roles")];
    dirs.extend(
        configured
            .split(':')
            .filter(|d| !d.is_empty())
            .map(expand_home),
    );
    dirs.push(base);
    dirs
}

/// `~/` is the home directory; a relative directory is taken from the current one,
/// as Ansible resolves `roles_path` (so `role_path` is absolute).
fn expand_home(dir: &str) -> PathBuf {
    let path = crate::local_files::expand_user(dir);
    std::path::absolute(&path).unwrap_or(path)
}

/// Replaces a play's `roles:` with the blocks they become: their tasks before the
/// play's tasks, their handlers before its handlers.
pub(crate) fn expand(play: &mut Play, base: &Path) -> Result<(), PlaybookError> {
    let mut loader = Loader::new(base);
    // The play's `collections` are searched for the roles it names.
    let search = play.keywords.collections().unwrap_or_default();
    for entry in std::mem::take(&mut play.roles) {
        loader.load(
            &entry,
            &[],
            &RoleOptions::default(),
            &Inherited::default(),
            &search,
        )?;
    }
    let Loader {
        tasks,
        handlers,
        names,
        dependencies,
        loaded,
        ..
    } = loader;
    play.tasks.splice(0..0, tasks);
    play.handlers.splice(0..0, handlers);
    play.role_names = names;
    play.dependent_role_names = dependencies;
    play.loaded_roles = loaded;
    Ok(())
}

/// Which files of a role are read (`import_role`/`include_role` choose them).
#[derive(Clone, Debug)]
pub struct RoleOptions {
    /// `tasks_from`.
    pub tasks_from: String,
    /// `vars_from`.
    pub vars_from: String,
    /// `defaults_from`.
    pub defaults_from: String,
    /// `handlers_from`.
    pub handlers_from: String,
    /// `allow_duplicates`, over the role's meta.
    pub allow_duplicates: Option<bool>,
    /// Imported or included by a task (`import_role`, `include_role`), not a `roles:`
    /// entry or a dependency: ansible-core tells such instances of a role apart from
    /// the others, but not an imported one from an included one.
    pub from_task: bool,
    /// `rolespec_validate`: check the role's `meta/argument_specs.yml` first (the
    /// default).
    pub validate: bool,
    /// `public`: its defaults and vars are the play's from then on. By default those
    /// of a role imported or in `roles:` are, not those of an included one; the
    /// `private_role_vars` setting (`ANSIBLE_PRIVATE_ROLE_VARS`), when set, decides for
    /// all of them, as in ansible-core.
    pub public: bool,
}

/// Whether a role's variables are the play's when its entry does not say (`public`):
/// as `private_role_vars` (`ANSIBLE_PRIVATE_ROLE_VARS`) says when it is set, else for a
/// role read with the playbook (`static`), not for an included one.
fn default_public(static_role: bool) -> bool {
    match crate::config::settings().get("ANSIBLE_PRIVATE_ROLE_VARS") {
        Some(private) => !sandball_pycompat::boolean::setting_flag(Some(private), false),
        None => static_role,
    }
}

/// The options of `import_role`/`include_role` that name one of a role's files.
pub(crate) const FILE_OPTIONS: [&str; 4] =
    ["tasks_from", "vars_from", "defaults_from", "handlers_from"];

/// The role's directory each of [`FILE_OPTIONS`] names a file of.
pub(crate) const FILE_DIRS: [&str; 4] = ["tasks", "vars", "defaults", "handlers"];

/// The options of `import_role`/`include_role` that are switches (templated like the
/// file options: `public: "{{ expose | bool }}"`).
pub(crate) const FLAG_OPTIONS: [&str; 3] = ["allow_duplicates", "public", "rolespec_validate"];

/// Every option `import_role` takes: the role's name, [`FILE_OPTIONS`] and
/// [`FLAG_OPTIONS`] (`include_role` takes `apply` too, and from ansible-core 2.21
/// `rescuable`).
pub(crate) const ROLE_OPTIONS: [&str; 10] = [
    "name",
    "role",
    "_raw_params",
    FILE_OPTIONS[0],
    FILE_OPTIONS[1],
    FILE_OPTIONS[2],
    FILE_OPTIONS[3],
    FLAG_OPTIONS[0],
    FLAG_OPTIONS[1],
    FLAG_OPTIONS[2],
];

/// Why a `*_from` option is no file name, in ansible-core's words.
pub(crate) fn not_a_file_name(key: &str, value: &Value) -> String {
    format!(
        "Expected a string for {key} but got {} instead",
        sandball_pycompat::pyfmt::type_name(value)
    )
}

impl RoleOptions {
    /// The options an `import_role` or `include_role` task gives (`tasks_from`…,
    /// `allow_duplicates`, which is true unless the task says otherwise, as in
    /// Ansible: importing or including a role again runs it again).
    pub fn of_task(args: &Map<String, Value>, dynamic: bool) -> RoleOptions {
        let from = |key: &str| {
            args.get(key)
                .and_then(Value::as_str)
                .unwrap_or("main")
                .to_string()
        };
        RoleOptions {
            tasks_from: from("tasks_from"),
            vars_from: from("vars_from"),
            defaults_from: from("defaults_from"),
            handlers_from: from("handlers_from"),
            allow_duplicates: Some(
                sandball_pycompat::boolean::truthy(args.get("allow_duplicates"), true)
                    .unwrap_or(true),
            ),
            from_task: true,
            validate: sandball_pycompat::boolean::truthy(args.get("rolespec_validate"), true)
                .unwrap_or(true),
            public: sandball_pycompat::boolean::truthy(
                args.get("public"),
                default_public(!dynamic),
            )
            .unwrap_or(default_public(!dynamic)),
        }
    }
}

impl Default for RoleOptions {
    fn default() -> Self {
        let main = || "main".to_string();
        RoleOptions {
            tasks_from: main(),
            vars_from: main(),
            defaults_from: main(),
            handlers_from: main(),
            allow_duplicates: None,
            from_task: false,
            validate: true,
            public: default_public(true),
        }
    }
}

/// The parts of a role name written `namespace.collection.role`.
fn collection_role(name: &str) -> Option<(&str, &str, &str)> {
    let mut parts = name.split('.');
    let parts = (parts.next()?, parts.next()?, parts.next()?, parts.next());
    let word = |p: &str| !p.is_empty() && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    match parts {
        (ns, col, role, None) if word(ns) && word(col) && word(role) => Some((ns, col, role)),
        _ => None,
    }
}

/// The directory of the role `name` (or at that path), in the collections of `search`
/// and along the roles path of a playbook in `base`.
pub(crate) fn find_role(
    name: &str,
    at: &Location,
    base: &Path,
    search: &[String],
) -> Result<PathBuf, PlaybookError> {
    Loader::new(base).find(name, at, search).map(|(dir, _)| dir)
}

/// One role (its dependencies first) for `import_role`/`include_role`: the block of its
/// tasks, the block of its handlers, and the role.
pub(crate) fn load_one(
    name: &str,
    at: &Location,
    base: &Path,
    options: &RoleOptions,
    parent: Option<&Role>,
    search: &[String],
) -> Result<(Vec<TaskItem>, TaskItem, Arc<Role>), PlaybookError> {
    let mut loader = Loader::new(base);
    let entry = RoleRef {
        name: name.to_string(),
        keywords: Keywords::default(),
        params: Map::new(),
        location: at.clone(),
    };
    // A role included or imported by another role's task sees that role's parameters,
    // defaults and vars (beneath its own), as a dependency does. (It is not a
    // dependency: a role may include itself.)
    let inherited = parent.map(Inherited::from_role).unwrap_or_default();
    loader.load(&entry, &[], options, &inherited, search)?;
    let role = loader
        .loaded
        .pop()
        .ok_or_else(|| PlaybookError::at(at, format!("the role '{name}' could not be loaded")))?;
    let handlers = TaskItem::Block(Box::new(Block {
        name: None,
        block: loader.handlers,
        rescue: Vec::new(),
        always: Vec::new(),
        keywords: Keywords::default(),
        location: at.clone(),
    }));
    Ok((loader.tasks, handlers, role))
}

/// The vars and defaults a role gives the roles that depend on it: its dependencies'
/// (theirs first, recursively) under its own.
#[derive(Default)]
struct Exported {
    vars: Map<String, Value>,
    defaults: Map<String, Value>,
}

impl Exported {
    fn of(role: &Role) -> Exported {
        let mut vars = role.dependency_vars.clone();
        vars.extend(role.vars.clone());
        let mut defaults = role.dependency_defaults.clone();
        defaults.extend(role.defaults.clone());
        Exported { vars, defaults }
    }
}

/// Loads the roles of one play.
struct Loader {
    path: Vec<PathBuf>,
    /// Directories holding `ansible_collections/`, for `namespace.collection.role`.
    collections: Vec<PathBuf>,
    tasks: Vec<TaskItem>,
    handlers: Vec<TaskItem>,
    /// The play's role names, in order (`ansible_play_role_names`).
    names: Vec<String>,
    /// The roles pulled in as dependencies (`ansible_dependent_role_names`).
    dependencies: Vec<String>,
    /// The play's roles, in order.
    loaded: Vec<Arc<Role>>,
}

impl Role {
    /// How the role is shown in banners and `ansible_role_name`: its collection name,
    /// else its name.
    pub fn shown_name(&self) -> &str {
        self.fqcn.as_deref().unwrap_or(&self.name)
    }
}

impl Loader {
    /// A loader for the roles of a playbook in `base`.
    fn new(base: &Path) -> Loader {
        Loader {
            path: roles_path(base),
            collections: crate::assemble::finder::FinderConfig::from_settings(&[], Some(base))
                .collections,
            tasks: Vec::new(),
            handlers: Vec::new(),
            names: Vec::new(),
            dependencies: Vec::new(),
            loaded: Vec::new(),
        }
    }

    /// Adds the role of `entry` (its dependencies first) to the play. `inherited` is
    /// what it takes from the roles above it: a role sees those values, with its own
    /// over them, as in Ansible. Returns the role vars and defaults it exports to the
    /// roles that depend on it: its dependencies' under its own. `search` is the
    /// collections search list of whatever names the role.
    fn load(
        &mut self,
        entry: &RoleRef,
        parents: &[String],
        options: &RoleOptions,
        inherited: &Inherited,
        search: &[String],
    ) -> Result<Exported, PlaybookError> {
        let (dir, collection) = self.find(&entry.name, &entry.location, search)?;
        // A role keeps its name as written (banners, `role_name`), as in Ansible,
        // whatever directory it resolves to (a `geerlingguy.redis` link to `redis/`
        // stays `geerlingguy.redis`, a path stays the path); a collection's role is
        // its name within the collection.
        let name = match (&collection, collection_role(&entry.name)) {
            (Some(_), Some((_, _, role))) => role.to_string(),
            _ => entry.name.clone(),
        };
        let meta = read_meta(&dir)?;
        // Its own collection first, then those its meta names.
        let mut collections: Vec<String> = collection.iter().cloned().collect();
        for c in &meta.collections {
            if !collections.contains(c) {
                collections.push(c.clone());
            }
        }
        let fallback = match collection {
            Some(_) => "ansible.builtin",
            None => "ansible.legacy",
        };
        crate::playbook::inheritance::with_fallback(&mut collections, fallback);
        // `ansible_play_role_names` and the others name a collection's role in full.
        let listed = match &collection {
            Some(c) => format!("{c}.{name}"),
            None => name.clone(),
        };
        if parents.is_empty() {
            self.names.push(listed);
        } else if !self.dependencies.contains(&listed) {
            self.dependencies.push(listed);
        }
        if parents.contains(&name) {
            return Err(PlaybookError::at(
                &entry.location,
                format!(
                    "the role '{name}' depends on itself (through {})",
                    parents.join(" < ")
                ),
            ));
        }
        // The entry's keywords reach the dependencies as well as the role's tasks.
        let outer_tasks = self.tasks.len();
        let outer_handlers = self.handlers.len();
        let mut chain = vec![name.clone()];
        chain.extend(parents.iter().cloned());
        for (sub, name) in [
            ("tasks", &options.tasks_from),
            ("vars", &options.vars_from),
            ("defaults", &options.defaults_from),
            ("handlers", &options.handlers_from),
        ] {
            inside_role(&dir, sub, name, &entry.location)?;
            if let Some(missing) = missing_file(&dir, sub, name) {
                return Err(PlaybookError::at(&entry.location, missing));
            }
        }
        let defaults = read_vars(&dir.join("defaults"), &options.defaults_from)?;
        let vars = read_vars(&dir.join("vars"), &options.vars_from)?;
        let mut params = inherited.params.clone();
        params.extend(entry.params.clone());
        // Its dependencies see its parameters, defaults and vars.
        let beneath = Inherited::beneath(inherited, &entry.params, &defaults, &vars);
        let mut from_dependencies = Exported::default();
        for dep in &meta.dependencies {
            // A dependency's variables are the play's as its dependent's are.
            let dep_options = RoleOptions {
                public: options.public,
                ..RoleOptions::default()
            };
            // Its dependencies are searched for in its collections.
            let exported = self.load(dep, &chain, &dep_options, &beneath, &collections)?;
            from_dependencies.vars.extend(exported.vars);
            from_dependencies.defaults.extend(exported.defaults);
        }
        let role = Arc::new(Role {
            // Ansible tells role instances apart by their parameters, the entry's
            // `when`, `tags` and `vars`, the files chosen and how it was included.
            key: format!(
                "{}\n{}\n{:?}\n{:?}\n{}\n{}/{}/{}/{}/{}",
                dir.display(),
                Value::Object(entry.params.clone()),
                entry.keywords.when,
                entry.keywords.tags,
                Value::Object(entry.keywords.vars.clone()),
                options.tasks_from,
                options.vars_from,
                options.defaults_from,
                options.handlers_from,
                options.from_task
            ),
            allow_duplicates: options.allow_duplicates.unwrap_or(meta.allow_duplicates),
            name: name.clone(),
            fqcn: collection.map(|c| format!("{c}.{name}")),
            path: dir.clone(),
            defaults,
            vars,
            dependency_vars: from_dependencies.vars,
            dependency_defaults: from_dependencies.defaults,
            params,
            inherited: inherited.clone(),
            public: options.public,
            collections,
        });
        let marked = |items: Vec<TaskItem>| {
            TaskItem::Block(Box::new(Block {
                name: None,
                block: items,
                rescue: Vec::new(),
                always: Vec::new(),
                keywords: Keywords::of_role(role.clone()),
                location: entry.location.clone(),
            }))
        };
        let mut tasks = read_tasks(&dir.join("tasks"), &options.tasks_from, false)?;
        // A spec for this entry point makes its validation the role's first task
        // (unless `rolespec_validate: false`).
        if options.validate
            && let Some(check) = validation_task(&dir, &name, &options.tasks_from, &entry.params)?
        {
            tasks.insert(0, check);
        }
        let handlers = read_tasks(&dir.join("handlers"), &options.handlers_from, true)?;
        self.tasks.push(marked(tasks));
        self.handlers.push(marked(handlers));
        let exported = Exported::of(&role);
        self.loaded.push(role);
        let wrap = |items: Vec<TaskItem>| {
            TaskItem::Block(Box::new(Block {
                name: None,
                block: items,
                rescue: Vec::new(),
                always: Vec::new(),
                keywords: entry.keywords.clone(),
                location: entry.location.clone(),
            }))
        };
        let own_tasks = self.tasks.split_off(outer_tasks);
        self.tasks.push(wrap(own_tasks));
        let own_handlers = self.handlers.split_off(outer_handlers);
        self.handlers.push(wrap(own_handlers));
        Ok(exported)
    }

    /// The directory of the role named (or at the path) `name`, and the collection
    /// it belongs to when it was found in one: as ansible-core looks, a
    /// `namespace.collection.role` name in that collection, a plain name in each
    /// collection of `search` (the collections search list of what names it), then
    /// along the roles path.
    fn find(
        &self,
        name: &str,
        at: &Location,
        search: &[String],
    ) -> Result<(PathBuf, Option<String>), PlaybookError> {
        let in_collection = |collection: &str, role: &str| {
            let (namespace, coll) = collection.split_once('.')?;
            self.collections
                .iter()
                .map(|root| {
                    root.join("ansible_collections")
                        .join(namespace)
                        .join(coll)
                        .join("roles")
                        .join(role)
                })
                .find(|d| d.is_dir())
                .map(|d| (d, Some(collection.to_string())))
        };
        let plain = !name.contains(['.', '/']);
        let from_collections = match collection_role(name) {
            Some((namespace, collection, role)) => {
                in_collection(&format!("{namespace}.{collection}"), role)
            }
            None if plain => search
                .iter()
                .filter(|c| !matches!(c.as_str(), "ansible.builtin" | "ansible.legacy"))
                .find_map(|c| in_collection(c, name)),
            None => None,
        };
        let as_path = Path::new(name);
        let found = from_collections.or_else(|| {
            let mut candidates = if as_path.is_absolute() {
                vec![as_path.to_path_buf()]
            } else {
                self.path.iter().map(|d| d.join(name)).collect()
            };
            candidates.retain(|d| d.is_dir());
            candidates.into_iter().next().map(|d| (d, None))
        });
        // Resolved (`..` and symlinks), so that an instance is the same whichever
        // directory found it, and `role_path` is the real path, as in Ansible; a
        // collection's role keeps the path through its collection (a collection linked
        // into the collections path is not resolved), as ansible-core's loader finds it.
        found
            .map(|(d, collection)| {
                let d = match collection {
                    Some(_) => std::path::absolute(&d).ok(),
                    None => std::fs::canonicalize(&d).ok(),
                }
                .or_else(|| std::path::absolute(&d).ok())
                .unwrap_or(d);
                (d, collection)
            })
            .ok_or_else(|| {
                let searched: Vec<String> =
                    self.path.iter().map(|d| d.display().to_string()).collect();
                PlaybookError::at(
                    at,
                    format!("the role '{name}' was not found in {}", searched.join(":")),
                )
            })
    }
}

/// The `validate_argument_spec` task for a role's entry point (`main`, or the
/// `tasks_from` file's name) when `meta/argument_specs.yml` (or `argument_specs` in
/// `meta/main.yml`) has a spec for it, as Ansible inserts it (tagged `always`).
fn validation_task(
    dir: &Path,
    role: &str,
    entry_point: &str,
    params: &Map<String, Value>,
) -> Result<Option<TaskItem>, PlaybookError> {
    let entry_point = entry_point
        .rsplit_once('.')
        .map_or(entry_point, |(stem, _)| stem);
    let meta = dir.join("meta");
    let Some(path) = main_file(&meta, "argument_specs").or_else(|| main_file(&meta, "main")) else {
        return Ok(None);
    };
    let (_, root) = document(&path)?;
    let Some(Value::Object(specs)) = root
        .map(|r| r.to_json())
        .and_then(|r| r.get("argument_specs").cloned())
    else {
        return Ok(None);
    };
    let Some(spec) = specs.get(entry_point) else {
        return Ok(None);
    };
    let options = spec
        .get("options")
        .cloned()
        .unwrap_or_else(|| Value::Object(Map::new()));
    let name = match spec.get("short_description").and_then(Value::as_str) {
        Some(d) => format!("Validating arguments against arg spec '{entry_point}' - {d}"),
        None => format!("Validating arguments against arg spec '{entry_point}'"),
    };
    let task = serde_json::json!([{
        "name": name,
        "ansible.builtin.validate_argument_spec": {
            "argument_spec": options,
            "provided_arguments": params,
            "validate_args_context": {
                "argument_spec_name": entry_point,
                "name": role,
                // Absolute, as Ansible gives it.
                "path": std::path::absolute(dir)
                    .unwrap_or_else(|_| dir.to_path_buf())
                    .display()
                    .to_string(),
                "type": "role",
            },
        },
        "tags": ["always"],
    }]);
    let source = SourceFile::new(&path, &task.to_string());
    let yaml::Document { root, .. } = yaml::load(&source)?;
    Ok(task_items(&source, root.as_ref(), "tasks", false)?
        .into_iter()
        .next())
}

/// What `meta/main` says.
#[derive(Default)]
struct Meta {
    dependencies: Vec<RoleRef>,
    allow_duplicates: bool,
    /// `collections`: searched by the role's tasks.
    collections: Vec<String>,
}

/// The file `dir/name.yml` (`.yaml`, `.json`, or no extension), if there is one.
/// A `*_from` file must lie inside its role (`tasks_from: ../../x.yml` and absolute
/// paths are refused, as in Ansible), judged on the path as written, `..` resolved.
fn inside_role(dir: &Path, sub: &str, name: &str, at: &Location) -> Result<(), PlaybookError> {
    let path = crate::local_files::normalized(&dir.join(sub).join(name));
    if path.starts_with(crate::local_files::normalized(dir)) {
        return Ok(());
    }
    Err(PlaybookError::at(
        at,
        format!(
            "the {sub} file '{name}' cannot be loaded as it is not inside the expected role path '{}'",
            dir.display()
        ),
    ))
}

/// Why the file `name` of the role at `dir`'s `sub` directory (`tasks`, `vars`…),
/// asked for by name, is not there, in ansible-core's words; none when it is, or is
/// `main` (which may be missing).
pub(crate) fn missing_file(dir: &Path, sub: &str, name: &str) -> Option<String> {
    let there = || main_file(&dir.join(sub), name).is_some() || dir.join(sub).join(name).is_dir();
    if name == "main" || there() {
        return None;
    }
    // ansible-core 2.21 says so when the role has no such directory.
    Some(
        if crate::compat::core().at_least(21) && !dir.join(sub).is_dir() {
            format!("Could not find specified file in role, its '{sub}/' is not usable.")
        } else {
            format!("Could not find specified file in role: {sub}/{name}")
        },
    )
}

fn main_file(dir: &Path, name: &str) -> Option<PathBuf> {
    ["yml", "yaml", "json", ""]
        .iter()
        .map(|ext| {
            if ext.is_empty() {
                dir.join(name)
            } else {
                dir.join(format!("{name}.{ext}"))
            }
        })
        .find(|p| p.is_file())
}

/// The YAML document of a file, with its source for locations.
fn document(path: &Path) -> Result<(SourceFile, Option<yaml::Node>), PlaybookError> {
    let text = crate::yaml::read_file(path).map_err(|source| PlaybookError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let source = SourceFile::new(path, &text);
    let yaml::Document { root, .. } = yaml::load(&source)?;
    Ok((source, root.filter(|r| !r.is_null())))
}

fn read_meta(dir: &Path) -> Result<Meta, PlaybookError> {
    let Some(path) = main_file(&dir.join("meta"), "main") else {
        return Ok(Meta::default());
    };
    let (source, root) = document(&path)?;
    let Some(root) = root else {
        return Ok(Meta::default());
    };
    let mut meta = Meta::default();
    for (key, value) in root.as_map().unwrap_or_default() {
        match key.as_str() {
            Some("allow_duplicates") => {
                meta.allow_duplicates = matches!(value.to_json(), Value::Bool(true))
                    || value.as_str().is_some_and(|s| {
                        matches!(s.to_ascii_lowercase().as_str(), "yes" | "true" | "1")
                    });
            }
            Some("collections") if !value.is_null() => {
                let names = match value.as_seq() {
                    Some(items) => items.iter().map(|i| i.as_str()).collect(),
                    None => vec![value.as_str()],
                };
                for name in names {
                    let Some(name) = name else {
                        return Err(source.error(
                            value.mark,
                            "the collections of a role must be a list of collection names",
                        ));
                    };
                    meta.collections.push(name.to_string());
                }
            }
            Some("dependencies") if !value.is_null() => {
                let Some(items) = value.as_seq() else {
                    return Err(source.error(
                        value.mark,
                        format!(
                            "the dependencies of a role must be a list, got {}",
                            value.describe()
                        ),
                    ));
                };
                for item in items {
                    meta.dependencies.push(role(&source, item)?);
                }
            }
            _ => {}
        }
    }
    Ok(meta)
}

/// The tasks (or handlers) of `dir/name` (`.yml`, `.yaml`, `.json`, or `name` with its
/// extension); none when the file does not exist.
pub(crate) fn read_tasks(
    dir: &Path,
    name: &str,
    handler: bool,
) -> Result<Vec<TaskItem>, PlaybookError> {
    let Some(path) = main_file(dir, name) else {
        return Ok(Vec::new());
    };
    tasks_file(&path, handler)
}

/// What ansible-core says of a task file an import or include names that holds no list.
pub(crate) const NOT_A_TASK_LIST: &str = "included task files must contain a list of tasks";

/// The tasks of a file `include_tasks` includes, as ansible-core reads it when the
/// include runs: `None` when the file holds no list (the hosts including it fail); an
/// error when it is no valid YAML or its tasks are malformed (which ends the run).
pub(crate) fn included_tasks_file(
    path: &Path,
    handler: bool,
) -> Result<Option<Vec<TaskItem>>, PlaybookError> {
    match imported_tasks_file(path, handler) {
        Err(PlaybookError::Invalid { message, .. }) if message == NOT_A_TASK_LIST => Ok(None),
        other => other.map(Some),
    }
}

/// The tasks of a file `import_tasks` imports: an error at its content when it holds
/// no list, worded as ansible-core words it.
pub(crate) fn imported_tasks_file(
    path: &Path,
    handler: bool,
) -> Result<Vec<TaskItem>, PlaybookError> {
    let (source, root) = document(path)?;
    if let Some(r) = root.as_ref().filter(|r| r.as_seq().is_none()) {
        return Err(source.error(r.mark, NOT_A_TASK_LIST));
    }
    let what = if handler { "handlers" } else { "tasks" };
    task_items(&source, root.as_ref(), what, handler)
}

/// The tasks of a task file.
pub(crate) fn tasks_file(path: &Path, handler: bool) -> Result<Vec<TaskItem>, PlaybookError> {
    let (source, root) = document(path)?;
    let what = if handler { "handlers" } else { "tasks" };
    task_items(&source, root.as_ref(), what, handler)
}

/// The variables of `dir/name` (`.yml`, `.yaml`, `.json`), or of every file of the
/// directory `dir/name/` in name order; none when neither exists.
pub(crate) fn read_vars(dir: &Path, name: &str) -> Result<Map<String, Value>, PlaybookError> {
    let mut files = Vec::new();
    if let Some(file) = main_file(dir, name) {
        files.push(file);
    } else if dir.join(name).is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir.join(name))
            .map_err(|source| PlaybookError::Read {
                path: dir.join(name),
                source,
            })?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file())
            .collect();
        entries.sort();
        files = entries;
    }
    let mut vars = Map::new();
    for file in files {
        let (source, root) = document(&file)?;
        for (key, _) in root.as_ref().and_then(|r| r.as_map()).unwrap_or_default() {
            if let Some(name) = key.as_str() {
                super::attribute::warn_if_reserved(&source, name, key.mark);
            }
        }
        match root.map(|r| (r.mark, r.to_json())) {
            None => {}
            Some((_, Value::Object(m))) => vars.extend(m),
            Some((mark, other)) => {
                return Err(source.error(
                    mark,
                    format!(
                        "vars file {} must hold a mapping of variables, got {}",
                        file.display(),
                        sandball_pycompat::pyfmt::short_type_name(&other)
                    ),
                ));
            }
        }
    }
    Ok(vars)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn role_files_stay_inside_the_role() {
        let at = Location::default();
        for (dir, name) in [
            ("roles/a", "main"),
            ("../roles/a", "sub/x"),
            ("/r/a", "x/../y"),
            ("/t/omit/../setup", "main"),
            ("roles/../other/a", "sub/../main"),
        ] {
            assert!(
                inside_role(Path::new(dir), "tasks", name, &at).is_ok(),
                "{dir} {name}"
            );
        }
        for (dir, name) in [
            ("roles/a", "../../x"),
            ("/r/a", "/etc/x"),
            ("../roles/a", "s/../../../x"),
            ("/t/omit/../setup", "../../omit/x"),
        ] {
            let err = inside_role(Path::new(dir), "tasks", name, &at)
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("is not inside the expected role path"),
                "{err}"
            );
        }
    }
}
