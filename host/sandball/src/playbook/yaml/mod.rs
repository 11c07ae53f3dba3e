//! YAML as Ansible reads it: a marked node tree built from saphyr-parser events, typed by
//! the YAML 1.1 rules of Ansible's loader.

mod loader;
mod node;
mod reindent;
mod resolver;

pub(crate) use loader::{Document, load, load_all};
pub(crate) use node::{Node, Yaml};
pub use node::{UNSAFE_KEY, VAULT_KEY};
