//! Plugins, as Ansible names them: actions (what a task does on the controller), become
//! (running as another user on the node),
//! connections (how the controller reaches a node), shells (how commands are written for
//! the node), callbacks (what the user sees), and the loader of the Python filter, test
//! and lookup plugins that templates call.

pub mod action;
pub mod r#become;
pub mod callback;
pub mod connection;
pub mod loader;
pub mod shell;
