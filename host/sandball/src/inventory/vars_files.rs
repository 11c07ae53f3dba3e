//! `group_vars/` and `host_vars/` beside each inventory source, read as Ansible's
//! `host_group_vars` vars plugin reads them: for an entity NAME, the first of `NAME`,
//! `NAME.yml`, `NAME.yaml`, `NAME.json` that exists, and when that is a directory, every
//! file in it (sorted, recursively, skipping hidden files and `~` backups, and files with
//! other extensions). Files are read once, when the inventory loads.

use super::data::{InventoryData, LOCALHOST_NAMES};
use super::error::InventoryError;
use super::yaml_load::load_mapping;
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

const EXTENSIONS: [&str; 4] = ["", ".yml", ".yaml", ".json"];

/// The variables found for one inventory source's directory.
#[derive(Clone, Debug, Default)]
struct SourceVars {
    groups: HashMap<String, Map<String, Value>>,
    hosts: HashMap<String, Map<String, Value>>,
}

/// The `group_vars/` and `host_vars/` variables of every inventory source, in source order.
#[derive(Clone, Debug, Default)]
pub struct VarsFiles {
    sources: Vec<SourceVars>,
}

impl VarsFiles {
    /// Reads the files for every group and host of `data` (and the localhost names, for
    /// the implicit localhost) beside each of `sources`, then in `playbook_dir`; returns
    /// them and any warnings.
    pub fn load(
        sources: &[String],
        playbook_dir: Option<&Path>,
        data: &InventoryData,
    ) -> Result<(VarsFiles, Vec<String>), InventoryError> {
        let mut out = VarsFiles::default();
        let mut warnings = Vec::new();
        let mut bases: Vec<PathBuf> = Vec::new();
        for source in sources {
            let path = Path::new(source);
            if source.contains(',') && !path.exists() {
                continue;
            }
            let dir = if path.is_dir() {
                path.to_path_buf()
            } else {
                path.parent().map(Path::to_path_buf).unwrap_or_default()
            };
            bases.push(std::fs::canonicalize(&dir).unwrap_or(dir));
        }
        if let Some(dir) = playbook_dir {
            let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
            // The playbook's files are read once, after the inventory's, even when the
            // playbook sits beside the inventory.
            if bases.last() != Some(&dir) {
                bases.push(dir);
            }
        }
        for base in bases {
            let groups = data.groups().map(|g| g.name().to_string());
            let hosts = data
                .hosts()
                .map(|h| h.name().to_string())
                .chain(LOCALHOST_NAMES.iter().map(|n| n.to_string()));
            out.sources.push(SourceVars {
                groups: entity_vars(&base.join("group_vars"), groups, &mut warnings)?,
                hosts: entity_vars(&base.join("host_vars"), hosts, &mut warnings)?,
            });
        }
        Ok((out, warnings))
    }

    /// The variables of group `name` from each source that has some, in source order.
    pub fn group(&self, name: &str) -> impl Iterator<Item = &Map<String, Value>> {
        self.sources.iter().filter_map(move |s| s.groups.get(name))
    }

    /// The variables of host `name` from each source that has some, in source order.
    pub fn host(&self, name: &str) -> impl Iterator<Item = &Map<String, Value>> {
        self.sources.iter().filter_map(move |s| s.hosts.get(name))
    }
}

/// The merged variables of each named entity that has files under `dir`.
fn entity_vars(
    dir: &Path,
    names: impl Iterator<Item = String>,
    warnings: &mut Vec<String>,
) -> Result<HashMap<String, Map<String, Value>>, InventoryError> {
    let mut found = HashMap::new();
    if !dir.is_dir() {
        if dir.exists() {
            let kind = dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            warnings.push(format!(
                "Found {kind} that is not a directory, skipping: {}",
                dir.display()
            ));
        }
        return Ok(found);
    }
    let listing: HashSet<String> = std::fs::read_dir(dir)
        .map_err(|error| InventoryError::Io {
            path: dir.display().to_string(),
            error,
        })?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    for name in names {
        if name.starts_with('/') || found.contains_key(&name) {
            continue;
        }
        let mut vars = Map::new();
        for file in vars_files_for(dir, &listing, &name)? {
            let text = crate::yaml::read_file(&file).map_err(|error| InventoryError::Io {
                path: file.display().to_string(),
                error,
            })?;
            if let Some(map) = load_mapping(&text, &file.display().to_string())? {
                vars.extend(map);
            }
        }
        if !vars.is_empty() {
            found.insert(name, vars);
        }
    }
    Ok(found)
}

/// The files holding variables for `name` under `dir` (whose entries are `listing`).
fn vars_files_for(
    dir: &Path,
    listing: &HashSet<String>,
    name: &str,
) -> Result<Vec<PathBuf>, InventoryError> {
    for ext in EXTENSIONS {
        let candidate = format!("{name}{ext}");
        let path = dir.join(&candidate);
        let exists = if candidate.contains('/') {
            path.exists()
        } else {
            listing.contains(&candidate)
        };
        if !exists {
            continue;
        }
        if path.is_dir() {
            let mut files = Vec::new();
            directory_files(&path, &mut files)?;
            return Ok(files);
        }
        return Ok(vec![path]);
    }
    Ok(Vec::new())
}

/// The extension as Python's `os.path.splitext` sees it ("" for `.hidden`, "." for `a.`).
fn splitext_ext(name: &str) -> &str {
    let stem_start = name.len() - name.trim_start_matches('.').len();
    match name[stem_start..].rfind('.') {
        Some(i) => &name[stem_start + i..],
        None => "",
    }
}

/// Every vars file in `dir`, sorted, descending into subdirectories without an extension.
fn directory_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), InventoryError> {
    let mut entries: Vec<String> = std::fs::read_dir(dir)
        .map_err(|error| InventoryError::Io {
            path: dir.display().to_string(),
            error,
        })?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    entries.sort();
    for entry in entries {
        if entry.starts_with('.') || entry.ends_with('~') {
            continue;
        }
        let ext = splitext_ext(&entry);
        let path = dir.join(&entry);
        if path.is_dir() {
            if ext.is_empty() {
                directory_files(&path, out)?;
            }
        } else if path.is_file() && EXTENSIONS.contains(&ext) {
            out.push(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::fs;

    fn inventory_with(groups: &[&str], hosts: &[&str]) -> InventoryData {
        let mut data = InventoryData::new();
        for g in groups {
            data.add_group(g).unwrap();
        }
        for h in hosts {
            data.add_host(h, None, None).unwrap();
        }
        data
    }

    #[test]
    fn first_matching_name_wins_and_directories_merge_sorted() {
        let dir = tempfile::tempdir().unwrap();
        let gv = dir.path().join("group_vars");
        fs::create_dir_all(gv.join("web/sub")).unwrap();
        fs::write(gv.join("all.yml"), "a: 1\n").unwrap();
        fs::write(gv.join("all.yaml"), "a: 2\nignored: true\n").unwrap();
        fs::write(gv.join("web/10-first.yml"), "x: first\ny: 1\n").unwrap();
        fs::write(gv.join("web/20-second.json"), "{\"x\": \"second\"}").unwrap();
        fs::write(gv.join("web/sub/z"), "z: deep\n").unwrap();
        fs::write(gv.join("web/notes.txt"), "x: no\n").unwrap();
        fs::write(gv.join("web/.hidden.yml"), "x: no\n").unwrap();
        fs::write(gv.join("web/backup.yml~"), "x: no\n").unwrap();
        fs::write(dir.path().join("hosts"), "").unwrap();
        let data = inventory_with(&["web"], &[]);
        let source = dir.path().join("hosts").display().to_string();
        let (files, warnings) = VarsFiles::load(&[source], None, &data).unwrap();
        assert!(warnings.is_empty());
        assert_eq!(
            files.group("all").collect::<Vec<_>>(),
            [json!({"a": 1}).as_object().unwrap()]
        );
        let web: Vec<_> = files.group("web").collect();
        assert_eq!(
            web,
            [json!({"x": "second", "y": 1, "z": "deep"})
                .as_object()
                .unwrap()]
        );
    }

    #[test]
    fn host_vars_for_hosts_and_localhost_names_in_a_directory_source() {
        let dir = tempfile::tempdir().unwrap();
        let hv = dir.path().join("host_vars");
        fs::create_dir_all(&hv).unwrap();
        fs::write(hv.join("web1.example.com.yml"), "port: 8080\n").unwrap();
        fs::write(hv.join("localhost"), "who: me\n").unwrap();
        fs::write(hv.join("empty.yml"), "").unwrap();
        let data = inventory_with(&[], &["web1.example.com", "empty"]);
        let source = dir.path().display().to_string();
        let (files, _) = VarsFiles::load(&[source, "a,b".into()], None, &data).unwrap();
        assert_eq!(
            files.host("web1.example.com").next().unwrap()["port"],
            json!(8080)
        );
        assert_eq!(files.host("localhost").next().unwrap()["who"], json!("me"));
        assert_eq!(files.host("empty").count(), 0);
    }

    #[test]
    fn bad_files_and_non_directories() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("host_vars"), "not a dir").unwrap();
        fs::create_dir_all(dir.path().join("group_vars")).unwrap();
        fs::write(dir.path().join("group_vars/all"), "- a list\n").unwrap();
        let data = inventory_with(&[], &[]);
        let source = dir.path().display().to_string();
        let err = VarsFiles::load(std::slice::from_ref(&source), None, &data)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("group_vars/all:1: vars files must contain a dictionary"),
            "{err}"
        );
        fs::write(dir.path().join("group_vars/all"), "a: 1\n").unwrap();
        let (_, warnings) = VarsFiles::load(&[source], None, &data).unwrap();
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].starts_with("Found host_vars that is not a directory, skipping: "));
    }

    #[test]
    fn python_splitext() {
        assert_eq!(splitext_ext("a.yml"), ".yml");
        assert_eq!(splitext_ext(".hidden"), "");
        assert_eq!(splitext_ext("a.b.json"), ".json");
        assert_eq!(splitext_ext("noext"), "");
        assert_eq!(splitext_ext("a."), ".");
    }
}
