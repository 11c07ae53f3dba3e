//! The text of one playbook file and its name, turning positions in it into
//! [`Location`]s, errors that quote the offending line, and the place a warning names.

use std::path::{Path, PathBuf};

use crate::yaml::error::PlaybookError;
use crate::yaml::location::Location;

/// A position in the source text; line and column count from 1, columns in characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Mark {
    /// Line number, from 1.
    pub(crate) line: usize,
    /// Column number, from 1.
    pub(crate) column: usize,
}

/// A playbook file being loaded.
pub(crate) struct SourceFile {
    path: PathBuf,
    text: String,
}

impl SourceFile {
    /// Holds `text` as the content of `path`; a leading byte-order mark is dropped so that
    /// columns on the first line count as an editor shows them.
    pub(crate) fn new(path: &Path, text: &str) -> Self {
        Self {
            path: path.to_path_buf(),
            text: text.strip_prefix('\u{feff}').unwrap_or(text).to_owned(),
        }
    }

    /// The file's text.
    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// The location of `mark` in this file.
    pub(crate) fn location(&self, mark: Mark) -> Location {
        Location {
            file: self.path.clone(),
            line: mark.line,
            column: mark.column,
        }
    }

    /// An error about the content at `mark`.
    pub(crate) fn error(&self, mark: Mark, message: impl Into<String>) -> PlaybookError {
        PlaybookError::Invalid {
            message: message.into(),
            location: self.location(mark),
            excerpt: self.excerpt(mark),
        }
    }

    /// Where `mark` is, in words, for warnings: `in 'file': line L, column C`.
    pub(crate) fn place(&self, mark: Mark) -> String {
        format!(
            "in '{}': line {}, column {}",
            self.path.display(),
            mark.line,
            mark.column
        )
    }

    /// The line at `mark`, preceded by the line before it when that one is not blank,
    /// and a caret under the column.
    fn excerpt(&self, mark: Mark) -> String {
        let mut lines = self.text.lines();
        let previous = match mark.line {
            0 | 1 => None,
            line => lines.nth(line - 2),
        };
        let Some(target) = lines.next() else {
            return String::new();
        };
        let indent: String = target
            .chars()
            .take(mark.column.saturating_sub(1))
            .map(|c| if c == '\t' { '\t' } else { ' ' })
            .collect();
        let mut excerpt = String::new();
        if let Some(previous) = previous.filter(|line| !line.trim().is_empty()) {
            excerpt.push_str(previous);
            excerpt.push('\n');
        }
        excerpt.push_str(target);
        excerpt.push('\n');
        excerpt.push_str(&indent);
        excerpt.push_str("^ here");
        excerpt
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(text: &str) -> SourceFile {
        SourceFile::new(Path::new("/p/site.yml"), text)
    }

    fn excerpt_of(error: PlaybookError) -> String {
        match error {
            PlaybookError::Invalid { excerpt, .. } => excerpt,
            other => panic!("not an Invalid error: {other}"),
        }
    }

    #[test]
    fn excerpt_shows_previous_line_target_and_caret() {
        let file = source("- hosts: all\n  tasks:\n    - name: x\n");
        let error = file.error(Mark { line: 3, column: 7 }, "boom");
        assert_eq!(excerpt_of(error), "  tasks:\n    - name: x\n      ^ here");
    }

    #[test]
    fn excerpt_skips_a_blank_previous_line_and_first_line_has_none() {
        let file = source("a: 1\n\nb: 2\n");
        assert_eq!(
            excerpt_of(file.error(Mark { line: 3, column: 1 }, "x")),
            "b: 2\n^ here"
        );
        assert_eq!(
            excerpt_of(file.error(Mark { line: 1, column: 4 }, "x")),
            "a: 1\n   ^ here"
        );
    }

    #[test]
    fn caret_keeps_tabs_so_it_lines_up() {
        let file = source("x:\n\t\tvalue\n");
        assert_eq!(
            excerpt_of(file.error(Mark { line: 2, column: 3 }, "x")),
            "x:\n\t\tvalue\n\t\t^ here"
        );
    }

    #[test]
    fn past_the_end_has_no_excerpt() {
        let file = source("a: 1\n");
        assert_eq!(excerpt_of(file.error(Mark { line: 9, column: 1 }, "x")), "");
    }

    #[test]
    fn byte_order_mark_is_dropped() {
        let file = source("\u{feff}a: 1\n");
        assert_eq!(file.text(), "a: 1\n");
    }

    #[test]
    fn place_says_where() {
        let file = source("a: 1\n");
        assert_eq!(
            file.place(Mark { line: 1, column: 2 }),
            "in '/p/site.yml': line 1, column 2"
        );
    }
}
