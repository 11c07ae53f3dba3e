//! `include_vars`: variables from a YAML or JSON file, or every such file of a
//! directory, read on the controller and set for the host in the `include_vars` layer
//! (above task vars, below `set_fact`), as Ansible's include_vars action does. A file
//! is found in the role's `vars/`, then the playbook's; a directory is the role's
//! `vars/dir`, or the playbook's `dir` outside a role, and is walked in name order
//! with `depth`, `files_matching`, `ignore_files` and `extensions`; `name` puts
//! everything under one variable; `hash_behaviour: merge` merges mappings into the
//! values the host already has.

use super::{ArgError, Context, args, failed, ok_with};
use crate::playbook::search_path;
use crate::playbook::vars_files;
use crate::plugins::action::{Cause, CauseAt, TaskFailure};
use regex::Regex;
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};

const ARGS: &[&str] = &[
    "_raw_params",
    "file",
    "dir",
    "name",
    "depth",
    "files_matching",
    "ignore_files",
    "extensions",
    "ignore_unknown_extensions",
    "hash_behaviour",
];

/// The arguments of a directory's reading, which a file's do not go with.
const DIR_ARGS: &[&str] = &[
    "dir",
    "depth",
    "files_matching",
    "ignore_files",
    "extensions",
    "ignore_unknown_extensions",
];

/// The refusal of a file's and a directory's arguments together.
const MIXING: &str = "You are mixing file only and dir only arguments, these are incompatible";

/// Runs `include_vars`; the executor stores the `ansible_facts` of the result in the
/// host's include_vars layer.
pub fn run(ctx: &dyn Context, args: &Map<String, Value>) -> super::TaskResult {
    match include(ctx, args) {
        Ok(mut r) => {
            // ansible-core 2.21 deprecates `ignore_files` as text (still read as words).
            if crate::compat::core().at_least(21)
                && matches!(args.get("ignore_files"), Some(Value::String(s)) if !s.is_empty())
            {
                r.insert(
                    "deprecations".into(),
                    json!([{
                        "__ansible_type": "DeprecationSummary",
                        "event": {
                            "msg": "Specifying 'ignore_files' as a string is deprecated.",
                            "help_text": "Use a list of strings instead.",
                        },
                        "deprecator": {
                            "resolved_name": "ansible.builtin.include_vars",
                            "type": "action",
                        },
                        "version": "2.24",
                    }]),
                );
            }
            let mut r = super::TaskResult::from(r);
            super::summaries::deprecations(&mut r);
            r
        }
        Err(Refusal::Arguments(e)) => failed(e).into(),
        Err(Refusal::Option { option, error }) => TaskFailure {
            msg: format!("Task failed: {error}"),
            cause: Some(Cause {
                steps: vec![(error, Some((CauseAt::Arg, option)))],
            }),
        }
        .result(),
        Err(Refusal::Reading(e)) => unread(e).into(),
    }
}

/// Why nothing was included.
enum Refusal {
    /// The arguments are wrong: the task fails with this message.
    Arguments(String),
    /// An option's value is wrong: the task fails with the error, caused at the
    /// option's value.
    Option {
        /// The option.
        option: String,
        /// What is wrong with it.
        error: String,
    },
    /// A directory or file could not be read: as ansible-core reports it, the reason
    /// is the result's `message`, with nothing included.
    Reading(String),
}

impl From<String> for Refusal {
    fn from(e: String) -> Self {
        Refusal::Reading(e)
    }
}

/// The failure of an `include_vars` that could not read what it was given, in
/// ansible-core 2.19's shape (`message`, and the generic `msg` of an action failure
/// without one).
fn unread(message: String) -> Map<String, Value> {
    let mut r = failed("Task failed: Action failed: Unknown error.");
    r.insert("message".into(), Value::String(message));
    r.insert("ansible_facts".into(), Value::Object(Map::new()));
    r.insert("ansible_included_var_files".into(), Value::Array(vec![]));
    r
}

fn include(ctx: &dyn Context, args: &Map<String, Value>) -> Result<Map<String, Value>, Refusal> {
    if let Some(unknown) = args.keys().find(|k| !ARGS.contains(&k.as_str())) {
        return Err(Refusal::Arguments(format!(
            "Task failed: {unknown} is not a valid option in include_vars"
        )));
    }
    let text = |key: &str| args.get(key).and_then(Value::as_str).map(str::to_string);
    // A free-form name written as a folded block (`include_vars: >`) ends in a line
    // break that is not part of it, as Ansible's argument splitting has it.
    let file = text("file")
        .or_else(|| text("_raw_params").map(|f| f.trim().to_string()))
        .filter(|f| !f.is_empty());
    let dir = text("dir");
    // A file's arguments and any of a directory's do not go together.
    if DIR_ARGS.iter().any(|k| args.contains_key(*k))
        && ["file", "_raw_params"]
            .iter()
            .any(|k| args.contains_key(*k))
    {
        return Err(Refusal::Arguments(format!("Task failed: {MIXING}")));
    }
    let files = match (file, dir) {
        // No name at all (a `first_found` that found nothing, say, or no argument)
        // names no file: ansible-core looks for it all the same, and warns.
        (None, None) => {
            let mut r = unread("Could not find file on the Ansible Controller.\nIf you are using a module and expect the file to exist on the remote, see the remote_src option".into());
            r.insert(
                "warnings".into(),
                json!(["Invalid request to find a file that matches a \"null\" value"]),
            );
            return Ok(r);
        }
        // (`dir` beside a file was refused above.)
        (Some(f), _) => {
            vec![search_path::find(ctx.vars(), "vars", &f).map_err(|e| e.to_string())?]
        }
        (None, Some(d)) => {
            let root = dir_root(ctx, &d);
            if !root.exists() {
                return Err(format!("{} directory does not exist", root.display()).into());
            }
            if !root.is_dir() {
                return Err(format!("{} is not a directory", root.display()).into());
            }
            walk(
                &root,
                &Walk::from_args(args).map_err(|e| match e {
                    ArgError::NotList { ref option } => Refusal::Option {
                        option: option.clone(),
                        error: e.to_string(),
                    },
                    e @ ArgError::NotListBefore2_20 { .. } => {
                        Refusal::Arguments(format!("Task failed: {e}"))
                    }
                    other => Refusal::Arguments(other.to_string()),
                })?,
            )?
        }
    };
    let merge = match text("hash_behaviour").as_deref() {
        None | Some("replace") => false,
        Some("merge") => true,
        Some(other) => {
            return Err(Refusal::Arguments(format!(
                "hash_behaviour must be 'replace' or 'merge', got '{other}'"
            )));
        }
    };
    // The files of one include replace each other's variables, in order; only what
    // the host already has is merged into (`hash_behaviour: merge`), as in Ansible.
    let mut values = Map::new();
    for f in &files {
        values.extend(vars_files::load(f)?);
    }
    let mut values = match text("name") {
        Some(name) => {
            let mut m = Map::new();
            m.insert(name, Value::Object(values));
            m
        }
        None => values,
    };
    if merge {
        // Mappings merge into what the host already has.
        for (k, v) in values.iter_mut() {
            if let Ok(existing) = ctx.templar().evaluate(k, ctx.vars()) {
                *v = sandball_pycompat::merge::merge_values(Some(&existing), v.take());
            }
        }
    }
    let shown: Vec<Value> = files
        .iter()
        .map(|f| Value::String(f.display().to_string()))
        .collect();
    let mut result = ok_with(json!({
        "ansible_facts": values,
        "ansible_included_var_files": shown,
    }));
    // A vault-encrypted file hides the whole result, as ansible-core hides it.
    if files
        .iter()
        .any(|f| std::fs::read_to_string(f).is_ok_and(|text| crate::vault::is_vault(&text)))
    {
        result.insert("_ansible_no_log".into(), Value::Bool(true));
    }
    Ok(result)
}

/// Where a `dir` is: as Ansible has it, under the role's `vars/` for a task of a role,
/// else relative to the playbook's directory (no other place is searched).
fn dir_root(ctx: &dyn Context, dir: &str) -> PathBuf {
    let path = Path::new(dir);
    if path.is_absolute() {
        return path.to_path_buf();
    }
    let base = |name: &str| match ctx.vars().get(name) {
        Some(crate::template::Var::Trusted(Value::String(s)))
        | Some(crate::template::Var::Data(Value::String(s))) => Some(PathBuf::from(s)),
        _ => None,
    };
    match base("role_path") {
        // `vars/…` is the role's own vars directory when that exists, else the path as
        // given; anything else is under the role's vars directory.
        Some(role) if path.starts_with("vars") => {
            let own = role.join(path);
            if own.exists() {
                own
            } else {
                path.to_path_buf()
            }
        }
        Some(role) => role.join("vars").join(path),
        None => base("playbook_dir").unwrap_or_default().join(path),
    }
}

/// How a directory is read.
struct Walk {
    /// Levels below the directory that are read (0: all).
    depth: usize,
    /// Only files whose names this finds.
    matching: Option<Regex>,
    /// Files whose names end with one of these are skipped.
    ignore: Vec<Regex>,
    /// File extensions read.
    extensions: Vec<String>,
    /// Files with other extensions are skipped instead of failing.
    ignore_unknown: bool,
}

impl Walk {
    fn from_args(args: &Map<String, Value>) -> Result<Walk, ArgError> {
        let depth = args::count(args, "depth")?.unwrap_or(0);
        let regex =
            |option: &str, p: &str| Regex::new(p).map_err(|e| ArgError::bad_pattern(option, p, e));
        let matching = match args.get("files_matching").and_then(Value::as_str) {
            Some(p) => Some(regex("files_matching", p)?),
            None => None,
        };
        // ansible-core 2.20 takes only lists (but `ignore_files` as words, deprecated);
        // 2.19 splits text: `ignore_files` into words, `extensions` into characters.
        let lists_only = crate::compat::core().at_least(20);
        let not_list = |option: &str| ArgError::NotList {
            option: option.to_string(),
        };
        let items = |items: &[Value]| -> Vec<String> {
            items
                .iter()
                .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
                .collect()
        };
        let ignore_files = match args.get("ignore_files") {
            Some(Value::Array(v)) => items(v),
            Some(Value::String(s)) => s.split_whitespace().map(str::to_string).collect(),
            Some(v) if lists_only && sandball_pycompat::pyops::py_truth(v) => {
                return Err(not_list("ignore_files"));
            }
            _ => Vec::new(),
        };
        let ignore = ignore_files
            .iter()
            .map(|p| regex("ignore_files", &format!("(?:{p})$")))
            .collect::<Result<_, _>>()?;
        let extensions = match args.get("extensions") {
            None => vec!["yaml".into(), "yml".into(), "json".into()],
            Some(Value::Array(v)) => items(v),
            Some(Value::String(s)) if !lists_only => s.chars().map(String::from).collect(),
            Some(_) if lists_only => return Err(not_list("extensions")),
            Some(_) => {
                return Err(ArgError::NotListBefore2_20 {
                    option: "extensions".into(),
                });
            }
        };
        Ok(Walk {
            depth,
            matching,
            ignore,
            extensions,
            ignore_unknown: args::flag(args, "ignore_unknown_extensions", false)?,
        })
    }
}

/// The files of a directory `include_vars` reads, in order: a directory's files by
/// name, then its subdirectories by name.
fn walk(root: &Path, how: &Walk) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    walk_into(root, 1, how, &mut out)?;
    Ok(out)
}

fn walk_into(dir: &Path, level: usize, how: &Walk, out: &mut Vec<PathBuf>) -> Result<(), String> {
    if how.depth != 0 && level > how.depth {
        return Ok(());
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    let (dirs, files): (Vec<PathBuf>, Vec<PathBuf>) = entries.into_iter().partition(|p| p.is_dir());
    for file in files {
        let name = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if how.ignore.iter().any(|r| r.is_match(&name)) {
            continue;
        }
        let ext = file
            .extension()
            .map(|e| e.to_string_lossy().into_owned())
            .unwrap_or_default();
        if !how.extensions.contains(&ext) {
            if how.ignore_unknown {
                continue;
            }
            return Err(format!(
                "{} does not have a valid extension: {}",
                file.display(),
                how.extensions.join(", ")
            ));
        }
        if how.matching.as_ref().is_some_and(|r| !r.is_match(&name)) {
            continue;
        }
        out.push(file);
    }
    for sub in dirs {
        walk_into(&sub, level + 1, how, out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::action::testing::{args, project};

    #[test]
    fn a_file_from_vars_and_a_name() {
        let (_d, ctx) = project(&[("vars/a.yml", "x: 1\ny: {z: 2}\n")]);
        let r = run(&ctx, &args(json!({"_raw_params": "a.yml"})));
        assert_eq!(r["ansible_facts"], json!({"x": 1, "y": {"z": 2}}));
        let r = run(&ctx, &args(json!({"file": "a.yml", "name": "cfg"})));
        assert_eq!(r["ansible_facts"], json!({"cfg": {"x": 1, "y": {"z": 2}}}));
        // What cannot be read fails with the reason as `message`, as in ansible-core.
        let r = run(&ctx, &args(json!({"file": "nope.yml"})));
        assert!(
            r["message"]
                .as_str()
                .unwrap()
                .contains("Could not find or access 'nope.yml'")
        );
        assert_eq!(r["msg"], "Task failed: Action failed: Unknown error.");
        // No file named (a first_found that found none): looked for all the same.
        let r = run(&ctx, &args(json!({"file": null})));
        assert!(
            r["message"]
                .as_str()
                .unwrap()
                .starts_with("Could not find file on the Ansible Controller.")
        );
        assert_eq!(
            r["warnings"],
            json!(["Invalid request to find a file that matches a \"null\" value"])
        );
        assert_eq!(r["ansible_included_var_files"], json!([]));
    }

    #[test]
    fn a_directory_in_order_with_filters() {
        let (_d, ctx) = project(&[
            ("d/b.yml", "v: b\nb: 1\n"),
            ("d/a.yml", "v: a\na: 1\n"),
            ("d/sub/c.yml", "v: c\n"),
            ("d/skip.yml", "skipped: true\n"),
            ("d/notes.txt", "not vars"),
        ]);
        let r = run(
            &ctx,
            &args(
                json!({"dir": "d", "ignore_files": ["skip.yml"], "ignore_unknown_extensions": true}),
            ),
        );
        assert_eq!(r["ansible_facts"], json!({"v": "c", "b": 1, "a": 1}));
        let r = run(
            &ctx,
            &args(json!({"dir": "d", "depth": 1, "ignore_files": ["skip.yml", "notes.txt"]})),
        );
        assert_eq!(r["ansible_facts"]["v"], "b");
        let r = run(
            &ctx,
            &args(json!({"dir": "d", "files_matching": "^a", "ignore_unknown_extensions": true})),
        );
        assert_eq!(r["ansible_facts"], json!({"v": "a", "a": 1}));
        let r = run(&ctx, &args(json!({"dir": "d"})));
        assert!(
            r["message"]
                .as_str()
                .unwrap()
                .contains("does not have a valid extension"),
            "{r:?}"
        );
    }

    #[test]
    fn merge_keeps_what_the_host_has() {
        let (_d, mut ctx) = project(&[("vars/m.yml", "cfg: {b: 2}\n")]);
        ctx.vars.set_data("cfg", json!({"a": 1}));
        let r = run(
            &ctx,
            &args(json!({"file": "m.yml", "hash_behaviour": "merge"})),
        );
        assert_eq!(r["ansible_facts"], json!({"cfg": {"a": 1, "b": 2}}));
        let r = run(&ctx, &args(json!({"file": "m.yml"})));
        assert_eq!(r["ansible_facts"], json!({"cfg": {"b": 2}}));
    }
}
