//! A grant turned into a sandbox: the directories a module may use (each preopened
//! for WASI at its own absolute path, and the confinement root of `posix` calls), the
//! network peers it may connect to, and the WASI context of one run, built from the
//! grant and nothing else.

use crate::limits::Denials;
use crate::paths;
use sandball_wire::capability::{Access, FsGrant, FsScope, Grant, NetHost, NetPattern};
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use wasmtime_wasi::p2::pipe::{MemoryInputPipe, MemoryOutputPipe};
use wasmtime_wasi::sockets::SocketAddrUse;
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder};

/// A grant the shim cannot turn into a sandbox.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// A network grant is not a `host:port` pattern.
    #[error("{0}")]
    BadNet(#[from] sandball_wire::capability::NetPatternError),
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
            Some(r) if r.access < fs.access() => {
                r.access = fs.access();
                r.grant = fs.to_string();
            }
            Some(_) => {}
            None => out.push(Region {
                dir,
                access: fs.access(),
                grant: fs.to_string(),
            }),
        }
    }
    Ok(out)
}

/// The TCP peers a grant allows, with host names resolved once per run, and the
/// connections refused so far.
#[derive(Clone, Default)]
pub struct Network {
    /// Each granted pattern as written, parsed, and the addresses of its host name.
    allowed: Arc<Vec<(String, NetPattern, Vec<IpAddr>)>>,
    denials: Arc<Mutex<Denials>>,
}

impl Network {
    /// Parses the grant's patterns and resolves the host names among them (a name
    /// that does not resolve allows nothing).
    pub fn from_grant(grant: &Grant) -> Result<Network, SandboxError> {
        let mut allowed = Vec::new();
        for text in &grant.net {
            let pattern = NetPattern::parse(text)?;
            let resolved = match &pattern.host {
                NetHost::Name(name) => (name.as_str(), 0)
                    .to_socket_addrs()
                    .map(|addrs| addrs.map(|a| a.ip()).collect())
                    .unwrap_or_default(),
                _ => Vec::new(),
            };
            allowed.push((text.clone(), pattern, resolved));
        }
        Ok(Network {
            allowed: Arc::new(allowed),
            denials: Arc::default(),
        })
    }

    /// Whether a socket may use `addr` for `usage`: connections to granted peers,
    /// and the implicit bind to the wildcard address a connection makes first.
    /// Listening, accepting and explicit binds are never granted; UDP is off.
    pub fn allows(&self, addr: SocketAddr, usage: SocketAddrUse) -> bool {
        match usage {
            SocketAddrUse::TcpBind => {
                !self.allowed.is_empty() && addr.ip().is_unspecified() && addr.port() == 0
            }
            SocketAddrUse::TcpConnect => {
                let ok = self
                    .allowed
                    .iter()
                    .any(|(_, p, resolved)| p.matches(addr, resolved));
                if !ok {
                    self.deny(addr, "connect to");
                }
                ok
            }
            SocketAddrUse::TcpListen | SocketAddrUse::TcpAccept => {
                self.deny(addr, "listen on");
                false
            }
            SocketAddrUse::UdpBind | SocketAddrUse::UdpSend | SocketAddrUse::UdpReceive => false,
        }
    }

    fn deny(&self, addr: SocketAddr, what: &str) {
        let granted: Vec<&str> = self.allowed.iter().map(|(t, _, _)| t.as_str()).collect();
        let reason = if granted.is_empty() {
            format!("network {what} {addr} denied: the grant allows no network connections")
        } else {
            format!(
                "network {what} {addr} denied: the grant allows TCP connections to [{}] only",
                granted.join(", ")
            )
        };
        let mut denials = self.denials.lock().unwrap_or_else(|e| e.into_inner());
        denials.push(format!("net {addr}"), reason);
    }

    /// Takes the denials recorded so far.
    pub fn take_denials(&self) -> Denials {
        std::mem::take(&mut *self.denials.lock().unwrap_or_else(|e| e.into_inner()))
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
/// values the shim started with, see [`crate::environment`]; unset ones are left
/// out), arguments `[module]`, the given stdio,
/// no TCP unless the grant has `net` patterns (then every address is checked against
/// `network`, which records refusals), no UDP, and name lookups only when the grant
/// says `dns`.
pub fn wasi_ctx(
    module: &str,
    grant: &Grant,
    regions: &[Region],
    network: &Network,
    stdio: Stdio,
) -> Result<WasiCtx, SandboxError> {
    let mut b = WasiCtxBuilder::new();
    let check = network.clone();
    b.arg(module)
        .stdin(MemoryInputPipe::new(stdio.stdin))
        .stdout(stdio.stdout)
        .stderr(stdio.stderr)
        .allow_tcp(!grant.net.is_empty())
        .socket_addr_check(move |addr, usage| {
            let ok = check.allows(addr, usage);
            Box::pin(async move { ok })
        })
        .allow_udp(false)
        .allow_ip_name_lookup(grant.dns);
    for name in &grant.env {
        if let Some(value) = crate::environment::original(name).and_then(|v| v.into_string().ok()) {
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
            ops: access.into(),
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
    fn network_grants_allow_their_peers_and_record_the_rest() {
        let addr = |s: &str| s.parse::<SocketAddr>().unwrap();
        let none = Network::from_grant(&Grant::default()).unwrap();
        assert!(!none.allows(addr("0.0.0.0:0"), SocketAddrUse::TcpBind));
        assert!(!none.allows(addr("127.0.0.1:80"), SocketAddrUse::TcpConnect));
        let grant = Grant {
            net: vec!["127.0.0.1:8000-8001".into(), "localhost:9000".into()],
            ..Grant::default()
        };
        let net = Network::from_grant(&grant).unwrap();
        assert!(net.allows(addr("0.0.0.0:0"), SocketAddrUse::TcpBind));
        assert!(!net.allows(addr("0.0.0.0:8000"), SocketAddrUse::TcpBind));
        assert!(net.allows(addr("127.0.0.1:8001"), SocketAddrUse::TcpConnect));
        assert!(net.allows(addr("127.0.0.1:9000"), SocketAddrUse::TcpConnect));
        assert!(!net.allows(addr("127.0.0.1:8002"), SocketAddrUse::TcpConnect));
        assert!(!net.allows(addr("0.0.0.0:8000"), SocketAddrUse::TcpListen));
        let denials = net.take_denials();
        assert_eq!(denials.len(), 2);
        assert_eq!(denials[0].capability, "net 127.0.0.1:8002");
        assert!(net.take_denials().is_empty());
        let bad = Grant {
            net: vec!["no port".into()],
            ..Grant::default()
        };
        assert!(Network::from_grant(&bad).is_err());
    }
}
