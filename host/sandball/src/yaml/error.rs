//! Why a playbook could not be loaded: [`PlaybookError`], which says what is wrong and
//! where (in words, and as `file:line:column` on an `Origin:` line as Ansible 2.19
//! prints it), quoting the offending line.

use std::path::PathBuf;

use crate::yaml::location::Location;

/// Why a playbook could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum PlaybookError {
    /// The playbook file could not be read (missing, unreadable, not UTF-8).
    #[error("ERROR! could not read the playbook '{}': {source}", path.display())]
    Read {
        /// The file that was asked for.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// The playbook is wrong at a known place: bad YAML, a wrong type, an unknown keyword,
    /// a task without an action…
    #[error(
        "ERROR! {message} in '{}': line {}, column {}\nOrigin: {location}{}",
        location.file.display(),
        location.line,
        location.column,
        excerpt_block(excerpt)
    )]
    Invalid {
        /// What is wrong, without the position.
        message: String,
        /// Where it is wrong.
        location: Location,
        /// The offending source line (after the line before it, when that one is not
        /// blank) and a caret under the column; empty when the position is past the end
        /// of the text.
        excerpt: String,
    },
    /// A task file an import or include names is not there.
    #[error(
        "ERROR! Could not find or access '{name}' (looked in {}) in '{}': line {}, column {}\nOrigin: {location}",
        tried.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "),
        location.file.display(),
        location.line,
        location.column
    )]
    Missing {
        /// The file as the task names it.
        name: String,
        /// Where it was looked for.
        tried: Vec<PathBuf>,
        /// The task that names it.
        location: Location,
    },
    /// The playbook uses what ansible-core has removed (the `include` action): an
    /// error of the run (exit 1), not of its parse, as in ansible-core.
    #[error("{0}")]
    Removed(Box<PlaybookError>),
}

impl PlaybookError {
    /// An error about something written at `location` (no excerpt: the text is not at
    /// hand).
    pub(crate) fn at(location: &Location, message: impl Into<String>) -> PlaybookError {
        PlaybookError::Invalid {
            message: message.into(),
            location: location.clone(),
            excerpt: String::new(),
        }
    }

    /// Where in the playbook the error is, when it is about the playbook's content.
    pub fn location(&self) -> Option<&Location> {
        match self {
            Self::Read { .. } => None,
            Self::Invalid { location, .. } | Self::Missing { location, .. } => Some(location),
            Self::Removed(e) => e.location(),
        }
    }

    /// The error as ansible-playbook 2.19 reports it after `[ERROR]: `: what is wrong,
    /// then the `Origin:` block (the absolute `file:line:column` and the numbered lines
    /// up to it, a caret under the column); [`Display`](std::fmt::Display) keeps the
    /// older one-line form (`… in 'file': line L, column C`) for messages that quote it.
    pub fn report(&self) -> String {
        match self {
            Self::Invalid {
                message, location, ..
            } => format!("{message}\n{}", location.origin_block(true)),
            Self::Removed(e) => e.report(),
            other => other.to_string(),
        }
    }

    /// The exit code ansible-playbook ends with for it: 4 for a playbook it cannot
    /// parse, 1 for one that uses what was removed.
    pub fn exit_code(&self) -> i32 {
        match self {
            Self::Removed(_) => 1,
            _ => 4,
        }
    }
}

/// The excerpt as printed after the error's first line.
fn excerpt_block(excerpt: &str) -> String {
    if excerpt.is_empty() {
        String::new()
    } else {
        format!("\n\n{excerpt}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn location() -> Location {
        Location {
            file: PathBuf::from("/p/site.yml"),
            line: 3,
            column: 5,
        }
    }

    #[test]
    fn invalid_displays_message_position_and_excerpt() {
        let error = PlaybookError::Invalid {
            message: "no module/action detected in task".into(),
            location: location(),
            excerpt: "  tasks:\n    - name: x\n    ^ here".into(),
        };
        assert_eq!(
            error.to_string(),
            "ERROR! no module/action detected in task in '/p/site.yml': line 3, column 5\nOrigin: /p/site.yml:3:5\n\n  tasks:\n    - name: x\n    ^ here"
        );
        assert_eq!(error.location(), Some(&location()));
    }

    #[test]
    fn reported_as_ansible_core_2_19_reports_it() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("site.yml");
        std::fs::write(&file, "- hosts: all\n  gather_facts: false\n  foo: 1\n").unwrap();
        let at = Location {
            file: file.clone(),
            line: 3,
            column: 3,
        };
        let error = PlaybookError::Invalid {
            message: "'foo' is not a valid attribute for a Play".into(),
            location: at.clone(),
            excerpt: "  foo: 1\n  ^ here".into(),
        };
        // What ansible-playbook prints after `[ERROR]: ` for this playbook.
        let expected = format!(
            "'foo' is not a valid attribute for a Play\nOrigin: {}:3:3\n\n\
             1 - hosts: all\n2   gather_facts: false\n3   foo: 1\n    ^ column 3\n",
            file.display()
        );
        assert_eq!(error.report(), expected);
        assert_eq!(PlaybookError::Removed(Box::new(error)).report(), expected);
    }

    #[test]
    fn invalid_without_excerpt_ends_with_the_origin() {
        let error = PlaybookError::Invalid {
            message: "bad".into(),
            location: location(),
            excerpt: String::new(),
        };
        assert_eq!(
            error.to_string(),
            "ERROR! bad in '/p/site.yml': line 3, column 5\nOrigin: /p/site.yml:3:5"
        );
    }

    #[test]
    fn read_error_names_the_file() {
        let error = PlaybookError::Read {
            path: PathBuf::from("/nope.yml"),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "No such file"),
        };
        assert_eq!(
            error.to_string(),
            "ERROR! could not read the playbook '/nope.yml': No such file"
        );
        assert_eq!(error.location(), None);
    }

    #[test]
    fn missing_names_the_file_and_where_it_was_looked_for() {
        let error = PlaybookError::Missing {
            name: "x.yml".into(),
            tried: vec![PathBuf::from("/p/x.yml"), PathBuf::from("/p/tasks/x.yml")],
            location: location(),
        };
        assert_eq!(
            error.to_string(),
            "ERROR! Could not find or access 'x.yml' (looked in /p/x.yml, /p/tasks/x.yml) in '/p/site.yml': line 3, column 5\nOrigin: /p/site.yml:3:5"
        );
        assert_eq!(error.location(), Some(&location()));
    }
}
