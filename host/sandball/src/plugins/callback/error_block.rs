//! The `[ERROR]` block ansible-core 2.19 prints before a failed task's result: how the
//! failure came about, where the task is written, and the chain of causes from its
//! values, each at its own origin.

use crate::plugins::action::{CauseAt, Failure};

/// ansible-core 2.19's block before a failed task's result: what failed, and where,
/// with the task's lines (the two before it too, when `source`) and a caret at its
/// column. A failure raised around the task (by its loop), or one whose message
/// ansible-core made from the error ("Task failed: …"), is its message; one raised
/// while the task ran is "Task failed: " and its message; one the action or module
/// returned says which of them failed. A failure with `help` text is said again
/// below, as its cause, with the help after it; one that came from the task's values
/// (`cause`: [`chain`]) is said step by step, each with its own origin.
pub(super) fn error_block(
    origin: &super::Origin<'_>,
    how: Option<Failure>,
    msg: Option<&str>,
    help: Option<&str>,
    cause: Option<&[Step]>,
    source: bool,
) -> String {
    // The first paragraph: where it happened is said below.
    let msg = msg
        .map(|m| m.split("\n\n").next().unwrap_or(m))
        .unwrap_or("Unknown error.");
    let what = if origin.module && how != Some(Failure::Action) {
        "Module"
    } else {
        "Action"
    };
    let raised = matches!(how, Some(Failure::Raised | Failure::RaisedByLoop));
    let mut out = if raised && msg.is_empty() {
        "[ERROR]: Task failed.".to_string()
    } else if how == Some(Failure::RaisedByLoop) || msg.starts_with("Task failed: ") {
        format!("[ERROR]: {msg}")
    } else if how == Some(Failure::Raised) {
        format!("[ERROR]: Task failed: {msg}")
    } else if msg.is_empty() {
        format!("[ERROR]: Task failed: {what} failed.")
    } else {
        format!("[ERROR]: Task failed: {what} failed: {msg}")
    };
    out.push('\n');
    // The steps the failure came from, each where it is written; the task's own
    // "Task failed" is the first.
    if let Some(steps) = cause.filter(|s| help.is_none() && !msg.is_empty() && s.len() > 1) {
        for (i, (words, at)) in steps.iter().enumerate() {
            if i > 0 {
                out.push_str("\n<<< caused by >>>\n");
            }
            let end = if i + 1 < steps.len() { "." } else { "" };
            out.push_str(&format!("\n{words}{end}\n"));
            out.push_str(&at.origin_block(source));
        }
        return out;
    }
    let Some(help) = help.filter(|_| !msg.is_empty()) else {
        out.push_str(&origin.location.origin_block(source));
        return out;
    };
    let cause = msg.strip_prefix("Task failed: ");
    if raised || cause.is_some() {
        out.push_str("\nTask failed.\n");
    } else {
        out.push_str(&format!("\nTask failed: {what} failed.\n"));
    }
    out.push_str(&origin.location.origin_block(source));
    out.push_str(&format!(
        "\n<<< caused by >>>\n\n{} {help}\n",
        cause.unwrap_or(msg)
    ));
    out
}

/// One step of a failure's chain: its words, and where they are written.
pub(super) type Step = (String, crate::yaml::Location);

/// The chain ansible-core 2.19 shows for a failure of the task at `task` that came
/// from `cause`: "Task failed" at the task, then each step of the cause where the task
/// writes it. Steps written at the same place are said as one ("Task failed:
/// Finalization of task args for 'x' failed."), as is a step whose place the task's
/// file does not show.
pub(super) fn chain(
    task: &crate::yaml::Location,
    cause: &crate::plugins::action::Cause,
) -> Vec<Step> {
    use crate::playbook::value_origin::{Written, find};
    let written: Vec<Option<Written<'_>>> = cause
        .steps
        .iter()
        .map(|(_, at)| {
            at.as_ref().map(|(kind, text)| match kind {
                CauseAt::Action => Written::Action,
                CauseAt::Keyword => Written::Keyword(text),
                CauseAt::Arg => Written::Arg(text),
                CauseAt::Text => Written::Text(text),
            })
        })
        .collect();
    let wanted: Vec<Written<'_>> = written.iter().flatten().copied().collect();
    let mut found = find(task, &wanted).into_iter();
    let mut steps: Vec<Step> = vec![("Task failed".into(), task.clone())];
    for ((words, _), written) in cause.steps.iter().zip(&written) {
        let last = steps.len() - 1;
        match written
            .and_then(|_| found.next().flatten())
            .filter(|at| *at != steps[last].1)
        {
            Some(at) => steps.push((words.clone(), at)),
            None => {
                steps[last].0.push_str(": ");
                steps[last].0.push_str(words);
            }
        }
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cause_is_chained_where_its_steps_are_written() {
        use crate::plugins::action::Cause;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("play.yml");
        std::fs::write(&file, "- debug:\n    msg: \"{{ nope }}\"\n").unwrap();
        let at = |file: &std::path::Path, line, column| crate::yaml::Location {
            file: file.to_path_buf(),
            line,
            column,
        };
        let cause = Cause {
            steps: vec![
                (
                    "Finalization failed".into(),
                    Some((CauseAt::Action, String::new())),
                ),
                ("Error for 'msg'".into(), Some((CauseAt::Arg, "msg".into()))),
                (
                    "'nope' is undefined".into(),
                    Some((CauseAt::Text, "{{ nope }}".into())),
                ),
            ],
        };
        // The action is where the task starts, the template is the argument itself.
        let steps = chain(&at(&file, 1, 3), &cause);
        assert_eq!(
            steps,
            vec![
                (
                    "Task failed: Finalization failed".to_string(),
                    at(&file, 1, 3)
                ),
                (
                    "Error for 'msg': 'nope' is undefined".to_string(),
                    at(&file, 2, 10)
                ),
            ]
        );
        let origin = super::super::Origin {
            location: &steps[0].1,
            module: false,
            diff: false,
        };
        let msg = "Task failed: Finalization failed: Error for 'msg': 'nope' is undefined";
        let block = error_block(
            &origin,
            Some(Failure::Raised),
            Some(msg),
            None,
            Some(&steps),
            false,
        );
        assert_eq!(
            block.replace(&*file.to_string_lossy(), "F"),
            format!(
                "[ERROR]: {msg}\n\nTask failed: Finalization failed.\nOrigin: F:1:3\n\n<<< caused by >>>\n\nError for 'msg': 'nope' is undefined\nOrigin: F:2:10\n"
            )
        );
        // Without the file, every step is said at the task, as one.
        let gone = at(&dir.path().join("gone.yml"), 1, 3);
        assert_eq!(
            chain(&gone, &cause),
            vec![(
                "Task failed: Finalization failed: Error for 'msg': 'nope' is undefined"
                    .to_string(),
                gone.clone()
            )]
        );
        // A cause kept in a result is read back whole.
        let mut result = crate::plugins::action::TaskResult::default();
        cause.mark(&mut result);
        assert_eq!(Cause::of(&result), Some(cause));
    }

    #[test]
    fn error_lines_say_how_the_failure_came_about() {
        let location = crate::yaml::Location {
            file: std::path::PathBuf::from("/nonexistent/play.yml"),
            line: 1,
            column: 1,
        };
        let header = |module: bool, how: Option<Failure>, msg: &str| {
            let origin = super::super::Origin {
                location: &location,
                module,
                diff: false,
            };
            let block = error_block(&origin, how, Some(msg), None, None, false);
            block.lines().next().unwrap_or_default().to_string()
        };
        // A failure with help text says it again as its cause.
        let origin = super::super::Origin {
            location: &location,
            module: true,
            diff: false,
        };
        assert_eq!(
            error_block(
                &origin,
                Some(Failure::Action),
                Some("Result unreadable: x"),
                Some("See the output."),
                None,
                false
            ),
            "[ERROR]: Task failed: Action failed: Result unreadable: x\n\nTask failed: Action failed.\nOrigin: /nonexistent/play.yml:1:1\n\n<<< caused by >>>\n\nResult unreadable: x See the output.\n"
        );
        assert_eq!(
            header(true, None, "boom"),
            "[ERROR]: Task failed: Module failed: boom"
        );
        assert_eq!(
            header(false, None, "boom"),
            "[ERROR]: Task failed: Action failed: boom"
        );
        assert_eq!(
            header(true, Some(Failure::Action), ""),
            "[ERROR]: Task failed: Action failed."
        );
        assert_eq!(
            header(true, Some(Failure::Raised), "no async"),
            "[ERROR]: Task failed: no async"
        );
        assert_eq!(
            header(
                false,
                Some(Failure::RaisedByLoop),
                "Error processing keyword 'pause': x"
            ),
            "[ERROR]: Error processing keyword 'pause': x"
        );
        assert_eq!(
            header(true, None, "Task failed: Timed out after 1 second(s)."),
            "[ERROR]: Task failed: Timed out after 1 second(s)."
        );
        // A `no_log` result's line has no message: how it failed, and no more.
        assert_eq!(
            header(true, None, ""),
            "[ERROR]: Task failed: Module failed."
        );
        assert_eq!(
            header(true, Some(Failure::Raised), ""),
            "[ERROR]: Task failed."
        );
    }
}
