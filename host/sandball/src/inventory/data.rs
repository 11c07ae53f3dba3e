//! The inventory's data model, as Ansible's `InventoryData` keeps it: hosts and groups in
//! insertion order, the implicit `all` and `ungrouped` groups, parent/child relationships
//! without loops, group priority, and the rules `reconcile` enforces once sources are read.
//!
//! Source plugins build it through [`InventoryData::add_group`], [`InventoryData::add_host`],
//! [`InventoryData::add_child`] and [`InventoryData::set_variable`], the same operations
//! Ansible's inventory object offers its plugins.

use indexmap::{IndexMap, IndexSet};
use regex::Regex;
use serde_json::{Map, Value};
use std::sync::LazyLock;

/// Host names that mean "this machine" (Ansible's `C.LOCALHOST`).
pub const LOCALHOST_NAMES: [&str; 3] = ["127.0.0.1", "localhost", "::1"];

/// Whether `name` is one of [`LOCALHOST_NAMES`].
pub fn is_localhost_name(name: &str) -> bool {
    LOCALHOST_NAMES.contains(&name)
}

/// A rule of the data model that an operation would break; plugins add where it happened.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct DataError(pub String);

/// Characters Ansible considers invalid in group names (`C.INVALID_VARIABLE_NAMES`).
static INVALID_GROUP_CHARS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[\d\W]|[^\w]").expect("static regex"));

/// What happens to group names with characters Ansible finds invalid
/// (`TRANSFORM_INVALID_GROUP_CHARS`): each is kept or replaced by `_`, with or without a warning.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GroupNameRule {
    /// Kept, with a warning (Ansible's default).
    #[default]
    Never,
    /// Kept silently.
    Ignore,
    /// Replaced, with a warning.
    Always,
    /// Replaced silently.
    Silently,
}

impl GroupNameRule {
    /// The rule `ANSIBLE_TRANSFORM_INVALID_GROUP_CHARS` asks for (`never` when unset or unknown).
    pub fn from_settings() -> Self {
        match crate::config::settings()
            .get("ANSIBLE_TRANSFORM_INVALID_GROUP_CHARS")
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase()
            .as_str()
        {
            "always" => GroupNameRule::Always,
            "silently" => GroupNameRule::Silently,
            "ignore" => GroupNameRule::Ignore,
            _ => GroupNameRule::Never,
        }
    }

    fn replaces(self) -> bool {
        matches!(self, GroupNameRule::Always | GroupNameRule::Silently)
    }
}

/// `name` with every character Ansible finds invalid in a group name replaced by `_`.
pub fn safe_group_name(name: &str) -> String {
    INVALID_GROUP_CHARS.replace_all(name, "_").into_owned()
}

/// One inventory host.
#[derive(Clone, Debug, PartialEq)]
pub struct Host {
    name: String,
    vars: Map<String, Value>,
    /// Groups the host was added to directly (indices into the group table).
    groups: IndexSet<usize>,
    inventory_file: Option<String>,
    inventory_dir: Option<String>,
}

impl Host {
    /// The inventory hostname.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Variables set on the host by its source (inline INI vars, YAML host vars, the port).
    pub fn vars(&self) -> &Map<String, Value> {
        &self.vars
    }

    /// The source the host was first seen in (`inventory_file`).
    pub fn inventory_file(&self) -> Option<&str> {
        self.inventory_file.as_deref()
    }

    /// The directory of that source (`inventory_dir`); none for host lists.
    pub fn inventory_dir(&self) -> Option<&str> {
        self.inventory_dir.as_deref()
    }
}

/// One inventory group.
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    name: String,
    vars: Map<String, Value>,
    priority: i64,
    hosts: IndexSet<usize>,
    children: IndexSet<usize>,
    parents: IndexSet<usize>,
}

impl Group {
    fn new(name: &str) -> Self {
        Group {
            name: name.to_string(),
            vars: Map::new(),
            priority: 1,
            hosts: IndexSet::new(),
            children: IndexSet::new(),
            parents: IndexSet::new(),
        }
    }

    /// The group name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Variables set on the group by its source (`[g:vars]`, YAML `vars:`).
    pub fn vars(&self) -> &Map<String, Value> {
        &self.vars
    }

    /// `ansible_group_priority` (1 unless set): breaks ties between groups of one depth.
    pub fn priority(&self) -> i64 {
        self.priority
    }
}

/// Where hosts added now come from, for `inventory_file` and `inventory_dir`.
#[derive(Clone, Debug)]
pub struct CurrentSource {
    /// The source path (or host-list string).
    pub file: String,
    /// Its directory, when it is a file.
    pub dir: Option<String>,
}

/// Hosts, groups and their relationships.
#[derive(Clone, Debug)]
pub struct InventoryData {
    hosts: IndexMap<String, Host>,
    groups: IndexMap<String, Group>,
    /// The first localhost-like host defined, which stands in for the implicit localhost.
    localhost: Option<usize>,
    /// The groups `group_by` put the implicit localhost in (it is no inventory host).
    implicit_groups: IndexSet<usize>,
    current_source: Option<CurrentSource>,
    notices: IndexSet<Notice>,
    group_names: GroupNameRule,
}

/// A message loading the inventory gives, shown as ansible-core's display shows it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Notice {
    /// `[WARNING]: …`.
    Warning(String),
    /// `[ERROR]: …`, the load going on (an inventory script's stderr).
    Error(String),
    /// A line shown from this verbosity on (`-vvv` is 3).
    Verbose(u8, String),
}

/// Index of the `all` group.
pub const ALL: usize = 0;
/// Index of the `ungrouped` group.
pub const UNGROUPED: usize = 1;

impl Default for InventoryData {
    fn default() -> Self {
        Self::new()
    }
}

impl InventoryData {
    /// An inventory with only `all` and its child `ungrouped`.
    pub fn new() -> Self {
        let mut groups = IndexMap::new();
        groups.insert("all".to_string(), Group::new("all"));
        groups.insert("ungrouped".to_string(), Group::new("ungrouped"));
        let mut data = InventoryData {
            hosts: IndexMap::new(),
            groups,
            localhost: None,
            implicit_groups: IndexSet::new(),
            current_source: None,
            notices: IndexSet::new(),
            group_names: GroupNameRule::Never,
        };
        data.link(ALL, UNGROUPED);
        data
    }

    /// Whether `other` has the same hosts and groups, with the same variables and
    /// memberships (warnings and sources aside).
    pub fn same_graph(&self, other: &InventoryData) -> bool {
        self.hosts == other.hosts
            && self.groups == other.groups
            && self.implicit_groups == other.implicit_groups
    }

    /// An empty inventory that treats invalid group names by `rule`.
    pub fn with_group_names(rule: GroupNameRule) -> Self {
        InventoryData {
            group_names: rule,
            ..Self::new()
        }
    }

    /// The name a group is stored under: `name`, made safe when the rule says so.
    fn stored_group_name<'n>(&self, name: &'n str) -> std::borrow::Cow<'n, str> {
        if self.group_names.replaces() && INVALID_GROUP_CHARS.is_match(name) {
            std::borrow::Cow::Owned(safe_group_name(name))
        } else {
            std::borrow::Cow::Borrowed(name)
        }
    }

    /// Sets the source new hosts are attributed to.
    pub fn set_current_source(&mut self, source: Option<CurrentSource>) {
        self.current_source = source;
    }

    /// Records a warning (each distinct message once, as Ansible's display does).
    pub fn warn(&mut self, message: impl Into<String>) {
        self.notices.insert(Notice::Warning(message.into()));
    }

    /// Records an error that does not stop the load.
    pub fn error(&mut self, message: impl Into<String>) {
        self.notices.insert(Notice::Error(message.into()));
    }

    /// Records a line shown from verbosity `level` on.
    pub fn verbose(&mut self, level: u8, message: impl Into<String>) {
        self.notices.insert(Notice::Verbose(level, message.into()));
    }

    /// The warnings recorded so far, in order.
    pub fn warnings(&self) -> impl Iterator<Item = &str> {
        self.notices.iter().filter_map(|n| match n {
            Notice::Warning(w) => Some(w.as_str()),
            _ => None,
        })
    }

    /// Everything recorded so far, in order.
    pub fn notices(&self) -> impl Iterator<Item = &Notice> {
        self.notices.iter()
    }

    /// Adds a group if it is new; returns its index.
    pub fn add_group(&mut self, name: &str) -> Result<usize, DataError> {
        if name.is_empty() {
            return Err(DataError("Invalid empty group name provided".into()));
        }
        let stored = self.stored_group_name(name).into_owned();
        if let Some(i) = self.groups.get_index_of(&stored) {
            return Ok(i);
        }
        if INVALID_GROUP_CHARS.is_match(name) {
            match self.group_names {
                GroupNameRule::Never => self.warn("Invalid characters were found in group names but not replaced, use -vvvv to see details"),
                GroupNameRule::Always => self.warn("Invalid characters were found in group names and automatically replaced, use -vvvv to see details"),
                GroupNameRule::Ignore | GroupNameRule::Silently => {}
            }
        }
        let (i, _) = self.groups.insert_full(stored.clone(), Group::new(&stored));
        Ok(i)
    }

    /// Adds a host if it is new (with `ansible_port` from `port`), and makes it a member
    /// of `group` when one is given. The port of an already known host is left alone.
    pub fn add_host(
        &mut self,
        name: &str,
        group: Option<&str>,
        port: Option<u64>,
    ) -> Result<usize, DataError> {
        if name.is_empty() {
            return Err(DataError("Invalid empty host name provided".into()));
        }
        let group = match group {
            Some(g) => Some(
                self.groups
                    .get_index_of(self.stored_group_name(g).as_ref())
                    .ok_or_else(|| DataError(format!("Could not find group {g} in inventory")))?,
            ),
            None => None,
        };
        let index = match self.hosts.get_index_of(name) {
            Some(i) => i,
            None => {
                let mut vars = Map::new();
                if let Some(p) = port.filter(|p| *p != 0) {
                    vars.insert("ansible_port".into(), Value::from(p));
                }
                let host = Host {
                    name: name.to_string(),
                    vars,
                    groups: IndexSet::new(),
                    inventory_file: self.current_source.as_ref().map(|s| s.file.clone()),
                    inventory_dir: self.current_source.as_ref().and_then(|s| s.dir.clone()),
                };
                let (i, _) = self.hosts.insert_full(name.to_string(), host);
                if is_localhost_name(name) {
                    match self.localhost {
                        None => self.localhost = Some(i),
                        Some(first) => {
                            let first = self.hosts[first].name.clone();
                            self.warn(format!(
                                "A duplicate localhost-like entry was found ({name}). First found localhost was {first}"
                            ));
                        }
                    }
                }
                i
            }
        };
        if let Some(g) = group {
            self.add_host_to_group(g, index);
        }
        Ok(index)
    }

    /// Makes `child` (a group, else a host) a member of group `group`.
    pub fn add_child(&mut self, group: &str, child: &str) -> Result<bool, DataError> {
        let parent = self
            .groups
            .get_index_of(self.stored_group_name(group).as_ref())
            .ok_or_else(|| DataError(format!("{group} is not a known group")))?;
        if let Some(c) = self
            .groups
            .get_index_of(self.stored_group_name(child).as_ref())
        {
            self.add_child_group(parent, c)
        } else if let Some(h) = self.hosts.get_index_of(child) {
            Ok(self.add_host_to_group(parent, h))
        } else {
            Err(DataError(format!("{child} is not a known host nor group")))
        }
    }

    /// Sets a variable on a group or, when no group has that name, a host (a mapping
    /// merges into the one it has with `hash_behaviour = merge`).
    pub fn set_variable(&mut self, entity: &str, key: &str, value: Value) -> Result<(), DataError> {
        if let Some(g) = self
            .groups
            .get_index_of(self.stored_group_name(entity).as_ref())
        {
            self.set_group_variable(g, key, value)
        } else if let Some(h) = self.hosts.get_index_of(entity) {
            set_merged(&mut self.hosts[h].vars, key, value);
            Ok(())
        } else {
            Err(DataError(format!(
                "Could not identify group or host named {entity}"
            )))
        }
    }

    /// Sets a group variable; `ansible_group_priority` sets the priority instead, converted
    /// as Python's `int()` does (values `int()` rejects with a type error are ignored).
    fn set_group_variable(&mut self, g: usize, key: &str, value: Value) -> Result<(), DataError> {
        if key == "ansible_group_priority" {
            if let Some(p) = python_int(&value).map_err(DataError)? {
                self.groups[g].priority = p;
            }
        } else {
            set_merged(&mut self.groups[g].vars, key, value);
        }
        Ok(())
    }

    fn add_child_group(&mut self, parent: usize, child: usize) -> Result<bool, DataError> {
        if parent == child {
            return Err(DataError(format!(
                "can't add group {} to itself",
                self.groups[parent].name
            )));
        }
        if self.groups[parent].children.contains(&child) {
            return Ok(false);
        }
        if self.ancestors(parent).contains(&child) {
            return Err(DataError(format!(
                "Adding group '{}' as child to '{}' creates a recursive dependency loop.",
                self.groups[child].name, self.groups[parent].name
            )));
        }
        self.link(parent, child);
        Ok(true)
    }

    fn link(&mut self, parent: usize, child: usize) {
        self.groups[parent].children.insert(child);
        self.groups[child].parents.insert(parent);
    }

    fn add_host_to_group(&mut self, g: usize, h: usize) -> bool {
        let added = self.groups[g].hosts.insert(h);
        self.hosts[h].groups.insert(g);
        added
    }

    fn remove_host_from_group(&mut self, g: usize, h: usize) {
        self.groups[g].hosts.shift_remove(&h);
        self.hosts[h].groups.shift_remove(&g);
    }

    /// Applies the rules Ansible enforces after all sources are read: every group but
    /// `all` has a parent (else `all` adopts it), hosts in no group are in `ungrouped`,
    /// hosts in another group are not; a name used for both a host and a group is warned about.
    /// A group without parents that has `all` below it cannot be adopted: that is an error.
    pub fn reconcile(&mut self) -> Result<(), DataError> {
        self.current_source = None;
        for g in 1..self.groups.len() {
            if self.groups[g].parents.is_empty() {
                self.add_child_group(ALL, g)?;
            }
        }
        for h in 0..self.hosts.len() {
            let mine = self.host_groups(h);
            if mine.contains(&UNGROUPED) {
                if mine.iter().any(|g| *g != ALL && *g != UNGROUPED) {
                    self.remove_host_from_group(UNGROUPED, h);
                }
            } else if mine.is_empty() || (mine.len() == 1 && mine.contains(&ALL)) {
                self.add_host_to_group(UNGROUPED, h);
            }
        }
        let conflicts: Vec<String> = self
            .groups
            .keys()
            .filter(|g| self.hosts.contains_key(*g))
            .cloned()
            .collect();
        for c in conflicts {
            self.warn(format!("Found both group and host with same name: {c}"));
        }
        Ok(())
    }

    /// Every group above `g`.
    pub fn ancestors(&self, g: usize) -> IndexSet<usize> {
        let mut seen = IndexSet::new();
        let mut queue: Vec<usize> = self.groups[g].parents.iter().copied().collect();
        while let Some(p) = queue.pop() {
            if seen.insert(p) {
                queue.extend(self.groups[p].parents.iter().copied());
            }
        }
        seen
    }

    /// Puts the implicit localhost in `group` (as ansible-core's `group_by` does, without
    /// making it an inventory host); whether it was not there yet.
    pub fn add_implicit_to_group(&mut self, group: &str) -> Result<bool, DataError> {
        let g = self
            .groups
            .get_index_of(self.stored_group_name(group).as_ref())
            .ok_or_else(|| DataError(format!("{group} is not a known group")))?;
        Ok(self.implicit_groups.insert(g))
    }

    /// The groups the implicit localhost belongs to: those `group_by` put it in and all
    /// their ancestors but `all` (whose hosts never include it, as in ansible-core).
    pub fn implicit_groups(&self) -> IndexSet<usize> {
        let mut groups = IndexSet::new();
        for g in &self.implicit_groups {
            groups.insert(*g);
            groups.extend(self.ancestors(*g));
        }
        groups.shift_remove(&ALL);
        groups
    }

    /// The groups host `h` belongs to: its own and all their ancestors.
    pub fn host_groups(&self, h: usize) -> IndexSet<usize> {
        let mut all = IndexSet::new();
        for g in &self.hosts[h].groups {
            all.insert(*g);
            all.extend(self.ancestors(*g));
        }
        all
    }

    /// The hosts of group `g` and of all its descendants, in Ansible's order: the group's
    /// own hosts, then its children's level by level (breadth first), without repeats.
    pub fn group_hosts(&self, g: usize) -> Vec<usize> {
        let mut ordered: Vec<usize> = vec![g];
        ordered.extend(self.groups[g].children.iter().copied());
        let mut seen: IndexSet<usize> = IndexSet::new();
        let mut level: IndexSet<usize> = ordered.iter().copied().collect();
        while !level.is_empty() {
            seen.extend(level.iter().copied());
            let mut next = IndexSet::new();
            for item in &level {
                for c in &self.groups[*item].children {
                    if !seen.contains(c) && next.insert(*c) {
                        ordered.push(*c);
                    }
                }
            }
            level = next;
        }
        let mut hosts = IndexSet::new();
        for kid in ordered {
            hosts.extend(self.groups[kid].hosts.iter().copied());
        }
        hosts.into_iter().collect()
    }

    /// Each group's depth: the length of the longest path down from a group without parents
    /// (`all`, once reconciled), as Ansible's depth bookkeeping ends up.
    pub fn group_depths(&self) -> Vec<usize> {
        let n = self.groups.len();
        let mut depth = vec![0usize; n];
        let mut pending: Vec<usize> = self.groups.values().map(|g| g.parents.len()).collect();
        let mut ready: Vec<usize> = (0..n).filter(|g| pending[*g] == 0).collect();
        while let Some(g) = ready.pop() {
            for c in &self.groups[g].children {
                depth[*c] = depth[*c].max(depth[g] + 1);
                pending[*c] -= 1;
                if pending[*c] == 0 {
                    ready.push(*c);
                }
            }
        }
        depth
    }

    /// The number of hosts.
    pub fn host_count(&self) -> usize {
        self.hosts.len()
    }

    /// The number of groups.
    pub fn group_count(&self) -> usize {
        self.groups.len()
    }

    /// The host at `index`.
    pub fn host_at(&self, index: usize) -> &Host {
        &self.hosts[index]
    }

    /// The group at `index`.
    pub fn group_at(&self, index: usize) -> &Group {
        &self.groups[index]
    }

    /// The index of the host named `name`.
    pub fn host_index(&self, name: &str) -> Option<usize> {
        self.hosts.get_index_of(name)
    }

    /// The index of the group named `name`.
    pub fn group_index(&self, name: &str) -> Option<usize> {
        self.groups.get_index_of(name)
    }

    /// All hosts, in the order they were first defined.
    pub fn hosts(&self) -> impl Iterator<Item = &Host> {
        self.hosts.values()
    }

    /// All groups, in the order they were first defined (`all` and `ungrouped` first).
    pub fn groups(&self) -> impl Iterator<Item = &Group> {
        self.groups.values()
    }

    /// The child groups of `g`, in the order they were added.
    pub fn children_of(&self, g: usize) -> impl Iterator<Item = usize> + '_ {
        self.groups[g].children.iter().copied()
    }

    /// The hosts added to `g` itself (not through children), in the order they were added.
    pub fn direct_hosts_of(&self, g: usize) -> impl Iterator<Item = usize> + '_ {
        self.groups[g].hosts.iter().copied()
    }

    /// The first localhost-like host defined, which the implicit localhost resolves to.
    pub fn localhost(&self) -> Option<usize> {
        self.localhost
    }
}

/// Python's `int(value)`: `Ok(None)` where Python raises a type error (ignored by Ansible),
/// an error where it raises a value error.
fn python_int(value: &Value) -> Result<Option<i64>, String> {
    match value {
        Value::Bool(b) => Ok(Some(i64::from(*b))),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Ok(Some(i))
            } else {
                match n.as_f64() {
                    Some(f) if f.is_finite() && f.abs() < 9.2e18 => Ok(Some(f.trunc() as i64)),
                    _ => Err(format!("invalid ansible_group_priority: {n}")),
                }
            }
        }
        Value::String(s) => {
            let t = s.trim();
            let digits = t.strip_prefix(['+', '-']).unwrap_or(t);
            let valid = !digits.is_empty()
                && !digits.starts_with('_')
                && !digits.ends_with('_')
                && !digits.contains("__")
                && digits.chars().all(|c| c.is_ascii_digit() || c == '_');
            match t.replace('_', "").parse::<i64>() {
                Ok(i) if valid => Ok(Some(i)),
                _ => Err(format!("invalid literal for int() with base 10: '{s}'")),
            }
        }
        Value::Null | Value::Array(_) | Value::Object(_) => Ok(None),
    }
}

/// Sets `key` in `vars`: replaced, or merged into with `hash_behaviour = merge`.
fn set_merged(vars: &mut Map<String, Value>, key: &str, value: Value) {
    let value = match vars.get(key) {
        old @ Some(_) if crate::config::merge_hashes() => {
            sandball_pycompat::merge::merge_values(old, value)
        }
        _ => value,
    };
    vars.insert(key.to_string(), value);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn names(data: &InventoryData, hosts: &[usize]) -> Vec<String> {
        hosts
            .iter()
            .map(|h| data.host_at(*h).name().to_string())
            .collect()
    }

    #[test]
    fn starts_with_all_and_ungrouped() {
        let data = InventoryData::new();
        let groups: Vec<&str> = data.groups().map(Group::name).collect();
        assert_eq!(groups, ["all", "ungrouped"]);
        assert_eq!(data.children_of(ALL).collect::<Vec<_>>(), [UNGROUPED]);
    }

    #[test]
    fn add_host_sets_port_only_when_new() {
        let mut data = InventoryData::new();
        data.add_group("web").unwrap();
        let h = data.add_host("a", Some("web"), Some(2222)).unwrap();
        data.add_host("a", None, Some(22)).unwrap();
        assert_eq!(data.host_at(h).vars()["ansible_port"], json!(2222));
        assert!(data.add_host("b", Some("nope"), None).is_err());
        assert!(data.add_host("", None, None).is_err());
    }

    #[test]
    fn loops_are_rejected() {
        let mut data = InventoryData::new();
        for g in ["a", "b", "c"] {
            data.add_group(g).unwrap();
        }
        data.add_child("a", "b").unwrap();
        data.add_child("b", "c").unwrap();
        let e = data.add_child("c", "a").unwrap_err();
        assert_eq!(
            e.to_string(),
            "Adding group 'a' as child to 'c' creates a recursive dependency loop."
        );
        assert!(data.add_child("a", "a").is_err());
        assert!(data.add_child("a", "zzz").is_err());
    }

    #[test]
    fn a_group_above_all_cannot_be_adopted_by_all() {
        let mut data = InventoryData::new();
        data.add_group("web").unwrap();
        data.add_child("web", "all").unwrap();
        let e = data.reconcile().unwrap_err();
        assert_eq!(
            e.to_string(),
            "Adding group 'web' as child to 'all' creates a recursive dependency loop."
        );
    }

    #[test]
    fn reconcile_moves_hosts_in_and_out_of_ungrouped() {
        let mut data = InventoryData::new();
        data.add_group("web").unwrap();
        data.add_host("lonely", Some("ungrouped"), None).unwrap();
        data.add_host("both", Some("ungrouped"), None).unwrap();
        data.add_host("both", Some("web"), None).unwrap();
        data.add_host("in_all", Some("all"), None).unwrap();
        data.add_host("nowhere", None, None).unwrap();
        data.reconcile().unwrap();
        let ungrouped = data.group_hosts(UNGROUPED);
        assert_eq!(names(&data, &ungrouped), ["lonely", "in_all", "nowhere"]);
        assert!(
            data.children_of(ALL)
                .any(|g| data.group_at(g).name() == "web")
        );
    }

    #[test]
    fn group_hosts_walk_breadth_first() {
        let mut data = InventoryData::new();
        for g in ["parent", "child", "other"] {
            data.add_group(g).unwrap();
        }
        data.add_child("parent", "child").unwrap();
        data.add_host("h1", Some("child"), None).unwrap();
        data.add_host("h2", Some("other"), None).unwrap();
        data.add_host("h0", Some("parent"), None).unwrap();
        data.reconcile().unwrap();
        // all -> [ungrouped, parent, other]; child is one level further down.
        assert_eq!(names(&data, &data.group_hosts(ALL)), ["h0", "h2", "h1"]);
        let parent = data.group_index("parent").unwrap();
        assert_eq!(names(&data, &data.group_hosts(parent)), ["h0", "h1"]);
    }

    #[test]
    fn depth_is_the_longest_path_from_all() {
        let mut data = InventoryData::new();
        for g in ["a", "b", "c"] {
            data.add_group(g).unwrap();
        }
        data.add_child("a", "b").unwrap();
        data.add_child("b", "c").unwrap();
        data.reconcile().unwrap();
        data.add_child("all", "c").unwrap();
        let d = data.group_depths();
        let depth = |n: &str| d[data.group_index(n).unwrap()];
        assert_eq!(
            (
                depth("all"),
                depth("ungrouped"),
                depth("a"),
                depth("b"),
                depth("c")
            ),
            (0, 1, 1, 2, 3)
        );
    }

    #[test]
    fn group_priority_follows_python_int() {
        let mut data = InventoryData::new();
        data.add_group("g").unwrap();
        data.set_variable("g", "ansible_group_priority", json!("10"))
            .unwrap();
        assert_eq!(data.group_at(2).priority(), 10);
        assert!(
            !data
                .group_at(2)
                .vars()
                .contains_key("ansible_group_priority")
        );
        data.set_variable("g", "ansible_group_priority", json!(null))
            .unwrap();
        assert_eq!(data.group_at(2).priority(), 10);
        assert!(
            data.set_variable("g", "ansible_group_priority", json!("high"))
                .is_err()
        );
        data.set_variable("g", "ansible_group_priority", json!(2.9))
            .unwrap();
        assert_eq!(data.group_at(2).priority(), 2);
    }

    #[test]
    fn invalid_group_names_are_replaced_when_the_rule_says_so() {
        let mut data = InventoryData::with_group_names(GroupNameRule::Always);
        let g = data.add_group("web-servers").unwrap();
        assert_eq!(data.group_at(g).name(), "web_servers");
        data.add_host("w1", Some("web-servers"), None).unwrap();
        data.set_variable("web-servers", "x", json!(1)).unwrap();
        assert_eq!(data.group_at(g).vars()["x"], json!(1));
        assert_eq!(
            data.add_group("1st").unwrap(),
            data.group_index("_st").unwrap()
        );
        assert_eq!(
            data.warnings().collect::<Vec<_>>(),
            [
                "Invalid characters were found in group names and automatically replaced, use -vvvv to see details"
            ]
        );
        let mut quiet = InventoryData::with_group_names(GroupNameRule::Silently);
        quiet.add_group("a.b").unwrap();
        assert!(quiet.group_index("a_b").is_some());
        assert_eq!(quiet.warnings().count(), 0);
    }

    #[test]
    fn warnings_for_bad_group_names_duplicate_localhost_and_name_clash() {
        let mut data = InventoryData::new();
        data.add_group("web-servers").unwrap();
        data.add_group("1st").unwrap();
        data.add_host("localhost", None, None).unwrap();
        data.add_host("127.0.0.1", None, None).unwrap();
        data.add_group("db").unwrap();
        data.add_host("db", None, None).unwrap();
        data.reconcile().unwrap();
        let w: Vec<&str> = data.warnings().collect();
        assert_eq!(
            w,
            [
                "Invalid characters were found in group names but not replaced, use -vvvv to see details",
                "A duplicate localhost-like entry was found (127.0.0.1). First found localhost was localhost",
                "Found both group and host with same name: db",
            ]
        );
        assert_eq!(data.localhost(), data.host_index("localhost"));
    }
}
