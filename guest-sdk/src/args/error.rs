//! Argument validation errors, one kind per check, with Ansible's messages.

/// Which check an argument error comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgErrorKind {
    /// An argument the spec does not know.
    Unsupported,
    /// A required argument is missing.
    Required,
    /// A value could not be converted to its type.
    Type,
    /// A value is not one of the choices.
    Value,
    /// `mutually_exclusive` was violated.
    MutuallyExclusive,
    /// `required_together` was violated.
    RequiredTogether,
    /// `required_one_of` was violated.
    RequiredOneOf,
    /// `required_if` was violated.
    RequiredIf,
    /// `required_by` was violated.
    RequiredBy,
    /// A value with suboptions is not a dict (or list of dicts).
    SubParameterType,
    /// The argument spec itself is wrong (a bug in the module's manifest).
    Spec,
}

/// One validation error.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ArgError {
    /// The check that failed.
    pub kind: ArgErrorKind,
    /// Ansible's message for it.
    pub message: String,
}

impl ArgError {
    /// An error of `kind` with `message`.
    pub fn new(kind: ArgErrorKind, message: impl Into<String>) -> Self {
        ArgError {
            kind,
            message: message.into(),
        }
    }

    /// The message a module fails with: unsupported parameters are prefixed with the
    /// module's name, as Ansible does.
    pub fn module_message(&self, module_name: &str) -> String {
        match self.kind {
            ArgErrorKind::Unsupported => {
                format!(
                    "Unsupported parameters for ({module_name}) module: {}",
                    self.message
                )
            }
            _ => self.message.clone(),
        }
    }
}

/// The ` found in a -> b` suffix Ansible adds to dependency errors in suboptions.
pub fn found_in(context: &[String]) -> String {
    if context.is_empty() {
        String::new()
    } else {
        format!(" found in {}", context.join(" -> "))
    }
}
