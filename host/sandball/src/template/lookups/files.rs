//! The lookups that find files along the task's search path: `file`, `fileglob`,
//! `first_found`, `unvault`; and the search itself, which `template`, `ini` and
//! `csvfile` use too.

use serde_json::Value as Json;

use super::{LookupContext, LookupError, Options, flatten_one, text, texts};
use crate::playbook::search_path::NotFound;
use crate::template::Vars;

/// `file`: each file's content (`rstrip` by default, `lstrip` when asked).
pub(super) fn file(
    terms: &[Json],
    options: &Options,
    ctx: &dyn LookupContext,
) -> Result<Vec<Json>, LookupError> {
    let read: Result<Vec<Json>, String> = texts(terms)
        .iter()
        .map(|t| {
            let path = find(ctx, "files", t).map_err(|_| {
                format!(
                    "Unable to access the file {}: File not found. Use -vvvvv to see paths searched.",
                    sandball_pycompat::pyfmt::py_repr(&Json::String(t.clone()))
                )
            })?;
            let content = std::fs::read_to_string(&path)
                .map_err(|e| format!("could not read {}: {e}", path.display()))?;
            let flag = |key: &str, default: bool| {
                sandball_pycompat::boolean::truthy(options.get(key), default).unwrap_or(default)
            };
            let mut content = content.as_str();
            if flag("rstrip", true) {
                content = content.trim_end();
            }
            if flag("lstrip", false) {
                content = content.trim_start();
            }
            Ok(Json::String(content.to_string()))
        })
        .collect();
    Ok(read?)
}

/// `fileglob`: the files whose names match each pattern, in the first folder of the
/// search path that holds any.
pub(super) fn fileglob(
    terms: &[Json],
    _options: &Options,
    ctx: &dyn LookupContext,
) -> Result<Vec<Json>, LookupError> {
    let mut out = Vec::new();
    for pattern in texts(terms) {
        let (dir, glob) = match pattern.rsplit_once('/') {
            Some((d, g)) => (d.to_string(), g.to_string()),
            None => (String::new(), pattern.clone()),
        };
        // A bare pattern is tried in each folder of the search path (its
        // `files/` first), the first with matches winning; a pattern with a
        // folder, in the first place that folder exists, as Ansible does.
        let dirs = crate::playbook::search_path::candidates(&search_vars(ctx), "files", &dir);
        let mut dirs = dirs.into_iter().filter(|d| d.is_dir());
        let mut found: Vec<String> = Vec::new();
        while found.is_empty() {
            let Some(base) = dirs.next() else { break };
            found = std::fs::read_dir(&base)
                .map_err(|e| format!("fileglob: cannot read {}: {e}", base.display()))?
                .filter_map(|e| e.ok())
                .filter(|e| e.path().is_file())
                .filter(|e| {
                    sandball_pycompat::fnmatch::fnmatch(&glob, &e.file_name().to_string_lossy())
                })
                .map(|e| e.path().display().to_string())
                .collect();
            if !dir.is_empty() {
                break;
            }
        }
        found.sort();
        out.extend(found.into_iter().map(Json::String));
    }
    Ok(out)
}

/// `first_found`: the first file that exists among the terms (names, or mappings with
/// `files` and `paths`), `skip: true` giving nothing instead of an error.
pub(super) fn first_found(
    terms: &[Json],
    options: &Options,
    ctx: &dyn LookupContext,
) -> Result<Vec<Json>, LookupError> {
    let mut candidates: Vec<std::path::PathBuf> = Vec::new();
    let mut skip = matches!(options.get("skip"), Some(Json::Bool(true)));
    // Names are split at `,` and `;`, paths at `:` too (each item of a list as well).
    let split_at = |separators: &'static [char]| {
        move |v: &Json| -> Vec<String> {
            let items = match v {
                Json::Array(items) => items.iter().map(text).collect(),
                Json::String(s) => vec![s.clone()],
                _ => Vec::new(),
            };
            items
                .iter()
                .flat_map(|item| item.split(separators))
                .filter(|p| !p.is_empty())
                .map(str::to_string)
                .collect()
        }
    };
    let split = split_at(&[',', ';']);
    let split_paths = split_at(&[',', ';', ':']);
    // Each file, under each path when paths are given; what is not absolute is looked
    // up as Ansible's search path has it: a role's `files/` (or what the looping task's
    // action names) and the role itself, then the playbook's (outside a role, a
    // `lookup()` looks beside the playbook only).
    let mut add = |files: Vec<String>, paths: Vec<String>| {
        let vars = search_vars(ctx);
        let kind = match ctx.loop_action() {
            // As `with_first_found`, the task's action says where to look: its
            // templates, vars or files.
            Some(action) if action.contains("template") => "templates",
            Some(action) if action.contains("var") => "vars",
            Some(_) => "files",
            None if vars.contains("role_path") => "files",
            None => "",
        };
        for f in files {
            let names: Vec<String> = if paths.is_empty() {
                vec![f]
            } else {
                paths
                    .iter()
                    .map(|p| std::path::Path::new(p).join(&f).display().to_string())
                    .collect()
            };
            for name in names {
                candidates.extend(crate::playbook::search_path::candidates(&vars, kind, &name));
            }
        }
    };
    let option_files = options.get("files").map(split).unwrap_or_default();
    let option_paths = options.get("paths").map(split_paths).unwrap_or_default();
    if !option_files.is_empty() {
        add(option_files, option_paths.clone());
    }
    for t in flatten_one(terms) {
        match t {
            Json::Object(m) => {
                skip |= matches!(m.get("skip"), Some(Json::Bool(true)));
                add(
                    m.get("files").map(split).unwrap_or_default(),
                    m.get("paths").map(split_paths).unwrap_or_default(),
                );
            }
            Json::String(_) | Json::Array(_) => add(split(&t), option_paths.clone()),
            other => {
                return Err(LookupError::Failed(format!(
                    "Invalid term supplied. A string, dict or list is required, not '{}').",
                    sandball_pycompat::pyfmt::short_type_name(&other)
                )));
            }
        }
    }
    match candidates.into_iter().find(|p| p.exists()) {
        Some(p) => Ok(vec![Json::String(p.display().to_string())]),
        None if skip => Ok(Vec::new()),
        None => Err(LookupError::Failed(
            "No file was found when using first_found.".into(),
        )),
    }
}

/// `unvault`: each file's content, decrypted when it is vaulted.
pub(super) fn unvault(
    terms: &[Json],
    _options: &Options,
    ctx: &dyn LookupContext,
) -> Result<Vec<Json>, LookupError> {
    let read: Result<Vec<Json>, String> = texts(terms)
        .iter()
        .map(|t| {
            let path = find_or_warn(ctx, "files", t)
                .ok_or_else(|| format!("Unable to find file matching \"{t}\""))?;
            crate::yaml::read_file(&path)
                .map(Json::String)
                .map_err(|e| format!("could not read {}: {e}", path.display()))
        })
        .collect();
    Ok(read?)
}

/// A file of `kind` along the task's search path.
pub(super) fn find(
    ctx: &dyn LookupContext,
    kind: &str,
    name: &str,
) -> Result<std::path::PathBuf, NotFound> {
    crate::playbook::search_path::find(&search_vars(ctx), kind, name)
}

/// [`find`], warning as ansible-core warns when the file is in none of the places
/// looked in.
pub(super) fn find_or_warn(
    ctx: &dyn LookupContext,
    kind: &str,
    name: &str,
) -> Option<std::path::PathBuf> {
    find_warned(ctx, kind, name).ok()
}

/// [`find`] with [`find_or_warn`]'s warning (the table lookups' files).
pub(super) fn find_warned(
    ctx: &dyn LookupContext,
    kind: &str,
    name: &str,
) -> Result<std::path::PathBuf, NotFound> {
    let found = find(ctx, kind, name);
    if found.is_err() {
        crate::template::warn(format!(
            "Unable to find '{name}' in expected paths (use -vvvvv to see paths)"
        ));
    }
    found
}

/// The variables the search path reads.
pub(super) fn search_vars(ctx: &dyn LookupContext) -> Vars {
    let mut vars = Vars::new();
    for name in ["role_path", "playbook_dir", "ansible_search_path"] {
        if let Some(v) = ctx.var(name) {
            vars.set_data(name, v);
        }
    }
    vars
}
