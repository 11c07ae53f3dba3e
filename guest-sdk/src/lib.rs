//! Write sandball modules in Rust: the `AnsibleModule` of WebAssembly.
//!
//! A module is a `wasm32-wasip2` binary whose `main` calls [`run`] with its manifest
//! (embedded by [`manifest!`]) and a body. [`run`] reads the task arguments as JSON on
//! stdin, validates and converts them against the manifest's argument spec (types,
//! aliases, defaults, choices, dependencies, suboptions, `no_log`), handles check mode,
//! calls the body with a [`Module`] and prints the result as one JSON object on stdout.
//!
//! ```text
//! use sandball_guest_sdk::prelude::*;
//! sandball_guest_sdk::manifest!("../manifest.json");
//! fn main() {
//!     sandball_guest_sdk::run(MANIFEST, |m: &mut Module| {
//!         let data = m.get_str("data").unwrap_or("pong").to_string();
//!         Ok(json_map!({"ping": data}))
//!     })
//! }
//! ```
//!
//! The same body runs natively through [`execute`], which is how modules are tested:
//!
//! ```
//! use sandball_guest_sdk::prelude::*;
//! let manifest = r#"{"name": "ping", "argument_spec": {"data": {"default": "pong"}}}"#;
//! let out = sandball_guest_sdk::execute(manifest, br#"{}"#, &|_| None, |m: &mut Module| {
//!     Ok(json_map!({"ping": m.get_str("data")}))
//! });
//! assert_eq!(out.result["ping"], json!("pong"));
//! assert_eq!(out.result["changed"], json!(false));
//! ```
//!
//! - [`accounts`]: users and groups as the node's `getent` gives them;
//! - [`args`]: argument validation (usable on its own, e.g. by the controller);
//! - [`files`]: file common arguments, modes, checksums, atomic writes;
//! - [`host`]: the sandball host interface (running programs, POSIX metadata);
//! - [`http`]: an HTTP client over `wasi:http` (requests checked against `net` grants);
//! - [`pyre`]: Python `re` patterns and replacement templates;
//! - [`program`]: running a node's program as Ansible's `run_command` does;
//! - [`civil`]: UTC calendar times as Python prints them;
//! - [`configparser`]: INI values interpolated as Python's `configparser` does.

pub mod accounts;
pub mod args;
pub mod civil;
pub mod configparser;
mod diff;
mod fail;
pub mod files;
pub mod host;
pub mod http;
mod io_error;
mod manifest;
mod module;
pub mod program;
pub mod pyre;
mod result;
mod run;

pub use diff::Diff;
pub use fail::Fail;
pub use io_error::{
    describe_io_error, leaves_grant, on_node, python_errno, python_os_error, python_os_error_on,
};
pub use module::Module;
pub use result::Outcome;
pub use run::{execute, run, run_with_paths, start};
pub use serde_json::{self, Map, Value, json};

/// Builds a `Map<String, Value>` from a JSON object literal, like [`json!`] does a
/// [`Value`]: `json_map!({"changed": true, "path": path})`.
#[macro_export]
macro_rules! json_map {
    ({ $($body:tt)* }) => {
        match $crate::serde_json::json!({ $($body)* }) {
            $crate::Value::Object(map) => map,
            // `json!` of an object literal is always an object.
            _ => $crate::Map::new(),
        }
    };
}

/// Test helpers for a module's own tests, run natively through [`execute`]:
/// `module_test_helpers!(MANIFEST, body)` defines `run(args) -> (result, failed)`,
/// `ok(args) -> result` (which panics on a failure) and `fails(args) -> msg` (which
/// panics on a success), `args` being a `serde_json::Value`.
#[macro_export]
macro_rules! module_test_helpers {
    ($manifest:expr, $body:expr) => {
        /// Runs the module with `args`; returns the printed result and whether it failed.
        #[allow(dead_code)]
        fn run(args: $crate::Value) -> ($crate::Map<String, $crate::Value>, bool) {
            let input = $crate::serde_json::to_vec(&args).unwrap_or_default();
            let out = $crate::execute($manifest, &input, &|_| None, $body);
            (out.result, out.failed)
        }

        /// The result of a run that must succeed.
        #[allow(dead_code)]
        fn ok(args: $crate::Value) -> $crate::Map<String, $crate::Value> {
            let (r, failed) = run(args);
            assert!(!failed, "unexpected failure: {r:?}");
            r
        }

        /// The message of a run that must fail.
        #[allow(dead_code)]
        fn fails(args: $crate::Value) -> String {
            let (r, failed) = run(args);
            assert!(failed, "expected a failure: {r:?}");
            r.get("msg")
                .and_then($crate::Value::as_str)
                .unwrap_or_default()
                .to_string()
        }
    };
}

/// Everything a module's `main.rs` usually needs.
pub mod prelude {
    pub use crate::{Diff, Fail, Map, Module, Value, files, host, json, json_map};
}
