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
    Deprecation(Deprecation),
}

/// A feature of ansible-core's that is going away.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deprecation {
    /// What is deprecated, a sentence.
    pub msg: String,
    /// The ansible-core version it goes in.
    pub version: String,
    /// What follows the line: where, and what to do instead.
    pub detail: String,
}

impl Deprecation {
    /// As ansible-core shows it.
    pub fn shown(&self) -> String {
        format!(
            "{} This feature will be removed from ansible-core version {}.{}",
            self.msg, self.version, self.detail
        )
    }

    /// As a task's result registers it (`deprecations`), as ansible-core does.
    pub fn registered(&self) -> serde_json::Value {
        serde_json::json!({
            "collection_name": "ansible.builtin",
            "deprecator": {"resolved_name": "ansible.builtin", "type": null},
            "msg": self.msg,
            "version": self.version,
        })
    }
}

static PENDING: Mutex<Vec<Notice>> = Mutex::new(Vec::new());

fn pending() -> std::sync::MutexGuard<'static, Vec<Notice>> {
    PENDING.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Keeps a warning for the executor to show.
pub(crate) fn warn(message: String) {
    pending().push(Notice::Warning(message));
}

/// Keeps a deprecation of ansible-core's for the executor to show.
pub(crate) fn deprecate(msg: &str, version: &str, detail: String) {
    pending().push(Notice::Deprecation(Deprecation {
        msg: msg.to_string(),
        version: version.to_string(),
        detail,
    }));
}

/// What `f` gives, with the deprecations it kept, as a result registers them (they
/// are still shown).
pub(crate) fn deprecations_of<T>(f: impl FnOnce() -> T) -> (T, Vec<serde_json::Value>) {
    let start = pending().len();
    let out = f();
    let registered = pending()
        .get(start..)
        .unwrap_or_default()
        .iter()
        .filter_map(|n| match n {
            Notice::Deprecation(d) => Some(d.registered()),
            Notice::Warning(_) => None,
        })
        .collect();
    (out, registered)
}

/// Adds `deprecations` to a result's own, as ansible-core registers them.
pub(crate) fn register_deprecations(
    result: &mut serde_json::Map<String, serde_json::Value>,
    deprecations: Vec<serde_json::Value>,
) {
    if deprecations.is_empty() {
        return;
    }
    match result.get_mut("deprecations") {
        Some(serde_json::Value::Array(own)) => own.extend(deprecations),
        _ => {
            result.insert(
                "deprecations".into(),
                serde_json::Value::Array(deprecations),
            );
        }
    }
}

/// The notices kept so far, in order, which are then forgotten.
pub fn take_warnings() -> Vec<Notice> {
    std::mem::take(&mut *pending())
}
