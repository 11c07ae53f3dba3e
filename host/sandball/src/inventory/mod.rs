//! Inventory: which hosts exist, how they are grouped, and their inventory variables, as
//! Ansible builds them from `-i` sources.
//!
//! [`Inventory::load`] reads the sources with the enabled source plugins (one file per
//! plugin: [`host_list`], [`script`], [`auto`] (which hands config files to
//! [`constructed`]), [`yaml`], [`ini`], [`toml`]; tried in that order, see [`plugin`]), reconciles the result
//! ([`data`]), and reads `group_vars/` and `host_vars/` beside each source
//! ([`vars_files`]). [`Inventory::select`] evaluates host patterns ([`pattern`]),
//! [`Inventory::host_vars`] merges a host's variables ([`vars`]).

pub mod address;
pub mod auto;
pub mod cache;
pub mod constructed;
pub mod data;
pub mod error;
pub mod host_list;
pub mod ini;
pub mod listing;
pub mod pattern;
pub mod plugin;
pub mod range;
pub mod script;
pub mod sources;
pub mod toml;
pub mod vars;
pub mod vars_files;
pub mod yaml;
pub mod yaml_load;

pub use data::{Group, Host, InventoryData, Notice};
pub use error::InventoryError;
pub use sources::LoadOptions;

use data::{ALL, is_localhost_name};
use pattern::{Matched, Matcher, split_host_pattern};
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::sync::OnceLock;
use vars::HostRef;
use vars_files::VarsFiles;

/// The hosts a pattern selected, and the warnings to show.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selected {
    /// Host names, in inventory order, without repeats.
    pub hosts: Vec<String>,
    /// Warnings (patterns that matched nothing, an empty inventory, ...).
    pub warnings: Vec<String>,
}

/// A loaded inventory.
#[derive(Debug)]
pub struct Inventory {
    data: InventoryData,
    files: VarsFiles,
    depths: Vec<usize>,
    group_hosts: Vec<Vec<usize>>,
    /// The implicit localhost's name, fixed by the first pattern that needed it.
    implicit: OnceLock<String>,
    /// The groups `group_by` put the implicit localhost in, with their ancestors.
    implicit_groups: indexmap::IndexSet<usize>,
    /// The `groups` magic variable, built once (every task on every host shows it).
    groups: OnceLock<std::sync::Arc<Value>>,
    notices: Vec<Notice>,
    /// The sources and options it was loaded from, to load it again.
    sources: Vec<String>,
    options: LoadOptions,
    /// The sources that gave hosts or groups (their `group_vars`/`host_vars` apply).
    used: Vec<String>,
}

/// A change a running playbook makes to the inventory.
#[derive(Clone, Debug, PartialEq)]
pub enum Change {
    /// `add_host`: a host (new or known) put in groups (created when new), with
    /// variables of its own.
    AddHost {
        /// The host's name.
        name: String,
        /// Its `ansible_port`, when the name or the arguments gave one.
        port: Option<u64>,
        /// Its groups.
        groups: Vec<String>,
        /// Its variables.
        vars: Map<String, Value>,
    },
    /// `group_by`: a host put in a group (created when new) whose parents are
    /// `parents` (created when new).
    GroupBy {
        /// The host.
        host: String,
        /// The group.
        group: String,
        /// The group's parents.
        parents: Vec<String>,
    },
}

impl Inventory {
    /// Loads `sources` (paths, directories or host lists) with Ansible's default
    /// strictness: a source that does not parse is a warning. No sources give an empty
    /// inventory in which only the implicit localhost is available.
    pub fn load(sources: &[String]) -> Result<Inventory, InventoryError> {
        Self::load_with(sources, &LoadOptions::default())
    }

    /// Loads `sources` with the given strictness.
    pub fn load_with(
        sources: &[String],
        options: &LoadOptions,
    ) -> Result<Inventory, InventoryError> {
        let mut data = InventoryData::with_group_names(options.group_names);
        let used = sources::parse_sources(sources, &mut data, options)?;
        let (files, file_warnings) =
            VarsFiles::load(&used, options.playbook_dir.as_deref(), &data)?;
        let mut notices: Vec<Notice> = data.notices().cloned().collect();
        notices.extend(file_warnings.into_iter().map(Notice::Warning));
        Ok(Inventory::assembled(
            data,
            files,
            notices,
            sources.to_vec(),
            options.clone(),
            used,
        ))
    }

    /// An inventory of the hosts and groups a `groups` variable lists (each group with
    /// its hosts, no variables), as Ansible's `inventory_hostnames` lookup builds one to
    /// match host patterns against.
    pub fn from_groups(groups: &Map<String, Value>) -> Result<Inventory, InventoryError> {
        let fail = |e: data::DataError| InventoryError::Inconsistent(e.to_string());
        let mut data = InventoryData::new();
        for (group, hosts) in groups {
            data.add_group(group).map_err(fail)?;
            for host in hosts.as_array().into_iter().flatten() {
                let name = host
                    .as_str()
                    .map_or_else(|| host.to_string(), str::to_string);
                data.add_host(&name, Some(group), None).map_err(fail)?;
            }
        }
        data.reconcile().map_err(fail)?;
        Ok(Inventory::assembled(
            data,
            VarsFiles::default(),
            Vec::new(),
            Vec::new(),
            LoadOptions::default(),
            Vec::new(),
        ))
    }

    /// An inventory of `data` (its group depths and each group's hosts worked out once).
    fn assembled(
        data: InventoryData,
        files: VarsFiles,
        notices: Vec<Notice>,
        sources: Vec<String>,
        options: LoadOptions,
        used: Vec<String>,
    ) -> Inventory {
        let depths = data.group_depths();
        let group_hosts = (0..data.group_count())
            .map(|g| data.group_hosts(g))
            .collect();
        Inventory {
            implicit_groups: data.implicit_groups(),
            data,
            files,
            depths,
            group_hosts,
            implicit: OnceLock::new(),
            groups: OnceLock::new(),
            notices,
            sources,
            options,
            used,
        }
    }

    /// This inventory with `change` made, or `None` when it changes nothing (the host
    /// is already there, in those groups, with those variables).
    pub fn changed(&self, change: &Change) -> Result<Option<Inventory>, InventoryError> {
        let mut data = self.data.clone();
        let fail = |e: data::DataError| InventoryError::Inconsistent(e.to_string());
        match change {
            Change::AddHost {
                name,
                port,
                groups,
                vars,
            } => {
                data.add_host(name, None, *port).map_err(fail)?;
                for g in groups {
                    data.add_group(g).map_err(fail)?;
                    data.add_child(g, name).map_err(fail)?;
                }
                for (k, v) in vars {
                    data.set_variable(name, k, v.clone()).map_err(fail)?;
                }
            }
            Change::GroupBy {
                host,
                group,
                parents,
            } => {
                data.add_group(group).map_err(fail)?;
                if matches!(self.host_ref(host), Some(HostRef::Implicit(_))) {
                    data.add_implicit_to_group(group).map_err(fail)?;
                } else {
                    data.add_child(group, host).map_err(fail)?;
                }
                for p in parents {
                    data.add_group(p).map_err(fail)?;
                    data.add_child(p, group).map_err(fail)?;
                }
            }
        }
        data.reconcile().map_err(fail)?;
        if self.data.same_graph(&data) {
            return Ok(None);
        }
        let (files, _) = VarsFiles::load(&self.used, self.options.playbook_dir.as_deref(), &data)?;
        let changed = Inventory::assembled(
            data,
            files,
            self.notices.clone(),
            self.sources.clone(),
            self.options.clone(),
            self.used.clone(),
        );
        if let Some(name) = self.implicit.get() {
            changed.implicit.get_or_init(|| name.clone());
        }
        Ok(Some(changed))
    }

    /// The same sources read again, bypassing cached results (`meta: refresh_inventory`).
    pub fn reload(&self) -> Result<Inventory, InventoryError> {
        let options = LoadOptions {
            flush_cache: true,
            ..self.options.clone()
        };
        Inventory::load_with(&self.sources, &options)
    }

    /// Warnings from loading, each once, in order.
    pub fn warnings(&self) -> Vec<&str> {
        self.notices
            .iter()
            .filter_map(|n| match n {
                Notice::Warning(w) => Some(w.as_str()),
                _ => None,
            })
            .collect()
    }

    /// What loading gave to show (warnings, errors, verbose lines), each once, in order.
    pub fn notices(&self) -> &[Notice] {
        &self.notices
    }

    /// The hosts, groups and relationships.
    pub fn data(&self) -> &InventoryData {
        &self.data
    }

    fn matcher(&self) -> Matcher<'_> {
        Matcher {
            data: &self.data,
            group_hosts: &self.group_hosts,
            implicit: &self.implicit,
            implicit_groups: &self.implicit_groups,
        }
    }

    fn names(&self, hosts: &[Matched]) -> Vec<String> {
        hosts
            .iter()
            .map(|h| match h {
                Matched::Host(i) => self.data.host_at(*i).name().to_string(),
                Matched::Implicit => self.implicit_name(),
            })
            .collect()
    }

    /// The implicit localhost's name: the one it was first matched by.
    fn implicit_name(&self) -> String {
        self.implicit
            .get()
            .cloned()
            .unwrap_or_else(|| "localhost".into())
    }

    /// The hosts a play's `hosts:` pattern selects (`web:&prod:!web3`, `db[0]`, ...).
    /// When the inventory has no hosts the result warns that only localhost is available.
    pub fn select(&self, pattern: &str) -> Result<Selected, InventoryError> {
        let mut warnings: Vec<String> = self.empty_warning(pattern).into_iter().collect();
        let hosts = self
            .matcher()
            .evaluate(&split_host_pattern(pattern), &mut warnings)?;
        Ok(Selected {
            hosts: self.names(&hosts),
            warnings: dedup(warnings),
        })
    }

    /// The warning that only the implicit localhost is there, when the inventory has no
    /// host and `pattern` is not localhost's (as ansible-playbook gives it for `all`
    /// before it reads the playbooks); none when `ANSIBLE_LOCALHOST_WARNING` is false.
    pub fn empty_warning(&self, pattern: &str) -> Option<String> {
        (self.group_hosts[ALL].is_empty()
            && !is_localhost_name(pattern)
            && crate::config::settings().flag("ANSIBLE_LOCALHOST_WARNING", true))
        .then(|| {
            "provided hosts list is empty, only localhost is available. Note that the implicit localhost does not match 'all'"
                .to_string()
        })
    }

    /// [`Self::select`] for a list of patterns (`hosts: [web, db]`): each item is split
    /// like a single pattern and all are evaluated together.
    pub fn select_list(&self, patterns: &[String]) -> Result<Selected, InventoryError> {
        let mut warnings = Vec::new();
        let split: Vec<String> = patterns
            .iter()
            .flat_map(|p| split_host_pattern(p))
            .collect();
        let hosts = self.matcher().evaluate(&split, &mut warnings)?;
        Ok(Selected {
            hosts: self.names(&hosts),
            warnings: dedup(warnings),
        })
    }

    /// Keeps the `hosts` that the `--limit` pattern also selects. `@file` reads patterns
    /// from a file, one per line (a `.retry` file, for instance).
    pub fn apply_limit(&self, hosts: &[String], limit: &str) -> Result<Selected, InventoryError> {
        let mut patterns = Vec::new();
        for p in split_host_pattern(limit) {
            let Some(file) = p.strip_prefix('@') else {
                patterns.push(p);
                continue;
            };
            let path = std::path::Path::new(file);
            let fail = |message: &str| InventoryError::LimitFile {
                path: file.to_string(),
                message: message.into(),
            };
            if !path.exists() {
                return Err(fail("Unable to find limit file"));
            }
            if !path.is_file() {
                return Err(fail(
                    "Limit starting with \"@\" must be a file, not a directory",
                ));
            }
            let text = std::fs::read_to_string(path).map_err(|error| InventoryError::Io {
                path: file.to_string(),
                error,
            })?;
            patterns.extend(text.split('\n').map(|l| l.trim().to_string()));
        }
        let mut warnings = Vec::new();
        let allowed = self.matcher().evaluate(&patterns, &mut warnings)?;
        let allowed: HashSet<String> = self.names(&allowed).into_iter().collect();
        let hosts = hosts
            .iter()
            .filter(|h| allowed.contains(*h))
            .cloned()
            .collect();
        Ok(Selected {
            hosts,
            warnings: dedup(warnings),
        })
    }

    /// Every inventory host's name, in inventory order (what `hostvars` lists).
    pub fn host_names(&self) -> Vec<String> {
        self.data.hosts().map(|h| h.name().to_string()).collect()
    }

    /// Whether `host` is an inventory host or the implicit localhost.
    pub fn knows_host(&self, host: &str) -> bool {
        self.host_ref(host).is_some()
    }

    /// How `host` is known: an inventory host, or the implicit localhost for a
    /// localhost name that no inventory host has.
    fn host_ref<'a>(&self, host: &'a str) -> Option<HostRef<'a>> {
        if let Some(i) = self.data.host_index(host) {
            return Some(HostRef::Inventory(i));
        }
        if !is_localhost_name(host) {
            return None;
        }
        Some(match self.data.localhost() {
            Some(i) => HostRef::Inventory(i),
            None => HostRef::Implicit(host),
        })
    }

    /// The inventory variables of `host`, merged in Ansible's order (see [`vars`]); empty
    /// for a host the inventory does not know.
    pub fn host_vars(&self, host: &str) -> Map<String, Value> {
        match self.host_ref(host) {
            Some(h) => vars::host_vars(&self.data, &self.files, &self.depths, h),
            None => Map::new(),
        }
    }

    /// What `ansible-inventory` shows of `host` without `--export`: its inventory
    /// variables with the extra vars (`-e`) over them, as the variable manager merges
    /// them.
    pub fn listed_vars(&self, host: &str) -> Map<String, Value> {
        let mut vars = self.host_vars(host);
        vars.extend(self.options.extra_vars.clone());
        vars
    }

    /// The variables of `host` itself: from its sources, then its `host_vars/` files
    /// (what `ansible-inventory --export` shows); empty for an unknown host.
    pub fn host_own_vars(&self, host: &str) -> Map<String, Value> {
        match self.host_ref(host) {
            Some(h) => vars::own_host_vars(&self.data, &self.files, h),
            None => Map::new(),
        }
    }

    /// The variables of group `g` itself: from its sources, then its `group_vars/` files,
    /// and `ansible_group_priority` when it is not the default.
    pub fn group_own_vars(&self, g: usize) -> Map<String, Value> {
        vars::own_group_vars(&self.data, &self.files, g)
    }

    /// The magic variables inventory provides for `host`: `inventory_hostname`,
    /// `inventory_hostname_short`, `group_names`, and for inventory hosts `inventory_file`
    /// and `inventory_dir`. The caller places them in variable precedence.
    pub fn magic_vars(&self, host: &str) -> Map<String, Value> {
        match self.host_ref(host) {
            Some(h) => vars::magic_vars(&self.data, h),
            None => vars::magic_vars(&self.data, HostRef::Implicit(host)),
        }
    }

    /// [`groups_map`](Self::groups_map) as one shared value, built on first use: a
    /// task's cost does not grow with the inventory's size.
    pub fn groups_value(&self) -> std::sync::Arc<Value> {
        self.groups
            .get_or_init(|| std::sync::Arc::new(Value::Object(self.groups_map())))
            .clone()
    }

    /// The `groups` magic variable: every group (`all` and `ungrouped` included) with its
    /// hosts, descendants' hosts included.
    pub fn groups_map(&self) -> Map<String, Value> {
        self.data
            .groups()
            .zip(&self.group_hosts)
            .enumerate()
            .map(|(i, (g, hosts))| {
                let mut names: Vec<Value> = hosts
                    .iter()
                    .map(|h| Value::String(self.data.host_at(*h).name().to_string()))
                    .collect();
                if self.implicit_groups.contains(&i) {
                    names.push(Value::String(self.implicit_name()));
                }
                (g.name().to_string(), Value::Array(names))
            })
            .collect()
    }
}

fn dedup(warnings: Vec<String>) -> Vec<String> {
    let mut seen = HashSet::new();
    warnings
        .into_iter()
        .filter(|w| seen.insert(w.clone()))
        .collect()
}

#[cfg(test)]
mod tests;
