//! Playbook loading (temporary while building).
mod attribute;
mod error;
mod keywords;
mod location;
mod loop_control;
mod mod_args;
mod source;
mod splitter;
mod yaml;
