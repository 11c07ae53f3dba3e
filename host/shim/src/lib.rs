//! `sandball-shim`: the small node-side runner of sandball.
//!
//! It runs WebAssembly component modules (WASI 0.2) under wasmtime with a WASI
//! context built only from the module's grant, either for one persistent session
//! speaking wire frames over stdin/stdout ([`serve`]) or once from the command line
//! ([`cli`]).
//!
//! - [`cli`]: the command line (`serve`, `run`, `version`);
//! - [`serve`]: the session loop;
//! - [`runtime`]: compiling and linking modules once, running them per request;
//! - [`engine`]: the one wasmtime engine, its fingerprint and its epoch ticker;
//! - [`environment`]: the shim's own environment, scrubbed at start (kept in memory
//!   for `env` grants);
//! - [`cache`]: the node's cache directory (stored modules, compiled code);
//! - [`sandbox`]: a grant's directories and the WASI context built from it;
//! - [`limits`]: memory limiter and capped output pipes of one run;
//! - [`outcome`]: how a run's end maps to an outcome;
//! - [`fork_server`]: Python fork servers that run legacy Ansiballz modules without a
//!   Python start-up each;
//! - [`jobs`]: background jobs (`async` with `poll: 0`) that outlive their session;
//! - [`http`]: `wasi:http` for runs granted `net` (grant checks, TLS);
//! - [`host`]: the sandball host interface (`process`, `posix`) checked against the grant;
//! - [`paths`]: home directory, `~`, lexical normalisation;
//! - [`error`]: the shim's errors.

pub mod cache;
pub mod cli;
pub mod engine;
pub mod environment;
pub mod error;
pub mod fork_server;
pub mod groups;
pub mod host;
pub mod http;
pub mod jobs;
pub mod limits;
pub mod outcome;
pub mod paths;
pub mod runtime;
pub mod sandbox;
pub mod serve;
pub mod watchdog;

pub use error::ShimError;
pub use runtime::{RunOutput, Runtime};
