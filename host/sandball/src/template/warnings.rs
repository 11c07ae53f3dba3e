//! Warnings templating gives (a lookup's `errors='warn'`), kept until the executor shows
//! them with the task they came from: ansible-core displays them as they happen, before
//! the task's result.

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
