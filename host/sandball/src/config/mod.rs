//! Configuration as Ansible reads it: the first of `ANSIBLE_CONFIG`, `./ansible.cfg`
//! (not in a world-writable directory, with Ansible's warning), `~/.ansible.cfg` and
//! `/etc/ansible/ansible.cfg`; an INI file whose settings sandball has a use for give
//! the values of the `ANSIBLE_*` variables Ansible names them by, beneath the
//! environment's (the run's [`Settings`], read once) — so the precedence is Ansible's:
//! command line, environment, file, default. Paths in the file are relative to it.
//! Settings sandball does not use are listed at `-v`, never an error.

use std::path::{Path, PathBuf};

pub mod named;
mod settings;

pub use settings::{Settings, list, settings};

/// A setting of `ansible.cfg`: its section, its key, the variable it becomes, and
/// whether it holds paths (relative to the file).
struct Setting {
    section: &'static str,
    key: &'static str,
    variable: &'static str,
    paths: bool,
}

const fn s(
    section: &'static str,
    key: &'static str,
    variable: &'static str,
    paths: bool,
) -> Setting {
    Setting {
        section,
        key,
        variable,
        paths,
    }
}

/// The variable of sandball's own setting `[sandball] ansible_core_version`: the
/// ansible-core release a run follows (`crate::compat`).
pub const ANSIBLE_CORE_VERSION: &str = "SANDBALL_ANSIBLE_CORE_VERSION";

/// The settings sandball reads.
const SETTINGS: &[Setting] = &[
    s("defaults", "inventory", "ANSIBLE_INVENTORY", true),
    s("defaults", "playbook_dir", "ANSIBLE_PLAYBOOK_DIR", true),
    s(
        "sandball",
        "ansible_core_version",
        ANSIBLE_CORE_VERSION,
        false,
    ),
    s("defaults", "forks", "ANSIBLE_FORKS", false),
    s(
        "defaults",
        "duplicate_dict_key",
        "ANSIBLE_DUPLICATE_YAML_DICT_KEY",
        false,
    ),
    s("defaults", "remote_user", "ANSIBLE_REMOTE_USER", false),
    s(
        "defaults",
        "private_key_file",
        "ANSIBLE_PRIVATE_KEY_FILE",
        true,
    ),
    s("defaults", "roles_path", "ANSIBLE_ROLES_PATH", true),
    s("defaults", "library", "ANSIBLE_LIBRARY", true),
    s("defaults", "module_utils", "ANSIBLE_MODULE_UTILS", true),
    s("defaults", "action_plugins", "ANSIBLE_ACTION_PLUGINS", true),
    s(
        "defaults",
        "localhost_warning",
        "ANSIBLE_LOCALHOST_WARNING",
        false,
    ),
    s(
        "defaults",
        "deprecation_warnings",
        "ANSIBLE_DEPRECATION_WARNINGS",
        false,
    ),
    s("defaults", "no_log", "ANSIBLE_NO_LOG", false),
    s(
        "defaults",
        "inject_invocation",
        "ANSIBLE_INJECT_INVOCATION",
        false,
    ),
    s(
        "defaults",
        "validate_action_group_metadata",
        "ANSIBLE_VALIDATE_ACTION_GROUP_METADATA",
        false,
    ),
    s(
        "defaults",
        "module_strict_utf8_response",
        "ANSIBLE_MODULE_STRICT_UTF8_RESPONSE",
        false,
    ),
    s("defaults", "filter_plugins", "ANSIBLE_FILTER_PLUGINS", true),
    s("defaults", "test_plugins", "ANSIBLE_TEST_PLUGINS", true),
    s("defaults", "lookup_plugins", "ANSIBLE_LOOKUP_PLUGINS", true),
    s(
        "defaults",
        "collections_path",
        "ANSIBLE_COLLECTIONS_PATH",
        true,
    ),
    s(
        "defaults",
        "collections_paths",
        "ANSIBLE_COLLECTIONS_PATH",
        true,
    ),
    s(
        "defaults",
        "host_key_checking",
        "ANSIBLE_HOST_KEY_CHECKING",
        false,
    ),
    s("defaults", "gathering", "ANSIBLE_GATHERING", false),
    s(
        "defaults",
        "force_handlers",
        "ANSIBLE_FORCE_HANDLERS",
        false,
    ),
    s(
        "defaults",
        "private_role_vars",
        "ANSIBLE_PRIVATE_ROLE_VARS",
        false,
    ),
    s("defaults", "facts_modules", "ANSIBLE_FACTS_MODULES", false),
    s("defaults", "fact_caching", "ANSIBLE_CACHE_PLUGIN", false),
    s(
        "defaults",
        "fact_caching_connection",
        "ANSIBLE_CACHE_PLUGIN_CONNECTION",
        true,
    ),
    s(
        "defaults",
        "fact_caching_prefix",
        "ANSIBLE_CACHE_PLUGIN_PREFIX",
        false,
    ),
    s(
        "defaults",
        "fact_caching_timeout",
        "ANSIBLE_CACHE_PLUGIN_TIMEOUT",
        false,
    ),
    s(
        "defaults",
        "hash_behaviour",
        "ANSIBLE_HASH_BEHAVIOUR",
        false,
    ),
    s(
        "defaults",
        "allow_broken_conditionals",
        "ANSIBLE_ALLOW_BROKEN_CONDITIONALS",
        false,
    ),
    s(
        "defaults",
        "stdout_callback",
        "ANSIBLE_STDOUT_CALLBACK",
        false,
    ),
    s(
        "defaults",
        "bin_ansible_callbacks",
        "ANSIBLE_LOAD_CALLBACK_PLUGINS",
        false,
    ),
    s("defaults", "remote_tmp", "ANSIBLE_REMOTE_TMP", false),
    s(
        "defaults",
        "keep_remote_files",
        "ANSIBLE_KEEP_REMOTE_FILES",
        false,
    ),
    s("defaults", "transport", "ANSIBLE_TRANSPORT", false),
    s("defaults", "timeout", "ANSIBLE_TIMEOUT", false),
    s(
        "defaults",
        "show_custom_stats",
        "ANSIBLE_SHOW_CUSTOM_STATS",
        false,
    ),
    s(
        "defaults",
        "callbacks_enabled",
        "ANSIBLE_CALLBACKS_ENABLED",
        false,
    ),
    s(
        "defaults",
        "callback_whitelist",
        "ANSIBLE_CALLBACK_WHITELIST",
        false,
    ),
    s(
        "defaults",
        "display_ok_hosts",
        "ANSIBLE_DISPLAY_OK_HOSTS",
        false,
    ),
    s(
        "defaults",
        "display_skipped_hosts",
        "ANSIBLE_DISPLAY_SKIPPED_HOSTS",
        false,
    ),
    s(
        "defaults",
        "display_failed_stderr",
        "ANSIBLE_DISPLAY_FAILED_STDERR",
        false,
    ),
    s(
        "defaults",
        "show_task_path_on_failure",
        "ANSIBLE_SHOW_TASK_PATH_ON_FAILURE",
        false,
    ),
    s(
        "defaults",
        "callback_result_format",
        "ANSIBLE_CALLBACK_RESULT_FORMAT",
        false,
    ),
    s("defaults", "nocolor", "ANSIBLE_NOCOLOR", false),
    s(
        "defaults",
        "error_on_missing_handler",
        "ANSIBLE_ERROR_ON_MISSING_HANDLER",
        false,
    ),
    s("defaults", "force_color", "ANSIBLE_FORCE_COLOR", false),
    s(
        "defaults",
        "become_password_file",
        "ANSIBLE_BECOME_PASSWORD_FILE",
        true,
    ),
    s(
        "defaults",
        "connection_password_file",
        "ANSIBLE_CONNECTION_PASSWORD_FILE",
        true,
    ),
    s(
        "defaults",
        "vault_password_file",
        "ANSIBLE_VAULT_PASSWORD_FILE",
        true,
    ),
    s(
        "defaults",
        "retry_files_enabled",
        "ANSIBLE_RETRY_FILES_ENABLED",
        false,
    ),
    s(
        "defaults",
        "retry_files_save_path",
        "ANSIBLE_RETRY_FILES_SAVE_PATH",
        true,
    ),
    s("callback_junit", "output_dir", "JUNIT_OUTPUT_DIR", true),
    s(
        "callback_junit",
        "fail_on_change",
        "JUNIT_FAIL_ON_CHANGE",
        false,
    ),
    s(
        "callback_junit",
        "hide_task_arguments",
        "JUNIT_HIDE_TASK_ARGUMENTS",
        false,
    ),
    s(
        "callback_junit",
        "fail_on_ignore",
        "JUNIT_FAIL_ON_IGNORE",
        false,
    ),
    s(
        "callback_junit",
        "include_setup_tasks_in_report",
        "JUNIT_INCLUDE_SETUP_TASKS_IN_REPORT",
        false,
    ),
    s(
        "callback_profile_tasks",
        "task_output_limit",
        "PROFILE_TASKS_TASK_OUTPUT_LIMIT",
        false,
    ),
    s(
        "callback_profile_tasks",
        "sort_order",
        "PROFILE_TASKS_SORT_ORDER",
        false,
    ),
    s(
        "callback_tree",
        "directory",
        "ANSIBLE_CALLBACK_TREE_DIR",
        true,
    ),
    s("colors", "ok", "ANSIBLE_COLOR_OK", false),
    s("colors", "changed", "ANSIBLE_COLOR_CHANGED", false),
    s("colors", "skip", "ANSIBLE_COLOR_SKIP", false),
    s("colors", "unreachable", "ANSIBLE_COLOR_UNREACHABLE", false),
    s("colors", "error", "ANSIBLE_COLOR_ERROR", false),
    s("colors", "warn", "ANSIBLE_COLOR_WARN", false),
    s("colors", "deprecate", "ANSIBLE_COLOR_DEPRECATE", false),
    s("colors", "verbose", "ANSIBLE_COLOR_VERBOSE", false),
    s("colors", "diff_add", "ANSIBLE_COLOR_DIFF_ADD", false),
    s("colors", "diff_remove", "ANSIBLE_COLOR_DIFF_REMOVE", false),
    s("colors", "diff_lines", "ANSIBLE_COLOR_DIFF_LINES", false),
    s("privilege_escalation", "become", "ANSIBLE_BECOME", false),
    s(
        "privilege_escalation",
        "become_user",
        "ANSIBLE_BECOME_USER",
        false,
    ),
    s(
        "privilege_escalation",
        "become_method",
        "ANSIBLE_BECOME_METHOD",
        false,
    ),
    s(
        "privilege_escalation",
        "become_ask_pass",
        "ANSIBLE_BECOME_ASK_PASS",
        false,
    ),
    s("ssh_connection", "pipelining", "ANSIBLE_PIPELINING", false),
    s(
        "defaults",
        "interpreter_python",
        "ANSIBLE_PYTHON_INTERPRETER",
        false,
    ),
    s(
        "inventory",
        "enable_plugins",
        "ANSIBLE_INVENTORY_ENABLED",
        false,
    ),
    s(
        "inventory",
        "unparsed_is_failed",
        "ANSIBLE_INVENTORY_UNPARSED_FAILED",
        false,
    ),
    s(
        "inventory",
        "any_unparsed_is_failed",
        "ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED",
        false,
    ),
    s(
        "inventory_plugin_script",
        "always_show_stderr",
        "ANSIBLE_INVENTORY_PLUGIN_SCRIPT_STDERR",
        false,
    ),
    s(
        "inventory_plugins",
        "use_extra_vars",
        "ANSIBLE_INVENTORY_USE_EXTRA_VARS",
        false,
    ),
    s("inventory", "cache", "ANSIBLE_INVENTORY_CACHE", false),
    s(
        "inventory",
        "cache_connection",
        "ANSIBLE_INVENTORY_CACHE_CONNECTION",
        true,
    ),
    s(
        "inventory",
        "cache_timeout",
        "ANSIBLE_INVENTORY_CACHE_TIMEOUT",
        false,
    ),
];

/// sandball's defaults of the settings that have one (Ansible's, except `forks`: 50).
const DEFAULTS: &[(&str, &str)] = &[
    ("ANSIBLE_FORKS", "50"),
    ("ANSIBLE_HOST_KEY_CHECKING", "True"),
    ("ANSIBLE_GATHERING", "implicit"),
    ("ANSIBLE_FORCE_HANDLERS", "False"),
    ("ANSIBLE_PRIVATE_ROLE_VARS", "False"),
    ("ANSIBLE_FACTS_MODULES", "smart"),
    ("ANSIBLE_ALLOW_BROKEN_CONDITIONALS", "False"),
    ("ANSIBLE_HASH_BEHAVIOUR", "replace"),
    ("ANSIBLE_CACHE_PLUGIN", "memory"),
    ("ANSIBLE_CACHE_PLUGIN_PREFIX", "ansible_facts"),
    ("ANSIBLE_CACHE_PLUGIN_TIMEOUT", "86400"),
    ("ANSIBLE_STDOUT_CALLBACK", "default"),
    ("ANSIBLE_LOAD_CALLBACK_PLUGINS", "False"),
    ("ANSIBLE_KEEP_REMOTE_FILES", "False"),
    ("ANSIBLE_TRANSPORT", "ssh"),
    ("ANSIBLE_TIMEOUT", "10"),
    ("ANSIBLE_SHOW_CUSTOM_STATS", "False"),
    ("ANSIBLE_DISPLAY_OK_HOSTS", "True"),
    ("ANSIBLE_DISPLAY_SKIPPED_HOSTS", "True"),
    ("ANSIBLE_CALLBACK_RESULT_FORMAT", "json"),
    ("ANSIBLE_NOCOLOR", "False"),
    ("ANSIBLE_ERROR_ON_MISSING_HANDLER", "True"),
    ("ANSIBLE_FORCE_COLOR", "False"),
    ("ANSIBLE_RETRY_FILES_ENABLED", "False"),
    ("JUNIT_OUTPUT_DIR", "~/.ansible.log"),
    ("JUNIT_FAIL_ON_CHANGE", "False"),
    ("JUNIT_FAIL_ON_IGNORE", "False"),
    ("JUNIT_HIDE_TASK_ARGUMENTS", "False"),
    ("JUNIT_INCLUDE_SETUP_TASKS_IN_REPORT", "True"),
    ("PROFILE_TASKS_TASK_OUTPUT_LIMIT", "20"),
    ("PROFILE_TASKS_SORT_ORDER", "descending"),
    ("ANSIBLE_COLOR_OK", "green"),
    ("ANSIBLE_COLOR_CHANGED", "yellow"),
    ("ANSIBLE_COLOR_SKIP", "cyan"),
    ("ANSIBLE_COLOR_UNREACHABLE", "bright red"),
    ("ANSIBLE_COLOR_ERROR", "red"),
    ("ANSIBLE_COLOR_WARN", "bright purple"),
    ("ANSIBLE_COLOR_DEPRECATE", "purple"),
    ("ANSIBLE_COLOR_VERBOSE", "blue"),
    ("ANSIBLE_COLOR_DIFF_ADD", "green"),
    ("ANSIBLE_COLOR_DIFF_REMOVE", "red"),
    ("ANSIBLE_COLOR_DIFF_LINES", "cyan"),
    ("ANSIBLE_BECOME", "False"),
    ("ANSIBLE_BECOME_USER", "root"),
    ("ANSIBLE_BECOME_METHOD", "sudo"),
    ("ANSIBLE_BECOME_ASK_PASS", "False"),
    ("ANSIBLE_PIPELINING", "False"),
    (
        "ANSIBLE_INVENTORY_ENABLED",
        "host_list, script, auto, yaml, ini, toml",
    ),
    ("ANSIBLE_INVENTORY_UNPARSED_FAILED", "False"),
    ("ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED", "False"),
    ("ANSIBLE_INVENTORY_PLUGIN_SCRIPT_STDERR", "True"),
    ("ANSIBLE_INVENTORY_USE_EXTRA_VARS", "False"),
    ("ANSIBLE_INVENTORY_CACHE", "False"),
    ("ANSIBLE_INVENTORY_CACHE_TIMEOUT", "3600"),
    ("ANSIBLE_REMOTE_TMP", "~/.ansible/tmp"),
    ("ANSIBLE_CALLBACKS_ENABLED", ""),
    (
        "ANSIBLE_ROLES_PATH",
        "~/.ansible/roles:/usr/share/ansible/roles:/etc/ansible/roles",
    ),
    (
        "ANSIBLE_COLLECTIONS_PATH",
        "~/.ansible/collections:/usr/share/ansible/collections",
    ),
];

/// sandball's default of a setting, by its variable.
fn default_of(variable: &str) -> Option<&'static str> {
    DEFAULTS
        .iter()
        .find(|(v, _)| *v == variable)
        .map(|(_, d)| *d)
}

/// One setting as `sandball config dump` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown {
    /// `[section] key` in ansible.cfg.
    pub ini: String,
    /// Its environment variable.
    pub variable: &'static str,
    /// Its value, when it has one.
    pub value: Option<String>,
    /// Where the value comes from: `default`, `env: VAR`, or the file's path.
    pub origin: String,
    /// sandball's default, when there is one.
    pub default: Option<&'static str>,
}

/// Every setting sandball reads (once per variable), its value and where it comes
/// from, after [`load`].
pub fn shown() -> Vec<Shown> {
    let settings = settings();
    let mut out: Vec<Shown> = Vec::new();
    for setting in SETTINGS {
        if out.iter().any(|s| s.variable == setting.variable) {
            continue;
        }
        let default = default_of(setting.variable);
        let (value, origin) = match settings.get(setting.variable) {
            Some(v) => match settings.file_origin(setting.variable) {
                Some(path) => (Some(v.to_string()), path.display().to_string()),
                None => (Some(v.to_string()), format!("env: {}", setting.variable)),
            },
            None => (default.map(str::to_string), "default".to_string()),
        };
        out.push(Shown {
            ini: format!("[{}] {}", setting.section, setting.key),
            variable: setting.variable,
            value,
            origin,
            default,
        });
    }
    out.sort_by(|a, b| a.variable.cmp(b.variable));
    out
}

/// Why `ansible.cfg` could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read the configuration file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A setting has a value it cannot have.
    #[error("Invalid value '{value}' for config '{name}'. Valid values are: {}", valid.join(", "))]
    Choice {
        /// The setting, by Ansible's name.
        name: &'static str,
        /// The value given.
        value: String,
        /// The values it may have.
        valid: &'static [&'static str],
    },
    /// A line is not INI.
    #[error("the configuration file {path}:{line} is not valid: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The line (from 1).
        line: usize,
        /// What is wrong.
        message: String,
    },
}

/// What was read.
#[derive(Debug, Default)]
pub struct Loaded {
    /// The file, when there is one.
    pub path: Option<PathBuf>,
    /// Settings in the file sandball does not use (`[section] key`).
    pub unused: Vec<String>,
    /// Warnings to show.
    pub warnings: Vec<String>,
}

/// `ANSIBLE_HOME` (`~/.ansible` unless set), `~` expanded: where Ansible's default
/// roles, collections and plugin paths are.
pub fn ansible_home() -> PathBuf {
    let home = settings().get("ANSIBLE_HOME").unwrap_or("~/.ansible");
    crate::local_files::expand_user(home)
}

/// The configuration file Ansible would read, and a warning when `./ansible.cfg` is
/// passed over because the directory is world-writable.
pub fn find() -> (Option<PathBuf>, Vec<String>) {
    let mut warnings = Vec::new();
    if let Some(path) = std::env::var_os("ANSIBLE_CONFIG").map(PathBuf::from) {
        let path = if path.is_dir() {
            path.join("ansible.cfg")
        } else {
            path
        };
        if path.is_file() {
            return (Some(path), warnings);
        }
    }
    if let Ok(cwd) = std::env::current_dir() {
        let here = cwd.join("ansible.cfg");
        if here.is_file() {
            use std::os::unix::fs::PermissionsExt;
            let open = std::fs::metadata(&cwd).is_ok_and(|m| m.permissions().mode() & 0o002 != 0);
            if open {
                warnings.push(format!(
                    "Ansible is being run in a world writable directory ({}), ignoring it as an ansible.cfg source.",
                    cwd.display()
                ));
            } else {
                return (Some(here), warnings);
            }
        }
    }
    let home = std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".ansible.cfg"));
    let etc = Some(PathBuf::from("/etc/ansible/ansible.cfg"));
    (home.into_iter().chain(etc).find(|p| p.is_file()), warnings)
}

/// The `(section, key, value, line)` entries of an INI text, keys lowercased.
fn parse(path: &Path, text: &str) -> Result<Vec<(String, String, String, usize)>, ConfigError> {
    let mut section = String::new();
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[') {
            let Some(name) = name.strip_suffix(']') else {
                return Err(ConfigError::Invalid {
                    path: path.to_path_buf(),
                    line: i + 1,
                    message: format!("a section header must end with ']': {line}"),
                });
            };
            section = name.trim().to_ascii_lowercase();
            continue;
        }
        let Some((key, value)) = line.split_once(['=', ':']) else {
            return Err(ConfigError::Invalid {
                path: path.to_path_buf(),
                line: i + 1,
                message: format!("expected `key = value`, got: {line}"),
            });
        };
        // An inline comment after a value (` ;` or ` #`) is not part of it.
        let value = value
            .split(" ;")
            .next()
            .unwrap_or_default()
            .split(" #")
            .next()
            .unwrap_or_default();
        out.push((
            section.clone(),
            key.trim().to_ascii_lowercase(),
            value.trim().to_string(),
            i + 1,
        ));
    }
    Ok(out)
}

/// Reads the configuration file (if any) and makes the run's [`Settings`] of it and the
/// environment (see [`settings`]).
///
/// Call it first thing in `main`, before anything reads a setting.
pub fn load() -> Result<Loaded, ConfigError> {
    let (path, warnings) = find();
    let mut loaded = Loaded {
        path: path.clone(),
        unused: Vec::new(),
        warnings,
    };
    let mut values: Vec<(&'static str, String)> = Vec::new();
    if let Some(path) = &path {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.clone(),
            source,
        })?;
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        for (section, key, value, _) in parse(path, &text)? {
            let Some(setting) = SETTINGS
                .iter()
                .find(|s| s.section == section && s.key == key)
            else {
                loaded.unused.push(format!("[{section}] {key}"));
                continue;
            };
            // The file's first value stands (`Settings::new` puts the environment's
            // above it).
            if values.iter().any(|(v, _)| *v == setting.variable) {
                continue;
            }
            let value = if setting.paths {
                relative_to(&dir, &value)
            } else {
                value
            };
            values.push((setting.variable, value));
        }
    }
    let installed = settings::install(Settings::new(std::env::vars_os(), path, values));
    debug_assert!(installed, "a setting was read before ansible.cfg");
    check_choices()?;
    Ok(loaded)
}

/// Settings that take one of a few values: any other is refused before anything runs,
/// as Ansible refuses it.
fn check_choices() -> Result<(), ConfigError> {
    const CHOICES: &[(&str, &str, &[&str])] = &[(
        "ANSIBLE_HASH_BEHAVIOUR",
        "DEFAULT_HASH_BEHAVIOUR",
        &["replace", "merge"],
    )];
    for (variable, name, valid) in CHOICES {
        if let Some(value) = settings().get(variable)
            && !valid.contains(&value)
        {
            return Err(ConfigError::Choice {
                name,
                value: value.to_string(),
                valid,
            });
        }
    }
    Ok(())
}

/// A list of paths (`:` or `,` separated) with the relative ones made relative to `dir`.
fn relative_to(dir: &Path, value: &str) -> String {
    let sep = if value.contains(',') && !value.contains(':') {
        ","
    } else {
        ":"
    };
    value
        .split(sep)
        .map(|p| {
            let p = p.trim();
            if p.is_empty()
                || p.starts_with('/')
                || p.starts_with('~')
                || p.contains(',') && sep == ":"
            {
                p.to_string()
            } else {
                dir.join(p).display().to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(sep)
}

/// Whether variables of one name from several places merge (`hash_behaviour = merge`,
/// `ANSIBLE_HASH_BEHAVIOUR=merge`) rather than the higher one replacing the lower.
pub fn merge_hashes() -> bool {
    static MERGE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *MERGE.get_or_init(|| settings().get("ANSIBLE_HASH_BEHAVIOUR") == Some("merge"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ini_as_ansible_reads_it() {
        let text = "# comment\n[defaults]\ninventory = hosts.ini\nFORKS: 7\n; other\nnocows = 1 ; inline\n[ssh_connection]\npipelining=True\n";
        let got = parse(Path::new("a.cfg"), text).unwrap();
        let pairs: Vec<(String, String, String)> =
            got.into_iter().map(|(s, k, v, _)| (s, k, v)).collect();
        assert_eq!(
            pairs,
            [
                ("defaults", "inventory", "hosts.ini"),
                ("defaults", "forks", "7"),
                ("defaults", "nocows", "1"),
                ("ssh_connection", "pipelining", "True"),
            ]
            .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
        );
        let err = parse(Path::new("a.cfg"), "[defaults\n").unwrap_err();
        assert!(err.to_string().contains("a.cfg:1"), "{err}");
        assert_eq!(relative_to(Path::new("/p"), "inv:/etc/x"), "/p/inv:/etc/x");
    }
}
