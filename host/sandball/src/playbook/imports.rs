//! Static inclusion, done when the playbook is read, as Ansible does it: an
//! `import_tasks` task becomes a block of the file's tasks, and an `import_role` task a
//! block of the role's (`tasks_from`, `vars_from`, `defaults_from`, `handlers_from`),
//! each with the importing task's keywords (`when`, `tags`, `vars`, `become`…), which
//! reach every imported task. A file is found beside the file that imports it, then in
//! the playbook's directory. Imports inside imported files are resolved too.

use std::path::{Path, PathBuf};

use sandball_pycompat::fqcn::ansible_short_name;
use serde_json::Value;

use crate::playbook::block::{Block, TaskItem};
use crate::playbook::play::Play;
use crate::playbook::roles::{self, RoleOptions};
use crate::playbook::task::Task;
use crate::yaml::error::PlaybookError;

/// How deep imports may nest (a file importing itself is an error long before).
const MAX_DEPTH: usize = 64;

/// Resolves the imports of a play's task lists (its roles' included).
pub(crate) fn expand(play: &mut Play, base: &Path) -> Result<(), PlaybookError> {
    let mut imported = Vec::new();
    let mut handlers = Vec::new();
    // The play's `vars`, and its name as ansible-core knows it when it reads imports.
    let mut vars = play.keywords.vars.clone();
    vars.insert(
        "ansible_play_name".into(),
        Value::String(play.name.clone().unwrap_or_else(|| play.hosts.clone())),
    );
    let search = play.keywords.collections().unwrap_or_default();
    let files = PlayFiles {
        entries: &play.vars_files,
        base,
        read: std::cell::OnceCell::new(),
    };
    let at = Reading {
        base,
        vars: &vars,
        files: Some(&files),
        role: None,
        handlers: false,
        collections: &search,
    };
    for list in [&mut play.pre_tasks, &mut play.tasks, &mut play.post_tasks] {
        expand_items(list, &at, 0, &mut handlers, &mut imported)?;
    }
    let mut play_handlers = std::mem::take(&mut play.handlers);
    expand_items(
        &mut play_handlers,
        &Reading {
            handlers: true,
            ..at
        },
        0,
        &mut handlers,
        &mut imported,
    )?;
    handlers.extend(play_handlers);
    play.handlers = handlers;
    // Imported roles are the play's roles too (`ansible_play_role_names`; the
    // variables of the public ones are the play's).
    play.role_names
        .extend(imported.iter().map(|r| r.name.clone()));
    play.loaded_roles.extend(imported);
    Ok(())
}

/// Resolves the imports of a task list read while the playbook runs (an included
/// file). The roles it imports, in order, and their handlers (which the play gains
/// from then on, as Ansible adds an imported role's handlers to the play).
pub(crate) fn expand_list(
    items: &mut [TaskItem],
    base: &Path,
    role: Option<&roles::Role>,
    collections: &[String],
) -> Result<(Vec<std::sync::Arc<roles::Role>>, Vec<TaskItem>), PlaybookError> {
    let mut imported = Vec::new();
    let mut handlers = Vec::new();
    let none = serde_json::Map::new();
    let at = Reading {
        base,
        vars: &none,
        files: None,
        role,
        handlers: false,
        collections,
    };
    expand_items(items, &at, 0, &mut handlers, &mut imported)?;
    Ok((imported, handlers))
}

/// A play's `vars_files`, read for import names only when a name needs them: as
/// ansible-core reads them without a host, names templated with the play's `vars` and
/// what the run knows; one that cannot be templated or found gives nothing.
struct PlayFiles<'a> {
    entries: &'a [Value],
    base: &'a Path,
    read: std::cell::OnceCell<serde_json::Map<String, Value>>,
}

impl PlayFiles<'_> {
    /// The variables the files give, over `vars` (the play's).
    fn over(&self, vars: &serde_json::Map<String, Value>) -> &serde_json::Map<String, Value> {
        self.read.get_or_init(|| {
            let mut known = crate::template::Vars::new();
            for (k, v) in super::known_at_load(vars) {
                known.set_trusted(&k, v);
            }
            let files =
                crate::playbook::vars_files::VarsFiles::new(self.entries.to_vec(), self.base);
            let (layer, _not_found) = files.layer(&crate::template::Templar::new(), "", &known);
            let mut layered = vars.clone();
            layered.extend(layer);
            layered
        })
    }
}

/// Where imports are read from: the playbook's directory, and the variables their
/// names may be templated with (the play's `vars`, and its `vars_files`; see
/// `render_at_load`).
struct Reading<'a> {
    base: &'a Path,
    vars: &'a serde_json::Map<String, Value>,
    /// The play's `vars_files`, when these are its tasks.
    files: Option<&'a PlayFiles<'a>>,
    /// The role whose tasks hold the imports, if any: a role it imports sees its
    /// parameters.
    role: Option<&'a roles::Role>,
    /// Whether these are handlers, where a role cannot be imported.
    handlers: bool,
    /// The collections search list there, for the roles imported by a plain name.
    collections: &'a [String],
}

impl Reading<'_> {
    /// An import's name, templated as names are when the playbook is read: inside a
    /// role, its defaults, vars and parameters and `role_path` are there too, layered
    /// around the play's `vars` as they are when the role's tasks run; the import's
    /// own `vars` above them.
    fn name(&self, t: &Task, what: &str, name: &str) -> Result<String, PlaybookError> {
        let in_role;
        let play_vars = match self.files {
            Some(files) if !files.entries.is_empty() && crate::template::is_template(name) => {
                files.over(self.vars)
            }
            _ => self.vars,
        };
        let vars = match self.role {
            None => play_vars,
            Some(role) => {
                let mut layered = role.dependency_defaults.clone();
                for layer in [
                    &role.inherited.defaults,
                    &role.defaults,
                    play_vars,
                    &role.inherited.vars,
                    &role.dependency_vars,
                    &role.vars,
                    &role.params,
                ] {
                    layered.extend(layer.clone());
                }
                for (k, v) in [
                    ("role_name", role.name.clone()),
                    ("role_path", role.path.display().to_string()),
                ] {
                    layered.insert(k.into(), Value::String(v));
                }
                in_role = layered;
                &in_role
            }
        };
        // The import's own `vars` too, as ansible-core templates its name with them.
        let with_own;
        let vars = if t.keywords.vars.is_empty() {
            vars
        } else {
            let mut layered = vars.clone();
            layered.extend(t.keywords.vars.clone());
            with_own = layered;
            &with_own
        };
        super::render_at_load(name, vars).map_err(|e| {
            PlaybookError::at(
                &t.location,
                format!(
                    "{what}: the name '{name}' cannot be templated when the playbook is read ({e}); use the include_ form for a name known only when it runs"
                ),
            )
        })
    }
}

/// Replaces every import in `items` (recursively) by the block it imports; the
/// handlers of imported roles go to `handlers`, the roles to `loaded`.
fn expand_items(
    items: &mut [TaskItem],
    at: &Reading<'_>,
    depth: usize,
    handlers: &mut Vec<TaskItem>,
    loaded: &mut Vec<std::sync::Arc<roles::Role>>,
) -> Result<(), PlaybookError> {
    for item in items.iter_mut() {
        match item {
            TaskItem::Block(b) => {
                // Inside a role's block, imports are that role's.
                let role = b.keywords.role.clone();
                let search = b.keywords.collections();
                let inner = Reading {
                    base: at.base,
                    vars: at.vars,
                    files: at.files,
                    role: role.as_deref().or(at.role),
                    handlers: at.handlers,
                    collections: search.as_deref().unwrap_or(at.collections),
                };
                for part in [&mut b.block, &mut b.rescue, &mut b.always] {
                    expand_items(part, &inner, depth, handlers, loaded)?;
                }
            }
            TaskItem::Task(t) => {
                let kind = ansible_short_name(&t.action);
                if kind != "import_tasks" && kind != "import_role" {
                    continue;
                }
                // As Ansible refuses it when it reads the play (`include_role` is
                // refused before the run, see `executor::keyword_support`).
                if kind == "import_role" && at.handlers {
                    return Err(PlaybookError::at(
                        &t.location,
                        "Using 'import_role' as a handler is not supported.",
                    ));
                }
                if depth >= MAX_DEPTH {
                    return Err(PlaybookError::at(
                        &t.location,
                        format!(
                            "imports nest more than {MAX_DEPTH} deep (does a file import itself?)"
                        ),
                    ));
                }
                let mut inner = if kind == "import_tasks" {
                    import_tasks(t, at)?
                } else {
                    let (tasks, role_handlers, role) = import_role(t, at)?;
                    // What its handlers import is read now too (the tasks an imported
                    // handler file holds are handlers; its own name is not kept).
                    let mut role_handlers = vec![role_handlers];
                    let among_handlers = Reading {
                        handlers: true,
                        ..*at
                    };
                    expand_items(
                        &mut role_handlers,
                        &among_handlers,
                        depth + 1,
                        handlers,
                        loaded,
                    )?;
                    // The role's handlers sit under the import's keywords too
                    // (`delegate_to`, `become`…), as in Ansible; its tags do not
                    // filter them.
                    let mut keywords = t.keywords.clone();
                    keywords.tags = Default::default();
                    handlers.push(TaskItem::Block(Box::new(Block {
                        name: None,
                        block: role_handlers,
                        rescue: Vec::new(),
                        always: Vec::new(),
                        keywords,
                        location: t.location.clone(),
                    })));
                    loaded.push(role);
                    tasks
                };
                expand_items(&mut inner, at, depth + 1, handlers, loaded)?;
                *item = TaskItem::Block(Box::new(Block {
                    name: t.name.clone(),
                    block: inner,
                    rescue: Vec::new(),
                    always: Vec::new(),
                    keywords: t.keywords.clone(),
                    location: t.location.clone(),
                }));
            }
        }
    }
    Ok(())
}

/// A string argument of an import (`file:`, `name:`, or the free-form one).
fn arg<'a>(t: &'a Task, keys: &[&str]) -> Option<&'a str> {
    keys.iter()
        .find_map(|k| t.args.get(*k))
        .and_then(Value::as_str)
}

/// The tasks of an `import_tasks`.
/// Refuses arguments an import does not take (`apply` belongs to the includes), with
/// ansible-core's words.
fn only_options(t: &Task, kind: &str, valid: &[&str]) -> Result<(), PlaybookError> {
    match invalid_options(t, kind, valid) {
        None => Ok(()),
        Some(e) => Err(PlaybookError::at(&t.location, e)),
    }
}

/// ansible-core's refusal of the arguments of `t`, an import or include (`kind`), that
/// are not among `valid`; none when all are.
pub(crate) fn invalid_options(t: &Task, kind: &str, valid: &[&str]) -> Option<String> {
    let mut invalid: Vec<&str> = t
        .args
        .keys()
        .map(String::as_str)
        .filter(|k| !valid.contains(k))
        .collect();
    if invalid.is_empty() {
        return None;
    }
    invalid.sort_unstable();
    Some(format!(
        "Invalid options for {kind}: {}",
        invalid.join(", ")
    ))
}

fn import_tasks(t: &Task, at: &Reading<'_>) -> Result<Vec<TaskItem>, PlaybookError> {
    only_options(t, "import_tasks", &["file", "_raw_params"])?;
    let Some(file) = arg(t, &["file", "_raw_params"]) else {
        return Err(PlaybookError::at(
            &t.location,
            "import_tasks needs the file to import (free-form or file:)",
        ));
    };
    let file = at.name(t, "import_tasks", file)?;
    let path = find_file(t, at.base, at.role.map(|r| r.path.as_path()), &file)?;
    roles::imported_tasks_file(&path, at.handlers)
}

/// Where an imported file is: beside the importing file, then in the playbook's
/// directory.
pub(crate) fn find_file(
    t: &Task,
    base: &Path,
    role: Option<&Path>,
    file: &str,
) -> Result<PathBuf, PlaybookError> {
    let own_dir = t.location.file.parent().map(Path::to_path_buf);
    let candidates: Vec<PathBuf> = if Path::new(file).is_absolute() {
        vec![PathBuf::from(file)]
    } else {
        let mut dirs: Vec<PathBuf> = own_dir.iter().cloned().collect();
        // A role's handlers include task files from the role's `tasks/`, or by a path
        // from the role's own directory (`tasks/handlers.yml`).
        if let Some(own) = &own_dir
            && own.ends_with("handlers")
            && let Some(role) = own.parent()
        {
            dirs.push(role.join("tasks"));
            dirs.push(role.to_path_buf());
        }
        // A role's task file in a subdirectory of `tasks/` (`tasks/section_1/x.yml`)
        // finds the role's other task files by their names in `tasks/`, as in Ansible.
        if let Some(role) = role {
            for dir in [role.join("tasks"), role.to_path_buf()] {
                if !dirs.contains(&dir) {
                    dirs.push(dir);
                }
            }
        }
        dirs.push(base.to_path_buf());
        let mut candidates: Vec<PathBuf> = Vec::new();
        for path in dirs
            .into_iter()
            .flat_map(|d| [d.join(file), d.join("tasks").join(file)])
        {
            if !candidates.contains(&path) {
                candidates.push(path);
            }
        }
        candidates
    };
    candidates
        .iter()
        .find(|p| p.is_file())
        .cloned()
        .ok_or_else(|| PlaybookError::Missing {
            name: file.to_string(),
            tried: candidates.clone(),
            location: t.location.clone(),
        })
}

/// The tasks, handlers and role of an `import_role`.
fn import_role(
    t: &Task,
    at: &Reading<'_>,
) -> Result<(Vec<TaskItem>, TaskItem, std::sync::Arc<roles::Role>), PlaybookError> {
    only_options(t, "import_role", &roles::ROLE_OPTIONS)?;
    let Some(name) = arg(t, &["name", "role", "_raw_params"]) else {
        return Err(PlaybookError::at(
            &t.location,
            "import_role needs the role's name (name:)",
        ));
    };
    let name = at.name(t, "import_role", name)?;
    let mut args = t.args.clone();
    // The file names and switches are templated as the role's name is.
    for key in roles::FILE_OPTIONS.iter().chain(&roles::FLAG_OPTIONS) {
        if let Some(Value::String(raw)) = t.args.get(*key) {
            let value = at.name(t, "import_role", raw)?;
            args.insert(key.to_string(), Value::String(value));
        }
    }
    let options = RoleOptions::of_task(&args, false);
    let search = t.keywords.collections();
    roles::load_one(
        &name,
        &t.location,
        at.base,
        &options,
        at.role,
        search.as_deref().unwrap_or(at.collections),
    )
}
