//! Roles as the play runs them: a role's block once per host and parameters (unless
//! it allows duplicates), `meta: end_role`'s hosts going on after it, and the roles
//! included while the play runs (their names, handlers, and with `public` their
//! variables).

use super::play::{PlayRun, PlayState, run_items};
use super::{Run, lock, task};
use crate::playbook::{Chain, TaskItem};
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// Runs a role's tasks on the hosts it has not run on yet with the same parameters (the
/// others wait), as Ansible runs a role once per host, unless it allows duplicates; a
/// role whose tasks the tags leave out has not run. The hosts that end the role
/// (`meta: end_role`) go on after it.
pub(super) async fn run_role_once(
    cx: PlayRun<'_>,
    b: &crate::playbook::Block,
    inner: &Chain<'_>,
    role: &crate::playbook::roles::Role,
) -> bool {
    let state = cx.state;
    let entering = lock(&state.active).clone();
    let ran = lock(&state.roles_ran)
        .get(&role.key)
        .cloned()
        .unwrap_or_default();
    let fresh: Vec<String> = entering
        .iter()
        .filter(|h| role.allow_duplicates || !ran.contains(*h))
        .cloned()
        .collect();
    if fresh.is_empty() {
        return true;
    }
    let selected = any_selected(cx.run, cx.vars, &b.block, inner);
    if selected {
        lock(&state.roles_ran)
            .entry(role.key.clone())
            .or_default()
            .extend(fresh.iter().cloned());
    }
    // What each host has done so far (tasks that ran, not skipped ones), and how often
    // it was unreachable under `ignore_unreachable`.
    let worked = || -> HashMap<String, u32> {
        cx.run
            .stats
            .snapshot()
            .into_iter()
            .map(|(host, s)| (host, s.ok + s.failed + s.unreachable))
            .collect()
    };
    let unreachable = || lock(&state.unreachable_ignored).clone();
    let before = worked();
    let unreachable_before = unreachable();
    let waiting = std::mem::replace(&mut *lock(&state.active), fresh.clone());
    run_items(cx, &b.block, inner).await;
    // A host on which every task of the role was skipped (the entry's `when` did not
    // hold), or that was unreachable in it, has not run it: a later entry of the same
    // role runs, as in Ansible.
    if selected {
        let after = worked();
        let unreachable_after = unreachable();
        let count = |m: &HashMap<String, u32>, h: &String| m.get(h).copied().unwrap_or(0);
        let idle: HashSet<&String> = fresh
            .iter()
            .filter(|h| {
                count(&after, h) == count(&before, h)
                    || count(&unreachable_after, h) > count(&unreachable_before, h)
            })
            .collect();
        if let Some(ran) = lock(&state.roles_ran).get_mut(&role.key) {
            ran.retain(|h| !idle.contains(h));
        }
    }
    // The hosts that ended the role (`meta: end_role`) go on after it too.
    let back = state.role_done(&b.keywords);
    let survivors = std::mem::take(&mut *lock(&state.active));
    *lock(&state.active) = state.in_order(&entering, |h| {
        (waiting.contains(h) && !fresh.contains(h)) || survivors.contains(h) || back.contains(h)
    });
    !lock(&state.active).is_empty()
}

/// Adds roles included while the play runs to `ansible_play_role_names`.
pub(super) fn add_role_names(cx: PlayRun<'_>, names: Vec<String>) {
    lock(&cx.state.role_names).extend(names);
}

/// Adds the handlers of a role included while the play runs, and with `public` its
/// variables for the rest of the play.
pub(super) fn add_role(
    cx: PlayRun<'_>,
    handlers: TaskItem,
    public: Option<std::sync::Arc<crate::playbook::roles::Role>>,
) {
    lock(&cx.state.more_handlers).push(handlers);
    if let Some(role) = public {
        add_public_role(cx, role);
    }
}

/// Makes the defaults and vars of a role imported or included while the play runs
/// the play's for the rest of it.
pub(super) fn add_public_role(cx: PlayRun<'_>, role: std::sync::Arc<crate::playbook::roles::Role>) {
    lock(&cx.state.public_roles).push(role);
}

/// Whether `-t`/`--skip-tags` select any task of a list.
fn any_selected(
    run: &Run,
    play_vars: &serde_json::Map<String, Value>,
    items: &[TaskItem],
    inherited: &Chain<'_>,
) -> bool {
    items.iter().any(|item| match item {
        TaskItem::Task(t) => task::selected_by_tags(run, play_vars, &inherited.with(&t.keywords)),
        TaskItem::Block(b) => {
            let inner = inherited.with(&b.keywords);
            [&b.block, &b.rescue, &b.always]
                .iter()
                .any(|part| any_selected(run, play_vars, part, &inner))
        }
    })
}

impl PlayState {
    /// The hosts that ended the role whose block's keywords are `role_block` (they go
    /// on after it), no longer ended.
    fn role_done(&self, role_block: &crate::playbook::Keywords) -> Vec<String> {
        let id = role_block as *const _ as usize;
        let mut ended = lock(&self.roles_ended);
        let (done, still): (Vec<_>, Vec<_>) = ended.drain(..).partition(|(r, _)| *r == id);
        *ended = still;
        done.into_iter().map(|(_, h)| h).collect()
    }
}
