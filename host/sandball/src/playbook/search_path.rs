//! Where a task's relative controller files are looked up, as Ansible's loader does:
//! in each directory of the task's search path (`ansible_search_path`: its role, the
//! roles above it, the directory of its own file), then the playbook's directory
//! (`playbook_dir`); in each, the kind's own folder (`files/`, `templates/`, `vars/`…)
//! before the directory itself, and for a directory below a role's `tasks/`, the
//! role's folder of the kind and `tasks/` first. An absolute path is used as it is.

use crate::template::{Var, Vars};
use std::path::{Path, PathBuf};

/// The candidates for `name` of a kind (`files`, `templates`, `vars`, `tasks`), in the
/// order they are tried.
pub fn candidates(vars: &Vars, kind: &str, name: &str) -> Vec<PathBuf> {
    let path = Path::new(name);
    if path.is_absolute() {
        return vec![path.to_path_buf()];
    }
    let mut search: Vec<PathBuf> = match vars.get("ansible_search_path") {
        Some(
            Var::Trusted(serde_json::Value::Array(dirs))
            | Var::Data(serde_json::Value::Array(dirs)),
        ) => dirs
            .iter()
            .filter_map(|d| d.as_str().map(PathBuf::from))
            .collect(),
        _ => string_var(vars, "role_path")
            .map(PathBuf::from)
            .into_iter()
            .collect(),
    };
    search.extend(string_var(vars, "playbook_dir").map(PathBuf::from));
    // A name that starts with the kind's folder is not looked for in it again.
    let in_kind = path
        .components()
        .next()
        .is_some_and(|c| c.as_os_str() == kind);
    let mut out: Vec<PathBuf> = Vec::new();
    for base in &search {
        let mut found = Vec::new();
        // Below a role's `tasks/` (an included task file's directory), the role's own
        // folder of the kind and `tasks/` first.
        if let Some(tasks) = base.parent().filter(|p| p.ends_with("tasks"))
            && let Some(role) = tasks.parent()
            && search.iter().any(|s| s == role)
        {
            found.push(role.join(kind).join(path));
            found.push(tasks.join(path));
        }
        if !in_kind {
            found.push(base.join(kind).join(path));
        }
        found.push(base.join(path));
        for candidate in found {
            if !out.contains(&candidate) {
                out.push(candidate);
            }
        }
    }
    if out.is_empty() {
        out.push(path.to_path_buf());
    }
    out
}

/// The first candidate that exists; else [`NotFound`], listing where it looked.
pub fn find(vars: &Vars, kind: &str, name: &str) -> Result<PathBuf, NotFound> {
    let tried = candidates(vars, kind, name);
    match tried.iter().find(|p| p.exists()) {
        Some(found) => Ok(found.clone()),
        None => Err(NotFound {
            name: name.to_string(),
            tried,
        }),
    }
}

/// A controller file the task's search path does not hold, in Ansible's words.
#[derive(Debug, thiserror::Error)]
#[error(
    "Could not find or access '{name}'\nSearched in:\n{}\non the Ansible Controller.",
    tried.iter().map(|p| format!("\t{}", p.display())).collect::<Vec<_>>().join("\n")
)]
pub struct NotFound {
    /// The file as the task names it.
    pub name: String,
    /// Where it was looked for, in order.
    pub tried: Vec<PathBuf>,
}

impl NotFound {
    /// The error as the actions that send a controller file (`copy`, `assemble`) give
    /// it: pointing at `remote_src`.
    pub fn with_remote_src_hint(&self) -> String {
        format!(
            "{self}\nIf you are using a module and expect the file to exist on the remote, see the remote_src option"
        )
    }
}

/// Where a template's `{% include %}`, `{% import %}` and `{% extends %}` find other
/// templates: beside it, then the search path's `templates/` folders and directories.
pub fn template_dirs(vars: &Vars, template: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = template
        .parent()
        .map(Path::to_path_buf)
        .into_iter()
        .collect();
    for candidate in candidates(vars, "templates", ".") {
        if !dirs.contains(&candidate) {
            dirs.push(candidate);
        }
    }
    dirs
}

/// A variable that holds a plain string (`role_path`, `playbook_dir`).
fn string_var(vars: &Vars, name: &str) -> Option<String> {
    match vars.get(name)? {
        Var::Trusted(serde_json::Value::String(s)) | Var::Data(serde_json::Value::String(s)) => {
            Some(s.clone())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_role_comes_before_the_playbook_and_the_kind_before_the_dir() {
        let mut vars = Vars::new();
        vars.set_data("playbook_dir", json!("/p"));
        vars.set_data("role_path", json!("/p/roles/r"));
        vars.set_data(
            "ansible_search_path",
            json!(["/p/roles/r", "/p/roles/r/tasks/sub"]),
        );
        let got: Vec<String> = candidates(&vars, "templates", "a.j2")
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        assert_eq!(
            got,
            [
                "/p/roles/r/templates/a.j2",
                "/p/roles/r/a.j2",
                "/p/roles/r/tasks/a.j2",
                "/p/roles/r/tasks/sub/templates/a.j2",
                "/p/roles/r/tasks/sub/a.j2",
                "/p/templates/a.j2",
                "/p/a.j2"
            ]
        );
        // A name under the kind's folder is not looked for in a second one.
        assert_eq!(
            candidates(&vars, "files", "files/x")[0],
            PathBuf::from("/p/roles/r/files/x")
        );
        assert_eq!(
            candidates(&vars, "files", "/etc/x"),
            [PathBuf::from("/etc/x")]
        );
        let err = find(&vars, "files", "nope").unwrap_err().to_string();
        assert!(err.contains("Could not find or access 'nope'"), "{err}");
        assert!(err.contains("\t/p/files/nope"), "{err}");
    }
}
