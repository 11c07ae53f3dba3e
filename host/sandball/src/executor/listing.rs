//! What `--list-hosts`, `--list-tasks` and `--list-tags` print instead of running: each
//! play with its hosts (within `--limit`), the tasks `-t`/`--skip-tags` select (those of
//! blocks too, not their `rescue` and `always`, nor handlers and fact gathering) and
//! their tags, as ansible-playbook prints them.

use super::{ExecError, Run, play, task};
use crate::playbook::{Chain, Playbook, TaskItem};
use std::collections::BTreeSet;
use std::fmt::Write;

/// What to list.
#[derive(Clone, Copy, Debug, Default)]
pub struct Listing {
    /// `--list-hosts`.
    pub hosts: bool,
    /// `--list-tasks`.
    pub tasks: bool,
    /// `--list-tags`.
    pub tags: bool,
}

/// The listing of one playbook.
pub fn render(run: &Run, playbook: &Playbook, what: Listing) -> Result<String, ExecError> {
    let mut out = format!("\nplaybook: {}\n", playbook.path.display());
    for (i, p) in playbook.plays.iter().enumerate() {
        let pattern = play::hosts_pattern(run, p)?;
        let name = p.name.clone().unwrap_or_else(|| pattern.clone());
        let root = Chain::new(&p.keywords);
        let play_vars = &p.keywords.vars;
        let play_tags = task::tags(run, play_vars, &root);
        let _ = writeln!(
            out,
            "\n  play #{} ({pattern}): {name}\tTAGS: [{}]",
            i + 1,
            joined(&play_tags)
        );
        if what.hosts {
            let hosts = play::play_hosts(run, p)?;
            let _ = writeln!(
                out,
                "    pattern: ['{pattern}']\n    hosts ({}):",
                hosts.len()
            );
            for h in hosts {
                let _ = writeln!(out, "      {h}");
            }
        }
        let mut tasks = Vec::new();
        for section in [&p.pre_tasks, &p.tasks, &p.post_tasks] {
            collect(run, play_vars, section, &root, &mut tasks);
        }
        if what.tasks {
            let _ = writeln!(out, "    tasks:");
            for (name, tags) in &tasks {
                let _ = writeln!(out, "      {name}\tTAGS: [{}]", joined(tags));
            }
        }
        if what.tags {
            let all: BTreeSet<&str> = tasks
                .iter()
                .flat_map(|(_, tags)| tags.iter().map(String::as_str))
                .collect();
            let _ = writeln!(out, "      TASK TAGS: [{}]", joined(&all));
        }
    }
    Ok(out)
}

/// The selected tasks of `items`, in order, with their tags (their own and inherited).
fn collect(
    run: &Run,
    play_vars: &serde_json::Map<String, serde_json::Value>,
    items: &[TaskItem],
    inherited: &Chain<'_>,
    out: &mut Vec<(String, BTreeSet<String>)>,
) {
    for item in items {
        match item {
            TaskItem::Task(t) => {
                let kw = inherited.with(&t.keywords);
                if task::selected_by_tags(run, play_vars, &kw) {
                    // A named task of a role is `role : name`; an unnamed one is its
                    // action, as ansible-playbook lists them.
                    let name = match (kw.role(), &t.name) {
                        (Some(role), Some(own)) => format!("{} : {own}", role.name),
                        (_, Some(own)) => own.clone(),
                        (_, None) => t.action.clone(),
                    };
                    out.push((name, task::tags(run, play_vars, &kw)));
                }
            }
            TaskItem::Block(b) => {
                let inner = inherited.with(&b.keywords);
                // Only a block's own tasks are listed (not `rescue`, `always`), as
                // ansible-playbook lists them.
                collect(run, play_vars, &b.block, &inner, out);
            }
        }
    }
}

/// Tags as ansible-playbook lists them: `a, b`.
fn joined<S: AsRef<str> + Ord>(tags: &BTreeSet<S>) -> String {
    tags.iter()
        .map(AsRef::as_ref)
        .collect::<Vec<_>>()
        .join(", ")
}
