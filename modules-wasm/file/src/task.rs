//! One `file` task after its parameters are settled ([`Task`]), and what a state
//! handler reports back ([`Outcome`]), completed with Ansible's path information.

use crate::state::{exists, is_link};
use crate::times::Times;
use sandball_guest_sdk::files::{FileArgs, path_info, realpath, set_fs_attributes_if_different};
use sandball_guest_sdk::prelude::*;

/// Everything a state handler needs.
pub struct Task<'a> {
    /// The module (check mode, warnings).
    pub m: &'a Module,
    /// The path to manage, after `_original_basename`/`src` placement in a directory.
    pub path: String,
    /// `src`.
    pub src: Option<String>,
    /// `follow`.
    pub follow: bool,
    /// `force`.
    pub force: bool,
    /// `recurse`.
    pub recurse: bool,
    /// `modification_time` and `access_time`.
    pub times: Times,
    /// Mode, owner, group and the other file common arguments.
    pub args: FileArgs,
}

impl Task<'_> {
    /// Applies mode, owner, group and attributes to `path` (a symlink itself, when
    /// `path` is one); true when anything changed or `changed` already was.
    pub fn set_attributes(
        &self,
        path: &str,
        changed: bool,
        diff: Option<&mut Diff>,
    ) -> Result<bool, Fail> {
        set_fs_attributes_if_different(&self.args, path, changed, diff, self.m.check_mode())
    }

    /// Where attributes go for `path`: its target when it is a symlink and `follow`
    /// is set, else the path itself.
    pub fn attributes_path(&self, path: &str) -> String {
        if self.follow && is_link(path) {
            realpath(path)
        } else {
            path.to_string()
        }
    }
}

/// A state handler's result: `path` or `dest`, `changed`, the diff and extra fields.
#[derive(Debug)]
pub struct Outcome {
    key: &'static str,
    path: String,
    changed: bool,
    diff: Option<Diff>,
    extra: Map<String, Value>,
    warnings: Vec<String>,
}

impl Outcome {
    /// A result naming the path under `key` (`"path"` or `"dest"`, as Ansible does
    /// for each state).
    pub fn new(key: &'static str, path: &str, changed: bool) -> Outcome {
        Outcome {
            key,
            path: path.to_string(),
            changed,
            diff: None,
            extra: Map::new(),
            warnings: Vec::new(),
        }
    }

    /// Adds a field.
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Outcome {
        self.extra.insert(key.to_string(), value.into());
        self
    }

    /// Sets the diff.
    pub fn with_diff(mut self, diff: Diff) -> Outcome {
        self.diff = Some(diff);
        self
    }

    /// Adds a warning for the task's result.
    pub fn warn(mut self, msg: &str) -> Outcome {
        self.warnings.push(msg.to_string());
        self
    }

    /// Sets `changed`.
    pub fn changed(mut self, changed: bool) -> Outcome {
        self.changed = changed;
        self
    }

    /// The result map: the fields, the diff in diff mode, and — when the path exists —
    /// its owner, group, mode, state and size (which take precedence, as in Ansible).
    /// Warnings go to the module.
    pub fn into_result(self, m: &mut Module) -> Map<String, Value> {
        for w in self.warnings {
            m.warn(w);
        }
        let diff_mode = m.diff_mode();
        let mut result = Map::new();
        result.insert(self.key.to_string(), json!(self.path));
        result.insert("changed".into(), json!(self.changed));
        for (k, v) in self.extra {
            result.insert(k, v);
        }
        if diff_mode && let Some(diff) = self.diff {
            result.insert(
                "diff".into(),
                json!({"before": diff.before, "after": diff.after}),
            );
        }
        for (k, v) in existing_path_info(&self.path) {
            result.insert(k, v);
        }
        result
    }
}

/// A failure completed as Ansible's `fail_json` completes it: when it names a `path`
/// (or `dest`) that exists, that path's owner, group, mode, state and size.
pub fn with_path_info(fail: Fail) -> Fail {
    let fields = fail.fields();
    let Some(path) = fields
        .get("path")
        .or_else(|| fields.get("dest"))
        .and_then(Value::as_str)
        .map(str::to_string)
    else {
        return fail;
    };
    existing_path_info(&path)
        .into_iter()
        .fold(fail, |fail, (k, v)| fail.with(k, v))
}

/// `path_info` without the path itself, or nothing when the path does not exist
/// (following links, as Python's `os.path.exists`).
fn existing_path_info(path: &str) -> Map<String, Value> {
    if !exists(path) {
        return Map::new();
    }
    let mut info = path_info(path);
    info.remove("path");
    info
}
