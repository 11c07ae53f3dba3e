//! Playbook loading (temporary while building).
mod error;
mod location;
mod source;
mod yaml;
