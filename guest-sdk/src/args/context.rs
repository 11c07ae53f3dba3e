//! What argument validation needs from outside the arguments: the environment (for
//! `fallback.env`, `path` expansion) and how to treat non-text values in text fields.

/// How a number or boolean given for a `str` argument is treated
/// (`_ansible_string_conversion_action`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StringConversion {
    /// Convert silently (the default).
    #[default]
    Ignore,
    /// Convert and warn.
    Warn,
    /// Refuse: the argument fails validation.
    Error,
}

impl StringConversion {
    /// Reads the internal argument's value (`ignore`, `warn`, `error`); anything else is
    /// the default.
    pub fn from_name(name: &str) -> Self {
        match name {
            "warn" => StringConversion::Warn,
            "error" => StringConversion::Error,
            _ => StringConversion::Ignore,
        }
    }
}

/// Validation settings.
pub struct Context<'a> {
    /// Reads an environment variable of the module's process.
    pub env: &'a dyn Fn(&str) -> Option<String>,
    /// Treatment of non-text values in `str` arguments.
    pub string_conversion: StringConversion,
    /// Accept unknown arguments silently (`_ansible_ignore_unknown_opts`).
    pub ignore_unknown: bool,
}
