//! Module assembly: finding the code a task names and preparing it for the node.
//!
//! Built-in and third-party components are sent as they are, addressed by sha256
//! ([`component`]). Legacy modules are found by [`finder`], typed by [`module_type`]
//! and assembled by [`legacy`]: new-style Python with [`ansiballz`] (its zip holds the
//! [`module_utils`] the module imports, found by [`python_imports`], written by
//! [`zip`]), JSONARGS and PowerShell with the Module Replacer ([`replacer`],
//! [`powershell`]), WANT_JSON, binary and old-style modules with an [`args_file`];
//! [`interpreter`] settles shebangs and discovers Python. [`action_groups`] reads the
//! collections' routing metadata for `module_defaults`' `group/…` entries.

pub mod action_groups;
pub mod ansiballz;
pub mod args_file;
pub mod component;
pub mod finder;
pub mod interpreter;
pub mod legacy;
pub mod module_type;
pub mod module_utils;
pub mod powershell;
pub mod python_imports;
pub mod replacer;
pub mod zip;

pub use component::{Component, ModuleError, ModuleStore};

/// Test helper: writes `text` to `root/rel`, creating the directories.
#[cfg(test)]
pub(crate) fn test_write(root: &std::path::Path, rel: &str, text: &str) {
    let p = if rel.is_empty() {
        root.to_path_buf()
    } else {
        root.join(rel)
    };
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}
