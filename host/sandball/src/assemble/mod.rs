//! Module assembly: finding the code a task names and preparing it for the node.
//!
//! Built-in and third-party components are sent as they are, addressed by sha256
//! ([`component`]). The legacy assemblers (Ansiballz, Module Replacer, WANT_JSON, binary,
//! old-style) join this folder when legacy modules are supported.

pub mod component;

pub use component::{Component, ModuleError, ModuleStore};
