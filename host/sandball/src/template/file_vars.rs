//! The variables a template file is rendered with, by the `template` action and the
//! `template` lookup alike: `template_path`, `template_fullpath`, `template_destpath`,
//! `template_host`, `template_uid`, `template_mtime`, `template_run_date`, and
//! `ansible_managed` unless the variables already say it.

use serde_json::Value;
use std::path::Path;

/// `ansible_managed`'s default text.
const ANSIBLE_MANAGED: &str = "Ansible managed";

/// The variables for the template file at `path`, written to `dest` (`None` for a
/// lookup, as in Ansible); `ansible_managed` only when `managed_given` is false.
pub(crate) fn file_vars(
    path: &Path,
    dest: Option<&str>,
    managed_given: bool,
) -> Vec<(&'static str, Value)> {
    let full = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let text = |s: String| Value::String(s);
    let mut vars = vec![
        ("template_path", text(path.display().to_string())),
        ("template_fullpath", text(full.display().to_string())),
        (
            "template_destpath",
            dest.map_or(Value::Null, |d| text(d.to_string())),
        ),
        ("template_host", text(controller_name())),
        ("template_uid", text(owner_name(path))),
        ("template_mtime", text(modified_at(path))),
        (
            "template_run_date",
            text(
                chrono::Local::now()
                    .format("%Y-%m-%d %H:%M:%S%.6f")
                    .to_string(),
            ),
        ),
    ];
    if !managed_given {
        vars.push(("ansible_managed", text(ANSIBLE_MANAGED.into())));
    }
    vars
}

/// When the template file was last changed, as Python prints a `datetime`
/// (`template_mtime`).
fn modified_at(path: &std::path::Path) -> String {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .map(|t| {
            chrono::DateTime::<chrono::Local>::from(t)
                .format("%Y-%m-%d %H:%M:%S%.6f")
                .to_string()
        })
        .unwrap_or_default()
}

/// The controller's host name (`template_host`).
fn controller_name() -> String {
    rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned()
}

/// The name of the template file's owner (`template_uid`), or its number when the
/// controller has no name for it.
fn owner_name(path: &Path) -> String {
    use std::os::unix::fs::MetadataExt;
    let Ok(uid) = std::fs::metadata(path).map(|m| m.uid()) else {
        return String::new();
    };
    std::fs::read_to_string("/etc/passwd")
        .ok()
        .and_then(|passwd| {
            passwd.lines().find_map(|line| {
                let mut fields = line.split(':');
                let name = fields.next()?;
                let id = fields.nth(1)?.parse::<u32>().ok()?;
                (id == uid).then(|| name.to_string())
            })
        })
        .unwrap_or_else(|| uid.to_string())
}
