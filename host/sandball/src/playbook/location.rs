//! Where something is in a playbook file: the `file:line:column` that every parsed play,
//! block, task, error and warning carries.

use std::fmt;
use std::path::PathBuf;

/// A position in a playbook source file. Lines and columns count from 1; columns count
/// characters, not bytes.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Location {
    /// The file the position is in, as it was given to the loader.
    pub file: PathBuf,
    /// Line number, from 1.
    pub line: usize,
    /// Column number, from 1.
    pub column: usize,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file.display(), self.line, self.column)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_as_file_line_column() {
        let location = Location {
            file: PathBuf::from("site.yml"),
            line: 4,
            column: 7,
        };
        assert_eq!(location.to_string(), "site.yml:4:7");
    }
}
