//! Errors of the shim: each becomes the message of an `Error` response (in a
//! session) or of the one-shot `run` command, so each says what was wrong and where.

use crate::sandbox::SandboxError;
use std::path::PathBuf;

/// An error serving one request.
#[derive(Debug, thiserror::Error)]
pub enum ShimError {
    /// A file or directory operation on the node failed.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        /// What was being done ("create directory", "read", …).
        action: &'static str,
        /// The path it was done to.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// A content address is not a lowercase hex sha256.
    #[error("{0:?} is not a sha256 (64 lowercase hex digits)")]
    BadSha(String),
    /// A module's bytes do not hash to the address they were sent under.
    #[error("module payload has sha256 {actual}, not the announced {expected}; it was not stored")]
    ShaMismatch {
        /// The announced address.
        expected: String,
        /// The payload's real sha256.
        actual: String,
    },
    /// A module's gzip-compressed payload could not be decompressed.
    #[error(
        "module payload for {sha} is not a gzip stream this shim can read ({source}); it was not stored"
    )]
    Gunzip {
        /// The announced address.
        sha: String,
        /// What was wrong with it.
        source: std::io::Error,
    },
    /// A batch of modules ([`sandball_wire::protocol::Request::PutModules`]) could not
    /// be read: its xz stream is bad, or its length is not the modules' lengths added.
    #[error("the modules' payload {0}; no module of it was stored")]
    BadBatch(String),
    /// A run named a module this node does not hold.
    #[error("module {0} is not stored on this node; send it with put-module first")]
    UnknownModule(String),
    /// A stored module no longer matches its address (or others could have changed
    /// it); it was removed, and the controller sends it again.
    #[error("the stored module {} is corrupt ({problem}); it was removed: send it again with put-module", path.display())]
    CorruptModule {
        /// The module's address.
        sha: String,
        /// Where it was stored.
        path: PathBuf,
        /// What is wrong with it.
        problem: String,
    },
    /// The module is not a valid component, or wasmtime could not compile it.
    #[error("cannot compile module {module}: {message}")]
    Compile {
        /// The module's name or address.
        module: String,
        /// wasmtime's explanation.
        message: String,
    },
    /// The module imports something the shim does not provide, or does not export
    /// `wasi:cli/run`.
    #[error("cannot link module {module}: {message}")]
    Link {
        /// The module's name or address.
        module: String,
        /// wasmtime's explanation.
        message: String,
    },
    /// The wasmtime engine could not be set up.
    #[error("cannot set up the wasmtime engine: {0}")]
    Engine(String),
    /// A path the cache relies on (the cache, the shim, a directory above them) could
    /// be changed by someone other than the shim's user and root.
    #[error(
        "refusing to use {}: {problem}; the shim's cache (--cache-dir, SANDBALL_CACHE_DIR, sandball_cache_dir), the shim itself and every directory above them must be owned by the shim's user (uid {uid}) or root and not writable by group or others",
        path.display()
    )]
    Untrusted {
        /// The offending path.
        path: PathBuf,
        /// What is wrong with it.
        problem: String,
        /// The shim's effective user id.
        uid: u32,
    },
    /// The grant could not be turned into a sandbox.
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    /// A background job request that cannot be served (bad job id, job exists, …).
    #[error("{0}")]
    Job(String),
}

impl ShimError {
    /// The module this error says the shim does not hold intact (it was never
    /// stored, or its stored copy was corrupt and removed): the controller sends it
    /// again.
    pub fn missing_module(&self) -> Option<&str> {
        match self {
            ShimError::UnknownModule(sha) | ShimError::CorruptModule { sha, .. } => Some(sha),
            _ => None,
        }
    }

    /// Builds an [`ShimError::Io`] for `action` on `path`.
    pub fn io(action: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        ShimError::Io {
            action,
            path: path.into(),
            source,
        }
    }
}
