//! The settings by Ansible's names, as `lookup('config', …)` reads them: the base
//! settings sandball honours (`DEFAULT_FORKS`, `ALLOW_BROKEN_CONDITIONALS`…) and the
//! options of the plugins sandball has (`remote_user` of the `ssh` connection,
//! `remote_tmp` of the `sh` shell…), each with its type, its variables and its
//! environment variables. A value comes from the first of a variable (the last one
//! named wins), the run's settings (the environment, then ansible.cfg: [`super::settings`]) and
//! sandball's default, typed as Ansible types it.

use serde_json::Value as Json;

/// How Ansible types a setting's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Text as it is.
    Str,
    /// Ansible's truthiness (`yes`, `on`, `1`…): anything else is false.
    Bool,
    /// A whole number.
    Int,
    /// A comma-separated list.
    List,
    /// A path (`~` expanded).
    Path,
    /// A `:`-separated list of paths.
    PathSpec,
}

/// One setting: its name, type, the variables that set it (for a task) and its
/// environment variables (which key its default in [`super::DEFAULTS`]).
struct Definition {
    name: &'static str,
    kind: Kind,
    vars: &'static [&'static str],
    env: &'static [&'static str],
}

const fn d(
    name: &'static str,
    kind: Kind,
    vars: &'static [&'static str],
    env: &'static [&'static str],
) -> Definition {
    Definition {
        name,
        kind,
        vars,
        env,
    }
}

use Kind::{Bool, Int, List, Path, PathSpec, Str};

/// The base settings sandball reads, by Ansible's names.
const BASE: &[Definition] = &[
    d(
        "ALLOW_BROKEN_CONDITIONALS",
        Bool,
        &[],
        &["ANSIBLE_ALLOW_BROKEN_CONDITIONALS"],
    ),
    d("ANSIBLE_FORCE_COLOR", Bool, &[], &["ANSIBLE_FORCE_COLOR"]),
    d(
        "ANSIBLE_NOCOLOR",
        Bool,
        &[],
        &["ANSIBLE_NOCOLOR", "NO_COLOR"],
    ),
    d("ANSIBLE_PIPELINING", Bool, &[], &["ANSIBLE_PIPELINING"]),
    d(
        "BECOME_PASSWORD_FILE",
        Path,
        &[],
        &["ANSIBLE_BECOME_PASSWORD_FILE"],
    ),
    d("CACHE_PLUGIN", Str, &[], &["ANSIBLE_CACHE_PLUGIN"]),
    d(
        "CACHE_PLUGIN_CONNECTION",
        Str,
        &[],
        &["ANSIBLE_CACHE_PLUGIN_CONNECTION"],
    ),
    d(
        "CACHE_PLUGIN_PREFIX",
        Str,
        &[],
        &["ANSIBLE_CACHE_PLUGIN_PREFIX"],
    ),
    d(
        "CACHE_PLUGIN_TIMEOUT",
        Int,
        &[],
        &["ANSIBLE_CACHE_PLUGIN_TIMEOUT"],
    ),
    d(
        "CALLBACKS_ENABLED",
        List,
        &[],
        &["ANSIBLE_CALLBACKS_ENABLED"],
    ),
    d(
        "COLLECTIONS_PATHS",
        PathSpec,
        &[],
        &["ANSIBLE_COLLECTIONS_PATH"],
    ),
    d("COLOR_CHANGED", Str, &[], &["ANSIBLE_COLOR_CHANGED"]),
    d("COLOR_DEPRECATE", Str, &[], &["ANSIBLE_COLOR_DEPRECATE"]),
    d("COLOR_DIFF_ADD", Str, &[], &["ANSIBLE_COLOR_DIFF_ADD"]),
    d("COLOR_DIFF_LINES", Str, &[], &["ANSIBLE_COLOR_DIFF_LINES"]),
    d(
        "COLOR_DIFF_REMOVE",
        Str,
        &[],
        &["ANSIBLE_COLOR_DIFF_REMOVE"],
    ),
    d("COLOR_ERROR", Str, &[], &["ANSIBLE_COLOR_ERROR"]),
    d("COLOR_OK", Str, &[], &["ANSIBLE_COLOR_OK"]),
    d("COLOR_SKIP", Str, &[], &["ANSIBLE_COLOR_SKIP"]),
    d(
        "COLOR_UNREACHABLE",
        Str,
        &[],
        &["ANSIBLE_COLOR_UNREACHABLE"],
    ),
    d("COLOR_VERBOSE", Str, &[], &["ANSIBLE_COLOR_VERBOSE"]),
    d("COLOR_WARN", Str, &[], &["ANSIBLE_COLOR_WARN"]),
    d(
        "CONNECTION_PASSWORD_FILE",
        Path,
        &[],
        &["ANSIBLE_CONNECTION_PASSWORD_FILE"],
    ),
    d("DEFAULT_BECOME", Bool, &[], &["ANSIBLE_BECOME"]),
    d(
        "DEFAULT_BECOME_ASK_PASS",
        Bool,
        &[],
        &["ANSIBLE_BECOME_ASK_PASS"],
    ),
    d(
        "DEFAULT_BECOME_METHOD",
        Str,
        &[],
        &["ANSIBLE_BECOME_METHOD"],
    ),
    d("DEFAULT_BECOME_USER", Str, &[], &["ANSIBLE_BECOME_USER"]),
    d(
        "DEFAULT_FORCE_HANDLERS",
        Bool,
        &[],
        &["ANSIBLE_FORCE_HANDLERS"],
    ),
    d("DEFAULT_FORKS", Int, &[], &["ANSIBLE_FORKS"]),
    d(
        "DEFAULT_HASH_BEHAVIOUR",
        Str,
        &[],
        &["ANSIBLE_HASH_BEHAVIOUR"],
    ),
    d("DEFAULT_GATHERING", Str, &[], &["ANSIBLE_GATHERING"]),
    d("DEFAULT_HOST_LIST", List, &[], &["ANSIBLE_INVENTORY"]),
    d(
        "DEFAULT_KEEP_REMOTE_FILES",
        Bool,
        &[],
        &["ANSIBLE_KEEP_REMOTE_FILES"],
    ),
    d("DEFAULT_MODULE_PATH", PathSpec, &[], &["ANSIBLE_LIBRARY"]),
    d(
        "DEFAULT_MODULE_UTILS_PATH",
        PathSpec,
        &[],
        &["ANSIBLE_MODULE_UTILS"],
    ),
    d(
        "DEFAULT_PRIVATE_KEY_FILE",
        Path,
        &[],
        &["ANSIBLE_PRIVATE_KEY_FILE"],
    ),
    d(
        "DEFAULT_PRIVATE_ROLE_VARS",
        Bool,
        &[],
        &["ANSIBLE_PRIVATE_ROLE_VARS"],
    ),
    d("DEFAULT_REMOTE_USER", Str, &[], &["ANSIBLE_REMOTE_USER"]),
    d("DEFAULT_ROLES_PATH", PathSpec, &[], &["ANSIBLE_ROLES_PATH"]),
    d(
        "DEFAULT_STDOUT_CALLBACK",
        Str,
        &[],
        &["ANSIBLE_STDOUT_CALLBACK"],
    ),
    d("DEFAULT_TIMEOUT", Int, &[], &["ANSIBLE_TIMEOUT"]),
    d("DEFAULT_TRANSPORT", Str, &[], &["ANSIBLE_TRANSPORT"]),
    d(
        "DEFAULT_VAULT_PASSWORD_FILE",
        Path,
        &[],
        &["ANSIBLE_VAULT_PASSWORD_FILE"],
    ),
    d(
        "DISPLAY_SKIPPED_HOSTS",
        Bool,
        &[],
        &["ANSIBLE_DISPLAY_SKIPPED_HOSTS"],
    ),
    d(
        "ERROR_ON_MISSING_HANDLER",
        Bool,
        &[],
        &["ANSIBLE_ERROR_ON_MISSING_HANDLER"],
    ),
    d(
        "FACTS_MODULES",
        List,
        &["ansible_facts_modules"],
        &["ANSIBLE_FACTS_MODULES"],
    ),
    d(
        "HOST_KEY_CHECKING",
        Bool,
        &[],
        &["ANSIBLE_HOST_KEY_CHECKING"],
    ),
    d(
        "INVENTORY_ANY_UNPARSED_IS_FAILED",
        Bool,
        &[],
        &["ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED"],
    ),
    d(
        "INVENTORY_ENABLED",
        List,
        &[],
        &["ANSIBLE_INVENTORY_ENABLED"],
    ),
    d(
        "INVENTORY_UNPARSED_IS_FAILED",
        Bool,
        &[],
        &["ANSIBLE_INVENTORY_UNPARSED_FAILED"],
    ),
    d(
        "RETRY_FILES_ENABLED",
        Bool,
        &[],
        &["ANSIBLE_RETRY_FILES_ENABLED"],
    ),
    d(
        "RETRY_FILES_SAVE_PATH",
        Path,
        &[],
        &["ANSIBLE_RETRY_FILES_SAVE_PATH"],
    ),
    d(
        "SHOW_CUSTOM_STATS",
        Bool,
        &[],
        &["ANSIBLE_SHOW_CUSTOM_STATS"],
    ),
];

/// The options of the `ssh` connection sandball honours.
const SSH: &[Definition] = &[
    d(
        "host_key_checking",
        Bool,
        &["ansible_host_key_checking", "ansible_ssh_host_key_checking"],
        &["ANSIBLE_HOST_KEY_CHECKING"],
    ),
    d("port", Int, &["ansible_port", "ansible_ssh_port"], &[]),
    d(
        "private_key_file",
        Str,
        &["ansible_private_key_file", "ansible_ssh_private_key_file"],
        &["ANSIBLE_PRIVATE_KEY_FILE"],
    ),
    d("reconnection_retries", Int, &["ansible_ssh_retries"], &[]),
    d(
        "remote_user",
        Str,
        &["ansible_user", "ansible_ssh_user"],
        &["ANSIBLE_REMOTE_USER"],
    ),
    d("ssh_common_args", Str, &["ansible_ssh_common_args"], &[]),
    d(
        "timeout",
        Int,
        &["ansible_ssh_timeout"],
        &["ANSIBLE_TIMEOUT"],
    ),
];

/// The options of the `local` connection sandball honours.
const LOCAL: &[Definition] = &[d(
    "pipelining",
    Bool,
    &["ansible_pipelining"],
    &["ANSIBLE_PIPELINING"],
)];

/// The options of the `sh` shell sandball honours.
const SH: &[Definition] = &[d(
    "remote_tmp",
    Str,
    &["ansible_remote_tmp"],
    &["ANSIBLE_REMOTE_TMP"],
)];

/// The options of the `default` stdout callback sandball honours.
const DEFAULT_CALLBACK: &[Definition] = &[
    d("display_ok_hosts", Bool, &[], &["ANSIBLE_DISPLAY_OK_HOSTS"]),
    d(
        "display_skipped_hosts",
        Bool,
        &[],
        &["ANSIBLE_DISPLAY_SKIPPED_HOSTS"],
    ),
    d(
        "result_format",
        Str,
        &[],
        &["ANSIBLE_CALLBACK_RESULT_FORMAT"],
    ),
    d(
        "show_custom_stats",
        Bool,
        &[],
        &["ANSIBLE_SHOW_CUSTOM_STATS"],
    ),
];

/// The plugin types Ansible has settings for.
pub const PLUGIN_TYPES: &[&str] = &[
    "become",
    "cache",
    "callback",
    "cliconf",
    "connection",
    "httpapi",
    "inventory",
    "lookup",
    "netconf",
    "shell",
    "vars",
];

/// The options of a plugin sandball has, by type and name (`None`: no such plugin).
fn plugin_options(plugin_type: &str, plugin_name: &str) -> Option<&'static [Definition]> {
    let name = plugin_name
        .strip_prefix("ansible.builtin.")
        .unwrap_or(plugin_name);
    match (plugin_type, name) {
        ("connection", "ssh") => Some(SSH),
        ("connection", "local") => Some(LOCAL),
        ("shell", "sh") => Some(SH),
        ("callback", "default") => Some(DEFAULT_CALLBACK),
        _ => None,
    }
}

/// Why a setting has no value.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum NamedError {
    /// No such setting (Ansible's words).
    #[error("No config definition exists for '{0}'")]
    Missing(String),
    /// No such option of the plugin.
    #[error("No config definition exists for '{name}' for '{plugin}' {kind} plugin")]
    MissingOption {
        /// The option asked for.
        name: String,
        /// The plugin.
        plugin: String,
        /// Its type.
        kind: String,
    },
    /// sandball has no such plugin (or does not know its settings).
    #[error("Unable to load {kind} plugin '{plugin}'")]
    NoPlugin {
        /// The plugin.
        plugin: String,
        /// Its type.
        kind: String,
    },
    /// A value that is not of the setting's type.
    #[error("Invalid type for configuration option {name} ({origin}): {value:?} is not a {kind}")]
    Type {
        /// The setting.
        name: String,
        /// Where the value comes from.
        origin: String,
        /// The value.
        value: String,
        /// The type wanted.
        kind: &'static str,
    },
}

/// A setting's value and where it comes from (`default`, `env: VAR`, `var: name`, or
/// the configuration file's path), for a task whose variables `var` gives.
///
/// `plugin` names the plugin whose option `name` is (type and name), `None` for a
/// base setting.
pub fn value(
    name: &str,
    plugin: Option<(&str, &str)>,
    var: &dyn Fn(&str) -> Option<Json>,
) -> Result<(Json, String), NamedError> {
    let table = match plugin {
        None => BASE,
        Some((kind, plugin)) => {
            plugin_options(kind, plugin).ok_or_else(|| NamedError::NoPlugin {
                plugin: plugin.to_string(),
                kind: kind.to_string(),
            })?
        }
    };
    let def = table
        .iter()
        .find(|def| def.name == name)
        .ok_or_else(|| match plugin {
            None => NamedError::Missing(name.to_string()),
            Some((kind, plugin)) => NamedError::MissingOption {
                name: name.to_string(),
                plugin: plugin.to_string(),
                kind: kind.to_string(),
            },
        })?;
    let (raw, origin) = if let Some((v, value)) = def
        .vars
        .iter()
        .filter_map(|v| var(v).map(|value| (v, value)))
        .next_back()
    {
        (value, format!("var: {v}"))
    } else if let Some((e, value)) = def
        .env
        .iter()
        .filter_map(|e| super::settings().get(e).map(|value| (e, value.to_string())))
        .next_back()
    {
        let origin = match super::settings().file_origin(e) {
            Some(path) => path.display().to_string(),
            None => format!("env: {e}"),
        };
        (Json::String(value), origin)
    } else {
        let default = def.env.iter().find_map(|e| super::default_of(e));
        (
            default.map_or(Json::Null, |d| Json::String(d.to_string())),
            "default".to_string(),
        )
    };
    let typed = typed(def.kind, raw).map_err(|(value, kind)| NamedError::Type {
        name: name.to_string(),
        origin: origin.clone(),
        value,
        kind,
    })?;
    Ok((typed, origin))
}

/// `raw` as a value of `kind` (nulls stay null), or the text and the type's name.
fn typed(kind: Kind, raw: Json) -> Result<Json, (String, &'static str)> {
    let Json::String(text) = raw else {
        return Ok(match (kind, raw) {
            (Bool, v @ Json::Null) => v,
            (Bool, v) => {
                Json::Bool(sandball_pycompat::boolean::truthy(Some(&v), false).unwrap_or(false))
            }
            (_, v) => v,
        });
    };
    let paths = |sep: char| {
        Json::Array(
            text.split(sep)
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(|p| Json::String(crate::local_files::expand_user(p).display().to_string()))
                .collect(),
        )
    };
    Ok(match kind {
        Str => Json::String(text),
        Bool => Json::Bool(
            sandball_pycompat::boolean::truthy(Some(&Json::String(text.clone())), false)
                .unwrap_or(false),
        ),
        Int => Json::from(
            text.trim()
                .parse::<i64>()
                .map_err(|_| (text.clone(), "integer"))?,
        ),
        List => Json::Array(
            text.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| Json::String(s.to_string()))
                .collect(),
        ),
        Path => Json::String(crate::local_files::expand_user(&text).display().to_string()),
        PathSpec => paths(':'),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_are_typed_as_ansible_types_them() {
        assert_eq!(typed(Bool, json!("yes")), Ok(json!(true)));
        assert_eq!(typed(Bool, json!("nope")), Ok(json!(false)));
        assert_eq!(typed(Bool, json!(1)), Ok(json!(true)));
        assert_eq!(typed(Int, json!(" 12")), Ok(json!(12)));
        assert_eq!(typed(Int, json!("x")), Err(("x".to_string(), "integer")));
        assert_eq!(typed(List, json!("a, b,")), Ok(json!(["a", "b"])));
        assert_eq!(typed(PathSpec, json!("/a:/b")), Ok(json!(["/a", "/b"])));
        assert_eq!(typed(Str, Json::Null), Ok(Json::Null));
    }

    #[test]
    fn variables_come_before_the_default_the_last_one_named_winning() {
        let vars = |name: &str| match name {
            "ansible_user" => Some(json!("a")),
            "ansible_ssh_user" => Some(json!("b")),
            _ => None,
        };
        assert_eq!(
            value("remote_user", Some(("connection", "ssh")), &vars),
            Ok((json!("b"), "var: ansible_ssh_user".to_string()))
        );
        assert_eq!(
            value("nope", Some(("shell", "sh")), &vars),
            Err(NamedError::MissingOption {
                name: "nope".into(),
                plugin: "sh".into(),
                kind: "shell".into()
            })
        );
        assert!(matches!(
            value("x", Some(("shell", "csh")), &vars),
            Err(NamedError::NoPlugin { .. })
        ));
        assert_eq!(
            value("NOPE", None, &vars),
            Err(NamedError::Missing("NOPE".into()))
        );
    }
}
