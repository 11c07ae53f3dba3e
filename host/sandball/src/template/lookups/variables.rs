//! The lookups that read variables and settings: `env` (the controller's environment),
//! `vars`, `varnames`, `config` (the settings by Ansible's names) and
//! `inventory_hostnames` (the task's `groups` through inventory patterns).

use serde_json::Value as Json;

use super::{LookupContext, LookupError, Options, text, texts};
use crate::template::convert::from_json;

/// `env`: each environment variable of the controller (`default`, else empty, when
/// it is unset).
pub(super) fn env(
    terms: &[Json],
    options: &Options,
    _ctx: &dyn LookupContext,
) -> Result<Vec<Json>, LookupError> {
    Ok(texts(terms)
        .iter()
        .map(|v| match crate::config::settings().get(v) {
            Some(value) => Json::String(value.to_string()),
            None => options
                .get("default")
                .cloned()
                .unwrap_or(Json::String(String::new())),
        })
        .collect())
}

/// `vars`: the variables named by the terms (`default` for a missing one).
pub(super) fn vars(
    terms: &[Json],
    options: &Options,
    ctx: &dyn LookupContext,
) -> Result<Vec<Json>, LookupError> {
    terms
        .iter()
        .map(|term| {
            let Json::String(v) = term else {
                return Err(LookupError::Failed(format!(
                    "Variable name must be 'str' not '{}'.",
                    crate::template::filters::python_type(&crate::template::convert::from_json(
                        term
                    ))
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

/// `varnames`: see [`varnames_values`].
pub(super) fn varnames(
    terms: &[Json],
    _options: &Options,
    ctx: &dyn LookupContext,
) -> Result<Vec<Json>, LookupError> {
    Ok(varnames_values(terms, ctx)?)
}

/// `varnames`: for each term (a Python regular expression), the names of the variables
/// it finds, sorted (Ansible gives them in the order they were defined).
fn varnames_values(terms: &[Json], ctx: &dyn LookupContext) -> Result<Vec<Json>, String> {
    use sandball_guest_sdk::pyre::{Anchor, Pattern};
    let mut names = ctx.var_names();
    names.sort();
    let mut found: Vec<Json> = Vec::new();
    for term in terms {
        let Json::String(term) = term else {
            let value = from_json(term);
            return Err(format!(
                "Invalid setting identifier, \"{value}\" is not a string, it is a <class '{}'>",
                crate::template::filters::python_type(&value)
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

/// `config`: see [`config_values`].
pub(super) fn config(
    terms: &[Json],
    options: &Options,
    ctx: &dyn LookupContext,
) -> Result<Vec<Json>, LookupError> {
    Ok(config_values(terms, options, ctx)?)
}

/// `config`: each setting named by the terms (with `show_origin`, as `[value, origin]`),
/// a base setting or, with `plugin_type` and `plugin_name`, a plugin's option; a missing
/// one is an error, a warning or nothing as `on_missing` says.
fn config_values(
    terms: &[Json],
    options: &Options,
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
    let show_origin = sandball_pycompat::boolean::truthy(options.get("show_origin"), false)
        .map_err(|e| format!("show_origin: {e}"))?;
    let mut out = Vec::new();
    for term in terms {
        let Json::String(name) = term else {
            return Err(format!(
                "Invalid setting identifier, {} is not a <class 'str'>, its a <class '{}'>",
                from_json(term),
                crate::template::filters::python_type(&from_json(term))
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

/// `inventory_hostnames`: see [`inventory_hostnames_values`].
pub(super) fn inventory_hostnames(
    terms: &[Json],
    _options: &Options,
    ctx: &dyn LookupContext,
) -> Result<Vec<Json>, LookupError> {
    Ok(inventory_hostnames_values(terms, ctx)?)
}

/// `inventory_hostnames`: the hosts the terms (host patterns, evaluated together)
/// select in an inventory of the task's `groups`, as Ansible builds one for it: the
/// inventory's own pattern matching (names, groups, globs, `~regex`, unions, `&` and `!`,
/// subscripts), in inventory order.
fn inventory_hostnames_values(
    terms: &[Json],
    ctx: &dyn LookupContext,
) -> Result<Vec<Json>, String> {
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
