//! Failed results and how they came about, as ansible-core 2.19 words them: the failed
//! result (`failed`, `task_failed`, `raised`), how a failure came about ([`Failure`]),
//! what it came from in the task's text ([`Cause`], kept in the [`TaskResult`]) and a
//! failed conditional.

use super::TaskResult;
use serde_json::{Map, Value};

/// A failed result with a message.
pub fn failed(msg: impl Into<String>) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("failed".into(), Value::Bool(true));
    m.insert("msg".into(), Value::String(msg.into()));
    m.insert("changed".into(), Value::Bool(false));
    m
}

/// What a failure came from, said below the task's own origin: the steps ansible-core
/// 2.19 chains, outermost first, after the task's own "Task failed".
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cause {
    /// Each step's words and the task's value it is written at (`None`: where the
    /// step before it is).
    pub steps: Vec<(String, Option<(CauseAt, String)>)>,
}

/// Which of the task's values a step of a [`Cause`] is written at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CauseAt {
    /// The action's name.
    Action,
    /// A keyword's value (`loop`).
    Keyword,
    /// An argument of the action.
    Arg,
    /// A text: a conditional, a template.
    Text,
}

impl CauseAt {
    const NAMES: [(CauseAt, &'static str); 4] = [
        (CauseAt::Action, "action"),
        (CauseAt::Keyword, "keyword"),
        (CauseAt::Arg, "arg"),
        (CauseAt::Text, "text"),
    ];
}

impl Cause {
    /// The cause of a conditional `cond` that could not be evaluated (`error` words
    /// it as ansible-core does); `None` when ansible-core names no cause (a refusal) or
    /// is not known to chain it so (an error other than an undefined value).
    pub fn conditional(error: &crate::template::TemplateError, cond: &Value) -> Option<Cause> {
        if !Cause::chained(error) {
            return None;
        }
        let prefix = crate::template::error::CONDITIONAL_ERROR;
        let detail = error.conditional_error().strip_prefix(prefix)?.to_string();
        Some(Cause {
            steps: vec![
                (
                    prefix.trim_end_matches(": ").into(),
                    Some((CauseAt::Text, cond.as_str()?.into())),
                ),
                (
                    detail,
                    error.inner().map(|t| (CauseAt::Text, t.to_string())),
                ),
            ],
        })
    }

    /// The cause of argument `key` of `action` that could not be templated (`what`:
    /// ansible-core's words for resolving it), when it is chained.
    pub fn argument(
        error: &crate::template::TemplateError,
        action: &str,
        what: String,
        key: &str,
    ) -> Option<Cause> {
        Cause::chained(error).then(|| Cause {
            steps: vec![
                (
                    format!("Finalization of task args for '{action}' failed"),
                    Some((CauseAt::Action, String::new())),
                ),
                (what, Some((CauseAt::Arg, key.to_string()))),
                (
                    error.cause(),
                    error.template().map(|t| (CauseAt::Text, t.to_string())),
                ),
            ],
        })
    }

    /// The cause of a loop (written at `keyword`) that could not be templated, when it
    /// is chained.
    pub fn loop_value(error: &crate::template::TemplateError, keyword: String) -> Option<Cause> {
        Cause::chained(error).then(|| Cause {
            steps: vec![(error.cause(), Some((CauseAt::Keyword, keyword)))],
        })
    }

    /// Whether a failure from `error` is chained: where it is known how ansible-core
    /// chains it, an undefined value (other errors split further there).
    fn chained(error: &crate::template::TemplateError) -> bool {
        matches!(error, crate::template::TemplateError::Undefined { .. })
    }

    /// It as JSON (`[[words, [at, text] | null], …]`), for a Python action plugin.
    pub(super) fn to_value(&self) -> Value {
        let steps = self.steps.iter().map(|(words, at)| {
            let at = at.as_ref().and_then(|(kind, text)| {
                let (_, name) = CauseAt::NAMES.iter().find(|(k, _)| k == kind)?;
                Some(serde_json::json!([name, text]))
            });
            serde_json::json!([words, at])
        });
        Value::Array(steps.collect())
    }

    /// The cause [`Cause::to_value`] gave.
    pub(super) fn from_value(value: &Value) -> Option<Cause> {
        let steps = value
            .as_array()?
            .iter()
            .map(|step| {
                let words = step.get(0)?.as_str()?.to_string();
                let at = step.get(1).and_then(|at| {
                    let name = at.get(0)?.as_str()?;
                    let (kind, _) = CauseAt::NAMES.iter().find(|(_, n)| *n == name)?;
                    Some((*kind, at.get(1)?.as_str()?.to_string()))
                });
                Some((words, at))
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Cause { steps })
    }

    /// Keeps it in `result`.
    pub fn mark(&self, result: &mut TaskResult) {
        result.error_cause = Some(self.clone());
    }

    /// The cause kept in `result`.
    pub fn of(result: &TaskResult) -> Option<Cause> {
        result.error_cause.clone()
    }
}

/// The internal result key saying how a failure came about ([`Failure`]), which
/// ansible-core's `[ERROR]` line tells apart: it words the line from the error itself,
/// where `msg` alone cannot say whether the error was raised or returned, nor whether
/// the action or its module returned it. Never shown or registered, as no `_ansible_`
/// key is.
pub const FAILURE: &str = "_ansible_failure";

/// How a failure came about, where its result alone does not say it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// Raised while the task ran, by the action (ansible-core's `AnsibleActionFail`)
    /// or the executor: "Task failed: " and the message.
    Raised,
    /// Raised around the task's runs, by its loop (`loop_control`, `break_when`): the
    /// message alone.
    RaisedByLoop,
    /// Returned by the action, though a module did its work (`failed_when` failed a
    /// module's success): "Task failed: Action failed: " and the message.
    Action,
}

impl Failure {
    /// The value of [`FAILURE`] for it.
    fn as_str(self) -> &'static str {
        match self {
            Failure::Raised => "raised",
            Failure::RaisedByLoop => "raised by loop",
            Failure::Action => "action",
        }
    }

    /// How the failure `result` came about, where it says.
    pub fn of(result: &Map<String, Value>) -> Option<Failure> {
        [Failure::Raised, Failure::RaisedByLoop, Failure::Action]
            .into_iter()
            .find(|f| result.get(FAILURE).and_then(Value::as_str) == Some(f.as_str()))
    }

    /// Marks `result` as failed this way.
    pub fn mark(self, result: &mut Map<String, Value>) {
        result.insert(FAILURE.into(), Value::from(self.as_str()));
    }
}

/// The failed result of conditional `cond`, which could not be evaluated: ansible-core
/// 2.19's message, and its cause (the conditional's text) for the callback.
pub fn conditional_failed(error: &crate::template::TemplateError, cond: &Value) -> TaskResult {
    TaskFailure {
        msg: error.conditional_failure(),
        cause: Cause::conditional(error, cond),
    }
    .result()
}

/// What ansible-core 2.19 puts in `exception` when it shows no traceback.
pub const NO_TRACEBACK: &str = "(traceback unavailable)";

/// [`conditional_failed`] for the task keyword `keyword` (`when`, `until`), with the
/// `exception` ansible-core registers for it, and which 2.21 names in the message
/// ("Task failed: An 'until' expression failed: …").
pub fn keyword_conditional_failed(
    error: &crate::template::TemplateError,
    cond: &Value,
    keyword: &str,
) -> TaskResult {
    let mut failed = conditional_failed(error, cond);
    failed.insert("exception".into(), Value::String(NO_TRACEBACK.into()));
    if crate::compat::core().at_least(21) {
        let article = if keyword.starts_with(['a', 'e', 'i', 'o', 'u']) {
            "An"
        } else {
            "A"
        };
        let msg = format!(
            "Task failed: {article} '{keyword}' expression failed: {}",
            error.conditional_error()
        );
        failed.insert("msg".into(), Value::String(msg));
    }
    failed
}

/// A task's failure before its action ran (its loop or its arguments could not be
/// templated), with what it came from where that is one of the task's values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskFailure {
    /// The failure's message.
    pub msg: String,
    /// What it came from.
    pub cause: Option<Cause>,
}

impl From<String> for TaskFailure {
    fn from(msg: String) -> Self {
        TaskFailure { msg, cause: None }
    }
}

impl TaskFailure {
    /// Its failed result.
    pub fn result(self) -> TaskResult {
        let mut r = TaskResult::from(failed(self.msg));
        if let Some(cause) = self.cause {
            cause.mark(&mut r);
        }
        r
    }
}

/// The failed result ansible-core's task executor makes of an error raised while the
/// task ran: "Task failed: " and the error, as its `msg` (and its `[ERROR]` line).
pub fn task_failed(error: impl std::fmt::Display) -> Map<String, Value> {
    failed(format!("Task failed: {error}"))
}

/// A failed result with a message, come about as `how` says.
pub fn raised(how: Failure, msg: impl Into<String>) -> Map<String, Value> {
    let mut m = failed(msg);
    how.mark(&mut m);
    m
}
