//! Plugins, as Ansible names them: actions (what a task does on the controller), become
//! (running as another user on the node),
//! connections (how the controller reaches a node), shells (how commands are written for
//! the node) and callbacks (what the user sees).

pub mod action;
pub mod r#become;
pub mod callback;
pub mod connection;
pub mod shell;
