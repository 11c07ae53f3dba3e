//! [`Module`]: what a module's body sees, the `AnsibleModule` of this world: validated
//! parameters, check and diff mode, warnings and deprecations, and the file helpers.

use crate::args::{self, ArgError, Context, Deprecation, InternalArgs};
use crate::diff::Diff;
use crate::fail::Fail;
use crate::files::{self, FileArgs};
use sandball_wire::manifest::Manifest;
use serde_json::{Map, Value};
use std::collections::BTreeSet;

/// One run of a module: its validated arguments and what it reports besides its result.
#[derive(Clone, Debug, PartialEq)]
pub struct Module {
    name: String,
    params: Map<String, Value>,
    internal: InternalArgs,
    warnings: Vec<String>,
    deprecations: Vec<Deprecation>,
    no_log_values: BTreeSet<String>,
}

impl Module {
    /// Takes the internal arguments out of `args`, validates the rest against the
    /// manifest's spec (plus the file common arguments when the manifest asks for them)
    /// and returns the module with the first validation error, if any.
    pub fn new(
        manifest: &Manifest,
        mut args: Map<String, Value>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> (Module, Option<ArgError>) {
        let internal = InternalArgs::extract(&mut args);
        let mut spec = manifest.argument_spec.clone();
        if manifest.add_file_common_args {
            for (name, s) in files::common_arg_spec() {
                if !spec.iter().any(|(n, _)| *n == name) {
                    spec.push((name, s));
                }
            }
        }
        let ctx = Context {
            env,
            string_conversion: internal.string_conversion(),
            ignore_unknown: internal.ignore_unknown_opts(),
        };
        let mut validation = args::validate(&spec, &manifest.dependencies, args, &ctx);
        let error = (!validation.errors.is_empty()).then(|| validation.errors.remove(0));
        let name = internal.module_name().unwrap_or(&manifest.name).to_string();
        let module = Module {
            name,
            params: validation.params,
            internal,
            warnings: validation.warnings,
            deprecations: validation.deprecations,
            no_log_values: validation.no_log_values,
        };
        (module, error)
    }

    /// The validated parameters: aliases resolved to canonical names, values converted,
    /// defaults applied, every argument of the spec present (null when not given).
    pub fn params(&self) -> &Map<String, Value> {
        &self.params
    }

    /// A parameter's value; `None` when absent or null.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.params.get(name).filter(|v| !v.is_null())
    }

    /// A text parameter.
    pub fn get_str(&self, name: &str) -> Option<&str> {
        self.get(name).and_then(Value::as_str)
    }

    /// A boolean parameter; false when absent.
    pub fn get_bool(&self, name: &str) -> bool {
        self.get(name).and_then(Value::as_bool).unwrap_or(false)
    }

    /// An integer parameter.
    pub fn get_int(&self, name: &str) -> Option<i64> {
        self.get(name).and_then(Value::as_i64)
    }

    /// A list parameter.
    pub fn get_list(&self, name: &str) -> Option<&Vec<Value>> {
        self.get(name).and_then(Value::as_array)
    }

    /// A list parameter as texts (a single text gives a list of one; other values are
    /// rendered as Python would); empty when absent.
    pub fn get_str_list(&self, name: &str) -> Vec<String> {
        match self.get(name) {
            Some(Value::Array(items)) => {
                items.iter().map(sandball_pycompat::pyfmt::py_str).collect()
            }
            Some(other) => vec![sandball_pycompat::pyfmt::py_str(other)],
            None => Vec::new(),
        }
    }

    /// Whether the task runs in check mode: report what would change, change nothing.
    pub fn check_mode(&self) -> bool {
        self.internal.check_mode()
    }

    /// Whether the task asked for a diff of what changes.
    pub fn diff_mode(&self) -> bool {
        self.internal.diff()
    }

    /// Whether the task hides its output (`no_log: true` on the task).
    pub fn no_log(&self) -> bool {
        self.internal.no_log()
    }

    /// The `-v` count of the run.
    pub fn verbosity(&self) -> u32 {
        self.internal.verbosity()
    }

    /// The module's name, as the task called it (or as the manifest names it).
    pub fn module_name(&self) -> &str {
        &self.name
    }

    /// All internal `_ansible_*` arguments.
    pub fn internal(&self) -> &InternalArgs {
        &self.internal
    }

    /// Adds a warning to the result.
    pub fn warn(&mut self, msg: impl Into<String>) {
        self.warnings.push(msg.into());
    }

    /// Adds a deprecation notice to the result.
    pub fn deprecate(
        &mut self,
        msg: impl Into<String>,
        version: Option<&str>,
        date: Option<&str>,
        collection: Option<&str>,
    ) {
        self.deprecations.push(Deprecation {
            msg: msg.into(),
            version: version.map(str::to_string),
            date: date.map(str::to_string),
            collection_name: collection.map(str::to_string),
        });
    }

    /// Marks another value as secret: it is masked wherever it appears in the result.
    pub fn no_log_value(&mut self, secret: impl Into<String>) {
        let secret = secret.into();
        if !secret.is_empty() {
            self.no_log_values.insert(secret);
        }
    }

    /// The file common arguments from the parameters.
    pub fn file_args(&self) -> FileArgs {
        FileArgs::from_params(&self.params)
    }

    /// Brings `path`'s owner, group, mode and attributes to what `args` asks for (in
    /// check mode, only computes it); fills `diff`; returns the new `changed`.
    pub fn set_fs_attributes_if_different(
        &self,
        args: &FileArgs,
        path: &str,
        changed: bool,
        diff: Option<&mut Diff>,
    ) -> Result<bool, Fail> {
        files::set_fs_attributes_if_different(args, path, changed, diff, self.check_mode())
    }

    /// Ansible's `check_file_attrs` of the text-editing modules: applies the file
    /// arguments to `path` after a content change (or none) described by `msg`;
    /// returns the new `changed` and `msg` ("… and ownership, perms or SE linux
    /// context changed") and the attributes' diff (`<path> (file attributes)`
    /// headers; `before`/`after` only for what changed).
    pub fn check_file_attrs(
        &self,
        path: &str,
        changed: bool,
        msg: &str,
    ) -> Result<(bool, String, Value), Fail> {
        let mut diff = Diff {
            before: Value::Null,
            after: Value::Null,
            before_header: Some(format!("{path} (file attributes)")),
            after_header: Some(format!("{path} (file attributes)")),
        };
        let mut msg = msg.to_string();
        let attrs_changed =
            self.set_fs_attributes_if_different(&self.file_args(), path, false, Some(&mut diff))?;
        let mut diff = serde_json::to_value(&diff).unwrap_or(Value::Null);
        if let Value::Object(map) = &mut diff {
            map.retain(|_, v| !v.is_null());
        }
        if attrs_changed {
            if changed {
                msg.push_str(" and ");
            }
            msg.push_str("ownership, perms or SE linux context changed");
        }
        Ok((changed || attrs_changed, msg, diff))
    }

    /// Takes the warnings and deprecations to report in the result.
    pub(crate) fn take_report(&mut self) -> (Vec<String>, Vec<Deprecation>) {
        (
            std::mem::take(&mut self.warnings),
            std::mem::take(&mut self.deprecations),
        )
    }

    /// Secrets to mask in the result.
    pub(crate) fn no_log_values(&self) -> &BTreeSet<String> {
        &self.no_log_values
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn module(spec: Value, args: Value) -> (Module, Option<ArgError>) {
        let manifest: Manifest = serde_json::from_value(spec).unwrap();
        Module::new(&manifest, args.as_object().unwrap().clone(), &|_| None)
    }

    #[test]
    fn accessors_read_validated_params() {
        let (m, err) = module(
            json!({"name": "demo", "argument_spec": {
                "s": {}, "b": {"type": "bool"}, "i": {"type": "int"}, "l": {"type": "list"}, "n": {}
            }}),
            json!({"s": "x", "b": "yes", "i": "5", "l": "a,b", "_ansible_check_mode": true,
                   "_ansible_diff": true, "_ansible_verbosity": 2, "_ansible_module_name": "ansible.builtin.demo"}),
        );
        assert!(err.is_none());
        assert_eq!(m.get_str("s"), Some("x"));
        assert!(m.get_bool("b") && !m.get_bool("n"));
        assert_eq!(m.get_int("i"), Some(5));
        assert_eq!(m.get_list("l").map(Vec::len), Some(2));
        assert_eq!(m.get_str_list("l"), vec!["a", "b"]);
        assert_eq!(m.get_str_list("s"), vec!["x"]);
        assert!(m.get_str_list("n").is_empty());
        assert_eq!(m.get("n"), None);
        assert!(m.params().contains_key("n"));
        assert!(m.check_mode() && m.diff_mode() && !m.no_log());
        assert_eq!(m.verbosity(), 2);
        assert_eq!(m.module_name(), "ansible.builtin.demo");
    }

    #[test]
    fn file_common_args_join_the_spec() {
        let spec = json!({"name": "f", "add_file_common_args": true, "argument_spec": {"path": {"type": "path"}}});
        let (m, err) = module(
            spec.clone(),
            json!({"path": "/x", "mode": "0644", "attr": "+i"}),
        );
        assert!(err.is_none(), "{err:?}");
        let fa = m.file_args();
        assert_eq!(
            (fa.mode, fa.attributes.as_deref()),
            (Some(json!("0644")), Some("+i"))
        );
        assert_eq!(m.params()["unsafe_writes"], json!(false));
        let (_, err) = module(
            json!({"name": "f", "argument_spec": {"path": {}}}),
            json!({"mode": "0644"}),
        );
        assert_eq!(
            err.map(|e| e.module_message("f")).as_deref(),
            Some(
                "Unsupported parameters for (f) module: mode. Supported parameters include: path."
            )
        );
    }
}
