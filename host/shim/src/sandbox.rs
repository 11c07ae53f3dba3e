//! A grant turned into a sandbox: the directories a module may use (each preopened
//! for WASI at its own absolute path, and the confinement root of `posix` calls) and
//! the WASI context of one run, built from the grant and nothing else.

use crate::paths;
use sandball_wire::capability::{Access, FsGrant, FsScope, Grant};
use std::path::{Path, PathBuf};
use wasmtime_wasi::p2::pipe::{MemoryInputPipe, MemoryOutputPipe};
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder};

/// A grant the shim cannot turn into a sandbox.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// The grant asks for network access, which the shim does not implement yet.
    #[error(
        "network grants are not supported yet: the grant asks for net {0}; remove the net capability or run the module without the shim"
    )]
    NetUnsupported(String),
    /// A tree grant names something that is not an existing directory.
    #[error("{grant}: {} is not an existing directory", path.display())]
    NotADirectory {
        /// The grant, as policy wrote it.
        grant: String,
        /// The resolved path.
        path: PathBuf,
    },
    /// A granted directory has a name WASI cannot carry (not UTF-8).
    #[error("{grant}: {} is not valid UTF-8, which WASI paths must be", path.display())]
    NotUtf8 {
        /// The grant, as policy wrote it.
        grant: String,
        /// The resolved path.
        path: PathBuf,
    },
    /// A granted directory could not be opened.
    #[error("{grant}: cannot open {}: {message}", path.display())]
    Open {
        /// The grant, as policy wrote it.
        grant: String,
        /// The directory.
        path: PathBuf,
        /// The OS's explanation.
        message: String,
    },
}

/// One directory a module may use, with the access the grant gives to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Region {
    /// Absolute, normalised path of the directory on the node (and in the guest).
    pub dir: PathBuf,
    /// Read or read-write.
    pub access: Access,
    /// The grant it came from, for messages.
    pub grant: String,
}

/// The directory a grant opens: for an entry, the directory that holds it (its
/// nearest existing ancestor when it does not exist yet); for a tree, the path.
fn region_dir(fs: &FsGrant, home: &Path) -> Result<PathBuf, SandboxError> {
    let path = paths::absolute(&fs.path, home);
    match fs.scope {
        FsScope::Tree => {
            if path.is_dir() {
                Ok(path)
            } else {
                Err(SandboxError::NotADirectory {
                    grant: fs.to_string(),
                    path,
                })
            }
        }
        FsScope::Entry => {
            let mut dir = path.parent().unwrap_or(Path::new("/"));
            while !dir.is_dir() {
                match dir.parent() {
                    Some(up) => dir = up,
                    None => break,
                }
            }
            Ok(dir.to_path_buf())
        }
    }
}

/// The directories of a grant's fs entries, one per directory with the strongest
/// access granted to it, in the order they were first granted.
pub fn regions(grant: &Grant, home: &Path) -> Result<Vec<Region>, SandboxError> {
    let mut out: Vec<Region> = Vec::new();
    for fs in &grant.fs {
        let dir = region_dir(fs, home)?;
        if dir.to_str().is_none() {
            return Err(SandboxError::NotUtf8 {
                grant: fs.to_string(),
                path: dir,
            });
        }
        match out.iter_mut().find(|r| r.dir == dir) {
            Some(r) if r.access < fs.access => {
                r.access = fs.access;
                r.grant = fs.to_string();
            }
            Some(_) => {}
            None => out.push(Region {
                dir,
                access: fs.access,
                grant: fs.to_string(),
            }),
        }
    }
    Ok(out)
}

/// Refuses grants the shim cannot enforce.
pub fn check_supported(grant: &Grant) -> Result<(), SandboxError> {
    if grant.net.is_empty() {
        Ok(())
    } else {
        Err(SandboxError::NetUnsupported(grant.net.join(", ")))
    }
}

/// Standard streams of one run.
pub struct Stdio {
    /// The module's stdin: the arguments as JSON.
    pub stdin: Vec<u8>,
    /// Where the module's stdout goes.
    pub stdout: MemoryOutputPipe,
    /// Where the module's stderr goes.
    pub stderr: MemoryOutputPipe,
}

/// Builds the WASI context of one run: the regions preopened at their own paths
/// (read-only or read-write), only the granted environment variables (with the
/// shim's values; unset ones are left out), arguments `[module]`, the given stdio,
/// and no network at all (no TCP, no UDP, no name lookup).
pub fn wasi_ctx(
    module: &str,
    grant: &Grant,
    regions: &[Region],
    stdio: Stdio,
) -> Result<WasiCtx, SandboxError> {
    let mut b = WasiCtxBuilder::new();
    b.arg(module)
        .stdin(MemoryInputPipe::new(stdio.stdin))
        .stdout(stdio.stdout)
        .stderr(stdio.stderr)
        .allow_tcp(false)
        .allow_udp(false)
        .allow_ip_name_lookup(false);
    for name in &grant.env {
        if let Ok(value) = std::env::var(name) {
            b.env(name, value);
        }
    }
    for r in regions {
        let perms = match r.access {
            Access::Read => FsPerms::ReadOnly,
            Access::ReadWrite => FsPerms::ReadWrite,
        };
        let guest = r.dir.to_str().ok_or_else(|| SandboxError::NotUtf8 {
            grant: r.grant.clone(),
            path: r.dir.clone(),
        })?;
        b.preopened_dir(&r.dir, guest, perms)
            .map_err(|e| SandboxError::Open {
                grant: r.grant.clone(),
                path: r.dir.clone(),
                message: format!("{e:#}"),
            })?;
    }
    Ok(b.build())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fs(path: &str, access: Access, scope: FsScope) -> FsGrant {
        FsGrant {
            path: path.to_string(),
            access,
            scope,
        }
    }

    #[test]
    fn entries_open_their_directory_and_trees_themselves() {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path();
        std::fs::create_dir(base.join("tree")).unwrap();
        std::fs::write(base.join("file"), b"x").unwrap();
        let grant = Grant {
            fs: vec![
                fs(
                    base.join("file").to_str().unwrap(),
                    Access::Read,
                    FsScope::Entry,
                ),
                fs(
                    base.join("tree").to_str().unwrap(),
                    Access::ReadWrite,
                    FsScope::Tree,
                ),
                // Not there yet: its nearest existing ancestor is opened.
                fs(
                    base.join("new/deeper/file").to_str().unwrap(),
                    Access::ReadWrite,
                    FsScope::Entry,
                ),
            ],
            ..Grant::default()
        };
        let got = regions(&grant, Path::new("/nonexistent-home")).unwrap();
        let dirs: Vec<_> = got.iter().map(|r| (r.dir.clone(), r.access)).collect();
        assert_eq!(
            dirs,
            vec![
                (base.to_path_buf(), Access::ReadWrite),
                (base.join("tree"), Access::ReadWrite),
            ]
        );
    }

    #[test]
    fn same_directory_keeps_the_strongest_access() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().to_str().unwrap();
        let grant = Grant {
            fs: vec![
                fs(dir, Access::Read, FsScope::Tree),
                fs(&format!("{dir}/a"), Access::Read, FsScope::Entry),
            ],
            ..Grant::default()
        };
        let got = regions(&grant, Path::new("/")).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].access, Access::Read);
    }

    #[test]
    fn relative_grants_are_taken_from_home_and_missing_trees_refused() {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir(home.path().join("work")).unwrap();
        let grant = Grant {
            fs: vec![fs("~/work", Access::Read, FsScope::Tree)],
            ..Grant::default()
        };
        assert_eq!(
            regions(&grant, home.path()).unwrap()[0].dir,
            home.path().join("work")
        );
        let grant = Grant {
            fs: vec![fs("missing", Access::Read, FsScope::Tree)],
            ..Grant::default()
        };
        let err = regions(&grant, home.path()).unwrap_err();
        assert!(
            err.to_string().contains("is not an existing directory"),
            "{err}"
        );
    }

    #[test]
    fn network_grants_are_refused_clearly() {
        let grant = Grant {
            net: vec!["example.org:443".into()],
            ..Grant::default()
        };
        let err = check_supported(&grant).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("network grants are not supported yet")
        );
        assert!(check_supported(&Grant::default()).is_ok());
    }
}
