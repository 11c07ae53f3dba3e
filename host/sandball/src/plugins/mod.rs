//! Plugins, as Ansible names them: actions (what a task does on the controller),
//! connections (how the controller reaches a node), shells (how commands are written for
//! the node) and callbacks (what the user sees).

pub mod action;
pub mod callback;
pub mod connection;
pub mod shell;
