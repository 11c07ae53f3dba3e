//! Which tasks run as the user asked on the command line: from the one
//! `--start-at-task` names (or globs) on, and under `--step` those confirmed one by one.

use super::Run;
use crate::playbook::{Play, Task, TaskItem};

/// Whether a task runs under `--step`: the user is asked, as ansible-playbook asks
/// (`y` runs it, `c` runs it and every task after it without asking, anything else —
/// or no answer — skips it), and the question is repeated as a banner.
pub(super) fn stepped(run: &Run, name: &str, handler: bool) -> bool {
    use std::sync::atomic::Ordering;
    let Some(step) = &run.options.step else {
        return true;
    };
    if !step.load(Ordering::SeqCst) {
        return true;
    }
    let kind = if handler { "HANDLER" } else { "TASK" };
    let question = format!("Perform task: {kind}: {name} (N)o/(y)es/(c)ontinue: ");
    let answer = crate::plugins::callback::prompt::ask_line(&question).unwrap_or_default();
    let go = match answer.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" => true,
        "c" | "continue" => {
            step.store(false, Ordering::SeqCst);
            true
        }
        _ => false,
    };
    run.callback.banner(question.trim_end());
    go
}

/// Whether a task runs under `--start-at-task` (every task without it).
pub(super) fn starts(run: &Run, t: &Task) -> bool {
    run.options
        .start_at_task
        .as_ref()
        .is_none_or(|s| s.runs(start_name(t)))
}

/// The name `--start-at-task` matches a task by: its own, else its action.
fn start_name(t: &Task) -> &str {
    t.name.as_deref().unwrap_or(&t.action)
}

/// Whether the task `--start-at-task` asks for is among the play's tasks (those of
/// its blocks included, not `rescue` or `always`, which are never started at).
pub(super) fn holds_start(run: &Run, play: &Play) -> bool {
    fn within(start: &super::StartAt, items: &[TaskItem]) -> bool {
        items.iter().any(|item| match item {
            TaskItem::Task(t) => start.matches(start_name(t)),
            TaskItem::Block(b) => within(start, &b.block),
        })
    }
    run.options.start_at_task.as_ref().is_some_and(|start| {
        [&play.pre_tasks, &play.tasks, &play.post_tasks]
            .into_iter()
            .any(|items| within(start, items))
    })
}
