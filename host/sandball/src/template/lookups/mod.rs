//! Lookup plugins, run on the controller as Ansible runs them: `lookup(name, terms…)`
//! (a list of texts comes back joined with `,` unless `wantlist=True`), `query()`/`q()`
//! (always a list), with `errors='strict'|'warn'|'ignore'`, and the `with_<name>` loops,
//! which are the same lookups. Files are found along the task's search path (the role's
//! folder of the kind, the role, the playbook's folder, the playbook: see
//! [`crate::playbook::search_path`]). What a lookup reads is data: never templated again
//! (except by the `template` lookup, whose purpose that is).
//!
//! Built in: `file`, `fileglob`, `first_found`, `template`, `env`, `pipe`, `vars`,
//! `lines`, `items`, `list`, `indexed_items`, `dict`, `sequence`, `nested`, `together`,
//! `subelements`, `random_choice`, `password`, `unvault`, `config` (the settings by
//! Ansible's names, see [`crate::config::named`]), `varnames`, `ini` and `csvfile` (see
//! [`super::table_lookups`]), `inventory_hostnames`. Others (`url`…) fail naming
//! the lookup.

use minijinja::value::{Kwargs, Rest};
use minijinja::{Error, ErrorKind, State, Value};
use serde_json::Value as Json;

use crate::template::convert::{ensure_defined, from_json, to_json};
use crate::template::undefined::Plugins;
use crate::template::{Var, Vars};

/// What a lookup may ask of the task: its variables (search path, `vars`) and the
/// templating engine (`template`).
pub trait LookupContext {
    /// A variable's value, if it is defined.
    fn var(&self, name: &str) -> Option<Json>;
    /// Renders a template file's text with the task's variables and `extra` ones, read
    /// as `options` say.
    fn render(
        &self,
        text: &str,
        options: &crate::template::FileOptions,
        extra: &serde_json::Map<String, Json>,
    ) -> Result<String, String>;
    /// The names of the variables the task sees.
    fn var_names(&self) -> Vec<String>;
    /// The action of the task whose `with_<lookup>` loop this is; `None` for a
    /// `lookup()` in a template.
    fn loop_action(&self) -> Option<&str> {
        None
    }
}

/// The lookups [`run`] knows.
const KNOWN: &[&str] = &[
    "file",
    "fileglob",
    "first_found",
    "template",
    "env",
    "pipe",
    "lines",
    "vars",
    "items",
    "list",
    "indexed_items",
    "dict",
    "sequence",
    "nested",
    "together",
    "subelements",
    "random_choice",
    "password",
    "unvault",
    "config",
    "varnames",
    "ini",
    "csvfile",
    "inventory_hostnames",
];

/// A lookup's short name (`ansible.builtin.file` is `file`).
fn short(name: &str) -> &str {
    name.strip_prefix("ansible.builtin.")
        .or_else(|| name.strip_prefix("ansible.legacy."))
        .unwrap_or(name)
}

/// Whether `name` (short or `ansible.builtin.*`) is a lookup sandball has.
pub fn known(name: &str) -> bool {
    KNOWN.contains(&short(name))
}

/// Whether a local plugin file (`lookup_plugins/<name>.py` beside a playbook or in a
/// role, or in `ANSIBLE_LOOKUP_PLUGINS`) takes the place of sandball's lookup (or
/// refusal) of a short or `ansible.legacy.` name, as it takes ansible-core's.
fn local(name: &str) -> bool {
    !name.starts_with("ansible.builtin.") && crate::plugins::loader::local_lookup(name)
}

/// Lookups sandball refuses to run, by short name, and why.
const REFUSED: &[(&str, &str)] = &[(
    "url",
    "the url lookup needs network access from the controller, which sandball does not give lookups",
)];

/// Why sandball refuses lookup `name`, if it does.
fn refused(name: &str) -> Option<&'static str> {
    let name = short(name);
    REFUSED
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, why)| *why)
}

/// Why a lookup gave no results.
#[derive(Debug, thiserror::Error)]
pub enum LookupError {
    /// The plugin failed (Ansible's "The lookup plugin 'x' failed: …").
    #[error("{0}")]
    Failed(String),
    /// A variable it was asked for does not exist: an undefined variable, not a
    /// failure of the plugin (the `vars` lookup).
    #[error("{0}")]
    Undefined(String),
    /// There is no lookup of that name (an error whatever `errors` says).
    #[error("lookup plugin ({0}) not found{1}")]
    NotFound(String, String),
    /// The plugin's file fails to load (an error whatever `errors` says): ansible-core's
    /// "The lookup plugin 'x' failed to load: …".
    #[error("{0}")]
    Unloadable(String),
}

/// Runs lookup `name` on `terms` with its options; the results, always a list.
pub fn run(
    name: &str,
    terms: &[Json],
    options: &serde_json::Map<String, Json>,
    ctx: &dyn LookupContext,
) -> Result<Vec<Json>, LookupError> {
    if python_plugin(name) {
        return python(name, terms, options, ctx);
    }
    let name = short(name);
    if name == "vars" {
        return vars(terms, options, ctx);
    }
    if let Some(why) = refused(name) {
        return Err(LookupError::Failed(why.to_string()));
    }
    run_plugin(name, terms, options, ctx).map_err(LookupError::Failed)
}

/// Whether [`run`] runs lookup `name` as a Python plugin: a local plugin file's, or
/// one none of sandball's (nor refused).
fn python_plugin(name: &str) -> bool {
    local(name) || {
        let name = short(name);
        name != "vars" && refused(name).is_none() && !known(name)
    }
}

/// Whether there is a lookup of this name: one of sandball's, or a Python plugin (a
/// collection's, a playbook's `lookup_plugins/`); an error when sandball refuses it, or
/// it is none of sandball's and there is no ansible-core to look for a plugin in.
pub fn available(name: &str) -> Result<bool, String> {
    if local(name) {
        return Ok(true);
    }
    if let Some(why) = refused(name) {
        return Err(why.to_string());
    }
    if known(name) {
        return Ok(true);
    }
    crate::plugins::loader::has(crate::plugins::loader::Kind::Lookup, name)
        .map_err(|e| e.to_string())
}

/// Runs a Python lookup plugin with the variables the task sees (all but `hostvars`
/// and `vars`, which hold them again).
fn python(
    name: &str,
    terms: &[Json],
    options: &serde_json::Map<String, Json>,
    ctx: &dyn LookupContext,
) -> Result<Vec<Json>, LookupError> {
    crate::plugins::loader::lookup(name, terms, options, plain_variables(ctx))
        .map_err(|e| python_error(name, e))
}

/// A Python lookup's failure as a [`LookupError`].
fn python_error(name: &str, e: crate::plugins::loader::PluginError) -> LookupError {
    match e {
        crate::plugins::loader::PluginError::Missing { why, .. } => {
            LookupError::NotFound(name.to_string(), why)
        }
        crate::plugins::loader::PluginError::Failed(message)
            if message.starts_with(&format!("The lookup plugin '{name}' failed to load: ")) =>
        {
            LookupError::Unloadable(message)
        }
        // ansible-core's message names the plugin; the caller names it again.
        crate::plugins::loader::PluginError::Failed(message) => LookupError::Failed(
            message
                .strip_prefix("The lookup plugin '")
                .and_then(|m| m.split_once("' failed: "))
                .map_or(message.clone(), |(_, cause)| cause.to_string()),
        ),
    }
}

/// Runs a Python lookup plugin on terms holding undefined values (at `places`), which
/// it gets as ansible-core's undefined markers if it accepts them
/// (`accept_args_markers`); a plugin that does not is not run, its result the first
/// undefined term, as in ansible-core 2.19. The results, with the undefined values
/// the plugin gave back in place.
fn python_marked(
    state: &State,
    name: &str,
    terms: &[Json],
    places: &[crate::template::convert::UndefinedPlace],
    options: &serde_json::Map<String, Json>,
) -> Result<Value, LookupError> {
    let undefined: Vec<Json> = places
        .iter()
        .map(|(path, value)| {
            let detail = ensure_defined(state, value)
                .err()
                .map(|e| super::error::engine_detail(&e))
                .unwrap_or_default();
            let variable = detail
                .strip_prefix('\'')
                .and_then(|d| d.strip_suffix("' is undefined"))
                .unwrap_or("undefined");
            serde_json::json!({ "path": path, "name": variable })
        })
        .collect();
    let ctx = StateContext { state };
    let (results, paths) = crate::plugins::loader::lookup_marked(
        name,
        terms,
        &undefined,
        options,
        plain_variables(&ctx),
    )
    .map_err(|e| python_error(name, e))?;
    let paths: Vec<&[Json]> = paths
        .iter()
        .filter_map(|p| p.as_array().map(Vec::as_slice))
        .collect();
    let first = places.first().map_or(Value::UNDEFINED, |(_, v)| v.clone());
    Ok(crate::template::convert::from_json_marked(
        &results, &paths, &first,
    ))
}

/// The variables a Python plugin sees: every one the context has, templated, as data
/// (`hostvars` and `vars` aside).
pub fn plain_variables(ctx: &dyn LookupContext) -> serde_json::Map<String, Json> {
    ctx.var_names()
        .into_iter()
        .filter(|n| n != "hostvars" && n != "vars")
        .filter_map(|n| ctx.var(&n).map(|v| (n, v)))
        .collect()
}

/// `vars`: the variables named by the terms (`default` for a missing one).
fn vars(
    terms: &[Json],
    options: &serde_json::Map<String, Json>,
    ctx: &dyn LookupContext,
) -> Result<Vec<Json>, LookupError> {
    terms
        .iter()
        .map(|term| {
            let Json::String(v) = term else {
                return Err(LookupError::Failed(format!(
                    "Variable name must be 'str' not '{}'.",
                    super::filters::python_type(&super::convert::from_json(term))
                )));
            };
            ctx.var(v)
                .or_else(|| options.get("default").cloned())
                .ok_or_else(|| {
                    LookupError::Undefined(format!("No variable named '{v}' was found."))
                })
        })
        .collect()
}

/// Every lookup but `vars`, by its short name.
fn run_plugin(
    name: &str,
    terms: &[Json],
    options: &serde_json::Map<String, Json>,
    ctx: &dyn LookupContext,
) -> Result<Vec<Json>, String> {
    let texts = || -> Vec<String> { terms.iter().map(text).collect() };
    match name {
        "file" => texts()
            .iter()
            .map(|t| {
                let path = find(ctx, "files", t).map_err(|_| {
                    format!(
                        "Unable to access the file {}: File not found. Use -vvvvv to see paths searched.",
                        sandball_wire::python::py_repr(&Json::String(t.clone()))
                    )
                })?;
                let content = std::fs::read_to_string(&path)
                    .map_err(|e| format!("could not read {}: {e}", path.display()))?;
                let flag = |key: &str, default: bool| {
                    crate::plugins::action::truthy(options.get(key), default).unwrap_or(default)
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
            .collect(),
        "fileglob" => {
            let mut out = Vec::new();
            for pattern in texts() {
                let (dir, glob) = match pattern.rsplit_once('/') {
                    Some((d, g)) => (d.to_string(), g.to_string()),
                    None => (String::new(), pattern.clone()),
                };
                let re = regex::Regex::new(&crate::inventory::fnmatch::translate(&glob))
                    .map_err(|e| format!("fileglob: bad pattern {pattern}: {e}"))?;
                // A bare pattern is tried in each folder of the search path (its
                // `files/` first), the first with matches winning; a pattern with a
                // folder, in the first place that folder exists, as Ansible does.
                let dirs =
                    crate::playbook::search_path::candidates(&search_vars(ctx), "files", &dir);
                let mut dirs = dirs.into_iter().filter(|d| d.is_dir());
                let mut found: Vec<String> = Vec::new();
                while found.is_empty() {
                    let Some(base) = dirs.next() else { break };
                    found = std::fs::read_dir(&base)
                        .map_err(|e| format!("fileglob: cannot read {}: {e}", base.display()))?
                        .filter_map(|e| e.ok())
                        .filter(|e| e.path().is_file())
                        .filter(|e| re.is_match(&e.file_name().to_string_lossy()))
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
        "first_found" => first_found(terms, options, ctx),
        "template" => texts()
            .iter()
            .map(|t| {
                let path = find_or_warn(ctx, "templates", t).ok_or_else(|| {
                    format!("the template file {t} could not be found for the lookup")
                })?;
                let source = std::fs::read_to_string(&path)
                    .map_err(|e| format!("could not read {}: {e}", path.display()))?;
                template_lookup(ctx, &path, &source, options)
            })
            .collect(),
        "env" => Ok(texts()
            .iter()
            .map(|v| match std::env::var(v) {
                Ok(value) => Json::String(value),
                Err(_) => options
                    .get("default")
                    .cloned()
                    .unwrap_or(Json::String(String::new())),
            })
            .collect()),
        "pipe" => texts()
            .iter()
            .map(|cmd| {
                let out = std::process::Command::new("/bin/sh")
                    .arg("-c")
                    .arg(cmd)
                    .output()
                    .map_err(|e| format!("could not run {cmd}: {e}"))?;
                if !out.status.success() {
                    return Err(format!(
                        "lookup_plugin.pipe({cmd}) returned {}",
                        out.status.code().unwrap_or(-1)
                    ));
                }
                Ok(Json::String(
                    String::from_utf8_lossy(&out.stdout).trim_end().to_string(),
                ))
            })
            .collect(),
        "lines" => {
            let mut out = Vec::new();
            for cmd in texts() {
                for line in run_plugin("pipe", &[Json::String(cmd)], options, ctx)? {
                    out.extend(text(&line).lines().map(|l| Json::String(l.to_string())));
                }
            }
            Ok(out)
        }
        "items" => Ok(flatten_one(terms)),
        "list" => Ok(terms.to_vec()),
        "indexed_items" => Ok(flatten_one(terms)
            .into_iter()
            .enumerate()
            .map(|(i, v)| Json::Array(vec![Json::from(i), v]))
            .collect()),
        "dict" => {
            let mut out = Vec::new();
            for t in terms {
                let Json::Object(m) = t else {
                    let value = super::convert::from_json(t);
                    return Err(format!(
                        "the 'dict' lookup plugin expects a dictionary, got '{value}' of type <class '{}'>",
                        super::filters::python_type(&value)
                    ));
                };
                out.extend(
                    m.iter()
                        .map(|(k, v)| serde_json::json!({"key": k, "value": v})),
                );
            }
            Ok(out)
        }
        "sequence" => sequence(terms, options),
        "nested" => Ok(nested(terms)),
        "together" if terms.is_empty() => {
            Err("with_together requires at least one element in each list".into())
        }
        "together" => Ok(together(terms)),
        "subelements" => subelements(terms),
        "random_choice" => {
            use rand::seq::IndexedRandom;
            Ok(terms
                .choose(&mut rand::rng())
                .cloned()
                .into_iter()
                .collect())
        }
        "password" => texts().iter().map(|t| password(t, ctx)).collect(),
        "config" => config(terms, options, ctx),
        "varnames" => varnames(terms, ctx),
        "inventory_hostnames" => inventory_hostnames(terms, ctx),
        "ini" => super::table_lookups::ini(terms, options, &|f| find_warned(ctx, "files", f)),
        "csvfile" => super::table_lookups::csvfile(terms, options, &|f| find_warned(ctx, "files", f)),
        "unvault" => texts()
            .iter()
            .map(|t| {
                let path = find_or_warn(ctx, "files", t)
                    .ok_or_else(|| format!("Unable to find file matching \"{t}\""))?;
                crate::vault::read_file(&path)
                    .map(Json::String)
                    .map_err(|e| format!("could not read {}: {e}", path.display()))
            })
            .collect(),
        other => Err(format!("lookup plugin ({other}) not found")),
    }
}

/// `config`: each setting named by the terms (with `show_origin`, as `[value, origin]`),
/// a base setting or, with `plugin_type` and `plugin_name`, a plugin's option; a missing
/// one is an error, a warning or nothing as `on_missing` says.
fn config(
    terms: &[Json],
    options: &serde_json::Map<String, Json>,
    ctx: &dyn LookupContext,
) -> Result<Vec<Json>, String> {
    use crate::config::named::{self, NamedError};
    let choice = |key: &str, valid: &[&str]| -> Result<Option<String>, String> {
        match options.get(key) {
            None | Some(Json::Null) => Ok(None),
            Some(v) if valid.is_empty() || valid.contains(&text(v).as_str()) => Ok(Some(text(v))),
            Some(v) => Err(format!(
                "Invalid value '{}' for config '{key}' for 'config' lookup plugin. Valid values are: {}",
                text(v),
                valid.join(", ")
            )),
        }
    };
    let on_missing = choice("on_missing", &["error", "warn", "skip"])?;
    let plugin_type = choice("plugin_type", named::PLUGIN_TYPES)?;
    let plugin_name = choice("plugin_name", &[])?;
    let plugin = match (&plugin_type, &plugin_name) {
        (Some(t), Some(n)) => Some((t.as_str(), n.as_str())),
        (None, None) => None,
        _ => {
            return Err(
                "Both plugin_type and plugin_name are required, cannot use one without the other"
                    .into(),
            );
        }
    };
    let show_origin = crate::plugins::action::truthy(options.get("show_origin"), false)
        .map_err(|e| format!("show_origin: {e}"))?;
    let mut out = Vec::new();
    for term in terms {
        let Json::String(name) = term else {
            return Err(format!(
                "Invalid setting identifier, {} is not a <class 'str'>, its a <class '{}'>",
                from_json(term),
                super::filters::python_type(&from_json(term))
            ));
        };
        match named::value(name, plugin, &|v| ctx.var(v)) {
            Ok((value, origin)) if show_origin => {
                out.push(Json::Array(vec![value, Json::String(origin)]))
            }
            Ok((value, _)) => out.push(value),
            Err(e @ (NamedError::Missing(_) | NamedError::MissingOption { .. })) => {
                match on_missing.as_deref() {
                    Some("skip") => {}
                    Some("warn") => tracing::warn!("Skipping {name}: {e}"),
                    _ => return Err(e.to_string()),
                }
            }
            Err(e) => return Err(e.to_string()),
        }
    }
    Ok(out)
}

/// `inventory_hostnames`: the hosts the terms (host patterns, evaluated together)
/// select in an inventory of the task's `groups`, as Ansible builds one for it: the
/// inventory's own pattern matching (names, groups, globs, `~regex`, unions, `&` and `!`,
/// subscripts), in inventory order.
fn inventory_hostnames(terms: &[Json], ctx: &dyn LookupContext) -> Result<Vec<Json>, String> {
    let groups = match ctx.var("groups") {
        Some(Json::Object(groups)) => groups,
        _ => serde_json::Map::new(),
    };
    let inventory = crate::inventory::Inventory::from_groups(&groups).map_err(|e| e.to_string())?;
    let patterns: Vec<String> = terms.iter().map(text).collect();
    let selected = inventory
        .select_list(&patterns)
        .map_err(|e| e.to_string())?;
    for w in &selected.warnings {
        tracing::warn!("{w}");
    }
    Ok(selected.hosts.into_iter().map(Json::String).collect())
}

/// `varnames`: for each term (a Python regular expression), the names of the variables
/// it finds, sorted (Ansible gives them in the order they were defined).
fn varnames(terms: &[Json], ctx: &dyn LookupContext) -> Result<Vec<Json>, String> {
    use sandball_guest_sdk::pyre::{Anchor, Pattern};
    let mut names = ctx.var_names();
    names.sort();
    let mut found: Vec<Json> = Vec::new();
    for term in terms {
        let Json::String(term) = term else {
            let value = from_json(term);
            return Err(format!(
                "Invalid setting identifier, \"{value}\" is not a string, it is a <class '{}'>",
                super::filters::python_type(&value)
            ));
        };
        let re = Pattern::new(term, false, false, Anchor::Search)
            .map_err(|e| format!("Unable to use \"{term}\" as a search parameter: {e}"))?;
        for name in &names {
            let hit = re.is_match(name).map_err(|e| e.to_string())?;
            if hit {
                found.push(Json::String(name.clone()));
            }
        }
    }
    Ok(found)
}

/// `with_nested`: every combination of one item from each list, in order.
fn nested(lists: &[Json]) -> Vec<Json> {
    let mut out: Vec<Vec<Json>> = vec![Vec::new()];
    for list in lists {
        let choices = as_terms(list.clone());
        out = out
            .into_iter()
            .flat_map(|prefix| {
                choices.iter().map(move |c| {
                    let mut next = prefix.clone();
                    next.push(c.clone());
                    next
                })
            })
            .collect();
    }
    out.into_iter().map(Json::Array).collect()
}

/// `with_together`: the lists side by side, the shorter ones padded with nulls.
fn together(lists: &[Json]) -> Vec<Json> {
    let lists: Vec<Vec<Json>> = lists.iter().map(|l| as_terms(l.clone())).collect();
    let longest = lists.iter().map(Vec::len).max().unwrap_or(0);
    (0..longest)
        .map(|i| {
            Json::Array(
                lists
                    .iter()
                    .map(|l| l.get(i).cloned().unwrap_or(Json::Null))
                    .collect(),
            )
        })
        .collect()
}

/// `with_subelements: [list, key, {skip_missing: …}]`: each element of each item's
/// `key` (a dotted path), beside the item without that key.
fn subelements(terms: &[Json]) -> Result<Vec<Json>, String> {
    if terms.len() > 3 {
        return Err("subelements lookup expects a list of two or three items,".into());
    }
    let (Some(list @ (Json::Array(_) | Json::Object(_))), Some(Json::String(path))) =
        (terms.first(), terms.get(1))
    else {
        return Err(
            "subelements lookup expects a list of two or three items, first a dict or a list, second a string pointing to the subkey"
                .into(),
        );
    };
    let skip_missing = match terms.get(2) {
        None => false,
        Some(Json::Object(flags)) if flags.keys().all(|k| k == "skip_missing") => flags
            .get("skip_missing")
            .is_some_and(sandball_wire::python::py_truth),
        Some(_) => {
            return Err("subelements lookup expects a list of two or three items, the optional third item must be a dict with flags skip_missing".into());
        }
    };
    let keys: Vec<&str> = path.split('.').collect();
    // A mapping stands for the list of its values (none when it says it was skipped).
    let items = match list {
        Json::Object(m) if m.get("skipped").is_some_and(|v| v != &Json::Bool(false)) => {
            return Ok(Vec::new());
        }
        Json::Object(m) => m.values().cloned().collect(),
        other => as_terms(other.clone()),
    };
    let mut out = Vec::new();
    for item in items {
        let Json::Object(parent) = &item else {
            let shown = match &item {
                Json::String(t) => t.clone(),
                Json::Bool(true) => "True".into(),
                Json::Bool(false) => "False".into(),
                Json::Null => "None".into(),
                other => other.to_string(),
            };
            return Err(format!(
                "subelements lookup expects a dictionary, got '{shown}'"
            ));
        };
        // An item a loop's `register` marked skipped is passed over.
        if parent.get("skipped") == Some(&Json::Bool(true)) {
            continue;
        }
        // Down the keys as Ansible walks them: each but the last must name a
        // mapping, the last a list, which the item is shown without.
        let quoted = |v: &Json| format!("'{}'", sandball_wire::python::py_str(v));
        let mut shown = parent.clone();
        let mut holder = Some(&mut shown);
        let mut children = Vec::new();
        for (depth, key) in keys.iter().enumerate() {
            let Some(level) = holder.take() else { break };
            let last = depth + 1 == keys.len();
            match level.get(*key) {
                None if skip_missing => {}
                None => {
                    return Err(format!(
                        "could not find '{key}' key in iterated item {}",
                        quoted(&Json::Object(level.clone()))
                    ));
                }
                Some(Json::Array(list)) if last => {
                    children = list.clone();
                    level.remove(*key);
                }
                Some(other) if last => {
                    return Err(format!(
                        "the key {key} should point to a list, got {}",
                        quoted(other)
                    ));
                }
                Some(Json::Object(_)) => {
                    holder = level.get_mut(*key).and_then(Json::as_object_mut);
                }
                Some(_) if skip_missing => {}
                Some(other) => {
                    return Err(format!(
                        "the key {key} should point to a dictionary, got {}",
                        quoted(other)
                    ));
                }
            }
        }
        for child in children {
            out.push(Json::Array(vec![Json::Object(shown.clone()), child]));
        }
    }
    Ok(out)
}

/// `with_sequence`: `start=1 end=5 stride=1 format=%d`, `count=N`, or the short forms
/// `[start-]end[/stride][:format]`; each item is the formatted text.
fn sequence(terms: &[Json], options: &serde_json::Map<String, Json>) -> Result<Vec<Json>, String> {
    // Keyword options apply to every term, beneath what the term itself says; with
    // options and no term there is one empty term to apply them to.
    let blank = [Json::String(String::new())];
    let terms = if terms.is_empty() && !options.is_empty() {
        &blank[..]
    } else {
        terms
    };
    let mut out = Vec::new();
    for term in terms {
        let text = match term {
            Json::String(s) => s.clone(),
            other => other.to_string(),
        };
        let mut fields = SequenceFields::default();
        for (k, v) in options {
            let v = match v {
                Json::String(s) => s.clone(),
                other => other.to_string(),
            };
            if !fields.set(k, &v)? {
                return Err(format!("unrecognized arguments to with_sequence: ['{k}']"));
            }
        }
        fields.parse(text.trim())?;
        out.extend(fields.generate()?);
    }
    Ok(out)
}

/// One sequence's settings, as `with_sequence` reads them.
struct SequenceFields {
    start: i64,
    end: Option<i64>,
    stride: i64,
    count: Option<i64>,
    format: String,
}

impl Default for SequenceFields {
    fn default() -> Self {
        SequenceFields {
            start: 1,
            end: None,
            stride: 1,
            count: None,
            format: "%d".into(),
        }
    }
}

impl SequenceFields {
    /// Sets one field from its text (numbers as Python reads integer literals:
    /// decimal, `0x`, `0o`, `0b`); false when there is no field of that name.
    fn set(&mut self, key: &str, value: &str) -> Result<bool, String> {
        let number = || {
            python_int(value.trim()).ok_or_else(|| {
                format!(
                    "Config '{key}' for 'sequence' lookup plugin from 'Direct' has an invalid value: Invalid value provided for 'integer': '{value}'"
                )
            })
        };
        match key {
            "start" => self.start = number()?,
            "end" => self.end = Some(number()?),
            "stride" => self.stride = number()?,
            "count" => self.count = Some(number()?),
            "format" => self.format = value.to_string(),
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Reads a term: the short form `[start-]end[/stride][:format]`, else
    /// `key=value` words.
    fn parse(&mut self, text: &str) -> Result<(), String> {
        if text.is_empty() {
            return Ok(());
        }
        // The short form, when the term is not `key=value` words; a bad number in it
        // is named by the field it is for (`A-4/2`: start).
        if !text.contains('=') {
            let (range, format) = match text.split_once(':') {
                Some((range, format)) => (range, Some(format)),
                None => (text, None),
            };
            let (range, stride) = match range.split_once('/') {
                Some((r, s)) => (r, Some(s)),
                None => (range, None),
            };
            match range.split_once('-') {
                Some((a, b)) => {
                    self.set("start", a)?;
                    self.set("end", b)?;
                }
                None => {
                    self.set("end", range)?;
                }
            }
            if let Some(s) = stride {
                self.set("stride", s)?;
            }
            if let Some(f) = format {
                self.set("format", f)?;
            }
            return Ok(());
        }
        let mut unknown = Vec::new();
        for part in text.split_whitespace() {
            let Some((k, v)) = part.split_once('=') else {
                return Err(format!(
                    "unknown error parsing with_sequence arguments: '{text}'. Error was: {part:?} is not key=value"
                ));
            };
            if !self.set(k, v)? {
                unknown.push(format!("'{k}'"));
            }
        }
        if !unknown.is_empty() {
            return Err(format!(
                "unrecognized arguments to with_sequence: [{}]",
                unknown.join(", ")
            ));
        }
        Ok(())
    }

    /// The sequence, or the error Ansible gives for these settings.
    fn generate(self) -> Result<Vec<Json>, String> {
        let end = match (self.end, self.count) {
            (None, None) => return Err("must specify count or end in with_sequence".into()),
            (Some(_), Some(_)) => {
                return Err("can't specify both count and end in with_sequence".into());
            }
            (Some(e), None) => e,
            (None, Some(0)) => return Ok(Vec::new()),
            // Ansible's own arithmetic, kept for the sequences it gives.
            (None, Some(c)) => self.start + c * self.stride - 1,
        };
        if self.stride > 0 && end < self.start {
            return Err("to count backwards make stride negative".into());
        }
        if self.stride < 0 && end > self.start {
            return Err("to count forward don't make stride negative".into());
        }
        if self.stride == 0 {
            return Ok(Vec::new());
        }
        if self.format.matches('%').count() != 1 {
            return Err(format!("bad formatting string: {}", self.format));
        }
        let mut out = Vec::new();
        let mut i = self.start;
        while (self.stride > 0 && i <= end) || (self.stride < 0 && i >= end) {
            let formatted = super::percent::printf(&self.format, &minijinja::Value::from(i))
                .map_err(|_| {
                    let mut format = String::new();
                    super::python::quote(&self.format, &mut format);
                    format!("problem formatting {format} with {i}")
                })?;
            out.push(Json::String(formatted));
            i += self.stride;
        }
        Ok(out)
    }
}

/// An integer as Python's `int(text, 0)` reads it (and plain decimals with leading
/// zeros, as Ansible's integer option does).
fn python_int(text: &str) -> Option<i64> {
    let (negative, body) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let lower = body.to_ascii_lowercase();
    let value = if let Some(d) = lower.strip_prefix("0x") {
        i64::from_str_radix(d, 16).ok()?
    } else if let Some(d) = lower.strip_prefix("0o") {
        i64::from_str_radix(d, 8).ok()?
    } else if let Some(d) = lower.strip_prefix("0b") {
        i64::from_str_radix(d, 2).ok()?
    } else {
        lower.parse::<i64>().ok()?
    };
    Some(if negative { -value } else { value })
}

/// A loop's value as a lookup's terms: a list's items, nothing for null, else itself.
pub fn as_terms(value: Json) -> Vec<Json> {
    match value {
        Json::Array(v) => v,
        Json::Null => vec![],
        other => vec![other],
    }
}

/// A term as text (strings as they are).
pub(super) fn text(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Lists among the terms give their elements (one level).
fn flatten_one(terms: &[Json]) -> Vec<Json> {
    terms
        .iter()
        .flat_map(|t| match t {
            Json::Array(items) => items.clone(),
            other => vec![other.clone()],
        })
        .collect()
}

/// One template of the `template` lookup, rendered with its options
/// (`variable_start_string` and the other delimiters, `trim_blocks`, `template_vars`).
fn template_lookup(
    ctx: &dyn LookupContext,
    path: &std::path::Path,
    source: &str,
    options: &serde_json::Map<String, Json>,
) -> Result<Json, String> {
    let mut file = crate::template::FileOptions {
        search: crate::playbook::search_path::template_dirs(&search_vars(ctx), path),
        ..Default::default()
    };
    let text_option = |key: &str, into: &mut String| -> Result<(), String> {
        match options.get(key) {
            None | Some(Json::Null) => Ok(()),
            Some(Json::String(s)) => {
                *into = s.clone();
                Ok(())
            }
            Some(other) => Err(format!("template: {key} must be a string, got {other}")),
        }
    };
    text_option("variable_start_string", &mut file.variable.0)?;
    text_option("variable_end_string", &mut file.variable.1)?;
    text_option("comment_start_string", &mut file.comment.0)?;
    text_option("comment_end_string", &mut file.comment.1)?;
    file.trim_blocks =
        crate::plugins::action::truthy(options.get("trim_blocks"), true).unwrap_or(true);
    // The template file's variables, then `template_vars` over them, as in Ansible.
    let managed = ctx.var("ansible_managed").is_some();
    let mut extra: serde_json::Map<String, Json> = crate::template::file_vars(path, None, managed)
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    match options.get("template_vars") {
        None | Some(Json::Null) => {}
        Some(Json::Object(m)) => extra.extend(m.clone()),
        Some(other) => {
            return Err(format!(
                "template: template_vars must be a mapping, got {other}"
            ));
        }
    }
    // `convert_data` and `jinja2_native` change nothing in ansible-core 2.19: the
    // result is text, and a template that renders nothing is `None`.
    ctx.render(source, &file, &extra)
        .map(|text| match text.is_empty() {
            true => Json::Null,
            false => Json::String(text),
        })
}

/// A file of `kind` along the task's search path.
fn find(ctx: &dyn LookupContext, kind: &str, name: &str) -> Result<std::path::PathBuf, String> {
    crate::playbook::search_path::find(&search_vars(ctx), kind, name)
}

/// [`find`], warning as ansible-core warns when the file is in none of the places
/// looked in.
fn find_or_warn(ctx: &dyn LookupContext, kind: &str, name: &str) -> Option<std::path::PathBuf> {
    find_warned(ctx, kind, name).ok()
}

/// [`find`] with [`find_or_warn`]'s warning (the table lookups' files).
fn find_warned(
    ctx: &dyn LookupContext,
    kind: &str,
    name: &str,
) -> Result<std::path::PathBuf, String> {
    let found = find(ctx, kind, name);
    if found.is_err() {
        crate::template::warn(format!(
            "Unable to find '{name}' in expected paths (use -vvvvv to see paths)"
        ));
    }
    found
}

/// The variables the search path reads.
fn search_vars(ctx: &dyn LookupContext) -> Vars {
    let mut vars = Vars::new();
    for name in ["role_path", "playbook_dir", "ansible_search_path"] {
        if let Some(v) = ctx.var(name) {
            vars.set_data(name, v);
        }
    }
    vars
}

/// `first_found`: the first file that exists among the terms (names, or mappings with
/// `files` and `paths`), `skip: true` giving nothing instead of an error.
fn first_found(
    terms: &[Json],
    options: &serde_json::Map<String, Json>,
    ctx: &dyn LookupContext,
) -> Result<Vec<Json>, String> {
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
                return Err(format!(
                    "Invalid term supplied. A string, dict or list is required, not '{}').",
                    sandball_wire::python::short_type_name(&other)
                ));
            }
        }
    }
    match candidates.into_iter().find(|p| p.exists()) {
        Some(p) => Ok(vec![Json::String(p.display().to_string())]),
        None if skip => Ok(Vec::new()),
        None => Err("No file was found when using first_found.".into()),
    }
}

/// `password`: the password kept in a file on the controller (made with `length`
/// characters of `chars` when the file does not exist yet; `/dev/null` keeps nothing).
/// With `encrypt` (a hash scheme) it is returned hashed, with a salt kept beside it in
/// the file (`PASSWORD salt=SALT`) so that the hash stays the same from run to run.
fn password(term: &str, ctx: &dyn LookupContext) -> Result<Json, String> {
    let mut words = term.split_whitespace();
    let path = words.next().unwrap_or("/dev/null").to_string();
    let mut length = 20usize;
    let mut chars = String::new();
    let mut encrypt = None;
    for w in words {
        match w.split_once('=') {
            Some(("length", n)) => {
                length = n
                    .parse()
                    .map_err(|_| format!("password: length must be a number, got {n}"))?;
            }
            Some(("chars", set)) => {
                for part in set.split(',') {
                    chars.push_str(match part {
                        "ascii_letters" => "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
                        "ascii_lowercase" => "abcdefghijklmnopqrstuvwxyz",
                        "ascii_uppercase" => "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
                        "digits" => "0123456789",
                        "hexdigits" => "0123456789abcdefABCDEF",
                        "punctuation" => "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~",
                        other => other,
                    });
                }
            }
            Some(("encrypt", scheme)) => encrypt = Some(scheme.to_string()),
            Some((other, _)) => return Err(format!("password: unknown option {other}")),
            None => return Err(format!("password: cannot read '{w}'")),
        }
    }
    if chars.is_empty() {
        chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,:-_".into();
    }
    let file = if path == "/dev/null" || std::path::Path::new(&path).is_absolute() {
        std::path::PathBuf::from(&path)
    } else {
        let base = ctx
            .var("playbook_dir")
            .map(|v| text(&v))
            .unwrap_or_else(|| ".".into());
        std::path::Path::new(&base).join(&path)
    };
    let kept = if path == "/dev/null" {
        None
    } else {
        std::fs::read_to_string(&file).ok()
    };
    let (plain, salt) = match &kept {
        Some(existing) => {
            let line = existing.lines().next().unwrap_or_default();
            match line.split_once(" salt=") {
                Some((pw, salt)) => (pw.to_string(), Some(salt.trim().to_string())),
                None => (line.to_string(), None),
            }
        }
        None => {
            use rand::seq::IndexedRandom;
            let pool: Vec<char> = chars.chars().collect();
            let mut rng = rand::rng();
            let made: String = (0..length)
                .filter_map(|_| pool.choose(&mut rng).copied())
                .collect();
            (made, None)
        }
    };
    let Some(scheme) = encrypt else {
        if kept.is_none() && path != "/dev/null" {
            keep_password(&file, &format!("{plain}\n"))?;
        }
        return Ok(Json::String(plain));
    };
    let salt = match salt {
        Some(s) => s,
        None => {
            let s = super::crypt::random_salt(8);
            if path != "/dev/null" {
                keep_password(&file, &format!("{plain} salt={s}\n"))?;
            }
            s
        }
    };
    super::crypt::hash(&plain, &scheme, Some(&salt), None)
        .map(Json::String)
        .map_err(|e| format!("password: {e}"))
}

/// Writes the `password` lookup's file (its directory made first).
fn keep_password(file: &std::path::Path, text: &str) -> Result<(), String> {
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("password: cannot make {}: {e}", dir.display()))?;
    }
    write_private(file, text).map_err(|e| format!("password: cannot write {}: {e}", file.display()))
}

/// Writes a secret file readable by its owner only, atomically.
fn write_private(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let dir = path.parent().unwrap_or(std::path::Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(".sandball-")
        .tempfile_in(dir)?;
    tmp.write_all(text.as_bytes())?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// The lookup context of a template call: variables from the template's state.
struct StateContext<'a, 'b> {
    state: &'a State<'a, 'b>,
}

impl StateContext<'_, '_> {
    /// The template's variables, by name.
    fn context(&self) -> Vec<(String, Value)> {
        self.state
            .known_variables()
            .into_iter()
            .filter_map(|name| self.state.lookup(&name).map(|v| (name.to_string(), v)))
            .collect()
    }
}

impl LookupContext for StateContext<'_, '_> {
    fn var_names(&self) -> Vec<String> {
        self.state
            .known_variables()
            .into_iter()
            .map(|n| n.to_string())
            .collect()
    }

    fn var(&self, name: &str) -> Option<Json> {
        self.state
            .lookup(name)
            .filter(|v| !v.is_undefined())
            .and_then(|v| to_json(&v).ok())
    }

    fn render(
        &self,
        text: &str,
        options: &crate::template::FileOptions,
        extra: &serde_json::Map<String, Json>,
    ) -> Result<String, String> {
        let original = text;
        let (text, options) = super::overrides::apply(text, options).map_err(|e| e.to_string())?;
        let mut context = self.context();
        context.extend(extra.iter().map(|(k, v)| (k.clone(), from_json(v))));
        let mut env = self.state.env().clone();
        super::templar::configure(&mut env, &options).map_err(|e| e.to_string())?;
        let text = super::percent::rewrite_template(text, env.syntax());
        let mut rendered = env
            .render_str(&text, Value::from_pairs(context))
            .map_err(|e| e.to_string())?;
        super::overrides::restore_newlines(original, &mut rendered);
        Ok(rendered)
    }
}

/// The global function that renders a string constant holding a template given to a
/// lookup (see `percent.rs`, which rewrites the calls).
pub(crate) const CONST_TEMPLATE: &str = "__sandball_lookup_term";

/// Renders a lookup's constant term `text` with the template's variables, with
/// ansible-core 2.19's warning.
fn const_template(state: &State, text: String) -> Result<Value, Error> {
    crate::template::warn_about(
        "Jinja constant strings should not contain embedded templates. This feature will be \
         disabled by default in ansible-core 2.23.\n\nUse inline expressions, for example: \
         `msg: \"{{ lookup('env', '{{ a_var }}') }}\"` becomes `msg: \"{{ lookup('env', a_var) }}\"`\n"
            .to_string(),
        Some(crate::template::About::Part(text.clone())),
    );
    // What is undefined in it makes the term undefined, which the lookup then gets; one
    // `{{ expression }}` gives its native value (a list keeps its undefined items).
    let context = Value::from_pairs(StateContext { state }.context());
    if let Some(inner) = super::scope::single_expression(&text)
        && let Ok(expr) = state.env().compile_expression(inner)
    {
        return match expr.eval(context) {
            Err(e) if e.kind() == ErrorKind::UndefinedError => Ok(Value::UNDEFINED),
            other => other,
        };
    }
    match state.env().render_str(&text, context) {
        Ok(rendered) => Ok(Value::from(rendered)),
        Err(e) if e.kind() == ErrorKind::UndefinedError => Ok(Value::UNDEFINED),
        Err(e) => Err(e),
    }
}

/// Registers `lookup`, `query` and `q`.
pub(crate) fn register(env: &mut Plugins<'_>) {
    env.taking_undefined()
        .add_function(CONST_TEMPLATE, const_template);
    env.taking_undefined().add_function("lookup", lookup);
    env.taking_undefined().add_function("query", query);
    env.taking_undefined().add_function("q", query);
}

/// The undefined term or option a lookup is given, which is its result, as ansible-core
/// 2.19 gives it (see `template/undefined.rs`); `env`'s `default` may be undefined (its
/// result when the variable is unset) and `first_found` takes undefined terms.
fn undefined_argument(name: &str, terms: &[Value], kwargs: &Kwargs) -> Option<Value> {
    match name {
        "first_found" => return None,
        "env" => return terms.iter().find(|t| t.is_undefined()).cloned(),
        // A Python plugin may accept undefined terms (see `python_marked`).
        _ if python_plugin(name) => return crate::template::undefined::undefined_in(&[], kwargs),
        _ => {}
    }
    crate::template::undefined::undefined_in(terms, kwargs)
}

/// What a lookup of a template gave.
enum Outcome {
    /// Its results (`None` when it failed and `errors` says to go on), and whether
    /// `wantlist` was given.
    Results(Option<Vec<Value>>, bool),
    /// An undefined value: the undefined term a Python plugin that does not accept them
    /// was given (see [`python_marked`]).
    Undefined(Value),
}

/// Runs a lookup of a template; `None` when it failed and `errors` says to go on (with
/// a warning for `warn`).
fn call(state: &State, name: &str, terms: &[Value], kwargs: &Kwargs) -> Result<Outcome, Error> {
    let wantlist: bool = kwargs.get::<Option<bool>>("wantlist")?.unwrap_or(false);
    let errors: String = kwargs
        .get::<Option<String>>("errors")?
        .unwrap_or_else(|| "strict".into());
    let mut options = serde_json::Map::new();
    for key in kwargs.args() {
        if key == "wantlist" || key == "errors" {
            continue;
        }
        let value: Value = kwargs.get(key)?;
        if value.is_undefined() && key == "default" {
            // As if not given (`default=undef()`).
            continue;
        }
        // Any other undefined option is an error naming what is undefined.
        ensure_defined(state, &value)?;
        options.insert(key.to_string(), to_json(&value)?);
    }
    let ran = if python_plugin(name) {
        let (terms, places) =
            crate::template::convert::to_json_marking_undefined(&Value::from(terms.to_vec()))?;
        let terms = match terms {
            Json::Array(terms) => terms,
            other => vec![other],
        };
        if places.is_empty() {
            run(name, &terms, &options, &StateContext { state })
                .map(|results| results.iter().map(from_json).collect())
        } else {
            match python_marked(state, name, &terms, &places, &options) {
                Ok(results) if results.is_undefined() => return Ok(Outcome::Undefined(results)),
                Ok(results) => Ok(match results.kind() {
                    minijinja::value::ValueKind::Seq => results.try_iter()?.collect(),
                    _ => vec![results],
                }),
                Err(e) => Err(e),
            }
        }
    } else {
        let terms: Vec<Json> = terms.iter().map(to_json).collect::<Result<_, _>>()?;
        run(name, &terms, &options, &StateContext { state })
            .map(|results| results.iter().map(from_json).collect())
    };
    match ran {
        Ok(results) => Ok(Outcome::Results(Some(results), wantlist)),
        Err(LookupError::NotFound(..)) => Err(Error::new(
            ErrorKind::InvalidOperation,
            format!("The lookup plugin '{name}' was not found."),
        )),
        Err(LookupError::Unloadable(e)) => Err(Error::new(ErrorKind::InvalidOperation, e)),
        Err(_) if errors == "ignore" => Ok(Outcome::Results(None, wantlist)),
        Err(e) if errors == "warn" => {
            crate::template::warn(format!(
                "An error occurred while running the lookup plugin '{name}': {e}"
            ));
            Ok(Outcome::Results(None, wantlist))
        }
        Err(LookupError::Undefined(e)) => Err(Error::new(ErrorKind::UndefinedError, e)),
        Err(LookupError::Failed(e)) => Err(Error::new(
            ErrorKind::InvalidOperation,
            format!("The lookup plugin '{name}' failed: {e}"),
        )),
    }
}

/// `lookup(name, terms…)`: one result as it is, several texts joined with `,`, none as
/// an empty list; a failure `errors` lets pass is `None` (an empty list with
/// `wantlist`), as in ansible-core 2.19.
fn lookup(state: &State, name: String, terms: Rest<Value>, kwargs: Kwargs) -> Result<Value, Error> {
    if let Some(undefined) = undefined_argument(&name, &terms, &kwargs) {
        return Ok(undefined);
    }
    // `lookup('env', 'X', default=undef())`: an unset variable gives the undefined value
    // itself (so `is defined` can test it), as in Ansible.
    if name == "env"
        && kwargs.has("default")
        && kwargs.get::<Value>("default")?.is_undefined()
        && terms
            .iter()
            .any(|t| t.as_str().is_some_and(|v| std::env::var_os(v).is_none()))
    {
        return Ok(Value::UNDEFINED);
    }
    let (results, wantlist) = match call(state, &name, &terms, &kwargs)? {
        Outcome::Results(results, wantlist) => (results, wantlist),
        Outcome::Undefined(undefined) => return Ok(undefined),
    };
    let Some(results) = results else {
        return Ok(if wantlist {
            Value::from(Vec::<Value>::new())
        } else {
            Value::from(())
        });
    };
    if wantlist {
        return Ok(Value::from(results));
    }
    Ok(match results.as_slice() {
        [one] => one.clone(),
        many if !many.is_empty() && many.iter().all(|v| v.as_str().is_some()) => Value::from(
            many.iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(","),
        ),
        _ => Value::from(results),
    })
}

/// `query(name, terms…)`: the results as a list (empty when `errors` let a failure
/// pass).
fn query(state: &State, name: String, terms: Rest<Value>, kwargs: Kwargs) -> Result<Value, Error> {
    if let Some(undefined) = undefined_argument(&name, &terms, &kwargs) {
        return Ok(undefined);
    }
    match call(state, &name, &terms, &kwargs)? {
        Outcome::Results(results, _) => Ok(Value::from(results.unwrap_or_default())),
        Outcome::Undefined(undefined) => Ok(undefined),
    }
}

/// A task's variables and templar as a lookup context (for `with_<lookup>` loops).
pub struct TaskLookup<'a> {
    /// The templating engine.
    pub templar: &'a crate::template::Templar,
    /// The task's variables.
    pub vars: &'a Vars,
    /// The task's action, when the lookup is its `with_<lookup>` loop.
    pub loop_action: Option<&'a str>,
}

impl LookupContext for TaskLookup<'_> {
    fn var_names(&self) -> Vec<String> {
        self.vars.names().map(str::to_string).collect()
    }

    fn loop_action(&self) -> Option<&str> {
        self.loop_action
    }

    fn var(&self, name: &str) -> Option<Json> {
        match self.vars.get(name)? {
            Var::Data(v) => Some(v.clone()),
            Var::Trusted(v) => self.templar.template(v, self.vars).ok(),
            Var::Hosts(_) => None,
        }
    }

    fn render(
        &self,
        text: &str,
        options: &crate::template::FileOptions,
        extra: &serde_json::Map<String, Json>,
    ) -> Result<String, String> {
        let mut vars = self.vars.clone();
        for (k, v) in extra {
            vars.set_data(k, v.clone());
        }
        self.templar
            .render_file(text, &vars, options)
            .map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn seq(terms: Json, options: Json) -> Result<Vec<Json>, String> {
        let terms = terms.as_array().cloned().unwrap_or_default();
        sequence(&terms, options.as_object().unwrap())
    }

    #[test]
    fn sequences_follow_ansibles_rules() {
        let ok = |terms: Json, options: Json, want: Json| {
            assert_eq!(json!(seq(terms.clone(), options).unwrap()), want, "{terms}");
        };
        ok(
            json!(["start=0x0f00 count=4 format=%04x"]),
            json!({}),
            json!(["0f00", "0f01", "0f02", "0f03"]),
        );
        ok(
            json!(["2-10/2"]),
            json!({}),
            json!(["2", "4", "6", "8", "10"]),
        );
        ok(
            json!(["4:host%02d"]),
            json!({}),
            json!(["host01", "host02", "host03", "host04"]),
        );
        ok(
            json!([]),
            json!({"count": 5, "start": 10}),
            json!(["10", "11", "12", "13", "14"]),
        );
        ok(
            json!(["count=5 start=0"]),
            json!({"stride": -1}),
            json!(["0", "-1", "-2", "-3", "-4", "-5", "-6"]),
        );
        ok(
            json!(["count=5 start=0", "count=5"]),
            json!({"start": 20}),
            json!(["0", "1", "2", "3", "4", "20", "21", "22", "23", "24"]),
        );
        ok(json!(["count=5 start=0"]), json!({"stride": 0}), json!([]));
        ok(json!([]), json!({}), json!([]));
        let err = |terms: Json| seq(terms, json!({})).unwrap_err();
        assert_eq!(
            err(json!(["start=4 end=1 stride=2"])),
            "to count backwards make stride negative"
        );
        assert_eq!(
            err(json!(["start=1 end=4 stride=-2"])),
            "to count forward don't make stride negative"
        );
        assert_eq!(
            err(json!(["start=1 end=4 format=d"])),
            "bad formatting string: d"
        );
        assert!(err(json!(["A-4/2"])).contains("Config 'start'"));
        assert_eq!(
            err(json!(["start=0 junk=3"])),
            "unrecognized arguments to with_sequence: ['junk']"
        );
    }
}
