//! What the callback is told about a task: its banner under the `free` strategy, the
//! warnings and deprecations that come before its result, where it is written (for the
//! error block), and what is shown of a result (all of it, or only its outcome under
//! `no_log`).

use crate::executor::Run;
use crate::executor::coerce::keyword_bool;
use crate::playbook::{Chain, Keyword, Task};
use crate::plugins::action::TaskResult;
use crate::plugins::action::{self, Runs};
use crate::template::Vars;
use sandball_pycompat::pyops::py_truth;
use serde_json::{Map, Value};

/// What is shown for the item of a `no_log` loop's result.
pub(super) const CENSORED_ITEM: &str = "(censored due to no_log)";

/// The message that replaces a `no_log` result.
pub const CENSORED: &str =
    "the output has been hidden due to the fact that 'no_log: true' was specified for this result";

/// Under the `free` strategy, the banner a task's results are shown under: shown before
/// a result when another task's banner was shown last, as ansible-playbook's output
/// has it when hosts run ahead of each other.
#[derive(Clone, Copy)]
pub struct Banner<'a> {
    /// The task whose banner was shown last (shared by the play's hosts).
    pub last: &'a std::sync::Mutex<Option<usize>>,
    /// This task.
    pub task: usize,
    /// Its banner's name.
    pub name: &'a str,
    /// Whether it is a handler.
    pub handler: bool,
}

/// Shows the task's banner when the free strategy's last one was another task's.
pub(crate) fn show_banner(run: &Run, banner: Option<Banner<'_>>) {
    let Some(b) = banner else { return };
    let mut last = b.last.lock().unwrap_or_else(|e| e.into_inner());
    if *last != Some(b.task) {
        run.callback.task_start(b.name, b.handler);
        *last = Some(b.task);
    }
}

/// Shows the warnings and deprecations templating or reading the playbook gave
/// (`errors='warn'` lookups) before the result they came with, as ansible-core shows
/// them when they happen; one about a text of `task`'s with that text's origin.
pub(crate) fn show_warnings(run: &Run, task: Option<&crate::yaml::Location>) {
    use crate::playbook::value_origin::{Written, find};
    let origin = |about: &Option<crate::template::About>| -> Option<String> {
        let written = match about.as_ref()? {
            crate::template::About::Text(text) => Written::Text(text),
            crate::template::About::Part(part) => Written::Part(part),
        };
        let at = find(task?, &[written]).into_iter().next()??;
        Some(at.origin_block(true))
    };
    let mut notices = crate::template::take_warnings();
    // A task's deprecations come with its result, after its warnings: ansible-core's
    // worker shows warnings as they happen and sends deprecations with the result.
    if task.is_some() {
        notices.sort_by_key(|n| matches!(n, crate::template::Notice::Deprecation(_)));
    }
    for notice in notices {
        match notice {
            crate::template::Notice::Warning(w) => {
                // The origin follows the warning's first line.
                let text = match (origin(&w.written), w.text.split_once('\n')) {
                    (Some(block), Some((first, rest))) => format!("{first}\n{block}{rest}"),
                    (Some(block), None) => format!("{}\n{block}", w.text),
                    (None, _) => w.text,
                };
                run.callback.warning(&text);
            }
            crate::template::Notice::Deprecation(mut d) => {
                if let Some(block) = origin(&d.written) {
                    d.detail = format!("\n{block}{}", d.detail);
                }
                if let Some((_, line)) = crate::plugins::action::summaries::core_deprecation(&d) {
                    run.callback.deprecation(&line);
                }
            }
        }
    }
}

/// Where the task is written and whether a module does its work, for the error block
/// shown before a failure.
pub(super) fn origin<'a>(
    run: &Run,
    t: &'a Task,
    kw: &Chain<'_>,
    vars: &Vars,
) -> crate::plugins::callback::Origin<'a> {
    crate::plugins::callback::Origin {
        location: &t.location,
        diff: keyword_bool(run, vars, kw, Keyword::Diff, run.options.diff)
            .unwrap_or(run.options.diff),
        module: module_works(t),
    }
}

/// Whether a module does the task's work (its failure is then the module's).
pub(super) fn module_works(t: &Task) -> bool {
    matches!(
        action::find(&t.action).runs(&t.action),
        Runs::Module { .. } | Runs::Chosen
    )
}

/// Whether a task that sets no `no_log` is `no_log`: the `no_log` setting
/// (`ANSIBLE_NO_LOG`, ansible.cfg's `no_log`), off unless set.
pub fn no_log_default() -> bool {
    crate::config::settings().flag("ANSIBLE_NO_LOG", false)
}

/// What is shown of a result: all of it, or only its outcome when the task is
/// `no_log` or the result asks to be hidden (`_ansible_no_log`, which an action plugin
/// may return).
pub(super) fn shown(no_log: bool, result: &TaskResult) -> TaskResult {
    if no_log || result.get("_ansible_no_log").is_some_and(py_truth) {
        censor(result)
    } else {
        result.clone()
    }
}

/// What is shown of a `no_log` result.
fn censor(result: &Map<String, Value>) -> TaskResult {
    let mut m = Map::new();
    m.insert("censored".into(), Value::String(CENSORED.into()));
    for k in [
        "changed",
        "failed",
        "skipped",
        "unreachable",
        action::FAILURE,
    ] {
        if let Some(v) = result.get(k) {
            m.insert(k.into(), v.clone());
        }
    }
    // How it failed stays known to the `[ERROR]` line, which shows no message: an
    // error the executor or the action raised is worded "Task failed: …".
    let raised = result
        .get("msg")
        .and_then(Value::as_str)
        .is_some_and(|msg| msg.starts_with("Task failed: "));
    if raised && !m.contains_key(action::FAILURE) {
        action::Failure::Raised.mark(&mut m);
    }
    m.into()
}
