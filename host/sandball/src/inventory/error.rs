//! The errors of inventory loading and host selection.

/// Why an inventory could not be loaded or a host pattern not be evaluated.
#[derive(Debug, thiserror::Error)]
pub enum InventoryError {
    /// A source (file, directory entry or host list) that a plugin could not parse.
    #[error("{}", located(path, *line, message))]
    Parse {
        /// The source: a file path or the host-list string.
        path: String,
        /// The 1-based line the problem is on, when there is one.
        line: Option<usize>,
        /// What was wrong.
        message: String,
    },
    /// A file that could not be read.
    #[error("{path}: {error}")]
    Io {
        /// The file.
        path: String,
        /// The underlying error.
        error: std::io::Error,
    },
    /// No enabled plugin could parse a source and every source must parse
    /// (Ansible's `INVENTORY_ANY_UNPARSED_IS_FAILED`).
    #[error("Completely failed to parse inventory source {path}{}", failures.iter().map(|f| format!("\n* {f}")).collect::<String>())]
    Unparsed {
        /// The source.
        path: String,
        /// One line per plugin that tried: "Failed to parse inventory with 'P' plugin: why".
        failures: Vec<String>,
    },
    /// The sources together break a rule of the inventory (a group above `all`).
    #[error("{0}")]
    Inconsistent(String),
    /// No source parsed at all and that is an error (Ansible's `INVENTORY_UNPARSED_IS_FAILED`).
    #[error("No inventory was parsed, please check your configuration and options.")]
    NothingParsed,
    /// A host pattern that is not a valid glob or regular expression.
    #[error("Invalid host list pattern: {0}")]
    InvalidPattern(String),
    /// A subscript (`group[5]`) past the end of the hosts the pattern matched.
    #[error("No hosts matched the subscripted pattern '{0}'")]
    SubscriptOutOfRange(String),
    /// A `--limit @file` whose file is missing or not a regular file.
    #[error("{message}: {path}")]
    LimitFile {
        /// The limit file.
        path: String,
        /// What was wrong with it.
        message: String,
    },
}

impl InventoryError {
    /// A parse error in `path` at `line` (if known).
    pub fn parse(path: &str, line: Option<usize>, message: impl Into<String>) -> Self {
        InventoryError::Parse {
            path: path.to_string(),
            line,
            message: message.into(),
        }
    }
}

fn located(path: &str, line: Option<usize>, message: &str) -> String {
    match line {
        Some(l) => format!("{path}:{l}: {message}"),
        None => format!("{path}: {message}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_errors_name_file_and_line() {
        let e = InventoryError::parse("/inv/hosts", Some(3), "Expected key=value, got: x");
        assert_eq!(e.to_string(), "/inv/hosts:3: Expected key=value, got: x");
        let e = InventoryError::parse("/inv/hosts.yml", None, "Parsed empty YAML file");
        assert_eq!(e.to_string(), "/inv/hosts.yml: Parsed empty YAML file");
    }

    #[test]
    fn unparsed_lists_every_plugin_failure() {
        let e = InventoryError::Unparsed {
            path: "/inv/x".into(),
            failures: vec!["Failed to parse inventory with 'ini' plugin: bad".into()],
        };
        assert_eq!(
            e.to_string(),
            "Completely failed to parse inventory source /inv/x\n* Failed to parse inventory with 'ini' plugin: bad"
        );
    }
}
