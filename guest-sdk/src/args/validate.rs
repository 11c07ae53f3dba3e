//! Validation of task arguments against an argument spec, level by level, in Ansible's
//! order: aliases, deprecations, env fallbacks, unknown arguments,
//! `mutually_exclusive`, defaults, `required`, types (and list `elements`), `choices`,
//! the other dependencies, null for everything absent, `no_log` values, and finally the
//! suboptions of dicts and lists of dicts, recursively. Every error is collected; the
//! first one is what a module fails with, with unsupported arguments reported last.

use super::coerce::{coerce, type_label};
use super::context::Context;
use super::dependencies::{check_dependencies, check_mutually_exclusive, check_required};
use super::deprecation::Deprecation;
use super::error::{ArgError, ArgErrorKind};
use super::no_log;
use sandball_pycompat::pyfmt::{py_str, short_type_name};
use sandball_pycompat::pyops::py_eq;
use sandball_wire::manifest::{ArgSpec, ArgType, Dependencies};
use serde_json::{Map, Value};
use std::collections::BTreeSet;

/// The outcome of validating one set of arguments.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Validation {
    /// The arguments: aliases resolved to their canonical names, values converted to
    /// their types, defaults applied, every argument of the spec present (null when not
    /// given and without default).
    pub params: Map<String, Value>,
    /// Secrets to mask in the module's output.
    pub no_log_values: BTreeSet<String>,
    /// Warnings (an argument given under both its name and an alias, conversions).
    pub warnings: Vec<String>,
    /// Deprecated arguments and aliases that were used.
    pub deprecations: Vec<Deprecation>,
    /// Every problem found, in the order Ansible reports them.
    pub errors: Vec<ArgError>,
}

impl Validation {
    /// The error a module fails with, if any.
    pub fn error(&self) -> Option<&ArgError> {
        self.errors.first()
    }
}

/// Validates `params` against `spec` and the dependencies `deps` of its top level.
pub fn validate(
    spec: &[(String, ArgSpec)],
    deps: &Dependencies,
    mut params: Map<String, Value>,
    ctx: &Context,
) -> Validation {
    let mut walker = Walker {
        ctx,
        out: Validation::default(),
        unsupported: Vec::new(),
    };
    walker.level(spec, deps, &mut params, "", &mut Vec::new());
    let Walker {
        mut out,
        unsupported,
        ..
    } = walker;
    out.errors.extend(unsupported);
    out.params = params;
    out
}

struct Walker<'c, 'e> {
    ctx: &'c Context<'e>,
    out: Validation,
    unsupported: Vec<ArgError>,
}

fn deprecated_msg(what: &str, name: &str) -> String {
    format!("{what} '{name}' is deprecated. See the module docs for more information")
}

/// `name (alias1, alias2)` for every argument, sorted, as Ansible lists them.
fn supported_names(spec: &[(String, ArgSpec)]) -> String {
    let mut names: Vec<String> = spec
        .iter()
        .map(|(name, s)| {
            if s.aliases.is_empty() {
                name.clone()
            } else {
                let mut aliases = s.aliases.clone();
                aliases.sort();
                format!("{name} ({})", aliases.join(", "))
            }
        })
        .collect();
    names.sort();
    names.join(", ")
}

impl Walker<'_, '_> {
    fn error(&mut self, kind: ArgErrorKind, message: String) {
        self.out.errors.push(ArgError::new(kind, message));
    }

    fn level(
        &mut self,
        spec: &[(String, ArgSpec)],
        deps: &Dependencies,
        params: &mut Map<String, Value>,
        prefix: &str,
        context: &mut Vec<String>,
    ) {
        self.check_spec(spec);
        self.resolve_aliases(spec, params, prefix);
        self.list_deprecations(spec, params, prefix);
        self.apply_fallbacks(spec, params);
        self.find_unsupported(spec, params, context);
        if let Some(e) = check_mutually_exclusive(deps, params, context) {
            self.out.errors.push(e);
        }
        self.apply_defaults(spec, params);
        if let Some(e) = check_required(spec, params, context) {
            self.out.errors.push(e);
        }
        self.convert_types(spec, params, context);
        self.check_choices(spec, params, context);
        self.out
            .errors
            .extend(check_dependencies(deps, params, context));
        for (name, _) in spec {
            if !params.contains_key(name) {
                params.insert(name.clone(), Value::Null);
            }
        }
        for (name, s) in spec {
            if let (true, Some(v)) = (s.no_log, params.get(name)) {
                no_log::collect(v, &mut self.out.no_log_values);
            }
        }
        self.validate_suboptions(spec, params, prefix, context);
    }

    fn check_spec(&mut self, spec: &[(String, ArgSpec)]) {
        for (name, s) in spec {
            if s.required && s.default.as_ref().is_some_and(|d| !d.is_null()) {
                self.error(
                    ArgErrorKind::Spec,
                    format!(
                        "internal error: required and default are mutually exclusive for {name}"
                    ),
                );
            }
            if s.elements.is_some() && s.kind != ArgType::List {
                self.error(
                    ArgErrorKind::Spec,
                    format!(
                        "Invalid type {} for option '{name}', elements value check is supported only with 'list' type",
                        type_label(s.kind)
                    ),
                );
            }
        }
    }

    fn resolve_aliases(
        &mut self,
        spec: &[(String, ArgSpec)],
        params: &mut Map<String, Value>,
        prefix: &str,
    ) {
        for (name, s) in spec {
            for d in &s.deprecated_aliases {
                if params.contains_key(&d.name) {
                    self.out.deprecations.push(Deprecation {
                        msg: deprecated_msg("Alias", &format!("{prefix}{}", d.name)),
                        version: d.version.clone(),
                        date: d.date.clone(),
                        collection_name: d.collection_name.clone(),
                    });
                }
            }
            for alias in &s.aliases {
                if let Some(v) = params.shift_remove(alias) {
                    if params.contains_key(name) {
                        self.out.warnings.push(format!(
                            "Both option {prefix}{name} and its alias {prefix}{alias} are set."
                        ));
                    }
                    params.insert(name.clone(), v);
                }
            }
        }
    }

    fn list_deprecations(
        &mut self,
        spec: &[(String, ArgSpec)],
        params: &Map<String, Value>,
        prefix: &str,
    ) {
        for (name, s) in spec {
            let deprecated = s.removed_in_version.is_some() || s.removed_at_date.is_some();
            if deprecated && params.contains_key(name) {
                self.out.deprecations.push(Deprecation {
                    msg: deprecated_msg("Param", &format!("{prefix}{name}")),
                    version: s.removed_in_version.clone(),
                    date: s.removed_at_date.clone(),
                    collection_name: s.removed_from_collection.clone(),
                });
            }
        }
    }

    fn apply_fallbacks(&mut self, spec: &[(String, ArgSpec)], params: &mut Map<String, Value>) {
        for (name, s) in spec {
            let Some(fallback) = s.fallback.as_ref().filter(|_| !params.contains_key(name)) else {
                continue;
            };
            if let Some(value) = fallback.env.iter().find_map(|var| (self.ctx.env)(var)) {
                let value = Value::String(value);
                if s.no_log {
                    no_log::collect(&value, &mut self.out.no_log_values);
                }
                params.insert(name.clone(), value);
            }
        }
    }

    fn find_unsupported(
        &mut self,
        spec: &[(String, ArgSpec)],
        params: &Map<String, Value>,
        context: &[String],
    ) {
        if self.ctx.ignore_unknown {
            return;
        }
        let mut unknown: Vec<String> = params
            .keys()
            .filter(|k| !spec.iter().any(|(name, _)| name == *k))
            .map(|k| {
                if context.is_empty() {
                    k.clone()
                } else {
                    format!("{}.{k}", context.join("."))
                }
            })
            .collect();
        if unknown.is_empty() {
            return;
        }
        unknown.sort();
        self.unsupported.push(ArgError::new(
            ArgErrorKind::Unsupported,
            format!(
                "{}. Supported parameters include: {}.",
                unknown.join(", "),
                supported_names(spec)
            ),
        ));
    }

    fn apply_defaults(&mut self, spec: &[(String, ArgSpec)], params: &mut Map<String, Value>) {
        for (name, s) in spec {
            let Some(default) = s.default.as_ref().filter(|d| !d.is_null()) else {
                continue;
            };
            if !params.contains_key(name) {
                if s.no_log {
                    no_log::collect(default, &mut self.out.no_log_values);
                }
                params.insert(name.clone(), default.clone());
            }
        }
    }

    fn convert_types(
        &mut self,
        spec: &[(String, ArgSpec)],
        params: &mut Map<String, Value>,
        context: &[String],
    ) {
        for (name, s) in spec {
            // A null is left alone unless the option is required or has a default: then
            // it must convert like any value (None is not an int), as in Ansible.
            let Some(value) = params.get(name).filter(|v| {
                !v.is_null() || s.required || s.default.as_ref().is_some_and(|d| !d.is_null())
            }) else {
                continue;
            };
            match coerce(s.kind, value, self.ctx, &mut self.out.warnings) {
                Ok(converted) => {
                    let converted = match (s.elements, converted) {
                        (Some(kind), Value::Array(items)) if s.kind == ArgType::List => {
                            Value::Array(self.convert_elements(name, kind, items, context))
                        }
                        (_, other) => other,
                    };
                    params.insert(name.clone(), converted);
                }
                Err(e) => {
                    let found = if context.is_empty() {
                        String::new()
                    } else {
                        format!(" found in '{}'.", context.join(" -> "))
                    };
                    let message = format!(
                        "argument '{name}' is of type {}{found} and we were unable to convert to {}: {e}",
                        short_type_name(value),
                        type_label(s.kind)
                    );
                    self.error(ArgErrorKind::Type, message);
                }
            }
        }
    }

    fn convert_elements(
        &mut self,
        name: &str,
        kind: ArgType,
        items: Vec<Value>,
        context: &[String],
    ) -> Vec<Value> {
        let mut converted = Vec::with_capacity(items.len());
        for item in items {
            match coerce(kind, &item, self.ctx, &mut self.out.warnings) {
                Ok(v) => converted.push(v),
                Err(e) => {
                    let found = if context.is_empty() {
                        String::new()
                    } else {
                        format!(" found in '{}'", context.join(" -> "))
                    };
                    let message = format!(
                        "Elements value for option '{name}'{found} is of type {} and we were unable to convert to {}: {e}",
                        short_type_name(&item),
                        type_label(kind)
                    );
                    self.error(ArgErrorKind::Type, message);
                    converted.push(item);
                }
            }
        }
        converted
    }

    fn check_choices(
        &mut self,
        spec: &[(String, ArgSpec)],
        params: &mut Map<String, Value>,
        context: &[String],
    ) {
        let found = super::error::found_in(context);
        for (name, s) in spec {
            let Some(choices) = &s.choices else { continue };
            let Some(value) = params.get(name).filter(|v| !v.is_null()) else {
                continue;
            };
            let listed = |v: &Value| choices.iter().any(|c| py_eq(c, v));
            let choices_text = || choices.iter().map(py_str).collect::<Vec<_>>().join(", ");
            if let Value::Array(items) = value {
                let unmatched: Vec<String> =
                    items.iter().filter(|i| !listed(i)).map(py_str).collect();
                if !unmatched.is_empty() {
                    let message = format!(
                        "value of {name} must be one or more of: {}. Got no match for: {}{found}",
                        choices_text(),
                        unmatched.join(", ")
                    );
                    self.error(ArgErrorKind::Value, message);
                }
            } else if !listed(value) {
                if let Some(word) = boolean_word_choice(value, choices) {
                    params.insert(name.clone(), word);
                    continue;
                }
                let message = format!(
                    "value of {name} must be one of: {}, got: {}{found}",
                    choices_text(),
                    py_str(value)
                );
                self.error(ArgErrorKind::Value, message);
            }
        }
    }

    fn validate_suboptions(
        &mut self,
        spec: &[(String, ArgSpec)],
        params: &mut Map<String, Value>,
        prefix: &str,
        context: &mut Vec<String>,
    ) {
        for (name, s) in spec {
            let Some(sub) = &s.options else { continue };
            let list_of_dicts = s.kind == ArgType::List && s.elements == Some(ArgType::Dict);
            if s.kind != ArgType::Dict && !list_of_dicts {
                continue;
            }
            let value = match params.get(name) {
                Some(Value::Null) | None if s.apply_defaults && s.kind == ArgType::Dict => {
                    Value::Object(Map::new())
                }
                Some(Value::Null) | None => continue,
                Some(v) => v.clone(),
            };
            context.push(name.clone());
            let validated = match value {
                Value::Object(mut map) if s.kind == ArgType::Dict => {
                    self.level(
                        sub,
                        &s.dependencies,
                        &mut map,
                        &format!("{prefix}{name}."),
                        context,
                    );
                    Value::Object(map)
                }
                Value::Array(items) if list_of_dicts => Value::Array(
                    items
                        .into_iter()
                        .enumerate()
                        .map(|(i, item)| match item {
                            Value::Object(mut map) => {
                                let p = format!("{prefix}{name}[{i}].");
                                self.level(sub, &s.dependencies, &mut map, &p, context);
                                Value::Object(map)
                            }
                            other => {
                                self.sub_type_error(name);
                                other
                            }
                        })
                        .collect(),
                ),
                other => {
                    self.sub_type_error(name);
                    other
                }
            };
            context.pop();
            params.insert(name.clone(), validated);
        }
    }

    fn sub_type_error(&mut self, name: &str) {
        self.error(
            ArgErrorKind::SubParameterType,
            format!("value of '{name}' must be of type dict or list of dicts"),
        );
    }
}

/// A boolean converted to the text `True`/`False` (say `force: no` for a `str` argument
/// with choices `[yes, no]`) matches the one choice that spells the same boolean.
fn boolean_word_choice(value: &Value, choices: &[Value]) -> Option<Value> {
    let truth = match value.as_str()? {
        "True" => true,
        "False" => false,
        _ => return None,
    };
    let mut same: Vec<&Value> = choices
        .iter()
        .filter(|c| {
            c.as_str().is_some_and(|s| {
                sandball_pycompat::boolean::strict(&Value::String(s.into())) == Ok(truth)
            })
        })
        .collect();
    (same.len() == 1).then(|| same.remove(0).clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::StringConversion;
    use sandball_wire::manifest::Manifest;
    use serde_json::json;

    fn env(name: &str) -> Option<String> {
        match name {
            "API_TOKEN" => Some("from-env".into()),
            "HOME" => Some("/home/u".into()),
            _ => None,
        }
    }

    fn run(manifest: Value, args: Value) -> Validation {
        let m: Manifest = serde_json::from_value(manifest).unwrap();
        let ctx = Context {
            env: &env,
            string_conversion: StringConversion::Ignore,
            ignore_unknown: false,
        };
        validate(
            &m.argument_spec,
            &m.dependencies,
            args.as_object().unwrap().clone(),
            &ctx,
        )
    }

    fn first_error(manifest: Value, args: Value) -> String {
        run(manifest, args)
            .error()
            .map(|e| e.module_message("m"))
            .unwrap_or_default()
    }

    #[test]
    fn aliases_resolve_to_the_canonical_name() {
        let m = json!({"name": "m", "argument_spec": {"path": {"type": "path", "aliases": ["dest", "name"]}}});
        let v = run(m.clone(), json!({"dest": "~/f"}));
        assert_eq!(Value::Object(v.params), json!({"path": "/home/u/f"}));
        assert!(v.errors.is_empty() && v.warnings.is_empty());
        let v = run(m, json!({"path": "/a", "name": "/b"}));
        assert_eq!(v.params["path"], json!("/b"));
        assert_eq!(
            v.warnings,
            vec!["Both option path and its alias name are set."]
        );
    }

    #[test]
    fn defaults_fallbacks_and_nulls() {
        let m = json!({"name": "m", "argument_spec": {
            "data": {"default": "pong"},
            "count": {"type": "int", "default": "3"},
            "token": {"no_log": true, "fallback": {"env": ["MISSING", "API_TOKEN"]}},
            "other": {"fallback": {"env": ["MISSING"]}},
            "plain": {}
        }});
        let v = run(m.clone(), json!({}));
        assert_eq!(
            Value::Object(v.params),
            json!({"data": "pong", "count": 3, "token": "from-env", "other": null, "plain": null})
        );
        assert!(v.no_log_values.contains("from-env"));
        let v = run(m, json!({"token": "given", "data": null}));
        assert_eq!(v.params["token"], json!("given"));
        assert_eq!(
            v.params["data"],
            json!(""),
            "an explicit null of an option with a default converts (to empty text)"
        );
        assert!(v.no_log_values.contains("given") && !v.no_log_values.contains("from-env"));
    }

    #[test]
    fn required_and_unsupported() {
        let m = json!({"name": "m", "argument_spec": {
            "path": {"required": true, "aliases": ["dest", "name"]},
            "state": {"choices": ["a", "b"]}
        }});
        assert_eq!(
            first_error(m.clone(), json!({})),
            "missing required arguments: path"
        );
        assert_eq!(
            first_error(m.clone(), json!({"path": "/x", "foo": 1, "bar": 2})),
            "Unsupported parameters for (m) module: bar, foo. Supported parameters include: path (dest, name), state."
        );
        // Other errors come before unsupported parameters, as in Ansible.
        assert_eq!(
            first_error(m.clone(), json!({"foo": 1})),
            "missing required arguments: path"
        );
        let m2: Manifest = serde_json::from_value(m).unwrap();
        let ctx = Context {
            env: &env,
            string_conversion: StringConversion::Ignore,
            ignore_unknown: true,
        };
        let v = validate(
            &m2.argument_spec,
            &m2.dependencies,
            json!({"path": "/x", "foo": 1}).as_object().unwrap().clone(),
            &ctx,
        );
        assert!(v.errors.is_empty());
        assert_eq!(
            v.params["foo"],
            json!(1),
            "unknown arguments are kept when ignored"
        );
    }

    #[test]
    fn type_errors_name_the_argument_and_type() {
        let m = json!({"name": "m", "argument_spec": {
            "n": {"type": "int"},
            "mode": {"type": "str"},
            "ports": {"type": "list", "elements": "int"}
        }});
        assert_eq!(
            first_error(m.clone(), json!({"n": "many"})),
            "argument 'n' is of type str and we were unable to convert to int: \"'many'\" cannot be converted to an int"
        );
        assert_eq!(
            first_error(m.clone(), json!({"ports": "80,x"})),
            "Elements value for option 'ports' is of type str and we were unable to convert to int: \"'x'\" cannot be converted to an int"
        );
        let v = run(m, json!({"ports": "80,443", "mode": 644}));
        assert_eq!(v.params["ports"], json!([80, 443]));
        assert_eq!(v.params["mode"], json!("644"));
    }

    #[test]
    fn choices_after_conversion() {
        let m = json!({"name": "m", "argument_spec": {
            "state": {"choices": ["present", "absent"], "default": "present"},
            "n": {"type": "int", "choices": [1, 2]},
            "tags": {"type": "list", "elements": "str", "choices": ["a", "b"]},
            "force": {"choices": ["yes", "no"]}
        }});
        assert_eq!(
            first_error(m.clone(), json!({"state": "gone"})),
            "value of state must be one of: present, absent, got: gone"
        );
        assert!(run(m.clone(), json!({"n": "2"})).errors.is_empty());
        assert_eq!(
            first_error(m.clone(), json!({"tags": "a,c,d"})),
            "value of tags must be one or more of: a, b. Got no match for: c, d"
        );
        let v = run(m, json!({"force": false}));
        assert!(v.errors.is_empty(), "{:?}", v.errors);
        assert_eq!(v.params["force"], json!("no"));
    }

    #[test]
    fn dependency_rules_apply_after_defaults_and_types() {
        let m = json!({"name": "m", "argument_spec": {
            "state": {"default": "file"}, "src": {}, "force": {"type": "bool"}, "reason": {},
            "a": {}, "b": {"default": "x"}
        },
        "mutually_exclusive": [["src", "reason"]],
        "required_if": [["state", "link", ["src"]], ["force", true, ["reason"]]],
        "required_one_of": [["a", "b"]]});
        assert_eq!(
            first_error(m.clone(), json!({"state": "link"})),
            "state is link but all of the following are missing: src"
        );
        assert_eq!(
            first_error(m.clone(), json!({"force": "yes"})),
            "force is True but all of the following are missing: reason"
        );
        assert_eq!(
            first_error(m.clone(), json!({"src": 1, "reason": 2})),
            "parameters are mutually exclusive: src|reason"
        );
        assert!(
            run(m, json!({})).errors.is_empty(),
            "b's default satisfies required_one_of"
        );
    }

    #[test]
    fn nested_options_with_apply_defaults_and_lists_of_dicts() {
        let m = json!({"name": "m", "argument_spec": {
            "top": {"type": "dict", "apply_defaults": true, "options": {
                "flag": {"type": "bool", "default": true},
                "name": {"aliases": ["n"]}
            }},
            "plain": {"type": "dict", "options": {"x": {"default": 1}}},
            "users": {"type": "list", "elements": "dict", "options": {
                "name": {"required": true},
                "uid": {"type": "int"},
                "pw": {"no_log": true}
            }, "required_together": [["uid", "pw"]]}
        }});
        let v = run(m.clone(), json!({}));
        assert_eq!(v.params["top"], json!({"flag": true, "name": null}));
        assert_eq!(v.params["plain"], Value::Null);
        assert_eq!(v.params["users"], Value::Null);
        let v = run(
            m.clone(),
            json!({"top": "flag=no n=x", "users": [{"name": "a", "uid": "7", "pw": "s3"}]}),
        );
        assert!(v.errors.is_empty(), "{:?}", v.errors);
        assert_eq!(v.params["top"], json!({"flag": false, "name": "x"}));
        assert_eq!(
            v.params["users"],
            json!([{"name": "a", "uid": 7, "pw": "s3"}])
        );
        assert!(v.no_log_values.contains("s3"));
        assert_eq!(
            first_error(
                m.clone(),
                json!({"users": [{"name": "a"}, {"uid": 1, "pw": "x"}]})
            ),
            "missing required arguments: name found in users"
        );
        assert_eq!(
            first_error(m.clone(), json!({"users": [{"name": "a", "uid": 1}]})),
            "parameters are required together: uid, pw found in users"
        );
        assert_eq!(
            first_error(m.clone(), json!({"users": [{"name": "a", "uid": "x"}]})),
            "argument 'uid' is of type str found in 'users'. and we were unable to convert to int: \"'x'\" cannot be converted to an int"
        );
        assert_eq!(
            first_error(m.clone(), json!({"top": {"bogus": 1}})),
            "Unsupported parameters for (m) module: top.bogus. Supported parameters include: flag, name (n)."
        );
        let errors: Vec<String> = run(m, json!({"users": ["x"]}))
            .errors
            .into_iter()
            .map(|e| e.message)
            .collect();
        assert_eq!(
            errors,
            vec![
                "Elements value for option 'users' is of type str and we were unable to convert to dict: dictionary requested, could not parse JSON or key=value",
                "value of 'users' must be of type dict or list of dicts",
            ]
        );
    }

    #[test]
    fn deprecations_of_params_and_aliases() {
        let m = json!({"name": "m", "argument_spec": {
            "old": {"removed_in_version": "2.0.0", "removed_from_collection": "ns.col"},
            "new": {"aliases": ["legacy"], "deprecated_aliases": [{"name": "legacy", "date": "2030-01-01", "collection_name": "ns.col"}]},
            "sub": {"type": "dict", "options": {"gone": {"removed_at_date": "2031-02-03"}}}
        }});
        let v = run(
            m.clone(),
            json!({"old": 1, "legacy": 2, "sub": {"gone": 3}}),
        );
        assert!(v.errors.is_empty());
        assert_eq!(v.params["new"], json!("2"));
        let d: Vec<Value> = v
            .deprecations
            .iter()
            .map(|d| serde_json::to_value(d).unwrap())
            .collect();
        assert_eq!(
            d,
            vec![
                json!({"msg": "Alias 'legacy' is deprecated. See the module docs for more information", "date": "2030-01-01", "collection_name": "ns.col"}),
                json!({"msg": "Param 'old' is deprecated. See the module docs for more information", "version": "2.0.0", "collection_name": "ns.col"}),
                json!({"msg": "Param 'sub.gone' is deprecated. See the module docs for more information", "date": "2031-02-03", "collection_name": null}),
            ]
        );
        assert!(run(m, json!({})).deprecations.is_empty());
    }

    #[test]
    fn no_log_values_from_nested_lists_and_defaults() {
        let m = json!({"name": "m", "argument_spec": {
            "secret": {"no_log": true, "default": "dflt"},
            "creds": {"type": "dict", "no_log": true},
            "pins": {"type": "list", "elements": "int", "no_log": true}
        }});
        let v = run(
            m,
            json!({"creds": {"user": "u", "pass": "p4ss"}, "pins": ["1234"]}),
        );
        let expected: BTreeSet<String> = ["dflt", "u", "p4ss", "1234"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(v.no_log_values, expected);
    }

    #[test]
    fn spec_mistakes_are_reported() {
        let m = json!({"name": "m", "argument_spec": {"p": {"required": true, "default": 1}}});
        assert_eq!(
            first_error(m, json!({"p": 2})),
            "internal error: required and default are mutually exclusive for p"
        );
    }
}
