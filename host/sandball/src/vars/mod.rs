//! Variables: the precedence of Ansible's variable sources and the per-host state a
//! run accumulates (facts, `set_fact`, `register`).
//!
//! [`VariableManager::task_vars`] flattens, lowest precedence first: role defaults,
//! inventory (group then host vars), facts, play vars, `vars_files`, role vars, block
//! and task vars, `include_vars`, `set_fact` and registered results, role parameters,
//! extra vars, then the magic variables, `hostvars` last. Values
//! from the playbook, inventory and extra vars are *trusted* (templated when used);
//! facts and module results are *data* (Ansible's unsafe: never templated).
//!
//! `hostvars[h]` is host `h`'s variables as Ansible gives them: the same sources without
//! the play's and the task's, looked up live (facts gathered a moment ago show).

pub mod fact_cache;

use crate::inventory::Inventory;
use crate::playbook::roles::Role;
use crate::template::{HostVarsSource, Vars};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// The result key by which `set_fact`'s `cacheable: true` reaches the executor: the
/// facts are then host facts too (`ansible_facts.name`), as in Ansible.
pub const CACHEABLE: &str = "_ansible_facts_cacheable";

/// The fact saying a host's facts were gathered (`gather_facts`, not only returned by a
/// module), as ansible-core records it.
pub const GATHERED: &str = "_ansible_facts_gathered";

/// What a run learned about one host.
#[derive(Clone, Debug, Default)]
struct HostState {
    /// `ansible_facts` returned by modules.
    facts: Map<String, Value>,
    /// `include_vars` values.
    included: Map<String, Value>,
    /// `set_fact` values and registered results.
    set: indexmap::IndexMap<String, Kept>,
}

/// A value the run set for a host, with its trust.
#[derive(Clone, Debug)]
enum Kept {
    /// Trusted but for the text marked `!unsafe` in it: `set_fact` values, the results
    /// of `set_fact` and `include_vars`, as ansible-core 2.19 keeps their trust.
    Trusted(Value),
    /// A module's result: all data.
    Data(Value),
}

/// Facts a module returned, as Ansible exposes them: `ansible_facts` holds each one
/// without its `ansible_` prefix (`ansible_facts.distribution`; `ansible_local` keeps
/// its name), and each is also a variable of its own under the name it was returned
/// with (`ansible_distribution`), except those that would change how the host is
/// reached or how sandball runs there (connection, become and interpreter settings,
/// internal keys) — a module cannot redirect the next task.
fn inject_facts(vars: &mut Vars, facts: &Map<String, Value>) {
    inject_facts_over(vars, facts, Map::new());
}

/// Facts an earlier item of a loop returned, as the later items see them: as
/// [`inject_facts`] makes them variables, `ansible_facts` keeping the facts it had.
pub fn add_facts(vars: &mut Vars, facts: &Map<String, Value>) {
    let known = match vars.get("ansible_facts") {
        Some(crate::template::Var::Data(Value::Object(m))) => m.clone(),
        _ => Map::new(),
    };
    inject_facts_over(vars, facts, known);
}

/// [`inject_facts`] over `namespaced`, the `ansible_facts` known so far.
fn inject_facts_over(
    vars: &mut Vars,
    facts: &Map<String, Value>,
    mut namespaced: Map<String, Value>,
) {
    for (k, v) in facts {
        if k.starts_with("_ansible_") {
            // That they were gathered is under `ansible_facts` only, as in ansible-core.
            if k == GATHERED {
                namespaced.insert(k.clone(), v.clone());
            }
            continue;
        }
        // Under `ansible_facts` a setting is only data; as a variable it would steer.
        if !steers_the_run(k) {
            vars.set_data(k, v.clone());
        }
        let short = match k.strip_prefix("ansible_") {
            Some(rest) if k != "ansible_local" => rest,
            _ => k.as_str(),
        };
        namespaced.insert(short.to_string(), v.clone());
    }
    vars.set_data("ansible_facts", Value::Object(namespaced));
}

/// Whether a variable of this name is a setting of how a host is reached and how
/// modules run there (so a fact may not set it): every `ansible_*` variable ansible-core's
/// configuration and its connection, shell and become plugins read (connection,
/// become, shell, interpreter, temporary-directory, async and module-running
/// settings), Ansible's magic variables, and sandball's own `sandball_*` settings, so
/// that no module can make the next task leave the sandbox (`sandball_legacy_modules`),
/// move the shim's cache, or unpack the next legacy module where it can write
/// (`ansible_remote_tmp`).
fn steers_the_run(name: &str) -> bool {
    const NAMES: &[&str] = &[
        "ansible_connection",
        "ansible_host",
        "ansible_user",
        "ansible_port",
        "ansible_password",
        "ansible_pass",
        "ansible_timeout",
        "ansible_private_key",
        "ansible_private_key_file",
        "ansible_private_key_passphrase",
        "ansible_host_key_checking",
        "ansible_pipelining",
        "ansible_shell_type",
        "ansible_shell_executable",
        "ansible_module_compression",
        "ansible_network_os",
        "ansible_connection_user",
        "ansible_rsync_path",
        "ansible_playbook_python",
        "ansible_facts",
        "ansible_remote_tmp",
        "ansible_remote_temp",
        "ansible_keep_remote_files",
        "ansible_shell_allow_world_readable_temp",
        "ansible_system_tmpdirs",
        "ansible_admin_users",
        "ansible_common_remote_group",
        "ansible_async_dir",
        "ansible_facts_modules",
        "ansible_python_module_rlimit_nofile",
        "ansible_no_target_syslog",
        "ansible_target_log_info",
        "ansible_interpreter_python_fallback",
        "ansible_deprecation_warnings",
        "ansible_control_path",
        "ansible_control_path_dir",
        "ansible_sshpass_prompt",
        "inventory_hostname",
        "inventory_hostname_short",
        "inventory_dir",
        "inventory_file",
        "group_names",
        "groups",
        "hostvars",
        "omit",
        "playbook_dir",
        "role_path",
        "add_host",
        "add_group",
    ];
    const PREFIXES: &[&str] = &[
        "ansible_become",
        "ansible_ssh_",
        "ansible_scp_",
        "ansible_sftp_",
        "ansible_paramiko_",
        "ansible_local_",
        "ansible_winrm_",
        "ansible_psrp_",
        "ansible_win_",
        "ansible_sudo",
        "ansible_su_",
        "ansible_runas_",
        "ansible_doas_",
        "ansible_pbrun_",
        "ansible_pfexec_",
        "ansible_ksu_",
        "ansible_machinectl_",
        "sandball_",
    ];
    // The node's SSH host keys are facts (`ansible_ssh_host_key_rsa_public`), as in
    // Ansible; `ansible_ssh_host_key_checking` is a setting.
    if name.starts_with("ansible_ssh_host_key_") && name != "ansible_ssh_host_key_checking" {
        return false;
    }
    NAMES.contains(&name)
        || PREFIXES.iter().any(|p| name.starts_with(p))
        || magic(name)
        || name.starts_with("ansible_") && name.ends_with("_interpreter")
}

/// Whether a fact of this name that a module returns is one ansible-core warns about
/// as it drops it ("Removed restricted key from module data"): an `ansible_*` setting
/// of how the host is reached or how modules run there. The magic variables a fact
/// may not set either ([`steers_the_run`]) go without a word, as ansible-core's
/// precedence hides them.
pub(crate) fn restricted_fact(name: &str) -> bool {
    steers_the_run(name) && name.starts_with("ansible_") && !magic(name)
}

/// Whether an `ansible_*` name is one of ansible-core's magic variables (run-wide
/// settings and the play's, role's and loop's own), which no fact sets.
fn magic(name: &str) -> bool {
    const NAMES: &[&str] = &[
        "ansible_check_mode",
        "ansible_diff_mode",
        "ansible_verbosity",
        "ansible_forks",
        "ansible_run_tags",
        "ansible_skip_tags",
        "ansible_limit",
        "ansible_inventory_sources",
        "ansible_version",
        "ansible_config_file",
        "ansible_delegated_vars",
        "ansible_loop_var",
        "ansible_index_var",
        "ansible_search_path",
    ];
    const PREFIXES: &[&str] = &["ansible_play_", "ansible_parent_role_", "ansible_role_"];
    NAMES.contains(&name) || PREFIXES.iter().any(|p| name.starts_with(p))
}

/// Run-wide settings that show up as magic variables.
#[derive(Clone, Debug, Default)]
pub struct Magic {
    /// `playbook_dir`.
    pub playbook_dir: Option<PathBuf>,
    /// `ansible_check_mode`.
    pub check_mode: bool,
    /// `ansible_diff_mode`.
    pub diff_mode: bool,
    /// `ansible_verbosity`.
    pub verbosity: u8,
    /// `ansible_playbook_python`: the controller's Python, when there is one.
    pub playbook_python: Option<String>,
    /// `ansible_run_tags`: the `-t` tags (`all` when none).
    pub run_tags: Vec<String>,
    /// `ansible_skip_tags`: the `--skip-tags` tags.
    pub skip_tags: Vec<String>,
    /// `ansible_forks`: `--forks` (5 by default).
    pub forks: usize,
    /// `ansible_config_file`: the ansible.cfg read, if any (else null, as in Ansible).
    pub config_file: Option<PathBuf>,
    /// `ansible_inventory_sources`: the inventory sources, absolute.
    pub inventory_sources: Vec<String>,
    /// `ansible_limit`: the `--limit` pattern, when one is given.
    pub limit: Option<String>,
}

impl Magic {
    /// The magic variables of the run as a whole, known before any host or play is
    /// (ansible-core's without a host: also what static import names are templated
    /// with when the playbook is read).
    pub fn run_wide(&self) -> Map<String, Value> {
        let mut vars = Map::new();
        let path = |p: &PathBuf| Value::String(p.display().to_string());
        if let Some(dir) = &self.playbook_dir {
            vars.insert("playbook_dir".into(), path(dir));
        }
        if let Some(python) = &self.playbook_python {
            vars.insert(
                "ansible_playbook_python".into(),
                Value::String(python.clone()),
            );
        }
        vars.insert("ansible_check_mode".into(), Value::Bool(self.check_mode));
        vars.insert("ansible_diff_mode".into(), Value::Bool(self.diff_mode));
        vars.insert("ansible_verbosity".into(), Value::from(self.verbosity));
        vars.insert("ansible_forks".into(), Value::from(self.forks));
        vars.insert(
            "ansible_config_file".into(),
            self.config_file.as_ref().map_or(Value::Null, path),
        );
        vars.insert(
            "ansible_inventory_sources".into(),
            Value::Array(
                self.inventory_sources
                    .iter()
                    .cloned()
                    .map(Value::String)
                    .collect(),
            ),
        );
        if let Some(limit) = &self.limit {
            vars.insert("ansible_limit".into(), Value::String(limit.clone()));
        }
        let run_tags = if self.run_tags.is_empty() {
            vec![Value::String("all".into())]
        } else {
            self.run_tags.iter().cloned().map(Value::String).collect()
        };
        vars.insert("ansible_run_tags".into(), Value::Array(run_tags));
        vars.insert(
            "ansible_skip_tags".into(),
            Value::Array(self.skip_tags.iter().cloned().map(Value::String).collect()),
        );
        vars.insert(
            "omit".into(),
            Value::String(crate::template::OMIT.to_string()),
        );
        vars.insert("ansible_version".into(), ansible_version());
        vars
    }
}

/// `ansible_version`: the ansible-core release sandball follows, as ansible-core gives
/// its own (`full`, `string`, and the numbers `major`, `minor`, `revision`).
fn ansible_version() -> Value {
    let full = crate::compat::core().version();
    let mut numbers = full.split('.').map(|n| n.parse::<u64>().unwrap_or(0));
    let mut next = || numbers.next().unwrap_or(0);
    let (major, minor, revision) = (next(), next(), next());
    serde_json::json!({
        "full": full,
        "string": full,
        "major": major,
        "minor": minor,
        "revision": revision,
    })
}

/// The variables of a run.
pub struct VariableManager {
    shared: Arc<Shared>,
}

/// What the manager and every `hostvars` it hands out read.
struct Shared {
    extra_vars: Map<String, Value>,
    magic: Magic,
    hosts: Mutex<HashMap<String, HostState>>,
    /// Where facts outlive the run (`fact_caching = jsonfile`), if anywhere.
    fact_cache: Option<fact_cache::FactCache>,
}

/// The play-level context of one task.
pub struct PlayScope<'a> {
    /// `ansible_play_name`.
    pub name: &'a str,
    /// Play vars.
    pub vars: &'a Map<String, Value>,
    /// The play's `vars_files` (a layer above its vars).
    pub vars_files: Option<&'a crate::playbook::vars_files::VarsFiles>,
    /// `ansible_play_hosts_all`.
    pub hosts_all: HostNames<'a>,
    /// `ansible_play_hosts` (hosts still active).
    pub hosts_active: HostNames<'a>,
    /// The play's roles, in order: the defaults and vars of the public ones are every
    /// task's (Ansible's roles do not keep their variables private by default).
    pub roles: &'a [Arc<Role>],
    /// `ansible_play_role_names`.
    pub role_names: &'a [String],
    /// `ansible_dependent_role_names`.
    pub dependent_role_names: &'a [String],
    /// `playbook_dir`: the directory of the playbook the play is written in (an
    /// imported playbook's own, as in Ansible); `None` keeps the run's.
    pub dir: Option<&'a std::path::Path>,
}

/// A list of host names as a magic variable gives it (`ansible_play_hosts`…), made
/// into a value once per scope and shared by every host's variables: copying it for
/// each host would make a task cost more the more hosts the play has.
pub struct HostNames<'a> {
    names: &'a [String],
    value: std::sync::OnceLock<Arc<Value>>,
}

impl<'a> HostNames<'a> {
    /// The list of `names`.
    pub fn new(names: &'a [String]) -> Self {
        HostNames {
            names,
            value: std::sync::OnceLock::new(),
        }
    }

    fn value(&self) -> Arc<Value> {
        self.value
            .get_or_init(|| {
                Arc::new(Value::Array(
                    self.names.iter().cloned().map(Value::String).collect(),
                ))
            })
            .clone()
    }
}

impl VariableManager {
    /// A manager with `-e` extra vars and run settings.
    pub fn new(extra_vars: Map<String, Value>, magic: Magic) -> Self {
        Self::with_state(extra_vars, magic, HashMap::new(), None)
    }

    fn with_state(
        extra_vars: Map<String, Value>,
        magic: Magic,
        hosts: HashMap<String, HostState>,
        fact_cache: Option<fact_cache::FactCache>,
    ) -> Self {
        VariableManager {
            shared: Arc::new(Shared {
                extra_vars,
                magic,
                hosts: Mutex::new(hosts),
                fact_cache,
            }),
        }
    }

    /// The manager with a fact cache: the facts it holds for `hosts` are theirs from the
    /// start (after `flush`, which empties their entries, none are), and every change
    /// of a host's facts is written back. What cannot be read or removed is returned as
    /// warnings.
    pub fn with_fact_cache(
        extra_vars: Map<String, Value>,
        magic: Magic,
        cache: fact_cache::FactCache,
        hosts: &[String],
        flush: bool,
    ) -> (Self, Vec<String>) {
        let mut warnings = Vec::new();
        let mut states = HashMap::new();
        for host in hosts {
            let loaded = if flush {
                cache.flush(host).map(|()| None)
            } else {
                cache.load(host)
            };
            match loaded {
                Ok(Some(facts)) => {
                    states.insert(
                        host.clone(),
                        HostState {
                            facts,
                            ..HostState::default()
                        },
                    );
                }
                Ok(None) => {}
                Err(e) => warnings.push(e),
            }
        }
        (
            Self::with_state(extra_vars, magic, states, Some(cache)),
            warnings,
        )
    }

    /// A host that joined the run (`add_host`, `meta: refresh_inventory`) gets the
    /// facts the fact cache holds for it, as Ansible reads them for any host name;
    /// a host the run already knows keeps its own. What cannot be read is returned.
    pub fn host_joined(&self, host: &str) -> Result<(), String> {
        let Some(cache) = &self.shared.fact_cache else {
            return Ok(());
        };
        if self.state().contains_key(host) {
            return Ok(());
        }
        if let Some(facts) = cache.load(host)? {
            self.state()
                .entry(host.to_string())
                .or_insert_with(|| HostState {
                    facts,
                    ..HostState::default()
                });
        }
        Ok(())
    }

    /// Whether `host`'s facts were gathered (by `gather_facts`, now or in a cached
    /// run; not only returned by a module): `gathering = smart` does not gather them
    /// again, as in ansible-core.
    pub fn has_facts(&self, host: &str) -> bool {
        self.state()
            .get(host)
            .is_some_and(|st| st.facts.get(GATHERED) == Some(&Value::Bool(true)))
    }

    /// One of the facts modules returned for `host` (or the fact cache holds).
    pub fn fact(&self, host: &str, name: &str) -> Option<Value> {
        self.state()
            .get(host)
            .and_then(|st| st.facts.get(name).cloned())
    }

    /// Writes `host`'s facts to the fact cache, if there is one.
    fn cache_facts(&self, host: &str, facts: &Map<String, Value>) {
        if let Some(cache) = &self.shared.fact_cache
            && let Err(e) = cache.store(host, facts)
        {
            tracing::warn!("{e}");
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, HashMap<String, HostState>> {
        self.shared.state()
    }

    /// Records `set_fact` values (already templated, the text templating made marked
    /// `!unsafe`: the rest stays trusted, as in ansible-core 2.19).
    pub fn set_facts(&self, host: &str, values: &Map<String, Value>) {
        let mut s = self.state();
        let st = s.entry(host.to_string()).or_default();
        for (k, v) in values {
            st.set.insert(k.clone(), Kept::Trusted(v.clone()));
        }
    }

    /// Records variables `include_vars` read (trusted: they come from the playbook's
    /// files).
    pub fn include_vars(&self, host: &str, values: &Map<String, Value>) {
        let mut s = self.state();
        let st = s.entry(host.to_string()).or_default();
        for (k, v) in values {
            st.included.insert(k.clone(), v.clone());
        }
    }

    /// Records `ansible_facts` a module returned.
    pub fn add_module_facts(&self, host: &str, facts: &Map<String, Value>) {
        let all = {
            let mut s = self.state();
            let st = s.entry(host.to_string()).or_default();
            for (k, v) in facts {
                st.facts.insert(k.clone(), v.clone());
            }
            self.shared.fact_cache.is_some().then(|| st.facts.clone())
        };
        if let Some(all) = all {
            self.cache_facts(host, &all);
        }
    }

    /// Forgets the facts modules returned for a host (`meta: clear_facts`), in the fact
    /// cache too.
    pub fn clear_facts(&self, host: &str) {
        if let Some(st) = self.state().get_mut(host) {
            st.facts.clear();
        }
        self.cache_facts(host, &Map::new());
    }

    /// Records a registered result: data, or (`trusted`) trusted but for the text
    /// marked `!unsafe` in it.
    pub fn register(&self, host: &str, name: &str, result: Value, trusted: bool) {
        let kept = if trusted {
            Kept::Trusted(result)
        } else {
            Kept::Data(result)
        };
        let mut s = self.state();
        s.entry(host.to_string())
            .or_default()
            .set
            .insert(name.to_string(), kept);
    }

    /// The run-wide settings that are magic variables.
    pub fn magic(&self) -> &Magic {
        &self.shared.magic
    }

    /// Only the extra vars (for templating play-level values such as `hosts`).
    pub fn extra_vars_only(&self) -> Vars {
        let mut vars = Vars::new();
        for (k, v) in &self.shared.extra_vars {
            vars.set_trusted(k, v.clone());
        }
        vars
    }

    /// The play's vars under the extra vars: what play-level keywords (`order`, `serial`,
    /// `strategy`) are templated with before the play starts, as in Ansible.
    pub fn play_level(&self, play_vars: &Map<String, Value>) -> Vars {
        let mut vars = Vars::new();
        for (k, v) in play_vars.iter().chain(&self.shared.extra_vars) {
            vars.set_trusted(k, v.clone());
        }
        vars
    }

    /// All variables for a task on a host; `role` is the role the task belongs to.
    pub fn task_vars(
        &self,
        inventory: &Arc<Inventory>,
        host: &str,
        play: &PlayScope<'_>,
        task_vars: &[&Map<String, Value>],
        role: Option<&Role>,
        include_params: &[&Map<String, Value>],
    ) -> Vars {
        let mut layers = vec![play.vars];
        layers.extend_from_slice(task_vars);
        // Each role's defaults over its dependencies'; the task's own role's over those
        // of the roles above it.
        let defaults: Vec<&Map<String, Value>> = play
            .roles
            .iter()
            .filter(|r| r.public)
            .flat_map(|r| [&r.dependency_defaults, &r.defaults])
            .chain(
                role.into_iter()
                    .flat_map(|r| [&r.dependency_defaults, &r.inherited.defaults, &r.defaults]),
            )
            .collect();
        let params = role.map(|r| &r.params);
        let mut vars =
            self.shared
                .host_vars(inventory, host, &layers, &defaults, params, include_params);
        if let Some(dir) = play.dir {
            vars.set_data("playbook_dir", Value::String(dir.display().to_string()));
        }
        if let Some(r) = role {
            vars.set_data("role_name", Value::String(r.name.clone()));
            vars.set_data(
                "ansible_role_name",
                Value::String(r.shown_name().to_string()),
            );
            vars.set_data("role_path", Value::String(r.path.display().to_string()));
            // `ns.coll` of a collection's role, null for any other, as in Ansible.
            let collection = r
                .fqcn
                .as_deref()
                .and_then(|f| f.rsplit_once('.'))
                .map_or(Value::Null, |(c, _)| Value::String(c.to_string()));
            vars.set_data("ansible_collection_name", collection);
        }
        // Where the task's relative files are searched: its role, then the playbook's
        // directory.
        let mut search: Vec<Value> = role
            .map(|r| Value::String(r.path.display().to_string()))
            .into_iter()
            .collect();
        if let Some(crate::template::Var::Trusted(dir) | crate::template::Var::Data(dir)) =
            vars.get("playbook_dir")
        {
            search.push(dir.clone());
        }
        vars.set_data("ansible_search_path", Value::Array(search));
        let list_of = |names: &mut dyn Iterator<Item = &String>| {
            Value::Array(names.cloned().map(Value::String).collect())
        };
        let direct = list_of(&mut play.role_names.iter());
        vars.set_data("ansible_play_role_names", direct.clone());
        // The older name of the same list.
        vars.set_data("role_names", direct);
        vars.set_data(
            "ansible_dependent_role_names",
            list_of(&mut play.dependent_role_names.iter()),
        );
        // Every role of the play once (Ansible keeps them in a set).
        let mut seen = std::collections::HashSet::new();
        vars.set_data(
            "ansible_role_names",
            list_of(
                &mut play
                    .role_names
                    .iter()
                    .chain(play.dependent_role_names.iter())
                    .filter(|name| seen.insert(name.as_str())),
            ),
        );
        vars.set_data("ansible_play_name", Value::String(play.name.to_string()));
        vars.set_shared_data("ansible_play_hosts_all", play.hosts_all.value());
        let active = play.hosts_active.value();
        vars.set_shared_data("ansible_play_hosts", active.clone());
        vars.set_shared_data("ansible_play_batch", active.clone());
        vars.set_shared_data("play_hosts", active);
        vars.set_hostvars(Arc::new(HostVars {
            shared: self.shared.clone(),
            inventory: inventory.clone(),
        }));
        vars
    }
}

impl Shared {
    fn state(&self) -> std::sync::MutexGuard<'_, HashMap<String, HostState>> {
        self.hosts.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A host's variables in precedence order, with `layers` (the play's and the
    /// task's, trusted) between the facts and what the run set: everything but the
    /// play's magic variables and `hostvars`.
    fn host_vars(
        &self,
        inventory: &Inventory,
        host: &str,
        layers: &[&Map<String, Value>],
        role_defaults: &[&Map<String, Value>],
        role_params: Option<&Map<String, Value>>,
        include_params: &[&Map<String, Value>],
    ) -> Vars {
        let mut vars = Vars::new();
        for (k, v) in role_defaults.iter().flat_map(|m| m.iter()) {
            vars.set_trusted(k, v.clone());
        }
        for (k, v) in inventory.host_vars(host) {
            vars.set_trusted(&k, v);
        }
        let state = self.state().get(host).cloned().unwrap_or_default();
        inject_facts(&mut vars, &state.facts);
        for layer in layers {
            for (k, v) in *layer {
                vars.set_trusted(k, v.clone());
            }
        }
        for (k, v) in state.included {
            vars.set_trusted(&k, v);
        }
        for (k, v) in state.set {
            match v {
                Kept::Trusted(v) => vars.set_trusted(&k, v),
                Kept::Data(v) => vars.set_data(&k, v),
            }
        }
        for (k, v) in role_params
            .into_iter()
            .chain(include_params.iter().copied())
            .flatten()
        {
            vars.set_trusted(k, v.clone());
        }
        for (k, v) in &self.extra_vars {
            vars.set_trusted(k, v.clone());
        }
        for (k, v) in inventory.magic_vars(host) {
            vars.set_data(&k, v);
        }
        vars.set_shared_data("groups", inventory.groups_value());
        for (k, v) in self.magic.run_wide() {
            vars.set_data(&k, v);
        }
        vars
    }
}

/// `hostvars`: every inventory host's variables, built when a template asks for them.
struct HostVars {
    shared: Arc<Shared>,
    inventory: Arc<Inventory>,
}

impl std::fmt::Debug for HostVars {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.inventory.host_names()).finish()
    }
}

impl HostVarsSource for HostVars {
    fn hosts(&self) -> Vec<String> {
        self.inventory.host_names()
    }

    fn vars(&self, host: &str) -> Option<Vars> {
        if !self.inventory.knows_host(host) {
            return None;
        }
        let mut vars = self
            .shared
            .host_vars(&self.inventory, host, &[], &[], None, &[]);
        vars.set_hostvars(Arc::new(HostVars {
            shared: self.shared.clone(),
            inventory: self.inventory.clone(),
        }));
        Some(vars)
    }
}
