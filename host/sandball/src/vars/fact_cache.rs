//! The fact cache (`fact_caching` in ansible.cfg, `ANSIBLE_CACHE_PLUGIN`): facts kept
//! between runs. `memory`, the default, keeps them for the run only; `jsonfile` keeps
//! each host's facts as JSON in `<fact_caching_connection>/<prefix><host>`, read when
//! the run starts (unless older than `fact_caching_timeout` seconds; 0 never expires)
//! and rewritten, whole and atomically, whenever the host's facts change — gathered,
//! returned by a module or set with `set_fact: {cacheable: true}`. `--flush-cache`
//! removes the entries of the inventory's hosts before the run. Other cache plugins
//! are refused, naming them.

use serde_json::{Map, Value};
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

/// A `jsonfile` fact cache.
#[derive(Debug, Clone)]
pub struct FactCache {
    dir: PathBuf,
    prefix: String,
    timeout: Option<Duration>,
}

impl FactCache {
    /// The cache the settings ask for: `None` for `memory`.
    pub fn from_settings() -> Result<Option<FactCache>, String> {
        let setting = |name: &str| {
            crate::config::settings()
                .get(name)
                .filter(|v| !v.trim().is_empty())
                .map(str::to_string)
        };
        let plugin = setting("ANSIBLE_CACHE_PLUGIN").unwrap_or_else(|| "memory".into());
        match plugin
            .trim()
            .trim_start_matches("ansible.builtin.")
            .trim_start_matches("community.general.")
        {
            "memory" => Ok(None),
            "jsonfile" => {
                let dir = setting("ANSIBLE_CACHE_PLUGIN_CONNECTION").ok_or(
                    "the jsonfile fact cache needs a directory: set fact_caching_connection (ANSIBLE_CACHE_PLUGIN_CONNECTION)",
                )?;
                let timeout = match setting("ANSIBLE_CACHE_PLUGIN_TIMEOUT") {
                    None => 86400,
                    Some(t) => t.trim().parse::<u64>().map_err(|_| {
                        format!("fact_caching_timeout must be a number of seconds, not {t:?}")
                    })?,
                };
                Ok(Some(FactCache {
                    dir: crate::local_files::expand_user(&dir),
                    prefix: setting("ANSIBLE_CACHE_PLUGIN_PREFIX")
                        .unwrap_or_else(|| "ansible_facts".into()),
                    timeout: (timeout > 0).then(|| Duration::from_secs(timeout)),
                }))
            }
            other => Err(format!(
                "the fact cache plugin '{other}' is not supported by sandball (memory, jsonfile)"
            )),
        }
    }

    fn path(&self, host: &str) -> PathBuf {
        self.dir.join(format!("{}{host}", self.prefix))
    }

    /// The facts cached for `host`, unless there are none or they expired. A damaged
    /// entry is reported and left out.
    pub fn load(&self, host: &str) -> Result<Option<Map<String, Value>>, String> {
        let path = self.path(host);
        let Ok(meta) = std::fs::metadata(&path) else {
            return Ok(None);
        };
        if let Some(timeout) = self.timeout
            && meta
                .modified()
                .ok()
                .and_then(|m| SystemTime::now().duration_since(m).ok())
                .is_some_and(|age| age > timeout)
        {
            return Ok(None);
        }
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read the cached facts {}: {e}", path.display()))?;
        match serde_json::from_str(&text) {
            Ok(Value::Object(facts)) => Ok(Some(facts)),
            _ => Err(format!(
                "the cached facts {} are not a JSON object; they were left out",
                path.display()
            )),
        }
    }

    /// Keeps `facts` as `host`'s entry (an empty set removes it).
    pub fn store(&self, host: &str, facts: &Map<String, Value>) -> Result<(), String> {
        let path = self.path(host);
        if facts.is_empty() {
            return self.flush(host);
        }
        std::fs::create_dir_all(&self.dir)
            .map_err(|e| format!("cannot create the fact cache {}: {e}", self.dir.display()))?;
        let text = serde_json::to_string_pretty(facts).unwrap_or_default();
        crate::local_files::write_atomically(&path, text.as_bytes())
            .map_err(|e| format!("cannot write the cached facts {}: {e}", path.display()))
    }

    /// Removes `host`'s entry.
    pub fn flush(&self, host: &str) -> Result<(), String> {
        let path = self.path(host);
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(format!(
                "cannot remove the cached facts {}: {e}",
                path.display()
            )),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::path::Path;

    fn cache(dir: &Path, timeout: Option<Duration>) -> FactCache {
        FactCache {
            dir: dir.to_path_buf(),
            prefix: "p_".into(),
            timeout,
        }
    }

    #[test]
    fn facts_are_kept_per_host_and_flushed() {
        let dir = tempfile::tempdir().unwrap();
        let c = cache(dir.path(), Some(Duration::from_secs(60)));
        assert_eq!(c.load("web1").unwrap(), None);
        let facts = json!({"ansible_os_family": "Debian", "x": [1]});
        c.store("web1", facts.as_object().unwrap()).unwrap();
        assert!(dir.path().join("p_web1").is_file());
        assert_eq!(c.load("web1").unwrap(), facts.as_object().cloned());
        c.flush("web1").unwrap();
        assert_eq!(c.load("web1").unwrap(), None);
        c.flush("web1").unwrap();
        std::fs::write(dir.path().join("p_bad"), "[1]").unwrap();
        assert!(c.load("bad").unwrap_err().contains("not a JSON object"));
    }

    #[test]
    fn old_entries_expire() {
        let dir = tempfile::tempdir().unwrap();
        let c = cache(dir.path(), Some(Duration::from_secs(60)));
        c.store("h", json!({"a": 1}).as_object().unwrap()).unwrap();
        let old = SystemTime::now() - Duration::from_secs(120);
        let f = std::fs::File::options()
            .write(true)
            .open(dir.path().join("p_h"))
            .unwrap();
        f.set_modified(old).unwrap();
        assert_eq!(c.load("h").unwrap(), None);
        assert!(cache(dir.path(), None).load("h").unwrap().is_some());
    }
}
