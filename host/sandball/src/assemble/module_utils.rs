//! The module_utils a Python module needs: every file it imports from
//! `ansible.module_utils` or a collection's `plugins/module_utils`, found recursively,
//! with the `__init__.py` of every package on the way.
//!
//! Code comes from an installed ansible-core's `ansible` package, from extra
//! module_utils directories (their files are `ansible.module_utils.<name>` and win over
//! ansible-core's), and from collections roots (directories holding
//! `ansible_collections/`).

use super::python_imports::{self, Import};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

/// Where module_utils code comes from.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct CodeRoots {
    /// The installed ansible-core's `ansible` package directory.
    pub ansible: Option<PathBuf>,
    /// Directories whose files are `ansible.module_utils.<name>`.
    pub module_utils: Vec<PathBuf>,
    /// Directories that hold `ansible_collections/`.
    pub collections: Vec<PathBuf>,
}

/// Errors collecting module_utils.
#[derive(Debug, thiserror::Error)]
pub enum ModuleUtilsError {
    /// An imported module_utils file does not exist anywhere.
    #[error(
        "Could not find imported module support code for {importer}. Looked for {name} in: {searched}"
    )]
    Missing {
        /// The module that imports it.
        importer: String,
        /// The dotted name.
        name: String,
        /// Where it was looked for.
        searched: String,
    },
    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// Files for the zip: archive path → contents.
pub type Files = BTreeMap<String, Vec<u8>>;

/// A Python module found on disk.
struct Found {
    /// `a/b/c.py` or `a/b/c/__init__.py`.
    zip_path: String,
    /// The file, or `None` for a package directory without `__init__.py`.
    disk: Option<PathBuf>,
    is_package: bool,
}

impl CodeRoots {
    /// Finds `name` (dotted) in the roots, if it is in a namespace this assembles
    /// (`ansible.*`, `ansible_collections.*`).
    fn locate(&self, name: &str) -> Option<Found> {
        let parts: Vec<&str> = name.split('.').collect();
        let mut candidates: Vec<(PathBuf, &[&str])> = Vec::new();
        match parts.first().copied() {
            Some("ansible") => {
                if parts.len() >= 3 && parts[1] == "module_utils" {
                    for d in &self.module_utils {
                        candidates.push((d.clone(), &parts[2..]));
                    }
                }
                if let Some(a) = &self.ansible {
                    candidates.push((a.clone(), &parts[1..]));
                }
            }
            Some("ansible_collections") => {
                for root in &self.collections {
                    candidates.push((root.join("ansible_collections"), &parts[1..]));
                }
            }
            _ => return None,
        }
        let zip_base = parts.join("/");
        for (base, rest) in candidates {
            let rel: PathBuf = rest.iter().collect();
            let dir = base.join(&rel);
            let file = dir.with_extension("py");
            if !rest.is_empty() && file.is_file() {
                return Some(Found {
                    zip_path: format!("{zip_base}.py"),
                    disk: Some(file),
                    is_package: false,
                });
            }
            if dir.is_dir() {
                let init = dir.join("__init__.py");
                return Some(Found {
                    zip_path: format!("{zip_base}/__init__.py"),
                    disk: init.is_file().then_some(init),
                    is_package: true,
                });
            }
        }
        None
    }

    fn searched(&self) -> String {
        let mut dirs: Vec<String> = self
            .module_utils
            .iter()
            .map(|d| d.display().to_string())
            .collect();
        if let Some(a) = &self.ansible {
            dirs.push(a.join("module_utils").display().to_string());
        }
        dirs.extend(
            self.collections
                .iter()
                .map(|d| d.join("ansible_collections").display().to_string()),
        );
        dirs.join(", ")
    }
}

/// Packages whose real `__init__.py` is controller code: the zip gets an empty one.
const EMPTY_INIT: &[&str] = &["ansible", "ansible.modules", "ansible.legacy"];

/// Collects the module (as `module_fqn`) and everything it imports, recursively, plus
/// the `optional` modules (and what they import) where they exist: code the runtime
/// imports by a computed name, which no import statement shows.
pub fn collect(
    roots: &CodeRoots,
    module_fqn: &str,
    module_src: &[u8],
    optional: &[&str],
) -> Result<Files, ModuleUtilsError> {
    let mut files = Files::new();
    let module_zip = format!("{}.py", module_fqn.replace('.', "/"));
    files.insert(module_zip, module_src.to_vec());
    let mut queue = Pending::new();
    queue.push_back((module_fqn.to_string(), false, module_src.to_vec()));
    let mut seen: BTreeSet<String> = BTreeSet::new();
    seen.insert(module_fqn.to_string());
    add_parents(roots, module_fqn, &mut files, &mut seen, &mut queue)?;
    for name in optional {
        if let Some(found) = roots.locate(name) {
            seen.insert(name.to_string());
            add_parents(roots, name, &mut files, &mut seen, &mut queue)?;
            let bytes = read(&found)?;
            files.insert(found.zip_path, bytes.clone());
            queue.push_back((name.to_string(), found.is_package, bytes));
        }
    }
    while let Some((name, is_package, src)) = queue.pop_front() {
        let text = String::from_utf8_lossy(&src);
        for (target, submodules) in targets(&name, is_package, &python_imports::imports(&text)) {
            if !in_scope(&target) {
                continue;
            }
            let mut wanted = vec![(target.clone(), true)];
            wanted.extend(
                submodules
                    .into_iter()
                    .map(|s| (format!("{target}.{s}"), false)),
            );
            for (dotted, required) in wanted {
                if seen.contains(&dotted) || EMPTY_INIT.contains(&dotted.as_str()) {
                    continue;
                }
                let Some(found) = roots.locate(&dotted) else {
                    if required && needs_code(roots, &dotted) {
                        return Err(ModuleUtilsError::Missing {
                            importer: name.clone(),
                            name: dotted,
                            searched: roots.searched(),
                        });
                    }
                    continue;
                };
                seen.insert(dotted.clone());
                add_parents(roots, &dotted, &mut files, &mut seen, &mut queue)?;
                let bytes = read(&found)?;
                files.insert(found.zip_path.clone(), bytes.clone());
                queue.push_back((dotted, found.is_package, bytes));
            }
        }
    }
    Ok(files)
}

/// What one file's imports ask for: the imported module and, for `from X import a, b`,
/// the names that may be submodules of X.
fn targets(importer: &str, is_package: bool, imports: &[Import]) -> Vec<(String, Vec<String>)> {
    imports
        .iter()
        .filter_map(|imp| match imp {
            Import::Module(m) => Some((m.clone(), vec![])),
            Import::From {
                level,
                module,
                names,
            } => {
                let base = if *level == 0 {
                    module.clone()
                } else {
                    let mut pkg: Vec<&str> = importer.split('.').collect();
                    if !is_package {
                        pkg.pop();
                    }
                    for _ in 1..*level {
                        pkg.pop()?;
                    }
                    if !module.is_empty() {
                        pkg.push(module);
                    }
                    pkg.join(".")
                };
                let subs = names.iter().filter(|n| *n != "*").cloned().collect();
                Some((base, subs))
            }
        })
        .collect()
}

/// Whether a dotted name is in a namespace the zip carries.
fn in_scope(name: &str) -> bool {
    name == "ansible" || name.starts_with("ansible.") || name.starts_with("ansible_collections.")
}

/// Whether a missing module is an error: module_utils code whose top-level name
/// (`ansible.module_utils.<top>`, `….plugins.module_utils.<top>`) does not exist. Deeper
/// names may be attributes a package makes at import time (`six.moves.…`), and a
/// namespace prefix such as `ansible_collections.ns` is not code.
fn needs_code(roots: &CodeRoots, name: &str) -> bool {
    let parts: Vec<&str> = name.split('.').collect();
    let Some(mu) = parts.iter().position(|p| *p == "module_utils") else {
        return false;
    };
    if parts.len() <= mu + 1 {
        return false;
    }
    let top = parts[..=mu + 1].join(".");
    top == name || roots.locate(&top).is_none()
}

fn read(found: &Found) -> Result<Vec<u8>, ModuleUtilsError> {
    match &found.disk {
        Some(p) => std::fs::read(p).map_err(|source| ModuleUtilsError::Read {
            path: p.clone(),
            source,
        }),
        None => Ok(Vec::new()),
    }
}

/// A queue of modules whose imports are still to be followed: dotted name, whether it
/// is a package, source.
type Pending = VecDeque<(String, bool, Vec<u8>)>;

/// Adds the `__init__.py` of every package above `name`, and queues those with code:
/// a package's `__init__.py` runs when anything in it is imported, so its own imports
/// are needed too.
fn add_parents(
    roots: &CodeRoots,
    name: &str,
    files: &mut Files,
    seen: &mut BTreeSet<String>,
    queue: &mut Pending,
) -> Result<(), ModuleUtilsError> {
    let parts: Vec<&str> = name.split('.').collect();
    for end in 1..parts.len() {
        let pkg = parts[..end].join(".");
        let zip_path = format!("{}/__init__.py", pkg.replace('.', "/"));
        if files.contains_key(&zip_path) {
            continue;
        }
        let bytes = if EMPTY_INIT.contains(&pkg.as_str()) {
            Vec::new()
        } else {
            match roots.locate(&pkg) {
                Some(found) if found.is_package => read(&found)?,
                _ => Vec::new(),
            }
        };
        if !bytes.is_empty() && seen.insert(pkg.clone()) {
            queue.push_back((pkg, true, bytes.clone()));
        }
        files.insert(zip_path, bytes);
    }
    Ok(())
}

/// The `ansible` package of an ansible-core installation, from a directory that is
/// either the package itself or a `site-packages` holding it.
pub fn ansible_package(dir: &Path) -> Option<PathBuf> {
    [dir.to_path_buf(), dir.join("ansible")]
        .into_iter()
        .find(|d| d.join("module_utils").join("basic.py").is_file())
}

/// The version of the ansible-core whose `ansible` package is `ansible_pkg`, from its
/// `release.py` (`__version__ = '2.19.4'`), as (major, minor, full text).
pub fn ansible_version(ansible_pkg: &Path) -> Option<(u32, u32, String)> {
    let text = std::fs::read_to_string(ansible_pkg.join("release.py")).ok()?;
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("__version__"))?;
    let full = line.split(['\'', '"']).nth(1)?.to_string();
    let mut parts = full.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts
        .next()?
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .ok()?;
    Some((major, minor, full))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assemble::test_write as write;

    fn tree() -> (tempfile::TempDir, CodeRoots) {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("site/ansible");
        write(
            &a,
            "__init__.py",
            "import ansible.release  # controller code\n",
        );
        write(&a, "module_utils/__init__.py", "");
        write(
            &a,
            "module_utils/basic.py",
            "from .common import text\ntry:\n    import ansible.module_utils.six as six\nexcept ImportError:\n    pass\n",
        );
        write(&a, "module_utils/six/__init__.py", "X = 1\n");
        write(&a, "module_utils/common/__init__.py", "");
        write(
            &a,
            "module_utils/common/text.py",
            "from ..compat import thing\nfrom . import unused_name\n",
        );
        write(&a, "module_utils/compat.py", "thing = 1\n");
        write(
            &a,
            "module_utils/urls.py",
            "import ansible.module_utils.basic\n",
        );
        write(&a, "module_utils/not_imported.py", "");
        write(
            &a,
            "module_utils/facts/__init__.py",
            "from ansible.module_utils.facts.compat import ansible_facts\n",
        );
        write(&a, "module_utils/facts/compat.py", "ansible_facts = 1\n");
        write(&a, "module_utils/facts/utils.py", "x = 1\n");
        let custom = d.path().join("mu");
        write(&custom, "urls.py", "# the playbook's own urls wins\n");
        let coll = d.path().join("colls");
        write(
            &coll,
            "ansible_collections/ns/coll/plugins/module_utils/helper.py",
            "from ansible.module_utils.basic import AnsibleModule\n",
        );
        write(
            &coll,
            "ansible_collections/ns/coll/plugins/modules/thing.py",
            "",
        );
        let roots = CodeRoots {
            ansible: Some(a),
            module_utils: vec![custom],
            collections: vec![coll],
        };
        (d, roots)
    }

    #[test]
    fn imports_are_followed_recursively_with_package_inits() {
        let (_d, roots) = tree();
        let files = collect(
            &roots,
            "ansible.modules.x",
            b"from ansible.module_utils.basic import AnsibleModule\nfrom ansible.module_utils import urls\n",
            &["ansible.module_utils.compat", "ansible.module_utils.absent"],
        )
        .unwrap();
        let names: Vec<&str> = files.keys().map(String::as_str).collect();
        assert_eq!(
            names,
            [
                "ansible/__init__.py",
                "ansible/module_utils/__init__.py",
                "ansible/module_utils/basic.py",
                "ansible/module_utils/common/__init__.py",
                "ansible/module_utils/common/text.py",
                "ansible/module_utils/compat.py",
                "ansible/module_utils/six/__init__.py",
                "ansible/module_utils/urls.py",
                "ansible/modules/__init__.py",
                "ansible/modules/x.py",
            ]
        );
        // Controller code is not shipped; the playbook's module_utils wins.
        assert!(files["ansible/__init__.py"].is_empty());
        assert_eq!(
            files["ansible/module_utils/urls.py"],
            b"# the playbook's own urls wins\n"
        );
    }

    #[test]
    fn what_a_package_init_imports_is_collected_too() {
        let (_d, roots) = tree();
        let files = collect(
            &roots,
            "ansible.legacy.y",
            b"from ansible.module_utils.facts.utils import x\n",
            &[],
        )
        .unwrap();
        assert!(
            files.contains_key("ansible/module_utils/facts/compat.py"),
            "{:?}",
            files.keys()
        );
        assert!(files.contains_key("ansible/module_utils/facts/utils.py"));
    }

    #[test]
    fn collection_modules_use_relative_imports() {
        let (_d, roots) = tree();
        let files = collect(
            &roots,
            "ansible_collections.ns.coll.plugins.modules.thing",
            b"from ..module_utils.helper import x\n",
            &[],
        )
        .unwrap();
        for f in [
            "ansible_collections/__init__.py",
            "ansible_collections/ns/__init__.py",
            "ansible_collections/ns/coll/plugins/__init__.py",
            "ansible_collections/ns/coll/plugins/module_utils/__init__.py",
            "ansible_collections/ns/coll/plugins/module_utils/helper.py",
            "ansible/module_utils/basic.py",
        ] {
            assert!(files.contains_key(f), "{f} missing from {:?}", files.keys());
        }
    }

    #[test]
    fn version_from_release_py() {
        let d = tempfile::tempdir().unwrap();
        write(
            d.path(),
            "release.py",
            "# x\n__version__ = '2.16.19'\n__author__ = 'x'\n",
        );
        assert_eq!(ansible_version(d.path()), Some((2, 16, "2.16.19".into())));
        assert_eq!(ansible_version(&d.path().join("none")), None);
    }

    #[test]
    fn a_missing_module_util_names_itself_and_where_it_looked() {
        let (_d, roots) = tree();
        let err = collect(
            &roots,
            "ansible.modules.x",
            b"from ansible.module_utils.nosuch import y\n",
            &[],
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("ansible.module_utils.nosuch"), "{err}");
        assert!(err.contains("ansible.modules.x"), "{err}");
        assert!(err.contains("site/ansible/module_utils"), "{err}");
    }
}
