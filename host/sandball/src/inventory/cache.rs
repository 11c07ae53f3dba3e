//! The inventory cache: what a script or plugin source produced, kept on disk as JSON so
//! that the next run need not ask again (Ansible's `inventory_cache` options). Off unless
//! `ANSIBLE_INVENTORY_CACHE` (or `cache: true` in a plugin's config file) turns it on; an
//! entry older than the timeout (`ANSIBLE_INVENTORY_CACHE_TIMEOUT`, seconds, default 3600;
//! 0 never expires) is ignored; `--flush-cache` ignores every entry and writes new ones.
//! Entries live in `ANSIBLE_INVENTORY_CACHE_CONNECTION` (default
//! `~/.cache/sandball/inventory`), one file per plugin and source, written atomically.

use super::error::InventoryError;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

/// Whether and where results are cached, and for how long.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheSettings {
    /// Whether to read and write the cache.
    pub enabled: bool,
    /// How long an entry stays valid; zero keeps it forever.
    pub timeout: Duration,
    /// The directory holding the entries.
    pub dir: PathBuf,
}

impl Default for CacheSettings {
    fn default() -> Self {
        let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("/tmp"), PathBuf::from);
        CacheSettings {
            enabled: false,
            timeout: Duration::from_secs(3600),
            dir: home.join(".cache/sandball/inventory"),
        }
    }
}

impl CacheSettings {
    /// The settings Ansible's environment variables ask for.
    pub fn from_settings() -> Self {
        let mut settings = CacheSettings {
            enabled: crate::config::settings().lenient("ANSIBLE_INVENTORY_CACHE"),
            ..CacheSettings::default()
        };
        if let Some(secs) = crate::config::settings()
            .get("ANSIBLE_INVENTORY_CACHE_TIMEOUT")
            .and_then(|t| t.trim().parse::<u64>().ok())
        {
            settings.timeout = Duration::from_secs(secs);
        }
        if let Some(dir) = crate::config::settings().get_os("ANSIBLE_INVENTORY_CACHE_CONNECTION") {
            settings.dir = PathBuf::from(dir);
        }
        settings
    }

    /// These settings overridden by a plugin config file's `cache`, `cache_timeout` and
    /// `cache_connection` keys.
    pub fn with_config(&self, config: &Map<String, Value>) -> Self {
        let mut settings = self.clone();
        if let Some(on) = config.get("cache") {
            settings.enabled = match on {
                Value::Bool(b) => *b,
                Value::String(s) => {
                    matches!(s.to_ascii_lowercase().as_str(), "yes" | "true" | "on" | "1")
                }
                Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
                _ => false,
            };
        }
        if let Some(secs) = config.get("cache_timeout").and_then(Value::as_u64) {
            settings.timeout = Duration::from_secs(secs);
        }
        if let Some(dir) = config.get("cache_connection").and_then(Value::as_str) {
            settings.dir = PathBuf::from(dir);
        }
        settings
    }

    fn entry(&self, plugin: &str, source: &str) -> PathBuf {
        let digest = hex::encode(Sha256::digest(source.as_bytes()));
        self.dir.join(format!("{plugin}_{}.json", &digest[..32]))
    }

    /// The cached result of `plugin` for `source`, if caching is on and a fresh entry exists.
    pub fn get(&self, plugin: &str, source: &str) -> Option<Value> {
        if !self.enabled {
            return None;
        }
        let path = self.entry(plugin, source);
        let modified = std::fs::metadata(&path).and_then(|m| m.modified()).ok()?;
        let age = SystemTime::now()
            .duration_since(modified)
            .unwrap_or_default();
        if !self.timeout.is_zero() && age > self.timeout {
            tracing::debug!(path = %path.display(), "inventory cache entry expired");
            return None;
        }
        let text = std::fs::read_to_string(&path).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Stores `value` as the result of `plugin` for `source`, if caching is on.
    pub fn put(&self, plugin: &str, source: &str, value: &Value) -> Result<(), InventoryError> {
        if !self.enabled {
            return Ok(());
        }
        let path = self.entry(plugin, source);
        let io = |error| InventoryError::Io {
            path: path.display().to_string(),
            error,
        };
        std::fs::create_dir_all(&self.dir).map_err(io)?;
        let mut tmp = tempfile::NamedTempFile::new_in(&self.dir).map_err(io)?;
        tmp.write_all(value.to_string().as_bytes()).map_err(io)?;
        tmp.persist(&path).map_err(|e| io(e.error))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn entries_round_trip_only_when_enabled_and_fresh() {
        let dir = tempfile::tempdir().unwrap();
        let mut settings = CacheSettings {
            enabled: false,
            timeout: Duration::from_secs(3600),
            dir: dir.path().join("c"),
        };
        settings.put("script", "/inv.sh", &json!({"a": 1})).unwrap();
        assert!(!dir.path().join("c").exists());
        settings.enabled = true;
        settings.put("script", "/inv.sh", &json!({"a": 1})).unwrap();
        assert_eq!(settings.get("script", "/inv.sh"), Some(json!({"a": 1})));
        assert_eq!(settings.get("script", "/other.sh"), None);
        settings.timeout = Duration::from_nanos(1);
        std::thread::sleep(Duration::from_millis(5));
        assert_eq!(settings.get("script", "/inv.sh"), None);
        settings.timeout = Duration::ZERO;
        assert_eq!(settings.get("script", "/inv.sh"), Some(json!({"a": 1})));
    }

    #[test]
    fn config_files_override_the_environment() {
        let base = CacheSettings::default();
        let config = json!({"cache": "yes", "cache_timeout": 5, "cache_connection": "/x"});
        let settings = base.with_config(config.as_object().unwrap());
        assert!(settings.enabled);
        assert_eq!(settings.timeout, Duration::from_secs(5));
        assert_eq!(settings.dir, PathBuf::from("/x"));
    }
}
