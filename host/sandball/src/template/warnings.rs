//! Warnings and deprecations of the run that templating or reading the playbook gives
//! (a lookup's `errors='warn'`, a variable of a reserved name, a mapping for `action`),
//! kept until the executor shows them with the next task result: ansible-core displays
//! them as they happen.

use std::sync::{Mutex, PoisonError};

/// One kept notice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    /// Shown after `[WARNING]: `.
    Warning(Warning),
    /// Shown after `[DEPRECATION WARNING]: `.
    Deprecation(Deprecation),
}

/// A warning: its text, and the task's text it is about (whose origin is shown after
/// the text's first line, as ansible-core shows a tagged value's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// What is shown.
    pub text: String,
    /// The text of the task's that it is about.
    pub written: Option<About>,
}

/// The text of the task's that a notice is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum About {
    /// A whole text of the task's, or of the blocks and play around it (a
    /// conditional).
    Text(String),
    /// A part of one of the task's texts (a lookup's term in a template).
    Part(String),
}

/// A feature of ansible-core's own that is going away, as ansible-core words it (shown
/// and registered as a module's deprecation is: `plugins/action/summaries.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deprecation {
    /// What is deprecated, a sentence.
    pub msg: String,
    /// The ansible-core version it goes in.
    pub version: String,
    /// What follows the line: where, and what to do instead.
    pub detail: String,
    /// The text of the task's that it is about (its origin goes before `detail`).
    pub written: Option<About>,
}

static PENDING: Mutex<Vec<Notice>> = Mutex::new(Vec::new());

fn pending() -> std::sync::MutexGuard<'static, Vec<Notice>> {
    PENDING.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Keeps a warning for the executor to show; `written`: the task's text it is about.
pub(crate) fn warn_about(message: String, written: Option<About>) {
    pending().push(Notice::Warning(Warning {
        text: message,
        written,
    }));
}

/// Keeps a warning for the executor to show.
pub(crate) fn warn(message: String) {
    warn_about(message, None);
}

/// Keeps a deprecation of ansible-core's for the executor to show; `written`: the
/// task's text it is about.
pub(crate) fn deprecate(msg: &str, version: &str, detail: String, written: Option<About>) {
    pending().push(Notice::Deprecation(Deprecation {
        msg: msg.to_string(),
        version: version.to_string(),
        detail,
        written,
    }));
}

/// What `f` gives, with the deprecations it kept (they are still shown), for a result
/// to register.
pub(crate) fn deprecations_of<T>(f: impl FnOnce() -> T) -> (T, Vec<Deprecation>) {
    let start = pending().len();
    let out = f();
    let kept = pending()
        .get(start..)
        .unwrap_or_default()
        .iter()
        .filter_map(|n| match n {
            Notice::Deprecation(d) => Some(d.clone()),
            Notice::Warning(_) => None,
        })
        .collect();
    (out, kept)
}

/// The notices kept so far, in order, which are then forgotten.
pub fn take_warnings() -> Vec<Notice> {
    std::mem::take(&mut *pending())
}
