//! sandball: runs Ansible-style playbooks from a Rust controller, with modules that are
//! WebAssembly components run by a small shim on each node under a least-privilege
//! grant.
//!
//! One folder per concept, named as Ansible users know them: [`inventory`],
//! [`playbook`], [`template`], [`vars`], [`executor`], [`plugins`] (action, connection,
//! callback), [`assemble`] (finding and preparing modules), [`policy`] (capability
//! grants), [`cli`].

pub mod assemble;
pub mod cli;
pub mod compat;
pub mod config;
pub mod executor;
pub mod inventory;
pub mod layout;
pub mod local_files;
pub mod playbook;
pub mod plugins;
pub mod policy;
pub mod template;
pub mod vars;
pub mod vault;
pub mod yaml;
