//! The variables visible to one task on one host, as the templating engine sees them:
//! each is either trusted (its strings are templates) or data (never templated).

use std::sync::Arc;

use indexmap::IndexMap;

/// The variables visible to one task on one host, flattened by the caller in precedence
/// order (a later `set_*` of the same name replaces the earlier value).
///
/// Cloning is cheap (the table is shared until one of the clones is changed), so a caller
/// can build the variables of a play once and add per-task values to a clone.
#[derive(Clone, Debug, Default)]
pub struct Vars {
    entries: Arc<IndexMap<String, Entry>>,
}

/// One stored variable.
#[derive(Clone, Debug)]
pub(crate) enum Entry {
    /// From the playbook, inventory, vars files, extra vars: strings are templates.
    Trusted(Arc<serde_json::Value>),
    /// From a module or the facts: strings are literal text.
    Data(Arc<serde_json::Value>),
    /// `hostvars`: every host's own variables, each templated in its own host's scope.
    Hosts(Arc<dyn HostVarsSource>),
}

/// Where `hostvars` finds each host's variables. The executor's source builds them
/// when a template first asks for a host (a play of ten hosts in an inventory of ten
/// thousand does not pay for the rest); a map of ready [`Vars`] serves too.
pub trait HostVarsSource: Send + Sync + std::fmt::Debug {
    /// The hosts `hostvars` lists, in inventory order.
    fn hosts(&self) -> Vec<String>;
    /// One host's variables, or `None` for a host that does not exist.
    fn vars(&self, host: &str) -> Option<Vars>;
}

impl HostVarsSource for IndexMap<String, Vars> {
    fn hosts(&self) -> Vec<String> {
        self.keys().cloned().collect()
    }

    fn vars(&self, host: &str) -> Option<Vars> {
        self.get(host).cloned()
    }
}

/// A variable as it is stored, before any templating.
#[derive(Clone, Copy, Debug)]
pub enum Var<'a> {
    /// A trusted value (see [`Vars::set_trusted`]).
    Trusted(&'a serde_json::Value),
    /// A data value (see [`Vars::set_data`]).
    Data(&'a serde_json::Value),
    /// Other hosts' variables (see [`Vars::set_hostvars`]).
    Hosts(&'a dyn HostVarsSource),
}

impl Vars {
    /// No variables.
    pub fn new() -> Vars {
        Vars::default()
    }

    /// Sets a value from the playbook, inventory, vars files, extra vars or `set_fact`:
    /// strings in it that contain templates are rendered lazily when used, recursively
    /// (`a: "{{ b }}"`, `b: "{{ c }}"`); a variable that refers back to itself is an error.
    pub fn set_trusted(&mut self, name: &str, value: serde_json::Value) {
        self.insert(name, Entry::Trusted(Arc::new(value)));
    }

    /// Sets a value that must never be templated again: a registered module result, the
    /// facts (Ansible's "unsafe" values). `{{ r.stdout }}` yields the text as it is, even
    /// when it looks like a template.
    pub fn set_data(&mut self, name: &str, value: serde_json::Value) {
        self.insert(name, Entry::Data(Arc::new(value)));
    }

    /// [`set_data`](Self::set_data) for a value many variable tables share (the
    /// inventory's `groups`), without copying it.
    pub fn set_shared_data(&mut self, name: &str, value: Arc<serde_json::Value>) {
        self.insert(name, Entry::Data(value));
    }

    /// Sets `hostvars`: the variables of every host by host name. `hostvars[h].x` is
    /// templated lazily against host `h`'s own variables.
    pub fn set_hostvars(&mut self, hosts: Arc<dyn HostVarsSource>) {
        self.insert("hostvars", Entry::Hosts(hosts));
    }

    /// The variable `name` as stored, untemplated.
    pub fn get(&self, name: &str) -> Option<Var<'_>> {
        self.entries.get(name).map(|entry| match entry {
            Entry::Trusted(value) => Var::Trusted(value),
            Entry::Data(value) => Var::Data(value),
            Entry::Hosts(hosts) => Var::Hosts(hosts.as_ref()),
        })
    }

    /// Whether `name` is set.
    pub fn contains(&self, name: &str) -> bool {
        self.entries.contains_key(name)
    }

    /// The names of all variables, in the order they were first set.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.keys().map(String::as_str)
    }

    /// The stored entry of `name`.
    pub(crate) fn entry(&self, name: &str) -> Option<&Entry> {
        self.entries.get(name)
    }

    fn insert(&mut self, name: &str, entry: Entry) {
        let entry = match (self.entries.get(name), entry) {
            (Some(old), new) if crate::config::merge_hashes() => merged(old, new),
            (_, new) => new,
        };
        Arc::make_mut(&mut self.entries).insert(name.to_string(), entry);
    }
}

/// `new` over `old` with `hash_behaviour = merge`: mappings merge (see
/// [`sandball_pycompat::merge::merge_values`]); a mapping of data merged with a trusted one keeps its
/// text marked untrusted, so that it is never templated.
fn merged(old: &Entry, new: Entry) -> Entry {
    let untrusted = |v: &serde_json::Value| super::trust::untrusted(v.clone());
    match (old, new) {
        (Entry::Trusted(old), Entry::Trusted(new)) if old.is_object() && new.is_object() => {
            Entry::Trusted(Arc::new(sandball_pycompat::merge::merge_values(
                Some(old),
                (*new).clone(),
            )))
        }
        (Entry::Data(old), Entry::Data(new)) if old.is_object() && new.is_object() => {
            Entry::Data(Arc::new(sandball_pycompat::merge::merge_values(
                Some(old),
                (*new).clone(),
            )))
        }
        (Entry::Trusted(old), Entry::Data(new)) if old.is_object() && new.is_object() => {
            Entry::Trusted(Arc::new(sandball_pycompat::merge::merge_values(
                Some(old),
                untrusted(&new),
            )))
        }
        (Entry::Data(old), Entry::Trusted(new)) if old.is_object() && new.is_object() => {
            Entry::Trusted(Arc::new(sandball_pycompat::merge::merge_values(
                Some(&untrusted(old)),
                (*new).clone(),
            )))
        }
        (_, new) => new,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn later_values_replace_earlier_ones() {
        let mut vars = Vars::new();
        vars.set_trusted("a", json!("{{ b }}"));
        vars.set_data("a", json!("{{ c }}"));
        assert!(matches!(vars.get("a"), Some(Var::Data(v)) if *v == json!("{{ c }}")));
        assert!(vars.contains("a"));
        assert!(!vars.contains("b"));
        assert!(vars.get("b").is_none());
    }

    #[test]
    fn clones_are_independent() {
        let mut play = Vars::new();
        play.set_trusted("x", json!(1));
        let mut task = play.clone();
        task.set_trusted("y", json!(2));
        assert!(!play.contains("y"));
        assert_eq!(task.names().collect::<Vec<_>>(), ["x", "y"]);
    }

    #[test]
    fn hostvars_are_stored_by_host() {
        let mut web = Vars::new();
        web.set_trusted("port", json!(80));
        let mut vars = Vars::new();
        vars.set_hostvars(Arc::new(IndexMap::from([("web".to_string(), web)])));
        match vars.get("hostvars") {
            Some(Var::Hosts(hosts)) => {
                assert!(hosts.vars("web").is_some_and(|w| w.contains("port")));
                assert_eq!(hosts.hosts(), ["web"]);
            }
            other => panic!("unexpected {other:?}"),
        }
    }
}
