//! WebAssembly component modules: where they are found, their sha256, their manifest.
//!
//! A component is shipped unchanged; its content address is the sha256 of its bytes and
//! its manifest is read from the `sandball:manifest` custom section (so the sha256 covers
//! it). Components are looked up by module name in the module directories, in order; a
//! collection's name (`ns.coll.name`) in the collections paths, as
//! `ansible_collections/ns/coll/plugins/modules/name.wasm`, a name the collection has no
//! component of routed as its `meta/runtime.yml` says (to another collection's name, or
//! to an `ansible.builtin.` one, found as a built-in).

use sandball_pycompat::fqcn;
use sandball_wire::MANIFEST_SECTION;
use sandball_wire::manifest::Manifest;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// A component ready to ship: bytes, address and manifest.
#[derive(Debug)]
pub struct Component {
    /// Module name: the short form (`file`), or a collection's full name
    /// (`ns.coll.name`) for a collection's component; policy rules match it.
    pub name: String,
    /// Where it was loaded from.
    pub path: PathBuf,
    /// Lowercase hex sha256 of `bytes`.
    pub sha256: String,
    /// The component's bytes.
    pub bytes: Arc<Vec<u8>>,
    /// The embedded manifest.
    pub manifest: Manifest,
    /// Whether it ships with sandball (found in a built-in module directory): the
    /// default policy grants built-ins what their manifests request, others nothing.
    pub builtin: bool,
}

/// Errors finding or reading a module.
#[derive(Debug, thiserror::Error)]
pub enum ModuleError {
    /// No directory holds a component of that name.
    #[error("couldn't resolve module/action '{name}'. Looked for {file} in: {searched}")]
    NotFound {
        /// The name as the task wrote it.
        name: String,
        /// The file name looked for.
        file: String,
        /// The directories searched.
        searched: String,
    },
    /// The file could not be read.
    #[error("cannot read module {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not a component with a valid manifest.
    #[error("{path} is not a sandball module component: {reason}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
}

/// Finds components by name in a list of directories and caches them for the run.
#[derive(Debug)]
pub struct ModuleStore {
    dirs: Vec<PathBuf>,
    /// Directories holding `ansible_collections/`, in search order.
    collections: Vec<PathBuf>,
    loaded: Mutex<HashMap<String, Arc<Component>>>,
    /// The components the playbook's tasks name, in the order they first appear: a
    /// node's session gets them, to compile, as soon as it opens.
    wanted: Mutex<Vec<Arc<Component>>>,
}

impl ModuleStore {
    /// A store searching `dirs` in order.
    pub fn new(dirs: Vec<PathBuf>) -> Self {
        ModuleStore {
            dirs,
            collections: Vec::new(),
            loaded: Mutex::new(HashMap::new()),
            wanted: Mutex::new(Vec::new()),
        }
    }

    /// The same store, finding collections' components (`ns.coll.name`) in these
    /// directories (each holding `ansible_collections/`), in order.
    pub fn with_collections(mut self, collections: Vec<PathBuf>) -> Self {
        self.collections = collections;
        self
    }

    /// Where the component a collection's name (`ns.coll.name`) names is: the first
    /// collections path whose `ns/coll/plugins/modules/` holds `name.wasm`; else, when
    /// the collection routes the name (`meta/runtime.yml`), where the target is. `None`
    /// for a name that is not a collection's, or none there.
    pub fn in_collection(&self, action: &str) -> Option<PathBuf> {
        self.in_collection_routed(action, 0)
    }

    fn in_collection_routed(&self, action: &str, hops: usize) -> Option<PathBuf> {
        let [namespace, collection, name] = collection_name(action)?;
        let roots = || {
            self.collections.iter().map(move |root| {
                root.join("ansible_collections")
                    .join(namespace)
                    .join(collection)
            })
        };
        if let Some(file) = roots()
            .map(|dir| dir.join("plugins/modules").join(format!("{name}.wasm")))
            .find(|f| f.is_file())
        {
            return Some(file);
        }
        if hops >= super::finder::MAX_REDIRECTS {
            return None;
        }
        let target = roots().filter(|dir| dir.is_dir()).find_map(|dir| {
            super::finder::redirect(
                &dir.join("meta/runtime.yml"),
                &format!("{namespace}.{collection}"),
                name,
            )
        })?;
        match collection_name(&target) {
            Some(_) => self.in_collection_routed(&target, hops + 1),
            None => self.builtin_file(&target),
        }
    }

    /// The file of a component in the module directories.
    fn builtin_file(&self, action: &str) -> Option<PathBuf> {
        let file = format!("{}.wasm", fqcn::short_name(action));
        self.dirs
            .iter()
            .map(|d| d.join(&file))
            .find(|p| p.is_file())
    }

    /// The default module directories: `$SANDBALL_MODULE_PATH` (colon-separated), then
    /// the built-in ones ([`ModuleStore::builtin_dirs`]).
    pub fn default_dirs() -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = std::env::var_os("SANDBALL_MODULE_PATH")
            .map(|v| std::env::split_paths(&v).collect())
            .unwrap_or_default();
        dirs.extend(Self::builtin_dirs());
        dirs
    }

    /// Where the built-in modules are ([`crate::layout::builtin_module_dirs`]): the
    /// installed `<prefix>/lib/sandball/modules`, then the build tree's
    /// `target/wasm32-wasip2/wasm/`.
    pub fn builtin_dirs() -> Vec<PathBuf> {
        crate::layout::builtin_module_dirs()
    }

    /// The directories searched, for messages.
    pub fn searched(&self) -> String {
        self.dirs
            .iter()
            .map(|d| d.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The names of the components in the search directories, sorted.
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .dirs
            .iter()
            .filter_map(|d| std::fs::read_dir(d).ok())
            .flat_map(|entries| entries.filter_map(Result::ok))
            .filter_map(|e| {
                let path = e.path();
                (path.extension()? == "wasm")
                    .then(|| path.file_stem()?.to_str().map(str::to_string))?
            })
            .collect();
        names.sort();
        names.dedup();
        names
    }

    /// Whether a component for `action` exists, without loading it.
    pub fn exists(&self, action: &str) -> bool {
        self.file(action).is_some()
    }

    /// The component file `action` names: a collection's, or one of the module
    /// directories'.
    fn file(&self, action: &str) -> Option<PathBuf> {
        match collection_name(action) {
            Some(_) => self.in_collection(action),
            None => self.builtin_file(action),
        }
    }

    /// Loads (once per run) the component a task's action names.
    pub fn get(&self, action: &str) -> Result<Arc<Component>, ModuleError> {
        let name = match collection_name(action) {
            Some(_) => action,
            None => fqcn::short_name(action),
        };
        if let Some(c) = self.lock().get(name) {
            return Ok(c.clone());
        }
        let path = self
            .file(action)
            .ok_or_else(|| match collection_name(action) {
                Some([namespace, collection, short]) => ModuleError::NotFound {
                    name: action.to_string(),
                    file: format!(
                        "ansible_collections/{namespace}/{collection}/plugins/modules/{short}.wasm"
                    ),
                    searched: self
                        .collections
                        .iter()
                        .map(|d| d.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", "),
                },
                None => ModuleError::NotFound {
                    name: action.to_string(),
                    file: format!("{name}.wasm"),
                    searched: self.searched(),
                },
            })?;
        let component = Arc::new(load(name, &path)?);
        self.lock().insert(name.to_string(), component.clone());
        Ok(component)
    }

    /// Notes that a task of the playbook runs the component for `action` (loaded now;
    /// one that cannot be loaded is left for its task to report).
    pub fn want(&self, action: &str) {
        if let Ok(c) = self.get(action) {
            let mut wanted = self.wanted.lock().unwrap_or_else(|e| e.into_inner());
            if !wanted.iter().any(|w| w.sha256 == c.sha256) {
                wanted.push(c);
            }
        }
    }

    /// The components noted by [`ModuleStore::want`], in order.
    pub fn wanted(&self) -> Vec<Arc<Component>> {
        self.wanted
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Component>>> {
        // A poisoned lock only means another thread panicked mid-insert; the map is
        // still a valid cache.
        self.loaded.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The parts of a collection's module name (`ns.coll.name`): `None` for a short name
/// and for Ansible's and sandball's own collections (`ansible.builtin`,
/// `ansible.legacy`, `sandball.builtin`), whose components are the built-in ones.
pub fn collection_name(action: &str) -> Option<[&str; 3]> {
    if fqcn::short_name(action) != action {
        return None;
    }
    let mut parts = action.split('.');
    let found = [parts.next()?, parts.next()?, parts.next()?];
    (parts.next().is_none() && found.iter().all(|p| !p.is_empty())).then_some(found)
}

/// Reads a component file: bytes, sha256, manifest.
pub fn load(name: &str, path: &Path) -> Result<Component, ModuleError> {
    let bytes = std::fs::read(path).map_err(|source| ModuleError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let manifest = read_manifest(&bytes).map_err(|reason| ModuleError::Invalid {
        path: path.to_path_buf(),
        reason,
    })?;
    let builtin = path
        .parent()
        .is_some_and(|dir| ModuleStore::builtin_dirs().iter().any(|b| b == dir));
    Ok(Component {
        name: name.to_string(),
        path: path.to_path_buf(),
        sha256: hex::encode(Sha256::digest(&bytes)),
        bytes: Arc::new(bytes),
        manifest,
        builtin,
    })
}

/// Finds and parses the manifest section of a component: the component's own (which
/// `sandball module pack` writes), else the first one anywhere inside it (the Rust SDK's
/// lives in the core module the component wraps).
pub fn read_manifest(bytes: &[u8]) -> Result<Manifest, String> {
    if !wasmparser::Parser::is_component(bytes) {
        return Err("not a WebAssembly component".into());
    }
    if let Some(section) = top_level_sections(bytes)?
        .into_iter()
        .find(|s| s.is_manifest)
    {
        return Manifest::from_json(&bytes[section.data]).map_err(|e| e.to_string());
    }
    for payload in wasmparser::Parser::new(0).parse_all(bytes) {
        let payload = payload.map_err(|e| format!("malformed component: {e}"))?;
        if let wasmparser::Payload::CustomSection(section) = payload
            && section.name() == MANIFEST_SECTION
        {
            return Manifest::from_json(section.data()).map_err(|e| e.to_string());
        }
    }
    Err(format!("no `{MANIFEST_SECTION}` custom section"))
}

/// One section of a component's own (not of the modules nested in it).
struct Section {
    /// The whole section: id, size and contents.
    whole: std::ops::Range<usize>,
    /// A custom section's data after its name (the whole contents for other sections).
    data: std::ops::Range<usize>,
    /// Whether it is a `sandball:manifest` custom section.
    is_manifest: bool,
}

/// The sections of a component, in order (a nested module or component is one section).
fn top_level_sections(bytes: &[u8]) -> Result<Vec<Section>, String> {
    let malformed = |e: wasmparser::BinaryReaderError| format!("malformed component: {e}");
    let mut reader = wasmparser::BinaryReader::new(bytes.get(8..).unwrap_or_default(), 8);
    let mut sections = Vec::new();
    while !reader.eof() {
        let start = reader.original_position();
        let id = reader.read_u8().map_err(malformed)?;
        let size = reader.read_var_u32().map_err(malformed)?;
        let body_start = reader.original_position();
        let body = reader.read_bytes(size as usize).map_err(malformed)?;
        let end = reader.original_position();
        let (is_manifest, data) = if id == 0 {
            let mut custom = wasmparser::BinaryReader::new(body, body_start);
            let name = custom.read_string().map_err(malformed)?;
            (name == MANIFEST_SECTION, custom.original_position()..end)
        } else {
            (false, body_start..end)
        };
        sections.push(Section {
            whole: start..end,
            data,
            is_manifest,
        });
    }
    Ok(sections)
}

/// An unsigned LEB128 number, as WebAssembly writes sizes.
fn leb128(mut n: usize, out: &mut Vec<u8>) {
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

/// `bytes` (a component) with `manifest` as its own `sandball:manifest` custom section:
/// the sections of that name it has are taken out and the new one is added at the end.
/// A manifest inside a nested module stays, but [`read_manifest`] reads the
/// component's own first.
pub fn with_manifest(bytes: &[u8], manifest: &[u8]) -> Result<Vec<u8>, String> {
    if !wasmparser::Parser::is_component(bytes) {
        return Err("not a WebAssembly component".into());
    }
    let mut out = bytes[..8].to_vec();
    for section in top_level_sections(bytes)? {
        if !section.is_manifest {
            out.extend_from_slice(&bytes[section.whole]);
        }
    }
    let mut contents = Vec::with_capacity(manifest.len() + MANIFEST_SECTION.len() + 2);
    leb128(MANIFEST_SECTION.len(), &mut contents);
    contents.extend_from_slice(MANIFEST_SECTION.as_bytes());
    contents.extend_from_slice(manifest);
    out.push(0);
    leb128(contents.len(), &mut out);
    out.extend_from_slice(&contents);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The smallest component: the preamble of a component, version 0xd, layer 1.
    const EMPTY_COMPONENT: &[u8] = b"\0asm\x0d\0\x01\0";

    #[test]
    fn a_manifest_is_added_then_replaced_and_read_back() {
        let first = with_manifest(EMPTY_COMPONENT, br#"{"name": "one"}"#).unwrap();
        assert_eq!(read_manifest(&first).unwrap().name, "one");
        let long = format!(r#"{{"name": "two", "description": "{}"}}"#, "x".repeat(300));
        let second = with_manifest(&first, long.as_bytes()).unwrap();
        let m = read_manifest(&second).unwrap();
        assert_eq!((m.name.as_str(), m.description.len()), ("two", 300));
        let sections = top_level_sections(&second).unwrap();
        assert_eq!(sections.iter().filter(|s| s.is_manifest).count(), 1);
        assert_eq!(with_manifest(&second, long.as_bytes()).unwrap(), second);
    }

    #[test]
    fn packing_refuses_what_is_not_a_component() {
        assert_eq!(
            with_manifest(b"\0asm\x01\0\0\0", b"{}").unwrap_err(),
            "not a WebAssembly component"
        );
        let mut cut = with_manifest(EMPTY_COMPONENT, br#"{"name": "one"}"#).unwrap();
        cut.truncate(cut.len() - 3);
        assert!(
            with_manifest(&cut, b"{}")
                .unwrap_err()
                .starts_with("malformed component")
        );
    }

    #[test]
    fn missing_module_error_lists_where_it_looked() {
        let store = ModuleStore::new(vec![PathBuf::from("/nonexistent/a")]);
        let err = store.get("nosuch").unwrap_err().to_string();
        assert!(
            err.contains("nosuch.wasm") && err.contains("/nonexistent/a"),
            "{err}"
        );
    }

    #[test]
    fn a_core_module_is_not_a_component() {
        // The smallest core module: magic + version 1.
        let core = b"\0asm\x01\0\0\0";
        assert!(
            read_manifest(core)
                .unwrap_err()
                .contains("not a WebAssembly component")
        );
    }
}
