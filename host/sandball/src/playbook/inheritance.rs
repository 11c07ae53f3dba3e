//! One keyword model for plays, role entries, blocks and tasks: the keywords they share
//! ([`Keyword`]), read once per object into [`Keywords`], and resolved for one task by
//! a [`Chain`] (play, enclosing blocks, task) with Ansible's inheritance: a child's
//! value overrides its parent's, except for `when` and `tags`, which add up, and
//! `environment` and `capabilities`, whose levels all apply, outermost first.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::playbook::attribute::Fields;
use crate::yaml::error::PlaybookError;
use crate::yaml::location::Location;

/// A keyword every kind of playbook object may carry (see `keywords.rs` for which
/// object accepts which), other than `name`, `vars`, `tags` and `when`, which
/// [`Keywords`] holds typed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Keyword {
    /// `connection`.
    Connection,
    /// `port`.
    Port,
    /// `remote_user`.
    RemoteUser,
    /// `module_defaults`.
    ModuleDefaults,
    /// `environment`.
    Environment,
    /// `no_log`.
    NoLog,
    /// `run_once`.
    RunOnce,
    /// `ignore_errors`.
    IgnoreErrors,
    /// `ignore_unreachable`.
    IgnoreUnreachable,
    /// `check_mode`.
    CheckMode,
    /// `diff`.
    Diff,
    /// `any_errors_fatal`.
    AnyErrorsFatal,
    /// `throttle`.
    Throttle,
    /// `timeout`.
    Timeout,
    /// `debugger`.
    Debugger,
    /// `become`.
    Become,
    /// `become_user`.
    BecomeUser,
    /// `become_method`.
    BecomeMethod,
    /// `become_flags`.
    BecomeFlags,
    /// `become_exe`.
    BecomeExe,
    /// `collections`.
    Collections,
    /// `capabilities`: sandball's changes to the capability grant.
    Capabilities,
    /// `delegate_to` (`local_action` sets it to `localhost`).
    DelegateTo,
    /// `delegate_facts`.
    DelegateFacts,
    /// `notify` (tasks and blocks).
    Notify,
}

impl Keyword {
    /// Every shared keyword.
    pub const ALL: &'static [Keyword] = &[
        Keyword::Connection,
        Keyword::Port,
        Keyword::RemoteUser,
        Keyword::ModuleDefaults,
        Keyword::Environment,
        Keyword::NoLog,
        Keyword::RunOnce,
        Keyword::IgnoreErrors,
        Keyword::IgnoreUnreachable,
        Keyword::CheckMode,
        Keyword::Diff,
        Keyword::AnyErrorsFatal,
        Keyword::Throttle,
        Keyword::Timeout,
        Keyword::Debugger,
        Keyword::Become,
        Keyword::BecomeUser,
        Keyword::BecomeMethod,
        Keyword::BecomeFlags,
        Keyword::BecomeExe,
        Keyword::Collections,
        Keyword::Capabilities,
        Keyword::DelegateTo,
        Keyword::DelegateFacts,
        Keyword::Notify,
    ];

    /// The keyword as playbooks spell it.
    pub fn name(self) -> &'static str {
        match self {
            Keyword::Connection => "connection",
            Keyword::Port => "port",
            Keyword::RemoteUser => "remote_user",
            Keyword::ModuleDefaults => "module_defaults",
            Keyword::Environment => "environment",
            Keyword::NoLog => "no_log",
            Keyword::RunOnce => "run_once",
            Keyword::IgnoreErrors => "ignore_errors",
            Keyword::IgnoreUnreachable => "ignore_unreachable",
            Keyword::CheckMode => "check_mode",
            Keyword::Diff => "diff",
            Keyword::AnyErrorsFatal => "any_errors_fatal",
            Keyword::Throttle => "throttle",
            Keyword::Timeout => "timeout",
            Keyword::Debugger => "debugger",
            Keyword::Become => "become",
            Keyword::BecomeUser => "become_user",
            Keyword::BecomeMethod => "become_method",
            Keyword::BecomeFlags => "become_flags",
            Keyword::BecomeExe => "become_exe",
            Keyword::Collections => "collections",
            Keyword::Capabilities => "capabilities",
            Keyword::DelegateTo => "delegate_to",
            Keyword::DelegateFacts => "delegate_facts",
            Keyword::Notify => "notify",
        }
    }

    /// Whether every level's value applies (outermost first) instead of the nearest.
    pub fn accumulates(self) -> bool {
        matches!(self, Keyword::Environment | Keyword::Capabilities)
    }
}

/// A keyword's value as written, and where.
#[derive(Debug, Clone, PartialEq)]
pub struct Setting {
    /// The raw value (templated by the executor).
    pub value: Value,
    /// Where the keyword is written.
    pub at: Location,
}

/// The shared keywords one object sets. Unset and `null` keywords are absent (they
/// inherit).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Keywords {
    settings: BTreeMap<Keyword, Setting>,
    /// `vars`.
    pub vars: Map<String, Value>,
    /// The `vars` of the include whose tasks this level holds: include parameters,
    /// which rank above `set_fact` and role parameters (`include_tasks`,
    /// `include_role`).
    pub include_params: Map<String, Value>,
    /// `tags`; a comma-separated string is split.
    pub tags: Vec<String>,
    /// `when` (blocks, tasks and role entries): conditionals, all of which must hold.
    pub when: Vec<Value>,
    /// The role whose tasks (or handlers) this level holds, for the block a role
    /// becomes.
    pub role: Option<std::sync::Arc<crate::playbook::roles::Role>>,
    /// The directory of the file a task is written in (tasks only): the last entry of
    /// its search path.
    pub dir: Option<std::path::PathBuf>,
}

impl Keywords {
    /// Keywords given as a mapping when the playbook runs (`apply` of an include):
    /// `vars`, `tags`, `when` and the shared keywords; anything else is an error.
    pub fn from_map(m: &Map<String, Value>, at: &Location) -> Result<Keywords, String> {
        let mut k = Keywords::default();
        let list = |v: &Value| -> Vec<Value> {
            match v {
                Value::Array(items) => items.clone(),
                Value::Null => Vec::new(),
                one => vec![one.clone()],
            }
        };
        for (name, value) in m {
            match name.as_str() {
                "vars" => match value {
                    Value::Object(vars) => k.vars = vars.clone(),
                    other => return Err(format!("vars must be a mapping, got {other}")),
                },
                "tags" => {
                    k.tags = list(value)
                        .iter()
                        .flat_map(|t| match t {
                            Value::String(s) => {
                                s.split(',').map(|p| p.trim().to_string()).collect()
                            }
                            other => vec![other.to_string()],
                        })
                        .collect();
                }
                "when" => k.when = list(value),
                other => match Keyword::ALL.iter().find(|kw| kw.name() == other) {
                    Some(kw) => k.set(*kw, value.clone(), at.clone()),
                    None => return Err(format!("'{other}' is not a keyword that can be applied")),
                },
            }
        }
        Ok(k)
    }

    /// The level that marks a role's tasks or handlers: no keyword, the role.
    pub(crate) fn of_role(role: std::sync::Arc<crate::playbook::roles::Role>) -> Keywords {
        Keywords {
            role: Some(role),
            ..Keywords::default()
        }
    }

    /// Reads the shared keywords of an object whose keywords were already checked
    /// against what its kind accepts.
    pub(crate) fn parse(fields: &Fields<'_>) -> Result<Keywords, PlaybookError> {
        let mut keywords = Keywords {
            vars: fields.vars()?,
            tags: fields.tags()?,
            when: fields.conditionals("when")?,
            ..Keywords::default()
        };
        for &k in Keyword::ALL {
            let Some(entry) = fields.entry(k.name()) else {
                continue;
            };
            if entry.value.is_null() {
                continue;
            }
            let value = if k == Keyword::Notify {
                Value::Array(
                    fields
                        .name_list("notify")?
                        .into_iter()
                        .map(Value::String)
                        .collect(),
                )
            } else {
                entry.value.to_json()
            };
            keywords.settings.insert(
                k,
                Setting {
                    value,
                    at: fields.source().location(entry.key.mark),
                },
            );
        }
        Ok(keywords)
    }

    /// The value of `k`, when this object sets it.
    pub fn get(&self, k: Keyword) -> Option<&Value> {
        self.settings.get(&k).map(|s| &s.value)
    }

    /// The setting of `k` (value and place), when this object sets it.
    pub fn setting(&self, k: Keyword) -> Option<&Setting> {
        self.settings.get(&k)
    }

    /// Sets `k` (for objects the loader or the executor makes: `local_action`, the
    /// fact-gathering task).
    pub fn set(&mut self, k: Keyword, value: Value, at: Location) {
        self.settings.insert(k, Setting { value, at });
    }

    /// The handlers this object's `notify` names (empty when unset).
    pub fn notify(&self) -> Vec<String> {
        self.get(Keyword::Notify).map(names).unwrap_or_default()
    }

    /// The collections search list this level decides, if it decides one: its own
    /// `collections` (see [`search_list`]), else, for the level a role's tasks sit in,
    /// the role's list (a role's tasks never see the list of the play or block that
    /// runs the role, as in ansible-core).
    pub fn collections(&self) -> Option<Vec<String>> {
        match (self.get(Keyword::Collections), &self.role) {
            (Some(value), _) => Some(search_list(value)),
            (None, Some(role)) => Some(role.collections.clone()),
            (None, None) => None,
        }
    }

    /// Every keyword this object sets, in [`Keyword`] order.
    pub fn settings(&self) -> impl Iterator<Item = (Keyword, &Setting)> {
        self.settings.iter().map(|(k, s)| (*k, s))
    }
}

/// The search list a `collections` value makes, as ansible-core makes it: the names
/// in order (one string is a list of one), then `ansible.legacy` when the list is not
/// empty and names neither `ansible.builtin` nor `ansible.legacy`. An unqualified
/// module or action name is looked for in each in turn; `ansible.legacy` is the
/// search of a name without a list (the playbook's and roles' `library/`, then
/// ansible-core's own).
pub fn search_list(value: &Value) -> Vec<String> {
    let mut list: Vec<String> = match value {
        Value::Array(items) => items
            .iter()
            .filter_map(|c| c.as_str().map(str::to_string))
            .collect(),
        Value::String(one) => vec![one.clone()],
        _ => Vec::new(),
    };
    with_fallback(&mut list, "ansible.legacy");
    list
}

/// Appends `fallback` to a non-empty search list that names neither `ansible.builtin`
/// nor `ansible.legacy` (a collection's role falls back on `ansible.builtin`, anything
/// else on `ansible.legacy`).
pub fn with_fallback(list: &mut Vec<String>, fallback: &str) {
    if !list.is_empty()
        && !list
            .iter()
            .any(|c| c == "ansible.builtin" || c == "ansible.legacy")
    {
        list.push(fallback.to_string());
    }
}

/// The names of a `notify` value as the loader stores it (a list of strings).
pub fn names(value: &Value) -> Vec<String> {
    match value {
        Value::Array(items) => items
            .iter()
            .filter_map(|n| n.as_str().map(str::to_string))
            .collect(),
        // One name, as `apply: {notify: name}` gives it.
        Value::String(name) => vec![name.clone()],
        _ => Vec::new(),
    }
}

/// The keywords that apply to one task: the play's, each enclosing block's, and the
/// task's own, outermost first.
#[derive(Debug, Clone, Default)]
pub struct Chain<'a> {
    levels: Vec<&'a Keywords>,
}

impl<'a> Chain<'a> {
    /// The chain of a play's top-level objects.
    pub fn new(play: &'a Keywords) -> Chain<'a> {
        Chain { levels: vec![play] }
    }

    /// This chain with one more (inner) level: a block or the task itself.
    pub fn with(&self, inner: &'a Keywords) -> Chain<'a> {
        let mut levels = self.levels.clone();
        levels.push(inner);
        Chain { levels }
    }

    /// The value of `k` that applies: the innermost level's that sets it.
    pub fn nearest(&self, k: Keyword) -> Option<&'a Value> {
        self.nearest_setting(k).map(|s| &s.value)
    }

    /// The setting of `k` that applies, with where it is written.
    pub fn nearest_setting(&self, k: Keyword) -> Option<&'a Setting> {
        self.levels.iter().rev().find_map(|l| l.setting(k))
    }

    /// The innermost value of `k` that `keep` accepts (the executor skips levels that
    /// set a keyword to `omit`).
    pub fn nearest_where(&self, k: Keyword, keep: impl Fn(&Value) -> bool) -> Option<&'a Value> {
        self.levels
            .iter()
            .rev()
            .filter_map(|l| l.get(k))
            .find(|v| keep(v))
    }

    /// Every level's value of `k`, outermost first (for keywords that accumulate).
    pub fn all(&self, k: Keyword) -> impl Iterator<Item = &'a Value> + '_ {
        self.levels.iter().filter_map(move |l| l.get(k))
    }

    /// Every level's `when`, outermost first: all must hold.
    pub fn when(&self) -> impl Iterator<Item = &'a Value> + '_ {
        self.levels.iter().flat_map(|l| l.when.iter())
    }

    /// Every level's tags.
    pub fn tags(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.levels
            .iter()
            .flat_map(|l| l.tags.iter().map(String::as_str))
    }

    /// The `vars` of the blocks and the task, outermost first (the play's vars are a
    /// precedence layer of their own).
    pub fn vars(&self) -> Vec<&'a Map<String, Value>> {
        self.levels.iter().skip(1).map(|l| &l.vars).collect()
    }

    /// The directory of the task's own file, when the innermost level is a task.
    pub fn task_dir(&self) -> Option<&'a std::path::Path> {
        self.levels.last().and_then(|l| l.dir.as_deref())
    }

    /// Every level's include parameters, outermost first.
    pub fn include_params(&self) -> Vec<&'a Map<String, Value>> {
        self.levels.iter().map(|l| &l.include_params).collect()
    }

    /// The role the task belongs to: the innermost level's.
    pub fn role(&self) -> Option<&'a crate::playbook::roles::Role> {
        self.levels.iter().rev().find_map(|l| l.role.as_deref())
    }

    /// The roles that include or import the task's role, nearest first (a role that
    /// includes itself is its own parent): `ansible_parent_role_names`.
    pub fn parent_roles(&self) -> Vec<&'a crate::playbook::roles::Role> {
        let mut roles: Vec<&crate::playbook::roles::Role> = self
            .levels
            .iter()
            .rev()
            .filter_map(|l| l.role.as_deref())
            .collect();
        // The levels (blocks) of one role name the same role once.
        roles.dedup_by(|a, b| std::ptr::eq(*a, *b));
        roles.into_iter().skip(1).collect()
    }

    /// The handlers the task notifies: the nearest level's `notify`.
    pub fn notify(&self) -> Vec<String> {
        self.nearest(Keyword::Notify).map(names).unwrap_or_default()
    }

    /// The collections search list for the task's unqualified action: the innermost
    /// level's that decides one ([`Keywords::collections`]); empty when none does.
    pub fn collections(&self) -> Vec<String> {
        self.levels
            .iter()
            .rev()
            .find_map(|l| l.collections())
            .unwrap_or_default()
    }

    /// Each level, outermost first.
    pub fn levels(&self) -> &[&'a Keywords] {
        &self.levels
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::path::PathBuf;

    fn at(line: usize) -> Location {
        Location {
            file: PathBuf::from("p.yml"),
            line,
            column: 1,
        }
    }

    fn level(pairs: &[(Keyword, Value)], when: &[&str], tags: &[&str]) -> Keywords {
        let mut k = Keywords {
            when: when.iter().map(|w| json!(w)).collect(),
            tags: tags.iter().map(|t| t.to_string()).collect(),
            ..Keywords::default()
        };
        for (i, (kw, v)) in pairs.iter().enumerate() {
            k.set(*kw, v.clone(), at(i + 1));
        }
        k
    }

    #[test]
    fn the_innermost_setting_wins() {
        let play = level(
            &[
                (Keyword::CheckMode, json!(true)),
                (Keyword::NoLog, json!(true)),
            ],
            &[],
            &["p"],
        );
        let block = level(&[(Keyword::NoLog, json!(false))], &["a"], &["b"]);
        let task = level(&[(Keyword::IgnoreErrors, json!(true))], &["c"], &[]);
        let chain = Chain::new(&play).with(&block).with(&task);
        assert_eq!(chain.nearest(Keyword::CheckMode), Some(&json!(true)));
        assert_eq!(chain.nearest(Keyword::NoLog), Some(&json!(false)));
        assert_eq!(chain.nearest(Keyword::IgnoreErrors), Some(&json!(true)));
        assert_eq!(chain.nearest(Keyword::Diff), None);
        assert_eq!(chain.when().collect::<Vec<_>>(), vec!["a", "c"]);
        assert_eq!(chain.tags().collect::<Vec<_>>(), vec!["p", "b"]);
        assert_eq!(chain.vars().len(), 2, "the play's vars are not a level");
    }

    #[test]
    fn accumulating_keywords_keep_every_level() {
        let play = level(&[(Keyword::Environment, json!({"A": "1"}))], &[], &[]);
        let task = level(&[(Keyword::Environment, json!({"B": "2"}))], &[], &[]);
        let chain = Chain::new(&play).with(&task);
        assert_eq!(
            chain.all(Keyword::Environment).collect::<Vec<_>>(),
            vec![&json!({"A": "1"}), &json!({"B": "2"})]
        );
        assert!(Keyword::Environment.accumulates());
        assert!(!Keyword::NoLog.accumulates());
    }

    #[test]
    fn applied_notify_names_one_handler_or_several() {
        for (notify, expected) in [
            (json!("hello"), vec!["hello"]),
            (json!(["a", "b"]), vec!["a", "b"]),
        ] {
            let mut m = Map::new();
            m.insert("notify".into(), notify);
            let applied = Keywords::from_map(&m, &at(1)).unwrap();
            assert_eq!(Chain::new(&applied).notify(), expected);
        }
    }

    #[test]
    fn the_nearest_collections_list_applies_and_a_role_keeps_its_own() {
        let play = level(&[(Keyword::Collections, json!(["ns.coll"]))], &[], &[]);
        assert_eq!(
            Chain::new(&play).collections(),
            vec!["ns.coll", "ansible.legacy"]
        );
        let role = std::sync::Arc::new(crate::playbook::roles::Role::default());
        let in_role = Keywords::of_role(role);
        assert!(Chain::new(&play).with(&in_role).collections().is_empty());
        let block = level(
            &[(Keyword::Collections, json!(["ansible.builtin", "x.y"]))],
            &[],
            &[],
        );
        assert_eq!(
            Chain::new(&play).with(&in_role).with(&block).collections(),
            vec!["ansible.builtin", "x.y"]
        );
        let none = level(&[(Keyword::Collections, json!([]))], &[], &[]);
        assert!(Chain::new(&play).with(&none).collections().is_empty());
        assert_eq!(search_list(&json!("a.b")), vec!["a.b", "ansible.legacy"]);
    }

    #[test]
    fn names_are_unique() {
        let mut names: Vec<&str> = Keyword::ALL.iter().map(|k| k.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Keyword::ALL.len());
    }
}
