//! `sandball-shim`: the small node-side runner of sandball.
//!
//! It runs WebAssembly component modules (WASI 0.2) under wasmtime with a WASI
//! context built only from the module's grant, either for one persistent session
//! speaking wire frames over stdin/stdout ([`serve`]) or once from the command line
//! ([`cli`]).
//!
//! - [`cache`]: the node's cache directory (stored modules, compiled code);
//! - [`engine`]: the one wasmtime engine, its fingerprint and its epoch ticker;
//! - [`runtime`]: compiling and linking modules once, running them per request;
//! - [`sandbox`]: a grant's paths, preopened directories and WASI context;
//! - [`outcome`]: resource limits of one run and how a run's end maps to an outcome;
//! - [`host`]: the sandball host interface (`process`, `posix`) checked against the grant;
//! - [`serve`]: the session loop;
//! - [`watchdog`]: ends a session whose module is stuck in a host call past its deadline.

pub mod cache;
pub mod cli;
pub mod engine;
pub mod error;
pub mod host;
pub mod limits;
pub mod outcome;
pub mod paths;
pub mod runtime;
pub mod sandbox;
pub mod serve;
pub mod watchdog;

pub use error::ShimError;
pub use runtime::{RunOutput, Runtime};
