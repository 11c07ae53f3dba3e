//! A grant turned into a sandbox: the directories a module may use (`regions`: each
//! preopened for WASI at its own absolute path, and the confinement root of `posix`
//! calls), the network peers it may connect to (`network`), and the WASI context of
//! one run, built from the grant and nothing else.

pub mod network;
pub mod regions;

use crate::paths::{self, Places};
use network::Network;
use regions::Region;
use sandball_wire::capability::{Access, Grant, is_node_place};
use std::path::PathBuf;
use wasmtime_wasi::p2::pipe::{MemoryInputPipe, MemoryOutputPipe};
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
    /// The directory a grant opens is reached through a symlink to a place the grant
    /// does not name.
    #[error(
        "{grant}: {} resolves to {} through a symlink, which the grant does not cover; grant the real path",
        path.display(),
        real.display()
    )]
    Symlinked {
        /// The grant, as policy wrote it.
        grant: String,
        /// The directory as the grant names it.
        path: PathBuf,
        /// Where it resolves to on the node.
        real: PathBuf,
    },
    /// A granted directory lies inside a denied path, or holds one.
    #[error(
        "{grant}: it opens {}, and the policy denies {denied}{}; a denial wins over any grant",
        real.display(),
        if denied_real.as_os_str().is_empty() { String::new() } else { format!(" (which resolves to {})", denied_real.display()) }
    )]
    Denied {
        /// The grant, as policy wrote it.
        grant: String,
        /// The opened directory, resolved.
        real: PathBuf,
        /// The deny entry.
        denied: String,
        /// Where the deny entry resolves to on the node (empty for patterns).
        denied_real: PathBuf,
    },
    /// A read-write grant overlaps sandball's own files (its cache, the shim).
    #[error(
        "{grant}: it opens {} read-write, which overlaps sandball's own {} (a module could replace the code the shim runs); grant a path that neither holds it nor lies inside it",
        real.display(),
        protected.display()
    )]
    Protected {
        /// The grant, as policy wrote it.
        grant: String,
        /// The opened directory, resolved.
        real: PathBuf,
        /// The protected path it overlaps.
        protected: PathBuf,
    },
    /// A grant would expose process information under `/proc`.
    #[error("{grant}: {reason}")]
    Proc {
        /// The grant, as policy wrote it.
        grant: String,
        /// What it would expose.
        reason: String,
    },
    /// A granted directory has a name WASI cannot carry (not UTF-8).
    #[error("{grant}: {} is not valid UTF-8, which WASI paths must be", path.display())]
    NotUtf8 {
        /// The grant, as policy wrote it.
        grant: String,
        /// The resolved path.
        path: PathBuf,
    },
    /// A granted directory could not be opened (or created).
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

/// Standard streams of one run.
pub struct Stdio {
    /// The module's stdin: the arguments as JSON.
    pub stdin: Vec<u8>,
    /// Where the module's stdout goes.
    pub stdout: MemoryOutputPipe,
    /// Where the module's stderr goes.
    pub stderr: MemoryOutputPipe,
}

/// What a module learns of where it runs: the environment variables it is given and
/// its initial working directory (WASI's `initial-cwd`).
#[derive(Debug, Default, PartialEq)]
pub struct ModuleEnv {
    /// `(name, value)` pairs.
    pub vars: Vec<(String, String)>,
    /// Where relative paths start, when the grant resolved a relative path there.
    pub cwd: Option<String>,
}

/// A module's environment, from its grant alone: the granted variables with the
/// values the shim started with (unset ones left out); `HOME` also when the grant
/// names a path under `~` (the module expands `~` in its arguments as the grant did);
/// `TMPDIR` when the grant opens the node's temporary directory (the module cannot
/// know it otherwise). Its working directory is given when the grant names a relative
/// path, which was resolved there. A module granted nothing of the kind learns
/// neither its home nor its working directory.
pub fn module_env(places: &Places, grant: &Grant) -> ModuleEnv {
    let home_named = |p: &str| p == "~" || p.starts_with("~/");
    let relative = |p: &str| !p.starts_with('/') && !home_named(p) && !is_node_place(p);
    let mut env = ModuleEnv::default();
    let mut own: Vec<&str> = Vec::new();
    if grant.fs.iter().any(|g| home_named(&g.path))
        && let Some(dir) = places.home.to_str()
    {
        env.vars.push(("HOME".to_string(), dir.to_string()));
        own.push("HOME");
    }
    if grant.fs.iter().any(|g| is_node_place(&g.path))
        && let Some(dir) = paths::node_tmpdir(places).to_str()
    {
        // A granted TMPDIR gives way to the resolved one.
        env.vars.push(("TMPDIR".to_string(), dir.to_string()));
        own.push("TMPDIR");
    }
    for name in grant.env.iter().filter(|n| !own.contains(&n.as_str())) {
        if let Some(value) = crate::environment::original(name).and_then(|v| v.into_string().ok()) {
            env.vars.push((name.clone(), value));
        }
    }
    if grant.fs.iter().any(|g| relative(&g.path)) {
        env.cwd = places.cwd.to_str().map(str::to_string);
    }
    env
}

/// Builds the WASI context of one run: the regions preopened at their own paths
/// (read-only or read-write), the environment and working directory [`module_env`]
/// gives (see
/// [`crate::environment`]), arguments `[module]`, the given stdio,
/// no TCP unless the grant has `net` patterns (then every address is checked against
/// `network`, which records refusals), no UDP, and name lookups only when the grant
/// says `dns`.
pub fn wasi_ctx(
    module: &str,
    places: &Places,
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
    let env = module_env(places, grant);
    for (name, value) in env.vars {
        b.env(name, value);
    }
    if let Some(cwd) = env.cwd {
        b.initial_cwd(cwd);
    }
    for r in regions.iter().filter(|r| !r.only_itself) {
        let perms = match r.access {
            Access::Read => FsPerms::ReadOnly,
            Access::ReadWrite => FsPerms::ReadWrite,
        };
        let guest = r.guest.to_str().ok_or_else(|| SandboxError::NotUtf8 {
            grant: r.grant.clone(),
            path: r.guest.clone(),
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
