//! Warnings of the run that templating or reading the playbook gives (a lookup's
//! `errors='warn'`, a variable of a reserved name), kept until the executor shows them
//! with the next task result: ansible-core displays them as they happen.

use std::sync::{Mutex, PoisonError};

static PENDING: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Keeps a warning for the executor to show.
pub(crate) fn warn(message: String) {
    PENDING
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(message);
}

/// The warnings kept so far, in order, which are then forgotten.
pub fn take_warnings() -> Vec<String> {
    std::mem::take(&mut *PENDING.lock().unwrap_or_else(PoisonError::into_inner))
}
