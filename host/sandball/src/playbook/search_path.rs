//! Where a task's relative controller files are looked up, as Ansible's loader does:
//! under the task's role (`role_path`) first, then the playbook's directory
//! (`playbook_dir`); in each, the kind's own folder (`files/`, `templates/`, `vars/`…)
//! before the directory itself (and, in a role, its `tasks/` last). An absolute path is
//! used as it is.

use crate::template::{Var, Vars};
use std::path::{Path, PathBuf};

/// The candidates for `name` of a kind (`files`, `templates`, `vars`, `tasks`), in the
/// order they are tried.
pub fn candidates(vars: &Vars, kind: &str, name: &str) -> Vec<PathBuf> {
    let path = Path::new(name);
    if path.is_absolute() {
        return vec![path.to_path_buf()];
    }
    let mut out = Vec::new();
    for (var, base) in ["role_path", "playbook_dir"]
        .into_iter()
        .filter_map(|v| string_var(vars, v).map(|b| (v, PathBuf::from(b))))
    {
        let mut found = vec![base.join(kind).join(path), base.join(path)];
        // A role's task files are beside the task that names them (`include_tasks:
        // "{{ lookup('first_found', …) }}"`).
        if var == "role_path" {
            found.push(base.join("tasks").join(path));
        }
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

/// The first candidate that exists; else the error Ansible gives, listing where it
/// looked.
pub fn find(vars: &Vars, kind: &str, name: &str) -> Result<PathBuf, String> {
    let tried = candidates(vars, kind, name);
    if let Some(found) = tried.iter().find(|p| p.exists()) {
        return Ok(found.clone());
    }
    let listed: Vec<String> = tried.iter().map(|p| format!("\t{}", p.display())).collect();
    Err(format!(
        "Could not find or access '{name}'\nSearched in:\n{}\non the Ansible Controller.",
        listed.join("\n")
    ))
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
                "/p/templates/a.j2",
                "/p/a.j2"
            ]
        );
        assert_eq!(
            candidates(&vars, "files", "/etc/x"),
            [PathBuf::from("/etc/x")]
        );
        let err = find(&vars, "files", "nope").unwrap_err();
        assert!(err.contains("Could not find or access 'nope'"), "{err}");
        assert!(err.contains("\t/p/files/nope"), "{err}");
    }
}
