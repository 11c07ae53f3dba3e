//! What a playbook would grant, worked out before anything runs (for
//! `sandball audit playbook`): per task and host, the module, its kind, and the grant
//! policy gives it once the task's arguments are templated with what is known before
//! the run (inventory, play, block and task vars, extra vars). A loop whose items are
//! known is planned item by item. What cannot be known yet — registered results, facts,
//! loop items that come from them — is reported as unknown, with the reason.

use super::Run;
use super::context;
use super::module_run;
use super::task;
use crate::playbook::{Chain, Play, Task, TaskItem};
use crate::plugins::action::{self, Runs};
use crate::policy::{self, LegacyDecision, Subject};
use crate::vars::{HostNames, PlayScope};
use sandball_wire::capability::Grant;
use serde::Serialize;

/// What one task would do on one host.
#[derive(Clone, Debug, Serialize)]
pub struct Planned {
    /// The play's name.
    pub play: String,
    /// The task's name (or action).
    pub task: String,
    /// The host.
    pub host: String,
    /// The loop item's label, for a task that loops.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item: Option<String>,
    /// The module (or action) name.
    pub module: String,
    /// How it runs.
    #[serde(flatten)]
    pub kind: Kind,
}

/// How a task's action runs, and what it is granted.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Kind {
    /// A component: sandboxed, with this grant (or unknown before the run).
    Component {
        /// The component's sha256.
        sha256: String,
        /// The grant, when it can be worked out now.
        #[serde(skip_serializing_if = "Option::is_none")]
        grant: Option<Grant>,
        /// Why the grant cannot be known yet.
        #[serde(skip_serializing_if = "Option::is_none")]
        unknown: Option<String>,
        /// What the policy grants that lets the module run any program
        /// ([`policy::launchers`]).
        #[serde(skip_serializing_if = "Vec::is_empty")]
        warnings: Vec<String>,
    },
    /// A legacy module: not sandboxed; policy says whether it runs.
    Legacy {
        /// `allow`, `warn` or `deny`.
        decision: String,
        /// What policy says about it.
        #[serde(skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// An action that runs on the controller (debug, set_fact, assert, fail) or
    /// only uses the connection (raw): no module.
    Action,
    /// No component or legacy module of that name.
    Missing {
        /// The lookup error.
        message: String,
    },
}

/// Plans every play of a playbook on the hosts its patterns (and `limit`) select.
pub fn playbook(run: &Run, plays: &[Play]) -> Vec<Planned> {
    let mut out = Vec::new();
    for play in plays {
        let hosts = match play_hosts(run, play) {
            Ok(h) => h,
            Err(e) => {
                run.callback.warning(&e);
                continue;
            }
        };
        let name = play.name.clone().unwrap_or_else(|| play.hosts.clone());
        let vars_files = super::play::play_vars_files(run, play, &play.keywords.vars, &hosts);
        let dir = play.playbook_dir();
        let scope = PlayScope {
            name: &name,
            vars: &play.keywords.vars,
            vars_files: vars_files.as_ref(),
            hosts_all: HostNames::new(&hosts),
            hosts_active: HostNames::new(&hosts),
            roles: &play.loaded_roles,
            role_names: &play.role_names,
            dependent_role_names: &play.dependent_role_names,
            dir: Some(&dir),
        };
        let root = Chain::new(&play.keywords);
        if let Some(gather) = super::gathering::gathering_task(play) {
            let gather = [TaskItem::Task(Box::new(gather))];
            plan_items(run, &scope, &gather, &root, &hosts, &mut out);
        }
        for items in [
            &play.pre_tasks,
            &play.tasks,
            &play.post_tasks,
            &play.handlers,
        ] {
            plan_items(run, &scope, items, &root, &hosts, &mut out);
        }
    }
    out
}

fn play_hosts(run: &Run, play: &Play) -> Result<Vec<String>, String> {
    let pattern = super::play::hosts_pattern(run, play).map_err(|e| e.to_string())?;
    let inventory = run.inventory();
    let selected = inventory.select(&pattern).map_err(|e| e.to_string())?;
    match &run.options.limit {
        None => Ok(selected.hosts),
        Some(limit) => inventory
            .apply_limit(&selected.hosts, limit)
            .map(|s| s.hosts)
            .map_err(|e| e.to_string()),
    }
}

fn plan_items(
    run: &Run,
    scope: &PlayScope<'_>,
    items: &[TaskItem],
    inherited: &Chain<'_>,
    hosts: &[String],
    out: &mut Vec<Planned>,
) {
    for item in items {
        match item {
            TaskItem::Task(t) => {
                for host in hosts {
                    out.extend(plan_task(run, scope, t, inherited, host));
                }
            }
            TaskItem::Block(b) => {
                let inner = inherited.with(&b.keywords);
                plan_items(run, scope, &b.block, &inner, hosts, out);
            }
        }
    }
}

fn plan_task(
    run: &Run,
    scope: &PlayScope<'_>,
    t: &Task,
    inherited: &Chain<'_>,
    host: &str,
) -> Vec<Planned> {
    let planned = |module: &str, item: Option<String>, kind| Planned {
        play: scope.name.to_string(),
        task: t.name.clone().unwrap_or_else(|| t.action.clone()),
        host: host.to_string(),
        item,
        module: module.to_string(),
        kind,
    };
    let kw = inherited.with(&t.keywords);
    // A name without a collection runs what the task's `collections` find.
    let found = super::resolve::task_along(run, t, &kw.collections());
    let t = found.as_ref().unwrap_or(t);
    let short = sandball_pycompat::fqcn::short_name(&t.action);
    let plugin = action::find(&t.action);
    let (module, legacy_only) = match plugin.runs(&t.action) {
        Runs::Controller | Runs::Connection | Runs::Chosen => {
            return vec![planned(short, None, Kind::Action)];
        }
        Runs::Module { name, legacy } => (name, legacy),
    };
    let vars = task::task_vars(run, scope, host, &kw);
    if module_run::runs_legacy(run, module, legacy_only, &vars) {
        let short = sandball_pycompat::fqcn::short_name(module);
        return vec![planned(
            short,
            None,
            match run.legacy.get(module) {
                Ok(_) => legacy(run, short, host),
                Err(e) => Kind::Missing {
                    message: e.to_string(),
                },
            },
        )];
    }
    let component = match run.modules.get(module) {
        Ok(c) => c,
        Err(e) => {
            return vec![planned(
                short,
                None,
                Kind::Missing {
                    message: e.to_string(),
                },
            )];
        }
    };
    let grant = |vars: &crate::template::Vars| -> Kind {
        let subject = Subject {
            module: &component.name,
            sha256: Some(&component.sha256),
            builtin: component.builtin,
            host: Some(host),
        };
        let mut warnings = Vec::new();
        let grant = task::args::template_args(run, t, &kw, plugin.raw_args(), vars)
            .map_err(|e| e.msg)
            .and_then(|args| {
                let adjustments = context::capability_keywords(run, &kw, vars)?;
                warnings = policy::launchers::policy_warnings(
                    &run.policy,
                    &subject,
                    &component.manifest,
                    &adjustments,
                    false,
                );
                policy::grant_for(
                    &run.policy,
                    &subject,
                    &component.manifest,
                    &serde_json::Value::Object(args),
                    &adjustments,
                    run.options.limits,
                    None,
                )
                .map_err(|e| e.to_string())
            });
        let (grant, unknown) = match grant {
            Ok(g) => (Some(g), None),
            Err(e) => (None, Some(first_line(&e))),
        };
        Kind::Component {
            sha256: component.sha256.clone(),
            grant,
            unknown,
            warnings,
        }
    };
    let Some(spec) = &t.loop_ else {
        return vec![planned(&component.name, None, grant(&vars))];
    };
    match task::loops::loop_items(run, t, &vars, spec) {
        Ok(items) => items
            .iter()
            .map(|i| {
                let label = super::task::loops::label(&i.item);
                planned(&component.name, Some(label), grant(&i.vars))
            })
            .collect(),
        Err(e) => vec![planned(
            &component.name,
            None,
            Kind::Component {
                sha256: component.sha256.clone(),
                grant: None,
                unknown: Some(format!(
                    "the loop's items are known only when it runs: {}",
                    first_line(&e.msg)
                )),
                warnings: Vec::new(),
            },
        )],
    }
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().to_string()
}

fn legacy(run: &Run, module: &str, host: &str) -> Kind {
    let (decision, message) = match policy::legacy_decision(&run.policy, module, host) {
        LegacyDecision::Allow => ("allow", None),
        LegacyDecision::Warn(m) => ("warn", Some(m)),
        LegacyDecision::Deny(m) => ("deny", Some(m)),
    };
    Kind::Legacy {
        decision: decision.to_string(),
        message,
    }
}
