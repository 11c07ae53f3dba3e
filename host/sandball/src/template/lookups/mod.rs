//! Lookup plugins, run on the controller as Ansible runs them: `lookup(name, terms…)`
//! (a list of texts comes back joined with `,` unless `wantlist=True`), `query()`/`q()`
//! (always a list), with `errors='strict'|'warn'|'ignore'` (see [`jinja`]), and the
//! `with_<name>` loops, which are the same lookups. Files are found along the task's
//! search path (the role's folder of the kind, the role, the playbook's folder, the
//! playbook: see [`crate::playbook::search_path`]). What a lookup reads is data: never
//! templated again (except by the `template` lookup, whose purpose that is).
//!
//! Built in, one row each of [`LOOKUPS`] (a function in a file of its family): `file`,
//! `fileglob`, `first_found`, `unvault` ([`files`]), `template` ([`template`]), `env`,
//! `vars`, `varnames`, `config` (the settings by Ansible's names, see
//! [`crate::config::named`]), `inventory_hostnames` ([`variables`]), `pipe`, `lines`
//! ([`pipe`]), `items`, `list`, `indexed_items`, `dict`, `nested`, `together`,
//! `subelements`, `random_choice` ([`lists`]), `sequence` ([`sequence`]), `password`
//! ([`password`]), `ini` and `csvfile` ([`tables`]). sandball refuses `url`
//! ([`REFUSED`]); any other name is a Python plugin's, run by ansible-core's loader
//! (see [`crate::plugins::loader`]).

mod files;
pub(crate) mod jinja;
mod lists;
mod password;
mod pipe;
mod sequence;
mod tables;
mod template;
mod variables;

use serde_json::Value as Json;

use crate::template::{Var, Vars};

/// A lookup's keyword options.
type Options = serde_json::Map<String, Json>;

/// A lookup: its results for `terms` and its options, in the task's context.
type Lookup = fn(&[Json], &Options, &dyn LookupContext) -> Result<Vec<Json>, LookupError>;

/// The lookups sandball has, by short name.
const LOOKUPS: &[(&str, Lookup)] = &[
    ("file", files::file),
    ("fileglob", files::fileglob),
    ("first_found", files::first_found),
    ("unvault", files::unvault),
    ("template", template::template),
    ("env", variables::env),
    ("vars", variables::vars),
    ("varnames", variables::varnames),
    ("config", variables::config),
    ("inventory_hostnames", variables::inventory_hostnames),
    ("pipe", pipe::pipe),
    ("lines", pipe::lines),
    ("items", lists::items),
    ("list", lists::list),
    ("indexed_items", lists::indexed_items),
    ("dict", lists::dict),
    ("nested", lists::nested),
    ("together", lists::together),
    ("subelements", lists::subelements),
    ("random_choice", lists::random_choice),
    ("sequence", sequence::sequence),
    ("password", password::password),
    ("ini", tables::ini),
    ("csvfile", tables::csvfile),
];

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
        extra: &Options,
    ) -> Result<String, String>;
    /// The names of the variables the task sees.
    fn var_names(&self) -> Vec<String>;
    /// The action of the task whose `with_<lookup>` loop this is; `None` for a
    /// `lookup()` in a template.
    fn loop_action(&self) -> Option<&str> {
        None
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
        extra: &Options,
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

/// Whether `name` (short or `ansible.builtin.*`) is a lookup sandball has.
pub fn known(name: &str) -> bool {
    LOOKUPS
        .iter()
        .any(|(known, _)| *known == sandball_pycompat::fqcn::ansible_short_name(name))
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
    let name = sandball_pycompat::fqcn::ansible_short_name(name);
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

impl From<String> for LookupError {
    /// A lookup's own failure.
    fn from(message: String) -> LookupError {
        LookupError::Failed(message)
    }
}

/// Runs lookup `name` on `terms` with its options; the results, always a list.
pub fn run(
    name: &str,
    terms: &[Json],
    options: &Options,
    ctx: &dyn LookupContext,
) -> Result<Vec<Json>, LookupError> {
    if python_plugin(name) {
        return python(name, terms, options, ctx);
    }
    let name = sandball_pycompat::fqcn::ansible_short_name(name);
    if let Some(why) = refused(name) {
        return Err(LookupError::Failed(why.to_string()));
    }
    match LOOKUPS.iter().find(|(known, _)| *known == name) {
        Some((_, lookup)) => lookup(terms, options, ctx),
        None => Err(LookupError::Failed(format!(
            "lookup plugin ({name}) not found"
        ))),
    }
}

/// Whether [`run`] runs lookup `name` as a Python plugin: a local plugin file's, or
/// one none of sandball's (nor refused).
fn python_plugin(name: &str) -> bool {
    local(name) || {
        let name = sandball_pycompat::fqcn::ansible_short_name(name);
        refused(name).is_none() && !known(name)
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
    options: &Options,
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

/// The variables a Python plugin sees: every one the context has, templated, as data
/// (`hostvars` and `vars` aside).
pub fn plain_variables(ctx: &dyn LookupContext) -> Options {
    ctx.var_names()
        .into_iter()
        .filter(|n| n != "hostvars" && n != "vars")
        .filter_map(|n| ctx.var(&n).map(|v| (n, v)))
        .collect()
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
fn text(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The terms as texts.
fn texts(terms: &[Json]) -> Vec<String> {
    terms.iter().map(text).collect()
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
