//! Handlers: the notices a task raises (templated, each answered by a handler's name
//! or `listen` topic, or an error), and the notified handlers run when the handlers
//! are flushed (after each section, or by `meta: flush_handlers`), in the order they
//! are defined.

use super::play::{PlayRun, run_task};
use super::{Run, lock};
use crate::playbook::{Chain, Play, Task, TaskItem};
use crate::template::Vars;
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// Whether a handler (of `role`, if any) was notified by name, by `role : name`, or by
/// one of its `listen` topics.
pub(super) fn handler_matches(
    h: &Task,
    role: Option<&crate::playbook::roles::Role>,
    notified: &HashSet<String>,
) -> bool {
    let named = |n: &String| {
        notified.contains(n)
            || role.is_some_and(|r| {
                std::iter::once(&r.name)
                    .chain(&r.fqcn)
                    .any(|r| notified.contains(&format!("{r} : {n}")))
            })
    };
    h.name.as_ref().is_some_and(named) || h.listen.iter().any(named)
}

/// Whether handlers run for hosts that failed: the play's `force_handlers`, else
/// `--force-handlers`.
pub(super) fn force_handlers(run: &Run, play: &Play) -> bool {
    play.force_handlers
        .as_ref()
        .and_then(|v| sandball_pycompat::boolean::truthy(Some(v), false).ok())
        .unwrap_or(run.options.force_handlers)
}

/// What a task notifies: its notices, templated (a name, or a list of names) with the
/// first host's variables as Ansible reads them, and which handlers answer each
/// (the templated handler names that render to it, to notify as written; `None` when
/// no handler does), worked out once for the task.
pub(super) struct Notices {
    names: Vec<String>,
    answers: Vec<(String, Option<Vec<String>>)>,
}

impl Notices {
    /// The notices of the task whose keywords are `kw`.
    pub(super) fn of_task(cx: PlayRun<'_>, kw: &Chain<'_>, vars: &Vars) -> Notices {
        let names: Vec<String> = kw
            .notify()
            .into_iter()
            .flat_map(|n| {
                if !crate::template::is_template(&n) {
                    return vec![n];
                }
                match cx.run.templar.template(&Value::String(n.clone()), vars) {
                    Ok(Value::String(s)) => vec![s],
                    Ok(Value::Array(items)) => items
                        .into_iter()
                        .map(|i| match i {
                            Value::String(s) => s,
                            other => other.to_string(),
                        })
                        .collect(),
                    Ok(other) => vec![other.to_string()],
                    Err(_) => vec![n],
                }
            })
            .collect();
        let answers = if names.is_empty() {
            Vec::new()
        } else {
            let more = lock(&cx.state.more_handlers).clone();
            names
                .iter()
                .map(|n| (n.clone(), answering(cx, &more, n, vars)))
                .collect()
        };
        Notices { names, answers }
    }

    /// Whether the task notifies nothing.
    pub(super) fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Raises the notices for `host`, where the task changed something. A notice no
    /// handler answers is an error (returned, the first one), or a warning with
    /// `error_on_missing_handler = false`, as in Ansible.
    pub(super) fn raise(&self, cx: PlayRun<'_>, host: String) -> Option<String> {
        let mut missing_handler = None;
        let mut notices = self.names.clone();
        for (name, answer) in &self.answers {
            match answer {
                Some(raw) => notices.extend(raw.iter().cloned()),
                None => {
                    let msg = format!(
                        "The requested handler '{name}' was not found in either the main handlers list nor in the listening handlers list"
                    );
                    if crate::config::settings().flag("ANSIBLE_ERROR_ON_MISSING_HANDLER", true) {
                        missing_handler.get_or_insert(msg);
                    } else {
                        cx.run.callback.warning(&msg);
                    }
                }
            }
        }
        lock(&cx.state.raised).extend(notices.iter().map(|n| (host.clone(), n.clone())));
        let mut n = lock(&cx.state.notified);
        n.entry(host).or_default().extend(notices);
        missing_handler
    }
}

/// Runs notified handlers, in the order they are defined, then forgets the notices.
/// With `force`, hosts that failed run the handlers they notified too (and stay failed).
pub(super) async fn flush_handlers(cx: PlayRun<'_>, force: bool) {
    let PlayRun { play, state, .. } = cx;
    if lock(&state.notified).is_empty() {
        return;
    }
    let forced: Vec<String> = if force {
        let failed = lock(&state.failed);
        let mut active = lock(&state.active);
        let extra: Vec<String> = cx
            .all
            .iter()
            .filter(|h| failed.contains_key(*h) && !active.contains(h))
            .cloned()
            .collect();
        active.extend(extra.iter().cloned());
        extra
    } else {
        Vec::new()
    };
    let root = Chain::new(&play.keywords);
    // Handlers run in order; one that notifies a handler that comes before it (or has
    // started) leaves that notice for the next flush (the sections' implicit ones
    // included), as in ansible-core; those that come after it run in this one.
    lock(&state.raised).clear();
    lock(&state.served).clear();
    let mut handlers = play.handlers.clone();
    handlers.extend(lock(&state.more_handlers).iter().cloned());
    Box::pin(run_handlers(cx, &handlers, &root)).await;
    let raised = std::mem::take(&mut *lock(&state.raised));
    let served = std::mem::take(&mut *lock(&state.served));
    let mut left: HashMap<String, HashSet<String>> = HashMap::new();
    for (i, (host, n)) in raised.into_iter().enumerate() {
        let taken = served
            .iter()
            .any(|(h, s, at)| *h == host && *s == n && *at > i);
        if !taken {
            left.entry(host).or_default().insert(n);
        }
    }
    *lock(&state.notified) = left;
    lock(&state.active).retain(|h| !forced.contains(h));
}

/// Whether some handler of the play (or of those `more`, included so far) answers `notice`
/// by name or `listen` (`None` when none does), and the templated handler names that
/// render to it with the notifying task's variables, to notify as written (handler
/// names are templated, `listen` is not, as in Ansible).
fn answering(
    cx: PlayRun<'_>,
    more: &[TaskItem],
    notice: &str,
    vars: &crate::template::Vars,
) -> Option<Vec<String>> {
    let root = Chain::new(&cx.play.keywords);
    let mut handlers = Vec::new();
    handler_list(&cx.play.handlers, &root, &mut handlers);
    handler_list(more, &root, &mut handlers);
    let wanted = HashSet::from([notice.to_string()]);
    let mut found = false;
    let mut raw = Vec::new();
    for (h, chain) in &handlers {
        if handler_matches(h, chain.role(), &wanted) {
            found = true;
        } else if let Some(name) = h
            .name
            .as_deref()
            .filter(|n| crate::template::is_template(n))
        {
            match cx
                .run
                .templar
                .template(&Value::String(name.to_string()), vars)
            {
                Ok(Value::String(rendered)) if rendered == notice => {
                    found = true;
                    raw.push(name.to_string());
                }
                Err(e) if h.listen.is_empty() => cx.run.callback.warning(&format!(
                    "Handler '{name}' is unusable: its name cannot be templated with the notifying task's variables and it has no listen topics to be notified by ({e})"
                )),
                _ => {}
            }
        }
    }
    found.then_some(raw)
}

/// The handlers of a list with their keywords, those of roles' blocks included, in
/// order.
fn handler_list<'a>(
    items: &'a [TaskItem],
    inherited: &Chain<'a>,
    out: &mut Vec<(&'a Task, Chain<'a>)>,
) {
    for item in items {
        match item {
            TaskItem::Task(h) => out.push((h, inherited.clone())),
            TaskItem::Block(b) => handler_list(&b.block, &inherited.with(&b.keywords), out),
        }
    }
}

/// Runs the notified handlers; of several handlers with the same name only the last one
/// is notified by it, as in Ansible (the same role twice in a play defines its handlers
/// twice).
async fn run_handlers(cx: PlayRun<'_>, items: &[TaskItem], root: &Chain<'_>) {
    // Each top-level block of handlers (a role's, the play's own) is a group.
    let mut handlers = Vec::new();
    let mut groups = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let before = handlers.len();
        handler_list(std::slice::from_ref(item), root, &mut handlers);
        // Handlers written straight in the play's `handlers:` are one group.
        let group = match item {
            TaskItem::Task(_) if index > 0 && matches!(items[index - 1], TaskItem::Task(_)) => {
                groups.last().copied().unwrap_or(index)
            }
            _ => index,
        };
        groups.extend(std::iter::repeat_n(group, handlers.len() - before));
    }
    // Of the handlers sharing a name, the one that runs is the first of the last group
    // holding that name, as Ansible picks it.
    let runnable: Vec<&(&Task, Chain<'_>)> = handlers
        .iter()
        .enumerate()
        .filter(|(i, (h, _))| {
            h.name.is_none()
                || !handlers.iter().enumerate().any(|(j, (other, _))| {
                    j != *i
                        && other.name == h.name
                        && (groups[j] > groups[*i] || (groups[j] == groups[*i] && j < *i))
                })
        })
        .map(|(_, entry)| entry)
        .collect();
    // The callbacks hear of every notified handler, host by host, before the first
    // runs, as ansible-core tells them.
    {
        let notified = lock(&cx.state.notified);
        for (h, chain) in &runnable {
            let kw = chain.with(&h.keywords);
            let name = h.name.as_deref().unwrap_or(&h.action);
            for host in cx.all.iter() {
                if notified
                    .get(host)
                    .is_some_and(|notices| handler_matches(h, kw.role(), notices))
                {
                    cx.run.callback.notify(name, host);
                }
            }
        }
    }
    for (h, chain) in runnable {
        // The notices it answers for the hosts it runs on are taken up as it starts.
        let kw = chain.with(&h.keywords);
        {
            let notified = lock(&cx.state.notified);
            let at = lock(&cx.state.raised).len();
            let mut served = lock(&cx.state.served);
            for (host, notices) in notified.iter() {
                for n in notices {
                    if handler_matches(h, kw.role(), &HashSet::from([n.clone()])) {
                        served.push((host.clone(), n.clone(), at));
                    }
                }
            }
        }
        let go_on = run_task(cx, h, chain, true).await;
        if !go_on {
            break;
        }
    }
}
