//! Reading inventory sources (`-i` values) as Ansible's inventory manager does: a path is
//! made absolute; a directory stands for every entry in it (sorted, recursively, skipping
//! hidden files, `group_vars`, `host_vars`, `vars_plugins` and ignored extensions); anything
//! else is offered to each enabled plugin in turn. A source no plugin parses is a warning
//! unless the options make it an error.

use super::cache::CacheSettings;
use super::data::{CurrentSource, GroupNameRule, InventoryData};
use super::error::InventoryError;
use super::plugin::{InventoryPlugin, ParseContext, enabled_plugins};
use sandball_pycompat::expand::expand_vars;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// Endings of directory entries that are never inventory (Ansible's `INVENTORY_IGNORE_EXTS`).
pub const IGNORED_EXTENSIONS: [&str; 12] = [
    ".pyc", ".pyo", ".swp", ".bak", "~", ".rpm", ".md", ".txt", ".rst", ".orig", ".cfg", ".retry",
];

/// Directory entries that are never inventory.
const IGNORED_NAMES: [&str; 3] = ["host_vars", "group_vars", "vars_plugins"];

/// How sources are loaded: strictness about sources that do not parse, the cache, and
/// the playbook directory whose `group_vars/` and `host_vars/` also apply.
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    /// Fail when no source at all could be parsed (`INVENTORY_UNPARSED_IS_FAILED`).
    pub unparsed_is_failed: bool,
    /// Fail when any source could not be parsed (`INVENTORY_ANY_UNPARSED_IS_FAILED`).
    pub any_unparsed_is_failed: bool,
    /// Ignore cached results of script and plugin sources and refresh them (`--flush-cache`).
    pub flush_cache: bool,
    /// The playbook's directory: its `group_vars/` and `host_vars/` override the inventory's.
    pub playbook_dir: Option<PathBuf>,
    /// What happens to invalid group names (`TRANSFORM_INVALID_GROUP_CHARS`).
    pub group_names: GroupNameRule,
    /// Whether and where script and plugin results are cached.
    pub cache: CacheSettings,
    /// The extra vars (`-e`), which `constructed` merges over a host's variables with
    /// `use_extra_vars`.
    pub extra_vars: serde_json::Map<String, serde_json::Value>,
}

impl LoadOptions {
    /// The strictness Ansible's environment asks for: `ANSIBLE_INVENTORY_UNPARSED_FAILED`
    /// and `ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED` (booleans as Ansible reads them).
    pub fn from_settings() -> Self {
        LoadOptions {
            unparsed_is_failed: crate::config::settings()
                .lenient("ANSIBLE_INVENTORY_UNPARSED_FAILED"),
            any_unparsed_is_failed: crate::config::settings()
                .lenient("ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED"),
            group_names: GroupNameRule::from_settings(),
            cache: CacheSettings::from_settings(),
            ..LoadOptions::default()
        }
    }
}

/// Parses every source into `data` and reconciles it; returns the sources as used (paths
/// made absolute), for finding `group_vars/` and `host_vars/`.
pub fn parse_sources(
    sources: &[String],
    data: &mut InventoryData,
    options: &LoadOptions,
) -> Result<Vec<String>, InventoryError> {
    let mut used = Vec::new();
    let mut parsed = false;
    let (plugins, warnings) = enabled_plugins();
    for w in warnings {
        data.warn(w);
    }
    let mut reader = SourceReader {
        plugins,
        options,
        processed: Vec::new(),
    };
    for source in sources.iter().filter(|s| !s.is_empty()) {
        let source = if source.contains(',') {
            source.clone()
        } else {
            absolute_path(source)
        };
        parsed |= reader.parse_source(&source, data)?;
        used.push(source);
    }
    if parsed {
        data.reconcile()
            .map_err(|e| InventoryError::Inconsistent(e.0))?;
    } else if options.unparsed_is_failed {
        return Err(InventoryError::NothingParsed);
    } else {
        data.warn("No inventory was parsed, only implicit localhost is available");
    }
    Ok(used)
}

fn ignored(name: &[u8]) -> bool {
    name.starts_with(b".")
        || IGNORED_NAMES.iter().any(|n| n.as_bytes() == name)
        || IGNORED_EXTENSIONS
            .iter()
            .any(|e| name.ends_with(e.as_bytes()))
}

/// Reads sources with the enabled plugins, remembering what was parsed.
struct SourceReader<'a> {
    plugins: Vec<&'static dyn InventoryPlugin>,
    options: &'a LoadOptions,
    processed: Vec<String>,
}

impl SourceReader<'_> {
    fn parse_source(
        &mut self,
        source: &str,
        data: &mut InventoryData,
    ) -> Result<bool, InventoryError> {
        let options = self.options;
        let path = Path::new(source);
        let mut parsed = false;
        let mut failures = Vec::new();
        if path.is_dir() {
            let mut entries: Vec<_> = std::fs::read_dir(path)
                .map_err(|error| InventoryError::Io {
                    path: source.to_string(),
                    error,
                })?
                .filter_map(|e| e.ok())
                .map(|e| e.file_name())
                .filter(|n| !ignored(n.as_bytes()))
                .collect();
            entries.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
            for entry in entries {
                let full = path.join(&entry).to_string_lossy().into_owned();
                parsed |= self.parse_source(&full, data)?;
            }
        } else {
            let dir = path
                .is_file()
                .then(|| path.parent().map(|p| p.to_string_lossy().into_owned()))
                .flatten();
            data.set_current_source(Some(CurrentSource {
                file: source.to_string(),
                dir,
            }));
            for plugin in &self.plugins {
                if !plugin.verify_file(source) {
                    continue;
                }
                let context = ParseContext {
                    options,
                    processed: &self.processed,
                };
                match plugin.parse(source, data, &context) {
                    Ok(()) => {
                        parsed = true;
                        self.processed.push(source.to_string());
                        break;
                    }
                    Err(e) => failures.push(format!(
                        "Failed to parse inventory with '{}' plugin: {e}",
                        plugin.name()
                    )),
                }
            }
            data.set_current_source(None);
        }
        if !parsed {
            for f in &failures {
                data.warn(f.clone());
            }
            if options.any_unparsed_is_failed {
                return Err(InventoryError::Unparsed {
                    path: source.to_string(),
                    failures,
                });
            }
            data.warn(format!("Unable to parse {source} as an inventory source"));
        }
        Ok(parsed)
    }
}

/// `path` with `~` and `$VAR`/`${VAR}` expanded, made absolute against the current
/// directory and normalised (`.`, `..` and repeated slashes removed) without following links.
pub fn absolute_path(path: &str) -> String {
    let expanded = expand_vars(
        &crate::local_files::expand_user(path).to_string_lossy(),
        &|name| crate::config::settings().get(name).map(str::to_string),
    );
    let joined = if Path::new(&expanded).is_absolute() {
        PathBuf::from(&expanded)
    } else {
        std::env::current_dir().unwrap_or_default().join(&expanded)
    };
    let mut out = PathBuf::from("/");
    for component in joined.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(part) => out.push(part),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out.to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn names(data: &InventoryData) -> Vec<&str> {
        data.hosts().map(|h| h.name()).collect()
    }

    #[test]
    fn paths_are_made_absolute_and_normal() {
        assert_eq!(absolute_path("/a/./b//c/../d"), "/a/b/d");
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(absolute_path("inv"), cwd.join("inv").to_string_lossy());
        assert_eq!(
            expand_vars(
                "/x/$SANDBALL_SURELY_UNSET/${SANDBALL_SURELY_UNSET}",
                &|name| std::env::var(name).ok()
            ),
            "/x/$SANDBALL_SURELY_UNSET/${SANDBALL_SURELY_UNSET}"
        );
        let home = std::env::var("HOME").unwrap();
        assert_eq!(
            expand_vars("${HOME}/x", &|name| std::env::var(name).ok()),
            format!("{home}/x")
        );
        assert_eq!(
            crate::local_files::expand_user("~/inv"),
            PathBuf::from(format!("{home}/inv"))
        );
        assert_eq!(crate::local_files::expand_user("~"), PathBuf::from(&home));
        assert_eq!(
            crate::local_files::expand_user("~x/y"),
            PathBuf::from("~x/y")
        );
    }

    #[test]
    fn directories_are_read_sorted_skipping_ignored_entries() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        fs::write(d.join("20-b.ini"), "b\n").unwrap();
        fs::write(d.join("10-a.yml"), "all:\n  hosts:\n    a:\n").unwrap();
        fs::create_dir(d.join("30-sub")).unwrap();
        fs::write(d.join("30-sub/c"), "c\n").unwrap();
        for skipped in [
            ".hidden",
            "notes.txt",
            "x.retry",
            "y.bak",
            "z~",
            "old.orig",
            "ansible.cfg",
            "README.md",
        ] {
            fs::write(d.join(skipped), "skipped\n").unwrap();
        }
        fs::create_dir(d.join("group_vars")).unwrap();
        fs::write(d.join("group_vars/all"), "x: 1\n").unwrap();
        let mut data = InventoryData::new();
        let used = parse_sources(
            &[d.display().to_string()],
            &mut data,
            &LoadOptions::default(),
        )
        .unwrap();
        assert_eq!(names(&data), ["a", "b", "c"]);
        assert_eq!(used, [d.display().to_string()]);
        assert_eq!(
            data.warnings().count(),
            0,
            "{:?}",
            data.warnings().collect::<Vec<_>>()
        );
        let b = data.host_at(data.host_index("b").unwrap());
        assert_eq!(
            b.inventory_file(),
            Some(d.join("20-b.ini").to_str().unwrap())
        );
        assert_eq!(b.inventory_dir(), Some(d.to_str().unwrap()));
    }

    #[test]
    fn dev_null_is_an_empty_inventory_as_in_ansible() {
        // ansible-test sets ANSIBLE_INVENTORY=/dev/null.
        let mut data = InventoryData::new();
        let used = parse_sources(
            &["/dev/null".to_string()],
            &mut data,
            &LoadOptions::default(),
        )
        .unwrap();
        assert_eq!(used, ["/dev/null"]);
        assert_eq!(data.warnings().count(), 0);
        assert!(names(&data).is_empty());
    }

    #[test]
    fn unparsable_sources_warn_by_default_and_fail_when_asked() {
        let dir = tempfile::tempdir().unwrap();
        let bad = dir.path().join("bad.ini");
        fs::write(&bad, "[g]\nh x\n").unwrap();
        let bad = bad.display().to_string();
        let mut data = InventoryData::new();
        parse_sources(
            std::slice::from_ref(&bad),
            &mut data,
            &LoadOptions::default(),
        )
        .unwrap();
        let w: Vec<&str> = data.warnings().collect();
        assert_eq!(
            w,
            [
                format!(
                    "Failed to parse inventory with 'ini' plugin: {bad}:2: Expected key=value host variable assignment, got: x"
                ),
                format!("Unable to parse {bad} as an inventory source"),
                "No inventory was parsed, only implicit localhost is available".to_string(),
            ]
        );
        let strict = LoadOptions {
            any_unparsed_is_failed: true,
            ..LoadOptions::default()
        };
        let e = parse_sources(
            std::slice::from_ref(&bad),
            &mut InventoryData::new(),
            &strict,
        )
        .unwrap_err();
        assert!(e.to_string().starts_with(&format!(
            "Completely failed to parse inventory source {bad}\n* Failed"
        )));
        let none = LoadOptions {
            unparsed_is_failed: true,
            ..LoadOptions::default()
        };
        let e = parse_sources(
            &["/nonexistent/inventory".into()],
            &mut InventoryData::new(),
            &none,
        )
        .unwrap_err();
        assert!(matches!(e, InventoryError::NothingParsed));
    }

    #[test]
    fn yaml_that_fails_is_not_retried_as_ini_unless_extensionless() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hosts");
        fs::write(&path, "[web]\nw1 port=8080\n").unwrap();
        let mut data = InventoryData::new();
        parse_sources(
            &[path.display().to_string()],
            &mut data,
            &LoadOptions::default(),
        )
        .unwrap();
        assert_eq!(names(&data), ["w1"]);
        assert_eq!(data.warnings().count(), 0);
    }

    #[test]
    fn host_lists_are_not_paths() {
        let mut data = InventoryData::new();
        let used = parse_sources(
            &["a,b".into(), String::new()],
            &mut data,
            &LoadOptions::default(),
        )
        .unwrap();
        assert_eq!(used, ["a,b"]);
        assert_eq!(names(&data), ["a", "b"]);
        assert_eq!(data.host_at(0).inventory_file(), Some("a,b"));
        assert_eq!(data.host_at(0).inventory_dir(), None);
    }
}
