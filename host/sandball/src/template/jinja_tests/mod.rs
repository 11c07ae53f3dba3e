//! Ansible's Jinja tests (`x is failed`, `v is version('2', '>=')`, `s is match('a')`),
//! added to (or replacing) minijinja's builtin tests.

mod collections;
mod paths;
mod regex;
mod results;
mod truth;
mod uri;
mod version;

use crate::template::undefined::Plugins;

/// Adds every test.
pub(crate) fn register(env: &mut Plugins<'_>) {
    collections::register(env);
    paths::register(env);
    regex::register(env);
    results::register(env);
    truth::register(env);
    uri::register(env);
    version::register(env);
}
