//! The settings of a run, read once: each variable from the environment as the run
//! started, else from ansible.cfg (the values [`super::load`] read), else unset, when
//! its reader takes its own default — Ansible's precedence beneath the command line.
//! Built once in `main` and held for every reader ([`settings`]); library code and its
//! tests that never load a file get the environment alone.
//!
//! The process environment itself is never changed: a child process that reads a
//! setting itself (a Python plugin worker, an inventory script, a command run on the
//! controller) is given the values the file set ([`Settings::from_file`]), and the
//! controller's own readers of any variable (`lookup('env')`, `expandvars`, argument
//! specs' `env_fallback`, `$VAR` in inventory paths) ask [`Settings::get`]: both see the
//! environment with the file's settings in it, as they did when sandball wrote the file
//! into its environment.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Every setting's value, by its variable (`ANSIBLE_FORKS`…).
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// The environment as the run started.
    env: HashMap<OsString, OsString>,
    /// The configuration file, when one was read.
    path: Option<PathBuf>,
    /// The variables the file set (the environment did not), with their values, in the
    /// file's order.
    file: Vec<(&'static str, String)>,
}

/// The settings of this run, once [`install`] (or a first reader) made them.
static SETTINGS: OnceLock<Settings> = OnceLock::new();

/// The settings of this run: those `main` installed, else (library code, unit tests)
/// the environment alone.
pub fn settings() -> &'static Settings {
    SETTINGS.get_or_init(Settings::from_environment)
}

/// Makes `settings` the run's settings; `false` when a reader already read others.
pub(super) fn install(settings: Settings) -> bool {
    SETTINGS.set(settings).is_ok()
}

impl Settings {
    /// The settings of the environment alone (no configuration file).
    pub fn from_environment() -> Settings {
        Settings::new(std::env::vars_os(), None, Vec::new())
    }

    /// The settings of `env` (variables and values) with the values a configuration
    /// file at `path` gave the variables `file` names, beneath the environment's.
    pub fn new(
        env: impl IntoIterator<Item = (OsString, OsString)>,
        path: Option<PathBuf>,
        file: Vec<(&'static str, String)>,
    ) -> Settings {
        let env: HashMap<OsString, OsString> = env.into_iter().collect();
        let file = file
            .into_iter()
            .filter(|(variable, _)| !env.contains_key(OsStr::new(variable)))
            .collect();
        Settings { env, path, file }
    }

    /// The value of `variable`, as `std::env::var` read it when ansible.cfg was written
    /// into the environment: the environment's (`None` when it is not UTF-8), else the
    /// file's.
    pub fn get(&self, variable: &str) -> Option<&str> {
        match self.env.get(OsStr::new(variable)) {
            Some(value) => value.to_str(),
            None => self.file_value(variable),
        }
    }

    /// The value of `variable` as it is, UTF-8 or not (paths).
    pub fn get_os(&self, variable: &str) -> Option<&OsStr> {
        match self.env.get(OsStr::new(variable)) {
            Some(value) => Some(value.as_os_str()),
            None => self.file_value(variable).map(OsStr::new),
        }
    }

    /// A boolean setting (Ansible's words), `default` when it is unset or not a
    /// boolean.
    pub fn flag(&self, variable: &str, default: bool) -> bool {
        sandball_pycompat::boolean::setting_flag(self.get(variable), default)
    }

    /// A boolean setting as ansible-core's `boolean(value, strict=False)` reads it:
    /// true only for a true word.
    pub fn lenient(&self, variable: &str) -> bool {
        sandball_pycompat::boolean::setting_lenient(self.get(variable))
    }

    /// A list setting (`a, b`): its items, trimmed, the empty ones left out; `None` when
    /// it is unset.
    pub fn list(&self, variable: &str) -> Option<Vec<String>> {
        self.get(variable).map(list)
    }

    /// A setting of paths (`:`-separated, as `std::env::split_paths` splits them); none
    /// when it is unset.
    pub fn paths(&self, variable: &str) -> Vec<PathBuf> {
        self.get_os(variable)
            .map(|v| std::env::split_paths(v).collect())
            .unwrap_or_default()
    }

    /// The configuration file read, when there is one.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The variables the configuration file set (the environment did not), with their
    /// values: what a child process is given to see the run's settings.
    pub fn from_file(&self) -> impl Iterator<Item = (&'static str, &str)> {
        self.file.iter().map(|(v, value)| (*v, value.as_str()))
    }

    /// The configuration file, when it (not the environment) set `variable`.
    pub fn file_origin(&self, variable: &str) -> Option<&Path> {
        self.file_value(variable).and(self.path.as_deref())
    }

    /// The value the configuration file gave `variable`.
    fn file_value(&self, variable: &str) -> Option<&str> {
        self.file
            .iter()
            .find(|(v, _)| *v == variable)
            .map(|(_, value)| value.as_str())
    }
}

/// The items of a list setting's text (`a, b`), trimmed, the empty ones left out.
pub fn list(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect()
    }

    #[test]
    fn the_environment_comes_before_the_file() {
        let s = Settings::new(
            env(&[("ANSIBLE_FORKS", "3"), ("ANSIBLE_NOCOLOR", "yes")]),
            Some(PathBuf::from("/p/ansible.cfg")),
            vec![
                ("ANSIBLE_FORKS", "7".to_string()),
                ("ANSIBLE_TIMEOUT", "20".to_string()),
            ],
        );
        assert_eq!(s.get("ANSIBLE_FORKS"), Some("3"));
        assert_eq!(s.get("ANSIBLE_TIMEOUT"), Some("20"));
        assert_eq!(s.get("ANSIBLE_REMOTE_USER"), None);
        assert_eq!(s.list("ANSIBLE_TIMEOUT"), Some(vec!["20".to_string()]));
        assert_eq!(list(" a, ,b "), ["a", "b"]);
        assert!(s.flag("ANSIBLE_NOCOLOR", false));
        assert!(s.flag("ANSIBLE_FORCE_COLOR", true));
        assert_eq!(s.file_origin("ANSIBLE_FORKS"), None);
        assert_eq!(
            s.file_origin("ANSIBLE_TIMEOUT"),
            Some(Path::new("/p/ansible.cfg"))
        );
        assert_eq!(
            s.from_file().collect::<Vec<_>>(),
            [("ANSIBLE_TIMEOUT", "20")]
        );
    }
}
