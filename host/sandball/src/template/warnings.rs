//! Warnings and deprecations of the run that templating or reading the playbook gives
//! (a lookup's `errors='warn'`, a variable of a reserved name, a mapping for `action`),
//! kept until the executor shows them with the next task result: ansible-core displays
//! them as they happen.

use std::sync::{Mutex, PoisonError};

/// One kept notice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    /// Shown after `[WARNING]: `.
    Warning(String),
    /// Shown after `[DEPRECATION WARNING]: `.
    Deprecation(String),
}

static PENDING: Mutex<Vec<Notice>> = Mutex::new(Vec::new());

fn keep(notice: Notice) {
    PENDING
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(notice);
}

/// Keeps a warning for the executor to show.
pub(crate) fn warn(message: String) {
    keep(Notice::Warning(message));
}

/// Keeps a deprecation for the executor to show.
pub(crate) fn deprecate(message: String) {
    keep(Notice::Deprecation(message));
}

/// The notices kept so far, in order, which are then forgotten.
pub fn take_warnings() -> Vec<Notice> {
    std::mem::take(&mut *PENDING.lock().unwrap_or_else(PoisonError::into_inner))
}
